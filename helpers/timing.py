"""Timing that holds on a second run: every figure a distribution, every comparison a three-way verdict.

Introduced in notebook 02 (upload, kernel and readback apart) and explained in full in notebook 03.

Two clocks:
  * GPU timer queries (`ctx.query(time=True)`): the time the GPU spent between two points of its command
    stream. Only the kernel's own time; nothing of Python, the driver or the wait for the result.
    ModernGL reads the result as 32-bit nanoseconds, so one query wraps past 4.29 s: keep each timed
    region short (a few dispatches, not an epoch).
  * Wall clock (`time.perf_counter`) around the work and a `ctx.finish()`, which waits until the GPU
    is done. Includes everything: Python, driver, queueing, synchronisation.

On a software renderer (Mesa's llvmpipe) timer queries return meaningless values, so `Clock` falls
back to the wall clock around `ctx.finish()` and says so in `Clock.source`.

How a figure is measured (`measure`, `measure_interleaved`):
  1. warm up by time, not by count: at least WARMUP_SECONDS of the real work, untimed, so an idle GPU is
     back at its working clock (it idles at a low one) and caches and drivers have settled;
  2. repeat: many samples, each one run of the work;
  3. report the median with its spread, the 20th and 80th percentiles of the samples (a `Timing`);
  4. when two things are compared, take their samples in turn, A B A B …, so that a drift of the clock
     during the measurement falls on both alike.

How two figures become words (`compare`, `versus`): A is faster only when its 20–80 % band lies wholly
below B's and the medians differ by more than `margin`; B likewise; otherwise they are the same: within
the noise we measured where the bands overlap, within the margin where they do not. A sentence never
claims more than that.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from . import mode
from .gl import is_software

WRAP_SECONDS = 2 ** 32 / 1e9  # 4.29 s: where ModernGL's 32-bit nanosecond query result wraps
GPU_QUERY = "GPU timer query"
WALL_FINISH = "wall clock around ctx.finish()"
WALL = "wall clock"
WARMUP_SECONDS = 1.0          # untimed real work before any sample (an idle GPU takes ~0.5 s to clock up)
QUICK_WARMUP_SECONDS = 0.05   # in QUICK mode (a software renderer, small sizes) a warm-up buys nothing
LOW, HIGH = 20, 80            # the percentiles a Timing reports as its spread
MARGIN = 0.05                 # two medians closer than 5 % are never called different

A_FASTER, B_FASTER, SAME = "A faster", "B faster", "same within noise"   # compare()'s three outcomes


def _percentile(sorted_values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of sorted values, linear between neighbours."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100
    i = int(pos)
    j = min(i + 1, len(sorted_values) - 1)
    return sorted_values[i] + (sorted_values[j] - sorted_values[i]) * (pos - i)


@dataclass(frozen=True)
class Timing:
    """A timing as a distribution: every sample in seconds, the clock they came from; the median, and the
    20th and 80th percentiles as its spread (`low`, `high`)."""
    samples: tuple
    clock: str = WALL

    def __post_init__(self):
        if not self.samples:
            raise ValueError("a Timing needs at least one sample")
        object.__setattr__(self, "samples", tuple(float(s) for s in self.samples))

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return _percentile(sorted(self.samples), LOW)

    @property
    def high(self) -> float:
        return _percentile(sorted(self.samples), HIGH)

    @property
    def noise(self) -> float:
        """The 20–80 % band as a share of the median: 0.03 means the middle 60 % of samples lie within 3 %."""
        return (self.high - self.low) / self.median if self.median > 0 else 0.0

    def per(self, n: float) -> "Timing":
        """The same timing divided by n (a stream of n steps as the time of one step)."""
        return Timing(tuple(s / n for s in self.samples), self.clock)

    def text(self, unit: str = "auto", digits: int = 3) -> str:
        """'12.3 µs (12.1–12.6)': the median and its 20–80 % band, in `unit` (s, ms, µs; auto picks one).
        A band narrower than the last digit gets up to two more digits, '10.82 ms (10.79–10.85)', so it
        never reads '10.8 ms (10.8–10.8)'; a timing with no spread at all (one sample, or a record stored
        without its band) says so."""
        scale, unit = _unit(self.median, unit)
        if self.low == self.high:
            return f"{_g(self.median * scale, digits)} {unit} (no spread recorded)"
        median, low, high = band_figures(self.median * scale, self.low * scale, self.high * scale, digits)
        return f"{median} {unit} ({low}–{high})"

    def __str__(self) -> str:
        return self.text()

    def row(self, key: str = "ms", scale: float = 1e3) -> dict:
        """The fields a benchmark row stores: median, 20th and 80th percentiles, number of samples."""
        return {key: self.median * scale, f"{key}_low": self.low * scale, f"{key}_high": self.high * scale,
                "repeats": len(self.samples)}

    @classmethod
    def from_row(cls, row: dict, key: str = "ms", scale: float = 1e3) -> "Timing":
        """A Timing rebuilt from a benchmark row's median and band (five samples: low, low, median, high,
        high, whose 20th and 80th percentiles are the stored ones), enough for compare() and text(); a row
        stored with no band gives a Timing of no spread."""
        mid = row[key] / scale
        low, high = row.get(f"{key}_low", row[key]) / scale, row.get(f"{key}_high", row[key]) / scale
        return cls((low, low, mid, high, high), row.get("clock", WALL))


def figure_decimals(figure: str) -> int:
    """The decimals a printed figure is written to: '40.21 µs' 2, '40.2' 1, '349 µs' 0."""
    return len(figure.split(" ", 1)[0].partition(".")[2])


def printed_figure(t: Timing, unit: str) -> Decimal:
    """The median as t.text(unit) prints it, in that unit, exactly: '7.00 µs (6.99–7.02)' gives Decimal('7.00')."""
    return Decimal(t.text(unit).split(" ", 1)[0])


def printed_median(t: Timing, unit: str) -> tuple[float, int]:
    """The median as t.text(unit) prints it, in that unit, and its number of decimals: a difference taken
    from printed figures, at the coarser of their decimals, is the one a reader gets by subtracting them."""
    figure = printed_figure(t, unit)
    return float(figure), figure_decimals(str(figure))


def printed_difference(slow: Timing, fast: Timing, unit: str) -> Decimal:
    """slow's printed median less fast's (printed_figure), at the coarser of their decimals, rounded half up:
    the difference a reader gets by subtracting the printed figures (28.0 − 25.0 = 3.0; 21.70 − 21.3 = 0.4;
    73.00 − 55.3 = 17.7, never 17.70, which claims a digit 55.3 does not have)."""
    a, b = printed_figure(slow, unit), printed_figure(fast, unit)
    coarser = max(a.as_tuple().exponent, b.as_tuple().exponent)
    return (a - b).quantize(Decimal(1).scaleb(coarser), ROUND_HALF_UP) + 0      # + 0: never '-0'


def shown(t: Timing) -> float:
    """The median in seconds as t.text() prints it: a ratio taken from these is the one a reader gets by
    dividing the printed figures."""
    return float(shown_exactly(t))


def shown_exactly(t: Timing) -> Decimal:
    """shown(t) as an exact decimal (1.44 ms is Decimal('0.00144') s), so a ratio of two printed figures
    that ends in an exact 5, such as 1.44 / 1.28 = 1.125, rounds half up as a reader rounds it."""
    return seconds_exactly(*t.text().split(" ", 2)[:2])


def seconds_exactly(figure: str, unit: str) -> Decimal:
    """A printed figure and its unit ('2.64', 'µs') back in seconds, exactly."""
    return Decimal(figure) / {"s": Decimal(1), "ms": Decimal(1000), "µs": Decimal(1000000)}[unit]


def in_seconds(figure: str, unit: str) -> float:
    """A printed figure and its unit ('2.64', 'µs') back in seconds."""
    return float(seconds_exactly(figure, unit))


def ratio(a: Timing, b: Timing) -> Decimal:
    """The printed median of a over the printed median of b, exactly: the ratio a reader gets by dividing
    the two figures."""
    return shown_exactly(a) / shown_exactly(b)


def times(value, decimals: int | None = 2, digits: int | None = None) -> str:
    """A ratio as printed: `decimals` places (1.03), or `digits` significant digits with trailing zeros
    dropped (5.5, 2), rounded half up as a reader rounds 41/40 = 1.025 to 1.03 (Python's own formatting
    rounds the binary float 1.0249999... down). `value` is a Decimal (ratio()) or a float, taken at its
    shortest decimal form. Every ratio the course prints beside two timings should go through it."""
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    if digits is not None:
        step = Decimal(1).scaleb(exact.adjusted() - digits + 1) if exact else Decimal(1)
        rounded = exact.quantize(step, ROUND_HALF_UP) + 0                # + 0: never '-0'
        text = f"{rounded:f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{exact.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP) + 0:f}"


def times_beyond(value: Decimal, margin: float, digits: int = 2) -> str:
    """times(value, digits=...) with as many more significant digits as it takes to print a figure above
    1 + margin, for a ratio compare() found beyond the margin: 1.12 at a 10 % margin prints as 1.12, never
    as a 1.1 that reads as within it."""
    limit = 1 + Decimal(str(margin))
    for more in range(digits, digits + 6):
        text = times(value, digits=more)
        if Decimal(text) > limit:
            return text
    return times(value, digits=digits + 6)


def _unit(seconds: float, unit: str) -> tuple[float, str]:
    if unit == "auto":
        unit = "s" if abs(seconds) >= 1 else "ms" if abs(seconds) >= 1e-3 else "µs"   # a negative cost too
    return {"s": 1.0, "ms": 1e3, "µs": 1e6}[unit], unit


def band_figures(median: float, low: float, high: float, digits: int = 3) -> tuple:
    """(median, low, high) as printed figures: `digits` significant digits, up to two more where the band's
    ends would otherwise print the same, so a band never reads '10.8 (10.8–10.8)'; the median at the band's.
    Most bands need at most two more; a band a few nanoseconds wide on a millisecond kernel gets as many as it
    takes. A band of no width (low == high) gets `digits` alone."""
    if low == high:
        return _g(median, digits), _g(low, digits), _g(high, digits)
    for more in range(12):
        shown_low, shown_high = _g(low, digits + more), _g(high, digits + more)
        if shown_low != shown_high:
            return _g(median, digits + more), shown_low, shown_high
    return _g(median, digits), _g(low, digits), _g(high, digits)   # ends equal to fifteen digits: no width


def _g(value: float, digits: int) -> str:
    """A figure with `digits` significant digits, its trailing zeros kept (they are digits a reader reads:
    7.00, 10.0, 0.120), and no exponent: a whole number of `digits` figures or more prints plain, 349, 1230."""
    if value == 0:
        return "0"
    text = f"{value:#.{digits}g}".rstrip(".")
    if "e" not in text:
        return text
    if abs(value) >= 1:
        return f"{float(text):.0f}"
    return f"{float(text):.{digits - 1 - Decimal(text).adjusted()}f}"   # 0.0000123, not 1.23e-05 or 0


def default_warmup() -> float:
    """WARMUP_SECONDS, or QUICK_WARMUP_SECONDS in QUICK mode."""
    return QUICK_WARMUP_SECONDS if mode.is_quick() else WARMUP_SECONDS


def warm_up(work, seconds: float | None = None, finish=None) -> int:
    """Call work() (then finish(), if given) until `seconds` (default: default_warmup()) of wall clock
    have passed, untimed; at least once. Returns how many calls that took."""
    until = time.perf_counter() + (default_warmup() if seconds is None else seconds)
    calls = 0
    while True:
        work()
        if finish is not None:
            finish()
        calls += 1
        if time.perf_counter() >= until:
            return calls


def measure(sample, repeat: int = 30, warmup: float | None = None, clock: str = WALL) -> Timing:
    """A Timing of `repeat` calls of sample(), each doing the work once and returning its seconds, after
    calling it untimed for `warmup` seconds (default: default_warmup())."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    warm_up(sample, warmup)
    return Timing(tuple(sample() for _ in range(repeat)), clock)


def measure_interleaved(samples: dict, repeat: int = 30, warmup: float | None = None,
                        clock: str = WALL) -> dict:
    """Timings of several things compared: {name: sample}, each sample() doing its work once and returning
    its seconds. The warm-up runs them all in turn; then the repeats go round, A B C A B C …, so a drift
    of the clock during the measurement falls on every one of them alike."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    warm_up(lambda: [s() for s in samples.values()], warmup)
    taken = {name: [] for name in samples}
    for _ in range(repeat):
        for name, s in samples.items():
            taken[name].append(s())
    return {name: Timing(tuple(v), clock) for name, v in taken.items()}


def compare(a: Timing, b: Timing, margin: float = MARGIN, shown=None, bands=None) -> str:
    """A_FASTER, B_FASTER or SAME: A is faster only when its 20–80 % band lies wholly below B's and B's
    median is more than `margin` above A's (and B likewise); otherwise SAME (the_same() gives its words).
    The margin is judged on the medians as printed (shown_exactly, or `shown`, Timing -> Decimal, where a
    table prints them another way), the figures a reader divides, so a sentence never calls two timings
    apart that its own figures put within the margin, or the other way round. The bands likewise, as text()
    prints them, or as `bands` (Timing -> (low, high), exactly, in the unit of `shown`) where a table prints them."""
    limit, shown, bands = 1 + Decimal(str(margin)), shown or shown_exactly, bands or band_shown
    (a_low, a_high), (b_low, b_high) = bands(a), bands(b)               # the bands as printed: never 'apart'
    if a_high < b_low and _beyond(b, a, limit, shown):                  # where the reader sees them meet
        return A_FASTER
    if b_high < a_low and _beyond(a, b, limit, shown):
        return B_FASTER
    return SAME


def _beyond(slow: Timing, fast: Timing, limit: Decimal, shown) -> bool:
    """Whether slow's printed median is more than `limit` times fast's, exactly (32 against 33.6 µs is 1.05,
    not beyond a 5 % margin); medians that do not print as positive finite figures are compared unrounded."""
    s, f = shown(slow), shown(fast)
    if s.is_finite() and f.is_finite() and f > 0:
        return s > f * limit
    return slow.median > fast.median * float(limit)


def typical_above(slow: Timing, fast: Timing, margin: float = MARGIN) -> bool:
    """True when slow's median lies above fast's 80th percentile by more than `margin`: a typical sample of
    `slow` takes longer than four in five of `fast`. For a distribution with two modes, such as a training
    loop's epochs (a few at full speed, most slowed by the pauses between them), whose band reaches down
    into the other one's: compare() would call them the same whenever one fast epoch lands in the band."""
    return slow.median > fast.high * (1 + margin)


class Verdict(str):
    """A sentence that judges measurements, with the outcome it chose (`outcome`: one short word or phrase
    from a fixed set, such as compare()'s three). Prints as the sentence."""
    outcome: str

    def __new__(cls, text: str, outcome: str):
        self = super().__new__(cls, text)
        self.outcome = outcome
        return self


def lowest(timings: dict, margin: float = MARGIN) -> tuple:
    """(the key of the lowest median, [the other keys whose timing compare() calls the same as it]): who is
    quickest, and who is level with it. An empty list means the lowest is faster than every other beyond the
    noise and the margin."""
    if not timings:
        raise ValueError("lowest() needs at least one timing")
    return _level_with(timings, min(timings, key=lambda key: timings[key].median), margin)


def highest(timings: dict, margin: float = MARGIN) -> tuple:
    """(the key of the highest median, [the other keys whose timing compare() calls the same as it]): which part
    takes longest, and which are level with it; lowest()'s mirror."""
    if not timings:
        raise ValueError("highest() needs at least one timing")
    return _level_with(timings, max(timings, key=lambda key: timings[key].median), margin)


def _level_with(timings: dict, key, margin: float) -> tuple:
    """(key, [the other keys whose timing compare() calls the same as timings[key]])."""
    return key, [k for k, t in timings.items() if k != key and compare(timings[key], t, margin) == SAME]


def paired_ratio(a: Timing, b: Timing) -> Timing:
    """a's samples over b's, round by round: for two timings taken in turn (measure_interleaved), whose i-th
    samples come from the same round. A disturbance that slows both in one round (the clock, another process)
    cancels in that round's ratio, where it would widen both bands. A Timing of ratios (no unit)."""
    if len(a.samples) != len(b.samples):
        raise ValueError(f"paired_ratio needs the same number of rounds, got {len(a.samples)} and {len(b.samples)}: "
                         "take the two in turn with measure_interleaved")
    return Timing(tuple(x / y for x, y in zip(a.samples, b.samples)), "ratio")


def compare_paired(a: Timing, b: Timing, margin: float = MARGIN) -> str:
    """compare() for two timings taken in turn, judged on their rounds' ratios (paired_ratio): B_FASTER when
    the ratios' whole 20–80 % band lies above 1 and their median beyond 1 + margin, both as rounds_text()
    prints them; A_FASTER when the printed band lies below 1 and the printed median's inverse is beyond
    1 + margin; SAME otherwise."""
    r, limit = paired_ratio(a, b), 1 + Decimal(str(margin))
    printed, low, high = (Decimal(f) for f in rounds_figures(r))      # judged as rounds_text prints them
    if low > 1 and printed > limit:
        return B_FASTER
    if high < 1 and printed > 0 and 1 / printed > limit:
        return A_FASTER
    return SAME


def paired_text(a: Timing, b: Timing) -> str:
    """The rounds' ratio a / b as a sentence part: '1.25× (1.24–1.26) round by round' (its median and 20–80 %
    band), or '1.25× in every round'."""
    return rounds_text(paired_ratio(a, b))


def rounds_figures(r: Timing) -> tuple:
    """A Timing of per-round ratios as printed figures (median, low, high): two decimals where every round
    gave the same ratio, else band_figures' digits, the median at the band's, so it never reads
    '1.02× (1.015–1.018)'."""
    if r.low == r.high:
        figure = times(r.median)
        return figure, figure, figure
    return band_figures(r.median, r.low, r.high)


def rounds_text(r: Timing) -> str:
    """A Timing of per-round ratios (paired_ratio) as a sentence part: '1.25× (1.24–1.26) round by round',
    '1.017× (1.015–1.018) round by round' (the median at its band's digits), or '1.25× in every round' where
    its band has no width."""
    median, low, high = rounds_figures(r)
    if r.low == r.high:
        return f"{median}× in every round"
    return f"{median}× ({low}–{high}) round by round"


def band_shown(t: Timing) -> tuple:
    """t's 20–80 % band as t.text() prints it, in seconds, exactly: (low, high); a timing printed with no
    spread has its median at both ends."""
    median, unit, rest = t.text().split(" ", 2)
    if not rest.startswith("(") or "–" not in rest:
        value = seconds_exactly(median, unit)
        return value, value
    low, high = rest.strip("()").split("–")
    return seconds_exactly(low, unit), seconds_exactly(high, unit)


def overlap(a: Timing, b: Timing, bands=None) -> bool:
    """True when the 20–80 % bands of a and b, as text() prints them, share some time (touching counts): a
    reader who sees '10.3 ms (10.3–10.4)' and '10.5 ms (10.4–10.5)' sees them meet, whatever the unrounded
    ends were; `bands` as in compare(), for a table that prints them otherwise."""
    (a_low, a_high), (b_low, b_high) = (bands or band_shown)(a), (bands or band_shown)(b)
    return a_low <= b_high and b_low <= a_high


def apart(a: Timing, b: Timing, margin: float = MARGIN) -> str:
    """Why compare() calls two timings whose bands do not overlap the same: '1.30× apart, within the 50 % we
    call the same' (the ratio of the medians as printed, and `margin` as the percentage it is); a ratio within
    the margin that two decimals would round onto it gets the digits that show it inside: '1.047× apart,
    within the 5 %'."""
    value, limit = max(ratio(a, b), ratio(b, a)), 1 + Decimal(str(margin))
    shown = next((times(value, digits=d) for d in range(3, 9) if Decimal(times(value, digits=d)) < limit),
                 times(value)) if Decimal(times(value)) >= limit else times(value)   # 1.047 at 5 %: 1.047, not 1.05
    return f"{shown}× apart, within the {100 * margin:.3g} % we call the same"


SAME_WITHIN_NOISE = "the same within the noise we measured"   # the_same()'s words where the bands overlap


def the_same(a: Timing, b: Timing, margin: float = MARGIN) -> str:
    """The words for two timings that compare() calls the same, one wording for each of its two reasons:
    'the same within the noise we measured' where their 20–80 % bands overlap, and apart()'s
    '1.30× apart, within the 50 % we call the same' where they do not (the medians closer than `margin`).
    Reads after 'are': 'A (12 µs (11–13)) and B (12.5 µs (12–13)) are the same within the noise we measured',
    'A (10 µs (10–10)) and B (10.4 µs (10.4–10.4)) are 1.04× apart, within the 5 % we call the same'."""
    return SAME_WITHIN_NOISE if overlap(a, b) else apart(a, b, margin)


def twice(what: str, first: Timing, first_with: str, second: Timing, second_with: str,
          margin: float = MARGIN) -> str:
    """One sentence on the same work timed in two places, each figure with what it was taken with: where
    compare() calls them the same, the_same()'s words; otherwise how far apart the medians are, and that
    the code does not show which difference between the two places changes the time. No verdict: two
    places, not two ways of doing the work.
    'dense_1's kernels took 53.5 µs (53.2–53.8) in the rounds above and 53.3 µs (53.1–53.6) taken alone:
    the same within the noise we measured.'"""
    head = f"{what} took {first.text()} {first_with} and {second.text()} {second_with}"
    if compare(first, second, margin) == SAME:
        return f"{head}: {the_same(first, second, margin)}."
    by = max(ratio(first, second), ratio(second, first))
    return (f"{head}: {times_beyond(by, margin, digits=3)}× apart; the two places differ in what else was timed there, and the code does "
            "not show which difference changes the time.")


def not_above(slow: Timing, fast: Timing, margin: float = MARGIN) -> str:
    """The words for two timings that typical_above(slow, fast, margin) does not call apart, read after 'are':
    the_same()'s 'the same within the noise we measured' where their bands overlap, and where they do not
    'typically within the 15 % we call the same (the slower median no more than that above the other's
    80th percentile)'."""
    if overlap(slow, fast):
        return SAME_WITHIN_NOISE
    return (f"typically within the {100 * margin:.3g} % we call the same (the slower median no more than that "
            "above the other's 80th percentile)")


def versus(a: Timing, b: Timing, name_a: str, name_b: str, margin: float = MARGIN, digits: int = 2) -> Verdict:
    """A sentence comparing two timings, with compare()'s outcome: 'A (…) is 1.4× faster than B (…)', the
    other way round, or, when it calls them the same, 'A (…) and B (…) are ' and the_same()'s words: 'the
    same within the noise we measured' where their bands overlap, '1.04× apart, within the 5 % we call the
    same' where they do not (the bands apart, the medians closer than `margin`). The speed-up has `digits`
    significant digits, more where times_beyond needs them to print a figure beyond the margin."""
    outcome = compare(a, b, margin)
    both = f"{name_a} ({a.text()}) and {name_b} ({b.text()})"
    if outcome == A_FASTER:
        text = f"{name_a} ({a.text()}) is {times_beyond(ratio(b, a), margin, digits)}× faster than {name_b} ({b.text()})"
    elif outcome == B_FASTER:
        text = f"{name_b} ({b.text()}) is {times_beyond(ratio(a, b), margin, digits)}× faster than {name_a} ({a.text()})"
    else:
        text = f"{both} are {the_same(a, b, margin)}"
    return Verdict(text, outcome)


class Clock:
    """Times GPU work with timer queries where they are trustworthy, else with the wall clock."""

    def __init__(self, ctx, use_queries: bool | None = None):
        self.ctx = ctx
        self.use_queries = (not is_software(ctx)) if use_queries is None else use_queries
        self.source = GPU_QUERY if self.use_queries else WALL_FINISH
        if not self.use_queries and is_software(ctx):
            self.note = "software renderer: its timer queries are meaningless, so kernels are timed by wall clock"
        else:
            self.note = ""
        self._query = ctx.query(time=True) if self.use_queries else None

    def kernel(self, fn) -> float:
        """Seconds the GPU spent on the commands `fn()` issues (by the clock in self.source)."""
        if not self.use_queries:
            return self.wall(fn)
        start = time.perf_counter()
        with self._query:
            fn()
        elapsed = self._query.elapsed / 1e9  # waits for the result
        if time.perf_counter() - start > WRAP_SECONDS:
            raise ValueError(f"timed region took over {WRAP_SECONDS:.2f} s: the 32-bit query result wrapped; "
                             "time fewer dispatches at once")
        return elapsed

    def wall(self, fn) -> float:
        """Seconds of wall clock for `fn()` and the GPU work it issued: finish() before and after."""
        self.ctx.finish()
        start = time.perf_counter()
        fn()
        self.ctx.finish()
        return time.perf_counter() - start


def wall_seconds(fn) -> float:
    """Seconds of wall clock (perf_counter) for one call of `fn()`; no GPU synchronisation added."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Phases:
    """Samples per named phase, each with the clock it came from; a Timing per phase and a printable table."""

    def __init__(self):
        self.samples = defaultdict(list)
        self.sources = {}

    def add(self, name: str, seconds: float, source: str = WALL) -> None:
        self.samples[name].append(seconds)
        self.sources[name] = source

    def timing(self, name: str) -> Timing:
        return Timing(tuple(self.samples[name]), self.sources[name])

    def median(self, name: str) -> float:
        return self.timing(name).median

    def medians(self) -> dict[str, float]:
        return {name: self.median(name) for name in self.samples}

    def table(self, scale: float = 1e6, unit: str = "µs") -> str:
        """One line a phase: median, 20th and 80th percentiles (band_figures' digits, so a band never prints
        as '7.0 (7.0–7.0)'), number of samples, clock."""
        rows = [f"{'phase':<22s} {'median ' + unit:>10s} {'20 % ' + unit:>10s} {'80 % ' + unit:>10s} {'n':>5s}  clock"]
        for name in self.samples:
            t = self.timing(name)
            median, low, high = band_figures(t.median * scale, t.low * scale, t.high * scale)
            rows.append(f"{name:<22s} {median:>10s} {low:>10s} {high:>10s} {len(t.samples):>5d}  {t.clock}")
        return "\n".join(rows)

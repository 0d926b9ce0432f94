"""How far from the limits: the series' fastest trainers and kernels beside figures they cannot easily go
under, each limit with its source in the same benchmark run; and the sentences notebook 08 prints about
where a fused step's time goes. Nothing here measures.

    python -m helpers.bench.limits notebooks/results/bench-<card>.json

Introduced in notebook 08; the README's results end with the same table. The limits, all from one run:

  * the empty-dispatch floor: the fused trainer's epoch of dispatches and barriers with nothing in them;
  * cuBLAS: the step's two big products alone (X·W1 and Xᵀ·dZ1), NVIDIA's library in a CUDA graph, × steps;
  * JAX: the same epoch as one jit of lax.scan, in fp32 and at its default precision (TF32 tensor cores);
  * a matmul at n³: cuBLAS fp32; an upload of float32 images: a copy from pinned memory.

Every function that turns numbers into words is tested on both sides of its threshold
(tests/test_verdicts_nb0809.py), so a printed sentence cannot contradict the numbers beside it.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

from .. import findings, timing
from . import fused, inference, matmul, products, profile


def faster_or_slower(a: float, b: float) -> str:
    """'1.44× faster' or '1.03× slower': a against b, two durations in the same unit, to two decimals."""
    if a <= 0 or b <= 0:
        raise ValueError(f"durations must be positive, got {a} and {b}")
    return f"{b / a:.2f}× faster" if a <= b else f"{a / b:.2f}× slower"


def _epoch_digits(ms: float) -> int:
    """Significant digits that print an epoch in ms to two decimals (10.37, 436.96), three below 1 ms (0.0412)."""
    return max(3, len(str(int(abs(ms)))) + 2) if abs(ms) >= 1 else 3


def epoch_figures(ms: float, low: float | None = None, high: float | None = None) -> tuple:
    """An epoch in ms as the limits table prints it: (median, low, high) as printed figures, the median to two
    decimals (three significant digits below 1 ms) with its 20–80 % band (timing.band_figures, so a band gets
    the digits it needs and never prints collapsed, '10.37 (10.34–10.39)'); (median, None, None) where no band
    was stored. Trailing zeros stay: 12.00, 2.50."""
    if low is None or high is None or low == high:
        return timing.band_figures(ms, ms, ms, _epoch_digits(ms))[0], None, None
    return timing.band_figures(ms, low, high, _epoch_digits(ms))


def figure_text(figures: tuple, unit: str) -> str:
    """(median, low, high) figures as a timing prints: '10.37 ms (10.34–10.39)', or '10.37 ms' with no band."""
    median, low, high = figures
    return f"{median} {unit}" if low is None else f"{median} {unit} ({low}–{high})"


def decimals_words(figure: str) -> str:
    """How many decimals a printed figure has, as words: 'to two decimals', 'to one decimal', 'to whole numbers'."""
    places = timing.figure_decimals(figure)
    if places == 0:
        return "to whole numbers"
    names = {1: "one decimal", 2: "two decimals", 3: "three decimals", 4: "four decimals"}
    return f"to {names.get(places, f'{places} decimals')}"


def _limit(what: str, name: str, ours: tuple, limit_name: str, limit: tuple, source: str,
           derived: str | None = None, named: str | None = None) -> dict:
    """A row of the limits table: ours ('NAME, 10.44 ms (10.40–10.47)') against a limit ('LIMIT_NAME 2.71 ms
    (2.70–2.72)'), each an epoch's median with its band (epoch_figures), and ours as a multiple of the limit's
    time, "times" ('3.85×'), the quotient of the two medians as printed, rounded half up (10.44 / 2.71 = 3.852:
    3.85×, where the unrounded medians gave 3.86×). `derived`: how a limit that was not measured as an epoch
    was computed ('a step's 12.6 µs (12.6–12.7) × 469 steps'); the row then says "derived". `named`: the limit
    as a sentence names it ('the empty-dispatch floor'; limit_name where not given). ours_ms and
    limit_ms are the medians as printed, ours_figure and limit_figure the figures with their bands, and
    limit_words the limit as a sentence names it, so a sentence that quotes a row quotes the table."""
    ours_figure, limit_figure = figure_text(ours, "ms"), figure_text(limit, "ms")
    times = f"{timing.times(Decimal(ours[0]) / Decimal(limit[0]))}×"
    shown_limit = f"{limit_name} {limit_figure}" + (", derived" if derived else "")
    words = f"{limit_figure}, derived: {derived}" if derived else limit_figure
    return {"what": what, "ours": f"{name}, {ours_figure}", "ours_ms": float(ours[0]), "ours_figure": ours_figure,
            "limit": shown_limit, "limit_ms": float(limit[0]), "limit_figure": limit_figure,
            "limit_words": f"{named or limit_name} ({words})", "derived": derived is not None,
            "source": source, "times": times, "against": f"{times} its time"}


def step_figures(t: timing.Timing) -> tuple:
    """A step's time (seconds, a Timing) in µs as two_products prints it: (median, low, high) figures by
    timing.band_figures (three significant digits, more where the band's ends would print the same, so never
    '12.6 (12.6–12.6)'), or (median, None, None) where the rows it adds up stored no band."""
    if t.low == t.high:
        return timing.band_figures(1e6 * t.median, 0, 0)[0], None, None
    return timing.band_figures(1e6 * t.median, 1e6 * t.low, 1e6 * t.high)


def two_products(product_rows: list[dict], hidden: int) -> str | None:
    """A step's two big products (X·W1 and Xᵀ·dZ1) by the matmul ladder's rungs of lowest median against cuBLAS,
    each side's two medians and 20-80 % bands added up (products.step_timing) and printed by step_figures (the
    band never collapsed), judged by timing.compare on those figures, with the ratio of the two printed medians
    (31.8 against 12.8 µs: 2.48×, where the unadded medians gave 2.49×) where one side is faster; None where the
    run lacks either."""
    ladder, blas = (products.step_timing(product_rows, hidden, cublas=c) for c in (False, True))
    if ladder is None or blas is None:
        return None
    ladder_figures, blas_figures = step_figures(ladder), step_figures(blas)
    printed = {id(ladder): Decimal(ladder_figures[0]), id(blas): Decimal(blas_figures[0])}
    ours, theirs = printed[id(ladder)], printed[id(blas)]
    head = (f"a step's two products alone (X·W1 and Xᵀ·dZ1) take {figure_text(ladder_figures, 'µs')} by the matmul "
            f"ladder's rungs of lowest median and {figure_text(blas_figures, 'µs')} by cuBLAS (each side's two medians "
            "and bands added up)")
    outcome = timing.compare(ladder, blas, shown=lambda t: printed[id(t)] / 1000000)
    if outcome == timing.B_FASTER:
        return f"{head}, {timing.times(ours / theirs)}× less"
    if outcome == timing.A_FASTER:
        return f"{head}, {timing.times(theirs / ours)}× more"
    return f"{head}: {timing.the_same(ladder, blas)}"


def epoch_limits(rows: list[dict], product_rows: list[dict], hidden: int) -> list[dict]:
    """The GLSL epoch of lowest median of 784-hidden-10 against the floor (784-128-10 only: the floor row is the
    fused trainer's dispatch pattern), cuBLAS's two products × steps (derived: a step's products measured, as
    two_products prints them, times the epoch's steps), and JAX fp32 and TF32 of the same run, each epoch with
    its band."""
    best = fused.fastest_glsl(rows, hidden)
    if best is None:
        return []
    net, what, ours = f"784-{hidden}-10", f"784-{hidden}-10 epoch", best["name"]
    band = lambda r: epoch_figures(r["ms"], r.get("ms_low"), r.get("ms_high"))   # noqa: E731
    out = []
    floor = next((r for r in rows if r["name"].startswith("floor:") and r.get("dispatches_per_step") == 2
                  and hidden == fused.HIDDEN), None)
    if floor:
        out.append(_limit(what, ours, band(best), "empty-dispatch floor", band(floor),
                          "2 empty dispatches + barriers a step, same run", named="the empty-dispatch floor"))
    blas = products.step_timing(product_rows, hidden, cublas=True)
    if blas is not None:
        step = step_figures(blas)                # a step's figures as two_products prints them, times the steps
        ms = [None if f is None else float(Decimal(f) * best["steps"] / 1000) for f in step]
        derived = f"a step's {figure_text(step, 'µs')} × {best['steps']} steps"
        out.append(_limit(what, ours, band(best), "cuBLAS's two products alone", epoch_figures(*ms),
                          f"cuBLAS fp32 in a CUDA graph: {derived}, same run", derived=derived))
    for precision, label in (("highest", "JAX fp32"), ("default", "JAX default (TF32)")):
        jax = fused.jax_by_precision(rows, hidden).get(precision)
        if jax:
            out.append(_limit(what, ours, band(best), label, band(jax),
                              f"jit(lax.scan) over the epoch, {net}, same run"))
    return out


def against_limits(subject: str, rows: list[dict]) -> str:
    """A sentence part on an epoch against limit rows of epoch_limits (one epoch's rows, the table's figures):
    'SUBJECT, 10.37 ms (10.34–10.39), takes 4.05× the time of the empty-dispatch floor (2.56 ms (2.55–2.97)) and
    1.75× the time of cuBLAS's two products alone (5.91 ms (5.91–5.96), derived: a step's 12.6 µs (12.6–12.7)
    × 469 steps)'."""
    if not rows or len({r["ours"] for r in rows}) != 1:
        raise ValueError("against_limits needs the rows of one epoch")
    parts = [f"{r['times']} the time of {r['limit_words']}" for r in rows]
    return f"{subject}, {rows[0]['ours_figure']}, takes {findings.listed(parts)}"


def matmul_limits(rows: list[dict]) -> list[dict]:
    """The fastest rung at each n³ the run has cuBLAS for, against cuBLAS fp32."""
    out = []
    for g in matmul.against_cublas(rows):
        out.append({"what": f"matmul {g['size']}³", "ours": g["label"], "limit": "cuBLAS fp32",
                    "source": "torch, TF32 off, same run", "against": f"{matmul.percent(g['share'])}% of its speed"})
    return out


def upload_limits(rows: list[dict]) -> list[dict]:
    """The fastest float32 upload from a NumPy array against a copy from pinned memory of the same run."""
    get = {r["what"]: r for r in rows if r.get("seconds")}
    ceiling, best = get.get(inference.CEILING), inference.fastest_upload(rows)
    if ceiling is None or best is None:
        return []
    ours, limit = f"{best['gbps']:.2f}", f"{ceiling['gbps']:.2f}"   # as notebook 03's table prints them
    return [{"what": f"upload of {best['images']:,} float32 images", "ours": f"{best['what'].removeprefix('upload float32 ')}, "
             f"{ours} GB/s", "limit": f"pinned-memory copy {limit} GB/s",
             "source": "torch copy from pinned memory, same run",
             "against": f"{inference.of_ceiling(best, ceiling)} of its speed"}]


def limit_rows(record: dict) -> list[dict]:
    """Every limit the record's benchmarks measure: the epochs of both nets, the matmul sizes, the upload."""
    benches = record["benches"]
    out = []
    if "fused" in benches:
        for hidden in (fused.HIDDEN, fused.wide_hidden(record.get("quick"))):
            out += epoch_limits(benches["fused"], benches.get("products", []), hidden)
    if "matmul" in benches:
        out += matmul_limits(benches["matmul"])
    if "inference" in benches:
        out += upload_limits(benches["inference"])
    return out


def table(record: dict) -> str:
    """limit_rows as a Markdown table, with the run it comes from."""
    device = record["device"]
    lines = [f"From the run of {device['date']} ({device['describe']}"
             + (", QUICK sizes" if record.get("quick") else "") + "):", "",
             "| what | ours | the limit | its source | ours against it |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['what']} | {r['ours']} | {r['limit']} | {r['source']} | {r['against']} |" for r in limit_rows(record)]
    return "\n".join(lines)


# --- notebook 08's sentences: where a fused step's time goes ------------------------------------------------------

# Datasheet figures of the cards the series has run on, looked up by gl.card(ctx): (HBM bytes/s, FP32 flop/s,
# SMs, the source). A card not listed gets no datasheet figure, and nothing is judged against one.
DATASHEETS = {
    "NVIDIA H100 80GB HBM3": (3.35e12, 67e12, 132, "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column"),
    "NVIDIA H200": (4.8e12, 67e12, 132, "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column"),
}


def sweep_source(path, sweep: dict | None, what: str = "tunables") -> str:
    """Where a notebook's `what` come from: the sweep file (path, relative to the repository where it can be)
    with the card and the date of its run, 'tunables from notebooks/results/fused-sweep-h100.json (a sweep on
    NVIDIA H100 80GB HBM3, 2026-11-24)', so a reader sees that they were chosen on another day, maybe on
    another card, than this run; the shader's defaults where there is no such file."""
    path = Path(path)
    try:
        shown = path.resolve().relative_to(Path(__file__).resolve().parents[2]).as_posix()
    except ValueError:
        shown = path.as_posix()
    if not sweep:
        return f"{what} of the shaders' own defaults (no sweep file at {shown})"
    device = sweep.get("device", {})
    card = device.get("describe", "an unrecorded card").split("/")[0]
    return f"{what} from {shown} (a sweep on {card}, {device.get('date', 'undated')})"


def datasheet(card: str) -> dict | None:
    """The datasheet figures of `card` (gl.card(ctx)): {"hbm", "fp32", "sms", "source"}; None if unlisted."""
    row = DATASHEETS.get(card)
    return None if row is None else dict(zip(("hbm", "fp32", "sms", "source"), row))


NOISY = 0.10   # streams of steps: medians closer than 10 % are never called different (timing.compare's margin)
# whole epochs of two trainers whose steps are close to Python's issue time: an epoch holds Python's issue of
# every step, and that moved by tens of percent between runs on one H100 (notebook 08: the fused 784-128-10
# epoch 10.3 ms in one run, 11.9 ms in another, against the split trainer's 12.2 and 12.4 ms), which flipped a
# verdict on a 10 % margin
EPOCHS = 0.25


def epochs_margin_sentence(margin: float = EPOCHS) -> str:
    """Two trainers' epochs are called different only beyond `margin`, as a sentence: the rule and what an
    epoch holds beyond the GPU's work, with no claim of how far it moved."""
    return (f"Two trainers' epochs are called different here only beyond {100 * margin:.3g} %, a margin chosen wider than "
            f"the series' default of {100 * timing.MARGIN:.3g} %: an epoch also holds Python's issue of every step, "
            "which whatever else the CPU is doing can slow.")


def close_pairs(pairs: dict, margin: float = EPOCHS) -> list:
    """The labels of `pairs` ({label: (Timing, Timing)}) that compare() with `margin`, the margin for epochs
    between runs, calls the same: pairs that another run of the benchmark could judge differently."""
    return [label for label, (a, b) in pairs.items() if timing.compare(a, b, margin) == timing.SAME]


def record_pairs_note(pairs: dict, margin: float = EPOCHS) -> str:
    """A sentence after verdicts on a benchmark record's epochs (pairs: {label: (Timing, Timing)}): they were
    judged by timing.compare's margin, right for epochs taken in turn within one run; the pairs whose medians
    as printed lie within `margin`, the margin epochs_margin_sentence gives for epochs, are named as ones that
    margin would call the same, so another run of the benchmark could judge them differently."""
    close = close_pairs(pairs, margin)
    head = (f"These verdicts read one run of the benchmark, each pair of epochs taken in turn there, so they use the "
            f"{100 * timing.MARGIN:.3g} % margin of one run")
    if not close:
        return f"{head}; every pair lies more than {100 * margin:.3g} % apart, beyond even the margin used above for epochs."
    named = findings.listed(close)
    return (f"{head}; the {100 * margin:.3g} % margin used above for epochs would call {named} the same, so another run of "
            f"the benchmark could judge {'it' if len(close) == 1 else 'them'} differently.")


def printed_difference_us(slow, fast) -> str:
    """slow's median less fast's, in µs, from the two medians as text('µs') prints them, at the coarser of their
    decimals, rounded half up: the difference a reader gets by subtracting the printed figures (28.0 − 25.0 =
    3.0; 21.70 − 21.3 = 0.4)."""
    return f"{timing.printed_difference(slow, fast, 'µs'):f}"


def uniform_pairs(changing, same, bare, margin: float = NOISY) -> str:
    """The words for three streams (Timings a step: the step number changing, the same every time, no uniform
    written) that timing.compare calls the same pair by pair, each pair judged on its own: 'the three are the
    same within the noise we measured' only where every pair's printed 20–80 % bands meet (timing.overlap);
    otherwise a clause a pair with timing.the_same's words, 'the same within the noise we measured' where that
    pair's bands meet and '1.02× apart, within the 10 % we call the same' where they do not. Raises ValueError
    for a pair that compare() calls apart: its words are not these."""
    pairs = (("with it written and without", bare, same),
             ("with its value changing and the same every time", same, changing),
             ("with its value changing and none written", bare, changing))
    apart = [label for label, a, b in pairs if timing.compare(a, b, margin) != timing.SAME]
    if apart:
        raise ValueError(f"uniform_pairs: compare() calls these pairs apart: {apart}")
    if all(timing.overlap(a, b) for _, a, b in pairs):
        return f"the three are {timing.SAME_WITHIN_NOISE}"
    clauses = [f"{label}, {head} {timing.the_same(a, b, margin)}"
               for head, (label, a, b) in zip(("a step's times are", "they are", "they are"), pairs)]
    return f"{clauses[0]}; {clauses[1]}; and {clauses[2]}"


def uniform_cost(changing, same, bare, margin: float = NOISY) -> "timing.Verdict":
    """What the step uniform costs a step in a stream, from three Timings (seconds a step, measured
    interleaved): the step number changing every step, the same step number every time, no uniform written.
    Each pair is judged on its own by timing.compare with `margin`, a cost given as the difference of the
    printed medians (printed_difference_us). Outcomes: "changing costs" (the same number every time faster
    than changing it), "writing costs" (no uniform faster than the same number), "uniform costs" (no uniform
    faster than the changing number, though neither step between them is beyond the margin alone), "not
    resolved" where two streams differ beyond the margin in the order no cost of the uniform would give
    (something else moved them), "no measurable cost" otherwise, in uniform_pairs' words."""
    numbers = f"(step(s) {changing.text()}, step(0) every time {same.text()}, no uniform {bare.text()})"
    if timing.compare(same, changing, margin) == timing.A_FASTER:
        return timing.Verdict(f"changing the step uniform's value costs {printed_difference_us(changing, same)} µs "
                              f"a step beyond writing the same value every time {numbers}", "changing costs")
    if timing.compare(bare, same, margin) == timing.A_FASTER:
        return timing.Verdict(f"writing the step uniform costs {printed_difference_us(same, bare)} µs a step "
                              f"whether or not its value changes {numbers}", "writing costs")
    outcomes = (timing.compare(same, changing, margin), timing.compare(bare, same, margin),
                timing.compare(bare, changing, margin))
    if timing.B_FASTER in outcomes:
        return timing.Verdict(f"the three streams differ beyond the noise, but not in the order a cost of the step "
                              f"uniform would give {numbers}: something else moved them, so the uniform's cost is "
                              "not resolved here", "not resolved")
    if outcomes[2] == timing.A_FASTER:
        return timing.Verdict(f"writing the step uniform with its value changing every step costs "
                              f"{printed_difference_us(changing, bare)} µs a step against writing none {numbers}, "
                              f"though each step between them is called the same on its own: with it written and "
                              f"without, a step's times are {timing.the_same(same, bare, margin)}; with its value "
                              f"changing and the same every time, they are {timing.the_same(changing, same, margin)}",
                              "uniform costs")
    return timing.Verdict(f"the step uniform has no cost we can measure in a stream: "
                          f"{uniform_pairs(changing, same, bare, margin)} {numbers}", "no measurable cost")


def barrier_wait(bare, loose, issue=None, margin: float = NOISY) -> "timing.Verdict":
    """The same dispatches with barriers (bare) and without (loose, wrong results): two Timings a step,
    measured interleaved; issue: Python's time to issue those dispatches a step, where known. The share of a
    step spent waiting at the barriers is not a part beside the kernels' share of step_account (profile.py):
    the wait is inside the kernels' times measured one by one, and the sentence says so, so the two shares
    are not read as parts of one whole. Where the stream without barriers is not beyond Python's issue time,
    Python set its pace and the GPU's own time without barriers was not measured: the share is then a lower
    bound, and the sentence says "at least". Outcomes: "barriers cost", "same within noise", or "no barrier
    cost" where the dispatches without barriers took longer beyond the noise."""
    head = f"without the barriers the same dispatches take {loose.text()} a step instead of {bare.text()}: "
    outcome = timing.compare(loose, bare, margin)
    if outcome == timing.A_FASTER:
        wait = f"{timing.times(100 * (1 - timing.ratio(loose, bare)), 0)} %"      # of the medians as printed
        paced = issue is not None and timing.compare(issue, loose, margin) != timing.A_FASTER
        if paced:
            against = (f"no longer than Python's time to issue them ({issue.text()})"
                       if timing.shown_exactly(loose) <= timing.shown_exactly(issue) else
                       f"against Python's time to issue them ({issue.text()}), {timing.the_same(loose, issue, margin)}")
            head = (f"{head[:-2]}, {against}: Python set that pace, so the GPU's own time without barriers is at most "
                    "that, and at least ")
        return timing.Verdict(head + f"{wait} of a step is waiting at the barriers, where the next dispatch may not "
                              "begin until the last one has drained. That wait lies inside the kernels' own times "
                              "(each timed alone with its barrier, its drain included), so this share overlaps "
                              "theirs instead of adding to it; fewer dependent dispatches shorten it", "barriers cost")
    if outcome == timing.B_FASTER:
        return timing.Verdict(head + "longer than with them, beyond the noise, so the barriers cost nothing we can "
                              "measure here and something else set the step's time", "no barrier cost")
    return timing.Verdict(head + f"{timing.the_same(loose, bare, margin)}, so the barriers cost no more than that "
                          "here", timing.SAME)


TIMED_MARGIN = 0.2   # two parts timed one dispatch at a time closer than this ratio above 1 are too close to call


def epoch_shares(parts: dict, lead: float = 0.1, timed: tuple | None = None, clock: str = timing.GPU_QUERY,
                 margin: float = TIMED_MARGIN) -> "timing.Verdict":
    """An epoch's parts (seconds, adding up to the epoch; one may be negative, an overlap or what the parts
    measured apart add up to beyond the epoch) as shares that add to 100 %, and which part is the largest
    ('kernel 70 %, dispatch 23 %, … of the epoch; the largest part is kernel', reading on after a lead-in
    such as 'An epoch of 469 steps: '; where a part had to take a point more or less than its own rounding
    half up gives, so that they add up to 100, the sentence says so):
    named only where it leads the next by more than `lead` of the epoch (outcome "largest: NAME"),
    otherwise "too close to call".
    With `timed` (names of parts timed one dispatch at a time by `clock`, e.g. ("kernel", "dispatch")): the
    shares are printed as above, but the verdict is judged on the timed parts alone, which hold still from
    run to run, where the other parts (wall-clock residues such as between dispatches and unaccounted)
    follow Python's pace of issue and the GPU's clock and move from one run to the next, so they are named as
    this run's and not judged. Each timed part printed in the epoch (three significant digits); the larger
    named where its printed figure over the next one's is above 1 + `margin` (outcome "larger timed part:
    NAME"), otherwise "timed parts too close to call"."""
    total = sum(parts.values())
    if total <= 0:
        raise ValueError(f"the parts must add up to a positive time, got {total}")
    shares = {k: v / total for k, v in parts.items()}
    ranked = sorted(shares, key=shares.get, reverse=True)
    percents = profile.whole_percents(shares)
    text = ", ".join(f"{k} {p} %" for k, p in percents.items()) + " of the epoch"
    text += profile.rounding_note(shares, percents)
    if timed is not None:
        return timed_parts(parts, text, timed, clock, margin)
    if len(ranked) == 1 or shares[ranked[0]] - shares[ranked[1]] > lead:
        return timing.Verdict(f"{text}; the largest part is {ranked[0]}", f"largest: {ranked[0]}")
    return timing.Verdict(f"{text}; {ranked[0]} and {ranked[1]} are too close to call the larger", "too close to call")


def timed_parts(parts: dict, shares_text: str, timed: tuple, clock: str, margin: float = TIMED_MARGIN) -> "timing.Verdict":
    """epoch_shares' verdict with `timed`: the shares sentence, then the timed parts (seconds in `parts`) as
    printed figures, the larger judged by the ratio of the printed figures, and the other parts named as this
    run's figures, not judged."""
    missing = [k for k in timed if k not in parts]
    if len(timed) < 2 or missing:
        raise ValueError(f"timed needs two or more of the parts {sorted(parts)}, got {timed}")
    shown = {k: timing.seconds_exactly(*profile.seconds_text(parts[k]).split()) for k in timed}   # as printed
    ranked = sorted(timed, key=lambda k: shown[k], reverse=True)
    first, second = ranked[0], ranked[1]
    figures = ", ".join(f"{k} {profile.seconds_text(parts[k])}" for k in timed)
    if shown[second] > 0:
        ratio = shown[first] / shown[second]
        beyond = ratio > 1 + Decimal(str(margin))
        against = f"{timing.times_beyond(ratio, margin, 3) if beyond else timing.times(ratio, digits=3)}× {second}"
    else:
        beyond, against = shown[first] > 0, f"{second} taking no time"
    rest = [k for k in parts if k not in timed]
    volatile = (f"; {findings.listed(rest)} {'is' if len(rest) == 1 else 'are'} this run's wall-clock figure"
                f"{'s' * (len(rest) != 1)}: {'it follows' if len(rest) == 1 else 'they follow'} Python's pace of "
                "issue and the GPU's clock between dispatches, which move from one run to the next, so "
                f"{'it is' if len(rest) == 1 else 'they are'} not judged" if rest else "")
    head = f"{shares_text}. Of the parts timed one dispatch at a time by {clock} ({figures}), "
    if beyond:
        return timing.Verdict(f"{head}{first} is the larger, {against}{volatile}", f"larger timed part: {first}")
    why = (f"{first} {against}, within the {100 * margin:.3g} % we call the same" if shown[second] > 0 else
           "both taking no time")
    return timing.Verdict(f"{head}{first} and {second} are too close to call the larger ({why}){volatile}",
                          "timed parts too close to call")


def bytes_against_time(bytes_ratio: float, split, fused, margin: float = NOISY) -> "timing.Verdict":
    """The split forward against fused_forward_1: bytes_ratio times fewer bytes of W1; split and fused, the
    two kernels' Timings, measured in turn (forwards_interleaved). Judged on the rounds' ratios
    (timing.compare_paired), so a disturbance that slows both kernels in some rounds widens neither side of
    the verdict. Outcomes: compare's, A being the split."""
    head = f"the split forward reads {bytes_ratio:.1f}× fewer bytes of W1; "
    outcome = timing.compare_paired(split, fused, margin)
    took = f"it takes {split.text()} against {fused.text()}, {timing.paired_text(split, fused)}"
    if outcome == timing.A_FASTER:
        words = f"{took}: cutting the bytes cut the time"
    elif outcome == timing.B_FASTER:
        words = f"{took}, longer: what the split adds costs more than the bytes it saves"
    else:
        words = (f"{took}, within the {100 * margin:.3g} % we call the same: fewer bytes, no time saved beyond "
                 "that")
    return timing.Verdict(head + words, outcome)


def bound_kind(work_seconds: float, measured, sheet: dict | None, margin: float = NOISY) -> "timing.Verdict":
    """work_seconds: the larger of (bytes at the card's HBM speed, flops at its FP32 peak), from `sheet`
    (datasheet(card)); measured: the kernel's Timing. Judged on the whole 20-80 % band, with `margin` of room
    at each threshold: "latency-bound" (the work explains under half of even the fastest samples), "from L2"
    (more than all of even the slowest: faster than HBM delivers), "in between" otherwise (no bound is
    claimed), "not judged" with no datasheet for this card."""
    if sheet is None:
        return timing.Verdict("not judged: no datasheet figures for this card", "not judged")
    low, high = work_seconds / measured.high, work_seconds / measured.low   # the share it explains, band's ends
    share = f"{work_seconds / measured.median:.0%} of its time".replace("%", " %")
    if high < 0.5 * (1 - margin):
        return timing.Verdict(f"latency-bound: its bytes at HBM speed and its flops at peak would take only {share}",
                              "latency-bound")
    if low > 1 + margin:
        return timing.Verdict(f"it reads W1 faster than HBM could deliver it (its bytes at HBM speed: {share}): W1 "
                              "comes from L2, at a rate only a cache gives", "from L2")
    return timing.Verdict(f"its bytes at HBM speed would take {share}: between the two, so neither latency nor "
                          "HBM's bandwidth is shown to bound it (W1 can come from L2, faster than HBM)", "in between")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m helpers.bench.limits BENCH.json   (from python -m helpers.bench all --out BENCH.json)",
              file=sys.stderr)
        return 2
    print(table(json.loads(Path(argv[0]).read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

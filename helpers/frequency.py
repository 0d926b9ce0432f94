"""The GPU's clock frequency, sampled while code runs. Introduced in notebook 05.

A GPU is not a machine of fixed speed. Its driver raises the clock of the SMs (the streaming
multiprocessors, the GPU's compute units) while the GPU is busy and lowers it, with the voltage, while
the GPU waits, to save power: dynamic voltage and frequency scaling (DVFS). A kernel's time scales
with the clock it ran at, so a GPU that was mostly waiting can run the same kernels several times
slower for a while. How far the clock falls, and how fast it comes back, is the driver's policy; no
GL call controls it.

NVIDIA's command-line tool `nvidia-smi` reports the clock and how busy the GPU was. `FrequencyLog` runs it
in the background while the code in its `with` block runs,

    nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,utilization.gpu --format=csv,noheader,nounits -lms 50

and stamps each line it prints with `time.perf_counter()` as it arrives, so the samples line up with the
wall-clock times the notebooks measure. Where there is no nvidia-smi (the software renderer, GPUs of
other vendors) it records nothing, and `note` says why.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import threading
import time
from decimal import Decimal

from . import timing

QUERY = "clocks.sm,clocks.max.sm,utilization.gpu"  # MHz now, the highest MHz, % of the last period busy


class FrequencyLog:
    """Samples of the SM clock while a `with` block runs: samples = [(perf_counter seconds, MHz, busy %)].

    with FrequencyLog() as log:
        trainer.train(3)
    log.median_mhz()                                 # over the whole block; None where nothing was sampled
    log.median_mhz([(start, end), ...])              # each wall-clock window's median, then their median
    """

    def __init__(self, interval_ms: int = 50, command: str = "nvidia-smi"):
        self.interval_ms = int(interval_ms)
        self.samples: list[tuple[float, float, float]] = []
        self.max_mhz: float | None = None
        path = shutil.which(command)
        self.command = [path, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                        "-lms", str(self.interval_ms)] if path else None
        self.available = path is not None
        self.note = "" if self.available else (
            f"no {command} on this machine (a software renderer, or a GPU not made by NVIDIA): "
            "the GPU's clock is not sampled here")
        self._process = self._reader = None

    def __enter__(self) -> "FrequencyLog":
        if self.command is not None:
            self._process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                             text=True)
            self._reader = threading.Thread(target=self._read, daemon=True)
            self._reader.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait()
            self._reader.join()
            self._process = self._reader = None

    def _read(self) -> None:
        for line in self._process.stdout:  # one line per sample, flushed as it is printed
            arrived = time.perf_counter()
            fields = [field.strip() for field in line.split(",")]
            try:
                mhz, max_mhz, busy = (float(field) for field in fields[:3])
            except ValueError:  # "[N/A]" or a message instead of numbers: skip the line
                continue
            self.max_mhz = max_mhz
            self.samples.append((arrived, mhz, busy))

    def inside(self, windows=None) -> list[tuple[float, float, float]]:
        """The samples whose time falls in one of the (start, end) perf_counter windows (all if None)."""
        if windows is None:
            return list(self.samples)
        return [s for s in self.samples if any(start <= s[0] <= end for start, end in windows)]

    def median_mhz(self, windows=None) -> float | None:
        """Median SM clock (MHz) of the samples, or over `windows` (see _median); None if there are none."""
        return self._median(1, windows)

    def median_busy(self, windows=None) -> float | None:
        """Median utilisation (% of the sample period in which a kernel ran), as median_mhz; None if none."""
        return self._median(2, windows)

    def _median(self, column: int, windows) -> float | None:
        """The median of every sample, or, given windows, the median of each window's median: each window (an
        epoch) counts once however many samples it holds, so a long first epoch at a high clock does not
        outvote shorter ones after the clock fell. A window shorter than the sampling interval may hold no
        sample: it takes the sample nearest its middle, if that lies within one interval of the window
        (otherwise it is left out). Leaving such windows out would count only the epochs that happened to
        hold a sample, and long, slow epochs hold one more often than short, fast ones."""
        if windows is None:
            values = [sample[column] for sample in self.samples]
        else:
            values = [v for v in (self._window_value(column, window) for window in windows) if v is not None]
        return statistics.median(values) if values else None

    def _window_value(self, column: int, window) -> float | None:
        """A window's median sample, or the sample nearest its middle within one interval of it, or None."""
        inside = [s[column] for s in self.inside([window])]
        if inside:
            return statistics.median(inside)
        start, end = window
        reach = self.interval_ms / 1000
        near = [s for s in self.samples if start - reach <= s[0] <= end + reach]
        if not near:
            return None
        middle = (start + end) / 2
        return min(near, key=lambda s: (abs(s[0] - middle), s[0]))[column]


def mhz_text(mhz: float) -> str:
    """A clock in MHz as the notebooks print it: a whole number rounded half up as a reader rounds it (timing.times),
    '518' (517.5 MHz), '517' (516.5 MHz, where Python's :.0f rounds half to even, 516)."""
    return timing.times(mhz, 0)


def clock_ratio(fast_mhz: float | None, slow_mhz: float | None) -> Decimal | None:
    """fast_mhz / slow_mhz from the two clocks as mhz_text prints them, exactly: the ratio a reader gets by
    dividing the printed figures (1980 MHz against 517.5, printed 518, is 3.82, where the unrounded clocks
    give 3.83). None where either clock was not sampled."""
    if fast_mhz is None or slow_mhz is None:
        return None
    return Decimal(mhz_text(fast_mhz)) / Decimal(mhz_text(slow_mhz))


def account(loop, steady, clock_ratio: float | Decimal | None, margin: float = 0.15) -> str:
    """The training loop's epochs against back-to-back ones, and the SM clock of each, as one sentence for
    this run. loop, steady: Timings of the two kinds of epoch; clock_ratio: the back-to-back epochs' clock /
    the loop's (None where the clock was not sampled), best from the clocks as printed (the function
    clock_ratio), so that the ratio printed matches the printed clocks. The clock is named as lower (or higher)
    from 1 + `margin` on, judged on the ratio as printed (two decimals, rounded half up), so one printed figure
    never gets both outcomes: 1980 against 1722 MHz (1.1498) and against 1721 (1.1505) both print 1.15× and are
    both named lower; a lower clock with what that can do (a kernel's time grows at most with 1/clock). It
    judges nothing: on one H100 the loop's epochs were 1.6× to 2.95× the back-to-back median in five runs of
    notebook 05, one of them with bands that overlapped, and the GPU clocked down 3.7× in one run and not at
    all in the next, so any verdict on a gap or on the clock flipped between runs; the sentence says that these
    figures hold for this run only."""
    head = (f"the training loop's epochs took {loop.text()} against {steady.text()} back to back, "
            f"{timing.times(timing.ratio(loop, steady))}× the back-to-back median")
    limit = 1 + Decimal(str(margin))   # judged on the ratio as printed, the way it goes (lower or higher)
    exact = None if clock_ratio is None else (clock_ratio if isinstance(clock_ratio, Decimal) else
                                              Decimal(repr(float(clock_ratio))))
    printed = None if exact is None else Decimal(timing.times(clock_ratio if exact >= 1 else 1 / clock_ratio))
    if clock_ratio is None:
        clock = ""
    elif exact >= 1 and printed >= limit:
        clock = f", at a clock {timing.times(clock_ratio)}× lower, which can stretch a kernel by as much"
    elif printed < limit:
        words = clock_words(clock_ratio)
        clock = (", at the same clock" if words == "the same clock" else
                 f", at about the same clock ({words.removeprefix('a clock ')}, within the {100 * margin:.3g} % we "
                 "call the same)")
    else:
        clock = f", at {clock_words(clock_ratio)}"
    return (f"{head}{clock}; how much slower a loop that pauses between epochs runs, and whether the GPU clocks "
            "down in the pauses, moves from one run to the next, so these figures hold for this run only")


def clock_words(clock_ratio: float) -> str:
    """The slower epochs' clock against the faster ones', from clock_ratio = the fast epochs' clock / the slow
    ones': 'a clock 1.18× higher' (ratio 0.85), 'a clock 1.10× lower' (ratio 1.10), 'the same clock' where
    either way it rounds to 1.00×."""
    if timing.times(clock_ratio) == "1.00" or timing.times(1 / clock_ratio) == "1.00":
        return "the same clock"
    if clock_ratio > 1:
        return f"a clock {timing.times(clock_ratio)}× lower"
    return f"a clock {timing.times(1 / clock_ratio)}× higher"

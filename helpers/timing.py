"""Upload, kernel and readback measured apart, each figure labelled with the clock it came from.

Introduced in notebook 02.

Two clocks:
  * GPU timer queries (`ctx.query(time=True)`): the time the GPU spent between two points of its command
    stream. Only the kernel's own time; nothing of Python, the driver or the wait for the result.
    ModernGL reads the result as 32-bit nanoseconds, so one query wraps past 4.29 s: keep each timed
    region short (a few dispatches, not an epoch).
  * Wall clock (`time.perf_counter`) around the work and a `ctx.finish()`, which waits until the GPU
    is done. Includes everything: Python, driver, queueing, synchronisation.

On a software renderer (Mesa's llvmpipe) timer queries return meaningless values, so `Clock` falls
back to the wall clock around `ctx.finish()` and says so in `Clock.source`.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

from .gl import is_software

WRAP_SECONDS = 2 ** 32 / 1e9  # 4.29 s: where ModernGL's 32-bit nanosecond query result wraps
GPU_QUERY = "GPU timer query"
WALL_FINISH = "wall clock around ctx.finish()"


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


def median_seconds(measure, repeat: int = 20, warmup: int = 2) -> float:
    """Median of `repeat` calls to `measure()` (which returns seconds), after `warmup` untimed calls."""
    for _ in range(warmup):
        measure()
    return statistics.median(measure() for _ in range(repeat))


class Phases:
    """Samples per named phase, each with the clock it came from; medians and a printable table."""

    def __init__(self):
        self.samples = defaultdict(list)
        self.sources = {}

    def add(self, name: str, seconds: float, source: str = "wall clock") -> None:
        self.samples[name].append(seconds)
        self.sources[name] = source

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def medians(self) -> dict[str, float]:
        return {name: self.median(name) for name in self.samples}

    def table(self, scale: float = 1e6, unit: str = "µs") -> str:
        rows = [f"{'phase':<22s} {'median':>10s} {'min':>10s} {'n':>5s}  clock"]
        for name, values in self.samples.items():
            rows.append(f"{name:<22s} {statistics.median(values) * scale:>8.1f}{unit} "
                        f"{min(values) * scale:>8.1f}{unit} {len(values):>5d}  {self.sources[name]}")
        return "\n".join(rows)

"""Batched inference of notebook 03: 784-H-10 forward passes over many images at once, phases timed apart.

Introduced in notebook 03. Each layer is one dispatch of glsl/dense_3_tiled.comp (shared-memory tiles and
register blocks, rung 5 of notebook 04's matmul ladder, with the bias and ReLU applied before its store);
with packed=True the first layer is glsl/dense_4_u8.comp, which reads uint8 pixels four to a word
(helpers.data.pack_images).

    fwd = BatchedForward(ctx, params, capacity=10_000)          # weights and buffers allocated once
    n = fwd.upload(X)              # float32 (n, 784), or with packed=True uint32 (n, 196) from pack_images
    fwd.dispatch(n)                # two dispatches, each followed by a memory barrier
    logits = fwd.read(n)           # copy to a staging buffer, read into a preallocated array (a view)
    fwd.predict(X)                 # all of the above plus argmax, any number of rows
    rows = sweep(fwd, X, [1, 10, 100, 1000, 10_000], timing.Clock(ctx), params)   # per batch size, vs NumPy

Why a staging buffer for the logits: a driver may move a buffer the CPU maps to read it into host memory,
and then every shader write to it crosses PCIe. So the output layer writes `Y`, which stays on the GPU, and
`read` copies it (glCopyBufferSubData, on the GPU) into `Y_host`, the only buffer the CPU reads;
mapped_output_timings measures the difference on this driver.
"""

from __future__ import annotations

from decimal import Decimal
from time import perf_counter

import numpy as np

from . import findings, gl, reference, timing

SHADERS = {False: "dense_3_tiled.comp", True: "dense_4_u8.comp"}


class BatchedForward:
    """relu(X @ W1 + b1) @ W2 + b2 for up to `capacity` rows per call, on preallocated GPU buffers."""

    def __init__(self, ctx, params: dict, capacity: int, packed: bool = False, defines: dict | None = None,
                 output_defines: dict | None = None):
        """defines: tile #defines for both layers' shaders; output_defines: for the output layer (default: defines)."""
        self.ctx, self.capacity, self.packed = ctx, int(capacity), packed
        self.K, self.H = params["W1"].shape
        self.N = params["W2"].shape[1]
        if packed and self.K % 4:
            raise ValueError(f"packed=True needs a multiple of 4 pixels per image (pack_images); K is {self.K}")
        self.weights = {k: gl.upload(ctx, np.ascontiguousarray(params[k], dtype=np.float32), k)
                        for k in ("W1", "b1", "W2", "b2")}
        width, dtype = (self.K // 4, np.uint32) if packed else (self.K, np.float32)
        self.X = gl.empty(ctx, (self.capacity, width), dtype, name="X", fill=None)
        self.A1 = gl.empty(ctx, (self.capacity, self.H), name="A1")
        self.Y = gl.empty(ctx, (self.capacity, self.N), name="logits")          # written by the GPU only
        self.Y_host = gl.empty(ctx, (self.capacity, self.N), name="logits (staging)")   # read by the CPU only
        self.out = np.empty((self.capacity, self.N), dtype=np.float32)
        defines = dict(defines or {})
        output_defines = defines if output_defines is None else dict(output_defines)
        self.hidden = gl.Kernel(ctx, SHADERS[packed], {**defines, "RELU": 1})
        self.output = gl.Kernel(ctx, SHADERS[False], {**output_defines, "RELU": 0})
        self.layers = [(self.hidden, (self.X, self.weights["W1"], self.weights["b1"], self.A1), self.K, self.H),
                       (self.output, (self.A1, self.weights["W2"], self.weights["b2"], self.Y), self.H, self.N)]
        for kernel, buffers, K, N in self.layers:
            kernel.bind(dict(enumerate(buffers)))     # checks every binding and dtype once
            kernel.set(K=K, N=N)
            kernel.check(dict(enumerate(buffers)), B=self.capacity)   # every buffer holds `capacity` rows

    def upload(self, X) -> int:
        """Write X's rows into the existing input buffer (no allocation); returns the row count."""
        dtype = np.uint32 if self.packed else np.float32
        X = np.asarray(X)
        width = self.X.shape[1]
        if X.dtype != dtype or X.ndim != 2 or X.shape[1] != width or not 0 < len(X) <= self.capacity:
            what = "uint32 (n, %d) from data.pack_images" % width if self.packed else "float32 (n, %d)" % width
            raise ValueError(f"BatchedForward(packed={self.packed}) takes {what} with 1 <= n <= capacity="
                             f"{self.capacity}; got {X.dtype} {X.shape}")
        self.X.buffer.write(np.ascontiguousarray(X))
        return len(X)

    def dispatch(self, n: int) -> None:
        """Both layers on the first n rows, each followed by a memory barrier."""
        self._check_rows(n)
        for kernel, buffers, K, N in self.layers:
            self._layer(kernel, buffers, n, N)

    def _layer(self, kernel, buffers, n: int, N: int) -> None:
        """One layer on the first n rows, buffers bound in order (input, weights, bias, output), then a barrier."""
        for binding, array in enumerate(buffers):   # binding points are shared by every program
            array.bind_to(binding)
        kernel.program["B"].value = n
        kernel.program.run(*kernel.groups(B=n, N=N))   # from the banner, remembered per n
        self.ctx.memory_barrier()

    def read(self, n: int) -> np.ndarray:
        """The first n rows of logits, read into the preallocated array (a view, overwritten next call)."""
        self._check_rows(n)
        size = n * self.N * 4
        self.ctx.copy_buffer(self.Y_host.buffer, self.Y.buffer, size=size)   # GPU-side copy to staging
        self.Y_host.buffer.read_into(self.out, size=size)
        return self.out[:n]

    def read_new(self, n: int) -> np.ndarray:
        """The same rows as a new array (NumPy allocates on every call): for comparison with read()."""
        self._check_rows(n)
        size = n * self.N * 4
        self.ctx.copy_buffer(self.Y_host.buffer, self.Y.buffer, size=size)
        return np.frombuffer(self.Y_host.buffer.read(size=size), dtype=np.float32).reshape(n, self.N)

    def _check_rows(self, n: int) -> None:
        if not 1 <= int(n) <= self.capacity:
            raise ValueError(f"n must be 1..{self.capacity} (this BatchedForward's capacity), got {n}")

    def predict(self, X) -> np.ndarray:
        """Predicted class per row of X, in chunks of `capacity` rows."""
        return np.concatenate([self._predict_chunk(X[i:i + self.capacity]) for i in range(0, len(X), self.capacity)])

    def _predict_chunk(self, X) -> np.ndarray:
        n = self.upload(X)
        self.dispatch(n)
        return self.read(n).argmax(axis=1)

    def logits(self, X) -> np.ndarray:
        n = self.upload(X)
        self.dispatch(n)
        return self.read(n).copy()

    def release(self) -> None:
        for array in (self.X, self.A1, self.Y, self.Y_host, *self.weights.values()):
            array.release()


def mapped_output_timings(fwd: BatchedForward, clock: timing.Clock, n: int, reads: int = 20,
                          repeat: int = 20) -> tuple[timing.Timing, timing.Timing]:
    """Timings of the output layer's kernel at n rows into fwd.Y, a buffer the CPU never maps, and into a
    second buffer of the same size that the CPU has read `reads` times by mapping it (moderngl's buffer.read
    maps), the way a reader would read logits without a staging buffer. Interleaved repeats after warm-up."""
    kernel, (A1, W2, b2, _), K, N = fwd.layers[1]
    fwd._check_rows(n)
    mapped = gl.empty(fwd.ctx, fwd.Y.shape, name="logits (mapped by the CPU)")

    def layer(out):
        fwd._layer(kernel, (A1, W2, b2, out), n, N)

    fwd.dispatch(n)                      # A1 holds this batch's hidden layer
    for _ in range(reads):
        layer(mapped)
        mapped.buffer.read()             # a map of the buffer the kernel just wrote
    took = timing.measure_interleaved({"never mapped": lambda: clock.kernel(lambda: layer(fwd.Y)),
                                       "mapped": lambda: clock.kernel(lambda: layer(mapped))},
                                      repeat=repeat, clock=clock.source)
    mapped.release()
    return took["never mapped"], took["mapped"]


PHASES = ("upload", "kernel", "readback", "total", "numpy")


def sweep(fwd: BatchedForward, X, sizes, clock: timing.Clock, params: dict, X_float=None,
          repeat: int = 15) -> list[dict]:
    """Per batch size: upload, kernel, readback and end-to-end seconds on the GPU, and NumPy's forward.

    Before each size a warm-up by time (timing.warm_up, the biggest batch's work, so every size starts from
    the same state), then `repeat` rounds of that size, each round taking every phase once in turn
    (interleaved, so drift falls on all alike). Each row holds the medians under the phase names and the
    whole distributions under "timings" ({phase: timing.Timing}). upload and readback: wall clock around
    the call and a ctx.finish(); kernel: `clock` (GPU timer query where trustworthy); total: one wall-clock
    round of upload, dispatch, read and argmax; numpy: reference.forward + argmax on the same rows (float32).
    X_float: the float32 rows NumPy uses when fwd is packed (X holds the packed words). Each row names the
    GPU's input under "input": "float32", or "uint8" for a packed fwd.
    """
    X_float = X if X_float is None else X_float
    biggest = min(len(X), fwd.capacity)
    rows = []
    for n in sizes:
        timing.warm_up(lambda: (fwd.predict(X[:biggest]), reference.forward(params, X_float[:biggest])),
                       finish=fwd.ctx.finish)    # an idle GPU runs at low clocks
        x, xf = X[:n], X_float[:n]
        samples = {k: [] for k in PHASES}
        for r in range(repeat):
            samples["upload"].append(clock.wall(lambda: fwd.upload(x)))
            samples["kernel"].append(clock.kernel(lambda: fwd.dispatch(n)))
            fwd.ctx.finish()
            start = perf_counter(); fwd.read(n); samples["readback"].append(perf_counter() - start)  # noqa: E702
            fwd.ctx.finish()
            start = perf_counter(); fwd.predict(x); samples["total"].append(perf_counter() - start)  # noqa: E702
            start = perf_counter()
            reference.forward(params, xf)[0].argmax(axis=1)
            samples["numpy"].append(perf_counter() - start)
        timings = {k: timing.Timing(tuple(v), clock.source if k == "kernel" else timing.WALL)
                   for k, v in samples.items()}
        rows.append({"batch": n, **{k: t.median for k, t in timings.items()}, "timings": timings,
                     "clock": clock.source, "input": "uint8" if fwd.packed else "float32"})
    return rows


def _us_figures(t: timing.Timing) -> tuple:
    """A timing's (median, low, high) in µs as the sweep table prints them: timing.band_figures to the whole µs
    of the median (as many significant digits as its whole part has: 999.6 prints 1000), with more digits where
    the band's ends would otherwise print the same, so a band never reads '349 (349–349)' but
    '349.2 (349.1–349.4)'."""
    median = t.median * 1e6
    return timing.band_figures(median, t.low * 1e6, t.high * 1e6, max(1, len(str(int(median)))))


def _cell(row: dict, key: str) -> str:
    """One sweep figure in µs: 'median (low–high)' where the row has its Timing (_us_figures), else the median."""
    t = row.get("timings", {}).get(key)
    if t is None:
        return _us_figures(timing.Timing((row[key],)))[0]
    median, low, high = _us_figures(t)
    return f"{median} ({low}–{high})"


def sweep_table(rows: list[dict]) -> str:
    """The sweep as text: µs per batch per phase (median and 20–80 % band), GPU total against NumPy."""
    keys = ("upload", "kernel", "readback", "total", "numpy")
    head = {"upload": "upload", "kernel": "kernel", "readback": "readback", "total": "GPU total", "numpy": "NumPy"}
    width = max(10, *(len(_cell(r, k)) + 1 for r in rows for k in keys))
    lines = [f"{'batch':>6s}" + "".join(f"{head[k]:>{width}s}" for k in keys) + "  faster"]
    for r in rows:
        lines.append(f"{r['batch']:>6d}" + "".join(f"{_cell(r, k):>{width}s}" for k in keys) + "  "
                     + {timing.A_FASTER: "GPU", timing.B_FASTER: "NumPy"}.get(ahead(r), "same"))
    lines.append(f"(µs per batch: median (20–80 %); kernel: {rows[0]['clock']}; the others: wall clock; faster: "
                 f"beyond both bands and by more than {1 + HOST_MARGIN:g}×, else same)")
    return "\n".join(lines)


HOST_MARGIN = 0.5   # a round trip through host memory moves by tens of percent between runs (the CPU's copies,
                    # its clock, other processes), far more than its spread within one: GPU against NumPy is
                    # called only when the bands part and the medians differ by more than 1.5×


def ahead(row: dict) -> str:
    """timing.compare's rule for the GPU's total against NumPy in one sweep row, with HOST_MARGIN, the margin
    and the bands judged on the µs the sweep table prints (_table_us, _table_band; rows without timings: by
    their medians): A_FASTER when the GPU is ahead beyond the noise, B_FASTER when NumPy is, SAME otherwise."""
    return timing.compare(*_gpu_and_numpy(row), HOST_MARGIN, shown=_table_us, bands=_table_band)


def _table_band(t: timing.Timing) -> tuple:
    """A timing's 20–80 % band in µs as the sweep table prints it (_us_figures), exactly: (low, high)."""
    _, low, high = _us_figures(t)
    return Decimal(low), Decimal(high)


def _table_us(t: timing.Timing) -> Decimal:
    """A median in µs as the sweep table prints it (_us_figures), exactly; 1 where it prints 0, so a ratio of
    two is defined."""
    shown = Decimal(_us_figures(t)[0])
    return shown if shown > 0 else Decimal(1)


def shown_us(row: dict, key: str) -> Decimal:
    """A sweep row's median of one phase (`key`) in µs as sweep_table prints it, exactly (_table_us): for a
    figure computed from the table's figures, such as how much a phase grows from one batch size to another."""
    t = row.get("timings", {}).get(key)
    return _table_us(t if t is not None else timing.Timing((row[key],)))


def _gpu_and_numpy(row: dict) -> tuple:
    """A sweep row's GPU total and NumPy as Timings (a row without its timings: each its median alone)."""
    if "timings" in row:
        return row["timings"]["total"], row["timings"]["numpy"]
    return timing.Timing((row["total"],)), timing.Timing((row["numpy"],))


def crossover(rows: list[dict]):
    """The smallest batch size from which on the GPU's total beats NumPy beyond the noise, or None."""
    for i, r in enumerate(rows):
        if all(ahead(later) == timing.A_FASTER for later in rows[i:]):
            return r["batch"]
    return None


def plot_sweep(rows: list[dict], title: str = ""):
    """µs per batch against batch size, log axes: the GPU's phases, its total, and NumPy, each median with its
    20–80 % band where the rows have their timings."""
    import matplotlib.pyplot as plt

    from .plots import PHASE_COLOURS

    fig, ax = plt.subplots(figsize=(8, 4.5))
    batches = [r["batch"] for r in rows]
    for key, style, marker in (("upload", ":", "s"), ("kernel", ":", "^"), ("readback", ":", "v"), ("total", "-", "o"),
                               ("numpy", "-", "D")):
        label = {"total": "GPU total (wall clock)", "numpy": "NumPy (CPU)"}.get(key, f"GPU {key}")
        colour = PHASE_COLOURS.get(key, "black")
        ax.plot(batches, [r[key] * 1e6 for r in rows], style, marker=marker, label=label, color=colour)
        if all("timings" in r for r in rows):     # the 20–80 % band of each point
            ax.fill_between(batches, [r["timings"][key].low * 1e6 for r in rows],
                            [r["timings"][key].high * 1e6 for r in rows], color=colour, alpha=0.15)
    where = crossover(rows)
    if where:
        ax.axvline(where, color="grey", alpha=0.5)
        ax.text(where, ax.get_ylim()[1], f" GPU ahead from {where}", va="top", fontsize=9)
    ax.set(xscale="log", yscale="log", xlabel="images per batch", ylabel="µs per batch", title=title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)   # beside the data
    fig.tight_layout()
    return fig


# --- the sentences notebook 03 prints from its numbers (tests/test_verdicts_nb0304.py) -------------------

MAPPED_SLOWER = 1.2   # a kernel this much slower (or more) into a buffer the CPU mapped: the driver moved it
GPU_FROM, NUMPY_EVERYWHERE = "gpu ahead from a batch size", "numpy ahead or level at every batch size"
GPU_SOMEWHERE = "gpu ahead somewhere, at no batch size from which it stays ahead"


def _sizes(rows: list[dict]) -> str:
    """'10', '10 and 100', '10, 100 and 1000' images: the batch sizes of rows."""
    names = [str(r["batch"]) for r in rows]
    return findings.listed(names)


def _lower(row: dict) -> str:
    """Which median of a level sweep row is lower, and by how much, from the µs the sweep table prints:
    "the GPU's median is 1.10× lower"."""
    gpu, numpy = _gpu_and_numpy(row)
    g, n = _table_us(gpu), _table_us(numpy)
    if g == n:
        return "the two medians print the same"
    if n > g:
        return f"the GPU's median is {timing.times(Decimal(n) / g)}× lower"
    return f"NumPy's median is {timing.times(Decimal(g) / n)}× lower"


def crossover_sentence(rows: list[dict], given: str | None = None) -> timing.Verdict:
    """Where the GPU's total beats NumPy beyond the noise and HOST_MARGIN from that batch size on (GPU_FROM),
    or ahead at some batch sizes but from none on (GPU_SOMEWHERE), or nowhere (NUMPY_EVERYWHERE), led by the GPU's input ('with float32
    input to the GPU, '): `given`, else the rows' "input" (sweep() stores it), else float32; the uint8 path's
    round trip is another comparison. The batch sizes where neither is ahead
    are each named once, in parentheses: those whose bands overlap as the same within the noise we measured,
    those whose bands part by less than HOST_MARGIN with which median is lower and by how much, and
    HOST_MARGIN once, with why it is that wide."""
    given = given or (rows[0].get("input") if rows else None) or "float32"
    lead = f"with {given} input to the GPU, "
    level = [r for r in rows if ahead(r) == timing.SAME]
    noisy = [r for r in level if timing.overlap(*_gpu_and_numpy(r), bands=_table_band)]   # as the table prints them
    close = [r for r in level if r not in noisy]
    said = [f"at {_sizes(noisy)} images the two are {timing.SAME_WITHIN_NOISE}"] if noisy else []
    if close:
        lower = " and ".join(f"at {r['batch']} images {_lower(r)}" for r in close)
        said.append(f"{lower}, {'each ' if len(close) > 1 else ''}within the {100 * HOST_MARGIN:.3g} % by which "
                    "either side must win to count as ahead, set that wide because a round trip through host "
                    "memory varies far more from run to run than within one")
    tail = f" ({'; '.join(said)})" if said else ""
    where = crossover(rows)
    if where:
        return timing.Verdict(f"{lead}the GPU is ahead of NumPy from a batch of {where}{tail}", GPU_FROM)
    gpu_ahead = [r for r in rows if ahead(r) == timing.A_FASTER]
    if gpu_ahead:      # ahead somewhere, but not at every larger batch
        return timing.Verdict(f"{lead}the GPU is ahead of NumPy at {_sizes(gpu_ahead)} images but at no batch size "
                              f"from which it stays ahead{tail}", GPU_SOMEWHERE)
    return timing.Verdict(f"{lead}NumPy is ahead or level at every batch size here{tail}", NUMPY_EVERYWHERE)


def staging_upload_verdict(staged: timing.Timing, direct: timing.Timing) -> timing.Verdict:
    """staged: an upload through a staging buffer plus a GPU copy; direct: buffer.write into the kernel's own
    buffer, the same bytes. Three outcomes (timing.compare, staged as A)."""
    v = timing.versus(staged, direct, "an upload through a staging buffer and a GPU copy",
                      "buffer.write straight into the kernel's buffer")
    why = {timing.A_FASTER: ": this driver's direct write costs more than the extra copy",
           timing.B_FASTER: ": the staging buffer adds a second copy",
           timing.SAME: ": for uploads the staging buffer neither costs nor saves here"}[v.outcome]
    return timing.Verdict(f"{v}{why}.", v.outcome)


MOVED, IN_PLACE, MAPPED_FASTER = "mapped buffer slower", "no difference", "mapped buffer faster"


def mapped_output_verdict(unmapped: timing.Timing, mapped: timing.Timing) -> timing.Verdict:
    """unmapped: the output layer writing a buffer the CPU never maps; mapped: writing one the CPU has read by
    mapping it. MOVED when the mapped buffer's band lies above and its median is MAPPED_SLOWER× or more;
    MAPPED_FASTER the other way round (beyond the noise); else IN_PLACE. Where both print as the same figure,
    the sentence names it once: 'took 19.1 µs (18.9–19.2) both ways'."""
    if unmapped.median <= 0 or mapped.median <= 0:
        raise ValueError(f"times need positive durations, got {unmapped.median} and {mapped.median}")
    if mapped.text() == unmapped.text():    # the same printed figures: name them once
        head = (f"the output layer took {mapped.text()} both ways, writing a buffer the CPU had mapped and one the "
                "CPU never touches")
    else:
        head = (f"the output layer writing a buffer the CPU had mapped took {mapped.text()}, {timing.times(timing.ratio(mapped, unmapped))}× the "
                f"{unmapped.text()} of the same layer writing a buffer the CPU never touches")
    outcome = timing.compare(unmapped, mapped, margin=MAPPED_SLOWER - 1)
    if outcome == timing.A_FASTER:
        return timing.Verdict(head + ": the driver moved the mapped buffer where the CPU reads it, and the "
                              "kernel pays.", MOVED)
    if outcome == timing.B_FASTER:
        return timing.Verdict(head + ": the mapped buffer was faster beyond the noise; this driver's placement "
                              "rules are not documented.", MAPPED_FASTER)
    same = timing.the_same(unmapped, mapped, MAPPED_SLOWER - 1)
    return timing.Verdict(head + f": {same}, so this driver left it in place this time (its placement rules are not "
                          "documented).", IN_PLACE)


# --- the committed benchmark record's round trips, judged by the sweep's rule ------------------------------

RECORD_GPU = {"float32": "end to end, float32: upload+kernels+readback+argmax",
              "uint8": "end to end, uint8: upload+kernels+readback+argmax"}    # helpers/bench/inference.py's rows
RECORD_NUMPY = "NumPy forward + argmax on the CPU"


def record_round_trips(rows: list[dict], where: str = "the committed benchmark record") -> timing.Verdict | None:
    """The record's whole GPU round trips (float32 input, and uint8 where the record has that row) against its
    NumPy forward and argmax, by the sweep's rule: timing.compare with HOST_MARGIN, the margin judged on the
    medians as printed. One sentence that says the figures are the record's and
    not this run's; its outcome names each input's compare() outcome ("float32: A faster; uint8: same within
    noise", the GPU as A). None where the record has no NumPy or no float32 round trip."""
    from .bench.inference import timing_of   # that module imports this one
    numpy = timing_of(rows, RECORD_NUMPY)
    trips = {kind: t for kind, what in RECORD_GPU.items() if (t := timing_of(rows, what)) is not None}
    if numpy is None or "float32" not in trips:
        return None
    images = next((r.get("images") for r in rows if r["what"] == RECORD_NUMPY), None)
    on = f" on {images:,} images" if images else ""
    clauses, outcomes = [], []
    for kind, gpu in trips.items():
        outcome = timing.compare(gpu, numpy, HOST_MARGIN)
        if outcome == timing.A_FASTER:
            said = f"the GPU is {timing.times_beyond(timing.ratio(numpy, gpu), HOST_MARGIN)}× faster"
        elif outcome == timing.B_FASTER:
            said = f"NumPy is {timing.times_beyond(timing.ratio(gpu, numpy), HOST_MARGIN)}× faster"
        else:
            said = f"the two are {timing.the_same(gpu, numpy, HOST_MARGIN)}"
        clauses.append(f"with {kind} input ({gpu.text('ms')}) {said}")
        outcomes.append(f"{kind}: {outcome}")
    text = (f"In {where}, a run of its own and not this one, NumPy's forward and argmax{on} took {numpy.text('ms')} "
            f"by wall clock, timed in turn with the GPU's whole round trips: {'; '.join(clauses)}. By the "
            f"sweep's rule (either side is ahead only with the bands apart and by more than {1 + HOST_MARGIN:g}×) "
            "these are the record's verdicts, not this run's; the sentence under the sweep's table judges this "
            "run's own")
    return timing.Verdict(text, "; ".join(outcomes))


def training_time_text(seconds) -> str:
    """The time of a training run's epochs (history["seconds"], one wall-clock figure an epoch) as a sentence
    part: with two epochs or more, the time of an epoch as a timing.Timing of them, its median and 20–80 % band
    ('367 ms (360–380) an epoch of training by wall clock, the median and 20–80 % band of 3 epochs'); with one,
    its time alone ('367 ms for its one epoch of training by wall clock'), a single figure having no band; where
    every epoch took the same, that figure for each epoch; where only the band has no width, the median and the
    range of the epochs."""
    seconds = [float(s) for s in seconds]
    if not seconds:
        return "no epoch of training"
    epochs = timing.Timing(tuple(seconds), timing.WALL)
    alone = epochs.text().split(" (", 1)[0]      # the median as Timing.text() prints it
    if len(seconds) == 1:
        return f"{alone} for its one epoch of training by wall clock"
    if min(seconds) == max(seconds):             # every epoch alike
        return f"{alone} for each of its {len(seconds)} epochs of training by wall clock"
    if epochs.low == epochs.high:                # a band of no width, the epochs not all alike
        return (f"{alone} an epoch of training by wall clock, the median of {len(seconds)} epochs, from "
                f"{timing._g(min(seconds), 3)} to {timing._g(max(seconds), 3)} s")
    return (f"{epochs.text()} an epoch of training by wall clock, the median and 20–80 % band of "
            f"{len(seconds)} epochs")

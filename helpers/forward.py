"""The 2-layer MLP's forward pass on the GPU, built from glsl/dense_1_naive.comp. Introduced in notebook 02.

    fwd = Forward(ctx, params, max_batch=1)   # weights uploaded once, every buffer allocated once
    fwd.logits(X)                             # (B, 10) float32: upload, two dispatches, read back
    fwd.predict(X)                            # (B,) predicted classes
    phases = time_one_sample(fwd, X_test, timing.Clock(ctx))   # what one sample costs, phase by phase

The phases can also be run one at a time, to time them apart (notebook 02):

    B = fwd.upload(X)      # the input rows into the staging buffer, and a GPU copy into X
    fwd.dispatch(B)        # hidden layer (RELU 1), barrier, output layer (RELU 0), barrier
    ctx.finish()           # wait until the GPU is done
    out = fwd.read(B)      # logits copied to the staging buffer, read into a preallocated array (a view)

Every CPU write and read goes through the context's staging buffer (GPUArray.write / read): on the H100
a direct buffer.write into X could land before the GPU copy that had filled X with NaN at creation, and
that copy then overwrote the sample (notebook 02's check caught it).

Shapes: X (B, K), W1 (K, H), b1 (H,), W2 (H, N), b2 (N,), as in helpers.reference.
"""

from __future__ import annotations

from time import perf_counter

import numpy as np

from . import gl, timing


# The layer shaders Forward can use: drop-in versions of one dense layer (bindings 0 X, 1 W, 2 b, 3 Y;
# uniforms B, K, N). Each one's work groups come from its banner, through gl.Kernel.groups.
SHADERS = ("dense_1_naive.comp", "dense_2_splitk.comp")


class Forward:
    """relu(X @ W1 + b1) @ W2 + b2 on the GPU, for up to `max_batch` rows per dispatch."""

    def __init__(self, ctx, params: dict, max_batch: int = 1, shader: str = "dense_1_naive.comp"):
        if shader not in SHADERS:
            raise ValueError(f"Forward runs one of {list(SHADERS)}, not {shader!r}")
        self.ctx, self.shader, self.max_batch = ctx, shader, int(max_batch)
        self.K, self.H = params["W1"].shape
        self.N = params["W2"].shape[1]
        weights = {k: gl.upload(ctx, np.ascontiguousarray(params[k], dtype=np.float32), k)
                   for k in ("W1", "b1", "W2", "b2")}
        self.X = gl.empty(ctx, (self.max_batch, self.K), name="X")
        self.A1 = gl.empty(ctx, (self.max_batch, self.H), name="A1")
        self.Y = gl.empty(ctx, (self.max_batch, self.N), name="logits")
        self.out = np.empty((self.max_batch, self.N), dtype=np.float32)
        self.hidden = gl.Kernel(ctx, shader, {"RELU": 1})
        self.output = gl.Kernel(ctx, shader, {"RELU": 0})
        self.layers = [  # (kernel, buffers for bindings 0..3, output columns)
            (self.hidden, (self.X, weights["W1"], weights["b1"], self.A1), self.H),
            (self.output, (self.A1, weights["W2"], weights["b2"], self.Y), self.N),
        ]
        for kernel, buffers, n_out in self.layers:
            kernel.bind(dict(enumerate(buffers)))  # checks bindings and dtypes once
            kernel.set(K=buffers[1].shape[0], N=n_out)  # uniforms stay set in the program
            kernel.check(dict(enumerate(buffers)), B=self.max_batch)  # every buffer holds max_batch rows
        self.weights = weights

    def upload(self, X) -> int:
        """Write the rows of X (B, K), or one sample (K,), into the input buffer; returns B."""
        X = np.asarray(X)
        if X.dtype.kind in "iub":
            raise TypeError(f"Forward takes float images in [0, 1], got {X.dtype.name}: "
                            "normalise first: data.normalise(images)")
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim == 1:
            X = X[None]
        if X.ndim != 2 or X.shape[1] != self.K or not 0 < len(X) <= self.max_batch:
            hint = (" Make a Forward with a larger max_batch for bigger batches."
                    if X.ndim == 2 and X.shape[1] == self.K and len(X) > self.max_batch else "")
            raise ValueError(f"Forward takes X of shape (B, {self.K}) with 1 <= B <= max_batch={self.max_batch}; "
                             f"got {X.shape}.{hint}")
        self.X.write(X if len(X) == self.max_batch else X.reshape(-1))   # the first rows only
        return len(X)

    def dispatch(self, batch: int, barrier: bool = True) -> None:
        """Both layers on the first `batch` rows, each followed by a memory barrier.

        barrier=False leaves the barriers out: wrong on a real GPU, for the experiment in notebook 02 only.
        """
        self._check_batch(batch)
        for kernel, buffers, n_out in self.layers:
            for binding, array in enumerate(buffers):  # binding points are shared by all programs
                array.bind_to(binding)
            kernel.program["B"].value = batch
            kernel.program.run(*kernel.groups(B=batch, N=n_out))  # from the banner, remembered per batch
            if barrier:
                self.ctx.memory_barrier()  # the next layer, and the read, must see this layer's writes

    def read(self, batch: int) -> np.ndarray:
        """The first `batch` rows of logits, read into a preallocated array: a view, overwritten next call."""
        self._check_batch(batch)
        self.Y.read(out=self.out.reshape(-1)[:batch * self.N], count=batch * self.N)
        return self.out[:batch]

    def _check_batch(self, batch: int) -> None:
        if not 1 <= int(batch) <= self.max_batch:
            raise ValueError(f"batch must be 1..{self.max_batch} (this Forward's max_batch capacity), got {batch}")

    def logits(self, X) -> np.ndarray:
        """(B, N) float32 logits of X (B, K) or (K,); any B, in chunks of max_batch rows."""
        X = np.asarray(X, dtype=np.float32)
        X = X[None] if X.ndim == 1 else X
        chunks = []
        for start in range(0, len(X), self.max_batch):
            batch = self.upload(X[start:start + self.max_batch])
            self.dispatch(batch)
            chunks.append(self.read(batch).copy())
        return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)

    def predict(self, X) -> np.ndarray:
        """(B,) predicted class of each row."""
        return self.logits(X).argmax(axis=1)

    def release(self) -> None:
        for array in (self.X, self.A1, self.Y, *self.weights.values()):
            array.release()


def time_one_sample(fwd: Forward, X, clock: timing.Clock, repeat: int = 1000,
                    warmup: float | None = None) -> timing.Phases:
    """One sample at a time through `fwd` (a different row of X each time), every phase timed apart.

    Wall clock: python (make the input row, argmax), upload (fwd.upload: staging write and GPU copy),
    dispatch (issue both layers and their barriers), sync (ctx.finish: wait for the GPU), readback
    (fwd.read: GPU copy to staging, then read), total (their sum),
    and predict() (the plain `fwd.predict` call). `clock` (a GPU timer query where trustworthy): kernel,
    the two dispatches issued once more after the round's read, on their own in the timed region. Every
    phase of a round is taken in turn, so drift falls on all alike. Rounds run untimed for `warmup` seconds
    first (timing.warm_up; default: timing's warm-up).
    Returns the samples of every phase (phases.timing(name) is a timing.Timing).
    """
    phases = timing.Phases()
    row = iter(range(10 ** 9))
    timing.warm_up(lambda: fwd.predict(np.ascontiguousarray(X[next(row) % len(X)], dtype=np.float32)[None]),
                   warmup, finish=fwd.ctx.finish)
    for i in range(repeat):
        t0 = perf_counter()
        x = np.ascontiguousarray(X[i % len(X)], dtype=np.float32)[None]
        t1 = perf_counter(); fwd.upload(x)                             # noqa: E702
        t2 = perf_counter(); fwd.dispatch(1)                           # noqa: E702
        t3 = perf_counter(); fwd.ctx.finish()                          # noqa: E702
        t4 = perf_counter(); out = fwd.read(1)                         # noqa: E702
        t5 = perf_counter(); int(out.argmax())                         # noqa: E702
        t6 = perf_counter()
        kernel = clock.kernel(lambda: fwd.dispatch(1))
        t7 = perf_counter(); fwd.predict(x); t8 = perf_counter()       # noqa: E702
        for name, seconds in [("python", t1 - t0 + t6 - t5), ("upload", t2 - t1), ("dispatch", t3 - t2),
                              ("sync", t4 - t3), ("readback", t5 - t4), ("total", t6 - t0), ("predict()", t8 - t7)]:
            phases.add(name, seconds, "wall clock")
        phases.add("kernel", kernel, clock.source)
    return phases


# --- notebook 02's sentence on allocating every call (tests/test_verdicts_nb0304.py) ---------------------------

def allocating_verdict(allocating: timing.Timing, staged: timing.Timing) -> timing.Verdict:
    """allocating: one sample with new buffers and a direct read of the output buffer on every call;
    staged: fwd.predict (buffers allocated once, transfers through the staging buffer). Three outcomes."""
    v = timing.versus(allocating, staged, "new buffers and a direct read on every call",
                      "fwd.predict's reused buffers and staging copies")
    why = {timing.A_FASTER: ": for one sample on this driver the staging path's extra GPU copies cost more than "
                            "allocating does, so what it buys is order, not speed",
           timing.B_FASTER: ": allocating and mapping on every call cost more than the staging copies",
           timing.SAME: ": for one sample neither way is faster here"}[v.outcome]
    return timing.Verdict(f"{v}{why}.", v.outcome)


# --- notebook 02's ratios of the phases both shaders share (tests/test_forward.py) -----------------------------

def phase_ratios(first: timing.Timing | timing.Phases, second, names) -> list[str]:
    """'1.22×' for each phase in `names`: the larger of the two printed medians over the smaller (ratio() of
    the figures as Timing.text() prints them, so 7.65 µs against 6.25 µs is 1.22×, as a reader divides them,
    not the 1.23× of the unrounded medians)."""
    out = []
    for name in names:
        a, b = first.timing(name), second.timing(name)
        out.append(f"{timing.times(max(timing.ratio(a, b), timing.ratio(b, a)))}×")
    return out

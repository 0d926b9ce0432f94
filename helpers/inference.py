"""Batched inference of notebook 03: 784-H-10 forward passes over many images at once, phases timed apart.

Introduced in notebook 03. Each layer is one dispatch of glsl/infer_1_dense.comp (the fastest matmul
rung with the bias and ReLU applied before its store); with packed=True the first layer is
glsl/infer_2_dense_u8.comp, which reads uint8 pixels four to a word (helpers.data.pack_u8).

    fwd = BatchedForward(ctx, params, capacity=10_000)          # weights and buffers allocated once
    n = fwd.upload(X)              # float32 (n, 784), or with packed=True uint32 (n, 196) from pack_u8
    fwd.dispatch(n)                # two dispatches, each followed by a memory barrier
    logits = fwd.read(n)           # into a preallocated array: a view, overwritten next call
    fwd.predict(X)                 # all of the above plus argmax, any number of rows
    rows = sweep(fwd, X, [1, 10, 100, 1000, 10_000], timing.Clock(ctx))   # per batch size, vs NumPy
"""

from __future__ import annotations

import statistics
from time import perf_counter

import numpy as np

from . import gl, reference, timing

SHADERS = {False: "infer_1_dense.comp", True: "infer_2_dense_u8.comp"}


def _define(source: str, name: str) -> int:
    from .matmul import define

    return define(source, name)


class BatchedForward:
    """relu(X @ W1 + b1) @ W2 + b2 for up to `capacity` rows per call, on preallocated GPU buffers."""

    def __init__(self, ctx, params: dict, capacity: int, packed: bool = False, defines: dict | None = None):
        self.ctx, self.capacity, self.packed = ctx, int(capacity), packed
        self.K, self.H = params["W1"].shape
        self.N = params["W2"].shape[1]
        if packed and self.K % 4:
            raise ValueError(f"packed=True needs a multiple of 4 pixels per image (pack_u8); K is {self.K}")
        self.weights = {k: gl.upload(ctx, np.ascontiguousarray(params[k], dtype=np.float32), k)
                        for k in ("W1", "b1", "W2", "b2")}
        width, dtype = (self.K // 4, np.uint32) if packed else (self.K, np.float32)
        self.X = gl.empty(ctx, (self.capacity, width), dtype, name="X", fill=None)
        self.A1 = gl.empty(ctx, (self.capacity, self.H), name="A1")
        self.Y = gl.empty(ctx, (self.capacity, self.N), name="logits")
        self.out = np.empty((self.capacity, self.N), dtype=np.float32)
        defines = dict(defines or {})
        self.hidden = gl.Kernel(ctx, SHADERS[packed], {**defines, "RELU": 1})
        self.output = gl.Kernel(ctx, SHADERS[False], {**defines, "RELU": 0})
        self.layers = [(self.hidden, (self.X, self.weights["W1"], self.weights["b1"], self.A1), self.K, self.H),
                       (self.output, (self.A1, self.weights["W2"], self.weights["b2"], self.Y), self.H, self.N)]
        for kernel, buffers, K, N in self.layers:
            kernel.bind(dict(enumerate(buffers)))     # checks every binding and dtype once
            kernel.set(K=K, N=N)

    def upload(self, X) -> int:
        """Write X's rows into the existing input buffer (no allocation); returns the row count."""
        dtype = np.uint32 if self.packed else np.float32
        X = np.asarray(X)
        width = self.X.shape[1]
        if X.dtype != dtype or X.ndim != 2 or X.shape[1] != width or not 0 < len(X) <= self.capacity:
            what = "uint32 (n, %d) from data.pack_u8" % width if self.packed else "float32 (n, %d)" % width
            raise ValueError(f"BatchedForward(packed={self.packed}) takes {what} with 1 <= n <= capacity="
                             f"{self.capacity}; got {X.dtype} {X.shape}")
        self.X.buffer.write(np.ascontiguousarray(X))
        return len(X)

    def dispatch(self, n: int) -> None:
        """Both layers on the first n rows, each followed by a memory barrier."""
        for kernel, buffers, K, N in self.layers:
            for binding, array in enumerate(buffers):   # binding points are shared by every program
                array.buffer.bind_to_storage_buffer(binding)
            kernel.program["B"].value = n
            bm, bn = _define(kernel.source, "BM"), _define(kernel.source, "BN")
            kernel.program.run(gl.groups(N, bn), gl.groups(n, bm))
            self.ctx.memory_barrier()

    def read(self, n: int) -> np.ndarray:
        """The first n rows of logits, read into the preallocated array (a view, overwritten next call)."""
        self.Y.buffer.read_into(self.out, size=n * self.N * 4)
        return self.out[:n]

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
        for array in (self.X, self.A1, self.Y, *self.weights.values()):
            array.release()


def sweep(fwd: BatchedForward, X, sizes, clock: timing.Clock, params: dict, X_float=None,
          repeat: int = 5) -> list[dict]:
    """Per batch size: upload, kernel, readback and end-to-end seconds on the GPU, and NumPy's forward.

    Medians of `repeat` rounds after one warm-up. upload and readback: wall clock around the call and a
    ctx.finish(); kernel: `clock` (GPU timer query where trustworthy); total: one wall-clock round of
    upload, dispatch, read and argmax; numpy: reference.forward + argmax on the same rows (float32).
    X_float: the float32 rows NumPy uses when fwd is packed (X holds the packed words).
    """
    X_float = X if X_float is None else X_float
    rows = []
    for n in sizes:
        x, xf = X[:n], X_float[:n]
        samples = {"upload": [], "kernel": [], "readback": [], "total": [], "numpy": []}
        for r in range(repeat + 1):
            samples["upload"].append(clock.wall(lambda: fwd.upload(x)))
            samples["kernel"].append(clock.kernel(lambda: fwd.dispatch(n)))
            fwd.ctx.finish()
            start = perf_counter(); fwd.read(n); samples["readback"].append(perf_counter() - start)  # noqa: E702
            fwd.ctx.finish()
            start = perf_counter(); fwd.predict(x); samples["total"].append(perf_counter() - start)  # noqa: E702
            start = perf_counter()
            reference.forward(params, xf)[0].argmax(axis=1)
            samples["numpy"].append(perf_counter() - start)
        row = {"batch": n, **{k: statistics.median(v[1:]) for k, v in samples.items()}, "clock": clock.source}
        rows.append(row)
    return rows


def sweep_table(rows: list[dict]) -> str:
    """The sweep as text: µs per batch per phase, GPU total against NumPy."""
    lines = [f"{'batch':>6s} {'upload':>9s} {'kernel':>9s} {'readback':>9s} {'GPU total':>10s} {'NumPy':>9s}  faster"]
    for r in rows:
        lines.append(f"{r['batch']:>6d} " + " ".join(f"{r[k] * 1e6:>8.0f}µ" for k in ("upload", "kernel", "readback"))
                     + f" {r['total'] * 1e6:>9.0f}µ {r['numpy'] * 1e6:>8.0f}µ  "
                     + ("GPU" if r["total"] < r["numpy"] else "NumPy"))
    lines.append(f"(µs per batch; kernel: {rows[0]['clock']}; the others: wall clock)")
    return "\n".join(lines)

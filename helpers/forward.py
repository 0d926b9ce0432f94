"""The 2-layer MLP's forward pass on the GPU, built from glsl/dense_1_forward.comp. Introduced in notebook 02.

    fwd = Forward(ctx, params, max_batch=1)   # weights uploaded once, every buffer allocated once
    fwd.logits(X)                             # (B, 10) float32: upload, two dispatches, read back
    fwd.predict(X)                            # (B,) predicted classes

The phases can also be run one at a time, to time them apart (notebook 02):

    B = fwd.upload(X)      # buffer.write of the input rows
    fwd.dispatch(B)        # hidden layer (RELU 1), barrier, output layer (RELU 0), barrier
    ctx.finish()           # wait until the GPU is done
    out = fwd.read(B)      # read the logits into a preallocated array (a view, overwritten next call)

Shapes: X (B, K), W1 (K, H), b1 (H,), W2 (H, N), b2 (N,), as in helpers.reference.
"""

from __future__ import annotations

import numpy as np

from . import gl

# Work groups (x, y) for B rows and N columns, per forward shader, with the files' default 16x16 local size.
DISPATCH = {
    "dense_1_forward.comp": lambda B, N: (gl.groups(N, 16), gl.groups(B, 16)),
    "dense_2_splitk.comp": lambda B, N: (gl.groups(N, 16), B),
}


class Forward:
    """relu(X @ W1 + b1) @ W2 + b2 on the GPU, for up to `max_batch` rows per dispatch."""

    def __init__(self, ctx, params: dict, max_batch: int = 1, shader: str = "dense_1_forward.comp"):
        if shader not in DISPATCH:
            raise ValueError(f"Forward knows the dispatch of {sorted(DISPATCH)}, not {shader!r}")
        self.ctx, self.shader, self.max_batch = ctx, shader, int(max_batch)
        self.groups = DISPATCH[shader]
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
        self.weights = weights

    def upload(self, X) -> int:
        """Write the rows of X (B, K), or one sample (K,), into the input buffer; returns B."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim == 1:
            X = X[None]
        if X.ndim != 2 or X.shape[1] != self.K or not 0 < len(X) <= self.max_batch:
            raise ValueError(f"Forward takes X of shape (B, {self.K}) with 1 <= B <= max_batch={self.max_batch}; "
                             f"got {X.shape}. Make a Forward with a larger max_batch for bigger batches.")
        self.X.buffer.write(X)
        return len(X)

    def dispatch(self, batch: int, barrier: bool = True) -> None:
        """Both layers on the first `batch` rows, each followed by a memory barrier.

        barrier=False leaves the barriers out: wrong on a real GPU, for the experiment in notebook 02 only.
        """
        for kernel, buffers, n_out in self.layers:
            for binding, array in enumerate(buffers):  # binding points are shared by all programs
                array.buffer.bind_to_storage_buffer(binding)
            kernel.program["B"].value = batch
            kernel.program.run(*self.groups(batch, n_out))
            if barrier:
                self.ctx.memory_barrier()  # the next layer, and the read, must see this layer's writes

    def read(self, batch: int) -> np.ndarray:
        """The first `batch` rows of logits, read into a preallocated array: a view, overwritten next call."""
        self.Y.buffer.read_into(self.out, size=batch * self.N * 4)
        return self.out[:batch]

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

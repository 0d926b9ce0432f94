"""The whole training loop on the GPU, six dispatches a step: the 784-H-10 MLP of reference.py in GLSL.

Introduced in notebook 05. The common API (data resident on the GPU, epochs, checks, evaluation sets,
parameters in and out) is mlp.Trainer's; this module says what one step is:

    gather_forward_1_u8      A1 = relu(X[batch] @ W1 + b1)       X gathered from the uint8 images by order
    logits_forward_1_splitk  logits = A1 @ W2 + b2
    softmax_xent_1_rowwise   dlogits = (softmax - onehot) / B; the batch's loss sum and correct count
    dense_backward_1_relu    gW2 = A1.T @ dlogits, gb2, dZ1 = dlogits @ W2.T * (A1 > 0)
    gather_backward_1_u8     gW1 = X[batch].T @ dZ1, gb1
    update_1_sgd             params -= lr * grads over the flat buffer (update_2_momentum, update_3_adam)

Each dispatch is followed by a memory barrier, because the next one reads what it wrote. Every buffer has
a fixed binding point (BINDINGS), bound once per epoch, so a step is a few uniform writes and six `run()`
calls. W1, b1, W2, b2 live back to back in one buffer, each also bound as its own range (a view starting
on a 256-byte boundary), the gradients in another with the same layout, so one update dispatch updates
everything. All sums run in a fixed order (no atomics): the same seed gives bitwise-identical weights.
"""

from __future__ import annotations

import moderngl
import numpy as np

from . import gl
from .mlp import Trainer

# Binding points of the training pipeline: every shader of the step uses these numbers (see their banners).
BINDINGS = {
    "images": 0, "order": 1, "labels": 2,
    "W1": 3, "b1": 4, "W2": 5, "b2": 6,
    "A1": 7, "logits": 8, "dlogits": 9, "dZ1": 10,
    "gW1": 11, "gb1": 12, "gW2": 13, "gb2": 14,
    "losses": 15, "stats": 16, "params": 17, "grads": 18, "m": 19, "v": 20,
}
# The step's dispatches in order: {role: shader file}. The update shader follows the optimizer.
STEP = {
    "forward1": "gather_forward_1_u8.comp",
    "forward2": "logits_forward_1_splitk.comp",
    "xent": "softmax_xent_1_rowwise.comp",
    "backward2": "dense_backward_1_relu.comp",
    "backward1": "gather_backward_1_u8.comp",
    "update": "update_1_sgd.comp",
}
UPDATE = {"SGD": "update_1_sgd.comp", "Momentum": "update_2_momentum.comp", "Adam": "update_3_adam.comp"}
STORAGE_BARRIER = moderngl.SHADER_STORAGE_BARRIER_BIT  # shader writes -> shader reads: all a step needs
ALIGN = 64  # floats: each parameter's range starts on a 256-byte boundary, so it can be bound alone


class GPUTrainer(Trainer):
    """Training of the K-H-C MLP in six dispatches a step (module docstring); the API is mlp.Trainer's.

    defines: {shader file: {NAME: value}} to tune the step's shaders. eval_batch: images per dispatch
    when evaluating (the A1 and logits buffers for evaluation hold that many rows).
    """

    BINDINGS = BINDINGS
    dispatches_per_step = len(STEP)

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, defines: dict | None = None, eval_batch: int = 10_000):
        super().__init__(ctx, params, images, labels, optimizer=optimizer, batch_size=batch_size, seed=seed,
                         check_every=check_every, align=ALIGN)
        self.eval_batch = int(eval_batch)
        files = dict(STEP, update=UPDATE[self.kind])
        defines = {name: dict(values) for name, values in (defines or {}).items()}
        # the forward's shared copy of its images holds exactly ceil(K/4) words
        defines.setdefault("gather_forward_1_u8.comp", {}).setdefault("MAX_WORDS", self.words)
        self.defines = defines
        self.kernels = {role: gl.Kernel(ctx, name, defines.get(name)) for role, name in files.items()}

        grads = gl.upload(ctx, np.zeros(self.n_params, np.float32), "grads")  # gaps stay 0
        self.arrays["grads"] = grads
        for name, (first, size) in self.layout.items():
            self.arrays["g" + name] = grads.view(first, self.shapes[name], "g" + name)
        B, H, C = self.batch_size, self.H, self.C
        for name, shape in (("A1", (B, H)), ("logits", (B, C)), ("dlogits", (B, C)), ("dZ1", (B, H)),
                            ("losses", (B,))):
            self.arrays[name] = gl.empty(ctx, shape, name=name)  # NaN until a kernel writes it
        if self.n:
            self.arrays["stats"] = gl.empty(ctx, (self.steps_per_epoch, 2), name="stats (loss sum, correct)")

        k = self.kernels  # the sizes that never change
        k["forward1"].set(K=self.K, N=H)
        k["forward2"].set(K=H, N=C)
        k["xent"].set(C=C)
        k["backward2"].set(K=H, N=C)
        k["backward1"].set(K=self.K, N=H)
        k["update"].set(n=self.n_params)
        self.set_hyperparameters()
        # the uniforms that change from step to step, looked up once
        self._u_start = [k[role].program["start"] for role in ("forward1", "xent", "backward1")]
        self._u_slot = k["xent"].program["slot"]
        self.B, self.plan = None, []

    def set_hyperparameters(self) -> None:
        """The optimizer's hyperparameters into the update shader's uniforms (float32, as NumPy's)."""
        self.kernels["update"].set(**self.hyperparameters())

    def groups(self, B: int) -> dict:
        """Work groups of each dispatch for a batch of B samples: Kernel.groups, from each shader's banner."""
        sizes = {"forward1": dict(B=B, K=self.K, N=self.H), "forward2": dict(B=B, K=self.H, N=self.C),
                 "xent": dict(B=B, C=self.C), "backward2": dict(B=B, K=self.H, N=self.C),
                 "backward1": dict(B=B, K=self.K, N=self.H), "update": dict(n=self.n_params)}
        return {role: self.kernels[role].groups(**sizes[role]) for role in self.kernels}

    def set_batch(self, B: int) -> None:
        """Set the B uniforms and the group counts of every dispatch for batches of B samples."""
        for kernel in self.kernels.values():
            if "B" in kernel.program:
                kernel.set(B=B)
        groups = self.groups(B)
        self.plan = [(kernel.program, groups[role]) for role, kernel in self.kernels.items()]
        self.B = B

    def step(self, s: int) -> None:
        """Queue training step s of the current epoch (start_epoch bound the buffers): six dispatches,
        each followed by a barrier because the next one reads what it wrote. Nothing is read back."""
        start, B = self.batch(s)
        if B != self.B:
            self.set_batch(B)                  # the first step, or the last batch's leftover samples
        for uniform in self._u_start:
            uniform.value = start              # where the batch starts in the order buffer
        self._u_slot.value = s                 # where the loss sum and correct count go in `stats`
        if self.kind == "Adam":
            self.kernels["update"].set(**self.next_bias_corrections())
        for program, groups in self.plan:
            program.run(*groups)
            self.ctx.memory_barrier(STORAGE_BARRIER)
        self._counts["steps"] += 1

    def dispatches(self, s: int = 0) -> list:
        """[(Kernel, groups)] of step s, in order (the measuring code times them one by one)."""
        groups = self.groups(self.batch(s)[1])
        return [(kernel, groups[role]) for role, kernel in self.kernels.items()]

    def loss_run(self, first: int, end: int) -> tuple:
        """Where the losses of steps [first, end) of the current epoch are: ("stats", first element, count),
        two floats a step (the loss sum, the correct count)."""
        return "stats", 2 * first, 2 * (end - first)

    def step_losses(self, values: np.ndarray, first: int, end: int) -> np.ndarray:
        """loss_run's values as the loss sum of each step (float64)."""
        return values.reshape(-1, 2)[:, 0].astype(np.float64)

    def read_grads(self) -> dict:
        """The gradients of the last step (as W1, b1, W2, b2), read back from the GPU."""
        flat = self.read("grads")
        return {name: flat[first:first + size].reshape(self.shapes[name]).copy()
                for name, (first, size) in self.layout.items()}

    # --- evaluation on the GPU: the two forward shaders over a resident set, in chunks --------
    def logits(self, name: str = "test") -> np.ndarray:
        """Logits (n, C) of evaluation set `name` computed on the GPU."""
        images, labels = self.eval_set(name)
        n, chunk = len(labels), min(self.eval_batch, len(labels))
        if "A1 (eval)" not in self.arrays or self.arrays["A1 (eval)"].shape[0] < chunk:
            for key in ("A1 (eval)", "logits (eval)", "identity"):
                if key in self.arrays:
                    self.arrays.pop(key).release()
            self.arrays["A1 (eval)"] = gl.empty(self.ctx, (chunk, self.H), name="A1 (eval)")
            self.arrays["logits (eval)"] = gl.empty(self.ctx, (chunk, self.C), name="logits (eval)")
        if "identity" not in self.arrays or self.arrays["identity"].size < n:
            if "identity" in self.arrays:
                self.arrays.pop("identity").release()
            self.arrays["identity"] = gl.upload(self.ctx, np.arange(max(n, self.n), dtype=np.uint32), "identity")
        self.bind()
        b, a = BINDINGS, self.arrays
        images.bind_to(b["images"])
        a["identity"].bind_to(b["order"])
        a["A1 (eval)"].bind_to(b["A1"])
        a["logits (eval)"].bind_to(b["logits"])
        f1, f2 = self.kernels["forward1"], self.kernels["forward2"]
        out = np.empty((n, self.C), np.float32)
        for start in range(0, n, chunk):
            B = min(chunk, n - start)
            f1.run(*f1.groups(B=B, K=self.K, N=self.H), B=B, start=start, barrier=False)
            self.ctx.memory_barrier(STORAGE_BARRIER)
            f2.run(*f2.groups(B=B, K=self.H, N=self.C), B=B, barrier=False)
            out[start:start + B] = a["logits (eval)"].read(first=0, count=B * self.C).reshape(B, self.C)
        self.B = None  # the B uniforms now hold an evaluation chunk: the next step sets them again
        self.bind()
        return out

    def predict(self, name: str = "test") -> np.ndarray:
        """Predicted classes of evaluation set `name`, or of uint8 images given instead (mlp.Trainer.eval_set):
        argmax of the GPU's logits, on the CPU."""
        return self.logits(name).argmax(axis=1)

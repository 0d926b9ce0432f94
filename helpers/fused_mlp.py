"""The fused GPU trainer: one training step of 784-H-10 in two dispatches. Introduced in notebook 05.

The sibling of notebook 04's GPUTrainer (helpers/gpu_mlp.py): the same API (mlp.Trainer), the same data
on the GPU, two dispatches a step instead of six. Two is the fewest the math allows: every sample's dZ1
needs all of W2 and that sample's whole hidden row, and every weight gradient needs dZ1 of the whole
batch, so a step needs one grid-wide synchronisation point in the middle and one at its end.

    fused_forward_1_xent.comp     gather the batch from the uint8 images, layer 1 + bias + ReLU, layer 2,
                                  softmax cross-entropy (one loss per sample), dlogits, dZ1
    fused_backward_1_update.comp  every gradient, summed by the thread that owns the weight, which then
                                  updates it in place (SGD, momentum or Adam: the OPTIMIZER define)

Per step the CPU sets one uniform (the step number; with Adam also the bias corrections) and issues two
dispatches and two barriers. params is one flat float32 buffer [W1 | b1 | W2 | b2], packed tightly, so
the optimizer state has the same layout and one thread index names one parameter everywhere. Every sum
runs in a fixed order (no atomics): the same seed gives bitwise-identical weights.
"""

from __future__ import annotations

import moderngl
import numpy as np

from . import gl, reference
from .mlp import Trainer

N_OUT = 10
FORWARD, BACKWARD, PREDICT = "fused_forward_1_xent.comp", "fused_backward_1_update.comp", "fused_predict_1_argmax.comp"
# Binding points shared by the fused shaders (see their banners); 10 and 11 are fused_predict_1's.
BINDINGS = {"images": 0, "labels": 1, "order": 2, "params": 3, "m": 4, "v": 5,
            "A1": 6, "dZ1": 7, "dlogits": 8, "losses": 9}
OPTIMIZER_DEFINE = {"SGD": 0, "Momentum": 1, "Adam": 2}
SHARED_BYTES = 32 * 1024  # GL_MAX_COMPUTE_SHARED_MEMORY_SIZE guaranteed by OpenGL 4.3 (NVIDIA has 48 KiB)
STORAGE_BARRIER = moderngl.SHADER_STORAGE_BARRIER_BIT


def shared_bytes(S: int, n_in: int, n_hidden: int, JT: int, KS: int) -> int:
    """Shared memory fused_forward_1 / fused_predict_1 need: 4 * S * (MAX_IN + KS*4*JT + MAX_H + 10) bytes."""
    return 4 * S * (n_in + KS * 4 * JT + n_hidden + N_OUT)


class FusedMLP(Trainer):
    """784-H-10 training in two dispatches and two barriers a step (module docstring); the API is
    mlp.Trainer's. forward_defines / backward_defines override the shaders' tunables (S, JT, KS /
    TJ, TKT, KPT, BC, BSPLIT)."""

    BINDINGS = BINDINGS
    dispatches_per_step = 2

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, forward_defines: dict | None = None,
                 backward_defines: dict | None = None):
        super().__init__(ctx, params, images, labels, optimizer=optimizer, batch_size=batch_size, seed=seed,
                         check_every=check_every)
        if self.C != N_OUT or self.K % 4:
            raise ValueError(f"the fused shaders train n_in-H-{N_OUT} nets with n_in a multiple of 4; "
                             f"got W1 {self.shapes['W1']}, W2 {self.shapes['W2']}")
        self.forward_defines = self._forward_defines(forward_defines)
        self.backward_defines = dict(backward_defines or {}, OPTIMIZER=OPTIMIZER_DEFINE[self.kind])
        self.forward = gl.Kernel(ctx, FORWARD, self.forward_defines)
        self.backward = gl.Kernel(ctx, BACKWARD, self.backward_defines)
        self.predictor = gl.Kernel(ctx, PREDICT, self.forward_defines)
        self.kernels = {"forward": self.forward, "backward": self.backward, "predict": self.predictor}
        self.S = self.forward.define("S")

        B, H = self.batch_size, self.H
        for name, shape in (("A1", (B, H)), ("dZ1", (B, H)), ("dlogits", (B, N_OUT)), ("losses", (max(self.n, 1),))):
            self.arrays[name] = gl.empty(ctx, shape, name=name)  # NaN until a kernel writes it
        self.arrays["unused"] = gl.GPUArray(ctx, (1,), name="unused optimizer state")  # SGD has none
        sizes = dict(n_in=self.K, n_hidden=H, n_samples=self.n, batch_size=B, step=0)
        self.forward.set(**sizes)
        self.backward.set(**sizes)
        self.set_hyperparameters()
        self._u_step = (self.forward.program["step"], self.backward.program["step"])
        self.plan = [(self.forward.groups(**dict(sizes, step=s)), self.backward.groups(**dict(sizes, step=s)))
                     for s in range(self.steps_per_epoch if self.n else 0)]

    def _forward_defines(self, overrides: dict | None) -> dict:
        defines = dict(MAX_IN=self.K, MAX_H=self.H, VEC4=int(self.H % 4 == 0))
        defines.update(overrides or {})
        if "S" not in defines:  # 2 samples per work group for small layers, 1 for wide ones (H100 sweep),
            source = gl.shader_source(FORWARD)  # if the portable shared memory allows
            JT, KS = (int(defines.get(d, gl.define(source, d))) for d in ("JT", "KS"))
            fits = [S for S in ((2, 1) if self.H <= 256 else (1,)) if shared_bytes(S, self.K, self.H, JT, KS) <= SHARED_BYTES]
            if not fits:
                raise ValueError(f"hidden size {self.H} needs more shared memory than OpenGL guarantees "
                                 f"({SHARED_BYTES} bytes) even at one sample per work group: lower KS or JT")
            defines["S"] = fits[0]
        return defines

    def set_hyperparameters(self) -> None:
        """The optimizer's hyperparameters into fused_backward_1's uniforms (float32, as NumPy's)."""
        self.backward.set(**self.hyperparameters())

    def bind(self) -> None:
        """The shared binding points; an optimizer without state gets a one-element stand-in at 4 and 5."""
        super().bind()
        for name in ("m", "v"):
            if name not in self.arrays:
                self.arrays["unused"].bind_to(BINDINGS[name])

    def step(self, s: int) -> None:
        """Queue training step s of the current epoch (start_epoch bound the buffers): two dispatches,
        each followed by a barrier (fused_backward_1 reads A1, dZ1, dlogits; the next step reads the
        updated weights). Nothing is read back."""
        forward_groups, backward_groups = self.plan[s]
        self._u_step[0].value = s
        self.forward.program.run(*forward_groups)
        self.ctx.memory_barrier(STORAGE_BARRIER)
        self._u_step[1].value = s
        if self.kind == "Adam":
            self.backward.set(**self.next_bias_corrections())
        self.backward.program.run(*backward_groups)
        self.ctx.memory_barrier(STORAGE_BARRIER)
        self._counts["steps"] += 1

    def dispatches(self, s: int = 0) -> list:
        """[(Kernel, groups)] of step s, in order (the measuring code times them one by one)."""
        return [(self.forward, self.plan[s][0]), (self.backward, self.plan[s][1])]

    def loss_sums(self, first: int, end: int) -> np.ndarray:
        """The loss sum of each of steps [first, end) of the current epoch (float64), from the per-sample
        losses fused_forward_1 wrote."""
        lo, hi = first * self.batch_size, min(self.n, end * self.batch_size)
        losses = self.read("losses", lo, hi - lo).astype(np.float64)
        return np.add.reduceat(losses, np.arange(0, hi - lo, self.batch_size))

    def predict(self, name: str = "test") -> np.ndarray:
        """Predicted classes of evaluation set `name`: fused_predict_1, one dispatch, argmax on the GPU."""
        images, labels = self.eval_set(name)
        count = len(labels)
        if "predictions" not in self.arrays or self.arrays["predictions"].size < count:
            if "predictions" in self.arrays:
                self.arrays.pop("predictions").release()
            self.arrays["predictions"] = gl.empty(self.ctx, (count,), np.uint32, name="predictions")
        p = self.predictor
        p.bind({3: self.arrays["params"], 10: images, 11: self.arrays["predictions"]})
        p.run(*p.groups(n_in=self.K, n_hidden=self.H, count=count), n_in=self.K, n_hidden=self.H, count=count)
        return self.read("predictions", 0, count).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# NumPy counterparts, for the checks in tests/test_fused.py and notebook 05
# ---------------------------------------------------------------------------------------------

def reference_outputs(params: dict, X: np.ndarray, y: np.ndarray) -> dict:
    """What fused_forward_1 writes for the batch (X float in [0, 1], y labels): A1, dZ1, dlogits, per-sample losses."""
    logits, (_, Z1, A1) = reference.forward(params, X)
    shifted = logits - logits.max(axis=1, keepdims=True)
    losses = np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(len(y)), y]
    _, dlogits = reference.softmax_xent(logits, y)
    return {"A1": A1, "dZ1": (dlogits @ params["W2"].T) * (Z1 > 0), "dlogits": dlogits, "losses": losses}

"""The fast GPU trainer: a training step of 784-H-10 spread over many work groups, with no per-step uniform.
Introduced in notebook 06.

The sibling of notebook 05's FusedMLP (helpers/fused_mlp.py): the same API (mlp.Trainer), the same data on
the GPU, the same two grid-wide synchronisation points a step, but each phase cut into many small tiles so
that every SM of a large GPU has work, one shader file for both phases (glsl/train_step_1_tiled.comp):

    PHASE 1  tiles of Z1 = X·W1 + b1 over (BT samples × HT hidden units), split-K inside a work group and
             reduced across lanes (subgroup shuffles where the driver has them); writes A1 and one partial
             sum of the logits per HT-wide slice of the hidden units
    PHASE 2  every work group finishes the logits, softmax and dlogits of the whole batch (cheap), then
             takes tiles of dW1 = Xᵀ·dZ1 (and b1, W2, b2) and updates those weights in place

The step number lives on the GPU (a two-word counter the kernels advance), so a step is four calls and no
uniform write: run, barrier, run, barrier (`step`). With `persistent=True` a third program (PHASE 0) runs
many steps in one dispatch, crossing a grid-wide barrier built on atomics after each phase; that is only
valid while all its work groups are resident at once, so the trainer first probes it (PHASE 3), and a
barrier that waits too long sets a flag and stops instead of hanging: the next loss check says so.

Every sum runs in a fixed order and no two threads add into one address: the same seed gives the same
bits, and the persistent and the two-dispatch modes give the same bits as each other. SGD and momentum
(Adam's bias corrections would need a per-step uniform or float32 powers on the GPU: use FusedMLP).
"""

from __future__ import annotations

import moderngl
import numpy as np

from . import gl
from .mlp import Trainer

N_OUT = 10
SHADER, PREDICT = "train_step_1_tiled.comp", "fused_predict_1_argmax.comp"
BINDINGS = {"images": 0, "labels": 1, "order": 2, "params": 3, "m": 4, "A1": 6, "parts": 7,
            "dlogits": 8, "losses": 9, "W2s": 10, "counter": 11, "sync": 12}
OPTIMIZER_DEFINE = {"SGD": 0, "Momentum": 1}
STORAGE_BARRIER = moderngl.SHADER_STORAGE_BARRIER_BIT
SHARED_BYTES = 32 * 1024       # GL_MAX_COMPUTE_SHARED_MEMORY_SIZE guaranteed by OpenGL 4.3 (NVIDIA: 48 KiB)
H100_SMS = 132                 # NVIDIA H100 SXM5: 132 SMs (NVIDIA H100 Tensor Core GPU datasheet)


def sm_count(ctx) -> int | None:
    """Streaming multiprocessors of the GPU, read on the device through GL_NV_shader_sm_builtins
    (gl_SMCountNV); None where the driver lacks that extension (every non-NVIDIA driver, llvmpipe)."""
    if "GL_NV_shader_sm_builtins" not in ctx.extensions:
        return None
    program = ctx.compute_shader("#version 430\n#extension GL_NV_shader_sm_builtins : require\n"
                                 "layout(local_size_x = 1) in;\n"
                                 "layout(std430, binding = 0) writeonly buffer Out { uint n[]; };\n"
                                 "void main() { n[0] = gl_SMCountNV; }\n")
    out = gl.empty(ctx, (1,), np.uint32, name="SM count")
    out.bind_to(0)
    program.run(1, 1, 1)
    count = int(out.read()[0])
    program.release()
    out.release()
    return count


def shared_bytes(defines: dict) -> int:
    """Shared memory of train_step_1_tiled with these (complete) defines, as its Tunables line gives it."""
    d = defines
    ht = 4 * d["THREADS"] // d["KS"]
    phase1 = max(d["BT"] * d["MAX_IN"], 2 * d["BT"] * d["THREADS"]) + d["BT"] * ht
    return 4 * max(phase1, d["MAX_B"] * N_OUT + d["BC"] * (d["TK"] + d["TJ"]))


class FastMLP(Trainer):
    """784-H-10 training with many work groups a phase and no per-step uniform (module docstring); the
    API is mlp.Trainer's. defines: train_step_1_tiled's tunables (THREADS, KS, BT, TJ, TK, BC, GROUPS,
    SUBGROUP, SPIN_LIMIT); without GROUPS each dispatch gets one work group per tile (tiles()). persistent: also run each chunk of steps between loss checks as one dispatch
    (PHASE 0), after a residency probe; groups: the work groups of that dispatch (default: the GPU's SM
    count where the driver tells it, else GROUPS)."""

    BINDINGS = BINDINGS
    dispatches_per_step = 2

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, defines: dict | None = None, persistent: bool = False,
                 persistent_groups: int | None = None):
        super().__init__(ctx, params, images, labels, optimizer=optimizer, batch_size=batch_size, seed=seed,
                         check_every=check_every)
        if self.kind not in OPTIMIZER_DEFINE:
            raise TypeError(f"FastMLP trains with SGD or Momentum, not {self.kind} (FusedMLP has Adam)")
        if self.C != N_OUT or self.K % 4:
            raise ValueError(f"train_step_1_tiled trains n_in-H-{N_OUT} nets with n_in a multiple of 4; "
                             f"got W1 {self.shapes['W1']}, W2 {self.shapes['W2']}")
        source = gl.shader_source(SHADER)
        self.defines = {name: int(gl.define(source, name)) for name in
                        ("THREADS", "KS", "BT", "TJ", "TK", "BC", "GROUPS", "SUBGROUP", "SPIN_LIMIT")}
        self.defines.update(defines or {})
        self.defines.update(MAX_IN=self.K, MAX_B=self.batch_size, OPTIMIZER=OPTIMIZER_DEFINE[self.kind])
        if shared_bytes(self.defines) > SHARED_BYTES and gl.is_software(ctx):
            raise ValueError(f"these tunables need {shared_bytes(self.defines)} bytes of shared memory; "
                             f"OpenGL guarantees {SHARED_BYTES}: lower BT, BC or the batch size")
        user = defines or {}
        tiles = self.tiles()
        self.forward = gl.Kernel(ctx, SHADER, dict(self.defines, PHASE=1, GROUPS=user.get("GROUPS", tiles[0])))
        self.backward = gl.Kernel(ctx, SHADER, dict(self.defines, PHASE=2, GROUPS=user.get("GROUPS", tiles[1])))
        self.forward.name, self.backward.name = f"{SHADER} PHASE 1", f"{SHADER} PHASE 2"   # one file, two programs
        self.kernels = {"forward": self.forward, "backward": self.backward}
        self.predictor = gl.Kernel(ctx, PREDICT, dict(MAX_IN=self.K, MAX_H=self.H, S=1, VEC4=int(self.H % 4 == 0)))
        self.kernels["predict"] = self.predictor
        self.subgroups = "GL_KHR_shader_subgroup" in ctx.extensions and bool(self.defines["SUBGROUP"])

        B, H = self.batch_size, self.H
        slices = -(-H * self.defines["KS"] // (4 * self.defines["THREADS"]))
        for name, shape in (("A1", (B, H)), ("parts", (slices, B, N_OUT)), ("dlogits", (B, N_OUT)),
                            ("losses", (max(self.n, 1),)), ("W2s", (H, N_OUT))):
            self.arrays[name] = gl.empty(ctx, shape, name=name)   # NaN until a kernel writes it
        self.arrays["counter"] = gl.upload(ctx, np.zeros(2, np.uint32), "step counter")
        self.arrays["sync"] = gl.upload(ctx, np.zeros(4, np.uint32), "grid barrier")
        self._zeros = gl.upload(ctx, np.zeros(4, np.uint32), "zeros")   # copied on the GPU, never mapped
        if "m" not in self.arrays:
            self.arrays["unused"] = gl.GPUArray(ctx, (1,), name="unused optimizer state")   # SGD has none
        self.sizes = dict(n_in=self.K, n_hidden=H, n_samples=max(self.n, 1), batch_size=B)
        for kernel in (self.forward, self.backward):
            kernel.set(**self.sizes)
        self.groups = (self.forward.groups(**self.sizes), self.backward.groups(**self.sizes))
        self.set_hyperparameters()
        self._counts["dispatches"] = 0

        self.persistent = None   # the PHASE 0 kernel, once the probe has passed
        self.persistent_note = "not asked for"
        if persistent and self.n:
            self._setup_persistent(persistent_groups)

    # --- setup --------------------------------------------------------------------------------
    def tiles(self) -> tuple[int, int]:
        """Tiles of a full batch in phase 1 (BT samples × HT hidden units) and phase 2 (TK × TJ of W1, plus
        one row of b1/W2/b2 tiles): the work groups each dispatch gets unless GROUPS is given."""
        d = self.defines
        ht = 4 * d["THREADS"] // d["KS"]
        return (-(-self.H // ht) * -(-self.batch_size // d["BT"]),
                (-(-self.K // d["TK"]) + 1) * -(-self.H // d["TJ"]))


    def _setup_persistent(self, groups: int | None) -> None:
        sms = sm_count(self.ctx)
        groups = groups or sms or self.defines["GROUPS"]   # one work group per SM: resident together
        defines = dict(self.defines, GROUPS=groups)
        probe = gl.Kernel(self.ctx, SHADER, dict(defines, PHASE=3))
        probe.set(n_steps=64)
        self._reset_sync()
        self.arrays["sync"].bind_to(BINDINGS["sync"])
        probe.program.run(groups, 1, 1)
        self.ctx.memory_barrier()
        timed_out = bool(self.read("sync")[2])
        probe.program.release()
        if timed_out:
            self._reset_sync()
            self.persistent_note = (f"probe failed: {groups} work groups were not all resident at once "
                                    "(a grid barrier timed out); two dispatches a step instead")
            return
        self.persistent = gl.Kernel(self.ctx, SHADER, dict(defines, PHASE=0))
        self.persistent.set(**self.sizes)
        self.persistent_groups = groups
        self.kernels["persistent"] = self.persistent
        self.persistent_note = (f"{groups} work groups" + (f" (the GPU's {sms} SMs)" if sms == groups else "")
                                + " in one dispatch per chunk of steps")
        self.set_hyperparameters()

    def _reset_sync(self) -> None:
        self.ctx.memory_barrier()
        self.ctx.copy_buffer(self.arrays["sync"].buffer, self._zeros.buffer, size=16)

    def set_hyperparameters(self) -> None:
        """The optimizer's hyperparameters into the update phase's uniforms (float32, as NumPy's)."""
        for kernel in (self.backward, getattr(self, "persistent", None)):
            if kernel is not None:
                kernel.set(**self.hyperparameters())

    def bind(self) -> None:
        """The binding points; SGD gets a one-element stand-in at 4."""
        super().bind()
        if "m" not in self.arrays:
            self.arrays["unused"].bind_to(BINDINGS["m"])

    def start_epoch(self, epoch: int, order=None) -> None:
        """The epoch's order (mlp.Trainer), then the GPU's step counter back to 0 (a copy on the GPU)."""
        super().start_epoch(epoch, order)
        self.ctx.copy_buffer(self.arrays["counter"].buffer, self._zeros.buffer, size=8)

    # --- training -----------------------------------------------------------------------------
    def step(self, s: int | None = None) -> None:
        """Queue the next training step of the epoch: the GPU's counter says which (start_epoch set it to
        0; s, the caller's count, is not sent). Two dispatches, each followed by a barrier; no uniform."""
        self.forward.program.run(*self.groups[0])
        self.ctx.memory_barrier(STORAGE_BARRIER)   # phase 2 reads A1, parts, W2s
        self.backward.program.run(*self.groups[1])
        self.ctx.memory_barrier(STORAGE_BARRIER)   # the next step reads the updated weights
        self._counts["steps"] += 1
        self._counts["dispatches"] += 2

    def run_steps(self, first: int, end: int) -> None:
        """Steps [first, end) of the epoch: one persistent dispatch where the probe passed, else step()."""
        if self.persistent is None:
            return super().run_steps(first, end)
        self.persistent.set(first_step=first, n_steps=end - first)
        self.persistent.program.run(self.persistent_groups, 1, 1)
        self.ctx.memory_barrier(STORAGE_BARRIER)
        self._counts["steps"] += end - first
        self._counts["dispatches"] += 1

    def dispatches(self, s: int = 0) -> list:
        """[(Kernel, groups)] of a step, in order (the measuring code times them one by one)."""
        return [(self.forward, self.groups[0]), (self.backward, self.groups[1])]

    def loss_sums(self, first: int, end: int) -> np.ndarray:
        """The loss sum of each of steps [first, end) of the current epoch (float64). NaN losses after a
        persistent dispatch mean a grid barrier timed out: that raises, naming the cause."""
        lo, hi = first * self.batch_size, min(self.n, end * self.batch_size)
        losses = self.read("losses", lo, hi - lo).astype(np.float64)
        if self.persistent is not None and np.isnan(losses).any():
            flags = int(self.read("sync")[2])
            if flags & 1:
                raise RuntimeError("a grid barrier of the persistent kernel timed out (its work groups were not all "
                                   "resident at once): these steps are incomplete. Use FastMLP(..., persistent=False).")
            if flags & 2:
                raise RuntimeError("the persistent kernel's step loop ended early (llvmpipe stops a loop after 65535 "
                                   "iterations): these steps are incomplete. Use fewer steps a dispatch (check_every) "
                                   "or FastMLP(..., persistent=False).")
        return np.add.reduceat(losses, np.arange(0, hi - lo, self.batch_size))

    # --- counting -----------------------------------------------------------------------------
    @property
    def counts(self) -> dict:
        """Steps, dispatches (2 a step, or 1 per persistent chunk), barriers (one per dispatch), readbacks."""
        c = self._counts
        return {"steps": c["steps"], "dispatches": c["dispatches"], "barriers": c["dispatches"],
                "readbacks": c["readbacks"]}

    def reset_counts(self) -> None:
        self._counts = {"steps": 0, "readbacks": 0, "dispatches": 0}

    # --- evaluation ---------------------------------------------------------------------------
    def predict(self, name: str = "test") -> np.ndarray:
        """Predicted classes of evaluation set `name`: fused_predict_1_argmax, one dispatch, argmax on the GPU."""
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

    def release(self) -> None:
        self._zeros.release()
        super().release()

"""The fused GPU trainer: one training step of 784-H-10 in two dispatches. Introduced in notebook 06.

The sibling of notebook 05's GPUTrainer (helpers/gpu_mlp.py): the same API (mlp.Trainer), the same data
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

Notebook 07 adds regularisation, chosen by two options and off by default (then nothing above changes):

    FusedMLP(..., dropout=(keep_in, keep_hidden), max_norm=c)

    fused_forward_2_dropout.comp   fused_forward_1 with inverted dropout on the pixels and the hidden units,
                                   the masks hashed from (seed, step since training began, layer, row, unit)
    fused_backward_2_dropout.comp  fused_backward_1 re-gathering X with the same input mask, recomputed
    maxnorm_1_columns.comp         a third dispatch after the update: each column of W1 (a hidden unit's
                                   incoming weights) rescaled to norm c where it is longer

The masks need no buffer and no upload: each shader computes the bits it needs (helpers/rng.py is the
NumPy twin, bit for bit). train(..., mu_schedule=f) sets momentum per epoch, as lr_schedule sets lr.

Wide nets can spend a third dispatch to read W1 fewer times:

    FusedMLP(..., tiled_hidden=True)

    fused_hidden_1_tiled.comp  A1 = relu(X·W1 + b1) for the whole batch as a tiled matrix product: a work
                               group owns RB samples x TN hidden units, so RB samples share each W1 tile
                               it reads (fused_forward_1 reads all of W1 in every work group)
    fused_head_1_xent.comp     from A1: logits, softmax cross-entropy, dlogits, dZ1 (fused_forward_1's rest)

then fused_backward_1_update as before: three dispatches and three barriers a step, the same buffers.

Register blocking (the appendix measures it in the step) gives each thread a 4x4 block of outputs, so
each value it reads from shared memory serves four multiply-adds (the same dispatch count):

    FusedMLP(..., blocked=True)

    fused_backward_3_blocked.comp  fused_backward_1 with a 4x4 block of [W1; b1] a thread (b1 is the row
                                   that X's column of ones meets), W2 and b2 summed from shared memory
    fused_hidden_2_blocked.comp    with tiled_hidden: fused_hidden_1 with 4 samples x 4 units a thread,
                                   W1 staged in shared memory too; for wide nets its inputs split among
                                   KSPLIT work groups (split-K), whose partial sums fused_head_1_xent adds
                                   into A1 (one more buffer, "parts": KSPLIT x batch x H floats)

Given neither blocked nor tiled_hidden, the trainer picks its fastest layout for the net (default_layout):
blocked for every width, and tiled_hidden too above WIDE_FROM hidden units: in the committed benchmark
(notebooks/results/bench-<card>.json, python -m helpers.report prints it) these are the fastest epochs of the
layouts at 784-128-10 and 784-800-10. Given either, it runs exactly what it was given (the other off).
With dropout or split_hidden, which have no blocked or tiled version, both are off.

Notebook 06 teaches the plain pair, so it asks for it: FusedMLP(..., blocked=False).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import moderngl
import numpy as np

from . import gl, reference, rng, timing
from .mlp import Trainer

N_OUT = 10
FORWARD, BACKWARD, PREDICT = "fused_forward_1_xent.comp", "fused_backward_1_update.comp", "fused_predict_1_argmax.comp"
FORWARD_DROPOUT, BACKWARD_DROPOUT, MAXNORM = ("fused_forward_2_dropout.comp", "fused_backward_2_dropout.comp",
                                              "maxnorm_1_columns.comp")
FORWARD_SPLIT = "fused_forward_3_split.comp"
HIDDEN_TILED, HEAD = "fused_hidden_1_tiled.comp", "fused_head_1_xent.comp"
HIDDEN_BLOCKED, BACKWARD_BLOCKED = "fused_hidden_2_blocked.comp", "fused_backward_3_blocked.comp"
# Binding points shared by the fused shaders (see their banners); 10 and 11 are fused_predict_1's,
# 12 and 13 fused_forward_3_split's scratch.
BINDINGS = {"images": 0, "labels": 1, "order": 2, "params": 3, "m": 4, "v": 5,
            "A1": 6, "dZ1": 7, "dlogits": 8, "losses": 9, "parts": 12, "counters": 13}
OPTIMIZER_DEFINE = {"SGD": 0, "Momentum": 1, "Adam": 2}
# Tunables by hidden size over the shaders' own #defines, most of them an H100 sweep's choice (python -m
# helpers.bench.sweep; the committed sweep is notebooks/results/fused-sweep-<card>.json); overrides win, and
# the dropout shaders keep their own defaults (notebook 07's runs). fused_backward_3_blocked keeps its
# defaults for the small net, within 0.4 µs of the H200 sweep's best. The wide row's head (1024 threads a sample)
# and backward (TQ 16, BS 2: 338 groups) are whole-epoch choices on an H200 (python -m helpers.bench.sweep
# epochs): 0.969x and 0.992x the epoch of the head's 256 threads and the backward's defaults, each alone, in one
# run of 2026-11-28. The wide row's layer 1 is not in that sweep record:
# its inputs split among KSPLIT = 4 work groups of 128 threads (16 rows x 32 units a tile: 800 groups at batch 128),
# where the sweep's one-piece choice had 512 threads a group and 100 groups; the benchmark record times the
# two (bench.fused.ONE_PIECE), so the comparison changes the tile as well as the pieces.
TUNED = {"small": {"forward": {}, "backward": dict(BC=128, TJ=16, TKT=16, KPT=1),      # H <= 256
                   "hidden": dict(RB=4, TQ=16, KS=16), "head": dict(S=1, LOCAL=256),
                   "hidden_blocked": dict(RQ=4, TQ=4, BK=8, KS=16), "backward_blocked": {}},
         "wide": {"forward": dict(KS=32), "backward": dict(BC=32, TJ=32, TKT=8, KPT=4),   # H > 256
                  "hidden": dict(RB=4, TQ=32, KS=8), "head": dict(S=1, LOCAL=1024),
                  "hidden_blocked": dict(RQ=4, TQ=8, BK=8, KS=4, KSPLIT=4),
                  "backward_blocked": dict(TQ=16, KQ=8, BS=2, BC=16)}}
SHARED_BYTES = 32 * 1024  # GL_MAX_COMPUTE_SHARED_MEMORY_SIZE guaranteed by OpenGL 4.3 (NVIDIA has 48 KiB)
STORAGE_BARRIER = moderngl.SHADER_STORAGE_BARRIER_BIT
WIDE_FROM = 256  # hidden widths above this are "wide": TUNED's row, and tiled_hidden in the default layout


def default_layout(n_hidden: int, dropout: bool = False, split_hidden: bool = False) -> dict:
    """The layout FusedMLP runs when given neither `blocked` nor `tiled_hidden`: its fastest for the net.
    Register blocking for every width; the three-dispatch step (tiled_hidden) only above WIDE_FROM hidden
    units, where every work group of fused_forward_1 reading all of W1 costs more than a dispatch. Dropout
    and split_hidden have neither version, so both are off with them."""
    if dropout or split_hidden:
        return dict(blocked=False, tiled_hidden=False)
    return dict(blocked=True, tiled_hidden=n_hidden > WIDE_FROM)


def shared_bytes(S: int, n_in: int, n_hidden: int, JT: int, KS: int, dropout: bool = False) -> int:
    """Shared memory fused_forward_1 / fused_predict_1 need: 4 * S * (MAX_IN + KS*4*JT + MAX_H + 10) bytes;
    fused_forward_2_dropout 8 * S more (two mask keys a sample)."""
    return 4 * S * (n_in + KS * 4 * JT + n_hidden + N_OUT + (2 if dropout else 0))


def step_buffers(ctx, batch_size: int, n_hidden: int, n_samples: int,
                 handed=("A1", "dZ1", "dlogits")) -> dict:
    """What a step hands from its per-sample half to its per-weight half, NaN until a kernel writes it: A1,
    dZ1, dlogits of the batch (those of them named in `handed`), a loss per sample of the epoch; and "unused",
    the one-element stand-in bound where the shaders declare optimizer state the optimizer lacks (SGD has
    none; Trainer.bind)."""
    B, H = batch_size, n_hidden
    shapes = {"A1": (B, H), "dZ1": (B, H), "dlogits": (B, N_OUT), "losses": (max(n_samples, 1),)}
    arrays = {name: gl.empty(ctx, shapes[name], name=name) for name in (*handed, "losses")}
    arrays["unused"] = gl.GPUArray(ctx, (1,), name="unused optimizer state")
    return arrays


class FusedMLP(Trainer):
    """784-H-10 training in two dispatches and two barriers a step, three with tiled_hidden (module docstring);
    the API is mlp.Trainer's. forward_defines / backward_defines override the shaders' tunables (S, JT, KS /
    TJ, TKT, KPT, BC, BSPLIT). Given neither blocked nor tiled_hidden, default_layout(H) picks them.
    dropout=(keep_in, keep_hidden) trains with inverted dropout (the version-2
    pair of shaders); max_norm=c adds the max-norm dispatch after every update (notebook 07).
    tiled_hidden=True runs the forward half as two dispatches (fused_hidden_1_tiled, then fused_head_1_xent:
    self.forward and self.head), tuned by hidden_defines (RB, TQ, KS) and head_defines (S, LOCAL);
    forward_defines then tune fused_predict_1 only. It has no dropout or split_hidden version.
    blocked=True swaps in the register-blocked shaders (module docstring): the backward always, layer 1 with
    tiled_hidden; backward_defines and hidden_defines then tune those (TQ, KQ, BS, BC / TQ, RQ, BK, KS)."""

    BINDINGS = BINDINGS
    dispatches_per_step = 2

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, forward_defines: dict | None = None,
                 backward_defines: dict | None = None, dropout: tuple | None = None, max_norm: float | None = None,
                 split_hidden: bool = False, tiled_hidden: bool | None = None, hidden_defines: dict | None = None,
                 head_defines: dict | None = None, blocked: bool | None = None):
        super().__init__(ctx, params, images, labels, optimizer=optimizer, batch_size=batch_size, seed=seed,
                         check_every=check_every)
        self.dropout = None if dropout is None else tuple(float(k) for k in dropout)
        if self.dropout is not None and (len(self.dropout) != 2 or not all(0 < k <= 1 for k in self.dropout)):
            raise ValueError(f"dropout=(keep_in, keep_hidden), each a keep probability in (0, 1]; got {dropout}")
        self.max_norm = None if max_norm is None else float(max_norm)
        if self.max_norm is not None and not self.max_norm > 0:
            raise ValueError(f"max_norm must be a positive norm, got {max_norm}")
        if blocked is None and tiled_hidden is None:  # neither given: the fastest layout for this net
            layout = default_layout(self.H, self.dropout is not None, bool(split_hidden))
            blocked, tiled_hidden = layout["blocked"], layout["tiled_hidden"]
        self.tiled_hidden = bool(tiled_hidden)
        self.dispatches_per_step = 2 + self.tiled_hidden + (self.max_norm is not None)
        if self.C != N_OUT or self.K % 4:
            raise ValueError(f"the fused shaders train n_in-H-{N_OUT} nets with n_in a multiple of 4; "
                             f"got W1 {self.shapes['W1']}, W2 {self.shapes['W2']}")
        dropping, self.split_hidden = self.dropout is not None, bool(split_hidden)
        if dropping and self.split_hidden:
            raise ValueError("split_hidden has no dropout version: use one or the other")
        if self.tiled_hidden and dropping:
            raise ValueError("tiled_hidden has no dropout version (fused_forward_2_dropout is one dispatch): "
                             "use dropout or tiled_hidden, not both")
        if self.tiled_hidden and self.split_hidden:
            raise ValueError("tiled_hidden and split_hidden are two ways to split the forward pass: "
                             "use one or the other")
        self.blocked = bool(blocked)
        if self.blocked and (dropping or self.split_hidden):
            raise ValueError("blocked has no dropout or split_hidden version: use blocked alone or with tiled_hidden")
        if not self.tiled_hidden and (hidden_defines or head_defines):
            raise ValueError("hidden_defines and head_defines tune the tiled_hidden shaders: pass tiled_hidden=True")
        self.tuned = TUNED["small" if self.H <= WIDE_FROM else "wide"]  # the tuned row for this hidden size
        predict_defines = self._forward_defines(None if self.split_hidden else forward_defines)
        self.forward_defines = (dict(MAX_IN=self.K, VEC4=int(self.H % 4 == 0), **(forward_defines or {}))
                                if self.split_hidden else predict_defines)
        tuned = {} if dropping else self.tuned["backward_blocked" if self.blocked else "backward"]
        vec4 = dict(VEC4=int(self.H % 4 == 0)) if self.blocked else {}
        self.backward_defines = dict(tuned, **vec4, **(backward_defines or {}), OPTIMIZER=OPTIMIZER_DEFINE[self.kind])
        forward = FORWARD_SPLIT if self.split_hidden else FORWARD_DROPOUT if dropping else FORWARD
        self.head = None  # tiled_hidden: self.forward is layer 1 alone, self.head the rest of the forward half
        if self.tiled_hidden and self.blocked:
            forward = HIDDEN_BLOCKED
            self.forward_defines = dict(self.tuned["hidden_blocked"], VEC4=int(self.H % 4 == 0),
                                        **(hidden_defines or {}))
        elif self.tiled_hidden:
            forward = HIDDEN_TILED
            self.forward_defines = dict(self.tuned["hidden"], MAX_IN=self.K, VEC4=int(self.H % 4 == 0),
                                        **(hidden_defines or {}))
        if self.tiled_hidden:  # the head adds layer 1's pieces of the inputs (KSPLIT > 1: blocked only)
            ksplit = self.forward_defines.get("KSPLIT", 1)
            if "KSPLIT" in (head_defines or {}):
                raise ValueError("the head's KSPLIT is layer 1's: set it in hidden_defines")
            if ksplit > 1 and not self.blocked:
                raise ValueError("KSPLIT > 1 splits fused_hidden_2_blocked's inputs, which fused_hidden_1_tiled "
                                 "cannot do: pass blocked=True with it, or leave KSPLIT out")
            self.head_defines = dict(self.tuned["head"], **(head_defines or {}), KSPLIT=ksplit,
                                     **(dict(MAX_H=self.H) if ksplit > 1 else {}))
            self.head = gl.Kernel(ctx, HEAD, self.head_defines)
        self.forward = gl.Kernel(ctx, forward, self.forward_defines)
        backward = BACKWARD_BLOCKED if self.blocked else BACKWARD_DROPOUT if dropping else BACKWARD
        self.backward = gl.Kernel(ctx, backward, self.backward_defines)
        self.predictor = gl.Kernel(ctx, PREDICT, predict_defines)  # no dropout at test time
        self.kernels = {"forward": self.forward, **({"head": self.head} if self.head is not None else {}),
                        "backward": self.backward, "predict": self.predictor}
        self.maxnorm = None
        if self.max_norm is not None:
            self.maxnorm = self.kernels["maxnorm"] = gl.Kernel(ctx, MAXNORM)
            self.maxnorm.set(n_in=self.K, n_hidden=self.H, max_norm=self.max_norm)
            self._maxnorm_groups = self.maxnorm.groups(n_hidden=self.H)
        self.S = (self.head if self.tiled_hidden else self.forward).define("SB" if self.split_hidden else "S")

        B, H = self.batch_size, self.H
        self.arrays.update(step_buffers(ctx, B, H, self.n))
        if self.split_hidden:  # the split forward's scratch: partial logits, and counters that start at zero
            slices, blocks = -(-H // (4 * self.forward.define("HQ"))), -(-B // self.S)
            self.arrays["parts"] = gl.empty(ctx, (slices, B, N_OUT), name="parts")
            self.arrays["counters"] = gl.empty(ctx, (blocks,), np.uint32, name="counters", fill=0)
        if self.head is not None and self.head_defines["KSPLIT"] > 1:  # layer 1's partial sums, a piece each
            self.arrays["parts"] = gl.empty(ctx, (self.head_defines["KSPLIT"], B, H), name="parts")
        sizes = dict(n_in=self.K, n_hidden=H, n_samples=self.n, batch_size=B, step=0)
        for kernel in self.passes():
            kernel.set(**sizes)
        self.set_hyperparameters()
        self._u_step = (self.forward.program["step"], self.backward.program["step"])
        self._u_step_head = self.head.program["step"] if self.head is not None else None
        self._u_rng_step = ()
        if dropping:
            keep_in, keep_hidden = (float(np.float32(k)) for k in self.dropout)
            self.forward.set(seed=self.seed & 0xFFFFFFFF, rng_step=0, keep_in=keep_in, keep_hidden=keep_hidden)
            self.backward.set(seed=self.seed & 0xFFFFFFFF, rng_step=0, keep_in=keep_in)
            self._u_rng_step = (self.forward.program["rng_step"], self.backward.program["rng_step"])
        self.plan = [tuple(kernel.groups(**dict(sizes, step=s)) for kernel in self.passes())
                     for s in range(self.steps_per_epoch if self.n else 0)]

    def passes(self) -> list:
        """The kernels of a step before max-norm, in order: forward, (head,) backward."""
        return [self.forward] + ([self.head] if self.head is not None else []) + [self.backward]

    def _forward_defines(self, overrides: dict | None) -> dict:
        defines = dict(MAX_IN=self.K, MAX_H=self.H, VEC4=int(self.H % 4 == 0))
        if self.dropout is None:
            defines.update(self.tuned["forward"])
        defines.update(overrides or {})
        if "S" not in defines:  # 2 samples per work group for small layers, 1 for wide ones (H100 sweep),
            source = gl.shader_source(FORWARD)  # if the portable shared memory allows
            JT, KS = (int(defines.get(d, gl.define(source, d))) for d in ("JT", "KS"))
            fits = [S for S in ((2, 1) if self.H <= 256 else (1,))
                    if shared_bytes(S, self.K, self.H, JT, KS, self.dropout is not None) <= SHARED_BYTES]
            if not fits:
                raise ValueError(f"hidden size {self.H} needs more shared memory than OpenGL guarantees "
                                 f"({SHARED_BYTES} bytes) even at one sample per work group: lower KS or JT")
            defines["S"] = fits[0]
        return defines

    def set_hyperparameters(self) -> None:
        """The optimizer's hyperparameters into fused_backward_1's uniforms (float32, as NumPy's)."""
        self.backward.set(**self.hyperparameters())

    def rng_step(self, s: int) -> int:
        """The dropout masks' step counter for step s of the current epoch: steps since training began
        (epoch * steps_per_epoch + s), so every step of a run gets its own masks, and a run is reproducible."""
        return (self.epoch or 0) * self.steps_per_epoch + s

    def masks(self, s: int, rows: int | None = None) -> tuple:
        """(input_mask (rows, K), hidden_mask (rows, H)) the shaders apply at step s of the current epoch
        (rng.dropout_mask, the NumPy twin), for the reference's step; None without dropout."""
        if self.dropout is None:
            return None
        rows = self.batch(s)[1] if rows is None else rows
        t = self.rng_step(s)
        return (rng.dropout_mask(self.seed, t, rows, self.K, self.dropout[0], rng.INPUT),
                rng.dropout_mask(self.seed, t, rows, self.H, self.dropout[1], rng.HIDDEN))

    @property
    def mu(self) -> float:
        return self.optimizer.mu

    @mu.setter
    def mu(self, value: float) -> None:
        """A new momentum from the next step on (momentum optimizer only; a schedule sets it between epochs)."""
        if self.kind != "Momentum":
            raise TypeError(f"only the Momentum optimizer has a momentum; this trainer runs {self.kind}")
        self.optimizer.mu = float(value)
        self.set_hyperparameters()

    def train(self, epochs: int, *, mu_schedule=None, lr_schedule=None, **kwargs) -> dict:
        """mlp.Trainer.train, and mu_schedule(epoch) -> momentum applied before each epoch (with lr_schedule's
        learning rate): uniforms set from the CPU between epochs; nothing is read back for them."""
        if mu_schedule is None:
            return super().train(epochs, lr_schedule=lr_schedule, **kwargs)

        def both(epoch):
            self.mu = mu_schedule(epoch)   # the setter: Momentum only, and the uniforms follow
            return lr_schedule(epoch) if lr_schedule is not None else self.lr
        return super().train(epochs, lr_schedule=both, **kwargs)

    def step(self, s: int) -> None:
        """Queue training step s of the current epoch (start_epoch bound the buffers): two dispatches,
        each followed by a barrier (fused_backward_1 reads A1, dZ1, dlogits; the next step reads the
        updated weights); with tiled_hidden the head's between them (it reads what layer 1 wrote);
        with max_norm one more, after the update. Nothing is read back."""
        groups = self.plan[s]
        self._u_step[0].value = s
        if self._u_rng_step:
            t = self.rng_step(s)
            self._u_rng_step[0].value = t
            self._u_rng_step[1].value = t
        self.forward.program.run(*groups[0])
        self.ctx.memory_barrier(STORAGE_BARRIER)
        if self.head is not None:  # tiled_hidden: the rest of the forward half, from A1 (or its pieces)
            self._u_step_head.value = s
            self.head.program.run(*groups[1])
            self.ctx.memory_barrier(STORAGE_BARRIER)
        self._u_step[1].value = s
        if self.kind == "Adam":
            self.backward.set(**self.next_bias_corrections())
        self.backward.program.run(*groups[-1])
        self.ctx.memory_barrier(STORAGE_BARRIER)
        if self.maxnorm is not None:  # the column norms need the whole updated W1: a dispatch of its own
            self.maxnorm.program.run(*self._maxnorm_groups)
            self.ctx.memory_barrier(STORAGE_BARRIER)
        self._counts["steps"] += 1

    def dispatches(self, s: int = 0) -> list:
        """[(Kernel, groups)] of step s, in order (the measuring code times them one by one)."""
        out = list(zip(self.passes(), self.plan[s]))
        return out + ([(self.maxnorm, self._maxnorm_groups)] if self.maxnorm is not None else [])

    def loss_run(self, first: int, end: int) -> tuple:
        """Where the losses of steps [first, end) of the current epoch are: ("losses", first element, count),
        one loss a sample, written by fused_forward_1."""
        lo, hi = first * self.batch_size, min(self.n, end * self.batch_size)
        return "losses", lo, hi - lo

    def step_losses(self, values: np.ndarray, first: int, end: int) -> np.ndarray:
        """loss_run's values (a loss a sample) as the loss sum of each step (float64)."""
        return np.add.reduceat(values.astype(np.float64), np.arange(0, len(values), self.batch_size))

    def predict(self, name: str = "test") -> np.ndarray:
        """Predicted classes of evaluation set `name`, or of uint8 images given instead (mlp.Trainer.eval_set):
        fused_predict_1, one dispatch, argmax on the GPU."""
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
# NumPy counterparts, for the checks in tests/test_fused.py and notebook 06
# ---------------------------------------------------------------------------------------------

def reference_outputs(params: dict, X: np.ndarray, y: np.ndarray, masks=None) -> dict:
    """What fused_forward_1 writes for the batch (X float in [0, 1], y labels): A1, dZ1, dlogits, per-sample
    losses; with masks (input_mask, hidden_mask), what fused_forward_2_dropout writes."""
    logits, (_, Z1, A1) = reference.forward(params, X, masks)
    shifted = logits - logits.max(axis=1, keepdims=True)
    losses = np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(len(y)), y]
    _, dlogits = reference.softmax_xent(logits, y)
    dA1 = dlogits @ params["W2"].T
    if masks is not None:
        dA1 = dA1 * masks[1]
    return {"A1": A1, "dZ1": dA1 * (Z1 > 0), "dlogits": dlogits, "losses": losses}


# ---------------------------------------------------------------------------------------------
# Notebook 06's findings as sentences (tests/test_verdicts_nb0607.py checks both sides of each threshold)
# ---------------------------------------------------------------------------------------------

FUSED_ROW = "fused 784-128-10 SGD"  # benches.fused: the two-dispatch epoch every notebook quotes (PyTorch eager's
                                   # row is helpers.bench.train.EAGER_ROW, in the same section)


LAYOUT_MARGIN = 0.15   # two layouts' epochs are called different only beyond 15 %, wider than timing.MARGIN:
                       # a whole epoch's wall clock holds Python's pace, which the CPU's other work can slow


def kernel_share(name: str, share: float, low: float | None = None, high: float | None = None) -> str:
    """'name: kernels 62 % (62–63 %) of the epoch', from share = kernel time / epoch time, and its band
    low..high (the share at the epoch's 80th and 20th percentiles; default: the share alone). Figures only:
    an epoch's wall clock holds Python's pace, which its kernels do not, so the share moves with whatever slows
    Python: a word such as "mostly" could flip between runs. share_shift() compares two shares."""
    low, high = share if low is None else low, share if high is None else high
    if not 0 <= low <= share <= high <= 1:
        raise ValueError(f"a share of the epoch is between 0 and 1, with low <= share <= high; got {low}, {share}, {high}")
    return f"{name}: kernels {share_band_text(share, low, high)} of the epoch"


def share_band_text(share: float, low: float, high: float) -> str:
    """'62 % (62–63 %)': a share and its band in whole percents, with a space before '%' as the notebook's
    accuracies have it; the share alone where the band rounds to the share's own figure ('70 %', not
    '70 % (70–70 %)'). Whole percents, unlike Timing.text's extra digits: the reader can rebuild a share from
    the figures printed beside it (three significant digits each), and a decimal more would not survive that."""
    mid, lo, hi = (f"{100 * x:.0f}" for x in (share, low, high))
    return f"{mid} %" if lo == hi == mid else f"{mid} % ({lo}–{hi} %)"


SHARE_ROSE, SHARE_FELL, SHARE_LEVEL = "kernel share rose", "kernel share fell", "kernel share level"


def share_shift(before: tuple, after: tuple, names: tuple = ("notebook 05's epoch", "the fused epoch"),
                rounds: timing.Timing | None = None) -> timing.Verdict:
    """How fusion moved the kernels' share of an epoch, from two (share, low, high) of kernel_share. Without
    `rounds`: it rose only when the whole band after lies above the whole band before, fell only the other
    way round; otherwise the two are level. With `rounds` (bench.fused.share_rounds: the share after over the
    share before in each round of two epochs taken in turn), judged round by round, so a disturbance that
    slows both epochs in some rounds (it widens both bands) moves neither side: it rose when the rounds' whole
    20–80 % band lies above 1 and the printed share after is above the printed share before, fell the other
    way round, level otherwise. Outcome SHARE_ROSE, SHARE_FELL or SHARE_LEVEL.
    The share is W / (W + F), W the kernels' own work and F the rest of the epoch (fixed costs and waiting),
    so it rises exactly when F / W falls: when F changed by a smaller factor than W (fell by a larger
    fraction), whichever way each moved. The words say that, in relative terms, and nothing about which
    fell by more microseconds (fusion_segments says that)."""
    text = lambda s: share_band_text(*s)                                             # noqa: E731
    both = f"from {text(before)} of {names[0]} to {text(after)} of {names[1]}"
    shown = lambda s: round(100 * s[0])                                              # noqa: E731  (as printed)
    if rounds is None:
        rose, fell, how = after[1] > before[2], after[2] < before[1], ""
        level_why = "the bands overlap"
    else:
        how = f", the share after over the share before {timing.rounds_text(rounds)}"
        rose, fell = rounds.low > 1 and shown(after) > shown(before), rounds.high < 1 and shown(after) < shown(before)
        level_why = f"the share after over the share before {timing.rounds_text(rounds)}"
    if rose:
        return timing.Verdict(f"Fusion raised the kernels' share of the epoch {both}{how}: relative to the "
                              "kernels' own work, the fixed costs and waiting shrank (they fell by a larger "
                              "fraction, or grew by a smaller one)", SHARE_ROSE)
    if fell:
        return timing.Verdict(f"Fusion lowered the kernels' share of the epoch {both}{how}: relative to the fixed "
                              "costs and waiting, the kernels' own work shrank (it fell by a larger fraction, or "
                              "grew by a smaller one)", SHARE_FELL)
    return timing.Verdict(f"Fusion left the kernels' share of the epoch level, {both} ({level_why}): the "
                          "kernels' own work and the fixed costs and waiting kept about the same proportion",
                          SHARE_LEVEL)


KERNEL_FELL_MORE, FIXED_FELL_MORE, BOTH_ALIKE, NEITHER_FELL = ("kernels fell more", "the fixed cost fell more",
                                                               "both fell alike", "neither fell")


def fusion_segments(kernel_unfused: float, step_unfused: float, kernel_fused: float, step_fused: float,
                    dispatches: tuple, empty, margin: float = 0.2, decimals: int = 1,
                    clock: str = timing.GPU_QUERY) -> timing.Verdict:
    """What fusion took off a step, from notebook 06's table (seconds a step), judged only on figures timed one
    dispatch at a time by `clock` (timer queries on a GPU), which hold still from one run to the next:
      the kernels: each dispatch timed alone with its barrier, added up (each one's fixed cost included);
      the dispatches' fixed cost: dispatches = (a step's dispatches before, after) times `empty`, one empty
        dispatch with its barrier (seconds, or its timing.Timing, whose median is taken), printed to three
        significant digits as the fixed-cost count beside it prints it (profile.fixed_cost); each product is
        printed exactly.
    The kernels print to `decimals` places of a µs (2 where the table prints them added up to 0.01 µs,
    profile.added_up), and each drop is the difference of its two printed figures, which the outcome is
    judged on too, so the words never contradict the figures. Two drops closer than `margin` of the larger
    are alike. Outcome KERNEL_FELL_MORE (beyond the fixed cost removed, the kernels' own work fell too),
    FIXED_FELL_MORE (the kernels fell by less than the fixed cost removed: their own work grew), BOTH_ALIKE,
    or NEITHER_FELL where neither got smaller.
    The rest of a step (its epoch's time a step, wall clock, minus the kernels as printed) is printed as this
    run's figures and not judged: it follows Python's pace of issue and the GPU's clock between dispatches,
    which move from one run to the next (15.36, 43.36 and 2.45 µs before fusion in three runs of one code)."""
    empty_us = timing._g(1e6 * float(getattr(empty, "median", empty)), 3)      # the empty dispatch, µs, as printed
    fine = max(decimals, timing.figure_decimals(empty_us))                      # places its products print exactly
    per_us = 10 ** decimals                                               # printed units in a µs
    units = lambda s: round(1e6 * per_us * s)                             # noqa: E731  (10^-decimals µs units)
    us = lambda t, d=decimals: f"{Decimal(t).scaleb(-d):.{d}f} µs"        # noqa: E731
    kernel_u, kernel_f = units(kernel_unfused), units(kernel_fused)
    rest_u, rest_f = (units(max(step - kernels / per_us * 1e-6, 0.0)) for step, kernels in   # the step less the kernels as printed
                      ((step_unfused, kernel_u), (step_fused, kernel_f)))
    one = int((Decimal(empty_us) * 10 ** fine).quantize(Decimal(1), ROUND_HALF_UP))   # 10^-fine µs units
    fixed_u, fixed_f = dispatches[0] * one, dispatches[1] * one
    drop = {"kernel": kernel_u - kernel_f, "fixed": fixed_u - fixed_f, "rest": rest_u - rest_f}
    way = lambda d, p=decimals: f"down {us(d, p)}" if d > 0 else f"up {us(-d, p)}" if d < 0 else "unchanged"  # noqa: E731
    text = (f"Fusion took the kernels of a step (each dispatch timed alone by {clock}, its barrier and fixed cost "
            f"included) from {us(kernel_u)} to {us(kernel_f)} ({way(drop['kernel'])}), and the fixed cost of its "
            f"dispatches (an empty dispatch with its barrier, timed the same way) from {dispatches[0]} × {empty_us} µs "
            f"= {us(fixed_u, fine)} to {dispatches[1]} × {empty_us} µs = {us(fixed_f, fine)} "
            f"({way(drop['fixed'], fine)})")
    rest = (f". The rest of a step (its epoch's time a step by wall clock, minus the kernels: launches, barriers, "
            f"waiting) went from {us(rest_u)} to {us(rest_f)} ({way(drop['rest'])}) in this run; it follows "
            "Python's pace of issue and the GPU's clock between dispatches, which move from one run to the next, "
            "so it is not judged")
    kernel, fixed = drop["kernel"] * 10 ** (fine - decimals), drop["fixed"]    # both in 10^-fine µs units
    if kernel <= 0 and fixed <= 0:
        return timing.Verdict(text + ": neither fell here" + rest, NEITHER_FELL)
    if abs(kernel - fixed) < Decimal(str(margin)) * max(abs(kernel), abs(fixed)):   # exact, as printed
        return timing.Verdict(text + ": the kernels' time fell by about the fixed cost removed, so the dispatches "
                              "fusion removed account for about all of it" + rest, BOTH_ALIKE)
    if kernel > fixed:
        return timing.Verdict(text + ": the kernels' time fell more than the fixed cost, so beyond the dispatches "
                              "fusion removed, the kernels' own work got shorter too" + rest, KERNEL_FELL_MORE)
    return timing.Verdict(text + ": the fixed cost fell more than the kernels' time, so the fused kernels' own "
                          "work (each kernel less its fixed cost) took longer than the work it replaced" + rest,
                          FIXED_FELL_MORE)


def loop_epochs(loops: dict, backs: dict) -> str:
    """A sentence, not a verdict, on training-loop epochs: {trainer: Timing of its loop's epochs} and
    {trainer: Timing of its back-to-back epochs}. Each trainer's loop epochs as their median, the fastest and
    the slowest of them (not the 20-80 % band: the extremes are what a loop's clock changes show), and the
    median's ratio to the back-to-back median. A loop's epochs carry the GPU's clock changes in the
    pauses between them, and how far the GPU clocks down differs from run to run (in one run an epoch after
    a pause runs at full speed, in the next at a third of it), so they are not compared with each other or
    with back-to-back ones: a comparison would come out differently on a second run."""
    ms = lambda s: f"{timing._g(1e3 * s, 3)} ms"                             # noqa: E731  (no exponent)

    def part(name, loop):
        ratio = timing.times(timing.seconds_exactly(*ms(loop.median).split()) / timing.shown_exactly(backs[name]))
        if len(loop.samples) == 1:
            return f"{name}'s one loop epoch took {ms(loop.median)} ({ratio}× its back-to-back median)"
        if ms(min(loop.samples)) == ms(max(loop.samples)):
            return f"{name}'s loop epochs took {ms(loop.median)} each ({ratio}× its back-to-back median)"
        return (f"{name}'s loop epochs took {ms(loop.median)} at the median (fastest {ms(min(loop.samples))}, "
                f"slowest {ms(max(loop.samples))}; the median {ratio}× its back-to-back median)")
    parts = [part(name, loop) for name, loop in loops.items()]
    text = ", and ".join(parts)
    return (f"{text[0].upper()}{text[1:]}: a loop's epochs include what the pauses between them do to the GPU's "
            "clock, which differs from run to run, so only back-to-back epochs compare the trainers")


def fastest_loop_epoch(loop: timing.Timing, back: timing.Timing, margin: float = 0.15) -> str:
    """The sentence loop_slowdown adds about the loop's fastest epoch when most of them were slower: its time and
    its ratio to the back-to-back median, 'took less than four in five back-to-back epochs' where it lies below
    their 20th percentile (one epoch set against their distribution, not against their median), 'about as fast as
    back-to-back ones' where it lies within `margin` above their 80th percentile (timing.typical_above),
    nothing ("") where it took longer."""
    quickest = min(loop.samples)
    if timing.typical_above(timing.Timing((quickest,)), back, margin):
        return ""
    figure = timing._g(1e3 * quickest, 3)                               # no exponent, even past 1,000 ms
    head = f"Its fastest epoch, {figure} ms, "
    ratio = timing.seconds_exactly(figure, "ms") / timing.shown_exactly(back)   # of the figures as printed
    if quickest < back.low:
        return head + f"took less than four in five back-to-back epochs, at {timing.times(ratio)}× their median"
    return head + (f"was about as fast as back-to-back ones, at {timing.times(ratio)}× their median "
                   f"(within the {100 * margin:.3g} % we call the same)")


def loop_slowdown(loop: timing.Timing, back: timing.Timing, drawing: float | None = None,
                  margin: float = 0.15) -> timing.Verdict:
    """A training loop's epochs (evaluation left out) against back-to-back epochs of the same trainer, with
    drawing, the seconds an epoch the loop spent drawing its progress bar and plot at the checks, counted in
    the epoch's time (None: the loop drew neither).
    The loop's epochs have two modes (a few at full speed, most slowed by the pauses between epochs), so its
    band can reach down to back-to-back epochs while most of its epochs are slower. Slower when a typical loop
    epoch (the median) takes longer than four in five back-to-back ones by more than `margin`
    (timing.typical_above); outcome timing.SAME or "slower in the loop"."""
    ratio = timing.times(timing.ratio(loop, back))
    pause = (f"the loop drew a progress bar and a live plot at every check ({1e3 * drawing:.1f} ms an epoch, "
             "counted in the epoch's time, while the GPU ran the steps queued before each check but the "
             "epoch's last)" if drawing is not None else
             "the loop drew nothing during its epochs, and the GPU waited only for the evaluation between them")
    if timing.typical_above(loop, back, margin):
        fastest = fastest_loop_epoch(loop, back, margin)
        return timing.Verdict(
            f"At the median, the training loop's epochs ({loop.text()}) took {ratio}× as long as back-to-back "
            f"ones ({back.text()}): {pause}; notebook 05 measures what such pauses do to the GPU's clock"
            + (f". {fastest}" if fastest else ""), "slower in the loop")
    return timing.Verdict(f"The training loop's epochs ({loop.text()}) took about as long as back-to-back ones "
                          f"({back.text()}), {ratio}× at the median; the two are "
                          f"{timing.not_above(loop, back, margin)}: {pause}", timing.SAME)


def bench_row(rows: list[dict], name: str) -> dict:
    """The benchmark row called `name` (rows: the fused section of a benchmark JSON)."""
    for row in rows:
        if row["name"] == name:
            return row
    raise KeyError(f"no row {name!r} in the benchmark rows ({len(rows)} rows): run python -m helpers.bench fused")


def against_pytorch(rows: list[dict], card: str) -> timing.Verdict:
    """The fused epoch against the fastest PyTorch row of the same benchmark run (rows with 'ms', and their
    20-80 % band where stored): timing.versus of the two, led by where the figures come from ('On the <card>,
    in the committed benchmark, the fused epoch (…) is …'), as they are not this run's. Where another of
    PyTorch's ways is one compare() cannot tell from the quickest, the quickest is named by its way, not as
    PyTorch's fastest, and nothing more is said of the tie: the sentence on the graphs
    (bench.fused.graphs_compared), printed next, judges the two graphs and says why."""
    fused = bench_row(rows, FUSED_ROW)
    torch = {r["name"]: timing.Timing.from_row(r) for r in rows if r["name"].startswith("PyTorch") and "ms" in r}
    best, ties = timing.lowest(torch)
    def way(name):
        return name.replace("PyTorch ", "").replace(" 784-128-10 SGD", "")
    v = timing.versus(timing.Timing.from_row(fused), torch[best], "the fused epoch",
                      f"PyTorch's {way(best)}" if ties else f"PyTorch's fastest way, {way(best)}")
    return timing.Verdict(f"On the {card}, in the committed benchmark, {v}", v.outcome)

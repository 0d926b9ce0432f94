"""The fused GPU trainer: one training step of 784-H-10 in two dispatches. Introduced in notebook 05.

    trainer = FusedMLP(ctx, reference.init_params(seed=0), images, labels,   # uint8 (N, 28, 28), (N,)
                       optimizer=reference.SGD(0.3), batch_size=128, seed=0)
    trainer.add_eval_set("test", test_images, test_labels)
    history = trainer.train(epochs=10)           # like reference.train: loss, train_acc, test_acc, seconds
    params = trainer.read_params()               # {W1, b1, W2, b2} as NumPy arrays

One step is two dispatches and two memory barriers, the fewest the math allows: every sample's dZ1 needs
all of W2 and that sample's whole hidden row, and every weight gradient needs dZ1 of the whole batch,
so there must be one grid-wide synchronisation point in the middle of a step and one at its end.

    fused_forward_1_xent.comp    gather the batch from the uint8 images, layer 1 + bias + ReLU, layer 2,
                                 softmax cross-entropy (one loss per sample), dlogits, dZ1
    fused_backward_1_update.comp every gradient, summed by the thread that owns the weight, which then
                                 updates it in place (SGD, momentum or Adam: the OPTIMIZER define)

Everything stays on the GPU: the training images as four uint8 pixels per uint32 word (data.pack_u8),
the labels, the epoch's sample order (an index buffer, reference.epoch_order), parameters and optimizer
state. Per step the CPU sets one uniform (the step number; with Adam also the bias corrections) and
issues two dispatches and two barriers; it reads the per-sample losses every `check_every` steps, and
raises reference.TrainingDiverged if one is not finite.

The global binding layout, bound once per epoch and shared by both shaders:

    0 images  1 labels  2 order  3 params  4 state_m  5 state_v  6 A1  7 dZ1  8 dlogits  9 losses
    10 evaluation images, 11 predictions (fused_predict_1_argmax.comp, between epochs)

params is one flat float32 buffer [W1 | b1 | W2 | b2] (flatten / unflatten), so the optimizer state has
the same layout and one thread index names one parameter everywhere.

Deterministic: every sum runs in a fixed order (no atomics), so the same seed on the same machine gives
bitwise-identical weights.
"""

from __future__ import annotations

import time

import moderngl
import numpy as np

from . import data, gl, reference
from .gpu_mlp import check_labels, measure_step, pack_images, param_layout, param_shapes, split_epoch
from .gpu_mlp import flatten as _flatten
from .gpu_mlp import unflatten as _unflatten

N_OUT = 10
FORWARD, BACKWARD, PREDICT = "fused_forward_1_xent.comp", "fused_backward_1_update.comp", "fused_predict_1_argmax.comp"
DISPATCHES_PER_STEP = 2
BARRIERS_PER_STEP = 2
OPTIMIZERS = {"SGD": 0, "Momentum": 1, "Adam": 2}
SHARED_BYTES = 32 * 1024  # GL_MAX_COMPUTE_SHARED_MEMORY_SIZE guaranteed by OpenGL 4.3 (NVIDIA has 48 KiB)
FORWARD_DEFAULTS = {"JT": 32, "KS": 16}
BACKWARD_DEFAULTS = {"TJ": 32, "TKT": 8, "KPT": 2, "BC": 32, "BSPLIT": 8}
_SSBO_BARRIER = moderngl.SHADER_STORAGE_BARRIER_BIT


def flatten(params: dict) -> np.ndarray:
    """[W1 | b1 | W2 | b2] as one float32 vector: the layout of the params buffer (gpu_mlp.param_layout,
    packed tightly)."""
    K, H = np.shape(params["W1"])
    shapes = param_shapes(K, H, np.shape(params["W2"])[1])
    return _flatten(params, *param_layout(shapes, align=1))


def unflatten(flat: np.ndarray, n_in: int, n_hidden: int, n_out: int = N_OUT) -> dict:
    """The inverse of flatten: {W1 (n_in, H), b1 (H,), W2 (H, n_out), b2 (n_out,)} (copies)."""
    shapes = param_shapes(n_in, n_hidden, n_out)
    layout, total = param_layout(shapes, align=1)
    if total != len(flat):
        raise ValueError(f"flat parameters hold {len(flat)} values; {n_in}-{n_hidden}-{n_out} needs {total}")
    return _unflatten(flat, layout, shapes)


def shared_bytes(S: int, n_in: int, n_hidden: int, JT: int = 32, KS: int = 16) -> int:
    """Shared memory fused_forward_1 / fused_predict_1 need: S * (MAX_IN + KS*4*JT + MAX_H + 10) floats."""
    return 4 * S * (n_in + KS * 4 * JT + n_hidden + N_OUT)


class FusedMLP:
    """784-H-10 training on the GPU, two dispatches and two barriers per step (see the module docstring).

    optimizer: a reference.SGD / Momentum / Adam object: its hyperparameters are read, its state lives
    on the GPU. `lr` can be changed between epochs (a schedule). `forward_defines` / `backward_defines`
    override the shaders' tunables (S, JT, KS / TJ, TKT, KPT, BC).
    """

    def __init__(self, ctx, params: dict, images, labels, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, forward_defines: dict | None = None,
                 backward_defines: dict | None = None):
        self.ctx, self.seed, self.batch_size = ctx, int(seed), int(batch_size)
        self.check_every = int(check_every)
        self.optimizer = optimizer if optimizer is not None else reference.SGD(0.3)
        kind = type(self.optimizer).__name__
        if kind not in OPTIMIZERS:
            raise TypeError(f"optimizer must be reference.SGD, Momentum or Adam, got {kind}")
        self.kind = kind
        self.n_in, self.n_hidden = params["W1"].shape
        if params["W2"].shape != (self.n_hidden, N_OUT) or self.n_in % 4:
            raise ValueError(f"the fused shaders train n_in-H-{N_OUT} nets with n_in a multiple of 4; "
                             f"got W1 {params['W1'].shape}, W2 {params['W2'].shape}")
        words = pack_images(images, self.n_in)
        labels = check_labels(labels, len(words), N_OUT).astype(np.uint32)
        self.n = len(labels)
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.steps_per_epoch = -(-self.n // self.batch_size)

        # Shaders, with the hidden size baked into the shared-memory arrays.
        self.forward_defines = self._forward_defines(forward_defines)
        self.backward_defines = dict(BACKWARD_DEFAULTS, **(backward_defines or {}), OPTIMIZER=OPTIMIZERS[kind])
        self.forward = gl.Kernel(ctx, FORWARD, self.forward_defines)
        self.backward = gl.Kernel(ctx, BACKWARD, self.backward_defines)
        self.predictor = gl.Kernel(ctx, PREDICT, self.forward_defines)
        self.S = int(self.forward_defines["S"])

        # Buffers: data once, parameters and state, per-step scratch (NaN until written).
        n_params = len(flatten(params))
        state_size = n_params if kind != "SGD" else 1
        B, H = self.batch_size, self.n_hidden
        self.buffers = {
            0: gl.upload(ctx, words, "images"),
            1: gl.upload(ctx, labels, "labels"),
            2: gl.upload(ctx, np.zeros(self.n, np.uint32), "order"),
            3: gl.upload(ctx, flatten(params), "params"),
            4: gl.upload(ctx, np.zeros(state_size, np.float32), "state_m"),
            5: gl.upload(ctx, np.zeros(state_size if kind == "Adam" else 1, np.float32), "state_v"),
            6: gl.upload(ctx, np.full((B, H), np.nan, np.float32), "A1"),      # NaN until written
            7: gl.upload(ctx, np.full((B, H), np.nan, np.float32), "dZ1"),
            8: gl.upload(ctx, np.full((B, N_OUT), np.nan, np.float32), "dlogits"),
            9: gl.upload(ctx, np.full(self.n, np.nan, np.float32), "losses"),
        }
        self._stage = None  # every later CPU access goes through a staging buffer (see download)
        self.forward.bind({k: self.buffers[k] for k in self.forward.buffers})   # checks names and dtypes
        self.backward.bind({k: self.buffers[k] for k in self.backward.buffers})
        sizes = dict(n_in=self.n_in, n_hidden=H, n_samples=self.n, batch_size=B, step=0)
        self.forward.set(**sizes)
        self.backward.set(**sizes)
        self._set_hyperparameters()
        self.t = 0  # optimizer steps taken (Adam's bias correction)
        self.epoch = None
        self.losses = np.full(self.n, np.nan, dtype=np.float32)
        self.eval_sets = {"train": (self.buffers[0], labels.copy())}
        self.predictions = None
        self._counts = {"uniform writes": 0, "readbacks": 0, "steps": 0}
        # The per-step uniforms, looked up once; step numbers pre-packed as bytes.
        self._u_step = (self.forward.program["step"], self.backward.program["step"])
        if kind == "Adam":
            self._u_c1, self._u_c2 = self.backward.program["c1"], self.backward.program["c2"]
        self._step_bytes = [np.uint32(s).tobytes() for s in range(self.steps_per_epoch)]
        self._forward_groups = [gl.groups(min(B, self.n - s * B), self.S) for s in range(self.steps_per_epoch)]
        d = self.backward_defines
        TK, threads = int(d["TKT"]) * int(d["KPT"]), int(d["TJ"]) * int(d["TKT"])
        w1_groups = gl.groups(self.n_in, TK) * gl.groups(H, int(d["TJ"]))
        self._backward_groups = gl.groups(H + H * N_OUT + N_OUT, threads // int(d["BSPLIT"])) + w1_groups

    @property
    def counts(self) -> dict:
        """Steps, uniform writes and readbacks issued; dispatches and barriers follow from the steps
        (DISPATCHES_PER_STEP, BARRIERS_PER_STEP each)."""
        c = dict(self._counts)
        c.update(dispatches=c["steps"] * DISPATCHES_PER_STEP, barriers=c["steps"] * BARRIERS_PER_STEP)
        return c

    def groups(self, step: int = 0) -> list[tuple]:
        """Work groups (x, y, z) of each dispatch of training step `step`: [fused_forward_1, fused_backward_1]."""
        return [(self._forward_groups[step], 1, 1), (self._backward_groups, 1, 1)]

    # ---------------------------------------------------------------------------------------------
    def _forward_defines(self, overrides: dict | None) -> dict:
        defines = dict(FORWARD_DEFAULTS, MAX_IN=self.n_in, MAX_H=self.n_hidden, VEC4=int(self.n_hidden % 4 == 0))
        defines.update(overrides or {})
        if "S" not in defines:  # 2 samples per work group for small layers, 1 for wide ones (H100 sweep),
            fits = [S for S in ((2, 1) if self.n_hidden <= 256 else (1,))  # if the portable shared memory allows
                    if shared_bytes(S, self.n_in, self.n_hidden, defines["JT"], defines["KS"]) <= SHARED_BYTES]
            if not fits:
                raise ValueError(f"hidden size {self.n_hidden} needs more shared memory than OpenGL guarantees "
                                 f"({SHARED_BYTES} bytes) even at one sample per work group: lower KS or JT")
            defines["S"] = fits[0]
        if defines["JT"] * defines["KS"] < defines["S"] * N_OUT:  # the shaders' #error says it too
            raise ValueError(f"fused_forward_1 needs JT*KS >= S*{N_OUT} threads (one per logit); got JT={defines['JT']}, "
                             f"KS={defines['KS']}, S={defines['S']}: raise KS or JT, or lower S")
        return defines

    def _set_hyperparameters(self) -> None:
        opt, f32 = self.optimizer, np.float32
        values = {"lr": f32(opt.lr)}
        if self.kind == "Momentum":
            values["mu"] = f32(opt.mu)
        elif self.kind == "Adam":
            values.update(beta1=f32(opt.beta1), beta2=f32(opt.beta2), eps=f32(opt.eps),
                          one_minus_beta1=f32(1 - opt.beta1), one_minus_beta2=f32(1 - opt.beta2))
        self.backward.set(**{k: float(v) for k, v in values.items()})

    @property
    def lr(self) -> float:
        return self.optimizer.lr

    @lr.setter
    def lr(self, value: float) -> None:
        """A new learning rate from the next step on (a schedule sets it between epochs)."""
        self.optimizer.lr = float(value)
        self.backward.set(lr=float(np.float32(value)))

    def bind(self) -> None:
        """Bind the global layout (binding points are context state: another trainer may have moved them)."""
        for binding, array in self.buffers.items():
            array.buffer.bind_to_storage_buffer(binding)

    def start_epoch(self, epoch: int, order=None) -> None:
        """Upload the epoch's sample order (reference.epoch_order unless given) and bind the layout."""
        self.epoch = int(epoch)
        order = reference.epoch_order(self.n, epoch, self.seed) if order is None else order
        self.upload(2, order)
        self.bind()

    # ---------------------------------------------------------------------------------------------
    def _staging(self, nbytes: int):
        if self._stage is None or self._stage.size < nbytes:
            if self._stage is not None:
                self._stage.release()
            self._stage = self.ctx.buffer(reserve=max(int(nbytes), 4096))
        return self._stage

    def _array(self, which) -> gl.GPUArray:
        return self.buffers[which] if isinstance(which, int) else which

    def download(self, which, offset: int = 0, count: int | None = None) -> np.ndarray:
        """Elements [offset, offset + count) of a trainer buffer (a binding number or a GPUArray), flat.

        The GPU copies them into a staging buffer first and the CPU reads that one, so the buffers the
        shaders use are never mapped by the CPU (ModernGL reads and clears a buffer by mapping it; the
        driver is free to move a mapped buffer to memory the CPU reaches more easily). On the H100, a
        mapped clear of A1, dZ1, dlogits and the losses made fused_backward_1 about 2 µs a step slower afterwards.
        """
        array = self._array(which)
        count = array.size - offset if count is None else int(count)
        out = np.empty(count, dtype=array.dtype)
        if count:
            stage = self._staging(out.nbytes)
            self.ctx.memory_barrier()  # shader writes -> the copy
            self.ctx.copy_buffer(stage, array.buffer, size=out.nbytes, read_offset=offset * array.dtype.itemsize)
            stage.read_into(out, size=out.nbytes)
        return out

    def upload(self, which, values, offset: int = 0) -> None:
        """Write `values` into a trainer buffer at element `offset`, through the staging buffer (see download)."""
        array = self._array(which)
        values = np.ascontiguousarray(values, dtype=array.dtype).reshape(-1)
        if offset + values.size > array.size:
            raise ValueError(f"{array.name} holds {array.size} elements; cannot write {values.size} at {offset}")
        stage = self._staging(values.nbytes)
        self.ctx.memory_barrier()  # shader reads and writes of the buffers (and the stage) -> this write
        stage.write(values)
        self.ctx.copy_buffer(array.buffer, stage, size=values.nbytes, write_offset=offset * array.dtype.itemsize)

    # ---------------------------------------------------------------------------------------------
    def step(self, s: int) -> None:
        """Issue training step s of the current epoch: two dispatches, two barriers, nothing read back."""
        step_bytes = self._step_bytes[s]
        self._u_step[0].write(step_bytes)
        self.forward.program.run(self._forward_groups[s])
        self.ctx.memory_barrier(_SSBO_BARRIER)  # fused_backward_1 reads A1, dZ1, dlogits
        self._u_step[1].write(step_bytes)
        uniform_writes = 2
        if self.kind == "Adam":
            self.t += 1
            opt = self.optimizer
            self._u_c1.write(np.float32(1 - opt.beta1 ** self.t).tobytes())
            self._u_c2.write(np.float32(1 - opt.beta2 ** self.t).tobytes())
            uniform_writes += 2
        self.backward.program.run(self._backward_groups)
        self.ctx.memory_barrier(_SSBO_BARRIER)  # the next step's fused_forward_1 reads the updated weights
        c = self._counts
        c["uniform writes"] += uniform_writes
        c["steps"] += 1

    def read_losses(self, first: int, end: int) -> np.ndarray:
        """Per-sample losses of steps [first, end) of the current epoch (waits for the GPU)."""
        lo, hi = first * self.batch_size, min(self.n, end * self.batch_size)
        self.losses[lo:hi] = self.download(9, lo, hi - lo)
        self._counts["readbacks"] += 1
        return self.losses[lo:hi]

    def check(self, first: int, end: int) -> float:
        """Read the losses of steps [first, end); raise TrainingDiverged at the first non-finite one."""
        losses = self.read_losses(first, end)
        if not np.all(np.isfinite(losses)):
            bad = int(np.argmax(~np.isfinite(losses)))
            step = first + bad // self.batch_size
            lo = (step - first) * self.batch_size
            loss = float(np.mean(losses[lo:lo + self.batch_size]))
            raise reference.TrainingDiverged(reference.diverged_message(self.epoch, step, self.lr, loss))
        return float(np.mean(losses, dtype=np.float64))

    def run_epoch(self, epoch: int, order=None, check_every: int | None = None, on_check=None) -> float:
        """One epoch; the loss is read (and checked) every `check_every` steps. Returns the mean loss."""
        every = check_every or self.check_every
        self.start_epoch(epoch, order)
        first = 0
        for s in range(self.steps_per_epoch):
            self.step(s)
            if (s + 1) % every == 0 or s + 1 == self.steps_per_epoch:
                loss = self.check(first, s + 1)
                if on_check is not None:
                    on_check(s + 1, loss)
                first = s + 1
        return float(np.mean(self.losses, dtype=np.float64))

    def run_forward(self, step: int = 0, epoch: int = 0) -> dict:
        """fused_forward_1 alone on batch `step` of `epoch`, outputs poisoned with NaN first: {A1, dZ1, dlogits, losses}
        for the batch's rows (for checking the shader; training never reads these back)."""
        self.start_epoch(epoch)
        for binding in (6, 7, 8, 9):
            self.upload(binding, np.full(self.buffers[binding].size, np.nan, np.float32))
        self._u_step[0].write(self._step_bytes[step])
        self.forward.program.run(self._forward_groups[step])
        start, count = step * self.batch_size, min(self.batch_size, self.n - step * self.batch_size)
        out = {name: self.download(b).reshape(self.buffers[b].shape)[:count] for name, b in (("A1", 6), ("dZ1", 7), ("dlogits", 8))}
        out["losses"] = self.download(9, start, count)
        return out

    # ---------------------------------------------------------------------------------------------
    def profile_step(self, repeat: int = 30, clock=None, warmup: float | None = None) -> dict:
        """Time one full-size step piece by piece with gpu_mlp.measure_step, exactly as
        GPUTrainer.profile_step does (warm-up, `repeat` dispatches streamed per timer query, the cost of an
        empty dispatch measured alongside); parameters, optimizer state and counts are restored afterwards.
        readback: one loss read of check_every steps."""
        saved = [self.download(b) for b in (3, 4, 5)]
        t_saved, counts_saved = self.t, dict(self._counts)
        self.start_epoch(0)
        for u in self._u_step:
            u.write(self._step_bytes[0])
        if self.kind == "Adam":
            self._u_c1.write(np.float32(0.1).tobytes())
            self._u_c2.write(np.float32(0.001).tobytes())
        (g1, g2) = self.groups(0)
        stages = [(FORWARD, self.forward.program.run, g1), (BACKWARD, self.backward.program.run, g2)]
        reads = min(self.check_every, self.steps_per_epoch)
        order = reference.epoch_order(self.n, 0, self.seed)
        profile = measure_step(self.ctx, stages, lambda: self.step(0), barrier_bits=_SSBO_BARRIER, repeat=repeat,
                               clock=clock, warmup=warmup, read=lambda: self.read_losses(0, reads),
                               upload=lambda: self.upload(2, order))
        for b, array in zip((3, 4, 5), saved):
            self.upload(b, array)
        self.t, self._counts = t_saved, counts_saved
        return {**profile, "readback_steps": reads, "dispatches_per_step": DISPATCHES_PER_STEP,
                "barriers_per_step": BARRIERS_PER_STEP, "batch": min(self.batch_size, self.n)}

    def epoch_phases(self, profile: dict, epoch_seconds: float) -> dict:
        """One epoch split by gpu_mlp.split_epoch (upload, kernel, readback, dispatch), as GPUTrainer does."""
        steps = self.steps_per_epoch
        return split_epoch(profile, steps, epoch_seconds, -(-steps // self.check_every))

    # ---------------------------------------------------------------------------------------------
    def add_eval_set(self, name: str, images, labels) -> None:
        """Keep an evaluation set resident (uint8 images, packed) for accuracy() between epochs."""
        if name == "train":
            raise ValueError("'train' is the resident training set; give the evaluation set another name")
        words = pack_images(images, self.n_in)
        labels = check_labels(labels, len(words), N_OUT)
        if name in self.eval_sets:  # replaced: free the old images
            self.eval_sets.pop(name)[0].release()
        self.eval_sets[name] = (gl.upload(self.ctx, words, f"{name} images"), labels)

    def _eval_set(self, name: str):
        if name not in self.eval_sets:
            raise KeyError(f"no evaluation set {name!r} on this trainer (it has {sorted(self.eval_sets)}): "
                           f"add one with trainer.add_eval_set({name!r}, images, labels)")
        return self.eval_sets[name]

    def predict(self, name: str = "test") -> np.ndarray:
        """Predicted classes of a resident evaluation set (fused_predict_1_argmax, one dispatch)."""
        images, labels = self._eval_set(name)
        count = len(labels)
        if self.predictions is None or self.predictions.size < count:
            if self.predictions is not None:
                self.predictions.release()
            self.predictions = gl.upload(self.ctx, np.zeros(count, np.uint32), "predictions")
        self.predictor.bind({3: self.buffers[3], 10: images, 11: self.predictions})
        self.predictor.run(gl.groups(count, self.S), n_in=self.n_in, n_hidden=self.n_hidden, count=count)
        return self.download(self.predictions, 0, count).astype(np.int64)

    def accuracy(self, name: str = "test") -> float:
        return float(np.mean(self.predict(name) == self._eval_set(name)[1]))

    def read_params(self) -> dict:
        return unflatten(self.download(3), self.n_in, self.n_hidden)

    def write_params(self, params: dict) -> None:
        self.upload(3, flatten(params))

    def read_state(self) -> dict:
        """The optimizer state as parameter dicts: {} (SGD), {"v"} (momentum) or {"m", "v"} (Adam)."""
        if self.kind == "SGD":
            return {}
        m = unflatten(self.download(4), self.n_in, self.n_hidden)
        if self.kind == "Momentum":
            return {"v": m}
        return {"m": m, "v": unflatten(self.download(5), self.n_in, self.n_hidden)}

    def train(self, epochs: int, *, lr_schedule=None, evaluate=("train", "test"), live=None,
              progress: bool = True, first_epoch: int = 0) -> dict:
        """Train `epochs` epochs; returns a history like reference.train (loss, train_acc, test_acc, seconds).

        lr_schedule(epoch) -> lr, applied before each epoch. `seconds` is the wall clock of the epoch's
        training steps (to the last loss read, which waits for the GPU); evaluation is not counted.
        live: a plots.LivePlot, updated every epoch.
        """
        from tqdm import tqdm

        history = {"loss": [], "train_acc": [], "test_acc": [], "seconds": [], "lr": []}
        bar = tqdm(range(first_epoch, first_epoch + epochs), desc=f"{self.n_in}-{self.n_hidden}-10 {self.kind}",
                   disable=not progress)
        for epoch in bar:
            if lr_schedule is not None:
                self.lr = lr_schedule(epoch)
            start = time.perf_counter()
            loss = self.run_epoch(epoch)
            history["seconds"].append(time.perf_counter() - start)
            history["loss"].append(loss)
            history["lr"].append(self.lr)
            for name in evaluate:
                if name in self.eval_sets:
                    history[f"{name}_acc"].append(self.accuracy(name))
            bar.set_postfix(loss=f"{loss:.4f}", **({"test": f"{100 * history['test_acc'][-1]:.2f}%"}
                                                  if history["test_acc"] else {}))
            if live is not None:
                live.update(epoch + 1, loss=loss, train_acc=history["train_acc"][-1] if history["train_acc"] else None,
                            test_acc=history["test_acc"][-1] if history["test_acc"] else None)
        return history

    def release(self) -> None:
        for array in self.buffers.values():
            array.release()
        if self._stage is not None:
            self._stage.release()
        for name, (images, _) in self.eval_sets.items():
            if name != "train":
                images.release()
        if self.predictions is not None:
            self.predictions.release()


def gpu_update(ctx, optimizer, params: np.ndarray, grads: np.ndarray, state: dict | None = None, t: int = 1):
    """One standalone update_2_momentum / update_3_adam on flat float32 arrays; returns (params, state).

    For checking the optimizer shaders on their own (tests, notebook 05). state: {"v"} for momentum,
    {"m", "v"} for Adam (zeros when None); t: Adam's step number for the bias corrections.
    """
    kind = type(optimizer).__name__
    n = len(params)
    f32 = np.float32
    p = gl.upload(ctx, np.asarray(params, dtype=np.float32), "params")
    g = gl.upload(ctx, np.asarray(grads, dtype=np.float32), "grads")
    zeros = np.zeros(n, dtype=np.float32)
    if kind == "Momentum":
        v = gl.upload(ctx, (state or {}).get("v", zeros).astype(np.float32), "velocity")
        k = gl.Kernel(ctx, "update_2_momentum.comp")
        k.run(gl.groups(n, 256), bindings={17: p, 18: g, 19: v}, n=n, lr=float(f32(optimizer.lr)), mu=float(f32(optimizer.mu)))
        out = (p.read().copy(), {"v": v.read().copy()})
        arrays = (p, g, v)
    elif kind == "Adam":
        m = gl.upload(ctx, (state or {}).get("m", zeros).astype(np.float32), "m")
        v = gl.upload(ctx, (state or {}).get("v", zeros).astype(np.float32), "v")
        k = gl.Kernel(ctx, "update_3_adam.comp")
        o = optimizer
        k.run(gl.groups(n, 256), bindings={17: p, 18: g, 19: m, 20: v}, n=n, lr=float(f32(o.lr)),
              beta1=float(f32(o.beta1)), beta2=float(f32(o.beta2)), eps=float(f32(o.eps)),
              one_minus_beta1=float(f32(1 - o.beta1)), one_minus_beta2=float(f32(1 - o.beta2)),
              c1=float(f32(1 - o.beta1 ** t)), c2=float(f32(1 - o.beta2 ** t)))
        out = (p.read().copy(), {"m": m.read().copy(), "v": v.read().copy()})
        arrays = (p, g, m, v)
    else:
        raise TypeError(f"gpu_update takes reference.Momentum or Adam, got {kind}")
    for array in arrays:
        array.release()
    return out


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


def check_optimizer(ctx, optimizer, n: int = 1037, steps: int = 3, seed: int = 0) -> bool:
    """update_2_momentum / update_3_adam against the reference optimizer: `steps` steps on n random
    parameters and gradients; True when every step's parameters agree within relative error 1e-5."""
    from .check import rel_error

    rng = np.random.default_rng(seed)
    p = rng.standard_normal(n).astype(np.float32)
    ref, gpu_optimizer, state, ok = {"p": p.copy()}, type(optimizer)(**vars_of(optimizer)), None, True
    for t in range(1, steps + 1):
        g = rng.standard_normal(n).astype(np.float32)
        optimizer.step(ref, {"p": g})
        p, state = gpu_update(ctx, gpu_optimizer, p, g, state, t=t)
        ok &= rel_error(p, ref["p"]) < 1e-5
    return bool(ok)


def vars_of(optimizer) -> dict:
    """The constructor arguments of a reference optimizer (its hyperparameters, not its state)."""
    names = {"SGD": ("lr",), "Momentum": ("lr", "mu"), "Adam": ("lr", "beta1", "beta2", "eps")}
    return {k: getattr(optimizer, k) for k in names[type(optimizer).__name__]}


def check_fused_steps(ctx, optimizer, images, labels, steps: int = 3, batch_size: int = 128,
                      hidden: int = 128, seed: int = 0) -> bool:
    """`steps` fused training steps against reference steps with the same optimizer, from the same
    init (reference.init_params(seed)) and batches; True when all parameters agree within 1e-5."""
    from .check import rel_error

    params = reference.init_params(images[0].size, hidden, N_OUT, seed=seed)
    trainer = FusedMLP(ctx, params, images, labels, optimizer=type(optimizer)(**vars_of(optimizer)),
                       batch_size=batch_size, seed=seed)
    X = data.normalise(np.asarray(images)) if np.asarray(images).dtype == np.uint8 else images
    order = reference.epoch_order(len(labels), 0, seed)
    ref = {k: v.copy() for k, v in params.items()}
    trainer.start_epoch(0)
    for s in range(min(steps, trainer.steps_per_epoch)):
        trainer.step(s)
        idx = order[s * batch_size:(s + 1) * batch_size]
        optimizer.step(ref, reference.loss_and_grads(ref, X[idx], np.asarray(labels)[idx])[1])
    got = trainer.read_params()
    trainer.release()
    return all(rel_error(got[k], ref[k]) < 1e-5 for k in ref)

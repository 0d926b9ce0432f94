"""The whole training loop on the GPU: the 784-H-10 MLP of reference.py trained with SGD in GLSL shaders.

Introduced in notebook 04. The training images stay on the GPU (uint8, four pixels a word: data.pack_u8),
the labels too; each epoch's shuffle is one write of the order buffer (reference.epoch_order, 4 bytes a
sample); the weights never leave the GPU during training. Only a few floats come back: every
`readback_every` steps, the loss sum and correct count of each step since the last readback.

    trainer = GPUTrainer(ctx, reference.init_params(seed=0), X_train_u8, y_train, batch_size=128, lr=0.3)
    history = trainer.train(10, test=(X_test_u8, y_test))     # same keys as reference.train's history
    trainer.accuracy(X_test_u8, y_test)                       # evaluated on the GPU
    trainer.save("mlp.npz"); trainer.load("mlp.npz")          # np.savez of W1, b1, W2, b2

One step is six dispatches, each followed by a memory barrier because the next one reads its output:

    gather_forward_1_u8      A1 = relu(X[batch] @ W1 + b1)       X gathered from the uint8 images by order
    logits_forward_1_splitk  logits = A1 @ W2 + b2
    softmax_xent_1_rowwise   dlogits = (softmax - onehot) / B; the batch's loss sum and correct count
    dense_backward_1_relu    gW2 = A1.T @ dlogits, gb2, dZ1 = dlogits @ W2.T * (A1 > 0)
    gather_backward_1_u8     gW1 = X[batch].T @ dZ1, gb1
    update_1_sgd             params -= lr * grads   (all four parameters: one flat buffer)

Every buffer has a fixed binding point (BINDINGS), bound once per epoch, so a step is only uniform writes
and `run()` calls. The parameters live back to back in one buffer (each bound as a range at its own
binding point, each range starting on a 256-byte boundary), the gradients in another with the same
layout, so one SGD dispatch updates everything. All sums run in a fixed order (no atomics), so the same
seed gives bitwise-identical weights on the same machine.

The step's profile (profile_step, epoch_phases) is measured by measure_step / split_epoch, which the
fused trainer of notebook 05 (helpers/fused_mlp.py) uses too, so the two trainers' figures compare.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

import numpy as np

from . import data, gl, reference, timing

# Binding points of the training pipeline: every shader of the step uses these numbers (see their banners).
BINDINGS = {
    "images": 0, "order": 1, "labels": 2,
    "W1": 3, "b1": 4, "W2": 5, "b2": 6,
    "A1": 7, "logits": 8, "dlogits": 9, "dZ1": 10,
    "gW1": 11, "gb1": 12, "gW2": 13, "gb2": 14,
    "losses": 15, "stats": 16, "params": 17, "grads": 18,
}
# The step's dispatches in order: (role, shader file).
STEP = (
    ("forward1", "gather_forward_1_u8.comp"),
    ("forward2", "logits_forward_1_splitk.comp"),
    ("xent", "softmax_xent_1_rowwise.comp"),
    ("backward2", "dense_backward_1_relu.comp"),
    ("backward1", "gather_backward_1_u8.comp"),
    ("sgd", "update_1_sgd.comp"),
)
PARAM_NAMES = ("W1", "b1", "W2", "b2")
ALIGN_FLOATS = 64  # 256 bytes: a storage-buffer range must start at a multiple of the driver's
#                    GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, which is at most 256 on common drivers


def define_value(source: str, name: str, shader: str = "shader") -> int:
    """The integer value of `#define name value` in a shader source (gl.define), the shader named in errors."""
    try:
        return int(gl.define(source, name))
    except gl.ShaderError as exc:
        raise gl.ShaderError(f"{shader}: {exc}") from None


def param_shapes(K: int, H: int, C: int) -> dict:
    """{W1: (K, H), b1: (H,), W2: (H, C), b2: (C,)}: the K-H-C MLP's parameter shapes."""
    return {"W1": (K, H), "b1": (H,), "W2": (H, C), "b2": (C,)}


def param_layout(shapes: dict, align: int = ALIGN_FLOATS) -> tuple[dict, int]:
    """{name: (offset, size)} in floats for W1, b1, W2, b2 back to back, each start a multiple of `align`
    floats (1: packed tightly); and the total floats."""
    layout, offset = {}, 0
    for name in PARAM_NAMES:
        size = int(np.prod(shapes[name]))
        layout[name] = (offset, size)
        offset += -(-size // align) * align
    return layout, offset


def flatten(params: dict, layout: dict, total: int) -> np.ndarray:
    """W1, b1, W2, b2 into one float32 vector laid out by param_layout (gaps 0)."""
    flat = np.zeros(total, np.float32)
    for name, (off, size) in layout.items():
        value = np.asarray(params[name])
        if value.size != size:
            raise ValueError(f"{name} has {value.size} values; this trainer's {name} has {size}")
        flat[off:off + size] = value.astype(np.float32).reshape(-1)
    return flat


def unflatten(flat: np.ndarray, layout: dict, shapes: dict) -> dict:
    """The inverse of flatten: {name: array of shapes[name]} (copies)."""
    return {name: np.array(flat[off:off + size], np.float32).reshape(shapes[name])
            for name, (off, size) in layout.items()}


def pack_images(images, n_pixels: int) -> np.ndarray:
    """uint8 images (n, 28, 28) or (n, K) -> uint32 (n, ceil(K/4)) by data.pack_images (packed uint32
    passes through); a clear error when the images do not have the net's n_pixels inputs."""
    images = np.asarray(images)
    if images.dtype == np.uint8 and images.reshape(len(images), -1).shape[1] != n_pixels:
        raise ValueError(f"images have {images.reshape(len(images), -1).shape[1]} pixels each, but W1 has "
                         f"{n_pixels} rows: pass images of the size the net was built for")
    words = data.pack_images(images, n_pixels)
    if words.shape[1] != -(-n_pixels // 4):
        raise ValueError(f"packed images have {words.shape[1]} words a row; W1's {n_pixels} rows need "
                         f"{-(-n_pixels // 4)}")
    return words


def check_labels(labels, n_images: int, n_classes: int) -> np.ndarray:
    """The labels as int64 after checking them: integers, one per image, each in 0..n_classes-1 (a label
    outside would make the shaders read past the logits and train on garbage without an error)."""
    if labels is None:
        raise ValueError(f"training needs one label per image: got {n_images} images and no labels")
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != n_images:
        raise ValueError(f"training needs one label per image: got {n_images} images and labels of shape "
                         f"{labels.shape}")
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integers (class numbers 0..{n_classes - 1}), got {labels.dtype}")
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(f"labels must lie in 0..{n_classes - 1} (the net has {n_classes} outputs); "
                         f"got {labels.min()}..{labels.max()}")
    return labels.astype(np.int64)


EMPTY_SHADER = "#version 430\nlayout(local_size_x = 64) in;\nvoid main() {}\n"  # a dispatch doing nothing


def measure_step(ctx, stages, issue_step, *, barrier_bits: int, repeat: int = 30, clock=None,
                 warmup: float | None = None, read=None, upload=None) -> dict:
    """One step's profile, measured the same way for both trainers (GPUTrainer and FusedMLP.profile_step).

    stages: [(name, run, groups)], the step's dispatches in order, their uniforms set for a full batch;
    issue_step(): queue one whole step; read(): one readback; upload(): one epoch's order write.
    Seconds, by clock.source (GPU timer queries; on a software renderer the wall clock around ctx.finish()):
      kernel[name]  one dispatch + its barrier, in a stream of `repeat` back-to-back copies (what it adds to
                    a step while the GPU is kept busy)
      empty         the same for a dispatch that does nothing: the fixed cost of a dispatch + barrier
    and by the wall clock: step (one step in a stream of `repeat`, finish at the end), issue (Python's time
    to queue one step), readback, order_upload. overhead = step - sum of kernels.
    warmup: seconds of steps run first, untimed, so a GPU that sat idle is back at its working clocks
    (default 0.2 s on a GPU, none on a software renderer).
    """
    clock = clock or timing.Clock(ctx)
    barrier = ctx.memory_barrier
    if warmup is None:
        warmup = 0.0 if gl.is_software(ctx) else 0.2
    until = time.perf_counter() + warmup
    while time.perf_counter() < until:
        for _ in range(20):
            issue_step()
        ctx.finish()

    def per_dispatch(run, groups) -> float:
        def issue():
            for _ in range(repeat):
                run(*groups)
                barrier(barrier_bits)
        run(*groups)  # warm-up
        return statistics.median(clock.kernel(issue) for _ in range(3)) / repeat

    kernel = {name: per_dispatch(run, groups) for name, run, groups in stages}
    empty_program = ctx.compute_shader(EMPTY_SHADER)
    empty = per_dispatch(empty_program.run, (1, 1, 1))
    empty_program.release()

    def steps():
        for _ in range(repeat):
            issue_step()

    steps()
    step_wall = statistics.median(clock.wall(steps) for _ in range(3)) / repeat
    ctx.finish()
    t0 = time.perf_counter()
    steps()
    issue = (time.perf_counter() - t0) / repeat
    ctx.finish()
    readback = statistics.median(clock.wall(read) for _ in range(5)) if read is not None else 0.0
    order_upload = statistics.median(clock.wall(upload) for _ in range(5)) if upload is not None else 0.0
    total = sum(kernel.values())
    return {"kernel": kernel, "kernel_total": total, "empty": empty, "step": step_wall, "issue": issue,
            "overhead": max(step_wall - total, 0.0), "readback": readback, "order_upload": order_upload,
            "clock": clock.source}


def split_epoch(profile: dict, steps: int, epoch_seconds: float, readbacks: int) -> dict:
    """One epoch in seconds, from measure_step()'s profile: upload (the order), kernel (each kernel's work
    beyond an empty dispatch's cost, every step), readback, and dispatch: the rest of the wall clock (the
    fixed cost of each dispatch and barrier, the GPU waiting for Python). The same split for both trainers."""
    kernel = sum(max(t - profile["empty"], 0.0) for t in profile["kernel"].values()) * steps
    readback = profile["readback"] * readbacks
    upload = profile["order_upload"]
    return {"upload": upload, "kernel": kernel, "readback": readback,
            "dispatch": max(epoch_seconds - kernel - readback - upload, 0.0)}


def save_params(path, params: dict) -> Path:
    """np.savez of W1, b1, W2, b2 (float32). Returns the path written (np.savez adds .npz if missing)."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    np.savez(path, **{name: np.asarray(params[name], np.float32) for name in PARAM_NAMES})
    return path


def load_params(path) -> dict:
    """The W1, b1, W2, b2 saved by save_params, as float32 arrays; a clear error if one is missing."""
    with np.load(path) as saved:
        missing = [name for name in PARAM_NAMES if name not in saved.files]
        if missing:
            raise KeyError(f"{path} holds {saved.files}, not the MLP parameters {missing}: "
                           "was it written by gpu_mlp.save_params (or trainer.save)?")
        return {name: saved[name].astype(np.float32) for name in PARAM_NAMES}


class GPUTrainer:
    """SGD training of the 784-H-10 MLP on the GPU, step for step what reference.train computes.

    params: W1 (K, H), b1 (H,), W2 (H, C), b2 (C,) float32, e.g. reference.init_params(seed=0).
    images: uint8 (n, 28, 28) or (n, K), uploaded once; labels: (n,) integers < C. Both may be None for
    a model that only predicts. defines: {shader file: {NAME: value}} to tune the step's shaders.
    """

    def __init__(self, ctx, params: dict, images=None, labels=None, *, batch_size: int = 128,
                 lr: float = 0.3, seed: int = 0, defines: dict | None = None, eval_batch: int = 10_000):
        import moderngl

        self.ctx, self._lr, self.seed = ctx, float(lr), int(seed)
        self.batch_size, self.eval_batch = int(batch_size), int(eval_batch)
        shapes = {name: np.shape(params[name]) for name in PARAM_NAMES}
        (self.K, self.H), self.C = shapes["W1"], shapes["W2"][1]
        expected = param_shapes(self.K, self.H, self.C)
        if shapes != expected:
            raise ValueError(f"parameter shapes {shapes} do not form a K-H-C MLP; expected {expected}")
        self.words = -(-self.K // 4)
        self.layout, self.n_params = param_layout(shapes)
        self._storage_barrier = moderngl.SHADER_STORAGE_BARRIER_BIT
        self._read_barrier = moderngl.BUFFER_UPDATE_BARRIER_BIT | moderngl.SHADER_STORAGE_BARRIER_BIT

        defines = {name: dict(values) for name, values in (defines or {}).items()}
        # the forward's shared copy of its images holds exactly ceil(K/4) words
        defines.setdefault("gather_forward_1_u8.comp", {}).setdefault("MAX_WORDS", self.words)
        self.defines = defines
        self.kernels = {role: gl.Kernel(ctx, name, defines.get(name)) for role, name in STEP}

        self.params_buffer = ctx.buffer(reserve=self.n_params * 4)
        self.grads_buffer = ctx.buffer(reserve=self.n_params * 4)
        self.grads_buffer.clear()  # the gaps between the ranges stay 0, so SGD leaves them at 0
        self.set_parameters(params)

        bs = self.batch_size
        self.A1 = gl.empty(ctx, (bs, self.H), name="A1")
        self.logits_buf = gl.empty(ctx, (bs, self.C), name="logits")
        self.dlogits = gl.empty(ctx, (bs, self.C), name="dlogits")
        self.dZ1 = gl.empty(ctx, (bs, self.H), name="dZ1")
        self.losses = gl.empty(ctx, (bs,), name="losses")
        self._eval = None  # eval buffers, made on first use

        self.n = 0
        self.upload_seconds = 0.0
        if images is not None:
            self._set_training_data(images, labels)
        self._counts = {"steps": 0, "readbacks": 0}
        self._set_constant_uniforms()
        self.rebuild_plan()
        self.epoch = None

    # ---------------------------------------------------------------------------------------------
    # setup
    # ---------------------------------------------------------------------------------------------

    def _set_training_data(self, images, labels) -> None:
        labels = check_labels(labels, len(images), self.C)
        self.ctx.finish()
        start = time.perf_counter()
        self.images = gl.upload(self.ctx, pack_images(images, self.K), "images (uint8 packed)")
        self.labels = gl.upload(self.ctx, labels.astype(np.uint32), "labels")
        self.ctx.finish()
        self.upload_seconds = time.perf_counter() - start
        self.n = len(images)
        self._labels_host = labels.astype(np.int64)
        self.order = gl.GPUArray(self.ctx, (self.n,), np.uint32, name="order")
        self.steps_per_epoch = -(-self.n // self.batch_size)
        self.stats = gl.empty(self.ctx, (self.steps_per_epoch, 2), name="stats (loss sum, correct) per step")

    def _set_constant_uniforms(self) -> None:
        k = self.kernels
        k["forward1"].set(K=self.K, N=self.H)
        k["forward2"].set(K=self.H, N=self.C)
        k["xent"].set(C=self.C)
        k["backward2"].set(K=self.H, N=self.C)
        k["backward1"].set(K=self.K, N=self.H)
        k["sgd"].set(n=self.n_params, lr=self._lr)

    @property
    def lr(self) -> float:
        """The SGD learning rate; setting it takes effect from the next step (a schedule sets it between epochs)."""
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr = float(value)
        self.kernels["sgd"].set(lr=self._lr)

    @property
    def counts(self) -> dict:
        """Steps and readbacks issued since construction (or reset_counts()); dispatches and barriers follow
        from the steps (each step issues the same dispatches_per_step / barriers_per_step)."""
        steps = self._counts["steps"]
        return {"steps": steps, "dispatches": steps * self.dispatches_per_step,
                "barriers": steps * self.barriers_per_step, "readbacks": self._counts["readbacks"]}

    def reset_counts(self) -> None:
        self._counts = {"steps": 0, "readbacks": 0}

    def _define(self, role: str, name: str) -> int:
        kernel = self.kernels[role]
        return define_value(kernel.source, name, kernel.name)

    def groups(self, B: int) -> dict:
        """Work groups of each dispatch for a batch of B samples, from each shader's banner formula."""
        d = self._define
        return {
            "forward1": (gl.groups(self.H, d("forward1", "TN")), gl.groups(B, d("forward1", "RB")), 1),
            "forward2": (gl.groups(self.C, d("forward2", "TN")), gl.groups(B, d("forward2", "RB")), 1),
            "xent": (1, 1, 1),
            "backward2": (gl.groups(self.H * self.C + self.C, d("backward2", "LX"))
                          + gl.groups(B * self.H, d("backward2", "LX") * d("backward2", "BS")), 1, 1),
            "backward1": (gl.groups(self.H, d("backward1", "LX")), self.words + 1, 1),
            "sgd": (gl.groups(self.n_params, d("sgd", "LOCAL")), 1, 1),
        }

    def rebuild_plan(self) -> None:
        """Look up the step's uniforms again and rebuild the dispatch list at the next step: call it after
        replacing an entry of `self.kernels` (set the new kernel's constant uniforms yourself; a
        replacement for "sgd" needs `#define LOCAL` and one thread per element of BINDINGS["params"])."""
        self._u = {(role, name): kernel.program[name]
                   for role, kernel in self.kernels.items() for name in kernel.program
                   if name in ("B", "start", "slot")}
        self._u_start = [u for (role, name), u in self._u.items() if name == "start"]
        self._u_slot = self._u[("xent", "slot")]
        self._B = None
        self.plan = []

    def _set_batch(self, B: int) -> None:
        for (role, name), uniform in self._u.items():
            if name == "B":
                uniform.value = B
        groups = self.groups(B)
        self.plan = [(self.kernels[role].program.run, groups[role]) for role, _ in STEP]
        self._B = B

    @property
    def dispatches_per_step(self) -> int:
        return len(STEP)

    @property
    def barriers_per_step(self) -> int:
        return len(STEP)  # each dispatch's output is read by the next one (the SGD's by the next step)

    def _bind_range(self, buffer, binding: int, name: str) -> None:
        offset, size = self.layout[name]
        buffer.bind_to_storage_buffer(binding, offset=offset * 4, size=size * 4)

    def bind(self) -> None:
        """Bind every training buffer to its fixed binding point (BINDINGS). Once per epoch is enough."""
        b = BINDINGS
        if self.n:
            self.images.buffer.bind_to_storage_buffer(b["images"])
            self.order.buffer.bind_to_storage_buffer(b["order"])
            self.labels.buffer.bind_to_storage_buffer(b["labels"])
            self.stats.buffer.bind_to_storage_buffer(b["stats"])
        for name in PARAM_NAMES:
            self._bind_range(self.params_buffer, b[name], name)
            self._bind_range(self.grads_buffer, b["g" + name], name)
        for name, array in (("A1", self.A1), ("logits", self.logits_buf), ("dlogits", self.dlogits),
                            ("dZ1", self.dZ1), ("losses", self.losses)):
            array.buffer.bind_to_storage_buffer(b[name])
        self.params_buffer.bind_to_storage_buffer(b["params"])
        self.grads_buffer.bind_to_storage_buffer(b["grads"])

    def release(self) -> None:
        """Free the trainer's GPU buffers and programs (all of MNIST: about 50 MB); it is unusable after."""
        arrays = [self.A1, self.logits_buf, self.dlogits, self.dZ1, self.losses]
        if self.n:
            arrays += [self.images, self.labels, self.order, self.stats]
        if self._eval is not None:
            arrays += list(self._eval)
        for array in arrays:
            array.release()
        self.params_buffer.release()
        self.grads_buffer.release()
        for kernel in self.kernels.values():
            kernel.program.release()
        self.n, self._eval, self.kernels = 0, None, {}

    # ---------------------------------------------------------------------------------------------
    # parameters
    # ---------------------------------------------------------------------------------------------

    def _read_flat(self, buffer) -> dict:
        flat = np.frombuffer(buffer.read(), dtype=np.float32)
        return unflatten(flat, self.layout, param_shapes(self.K, self.H, self.C))

    def parameters(self) -> dict:
        """W1, b1, W2, b2 read back from the GPU (copies)."""
        self.ctx.memory_barrier(self._read_barrier)
        return self._read_flat(self.params_buffer)

    def gradients(self) -> dict:
        """The gradients of the last step (gW1 ... as W1, b1, W2, b2), read back from the GPU."""
        self.ctx.memory_barrier(self._read_barrier)
        return self._read_flat(self.grads_buffer)

    def set_parameters(self, params: dict) -> None:
        """Write W1, b1, W2, b2 into the GPU's parameter buffer (after any shader writes to it finished)."""
        flat = flatten(params, self.layout, self.n_params)
        self.ctx.memory_barrier(self._read_barrier)  # SGD's writes -> this CPU-side write
        self.params_buffer.write(flat)

    def save(self, path) -> Path:
        """Save W1, b1, W2, b2 with np.savez; load them with `load(path)` or gpu_mlp.load_params(path)."""
        return save_params(path, self.parameters())

    def load(self, path) -> None:
        self.set_parameters(load_params(path))

    # ---------------------------------------------------------------------------------------------
    # training
    # ---------------------------------------------------------------------------------------------

    def _need_data(self) -> None:
        if not self.n:
            raise RuntimeError("this GPUTrainer has no training images: pass images and labels to GPUTrainer()")

    def begin_epoch(self, epoch: int) -> None:
        """Write the epoch's sample order (reference.epoch_order: 4 bytes a sample) and bind the buffers."""
        self._need_data()
        self.order.write(reference.epoch_order(self.n, epoch, self.seed))
        self.bind()
        self.epoch = epoch

    def batch(self, step: int) -> tuple[int, int]:
        """(start, size) of step `step` of an epoch: the last batch holds the n % batch_size left over."""
        start = step * self.batch_size
        return start, min(self.batch_size, self.n - start)

    def issue_step(self, start: int, B: int, slot: int) -> None:
        """Queue one training step on samples order[start:start+B], its loss sum and correct count going to
        stats slot `slot`: uniforms, six dispatches, six barriers; nothing is read back and nothing bound
        (begin_epoch() binds). A subclass may extend it (e.g. an optimizer's step-count uniform)."""
        if B != self._B:
            self._set_batch(B)
        for uniform in self._u_start:
            uniform.value = start
        self._u_slot.value = slot
        barrier, bits = self.ctx.memory_barrier, self._storage_barrier
        for run, groups in self.plan:
            run(*groups)
            barrier(bits)

    def step(self, step: int, epoch: int | None = None) -> None:
        """One training step (step `step` of `epoch`, default the current epoch); nothing read back."""
        if epoch is not None and epoch != self.epoch:
            self.begin_epoch(epoch)
        elif self.epoch is None:
            self.begin_epoch(0)
        else:
            self.bind()
        start, B = self.batch(step)
        self.issue_step(start, B, step)
        self._count(1)

    def dispatch(self, role: str, step: int = 0) -> None:
        """Run one stage of step `step` of the current epoch alone (a role of STEP, e.g. "forward1"), with
        its barrier: to look at its output (self.A1, self.logits_buf, ...) before the next stage runs."""
        if self.epoch is None:
            self.begin_epoch(0)
        else:
            self.bind()
        start, B = self.batch(step)
        if B != self._B:
            self._set_batch(B)
        for uniform in self._u_start:
            uniform.value = start
        self._u_slot.value = step
        run, groups = self.plan[[r for r, _ in STEP].index(role)]
        run(*groups)
        self.ctx.memory_barrier(self._read_barrier)

    def _count(self, steps: int) -> None:
        self._counts["steps"] += steps

    def read_stats(self, first: int, last: int) -> np.ndarray:
        """(loss sum, correct count) of steps first .. last-1 of the current epoch: (last - first, 2)."""
        self.ctx.memory_barrier(self._read_barrier)
        raw = self.stats.buffer.read(size=(last - first) * 8, offset=first * 8)
        self._counts["readbacks"] += 1
        return np.frombuffer(raw, dtype=np.float32).reshape(-1, 2)

    def _batch_sizes(self, first: int, last: int) -> np.ndarray:
        return np.array([self.batch(s)[1] for s in range(first, last)], dtype=np.float64)

    def check_finite(self, epoch: int, first: int, stats: np.ndarray) -> None:
        """Raise reference.TrainingDiverged naming the first step whose loss is NaN or infinite."""
        bad = np.flatnonzero(~np.isfinite(stats[:, 0]))
        if bad.size:
            step = first + int(bad[0])
            loss = float(stats[bad[0], 0]) / self.batch(step)[1]
            raise reference.TrainingDiverged(reference.diverged_message(epoch, step, self.lr, loss))

    def train_epoch(self, epoch: int, readback_every: int = 50, callback=None) -> dict:
        """One epoch. Every `readback_every` steps (and at the end) the per-step loss sums come back, are
        checked (reference.TrainingDiverged on NaN/inf) and passed to callback(step_done, mean_loss,
        batch_accuracy). Returns loss (mean over the epoch's samples) and batch_acc (on each batch
        before its update)."""
        self.begin_epoch(epoch)
        total_loss, total_correct, first = 0.0, 0.0, 0
        for step in range(self.steps_per_epoch):
            start, B = self.batch(step)
            self.issue_step(start, B, step)
            if (step + 1) % readback_every == 0 or step + 1 == self.steps_per_epoch:
                stats = self.read_stats(first, step + 1)
                self.check_finite(epoch, first, stats)
                sums = stats.astype(np.float64).sum(axis=0)
                total_loss, total_correct = total_loss + sums[0], total_correct + sums[1]
                if callback is not None:
                    samples = self._batch_sizes(first, step + 1).sum()
                    callback(step + 1, sums[0] / samples, sums[1] / samples)
                first = step + 1
        self._count(self.steps_per_epoch)
        return {"loss": total_loss / self.n, "batch_acc": total_correct / self.n}

    def train(self, epochs: int, *, test=None, first_epoch: int = 0, readback_every: int = 50,
              progress: bool = True, plot=None, eval_train: bool = True) -> dict:
        """Train `epochs` epochs; the history has reference.train's keys (loss, train_acc, test_acc, seconds).

        test: (uint8 images, labels) evaluated on the GPU after every epoch. plot: a plots.LivePlot,
        updated at every readback (loss) and every epoch (accuracies). seconds: each epoch's training
        wall clock, ctx.finish() included, evaluation excluded, and the time the progress bar and the plot
        took at the readbacks excluded too (the GPU is idle then); that time is in display_seconds.
        """
        from tqdm import tqdm

        self._need_data()
        history = {"loss": [], "train_acc": [], "test_acc": [], "seconds": [], "display_seconds": []}
        test_set = self.eval_set(test[0]) if test is not None else None
        own_test_set = test_set is not None and test_set is not test[0]  # uploaded here: released at the end
        bar = tqdm(total=epochs * self.steps_per_epoch, disable=not progress, unit="step",
                   desc=f"GPU training, {epochs} epochs")
        for epoch in range(first_epoch, first_epoch + epochs):
            done, display = [0], [0.0]

            def on_readback(step_done, loss, batch_acc, epoch=epoch):
                shown = time.perf_counter()
                bar.update(step_done - done[0])
                done[0] = step_done
                bar.set_postfix(epoch=epoch + 1, loss=f"{loss:.4f}")
                if plot is not None:
                    plot.update(epoch + step_done / self.steps_per_epoch, loss=loss)
                display[0] += time.perf_counter() - shown

            self.ctx.finish()
            start = time.perf_counter()
            result = self.train_epoch(epoch, readback_every, on_readback)
            self.ctx.finish()
            history["seconds"].append(time.perf_counter() - start - display[0])
            history["display_seconds"].append(display[0])
            history["loss"].append(result["loss"])
            if eval_train:
                history["train_acc"].append(self.accuracy(None, None))
            if test_set is not None:
                history["test_acc"].append(self.accuracy(test_set, test[1]))
            if plot is not None:
                plot.update(epoch + 1, train_acc=history["train_acc"][-1] if eval_train else None,
                            test_acc=history["test_acc"][-1] if test_set is not None else None)
        bar.close()
        if own_test_set:
            test_set.release()
        return history

    # ---------------------------------------------------------------------------------------------
    # evaluation on the GPU
    # ---------------------------------------------------------------------------------------------

    def eval_set(self, images) -> "EvalSet":
        """Upload uint8 images once for repeated evaluation (e.g. the test set after every epoch)."""
        return images if isinstance(images, EvalSet) else EvalSet(self, images)

    def _eval_buffers(self, n: int):
        if self._eval is None or self._eval[0].size < n:
            size = max(n, self.n)
            for array in self._eval or ():
                array.release()
            identity = gl.upload(self.ctx, np.arange(size, dtype=np.uint32), "identity order")
            eb = self.eval_batch
            self._eval = (identity, gl.empty(self.ctx, (eb, self.H), name="A1 (eval)"),
                          gl.empty(self.ctx, (eb, self.C), name="logits (eval)"))
        return self._eval

    def logits(self, images=None) -> np.ndarray:
        """Logits (n, C) computed on the GPU: images uint8 array, an EvalSet, or None for the training set."""
        own = None
        if images is None:
            self._need_data()
            buffer, n = self.images, self.n
        else:
            evalset = self.eval_set(images)
            buffer, n = evalset.images, evalset.n
            if evalset is not images:  # uploaded for this call only
                own = evalset
        identity, A1, logits = self._eval_buffers(n)
        b, f1, f2 = BINDINGS, self.kernels["forward1"], self.kernels["forward2"]
        buffer.buffer.bind_to_storage_buffer(b["images"])
        identity.buffer.bind_to_storage_buffer(b["order"])
        A1.buffer.bind_to_storage_buffer(b["A1"])
        logits.buffer.bind_to_storage_buffer(b["logits"])
        self._bind_range(self.params_buffer, b["W1"], "W1")
        self._bind_range(self.params_buffer, b["b1"], "b1")
        self._bind_range(self.params_buffer, b["W2"], "W2")
        self._bind_range(self.params_buffer, b["b2"], "b2")
        out = np.empty((n, self.C), np.float32)
        for start in range(0, n, self.eval_batch):
            B = min(self.eval_batch, n - start)
            groups = self.groups(B)
            f1.set(B=B, start=start)
            f1.program.run(*groups["forward1"])
            self.ctx.memory_barrier(self._storage_barrier)
            f2.set(B=B)
            f2.program.run(*groups["forward2"])
            self.ctx.memory_barrier(self._read_barrier)
            out[start:start + B] = np.frombuffer(logits.buffer.read(size=B * self.C * 4),
                                                 np.float32).reshape(B, self.C)
        if own is not None:
            own.release()
        self._B = None  # the B uniforms now hold the eval batch: the next step sets them again
        if self.epoch is not None and self.n:
            self.bind()
        return out

    def predict(self, images=None) -> np.ndarray:
        """Predicted classes (argmax of the GPU's logits), for uint8 images, an EvalSet or None (training set)."""
        return self.logits(images).argmax(axis=1)

    def accuracy(self, images, labels) -> float:
        """Fraction predicted right; images=None, labels=None: the resident training set."""
        labels = self._labels_host if images is None else np.asarray(labels)
        return float((self.predict(images) == labels).mean())

    # ---------------------------------------------------------------------------------------------
    # the step taken apart
    # ---------------------------------------------------------------------------------------------

    def profile_step(self, repeat: int = 30, readback_every: int = 50, clock=None,
                     warmup: float | None = None) -> dict:
        """Time one full-size step piece by piece (measure_step, the same measurement FusedMLP makes);
        the parameters are restored afterwards. Adds readback_steps (the stats of `readback_every` steps
        read), dispatches_per_step, barriers_per_step and batch to measure_step's keys."""
        self._need_data()
        saved = self.parameters()
        self.begin_epoch(0)
        start, B = 0, min(self.batch_size, self.n)
        self._set_batch(B)
        for uniform in self._u_start:
            uniform.value = start
        self._u_slot.value = 0
        stages = [(name, run, groups) for (_, name), (run, groups) in zip(STEP, self.plan)]
        reads = min(readback_every, self.steps_per_epoch)
        order = reference.epoch_order(self.n, 0, self.seed)
        profile = measure_step(self.ctx, stages, lambda: self.issue_step(start, B, 0),
                               barrier_bits=self._storage_barrier, repeat=repeat, clock=clock, warmup=warmup,
                               read=lambda: self.read_stats(0, reads), upload=lambda: self.order.write(order))
        self.set_parameters(saved)
        return {**profile, "readback_steps": reads, "dispatches_per_step": self.dispatches_per_step,
                "barriers_per_step": self.barriers_per_step, "batch": B}

    def epoch_phases(self, profile: dict, epoch_seconds: float, readback_every: int = 50) -> dict:
        """One epoch split by split_epoch (upload, kernel, readback, dispatch), as FusedMLP.epoch_phases."""
        steps = self.steps_per_epoch
        return split_epoch(profile, steps, epoch_seconds, math.ceil(steps / readback_every))


class EvalSet:
    """uint8 images uploaded once (packed) for GPU evaluation by a GPUTrainer."""

    def __init__(self, trainer: GPUTrainer, images):
        self.n = len(images)
        self.images = gl.upload(trainer.ctx, pack_images(images, trainer.K), "eval images (uint8 packed)")

    def release(self) -> None:
        self.images.release()

"""What the two GPU trainers share: one API, one parameter layout, one way to load data and evaluate.

Introduced in notebook 05 (GPUTrainer, six dispatches a step, helpers/gpu_mlp.py); notebook 06's FusedMLP
(two dispatches, helpers/fused_mlp.py) is its sibling. Both are `Trainer`s:

    trainer = GPUTrainer(ctx, reference.init_params(seed=0), X_train_u8, y_train,
                         optimizer=reference.SGD(0.3), batch_size=128, seed=0, check_every=50)
    trainer.add_eval_set("test", X_test_u8, y_test)          # uploaded once, evaluated on the GPU
    history = trainer.train(10, live=plots.LivePlot(...))   # loss, train_acc, test_acc, seconds, lr
    trainer.accuracy("test"); trainer.predict("test") or trainer.predict(uint8_images)
    trainer.read_params(); trainer.save("mlp.npz")      # with its provenance: mode, epochs, accuracy, card

A subclass makes its kernels and buffers, binds them (`bind`), and says what one training step is (`step`),
where the losses are (`loss_run`, `step_losses`) and how it predicts (`predict`). Everything else is here: the data
(the training images stay on the GPU as four uint8 pixels a uint32 word, the labels too, and each epoch's
shuffle is one write of an order buffer, 4 bytes a sample), the epoch loop that reads the losses every
`check_every` steps, one chunk of steps behind so the GPU never waits for the read, and stops a diverging run, evaluation sets, parameters in and out, counting.

The buffers are named GPUArrays in `trainer.arrays`; `trainer.read(name)` / `trainer.write(name, values)`
go through the context's staging buffer (gl.GPUArray), so no buffer a kernel uses is mapped by the CPU.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from . import check, data, gl, mode, reference
from .check import PARAM_NAMES, check_labels  # noqa: F401  (check_labels: mlp.check_labels too)


# ---------------------------------------------------------------------------------------------
# Parameters as one flat buffer
# ---------------------------------------------------------------------------------------------

def param_shapes(K: int, H: int, C: int) -> dict:
    """{W1: (K, H), b1: (H,), W2: (H, C), b2: (C,)}: the K-H-C MLP's parameter shapes."""
    return {"W1": (K, H), "b1": (H,), "W2": (H, C), "b2": (C,)}


def param_layout(shapes: dict, align: int = 1) -> tuple[dict, int]:
    """{name: (first, size)} in floats for W1, b1, W2, b2 back to back, each start a multiple of `align`
    floats (64 floats = 256 bytes lets each be bound as its own range); and the total floats."""
    layout, offset = {}, 0
    for name in PARAM_NAMES:
        size = int(np.prod(shapes[name]))
        layout[name] = (offset, size)
        offset += -(-size // align) * align
    return layout, offset


def flatten(params: dict, layout: dict, total: int) -> np.ndarray:
    """W1, b1, W2, b2 into one float32 vector laid out by param_layout (gaps 0)."""
    flat = np.zeros(total, np.float32)
    for name, (first, size) in layout.items():
        value = np.asarray(params[name])
        if value.size != size:
            raise ValueError(f"{name} has {value.size} values; this net's {name} has {size}")
        flat[first:first + size] = value.astype(np.float32).reshape(-1)
    return flat


def unflatten(flat: np.ndarray, layout: dict, shapes: dict) -> dict:
    """The inverse of flatten: {name: array of shapes[name]} (copies)."""
    return {name: np.array(flat[first:first + size], np.float32).reshape(shapes[name])
            for name, (first, size) in layout.items()}


PROVENANCE = "provenance"   # the .npz entry that says where a saved net came from: a JSON text as uint8 bytes


def save_params(path, params: dict, provenance: dict | None = None) -> Path:
    """np.savez of W1, b1, W2, b2 (float32), and `provenance` (where the net came from: mode, epochs, test
    accuracy, card; trainer.save fills it in) as the entry "provenance", a JSON text stored as uint8 bytes,
    so that reading it back needs no unpickling. Returns the path written (.npz added if missing)."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    arrays = {name: np.asarray(params[name], np.float32) for name in PARAM_NAMES}
    if provenance is not None:
        arrays[PROVENANCE] = np.frombuffer(json.dumps(provenance, sort_keys=True).encode(), np.uint8)
    np.savez(path, **arrays)
    return path


class WeightsFileError(ValueError, KeyError):
    """A weights file that is not an .npz of W1, b1, W2, b2 (or whose arrays do not fit the net). A KeyError
    too, for code that caught the missing-name case as one; its message prints as written."""

    __str__ = ValueError.__str__


WRITER = "trainer.save(path) (mlp.save_params) writes an .npz of the four float32 arrays W1, b1, W2, b2"


def _not_weights(path: Path, why: str) -> WeightsFileError:
    return WeightsFileError(f"{path} is not a weights file: {why}. {WRITER}; load one of those.")


def load_params(path, shapes: dict | None = None, *, provenance: bool = False):
    """The W1, b1, W2, b2 saved by save_params, as float32 arrays, after checking them (check.check_params):
    names, shapes (those of `shapes`, the net they go into, when given; a pair saved transposed, as PyTorch
    stores nn.Linear, is named as such), float dtype, finite values. A file that is not such an .npz (a
    .npy, text, a pickle, a missing file) gets one WeightsFileError saying so; nothing is unpickled.
    provenance=True: returns (params, provenance), the dict save_params stored (None for a file saved
    without one, such as np.savez of the four arrays)."""
    path = Path(path)
    if not path.is_file():
        raise _not_weights(path, "there is no such file" if not path.exists() else "it is not a file")
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"\x93NUMPY"):
        raise _not_weights(path, "it is a single NumPy array (.npy, np.save), not an .npz of the four arrays")
    if not head.startswith(b"PK"):
        kind = ("empty" if not head else "a Python pickle" if head[:1] == b"\x80"
                else "text" if all(32 <= c < 127 or c in b"\t\r\n" for c in head) else "not a zip archive")
        raise _not_weights(path, f"it is {kind}, not an .npz")
    try:
        with np.load(path, allow_pickle=False) as saved:
            missing = [name for name in PARAM_NAMES if name not in saved.files]
            if missing:
                raise _not_weights(path, f"it holds {saved.files}, not the MLP parameters {missing}")
            arrays = {name: saved[name] for name in PARAM_NAMES}
            stored = saved[PROVENANCE] if PROVENANCE in saved.files else None
    except WeightsFileError:
        raise
    except Exception as exc:   # a damaged zip, an array of Python objects (which would need unpickling)
        raise _not_weights(path, f"it cannot be read as an .npz of number arrays ({type(exc).__name__})") from None
    params = check.check_params(arrays, shapes, source=str(path))
    return (params, _provenance(path, stored)) if provenance else params


def _provenance(path: Path, stored) -> dict | None:
    if stored is None:
        return None
    try:
        if stored.dtype != np.uint8 or stored.ndim != 1:
            raise ValueError(f"{stored.dtype.name} {stored.shape}")
        value = json.loads(stored.tobytes().decode())
        if not isinstance(value, dict):
            raise ValueError(type(value).__name__)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _not_weights(path, f"its '{PROVENANCE}' entry is not a JSON object as UTF-8 bytes ({exc})") from None
    return value


# ---------------------------------------------------------------------------------------------
# Data checks
# ---------------------------------------------------------------------------------------------

def pack_images(images, n_pixels: int) -> np.ndarray:
    """uint8 images (n, 28, 28) or (n, K) -> uint32 (n, ceil(K/4)) by data.pack_images (packed uint32
    passes through), after check.check_images: the net's n_pixels inputs, raw uint8 pixels."""
    images = check.check_images(images, n_pixels, raw=True)
    words = data.pack_images(images, n_pixels)
    if words.shape[1] != -(-n_pixels // 4):
        raise ValueError(f"packed images have {words.shape[1]} words a row; W1's {n_pixels} rows need "
                         f"{-(-n_pixels // 4)}")
    return words


# ---------------------------------------------------------------------------------------------
# The trainers' common API
# ---------------------------------------------------------------------------------------------

class Trainer:
    """Training of a K-H-C MLP on the GPU; a subclass supplies the kernels (see the module docstring).

    params: W1 (K, H), b1 (H,), W2 (H, C), b2 (C,) float32. images: uint8 (n, 28, 28) or (n, K), and
    labels (n,) integers < C, uploaded once; both None for a model that only predicts. optimizer: a
    reference.SGD, Momentum or Adam: its hyperparameters are read, its state lives on the GPU.
    """

    OPTIMIZERS = ("SGD", "Momentum", "Adam")
    dispatches_per_step = 0  # set by each subclass; every dispatch is followed by one barrier
    check_behind = True      # run_epoch checks a chunk's losses after queueing the next chunk (see there)

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, align: int = 1):
        self.ctx, self.seed, self.batch_size = ctx, int(seed), int(batch_size)
        self.check_every = int(check_every)
        if self.batch_size < 1 or self.check_every < 1:
            raise ValueError(f"batch_size and check_every must be at least 1, got {batch_size}, {check_every}")
        self.optimizer = optimizer if optimizer is not None else reference.SGD(0.3)
        self.kind = type(self.optimizer).__name__
        if self.kind not in self.OPTIMIZERS:
            raise TypeError(f"optimizer must be reference.SGD, Momentum or Adam, got {self.kind}")
        check.check_optimizer(self.optimizer)   # reference's optimizers check when set; this, any other way in
        params = check.check_params(params)      # names, float dtype, a K-H-C net's shapes, finite values
        shapes = {name: params[name].shape for name in PARAM_NAMES}
        (self.K, self.H), self.C = shapes["W1"], shapes["W2"][1]
        self.shapes = shapes
        self.layout, self.n_params = param_layout(shapes, align)
        self.words = -(-self.K // 4)  # uint32 words a packed image row
        params_array = gl.upload(ctx, flatten(params, self.layout, self.n_params), "params")
        self.arrays = {"params": params_array}
        for name, (first, size) in self.layout.items():  # W1 ... as views of the one params buffer
            self.arrays[name] = params_array.view(first, shapes[name], name)
        state = {"SGD": (), "Momentum": ("m",), "Adam": ("m", "v")}[self.kind]
        for name in state:  # optimizer state: the params buffer's layout, zeros at the start
            self.arrays[name] = gl.upload(ctx, np.zeros(self.n_params, np.float32), f"optimizer state {name}")
        self.t = 0  # optimizer steps taken (Adam's bias corrections)
        self.epochs_trained = 0  # whole epochs train() has run (saved as the net's provenance)

        self.n, self.epoch = 0, None
        self.eval_sets = {}
        if images is not None:
            labels = check_labels(labels, len(images), self.C)
            self.arrays["images"] = gl.upload(ctx, pack_images(images, self.K), "images (uint8, 4 a word)")
            self.arrays["labels"] = gl.upload(ctx, labels.astype(np.uint32), "labels")
            self.arrays["order"] = gl.GPUArray(ctx, (len(labels),), np.uint32, name="order")
            self.n = len(labels)
            self.steps_per_epoch = -(-self.n // self.batch_size)
            self.eval_sets["train"] = (self.arrays["images"], labels)
        self.reset_counts()

    # --- buffers ------------------------------------------------------------------------------
    def read(self, name: str, first: int = 0, count: int | None = None) -> np.ndarray:
        """A trainer buffer read back (through the staging buffer): whole, or `count` elements from `first`."""
        array = self.arrays[name]
        return array.read() if (first, count) == (0, None) else array.read(first=first, count=count)

    def write(self, name: str, values, first: int = 0) -> None:
        """Write into a trainer buffer (through the staging buffer)."""
        self.arrays[name].write(values, first)

    def bind(self) -> None:
        """Bind every buffer to its binding point (BINDINGS of the subclass). Binding points are context
        state: call it again after anything else has bound buffers (start_epoch does). Optimizer state the
        optimizer lacks (SGD has no m or v) gets the one-element stand-in "unused", where a trainer whose
        shaders declare those bindings anyway made one."""
        for name, binding in self.BINDINGS.items():
            if name in self.arrays:
                self.arrays[name].bind_to(binding)
            elif name in ("m", "v") and "unused" in self.arrays:
                self.arrays["unused"].bind_to(binding)

    # --- parameters ---------------------------------------------------------------------------
    def read_params(self) -> dict:
        """W1, b1, W2, b2 read back from the GPU (copies)."""
        return unflatten(self.read("params"), self.layout, self.shapes)

    def write_params(self, params: dict) -> None:
        """Write W1, b1, W2, b2 into the GPU's parameter buffer, after check.check_params (this net's
        shapes, floats; NaN is let through, which tests write to see what a kernel leaves alone)."""
        self.write("params", flatten(check.check_params(params, self.shapes, finite=False), self.layout,
                                     self.n_params))

    def read_state(self) -> dict:
        """The optimizer state as parameter dicts named as in reference's optimizers: {} (SGD), {"v"}
        (momentum's velocity, kept in buffer "m") or {"m", "v"} (Adam)."""
        names = {"SGD": {}, "Momentum": {"v": "m"}, "Adam": {"m": "m", "v": "v"}}[self.kind]
        return {key: unflatten(self.read(name), self.layout, self.shapes) for key, name in names.items()}

    def provenance(self) -> dict:
        """Where this net came from, as trainer.save stores it: the mode of the run (FULL or QUICK), the
        epochs trained and the training images, the accuracy on evaluation set "test" and its size (None
        where there is none), and the card (gl.card)."""
        test = self.eval_sets.get("test")
        return {"mode": "QUICK" if mode.is_quick() else "FULL", "epochs": self.epochs_trained,
                "train_images": self.n, "test_accuracy": self.accuracy("test") if test else None,
                "test_images": len(test[1]) if test else None, "card": gl.card(self.ctx)}

    def save(self, path) -> Path:
        """Save W1, b1, W2, b2 with np.savez, and where they came from (self.provenance()); load them with
        `load(path)` or mlp.load_params(path) (provenance=True returns that too)."""
        return save_params(path, self.read_params(), self.provenance())

    def load(self, path) -> None:
        """The weights trainer.save wrote, checked against this net's shapes (load_params)."""
        self.write_params(load_params(path, self.shapes))

    def hyperparameters(self) -> dict:
        """The optimizer's hyperparameters as the update shaders' uniforms, rounded to float32 as NumPy's."""
        opt, f32 = self.optimizer, np.float32
        check.check_optimizer(opt)
        values = {"lr": f32(opt.lr)}
        if self.kind == "Momentum":
            values["mu"] = f32(opt.mu)
        elif self.kind == "Adam":
            values.update(beta1=f32(opt.beta1), beta2=f32(opt.beta2), eps=f32(opt.eps),
                          one_minus_beta1=f32(1 - opt.beta1), one_minus_beta2=f32(1 - opt.beta2))
        return {name: float(value) for name, value in values.items()}

    def next_bias_corrections(self) -> dict:
        """Adam's step count advanced by one, and its bias corrections c1 = 1 - beta1^t, c2 = 1 - beta2^t
        (float64 on the CPU, then float32, as the reference computes them)."""
        self.t += 1
        opt = self.optimizer
        return {"c1": float(np.float32(1 - opt.beta1 ** self.t)), "c2": float(np.float32(1 - opt.beta2 ** self.t))}

    @property
    def lr(self) -> float:
        return self.optimizer.lr

    @lr.setter
    def lr(self, value: float) -> None:
        """A new learning rate from the next step on (a schedule sets it between epochs); a NaN, infinite,
        zero or negative one is refused here (check.check_hyperparameter), before any dispatch."""
        self.optimizer.lr = check.check_hyperparameter("lr", value)
        self.set_hyperparameters()

    # --- training -----------------------------------------------------------------------------
    def _need_data(self) -> None:
        if not self.n:
            raise RuntimeError(f"this {type(self).__name__} has no training images: pass images and labels")

    def batch(self, step: int) -> tuple[int, int]:
        """(start, size) of step `step` of an epoch: the last batch holds the n % batch_size left over."""
        start = step * self.batch_size
        return start, min(self.batch_size, self.n - start)

    def start_epoch(self, epoch: int, order=None) -> None:
        """Write the epoch's sample order (reference.epoch_order unless given) and bind the buffers."""
        self._need_data()
        self.epoch = int(epoch)
        self.write("order", reference.epoch_order(self.n, epoch, self.seed) if order is None else order)
        self.bind()

    def check(self, first: int, end: int, pending=None) -> float:
        """Read back the loss sums of steps [first, end) of the current epoch (now, or from `pending`, their
        queue_losses) and stop at the first step whose loss diverged (reference.check_loss); returns their sum."""
        sums = self.loss_sums(first, end, pending)
        self._counts["readbacks"] += 1
        for step, total in enumerate(sums, start=first):
            reference.check_loss(total / self.batch(step)[1], epoch=self.epoch, step=step, lr=self.lr,
                                 optimizer=self.kind, n_classes=self.C)
        return float(np.sum(sums))

    def loss_sums(self, first: int, end: int, pending=None) -> np.ndarray:
        """The loss sum of each of steps [first, end) of the current epoch (float64): read now, or taken
        from `pending`, the read queue_losses(first, end) queued earlier."""
        values = pending.result() if pending is not None else self.read(*self.loss_run(first, end))
        return self.step_losses(values, first, end)

    def queue_losses(self, first: int, end: int):
        """Queue the read of the losses of steps [first, end) (GPUArray.read_later); nothing waits."""
        name, start, count = self.loss_run(first, end)
        return self.arrays[name].read_later(start, count)

    def run_steps(self, first: int, end: int) -> None:
        """Queue steps [first, end) of the current epoch: step(s) for each (a persistent trainer issues
        them as one dispatch instead)."""
        for s in range(first, end):
            self.step(s)

    def run_epoch(self, epoch: int, on_check=None, order=None) -> float:
        """One epoch of steps; every `check_every` steps the losses of those steps come back, are checked,
        and on_check(steps_done, mean_loss_of_those_steps) is called. Returns the epoch's mean loss over its
        samples. order: the epoch's sample order (default reference.epoch_order).

        The checks run one chunk of steps behind: the read of a chunk's losses is queued before the next
        chunk's steps and taken after them, so the GPU works on that next chunk while the CPU waits for the
        read and checks it. Reading right after a chunk would leave the GPU idle from the end of the chunk
        until the CPU had checked and queued the next one. A diverging run stops at the same step, one chunk
        of steps later (check_behind = False: right after the chunk)."""
        self.start_epoch(epoch, order)
        total, behind = 0.0, None
        chunks = [(first, min(first + self.check_every, self.steps_per_epoch))
                  for first in range(0, self.steps_per_epoch, self.check_every)]

        def checked(first, end, pending):
            part = self.check(first, end, pending)
            if on_check is not None:
                on_check(end, part / (min(self.n, end * self.batch_size) - first * self.batch_size))
            return part

        for first, end in chunks:
            pending = self.queue_losses(*behind) if behind is not None else None
            self.run_steps(first, end)
            if pending is not None:
                total += checked(*behind, pending)
            behind = (first, end)
            if not self.check_behind:
                total += checked(first, end, None)
                behind = None
        if behind is not None:
            total += checked(*behind, self.queue_losses(*behind))
        return total / self.n

    def train(self, epochs: int, *, lr_schedule=None, evaluate=("train", "test"), live=None,
              progress: bool = True, first_epoch: int = 0) -> dict:
        """Train `epochs` epochs; the history has reference.train's keys (loss, train_acc, test_acc,
        seconds) and lr. lr_schedule(epoch) -> lr is applied before each epoch. After each epoch the
        evaluation sets named in `evaluate` are scored on the GPU. live: a plots.LivePlot, updated at every
        check (loss) and every epoch (accuracies). seconds: each epoch's wall clock, ctx.finish() at both
        ends, evaluation left out. The progress bar and plot drawn at the checks stay in: at every check but
        the epoch's last the GPU runs the chunk of steps queued behind it meanwhile (check_behind), so that
        time is not the GPU's to give back (display_seconds: how long the drawing took in each epoch). started / ended: each epoch's perf_counter at its two ctx.finish()
        calls, to line other samples up with the epochs (frequency.FrequencyLog's, in notebook 05)."""
        from tqdm.auto import tqdm

        self._need_data()
        history = {"loss": [], "train_acc": [], "test_acc": [], "seconds": [], "display_seconds": [], "lr": [],
                   "started": [], "ended": []}
        bar = tqdm(total=epochs * self.steps_per_epoch, disable=not progress, unit="step",
                   desc=f"{self.K}-{self.H}-{self.C} {self.kind}, {self.dispatches_per_step} dispatches a step")
        for epoch in range(first_epoch, first_epoch + epochs):
            if lr_schedule is not None:
                self.lr = lr_schedule(epoch)
            done, display = [0], [0.0]

            def on_check(steps_done, loss, epoch=epoch):
                shown = time.perf_counter()
                bar.update(steps_done - done[0])
                done[0] = steps_done
                bar.set_postfix(epoch=epoch + 1, loss=f"{loss:.4f}")
                if live is not None:
                    live.update(epoch + steps_done / self.steps_per_epoch, loss=loss)
                display[0] += time.perf_counter() - shown

            self.ctx.finish()
            start = time.perf_counter()
            loss = self.run_epoch(epoch, on_check)
            self.ctx.finish()
            ended = time.perf_counter()
            history["seconds"].append(ended - start)
            history["started"].append(start)
            history["ended"].append(ended)
            history["display_seconds"].append(display[0])
            self.epochs_trained += 1
            history["loss"].append(loss)
            history["lr"].append(self.lr)
            for name in evaluate:
                if name in self.eval_sets:
                    history[f"{name}_acc"].append(self.accuracy(name))
            if live is not None:
                live.update(epoch + 1, **{f"{name}_acc": history[f"{name}_acc"][-1]
                                          for name in ("train", "test") if name in evaluate and history[f"{name}_acc"]})
        bar.close()
        return history

    # --- evaluation ---------------------------------------------------------------------------
    def add_eval_set(self, name: str, images, labels) -> None:
        """Keep an evaluation set resident on the GPU (uint8 images, packed once) for accuracy(name)."""
        if name == "train":
            raise ValueError("'train' is the resident training set; give the evaluation set another name")
        words = pack_images(images, self.K)
        labels = check_labels(labels, len(words), self.C)
        if name in self.eval_sets:  # replaced: free the old images
            self.eval_sets.pop(name)[0].release()
        self.eval_sets[name] = (gl.upload(self.ctx, words, f"{name} images"), labels)

    GIVEN = "images given"   # the evaluation set that images passed to predict() go into (replaced each call)

    def eval_set(self, name):
        """(images GPUArray, labels) of a resident evaluation set; a clear error naming the ones there are.
        `name` may instead be uint8 images (n, 28, 28) or (n, K), checked as the trainers check theirs:
        they are uploaded as the set "images given" (replacing the last ones given), labels unknown (-1)."""
        if not isinstance(name, str):
            if isinstance(name, (bytes, int, float)) or name is None:
                raise TypeError(f"an evaluation set is named by a str (it has {sorted(self.eval_sets)}) or "
                                f"given as uint8 images (n, 28, 28); got {type(name).__name__}")
            images = np.asarray(name)
            if images.ndim == 2 and images.size == self.K and images.shape[1] != self.K:
                images = images[None]   # one image (28, 28)
            words = pack_images(images, self.K)
            if self.GIVEN in self.eval_sets:
                self.eval_sets.pop(self.GIVEN)[0].release()
            self.eval_sets[self.GIVEN] = (gl.upload(self.ctx, words, self.GIVEN), np.full(len(words), -1))
            return self.eval_sets[self.GIVEN]
        if name not in self.eval_sets:
            raise KeyError(f"no evaluation set {name!r} on this trainer (it has {sorted(self.eval_sets)}): "
                           f"add one with trainer.add_eval_set({name!r}, images, labels), or pass uint8 "
                           f"images to predict")
        return self.eval_sets[name]

    def accuracy(self, name: str = "test") -> float:
        """Fraction of evaluation set `name` predicted right (predictions made on the GPU)."""
        if not isinstance(name, str):
            raise TypeError(f"accuracy takes the name of an evaluation set (it has {sorted(self.eval_sets)}), "
                            f"not {type(name).__name__}: add images with their labels by add_eval_set first")
        return float(np.mean(self.predict(name) == self.eval_set(name)[1]))

    # --- counting and cleaning up -------------------------------------------------------------
    @property
    def counts(self) -> dict:
        """Steps and readbacks since construction (or reset_counts()); dispatches and barriers follow
        from the steps (each step issues dispatches_per_step of each)."""
        steps = self._counts["steps"]
        return {"steps": steps, "dispatches": steps * self.dispatches_per_step,
                "barriers": steps * self.dispatches_per_step, "readbacks": self._counts["readbacks"]}

    def reset_counts(self) -> None:
        self._counts = {"steps": 0, "readbacks": 0}

    def release(self) -> None:
        """Free the trainer's GPU buffers (all of MNIST: about 50 MB); it is unusable after."""
        for name, (images, _) in self.eval_sets.items():
            if name != "train":
                images.release()
        for array in self.arrays.values():
            array.release()
        for kernel in getattr(self, "kernels", {}).values():
            kernel.program.release()
        self.arrays, self.eval_sets, self.n = {}, {}, 0

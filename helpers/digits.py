"""A drawn digit made MNIST-like, and read by the trained net in one shader. Introduced in notebook 10.

MNIST's digits were made from scanned black-and-white ones: each digit's ink was scaled, keeping its
aspect ratio, to fit a 20×20 box (with anti-aliasing, so edges became grey levels), then placed in a
28×28 field so that its centre of mass (the ink-weighted mean pixel position) sat at the field's centre.
`mnist_like` does the same to any grey image; `rasterise` turns pen strokes (polylines) into such an
image; `ShaderNet` runs the net's forward pass and softmax on the GPU and times upload, kernel and
readback apart.

    image = mnist_like(rasterise(strokes, size=280, width=22))   # uint8 (28, 28), as MNIST stores digits
    net = ShaderNet(ctx, params)                                  # W1, b1, W2, b2 uploaded once
    p = net.probabilities(image)                                  # (1, 10), float32, rows sum to 1
    reading = net.read(image)                                     # one image, with its three timings

Shapes: strokes are lists of (x, y) points in pixels of the drawing (x to the right, y down).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from . import data, gl, mlp, timing
from .timing import A_FASTER, B_FASTER, SAME, Timing, Verdict

BOX, FIELD = 20, 28   # MNIST: ink scaled to fit BOX×BOX, centred in FIELD×FIELD
CENTRE = 14.0         # where the centre of mass goes (row and column), as
                      # measured on MNIST's test set: its digits' mean centre of mass is (14.0, 14.0)
SHADER = "fused_predict_2_softmax.comp"


# --- strokes -> pixels -------------------------------------------------------------------------

def rasterise(strokes, size: int = 280, width: float = 22.0) -> np.ndarray:
    """float32 (size, size) in [0, 1]: each polyline drawn with a round pen `width` pixels wide, its edge
    anti-aliased (a pixel's ink falls from 1 to 0 over the pixel its centre lies within half a pixel of
    the pen's edge). A stroke of one point is a dot. Points outside the drawing are clipped by it."""
    image = np.zeros((size, size), np.float32)
    radius = width / 2
    for stroke in strokes:
        points = np.asarray(stroke, np.float64).reshape(-1, 2)
        if len(points) == 0:
            continue
        if not np.all(np.isfinite(points)):
            raise ValueError(f"stroke points must be finite (x, y) pixels, got {points[~np.isfinite(points).all(1)][:3]}")
        if len(points) == 1:
            points = np.vstack([points, points])
        for (x0, y0), (x1, y1) in zip(points[:-1], points[1:]):
            left, right = int(max(0, np.floor(min(x0, x1) - radius - 1))), int(min(size, np.ceil(max(x0, x1) + radius + 2)))
            top, bottom = int(max(0, np.floor(min(y0, y1) - radius - 1))), int(min(size, np.ceil(max(y0, y1) + radius + 2)))
            if left >= right or top >= bottom:
                continue
            py, px = np.mgrid[top:bottom, left:right] + 0.5      # pixel centres
            dx, dy = x1 - x0, y1 - y0
            length2 = dx * dx + dy * dy
            t = 0.0 if length2 == 0 else np.clip(((px - x0) * dx + (py - y0) * dy) / length2, 0, 1)
            distance = np.hypot(px - (x0 + t * dx), py - (y0 + t * dy))
            ink = np.clip(radius + 0.5 - distance, 0, 1)
            np.maximum(image[top:bottom, left:right], ink, out=image[top:bottom, left:right])
    return image


# --- MNIST's preprocessing ---------------------------------------------------------------------

def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) matrix resampling a line of n_in pixels to n_out: output pixel i is the mean of the
    input over its footprint [i, i + 1) · n_in / n_out, each input pixel weighted by how much of it lies
    inside. Shrinking averages (anti-aliasing); enlarging repeats pixels, blending at their borders."""
    edges = np.arange(n_out + 1) * (n_in / n_out)
    starts, ends = edges[:-1, None], edges[1:, None]
    pixel = np.arange(n_in)[None, :]
    overlap = np.clip(np.minimum(ends, pixel + 1) - np.maximum(starts, pixel), 0, None)
    return overlap / (n_in / n_out)


def centre_of_mass(image: np.ndarray) -> tuple[float, float]:
    """(row, column) of the ink-weighted mean pixel position (pixel i's centre is at i); the image's
    middle when it has no ink."""
    image = np.asarray(image, np.float64)
    total = image.sum()
    if total == 0:
        return (image.shape[0] - 1) / 2, (image.shape[1] - 1) / 2
    rows, cols = np.indices(image.shape)
    return float((rows * image).sum() / total), float((cols * image).sum() / total)


def mnist_like(image, box: int = BOX, field: int = FIELD) -> np.ndarray:
    """uint8 (field, field): `image` (2-D; uint8 0..255, or float in [0, 1]; ink bright on dark) the way
    MNIST's digits were made: the bounding box of its ink scaled, keeping its aspect ratio, so its longer
    side is `box` pixels (area-averaged, so edges become grey), then placed so its centre of mass sits at
    (CENTRE, CENTRE), moved back inside the field where that would cut ink off. No ink: all zeros."""
    image = np.asarray(image)
    if image.ndim != 2:
        raise ValueError(f"mnist_like takes one 2-D image (rows, columns), got shape {image.shape}; "
                         "for a stack, call it on each image")
    if image.dtype == np.uint8:
        image = image / np.float64(255)
    else:
        image = np.asarray(image, np.float64)
        if not np.all(np.isfinite(image)) or image.min() < 0 or image.max() > 1:
            raise ValueError("a float image must hold values in [0, 1] (0 paper, 1 ink); "
                             "scale it, or pass MNIST's uint8 pixels as they are")
    out = np.zeros((field, field), np.uint8)
    rows, cols = np.flatnonzero(image.any(1)), np.flatnonzero(image.any(0))
    if len(rows) == 0:
        return out
    crop = image[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    h, w = crop.shape
    scale = box / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = area_weights(h, nh) @ crop @ area_weights(w, nw).T
    cy, cx = centre_of_mass(small)
    top = int(np.clip(np.floor(CENTRE - cy + 0.5), 0, field - nh))
    left = int(np.clip(np.floor(CENTRE - cx + 0.5), 0, field - nw))
    out[top:top + nh, left:left + nw] = np.clip(np.rint(small * 255), 0, 255).astype(np.uint8)
    return out


def mnist_like_all(images) -> np.ndarray:
    """uint8 (N, 28, 28): mnist_like of each image of a stack (N, rows, columns)."""
    return np.stack([mnist_like(image) for image in images])


def mean_abs_difference(a, b) -> float:
    """Mean |a - b| over every pixel of two uint8 stacks, in grey levels of 255."""
    return float(np.abs(np.asarray(a, np.int16) - np.asarray(b, np.int16)).mean())


# --- the net in one shader ---------------------------------------------------------------------

class Reading(NamedTuple):
    image: np.ndarray          # uint8 (28, 28): what the net sees
    probabilities: np.ndarray  # float32 (10,): the shader's softmax
    label: int                 # the most probable class
    blank: bool                # no ink: the net still answers, but nothing was drawn
    seconds: dict              # {"upload": s, "kernel": s, "readback": s}
    clock: str                 # the clock the kernel's time came from (timing.Clock.source)


class ShaderNet:
    """The trained n_in-H-10 net's forward pass and softmax on the GPU, one dispatch of
    fused_predict_2_softmax: the images go up as uint8 (4 pixels a word), the probabilities come back.
    params: {W1, b1, W2, b2} (mlp.load_params or trainer.read_params()), uploaded once.
    capacity: the most images one call takes."""

    def __init__(self, ctx, params: dict, capacity: int = 1, defines: dict | None = None):
        self.ctx = ctx
        n_in, hidden = np.shape(params["W1"])
        n_out = np.shape(params["W2"])[1]
        if n_in % 4 or n_out != 10:
            raise ValueError(f"ShaderNet runs n_in-H-10 nets with n_in a multiple of 4, got W1 {np.shape(params['W1'])}, "
                             f"W2 {np.shape(params['W2'])}")
        self.n_in, self.hidden, self.capacity = int(n_in), int(hidden), int(capacity)
        layout, total = mlp.param_layout(mlp.param_shapes(n_in, hidden, n_out))   # back to back, as the banner says
        self.params = gl.upload(ctx, mlp.flatten(params, layout, total), "params")
        self.kernel = gl.Kernel(ctx, SHADER, dict(MAX_IN=n_in, MAX_H=max(hidden, 4), VEC4=int(hidden % 4 == 0),
                                                  **(defines or {})))
        self.images = gl.empty(ctx, (self.capacity, n_in // 4), np.uint32, name="images", fill=0)
        self.out = gl.empty(ctx, (self.capacity, n_out), name="probabilities")
        self.clock = timing.Clock(ctx)
        self.dispatch(1)   # the driver finishes compiling at the first dispatch: not part of any reading
        self.ctx.finish()

    def _words(self, images) -> np.ndarray:
        images = np.asarray(images)
        if images.dtype != np.uint8:
            raise TypeError(f"ShaderNet takes uint8 images (0..255, as mnist_like returns), got {images.dtype.name}")
        images = images.reshape(-1, self.n_in) if images.size % self.n_in == 0 else None
        if images is None or not 1 <= len(images) <= self.capacity:
            raise ValueError(f"ShaderNet takes 1 to {self.capacity} images of {self.n_in} pixels "
                             f"(make it with capacity=N for more)")
        return data.pack_images(images)

    def upload(self, images) -> int:
        words = self._words(images)
        self.images.write(words.reshape(-1))
        return len(words)

    def dispatch(self, count: int) -> None:
        self.kernel.run(*self.kernel.groups(count=count), bindings={3: self.params, 10: self.images, 11: self.out},
                        n_in=self.n_in, n_hidden=self.hidden, count=count)

    def probabilities(self, images) -> np.ndarray:
        """float32 (count, 10): each image's class probabilities (images: uint8, count × n_in pixels)."""
        count = self.upload(images)
        self.dispatch(count)
        return self.out.read(first=0, count=count * 10).reshape(count, 10)

    def read(self, image) -> Reading:
        """One image through the shader with upload, kernel and readback timed apart: the upload by the
        wall clock (self.clock.wall: ctx.finish() before and after), the readback by the wall clock (a read
        waits for the GPU), the kernel by self.clock (a GPU timer
        query where the driver has a trustworthy one, else the wall clock around ctx.finish())."""
        upload = self.clock.wall(lambda: self.upload(image))
        kernel = self.clock.kernel(lambda: self.dispatch(1))
        start = time.perf_counter()
        p = self.out.read(first=0, count=10)
        readback = time.perf_counter() - start
        image = np.asarray(image, np.uint8).reshape(FIELD, FIELD)
        return Reading(image, p, int(p.argmax()), not image.any(),
                       {"upload": upload, "kernel": kernel, "readback": readback}, self.clock.source)

    def split(self, images, repeat: int = 30, warmup: float | None = None) -> dict:
        """{"upload", "kernel", "readback"}: Timings of the prediction of `images` (one, or up to capacity),
        its three parts taken in turn (upload, kernel, readback, upload, ...: timing.measure_interleaved)
        after a warm-up by time, so a drift of the clock falls on all three; the kernel by self.clock, the
        two transfers by wall clock."""
        count = self.upload(images)

        def readback():
            start = time.perf_counter()
            self.out.read(first=0, count=count * 10)
            return time.perf_counter() - start

        parts = timing.measure_interleaved({"upload": lambda: self.clock.wall(lambda: self.upload(images)),
                                            "kernel": lambda: self.clock.kernel(lambda: self.dispatch(count)),
                                            "readback": readback}, repeat, warmup)
        return {**parts, "kernel": Timing(parts["kernel"].samples, self.clock.source)}

    def release(self) -> None:
        for array in (self.params, self.images, self.out):
            array.release()


def timings_line(reading: Reading) -> str:
    """'this reading, timed once: upload 21 µs · kernel 9 µs (GPU timer query) · readback 30 µs (wall clock)'."""
    s = reading.seconds
    return (f"this reading, timed once: upload {s['upload'] * 1e6:.0f} µs · kernel {s['kernel'] * 1e6:.0f} µs ({reading.clock}) · "
            f"readback {s['readback'] * 1e6:.0f} µs (wall clock)")


# --- findings as sentences ---------------------------------------------------------------------

ONE_POINT = 0.01   # accuracies within this of each other: the preprocessing keeps what the net reads


def preprocessing_sentence(difference: float, unchanged: float, before: float, after: float, n: int) -> str:
    """What re-making n MNIST test digits the MNIST way did: the mean absolute pixel difference (grey
    levels of 255), the share of images left unchanged, and the net's accuracy before and after: 'stayed at
    97.84%' where the two are equal as printed, 'went from 97.80% to 97.81%' otherwise; within ONE_POINT of
    each other, the preprocessing gives the net what MNIST gave it."""
    first, second = f"{before:.2%}", f"{after:.2%}"
    moved = f"stayed at {first}" if first == second else f"went from {first} to {second}"
    if abs(after - before) <= ONE_POINT + 1e-12:
        verdict = (", so" if first == second else ": within a point, so") + " the preprocessing gives the net what MNIST gave it"
    else:
        verdict = ": more than a point apart, so the preprocessing does not make digits the way MNIST's were made"
    return (f"The {n:,} test digits, re-made the MNIST way, changed by {difference:.3f} grey levels of 255 a pixel "
            f"on average ({unchanged:.2%} of them not at all); the net's test accuracy {moved}{verdict}")


TRANSFERS_LONGER, KERNEL_LONGER = "transfers take longer", "kernel takes longer"   # split_verdict's outcomes


def split_verdict(upload: Timing, kernel: Timing, readback: Timing) -> Verdict:
    """A drawn digit's prediction in parts (ShaderNet.split: interleaved repeats, so sample i of each part
    comes from the same round) and which costs more, the two transfers together or the kernel, from their
    distributions (timing.compare): TRANSFERS_LONGER, KERNEL_LONGER or timing.SAME."""
    transfers = Timing(tuple(u + r for u, r in zip(upload.samples, readback.samples)), timing.WALL)
    outcome = timing.compare(kernel, transfers)
    head = (f"a drawn digit's prediction, {len(kernel.samples)} repeats (median, 20–80 % band): upload "
            f"{upload.text()} by wall clock, kernel {kernel.text()} by {kernel.clock}, readback {readback.text()} by "
            "wall clock")
    if outcome == A_FASTER:
        tail = (f"the two transfers together (each round's upload plus its readback: {transfers.text()}) took longer "
                f"than the kernel, {timing.times(timing.ratio(transfers, kernel), digits=2)}× its time")
    elif outcome == B_FASTER:
        tail = (f"the kernel took longer than the two transfers together (each round's upload plus its readback: "
                f"{transfers.text()}), {timing.times(timing.ratio(kernel, transfers), digits=2)}× their time")
    else:
        tail = (f"the kernel and the two transfers together (each round's upload plus its readback: "
                f"{transfers.text()}) are {timing.the_same(kernel, transfers)}")
    return Verdict(f"{head}: {tail}", {A_FASTER: TRANSFERS_LONGER, B_FASTER: KERNEL_LONGER, SAME: SAME}[outcome])


# --- which net reads the digits ------------------------------------------------------------------

WEAK = 0.95   # a net that reads fewer of MNIST's test digits right than this misreads many drawn ones
STRONG_NET, WEAK_NET = "strong net", "weak net"   # net_verdict's outcomes


def epochs_text(epochs) -> str:
    """'1 epoch', '10 epochs', or '? epochs' where the count is not known."""
    return f"{epochs} epoch" + ("" if epochs == 1 else "s")


def _count(n) -> str:
    """60,000 for an integer, the value as it is otherwise ('?' where a record left it out)."""
    return f"{n:,}" if isinstance(n, int) else str(n)


def provenance_text(provenance: dict | None, here: tuple | None = None) -> str:
    """Where a saved net came from, as trainer.save recorded it (mlp.load_params(..., provenance=True)), with
    the test accuracy it recorded; here = (accuracy, n), the accuracy measured on n test digits in this run:
    where the recorded one is the same (as printed, on as many digits), it is left out, since the sentence
    that uses this text prints the one measured here."""
    if not provenance:
        return "no record of how it was trained (saved without one)"
    p = provenance
    trained = (f"a {p.get('mode', '?')}-mode run of {epochs_text(p.get('epochs', '?'))} on "
               f"{_count(p.get('train_images', '?'))} training images on {p.get('card', '?')}")
    recorded = p.get("test_accuracy")
    same = (here is not None and recorded is not None and f"{recorded:.2%}" == f"{here[0]:.2%}"
            and p.get("test_images") == here[1])
    if recorded is not None and not same:
        trained += f", {recorded:.2%} right on its {_count(p.get('test_images', '?'))} test images when it was saved"
    return "trained by " + trained


def retrain_reason(provenance: dict | None, accuracy: float, quick: bool) -> str:
    """Why a full run should not use a saved net ('' to use it): one trained in QUICK mode, or one that reads
    fewer than WEAK of the test digits right. A QUICK run uses any net (and net_verdict says if it is weak)."""
    if quick:
        return ""
    if provenance and provenance.get("mode") == "QUICK":
        return "the saved net was trained in QUICK mode (a few thousand images, one epoch)"
    if accuracy < WEAK:
        return f"the saved net reads only {accuracy:.2%} of the test digits right (a strong one: at least {WEAK:.0%})"
    return ""


def net_verdict(source: str, accuracy: float, n: int) -> Verdict:
    """Which net reads your digits (`source`: where it came from) and whether it is strong enough: STRONG_NET
    at WEAK or more of the n test digits right, else WEAK_NET, saying that its readings will often be wrong."""
    head = f"the net that reads your digits: {source}; on this notebook's {n:,} test digits it is right {accuracy:.2%} of the time"
    if accuracy >= WEAK:
        return Verdict(f"{head}: a strong net (at least {WEAK:.0%})", STRONG_NET)
    return Verdict(f"{head}: a weak net (below {WEAK:.0%}), so expect it to misread many of your digits; run "
                   "notebook 05 in full (without QUICK=1), then this notebook, for a strong one", WEAK_NET)


def caveat(accuracy: float) -> str:
    """The pad's warning beside each prediction: '' for a strong net, else what the net's accuracy is."""
    return "" if accuracy >= WEAK else f"weak net: {accuracy:.1%} of test digits right, so often wrong"

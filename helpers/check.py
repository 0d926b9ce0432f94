"""compare(): one printed line per tensor, OK or MISMATCH, and a bool. Introduced in notebook 01.
Below it, the input checks every trainer shares (labels, images, parameters, optimizer hyperparameters).

The error measure is relative to the reference's largest magnitude,
    rel = max|got - ref| / max|ref|,
which stays meaningful for entries near zero (an element-wise relative error would not). A NaN or a
shape mismatch is always a MISMATCH, so an output element a shader never wrote (poisoned with NaN) fails.
"""

from __future__ import annotations

import math

import numpy as np


def rel_error(got, ref) -> float:
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return float("inf")
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    diff = np.max(np.abs(got - ref)) if ref.size else 0.0
    return float(diff / scale) if scale > 0 else float(diff)


def compare(name: str, got, ref, rtol: float = 1e-5, verbose: bool = True) -> bool:
    """Print `name | max abs diff | rel error | OK` (or MISMATCH) and return whether rel error <= rtol.

    verbose=False prints only `name: OK`, a line that never changes between runs (for checked cells).
    """
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        print(f"{name:<12s} | shape {got.shape} != reference {ref.shape} | MISMATCH")
        return False
    rel = rel_error(got, ref)
    ok = rel <= rtol
    if verbose:
        n_nan = int(np.sum(~np.isfinite(got)))
        diff = np.max(np.abs(got.astype(np.float64) - ref)) if got.size else 0.0
        extra = f" | {n_nan} non-finite" if n_nan else ""
        print(f"{name:<12s} | max abs diff {diff:.3e} | rel error {rel:.2e}{extra} | {'OK' if ok else 'MISMATCH'}")
    else:
        print(f"{name}: {'OK' if ok else 'MISMATCH'}")
    return ok


# ---------------------------------------------------------------------------------------------
# Input checks: the one set that the NumPy trainer (reference.train) and the GPU trainers (mlp.Trainer)
# share, so a mistake gets the same message whichever trainer meets it.
# ---------------------------------------------------------------------------------------------

PARAM_NAMES = ("W1", "b1", "W2", "b2")


def _non_finite(mask: np.ndarray, axes=("row", "column")) -> str:
    """'3 NaN or infinite values (the first at row 5, column 17)' for a boolean mask of the bad entries."""
    where = [int(i) for i in np.argwhere(mask)[0]]
    at = (f"index {where[0]}" if mask.ndim == 1 else f"{axes[0]} {where[0]}, {axes[1]} {where[1]}"
          if mask.ndim == 2 else f"index {tuple(where)}")
    count = int(mask.sum())
    return f"{count} NaN or infinite value{'s' if count > 1 else ''} (the first at {at})"


def check_labels(labels, n_images: int, n_classes: int) -> np.ndarray:
    """The labels as int64 after checking them: integers, one per image, each in 0..n_classes-1. A label
    outside that range would make NumPy's indexing wrap (-1 is class 9) and the shaders read past the
    logits: training would go on, on garbage, without an error."""
    if labels is None:
        raise ValueError(f"training needs one label per image: got {n_images} images and no labels")
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != n_images:
        raise ValueError(f"training needs one label per image: got {n_images} images and labels of shape "
                         f"{labels.shape}")
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        whole = (np.issubdtype(labels.dtype, np.floating) and np.all(np.isfinite(labels))
                 and np.all(labels == np.round(labels)))
        raise TypeError(f"labels must be integers (class numbers 0..{n_classes - 1}), got {labels.dtype}"
                        + ("; they are whole numbers, so labels.astype(np.int64) converts them" if whole else ""))
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        bad = (labels < 0) | (labels >= n_classes)
        raise ValueError(f"labels must lie in 0..{n_classes - 1} (the net has {n_classes} outputs); got "
                         f"{labels.min()}..{labels.max()}: {int(bad.sum())} outside, the first {labels[bad][0]} "
                         f"at index {int(np.argmax(bad))}")
    return labels.astype(np.int64)


def check_images(images, n_pixels: int, *, raw: bool) -> np.ndarray:
    """The images after checking them against a net with n_pixels inputs.

    raw=True (the GPU trainers): uint8 pixels 0..255, (n, 28, 28) or (n, n_pixels), or already packed
    uint32 words (data.pack_images). raw=False (reference.train): float pixels scaled to [0, 1],
    (n, n_pixels), as data.normalise returns them; every value finite."""
    images = np.asarray(images)
    if images.ndim < 2 or not len(images):
        raise ValueError(f"images must be an array (n, {n_pixels}) or (n, 28, 28) with n >= 1, got shape "
                         f"{images.shape}")
    if raw:
        if images.dtype == np.uint32 and images.ndim == 2:
            return images
        if images.dtype != np.uint8:
            raise TypeError(f"this trainer takes the raw uint8 images from load_mnist (pixels 0..255, or uint32 "
                            f"(n, W) already packed), not {images.dtype.name} {images.shape}; normalise()'s "
                            "float32 is for the NumPy reference")
    elif not np.issubdtype(images.dtype, np.floating):
        raise TypeError(f"images are {images.dtype.name}, raw pixels: the NumPy trainer takes float pixels scaled "
                        "to [0, 1]; pass data.normalise(images)")
    pixels = int(np.prod(images.shape[1:]))
    if pixels != n_pixels:
        raise ValueError(f"images have {pixels} pixels each, but W1 has {n_pixels} rows: pass images of the size "
                         f"the net was built for (MNIST: 28 x 28 = 784)")
    if raw:
        return images
    images = images.reshape(len(images), -1)
    finite = np.isfinite(images)
    if not finite.all():
        raise ValueError(f"images hold {_non_finite(~finite, ('image', 'pixel'))}: a pixel must be a "
                         "finite number; drop or repair those images")
    low, high = float(images.min()), float(images.max())
    if low < 0 or high > 1:
        raise ValueError(f"image pixels lie in {low:g}..{high:g}, but the net trains on pixels scaled to [0, 1]"
                         + ("; pass data.normalise(images) (it divides the raw 0..255 by 255)" if high > 1 else ""))
    return images


def check_params(params, shapes: dict | None = None, *, source: str = "params", finite: bool = True) -> dict:
    """W1, b1, W2, b2 as float32 arrays after checking them: all four there, floats, finite (unless
    finite=False), and shaped as a K-H-C net (W1 (K, H), b1 (H,), W2 (H, C), b2 (C,)), or as `shapes` when
    given (the net they go into). A pair saved transposed (PyTorch's nn.Linear keeps a weight as (out, in))
    is named as such."""
    missing = [name for name in PARAM_NAMES if name not in params]
    if missing:
        raise KeyError(f"{source} lacks {missing}: an MLP's parameters are {list(PARAM_NAMES)}")
    arrays = {name: np.asarray(params[name]) for name in PARAM_NAMES}
    for name, value in arrays.items():
        if not np.issubdtype(value.dtype, np.floating):
            raise TypeError(f"{name} in {source} is {value.dtype}; parameters are floats (float32)")
    if shapes is None:
        W1, W2 = arrays["W1"].shape, arrays["W2"].shape
        if len(W1) == 2 and len(W2) == 2:
            shapes = {"W1": W1, "b1": (W1[1],), "W2": (W1[1], W2[1]), "b2": (W2[1],)}
            got = {name: value.shape for name, value in arrays.items()}
            if got != shapes and got == {"W1": W1, "b1": (W1[0],), "W2": (W2[0], W1[0]), "b2": (W2[0],)}:
                raise ValueError(f"W1 is {W1} and W2 is {W2}; a net with b1 {got['b1']} and b2 {got['b2']} has "
                                 f"W1 {W1[::-1]} and W2 {W2[::-1]}: saved transposed, as PyTorch's nn.Linear "
                                 "stores it? pass W1.T and W2.T")
        else:
            raise ValueError(f"W1 and W2 in {source} must be matrices, got shapes {W1} and {W2}")
    for name in PARAM_NAMES:
        got, want = arrays[name].shape, tuple(shapes[name])
        if got != want:
            hint = (": saved transposed, as PyTorch's nn.Linear stores it? pass its .T"
                    if len(got) == 2 and got[::-1] == want else "")
            raise ValueError(f"{name} is {got}; this net's {name} is {want}{hint}")
    for name, value in arrays.items() if finite else ():
        ok = np.isfinite(value)
        if not ok.all():
            raise ValueError(f"{name} in {source} holds {_non_finite(~ok)}: "
                             "weights must be finite numbers (start again from reference.init_params, or from "
                             "weights saved before the run diverged)")
    return {name: value.astype(np.float32) for name, value in arrays.items()}


# (low, high, low included, high included) for each optimizer hyperparameter: lr and eps positive,
# momentum and Adam's betas in [0, 1).
HYPERPARAMETERS = {"lr": (0.0, float("inf"), False, False), "eps": (0.0, float("inf"), False, False),
                   "mu": (0.0, 1.0, True, False), "beta1": (0.0, 1.0, True, False),
                   "beta2": (0.0, 1.0, True, False)}
_MEANING = {"lr": "the learning rate lr", "eps": "Adam's eps", "mu": "the momentum mu",
            "beta1": "Adam's beta1", "beta2": "Adam's beta2"}


def check_hyperparameter(name: str, value) -> float:
    """`value` as a float if it suits optimizer hyperparameter `name` (HYPERPARAMETERS): a finite number,
    lr and eps above 0, mu, beta1 and beta2 in [0, 1). Otherwise a ValueError naming the value and the
    range, raised where the value is set, before any step uses it."""
    low, high, low_in, high_in = HYPERPARAMETERS[name]
    span = (f"a finite number above {low:g}" if high == float("inf")
            else f"a number in {'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{_MEANING[name]} must be {span}, got {value!r} ({type(value).__name__})") from None
    inside = (math.isfinite(number) and (number >= low if low_in else number > low)
              and (number <= high if high_in else number < high))
    if not inside:
        raise ValueError(f"{_MEANING[name]} must be {span}, got {name}={number}")
    return number


def check_optimizer(optimizer) -> None:
    """check_hyperparameter on each hyperparameter the optimizer has (lr, mu, beta1, beta2, eps)."""
    for name in HYPERPARAMETERS:
        if hasattr(optimizer, name):
            check_hyperparameter(name, getattr(optimizer, name))

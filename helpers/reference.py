"""The NumPy MLP that every notebook and test compares against: 784-H-10, ReLU, softmax cross-entropy.

Introduced in notebook 01. Works in float32 (what the GPU computes) and float64 (for gradient checks).

Shapes (B = batch size, H = hidden units):
    X  (B, 784)   W1 (784, H)   b1 (H,)   Z1 = X @ W1 + b1   A1 = relu(Z1)   (B, H)
                  W2 (H, 10)    b2 (10,)  logits = A1 @ W2 + b2              (B, 10)
    loss = mean over the batch of -log softmax(logits)[label]

Row-major weights with the input dimension first, so each layer is one `A @ W`: the same matmul the
shaders compute.
"""

from __future__ import annotations

import math
import time

import numpy as np

from . import check


class TrainingDiverged(FloatingPointError):
    """The loss became NaN, infinite, or more than ten times the loss of guessing (see check_loss)."""


# Learning rates this series trains the 784-H-10 MLP with at batch 128 (notebooks 01, 05 and 06):
# SGD in every notebook; momentum and Adam as notebook 06 and helpers/bench/fused.py run them.
WORKING_LR = {"SGD": 0.3, "Momentum": 0.05, "Adam": 1e-3}
WORKING_BATCH_SIZE = 128
DIVERGED_FACTOR = 10   # a loss above this many times ln(n_classes), the loss of a uniform guess, is divergence


def check_loss(loss, *, epoch: int, step: int, lr: float, optimizer: str = "SGD", n_classes: int = 10) -> float:
    """Return `loss` as a float, or raise TrainingDiverged when it is NaN, infinite, or more than
    DIVERGED_FACTOR x ln(n_classes) (ten times the loss of guessing uniformly: no working run gets there).

    Every trainer (reference.train, gpu_mlp, fused_mlp) calls this with each step's mean loss it reads.
    `epoch` and `step` are indices from 0; the message counts both from 1, as the progress bars count epochs.
    The message names the epoch, the step, the loss and the learning rate; a rate above the one known to
    work for this model (WORKING_LR[optimizer]) is called too large and that one is given, a rate at or
    below it is not blamed (it is never advised as the fix for itself). `optimizer` is a name: "SGD",
    "Momentum" or "Adam" (e.g. type(opt).__name__).
    """
    loss = float(loss)
    limit = DIVERGED_FACTOR * math.log(n_classes)
    if math.isfinite(loss) and loss <= limit:
        return loss
    known = optimizer if optimizer in WORKING_LR else "SGD"
    working, also = WORKING_LR[known], " too"   # "Check too ..." after a sentence that blames lr
    rate, good = f"lr {number_text(lr)}", f"lr {number_text(working)}"
    if not (math.isfinite(lr) and lr > 0):
        cause = (f"The learning rate, {rate}, is not a usable number; {known} at batch {WORKING_BATCH_SIZE} trains "
                 f"it with {good}.")
    elif lr > working:
        cause = (f"The learning rate, {rate}, is too large for this model; {known} at batch {WORKING_BATCH_SIZE} "
                 f"trains it with {good}.")
    else:   # never advise the rate that just diverged
        cause = (f"The learning rate, {rate}, is no larger than the one {known} at batch {WORKING_BATCH_SIZE} "
                 f"trains this model with ({number_text(working)}), so it is unlikely to be the cause.")
        also = ""
    raise TrainingDiverged(
        f"Training diverged at epoch {epoch + 1}, step {step + 1}: the loss is {number_text(loss)}"
        + (f" (over {limit:.1f}, {DIVERGED_FACTOR}× the loss of guessing)" if math.isfinite(loss) else "")
        + f". {cause} Check{also} that the inputs are scaled to [0, 1] and "
        "the weights are finite.")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number_text(x: float) -> str:
    """A number for a reader, four significant digits at most: 17,480,000 (not 1.748e+07), 10,000 (not
    10000.0), 0.3, 0.001; beyond a thousand million or below a thousandth as 1.5 × 10¹² or 2 × 10⁻⁵;
    NaN and infinity in words."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "infinity" if x > 0 else "minus infinity"
    if x == 0:
        return "0"
    rounded = float(f"{x:.4g}")
    if 1e-3 <= abs(rounded) < 1e9:
        return f"{rounded:,.0f}" if abs(rounded) >= 1000 else f"{rounded:.4g}"
    mantissa, exponent = f"{rounded:.3e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------

def init_params(n_in: int = 784, n_hidden: int = 128, n_out: int = 10, seed: int = 0, dtype=np.float32) -> dict:
    """He initialisation: W ~ N(0, 2 / fan_in), biases zero. Same seed, same weights."""
    rng = np.random.default_rng(seed)
    return {
        "W1": (rng.standard_normal((n_in, n_hidden)) * np.sqrt(2.0 / n_in)).astype(dtype),
        "b1": np.zeros(n_hidden, dtype=dtype),
        "W2": (rng.standard_normal((n_hidden, n_out)) * np.sqrt(2.0 / n_hidden)).astype(dtype),
        "b2": np.zeros(n_out, dtype=dtype),
    }


def relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0)


def forward(params: dict, X: np.ndarray, masks=None):
    """logits (B, 10) and the cache backprop needs (X, Z1, A1).

    masks: None, or (input_mask (B, 784), hidden_mask (B, H)) for dropout at training time (notebook 07):
    float masks holding 1/keep for a kept unit and 0 for a dropped one (rng.dropout_mask). Then X is
    replaced by X * input_mask and A1 by relu(Z1) * hidden_mask, and the cache holds those."""
    if masks is not None:
        X = X * masks[0]
    Z1 = X @ params["W1"] + params["b1"]
    A1 = relu(Z1)
    if masks is not None:
        A1 = A1 * masks[1]
    logits = A1 @ params["W2"] + params["b2"]
    return logits, (X, Z1, A1)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, stable: subtracting the row max changes nothing mathematically and stops exp overflowing."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def softmax_xent(logits: np.ndarray, y: np.ndarray):
    """Mean cross-entropy over the batch, and its gradient with respect to the logits: (p - onehot) / B."""
    B = len(y)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_probs[np.arange(B), y].mean()
    dlogits = np.exp(log_probs)
    dlogits[np.arange(B), y] -= 1
    return loss, dlogits / B


def backward(params: dict, cache, dlogits: np.ndarray, hidden_mask=None) -> dict:
    """Gradients of the loss for every parameter, from dL/dlogits. hidden_mask: the dropout mask forward
    applied to A1 (None: no dropout); the gradient flows only through kept units, scaled as they were."""
    X, Z1, A1 = cache
    dA1 = dlogits @ params["W2"].T
    if hidden_mask is not None:
        dA1 = dA1 * hidden_mask
    dZ1 = dA1 * (Z1 > 0)
    return {
        "W2": A1.T @ dlogits, "b2": dlogits.sum(axis=0),
        "W1": X.T @ dZ1, "b1": dZ1.sum(axis=0),
    }


def loss_and_grads(params: dict, X: np.ndarray, y: np.ndarray, masks=None):
    """Mean loss and gradients; masks (input_mask, hidden_mask) for a dropout step, as in forward."""
    logits, cache = forward(params, X, masks)
    loss, dlogits = softmax_xent(logits, y)
    if masks is None:
        return loss, backward(params, cache, dlogits)
    return loss, backward(params, cache, dlogits, masks[1])


def max_norm(params: dict, c: float) -> None:
    """Max-norm constraint, in place (notebook 07): every hidden unit's incoming weights, a column of W1,
    rescaled to Euclidean norm c where its norm is above c (the bias b1 is left alone). Columns at or
    under c are not touched."""
    W1 = params["W1"]
    norms = np.sqrt((W1 * W1).sum(axis=0))
    over = norms > W1.dtype.type(c)
    W1[:, over] *= (W1.dtype.type(c) / norms[over]).astype(W1.dtype)


def train_step(params: dict, X: np.ndarray, y: np.ndarray, optimizer, *, masks=None, max_norm_c=None) -> float:
    """One training step in place: loss and gradients (with dropout masks if given), the optimizer's
    update, then the max-norm constraint if max_norm_c is given. Returns the batch's mean loss. The step
    the GPU's fused dropout trainer must equal (tests/test_dropout.py)."""
    loss, grads = loss_and_grads(params, X, y, masks)
    optimizer.step(params, grads)
    if max_norm_c is not None:
        max_norm(params, max_norm_c)
    return float(loss)


def predict(params: dict, X: np.ndarray, batch_size: int = 10_000) -> np.ndarray:
    return np.concatenate([forward(params, X[i:i + batch_size])[0].argmax(axis=1)
                           for i in range(0, len(X), batch_size)])


def accuracy(params: dict, X: np.ndarray, y: np.ndarray) -> float:
    return float((predict(params, X) == y).mean())


# ---------------------------------------------------------------------------------------------
# Optimizers: each updates params in place from grads
# ---------------------------------------------------------------------------------------------

class _Checked:
    """Each hyperparameter (lr, mu, beta1, beta2, eps) is checked where it is set (check.check_hyperparameter):
    a NaN, infinite, zero or negative learning rate is refused before any step uses it."""

    def __setattr__(self, name, value):
        if name in check.HYPERPARAMETERS:
            value = check.check_hyperparameter(name, value)
        super().__setattr__(name, value)


class SGD(_Checked):
    """p -= lr * g"""

    def __init__(self, lr: float):
        self.lr = lr

    def step(self, params: dict, grads: dict) -> None:
        for k in params:
            params[k] -= params[k].dtype.type(self.lr) * grads[k]


class Momentum(_Checked):
    """v = mu * v + g;  p -= lr * v   (heavy ball, as PyTorch's SGD with momentum)"""

    def __init__(self, lr: float, mu: float = 0.9):
        self.lr, self.mu, self.v = lr, mu, {}

    def step(self, params: dict, grads: dict) -> None:
        for k in params:
            v = self.v.setdefault(k, np.zeros_like(params[k]))
            v *= v.dtype.type(self.mu)
            v += grads[k]
            params[k] -= params[k].dtype.type(self.lr) * v


class Adam(_Checked):
    """m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr * m_hat / (sqrt(v_hat) + eps), t from 1."""

    def __init__(self, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.t, self.m, self.v = 0, {}, {}

    def step(self, params: dict, grads: dict) -> None:
        self.t += 1
        c1, c2 = 1 - self.beta1 ** self.t, 1 - self.beta2 ** self.t
        for k in params:
            dt = params[k].dtype.type
            m = self.m.setdefault(k, np.zeros_like(params[k]))
            v = self.v.setdefault(k, np.zeros_like(params[k]))
            m[...] = dt(self.beta1) * m + dt(1 - self.beta1) * grads[k]
            v[...] = dt(self.beta2) * v + dt(1 - self.beta2) * grads[k] * grads[k]
            params[k] -= dt(self.lr) * (m / dt(c1)) / (np.sqrt(v / dt(c2)) + dt(self.eps))


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------

def epoch_order(n: int, epoch: int, seed: int) -> np.ndarray:
    """The shuffled sample order of one epoch: depends only on (seed, epoch), so a GPU trainer can match it."""
    return np.random.default_rng([seed, epoch]).permutation(n).astype(np.uint32)


def train(params: dict, X: np.ndarray, y: np.ndarray, *, epochs: int, batch_size: int, lr: float = 0.1,
          seed: int = 0, optimizer=None, X_test=None, y_test=None, progress: bool = True) -> dict:
    """Mini-batch training in place. Returns a history: per-epoch loss, train/test accuracy, seconds.

    The last batch of an epoch holds the n % batch_size samples left over (its loss is their mean).
    X: float pixels in [0, 1] (data.normalise); y: integer labels 0..9. Images, labels, parameters and the
    learning rate are checked first (helpers.check, the checks the GPU trainers make), so a mistake is
    named, not found as a diverged loss.
    """
    from tqdm.auto import tqdm  # a widget in JupyterLab, text elsewhere

    optimizer = optimizer or SGD(lr)
    check.check_optimizer(optimizer)
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    check.check_params(params)
    n_in, n_classes = params["W1"].shape[0], params["b2"].shape[0]
    X, y = check.check_images(X, n_in, raw=False), check.check_labels(y, len(X), n_classes)
    if X_test is not None:
        X_test = check.check_images(X_test, n_in, raw=False)
        y_test = check.check_labels(y_test, len(X_test), n_classes)
    n = len(X)
    history = {"loss": [], "train_acc": [], "test_acc": [], "seconds": []}
    for epoch in range(epochs):
        order = epoch_order(n, epoch, seed)
        bar = tqdm(total=-(-n // batch_size), desc=f"epoch {epoch + 1}/{epochs}", disable=not progress, leave=True)
        start, total = time.perf_counter(), 0.0
        for step, i in enumerate(range(0, n, batch_size)):
            batch = order[i:i + batch_size]
            with np.errstate(over="ignore", invalid="ignore"):  # a diverging run ends below, with a message
                loss, grads = loss_and_grads(params, X[batch], y[batch])
            try:
                loss = check_loss(loss, epoch=epoch, step=step, lr=getattr(optimizer, "lr", lr),
                                  optimizer=type(optimizer).__name__, n_classes=params["b2"].shape[0])
            except TrainingDiverged:
                bar.close()
                raise
            optimizer.step(params, grads)
            total += loss * len(batch)
            bar.update(1)
        history["seconds"].append(time.perf_counter() - start)
        history["loss"].append(total / n)
        history["train_acc"].append(accuracy(params, X, y))
        if X_test is not None:
            history["test_acc"].append(accuracy(params, X_test, y_test))
        bar.set_postfix(loss=f"{total / n:.4f}")
        bar.close()
    return history


# ---------------------------------------------------------------------------------------------
# Gradient check
# ---------------------------------------------------------------------------------------------

def numerical_grads(params: dict, X: np.ndarray, y: np.ndarray, eps: float = 1e-5, max_per_param=None,
                    seed: int = 0) -> dict:
    """Central differences (L(p+eps) - L(p-eps)) / 2 eps. Use float64 params and X.

    `max_per_param` checks only that many randomly chosen entries of each parameter (None: all).
    Returns {name: (flat indices checked, numerical gradient at them)}.
    """
    rng = np.random.default_rng(seed)
    out = {}
    for name, p in params.items():
        flat = p.reshape(-1)
        idx = np.arange(flat.size)
        if max_per_param is not None and flat.size > max_per_param:
            idx = rng.choice(flat.size, max_per_param, replace=False)
        num = np.empty(len(idx))
        for j, i in enumerate(idx):
            old = flat[i]
            flat[i] = old + eps
            plus = softmax_xent(forward(params, X)[0], y)[0]
            flat[i] = old - eps
            minus = softmax_xent(forward(params, X)[0], y)[0]
            flat[i] = old
            num[j] = (plus - minus) / (2 * eps)
        out[name] = (idx, num)
    return out


def grad_check(params: dict, X: np.ndarray, y: np.ndarray, eps: float = 1e-5, max_per_param=None) -> dict:
    """Max relative error |analytic - numerical| / max(|analytic| + |numerical|, 1e-12) per parameter."""
    _, grads = loss_and_grads(params, X, y)
    errors = {}
    for name, (idx, num) in numerical_grads(params, X, y, eps, max_per_param).items():
        ana = grads[name].reshape(-1)[idx]
        errors[name] = float(np.max(np.abs(ana - num) / np.maximum(np.abs(ana) + np.abs(num), 1e-12)))
    return errors

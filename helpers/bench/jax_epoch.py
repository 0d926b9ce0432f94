"""Benchmark: one MNIST epoch in JAX, in a process of its own, for the fused benchmark's table.

    python -m helpers.bench.jax_epoch --hidden 128 --optimizer sgd --lr 0.3 --repeat 5 --precision highest
    python -m helpers.bench.jax_epoch --hidden 128 --optimizer momentum --lr 0.05 --mu 0.9 --quick

For the fused benchmark (helpers/bench/fused.py; notebooks 06 and 08), which calls jax_rows below. It measures the
series' model and recipe (784-H-10, ReLU, softmax cross-entropy, batch 128, reference.init_params seed 0,
reference.epoch_order seed 0, SGD or momentum) as one jitted function per epoch: lax.scan over the steps,
images resident on the device, the epoch's order uploaded as an int32 index array inside the timed epoch
(as the GLSL trainers upload theirs). One warm-up epoch (it compiles), then the median of --repeat epochs,
each by the wall clock with block_until_ready at both ends. --precision highest asks for true fp32 matmuls;
default leaves JAX's default, which lets TF32 in on NVIDIA GPUs. --quick: the first 2,048 images, 2 epochs.

It prints one line of JSON, {"rows": [...], "reason": "..."}, rows shaped as fused.py's _row.

Why a process of its own: the benchmark holds an OpenGL (EGL) context on the same GPU, and JAX takes most
of the GPU's memory when it starts (it preallocates 75 % by default) and keeps its own runtime threads. A
subprocess gives JAX the GPU to itself while it is measured, and hands everything back when it exits. So
this file imports no moderngl and no helpers.gl, and jax_rows, which the GL process calls, runs this file as
a subprocess and never imports JAX itself.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .. import data, reference

BATCH = 128
CLOCK = "wall clock, block_until_ready at both ends"
ROOT = Path(__file__).resolve().parents[2]
NO_JAX = "JAX not installed here: no JAX rows"


# ---------------------------------------------------------------------------------------------
# The epoch, in JAX (imported inside the functions: importing this module never imports JAX)
# ---------------------------------------------------------------------------------------------

def batch_indices(order: np.ndarray, batch_size: int = BATCH) -> np.ndarray:
    """int32 (steps, batch_size): the epoch's order cut into batches, the last padded with index 0."""
    steps = -(-len(order) // batch_size)
    idx = np.zeros(steps * batch_size, np.int32)
    idx[:len(order)] = order
    return idx.reshape(steps, batch_size)


def batch_weights(n: int, batch_size: int = BATCH) -> np.ndarray:
    """float32 (steps, batch_size): each sample's weight in its batch's mean loss, 1 / (samples in the batch),
    and 0 for the padding. The last batch's loss is then the mean over its n % batch_size real samples."""
    counts = np.minimum(batch_size, n - batch_size * np.arange(-(-n // batch_size)))[:, None]
    return ((np.arange(batch_size) < counts) / counts).astype(np.float32)


def make_epoch(optimizer: str, lr: float, mu: float = 0.9):
    """The jitted epoch: epoch(params, velocity, X, y, idx, weights) -> (params, velocity, losses).

    params and velocity: dicts W1, b1, W2, b2 (velocity is carried unchanged by SGD); X float32 (N, 784) and
    y int32 (N,) on the device; idx and weights (steps, batch) from batch_indices and batch_weights;
    losses (steps,): each batch's mean loss. Every step is the same shape, so one compiled step serves the
    whole epoch: the leftover batch is padded to a full one whose padding weighs 0 in the loss (and so in
    the gradient), instead of a second jitted step for the tail.
    """
    import jax
    import jax.numpy as jnp

    if optimizer not in ("sgd", "momentum"):
        raise ValueError(f"optimizer is 'sgd' or 'momentum', not {optimizer!r}")

    def batch_loss(params, Xb, yb, wb):
        logits = jax.nn.relu(Xb @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]
        xent = -jnp.take_along_axis(jax.nn.log_softmax(logits), yb[:, None], axis=1)[:, 0]
        return jnp.sum(wb * xent)   # the weights sum to 1 over a batch's real samples: their mean

    def epoch(params, velocity, X, y, idx, weights):
        def step(carry, batch):
            params, velocity = carry
            ib, wb = batch
            loss, grads = jax.value_and_grad(batch_loss)(params, X[ib], y[ib], wb)
            if optimizer == "sgd":                                    # p -= lr g
                params = {k: params[k] - lr * grads[k] for k in params}
            else:                                                     # v = mu v + g;  p -= lr v
                velocity = {k: mu * velocity[k] + grads[k] for k in params}
                params = {k: params[k] - lr * velocity[k] for k in params}
            return (params, velocity), loss

        (params, velocity), losses = jax.lax.scan(step, (params, velocity), (idx, weights))
        return params, velocity, losses

    return jax.jit(epoch)


def measure(hidden: int, optimizer: str, lr: float, mu: float, repeat: int, precision: str, quick: bool) -> dict:
    """One row: `repeat` epochs on MNIST after one warm-up epoch, with the precision asked for."""
    import jax
    import jax.numpy as jnp

    (X_train, y_train), _ = data.load_mnist()
    n = 2048 if quick else len(X_train)
    X = jax.device_put(data.normalise(X_train[:n]))        # resident: uploaded once, outside the timing
    y = jax.device_put(y_train[:n].astype(np.int32))
    weights = jax.device_put(batch_weights(n))
    counts = (batch_weights(n) > 0).sum(axis=1)            # real samples per batch, for the epoch's mean loss
    orders = [batch_indices(reference.epoch_order(n, e, seed=0)) for e in range(repeat + 1)]
    params = {k: jax.device_put(v) for k, v in reference.init_params(784, hidden, 10, seed=0).items()}
    velocity = {k: jnp.zeros_like(v) for k, v in params.items()}

    precise = jax.default_matmul_precision("highest") if precision == "highest" else contextlib.nullcontext()
    with precise:   # in force while the epoch is traced (the warm-up epoch), so it is compiled in
        epoch = make_epoch(optimizer, lr, mu)
        times = []
        for e in range(repeat + 1):                        # epoch 0 is the warm-up: it compiles
            jax.block_until_ready(params)
            start = time.perf_counter()
            params, velocity, losses = epoch(params, velocity, X, y, jax.device_put(orders[e]), weights)
            jax.block_until_ready((params, velocity, losses))
            if e > 0:
                times.append(time.perf_counter() - start)
    kind = {"sgd": "SGD", "momentum": "Momentum"}[optimizer]
    arithmetic = "fp32, precision highest" if precision == "highest" else "precision default: TF32 allowed"
    return {"name": f"JAX jit(lax.scan) 784-{hidden}-10 {kind}, {arithmetic}",
            "ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times), "epochs": len(times),
            "clock": CLOCK, "precision": precision, "device": str(jax.devices()[0]),
            "final_loss": float(np.dot(np.asarray(losses), counts) / n)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--optimizer", choices=("sgd", "momentum"), default="sgd")
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--mu", type=float, default=0.9, help="momentum (--optimizer momentum only)")
    parser.add_argument("--repeat", type=int, default=5, help="timed epochs after the warm-up")
    parser.add_argument("--precision", choices=("highest", "default"), default="highest")
    parser.add_argument("--quick", action="store_true", help="the first 2,048 images, 2 timed epochs")
    args = parser.parse_args(argv)
    try:
        import jax
    except ImportError:
        print(json.dumps({"rows": [], "reason": NO_JAX}))
        return 0
    row = measure(args.hidden, args.optimizer, args.lr, args.mu, 2 if args.quick else args.repeat,
                  args.precision, args.quick)
    gpu = jax.devices()[0].platform == "gpu"
    reason = f"JAX {jax.__version__} on {row['device']}" + ("" if gpu else " (no GPU for JAX here: CPU rows)")
    print(json.dumps({"rows": [row], "reason": reason}))
    return 0


# ---------------------------------------------------------------------------------------------
# For the caller that holds a GL context: the script above, once per precision, in a subprocess
# ---------------------------------------------------------------------------------------------

def jax_rows(hidden: int, optimizer: str, lr: float, repeat: int, quick: bool, mu: float = 0.9,
             precisions=("highest", "default"), timeout: float = 900) -> tuple[list[dict], str]:
    """The rows this file prints, one subprocess per precision (`timeout` seconds each), and a reason: JAX's
    version and device, or why rows are missing (JAX absent, or a run that failed or timed out, quoting the
    last lines of its stderr). optimizer: "sgd" or "momentum" (any case). Never imports JAX in this process."""
    rows, reasons = [], []
    for precision in precisions:
        command = [sys.executable, "-m", "helpers.bench.jax_epoch", "--hidden", str(hidden),
                   "--optimizer", optimizer.lower(), "--lr", str(lr), "--mu", str(mu), "--repeat", str(repeat),
                   "--precision", precision]
        if quick:
            command.append("--quick")
        try:
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            reasons.append(f"JAX precision {precision} timed out after {timeout:g} s{_tail(exc.stderr)}")
            continue
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            reasons.append(f"JAX precision {precision} failed (exit {done.returncode}){_tail(done.stderr)}")
            continue
        result = json.loads(lines[-1])
        rows += result["rows"]
        if result["reason"] not in reasons:
            reasons.append(result["reason"])
        if not result["rows"]:   # JAX not installed: the next precision would say the same
            break
    return rows, "; ".join(reasons)


def _tail(stderr, lines: int = 5) -> str:
    """': ' and the last lines of a subprocess's stderr (bytes after a timeout, even with text=True)."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    last = (stderr or "").strip().splitlines()[-lines:]
    return (": " + " | ".join(last)) if last else ""


if __name__ == "__main__":
    raise SystemExit(main())

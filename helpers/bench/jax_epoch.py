"""Benchmark: one MNIST epoch in JAX, in a process of its own, for the fused benchmark's table.

    python -m helpers.bench.jax_epoch --hidden 128 --optimizer sgd --lr 0.3 --precision highest   # serves epochs
    python -m helpers.bench.jax_epoch --hidden 128 --optimizer momentum --lr 0.05 --mu 0.9 --quick

For the fused benchmark (helpers/bench/fused.py; notebooks 06 and 08), which runs it through JaxEpochs below.
It trains the series' model and recipe (784-H-10, ReLU, softmax cross-entropy, batch 128,
reference.init_params seed 0, reference.epoch_order seed 0, SGD or momentum) as one jitted function per
epoch: lax.scan over the steps, images resident on the device, the epoch's order uploaded as an int32 index
array inside the timed epoch (as the GLSL trainers upload theirs). --precision highest asks for true fp32
matmuls; default leaves JAX's default, which lets TF32 in on NVIDIA GPUs. --quick: the first 2,048 images.

It serves epochs: after one epoch that compiles, it prints one line of JSON ({"ready": true, "name": ...,
"precision", "device", "reason"}, or {"ready": false, "reason": ...} without JAX), then for every line
"epoch" it reads on stdin runs one epoch and prints "= " and its seconds (wall clock, block_until_ready at
both ends), and for "loss" "= " and the last epoch's mean loss; it exits at "quit" or the end of its input. So the caller
takes JAX's epochs in turn with its own (timing.measure_interleaved), and builds the rows.

Why a process of its own: the benchmark holds an OpenGL (EGL) context on the same GPU, and JAX keeps its
own runtime threads and, by default, takes 75 % of the GPU's memory when it starts (the server is told not
to). A subprocess keeps JAX's runtime apart and hands everything back when it exits. So the server imports
no moderngl and no helpers.gl, and JaxEpochs, which the GL process uses, never imports JAX itself.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .. import data, reference

BATCH = 128
CLOCK = "wall clock, block_until_ready at both ends"
ROOT = Path(__file__).resolve().parents[2]
NO_JAX = "JAX not installed here: no JAX rows"
ANSWER = "= "   # the server's answers start with it; any other line on its stdout (a library's print) is skipped


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


def serve(hidden: int, optimizer: str, lr: float, mu: float, precision: str, quick: bool, lines, out) -> None:
    """The epoch server (module docstring): one compiling epoch, the ready line, then one epoch per "epoch"."""
    import jax
    import jax.numpy as jnp

    (X_train, y_train), _ = data.load_mnist()
    n = 2048 if quick else len(X_train)
    X = jax.device_put(data.normalise(X_train[:n]))        # resident: uploaded once, outside the timing
    y = jax.device_put(y_train[:n].astype(np.int32))
    weights = jax.device_put(batch_weights(n))
    counts = (batch_weights(n) > 0).sum(axis=1)            # real samples per batch, for the epoch's mean loss
    orders = [batch_indices(reference.epoch_order(n, e, seed=0)) for e in range(4)]
    state = {"params": {k: jax.device_put(v) for k, v in reference.init_params(784, hidden, 10, seed=0).items()},
             "epoch": 0, "losses": None}
    state["velocity"] = {k: jnp.zeros_like(v) for k, v in state["params"].items()}

    precise = jax.default_matmul_precision("highest") if precision == "highest" else contextlib.nullcontext()
    with precise:   # in force while the epoch is traced (the first epoch), so it is compiled in
        epoch = make_epoch(optimizer, lr, mu)

        def one() -> float:
            jax.block_until_ready(state["params"])
            start = time.perf_counter()
            order = jax.device_put(orders[state["epoch"] % len(orders)])
            state["params"], state["velocity"], state["losses"] = epoch(state["params"], state["velocity"], X, y,
                                                                        order, weights)
            jax.block_until_ready((state["params"], state["velocity"], state["losses"]))
            state["epoch"] += 1
            return time.perf_counter() - start

        one()   # compiles
        kind = {"sgd": "SGD", "momentum": "Momentum"}[optimizer]
        arithmetic = "fp32, precision highest" if precision == "highest" else "precision default: TF32 allowed"
        device = jax.devices()[0]
        reason = f"JAX {jax.__version__} on {device}" + ("" if device.platform == "gpu" else " (no GPU for JAX here)")
        print(json.dumps({"ready": True, "name": f"JAX jit(lax.scan) 784-{hidden}-10 {kind}, {arithmetic}",
                          "precision": precision, "device": str(device), "reason": reason}), file=out, flush=True)
        for line in lines:
            word = line.strip()
            if word == "epoch":
                print(ANSWER + repr(one()), file=out, flush=True)
            elif word == "loss":
                print(ANSWER + repr(float(np.dot(np.asarray(state["losses"]), counts) / n)), file=out, flush=True)
            elif word == "quit":
                return


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--optimizer", choices=("sgd", "momentum"), default="sgd")
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--mu", type=float, default=0.9, help="momentum (--optimizer momentum only)")
    parser.add_argument("--precision", choices=("highest", "default"), default="highest")
    parser.add_argument("--quick", action="store_true", help="the first 2,048 images")
    args = parser.parse_args(argv)
    try:
        import jax  # noqa: F401
    except ImportError:
        print(json.dumps({"ready": False, "reason": NO_JAX}), flush=True)
        return 0
    serve(args.hidden, args.optimizer, args.lr, args.mu, args.precision, args.quick, sys.stdin, sys.stdout)
    return 0


# ---------------------------------------------------------------------------------------------
# For the caller that holds a GL context: the server above in a subprocess, one epoch per sample()
# ---------------------------------------------------------------------------------------------

class JaxEpochs:
    """The epoch server in a process of its own, as a context manager: `ready` (False: `reason` says why),
    `name` and `meta` (the row's fields), `sample()` -> seconds of one JAX epoch, `loss()` -> the last
    epoch's mean loss. JAX is told not to take most of the GPU's memory at start (the GL process and
    PyTorch share the GPU with it). This process never imports JAX."""

    def __init__(self, hidden: int, optimizer: str, lr: float, precision: str, quick: bool, mu: float = 0.9,
                 timeout: float = 900):
        self.command = [sys.executable, "-m", "helpers.bench.jax_epoch", "--hidden", str(hidden),
                        "--optimizer", optimizer.lower(), "--lr", str(lr), "--mu", str(mu), "--precision", precision]
        if quick:
            self.command.append("--quick")
        self.precision, self.timeout = precision, timeout
        self.ready, self.reason, self.name, self.meta, self.process = False, "", None, {}, None

    def __enter__(self):
        env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
        self.errors = tempfile.TemporaryFile("w+")   # a file, not a pipe: a full pipe would stall the server
        self.process = subprocess.Popen(self.command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.errors, text=True, env=env)
        self.lines = queue.Queue()   # the server's stdout, line by line, read by a thread of its own

        def read(stdout, lines):
            for line in stdout:
                lines.put(line)
            lines.put("")   # the end of its output
        threading.Thread(target=read, args=(self.process.stdout, self.lines), daemon=True).start()
        first = self._line("{")
        if first is None:
            self.reason = f"JAX precision {self.precision} failed to start{_tail(self._stderr())}"
            return self
        hello = json.loads(first)
        self.ready, self.reason = bool(hello["ready"]), hello["reason"]
        if self.ready:
            self.name = hello["name"]
            self.meta = {"clock": CLOCK, "precision": hello["precision"], "device": hello["device"]}
        return self

    def _line(self, prefix: str) -> str | None:
        """The server's next line that starts with `prefix` (other lines skipped), or None when it has ended
        or said nothing for `timeout` seconds."""
        while True:
            try:
                line = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                return None
            if not line:
                return None
            if line.startswith(prefix):
                return line.strip()

    def _stderr(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.errors.seek(0)
        return self.errors.read()

    def _ask(self, word: str) -> float:
        self.process.stdin.write(word + "\n")
        self.process.stdin.flush()
        line = self._line(ANSWER)
        if line is None:
            raise RuntimeError(f"the JAX process gave no answer to {word!r}{_tail(self._stderr())}")
        return float(line[len(ANSWER):])

    def sample(self) -> float:
        return self._ask("epoch")

    def loss(self) -> float:
        return self._ask("loss")

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
        if self.process is not None:
            self.errors.close()


def jax_rows(hidden: int, optimizer: str, lr: float, repeat: int, quick: bool, mu: float = 0.9,
             precisions=("highest", "default"), timeout: float = 900) -> tuple[list[dict], str]:
    """JAX's epochs alone, one server per precision: rows with the median epoch and its band (timing.measure,
    warm-up by time), and a reason: JAX's version and device, or why rows are missing (JAX absent, or a
    server that failed, quoting the last lines of its stderr)."""
    from .. import timing   # imports the GL helpers: only in the caller's process, never in the server

    rows, reasons = [], []
    for precision in precisions:
        with JaxEpochs(hidden, optimizer, lr, precision, quick, mu, timeout) as served:
            if served.reason not in reasons:
                reasons.append(served.reason)
            if not served.ready:
                if served.reason == NO_JAX:
                    break
                continue
            t = timing.measure(served.sample, repeat)
            rows.append({"name": served.name, **t.row(), "min_ms": 1e3 * min(t.samples), "epochs": repeat,
                         **served.meta, "final_loss": served.loss()})
    return rows, "; ".join(reasons)


def _tail(stderr, lines: int = 5) -> str:
    """': ' and the last lines of a subprocess's stderr (bytes after a timeout, even with text=True)."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    last = (stderr or "").strip().splitlines()[-lines:]
    return (": " + " | ".join(last)) if last else ""


if __name__ == "__main__":
    raise SystemExit(main())

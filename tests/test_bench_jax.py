"""helpers/bench/jax_epoch.py: jax_rows without JAX says so (and gives no rows), and one JAX epoch (lax.scan,
the leftover batch padded with weight 0) gives the parameters of reference's NumPy epoch, SGD and momentum.

Awkward sizes: 300 random images at batch 128, so the last batch holds 44; hidden 16."""

import sys

import numpy as np
import pytest

from helpers import reference
from helpers.bench import jax_epoch
from helpers.check import rel_error

N, H, BATCH = 300, 16, 128
OPTIMIZERS = {"sgd": (0.3, lambda: reference.SGD(0.3)), "momentum": (0.05, lambda: reference.Momentum(0.05, 0.9))}


def test_no_jax_means_no_rows(tmp_path, monkeypatch):
    """A jax.py that raises ImportError, first on the subprocess's path, stands for a machine without JAX
    (this process may have JAX: the subprocess must not find it)."""
    (tmp_path / "jax.py").write_text("raise ImportError('no JAX in this test')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    rows, reason = jax_epoch.jax_rows(hidden=16, optimizer="sgd", lr=0.3, repeat=1, quick=True, timeout=120)
    assert rows == []
    assert "JAX not installed" in reason


def test_batches_pad_the_leftover():
    order = reference.epoch_order(N, 0, seed=0)
    idx, weights = jax_epoch.batch_indices(order, BATCH), jax_epoch.batch_weights(N, BATCH)
    assert idx.shape == weights.shape == (3, BATCH) and idx.dtype == np.int32
    assert np.array_equal(idx.reshape(-1)[:N], order)
    assert np.allclose(weights.sum(axis=1), 1) and np.count_nonzero(weights[-1]) == N - 2 * BATCH


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_epoch_matches_reference(optimizer):
    jax = pytest.importorskip("jax")
    lr, make_reference = OPTIMIZERS[optimizer]
    rng = np.random.default_rng(5)
    X = rng.random((N, 784), dtype=np.float32)
    y = rng.integers(0, 10, N)
    order = reference.epoch_order(N, 0, seed=0)

    expected = reference.init_params(784, H, 10, seed=0, dtype=np.float64)
    opt = make_reference()
    losses = []
    for i in range(0, N, BATCH):
        batch = order[i:i + BATCH]
        losses.append(reference.train_step(expected, X[batch].astype(np.float64), y[batch], opt))

    with jax.default_matmul_precision("highest"):
        epoch = jax_epoch.make_epoch(optimizer, lr, mu=0.9)
        params = {k: jax.numpy.asarray(v) for k, v in reference.init_params(784, H, 10, seed=0).items()}
        velocity = {k: jax.numpy.zeros_like(v) for k, v in params.items()}
        params, velocity, got_losses = epoch(params, velocity, jax.numpy.asarray(X), jax.numpy.asarray(y, np.int32),
                                             jax_epoch.batch_indices(order, BATCH), jax_epoch.batch_weights(N, BATCH))
    for name in expected:
        assert rel_error(np.asarray(params[name]), expected[name]) < 1e-5, name
    assert rel_error(np.asarray(got_losses), losses) < 1e-5


FAKE_SERVER = r'''
import json, sys
print("a library's stray line on stdout")
print(json.dumps({"ready": True, "name": "JAX fake", "precision": "highest", "device": "cpu:0", "reason": "fake"}), flush=True)
n = 0
for line in sys.stdin:
    word = line.strip()
    if word == "epoch":
        n += 1
        print("noise before the answer"); print("= " + repr(0.001 * n), flush=True)
    elif word == "loss":
        print("= 0.25", flush=True)
    elif word == "quit":
        break
'''


def test_epochs_served_one_per_request(tmp_path):
    """JaxEpochs against a stand-in server speaking the same protocol: stray lines skipped, one epoch a request."""
    script = tmp_path / "server.py"
    script.write_text(FAKE_SERVER)
    served = jax_epoch.JaxEpochs(hidden=16, optimizer="sgd", lr=0.3, precision="highest", quick=True, timeout=60)
    served.command = [sys.executable, str(script)]
    with served:
        assert served.ready and served.name == "JAX fake" and served.meta["precision"] == "highest"
        assert [served.sample() for _ in range(3)] == [0.001, 0.002, 0.003]
        assert served.loss() == 0.25
    assert served.process.poll() == 0


def test_a_server_that_dies_says_why(tmp_path):
    script = tmp_path / "server.py"
    script.write_text("import sys\nsys.stderr.write('no GPU for you\\n')\nsys.exit(3)\n")
    served = jax_epoch.JaxEpochs(hidden=16, optimizer="sgd", lr=0.3, precision="default", quick=True, timeout=60)
    served.command = [sys.executable, str(script)]
    with served:
        assert not served.ready and "failed to start" in served.reason and "no GPU for you" in served.reason

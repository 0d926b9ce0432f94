"""The lookahead trainer (glsl/train_2_lookahead.comp, glsl/gram_1_lags.comp, helpers/lookahead_mlp.py) against
plain SGD in NumPy (float64).

One dispatch a step computes layer 1 of step t from Q_t (computed a dispatch early) and the dot products of
step t's images with step t-1's; the weights must still be plain SGD's, to float32 rounding. Awkward shapes:
hidden sizes 36 (not a multiple of the 32-unit tiles) and 8, batches of 37 (padded to 64 rows) and 64, epochs
whose last batch is a leftover, n_in 20 and 784; the gram, Q and w2parts buffers start as NaN, so anything read
before it is written shows.
"""

import numpy as np
import pytest

from helpers import check, gl, reference
from helpers import lookahead_mlp
from helpers.lookahead_mlp import LookaheadMLP

RTOL = 1e-5


def make_data(n, n_in, seed=7):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, n_in), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint32)
    return images, labels, images / 255.0


@pytest.mark.parametrize("n, batch", [(130, 37), (400, 150)])
def test_gram_matches_numpy(ctx, n, batch):
    """gram[t, l] = Xt(t) @ Xt(t-1-l).T with a column of ones; zeros before the epoch and past a batch; batch 37
    pads to 64 rows (one 64-column tile a lag), batch 150 to 160 (64-column tiles straddle the two lags)."""
    images, labels, X = make_data(n, 784)
    trainer = LookaheadMLP(ctx, reference.init_params(784, 8, 10, seed=0), images, labels, batch_size=batch, seed=3)
    trainer.start_epoch(0)
    got = trainer.read("gram")
    order, B = reference.epoch_order(n, 0, 3), trainer.B_PAD

    def Xt(s):
        out = np.zeros((B, 785))
        if s >= 0:
            rows = order[s * batch:(s + 1) * batch]
            out[:len(rows)] = np.hstack([X[rows], np.ones((len(rows), 1))])
        return out

    for t in range(trainer.steps_per_epoch):
        for lag in (0, 1):
            assert check.compare(f"gram[{t}, {lag}]", got[t, lag], Xt(t) @ Xt(t - 1 - lag).T, RTOL)
    trainer.release()


def train_both(ctx, n, n_in, hidden, batch, epochs=2, defines=None):
    """(trainer's weights, its last epoch's losses, the reference's weights and losses) after `epochs` epochs."""
    images, labels, X = make_data(n, n_in)
    params = reference.init_params(n_in, hidden, 10, seed=1)
    trainer = LookaheadMLP(ctx, params, images, labels, optimizer=reference.SGD(0.3), batch_size=batch, seed=3,
                           defines=defines)
    ref = {k: v.astype(np.float64) for k, v in params.items()}
    for epoch in range(epochs):
        trainer.start_epoch(epoch)
        trainer.run_steps(0, trainer.steps_per_epoch)
        order, losses = reference.epoch_order(n, epoch, 3), []
        for s in range(trainer.steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            logits, _ = reference.forward(ref, X[idx])
            z = logits - logits.max(axis=1, keepdims=True)
            losses.append(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(idx)), labels[idx]])
            reference.train_step(ref, X[idx], labels[idx], reference.SGD(0.3))
    out = trainer.read_params(), trainer.read("losses"), trainer.counts
    trainer.release()
    return out, ref, np.concatenate(losses)


@pytest.mark.parametrize("n, n_in, hidden, batch", [(130, 784, 36, 37), (150, 20, 8, 64), (300, 784, 128, 128)],
                         ids=["784-36-10-B37", "20-8-10-B64", "784-128-10-B128"])
def test_steps_match_plain_sgd(ctx, n, n_in, hidden, batch):
    """Two epochs (the second with another order), a leftover last batch: weights and losses as plain SGD's."""
    (got, losses, counts), ref, ref_losses = train_both(ctx, n, n_in, hidden, batch)
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)
    assert check.compare("losses", losses, ref_losses, RTOL)
    assert counts["dispatches"] == counts["steps"] == 2 * -(-n // batch)


def test_the_same_seed_gives_the_same_bits(ctx):
    """No atomics, every sum in a fixed order: two runs give identical weights."""
    runs = [train_both(ctx, 130, 784, 36, 37, epochs=1)[0][0] for _ in range(2)]
    for name in runs[0]:
        assert runs[0][name].tobytes() == runs[1][name].tobytes(), f"{name} differs between two runs"


def test_timing_a_kind_of_group_alone_leaves_the_others_out(ctx):
    """roles = 1 (the chain groups alone): the W1 update never runs, so W1 keeps its first value."""
    images, labels, _ = make_data(130, 784)
    params = reference.init_params(784, 36, 10, seed=1)
    trainer = LookaheadMLP(ctx, params, images, labels, batch_size=37, seed=3)
    trainer.kernel.set(roles=1)
    trainer.run_epoch(0)
    assert np.array_equal(trainer.read_params()["W1"], params["W1"])
    trainer.release()


def test_bad_nets_and_optimizers_are_refused(ctx):
    images, labels, _ = make_data(64, 784)
    with pytest.raises(ValueError, match="multiples of 4"):
        LookaheadMLP(ctx, reference.init_params(784, 130, 10, seed=0), images, labels)
    with pytest.raises(TypeError, match="SGD"):
        LookaheadMLP(ctx, reference.init_params(784, 128, 10, seed=0), images, labels,
                     optimizer=reference.Momentum(0.1, 0.9))


def widest_that_fits(limit: int) -> int:
    return max(h for h in range(4, 4096, 4) if lookahead_mlp.shared_bytes(dict(HIDDEN=h)) <= limit)


@pytest.mark.parametrize("wide", ["800", "just over the limit"])
def test_a_net_too_wide_for_shared_memory_is_refused_before_compiling(ctx, wide, monkeypatch):
    limit = gl.max_shared_memory(ctx) or lookahead_mlp.SHARED_LIMIT
    hidden = 800 if wide == "800" else widest_that_fits(limit) + 4
    need = lookahead_mlp.shared_bytes(dict(HIDDEN=hidden))
    assert need > limit
    images, labels, _ = make_data(64, 784)
    monkeypatch.setattr(gl, "compile_shader", lambda *a, **k: pytest.fail("compiled a shader it should refuse"))
    with pytest.raises(ValueError, match=f"needs {need:,} bytes, over the {limit:,}"):
        LookaheadMLP(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels)


def test_the_widest_net_that_fits_shared_memory_builds(ctx):
    hidden = widest_that_fits(gl.max_shared_memory(ctx) or lookahead_mlp.SHARED_LIMIT)
    images, labels, _ = make_data(64, 784)
    LookaheadMLP(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels).release()

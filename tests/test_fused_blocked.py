"""FusedMLP(blocked=True): the register-blocked shaders (glsl/fused_hidden_2_blocked.comp for layer 1,
glsl/fused_backward_3_blocked.comp for every gradient and update) against NumPy, one dispatch at a time.
Whole steps against the version-1 shaders' and NumPy's, and the same bits run after run, are in
tests/test_fused_tiled.py with the other step comparisons.

Awkward shapes: hidden 37 (read one float at a time, VEC4 0) and 100 (vec4 reads, a part-filled last
block), n_in 784 and 20, batches of 37 and 1 in an epoch of 50 samples (the second batch of 37 a leftover
of 13), batch 128 (several stages of batch rows), tunables that divide nothing; every output poisoned with
NaN first.
"""

import numpy as np
import pytest

from helpers import check, fused_mlp, gl, reference

N = 50
RTOL = 1e-5


def make_data(n_in=784, seed=7, n=N):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, n_in), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint32)
    return images, labels, images / np.float32(255)


def make_trainer(ctx, n_in=784, hidden=37, optimizer=None, batch_size=37, n=N, **options):
    images, labels, _ = make_data(n_in, n=n)
    params = reference.init_params(n_in, hidden, 10, seed=1)
    options.setdefault("blocked", True)
    trainer = fused_mlp.FusedMLP(ctx, params, images, labels, optimizer=optimizer or reference.SGD(0.3),
                                 batch_size=batch_size, seed=3, **options)
    return trainer, params


def batch_rows(n_in, step, batch_size, n=N):
    """(images as floats, labels) of batch `step` of epoch 0, as the trainer orders them."""
    _, labels, X = make_data(n_in, n=n)
    idx = reference.epoch_order(n, 0, 3)[step * batch_size:(step + 1) * batch_size]
    return X[idx], labels[idx]


@pytest.mark.parametrize("n_in, hidden, step, defines", [
    (784, 37, 0, None), (784, 100, 1, None), (20, 100, 0, None),
    (784, 37, 1, dict(RQ=3, TQ=2, BK=8, KS=3)), (20, 37, 0, dict(RQ=1, TQ=1, BK=4, KS=1)),
    (784, 100, 0, dict(RQ=2, TQ=5, BK=12, KS=2))],
    ids=["784-37", "784-100-leftover", "20-100", "784-37-RQ3-TQ2-BK8-KS3", "20-37-one-thread-slices",
         "784-100-TQ5-BK12"])
def test_hidden_layer_matches_reference(ctx, n_in, hidden, step, defines):
    """fused_hidden_2_blocked writes A1 of the batch's rows and nothing else."""
    trainer, params = make_trainer(ctx, n_in, hidden, tiled_hidden=True, hidden_defines=defines)
    assert trainer.forward.name == fused_mlp.HIDDEN_BLOCKED
    assert trainer.forward.define("VEC4") == int(hidden % 4 == 0)
    X, labels = batch_rows(n_in, step, 37)
    want = fused_mlp.reference_outputs(params, X, labels)["A1"]
    trainer.start_epoch(0)
    for name in ("A1", "dZ1", "dlogits", "losses"):
        trainer.arrays[name].fill(np.nan)
    kernel, groups = trainer.dispatches(step)[0]
    kernel.set(step=step)
    kernel.program.run(*groups)
    ctx.memory_barrier()
    A1 = trainer.read("A1")
    assert check.compare("A1", A1[:len(want)], want, RTOL)
    assert np.isnan(A1[len(want):]).all(), "layer 1 wrote rows past the batch"
    for name in ("dZ1", "dlogits", "losses"):
        assert np.isnan(trainer.read(name)).all(), f"layer 1 wrote {name}"


@pytest.mark.parametrize("make_optimizer", [lambda: reference.SGD(0.3), lambda: reference.Momentum(0.1, 0.9),
                                            lambda: reference.Adam(1e-3, eps=1e-6)], ids=["SGD", "Momentum", "Adam"])
@pytest.mark.parametrize("n_in, hidden, batch_size, defines", [
    (784, 37, 37, None), (784, 100, 128, None), (20, 100, 1, None),
    (784, 37, 37, dict(TQ=3, KQ=3, BS=2, BC=5)), (20, 100, 128, dict(TQ=1, KQ=3, BS=1, BC=7))],
    ids=["784-37-B37", "784-100-B128", "20-100-B1", "784-37-TQ3-KQ3-BS2-BC5", "20-100-B128-one-slice"])
def test_backward_update_matches_reference(ctx, make_optimizer, n_in, hidden, batch_size, defines):
    """One fused_backward_3_blocked dispatch from the reference's A1, dZ1 and dlogits (rows past the batch
    NaN) moves every parameter and its optimizer state as the reference optimizer's step does."""
    n = 150
    trainer, params = make_trainer(ctx, n_in, hidden, make_optimizer(), batch_size, n=n, backward_defines=defines)
    assert trainer.backward.name == fused_mlp.BACKWARD_BLOCKED
    assert trainer.backward.define("VEC4") == int(hidden % 4 == 0)
    X, labels = batch_rows(n_in, 0, batch_size, n)
    logits, cache = reference.forward(params, X)
    _, dlogits = reference.softmax_xent(logits, labels)
    dZ1 = (dlogits @ params["W2"].T) * (cache[1] > 0)
    trainer.start_epoch(0)
    for name, rows in (("A1", cache[2]), ("dZ1", dZ1), ("dlogits", dlogits)):
        full = np.full(trainer.arrays[name].shape, np.nan, dtype=np.float32)
        full[:batch_size] = rows
        trainer.write(name, full)
    if trainer.kind == "Adam":
        trainer.backward.set(**trainer.next_bias_corrections())
    trainer.backward.set(step=0)
    trainer.backward.program.run(*trainer.dispatches(0)[-1][1])
    ctx.memory_barrier()
    optimizer = make_optimizer()
    want = {k: v.copy() for k, v in params.items()}
    optimizer.step(want, reference.backward(want, cache, dlogits))
    got = trainer.read_params()
    for name in want:
        assert check.compare(name, got[name], want[name], RTOL)
    for key, state in trainer.read_state().items():
        ref_state = optimizer.v if key == "v" else optimizer.m
        for name in want:
            assert check.compare(f"{key}[{name}]", state[name], ref_state[name], RTOL)


def test_group_counts_and_shared_memory(ctx):
    """The work groups the banners give at the H100's sizes (batch 128 of 60,000 images: the last batch
    holds 96), and the shared memory of the defaults within what OpenGL guarantees everywhere."""
    hidden, backward = gl.Kernel(ctx, fused_mlp.HIDDEN_BLOCKED), gl.Kernel(ctx, fused_mlp.BACKWARD_BLOCKED)
    sizes = dict(batch_size=128, n_samples=60_000)
    tq, rq = hidden.define("TQ"), hidden.define("RQ")
    assert hidden.groups(n_hidden=800, step=0, **sizes) == (-(-800 // (4 * tq)), -(-128 // (4 * rq)), 1)
    assert hidden.groups(n_hidden=800, step=468, **sizes) == (-(-800 // (4 * tq)), -(-96 // (4 * rq)), 1)
    tq, kq = backward.define("TQ"), backward.define("KQ")
    head_groups, blocks = -(-801 // (4 * tq)), -(-785 // (4 * kq)) * -(-800 // (4 * tq))
    assert backward.groups(n_in=784, n_hidden=800) == (head_groups + blocks, 1, 1)
    for row in fused_mlp.TUNED.values():  # the defaults and each tuned row fit where every OpenGL 4.3 does
        d = dict(gl.Kernel(ctx, fused_mlp.HIDDEN_BLOCKED).define_values, **row["hidden_blocked"])
        rows, words = 4 * d["RQ"], d["KS"] * d["BK"] // 4
        assert 16 * max(rows * (words + 1) + d["KS"] * d["BK"] * d["TQ"], (d["KS"] - 1) * rows * d["TQ"]) + 4 * rows \
            <= fused_mlp.SHARED_BYTES
        d = dict(gl.Kernel(ctx, fused_mlp.BACKWARD_BLOCKED).define_values, **row["backward_blocked"])
        stage = d["BS"] * d["BC"]
        assert 16 * max(stage * (d["KQ"] + d["TQ"]), d["BS"] * 4 * d["KQ"] * d["TQ"]) <= fused_mlp.SHARED_BYTES


@pytest.mark.parametrize("options, match", [
    (dict(dropout=(0.8, 0.5)), "blocked has no dropout or split_hidden version"),
    (dict(split_hidden=True), "blocked has no dropout or split_hidden version")],
    ids=["dropout", "split_hidden"])
def test_refused_combinations(ctx, options, match):
    with pytest.raises(ValueError, match=match):
        make_trainer(ctx, **options)

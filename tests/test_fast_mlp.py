"""The fast trainer (helpers/fast_mlp.py, glsl/train_step_1_tiled.comp) against NumPy.

Awkward sizes: hidden 130 (no tile of HT or TJ = 32 divides it; not a multiple of 4, so W1 is read one
float at a time) and 128 (vec4 reads), batch 37 (not a multiple of BT = 8 or BC = 32) over 50 samples (the
last batch holds 13); outputs poisoned with NaN first. Few work groups (GROUPS 4, 5) keep llvmpipe quick
and make each group take several tiles. On a software renderer the subgroup path is not compiled in; there
SUBGROUP 0 and 1 run the same shared-memory exchange, on a GPU they are the two paths.
"""

import numpy as np
import pytest

from helpers import data, fused_mlp, reference
from helpers.check import rel_error
from helpers.fast_mlp import FastMLP, shared_bytes

N, H, BATCH = 50, 130, 37
RTOL = 1e-5
OPTIMIZERS = {"SGD": lambda: reference.SGD(0.3), "Momentum": lambda: reference.Momentum(0.1, 0.9)}
SMALL = dict(GROUPS=4)


def toy(seed=7, n=N):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 784), dtype=np.uint8), rng.integers(0, 10, n)


def make(ctx, kind="SGD", hidden=H, batch_size=BATCH, seed=3, defines=SMALL, **kwargs):
    images, labels = toy()
    params = reference.init_params(784, hidden, 10, seed=1)
    trainer = FastMLP(ctx, params, images, labels, optimizer=OPTIMIZERS[kind](), batch_size=batch_size, seed=seed,
                      defines=defines, **kwargs)
    return trainer, params, images, labels


def same_bits(a: dict, b: dict) -> bool:
    return all(a[k].tobytes() == b[k].tobytes() for k in a)


@pytest.mark.parametrize("kind", OPTIMIZERS)
@pytest.mark.parametrize("hidden, step", [(H, 0), (H, 1), (128, 1)], ids=["H130", "H130-leftover13", "H128-vec4"])
def test_one_step_matches_reference(ctx, kind, hidden, step):
    """Phase 1 (A1), phase 2 (losses, dlogits, the updated weights and state) of one step, outputs NaN first."""
    trainer, params, images, labels = make(ctx, kind, hidden)
    trainer.start_epoch(0)
    for _ in range(step):   # the GPU counts the steps; run the earlier ones, then start from known weights
        trainer.step()
    trainer.write_params(params)
    for name in ("A1", "parts", "dlogits", "losses", "W2s"):
        trainer.arrays[name].fill(np.nan)
    trainer.step()
    idx = reference.epoch_order(N, 0, 3)[step * BATCH:(step + 1) * BATCH]
    count, start = len(idx), step * BATCH
    X = data.normalise(images)[idx]
    ref = fused_mlp.reference_outputs(params, X, labels[idx])
    A1, dlogits, losses = trainer.read("A1"), trainer.read("dlogits"), trainer.read("losses")
    assert rel_error(A1[:count], ref["A1"]) < RTOL and np.isnan(A1[count:]).all()
    assert rel_error(dlogits[:count], ref["dlogits"]) < RTOL and np.isnan(dlogits[count:]).all()
    assert rel_error(losses[start:start + count], ref["losses"]) < RTOL
    assert np.isnan(losses[:start]).all() and np.isnan(losses[start + count:]).all()
    expected, optimizer = {k: v.copy() for k, v in params.items()}, OPTIMIZERS[kind]()
    optimizer.step(expected, reference.loss_and_grads(expected, X, labels[idx])[1])
    got = trainer.read_params()
    if kind == "SGD" or step == 0:   # momentum after earlier steps has a velocity NumPy did not see
        for name in expected:
            assert rel_error(got[name], expected[name]) < RTOL, name
    assert trainer.read("counter")[0] == (step + 1) % trainer.steps_per_epoch


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_two_epochs_of_steps_equal_reference_steps(ctx, kind):
    trainer, params, images, labels = make(ctx, kind)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, OPTIMIZERS[kind]()
    X = data.normalise(images)
    for epoch in range(2):
        trainer.start_epoch(epoch)
        order = reference.epoch_order(N, epoch, 3)
        for s in range(trainer.steps_per_epoch):
            trainer.step(s)
            idx = order[s * BATCH:(s + 1) * BATCH]
            optimizer.step(ref, reference.loss_and_grads(ref, X[idx], labels[idx])[1])
    got = trainer.read_params()
    for name in ref:
        assert rel_error(got[name], ref[name]) < RTOL, name
    for key, state in trainer.read_state().items():
        for name in ref:
            assert rel_error(state[name], optimizer.v[name]) < RTOL, f"velocity {name}"
    assert trainer.counts == {"steps": 4, "dispatches": 8, "barriers": 8, "readbacks": 0}


def test_train_equals_reference_train_and_predicts(ctx):
    trainer, params, images, labels = make(ctx, hidden=128, check_every=1, seed=7)
    history = trainer.train(1, progress=False)
    ref = {k: v.copy() for k, v in params.items()}
    ref_history = reference.train(ref, data.normalise(images), labels, epochs=1, batch_size=BATCH, lr=0.3,
                                  seed=7, progress=False)
    assert all(rel_error(trainer.read_params()[k], ref[k]) < RTOL for k in ref)
    assert rel_error(history["loss"], ref_history["loss"]) < RTOL
    assert history["train_acc"] == ref_history["train_acc"]
    assert trainer.counts["readbacks"] == 2
    with pytest.raises(TypeError, match="SGD or Momentum"):
        FastMLP(ctx, params, images, labels, optimizer=reference.Adam(1e-3))


def test_tunables_and_subgroup_define_give_the_same_sums(ctx):
    """SUBGROUP 0 forces the shared-memory lane exchange; the shuffles add the same numbers in the same
    order, so the bits agree. Other tile shapes (KS 8: 4 sums a lane; BT 4; TK 64, TJ 16) agree with NumPy."""
    runs = []
    for defines in (dict(SMALL, SUBGROUP=1), dict(SMALL, SUBGROUP=0), dict(GROUPS=5, KS=8, BT=4, TK=64, TJ=16, BC=8)):
        trainer, params, images, labels = make(ctx, "Momentum", defines=defines)
        trainer.train(1, progress=False, evaluate=())
        runs.append(trainer.read_params())
        trainer.release()
    assert same_bits(runs[0], runs[1])
    assert all(rel_error(runs[2][k], runs[0][k]) < RTOL for k in runs[0])


def test_same_seed_gives_bitwise_identical_weights(ctx):
    runs = []
    for seed in (0, 0, 1):
        trainer, *_ = make(ctx, "Momentum", seed=seed)
        trainer.train(2, progress=False, evaluate=())
        runs.append(trainer.read_params())
        trainer.release()
    assert same_bits(runs[0], runs[1])
    assert not np.array_equal(runs[0]["W1"], runs[2]["W1"])


def test_persistent_kernel_equals_two_dispatches_bitwise(ctx):
    """One work group is always resident, so its grid barrier always passes: the persistent kernel (one
    dispatch per chunk of steps) gives the two-dispatch trainer's bits. A grid of many groups passes the
    probe on a GPU and fails it on llvmpipe (its loops stop after 65535 polls); either way the bits agree."""
    two, *_ = make(ctx, "Momentum", check_every=2)
    two.train(1, progress=False, evaluate=())
    for groups in (1, 16):
        persistent, *_ = make(ctx, "Momentum", check_every=2, persistent=True, persistent_groups=groups)
        assert (persistent.persistent is not None) == ("probe failed" not in persistent.persistent_note)
        persistent.train(1, progress=False, evaluate=())
        assert same_bits(persistent.read_params(), two.read_params()), persistent.persistent_note
        if persistent.persistent is not None:
            assert persistent.counts["dispatches"] == 1   # 2 steps, check_every 2: one chunk, one dispatch
        persistent.release()


def test_a_timed_out_grid_barrier_is_reported_not_hung(ctx):
    """Force the timeout flag: the next persistent chunk stops at its first barrier, marks its losses NaN,
    and the loss check says why."""
    trainer, *_ = make(ctx, check_every=2, persistent=True, persistent_groups=1)
    trainer.start_epoch(0)
    trainer.write("sync", np.array([0, 0, 1, 0], np.uint32))
    trainer.run_steps(0, 2)
    with pytest.raises(RuntimeError, match="grid barrier"):
        trainer.check(0, 2)


def test_default_tunables_fit_the_portable_shared_memory():
    from helpers import gl
    source = gl.shader_source("train_step_1_tiled.comp")
    defines = {name: int(gl.define(source, name)) for name in ("THREADS", "KS", "BT", "TJ", "TK", "BC", "MAX_IN", "MAX_B")}
    assert shared_bytes(defines) <= 32 * 1024

"""The persistent trainer (glsl/train_1_persistent.comp, helpers/persistent_mlp.py) against NumPy.

llvmpipe runs work groups a few at a time, so there a dispatch of many steps is only tested with one work
group (every hidden unit in it); many groups are tested as three dispatches a step (one phase each), which
crosses no grid barrier. On a GPU the many-group dispatch of whole epochs runs too, and must give the same
bits as the version with a dispatch a phase. Awkward shapes: hidden 130 and 37, batches of 37 and 1, an epoch of 50
samples (the last batch a leftover of 13); A1, dZ1, dlogits and losses poisoned with NaN first.
"""

import numpy as np
import pytest

from helpers import check, fused_mlp, gl, reference
from helpers.persistent_mlp import PersistentMLP

N, RTOL = 50, 1e-5
SGD, MOMENTUM = (lambda: reference.SGD(0.3)), (lambda: reference.Momentum(0.1, 0.9))


def make_data(seed=7, n=N):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint32)
    return images, labels, images.reshape(n, -1) / np.float32(255)


DEFINES = dict(THREADS=256, KSPLIT=2)     # small enough for llvmpipe's 32 KiB of shared memory


@pytest.fixture
def cls():
    return PersistentMLP


def make(ctx, cls, hidden, cols, make_optimizer=SGD, batch_size=37, persistent=None, images=None, labels=None):
    if images is None:
        images, labels, _ = make_data()
    params = reference.init_params(784, hidden, 10, seed=1)
    trainer = cls(ctx, params, images, labels, optimizer=make_optimizer(), batch_size=batch_size, seed=3,
                  persistent=persistent, defines=dict(DEFINES, COLS=cols))
    return trainer, params


def train_both(ctx, cls, hidden, cols, make_optimizer, batch_size, persistent, epochs=2):
    """(trainer's weights, state, reference weights, optimizer) after `epochs` epochs, each one run_steps call."""
    images, labels, X = make_data()
    trainer, params = make(ctx, cls, hidden, cols, make_optimizer, batch_size, persistent, images, labels)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, make_optimizer()
    for epoch in range(epochs):
        trainer.start_epoch(epoch)
        trainer.run_steps(0, trainer.steps_per_epoch)
        order = reference.epoch_order(N, epoch, 3)
        for s in range(trainer.steps_per_epoch):
            idx = order[s * batch_size:(s + 1) * batch_size]
            _, grads = reference.loss_and_grads(ref, X[idx], labels[idx])
            optimizer.step(ref, grads)
    assert trainer.barrier_flags()["flags"] == 0
    out = trainer.read_params(), trainer.read_state(), trainer.counts
    trainer.release()
    return out, ref, optimizer


@pytest.mark.parametrize("make_optimizer", [SGD, MOMENTUM], ids=["SGD", "Momentum"])
@pytest.mark.parametrize("hidden, cols, batch_size", [(130, 3, 37), (37, 2, 1), (130, 5, 37), (37, 1, 16)],
                         ids=["H130-COLS3", "H37-B1", "H130-COLS5", "H37-COLS1"])
def test_phase_dispatches_match_reference(ctx, cls, make_optimizer, hidden, cols, batch_size):
    """A dispatch a phase: many work groups, a partial last group, a leftover batch."""
    (got, state, counts), ref, optimizer = train_both(ctx, cls, hidden, cols, make_optimizer, batch_size, False)
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)
    for name in state.get("v", {}):
        assert check.compare(f"v[{name}]", state["v"][name], optimizer.v[name], RTOL)
    assert counts["dispatches"] == cls.PHASES * counts["steps"]


@pytest.mark.parametrize("make_optimizer", [SGD, MOMENTUM], ids=["SGD", "Momentum"])
def test_one_dispatch_of_many_steps_matches_reference(ctx, cls, make_optimizer):
    """An epoch in one dispatch, grid barriers between phases: one work group of 4 units owns hidden size 3."""
    (got, _, counts), ref, _ = train_both(ctx, cls, 3, 4, make_optimizer, 16, True)
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)
    assert counts["dispatches"] == 2  # one an epoch


@pytest.mark.parametrize("hidden, cols", [(3, 4), (130, 1)], ids=["one-group", "130-groups"])
def test_one_dispatch_gives_the_bits_of_a_dispatch_a_phase(ctx, cls, hidden, cols):
    """The grid barrier replaces a dispatch boundary and nothing else: the same weights, bit for bit."""
    if cols < hidden and gl.is_software(ctx):
        pytest.skip("llvmpipe cannot keep 130 work groups resident at once (a grid barrier would give up)")
    (persistent, _, _), _, _ = train_both(ctx, cls, hidden, cols, MOMENTUM, 37, True)
    (phased, _, _), _, _ = train_both(ctx, cls, hidden, cols, MOMENTUM, 37, False)
    for name in persistent:
        assert persistent[name].tobytes() == phased[name].tobytes(), f"{name} differs"


@pytest.mark.parametrize("persistent, hidden, cols", [(False, 130, 3), (True, 3, 4)], ids=["phases", "persistent"])
def test_forward_outputs_match_reference(ctx, cls, persistent, hidden, cols):
    """Phases 0 and 1 of the leftover batch: A1, dZ1, dlogits and losses, poisoned with NaN first; rows past the
    batch and losses of other samples stay NaN."""
    images, labels, X = make_data()
    trainer, params = make(ctx, cls, hidden, cols, batch_size=37, persistent=persistent, images=images, labels=labels)
    trainer.start_epoch(0)
    names = [name for name in ("A1", "dZ1", "dlogits", "losses") if name in trainer.arrays]
    for name in names:
        trainer.arrays[name].fill(np.nan)
    step, phases = 1, cls.PHASES
    if persistent:
        trainer.dispatch(phases * step, phases * step + 2)
    else:
        trainer.dispatch(phases * step, phases * step + 1)
        trainer.dispatch(phases * step + 1, phases * step + 2)
    idx = reference.epoch_order(N, 0, 3)[37:]
    count = len(idx)
    ref = fused_mlp.reference_outputs(params, X[idx], labels[idx])
    out = {name: trainer.read(name) for name in names}
    for name in names[:-1]:
        assert check.compare(name, out[name][:count], ref[name], RTOL)
        assert np.isnan(out[name][count:]).all(), f"{name} written past the batch"
    assert check.compare("losses", out["losses"][37:], ref["losses"], RTOL)
    assert np.isnan(out["losses"][:37]).all()
    trainer.release()


def test_a_barrier_that_gives_up_stops_training(ctx, cls):
    """Where the groups cannot all be resident (llvmpipe), the waits give up and the next check says so."""
    if not gl.is_software(ctx):
        pytest.skip("a GPU keeps these 44 groups resident: nothing gives up")
    trainer, _ = make(ctx, cls, 130, 3, persistent=True)
    with pytest.raises(RuntimeError, match="resident"):
        trainer.run_epoch(0)
    trainer.release()


def test_default_and_bad_input(ctx, cls):
    trainer, _ = make(ctx, cls, 3, 4)
    assert trainer.persistent  # one work group is always resident
    trainer.release()
    trainer, _ = make(ctx, cls, 37, 2)
    assert trainer.persistent != gl.is_software(ctx)  # a GPU runs persistent, llvmpipe a dispatch a phase
    assert trainer.dispatches_per_step == (1 / trainer.check_every if trainer.persistent else cls.PHASES)
    trainer.release()
    with pytest.raises(TypeError, match="Adam"):
        make(ctx, cls, 3, 4, make_optimizer=lambda: reference.Adam(1e-3))

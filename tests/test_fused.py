"""The fused trainer's two shaders (glsl/fused_*.comp) against NumPy; its API is tested with the other
trainer's in tests/test_trainers.py.

Awkward shapes: hidden 130 (not a multiple of any tile), batches of 37 and 1, an epoch of 50 samples
(so the last batch is a leftover of 13); every output buffer poisoned with NaN before the dispatch.
"""

import numpy as np
import pytest

from helpers import check, fused_mlp, reference

N, H = 50, 130
RTOL = 1e-5


def make_data(seed=7, n=N):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint32)
    return images, labels, images.reshape(n, -1) / np.float32(255)


def make_trainer(ctx, optimizer=None, batch_size=37, seed=3, hidden=H, images=None, labels=None, split=False,
                 backward=None, **layout):
    """The plain pair (fused_forward_1, fused_backward_1) unless `layout` says otherwise (blocked=None,
    tiled_hidden=None: the trainer's default layout for the width)."""
    if images is None:
        images, labels, _ = make_data()
    params = reference.init_params(784, hidden, 10, seed=1)
    layout = layout or dict(blocked=False)
    return fused_mlp.FusedMLP(ctx, params, images, labels, optimizer=optimizer or reference.SGD(0.3),
                              batch_size=batch_size, seed=seed, split_hidden=split, backward_defines=backward,
                              **layout), params


def run_forward(trainer, step, epoch=0):
    """fused_forward_1 alone on batch `step`, its outputs poisoned with NaN first (one dispatch, one barrier)."""
    trainer.start_epoch(epoch)
    for name in ("A1", "dZ1", "dlogits", "losses"):
        trainer.arrays[name].fill(np.nan)
    trainer.forward.set(step=step)
    trainer.forward.program.run(*trainer.dispatches(step)[0][1])
    ctx = trainer.ctx
    ctx.memory_barrier()
    return {name: trainer.read(name) for name in ("A1", "dZ1", "dlogits", "losses")}


@pytest.mark.parametrize("split", [False, True], ids=["forward_1", "forward_3_split"])
@pytest.mark.parametrize("batch_size, step, hidden", [(37, 0, H), (37, 1, H), (1, 5, H), (37, 1, 128), (5, 3, 800)],
                         ids=["B37", "B37-leftover13", "B1", "B37-H128-vec4", "B5-H800-wide"])
def test_forward_xent_matches_reference(ctx, batch_size, step, hidden, split):
    """fused_forward_1 (or fused_forward_3_split): A1, dZ1, dlogits and the per-sample losses of one batch;
    rows past the batch stay unwritten. The split version runs twice: its counters must be back at zero.

    H = 130 reads W1 one float at a time (VEC4 0), H = 128 as vec4 (VEC4 1)."""
    images, labels, X = make_data()
    trainer, params = make_trainer(ctx, batch_size=batch_size, images=images, labels=labels, hidden=hidden,
                                   split=split)
    assert trainer.forward_defines["VEC4"] == int(hidden % 4 == 0)
    out = run_forward(trainer, step)
    if split:
        assert not trainer.read("counters").any(), "the last work group of a sample block left its counter set"
        out = run_forward(trainer, step)

    idx = reference.epoch_order(N, 0, 3)[step * batch_size:(step + 1) * batch_size]
    count, start = len(idx), step * batch_size
    ref = fused_mlp.reference_outputs(params, X[idx], labels[idx])
    for name in ("A1", "dZ1", "dlogits"):
        assert check.compare(name, out[name][:count], ref[name], RTOL)
        assert np.isnan(out[name][count:]).all(), f"fused_forward_1 wrote {name} rows past the batch"
    assert check.compare("losses", out["losses"][start:start + count], ref["losses"], RTOL)
    assert np.isnan(out["losses"][:start]).all() and np.isnan(out["losses"][start + count:]).all()


@pytest.mark.parametrize("tunables", [None, dict(BC=32, TJ=32, TKT=8, KPT=2)], ids=["tuned", "BC32"])
@pytest.mark.parametrize("batch_size", [37, 1, 128])
def test_backward_gradients_match_reference(ctx, batch_size, tunables):
    """fused_backward_1 with params 0 and the lr uniform at -1 leaves exactly the gradients in the params buffer,
    with FusedMLP's tuned tunables and with the shader's own (batch 128 = four BC chunks of 32)."""
    n = 150
    images, labels, X = make_data(n=n)
    trainer, params = make_trainer(ctx, batch_size=batch_size, images=images, labels=labels, backward=tunables)
    trainer.start_epoch(0)
    idx = reference.epoch_order(n, 0, 3)[:batch_size]
    logits, cache = reference.forward(params, X[idx])
    _, dlogits = reference.softmax_xent(logits, labels[idx])
    grads = reference.backward(params, cache, dlogits)
    dZ1 = (dlogits @ params["W2"].T) * (cache[1] > 0)
    for name, rows in (("A1", cache[2]), ("dZ1", dZ1), ("dlogits", dlogits)):
        full = np.full(trainer.arrays[name].shape, np.nan, dtype=np.float32)  # rows past the batch: NaN
        full[:batch_size] = rows
        trainer.write(name, full)
    trainer.write_params({k: np.zeros_like(v) for k, v in params.items()})
    trainer.backward.set(lr=-1.0)   # the shader's uniform itself: the trainer refuses a negative rate
    trainer.backward.set(step=0)
    trainer.backward.program.run(*trainer.dispatches(0)[1][1])
    got = trainer.read_params()
    for name in ("W1", "b1", "W2", "b2"):
        assert check.compare(f"d{name}", got[name], grads[name], RTOL)


@pytest.mark.parametrize("make_optimizer", [lambda: reference.SGD(0.3), lambda: reference.Momentum(0.1, 0.9),
                                            lambda: reference.Adam(1e-3, eps=1e-6)], ids=["SGD", "Momentum", "Adam"])
@pytest.mark.parametrize("batch_size, hidden, split", [(37, H, False), (1, H, False), (37, 128, False), (37, H, True)],
                         ids=["B37", "B1", "B37-H128", "B37-split"])
def test_fused_steps_match_reference(ctx, make_optimizer, batch_size, hidden, split):
    """Whole steps (both dispatches) over the epoch's shuffled batches equal reference steps.

    Adam with eps 1e-6: its step is g / (sqrt(v) + eps), about lr * sign(g), so with eps 1e-8 a gradient
    near 1e-8 (float32 rounding of a sum that nearly cancels) moves its weight by up to lr either way."""
    images, labels, X = make_data()
    trainer, params = make_trainer(ctx, make_optimizer(), batch_size=batch_size, images=images, labels=labels,
                                   hidden=hidden, split=split)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, make_optimizer()
    steps = 4 if batch_size == 1 else trainer.steps_per_epoch  # B=37: a full batch, then the leftover 13
    for epoch in range(2):
        trainer.start_epoch(epoch)
        order = reference.epoch_order(N, epoch, 3)
        for s in range(steps):
            trainer.step(s)
            idx = order[s * batch_size:(s + 1) * batch_size]
            _, grads = reference.loss_and_grads(ref, X[idx], labels[idx])
            optimizer.step(ref, grads)
    assert_trained_like(trainer, ref, optimizer)
    assert trainer.counts["steps"] == 2 * steps


@pytest.mark.parametrize("hidden, shaders", [
    (128, ["fused_forward_1_xent.comp", "fused_backward_3_blocked.comp"]),
    (130, ["fused_forward_1_xent.comp", "fused_backward_3_blocked.comp"]),
    (800, ["fused_hidden_2_blocked.comp", "fused_head_1_xent.comp", "fused_backward_3_blocked.comp"])],
    ids=["H128", "H130", "H800"])
def test_default_is_the_fastest_layout_for_the_width(ctx, hidden, shaders):
    """Given no layout, FusedMLP runs register blocking, and above fused_mlp.WIDE_FROM hidden units the
    three-dispatch step too (the faster on an H200 at 784-128-10 and 784-800-10); given one option, exactly
    that; with dropout, the dropout pair."""
    trainer, _ = make_trainer(ctx, hidden=hidden, blocked=None, tiled_hidden=None)
    assert [k.name for k, _ in trainer.dispatches(0)] == shaders
    assert (trainer.blocked, trainer.tiled_hidden) == (True, hidden > fused_mlp.WIDE_FROM)
    plain, _ = make_trainer(ctx, hidden=hidden, blocked=False)
    assert [k.name for k, _ in plain.dispatches(0)] == ["fused_forward_1_xent.comp", "fused_backward_1_update.comp"]
    tiled, _ = make_trainer(ctx, hidden=hidden, tiled_hidden=True)
    assert (tiled.blocked, tiled.tiled_hidden) == (False, True)
    images, labels, _ = make_data()
    dropping = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=1), images, labels,
                                  optimizer=reference.SGD(0.3), batch_size=37, dropout=(0.8, 0.5))
    assert [k.name for k, _ in dropping.dispatches(0)] == ["fused_forward_2_dropout.comp", "fused_backward_2_dropout.comp"]
    for t in (trainer, plain, tiled, dropping):
        t.release()


@pytest.mark.parametrize("make_optimizer", [lambda: reference.SGD(0.3), lambda: reference.Momentum(0.1, 0.9)],
                         ids=["SGD", "Momentum"])
@pytest.mark.parametrize("hidden", [H, 800], ids=["H130", "H800"])
def test_default_layout_steps_match_reference(ctx, make_optimizer, hidden):
    """The default layout's whole steps (blocked; blocked and tiled at H 800) over two epochs equal the reference's."""
    images, labels, X = make_data()
    trainer, params = make_trainer(ctx, make_optimizer(), images=images, labels=labels, hidden=hidden,
                                   blocked=None, tiled_hidden=None)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, make_optimizer()
    for epoch in range(2):
        trainer.start_epoch(epoch)
        order = reference.epoch_order(N, epoch, 3)
        for s in range(trainer.steps_per_epoch):
            trainer.step(s)
            idx = order[s * 37:(s + 1) * 37]
            optimizer.step(ref, reference.loss_and_grads(ref, X[idx], labels[idx])[1])
    assert_trained_like(trainer, ref, optimizer)


def assert_trained_like(trainer, ref: dict, optimizer) -> None:
    """The trainer's parameters equal `ref` and its optimizer state the reference optimizer's (m, v)."""
    got = trainer.read_params()
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)
    for key, state in trainer.read_state().items():
        ref_state = optimizer.v if key == "v" else optimizer.m
        for name in ref:
            assert check.compare(f"{key}[{name}]", state[name], ref_state[name], RTOL)

"""The fused trainer (helpers/fused_mlp.py, glsl/fused_*.comp) and the optimizer shaders against NumPy.

Awkward shapes: hidden 130 (not a multiple of any tile), batches of 37 and 1, an epoch of 50 samples
(so the last batch is a leftover of 13); every output buffer poisoned with NaN before the dispatch.
"""

import numpy as np
import pytest

from helpers import check, fused_mlp, gl, reference

N, H = 50, 130
RTOL = 1e-5


def make_data(seed=7, n=N):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint32)
    return images, labels, images.reshape(n, -1) / np.float32(255)


def make_trainer(ctx, optimizer=None, batch_size=37, seed=3, hidden=H, images=None, labels=None):
    if images is None:
        images, labels, _ = make_data()
    params = reference.init_params(784, hidden, 10, seed=1)
    return fused_mlp.FusedMLP(ctx, params, images, labels, optimizer=optimizer or reference.SGD(0.3),
                              batch_size=batch_size, seed=seed), params


@pytest.mark.parametrize("batch_size, step, hidden", [(37, 0, H), (37, 1, H), (1, 5, H), (37, 1, 128), (5, 3, 800)],
                         ids=["B37", "B37-leftover13", "B1", "B37-H128-vec4", "B5-H800-wide"])
def test_forward_xent_matches_reference(ctx, batch_size, step, hidden):
    """fused_forward_1: A1, dZ1, dlogits and the per-sample losses of one batch; rows past the batch stay unwritten.

    H = 130 reads W1 one float at a time (VEC4 0), H = 128 as vec4 (VEC4 1)."""
    images, labels, X = make_data()
    trainer, params = make_trainer(ctx, batch_size=batch_size, images=images, labels=labels, hidden=hidden)
    assert trainer.forward_defines["VEC4"] == int(hidden % 4 == 0)
    got = trainer.run_forward(step=step, epoch=0)  # poisons A1, dZ1, dlogits, losses with NaN first

    idx = reference.epoch_order(N, 0, 3)[step * batch_size:(step + 1) * batch_size]
    count, start = len(idx), step * batch_size
    ref = fused_mlp.reference_outputs(params, X[idx], labels[idx])
    for name in ("A1", "dZ1", "dlogits", "losses"):
        assert check.compare(name, got[name], ref[name], RTOL)
    for name, binding in (("A1", 6), ("dZ1", 7), ("dlogits", 8)):
        rows = trainer.download(binding).reshape(batch_size, -1)
        assert np.isnan(rows[count:]).all(), f"fused_forward_1 wrote {name} rows past the batch"
    losses = trainer.download(9)
    assert np.isnan(losses[:start]).all() and np.isnan(losses[start + count:]).all()


@pytest.mark.parametrize("batch_size", [37, 1, 128])
def test_backward_gradients_match_reference(ctx, batch_size):
    """fused_backward_1 with params 0 and SGD lr = -1 leaves exactly the gradients in the params buffer."""
    n = 150  # batch 128 = four BC chunks of 32
    images, labels, X = make_data(n=n)
    trainer, params = make_trainer(ctx, batch_size=batch_size, images=images, labels=labels)
    trainer.start_epoch(0)
    idx = reference.epoch_order(n, 0, 3)[:batch_size]
    logits, cache = reference.forward(params, X[idx])
    _, dlogits = reference.softmax_xent(logits, labels[idx])
    grads = reference.backward(params, cache, dlogits)
    dZ1 = (dlogits @ params["W2"].T) * (cache[1] > 0)
    for binding, rows in ((6, cache[2]), (7, dZ1), (8, dlogits)):
        full = np.full(trainer.buffers[binding].shape, np.nan, dtype=np.float32)  # rows past the batch: NaN
        full[:batch_size] = rows
        trainer.buffers[binding].write(full)
    trainer.write_params({k: np.zeros_like(v) for k, v in params.items()})
    trainer.lr = -1.0
    trainer.backward.set(step=0)
    trainer.backward.program.run(*trainer.groups(0)[1])
    got = trainer.read_params()
    for name in ("W1", "b1", "W2", "b2"):
        assert check.compare(f"d{name}", got[name], grads[name], RTOL)


@pytest.mark.parametrize("make_optimizer", [lambda: reference.SGD(0.3), lambda: reference.Momentum(0.1, 0.9),
                                            lambda: reference.Adam(1e-3, eps=1e-6)], ids=["SGD", "Momentum", "Adam"])
@pytest.mark.parametrize("batch_size, hidden", [(37, H), (1, H), (37, 128)], ids=["B37", "B1", "B37-H128"])
def test_fused_steps_match_reference(ctx, make_optimizer, batch_size, hidden):
    """Whole steps (both dispatches) over the epoch's shuffled batches equal reference steps.

    Adam with eps 1e-6: its step is g / (sqrt(v) + eps), about lr * sign(g), so with eps 1e-8 a gradient
    near 1e-8 (float32 rounding of a sum that nearly cancels) moves its weight by up to lr either way."""
    images, labels, X = make_data()
    trainer, params = make_trainer(ctx, make_optimizer(), batch_size=batch_size, images=images, labels=labels,
                                   hidden=hidden)
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
    got = trainer.read_params()
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)
    for key, state in trainer.read_state().items():
        ref_state = optimizer.v if key == "v" else optimizer.m
        for name in ref:
            assert check.compare(f"{key}[{name}]", state[name], ref_state[name], RTOL)
    assert trainer.counts["steps"] == 2 * steps


def test_step_issues_two_dispatches_and_two_barriers(ctx, count_calls):
    """Count the real calls: program.run of both shaders and ctx.memory_barrier, over one epoch."""
    trainer, _ = make_trainer(ctx)
    trainer.start_epoch(0)
    for program in (trainer.forward.program, trainer.backward.program):
        count_calls(program, "run", "run")
    count_calls(ctx, "memory_barrier", "barrier")
    calls = count_calls.calls
    for s in range(trainer.steps_per_epoch):
        trainer.step(s)
    steps = trainer.steps_per_epoch
    assert calls == {"run": fused_mlp.DISPATCHES_PER_STEP * steps, "barrier": fused_mlp.BARRIERS_PER_STEP * steps}
    assert trainer.counts["dispatches"] == calls["run"] and trainer.counts["barriers"] == calls["barrier"]
    trainer.release()


def test_profile_measures_like_the_unfused_trainer(ctx):
    """Both trainers' profiles come from gpu_mlp.measure_step: same keys, empty-dispatch cost included,
    and the fused trainer's parameters are restored."""
    trainer, params = make_trainer(ctx)
    profile = trainer.profile_step(repeat=2)
    assert list(profile["kernel"]) == [fused_mlp.FORWARD, fused_mlp.BACKWARD]
    assert {"empty", "step", "issue", "readback", "order_upload", "clock"} <= set(profile)
    got = trainer.read_params()
    assert all(np.array_equal(got[k], params[k]) for k in params), "profile_step changed the parameters"
    phases = trainer.epoch_phases(profile, epoch_seconds=10.0)
    work = sum(max(t - profile["empty"], 0.0) for t in profile["kernel"].values()) * trainer.steps_per_epoch
    assert phases["kernel"] == pytest.approx(work)
    trainer.release()


@pytest.mark.parametrize("make_optimizer", [lambda: reference.Momentum(0.05, 0.9),
                                            lambda: reference.Adam(1e-2, 0.8, 0.99, 1e-6)], ids=["momentum", "adam"])
def test_optimizer_shaders_match_reference(ctx, make_optimizer, rng):
    """update_2_momentum / update_3_adam on 1037 parameters (not a multiple of 256), three steps
    (fused_mlp.check_optimizer, which notebook 05 calls too)."""
    assert fused_mlp.check_optimizer(ctx, make_optimizer(), n=1037, steps=3)


def test_predict_matches_reference(ctx):
    images, labels, X = make_data(seed=11, n=103)
    trainer, params = make_trainer(ctx, images=images[:50], labels=labels[:50])
    trainer.add_eval_set("test", images, labels)
    got = trainer.predict("test")
    logits = reference.forward(params, X)[0]
    top2 = np.sort(logits, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-4 * np.abs(top2[:, 1]).max()  # no near-tie for float rounding to flip
    assert clear.sum() > 90
    assert np.array_equal(got[clear], logits.argmax(axis=1)[clear])
    assert trainer.accuracy("test") == pytest.approx(np.mean(got == labels))


def test_same_seed_gives_identical_weights(ctx):
    runs = []
    for _ in range(2):
        trainer, _ = make_trainer(ctx, reference.Adam(1e-3))
        for epoch in range(2):
            trainer.run_epoch(epoch, check_every=1)
        runs.append(trainer.read_params())
        trainer.release()
    for name in runs[0]:
        assert runs[0][name].tobytes() == runs[1][name].tobytes(), f"{name} differs between two identical runs"


def test_divergence_stops_with_a_clear_message(ctx):
    """A learning rate that overflows the logits stops at the step where the loss became NaN, as in NumPy."""
    lr = 1e15  # random images and labels need an absurd rate: the stable softmax keeps finite logits finite
    images, labels, X = make_data()
    trainer, params = make_trainer(ctx, reference.SGD(lr), batch_size=5, images=images, labels=labels)
    with pytest.raises(reference.TrainingDiverged) as info:
        for epoch in range(3):
            trainer.run_epoch(epoch, check_every=4)
    message = str(info.value)
    assert message.startswith("Training diverged at epoch 0, step ")
    assert f"lr={lr}" in message and "try lr=1e+14" in message
    with pytest.raises(reference.TrainingDiverged) as ref_info:
        reference.train(params, X, labels, epochs=3, batch_size=5, lr=lr, seed=3, progress=False)
    print("GPU:  ", message, "\nNumPy:", ref_info.value)
    assert message.split(":")[0] == str(ref_info.value).split(":")[0], "not the step NumPy stops at"


def test_clear_errors(ctx):
    images, labels, X = make_data()
    params = reference.init_params(784, H, 10, seed=1)
    with pytest.raises(TypeError, match="uint8 images"):
        fused_mlp.FusedMLP(ctx, params, X, labels)
    with pytest.raises(ValueError, match=f"{N} images and labels of shape"):
        fused_mlp.FusedMLP(ctx, params, images, labels[:-1])
    for bad, match in ((10, r"0\.\.9"), (-1, r"0\.\.9")):
        wrong = labels.astype(np.int64)
        wrong[3] = bad
        with pytest.raises(ValueError, match=match):
            fused_mlp.FusedMLP(ctx, params, images, wrong)
    with pytest.raises(TypeError, match="integers"):
        fused_mlp.FusedMLP(ctx, params, images, labels.astype(np.float32))
    trainer, _ = make_trainer(ctx, images=images, labels=labels)
    with pytest.raises(KeyError, match="add_eval_set"):
        trainer.accuracy("test")
    trainer.release()


def test_flatten_roundtrip():
    params = reference.init_params(784, H, 10, seed=2)
    back = fused_mlp.unflatten(fused_mlp.flatten(params), 784, H)
    assert all(np.array_equal(back[k], params[k]) for k in params)

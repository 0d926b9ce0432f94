"""helpers.gpu_mlp.GPUTrainer against helpers.reference: one step, whole epochs with a partial last batch,
bitwise reproducibility, divergence, save/load, GPU evaluation, and a tiny MNIST run."""

import numpy as np
import pytest

from helpers import data, reference
from helpers.check import rel_error
from helpers.gpu_mlp import STEP, GPUTrainer, load_params

TOLERANCE = 1e-5
K, H, C = 70, 130, 13  # awkward: not multiples of any work-group size


def toy(rng, n=100):
    images = rng.integers(0, 256, (n, K), dtype=np.uint8)
    labels = rng.integers(0, C, n)
    return images, labels, reference.init_params(K, H, C, seed=3)


def copy(params):
    return {name: value.copy() for name, value in params.items()}


def assert_close(got: dict, ref: dict, what: str):
    for name in ("W1", "b1", "W2", "b2"):
        err = rel_error(got[name], ref[name])
        assert err < TOLERANCE, f"{what}: {name} relative error {err:.2e}"


@pytest.mark.parametrize("step", [0, 2])  # step 2 of 100 samples at batch 37 is the 26 left over
def test_one_step_equals_reference_step(ctx, rng, step):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, lr=0.3, seed=7)
    trainer.step(step, epoch=1)
    start, B = trainer.batch(step)
    assert B == (26 if step == 2 else 37)
    batch = reference.epoch_order(len(images), 1, 7)[start:start + B]
    ref = copy(params)
    loss, grads = reference.loss_and_grads(ref, data.normalise(images[batch]), labels[batch])
    reference.SGD(0.3).step(ref, grads)
    assert_close(trainer.gradients(), grads, "gradients")
    assert_close(trainer.parameters(), ref, "parameters after one step")
    stats = trainer.read_stats(step, step + 1)
    assert rel_error(stats[0, 0] / B, loss) < TOLERANCE, "batch loss"


def test_two_epochs_equal_reference_train(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, lr=0.3, seed=7)
    history = trainer.train(2, progress=False, readback_every=2)
    ref = copy(params)
    ref_history = reference.train(ref, data.normalise(images), labels, epochs=2, batch_size=37, lr=0.3,
                                  seed=7, progress=False)
    assert_close(trainer.parameters(), ref, "parameters after two epochs (last batch 26 of 37)")
    assert rel_error(history["loss"], ref_history["loss"]) < TOLERANCE
    assert history["train_acc"] == ref_history["train_acc"]
    assert trainer.counts["steps"] == 6


def test_step_issues_its_dispatches_and_barriers(ctx, rng, count_calls):
    """Count the real calls (every program's run, ctx.memory_barrier) over one epoch of train_epoch."""
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, lr=0.3)
    for kernel in trainer.kernels.values():
        count_calls(kernel.program, "run", "run")
    trainer.rebuild_plan()  # the plan holds the programs' run methods: take the counting ones
    trainer.begin_epoch(0)
    count_calls(ctx, "memory_barrier", "barrier")
    calls = count_calls.calls
    before = trainer.counts
    for step in range(trainer.steps_per_epoch):
        trainer.issue_step(*trainer.batch(step), step)
    trainer._count(trainer.steps_per_epoch)
    steps = trainer.steps_per_epoch
    assert calls == {"run": 6 * steps, "barrier": 6 * steps}
    assert trainer.counts["dispatches"] - before["dispatches"] == calls["run"]
    assert trainer.counts["barriers"] - before["barriers"] == calls["barrier"]
    trainer.release()


def test_setting_lr_changes_the_next_step(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, lr=0.3, seed=7)
    trainer.lr = 0.05
    trainer.step(0, epoch=0)
    ref = copy(params)
    batch = reference.epoch_order(len(labels), 0, 7)[:37]
    reference.SGD(0.05).step(ref, reference.loss_and_grads(ref, data.normalise(images[batch]), labels[batch])[1])
    assert_close(trainer.parameters(), ref, "parameters after a step at the new lr")
    trainer.release()


def test_same_seed_gives_bitwise_identical_weights(ctx, rng):
    images, labels, params = toy(rng, n=200)
    runs = []
    for seed in (0, 0, 1):
        trainer = GPUTrainer(ctx, params, images, labels, batch_size=32, lr=0.3, seed=seed)
        trainer.train(2, progress=False, eval_train=False)
        runs.append(trainer.parameters())
    for name in runs[0]:
        assert np.array_equal(runs[0][name], runs[1][name]), f"{name} differs between two runs with the same seed"
    assert not np.array_equal(runs[0]["W1"], runs[2]["W1"]), "another seed (another order) should change W1"


def test_huge_learning_rate_stops_with_the_step(ctx, rng):
    images, labels, params = toy(rng, n=200)
    # inputs in [0, 1] and a max-subtracting softmax survive large steps with a finite (huge) loss;
    # lr=1e10 overflows float32 within a few steps
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=16, lr=1e10, seed=0)
    with pytest.raises(reference.TrainingDiverged) as info:
        trainer.train(3, progress=False, readback_every=5)
    message = str(info.value)
    assert message.startswith("Training diverged at epoch ") and "lr=10000000000.0 is too large" in message
    assert len(message) < 300, "one clear line, not a page of numbers"
    epoch, step = (int(word.strip(",:")) for word in message.split()[4:7:2])
    stats = trainer.read_stats(0, step + 1)
    assert trainer.epoch == epoch and not np.isfinite(stats[step, 0]), "the named step's loss is not finite"
    assert np.isfinite(stats[:step, 0]).all(), "the named step is the first non-finite one"


def test_save_and_load_reproduce_predictions(ctx, rng, tmp_path):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, lr=0.3)
    trainer.train(1, progress=False, eval_train=False)
    path = trainer.save(tmp_path / "mlp")
    assert path.name == "mlp.npz"
    loaded = GPUTrainer(ctx, reference.init_params(K, H, C, seed=99))  # no training data: predicts only
    loaded.load(path)
    assert np.array_equal(loaded.predict(images), trainer.predict(images))
    assert loaded.accuracy(images, labels) == trainer.accuracy(None, None)
    for name, value in load_params(path).items():
        assert np.array_equal(value, trainer.parameters()[name])
    np.savez(tmp_path / "other.npz", weights=np.zeros(3))
    with pytest.raises(KeyError, match="not the MLP parameters"):
        load_params(tmp_path / "other.npz")


def test_gpu_logits_match_reference_forward_in_chunks(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, eval_batch=32)  # 100 images: chunks of 32, 32, 32, 4
    ref = reference.forward(params, data.normalise(images))[0]
    assert rel_error(trainer.logits(images), ref) < TOLERANCE
    assert (trainer.predict(images) == ref.argmax(axis=1)).mean() > 0.99


def test_wrong_inputs_are_explained(ctx, rng):
    images, labels, params = toy(rng)
    with pytest.raises(TypeError, match="raw uint8 images"):
        GPUTrainer(ctx, params, data.normalise(images), labels)
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.12"):
        GPUTrainer(ctx, params, images, labels + 13)
    with pytest.raises(ValueError, match=r"got 100 images and labels of shape \(99,\)"):
        GPUTrainer(ctx, params, images, labels[:-1])
    with pytest.raises(ValueError, match=r"images have 69 pixels each, but W1 has 70 rows"):
        GPUTrainer(ctx, params, images[:, :-1], labels)
    with pytest.raises(RuntimeError, match="no training images"):
        GPUTrainer(ctx, params).train(1, progress=False)


def test_tiny_mnist_run_matches_numpy(ctx, mnist_dir):
    (X_train, y_train), (X_test, y_test) = data.load_mnist(mnist_dir)
    n, n_test = 2048, 500
    params = reference.init_params(seed=0)
    trainer = GPUTrainer(ctx, params, X_train[:n], y_train[:n], batch_size=128, lr=0.3, seed=0)
    history = trainer.train(2, test=(X_test[:n_test], y_test[:n_test]), progress=False, eval_train=False)
    ref = copy(params)
    ref_history = reference.train(ref, data.normalise(X_train[:n]), y_train[:n], epochs=2, batch_size=128,
                                  lr=0.3, seed=0, X_test=data.normalise(X_test[:n_test]), y_test=y_test[:n_test],
                                  progress=False)
    assert history["test_acc"][-1] > 0.8, f"2 epochs on 2048 images should reach 80 %: {history['test_acc']}"
    assert abs(history["test_acc"][-1] - ref_history["test_acc"][-1]) <= 0.01
    assert rel_error(history["loss"], ref_history["loss"]) < 1e-4


def test_profile_step_restores_the_parameters(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, lr=0.3)
    profile = trainer.profile_step(repeat=2, readback_every=2)
    for name, value in trainer.parameters().items():
        assert np.array_equal(value, params[name]), f"profile_step changed {name}"
    assert list(profile["kernel"]) == [name for _, name in STEP]
    assert profile["dispatches_per_step"] == 6 and profile["batch"] == 37
    phases = trainer.epoch_phases(profile, epoch_seconds=10.0, readback_every=2)
    work = sum(max(t - profile["empty"], 0.0) for t in profile["kernel"].values()) * trainer.steps_per_epoch
    assert phases["kernel"] == pytest.approx(work)
    assert phases["readback"] == pytest.approx(profile["readback"] * -(-trainer.steps_per_epoch // 2))
    trainer.release()


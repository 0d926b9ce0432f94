"""helpers.gpu_mlp.GPUTrainer at awkward sizes only it trains (K = 70 inputs, C = 13 classes: no work-group
size divides them): one step's gradients and parameters, two epochs against reference.train, logits in
chunks, and a tiny MNIST run. The API both trainers share is tested in tests/test_trainers.py."""

import numpy as np
import pytest

from helpers import data, reference
from helpers.check import rel_error
from helpers.gpu_mlp import GPUTrainer

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
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, optimizer=reference.SGD(0.3), seed=7)
    trainer.start_epoch(1)
    for name in ("A1", "logits", "dlogits", "dZ1", "grads"):
        trainer.arrays[name].fill(np.nan)  # poisoned: every value checked below was written by a kernel
    trainer.step(step)
    start, B = trainer.batch(step)
    assert B == (26 if step == 2 else 37)
    batch = reference.epoch_order(len(images), 1, 7)[start:start + B]
    ref = copy(params)
    loss, grads = reference.loss_and_grads(ref, data.normalise(images[batch]), labels[batch])
    reference.SGD(0.3).step(ref, grads)
    assert_close(trainer.read_grads(), grads, "gradients")
    assert_close(trainer.read_params(), ref, "parameters after one step")
    assert rel_error(trainer.loss_sums(step, step + 1)[0] / B, loss) < TOLERANCE, "batch loss"


def test_two_epochs_equal_reference_train(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, optimizer=reference.SGD(0.3), seed=7,
                         check_every=2)
    history = trainer.train(2, progress=False)
    ref = copy(params)
    ref_history = reference.train(ref, data.normalise(images), labels, epochs=2, batch_size=37, lr=0.3,
                                  seed=7, progress=False)
    assert_close(trainer.read_params(), ref, "parameters after two epochs (last batch 26 of 37)")
    assert rel_error(history["loss"], ref_history["loss"]) < TOLERANCE
    assert history["train_acc"] == ref_history["train_acc"]


def test_setting_lr_changes_the_next_step(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=37, optimizer=reference.SGD(0.3), seed=7)
    trainer.lr = 0.05
    trainer.start_epoch(0)
    trainer.step(0)
    ref = copy(params)
    batch = reference.epoch_order(len(labels), 0, 7)[:37]
    reference.SGD(0.05).step(ref, reference.loss_and_grads(ref, data.normalise(images[batch]), labels[batch])[1])
    assert_close(trainer.read_params(), ref, "parameters after a step at the new lr")
    trainer.release()


def test_gpu_logits_match_reference_forward_in_chunks(ctx, rng):
    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, eval_batch=32)  # 100 images: chunks of 32, 32, 32, 4
    trainer.add_eval_set("test", images, labels)
    ref = reference.forward(params, data.normalise(images))[0]
    assert rel_error(trainer.logits("test"), ref) < TOLERANCE
    assert (trainer.predict("test") == ref.argmax(axis=1)).mean() > 0.99


def test_tiny_mnist_run_matches_numpy(ctx, mnist_dir):
    (X_train, y_train), (X_test, y_test) = data.load_mnist(mnist_dir)
    n, n_test = 2048, 500
    params = reference.init_params(seed=0)
    trainer = GPUTrainer(ctx, params, X_train[:n], y_train[:n], batch_size=128, optimizer=reference.SGD(0.3))
    trainer.add_eval_set("test", X_test[:n_test], y_test[:n_test])
    history = trainer.train(2, progress=False, evaluate=("test",))
    ref = copy(params)
    ref_history = reference.train(ref, data.normalise(X_train[:n]), y_train[:n], epochs=2, batch_size=128,
                                  lr=0.3, seed=0, X_test=data.normalise(X_test[:n_test]), y_test=y_test[:n_test],
                                  progress=False)
    assert history["test_acc"][-1] > 0.8, f"2 epochs on 2048 images should reach 80 %: {history['test_acc']}"
    assert abs(history["test_acc"][-1] - ref_history["test_acc"][-1]) <= 0.01
    assert rel_error(history["loss"], ref_history["loss"]) < 1e-4


# --- the step account's measurements (helpers.bench.profile), on the small trainer ------------------------------

def test_issue_calls_counts_every_call_of_a_step_and_restores_moderngl(ctx, rng):
    import moderngl
    from helpers.bench import profile

    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=32, optimizer=reference.SGD(0.3), seed=7)
    originals = (moderngl.ComputeShader.run, moderngl.Context.memory_barrier, moderngl.Uniform.value)
    trainer.start_epoch(0)
    trainer.step(0)
    calls = profile.issue_calls(trainer, steps=3, samples=2)
    assert (moderngl.ComputeShader.run, moderngl.Context.memory_barrier, moderngl.Uniform.value) == originals
    assert calls["run()"]["calls"] == 6 and calls["memory_barrier()"]["calls"] == 6   # six dispatches a step
    assert calls["uniform write"]["calls"] >= 4                                      # start x3 and the slot
    assert all(c["per_step"].median > 0 for c in calls.values())
    trainer.release()


def test_profile_step_and_step_ways_put_the_trainer_back_and_add_up(ctx, rng):
    from helpers.bench import profile

    images, labels, params = toy(rng)
    trainer = GPUTrainer(ctx, params, images, labels, batch_size=32, optimizer=reference.SGD(0.3), seed=7)
    trainer.start_epoch(0)
    before = trainer.read_params()
    prof = profile.profile_step(trainer, repeat=2, warmup=0.0, samples=3)
    ways = profile.step_ways(trainer, samples=2, warmup=0.0)
    assert_close(trainer.read_params(), before, "after measuring")
    assert prof["stream_steps"] == trainer.steps_per_epoch          # a stream of an epoch's steps
    calls = sum(c["per_step"].median for c in prof["calls"].values())
    assert calls + prof["python_around"] == pytest.approx(prof["issue"])
    assert list(ways) == [profile.STEP_CHANGING, profile.STEP_SAME, profile.NO_UNIFORM, profile.NO_BARRIER]
    parts = profile.epoch_account(trainer, prof, 1.0)
    assert sum(parts.values()) == pytest.approx(1.0)
    import json
    written = json.loads(json.dumps(prof, default=float))        # as the benchmarks write it: medians
    assert written["step_timing"] == pytest.approx(prof["step"]) and written["issue"] == pytest.approx(prof["issue"])
    trainer.release()

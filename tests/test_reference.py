"""The NumPy reference: gradients against float64 finite differences, stability, optimizers, training."""

import numpy as np
import pytest

from helpers import reference as ref


def small_problem(dtype=np.float64, B=7, n_in=20, H=16, seed=0):
    rng = np.random.default_rng(seed)
    params = ref.init_params(n_in, H, 10, seed=seed, dtype=dtype)
    params["b1"] += rng.standard_normal(H).astype(dtype) * 0.1
    params["b2"] += rng.standard_normal(10).astype(dtype) * 0.1
    X = rng.random((B, n_in)).astype(dtype)
    y = rng.integers(0, 10, B)
    return params, X, y


def test_gradients_match_finite_differences():
    params, X, y = small_problem()
    errors = ref.grad_check(params, X, y)
    assert set(errors) == {"W1", "b1", "W2", "b2"}
    for name, err in errors.items():
        assert err < 1e-6, f"{name}: relative error {err:.2e}"


def test_grad_check_catches_a_wrong_gradient(monkeypatch):
    params, X, y = small_problem()
    real_backward = ref.backward

    def wrong_backward(p, cache, dlogits):
        grads = real_backward(p, cache, dlogits)
        grads["b1"] = grads["b1"] * 1.01
        return grads

    monkeypatch.setattr(ref, "backward", wrong_backward)
    assert ref.grad_check(params, X, y)["b1"] > 1e-3


def test_softmax_xent_is_stable_for_huge_logits():
    logits = np.array([[1e4, 0.0, -1e4], [5e3, 5e3, 0.0]], dtype=np.float32)
    loss, dlogits = ref.softmax_xent(logits, np.array([0, 2]))
    assert np.isfinite(loss) and np.all(np.isfinite(dlogits))
    np.testing.assert_allclose(loss, (0 + 5e3 + np.log(2)) / 2, rtol=1e-5)
    np.testing.assert_allclose(dlogits.sum(axis=1), 0, atol=1e-6)


def test_float32_and_float64_agree():
    p64, X, y = small_problem()
    p32 = {k: v.astype(np.float32) for k, v in p64.items()}
    l64, g64 = ref.loss_and_grads(p64, X, y)
    l32, g32 = ref.loss_and_grads(p32, X.astype(np.float32), y)
    assert g32["W1"].dtype == np.float32
    np.testing.assert_allclose(l32, l64, rtol=1e-5)
    for k in g64:
        np.testing.assert_allclose(g32[k], g64[k], rtol=1e-4, atol=1e-6)


def test_he_init_is_seeded_and_scaled():
    a, b = ref.init_params(seed=3), ref.init_params(seed=3)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["W1"].shape == (784, 128) and a["b2"].shape == (10,)
    assert abs(a["W1"].std() - np.sqrt(2 / 784)) < 0.002


def test_momentum_and_adam_by_hand():
    g = {"w": np.array([2.0, -0.5])}
    p = {"w": np.array([1.0, 1.0])}
    opt = ref.Momentum(lr=0.1, mu=0.9)
    opt.step(p, g), opt.step(p, g)           # v1 = g, v2 = 1.9 g
    np.testing.assert_allclose(p["w"], 1.0 - 0.1 * (1 + 1.9) * g["w"])
    p = {"w": np.array([1.0, 1.0])}
    adam = ref.Adam(lr=0.01)
    adam.step(p, g)                          # first Adam step moves each weight by lr * sign(g)
    np.testing.assert_allclose(p["w"], 1.0 - 0.01 * np.sign(g["w"]), rtol=1e-6)


def test_training_learns_a_separable_problem():
    rng = np.random.default_rng(0)
    X = rng.random((600, 30)).astype(np.float32)
    y = (X[:, :10].argmax(axis=1)).astype(np.uint8)
    params = ref.init_params(30, 32, 10, seed=0)
    before = ref.accuracy(params, X, y)
    history = ref.train(params, X, y, epochs=40, batch_size=32, lr=0.5, progress=False)
    assert history["loss"][-1] < history["loss"][0]
    assert ref.accuracy(params, X, y) > max(0.55, before + 0.3)


def test_divergence_names_the_step_and_the_fix():
    rng = np.random.default_rng(0)
    X = rng.random((64, 30)).astype(np.float32)   # inputs in [0, 1] and a huge step
    y = rng.integers(0, 10, 64)
    params = ref.init_params(30, 32, 10, seed=0)
    with pytest.raises(ref.TrainingDiverged, match=r"epoch 1, step [12]: the loss is .*lr 1 × 10¹², is too large.*"
                                                   r"SGD at batch 128 trains it with lr 0\.3\.") as err:
        ref.train(params, X, y, epochs=5, batch_size=16, lr=1e12, progress=False)
    assert "10¹¹" not in str(err.value), "the advice is a rate known to work, not a tenth of the bad one"


def separable(n=600, n_in=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, n_in)).astype(np.float32)   # inputs in [0, 1], as MNIST after normalise
    return X, X[:, :10].argmax(axis=1).astype(np.uint8)


def test_a_finite_divergence_stops_in_the_first_epoch():
    """lr=1e4 keeps the loss finite (~1e7, later 1e25) with inputs in [0, 1]; it must stop all the same."""
    X, y = separable()
    with pytest.raises(ref.TrainingDiverged) as err:
        ref.train(ref.init_params(30, 32, 10, seed=0), X, y, epochs=3, batch_size=32, lr=1e4, progress=False)
    message = str(err.value)
    assert message.startswith("Training diverged at epoch 1, step "), message
    assert "(over 23.0, 10× the loss of guessing)" in message, message
    assert "lr 10,000, is too large" in message and "lr 0.3." in message
    assert "e+" not in message and "lr=" not in message and "10000.0" not in message, message


def test_mnist_at_lr_1e4_stops_within_the_first_epoch(mnist_dir):
    from helpers import data

    (images, labels), _ = data.load_mnist(mnist_dir)
    X, y = data.normalise(images[:6000]), labels[:6000]
    with pytest.raises(ref.TrainingDiverged, match=r"^Training diverged at epoch 1, step \d+: .*lr 10,000,"):
        ref.train(ref.init_params(seed=0), X, y, epochs=1, batch_size=128, lr=1e4, progress=False)
    history = ref.train(ref.init_params(seed=0), X, y, epochs=1, batch_size=128, lr=ref.WORKING_LR["SGD"],
                        progress=False)   # the advised rate does not raise
    assert history["loss"][0] < np.log(10)


def test_nan_learning_rate_is_refused_before_training():
    X, y = separable(n=64)
    with pytest.raises(ValueError, match=r"the learning rate lr must be a finite number above 0, got lr=nan") as err:
        ref.train(ref.init_params(30, 32, 10, seed=0), X, y, epochs=1, batch_size=16, lr=float("nan"), progress=False)
    assert not isinstance(err.value, ref.TrainingDiverged)
    with pytest.raises(ref.TrainingDiverged) as err:   # check_loss itself, given one, does not advise it
        ref.check_loss(np.nan, epoch=0, step=0, lr=float("nan"))
    message = str(err.value)
    assert "lr NaN, is not a usable number" in message and message.count("lr NaN") == 1, message
    assert "lr 0.3." in message and "the loss is NaN." in message


def test_check_loss_thresholds_and_optimizer_advice():
    limit = 10 * np.log(10)
    assert ref.check_loss(np.float32(2.3), epoch=0, step=0, lr=0.3) == pytest.approx(2.3)
    assert ref.check_loss(limit - 0.01, epoch=0, step=0, lr=0.3) == pytest.approx(limit - 0.01)
    for bad in (limit + 0.01, np.inf, -np.inf, np.nan):
        with pytest.raises(ref.TrainingDiverged, match="epoch 3, step 8"):
            ref.check_loss(bad, epoch=2, step=7, lr=5.0)
    with pytest.raises(ref.TrainingDiverged, match=r"Adam at batch 128 trains it with lr 0\.001\."):
        ref.check_loss(np.nan, epoch=0, step=0, lr=1.0, optimizer="Adam")
    with pytest.raises(ref.TrainingDiverged, match=r"Momentum at batch 128 trains it with lr 0\.05\."):
        ref.check_loss(np.nan, epoch=0, step=0, lr=1.0, optimizer="Momentum")
    assert ref.check_loss(6 * np.log(100), epoch=0, step=0, lr=0.3, n_classes=100) > limit   # scales with classes
    assert not hasattr(ref, "diverged_message"), "one divergence check: check_loss"


def test_normal_training_does_not_raise():
    X, y = separable()
    history = ref.train(ref.init_params(30, 32, 10, seed=0), X, y, epochs=3, batch_size=32, lr=0.3, progress=False)
    assert len(history["loss"]) == 3 and history["loss"][-1] < history["loss"][0]


def test_epoch_order_depends_only_on_seed_and_epoch():
    a = ref.epoch_order(100, 2, seed=5)
    assert np.array_equal(a, ref.epoch_order(100, 2, seed=5))
    assert not np.array_equal(a, ref.epoch_order(100, 3, seed=5))
    assert sorted(a) == list(range(100)) and a.dtype == np.uint32


@pytest.mark.parametrize("x, words", [
    (1.748e7, "17,480,000"), (17483921.0, "17,480,000"), (1e4, "10,000"), (999.96, "1,000"), (999.4, "999.4"),
    (0.3, "0.3"), (0.001, "0.001"), (0.05, "0.05"), (23.03, "23.03"), (0, "0"),
    (1e12, "1 × 10¹²"), (1.5e9, "1.5 × 10⁹"), (8.5e8, "850,000,000"), (2e-5, "2 × 10⁻⁵"), (9.99e-4, "9.99 × 10⁻⁴"),
    (-1.748e7, "-17,480,000"), (float("nan"), "NaN"), (float("inf"), "infinity"), (float("-inf"), "minus infinity")])
def test_number_text_reads_without_python_repr(x, words):
    """Either side of each switch: commas from 1,000, powers of ten from 10⁹ and below 0.001."""
    assert ref.number_text(x) == words


def test_divergence_message_prints_the_loss_and_rates_for_a_reader():
    with pytest.raises(ref.TrainingDiverged) as err:
        ref.check_loss(1.748e7, epoch=0, step=1, lr=1e4)
    assert str(err.value) == (
        "Training diverged at epoch 1, step 2: the loss is 17,480,000 (over 23.0, 10× the loss of guessing). "
        "The learning rate, lr 10,000, is too large for this model; SGD at batch 128 trains it with lr 0.3. "
        "Check too that the inputs are scaled to [0, 1] and the weights are finite.")
    with pytest.raises(ref.TrainingDiverged) as err:   # at or below the working rate: not blamed, no "too"
        ref.check_loss(np.inf, epoch=3, step=9, lr=0.1)
    assert str(err.value) == (
        "Training diverged at epoch 4, step 10: the loss is infinity. The learning rate, lr 0.1, is no larger than "
        "the one SGD at batch 128 trains this model with (0.3), so it is unlikely to be the cause. Check that the "
        "inputs are scaled to [0, 1] and the weights are finite.")

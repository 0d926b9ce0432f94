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
    X = rng.random((64, 30)).astype(np.float32) * np.float32(1e12)   # unscaled inputs and a huge step
    y = rng.integers(0, 10, 64)
    params = ref.init_params(30, 32, 10, seed=0)
    with pytest.raises(ref.TrainingDiverged, match=r"epoch 0, step 1: the loss is nan.*try lr=1e\+11"):
        ref.train(params, X, y, epochs=5, batch_size=16, lr=1e12, progress=False)


def test_epoch_order_depends_only_on_seed_and_epoch():
    a = ref.epoch_order(100, 2, seed=5)
    assert np.array_equal(a, ref.epoch_order(100, 2, seed=5))
    assert not np.array_equal(a, ref.epoch_order(100, 3, seed=5))
    assert sorted(a) == list(range(100)) and a.dtype == np.uint32

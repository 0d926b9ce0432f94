"""Every mistake a clear error, the same from the NumPy trainer (reference.train) and the GPU trainers
(mlp.Trainer), since both call helpers.check: labels, images, parameters, learning rates and other
optimizer hyperparameters (refused where they are set, before any dispatch), saved weights files, and the
notebooks' tests on a machine without MNIST (skipped with one line, notebooks/conftest.py)."""

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import check, data, mlp, reference
from helpers.fused_mlp import FusedMLP
from helpers.gpu_mlp import GPUTrainer

ROOT = Path(__file__).resolve().parent.parent
N, H = 64, 32


def toy(n=N, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 784), dtype=np.uint8), rng.integers(0, 10, n)


def numpy_error(images_u8, labels, params=None, **kwargs):
    """The exception reference.train raises on these inputs (images normalised unless given as float already)."""
    raw = kwargs.pop("raw", False)
    X = data.normalise(images_u8) if images_u8.dtype == np.uint8 and not raw else images_u8
    params = reference.init_params(784, H, 10, seed=1) if params is None else params
    with pytest.raises(Exception) as err:
        reference.train(params, X, labels, epochs=1, batch_size=16, progress=False, **kwargs)
    return err.value


def gpu_error(ctx, images_u8, labels, params=None):
    params = reference.init_params(784, H, 10, seed=1) if params is None else params
    with pytest.raises(Exception) as err:
        GPUTrainer(ctx, params, images_u8, labels)
    return err.value


# --- 1. one check for labels, images and parameters, the same messages from both trainers ------------

@pytest.mark.parametrize("bad, kind, words", [
    (-1, ValueError, ["labels must lie in 0..9", "-1"]),
    (10, ValueError, ["labels must lie in 0..9", "10"]),
])
def test_a_label_outside_the_classes_is_refused_by_both_trainers(ctx, bad, kind, words):
    images, labels = toy()
    labels[5] = bad
    got = numpy_error(images, labels)
    assert type(got) is kind and all(w in str(got) for w in words), got
    assert "at index 5" in str(got)
    assert str(gpu_error(ctx, images, labels)) == str(got)


def test_label_minus_one_does_not_train_as_class_9():
    images, labels = toy()
    labels[0] = -1
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.9.*-1"):
        reference.train(reference.init_params(784, H, 10), data.normalise(images), labels, epochs=1, batch_size=16,
                        progress=False)


def test_float_labels_are_refused_with_the_fix(ctx):
    images, labels = toy()
    got = numpy_error(images, labels.astype(np.float32))
    assert isinstance(got, TypeError) and "labels must be integers" in str(got) and "astype" in str(got)
    assert str(gpu_error(ctx, images, labels.astype(np.float32))) == str(got)


def test_images_of_another_size_are_named(ctx):
    images, labels = toy()
    got = numpy_error(images[:, :700], labels)
    assert isinstance(got, ValueError) and "images have 700 pixels each, but W1 has 784 rows" in str(got)
    assert str(gpu_error(ctx, images[:, :700], labels)) == str(got)


def test_a_nan_pixel_is_named_not_blamed_on_the_learning_rate():
    images, labels = toy()
    X = data.normalise(images)
    X[3, 17] = np.nan
    got = numpy_error(X, labels)
    assert isinstance(got, ValueError) and not isinstance(got, reference.TrainingDiverged)
    assert "NaN or infinite" in str(got) and "image 3, pixel 17" in str(got) and "learning rate" not in str(got)


def test_raw_uint8_images_get_the_fix_from_the_numpy_trainer():
    images, labels = toy()
    for X in (images, images.astype(np.float32)):   # uint8, and 0..255 as floats
        got = numpy_error(X, labels, raw=True)
        assert "data.normalise(images)" in str(got) and "learning rate" not in str(got), got
        assert not isinstance(got, reference.TrainingDiverged)


def test_a_nan_parameter_is_named_by_both_trainers(ctx):
    images, labels = toy()
    params = reference.init_params(784, H, 10, seed=1)
    params["W2"][4, 2] = np.nan
    got = numpy_error(images, labels, params=params)
    assert isinstance(got, ValueError) and "W2" in str(got) and "NaN or infinite" in str(got)
    assert "row 4, column 2" in str(got)
    assert "learning rate" not in str(got)
    assert str(gpu_error(ctx, images, labels, params)) == str(got)


def test_divergence_never_recommends_the_rate_it_rejects():
    for kind, lr in reference.WORKING_LR.items():
        for rate in (lr, lr / 3):
            with pytest.raises(reference.TrainingDiverged) as err:
                reference.check_loss(np.nan, epoch=0, step=0, lr=rate, optimizer=kind)
            message = str(err.value)
            assert "too large" not in message and f"trains it with lr {reference.number_text(rate)}." not in message, message
            assert "unlikely to be the cause" in message and "scaled to [0, 1]" in message
        with pytest.raises(reference.TrainingDiverged, match=rf"too large.*trains it with lr {reference.number_text(lr)}\."):
            reference.check_loss(np.nan, epoch=0, step=0, lr=lr * 3, optimizer=kind)


def test_diverging_at_the_working_rate_blames_something_else():
    images, labels = toy()
    params = {k: v * np.float32(1e4) for k, v in reference.init_params(784, H, 10, seed=1).items()}  # huge weights
    got = numpy_error(images, labels, params=params, lr=0.3)
    assert isinstance(got, reference.TrainingDiverged), got
    assert "lr 0.3, is no larger than" in str(got) and "trains it with lr 0.3" not in str(got)


# --- 2. learning rates and other hyperparameters refused where they are set --------------------------

BAD_LR = [float("nan"), float("inf"), 0.0, -0.1, "fast", None]


@pytest.mark.parametrize("lr", BAD_LR)
def test_optimizers_refuse_a_bad_learning_rate_when_built_and_when_set(lr):
    for make in (reference.SGD, reference.Momentum, reference.Adam):
        with pytest.raises(ValueError, match="learning rate lr must be a finite number above 0"):
            make(lr)
        optimizer = make(0.01)
        with pytest.raises(ValueError, match="learning rate lr must be"):
            optimizer.lr = lr
        assert optimizer.lr == 0.01, "a refused value is not kept"


@pytest.mark.parametrize("name, value", [("mu", 1.0), ("mu", -0.5), ("mu", float("nan")), ("beta1", 1.0),
                                         ("beta2", -0.1), ("beta2", float("inf")), ("eps", 0.0)])
def test_momentum_and_adam_refuse_bad_hyperparameters(name, value):
    make = reference.Momentum if name == "mu" else reference.Adam
    with pytest.raises(ValueError, match=rf"{name} must be a .*got {name}="):
        make(0.01, **{name: value})
    assert make(0.01, **{name: 0.0 if name != "eps" else 1e-8}) is not None   # the edge that is allowed


def test_numpy_train_refuses_a_bad_lr_before_any_step():
    images, labels = toy()
    params = reference.init_params(784, H, 10, seed=1)
    before = {k: v.copy() for k, v in params.items()}
    got = numpy_error(images, labels, params=params, lr=float("nan"))
    assert isinstance(got, ValueError) and "lr=nan" in str(got) and not isinstance(got, reference.TrainingDiverged)
    assert all(np.array_equal(params[k], before[k]) for k in params)


@pytest.mark.parametrize("cls", [GPUTrainer, FusedMLP])
def test_gpu_trainers_refuse_a_bad_lr_before_any_dispatch(ctx, cls, count_calls):
    images, labels = toy()
    trainer = cls(ctx, reference.init_params(784, H, 10, seed=1), images, labels,
                  optimizer=reference.Momentum(0.05, 0.9), batch_size=16)
    count_calls(trainer, "set_hyperparameters", "uniforms")
    for bad in (float("nan"), float("inf"), 0.0, -1.0):
        with pytest.raises(ValueError, match="learning rate lr must be a finite number above 0"):
            trainer.lr = bad
        with pytest.raises(ValueError, match="learning rate"):
            trainer.train(1, lr_schedule=lambda epoch: bad, progress=False)
    with pytest.raises(ValueError, match="momentum mu must be"):
        trainer.optimizer.mu = 1.5
    assert trainer.lr == 0.05 and trainer.optimizer.mu == 0.9
    assert count_calls.calls["uniforms"] == 0 and trainer.counts["steps"] == 0
    sneaked = reference.SGD(0.3)
    object.__setattr__(sneaked, "lr", float("nan"))   # past the optimizer's own check
    with pytest.raises(ValueError, match="lr=nan"):
        cls(ctx, reference.init_params(784, H, 10, seed=1), images, labels, optimizer=sneaked)
    trainer.release()


# --- 3. weights files ---------------------------------------------------------------------------------

@pytest.fixture
def params():
    return reference.init_params(784, 128, 10, seed=0)


SHAPES = {"W1": (784, 128), "b1": (128,), "W2": (128, 10), "b2": (10,)}


def test_weights_saved_transposed_are_named(tmp_path, params):
    path = tmp_path / "torch.npz"
    np.savez(path, W1=params["W1"].T, b1=params["b1"], W2=params["W2"].T, b2=params["b2"])
    with pytest.raises(ValueError, match=r"W1 is \(128, 784\); this net's W1 is \(784, 128\): saved transposed, "
                                         r"as PyTorch's nn.Linear stores it\?"):
        mlp.load_params(path, SHAPES)
    with pytest.raises(ValueError, match=r"saved transposed, as PyTorch's nn.Linear stores it\? pass W1.T and W2.T"):
        mlp.load_params(path)   # no net to compare with: the four shapes alone give it away


def test_weights_of_another_net_and_nan_weights_are_refused(tmp_path, params):
    np.savez(tmp_path / "wide.npz", **reference.init_params(784, 256, 10))
    with pytest.raises(ValueError, match=r"W1 is \(784, 256\); this net's W1 is \(784, 128\)$"):
        mlp.load_params(tmp_path / "wide.npz", SHAPES)
    bad = dict(params, b1=np.full(128, np.nan, np.float32))
    np.savez(tmp_path / "nan.npz", **bad)
    with pytest.raises(ValueError, match=r"b1 in .*nan\.npz holds 128 NaN or infinite values"):
        mlp.load_params(tmp_path / "nan.npz", SHAPES)
    np.savez(tmp_path / "int.npz", **dict(params, W2=np.zeros((128, 10), np.int64)))
    with pytest.raises(TypeError, match="W2 in .* is int64; parameters are floats"):
        mlp.load_params(tmp_path / "int.npz", SHAPES)
    np.savez(tmp_path / "ok.npz", **{k: v.astype(np.float64) for k, v in params.items()})
    loaded = mlp.load_params(tmp_path / "ok.npz", SHAPES)
    assert all(loaded[k].dtype == np.float32 and np.array_equal(loaded[k], params[k]) for k in params)


def not_weights(tmp_path, params):
    """{name: path} of files that are not an .npz of the four arrays."""
    files = {"npy": tmp_path / "W1.npy", "text": tmp_path / "weights.txt", "pickle": tmp_path / "weights.pkl",
             "missing": tmp_path / "nowhere.npz", "objects": tmp_path / "objects.npz",
             "other arrays": tmp_path / "other.npz", "empty": tmp_path / "empty.npz"}
    np.save(files["npy"], params["W1"])
    np.savetxt(files["text"], params["b1"])
    files["pickle"].write_bytes(pickle.dumps(params))
    np.savez(files["objects"], **dict(params, W1=np.array([None, 1.0], dtype=object)))
    np.savez(files["other arrays"], weights=np.zeros(3))
    files["empty"].touch()
    return files


def test_a_file_that_is_not_weights_gets_one_clear_message(tmp_path, params):
    for kind, path in not_weights(tmp_path, params).items():
        with pytest.raises(mlp.WeightsFileError) as err:
            mlp.load_params(path)
        message = str(err.value)
        assert message.startswith(f"{path} is not a weights file: "), (kind, message)
        assert "trainer.save(path)" in message and "allow_pickle" not in message, (kind, message)


def test_trainer_load_checks_against_its_own_net(ctx, tmp_path):
    images, labels = toy()
    trainer = GPUTrainer(ctx, reference.init_params(784, H, 10, seed=1), images, labels)
    params = reference.init_params(784, H, 10, seed=2)
    np.savez(tmp_path / "t.npz", W1=params["W1"].T, b1=params["b1"], W2=params["W2"].T, b2=params["b2"])
    before = trainer.read_params()
    with pytest.raises(ValueError, match=rf"W1 is \({H}, 784\); this net's W1 is \(784, {H}\): saved transposed"):
        trainer.load(tmp_path / "t.npz")
    with pytest.raises(ValueError, match=r"W2 is \(10, 32\); this net's W2 is \(32, 10\): saved transposed"):
        trainer.write_params(dict(params, W2=params["W2"].T))
    np.savez(tmp_path / "nan.npz", **dict(params, W1=params["W1"] * np.nan))
    with pytest.raises(ValueError, match="W1 in .*nan.npz holds .* NaN or infinite"):
        trainer.load(tmp_path / "nan.npz")
    assert all(np.array_equal(trainer.read_params()[k], before[k]) for k in before), "nothing was written"
    trainer.release()


# --- 5. the notebooks' tests without MNIST: skipped, with one line ------------------------------------

NOTEBOOK = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
                       "source": "x = 6 * 7"},
                      {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [],
                       "source": "assert x == 42"}],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def run_notebook_tests(tmp_path, env_changes):
    """pytest tests_like notebooks_like --nbval-lax, as the README's test command runs them, on a copy of
    notebooks/conftest.py beside a two-cell notebook, and a plain test beside it. Skipped where nbval is
    not installed (the GPU machine has no Jupyter stack): the command under test needs it."""
    pytest.importorskip("nbval", reason="these tests run pytest --nbval-lax, which needs nbval installed")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copy(ROOT / "notebooks" / "conftest.py", folder / "conftest.py")
    (folder / "tiny.ipynb").write_text(json.dumps(NOTEBOOK))
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)   # keep where nbval is
    env = dict(os.environ, PYTHONPATH=path, **{k: v for k, v in env_changes.items() if v is not None})
    for name in [k for k, v in env_changes.items() if v is None]:
        env.pop(name, None)
    run = subprocess.run([sys.executable, "-m", "pytest", "test_plain.py", "notebooks", "--nbval-lax",
                          "--nbval-current-env", "-p", "no:cacheprovider", "-rs"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return run.returncode, run.stdout + run.stderr


def test_without_mnist_the_notebooks_are_skipped_with_one_line(tmp_path):
    empty = tmp_path / "no-mnist"
    empty.mkdir()
    code, out = run_notebook_tests(tmp_path, {"MNIST_DIR": str(empty), "REQUIRE_MNIST": None})
    assert code == 0, out
    assert "1 passed, 2 skipped" in out, out
    lines = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(lines) == 1 and lines[0].startswith("SKIPPED [2]"), out
    assert "MNIST" in lines[0] and str(empty) in lines[0] and "Fix:" in lines[0] and "MNIST_DIR" in lines[0], lines


def test_where_mnist_is_required_its_absence_fails(tmp_path):
    empty = tmp_path / "no-mnist"
    empty.mkdir()
    code, out = run_notebook_tests(tmp_path, {"MNIST_DIR": str(empty), "REQUIRE_MNIST": "1"})
    assert code != 0 and "2 errors" in out and "Fix:" in out, out


def test_with_mnist_the_notebooks_run(tmp_path, mnist_dir):
    code, out = run_notebook_tests(tmp_path, {"MNIST_DIR": str(mnist_dir)})
    assert code == 0 and "3 passed" in out and "skipped" not in out, out


def test_unavailable_says_why_with_the_loaders_rules(tmp_path, monkeypatch, mnist_dir):
    monkeypatch.setenv("MNIST_DIR", str(tmp_path))
    reason = data.unavailable()
    assert "missing from" in reason and all(name in reason for name in data.registered_files()), reason
    monkeypatch.setenv("MNIST_DIR", str(mnist_dir))
    assert data.unavailable() is None
    monkeypatch.delenv("MNIST_DIR")
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path))   # an empty cache
    monkeypatch.setattr(data, "reachable", lambda url, timeout=0: "cannot reach host:443 (offline)")
    assert "cannot be downloaded (cannot reach host:443 (offline))" in data.unavailable()
    monkeypatch.setattr(data, "reachable", lambda url, timeout=0: None)
    assert data.unavailable() is None, "online: the notebooks download MNIST and run"


def test_check_module_is_what_both_trainers_call():
    assert mlp.check_labels is check.check_labels

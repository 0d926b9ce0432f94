"""Shared fixtures: one OpenGL context for the session, a seeded RNG, the MNIST folder."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import gl  # noqa: E402


@pytest.fixture(scope="session")
def ctx():
    """An OpenGL >= 4.3 context; skips without one, except under CI_REQUIRE_GL=1 where it fails."""
    try:
        context = gl.create_context()
    except gl.GLContextError as exc:
        if os.environ.get("CI_REQUIRE_GL"):
            pytest.fail(str(exc))
        pytest.skip(f"no OpenGL 4.3 context: {exc}")
    print("\n" + gl.describe(context))
    yield context
    assert context.error == "GL_NO_ERROR", f"OpenGL error left by the tests: {context.error}"


@pytest.fixture(autouse=True)
def no_gl_error(request):
    """Fail a test that leaves an OpenGL error behind (only where the test used the context)."""
    yield
    if "ctx" in request.fixturenames:
        error = request.getfixturevalue("ctx").error
        assert error == "GL_NO_ERROR", f"OpenGL error after the test: {error}"


@pytest.fixture
def count_calls(monkeypatch):
    """count_calls(obj, "run", "dispatch") wraps obj.run so that each call adds 1 to count_calls.calls["dispatch"]."""
    calls = {}

    def wrap(obj, attr: str, key: str) -> None:
        original = getattr(obj, attr)
        calls.setdefault(key, 0)

        def counted(*args, **kwargs):
            calls[key] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(obj, attr, counted)

    wrap.calls = calls
    return wrap


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def mnist_dir():
    """The offline MNIST folder (MNIST_DIR, or ../shared/mnist beside the repo); skip if neither exists."""
    for candidate in (os.environ.get("MNIST_DIR"), ROOT.parent / "shared" / "mnist"):
        if candidate and Path(candidate, "train-images-idx3-ubyte.gz").is_file():
            return Path(candidate)
    pytest.skip("no offline MNIST folder: set MNIST_DIR to a folder with the four .gz files")

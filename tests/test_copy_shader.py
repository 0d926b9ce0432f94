"""Copyability: glsl/dense_1_naive.comp driven by bare ModernGL, exactly as its banner says, with no
helpers (the NumPy reference gives the expected values). If this passes, the file can be lifted alone."""

import os
from pathlib import Path

import moderngl
import numpy as np
import pytest

from helpers import reference

SOURCE = (Path(__file__).resolve().parent.parent / "glsl" / "dense_1_naive.comp").read_text()


@pytest.fixture(scope="module")
def bare_ctx(ctx):
    """A context of its own, made with ModernGL alone. ModernGL makes a new context current and never
    switches back, so afterwards the session's context (conftest's `ctx`) is made current again."""
    try:
        bare = moderngl.create_standalone_context(backend="egl", require=430)
    except Exception:
        try:
            bare = moderngl.create_standalone_context(require=430)
        except Exception as exc:
            if os.environ.get("CI_REQUIRE_GL"):
                pytest.fail(f"no OpenGL 4.3 context: {exc}")
            pytest.skip(f"no OpenGL 4.3 context: {exc}")
    yield bare
    bare.release()
    ctx.__enter__()   # current again: the tests after this module use it


def dense(ctx, shader, x, w, b):
    """Y = relu?(x @ w + b): bindings 0 X, 1 W, 2 b, 3 Y; uniforms B, K, N; groups (ceil(N/16), ceil(B/16))."""
    (B, K), N = x.shape, w.shape[1]
    buffers = [ctx.buffer(a.astype("f4").tobytes()) for a in (x, w, b)]
    buffers.append(ctx.buffer(np.full((B, N), np.nan, "f4").tobytes()))  # NaN: unwritten outputs show
    for binding, buffer in enumerate(buffers):
        buffer.bind_to_storage_buffer(binding)
    shader["B"], shader["K"], shader["N"] = B, K, N
    shader.run((N + 15) // 16, (B + 15) // 16, 1)
    ctx.memory_barrier()
    return np.frombuffer(buffers[3].read(), dtype="f4").reshape(B, N)


@pytest.mark.parametrize("B", [1, 37])
def test_bare_moderngl_two_layers_give_the_reference_logits(bare_ctx, B):
    assert "#ifndef RELU\n#define RELU 1\n#endif" in SOURCE
    hidden = bare_ctx.compute_shader(SOURCE)
    output = bare_ctx.compute_shader(SOURCE.replace("#version 430\n", "#version 430\n#define RELU 0\n", 1))  # as glsl/README.md
    rng = np.random.default_rng(7)
    params = reference.init_params(70, 30, 13, seed=3)
    params["b1"] += rng.standard_normal(30).astype(np.float32)
    params["b2"] += rng.standard_normal(13).astype(np.float32)
    X = rng.random((B, 70)).astype(np.float32)
    A1 = dense(bare_ctx, hidden, X, params["W1"], params["b1"])
    logits = dense(bare_ctx, output, A1, params["W2"], params["b2"])
    expected = reference.forward(params, X)[0]
    assert np.isfinite(logits).all()
    assert np.abs(logits - expected).max() / np.abs(expected).max() < 1e-5


def test_the_banner_says_what_this_file_does():
    """The banner, read as plain text, promises what dense() above relies on: bindings, lengths, groups."""
    banner = " ".join(" ".join(line[2:].split()) for line in SOURCE.splitlines()[1:] if line.startswith("//"))
    for entry in ("0 X float[B*K] (readonly)", "1 W float[K*N] (readonly)", "2 b float[N] (readonly)",
                  "3 Y float[B*N] (writeonly)", "Uniforms uint B, K, N",
                  "groups (ceil(N/LOCAL_X), ceil(B/LOCAL_Y), 1)"):
        assert entry in banner, f"dense_1_naive.comp's banner no longer says {entry!r}: update dense() and glsl/README.md"
    assert "#define LOCAL_X 16\n" in SOURCE and "#define LOCAL_Y 16\n" in SOURCE


def test_the_readme_example_is_this_test():
    """glsl/README.md's bare-ModernGL example tunes the file the way this test does."""
    readme = (Path(__file__).resolve().parent.parent / "glsl" / "README.md").read_text()
    assert '.replace("#version 430\\n", "#version 430\\n#define RELU 0\\n", 1)' in readme

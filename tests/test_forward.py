"""The forward shaders against NumPy on awkward shapes, outputs poisoned with NaN; the GPU MLP forward
pass (helpers.forward) against helpers.reference.forward."""

import numpy as np
import pytest

from helpers import gl, reference
from helpers.check import rel_error
from helpers.forward import SHADERS, Forward

TOLERANCE = 1e-5
SHAPES = [(1, 70, 13), (37, 70, 13), (1, 784, 130), (37, 130, 10), (16, 16, 16), (3, 1, 1)]


def dense(x, w, b, relu):
    y = x.astype(np.float64) @ w + b
    return np.maximum(y, 0) if relu else y


@pytest.mark.parametrize("shader", SHADERS)
@pytest.mark.parametrize("relu", [0, 1])
@pytest.mark.parametrize("B,K,N", SHAPES, ids=[f"{b}x{k}x{n}" for b, k, n in SHAPES])
def test_dense_layer_matches_numpy(ctx, rng, shader, relu, B, K, N):
    x = rng.standard_normal((B, K)).astype(np.float32)
    w = rng.standard_normal((K, N)).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    kernel = gl.Kernel(ctx, shader, {"RELU": relu})
    Y = gl.empty(ctx, (B, N), name="Y")  # NaN: an output nobody writes fails the comparison
    kernel.run(*kernel.groups(B=B, N=N), bindings={0: gl.upload(ctx, x, "X"), 1: gl.upload(ctx, w, "W"),
                                                    2: gl.upload(ctx, b, "b"), 3: Y}, B=B, K=K, N=N)
    got, ref = Y.read(), dense(x, w, b, relu)
    assert rel_error(got, ref) < TOLERANCE, f"{shader} RELU={relu} {B}x{K}x{N}: rel error {rel_error(got, ref):.2e}"
    negative = dense(x, w, b, 0) < -1e-3  # where ReLU must clamp, and logits must stay negative
    if relu:
        assert (got[negative] == 0).all(), "RELU 1 must clamp negative outputs to 0"
    else:
        assert (got[negative] < 0).all(), "RELU 0 must keep negative logits"


def test_unwritten_output_is_caught(ctx, rng):
    """The NaN poison works: dispatching too few groups leaves NaN, and the comparison fails (Kernel.run
    refuses too few groups, so they are dispatched through the moderngl program itself, unchecked)."""
    B, K, N = 37, 70, 13
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((B, K), (K, N), (N,)))
    Y = gl.empty(ctx, (B, N), name="Y")
    kernel = gl.Kernel(ctx, "dense_1_naive.comp")
    kernel.bind({0: gl.upload(ctx, x), 1: gl.upload(ctx, w), 2: gl.upload(ctx, b), 3: Y})
    kernel.set(B=B, K=K, N=N)
    with pytest.raises(gl.ShaderError, match="1×1×1 work groups"):
        kernel.program.run(1, 1)
    kernel.program.unchecked.run(1, 1)
    ctx.memory_barrier()
    got = Y.read()
    assert np.isnan(got[16:]).all() and rel_error(got, dense(x, w, b, 1)) == float("inf")


def mlp(H, seed=0):
    params = reference.init_params(784, H, 10, seed=seed)
    rng = np.random.default_rng(seed + 1)
    params["b1"] += rng.standard_normal(H).astype(np.float32) * 0.1
    params["b2"] += rng.standard_normal(10).astype(np.float32) * 0.1
    return params


@pytest.mark.parametrize("shader", SHADERS)
@pytest.mark.parametrize("B", [1, 37])
def test_two_layer_forward_matches_reference(ctx, rng, shader, B):
    params = mlp(H=130)
    X = rng.random((B, 784)).astype(np.float32)
    fwd = Forward(ctx, params, max_batch=B, shader=shader)
    logits = fwd.logits(X)
    ref_logits = reference.forward(params, X)[0]
    assert logits.shape == (B, 10)
    assert rel_error(logits, ref_logits) < TOLERANCE
    assert (fwd.predict(X) == ref_logits.argmax(axis=1)).all()
    fwd.release()


def test_forward_phases_and_chunks(ctx, rng):
    params = mlp(H=50)
    X = rng.random((23, 784)).astype(np.float32)
    ref_logits = reference.forward(params, X)[0]
    fwd = Forward(ctx, params, max_batch=8)  # 23 rows: chunks of 8, 8 and 7
    assert rel_error(fwd.logits(X), ref_logits) < TOLERANCE
    batch = fwd.upload(X[0])  # one sample as a (784,) vector
    fwd.dispatch(batch)
    ctx.finish()
    assert batch == 1 and rel_error(fwd.read(batch), ref_logits[:1]) < TOLERANCE
    fwd.release()


def test_forward_explains_a_wrong_input(ctx):
    fwd = Forward(ctx, mlp(H=20), max_batch=4)
    with pytest.raises(ValueError, match=r"shape \(B, 784\)"):
        fwd.upload(np.zeros((2, 783), np.float32))
    with pytest.raises(ValueError, match="larger max_batch"):
        fwd.upload(np.zeros((5, 784), np.float32))
    with pytest.raises(ValueError) as err:
        fwd.upload(np.zeros((2, 783), np.float32))
    assert "larger max_batch" not in str(err.value)   # the width is wrong, not the row count
    with pytest.raises(TypeError, match=r"normalise first: data\.normalise\(images\)"):
        fwd.upload(np.zeros((2, 784), np.uint8))
    for n in (0, 5):
        with pytest.raises(ValueError, match="1..4"):
            fwd.dispatch(n)
        with pytest.raises(ValueError, match="1..4"):
            fwd.read(n)
    fwd.release()


def test_phase_ratios_are_quotients_of_the_printed_medians():
    from helpers import timing
    from helpers.forward import phase_ratios
    # raw medians 7.6549 / 6.2451 = 1.2257 (1.23×); printed 7.65 µs / 6.25 µs = 1.224 (1.22×)
    one, two = timing.Phases(), timing.Phases()
    one.add("python", 7.6549e-6); two.add("python", 6.2451e-6)              # noqa: E702
    one.add("readback", 28.74e-6); two.add("readback", 25.46e-6)            # noqa: E702
    assert phase_ratios(one, two, ["python", "readback"]) == ["1.22×", "1.13×"]   # 28.7 / 25.5 = 1.125 → 1.13
    assert phase_ratios(two, one, ["python"]) == ["1.22×"]

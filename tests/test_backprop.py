"""The training step's shaders one by one against helpers.reference, on awkward shapes (batch 1 and 37,
hidden 130, inputs 70 or 784, outputs 13), every output buffer poisoned with NaN before the dispatch.
The shaders use the training pipeline's fixed binding numbers (helpers.gpu_mlp.BINDINGS)."""

import numpy as np
import pytest

from helpers import data, gl, reference
from helpers.check import rel_error
from helpers.gpu_mlp import BINDINGS as BIND
from helpers.mlp import pack_images

TOLERANCE = 1e-5
N_IMAGES, START = 320, 9


def problem(rng, B, K, H, C):
    """Random uint8 images, an order with a batch at START, float32 parameters, and the reference pass."""
    images = rng.integers(0, 256, (N_IMAGES, K), dtype=np.uint8)
    labels = rng.integers(0, C, N_IMAGES).astype(np.uint32)
    order = rng.permutation(N_IMAGES).astype(np.uint32)
    params = reference.init_params(K, H, C, seed=int(rng.integers(1000)))
    params["b1"] = rng.standard_normal(H).astype(np.float32) * 0.1  # non-zero biases: they must be added
    params["b2"] = rng.standard_normal(C).astype(np.float32) * 0.1
    batch = order[START:START + B]
    X = data.normalise(images[batch])
    logits, cache = reference.forward(params, X)
    loss, dlogits = reference.softmax_xent(logits, labels[batch].astype(np.int64))
    grads = reference.backward(params, cache, dlogits)
    dZ1 = (dlogits @ params["W2"].T) * (cache[1] > 0)  # the line of reference.backward it does not return
    return dict(images=images, labels=labels, order=order, params=params, X=X, logits=logits, cache=cache,
                loss=loss, dlogits=dlogits, grads=grads, dZ1=dZ1, y=labels[batch].astype(np.int64))


def check(name, got, ref):
    err = rel_error(got, ref)
    assert err < TOLERANCE, f"{name}: relative error {err:.2e} (NaN/inf or shape mismatch gives inf)"


BATCHES = [1, 37]
# batches larger than one work group's threads (softmax_xent: LOCAL rows) / one chunk (gather_backward: LX*BS)
XENT_LOCAL = int(gl.define(gl.shader_source("softmax_xent_1_rowwise.comp"), "LOCAL"))
_gather = gl.shader_source("gather_backward_1_u8.comp")
GATHER_CHUNK = int(gl.define(_gather, "LX")) * int(gl.define(_gather, "BS"))
INPUTS = [70, 784]


@pytest.mark.parametrize("B", BATCHES + [300])
@pytest.mark.parametrize("K", INPUTS)
def test_gather_forward_matches_reference(ctx, rng, B, K):
    H, C = 130, 13
    p = problem(rng, B, K, H, C)
    kernel = gl.Kernel(ctx, "gather_forward_1_u8.comp")
    A1 = gl.empty(ctx, (B, H), name="A1")
    d = kernel.define
    kernel.run(gl.groups(H, d("TN")), gl.groups(B, d("RB")), bindings={
        BIND["images"]: gl.upload(ctx, pack_images(p["images"], K), "images"),
        BIND["order"]: gl.upload(ctx, p["order"], "order"),
        BIND["W1"]: gl.upload(ctx, p["params"]["W1"], "W1"), BIND["b1"]: gl.upload(ctx, p["params"]["b1"], "b1"),
        BIND["A1"]: A1}, B=B, K=K, N=H, start=START)
    check("A1", A1.read(), p["cache"][2])


@pytest.mark.parametrize("B", BATCHES)
def test_logits_forward_matches_reference(ctx, rng, B):
    K, H, C = 70, 130, 13
    p = problem(rng, B, K, H, C)
    kernel = gl.Kernel(ctx, "logits_forward_1_splitk.comp")
    logits = gl.empty(ctx, (B, C), name="logits")
    d = kernel.define
    kernel.run(gl.groups(C, d("TN")), gl.groups(B, d("RB")), bindings={
        BIND["A1"]: gl.upload(ctx, p["cache"][2], "A1"),
        BIND["W2"]: gl.upload(ctx, p["params"]["W2"], "W2"), BIND["b2"]: gl.upload(ctx, p["params"]["b2"], "b2"),
        BIND["logits"]: logits}, B=B, K=H, N=C)
    check("logits", logits.read(), p["logits"])


def run_xent(ctx, logits, labels, order, start, slot=3):
    B, C = logits.shape
    outputs = {"dlogits": gl.empty(ctx, (B, C), name="dlogits"), "losses": gl.empty(ctx, (B,), name="losses"),
               "stats": gl.empty(ctx, (slot + 1, 2), name="stats")}
    gl.Kernel(ctx, "softmax_xent_1_rowwise.comp").run(1, bindings={
        BIND["logits"]: gl.upload(ctx, logits, "logits"), BIND["labels"]: gl.upload(ctx, labels, "labels"),
        BIND["order"]: gl.upload(ctx, order, "order"), BIND["dlogits"]: outputs["dlogits"],
        BIND["losses"]: outputs["losses"], BIND["stats"]: outputs["stats"]}, B=B, C=C, start=start, slot=slot)
    return {name: array.read() for name, array in outputs.items()}


@pytest.mark.parametrize("B", [1, 37, 2 * XENT_LOCAL + 44])  # more rows than the work group's LOCAL threads
def test_softmax_xent_matches_reference(ctx, rng, B):
    C = 13
    logits = (rng.standard_normal((B, C)) * 4).astype(np.float32)
    labels = rng.integers(0, C, B + 5).astype(np.uint32)
    order = rng.permutation(B + 5).astype(np.uint32)
    y = labels[order[5:5 + B]].astype(np.int64)
    loss, dlogits = reference.softmax_xent(logits, y)
    got = run_xent(ctx, logits, labels, order, start=5)
    check("dlogits", got["dlogits"], dlogits)
    per_sample = -np.log(reference.softmax(logits.astype(np.float64))[np.arange(B), y])
    check("per-sample loss", got["losses"], per_sample)
    check("loss sum (stats)", got["stats"][3, 0], loss * B)
    assert got["stats"][3, 1] == (logits.argmax(axis=1) == y).sum(), "correct count (stats) differs from NumPy's"
    assert np.isnan(got["stats"][:3]).all(), "only the given stats slot may be written"


def test_softmax_xent_is_stable_and_reports_nan(ctx):
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, np.nan, 1.0]], np.float32)
    got = run_xent(ctx, logits, np.array([0, 2], np.uint32), np.array([0, 1], np.uint32), start=0, slot=0)
    assert got["losses"][0] == 0.0 and np.isfinite(got["dlogits"][0]).all(), "huge logits must not overflow"
    assert np.isnan(got["losses"][1]) and np.isnan(got["stats"][0, 0]), "a NaN logit must give a NaN loss"


@pytest.mark.parametrize("B", BATCHES)
@pytest.mark.parametrize("mask", [1, 0])
def test_dense_backward_matches_reference(ctx, rng, B, mask):
    K, H, C = 70, 130, 13
    p = problem(rng, B, K, H, C)
    A1 = p["cache"][2]
    kernel = gl.Kernel(ctx, "dense_backward_1_relu.comp", {"MASK_RELU": mask})
    out = {"dZ": gl.empty(ctx, (B, H), name="dZ"), "dW": gl.empty(ctx, (H, C), name="dW"),
           "db": gl.empty(ctx, (C,), name="db")}
    lx, bs = int(gl.define(kernel.source, "LX")), int(gl.define(kernel.source, "BS"))
    groups = gl.groups(H * C + C, lx) + gl.groups(B * H, lx * bs)
    kernel.run(groups, bindings={
        BIND["A1"]: gl.upload(ctx, A1, "A"), BIND["W2"]: gl.upload(ctx, p["params"]["W2"], "W"),
        BIND["dlogits"]: gl.upload(ctx, p["dlogits"], "dY"), BIND["dZ1"]: out["dZ"],
        BIND["gW2"]: out["dW"], BIND["gb2"]: out["db"]}, B=B, K=H, N=C)
    check("dW (W2)", out["dW"].read(), p["grads"]["W2"])
    check("db (b2)", out["db"].read(), p["grads"]["b2"])
    check("dZ" if mask else "dA", out["dZ"].read(), p["dZ1"] if mask else p["dlogits"] @ p["params"]["W2"].T)


@pytest.mark.parametrize("B", BATCHES + [GATHER_CHUNK + 44])  # more samples than one chunk of LX*BS
@pytest.mark.parametrize("K", INPUTS)
def test_gather_backward_matches_reference(ctx, rng, B, K):
    H, C = 130, 13
    p = problem(rng, B, K, H, C)
    kernel = gl.Kernel(ctx, "gather_backward_1_u8.comp")
    dW, db = gl.empty(ctx, (K, H), name="dW"), gl.empty(ctx, (H,), name="db")
    kernel.run(gl.groups(H, int(gl.define(kernel.source, "LX"))), -(-K // 4) + 1, bindings={
        BIND["images"]: gl.upload(ctx, pack_images(p["images"], K), "images"),
        BIND["order"]: gl.upload(ctx, p["order"], "order"), BIND["dZ1"]: gl.upload(ctx, p["dZ1"].astype(np.float32), "dZ"),
        BIND["gW1"]: dW, BIND["gb1"]: db}, B=B, K=K, N=H, start=START)
    check("dW (W1)", dW.read(), p["grads"]["W1"])
    check("db (b1)", db.read(), p["grads"]["b1"])


def test_sgd_update_matches_reference(ctx, rng):
    n = 1001  # not a multiple of the work group's LOCAL threads (256)
    params = rng.standard_normal(n).astype(np.float32)
    grads = rng.standard_normal(n).astype(np.float32)
    P = gl.upload(ctx, params, "params")
    kernel = gl.Kernel(ctx, "update_1_sgd.comp")
    kernel.run(gl.groups(n, int(gl.define(kernel.source, "LOCAL"))), bindings={
        BIND["params"]: P, BIND["grads"]: gl.upload(ctx, grads, "grads")}, n=n, lr=0.3)
    expected = {"p": params.copy()}
    reference.SGD(0.3).step(expected, {"p": grads})
    check("params after SGD", P.read(), expected["p"])
    assert np.array_equal(P.read(), expected["p"]), "p - float32(lr * g) should be exactly NumPy's float32 result"


def test_sgd_leaves_elements_past_n(ctx):
    P = gl.upload(ctx, np.ones(300, np.float32), "params")
    gl.Kernel(ctx, "update_1_sgd.comp").run(2, bindings={
        BIND["params"]: P, BIND["grads"]: gl.upload(ctx, np.ones(300, np.float32), "grads")}, n=100, lr=0.5)
    got = P.read()
    assert (got[:100] == 0.5).all() and (got[100:] == 1.0).all()

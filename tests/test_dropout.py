"""Dropout and max-norm on the GPU (notebook 07): the counter-based generator in GLSL against its NumPy twin
(helpers/rng.py) bit for bit, the masks' statistics, fused_forward_2_dropout / fused_backward_2_dropout /
maxnorm_1_columns against the NumPy reference with the same masks, whole steps, determinism, prediction.

Awkward shapes as in tests/test_fused.py: hidden 130 (no tile divides it; W1 read one float at a time)
and 128 (vec4 reads), batches of 37 (an epoch of 50 samples ends with a leftover of 13) and 1; every output
buffer poisoned with NaN before the dispatch.
"""

import re

import numpy as np
import pytest

from helpers import check, fused_mlp, gl, reference, rng

N, H = 50, 130
RTOL = 1e-5
KEEP = (0.8, 0.5)
HASH_SHADERS = ("fused_forward_2_dropout.comp", "fused_backward_2_dropout.comp")


def make_data(seed=7, n=N):
    r = np.random.default_rng(seed)
    images = r.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = r.integers(0, 10, n).astype(np.uint32)
    return images, labels, images.reshape(n, -1) / np.float32(255)


def make_trainer(ctx, optimizer=None, batch_size=37, seed=3, hidden=H, n=N, **options):
    images, labels, X = make_data(n=n)
    params = reference.init_params(784, hidden, 10, seed=1)
    options.setdefault("dropout", KEEP)
    trainer = fused_mlp.FusedMLP(ctx, params, images, labels, optimizer=optimizer or reference.SGD(0.3),
                                 batch_size=batch_size, seed=seed, **options)
    return trainer, params, X, labels


# --- the generator ----------------------------------------------------------------------------------

def hash_block(name: str) -> str:
    """The generator's GLSL, from `uint mix32` to the end of `dropout_mask`, as written in the shader."""
    source = gl.shader_source(name)
    match = re.search(r"uint mix32\(uint x\).*?\nfloat dropout_mask\(.*?\n}\n", source, re.DOTALL)
    assert match, f"{name}: no mix32 ... dropout_mask block"
    return match.group(0)


def test_every_shader_has_the_same_generator():
    blocks = {name: hash_block(name) for name in HASH_SHADERS}
    assert len(set(blocks.values())) == 1, "the hash must be written identically in every shader that uses it"


PROBE = """#version 430
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Bits { uint bits[]; };
layout(std430, binding = 1) writeonly buffer Masks { float masks[]; };
uniform uint seed, rng_step, rows, units, total;
uniform float keep;
%s
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= total) return;
    uint layer = i / (rows * units), row = (i / units) %% rows, unit = i %% units;
    uint key = sample_key(layer, row);
    bits[i] = absorb(key, unit);
    masks[i] = dropout_mask(key, unit, keep);
}
"""


@pytest.mark.parametrize("seed, step", [(0, 0), (3, 17), (0xFFFFFFFF, 123_456_789)], ids=["zeros", "small", "large"])
def test_glsl_generator_equals_numpy_bit_for_bit(ctx, seed, step):
    """2 layers x 7 rows x 300 units = 4200 counters: the raw uint32 words and the float masks."""
    rows, units, keep = 7, 300, np.float32(0.8)
    total = 2 * rows * units
    program = ctx.compute_shader(PROBE % hash_block(HASH_SHADERS[0]))
    bits, masks = gl.empty(ctx, (total,), np.uint32, name="bits", fill=0), gl.empty(ctx, (total,), name="masks")
    bits.bind_to(0)
    masks.bind_to(1)
    for name, value in dict(seed=seed, rng_step=step, rows=rows, units=units, total=total, keep=float(keep)).items():
        program[name].value = value
    program.run(gl.groups(total, 64))
    ctx.memory_barrier()
    got_bits, got_masks = bits.read().reshape(2, rows, units), masks.read().reshape(2, rows, units)
    program.release()
    for layer in (rng.INPUT, rng.HIDDEN):
        want = rng.random_bits(seed, step, layer, np.arange(rows), np.arange(units))
        assert np.array_equal(got_bits[layer], want), f"layer {layer}: GLSL and NumPy hashes differ"
        want_mask = rng.dropout_mask(seed, step, rows, units, keep, layer)
        assert np.array_equal(got_masks[layer] > 0, want_mask > 0), f"layer {layer}: kept units differ"
        np.testing.assert_allclose(got_masks[layer], want_mask, rtol=1e-6)   # 1/keep: GLSL division may be inexact


def test_numpy_generator_known_values():
    """Pinned outputs, so a change to the NumPy twin (and so to the shaders' masks) is noticed."""
    assert rng.mix32(0) == 0 and rng.mix32(1) == 0x514E28B7  # MurmurHash3's fmix32 of 1
    bits = rng.random_bits(0, 0, 0, [0, 1], [0, 1, 2])
    assert bits.dtype == np.uint32 and bits.shape == (2, 3) and len(set(bits.ravel().tolist())) == 6


@pytest.mark.parametrize("keep", [0.8, 0.5, 0.2])
def test_mask_statistics_match_the_keep_probability(keep):
    rows, units = 128, 784
    mask = rng.dropout_mask(5, 42, rows, units, keep, rng.INPUT)
    kept = mask > 0
    assert set(np.unique(mask).tolist()) == {0.0, float(np.float32(1) / np.float32(keep))}
    sigma = np.sqrt(keep * (1 - keep) / kept.size)
    assert abs(kept.mean() - keep) < 5 * sigma, f"kept {kept.mean():.4f}, expected {keep}"
    assert abs(mask.mean() - 1) < 5 * sigma / keep           # inverted scaling: the mean input is unchanged
    per_unit = kept.mean(axis=0)                             # no unit is favoured: each column's rate is binomial
    assert np.abs(per_unit - keep).max() < 5.5 * np.sqrt(keep * (1 - keep) / rows)
    other_step = rng.dropout_mask(5, 43, rows, units, keep, rng.INPUT) > 0
    other_layer = rng.dropout_mask(5, 42, rows, units, keep, rng.HIDDEN) > 0
    for other in (other_step, other_layer):   # independent masks agree on about keep² + (1-keep)² of the units
        assert abs((other == kept).mean() - (keep ** 2 + (1 - keep) ** 2)) < 0.01
    u = rng.uniform(rng.random_bits(1, 2, 0, np.arange(64), np.arange(1000)))
    counts = np.histogram(u, bins=10, range=(0, 1))[0]
    assert u.min() >= 0 and u.max() < 1 and np.abs(counts - u.size / 10).max() < 5 * np.sqrt(u.size / 10)


def test_keep_one_is_no_dropout():
    assert np.array_equal(rng.dropout_mask(0, 0, 3, 5, 1.0, 0), np.ones((3, 5), np.float32))


# --- the shaders against the reference ---------------------------------------------------------------

def run_forward(trainer, step, epoch):
    trainer.start_epoch(epoch)
    for name in ("A1", "dZ1", "dlogits", "losses"):
        trainer.arrays[name].fill(np.nan)
    trainer.forward.set(step=step, rng_step=trainer.rng_step(step))
    trainer.forward.program.run(*trainer.dispatches(step)[0][1])
    trainer.ctx.memory_barrier()
    return {name: trainer.read(name) for name in ("A1", "dZ1", "dlogits", "losses")}


@pytest.mark.parametrize("batch_size, step, hidden, keep", [(37, 0, H, KEEP), (37, 1, H, KEEP), (1, 5, H, KEEP),
                                                            (37, 1, 128, KEEP), (37, 0, 128, (1.0, 0.5))],
                         ids=["B37", "B37-leftover13", "B1", "B37-H128-vec4", "hidden-only"])
def test_forward_dropout_matches_reference(ctx, batch_size, step, hidden, keep):
    trainer, params, X, labels = make_trainer(ctx, batch_size=batch_size, hidden=hidden, dropout=keep)
    assert trainer.forward.name == "fused_forward_2_dropout.comp"
    out = run_forward(trainer, step, epoch=1)
    idx = reference.epoch_order(N, 1, 3)[step * batch_size:(step + 1) * batch_size]
    count, start = len(idx), step * batch_size
    masks = trainer.masks(step, count)
    ref = fused_mlp.reference_outputs(params, X[idx], labels[idx], masks)
    for name in ("A1", "dZ1", "dlogits"):
        assert check.compare(name, out[name][:count], ref[name], RTOL)
        assert np.isnan(out[name][count:]).all(), f"{name} rows past the batch were written"
    assert check.compare("losses", out["losses"][start:start + count], ref["losses"], RTOL)
    assert np.isnan(out["losses"][:start]).all() and np.isnan(out["losses"][start + count:]).all()
    # the hidden mask really drops: A1 is 0 exactly where the unit was dropped or Z1 <= 0
    assert np.array_equal(out["A1"][:count] > 0, ref["A1"] > 0)
    if keep[1] < 1:
        assert (ref["A1"][masks[1] == 0] == 0).all() and (masks[1] == 0).any()


@pytest.mark.parametrize("batch_size", [37, 1])
def test_backward_dropout_gradients_match_reference(ctx, batch_size):
    """fused_backward_2 with params 0 and SGD lr = -1 leaves the gradients, dW1 from the masked inputs."""
    trainer, params, X, labels = make_trainer(ctx, batch_size=batch_size)
    trainer.start_epoch(1)
    idx = reference.epoch_order(N, 1, 3)[:batch_size]
    masks = trainer.masks(0)
    logits, cache = reference.forward(params, X[idx], masks)
    _, dlogits = reference.softmax_xent(logits, labels[idx])
    grads = reference.backward(params, cache, dlogits, masks[1])
    dZ1 = (dlogits @ params["W2"].T) * masks[1] * (cache[1] > 0)
    for name, rows in (("A1", cache[2]), ("dZ1", dZ1), ("dlogits", dlogits)):
        full = np.full(trainer.arrays[name].shape, np.nan, dtype=np.float32)
        full[:batch_size] = rows
        trainer.write(name, full)
    trainer.write_params({k: np.zeros_like(v) for k, v in params.items()})
    trainer.backward.set(lr=-1.0)   # the shader's uniform itself: the trainer refuses a negative rate
    trainer.backward.set(step=0, rng_step=trainer.rng_step(0))
    trainer.backward.program.run(*trainer.dispatches(0)[1][1])
    got = trainer.read_params()
    for name in ("W1", "b1", "W2", "b2"):
        assert check.compare(f"d{name}", got[name], grads[name], RTOL)
    unmasked = reference.backward(params, (X[idx], cache[1], cache[2]), dlogits, masks[1])["W1"]
    assert check.rel_error(got["W1"], unmasked) > 1e-2, "the input mask made no difference to dW1"


@pytest.mark.parametrize("hidden", [H, 37])
def test_maxnorm_matches_reference_and_touches_only_w1(ctx, hidden):
    trainer, params, _, _ = make_trainer(ctx, hidden=hidden, max_norm=1.0, dropout=None)
    r = np.random.default_rng(0)
    W1 = (r.standard_normal((784, hidden)) * r.uniform(0.01, 0.08, hidden)).astype(np.float32)  # norms 0.3..2.2
    poisoned = {"W1": W1, "b1": np.full(hidden, np.nan, np.float32), "W2": np.full((hidden, 10), np.nan, np.float32),
                "b2": np.full(10, np.nan, np.float32)}
    trainer.write_params(poisoned)
    trainer.bind()                                           # params at binding 3
    trainer.maxnorm.program.run(*trainer.dispatches(0)[2][1])
    trainer.ctx.memory_barrier()
    got = trainer.read_params()
    ref = {"W1": W1.copy()}
    reference.max_norm(ref, 1.0)
    assert check.compare("W1 max-norm", got["W1"], ref["W1"], RTOL)
    norms, before = np.sqrt((got["W1"].astype(np.float64) ** 2).sum(0)), np.sqrt((W1.astype(np.float64) ** 2).sum(0))
    assert norms.max() <= 1.0 + 1e-5 and (before > 1).any() and (before < 1).any()
    under = before < 0.999
    assert np.array_equal(got["W1"][:, under], W1[:, under]), "columns under the limit must not change"
    assert all(np.isnan(got[name]).all() for name in ("b1", "W2", "b2")), "max-norm wrote outside W1"


def make_optimizers():
    return {"SGD": lambda: reference.SGD(0.3), "Momentum": lambda: reference.Momentum(0.1, 0.9)}


@pytest.mark.parametrize("kind", ["SGD", "Momentum"])
@pytest.mark.parametrize("batch_size, hidden, options", [(37, H, dict(dropout=KEEP, max_norm=1.4)),
                                                         (1, H, dict(dropout=KEEP, max_norm=1.4)),
                                                         (37, 128, dict(dropout=KEEP)),
                                                         (37, H, dict(dropout=None, max_norm=1.4))],
                         ids=["B37-both", "B1-both", "H128-dropout", "maxnorm-only"])
def test_steps_equal_reference_steps(ctx, kind, batch_size, hidden, options):
    """Whole steps (two or three dispatches) over two epochs' shuffled batches equal reference.train_step
    with the same masks; He init gives W1 columns of norm about 1.41, so max-norm 1.4 clips some of them."""
    make = make_optimizers()[kind]
    trainer, params, X, labels = make_trainer(ctx, make(), batch_size=batch_size, hidden=hidden, **options)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, make()
    steps = 3 if batch_size == 1 else trainer.steps_per_epoch
    clipped = 0
    for epoch in range(2):
        trainer.start_epoch(epoch)
        order = reference.epoch_order(N, epoch, 3)
        for s in range(steps):
            trainer.step(s)
            idx = order[s * batch_size:(s + 1) * batch_size]
            before = np.sqrt((ref["W1"] ** 2).sum(0))
            reference.train_step(ref, X[idx], labels[idx], optimizer, masks=trainer.masks(s),
                                 max_norm_c=options.get("max_norm"))
            if options.get("max_norm"):
                clipped += int((np.sqrt((ref["W1"] ** 2).sum(0)) < before - 1e-7).sum())
    got = trainer.read_params()
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)
    if options.get("max_norm"):
        assert clipped > 0, "max-norm never bound: the test does not test it"
        assert np.sqrt((got["W1"].astype(np.float64) ** 2).sum(0)).max() <= options["max_norm"] * (1 + 1e-5)
    assert trainer.counts["dispatches"] == 2 * steps * (3 if options.get("max_norm") else 2)


def test_losses_read_back_are_the_dropout_losses(ctx):
    """run_epoch's loss (read every check_every steps) is the mean of the reference's losses with the masks."""
    trainer, params, X, labels = make_trainer(ctx, check_every=1)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, reference.SGD(0.3)
    loss = trainer.run_epoch(0)
    order, total = reference.epoch_order(N, 0, 3), 0.0
    for s in range(trainer.steps_per_epoch):
        idx = order[s * 37:(s + 1) * 37]
        total += reference.train_step(ref, X[idx], labels[idx], optimizer, masks=trainer.masks(s)) * len(idx)
    assert abs(loss - total / N) < 1e-5 * abs(loss)


def test_prediction_uses_no_dropout(ctx):
    trainer, params, X, labels = make_trainer(ctx, max_norm=2.0)
    trainer.train(1, evaluate=(), progress=False)
    trained = trainer.read_params()
    assert trainer.predictor.name == "fused_predict_1_argmax.comp"
    assert np.array_equal(trainer.predict("train"), reference.predict(trained, X))
    assert trainer.accuracy("train") == reference.accuracy(trained, X, labels)


def test_same_seed_same_bits_other_seed_other_masks(ctx):
    def weights(seed):
        trainer = make_trainer(ctx, reference.Momentum(0.1, 0.9), seed=seed, max_norm=1.4)[0]
        trainer.train(2, evaluate=(), progress=False, mu_schedule=lambda e: 0.5 + 0.2 * e,
                      lr_schedule=lambda e: 0.1 / (1 + e))
        assert trainer.optimizer.mu == pytest.approx(0.7) and trainer.lr == pytest.approx(0.05)
        out = trainer.read_params()
        trainer.release()
        return out
    a, b, c = weights(3), weights(3), weights(4)
    assert all(a[k].tobytes() == b[k].tobytes() for k in a), "same seed must give the same bits"
    assert not np.array_equal(a["W1"], c["W1"])


def test_momentum_schedule_reaches_the_shader(ctx):
    """mu and lr set between epochs equal reference steps with the same values (uniforms only, nothing read back)."""
    trainer, params, X, labels = make_trainer(ctx, reference.Momentum(0.1, 0.5), max_norm=1.4)
    ref, optimizer = {k: v.copy() for k, v in params.items()}, reference.Momentum(0.1, 0.5)
    for epoch, (lr, mu) in enumerate([(0.1, 0.5), (0.05, 0.95)]):
        trainer.lr, trainer.mu = lr, mu
        optimizer.lr, optimizer.mu = lr, mu
        trainer.run_epoch(epoch)
        order = reference.epoch_order(N, epoch, 3)
        for s in range(trainer.steps_per_epoch):
            idx = order[s * 37:(s + 1) * 37]
            reference.train_step(ref, X[idx], labels[idx], optimizer, masks=trainer.masks(s), max_norm_c=1.4)
    got = trainer.read_params()
    for name in ref:
        assert check.compare(name, got[name], ref[name], RTOL)


def test_bad_options_are_refused(ctx):
    with pytest.raises(ValueError, match="keep probability"):
        make_trainer(ctx, dropout=(0.0, 0.5))
    with pytest.raises(ValueError, match="max_norm"):
        make_trainer(ctx, max_norm=-1)
    trainer = make_trainer(ctx, reference.SGD(0.1))[0]
    with pytest.raises(TypeError, match="Momentum"):
        trainer.mu = 0.9


# --- the line a seed prints: the ms an epoch from the seconds as printed ----------------------------------

@pytest.mark.parametrize("seconds, epochs, text", [
    (56.77, 4560, "56.8 s of training, 12.5 ms an epoch"),   # 56.8 / 4560 = 12.456; unrounded 56.77 gives 12.450
    (56.74, 4560, "56.7 s of training, 12.4 ms an epoch"),   # 56.7 / 4560 = 12.434
    (0.0, 0, "0.0 s of training, 0.0 ms an epoch")])         # no epoch trained: counted as one, no division by 0
def test_per_epoch_text_divides_the_printed_seconds(seconds, epochs, text):
    from helpers.bench import dropout
    assert dropout.per_epoch_text(seconds, epochs) == text
    assert dropout.per_epoch_figures(seconds, epochs) == tuple(re.findall(r"[\d.]+", text))


def test_per_epoch_ms_rounds_half_up_as_a_reader_does():
    """4.9 s over 400 epochs is 12.25 ms exactly: a reader rounds it half up to 12.3, where Python's :.1f of
    the float rounds half to even, 12.2."""
    from helpers.bench import dropout
    assert dropout.per_epoch_figures(4.9, 400) == ("4.9", "12.3")

"""FusedMLP(tiled_hidden=True): its two forward shaders (glsl/fused_hidden_1_tiled.comp, then
glsl/fused_head_1_xent.comp) against NumPy and against fused_forward_1_xent, and its three-dispatch steps
against the two-dispatch trainer's; and FusedMLP(blocked=True)'s register-blocked shaders
(glsl/fused_hidden_2_blocked.comp, glsl/fused_backward_3_blocked.comp) the same ways, one dispatch at a time
against NumPy (the backward for SGD, momentum and Adam, batches of 1, 37 and 128), whole steps against the
version-1 shaders'.

Awkward shapes: hidden 37 (read one float at a time, VEC4 0) and 100 (vec4 reads, a part-filled last tile),
n_in 784 and 20, an epoch of 50 samples in batches of 37 (the second batch a leftover of 13), tunables that
divide nothing; every output buffer poisoned with NaN before the dispatch.
"""

import numpy as np
import pytest

from helpers import check, fused_mlp, gl, reference
from helpers.bench import profile
from test_fused import assert_trained_like   # parameters and optimizer state against the reference

N = 50
RTOL = 1e-5
OUTPUTS = ("A1", "dZ1", "dlogits", "losses")


def make_data(n_in=784, seed=7, n=N):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, n_in), dtype=np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint32)
    return images, labels, images / np.float32(255)


def make_trainer(ctx, n_in=784, hidden=37, optimizer=None, batch_size=37, tiled=True, n=N, **options):
    images, labels, _ = make_data(n_in, n=n)
    params = reference.init_params(n_in, hidden, 10, seed=1)
    trainer = fused_mlp.FusedMLP(ctx, params, images, labels, optimizer=optimizer or reference.SGD(0.3),
                                 batch_size=batch_size, seed=3, tiled_hidden=tiled, **options)
    return trainer, params


def batch(n_in, step, batch_size=37, n=N):
    """(images as floats, labels) of batch `step` of epoch 0, as the trainer orders them."""
    _, labels, X = make_data(n_in, n=n)
    idx = reference.epoch_order(n, 0, 3)[step * batch_size:(step + 1) * batch_size]
    return X[idx], labels[idx]


def batch_reference(params, n_in, step, batch_size=37):
    """What the step's forward half must write, from NumPy: (rows of the batch, start, reference outputs)."""
    X, labels = batch(n_in, step, batch_size)
    return len(X), step * batch_size, fused_mlp.reference_outputs(params, X, labels)


def poison(trainer):
    trainer.start_epoch(0)
    for name in OUTPUTS:
        trainer.arrays[name].fill(np.nan)


def run(trainer, step, which):
    """Dispatch `which` (an index into trainer.dispatches) of batch `step` alone, then read every output."""
    kernel, groups = trainer.dispatches(step)[which]
    kernel.set(step=step)
    kernel.program.run(*groups)
    trainer.ctx.memory_barrier()
    return {name: trainer.read(name) for name in OUTPUTS}


def assert_unwritten(out, name, count, start=0):
    assert np.isnan(out[name][:start]).all() and np.isnan(out[name][start + count:]).all(), \
        f"{name} written outside this batch's rows"


@pytest.mark.parametrize("blocked, n_in, hidden, step, defines", [
    (False, 784, 37, 0, None), (False, 784, 100, 1, None), (False, 20, 100, 0, None),
    (False, 784, 37, 1, dict(RB=3, TQ=4, KS=5)), (False, 20, 37, 1, dict(RB=16, TQ=2, KS=1)),
    (True, 784, 37, 0, None), (True, 784, 100, 1, None), (True, 20, 100, 0, None),
    (True, 784, 37, 1, dict(RQ=3, TQ=2, BK=8, KS=3)), (True, 20, 37, 0, dict(RQ=1, TQ=1, BK=4, KS=1)),
    (True, 784, 100, 0, dict(RQ=2, TQ=5, BK=12, KS=2))],
    ids=["784-37", "784-100-leftover", "20-100", "784-37-RB3-TQ4-KS5", "20-37-RB16-KS1",
         "blocked-784-37", "blocked-784-100-leftover", "blocked-20-100", "blocked-784-37-RQ3-TQ2-BK8-KS3",
         "blocked-20-37-one-thread-slices", "blocked-784-100-TQ5-BK12"])
def test_hidden_layer_matches_reference(ctx, blocked, n_in, hidden, step, defines):
    """fused_hidden_1_tiled (fused_hidden_2_blocked with blocked) writes A1 of the batch's rows and nothing else."""
    trainer, params = make_trainer(ctx, n_in, hidden, hidden_defines=defines, blocked=blocked)
    assert trainer.forward.name == (fused_mlp.HIDDEN_BLOCKED if blocked else fused_mlp.HIDDEN_TILED)
    assert trainer.forward.define("VEC4") == int(hidden % 4 == 0)
    count, _, ref = batch_reference(params, n_in, step)
    poison(trainer)
    out = run(trainer, step, 0)
    assert check.compare("A1", out["A1"][:count], ref["A1"], RTOL)
    assert_unwritten(out, "A1", count)
    for name in ("dZ1", "dlogits", "losses"):
        assert np.isnan(out[name]).all(), f"layer 1 wrote {name}"


@pytest.mark.parametrize("hidden, step, defines", [
    (37, 0, None), (100, 1, None), (100, 0, dict(S=2, LOCAL=64)), (37, 1, dict(S=3, LOCAL=32))],
    ids=["H37", "H100-leftover", "H100-S2", "H37-S3-leftover"])
def test_head_matches_reference(ctx, hidden, step, defines):
    """fused_head_1_xent from the reference's A1: dZ1, dlogits and the losses at their epoch positions;
    A1 is left as it was, rows past the batch and other samples' losses unwritten."""
    trainer, params = make_trainer(ctx, hidden=hidden, head_defines=defines)
    assert trainer.head.name == fused_mlp.HEAD
    count, start, ref = batch_reference(params, 784, step)
    poison(trainer)
    A1 = trainer.read("A1")
    A1[:count] = ref["A1"]
    trainer.write("A1", A1)
    out = run(trainer, step, 1)
    assert np.array_equal(out["A1"], A1, equal_nan=True), "the head wrote A1"
    for name in ("dZ1", "dlogits"):
        assert check.compare(name, out[name][:count], ref[name], RTOL)
        assert_unwritten(out, name, count)
    assert check.compare("losses", out["losses"][start:start + count], ref["losses"], RTOL)
    assert_unwritten(out, "losses", count, start)


@pytest.mark.parametrize("hidden, step", [(37, 0), (100, 1)], ids=["H37", "H100-leftover"])
def test_both_passes_write_what_fused_forward_1_writes(ctx, hidden, step):
    """Layer 1 then the head leave in A1, dZ1, dlogits and losses what fused_forward_1_xent alone leaves."""
    outputs = {}
    for tiled in (False, True):
        trainer, _ = make_trainer(ctx, hidden=hidden, tiled=tiled)
        poison(trainer)
        for which in range(trainer.dispatches_per_step - 1):  # every dispatch but the backward
            out = run(trainer, step, which)
        outputs[tiled] = out
        trainer.release()
    count, start = min(37, N - step * 37), step * 37
    for name in ("A1", "dZ1", "dlogits"):
        assert check.compare(name, outputs[True][name][:count], outputs[False][name][:count], RTOL)
    assert check.compare("losses", outputs[True]["losses"][start:start + count],
                         outputs[False]["losses"][start:start + count], RTOL)


@pytest.mark.parametrize("make_optimizer", [lambda: reference.SGD(0.3), lambda: reference.Momentum(0.1, 0.9)],
                         ids=["SGD", "Momentum"])
@pytest.mark.parametrize("hidden, max_norm, first, second", [
    (37, None, (False, False), (True, False)), (100, None, (False, False), (True, False)),
    (100, 1.0, (False, False), (True, False)),
    (37, None, (True, False), (True, True)), (100, None, (True, False), (True, True)),
    (100, None, (False, False), (False, True)), (37, None, (True, True), (True, True, 3)),
    (100, None, (True, True), (True, True, 2))],
    ids=["H37", "H100", "H100-maxnorm", "H37-3-pass-blocked", "H100-3-pass-blocked", "H100-2-pass-blocked",
         "H37-layer-1-in-3-pieces", "H100-layer-1-in-2-pieces"])
def test_steps_match_the_two_dispatch_trainer(ctx, make_optimizer, hidden, max_norm, first, second):
    """Two epochs of whole steps (a full batch, then the leftover) leave the same weights, optimizer state
    and losses with the `second` trainer's shaders as with the `first`'s, (tiled_hidden, blocked[, KSPLIT])
    each: the two-dispatch trainer against the three-dispatch one, the version-1 shaders against the
    register-blocked ones, and layer 1 in one piece against layer 1 in pieces; and the same weights as the
    NumPy reference's."""
    trainers = [make_trainer(ctx, hidden=hidden, optimizer=make_optimizer(), tiled=spec[0], blocked=spec[1],
                             max_norm=max_norm, hidden_defines=dict(KSPLIT=spec[2]) if len(spec) > 2 else None)[0]
                for spec in (first, second)]
    assert trainers[1].dispatches_per_step == trainers[0].dispatches_per_step + second[0] - first[0]
    losses = []
    for trainer in trainers:
        for epoch in range(2):
            trainer.start_epoch(epoch)
            for s in range(trainer.steps_per_epoch):
                trainer.step(s)
        losses.append(trainer.loss_sums(0, trainer.steps_per_epoch))
    got, want = trainers[1].read_params(), trainers[0].read_params()
    for name in want:
        assert check.compare(name, got[name], want[name], RTOL)
    for key, state in trainers[1].read_state().items():
        for name in want:
            assert check.compare(f"{key}[{name}]", state[name], trainers[0].read_state()[key][name], RTOL)
    assert check.compare("loss sums", losses[1], losses[0], RTOL)
    if max_norm is None:  # and both against NumPy (max-norm has no reference step)
        _, labels, X = make_data()
        ref, optimizer = reference.init_params(784, hidden, 10, seed=1), make_optimizer()
        for epoch in range(2):
            order = reference.epoch_order(N, epoch, 3)
            for s in range(2):
                idx = order[s * 37:(s + 1) * 37]
                optimizer.step(ref, reference.loss_and_grads(ref, X[idx], labels[idx])[1])
        for name in ref:
            assert check.compare(f"{name} vs NumPy", got[name], ref[name], RTOL)
    for trainer in trainers:
        trainer.release()


@pytest.mark.parametrize("blocked, defines", [(False, None), (True, None), (True, dict(KSPLIT=3))],
                         ids=["version-1", "blocked", "blocked-layer-1-in-3-pieces"])
def test_same_seed_gives_the_same_bits(ctx, blocked, defines):
    """Every sum of the three dispatches runs in a fixed order, with the version-1 shaders, the
    register-blocked ones and layer 1 in pieces (added by the head in a fixed order): two runs,
    bitwise-identical weights and losses."""
    runs = []
    for _ in range(2):
        trainer, _ = make_trainer(ctx, hidden=100, optimizer=reference.Momentum(0.1, 0.9), blocked=blocked,
                                  hidden_defines=defines)
        for epoch in range(2):
            trainer.start_epoch(epoch)
            for s in range(trainer.steps_per_epoch):
                trainer.step(s)
        runs.append((trainer.read("params"), trainer.read("losses")))
        trainer.release()
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])


def test_dispatches_and_group_counts(ctx):
    """Three dispatches a step (four with max-norm), listed in order for the profilers; the work groups the
    banners give at the H100's sizes (batch 128 of 60,000 images: the last batch holds 96)."""
    trainer, _ = make_trainer(ctx, hidden=100, max_norm=2.0)
    names = [kernel.name for kernel, _ in trainer.dispatches(1)]
    assert names == [fused_mlp.HIDDEN_TILED, fused_mlp.HEAD, fused_mlp.BACKWARD, fused_mlp.MAXNORM]
    tq, rb = trainer.forward.define("TQ"), trainer.forward.define("RB")
    assert trainer.dispatches_per_step == 4
    assert trainer.plan[1][:2] == ((-(-100 // (4 * tq)), -(-13 // rb), 1), (13, 1, 1))  # 13 leftover
    assert trainer.predictor.name == fused_mlp.PREDICT
    before = trainer.read("params")
    assert list(profile.profile_step(trainer, repeat=2)["kernel"]) == names   # the profiler times all four
    assert np.array_equal(trainer.read("params"), before)
    trainer.release()
    hidden = gl.Kernel(ctx, fused_mlp.HIDDEN_TILED)
    head = gl.Kernel(ctx, fused_mlp.HEAD)
    sizes = dict(batch_size=128, n_samples=60_000)
    assert hidden.groups(n_hidden=800, step=0, **sizes) == (25, 16, 1)
    assert hidden.groups(n_hidden=128, step=0, **sizes) == (4, 16, 1)
    assert hidden.groups(n_hidden=800, step=468, **sizes) == (25, 12, 1)
    assert head.groups(step=0, **sizes) == (128, 1, 1) and head.groups(step=468, **sizes) == (96, 1, 1)
    d = hidden.define
    assert 4 * max(d("RB") * d("MAX_IN"), d("KS") * d("RB") * 4 * d("TQ")) <= fused_mlp.SHARED_BYTES


@pytest.mark.parametrize("make_optimizer", [lambda: reference.SGD(0.3), lambda: reference.Momentum(0.1, 0.9),
                                            lambda: reference.Adam(1e-3, eps=1e-6)], ids=["SGD", "Momentum", "Adam"])
@pytest.mark.parametrize("n_in, hidden, batch_size, defines", [
    (784, 37, 37, None), (784, 100, 128, None), (20, 100, 1, None),
    (784, 37, 37, dict(TQ=3, KQ=3, BS=2, BC=5)), (20, 100, 128, dict(TQ=1, KQ=3, BS=1, BC=7)),
    (784, 100, 37, fused_mlp.TUNED["wide"]["backward_blocked"])],
    ids=["784-37-B37", "784-100-B128", "20-100-B1", "784-37-TQ3-KQ3-BS2-BC5", "20-100-B128-one-slice",
         "784-100-B37-wide-tuned"])
def test_blocked_backward_update_matches_reference(ctx, make_optimizer, n_in, hidden, batch_size, defines):
    """One fused_backward_3_blocked dispatch from the reference's A1, dZ1 and dlogits (rows past the batch
    NaN) moves every parameter and its optimizer state as the reference optimizer's step does."""
    n = 150
    trainer, params = make_trainer(ctx, n_in, hidden, make_optimizer(), batch_size, tiled=False, n=n, blocked=True,
                                   backward_defines=defines)
    assert trainer.backward.name == fused_mlp.BACKWARD_BLOCKED
    assert trainer.backward.define("VEC4") == int(hidden % 4 == 0)
    X, labels = batch(n_in, 0, batch_size, n)
    ref = fused_mlp.reference_outputs(params, X, labels)
    trainer.start_epoch(0)
    for name in ("A1", "dZ1", "dlogits"):
        full = np.full(trainer.arrays[name].shape, np.nan, dtype=np.float32)
        full[:batch_size] = ref[name]
        trainer.write(name, full)
    if trainer.kind == "Adam":
        trainer.backward.set(**trainer.next_bias_corrections())
    run(trainer, 0, -1)
    optimizer = make_optimizer()
    want = {k: v.copy() for k, v in params.items()}
    optimizer.step(want, reference.loss_and_grads(want, X, labels)[1])
    assert_trained_like(trainer, want, optimizer)


def test_blocked_group_counts_and_shared_memory(ctx):
    """The blocked shaders' work groups as their banners give them at the H100's sizes (batch 128 of 60,000
    images: the last batch holds 96), and the shared memory of their defaults and tuned rows within what
    OpenGL guarantees everywhere."""
    hidden, backward = gl.Kernel(ctx, fused_mlp.HIDDEN_BLOCKED), gl.Kernel(ctx, fused_mlp.BACKWARD_BLOCKED)
    sizes = dict(batch_size=128, n_samples=60_000)
    tq, rq = hidden.define("TQ"), hidden.define("RQ")
    assert hidden.groups(n_hidden=800, step=0, **sizes) == (-(-800 // (4 * tq)), -(-128 // (4 * rq)), 1)
    assert hidden.groups(n_hidden=800, step=468, **sizes) == (-(-800 // (4 * tq)), -(-96 // (4 * rq)), 1)
    tq, kq = backward.define("TQ"), backward.define("KQ")
    head_groups, blocks = -(-801 // (4 * tq)), -(-785 // (4 * kq)) * -(-800 // (4 * tq))
    assert backward.groups(n_in=784, n_hidden=800) == (head_groups + blocks, 1, 1)
    for row in fused_mlp.TUNED.values():  # the defaults and each tuned row fit where every OpenGL 4.3 does
        d = dict(gl.Kernel(ctx, fused_mlp.HIDDEN_BLOCKED).define_values, **row["hidden_blocked"])
        rows, words = 4 * d["RQ"], d["KS"] * d["BK"] // 4
        assert 16 * max(rows * (words + 1) + d["KS"] * d["BK"] * d["TQ"], (d["KS"] - 1) * rows * d["TQ"]) + 4 * rows \
            <= fused_mlp.SHARED_BYTES
        d = dict(gl.Kernel(ctx, fused_mlp.BACKWARD_BLOCKED).define_values, **row["backward_blocked"])
        stage = d["BS"] * d["BC"]
        assert 16 * max(stage * (d["KQ"] + d["TQ"]), d["BS"] * 4 * d["KQ"] * d["TQ"]) <= fused_mlp.SHARED_BYTES


@pytest.mark.parametrize("options, match", [
    (dict(dropout=(0.8, 0.5)), "tiled_hidden has no dropout version"),
    (dict(split_hidden=True), "tiled_hidden and split_hidden are two ways"),
    (dict(tiled=False, hidden_defines=dict(RB=4)), "pass tiled_hidden=True"),
    (dict(tiled=False, head_defines=dict(S=2)), "pass tiled_hidden=True"),
    (dict(tiled=False, blocked=True, dropout=(0.8, 0.5)), "blocked has no dropout or split_hidden version"),
    (dict(tiled=False, blocked=True, split_hidden=True), "blocked has no dropout or split_hidden version")],
    ids=["dropout", "split_hidden", "hidden_defines", "head_defines", "blocked-dropout", "blocked-split_hidden"])
def test_refused_combinations(ctx, options, match):
    with pytest.raises(ValueError, match=match):
        make_trainer(ctx, **options)

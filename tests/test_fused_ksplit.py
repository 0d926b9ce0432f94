"""Layer 1 split among work groups along its inputs: fused_hidden_2_blocked with KSPLIT > 1 writes partial sums
(one piece of the inputs each, to `parts`), and fused_head_1_xent with the same KSPLIT adds them, + b1, ReLU,
into A1 before the rest of the forward half. Each dispatch against NumPy with every output poisoned with NaN;
whole epochs against the unsplit trainer and NumPy, and the same bits run to run, are in test_fused_tiled.py.

Awkward shapes: hidden 37 (VEC4 0) and 100, n_in 784 and 20, a leftover batch of 13, more pieces than the
inputs have stages (those pieces write zeros), a piece count that divides nothing.
"""

import numpy as np
import pytest

from helpers import check, fused_mlp, gl, reference
from test_fused_tiled import batch, make_trainer, poison, run, RTOL


def pieces(trainer) -> list:
    """The input ranges [lo, hi) of layer 1's pieces, as the shader's banner gives them: stages of KS*BK
    inputs, per = ceil(stages / KSPLIT) stages a piece."""
    d = trainer.forward.define
    stage = d("KS") * d("BK")
    stages = -(-trainer.K // stage)
    per = -(-stages // d("KSPLIT"))
    return [(min(z * per * stage, trainer.K), min((z + 1) * per * stage, trainer.K)) for z in range(d("KSPLIT"))]


def poison_parts(trainer):
    poison(trainer)
    trainer.arrays["parts"].fill(np.nan)


@pytest.mark.parametrize("n_in, hidden, step, ksplit", [
    (784, 37, 0, 3), (784, 100, 1, 2), (20, 100, 0, 3), (784, 100, 0, 20)],
    ids=["784-37-three-pieces", "784-100-leftover-two-pieces", "20-100-empty-pieces", "784-100-more-pieces-than-stages"])
def test_layer_1_pieces_match_reference(ctx, n_in, hidden, step, ksplit):
    """Piece z of parts holds X[:, lo:hi] @ W1[lo:hi] for the batch's rows (no bias, no ReLU); rows past the
    batch and A1 are left unwritten; a piece with no inputs holds zeros."""
    trainer, params = make_trainer(ctx, n_in, hidden, blocked=True, hidden_defines=dict(KSPLIT=ksplit))
    assert trainer.forward.name == fused_mlp.HIDDEN_BLOCKED and trainer.head.define("KSPLIT") == ksplit
    X, _ = batch(n_in, step)
    count = len(X)
    poison_parts(trainer)
    run(trainer, step, 0)
    parts = trainer.read("parts").reshape(ksplit, 37, hidden)
    ranges = pieces(trainer)
    assert ranges[0][0] == 0 and ranges[-1][1] == n_in
    for z, (lo, hi) in enumerate(ranges):
        want = X[:, lo:hi].astype(np.float64) @ params["W1"][lo:hi].astype(np.float64)
        if hi == lo:
            assert np.array_equal(parts[z, :count], np.zeros((count, hidden))), f"empty piece {z} is not zeros"
        else:  # each piece's sums against the whole product's scale (a piece's sum can cancel to near zero)
            scale = np.abs(X @ params["W1"]).max()
            assert np.abs(parts[z, :count] - want).max() <= RTOL * scale, f"piece {z} (inputs {lo}..{hi})"
        assert np.isnan(parts[z, count:]).all(), f"piece {z} written past the batch"
    assert np.isnan(trainer.read("A1")).all(), "layer 1 wrote A1 with KSPLIT > 1"
    trainer.release()


@pytest.mark.parametrize("hidden, step, ksplit, head", [
    (37, 0, 3, None), (100, 1, 2, None), (100, 0, 3, dict(S=2, LOCAL=64)), (37, 1, 4, dict(S=1, LOCAL=1024))],
    ids=["H37-three", "H100-leftover-two", "H100-S2-three", "H37-leftover-four-LOCAL1024"])   # the last: TUNED's wide head
def test_head_adds_the_pieces(ctx, hidden, step, ksplit, head):
    """From pieces that add up to the reference's X·W1: the head writes A1 = relu(sum + b1) of the batch's
    rows, then dZ1, dlogits and the losses as the reference has them; rows past the batch stay unwritten."""
    trainer, params = make_trainer(ctx, hidden=hidden, blocked=True, hidden_defines=dict(KSPLIT=ksplit),
                                   head_defines=head)
    X, labels = batch(784, step)
    count, start = len(X), step * 37
    ref = fused_mlp.reference_outputs(params, X, labels)
    poison_parts(trainer)
    parts = np.full((ksplit, 37, hidden), np.nan, dtype=np.float32)
    cut = np.linspace(0, 784, ksplit + 1).astype(int)
    for z in range(ksplit):
        parts[z, :count] = X[:, cut[z]:cut[z + 1]] @ params["W1"][cut[z]:cut[z + 1]]
    trainer.write("parts", parts.ravel())
    out = run(trainer, step, 1)
    for name in ("A1", "dZ1", "dlogits"):
        assert check.compare(name, out[name][:count], ref[name], RTOL)
        assert np.isnan(out[name][count:]).all(), f"{name} written past the batch"
    assert check.compare("losses", out["losses"][start:start + count], ref["losses"], RTOL)
    assert np.isnan(out["losses"][:start]).all() and np.isnan(out["losses"][start + count:]).all()
    trainer.release()


def test_group_counts_and_the_heads_piece_count(ctx):
    """KSPLIT work groups along z at the H100's sizes; the head's KSPLIT is layer 1's, never set apart."""
    hidden = gl.Kernel(ctx, fused_mlp.HIDDEN_BLOCKED, dict(KSPLIT=4))
    tq, rq = hidden.define("TQ"), hidden.define("RQ")
    sizes = dict(batch_size=128, n_samples=60_000)
    assert hidden.groups(n_hidden=800, step=0, **sizes) == (-(-800 // (4 * tq)), -(-128 // (4 * rq)), 4)
    with pytest.raises(ValueError, match="the head's KSPLIT is layer 1's"):
        make_trainer(ctx, blocked=True, head_defines=dict(KSPLIT=2))
    with pytest.raises(ValueError, match="pass blocked=True with it"):   # fused_hidden_1_tiled has no pieces
        make_trainer(ctx, blocked=False, hidden_defines=dict(KSPLIT=2))


def _row(name, ms, low, high, **extra):
    return {"name": name, "ms": ms, "ms_low": low, "ms_high": high, **extra}


SPLIT = "fused blocked 3-pass 784-800-10 Momentum"


@pytest.mark.parametrize("split_ms, outcome, words", [
    ((21.3, 21.2, 21.4), "A faster", "in 4 pieces (21.3 ms (21.2–21.4)) is 1.1× faster than the wide 3-pass epoch with layer 1 in one piece"),
    ((23.0, 22.9, 23.1), "same within noise", "1.02× apart, within the 5 % we call the same"),
    ((26.0, 25.9, 26.1), "B faster", "The wide 3-pass epoch with layer 1 in one piece (23.5 ms (23.4–23.6)) is 1.1× faster than the wide"),
], ids=["split-faster", "within-margin", "one-piece-faster"])
def test_layer1_pieces_judges_the_two_rows(split_ms, outcome, words):
    """Either side of the margin: the split row faster, the two within 5 %, the one-piece row faster."""
    from helpers.bench import fused as bench_fused
    rows = [_row(SPLIT, *split_ms, layer1_pieces=4),
            _row(SPLIT + bench_fused.ONE_PIECE_NAME, 23.5, 23.4, 23.6, layer1_pieces=1), _row("other", 1, 1, 1)]
    v = bench_fused.layer1_pieces(rows)
    assert v.outcome == outcome and words in v, v


def test_layer1_pieces_needs_both_rows():
    from helpers.bench import fused as bench_fused
    assert bench_fused.layer1_pieces([_row(SPLIT, 21.3, 21.2, 21.4, layer1_pieces=4)]) is None
    assert bench_fused.layer1_pieces([_row(SPLIT + bench_fused.ONE_PIECE_NAME, 23.5, 23.4, 23.6)]) is None
    one = bench_fused.layer1_pieces([_row(SPLIT, 23.5, 23.4, 23.6, layer1_pieces=1),
                                     _row(SPLIT + bench_fused.ONE_PIECE_NAME, 23.5, 23.4, 23.6)])
    assert "layer 1's inputs in one piece" in one and one.outcome == "same within noise"


def test_layer1_pieces_pair_is_the_split_row_then_the_one_piece_row():
    """The pair notebook 08 adds to the record's pairs: split first, one piece second; None without both."""
    from helpers.bench import fused as bench_fused
    split, one = _row(SPLIT, 21.3, 21.2, 21.4, layer1_pieces=4), _row(SPLIT + bench_fused.ONE_PIECE_NAME, 23.5, 23.4, 23.6)
    assert bench_fused.layer1_pieces_pair([one, _row("other", 1, 1, 1), split]) == (split, one)
    assert bench_fused.layer1_pieces_pair([split]) is None

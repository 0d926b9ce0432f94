"""helpers/bench/products.py: the step's two products by every candidate rung, checked before timing."""

import numpy as np
import pytest

from helpers import matmul
from helpers.bench import products


def test_shapes_are_the_steps_products():
    got = products.shapes(37)
    assert got == {"layer 1: Z1 = X·W1": (128, 784, 37), "weights: dW1 = Xᵀ·dZ1": (784, 128, 37)}


def test_candidates_are_the_single_dispatch_rungs_then_the_small_tiles():
    names = [name for name, _ in products.candidates()]
    assert matmul.SPLITK not in names                          # two dispatches: not timed as one
    assert set(names) == set(matmul.rungs()) - {matmul.SPLITK}
    small = [(n, d) for n, d in products.candidates() if d]
    assert len(small) == len(products.TILED) * len(products.SMALL_TILES)
    assert products.label(*small[0]).endswith(next(iter(products.SMALL_TILES)))


def test_ladder_rows_time_every_candidate_at_both_products(ctx, monkeypatch):
    # a smaller step than 784-128-10 keeps llvmpipe quick; H = 37 fits no tile
    monkeypatch.setattr(products, "INPUTS", 70)
    monkeypatch.setattr(products, "BATCH", 19)
    rows = products.ladder_rows(ctx, (37,), quick=True)
    assert len(rows) == 2 * len(products.candidates())
    assert {tuple(r["shape"]) for r in rows} == {(19, 70, 37), (70, 19, 37)}
    assert all(r["seconds"] > 0 for r in rows)
    best = products.fastest(rows, 37, "layer 1: Z1 = X·W1")
    assert best["seconds"] == min(r["seconds"] for r in rows if r["product"] == "layer 1: Z1 = X·W1")
    assert products.step_seconds(rows, 37) == pytest.approx(
        sum(products.fastest(rows, 37, p)["seconds"] for p in products.shapes(37)))
    assert products.step_seconds(rows, 37, cublas=True) is None     # no cuBLAS rows: no step to add up
    assert "(no torch)" in products.table(rows)


def test_a_wrong_rung_stops_the_benchmark(ctx, monkeypatch):
    monkeypatch.setattr(products, "INPUTS", 20)
    monkeypatch.setattr(products, "BATCH", 12)
    # LOADS 0 fills the tiles from their index instead of A and B: C is wrong by design
    monkeypatch.setattr(products, "candidates", lambda: [("matmul_6_subgroup.comp", {"LOADS": 0})])
    with pytest.raises(RuntimeError, match="does not match NumPy at 12×20×5"):
        products.ladder_rows(ctx, (5,), quick=True)


def test_committed_run_has_cublas_for_both_nets():
    import json

    from helpers.bench.fused import RESULTS_FILE

    rows = json.loads(RESULTS_FILE.read_text())["benches"].get("products")
    if rows is None:
        pytest.skip("the committed benchmark predates helpers/bench/products.py")
    for hidden in (128, 800):
        assert products.step_seconds(rows, hidden) is not None
        assert products.step_seconds(rows, hidden, cublas=True) is not None
    assert np.isfinite([r["seconds"] for r in rows]).all()

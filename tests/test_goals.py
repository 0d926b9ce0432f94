"""helpers.bench.goals: issue #12's goals judged on a benchmark JSON, each missed one with its measured reason."""

import json

import pytest

from helpers.bench import goals, inference, matmul, products
from helpers.report import ROOT

JSON = ROOT / "notebooks" / "results" / "bench-h100.json"


def _epoch_rows(ours_ms, fp32_ms, tf32_ms, hidden=128):
    net = f"784-{hidden}-10"
    return [{"name": f"fused {net} SGD", "ms": ours_ms, "steps": 469, "profile": {"kernel_total": 8e-6}},
            {"name": f"floor: 469×2 empty dispatches + barriers", "ms": 1.0, "steps": 469},
            {"name": f"lookahead {net}, chain groups alone (weights wrong)", "ms": 0.5, "steps": 469},
            {"name": f"JAX jit(lax.scan) {net} SGD, fp32", "ms": fp32_ms, "precision": "highest"},
            {"name": f"JAX jit(lax.scan) {net} SGD, TF32", "ms": tf32_ms, "precision": "default"}]


def _product_rows(hidden=128, cublas_s=6e-6):
    return [{"product": p, "hidden": hidden, "shape": list(shape), "impl": impl, "seconds": s, "clock": "c"}
            for p, shape in products.shapes(hidden).items()
            for impl, s in (("matmul_9_interior", 2 * cublas_s), (products.CUBLAS, cublas_s))]


def test_epoch_goals_met_when_every_figure_is_inside():
    rows = goals.epoch_goals(_epoch_rows(5.0, 12.0, 9.0), _product_rows(), 128, 6.0, 2.0)
    assert [g["met"] for g in rows] == [True, True, True]
    assert all(g["reason"] == "" for g in rows)
    assert rows[0]["measured"] == "fused 784-128-10 SGD 5.00 ms"     # not the floor, not a row of one kind alone


def test_epoch_goals_missed_give_the_arithmetic_against_the_budget():
    epoch, limit, budget = goals.epoch_goals(_epoch_rows(12.0, 18.0, 10.0), _product_rows(), 128, 6.0, 2.0)
    assert not (epoch["met"] or limit["met"] or budget["met"])
    # the fused kernels, 8 µs a step, and cuBLAS's two products, 12 µs, over 469 steps
    assert epoch["reason"] == ("an epoch must take <= 6.00 ms; the fused step's two kernels alone: 3.75 ms (63% of that); "
                               "the two products alone, by cuBLAS in a CUDA graph: 5.63 ms (94% of that)")
    assert limit["reason"].startswith("an epoch must take <= 9.00 ms;")
    assert limit["measured"] == "1.50× (JAX fp32 18.00 ms)"
    assert "TF32 made JAX 1.80× faster than its own fp32" in budget["reason"]


def test_epoch_goals_fall_back_to_the_ladder_without_a_profile():
    rows = [r for r in _epoch_rows(30.0, 25.0, 20.0, hidden=800)]
    del rows[0]["profile"]
    epoch = goals.epoch_goals(rows, _product_rows(800), 800, 12.0, 1.7)[0]
    assert "by the matmul ladder's fastest rungs: 11.26 ms" in epoch["reason"]      # 2 × 12 µs × 469


def test_no_epoch_goals_without_a_glsl_row():
    assert goals.epoch_goals(_epoch_rows(5.0, 12.0, 9.0)[3:], [], 128, 6.0, 2.0) == []


def _matmul(impl, size, share):
    return {"impl": impl, "size": size, "seconds": 1.0 / share, "gflops": 1.0, "clock": "c"}


def test_matmul_goals_say_what_the_loads_cost():
    rows = [_matmul("cuBLAS fp32 (torch, TF32 off)", 2048, 1.0), _matmul("matmul_6_subgroup", 2048, 0.70),
            _matmul("matmul_9_interior", 2048, 0.85), _matmul(matmul.NO_LOADS, 2048, 0.90),
            _matmul("cuBLAS fp32 (torch, TF32 off)", 4096, 1.0), _matmul("matmul_9_interior", 4096, 0.86)]
    g2048, g4096 = goals.matmul_goals(rows)
    assert not g2048["met"] and g2048["measured"] == "matmul_9_interior 85%"
    assert "70% with them and 90% without" in g2048["reason"] and "wins back 75% of that" in g2048["reason"]
    assert g4096["met"] and g4096["reason"] == ""


def _upload(what, gbps):
    return {"what": what, "seconds": 1.0 / gbps, "gbps": gbps, "images": 10_000}


def test_upload_goal_is_the_fastest_upload_from_numpy():
    rows = [_upload(inference.CEILING, 50.0), _upload("upload float32 into existing buffer", 12.0),
            _upload("upload float32 via a staging buffer + GPU copy", 20.0),
            _upload("GPU copy from a mapped buffer already holding the images", 48.0),     # not from NumPy
            _upload(inference.COPY_ALONE, 25.0)]
    (goal,) = goals.upload_goal(rows)
    assert not goal["met"] and goal["measured"].startswith("20.0 GB/s, 40% (via a staging buffer")
    assert "reaches 50% of the ceiling" in goal["reason"] and "go at 96%" in goal["reason"]
    rows.append(_upload("upload float32 via a faster way", 35.0))
    assert goals.upload_goal(rows)[0]["met"]
    assert goals.upload_goal(rows[1:]) == []          # no ceiling in the run: nothing to judge


@pytest.mark.skipif(not JSON.is_file(), reason="no committed benchmark JSON")
def test_committed_run_judges_every_goal_and_explains_each_miss():
    record = json.loads(JSON.read_text())
    card = goals.scorecard(record)
    assert len(card) == 10                             # 3 a net, 3 matmul sizes, the upload
    for g in card:
        assert g["met"] or any(ch.isdigit() for ch in g["reason"]), f"{g['goal']}: missed with no measured reason"
    assert goals.table(record).count("\n| ") == len(card) + 2       # the header, the rule, a row a goal

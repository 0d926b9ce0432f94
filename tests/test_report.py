"""helpers.report: the README's results table is the committed benchmark JSON, row for row."""

import json

from helpers import report
from helpers.bench import matmul as bench_matmul

JSON = report.ROOT / "notebooks" / "results" / "bench-h100.json"


def test_readme_table_is_the_committed_json():
    record = json.loads(JSON.read_text())
    record["_file"] = JSON.name
    readme = (report.ROOT / "README.md").read_text()
    assert "## Results\n\n" + report.table(record) in readme, \
        "README.md's table differs from notebooks/results/bench-h100.json: run python -m helpers.report on it"


def _row(impl, size, gflops):
    return {"impl": impl, "size": size, "gflops": gflops, "seconds": 2 * size ** 3 / gflops / 1e9, "clock": "c"}


def test_matmul_rows_name_each_goal_size_fastest_rung():
    rows = [_row(name, n, g) for n in (512, 1024, 4096) for name, g in
            (("matmul_1_naive", 1e3), ("matmul_8_splitk", 2e4 if n == 1024 else 3e4),
             (bench_matmul.NO_LOADS, 9e4), ("numpy (CPU)", 5e2), ("cuBLAS fp32 (torch, TF32 off)", 4e4))]
    lines = report.matmul_rows(rows)
    assert sum("matmul 4096³," in line for line in lines) == 5                # every row at the largest size
    assert lines[-1] == "| matmul 1024³, fastest rung: matmul_8_splitk | 20.0 TFLOP/s (50% of cuBLAS's 40.0) | c |"
    assert not any("512³" in line for line in lines)                        # below the goals' sizes


def test_products_rows_name_the_fastest_rung_beside_cublas():
    from helpers.bench import products

    shape = {product: list(s) for product, s in products.shapes(128).items()}
    rows = [{"product": p, "hidden": 128, "shape": shape[p], "impl": impl, "seconds": s, "clock": "c"}
            for p in shape for impl, s in (("matmul_3_blocked", 9e-6), ("matmul_9_interior", 7e-6), (products.CUBLAS, 5e-6))]
    lines = report.products_rows(rows)
    assert lines[0] == ("| a 784-128-10 step's layer 1: Z1 = X·W1 (128×784×128), fastest rung: matmul_9_interior | "
                        "7 µs (cuBLAS in a CUDA graph 5 µs) | c |")
    assert len(lines) == 2 and "(784×128×128)" in lines[1]
    assert "cuBLAS" not in report.products_rows([r for r in rows if r["impl"] != products.CUBLAS])[0]

"""The README's results table and transfer-vs-kernel figure, generated from one benchmark JSON file.

    python -m helpers.bench all --out notebooks/results/bench-h100.json    # on the GPU machine
    python -m helpers.report notebooks/results/bench-h100.json             # rewrites README.md's table and figure

Nothing here measures: every figure is copied from the JSON that helpers.bench wrote, with the device,
driver and date it recorded.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from .bench import goals as bench_goals
from .bench import matmul as bench_matmul
from .bench import products as bench_products

ROOT = Path(__file__).resolve().parent.parent
FIGURE = ROOT / "notebooks" / "results" / "transfer_vs_kernel.png"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.3g} µs"


def matmul_rows(rows: list[dict]) -> list[str]:
    largest = max(r["size"] for r in rows)
    at = {r["impl"]: r for r in rows if r["size"] == largest}
    cublas = next((r for name, r in at.items() if "cuBLAS" in name), None)
    out = []
    for name, r in at.items():
        share = f" ({r['gflops'] / cublas['gflops']:.0%} of cuBLAS)" if cublas and r is not cublas else ""
        out.append(f"| matmul {largest}³, {name} | {r['gflops'] / 1e3:.1f} TFLOP/s{share} | {r['clock']} |")
    for g in reversed(bench_matmul.goal_rows(rows)):   # issue #12's other sizes: the fastest rung at each
        if g["size"] != largest:
            best = next(r for r in rows if r["impl"] == g["best"] and r["size"] == g["size"])
            out.append(f"| matmul {g['size']}³, fastest rung: {g['best']} | {best['gflops'] / 1e3:.1f} TFLOP/s "
                       f"({g['share']:.0%} of cuBLAS's {best['gflops'] / g['share'] / 1e3:.1f}) | {best['clock']} |")
    return out


def inference_rows(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r["what"].startswith(("pack_images", "pack_u8")):  # a view of the same bytes: no work worth a row (pack_u8: older JSON)
            continue
        value = _ms(r["seconds"]) + (f", {r['gbps']:.1f} GB/s" if "gbps" in r and "upload" in r["what"] else "")
        out.append(f"| 10,000 test images: {r['what']} | {value} | {r['clock']} |")
    return out


def epoch_rows(rows: list[dict], label: str) -> list[str]:
    out = []
    for r in rows:
        seconds = r.get("epoch_s", r.get("ms", 0) / 1e3 if "ms" in r else None)
        if seconds is None:
            continue
        extra = ""
        per_step = r.get("dispatches_per_step")
        if per_step is not None:  # a persistent kernel: one dispatch for many steps
            extra = (f", {per_step} dispatch{'es' if per_step > 1 else ''} a step" if per_step >= 1 else
                     f", 1 dispatch per {round(1 / per_step)} steps")
        out.append(f"| {label}: {r['name']} | {_ms(seconds)}{extra} | {r.get('clock', '')} |")
    return out


def products_rows(rows: list[dict]) -> list[str]:
    """The training step's two products, each by its fastest rung, beside cuBLAS where the run had it."""
    out = []
    for hidden in sorted({r["hidden"] for r in rows}):
        for product in bench_products.shapes(hidden):
            best, blas = (bench_products.fastest(rows, hidden, product, cublas) for cublas in (False, True))
            if best is None:
                continue
            beside = f" (cuBLAS in a CUDA graph {_ms(blas['seconds'])})" if blas else ""
            out.append(f"| a 784-{hidden}-10 step's {product} ({'×'.join(map(str, best['shape']))}), fastest rung: "
                       f"{best['impl']} | {_ms(best['seconds'])}{beside} | {best['clock']} |")
    return out


def table(record: dict) -> str:
    device = record["device"]
    kernels = ("kernels by wall clock around ctx.finish() (a software renderer: no GPU timer queries)"
               if device.get("software") else "kernels by GPU timer queries")
    lines = [f"Measured by `python -m helpers.bench all` on **{device['renderer']}**, OpenGL "
             f"{device['gl_version']}, {device['date']} ([JSON](notebooks/results/{record.get('_file', '')})); "
             f"the GPU figures are medians, {kernels}, everything else by wall clock.",
             "", "| what | result | clock |", "| --- | --- | --- |"]
    benches = record["benches"]
    if "matmul" in benches:
        lines += matmul_rows(benches["matmul"])
    if "inference" in benches:
        lines += inference_rows(benches["inference"])
    if "train" in benches:
        lines += epoch_rows(benches["train"], "one MNIST epoch, 784-128-10, batch 128")
    if "fused" in benches:
        lines += epoch_rows(benches["fused"], "one MNIST epoch, batch 128")
    if "products" in benches:
        lines += products_rows(benches["products"])
    if bench_goals.scorecard(record):
        lines += ["", "### Issue #12's goals", "", bench_goals.table(record)]
    return "\n".join(lines)


def figure(record: dict, path: Path = FIGURE) -> Path:
    """Stacked bars: where the time of one 10,000-image inference goes (upload, kernels, readback)."""
    import matplotlib

    matplotlib.use("Agg")
    from . import plots

    rows = {r["what"]: r["seconds"] for r in record["benches"]["inference"]}
    pick = lambda prefix: next(v for k, v in rows.items() if k.startswith(prefix))  # noqa: E731
    bars = {
        "float32 images": {"upload": pick("upload float32 into existing"), "kernel": pick("kernels, float32"),
                           "readback": pick("readback into a preallocated")},
        "uint8 images, packed": {"upload": pick("upload uint8"), "kernel": pick("kernels, uint8"),
                                 "readback": pick("readback into a preallocated")},
        "NumPy on the CPU": {"numpy": pick("NumPy forward")},
    }
    fig = plots.stacked_bars(bars, scale=1e3, unit="ms",
                             title=f"10,000 test images through 784-128-10 on {record['device']['renderer'].split('/')[0]}\n"
                                   "upload and readback against kernel time, and NumPy")
    fig.savefig(path, dpi=110)
    return path


def replace_block(text: str, name: str, content: str) -> str:
    """Put `content` between <!-- NAME --> and <!-- /NAME --> in `text`."""
    pattern = re.compile(rf"<!-- {name} -->.*?<!-- /{name} -->", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"README.md has no <!-- {name} --> ... <!-- /{name} --> markers")
    return pattern.sub(lambda m: f"<!-- {name} -->\n{content}\n<!-- /{name} -->", text, count=1)


def main(json_path: str) -> int:
    path = Path(json_path)
    record = json.loads(path.read_text())
    record["_file"] = path.name
    readme = ROOT / "README.md"
    text = replace_block(readme.read_text(), "RESULTS-TABLE", "## Results\n\n" + table(record))
    if "inference" in record["benches"]:
        image = figure(record).relative_to(ROOT)
        text = replace_block(text, "RESULTS-PLOT", f"![transfer against kernel time]({image})")
    readme.write_text(text)
    print(table(record))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m helpers.report BENCH.json   (from python -m helpers.bench all --out BENCH.json)",
              file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))

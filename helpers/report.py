"""The README's headline results, the full results table and the transfer-vs-kernel figure, generated
from one benchmark JSON file.

    python -m helpers.bench all --out notebooks/results/bench-mine.json   # on your GPU
    python -m helpers.report notebooks/results/bench-mine.json            # its table and figure, beside it

writes, next to the JSON, bench-mine.md (every row the run measured, each named with the sizes it
measured) and bench-mine.png (where the time of one inference goes); no tracked file is touched. With
--write-committed it rewrites instead the course's own files: notebooks/results/RESULTS.md, the headline
rows between the <!-- RESULTS-TABLE --> markers of README.md, and notebooks/results/transfer_vs_kernel.png
(the committed ones come from notebooks/results/bench-<card>.json, helpers.bench.fused.RESULTS_FILE).
Nothing here measures: every figure is copied from the JSON that helpers.bench wrote, with the device,
driver and date it recorded. A JSON from any machine works: a row the machine could not measure (no PyTorch
or JAX there, no persistently mapped buffers, a grid barrier that gave up) is left out, and the page says which.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from decimal import Decimal
from pathlib import Path

from . import findings, timing
from .bench import fused as bench_fused
from .bench import limits as bench_limits
from .bench import matmul as bench_matmul
from .bench import products as bench_products

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "notebooks" / "results"
FIGURE = RESULTS / "transfer_vs_kernel.png"
FULL_TABLE = RESULTS / "RESULTS.md"
DROPOUT = RESULTS / "dropout-final.json"
HEADLINE_ROWS = 12


def against(ours, theirs) -> str:
    """'1.4× faster' / '2.9× slower': our time against theirs (seconds, or timing.Timing with its band), with
    three figures while the two are close. Given two Timings that timing.compare calls the same, it reads
    as timing.the_same: 'the same within the noise we measured (1.02×)' where their bands overlap (the ratio
    of the medians added), '1.03× apart, within the 5 % we call the same' where they do not."""
    both = isinstance(ours, timing.Timing) and isinstance(theirs, timing.Timing)
    same = both and timing.compare(ours, theirs) == timing.SAME
    if same and not timing.overlap(ours, theirs):
        return timing.the_same(ours, theirs)
    ours, theirs = (t.median if isinstance(t, timing.Timing) else t for t in (ours, theirs))
    if ours <= 0 or theirs <= 0:
        raise ValueError(f"times must be positive, got {ours} and {theirs}")
    ours, theirs = (timing.seconds_exactly(*t.split()) for t in printed_pair(ours, theirs))   # as the headline prints them
    figures = ratio_text(max(ours, theirs) / min(ours, theirs))
    if same:
        return f"{timing.SAME_WITHIN_NOISE} ({figures}×)"
    return "as fast" if figures in ("1", "1.00") else f"{figures}× {'faster' if ours < theirs else 'slower'}"


def _ms(seconds: float, digits: int = 3) -> str:
    return (f"{significant(seconds * 1e3, digits)} ms" if seconds >= 1e-4 else f"{significant(seconds * 1e6, digits)} µs")


def significant(value: float, digits: int = 3) -> str:
    """`digits` significant digits, trailing zeros kept and no exponent, as every timing prints: '11.0',
    '389', '1230' at three, '2.380' at four (timing's rule, so a page and a notebook print one figure alike)."""
    return timing._g(value, digits)


def ratio_text(value: Decimal) -> str:
    """A factor between two times as README and TAKEAWAYS print it: two significant digits, three below 1.1
    (1.03×), rounded half up (timing.times)."""
    return timing.times(value, digits=3) if value < Decimal("1.1") else timing.times(value, digits=2)


def printed_pair(a: float, b: float, show=_ms) -> tuple[str, str]:
    """Two times in seconds as show(seconds, digits) prints them (_ms here, takeaways.duration there): three
    significant digits, more where the factor of the printed figures would print (ratio_text) otherwise than
    the factor of the unrounded ones. 22.512 and 10.964 ms give 2.053, 2.1×, but print as 22.5 and 11 ms,
    whose 2.045 is 2.0×: they print as 22.51 and 10.96 ms (2.054, 2.1×). Both pages print a pair so, and
    take its factor from these figures, so a reader dividing them gets the factor printed beside them, and
    the same pair has the same factor on both."""
    exact = Decimal(repr(float(a))) / Decimal(repr(float(b)))
    wanted = ratio_text(max(exact, 1 / exact))
    for digits in range(3, 9):
        shown = show(a, digits), show(b, digits)
        factor = timing.seconds_exactly(*shown[0].split()) / timing.seconds_exactly(*shown[1].split())
        if ratio_text(max(factor, 1 / factor)) == wanted:
            break
    return shown


def with_band(t: timing.Timing, figure: str) -> str:
    """A median printed as `figure` ('10.4 ms', from printed_pair) with t's 20–80 % band at the same decimals:
    '10.4 ms (10.3–10.4)'. Where the band's ends would print the same at those decimals, the band gets the
    decimals that part them and the median stays at printed_pair's, whose factor the row prints beside it:
    '20.1 ms (20.08–20.14)'. The figure alone for a timing stored without a band or with one of no width."""
    if t.low == t.high:
        return figure
    number, unit = figure.split(" ")
    per = float(timing.seconds_exactly("1", unit) ** -1)
    places = len(number.split(".")[1]) if "." in number else 0
    for more in range(12):
        low, high = (f"{v * per:.{places + more}f}" for v in (t.low, t.high))
        if low != high:
            break
    return f"{figure} ({low}–{high})"


def _flops(gflops: float) -> str:
    """'45.134 TFLOP/s': the GFLOP/s that notebook 04's table prints (whole GFLOP/s from 100 up, three
    significant digits below), in TFLOP/s from 100 GFLOP/s up. A share of cuBLAS printed beside two of them
    (bench.matmul.percent_of) is then the quotient a reader gets by dividing them."""
    figure = bench_matmul._fmt(gflops)
    return f"{Decimal(figure) / 1000:.3f} TFLOP/s" if gflops >= 100 else f"{figure} GFLOP/s"


def _share(rung: dict, blas: dict) -> str:
    """A rung's share of cuBLAS's speed in percent, to one decimal, of the figures _flops prints."""
    return f"{bench_matmul.percent_of(rung['gflops'], blas['gflops'])}"


TEST_IMAGES, TRAIN_IMAGES, BATCH = 10_000, 60_000, 128   # a full run's sizes (QUICK runs measure fewer)


def test_images(rows: list[dict]) -> str:
    """'10,000 test images', or the number the rows measured ('256 test images' in a QUICK run)."""
    counts = {r.get("images", TEST_IMAGES) for r in rows} or {TEST_IMAGES}
    return " or ".join(f"{n:,} test images" for n in sorted(counts))


def epoch_label(r: dict, label: str) -> str:
    """`label` for a row that trained on all of MNIST's 60,000 training images; for a row of fewer (a QUICK
    run), the label with the images (or steps) it measured in place of 'one MNIST epoch'."""
    images, steps = r.get("images"), r.get("steps")
    full = images == TRAIN_IMAGES if images is not None else steps in (None, -(-TRAIN_IMAGES // BATCH))
    if full:
        return label
    part = f"{images:,} images" if images is not None else f"{steps} steps"
    return label.replace("one MNIST epoch", f"an epoch of {part} (not all 60,000)")


def _timed(r: dict, key: str, scale: float) -> str:
    """A row's median with its 20–80 % band, '0.120 ms (0.118–0.121)', in the unit _ms picks, the band's ends
    at band_figures' digits so it never reads '20.1 ms (20.1–20.1)'; a row stored without a band prints its
    median alone, as does a band of no width (one repeat) (scale: seconds per unit of the row's key)."""
    seconds, low, high = (r.get(k) for k in (key, f"{key}_low", f"{key}_high"))
    if low is None or high is None or low == high:
        return _ms(seconds * scale)
    unit, per = ("ms", 1e3) if seconds * scale >= 1e-4 else ("µs", 1e6)
    median, low, high = timing.band_figures(seconds * scale * per, low * scale * per, high * scale * per)
    return f"{median} {unit} ({low}–{high})"


def _flops_band(r: dict) -> str:
    """' (44.9–45.2)': a matmul row's rate at the 80th and 20th percentiles of its time, in TFLOP/s to whole
    GFLOP/s as _flops prints the median (more digits where the two ends would print the same), in GFLOP/s
    below 100 GFLOP/s as _flops prints those, or '' for a row stored without a band or with one of no width."""
    if r.get("seconds_low") is None or r.get("seconds_high") is None or r["seconds_low"] == r["seconds_high"]:
        return ""
    if r["gflops"] < 100:                       # _flops prints GFLOP/s there: the band in its figures
        _, slow, fast = timing.band_figures(r["gflops"], *(r["gflops"] * r["seconds"] / r[k]
                                                          for k in ("seconds_high", "seconds_low")))
        return f" ({slow}–{fast})"
    slow, fast = (r["gflops"] * r["seconds"] / r[k] / 1000 for k in ("seconds_high", "seconds_low"))
    places = next(p for p in range(3, 12) if f"{slow:.{p}f}" != f"{fast:.{p}f}" or p == 11)
    return f" ({slow:.{places}f}–{fast:.{places}f})"


def _card(record: dict) -> str:
    return record["device"]["renderer"].split("/")[0]


# --- what a machine could not measure ---------------------------------------------------------------------------

def _has_time(r: dict) -> bool:
    """A row that was measured: no error, and none of its time fields None."""
    return "error" not in r and not any(key in r and r[key] is None for key in ("seconds", "ms", "epoch_s"))


def unmeasured(record: dict) -> list[str]:
    """Each row of the record that holds no time (torch missing, a feature this driver lacks, an error),
    as 'name (why)'."""
    out = []
    for bench, rows in record["benches"].items():
        for r in rows if isinstance(rows, list) else []:
            if _has_time(r):
                continue
            name = r.get("what") or r.get("name") or r.get("impl") or "?"
            if bench == "matmul" or bench == "products":
                name = f"{r.get('impl')} {r.get('size', '×'.join(map(str, r.get('shape', []))))}"
            out.append(f"{bench}: {name} ({r['error'] if 'error' in r else r.get('clock', 'not measured')})")
    return out


def measured(record: dict) -> dict:
    """The record with only the rows that hold a time."""
    benches = {bench: [r for r in rows if _has_time(r)] if isinstance(rows, list) else rows
               for bench, rows in record["benches"].items()}
    return {**record, "benches": benches}


def left_out_note(record: dict) -> str:
    missing = unmeasured(record)
    if not missing:
        return ""
    rows = "1 row" if len(missing) == 1 else f"{len(missing)} rows"
    return f"Left out, as this run could not measure them ({rows}): " + "; ".join(missing) + "."


# --- the full table (RESULTS.md) --------------------------------------------------------------------------------

fastest_rung = bench_matmul.fastest_rung   # the GLSL rung of lowest median at a size (RESULTS, README, TAKEAWAYS)


def cublas_row(rows: list[dict], size: int) -> dict | None:
    return next((r for r in rows if r["size"] == size and "cuBLAS" in r["impl"]), None)


def matmul_rows(rows: list[dict]) -> list[str]:
    """The matmul rows of the full table: every implementation at the largest size, the fastest rung at each
    other size from 1024³, each beside cuBLAS as the quotient of the printed speeds (_share)."""
    if not rows:
        return []
    largest = max(r["size"] for r in rows)
    at = {r["impl"]: r for r in rows if r["size"] == largest}
    cublas = cublas_row(rows, largest)
    out = []
    for name, r in at.items():
        share = f" ({_share(r, cublas)}% of cuBLAS)" if cublas and r is not cublas else ""
        out.append(f"| matmul {largest}³, {name} | {_flops(r['gflops'])}{_flops_band(r)}{share} | {r['clock']} |")
    for size in sorted({r["size"] for r in rows if r["size"] >= 1024 and r["size"] != largest}, reverse=True):
        best, blas = fastest_rung(rows, size), cublas_row(rows, size)
        if best is None:
            continue
        beside = (f" ({_share(best, blas)}% of cuBLAS's {_flops(blas['gflops']).removesuffix(' TFLOP/s')})"
                  if blas else "")
        out.append(f"| matmul {size}³, rung of lowest median: {best['impl']} | {_flops(best['gflops'])}{_flops_band(best)}{beside} "
                   f"| {best['clock']} |")
    return out


def inference_rows(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r["what"].startswith(("pack_images", "pack_u8")):  # a view of the same bytes: no work worth a row
            continue
        value = (_timed(r, "seconds", 1.0)
                 + (f", {r['gbps']:.1f} GB/s at the median" if r.get("gbps") and "upload" in r["what"] else ""))
        out.append(f"| {test_images([r])}: {shown(r['what'])} | {value} | {r['clock']} |")
    return out


def _epoch_seconds(r: dict) -> float | None:
    if r.get("epoch_s") is not None:
        return r["epoch_s"]
    return r["ms"] / 1e3 if r.get("ms") is not None else None


def shown(name: str) -> str:
    """A row's name as the tables show it: without the "(notebook NN)" older runs wrote into some names, since
    the course has been renumbered since (the notebooks name their own rows)."""
    return re.sub(r" \(notebook \d+\)", "", name)


def epoch_rows(rows: list[dict], label: str) -> list[str]:
    out = []
    for r in rows:
        seconds = _epoch_seconds(r)
        if seconds is None:
            continue
        extra = ""
        per_step = r.get("dispatches_per_step")
        if per_step is not None:  # a persistent kernel: one dispatch for many steps
            extra = (f", {per_step} dispatch{'es' if per_step > 1 else ''} a step" if per_step >= 1 else
                     f", 1 dispatch per {round(1 / per_step)} steps")
        figure = _timed(r, "ms", 1e-3) if r.get("ms") is not None else _ms(seconds)
        out.append(f"| {epoch_label(r, label)}: {shown(r['name'])} | {figure}{extra} | {r.get('clock', '')} |")
    return out


def products_rows(rows: list[dict]) -> list[str]:
    """The training step's two products, each by its fastest rung, beside cuBLAS where the run had it."""
    out = []
    for hidden in sorted({r["hidden"] for r in rows}):
        for product in bench_products.shapes(hidden):
            best, blas = (bench_products.fastest(rows, hidden, product, cublas) for cublas in (False, True))
            if best is None:
                continue
            beside = f" (cuBLAS in a CUDA graph {_timed(blas, 'seconds', 1.0)})" if blas else ""
            out.append(f"| a 784-{hidden}-10 step's {product} ({'×'.join(map(str, best['shape']))}), rung of lowest median: "
                       f"{best['impl']} | {_timed(best, 'seconds', 1.0)}{beside} | {best['clock']} |")
    return out


def _provenance(record: dict, link_prefix: str) -> str:
    device = record["device"]
    kernels = ("kernels by wall clock around ctx.finish() (a software renderer: no GPU timer queries)"
               if device.get("software") else "kernels by GPU timer queries")
    source = f" ([JSON]({link_prefix}{record['_file']}))" if record.get("_file") else ""
    quick = " in QUICK mode (small sizes: not comparable with a full run)" if record.get("quick") else ""
    return (f"Measured by `python -m helpers.bench all`{quick} on **{device['renderer']}**, OpenGL "
            f"{device['gl_version']}, {device['date']}{source}; the GPU figures are medians, {kernels}, "
            f"everything else by wall clock.")


def table(record: dict) -> str:
    """Every row the run measured, as Markdown: the body of RESULTS.md."""
    full = measured(record)
    lines = [_provenance(record, ""), "", "| what | result | clock |", "| --- | --- | --- |"]
    benches = full["benches"]
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
    note = left_out_note(record)
    if note:
        lines += ["", note]
    lines += ["", "## How far from the limits", "", bench_limits.table(full)]
    return "\n".join(lines)


def results_page(record: dict) -> str:
    return ("# Results\n\n<!-- Generated by `python -m helpers.report --write-committed notebooks/results/"
            f"{record.get('_file', 'BENCH.json')}`: edit helpers/report.py, not this file. -->\n\n"
            "Every row of one benchmark run, each time its median with, in brackets, the 20th to 80th percentile "
            "of its repeats where the row stores them. The [README](../../README.md) shows the headline rows; "
            "the notebooks explain each measurement where it is made.\n\n" + table(record) + "\n")


# --- the headline rows (README) --------------------------------------------------------------------------------

def _row(rows: list[dict], key: str, prefix: str) -> dict | None:
    return next((r for r in rows if str(r.get(key, "")).startswith(prefix)), None)


def headline_rows(record: dict, dropout: dict | None = None) -> list[tuple[str, str, str, str]]:
    """(what, ours, against, ours against it) for at most HEADLINE_ROWS rows that tell the story: NumPy
    against the GPU, transfers against kernels, the matmul ladder against cuBLAS, the fused trainer against
    JAX and PyTorch of the same run, and the accuracies. A row whose figures the run lacks is left out."""
    benches = measured(record)["benches"]
    inference, train = benches.get("inference", []), benches.get("train", [])
    fused, mm = benches.get("fused", []), benches.get("matmul", [])
    out = []

    def vs(what, ours_name, ours, their_name, theirs):
        """A row of two times (timing.Timing, their band from the record), or nothing where one is missing."""
        if ours is not None and theirs is not None:
            ours_text, theirs_text = printed_pair(ours.median, theirs.median)     # the figures against() divides
            out.append((what, f"{ours_name}: {with_band(ours, ours_text)}", f"{their_name}: {with_band(theirs, theirs_text)}",
                        against(ours, theirs)))

    def band(row, key="ms", scale=1e3):
        """The row's time as a Timing with its stored band, or None where the record lacks the row."""
        return timing.Timing.from_row(row, key, scale) if row and row.get(key) is not None else None

    get = lambda prefix: (_row(inference, "what", prefix) or {}).get("seconds")   # noqa: E731
    vs(f"{test_images(inference)} through 784-128-10", "GPU, end to end (uint8 upload, kernels, readback)",
       band(_row(inference, "what", "end to end, uint8"), "seconds", 1), "NumPy on the CPU",
       band(_row(inference, "what", "NumPy forward"), "seconds", 1))
    glsl, numpy_epoch = _row(train, "name", "GLSL"), _row(train, "name", "NumPy")
    images = f"{glsl.get('images', TRAIN_IMAGES):,}" if glsl else "60,000"
    vs(f"one training epoch of 784-128-10 ({images} images)", f"GLSL, {glsl.get('dispatches_per_step', '?') if glsl else '?'} dispatches a step",
       band(glsl), "NumPy on the CPU", band(numpy_epoch))
    upload, kernels = get("upload float32 into existing"), get("kernels, float32")
    readback = get("readback into a preallocated")
    if upload is not None and kernels is not None:
        up_text, kern_text = printed_pair(upload, kernels)
        up, kern = (timing.seconds_exactly(*t.split()) for t in (up_text, kern_text))   # as the row prints them
        share = (f"the upload takes {ratio_text(up / kern)}× the kernels" if up >= kern else
                 f"the kernels take {ratio_text(kern / up)}× the upload")
        out.append((f"{test_images(inference)}: moving them against computing on them", f"upload: {up_text}"
                    + (f", readback: {_ms(readback)}" if readback is not None else ""),
                    f"the two kernels: {kern_text}", share))
    if mm:
        largest = max(r["size"] for r in mm)
        naive = next((r for r in mm if r["size"] == largest and r["impl"].startswith("matmul_1")), None)
        best = fastest_rung(mm, largest)
        if naive and best and best is not naive:
            slow, fast = printed_pair(naive["seconds"], best["seconds"])   # the times TAKEAWAYS prints for this pair
            speedup = timing.seconds_exactly(*slow.split()) / timing.seconds_exactly(*fast.split())   # as printed
            out.append((f"matmul {largest}³: the ladder's first rung to its top", f"{best['impl']}: "
                        f"{_flops(best['gflops'])}, {fast}", f"{naive['impl']}: {_flops(naive['gflops'])}, {slow}",
                        f"{ratio_text(speedup)}× the speed"))
        shares = [(size, fastest_rung(mm, size), cublas_row(mm, size)) for size in sorted({r["size"] for r in mm})
                  if size >= 1024]
        shares = [(size, b, c) for size, b, c in shares if b and c]
        if shares:
            size, b, c = shares[-1]
            out.append(("matmul: the ladder's top against cuBLAS fp32", f"{b['impl']} at {size}³: "
                        f"{_flops(b['gflops'])}", f"cuBLAS at {size}³: {_flops(c['gflops'])}",
                        "its speed: " + ", ".join(f"{_share(b2, c2)}% at {s}³"
                                                 for s, b2, c2 in shares)))
    for hidden, rivals in ((128, (("JAX jit(lax.scan) 784-128-10 SGD, fp32", "JAX, fp32"),
                                  ("JAX jit(lax.scan) 784-128-10 SGD, precision default", "JAX, default precision (TF32)"),
                                  ("PyTorch CUDA graph whole epoch", "PyTorch, the epoch in one CUDA graph"),
                                  ("PyTorch eager 784-128", "PyTorch eager"))),
                           (800, (("JAX jit(lax.scan) 784-800-10 Momentum, fp32", "JAX, fp32"),
                                  ("JAX jit(lax.scan) 784-800-10 Momentum, precision default",
                                   "JAX, default precision (TF32)")))):
        best = bench_fused.fastest_glsl(fused, hidden) if fused else None
        if best is None:
            continue
        for prefix, label in rivals:
            them = _row(fused, "name", prefix)
            if them is not None:
                what = epoch_label(best, f"one MNIST epoch of 784-{hidden}-10, same run").replace(
                    "one MNIST epoch", "one training epoch")
                vs(what, f"ours ({best['name']})", band(best), label, band(them))
    if glsl and glsl.get("test_acc") is not None:
        out.append(accuracy_row(glsl))
    if dropout and dropout.get("test_accuracy_percent"):
        acc, recipe = dropout["test_accuracy_percent"], dropout.get("recipe", {})
        out.append((f"test accuracy, 784-{recipe.get('hidden', '?')}-10, dropout and max-norm",
                    f"{acc['mean']:.2f} ± {acc['std']:.2f} % over {len(dropout.get('runs', []))} seeds",
                    "", f"{dropout.get('seconds', 0):.0f} s of training each, on {_card(dropout)} "
                        f"([JSON](notebooks/results/{DROPOUT.name}))"))
    return out[:HEADLINE_ROWS]


def close_pairs_note(record: dict) -> str:
    """A sentence under the headline rows naming the epoch pairs against JAX that the series' margin for
    epochs (bench.limits.EPOCHS, 25 %: an epoch moves that much between runs) would call the same: each row
    is judged in its one run, pairs taken in turn, by the 5 % margin of one run, so another run of the
    benchmark could order those differently (notebook 08 says the same of its verdicts). "" where none is that
    close, or the record has no such rows."""
    fused = record.get("benches", {}).get("fused") or []
    pairs = {}
    for hidden in (128, 800):
        best = bench_fused.fastest_glsl(fused, hidden)
        for precision, label in (("highest", "JAX fp32"), ("default", "JAX at its default precision")):
            them = bench_fused.jax_by_precision(fused, hidden).get(precision) if best else None
            if them:
                pairs[f"784-{hidden}-10 against {label}"] = bench_fused.row_timing(best), bench_fused.row_timing(them)
    close = bench_limits.close_pairs(pairs)
    if not close:
        return ""
    named = findings.listed(close)
    return (f"Each row above is judged within its one run, the two epochs taken in turn, by the "
            f"{100 * timing.MARGIN:g} % margin of one run; an epoch moves more between runs, and by the "
            f"{100 * bench_limits.EPOCHS:g} % margin the series uses for that, {named} would be the same, so another "
            f"run of the benchmark could judge {'it' if len(close) == 1 else 'them'} differently.")


def headline(record: dict, dropout: dict | None = None) -> str:
    """The README's results section: the headline rows, the card, where the full table is."""
    lines = ["## Results", "",
             f"Headline rows of one run on **{_card(record)}** ({record['device']['date']}, "
             f"[JSON](notebooks/results/{record.get('_file', '')})); every row of that run, and how far the rows of lowest median "
             f"are from their limits, are in [notebooks/results/RESULTS.md](notebooks/results/RESULTS.md), "
             "each time there with its spread (20th–80th percentile). The times below are medians, each with its 20–80 % "
             "band in parentheses where the row compares two times.", "",
             "| what | ours | against | |", "| --- | --- | --- | --- |"]
    lines += [f"| {what} | {ours} | {against} | {verdict} |" for what, ours, against, verdict in
              headline_rows(record, dropout)]
    from .takeaways import company_note   # takeaways imports this module
    twice = company_note(record, "the row against NumPy's epoch above", "RESULTS.md's fused rows")
    if twice:
        lines += ["", twice]
    close = close_pairs_note(record)
    if close:
        lines += ["", close]
    if unmeasured(record):
        lines += ["", "The rows this run could not measure (no PyTorch or JAX installed, say) are listed in "
                      "RESULTS.md; a headline row that needs one is left out."]
    return "\n".join(lines)


# --- the figure --------------------------------------------------------------------------------------------------

def figure(record: dict, path: Path = FIGURE) -> Path | None:
    """Stacked bars: where the time of one 10,000-image inference goes (upload, kernels, readback), beside
    NumPy; None if the run lacks one of those rows."""
    import matplotlib

    matplotlib.use("Agg")
    from . import plots

    rows = {r["what"]: r["seconds"] for r in measured(record)["benches"].get("inference", [])}
    pick = lambda prefix: next((v for k, v in rows.items() if k.startswith(prefix)), None)  # noqa: E731
    bars = {
        "float32 images": {"upload": pick("upload float32 into existing"), "kernel": pick("kernels, float32"),
                           "readback": pick("readback into a preallocated")},
        "uint8 images, packed": {"upload": pick("upload uint8"), "kernel": pick("kernels, uint8"),
                                 "readback": pick("readback into a preallocated")},
        "NumPy on the CPU": {"numpy": pick("NumPy forward")},
    }
    if any(v is None for bar in bars.values() for v in bar.values()):
        return None
    fig = plots.stacked_bars(bars, scale=1e3, unit="ms", small=0.05,
                             title=f"10,000 test images through 784-128-10 on {_card(record)}:\n"
                                   "moving them (upload, readback) against computing on them (kernel)")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


# --- writing the files -------------------------------------------------------------------------------------------

def replace_block(text: str, name: str, content: str) -> str:
    """Put `content` between <!-- NAME --> and <!-- /NAME --> in `text`."""
    pattern = re.compile(rf"<!-- {name} -->.*?<!-- /{name} -->", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"README.md has no <!-- {name} --> ... <!-- /{name} --> markers: put them back "
                         "around the results section")
    return pattern.sub(lambda m: f"<!-- {name} -->\n{content}\n<!-- /{name} -->", text, count=1)


def load(json_path: str | Path) -> dict:
    path = Path(json_path)
    if not path.exists():
        sys.exit(f"{path}: no such file. Make one with: .venv/bin/python -m helpers.bench all --out {path}")
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        sys.exit(f"{path} is not JSON ({exc}): give the file `python -m helpers.bench all --out` wrote")
    if not isinstance(record, dict) or not {"device", "benches"} <= set(record):
        sys.exit(f"{path} is not a benchmark record (no 'device' and 'benches'): give the file "
                 "`python -m helpers.bench all --out` wrote")
    record["_file"] = path.name
    return record


def dropout_record(record: dict) -> dict | None:
    """The committed dropout run, when it was made on the same card as `record`."""
    if not DROPOUT.exists():
        return None
    dropout = json.loads(DROPOUT.read_text())
    return dropout if dropout.get("device", {}).get("renderer") == record["device"]["renderer"] else None


def write_committed(json_path, readme: Path = ROOT / "README.md", results: Path = FULL_TABLE,
                    image: Path = FIGURE) -> int:
    """Rewrite the course's tracked files from `json_path`: RESULTS.md, README.md's headline rows and the
    figure (what `--write-committed` does; the maintainers run it on the committed benchmark)."""
    record = load(json_path)
    results.write_text(results_page(record))
    text = replace_block(readme.read_text(), "RESULTS-TABLE", headline(record, dropout_record(record)))
    if figure(record, image) is not None:
        text = replace_block(text, "RESULTS-PLOT", f"![transfer against kernel time]({image.relative_to(readme.parent)})")
    readme.write_text(text)
    print(f"wrote {results}, {image} and the headline rows of {readme}")
    note = left_out_note(record)
    if note:
        print(note)
    return 0


def write_beside(json_path) -> int:
    """The default: the run's full table as <json stem>.md and its figure as <json stem>.png, next to the
    JSON; no tracked file is touched."""
    path = Path(json_path)
    page, image = path.with_suffix(".md"), path.with_suffix(".png")
    for out in (page, image):
        if _tracked(out):
            sys.exit(f"{out} is a file the course tracks: this command writes only files of your own. Give a "
                     "JSON of your own (python -m helpers.bench all --out notebooks/results/bench-mine.json)")
    record = load(path)
    page.write_text(results_page(record))
    drawn = figure(record, image)
    print(f"wrote {page}" + (f" and {image}" if drawn else "") + " (README.md, RESULTS.md and the course's "
          "figure are left as they are: --write-committed rewrites those)")
    note = left_out_note(record)
    if note:
        print(note)
    return 0


def _tracked(path: Path) -> bool:
    """Whether git tracks `path` (False outside a git checkout, or without git)."""
    import subprocess

    try:
        return subprocess.run(["git", "ls-files", "--error-unmatch", str(path.resolve())], cwd=ROOT,
                              capture_output=True).returncode == 0
    except (OSError, ValueError):
        return False


def accuracy_row(glsl: dict) -> tuple:
    """README's row for the GLSL trainer's test accuracy in the training benchmark. The trainer trains in its
    warm-up too (a GLSL epoch and a NumPy epoch in turn until a second has passed), so the epochs it trained are
    its 'epochs_trained' where the record has them; a record without them says how many were timed, no total."""
    timed = len(glsl.get("epochs_s", []))
    if glsl.get("epochs_trained"):
        after = f"after {glsl['epochs_trained']} epochs"
        warm = glsl["epochs_trained"] - timed
        where = (f"in the benchmark's run of {glsl['epochs_trained']} epochs ({warm} in its warm-up, {timed} timed)"
                 if warm > 0 else f"in the benchmark's run of {timed} timed epochs")
    else:
        after = "after the benchmark's epochs"
        where = (f"after the epochs of its warm-up (GLSL and NumPy epochs in turn for a second) and {timed} "
                 "timed ones")
    return ("test accuracy, 784-128-10, SGD", f"{100 * glsl['test_acc']:.2f} % {after}", "",
            f"the GLSL trainer of the epoch against NumPy above, {where}; notebook 05 trains it for 10")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="a JSON file written by: python -m helpers.bench all --out FILE")
    parser.add_argument("--write-committed", action="store_true",
                        help="rewrite README.md's results, notebooks/results/RESULTS.md and its figure (maintainers)")
    args = parser.parse_args(argv)
    return write_committed(args.json) if args.write_committed else write_beside(args.json)


if __name__ == "__main__":
    sys.exit(main())

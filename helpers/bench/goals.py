"""Issue #12's goals judged on one benchmark JSON: each goal, what the run measured, met or not, and for a
goal it missed the measured reason, computed from the same JSON. Nothing here measures.

    python -m helpers.bench.goals notebooks/results/bench-h100.json

Introduced in notebook 07 (its last section); the README's results end with the same table. The goals are
for the H100, in one run: the matmul rungs against cuBLAS, the float32 upload against a pinned-memory copy,
and the fastest GLSL epoch of each net against its own limit and against JAX's two precisions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import fused, inference, matmul, products

def _goal(goal: str, measured: str, met: bool, reason: str, shown: str) -> dict:
    return {"goal": goal, "measured": measured, "met": bool(met), "reason": "" if met else reason, "shown": shown}


def matmul_goals(rows: list[dict]) -> list[dict]:
    """One goal a size: the fastest rung's share of cuBLAS; where short, what its global loads cost."""
    out = []
    for g in matmul.goal_rows(rows):
        reason = "no matmul_6_subgroup row without its global loads in this run"
        if g["won_back"] is not None:
            reason = (f"the global loads that double buffering does not hide: matmul_6_subgroup reaches "
                      f"{g['matmul_6']:.0%} with them and {g['without_loads']:.0%} without (LOADS 0); "
                      f"{g['best']} wins back {g['won_back']:.0%} of that difference")
        out.append(_goal(f"matmul {g['size']}³ >= {g['goal']:.0%} of cuBLAS fp32", f"{g['best']} {g['share']:.0%}",
                         g["met"], reason, "notebook 03, the matmul goals"))
    return out


def upload_goal(rows: list[dict]) -> list[dict]:
    """The fastest float32 upload from a NumPy array as a share of the pinned-copy ceiling of the same run."""
    get = {r["what"]: r for r in rows if r.get("seconds")}
    ceiling, best = get.get(inference.CEILING), inference.fastest_upload(rows)
    if ceiling is None or best is None:
        return []
    share = best["gbps"] / ceiling["gbps"]
    # by its start: the row's name holds the thread count of the machine that ran it
    alone = next((r for what, r in get.items() if what.startswith("CPU copy alone")), None)
    kept = get.get(inference.KEPT)
    reason = "no row of the CPU copy alone in this run"
    if alone:
        reason = (f"the CPU copy alone, NumPy into the mapped buffer with no GPU work, reaches "
                  f"{alone['gbps'] / ceiling['gbps']:.0%} of the ceiling, and the pipelined upload overlaps the GPU's "
                  "copies with that CPU copy, so it cannot beat it")
        if kept:
            reason += f"; images already in mapped memory (as the ceiling's are in pinned memory) go at " \
                      f"{kept['gbps'] / ceiling['gbps']:.0%}"
    return [_goal(f"float32 upload of {best['images']:,} images >= {inference.CEILING_SHARE_TARGET:.0%} of a "
                  f"pinned-memory copy", f"{best['gbps']:.1f} GB/s, {share:.0%} ({best['what'].removeprefix('upload float32 ')})",
                  share >= inference.CEILING_SHARE_TARGET, reason, "notebook 03, the uploads")]


def epoch_goals(rows: list[dict], product_rows: list[dict], hidden: int, limit_ms: float, factor: float) -> list[dict]:
    """Three goals for 784-hidden-10: the fastest GLSL epoch <= limit_ms, >= factor × JAX fp32's speed, and
    faster than JAX's default precision (TF32). A missed goal's reason comes from the step's two products
    (cuBLAS in a CUDA graph, and the matmul ladder's fastest rungs) and the fused step's own kernels."""
    best = fused.fastest_glsl(rows, hidden)
    if best is None:
        return []
    net, jax, steps = f"784-{hidden}-10", fused.jax_by_precision(rows, hidden), best["steps"]
    epoch = lambda seconds: 1e3 * seconds * steps                        # noqa: E731  a step's seconds, as ms an epoch
    blas, ladder = (products.step_seconds(product_rows, hidden, cublas=c) for c in (True, False))
    kernels = next((r["profile"]["kernel_total"] for r in rows
                    if "profile" in r and r["name"].startswith("fused") and net in r["name"]), None)
    evidence = []          # (what, ms an epoch): the arithmetic alone, our fastest way, then cuBLAS's
    if kernels is not None or ladder is not None:
        mine = min(s for s in (kernels, ladder) if s is not None)
        evidence.append(("the fused step's two kernels alone" if mine == kernels else
                         "the two products alone, by the matmul ladder's fastest rungs", epoch(mine)))
    if blas is not None:
        evidence.append(("the two products alone, by cuBLAS in a CUDA graph", epoch(blas)))

    def over(target_ms):
        """What an epoch's arithmetic alone costs, each against target_ms: the reason a goal was missed."""
        costs = "; ".join(f"{what}: {ms:.2f} ms ({ms / target_ms:.0%} of that)" for what, ms in evidence)
        return f"an epoch must take <= {target_ms:.2f} ms; " + (costs or "no product or kernel rows in this run")

    ours = f"{best['name']} {best['ms']:.2f} ms"
    out = [_goal(f"{net} epoch <= {limit_ms:g} ms", ours, best["ms"] <= limit_ms, over(limit_ms),
                 "notebook 07, section 12")]
    if "highest" in jax:
        fp32 = jax["highest"]["ms"]
        out.append(_goal(f"{net}: >= {factor:g}× JAX fp32's speed", f"{fp32 / best['ms']:.2f}× (JAX fp32 {fp32:.2f} ms)",
                         fp32 / best["ms"] >= factor, over(fp32 / factor), "notebook 07, sections 7 and 12"))
        if "default" in jax:
            tf32 = jax["default"]["ms"]
            out.append(_goal(f"{net}: faster than JAX's default precision (TF32), still fp32",
                             f"{tf32 / best['ms']:.2f}× (JAX TF32 {tf32:.2f} ms)", best["ms"] < tf32,
                             f"TF32 made JAX {fp32 / tf32:.2f}× faster than its own fp32, more than ours beats that "
                             f"fp32 by ({fp32 / best['ms']:.2f}×): JAX's default precision runs its products on TF32 "
                             "tensor cores, which OpenGL does not reach (the H100's GL driver has no cooperative "
                             "matrices: issue #12)", "notebook 07, section 7"))
    return out


def scorecard(record: dict) -> list[dict]:
    """Every goal of issue #12 that the record's benchmarks judge, in the issue's order: epochs, matmul, upload."""
    benches = record["benches"]
    out = []
    if "fused" in benches:
        for hidden, (limit, factor) in zip((fused.HIDDEN, fused.wide_hidden(record.get("quick"))), fused.EPOCH_GOALS):
            out += epoch_goals(benches["fused"], benches.get("products", []), hidden, limit, factor)
    if "matmul" in benches:
        out += matmul_goals(benches["matmul"])
    if "inference" in benches:
        out += upload_goal(benches["inference"])
    return out


def table(record: dict) -> str:
    """The scorecard as a Markdown table, with the run it judges."""
    device = record["device"]
    lines = [f"Judged on the run of {device['date']} ({device['describe']}"
             + (", QUICK sizes: not the goals' sizes" if record.get("quick") else "") + "):", "",
             "| goal | measured | met | where missed, the measured reason | shown in |", "| --- | --- | --- | --- | --- |"]
    for g in scorecard(record):
        lines.append(f"| {g['goal']} | {g['measured']} | {'met' if g['met'] else '**not met**'} | "
                     f"{g['reason'] or '—'} | {g['shown']} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m helpers.bench.goals BENCH.json   (from python -m helpers.bench all --out BENCH.json)",
              file=sys.stderr)
        return 2
    print(table(json.loads(Path(argv[0]).read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""How far from the limits: the series' fastest trainers and kernels beside figures they cannot easily go
under, each limit with its source in the same benchmark run; and the sentences notebook 08 prints about
where a fused step's time goes. Nothing here measures.

    python -m helpers.bench.limits notebooks/results/bench-h100.json

Introduced in notebook 08; the README's results end with the same table. The limits, all from one run:

  * the empty-dispatch floor: the fused trainer's epoch of dispatches and barriers with nothing in them;
  * cuBLAS: the step's two big products alone (X·W1 and Xᵀ·dZ1), NVIDIA's library in a CUDA graph, × steps;
  * JAX: the same epoch as one jit of lax.scan, in fp32 and at its default precision (TF32 tensor cores);
  * a matmul at n³: cuBLAS fp32; an upload of float32 images: a copy from pinned memory.

Every function that turns numbers into words is tested on both sides of its threshold
(tests/test_verdicts_nb0809.py), so a printed sentence cannot contradict the numbers beside it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import fused, inference, matmul, products


def faster_or_slower(a: float, b: float) -> str:
    """'1.44× faster' or '1.03× slower': a against b, two durations in the same unit, to two decimals."""
    if a <= 0 or b <= 0:
        raise ValueError(f"durations must be positive, got {a} and {b}")
    return f"{b / a:.2f}× faster" if a <= b else f"{a / b:.2f}× slower"


def _limit(what: str, ours: str, ours_ms: float, limit: str, limit_ms: float, source: str) -> dict:
    return {"what": what, "ours": ours, "ours_ms": ours_ms, "limit": limit, "limit_ms": limit_ms, "source": source,
            "against": f"{ours_ms / limit_ms:.2f}× its time"}


def epoch_limits(rows: list[dict], product_rows: list[dict], hidden: int) -> list[dict]:
    """The fastest GLSL epoch of 784-hidden-10 against the floor (784-128-10 only: the floor row is the fused
    trainer's dispatch pattern), cuBLAS's two products × steps, and JAX fp32 and TF32 of the same run."""
    best = fused.fastest_glsl(rows, hidden)
    if best is None:
        return []
    net, what = f"784-{hidden}-10", f"784-{hidden}-10 epoch"
    ours = f"{best['name']}, {best['ms']:.2f} ms"
    out = []
    floor = next((r for r in rows if r["name"].startswith("floor:") and r.get("dispatches_per_step") == 2
                  and hidden == fused.HIDDEN), None)
    if floor:
        out.append(_limit(what, ours, best["ms"], f"empty-dispatch floor {floor['ms']:.2f} ms", floor["ms"],
                          "2 empty dispatches + barriers a step, same run"))
    blas = products.step_seconds(product_rows, hidden, cublas=True)
    if blas is not None:
        ms = 1e3 * blas * best["steps"]
        out.append(_limit(what, ours, best["ms"], f"cuBLAS's two products alone {ms:.2f} ms", ms,
                          f"cuBLAS fp32 in a CUDA graph, × {best['steps']} steps, same run"))
    for precision, label in (("highest", "JAX fp32"), ("default", "JAX default (TF32)")):
        jax = fused.jax_by_precision(rows, hidden).get(precision)
        if jax:
            out.append(_limit(what, ours, best["ms"], f"{label} {jax['ms']:.2f} ms", jax["ms"],
                              f"jit(lax.scan) over the epoch, {net}, same run"))
    return out


def matmul_limits(rows: list[dict]) -> list[dict]:
    """The fastest rung at each n³ the run has cuBLAS for, against cuBLAS fp32."""
    out = []
    for g in matmul.against_cublas(rows):
        out.append({"what": f"matmul {g['size']}³", "ours": f"{g['best']}", "limit": "cuBLAS fp32",
                    "source": "torch, TF32 off, same run", "against": f"{g['share']:.0%} of its speed"})
    return out


def upload_limits(rows: list[dict]) -> list[dict]:
    """The fastest float32 upload from a NumPy array against a copy from pinned memory of the same run."""
    get = {r["what"]: r for r in rows if r.get("seconds")}
    ceiling, best = get.get(inference.CEILING), inference.fastest_upload(rows)
    if ceiling is None or best is None:
        return []
    return [{"what": f"upload of {best['images']:,} float32 images", "ours": f"{best['what'].removeprefix('upload float32 ')}, "
             f"{best['gbps']:.1f} GB/s", "limit": f"pinned-memory copy {ceiling['gbps']:.1f} GB/s",
             "source": "torch copy from pinned memory, same run", "against": f"{best['gbps'] / ceiling['gbps']:.0%} of its speed"}]


def limit_rows(record: dict) -> list[dict]:
    """Every limit the record's benchmarks measure: the epochs of both nets, the matmul sizes, the upload."""
    benches = record["benches"]
    out = []
    if "fused" in benches:
        for hidden in (fused.HIDDEN, fused.wide_hidden(record.get("quick"))):
            out += epoch_limits(benches["fused"], benches.get("products", []), hidden)
    if "matmul" in benches:
        out += matmul_limits(benches["matmul"])
    if "inference" in benches:
        out += upload_limits(benches["inference"])
    return out


def table(record: dict) -> str:
    """limit_rows as a Markdown table, with the run it comes from."""
    device = record["device"]
    lines = [f"From the run of {device['date']} ({device['describe']}"
             + (", QUICK sizes" if record.get("quick") else "") + "):", "",
             "| what | ours | the limit | its source | ours against it |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['what']} | {r['ours']} | {r['limit']} | {r['source']} | {r['against']} |" for r in limit_rows(record)]
    return "\n".join(lines)


# --- notebook 08's sentences: where a fused step's time goes ------------------------------------------------------

def step_bound(python_issue: float, gpu_step: float) -> str:
    """Which side bounds a step: Python issuing it, or the GPU running it (seconds each)."""
    if python_issue > gpu_step:
        return (f"Python bounds a step here: issuing it takes {python_issue / gpu_step:.2f}× the GPU's time for it, "
                "so the GPU waits for Python.")
    return (f"The GPU bounds a step here, not Python: Python issues a step in {python_issue / gpu_step:.0%} of the "
            "GPU's time for it and then runs ahead.")


def uniform_cost(changing: float, same: float, bare: float, tolerance: float = 0.05) -> str:
    """What the step uniform costs a step in a stream, from three streams (seconds a step): the step number
    changing every step, the same step number every time, and no uniform written at all."""
    numbers = f"(step(s) {1e6 * changing:.1f} µs, step(0) every time {1e6 * same:.1f}, no uniform {1e6 * bare:.1f})"
    if changing > same * (1 + tolerance):
        return (f"Changing the step uniform's value costs {1e6 * (changing - same):+.1f} µs a step beyond writing the "
                f"same value every time {numbers}.")
    written = min(changing, same) - bare
    if written > bare * tolerance:
        return (f"Writing the step uniform costs {1e6 * written:+.1f} µs a step whether or not its value changes "
                f"{numbers}: a cost on the GPU's side beyond Python's time to write it.")
    if bare > min(changing, same) * (1 + tolerance):
        return (f"The step uniform has no measurable cost in a stream: the stream that writes none was "
                f"{bare / min(changing, same):.2f}× slower than the ones that write it {numbers}, so what slows that "
                "stream is not the uniform.")
    within = f"within {100 * tolerance:g} %"
    return (f"The step uniform has no measurable cost in a stream: a changing value is {within} of a fixed one, "
            f"and writing one {within} of writing none {numbers}.")


def barrier_wait(bare: float, loose: float) -> str:
    """The same dispatches with barriers (bare) and without (loose, wrong results), seconds a step."""
    head = f"Without the barriers the same dispatches take {1e6 * loose:.1f} µs a step instead of {1e6 * bare:.1f}: "
    if loose < 0.75 * bare:
        return head + (f"{1 - loose / bare:.0%} of a step is the wait the barriers impose: while one kernel starts, "
                       "drains its last work groups or leaves SMs idle, the next may not begin. Faster arithmetic "
                       "does not shorten that wait; fewer dependent dispatches do.")
    return head + "the barriers cost little here: the kernels' own work is what the step takes."


def epoch_shares(phases: dict) -> str:
    """An epoch's parts (upload, kernel, readback, dispatch, in seconds) as shares, and what most of it is."""
    total = sum(phases.values())
    shares = {k: v / total for k, v in phases.items()}
    kernel = shares["kernel"]
    words = ("mostly kernel work" if kernel > 0.6 else "about half kernel work, about half fixed costs and waiting"
             if kernel >= 0.4 else "mostly not kernel work: launching, barriers and the GPU idling between dispatches")
    return "Shares of the epoch: " + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()) + f": {words}."


def largest_bound(bounds: dict, epoch: float) -> str:
    """The largest of an epoch's lower bounds (name: seconds) and the measured epoch against it."""
    name = max(bounds, key=bounds.get)
    ratio = epoch / bounds[name]
    return (f"The largest bound: {name}; the epoch is {ratio:.2f}× it" +
            ("." if ratio >= 1 else ": below a bound, so this run's separate timings disagree (noisy, as on a software "
             "renderer) and the budget is only a rough one here."))


def bytes_against_time(bytes_ratio: float, time_ratio: float) -> str:
    """The split forward against fused_forward_1: bytes_ratio times fewer bytes, time_ratio times the time."""
    head = f"The split forward reads {bytes_ratio:.1f}× fewer bytes of W1 and takes {time_ratio:.2f}× the time: "
    return head + ("Cutting the bytes cut the time." if time_ratio < 1 else
                   "Fewer bytes, no less time: what the split adds costs more than the bytes it saves.")


def bound_kind(explained: float, software: bool) -> str:
    """explained: the larger of (bytes at HBM speed, flops at FP32 peak) as a share of a kernel's measured time."""
    if software:
        return "not judged: a software renderer, and the rates are the H100's"
    if explained < 0.5:
        return f"latency-bound: its bytes at HBM speed and its flops at peak would take only {explained:.0%} of its time"
    if explained <= 1:
        return (f"its bytes at HBM speed would take {explained:.0%} of its time: near bandwidth-bound if W1 came from "
                "HBM (it comes from the faster L2)")
    return (f"it reads W1 faster than HBM could deliver it ({explained:.0%} of its time at HBM speed): W1 comes from "
            "L2, at a rate only a cache gives")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m helpers.bench.limits BENCH.json   (from python -m helpers.bench all --out BENCH.json)",
              file=sys.stderr)
        return 2
    print(table(json.loads(Path(argv[0]).read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

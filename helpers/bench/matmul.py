"""Benchmark: GFLOP/s of every matmul rung against size, beside NumPy (CPU) and cuBLAS (where torch is).

    python -m helpers.bench matmul            # sizes 256 .. 4096 (QUICK=1: 64, 128, 256)
    python -m helpers.bench.matmul sweep7 --out notebooks/results/matmul7-sweep-<card>.json
                                              # tune matmul_7_vec4k: 32 sets of #defines beside matmul_6

Introduced in notebook 04. Square C[n,n] = A[n,n] @ B[n,n], 2n³ flops. Each rung is first checked against
NumPy (float64) at one size, then timed: kernel time by helpers.timing.Clock (GPU timer queries on a real
GPU: no upload or readback) of STREAM dispatches back to back, each with its barrier, divided by STREAM; the
median of several such streams and their 20th and 80th percentiles (seconds, seconds_low, seconds_high,
repeats in each row), every rung of a size interleaved after one warm-up by time (timing.measure_interleaved). matmul_8_splitk's two dispatches (the pieces, then their sum)
count as one call. One more row is not a matmul: matmul_6_subgroup with its global loads replaced by values
made from the tile's index (NO_LOADS: LOADS 0, C wrong on purpose), what the loads cost that the pipelining
does not hide; the chart leaves it out. NumPy: wall clock of `a @ b` on the CPU. cuBLAS: torch.matmul in
float32 with TF32 off, timed the same way (STREAM calls between two CUDA events) in the same run, where
`import torch` works and CUDA is available. A stream, because one call timed alone also holds the time the
GPU waits for the CPU to issue it.
"""

from __future__ import annotations

import json
import time
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from .. import check, findings, gl, matmul, timing

SIZES, QUICK_SIZES = (256, 512, 1024, 2048, 4096), (64, 128, 256)
NO_LOADS = "matmul_6_subgroup, no global loads (C wrong)"   # the experiment row: LOADS 0 (see the shader)


def _repeat(seconds_guess: float, quick: bool) -> int:
    if quick:
        return 3
    return 5 if seconds_guess > 0.02 else 20


STREAM = matmul.STREAM   # calls timed back to back as one stream (GPU and cuBLAS alike): the GPU never waits for the CPU


def torch_fp32():
    """torch, with matmuls in true float32 (TF32 off), where it is installed with CUDA; else None."""
    try:
        import torch
    except Exception:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    return torch


def cublas_seconds(n: int, repeat: int = 20):
    """A timing.Timing of one n³ float32 torch matmul on CUDA with TF32 off: `repeat` samples of STREAM calls
    between two CUDA events, divided by STREAM (as the GLSL rungs are timed), after a warm-up by time
    (timing.warm_up: an idle GPU's clock takes about half a second to climb); None without torch/CUDA."""
    sample = cublas_sample(n)
    return None if sample is None else timing.measure(sample, repeat, clock="CUDA events")


def cublas_sample(n: int, calls: int = STREAM):
    """sample() -> seconds of one n³ float32 torch matmul on CUDA with TF32 off: `calls` back to back between
    two CUDA events, divided by `calls`; None without torch/CUDA. For timing.measure or measure_interleaved."""
    torch = torch_fp32()
    if torch is None:
        return None
    a = torch.randn(n, n, device="cuda", dtype=torch.float32)
    b = torch.randn(n, n, device="cuda", dtype=torch.float32)

    def sample():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            a @ b
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / calls
    return sample


def rung_sample(ctx, kernel, A, B, C, clock):
    """A sample() for timing.measure: seconds of one dispatch of `kernel` (C = A @ B, with its barrier), a
    stream of matmul.streamed(ctx) back-to-back dispatches timed by `clock`, divided by the dispatches
    (matmul.stream_sample, which matmul.demo times the rung cells with too)."""
    return matmul.stream_sample(kernel, A, B, C, clock, matmul.streamed(ctx))


def rung_seconds(ctx, kernel, A, B, C, clock, repeat: int, warmup: float | None = None) -> float:
    """The median seconds of one dispatch of `kernel`: `repeat` samples of rung_sample, after a warm-up."""
    return timing.measure(rung_sample(ctx, kernel, A, B, C, clock), repeat, warmup, clock=clock.source).median


def numpy_seconds(a, b, repeat: int) -> timing.Timing:
    """A timing.Timing of a @ b by wall clock over `repeat` calls, after a short warm-up."""
    return timing.measure(lambda: timing.wall_seconds(lambda: a @ b), repeat, warmup=0.1)


def row(impl: str, n: int, took: timing.Timing, clock: str) -> dict:
    """A benchmark row: the median seconds with its band (seconds_low, seconds_high, repeats) and GFLOP/s."""
    return {"impl": impl, "size": n, **took.row("seconds", 1.0), "gflops": 2.0 * n ** 3 / took.median / 1e9,
            "clock": clock}


def timing_of(rows: list[dict], impl: str, n: int) -> timing.Timing | None:
    """The Timing of one row (impl at n³), rebuilt from its median and band; None if the rows have none."""
    found = next((r for r in rows if r["impl"] == impl and r["size"] == n), None)
    return None if found is None else timing.Timing.from_row(found, "seconds", 1.0)


def check_rung(ctx, kernel, a, b, ref, name: str) -> None:
    """Raise unless `kernel` computes a @ b within a relative error of 1e-5 of `ref` (float64 NumPy); C starts
    as NaN (matmul.multiply), so an element the kernel never writes fails too. Before any timing."""
    if not check.rel_error(matmul.multiply(ctx, kernel, a, b), ref) < 1e-5:
        raise RuntimeError(f"{name} does not match NumPy at {a.shape[0]}×{a.shape[1]}×{b.shape[1]}: fix it "
                           "before timing it")


def validate(ctx, kernels: dict, n: int, rng) -> bool:
    """Every rung against float64 NumPy at n×n×n, one printed line each; False if any mismatches."""
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    ref = a.astype(np.float64) @ b
    ok = True
    for name, kernel in kernels.items():
        ok &= check.compare(f"{name[:-5]} {n}³", matmul.multiply(ctx, kernel, a, b), ref, rtol=1e-5)
    return ok


def run(ctx, quick: bool) -> list[dict]:
    sizes = QUICK_SIZES if quick else SIZES
    rng = np.random.default_rng(0)
    clock = timing.Clock(ctx)
    kernels = {name: matmul.load(ctx, name) for name in matmul.rungs()}
    print("validate first (relative error against float64 NumPy):")
    if not validate(ctx, kernels, 128 if quick else 1024, rng):
        raise RuntimeError("a matmul rung does not match NumPy: fix it before timing it")
    no_loads = matmul.load(ctx, "matmul_6_subgroup.comp", {"LOADS": 0})   # not validated: wrong by design
    timed = dict(kernels, **{NO_LOADS: no_loads})
    have_torch = cublas_seconds(64, repeat=1) is not None
    rows = []
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        A, B = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B")
        C = gl.empty(ctx, (n, n), name="C")
        guess = rung_sample(ctx, kernels[matmul.FASTEST] if matmul.FASTEST in kernels else next(iter(kernels.values())),
                            A, B, C, clock)()
        top_file, top_defines = matmul.top_rung(n, n, n)   # the top rung's blocks are chosen by size
        at_n = dict(timed)
        if top_defines:
            at_n[top_file] = matmul.load(ctx, top_file, top_defines)
            check_rung(ctx, at_n[top_file], a[:257, :129], b[:129, :131],
                       a[:257, :129].astype(np.float64) @ b[:129, :131], f"{top_file} {top_defines}")
        took = timing.measure_interleaved({name: rung_sample(ctx, kernel, A, B, C, clock)
                                           for name, kernel in at_n.items()},
                                          _repeat(guess * 20, quick), clock=clock.source)   # one warm-up by time
        for name, t in took.items():
            rows.append(dict(row(name.removesuffix(".comp"), n, t, clock.source),
                             defines=top_defines if name == top_file else {}))
        rows.append(row("numpy (CPU)", n, numpy_seconds(a, b, 3 if quick or n >= 2048 else 10), "wall clock"))
        if have_torch:
            rows.append(row("cuBLAS fp32 (torch, TF32 off)", n, cublas_seconds(n), "CUDA events"))
        for array in (A, B, C):
            array.release()
    print(table(rows))
    return rows


# --- tuning matmul_7_vec4k: the same kinds of shapes plus its own switches ------------------------------

SWEEP7_RUNG = "matmul_7_vec4k.comp"
SWEEP_SIZES, QUICK_SWEEP_SIZES = (1024, 2048, 4096), (64, 128)
# name: #defines over the file's own (BM 128, BN 128, BK 8, TM 8, TN 8, LM 4, LN 8, THREADS 256, PAD 1,
# VEC_A 1, GROUP_M 8, COPIES 2). Block BM×BN, BK deep; TM×TN outputs per invocation; "tN": THREADS;
# "scalarA": A read by scalar loads (VEC_A 0); "gG": GROUP_M G (g1: no swizzle); "1copy": one shared copy
# of each tile (COPIES 1). Shared memory COPIES*BK*(BM+4+BN)*4 bytes <= 48 KiB. Work groups at 1024³:
# 128×128 64, 128×64 and 64×128 128, 64×64 256, 64×32 and 32×64 512 (the H100 has 132 SMs).
SWEEP7 = {
    "128x128 k8  8x8  t256 (default)": {},
    "128x128 k8  8x8  t256 scalarA": {"VEC_A": 0},
    "128x128 k8  8x8  t256 g1": {"GROUP_M": 1},
    "128x128 k8  8x8  t256 g4": {"GROUP_M": 4},
    "128x128 k8  8x8  t256 g16": {"GROUP_M": 16},
    "128x128 k8  8x8  t256 warp8x4": {"LM": 8, "LN": 4},
    "128x128 k16 8x8  t256": {"BK": 16},
    "128x128 k16 8x8  t256 g1": {"BK": 16, "GROUP_M": 1},
    "128x128 k16 8x8  t256 1copy": {"BK": 16, "COPIES": 1},
    "128x128 k32 8x8  t256 1copy": {"BK": 32, "COPIES": 1},
    "128x128 k16 8x4  t512": {"BK": 16, "TN": 4, "THREADS": 512},
    "128x128 k8  16x8 t128": {"TM": 16, "THREADS": 128},
    "128x256 k8  8x16 t256": {"BN": 256, "TN": 16},
    "256x128 k8  16x8 t256": {"BM": 256, "TM": 16},
    "128x64  k8  8x8  t128": {"BN": 64, "THREADS": 128},
    "128x64  k16 8x8  t128": {"BN": 64, "BK": 16, "THREADS": 128},
    "128x64  k32 8x8  t128": {"BN": 64, "BK": 32, "THREADS": 128, "COPIES": 1},
    "64x128  k16 8x8  t128 warp8x4": {"BM": 64, "BK": 16, "LM": 8, "LN": 4, "THREADS": 128},
    "64x64   k16 8x8  t64": {"BM": 64, "BN": 64, "BK": 16, "THREADS": 64},
    "64x64   k32 8x8  t64": {"BM": 64, "BN": 64, "BK": 32, "THREADS": 64},
    "64x64   k16 8x4  t128": {"BM": 64, "BN": 64, "BK": 16, "TN": 4, "THREADS": 128},
    "64x64   k16 4x4  t256": {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 256},
    # around the best at 1024³ in the first sweep (64x64 k16 4x4 t256):
    "64x64   k8  4x4  t256": {"BM": 64, "BN": 64, "TM": 4, "TN": 4, "THREADS": 256},
    "64x64   k16 4x4  t256 g1": {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 256, "GROUP_M": 1},
    "64x64   k16 4x4  t256 1copy": {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 256, "COPIES": 1},
    "64x64   k16 4x4  t256 scalarA": {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 256, "VEC_A": 0},
    "64x64   k16 4x4  t256 warp8x4": {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 256, "LM": 8, "LN": 4},
    "64x64   k32 4x4  t256 1copy": {"BM": 64, "BN": 64, "BK": 32, "TM": 4, "TN": 4, "THREADS": 256, "COPIES": 1},
    "64x128  k16 4x8  t256": {"BM": 64, "BK": 16, "TM": 4, "THREADS": 256},
    "128x64  k16 8x4  t256": {"BN": 64, "BK": 16, "TN": 4, "THREADS": 256},
    "64x32   k16 4x4  t128": {"BM": 64, "BN": 32, "BK": 16, "TM": 4, "TN": 4, "THREADS": 128},
    "32x64   k16 4x4  t128": {"BM": 32, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 128},
}
# Shapes every configuration must match NumPy on before it is timed (M, K, N): K and N % 4 == 0 (the vec4
# paths), then neither (the scalar ones); the timed size itself is checked too.
SWEEP_CHECKS = ((131, 260, 68), (67, 37, 70))


def sweep(ctx, quick: bool = False, configs: dict | None = None, rung: str = SWEEP7_RUNG,
          baseline: str = "matmul_6_subgroup.comp") -> list[dict]:
    """Time `rung` under each of `configs` (default SWEEP7) at SWEEP_SIZES, beside `baseline` and cuBLAS.

    Each configuration is checked against NumPy on SWEEP_CHECKS and at the smallest timed size first; one
    printed line per configuration: TFLOP/s and share of cuBLAS per size; then per size the best
    configuration, its share of cuBLAS and its speed-up over the baseline (the file as committed).
    Returns row dicts as run() does; `python -m helpers.bench.matmul sweep7` runs it.
    """
    configs = SWEEP7 if configs is None else configs
    sizes = QUICK_SWEEP_SIZES if quick else SWEEP_SIZES
    rng, clock = np.random.default_rng(0), timing.Clock(ctx)
    base = f"{baseline[:-5]} (today)"
    kernels = {base: matmul.load(ctx, baseline)}
    checks = [(rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32))
              for M, K, N in (*SWEEP_CHECKS, (sizes[0],) * 3)]
    checks = [(a, b, a.astype(np.float64) @ b) for a, b in checks]
    skipped = []
    for name, defines in configs.items():
        try:
            kernels[name] = kernel = matmul.load(ctx, rung, defines)
        except gl.ShaderError as error:       # llvmpipe has 32 KiB of shared memory, NVIDIA 48 KiB
            if "shared memory" not in str(error).lower():
                raise
            skipped.append(name.strip())
            continue
        for a, b, ref in checks:
            check_rung(ctx, kernel, a, b, ref, f"{rung} {defines}")
    print(f"{rung}; all {len(kernels) - 1} configurations match NumPy")
    if skipped:
        print(f"skipped, more shared memory than this driver has: {', '.join(skipped)}")
    cublas = {n: cublas_seconds(n) for n in sizes}
    cublas = {n: t.median if t else None for n, t in cublas.items()}
    width = max(28, *(len(name) + 1 for name in kernels))
    print(f"{'TFLOP/s (% of cuBLAS fp32)':<{width}s}" + "".join(f"{n:>16d}" for n in sizes))
    if all(cublas.values()):
        print(f"{'cuBLAS fp32 (torch, TF32 off)':<{width}s}" + "".join(f"{2 * n ** 3 / cublas[n] / 1e12:>16.1f}" for n in sizes))
    rows = []
    for n in sizes:
        A, B = gl.upload(ctx, rng.standard_normal((n, n)).astype(np.float32), "A"), \
            gl.upload(ctx, rng.standard_normal((n, n)).astype(np.float32), "B")
        C = gl.empty(ctx, (n, n), name="C")
        took = timing.measure_interleaved({name: rung_sample(ctx, kernel, A, B, C, clock)
                                           for name, kernel in kernels.items()}, 3 if quick else 7, clock=clock.source)
        for name, kernel in kernels.items():
            seconds = took[name].median
            x, y, z = kernel.groups(M=n, N=n)
            rows.append({"impl": name, "size": n, **took[name].row("seconds", 1.0),
                         "tflops": 2 * n ** 3 / seconds / 1e12,
                         "cublas_share": cublas[n] / seconds if cublas[n] else None, "clock": clock.source,
                         "groups": x * y * z, "defines": configs.get(name)})
        for array in (A, B, C):
            array.release()
    get = {(r["impl"], r["size"]): r for r in rows}
    for name in kernels:
        cells = [get[name, n] for n in sizes]
        print(f"{name:<{width}s}" + "".join(f"{timing._g(r['tflops'], 3):>8s}" + (f" ({100 * r['cublas_share']:3.0f} %)"
                                                                     if r["cublas_share"] else f"{'':>8s}") for r in cells))
    speed = {n: get[base, n]["tflops"] for n in sizes}
    for n in sizes:
        best = max((r for r in rows if r["size"] == n and r["defines"] is not None), key=lambda r: r["tflops"])
        share = f", {100 * best['cublas_share']:.0f} % of cuBLAS" if best["cublas_share"] else ""
        print(f"highest median rate at {n}³: {best['impl'].strip()}  {best['defines']}  {timing._g(best['tflops'], 3)} TFLOP/s{share}, "
              f"{timing.times(Decimal(timing._g(best['tflops'], 3)) / Decimal(timing._g(speed[n], 3)))}× {baseline[:-5]} "
              f"({best['groups']} work groups)")   # the ratio of the rates as the table prints them
    calls = matmul.streamed(ctx)
    print(f"(kernel: {clock.source}, {calls} dispatch{'es' if calls > 1 else ''} a stream, median of {3 if quick else 7} streams; "
          f"cuBLAS: CUDA events around {STREAM} calls)")
    return rows


def row_defines(r: dict) -> dict:
    """The #defines a rung's row ran under: its "defines"; for a row without them (a record written before
    rows carried them), what run() gives that rung at that size: top_rung's where it names this rung."""
    if "defines" in r:
        return dict(r["defines"] or {})
    name, defines = matmul.top_rung(r["size"], r["size"], r["size"])
    return dict(defines) if r["impl"] == name.removesuffix(".comp") else {}


def label(rows: list[dict], impl: str, n: int) -> str:
    """A rung's row at n³ named with its configuration (matmul.configuration): 'matmul_9_interior with
    top_rung's 64×64 blocks', or the bare name where it ran its file's defaults."""
    found = next((r for r in rows if r["impl"] == impl and r["size"] == n), None)
    return matmul.configuration(impl, n, row_defines(found) if found else {})


def configurations(rows: list[dict]) -> str | None:
    """A sentence naming every rung row that ran under #defines other than its file's, with its sizes; None
    where every row ran its file's defaults."""
    said = []
    for impl in dict.fromkeys(r["impl"] for r in rows if r["impl"].startswith("matmul_")):
        by_defines = {}
        for r in sorted((r for r in rows if r["impl"] == impl), key=lambda r: r["size"]):
            if row_defines(r):
                by_defines.setdefault(tuple(sorted(row_defines(r).items())), (row_defines(r), []))[1].append(r["size"])
        for defines, sizes in by_defines.values():
            top = all(matmul.top_rung(n, n, n) == (impl + ".comp", defines) for n in sizes)
            what = matmul.block_words(defines)
            settings = ", ".join(f"{k} {v}" for k, v in defines.items())
            at = findings.listed(f"{n}³" for n in sizes)
            said.append(f"{impl} at {at} ran with {what + ' (' + settings + ')' if what else settings}"
                        + (f", top_rung's choice at {'that size' if len(sizes) == 1 else 'those sizes'}" if top else ""))
    if not said:
        return None
    return "; ".join(said) + "; every other rung figure is its file's defaults."


def retimed(timed: dict, rows: list[dict], n: int) -> str | None:
    """The rung cells' timings set beside the table's at n³: timed {(file name, #defines): timing.Timing}, each
    matched to the row of the same rung and configuration (row_defines). One sentence: the table's are new
    measurements of one dispatch taken the same way, how many pairs' 20–80 % bands overlap, and the pair whose
    medians lie furthest apart, with both timings. None where no pair matches."""
    pairs = {}
    for (name, defines), t in timed.items():
        impl = name.removesuffix(".comp")
        found = next((r for r in rows if r["impl"] == impl and r["size"] == n and row_defines(r) == dict(defines)),
                     None)
        if found is not None:
            pairs[matmul.configuration(name, n, dict(defines))] = (t, timing.Timing.from_row(found, "seconds", 1.0))
    if not pairs:
        return None
    level = sum(timing.overlap(a, b) for a, b in pairs.values())
    gap = {k: max(timing.ratio(a, b), timing.ratio(b, a)) for k, (a, b) in pairs.items()}
    worst = max(gap, key=gap.get)
    a, b = pairs[worst]
    if len(pairs) == 1:
        bands = f"the two 20–80 % bands {'overlap' if level else 'do not overlap'}, and the medians lie"
    else:
        every = "both" if len(pairs) == 2 else f"all {len(pairs)}"
        bands = (f"{every if level == len(pairs) else f'{level} of {len(pairs)}'} pairs of 20–80 % bands overlap, "
                 "and the medians lie at most")
    shown = timing.times(gap[worst])
    within = Decimal(shown) <= 1 + Decimal(str(timing.MARGIN))
    meaning = (f"the same kernel timed twice in one run moves that much, within the {100 * timing.MARGIN:g} % margin "
               "that a verdict asks for beyond the bands" if within else
               f"the same kernel timed twice in one run moved beyond the {100 * timing.MARGIN:g} % margin that a "
               "verdict asks for, so a verdict this close in the table could come out otherwise")
    return (f"At {n}³ the table timed {'this rung' if len(pairs) == 1 else 'these rungs'} again, in turn, per dispatch "
            f"the same way as the cells above: {bands} {shown}× apart ({worst}: {a.text()} above, "
            f"{b.text()} in the table): {meaning}.")


def _fmt(value: float) -> str:
    """A GFLOP/s figure as table() prints it: whole from 100 up ('3058'), three significant digits below, their
    trailing zeros kept as timing._g keeps them ('70.0', '5.20')."""
    return f"{value:.0f}" if value >= 100 else timing._g(value, 3)


def percent_of(gflops: float, cublas_gflops: float, decimals: int = 1) -> Decimal:
    """A rung's share of cuBLAS's speed in percent as the course prints it: the quotient of the two GFLOP/s
    figures as table() prints them (_fmt), to `decimals` places, rounded half up, so that a reader who divides
    the table's figures gets it (3058 / 1245 = 245.6 %). Every share of cuBLAS the course prints comes from
    here (against_cublas's shares too), so one share is never printed two ways."""
    exact = 100 * Decimal(_fmt(gflops)) / Decimal(_fmt(cublas_gflops))
    return exact.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP) + 0


def percent(share: float) -> Decimal:
    """A share (1 is all of it) in percent to one decimal, rounded half up: for against_cublas's shares, which
    percent_of rounded to one decimal already, the same figure again."""
    return Decimal(timing.times(100 * share, 1))


def table(rows: list[dict]) -> str:
    """GFLOP/s per implementation (rows) and size (columns); then each rung's share of cuBLAS at the top size."""
    sizes = sorted({r["size"] for r in rows})
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    get = {(r["impl"], r["size"]): r for r in rows}
    width = max([32] + [len(impl) + 1 for impl in impls])    # the longest name widens the first column
    lines = [f"{'GFLOP/s':<{width}s}" + "".join(f"{n:>10d}" for n in sizes) + "  clock"]
    for impl in impls:
        cells = "".join(f"{_fmt(get[impl, n]['gflops']):>10s}" if (impl, n) in get else f"{'':>10s}" for n in sizes)
        clock = next(r["clock"] for r in rows if r["impl"] == impl)
        lines.append(f"{impl:<{width}s}{cells}  {clock}")
    cublas = {r["size"]: r["gflops"] for r in rows if r["impl"].startswith("cuBLAS")}
    if cublas:
        shown = [n for n in sizes if n in cublas]
        lines.append(f"{'share of cuBLAS fp32 (same run):':<{width}s}" + "".join(f"{n:>8d}" for n in shown))
        for impl in impls:
            if impl.startswith("matmul_"):
                cells = "".join(f"{percent_of(get[impl, n]['gflops'], cublas[n]):>7}%" if (impl, n) in get else f"{'':>8s}"
                                for n in shown)
                lines.append(f"  {impl:<{width - 3}s}{cells}")
    else:
        lines.append("(no cuBLAS column: torch with CUDA is not available here)")
    note = configurations(rows)
    if note:
        lines.append(note)
    return "\n".join(lines)


LAUNCH_BOUND = 0.25   # cuBLAS below this share of its own best speed in the run: its time is mostly the call
NEAR_PEAK = 0.9       # cuBLAS at this share of its own best speed in the run or more: at about its best
OVERHEAD, UNDER_PEAK, AT_PEAK = "cuBLAS mostly launch overhead", "cuBLAS below its best", "cuBLAS at about its best"
LEVEL, UNJUDGED = "level with cuBLAS", "no band to judge by"   # the notes' outcomes where no rung is faster


def banded(row: dict) -> bool:
    """Whether a row stores its 20–80 % band (seconds_low, seconds_high): without one, Timing.from_row gives a
    timing of no spread, which compare() must not judge."""
    return "seconds_low" in row and "seconds_high" in row


def cublas_share_notes(rows: list[dict]) -> list[timing.Verdict]:
    """One sentence per size at which some rung is not slower than cuBLAS beyond the noise, judged by
    timing.compare on the rows' medians and 20–80 % bands with timing.MARGIN: rungs faster beyond both cost
    less per call than cuBLAS; rungs compare() calls the same are level with it, in timing.the_same's words;
    where a rung's row or cuBLAS's stores no band (banded), nothing is judged, and a rung whose median is below
    cuBLAS's is said to have no band to judge it by, never to be faster. Each rung is named with its share of
    cuBLAS's speed as table() prints it, then its time ('matmul_9_interior 102.8% of cuBLAS's speed (25.1 µs (…))',
    its: cuBLAS's). Where some rung is faster, what that means, from
    cuBLAS's own speed at that size against its best in the run: below LAUNCH_BOUND of its best, cuBLAS's
    time is mostly the fixed cost of a call (OVERHEAD); below NEAR_PEAK it is UNDER_PEAK; from NEAR_PEAK up
    the rung beats cuBLAS at about its best (AT_PEAK). Where none is: LEVEL, or UNJUDGED. With every row
    banded, no note means that cuBLAS is faster than every rung beyond the noise at every size."""
    blas = {r["size"]: r for r in rows if r["impl"].startswith("cuBLAS")}
    if not blas:
        return []
    best = max(r["gflops"] for r in blas.values())
    notes = []
    for n in sorted(blas):
        b = blas[n]
        tb = timing.Timing.from_row(b, "seconds", 1.0)
        faster, level, unjudged = [], {}, []
        for r in rows:
            if r["size"] != n or not r["impl"].startswith("matmul_") or r["impl"] == NO_LOADS:
                continue
            share = percent_of(r["gflops"], b["gflops"])      # as table() prints it
            tr = timing.Timing.from_row(r, "seconds", 1.0)
            if not (banded(r) and banded(b)):
                if r["seconds"] < b["seconds"]:
                    unjudged.append(f"{r['impl']} {share}%")
                continue
            outcome = timing.compare(tr, tb)
            if outcome == timing.A_FASTER:
                faster.append(f"{r['impl']} {share}% of cuBLAS's speed ({tr.text()})")
            elif outcome == timing.SAME:     # grouped by the_same()'s reason, said once for the group
                reason = timing.the_same(tr, tb)
                level.setdefault(reason, []).append(f"{r['impl']} {share}% of cuBLAS's speed ({tr.text()})")
        if not (faster or level or unjudged):
            continue
        said = []
        if faster:
            one = len(faster) == 1
            rung, verb = ("that rung", "s") if one else ("those rungs", "")
            named = ("the rung named faster costs", "its") if one else ("the rungs named faster cost", "their")
            own = b["gflops"] / best
            if own < LAUNCH_BOUND:
                outcome = OVERHEAD
                why = (f"at its best speed cuBLAS's arithmetic would take {own:.0%} of that time, the rest being the "
                       "fixed cost of a call (issuing it from PyTorch, launching its kernel) on a GPU this size does "
                       f"not fill, so {named[0]} less per call here, which says nothing of whether {named[1]} "
                       "arithmetic is faster")
            elif own < NEAR_PEAK:
                outcome = UNDER_PEAK
                why = (f"cuBLAS ran at {own:.0%} of its own best speed in the same run, far from its best at this size "
                       f"too, so {rung} beat{verb} a cuBLAS that does not fill this GPU here, not cuBLAS at its best")
            else:
                outcome = AT_PEAK
                why = (f"cuBLAS ran at {own:.0%} of its own best speed in the same run, so {rung} beat{verb} cuBLAS "
                       "at about its best here")
            said.append(f"{findings.listed(faster)} cost{'s' if one else ''} less per call, beyond the "
                        f"noise and the {100 * timing.MARGIN:.3g} % margin: {why}")
        else:
            outcome = LEVEL if level else UNJUDGED
        for reason, names in level.items():
            said.append(f"{findings.listed(names)} {'is' if len(names) == 1 else 'are'} level with "
                        f"cuBLAS, {reason}")
        if unjudged:
            one = len(unjudged) == 1
            said.append(f"{findings.listed(unjudged)} of cuBLAS's speed {'has a median' if one else 'have medians'} below "
                        f"cuBLAS's, but with no 20–80 % band stored, whether {'it is' if one else 'they are'} faster "
                        "beyond the noise cannot be judged")
        notes.append(timing.Verdict(f"At {n}³ cuBLAS took {tb.text()} a call; " + "; ".join(said) + ".", outcome))
    return notes


def tflops_text(t: timing.Timing, n: int, unit: str = "TFLOP/s") -> str:
    """An n³ product's speed in TFLOP/s (or `unit` GFLOP/s) with its band, as Timing.text() prints a time:
    '42.7 TFLOP/s (42.6–42.9)', 2n³ over the median, the slow end over the 80th percentile and the fast end over
    the 20th; a band narrower than the last digit gets up to two more digits; no band stored: '(no spread
    recorded)'."""
    flops = 2 * n ** 3 / {"TFLOP/s": 1e12, "GFLOP/s": 1e9}[unit]
    if t.low == t.high:
        return f"{timing.band_figures(flops / t.median, 0, 0)[0]} {unit} (no spread recorded)"
    median, slow, fast = timing.band_figures(flops / t.median, flops / t.high, flops / t.low)
    return f"{median} {unit} ({slow}–{fast})"


def climb_text(timings: dict, first: str, n: int) -> str:
    """The ladder's climb at n³ as a sentence part, each rung's speed in TFLOP/s with its 20–80 % band
    (tflops_text, so a band never prints collapsed): 'the ladder went from matmul_1_naive's 4.57 TFLOP/s
    (4.57–4.58) to 32.7 TFLOP/s (32.6–32.7) for matmul_9_interior, the rung of lowest median'. timings: {rung
    name: timing.Timing of one dispatch}; first: the rung it starts from. Both in TFLOP/s where the first rung's
    median reaches CLIMB_IN_TFLOPS, else both in GFLOP/s (a software renderer's 0.03 GFLOP/s, never a TFLOP/s
    figure of four zeros). The top is judged (timing.lowest), not a bare maximum: the rungs compare() calls the
    same as it are named as level with it."""
    top, level = timing.lowest(timings)
    level_words = f", level with {findings.listed(level)}" if level else ""
    unit = "TFLOP/s" if 2 * n ** 3 / timings[first].median >= CLIMB_IN_TFLOPS else "GFLOP/s"
    return (f"the ladder went from {first}'s {tflops_text(timings[first], n, unit)} to "
            f"{tflops_text(timings[top], n, unit)} for {top}, the rung of lowest median{level_words}")


CLIMB_IN_TFLOPS = 1e10   # flop/s: from 10 GFLOP/s (0.01 TFLOP/s) up, climb_text speaks in TFLOP/s


SEVERAL_PIECES = "several pieces: judged by matmul.splitk_verdict"   # splitk_size_sentence's outcome there


def _n_of(count: int, word: str) -> str:
    """'1 piece', '4 pieces'."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def splitk_size_sentence(rows: list[dict], n: int, pieces: int, groups: int) -> timing.Verdict | None:
    """Split-K (matmul_8_splitk) beside matmul_6_subgroup at n³ from the rows: how many pieces of k in how many
    work groups, and both speeds in TFLOP/s with their bands (tflops_text). With one piece split-K does
    matmul_6's work in one dispatch, in a shader of its own, so the sentence says so and judges the two times
    per dispatch with matmul.versus (timing.compare with timing.MARGIN: matmul_8 faster, matmul_6 faster, or
    the same, in timing.the_same's words), with that outcome; where either row stores no band, both times
    and that it cannot be judged (UNJUDGED). With several pieces the speeds alone, no claim, outcome
    SEVERAL_PIECES: matmul.splitk_verdict judges those sizes together. None where either row is missing."""
    t8, t6 = timing_of(rows, "matmul_8_splitk", n), timing_of(rows, "matmul_6_subgroup", n)
    if t8 is None or t6 is None:
        return None
    head = (f"At {n}³, {_n_of(pieces, 'piece')} of k in {_n_of(groups, 'work group')}, matmul_8 ran "
            f"{tflops_text(t8, n)} against matmul_6's {tflops_text(t6, n)}")
    if pieces != 1:
        return timing.Verdict(f"{head}.", SEVERAL_PIECES)
    one = "with one piece split-K does matmul_6's work in one dispatch, in a shader of its own"
    found = [r for r in rows if r["size"] == n and r["impl"] in ("matmul_8_splitk", "matmul_6_subgroup")]
    if not all(banded(r) for r in found):
        return timing.Verdict(f"{head}; {one}: per dispatch it took {t8.text()} and matmul_6 {t6.text()}, with no "
                              "20–80 % band stored, so whether either is faster beyond the noise cannot be judged.",
                              UNJUDGED)
    v = matmul.versus(t8, t6, "matmul_8", "matmul_6")
    return timing.Verdict(f"{head}; {one}, and per dispatch {v}.", v.outcome)


def rows_verdict(rows: list[dict], impl: str, base: str, n: int) -> timing.Verdict | None:
    """impl's row at n³ against base's (each named by label(): its configuration), from their medians and
    20–80 % bands: matmul.rung_verdict's sentence (compare() with timing.MARGIN, the speed-up to three digits),
    then both speeds in TFLOP/s with their bands (tflops_text), each after its short name (matmul_9). Where
    either row stores no band, no verdict: both times and the outcome UNJUDGED. None where either row is
    missing."""
    rung, before = timing_of(rows, impl, n), timing_of(rows, base, n)
    if rung is None or before is None:
        return None
    name, base_name = label(rows, impl, n), label(rows, base, n)
    speeds = f"in speed, {_short(impl)} {tflops_text(rung, n)} and {_short(base)} {tflops_text(before, n)}"
    found = [r for r in rows if r["size"] == n and r["impl"] in (impl, base)]
    if not all(banded(r) for r in found):
        return timing.Verdict(f"At {n}³ {name} took {rung.text()} and {base_name} {before.text()}; {speeds}: with no "
                              "20–80 % band stored, whether either is faster beyond the noise cannot be judged.",
                              UNJUDGED)
    v = matmul.rung_verdict(name, base_name, n, rung, before)
    return timing.Verdict(f"{v[:-1]}; {speeds}.", v.outcome)


def limit_sentence(rows: list[dict], g: dict) -> timing.Verdict | None:
    """One of against_cublas's dicts as a sentence: the speed of the rung of lowest median (and the rungs level
    with it, where any are) and cuBLAS fp32's in the same run,
    each in TFLOP/s with its band (tflops_text), the rung's share of cuBLAS's speed as table() prints it
    (percent_of: one decimal, from the table's GFLOP/s, the one figure README and "What we measured" print
    too), then the two times per call judged by matmul.versus (compare() with timing.MARGIN:
    faster, or the same within the noise). Where either row stores no band, the times without a verdict and
    the outcome UNJUDGED. None where the rows lack either timing."""
    n = g["size"]
    rung = timing_of(rows, g["best"], n)
    blas_row = next((r for r in rows if r["size"] == n and r["impl"].startswith("cuBLAS")), None)
    if rung is None or blas_row is None:
        return None
    blas = timing.Timing.from_row(blas_row, "seconds", 1.0)
    row = next(r for r in rows if r["size"] == n and r["impl"] == g["best"])
    share = percent_of(row["gflops"], blas_row["gflops"])     # as table() prints it
    level = f" (level with {findings.listed(g['level'])})" if g.get("level") else ""
    head = (f"At {n}³ the rung of lowest median, {g['label']}{level}, ran {tflops_text(rung, n)} and cuBLAS fp32 "
            f"{tflops_text(blas, n)} in the same run, {share}% of cuBLAS fp32's speed from the table's GFLOP/s")
    if not (banded(row) and banded(blas_row)):
        return timing.Verdict(f"{head}; per call it took {rung.text()} and cuBLAS {blas.text()}: with no 20–80 % band "
                              "stored, whether either is faster beyond the noise cannot be judged.", UNJUDGED)
    v = matmul.versus(rung, blas, _short(g["best"]), "cuBLAS fp32")
    return timing.Verdict(f"{head}; per call, {v}.", v.outcome)


LIMIT_SIZES = (1024, 2048, 4096)   # the sizes where the rung of lowest median is set against cuBLAS fp32


def against_cublas(rows: list[dict]) -> list[dict]:
    """How far the ladder is from the limit on one run's rows: one dict per size of LIMIT_SIZES that has
    cuBLAS and a rung: the rung of lowest median ("best") and its share of cuBLAS's speed, the rungs whose rows
    timing.compare calls the same as it ("level", timing.lowest), matmul_6_subgroup's share with and
    without its global loads (the NO_LOADS row; None where the run has none), and won_back: the share of that
    difference the best rung recovers ((best - matmul_6) / (without - matmul_6); None without both)."""
    seconds = {(r["impl"], r["size"]): r["seconds"] for r in rows}
    gflops = {(r["impl"], r["size"]): r["gflops"] for r in rows}
    out = []
    for n in LIMIT_SIZES:
        cublas = next((gflops[impl, size] for (impl, size) in seconds if size == n and impl.startswith("cuBLAS")),
                      None)
        rungs = {impl: s for (impl, size), s in seconds.items()
                 if size == n and impl.startswith("matmul_") and impl != NO_LOADS}
        if cublas is None or not rungs:
            continue
        best, level = timing.lowest({impl: timing_of(rows, impl, n) for impl in rungs})

        def share(impl):   # as the table prints it (percent_of), back as a share
            return float(percent_of(gflops[impl, n], cublas)) / 100 if (impl, n) in gflops else None
        m6, without = share("matmul_6_subgroup"), share(NO_LOADS)
        won_back = None if None in (m6, without) or without == m6 else (share(best) - m6) / (without - m6)
        out.append({"size": n, "best": best, "level": level, "label": label(rows, best, n), "share": share(best), "matmul_6": m6,
                    "without_loads": without, "won_back": won_back})
    return out


def _short(impl: str) -> str:
    """matmul_9_interior -> matmul_9."""
    return "_".join(impl.split("_")[:2])


def loads_sentence(g: dict) -> str:
    """One of against_cublas's dicts as a sentence: what matmul_6 would reach without its global loads, what
    the fastest rung reaches, and how much of the loads' cost it wins back, each share as the table prints it
    (one decimal, so the sentence and the table never round one figure two ways) and the share won back taken
    from those three printed figures; where the fastest rung goes beyond matmul_6 without any loads
    (judged on the printed percentages), it says that instead: a rung cannot win back more than a cost, its
    own changes gain more than the loads cost (the layout it runs with among them, where g["label"] names
    #defines other than its file's); where it prints no more than matmul_6, it says that. The share won back is
    printed in whole percent, with as many decimals as it takes never to read 0 % or 100 % of a cost partly
    won back. None where the dict has no matmul_6 or no NO_LOADS row."""
    if g["won_back"] is None:
        return None
    pct = percent   # the share as the table prints it (86.5 %)
    best = g.get("label") or _short(g["best"])
    head = (f"{g['size']}³: matmul_6 reaches {pct(g['matmul_6'])}% of cuBLAS, and without its global loads would "
            f"reach {pct(g['without_loads'])}%")
    if pct(g["without_loads"]) <= pct(g["matmul_6"]):
        return f"{head}: removing them gains nothing here; {best} reaches {pct(g['share'])}%."
    if pct(g["share"]) > pct(g["without_loads"]):
        other = g.get("label") not in (None, g["best"], _short(g["best"]))   # not its file's #defines
        changes = "its own changes, the layout it runs with here among them," if other else "its own changes"
        return (f"{head}; {best} reaches {pct(g['share'])}%, beyond what removing matmul_6's loads alone gives: "
                f"{changes} gain more than the loads cost.")
    if pct(g["share"]) == pct(g["without_loads"]):
        return f"{head}; {best} reaches {pct(g['share'])}% too, as much as removing matmul_6's loads gives."
    if pct(g["share"]) <= pct(g["matmul_6"]):
        return f"{head}; {best} reaches {pct(g['share'])}%, no more than matmul_6 with its loads."
    won = 100 * (pct(g["share"]) - pct(g["matmul_6"])) / (pct(g["without_loads"]) - pct(g["matmul_6"]))
    for places in range(0, 6):   # never 0 % or all of it: as many decimals as it takes to print within them
        shown = won.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
        if 0 < shown < 100:
            break
    return f"{head}; {best} reaches {pct(g['share'])}%, winning back {shown}% of the loads' cost."


TEACHING = ("matmul_1_naive", "matmul_2_tiled", "matmul_3_blocked")   # the rungs the figure always shows


def fastest_rung(rows: list[dict], n: int) -> dict | None:
    """The row of the matmul rung of lowest median in the rows at n³, NO_LOADS, NumPy and cuBLAS left out (a
    bare minimum: the rung a table row or the plot names; against_cublas judges it against the others)."""
    rungs = [r for r in rows if r["size"] == n and r["impl"].startswith("matmul_") and r["impl"] != NO_LOADS]
    return min(rungs, key=lambda r: r["seconds"]) if rungs else None


def fastest_rung_name(rows: list[dict], n: int | None = None) -> str | None:
    """The matmul rung of lowest median in the rows at n³ (default: the largest size), NO_LOADS left out: the
    one the plot shows beside the rungs that teach."""
    best = fastest_rung(rows, max(r["size"] for r in rows) if n is None else n)
    return best["impl"] if best else None


def fastest_beyond_noise(rows: list[dict], rungs, n: int) -> str:
    """Which of `rungs` (names as in the rows) is fastest at n³, judged: its short name (matmul_9) where
    timing.compare() calls its row faster than every other rung's row at n³, "level" where another is the
    same within the noise or the 5 % margin. Only rungs with a row at n³ count."""
    timed = {impl: timing_of(rows, impl, n) for impl in rungs}
    timed = {impl: t for impl, t in timed.items() if t is not None}
    if not timed:
        raise ValueError(f"no rung has a row at {n}³: run the benchmark at that size first")
    best, level = timing.lowest(timed)
    return "level" if level else _short(best)


FROM_A_SIZE, NEVER = "from a size", "never"   # bigger_blocks_ahead's outcomes


def bigger_blocks_ahead(rows: list[dict], bigger: str, smaller: str, sizes, after: int, groups: dict) -> timing.Verdict:
    """From which size above `after` the rung of bigger blocks (`bigger`, named as in the rows) is ahead of the
    one of smaller blocks beyond the noise (timing.compare of their rows) at that size and at every larger one
    of `sizes`: FROM_A_SIZE, with that size and the work groups `bigger` launches there ({(name, n): count},
    names without .comp), or NEVER. A size where either rung has no row counts as not ahead."""
    def ahead(n):
        a, b = timing_of(rows, bigger, n), timing_of(rows, smaller, n)
        return a is not None and b is not None and timing.compare(a, b) == timing.A_FASTER
    sizes = sorted(sizes)
    start = next((m for m in sizes if m > after and all(ahead(x) for x in sizes if x >= m)), None)
    short_big, short_small = _short(bigger), _short(smaller)
    if start is None:
        return timing.Verdict(f"At no larger size is {short_big} ahead of {short_small} beyond the noise.", NEVER)
    return timing.Verdict(f"From {start}³ ({groups[bigger, start]} work groups) {short_big} is ahead beyond the noise: "
                          "its bigger blocks pay once the GPU is full.", FROM_A_SIZE)


def plot(rows: list[dict], title: str = ""):
    """GFLOP/s against size, log axes, only the rungs that teach: naive, tiled, blocked, the top rung (the
    fastest at the largest size, read from the rows) and cuBLAS, each in a colour and marker of its own, with
    a 20–80 % band where the rows have one; the legend beside the axes, off the data. The other rungs and
    NumPy are in table(rows)."""
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    top = fastest_rung_name(rows)
    shown = [impl for impl in (*TEACHING, top) if impl and any(r["impl"] == impl for r in rows)]
    shown = list(dict.fromkeys(shown)) + [impl for impl in dict.fromkeys(r["impl"] for r in rows)
                                         if impl.startswith("cuBLAS")]
    colours = {"matmul_1_naive": "#7f7f7f", "matmul_2_tiled": "#1f77b4", "matmul_3_blocked": "#2ca02c"}
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for i, impl in enumerate(shown):
        mine = sorted((r for r in rows if r["impl"] == impl), key=lambda r: r["size"])
        sizes = [r["size"] for r in mine]
        blas = impl.startswith("cuBLAS")
        colour = "crimson" if blas else colours.get(impl, "#ff7f0e")
        label = impl + (f" (the top rung at {sizes[-1]}³)" if impl == top and impl not in TEACHING else "")
        ax.plot(sizes, [r["gflops"] for r in mine], "--" if blas else "-", color=colour, marker="osD^v"[i % 5],
                label=label, linewidth=2)
        if all("seconds_low" in r for r in mine):     # the 20–80 % band: fast end high, slow end low
            flops = [2.0 * r["size"] ** 3 / 1e9 for r in mine]
            ax.fill_between(sizes, [f / r["seconds_high"] for f, r in zip(flops, mine)],
                            [f / r["seconds_low"] for f, r in zip(flops, mine)], color=colour, alpha=0.2)
    ax.set(xscale="log", yscale="log", xlabel="n  (C[n,n] = A[n,n] @ B[n,n])", ylabel="GFLOP/s", title=title)
    sizes = sorted({r["size"] for r in rows})
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # log axes label minor ticks too: they overlapped
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def write_sweep(out, context, command: str, quick: bool, rows: list[dict]) -> None:
    """A sweep's JSON record at `out`: the device, the date and the command that made it, and its rows."""
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"device": {"describe": gl.describe(context), "date": time.strftime("%Y-%m-%d"), "command": command},
              "quick": quick, "rows": rows}
    out.write_text(json.dumps(record, indent=1, default=float) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":   # python -m helpers.bench.matmul sweep7 [--quick] [--out FILE]
    import sys
    from pathlib import Path

    from .. import mode

    usage = ("usage: python -m helpers.bench.matmul sweep7 [--quick] [--out FILE]   "
             "(the ladder: python -m helpers.bench matmul)")
    if sys.argv[1:2] != ["sweep7"]:
        raise SystemExit(usage)
    context = gl.create_context()
    print(gl.describe(context))
    quick = "--quick" in sys.argv or mode.is_quick()
    result = sweep(context, quick)
    if "--out" in sys.argv:
        write_sweep(Path(sys.argv[sys.argv.index("--out") + 1]), context,
                    "python -m helpers.bench.matmul " + " ".join(sys.argv[1:]), quick, result)

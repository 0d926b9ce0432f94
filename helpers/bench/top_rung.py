"""The matmul ladder's top rung per size: candidate shaders and #defines timed against cuBLAS fp32, interleaved.

    python -m helpers.bench.top_rung [--quick] [--out FILE]

A tuning tool (nothing in the notebooks runs it); helpers.matmul.TOP_RUNGS holds what it chose, and
helpers.matmul.top_rung(M, N, K) reads that table. Square C[n,n] = A[n,n] @ B[n,n] at SIZES. Every candidate
is first checked against float64 NumPy on CHECK_SHAPES (odd shapes, interior and edge blocks) and at the
timed size, C poisoned with NaN (matmul.multiply). Then, per size, all candidates of that size and cuBLAS
(torch.matmul, float32, TF32 off) are timed by timing.measure_interleaved: a warm-up of at least WARMUP
seconds of all of them in turn, then REPEAT rounds A B C ... A B C ...; each sample is a stream of STREAM
calls back to back (GLSL: one GPU timer query around them; cuBLAS: two CUDA events), divided by STREAM.
A split-K candidate's call is both its dispatches. Prints each candidate's median TFLOP/s, its 20-80 % band
and its share of cuBLAS's median; the JSON rows carry the bands (Timing.row()).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .. import check, gl, matmul, timing
from . import matmul as bench_matmul

SIZES, QUICK_SIZES = (1024, 2048, 4096), (64, 128)
STREAM, REPEAT, WARMUP = matmul.STREAM, 15, 1.0   # STREAM on llvmpipe too: --quick checks the same code path
CHECK_SHAPES = ((131, 260, 68), (67, 37, 70), (256, 96, 128), (200, 128, 260))   # (M, K, N)

M9, M10, M8 = "matmul_9_interior.comp", "matmul_10_prefetch.comp", matmul.SPLITK
T16x8 = dict(TM=16, THREADS=128)   # matmul_9's thread tile (16×8 outputs, 128 threads) on matmul_8
# name: (shader, #defines, places for SplitK or None, sizes it is timed at)
CANDIDATES = {
    "matmul_9 128x128 16x8 t128 (file)": (M9, {}, None, (1024, 2048, 4096)),
    "matmul_9 128x64 8x8 t128": (M9, dict(BN=64, TM=8, THREADS=128), None, (1024, 2048)),
    "matmul_9 128x128 8x8 t256": (M9, dict(TM=8, THREADS=256), None, (2048, 4096)),
    "matmul_9 128x128 8x16 t128": (M9, dict(TM=8, TN=16), None, (2048, 4096)),
    "matmul_9 128x128 16x8 t128 warp 8x4": (M9, dict(LM=8, LN=4), None, (2048, 4096)),
    "matmul_9 128x128 16x8 t128 warp 2x16": (M9, dict(LM=2, LN=16), None, (2048, 4096)),
    "matmul_9 128x128 16x8 t128 pad 0": (M9, dict(PAD=0), None, (2048, 4096)),
    "matmul_9 256x128 16x8 t256": (M9, dict(BM=256, THREADS=256), None, (2048, 4096)),
    "matmul_9 128x256 16x8 t256": (M9, dict(BN=256, THREADS=256), None, (2048, 4096)),
    "matmul_9 64x128 8x8 t128": (M9, dict(BM=64, TM=8, THREADS=128), None, (1024, 2048)),
    "matmul_9 64x64 8x4 t128": (M9, dict(BM=64, BN=64, TM=8, TN=4, THREADS=128), None, (1024, 2048)),
    "matmul_9 64x64 8x8 t64": (M9, dict(BM=64, BN=64, TM=8, THREADS=64), None, (1024,)),
    "matmul_9 64x64 4x4 t256 k16": (M9, dict(BM=64, BN=64, TM=4, TN=4, THREADS=256, BK=16), None, (1024,)),
    "matmul_10 128x128 16x8 t128 (file)": (M10, {}, None, (1024, 2048, 4096)),
    "matmul_10 128x128 8x16 t128": (M10, dict(TM=8, TN=16), None, (2048, 4096)),
    "matmul_10 128x128 16x8 t128 warp 8x4": (M10, dict(LM=8, LN=4), None, (2048, 4096)),
    "matmul_10 128x64 8x8 t128": (M10, dict(BN=64, TM=8, THREADS=128), None, (1024, 2048)),
    "matmul_10 64x64 8x4 t128": (M10, dict(BM=64, BN=64, TM=8, TN=4, THREADS=128), None, (1024, 2048)),
    "matmul_10 64x64 8x8 t64": (M10, dict(BM=64, BN=64, TM=8, THREADS=64), None, (1024,)),
    "matmul_8 8x8 t256, 4 pieces (file)": (M8, {}, 264, (1024, 2048, 4096)),
    "matmul_8 interior 8x8 t256, 4 pieces": (M8, dict(INTERIOR=1), 264, (1024,)),
    "matmul_8 interior 16x8 t128, 2 pieces": (M8, dict(INTERIOR=1, **T16x8), 132, (1024,)),
    "matmul_8 interior 16x8 t128, 4 pieces": (M8, dict(INTERIOR=1, **T16x8), 264, (1024, 2048, 4096)),
    "matmul_8 interior 16x8 t128, 8 pieces": (M8, dict(INTERIOR=1, **T16x8), 528, (1024,)),
    "matmul_8 interior 16x8 t128 k16, 4 pieces": (M8, dict(INTERIOR=1, BK=16, **T16x8), 264, (1024,)),
    "matmul_8 interior 128x64 8x8 t128, 2 pieces": (M8, dict(INTERIOR=1, BN=64, TM=8, THREADS=128), 264, (1024,)),
    "matmul_8 interior 128x64 8x8 t128, 4 pieces": (M8, dict(INTERIOR=1, BN=64, TM=8, THREADS=128), 528, (1024,)),
}
QUICK_PLACES = 16   # llvmpipe has no SM count: places small enough that the QUICK sizes still split


def load(ctx, shader: str, defines: dict, places):
    if shader == M8:
        return matmul.SplitK(ctx, defines, places=places)
    return matmul.load(ctx, shader, defines)


def sweep(ctx, quick: bool = False) -> list[dict]:
    rng, clock = np.random.default_rng(0), timing.Clock(ctx)
    sizes = QUICK_SIZES if quick else SIZES
    kernels = {}
    for name, (shader, defines, places, at) in CANDIDATES.items():
        try:
            kernel = load(ctx, shader, defines, QUICK_PLACES if quick and places else places)
        except gl.ShaderError as error:       # llvmpipe has 32 KiB of shared memory, NVIDIA 48 KiB
            if "shared memory" not in str(error).lower():
                raise
            print(f"skipped {name}: more shared memory than this driver gives a work group")
            continue
        for M, K, N in CHECK_SHAPES:
            a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
            if not check.rel_error(matmul.multiply(ctx, kernel, a, b), a.astype(np.float64) @ b) < 1e-5:
                raise RuntimeError(f"{name} does not match NumPy at {M}×{K}×{N}")
        kernels[name] = kernel
    print(f"all {len(kernels)} candidates match NumPy on {len(CHECK_SHAPES)} shapes")
    rows = []
    for i, n in enumerate(sizes):
        here = {name: k for name, k in kernels.items() if quick or n in CANDIDATES[name][3]}
        a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
        A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (n, n), name="C")
        ref = a.astype(np.float64) @ b
        for name, kernel in here.items():
            matmul.run(kernel, A, B, C)
            if not check.rel_error(C.read(), ref) < 1e-5:
                raise RuntimeError(f"{name} does not match NumPy at {n}³")

        samples = {name: matmul.stream_sample(k, A, B, C, clock, STREAM) for name, k in here.items()}
        cublas = None if quick else bench_matmul.cublas_sample(n, STREAM)
        if cublas is not None:
            samples["cuBLAS fp32 (torch, TF32 off)"] = cublas
        timings = timing.measure_interleaved(samples, repeat=3 if quick else REPEAT,
                                             warmup=0.05 if quick else WARMUP)
        base = timings.get("cuBLAS fp32 (torch, TF32 off)")
        print(f"\n{n}³ ({clock.source} / CUDA events; {STREAM} calls a sample, median and 20–80 % band of "
              f"{3 if quick else REPEAT} interleaved samples after {WARMUP if not quick else 0.05:g} s warm-up):")
        for name, t in sorted(timings.items(), key=lambda kv: kv[1].median):
            tflops = 2 * n ** 3 / t.median / 1e12
            share = base.median / t.median if base else None
            groups = "" if name not in here else f" {np.prod(matmul.groups(here[name], n, n, n))} groups"
            print(f"  {name:46s} {t.text('µs'):>26s} {tflops:6.1f} TFLOP/s"
                  + (f" {100 * share:5.1f} % of cuBLAS" if share else "") + groups)
            shader, defines, places, _ = CANDIDATES.get(name, (None, None, None, None))
            rows.append({"impl": name, "size": n, **t.row("us", 1e6), "tflops": tflops, "cublas_share": share,
                         "shader": shader, "defines": defines, "places": places, "clock": t.clock})
        for array in (A, B, C):
            array.release()
    return rows


if __name__ == "__main__":
    from .. import mode

    context = gl.create_context()
    print(gl.describe(context), "| SMs:", matmul.sm_count(context))
    quick = "--quick" in sys.argv or mode.is_quick()
    result = sweep(context, quick)
    if "--out" in sys.argv:
        bench_matmul.write_sweep(Path(sys.argv[sys.argv.index("--out") + 1]), context,
                    "python -m helpers.bench.top_rung " + " ".join(sys.argv[1:]), quick, result)

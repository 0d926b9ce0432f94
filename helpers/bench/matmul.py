"""Benchmark: GFLOP/s of every matmul rung against size, beside NumPy (CPU) and cuBLAS (where torch is).

    python -m helpers.bench matmul            # sizes 256 .. 4096 (QUICK=1: 64, 128, 256)

Square C[n,n] = A[n,n] @ B[n,n], 2n³ flops. Each rung is first checked against NumPy (float64) at one
size, then timed: kernel time by helpers.timing.Clock (GPU timer queries on a real GPU: the dispatch
alone, no upload or readback), median of several runs after warm-up. NumPy: wall clock of `a @ b` on
the CPU. cuBLAS: torch.matmul in float32 with TF32 off (allow_tf32 = False), timed by CUDA events, in
the same run, only where `import torch` works and CUDA is available.
"""

from __future__ import annotations

import statistics

import numpy as np

from .. import check, gl, matmul, timing

SIZES, QUICK_SIZES = (256, 512, 1024, 2048, 4096), (64, 128, 256)


def _repeat(seconds_guess: float, quick: bool) -> int:
    if quick:
        return 3
    return 5 if seconds_guess > 0.02 else 20


def cublas_seconds(n: int, repeat: int = 20):
    """Median seconds of an n³ float32 torch matmul on CUDA with TF32 off, or None without torch/CUDA."""
    try:
        import torch
    except Exception:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(n, n, device="cuda", dtype=torch.float32)
    b = torch.randn(n, n, device="cuda", dtype=torch.float32)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def numpy_seconds(a, b, repeat: int) -> float:
    """Median wall-clock seconds of a @ b over `repeat` calls, after one warm-up."""
    return timing.median_seconds(lambda: timing.wall_seconds(lambda: a @ b), repeat=repeat, warmup=1)


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
    have_torch = cublas_seconds(64, repeat=1) is not None
    rows = []
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        A, B = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B")
        C = gl.empty(ctx, (n, n), name="C")
        flops = 2.0 * n ** 3
        fastest = kernels.get(matmul.FASTEST, next(iter(kernels.values())))
        matmul.warm_up(ctx, lambda: matmul.run(fastest, A, B, C, barrier=False), 0.0 if quick else 0.2)
        for name, kernel in kernels.items():
            dispatch = lambda: matmul.run(kernel, A, B, C, barrier=False)  # noqa: E731
            guess = clock.kernel(dispatch)
            seconds = timing.median_seconds(lambda: clock.kernel(dispatch), repeat=_repeat(guess, quick), warmup=2)
            rows.append({"impl": name[:-5], "size": n, "seconds": seconds, "gflops": flops / seconds / 1e9,
                         "clock": clock.source})
        seconds = numpy_seconds(a, b, 3 if quick or n >= 2048 else 10)
        rows.append({"impl": "numpy (CPU)", "size": n, "seconds": seconds, "gflops": flops / seconds / 1e9,
                     "clock": "wall clock"})
        if have_torch:
            seconds = cublas_seconds(n)
            rows.append({"impl": "cuBLAS fp32 (torch, TF32 off)", "size": n, "seconds": seconds,
                         "gflops": flops / seconds / 1e9, "clock": "CUDA events"})
        for array in (A, B, C):
            array.release()
    print(table(rows))
    return rows


def _fmt(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def table(rows: list[dict]) -> str:
    """GFLOP/s per implementation (rows) and size (columns); then each rung's share of cuBLAS at the top size."""
    sizes = sorted({r["size"] for r in rows})
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    get = {(r["impl"], r["size"]): r for r in rows}
    lines = [f"{'GFLOP/s':<32s}" + "".join(f"{n:>10d}" for n in sizes) + "  clock"]
    for impl in impls:
        cells = "".join(f"{_fmt(get[impl, n]['gflops']):>10s}" if (impl, n) in get else f"{'':>10s}" for n in sizes)
        clock = next(r["clock"] for r in rows if r["impl"] == impl)
        lines.append(f"{impl:<32s}{cells}  {clock}")
    top = sizes[-1]
    cublas = next((r for r in rows if r["impl"].startswith("cuBLAS") and r["size"] == top), None)
    if cublas:
        lines.append(f"share of cuBLAS fp32 at {top}³ (same run):")
        for impl in impls:
            if impl.startswith("matmul_"):
                r = get[impl, top]
                lines.append(f"  {impl:<30s} {r['seconds'] * 1e3:8.3f} ms  {100 * cublas['seconds'] / r['seconds']:5.1f} %")
    else:
        lines.append("(no cuBLAS column: torch with CUDA is not available here)")
    return "\n".join(lines)


def plot(rows: list[dict], title: str = ""):
    """GFLOP/s against size, one line per implementation, log axes."""
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for impl in dict.fromkeys(r["impl"] for r in rows):
        mine = [r for r in rows if r["impl"] == impl]
        style = "--" if not impl.startswith("matmul_") else "-"
        ax.plot([r["size"] for r in mine], [r["gflops"] for r in mine], style, marker="o", label=impl)
    ax.set(xscale="log", yscale="log", xlabel="n  (C[n,n] = A[n,n] @ B[n,n])", ylabel="GFLOP/s", title=title)
    ax.set_xticks(sorted({r["size"] for r in rows}), [str(n) for n in sorted({r["size"] for r in rows})])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # log axes label minor ticks too: they overlapped
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig

"""Benchmark: the training step's two big products, by the matmul ladder and by cuBLAS, at the step's shapes.

    python -m helpers.bench products          # QUICK=1: the small net only, for llvmpipe

Read by notebook 08 (cuBLAS's rows are one of its limits). A step of 784-H-10 at batch 128 holds two products much
larger than the rest:

  * layer 1, Z1 = X·W1:   A[128, 784] @ B[784, H]
  * the weights, dW1 = Xᵀ·dZ1:   A[784, 128] @ B[128, H]

The fused trainer computes each inside a kernel that does more (the head, the update). Here each is alone,
as C = A @ B on contiguous float32 operands, so the kernels' time can be set beside what the product itself
costs:

  * GLSL: every plain rung of the ladder (matmul_8_splitk, two dispatches, is left out) with its own
    #defines, and the rungs that take a tile shape also with SMALL_TILES, the blocks that make enough work
    groups at these shapes. Each candidate is checked against NumPy at the shape, then timed as a trainer
    issues it: bound once, then a stream of `program.run` + memory barrier, by helpers.timing.Clock (GPU
    timer queries on a GPU), the median of several streams divided by the dispatches.
  * cuBLAS: torch.matmul in float32 with TF32 off, CALLS calls captured in one CUDA graph and replayed (a
    CUDA graph replays recorded launches without Python issuing each: this is the GPU's time for the
    product, not Python's), timed by CUDA events; only where `import torch` works with CUDA.
"""

from __future__ import annotations


import numpy as np

from .. import gl, matmul, timing
from .fused import BATCH, HIDDEN, WIDE
from .matmul import check_rung, torch_fp32

INPUTS, STEPS = 784, 469        # a full MNIST epoch: ceil(60,000 / 128) steps
CALLS = 20                      # products in one timed stream (GLSL) or one CUDA graph (cuBLAS)
SMALL_TILES = {                 # over a rung's own #defines: 32 invocations a subgroup, laid out 4 × 8
    "32×32 blocks, 4×4 a thread": {"BM": 32, "BN": 32, "TM": 4, "TN": 4, "THREADS": 64, "LM": 4, "LN": 8},
    "16×32 blocks, 4×4 a thread": {"BM": 16, "BN": 32, "TM": 4, "TN": 4, "THREADS": 32, "LM": 4, "LN": 8},
}
TILED = ("matmul_6_subgroup.comp", "matmul_9_interior.comp")   # the rungs SMALL_TILES applies to
CUBLAS = "cuBLAS fp32 (torch, TF32 off), in a CUDA graph"


def shapes(hidden: int) -> dict[str, tuple[int, int, int]]:
    """The step's two products for 784-hidden-10 at batch 128: name -> (M, K, N) of C[M,N] = A[M,K] @ B[K,N]."""
    return {"layer 1: Z1 = X·W1": (BATCH, INPUTS, hidden), "weights: dW1 = Xᵀ·dZ1": (INPUTS, BATCH, hidden)}


def candidates() -> list[tuple[str, dict | None]]:
    """(rung, #defines) pairs to time: every plain rung as it is, then the tiled rungs with SMALL_TILES."""
    plain = [(name, None) for name in matmul.rungs() if name != matmul.SPLITK]
    return plain + [(name, defines) for name in TILED for defines in SMALL_TILES.values()]


def label(name: str, defines: dict | None) -> str:
    tiles = next((k for k, v in SMALL_TILES.items() if v == defines), None)
    return name.removesuffix(".comp") + (f", {tiles}" if tiles else "")


def dispatch_seconds(ctx, kernel, A, B, C, clock, repeat: int, warmup: float | None = None) -> timing.Timing:
    """A timing.Timing of one dispatch of C = A @ B with its barrier, in a stream as a trainer issues it
    (bound once); warm-up by time (timing.warm_up)."""
    (M, K), N = A.shape, B.shape[1]
    groups = matmul.groups(kernel, M, N, K)
    matmul.run(kernel, A, B, C)                                   # binds, sets M, N, K, checks the lengths
    calls = 1 if gl.is_software(ctx) else CALLS

    def dispatches():
        for _ in range(calls):
            kernel.program.run(*groups)
            ctx.memory_barrier()
    return timing.measure(lambda: clock.kernel(dispatches) / calls, repeat, warmup, clock=clock.source)


def cublas_seconds(M: int, K: int, N: int, repeat: int = 7):
    """A timing.Timing of one M×K×N float32 torch matmul (TF32 off) replayed in a CUDA graph of CALLS, after
    a warm-up by time; None without torch and CUDA."""
    torch = torch_fp32()
    if torch is None:
        return None
    a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
    c = torch.empty(M, N, device="cuda")
    side = torch.cuda.Stream()                  # warm-up on a side stream before capture, as torch asks
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch.matmul(a, b, out=c)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(CALLS):
            torch.matmul(a, b, out=c)

    def sample():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / CALLS
    return timing.measure(sample, repeat, clock="CUDA events")     # sustained work first: an idle GPU's clock is low


def ladder_rows(ctx, hiddens, quick: bool = False) -> list[dict]:
    """Every candidate rung at both products of each 784-hidden-10 step, checked against NumPy, then timed."""
    rng = np.random.default_rng(0)
    clock = timing.Clock(ctx)
    rows = []
    for hidden in hiddens:
        for product, (M, K, N) in shapes(hidden).items():
            a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
            ref = a.astype(np.float64) @ b
            A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (M, N), name="C")
            first = True
            for name, defines in candidates():
                kernel = matmul.load(ctx, name, defines)
                check_rung(ctx, kernel, a, b, ref, label(name, defines))
                took = dispatch_seconds(ctx, kernel, A, B, C, clock, repeat=3 if quick else 7,
                                        warmup=None if first else 0.1)   # one full warm-up per product
                first = False
                rows.append({"product": product, "hidden": hidden, "shape": [M, K, N], "impl": label(name, defines),
                             **took.row("seconds", 1.0), "clock": clock.source})
                kernel.program.release()
            for array in (A, B, C):
                array.release()
    return rows


def cublas_rows(hiddens) -> list[dict]:
    """cuBLAS at both products of each step, where torch has CUDA (else no rows)."""
    rows = []
    for hidden in hiddens:
        for product, shape in shapes(hidden).items():
            took = cublas_seconds(*shape)
            if took is not None:
                rows.append({"product": product, "hidden": hidden, "shape": list(shape), "impl": CUBLAS,
                             **took.row("seconds", 1.0), "clock": "CUDA events around a graph replay"})
    return rows


def run(ctx, quick: bool) -> list[dict]:
    hiddens = (HIDDEN,) if quick else (HIDDEN, WIDE)
    rows = ladder_rows(ctx, hiddens, quick) + cublas_rows(hiddens)
    print(table(rows))
    return rows


def fastest(rows: list[dict], hidden: int, product: str, cublas: bool = False) -> dict | None:
    """The fastest GLSL row (or the cuBLAS row) for one product of 784-hidden-10; None if there is none."""
    mine = [r for r in rows if r["hidden"] == hidden and r["product"] == product and (r["impl"] == CUBLAS) == cublas]
    return min(mine, key=lambda r: r["seconds"]) if mine else None


def step_seconds(rows: list[dict], hidden: int, cublas: bool = False) -> float | None:
    """Both products of one step of 784-hidden-10, each by its fastest rung (or by cuBLAS), added up: the median
    of step_timing; None if one is missing."""
    t = step_timing(rows, hidden, cublas)
    return None if t is None else t.median


def step_timing(rows: list[dict], hidden: int, cublas: bool = False) -> timing.Timing | None:
    """step_seconds as a Timing: both products' medians added up, and their 20-80 % bands added up end to end
    (the widest band the sum can have; a row stored without a band adds its median to both ends), as five
    samples whose 20th and 80th percentiles are those ends; None if one product is missing."""
    best = [fastest(rows, hidden, product, cublas) for product in shapes(hidden)]
    if None in best:
        return None
    low, high = (sum(r.get(f"seconds_{end}", r["seconds"]) for r in best) for end in ("low", "high"))
    mid = sum(r["seconds"] for r in best)
    return timing.Timing((low, low, mid, high, high), best[0].get("clock", timing.WALL))


def table(rows: list[dict]) -> str:
    lines = [f"{'product':28s} {'M×K×N':>14s} {'rung of lowest median':52s} {'µs':>7s} {'cuBLAS µs':>10s}"]
    for hidden in sorted({r["hidden"] for r in rows}):
        for product in shapes(hidden):
            best, blas = fastest(rows, hidden, product), fastest(rows, hidden, product, cublas=True)
            if best is None:
                continue
            size = "×".join(map(str, best["shape"]))
            lines.append(f"{product:28s} {size:>14s} {best['impl']:52s} {1e6 * best['seconds']:7.2f} "
                         + (f"{1e6 * blas['seconds']:10.2f}" if blas else f"{'(no torch)':>10s}"))
    return "\n".join(lines)

"""The matmul ladder of notebook 03: every glsl/matmul_<n>_<idea>.comp rung, run the same way.

Introduced in notebook 03. Every rung computes C[M,N] = A[M,K] @ B[K,N] (float32, row-major) with
bindings 0 A, 1 B, 2 C and uniforms M, N, K; they differ in how many outputs a work group covers, which
each file's banner states (`// Dispatch ... groups (ceil(N/BN), ceil(M/BM), 1)`) and gl.Kernel.groups reads.

    k = load(ctx, "matmul_5_pipelined.comp")          # a gl.Kernel; defines={"BK": 16} to tune
    k.groups(M=300, N=200)                            # (2, 3, 1): the banner's groups with BM = BN = 128
    C = gl.empty(ctx, (M, N), name="C")               # NaN: an unwritten element shows
    run(k, A, B, C)                                   # dispatch k.groups(M=M, N=N), barrier
    c = multiply(ctx, "matmul_3_blocked.comp", a, b)  # NumPy in, NumPy out (uploads every call)

rungs() finds every file, so a new rung joins the ladder (tests, benchmark, notebook 03) by its name alone.
matmul_6_subgroup.comp gives each subgroup of 32 invocations a compact sub-tile of the block (warp tiling);
load(ctx, name, {"USE_SUBGROUP": 1}) also passes B between invocations by subgroupShuffle where the driver
has GL_KHR_shader_subgroup_shuffle (has_subgroup_shuffle(ctx) says whether it does). Its tile #defines are
tuned on a GPU with `python -m helpers.bench.matmul sweep`. matmul_7_vec4k.comp reads A as vec4 along K,
swizzles work groups for L2 (GROUP_M) and goes to BK 32 (COPIES 1); `python -m helpers.bench.matmul sweep7`
times its configurations beside matmul_6_subgroup.
"""

from __future__ import annotations

import re

from . import gl

FASTEST = "matmul_5_pipelined.comp"   # on the H100: notebooks/results/bench-h100.json (matmul_6 not yet timed there)


def rungs() -> list[str]:
    """The ladder's files in order: matmul_1_*.comp, matmul_2_*.comp, ..."""
    files = [p.name for p in gl.GLSL_DIR.glob("matmul_*.comp")]
    return sorted(files, key=lambda name: int(re.match(r"matmul_(\d+)_", name).group(1)))


def has_subgroup_shuffle(ctx) -> bool:
    """Whether GLSL on this context defines GL_KHR_shader_subgroup_shuffle, the macro the shaders test.

    NVIDIA's extension string may list only GL_KHR_shader_subgroup (the features are a separate query),
    so ask the compiler itself: a one-invocation shader writes 1 under `#ifdef`, 0 otherwise.
    """
    import numpy as np

    source = """#version 430
#extension GL_KHR_shader_subgroup_shuffle : enable
layout(local_size_x = 1) in;
layout(std430, binding = 0) writeonly buffer Out { uint flag[]; };
void main() {
#ifdef GL_KHR_shader_subgroup_shuffle
    flag[0] = 1u;
#else
    flag[0] = 0u;
#endif
}
"""
    program = ctx.compute_shader(source)
    buffer = ctx.buffer(reserve=4)
    try:
        buffer.bind_to_storage_buffer(0)
        program.run(1, 1, 1)
        ctx.memory_barrier()
        return bool(np.frombuffer(buffer.read(), dtype=np.uint32)[0])
    finally:
        buffer.release()
        program.release()


def load(ctx, name: str, defines: dict | None = None) -> gl.Kernel:
    return gl.Kernel(ctx, name, defines)


def run(kernel: gl.Kernel, A: gl.GPUArray, B: gl.GPUArray, C: gl.GPUArray, barrier: bool = True) -> None:
    """C = A @ B on the GPU, shapes taken from the GPUArrays (checked), work groups from the banner."""
    (M, K), (K2, N) = A.shape, B.shape
    if K2 != K or C.shape != (M, N):
        raise ValueError(f"matmul: A {A.shape} @ B {B.shape} -> C {C.shape} do not fit; "
                         f"C must be ({M}, {N}) and B must have {K} rows")
    kernel.run(*kernel.groups(M=M, N=N), bindings={0: A, 1: B, 2: C}, barrier=barrier, M=M, N=N, K=K)


def multiply(ctx, kernel, a, b):
    """a @ b through one rung (a name or a Kernel): upload, dispatch, read back. For checks, not speed."""
    import numpy as np

    kernel = load(ctx, kernel) if isinstance(kernel, str) else kernel
    A = gl.upload(ctx, np.ascontiguousarray(a, dtype=np.float32), "A")
    B = gl.upload(ctx, np.ascontiguousarray(b, dtype=np.float32), "B")
    C = gl.empty(ctx, (A.shape[0], B.shape[1]), name="C")
    try:
        run(kernel, A, B, C)
        return C.read()
    finally:
        for array in (A, B, C):
            array.release()


CHECK_SHAPES = ((37, 70, 13), (1, 300, 77), (77, 300, 1))   # (M, K, N): no tile fits, one row, one column


def demo(ctx, name: str, n: int, clock, rng=None) -> dict:
    """Notebook 03's rhythm for one rung: check it against NumPy on CHECK_SHAPES, then time it at n³.

    Prints one line each; returns {"check": bool, "seconds": median kernel seconds, "gflops": ...}.
    """
    import numpy as np

    from . import check, timing

    rng = rng or np.random.default_rng(0)
    kernel = load(ctx, name)
    ok = True
    for M, K, N in CHECK_SHAPES:
        a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
        ok &= check.rel_error(multiply(ctx, kernel, a, b), a.astype(np.float64) @ b) < 1e-5
    shapes = ", ".join("×".join(map(str, s)) for s in CHECK_SHAPES)
    print(f"{name}: matches NumPy on {shapes}: {'OK' if ok else 'MISMATCH'}")
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (n, n), name="C")
    warm_up(ctx, lambda: run(kernel, A, B, C, barrier=False))
    seconds = timing.median_seconds(lambda: clock.kernel(lambda: run(kernel, A, B, C, barrier=False)),
                                    repeat=10, warmup=1)
    for array in (A, B, C):
        array.release()
    gflops = 2 * n ** 3 / seconds / 1e9
    print(f"{name}: {n}³ in {seconds * 1e3:.3f} ms = {gflops:.1f} GFLOP/s ({clock.source}, median of 10)")
    return {"check": ok, "seconds": seconds, "gflops": gflops}


def warm_up(ctx, fn, seconds: float = 0.3) -> None:
    """Call fn() (GPU work) for about `seconds` of wall clock: an idle GPU runs at low clocks until busy."""
    import time

    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        ctx.finish()

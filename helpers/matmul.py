"""The matmul ladder of notebook 03: every glsl/matmul_<n>_<idea>.comp rung, run the same way.

Introduced in notebook 03. Every rung computes C[M,N] = A[M,K] @ B[K,N] (float32, row-major) with
bindings 0 A, 1 B, 2 C and uniforms M, N, K; they differ in how many outputs a work group covers, which
this module reads from the file's `#define`s (BM×BN, or TILE×TILE, or LOCAL_Y×LOCAL_X).

    k = load(ctx, "matmul_5_pipelined.comp")          # a gl.Kernel; defines={"BK": 16} to tune
    C = gl.empty(ctx, (M, N), name="C")               # NaN: an unwritten element shows
    run(k, A, B, C)                                   # dispatch (ceil(N/BN), ceil(M/BM)) groups, barrier
    c = multiply(ctx, "matmul_3_blocked.comp", a, b)  # NumPy in, NumPy out (uploads every call)
"""

from __future__ import annotations

import re

from . import gl

FASTEST = "matmul_5_pipelined.comp"   # measured on the H100: see notebooks/results/bench-h100.json


def rungs() -> list[str]:
    """The ladder's files in order: matmul_1_*.comp, matmul_2_*.comp, ..."""
    files = [p.name for p in gl.GLSL_DIR.glob("matmul_*.comp")]
    return sorted(files, key=lambda name: int(re.match(r"matmul_(\d+)_", name).group(1)))


def define(source: str, name: str) -> int | None:
    """The integer value of `#define NAME value` in a shader source, or None."""
    match = re.search(rf"^[ \t]*#define[ \t]+{name}[ \t]+(\d+)", source, re.MULTILINE)
    return int(match.group(1)) if match else None


def block(kernel: gl.Kernel) -> tuple[int, int]:
    """(rows, columns) of C that one work group computes, from the kernel's defines."""
    for rows, cols in (("BM", "BN"), ("TILE", "TILE"), ("LOCAL_Y", "LOCAL_X")):
        m, n = define(kernel.source, rows), define(kernel.source, cols)
        if m and n:
            return m, n
    raise gl.ShaderError(f"{kernel.name}: no BM/BN, TILE or LOCAL_X/LOCAL_Y define to size the dispatch")


def groups(kernel: gl.Kernel, M: int, N: int) -> tuple[int, int]:
    """Work groups (x along N, y along M) that cover C[M,N]."""
    rows, cols = block(kernel)
    return gl.groups(N, cols), gl.groups(M, rows)


def load(ctx, name: str, defines: dict | None = None) -> gl.Kernel:
    return gl.Kernel(ctx, name, defines)


def run(kernel: gl.Kernel, A: gl.GPUArray, B: gl.GPUArray, C: gl.GPUArray, barrier: bool = True) -> None:
    """C = A @ B on the GPU, shapes taken from the GPUArrays (checked)."""
    (M, K), (K2, N) = A.shape, B.shape
    if K2 != K or C.shape != (M, N):
        raise ValueError(f"matmul: A {A.shape} @ B {B.shape} -> C {C.shape} do not fit; "
                         f"C must be ({M}, {N}) and B must have {K} rows")
    kernel.run(*groups(kernel, M, N), bindings={0: A, 1: B, 2: C}, barrier=barrier, M=M, N=N, K=K)


def multiply(ctx, kernel, a, b):
    """a @ b through one rung (a name or a Kernel): upload, dispatch, read back. For checks, not speed."""
    import numpy as np

    kernel = load(ctx, kernel) if isinstance(kernel, str) else kernel
    A = gl.upload(ctx, np.ascontiguousarray(a, dtype=np.float32), "A")
    B = gl.upload(ctx, np.ascontiguousarray(b, dtype=np.float32), "B")
    C = gl.empty(ctx, (A.shape[0], B.shape[1]), name="C")
    try:
        run(kernel, A, B, C)
        return C.read().copy()
    finally:
        for array in (A, B, C):
            array.release()

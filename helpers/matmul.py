"""The matmul ladder of notebook 04: every glsl/matmul_<n>_<idea>.comp rung, run the same way.

Introduced in notebook 04. Every rung computes C[M,N] = A[M,K] @ B[K,N] (float32, row-major) with
bindings 0 A, 1 B, 2 C and uniforms M, N, K; they differ in how many outputs a work group covers, which
each file's banner states (`// Dispatch ... groups (ceil(N/BN), ceil(M/BM), 1)`) and gl.Kernel.groups reads.

    k = load(ctx, "matmul_5_pipelined.comp")          # a gl.Kernel; defines={"BK": 16} to tune
    k.groups(M=300, N=200)                            # (2, 3, 1): the banner's groups with BM = BN = 128
    C = gl.empty(ctx, (M, N), name="C")               # NaN: an unwritten element shows
    run(k, A, B, C)                                   # dispatch k.groups(M=M, N=N), barrier
    c = multiply(ctx, "matmul_3_blocked.comp", a, b)  # NumPy in, NumPy out (uploads every call)
    stream_sample(k, A, B, C, clock, streamed(ctx))   # a sample() for timing.measure: one dispatch's seconds
                                                      # from STREAM back to back (one on llvmpipe); demo and
                                                      # the benchmark time every rung this way

rungs() finds every file, so a new rung joins the ladder (tests, benchmark, notebook 04) by its name alone.
matmul_6_subgroup.comp gives each subgroup of 32 invocations a compact sub-tile of the block (warp tiling);
load(ctx, name, {"USE_SUBGROUP": 1}) also passes B between invocations by subgroupShuffle where the driver
has GL_KHR_shader_subgroup_shuffle (has_subgroup_shuffle(ctx) says whether it does). matmul_7_vec4k.comp
reads A as vec4 along K, swizzles work groups for L2 (GROUP_M) and goes to BK 32 (COPIES 1);
`python -m helpers.bench.matmul sweep7` times its configurations beside matmul_6_subgroup.

matmul_8_splitk.comp cuts the sum over k into pieces, one work group each, when C has too few tiles to fill
the GPU, and splitk_sum_1_vec4.comp adds the pieces: two shaders and a buffer for the pieces, so load()
returns a SplitK for it, which run() and multiply() take like any rung:

    k = load(ctx, "matmul_8_splitk.comp")             # a SplitK: both kernels, the pieces' buffer
    k.pieces(M=1024, N=1024, K=1024)                  # 4 on a 132-SM GPU: 64 tiles × 4 = 256 work groups
    run(k, A, B, C)                                   # two dispatches (one when there is one piece)

top_rung(M, N, K) names the ladder's fastest rung for a size and its #defines (TOP_RUNGS, measured by
`python -m helpers.bench.top_rung`): load(ctx, *top_rung(1024, 1024, 1024)) is matmul_9 with 64×64 blocks,
load(ctx, *top_rung(4096, 4096, 4096)) matmul_10 with its file's own.

matmul_9_interior.comp gives the blocks that lie wholly inside C (K a multiple of BK, N of 4) a tile loop with
no bounds checks; it is a plain rung, loaded and run like matmul_6. tile_loop(gl.driver_assembly(k.program))
counts what the driver made of a rung's tile loop, where its program binary holds assembly text (NVIDIA).
"""

from __future__ import annotations

import re

from . import findings, gl, timing

FASTEST = "matmul_5_pipelined.comp"   # the warm-up and reference rung of the benchmark and the tests


def rungs() -> list[str]:
    """The ladder's files in order: matmul_1_*.comp, matmul_2_*.comp, ..."""
    files = [p.name for p in gl.GLSL_DIR.glob("matmul_*.comp")]
    return sorted(files, key=lambda name: int(re.match(r"matmul_(\d+)_", name).group(1)))


def ask_glsl(ctx, extension: str, value: str) -> int:
    """What a one-invocation shader finds for `value` (a GLSL uint expression) with `extension` enabled, or 0
    where the compiler does not define the extension's macro: ask_glsl(ctx, "GL_NV_shader_thread_group",
    "gl_SMCountNV") is the SM count on NVIDIA, 0 elsewhere."""
    import numpy as np

    source = f"""#version 430
#extension {extension} : enable
layout(local_size_x = 1) in;
layout(std430, binding = 0) writeonly buffer Out {{ uint answer[]; }};
void main() {{
#ifdef {extension}
    answer[0] = uint({value});
#else
    answer[0] = 0u;
#endif
}}
"""
    program = ctx.compute_shader(source)
    buffer = ctx.buffer(reserve=4)
    try:
        buffer.bind_to_storage_buffer(0)
        program.run(1, 1, 1)
        ctx.memory_barrier()
        return int(np.frombuffer(buffer.read(), dtype=np.uint32)[0])
    finally:
        buffer.release()
        program.release()


def has_subgroup_shuffle(ctx) -> bool:
    """Whether GLSL on this context defines GL_KHR_shader_subgroup_shuffle, the macro the shaders test.
    NVIDIA's extension string may list only GL_KHR_shader_subgroup (the features are a separate query),
    so ask the compiler itself."""
    return ask_glsl(ctx, "GL_KHR_shader_subgroup_shuffle", "1") == 1


def sm_count(ctx) -> int | None:
    """The GPU's SMs (streaming multiprocessors), from gl_SMCountNV where the driver has
    GL_NV_shader_thread_group (NVIDIA); None elsewhere (llvmpipe, other vendors)."""
    return ask_glsl(ctx, "GL_NV_shader_thread_group", "gl_SMCountNV") or None


SPLITK, SPLITK_SUM = "matmul_8_splitk.comp", "splitk_sum_1_vec4.comp"
GROUPS_PER_SM = 2   # work groups of matmul_6's 128×128 tile (and matmul_8's) an H100 SM holds at once: the
                    # most its shared memory allows (the appendix counts them from inside the shader)


class SplitK:
    """matmul_8_splitk.comp and splitk_sum_1_vec4.comp as one rung. `places`: the work groups the GPU runs at
    once (default GROUPS_PER_SM × sm_count(ctx); without an SM count, one piece: no split)."""

    def __init__(self, ctx, defines: dict | None = None, places: int | None = None):
        self.ctx, self.name = ctx, SPLITK
        self.kernel = gl.Kernel(ctx, SPLITK, defines)
        self.sum = gl.Kernel(ctx, SPLITK_SUM)
        if places is None:
            places = GROUPS_PER_SM * (sm_count(ctx) or 0)
        self.places = places
        self.P = None            # the pieces, a GPUArray grown when a call needs more

    def __repr__(self):
        return f"SplitK(defines={self.kernel.defines}, places={self.places})"

    def define(self, name: str) -> int:
        return self.kernel.define(name)

    def pieces(self, M: int, N: int, K: int) -> int:
        """How many pieces to cut the sum over k into: as many as fill the GPU's places with tiles of C
        (never more, never a piece shorter than BK). One when the tiles alone fill it."""
        tiles = gl.groups(M, self.define("BM")) * gl.groups(N, self.define("BN"))
        return max(1, min(self.places // tiles, gl.groups(K, self.define("BK"))))

    def piece_length(self, M: int, N: int, K: int) -> int:
        """KS, the k each work group sums over: a multiple of BK, ceil(K/KS) = the pieces (or fewer)."""
        BK = self.define("BK")
        return BK * gl.groups(gl.groups(K, BK), self.pieces(M, N, K))

    def groups(self, M: int, N: int, K: int) -> tuple[int, int, int]:
        return self.kernel.groups(M=M, N=N, K=K, KS=self.piece_length(M, N, K))

    def run(self, A: gl.GPUArray, B: gl.GPUArray, C: gl.GPUArray, M: int, N: int, K: int,
            barrier: bool = True) -> None:
        """C[:M*N] = A @ B: one dispatch into C when there is one piece; else the pieces into self.P, a
        barrier, and the sum into C."""
        KS = self.piece_length(M, N, K)
        pieces = gl.groups(K, KS)
        uniforms = dict(M=M, N=N, K=K, KS=KS)
        if pieces == 1:
            self.kernel.run(*self.kernel.groups(**uniforms), bindings={0: A, 1: B, 2: C}, barrier=barrier, **uniforms)
            return
        if self.P is None or self.P.size < pieces * M * N:
            if self.P is not None:
                self.P.release()
            self.P = gl.empty(self.ctx, (pieces * M * N,), name="P")
        self.kernel.run(*self.kernel.groups(**uniforms), bindings={0: A, 1: B, 2: self.P}, **uniforms)
        self.sum.run(*self.sum.groups(M=M, N=N), bindings={2: C, 3: self.P}, barrier=barrier,
                     M=M, N=N, pieces=pieces)

    def release(self) -> None:
        if self.P is not None:
            self.P.release()
            self.P = None


def pieces_in_numpy(a, b, KS: int):
    """What matmul_8_splitk writes to P, in float64: piece z is A[:, z*KS:(z+1)*KS] @ B[z*KS:(z+1)*KS, :]."""
    import numpy as np

    return np.stack([a[:, k:k + KS].astype(np.float64) @ b[k:k + KS] for k in range(0, a.shape[1], KS)])


# The ladder's top rung by size of C, measured by `python -m helpers.bench.top_rung` (H200, 2026-11-28, against
# cuBLAS fp32 in the same run, interleaved; notebooks/results/top-rung-h200.json): rows (most outputs M*N, file,
# #defines), the first that holds wins. Up to 1024² outputs the 128×128 blocks are too few for the GPU (64 for
# 132 SMs: 54 % of cuBLAS at 1024³ for matmul_9, 58 % for matmul_10); matmul_9_interior with 64×64 blocks of
# 8×4 outputs a thread, 128 threads, makes 256 (98 %; matmul_10 with the same blocks 97 %). Split-K with
# matmul_9's unchecked loop (matmul_8_splitk, INTERIOR 1, 4 pieces) was 4 % faster there (102 %), at the price of
# a second dispatch and a buffer of pieces; the table keeps to one dispatch a product. At 2048³ and 4096³
# matmul_10_prefetch with its file's 128×128 blocks was the fastest (91 % at both, matmul_9 86-87 %). Between
# 1024² and 2048² outputs nothing was measured.
TOP_RUNGS = ((1024 * 1024, "matmul_9_interior.comp", {"BM": 64, "BN": 64, "TM": 8, "TN": 4, "THREADS": 128}),
             (None, "matmul_10_prefetch.comp", {}))


def top_rung(M: int, N: int, K: int) -> tuple[str, dict]:
    """The ladder's fastest rung for C[M,N] = A[M,K] @ B[K,N]: (file, #defines) from the first row of TOP_RUNGS
    whose limit on the outputs M*N holds (None: no limit). load(ctx, *top_rung(M, N, K)) loads it. K does not
    choose today (no row is split-K); it is there for a row that would."""
    for most, name, defines in TOP_RUNGS:
        if most is None or M * N <= most:
            return name, dict(defines)
    raise ValueError("TOP_RUNGS needs a last row with no limit")


def load(ctx, name: str, defines: dict | None = None) -> gl.Kernel | SplitK:
    """A rung by file name: a gl.Kernel, or a SplitK for matmul_8_splitk.comp."""
    return SplitK(ctx, defines) if name == SPLITK else gl.Kernel(ctx, name, defines)


def groups(kernel: gl.Kernel | SplitK, M: int, N: int, K: int) -> tuple[int, int, int]:
    """The work groups of one C[M,N] = A[M,K] @ B[K,N] by a rung (for a SplitK, its pieces' dispatch)."""
    return kernel.groups(M, N, K) if isinstance(kernel, SplitK) else kernel.groups(M=M, N=N)


def run(kernel: gl.Kernel | SplitK, A: gl.GPUArray, B: gl.GPUArray, C: gl.GPUArray, barrier: bool = True) -> None:
    """C = A @ B on the GPU, shapes taken from the GPUArrays (checked), work groups from the banner."""
    (M, K), (K2, N) = A.shape, B.shape
    if K2 != K or C.shape != (M, N):
        raise ValueError(f"matmul: A {A.shape} @ B {B.shape} -> C {C.shape} do not fit; "
                         f"C must be ({M}, {N}) and B must have {K} rows")
    if isinstance(kernel, SplitK):
        kernel.run(A, B, C, M, N, K, barrier=barrier)
        return
    kernel.run(*kernel.groups(M=M, N=N), bindings={0: A, 1: B, 2: C}, barrier=barrier, M=M, N=N, K=K)


def multiply(ctx, kernel, a, b):
    """a @ b through one rung (a name or a Kernel): upload, dispatch, read back. For checks, not speed."""
    import numpy as np

    loaded = isinstance(kernel, str)
    kernel = load(ctx, kernel) if loaded else kernel
    A = gl.upload(ctx, np.ascontiguousarray(a, dtype=np.float32), "A")
    B = gl.upload(ctx, np.ascontiguousarray(b, dtype=np.float32), "B")
    C = gl.empty(ctx, (A.shape[0], B.shape[1]), name="C")
    try:
        run(kernel, A, B, C)
        return C.read()
    finally:
        for array in (A, B, C):
            array.release()
        if loaded and isinstance(kernel, SplitK):
            kernel.release()


STREAM = 10   # dispatches timed back to back as one sample (the rung cells, the benchmark, cuBLAS alike)


def streamed(ctx) -> int:
    """Dispatches a timed stream holds: STREAM on a GPU, one on a software renderer (timed by the wall
    clock there, where every dispatch runs to its end before the next starts)."""
    return 1 if gl.is_software(ctx) else STREAM


def stream_sample(kernel, A, B, C, clock, calls: int):
    """A sample() for timing.measure: seconds of one dispatch of `kernel` (C = A @ B, with its barrier), from
    a stream of `calls` dispatches back to back timed by `clock`, divided by `calls`. A stream, because one
    dispatch timed alone also holds the time the GPU waits for the CPU to issue it."""
    def dispatches():
        for _ in range(calls):
            run(kernel, A, B, C)
    return lambda: clock.kernel(dispatches) / calls


def per_dispatch(calls: int) -> str:
    """How a timing of stream_sample was taken, for the sentence that prints it."""
    return "one dispatch a sample" if calls == 1 else f"per dispatch in streams of {calls} back to back"


def blocks(kernel) -> str:
    """A rung's block of C per work group: '128×128 blocks'."""
    return block_words({"BM": kernel.define("BM"), "BN": kernel.define("BN")})


def block_words(defines: dict) -> str:
    """'64×64 blocks' where #defines set BM and BN, '' where they do not."""
    return f"{defines['BM']}×{defines['BN']} blocks" if {"BM", "BN"} <= defines.keys() else ""


def configuration(name: str, n: int, defines: dict | None) -> str:
    """A rung with the #defines it ran under at n³, for a sentence that names n³ itself: the file's name (no
    .comp) alone for its own defaults; 'matmul_9_interior with top_rung's 64×64 blocks' where they are
    top_rung's choice at n³; 'matmul_9_interior with 64×64 blocks' or the #defines listed otherwise."""
    rung = name.removesuffix(".comp")
    if not defines:
        return rung
    what = block_words(defines) or ", ".join(f"{k} {v}" for k, v in defines.items())
    chosen = top_rung(n, n, n)
    top = chosen[0].removesuffix(".comp") == rung and chosen[1] == defines
    return f"{rung} with {'top_rung' + chr(39) + 's ' if top else ''}{what}"


CHECK_SHAPES = ((37, 70, 13), (1, 300, 77), (77, 300, 1))   # (M, K, N): no tile fits, one row, one column


def demo(ctx, name: str, n: int, clock, rng=None, repeat: int = 15, defines: dict | None = None) -> dict:
    """Notebook 04's rhythm for one rung: check it against NumPy on CHECK_SHAPES, then time it at n³.

    Prints one line each; returns {"check": bool, "timing": a timing.Timing of one dispatch (warm-up by time,
    `repeat` samples, each a stream of streamed(ctx) dispatches back to back divided by them, as the benchmark
    times every rung), "seconds": its median, "gflops": 2n³ over the median, "calls": the dispatches a
    sample, "defines": the #defines it ran under}.
    """
    return demo_in_turn(ctx, name, n, clock, [defines], rng, repeat)[0]


def demo_in_turn(ctx, name: str, n: int, clock, configs: list, rng=None, repeat: int = 15) -> list[dict]:
    """demo for several configurations of one rung (a list of #defines dicts, None for the file's own),
    each checked, then all timed in turn (timing.measure_interleaved), so that they can be compared; one
    result dict each, in the order given."""
    import numpy as np

    from . import check

    rng = rng or np.random.default_rng(0)
    kernels = [load(ctx, name, defines) for defines in configs]
    labels = [configuration(name, n, defines) for defines in configs]
    oks = []
    for kernel, label in zip(kernels, labels):
        ok = True
        for M, K, N in CHECK_SHAPES:
            a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
            ok &= check.rel_error(multiply(ctx, kernel, a, b), a.astype(np.float64) @ b) < 1e-5
        shapes = ", ".join("×".join(map(str, s)) for s in CHECK_SHAPES)
        print(f"{label}: matches NumPy on {shapes}: {'OK' if ok else 'MISMATCH'}")
        oks.append(ok)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (n, n), name="C")
    calls = streamed(ctx)
    try:
        took = timing.measure_interleaved({i: stream_sample(k, A, B, C, clock, calls) for i, k in enumerate(kernels)},
                                          repeat=repeat, clock=clock.source)
    finally:
        for array in (A, B, C):
            array.release()
        for kernel in kernels:
            if isinstance(kernel, SplitK):
                kernel.release()
    results = []
    turn = ", taken in turn" if len(configs) > 1 else ""
    for i, (label, ok, defines) in enumerate(zip(labels, oks, configs)):
        gflops = 2 * n ** 3 / took[i].median / 1e9
        print(f"{label}, {n}³, by {clock.source}, {per_dispatch(calls)}{turn}, median and 20–80 % of {repeat}: "
              f"{took[i].text()}, {gflops_text(gflops)} GFLOP/s")
        results.append({"check": ok, "timing": took[i], "seconds": took[i].median, "gflops": gflops,
                        "calls": calls, "defines": dict(defines or {})})
    return results


ASSEMBLY_KINDS = {"MAD.F32": "vec4 multiply-add", "LDS": "shared-memory read", "STS": "shared-memory write",
                  "LDB": "global load", "BAR": "barrier"}    # the instructions tile_loop counts, in NVIDIA's assembly


def tile_loop(assembly: str) -> dict | None:
    """The first loop (REP ... ENDREP) of a driver's assembly text (gl.driver_assembly), the tile loop of a
    matmul rung: {"instructions": its length, "counts": {kind: instructions of each ASSEMBLY_KINDS kind},
    "at": {kind: (first, last) instruction number of that kind, counted from the loop's start}}. None when
    the text has no loop (the compiler unrolled every loop, or it is not NVIDIA's assembly)."""
    lines = [line.strip() for line in assembly.splitlines()]
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("REP"))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("ENDREP"))
    except StopIteration:
        return None
    body = lines[start + 1:end]
    at = {kind: [i for i, line in enumerate(body) if line.split(" ")[0].startswith(kind)] for kind in ASSEMBLY_KINDS}
    return {"instructions": len(body), "counts": {kind: len(where) for kind, where in at.items()},
            "at": {kind: (where[0], where[-1]) for kind, where in at.items() if where}}


def loop_summary(loop: dict) -> str:
    """tile_loop's answer in one line: its length, each kind's count, where the global loads and the
    multiply-adds sit."""
    counts, at = loop["counts"], loop["at"]
    kinds = ", ".join(f"{counts[kind]} × {kind} ({what})" for kind, what in ASSEMBLY_KINDS.items())
    places = "; ".join(f"{ASSEMBLY_KINDS[kind]}s at instructions {at[kind][0]}..{at[kind][1]}"
                       for kind in ("LDB", "MAD.F32") if kind in at)
    return f"{loop['instructions']} instructions: {kinds}; {places}"


# --- the sentences notebook 04 prints from its numbers (tests/test_verdicts_nb0304.py) -------------------

def splitk_verdict(timings: dict) -> timing.Verdict:
    """Split-K judged size by size from distributions: timings {n: (matmul_6's Timing, matmul_8's Timing)} at
    the sizes where it cut k into pieces. Outcome A_FASTER (split-K faster at every size), B_FASTER (slower
    at every size), SAME (called the same at every size, in timing.the_same's words) or "mixed"; each size is
    named on its side with both times as printed (Timing.text()) and a ratio of those two printed figures, the
    quotient a reader gets from them: where it won, matmul_6's time over split-K's as faster_by prints it
    ('1.054× its speed', never a '1.05×' that reads as within timing.MARGIN); where it lost, split-K's over
    matmul_6's as faster_by prints it ('1.27× slower'); where it is level within the noise, matmul_6's over
    split-K's rounded half up to two decimals (timing.times, '0.98× its speed')."""
    if not timings:
        return timing.Verdict("At no size did split-K cut k into pieces: there it is matmul_6.", timing.SAME)
    side = {n: timing.compare(t8, t6) for n, (t6, t8) in sorted(timings.items())}

    def figures(n, speed=True):
        """'split-K 23.4 µs (23.1–23.8) against matmul_6's 60.6 µs (59.9–61.2), 2.59× its speed': both times
        as printed, and their ratio as the docstring above says, by the side the size is on."""
        t6, t8 = timings[n]
        text = f"split-K {t8.text()} against matmul_6's {t6.text()}"
        if not speed:
            return text
        if side[n] == timing.A_FASTER:
            return f"{text}, {faster_by(t6, t8)}× its speed"
        if side[n] == timing.B_FASTER:
            return f"{text}, {faster_by(t8, t6)}× slower"
        return f"{text}, {timing.times(timing.ratio(t6, t8))}× its speed"

    def at(sizes, speed=True):
        return findings.listed(f"{n}³ ({figures(n, speed)})" for n in sizes)
    parts = []
    won = [n for n in side if side[n] == timing.A_FASTER]
    lost = [n for n in side if side[n] == timing.B_FASTER]
    same = [n for n in side if side[n] == timing.SAME]
    level = [n for n in same if timing.overlap(*timings[n])]
    close = [n for n in same if n not in level]
    if won:
        parts.append(f"at {at(won)} filling the idle SMs pays more than the pieces' trip through memory and the "
                     "second dispatch cost")
    if lost:
        parts.append(f"at {at(lost)} the pieces' trip through memory and the second dispatch cost more than the "
                     "idle SMs")
    if level:
        parts.append(f"at {at(level)} split-K and matmul_6 are {timing.SAME_WITHIN_NOISE}")
    parts += [f"at {at([n], speed=False)} split-K and matmul_6 are {timing.apart(*timings[n])}" for n in close]
    outcomes = set(side.values())
    text = "; ".join(parts)
    return timing.Verdict(text[0].upper() + text[1:] + ".", outcomes.pop() if len(outcomes) == 1 else "mixed")


def shuffle_verdict(shared: timing.Timing, shuffle: timing.Timing) -> timing.Verdict:
    """matmul_6 with B read from shared memory (the default) against B passed by subgroupShuffle (versus)."""
    v = versus(shuffle, shared, "matmul_6 with subgroupShuffle", "matmul_6 reading shared memory")
    if v.outcome == timing.A_FASTER:
        return timing.Verdict(f"{v}: the shuffles win here.", v.outcome)
    why = (": a shuffle moves one float per instruction, a shared-memory vec4 read four, so sharing through "
           "registers does not pay here.")
    return timing.Verdict(f"{v}{why}", v.outcome)


def gflops_text(gflops: float) -> str:
    """A GFLOP/s figure for a sentence: whole numbers with thousands separators from 100 up ('4,570', '32,561'),
    three significant digits below ('13.7', '0.52'), never a spurious decimal or an exponent."""
    if gflops >= 100:
        return f"{gflops:,.0f}"
    return timing._g(gflops, 3)


RATIO_DIGITS = 3   # significant digits of a speed-up beside two timings in notebook 04's sentences: at two, a
                   # quotient just beyond timing.MARGIN (148.9 against 156.9 µs, 1.054) printed as 1.1, a 10 % gap


def faster_by(slow: timing.Timing, fast: timing.Timing, margin: float = timing.MARGIN) -> str:
    """slow's printed median over fast's (timing.ratio) to RATIO_DIGITS significant digits, more where it takes
    more to print a figure beyond 1 + margin (timing.times_beyond): 1.054 prints as 1.054, never as a 1.1 that
    reads as a 10 % gap or a 1.05 that reads as within the 5 % margin; 1.16 as 1.16, 2 as 2."""
    return timing.times_beyond(timing.ratio(slow, fast), margin, digits=RATIO_DIGITS)


def versus(a: timing.Timing, b: timing.Timing, name_a: str, name_b: str, margin: float = timing.MARGIN
           ) -> timing.Verdict:
    """timing.versus with its speed-up to RATIO_DIGITS, as faster_by prints it: 'A (…) is 1.054× faster than
    B (…)' where two digits would print 1.1×."""
    return timing.versus(a, b, name_a, name_b, margin, digits=RATIO_DIGITS)


def rung_verdict(rung: str, before: str, n: int, t_rung: timing.Timing, t_before: timing.Timing) -> timing.Verdict:
    """One rung against the one it builds on at n³, from their timings (versus: the ratio to three digits)."""
    v = versus(t_rung, t_before, rung, before)
    return timing.Verdict(f"At {n}³ {v}.", v.outcome)


def against(base_name: str, base: timing.Timing, others: dict, margin: float = timing.MARGIN
            ) -> tuple[dict, str]:
    """Several kernels set against one, its time named once: others {name: Timing}. Returns ({name: the
    timing.Verdict of versus(other, base), with compare()'s outcome, to record}, one sentence):
    'against matmul_6 (468 µs (…)), matmul_9's loop alone (412 µs (…)) is 1.14× faster and matmul_9 as
    committed (402 µs (…)) is 1.16× faster', each one on its side: 'N× faster', 'N× slower' (faster_by's
    digits), or where compare() calls them the same, timing.the_same's reason: 'the same within the noise we
    measured' where the bands overlap, 'N× apart, within the 5 % we call the same' where they do not."""
    verdicts, said, level = {}, [], []
    for name, t in others.items():
        v = versus(t, base, name, base_name, margin)
        verdicts[name] = v
        if v.outcome == timing.A_FASTER:
            how = f"{faster_by(base, t, margin)}× faster"
        elif v.outcome == timing.B_FASTER:
            how = f"{faster_by(t, base, margin)}× slower"
        else:
            how = timing.the_same(t, base, margin)
        if how == timing.SAME_WITHIN_NOISE:      # said once for all of them, where the first of them stands
            if not level:
                said.append(None)
            level.append(f"{name} ({t.text()})")
        else:
            said.append(f"{name} ({t.text()}) is {how}")
    if not verdicts:
        raise ValueError("against() needs at least one timing to set against the base")
    if level:
        together = findings.listed(level)
        said[said.index(None)] = f"{together} {'is' if len(level) == 1 else 'are both' if len(level) == 2 else 'are all'} " \
                                 f"{timing.SAME_WITHIN_NOISE}"
    listed = " and ".join(said) if len(said) <= 2 else "; ".join(said[:-1]) + "; and " + said[-1]
    return verdicts, f"against {base_name} ({base.text()}), {listed}"


BOUND, NOT_BOUND, CLOSE = "bound by shared reads", "something else", "too close to call"
SHARED_BOUND = 0.7   # matmul_2 at 70 % or more of its shared-read ceiling: the reads bind it


def shared_bound_verdict(low: float, high: float) -> timing.Verdict:
    """low, high: matmul_2's speed as a share of its shared-read ceiling at the slow and the fast end of its
    20–80 % band. Bound when even the slow end is at SHARED_BOUND or more; not when even the fast end is
    below; else too close to call."""
    if low >= SHARED_BOUND:
        return timing.Verdict("it is bound by the number of shared-memory reads, which rung 3 cuts from 2 per "
                              "FMA to 2 vec4 reads per 16 FMAs.", BOUND)
    if high < SHARED_BOUND:
        return timing.Verdict("something besides the shared reads holds it back.", NOT_BOUND)
    return timing.Verdict(f"its band straddles {SHARED_BOUND:.0%} of that ceiling, too close to say whether the "
                          "shared reads alone bind it.", CLOSE)


def occupancy_verdict(held_base: int, held_deep: int, held_padded: int) -> timing.Verdict:
    """The groups one SM held at once: matmul_6 as committed (BK 8), with BK 16, and BK 8 padded to BK 16's
    shared memory. Fewer for BK 16, and as few for the padded BK 8: shared memory sets the limit. Counts,
    not timings: outcome "not limited", "shared memory" or "something else"."""
    if held_deep >= held_base:
        return timing.Verdict("BK 16 keeps as many groups on an SM as BK 8: occupancy does not limit the deeper "
                              "tile here.", "not limited")
    if held_padded == held_deep:
        return timing.Verdict("BK 8 padded to the same shared memory drops to the same count: shared memory, not "
                              "registers or the deeper loop, is what costs BK 16 its group.", "shared memory")
    return timing.Verdict("Padding BK 8 to BK 16's shared memory does not reproduce the drop: something else "
                          "(registers) limits BK 16.", "something else")


def blocks_verdict(rung: str, n: int, t_file: timing.Timing, t_top: timing.Timing, file_blocks: str,
                   top_blocks: str, groups_file: int, groups_top: int, sms: int | None) -> timing.Verdict:
    """A rung with its file's blocks against top_rung's blocks for n³, with compare()'s outcome: the
    sentence of versus, then the work groups each makes and the SMs (sms; None where the driver gives
    no count). Where top_rung's blocks are faster and the file's give fewer groups than SMs, it says that
    this leaves SMs idle; otherwise it states the counts without a cause."""
    def made(count):
        return f"{count} work group{'' if count == 1 else 's'}"
    v = versus(t_top, t_file, f"{rung} with top_rung's {top_blocks}", f"{rung} with its file's {file_blocks}")
    top = f"top_rung, which picks the benchmark's blocks by the size of C, gives {top_blocks} at {n}³: {made(groups_top)}"
    if v.outcome == timing.A_FASTER and sms and groups_file < sms:
        why = (f": the file's {file_blocks} give only {made(groups_file)} at {n}³ for this GPU's {sms} SMs, so "
               f"{sms - groups_file} SMs have nothing to do; {top}")
    else:
        gpu = f" for this GPU's {sms} SMs" if sms else " (the driver gives no SM count here)"
        why = f"; the file's {file_blocks} give {made(groups_file)}{gpu}; {top}"
    return timing.Verdict(f"{v}{why}.", v.outcome)

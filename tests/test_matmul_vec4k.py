"""matmul_7_vec4k.comp against float64 NumPy on every path its #defines choose, and its sweep.

Paths: A by vec4 along K (VEC_A 1 and K % 4 == 0) or by scalar loads (VEC_A 0, or K % 4 != 0); work
groups swizzled (GROUP_M > 1, a strip cut short) or not (1); BK 8, 16, 32; one or two shared copies of
each tile (COPIES); B and C by vec4 (N % 4 == 0) or not. Shapes fit no tile; C is poisoned with NaN and
has a spare row, so an output not written or written past C[M,N] shows. Every define set here fits the
32 KiB of shared memory that llvmpipe has (COPIES*BK*(BM+4+BN)*4 bytes).
"""

import pytest

from helpers import gl, matmul
from helpers.bench import matmul as bench_matmul
from test_matmul import assert_multiplies   # random A @ B against NumPy, C NaN-poisoned, a spare row

RUNG = "matmul_7_vec4k.comp"
TOL = 1e-5
PATHS = {
    "default": {},                                                           # 128x128, BK 8, vec4 A, GROUP_M 8
    "scalar-A": {"VEC_A": 0},
    "no-swizzle": {"GROUP_M": 1},
    "BK16-128x64": {"BN": 64, "BK": 16, "THREADS": 128},
    "BK16-one-copy": {"BK": 16, "COPIES": 1},
    "BK32-one-copy-64x64": {"BM": 64, "BN": 64, "BK": 32, "THREADS": 64, "COPIES": 1},
    "BK32-64x32": {"BM": 64, "BN": 32, "TN": 4, "BK": 32, "THREADS": 64},
    "32x64-GROUP_M3": {"BM": 32, "BN": 64, "THREADS": 32, "GROUP_M": 3},     # strips of 3 block rows
    "64x64-4x4-8x4-lanes": {"BM": 64, "BN": 64, "TM": 4, "TN": 4, "LM": 8, "LN": 4, "THREADS": 256},
}
# (M, K, N): vec4 A, scalar B and C; scalar A, vec4 B and C; one row with K < BK; K < 4; several strips
SHAPES = [(129, 44, 65), (130, 37, 132), (1, 12, 4), (67, 3, 70), (161, 64, 200)]


@pytest.fixture(scope="module")
def kernels(ctx):
    return {name: matmul.load(ctx, RUNG, defines) for name, defines in PATHS.items()}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("path", PATHS)
def test_every_path_matches_numpy(ctx, kernels, rng, path, shape):
    assert_multiplies(ctx, kernels[path], rng, *shape)


@pytest.mark.parametrize("group_m", [2, 3, 4, 7, 16])
def test_swizzled_blocks_cover_c_once(ctx, rng, group_m):
    # 10 block rows by 4 block columns: strips of GROUP_M rows, the last one shorter (or the whole grid)
    kernel = matmul.load(ctx, RUNG, {"BM": 32, "BN": 64, "THREADS": 32, "GROUP_M": group_m})
    assert kernel.groups(M=300, N=200) == (4, 10, 1)
    assert_multiplies(ctx, kernel, rng, 300, 8, 200)


@pytest.mark.parametrize("defines, message", [
    ({"BK": 32}, "over 48 KiB"),                      # 2*32*(128+4+128)*4 = 66560 bytes
    ({"BK": 6}, "multiple of 4"),
    ({"COPIES": 3}, "COPIES must be 1 or 2"),
    ({"GROUP_M": 0}, "GROUP_M must be at least 1"),
    ({"BM": 64}, "THREADS must equal"),
    ({"LM": 32, "LN": 1}, "multiple of LM\\*TM"),
], ids=["shared", "BK", "COPIES", "GROUP_M", "THREADS", "lanes"])
def test_impossible_defines_are_refused(ctx, defines, message):
    with pytest.raises(gl.ShaderError, match=message):
        matmul.load(ctx, RUNG, defines)


# --- the sweep: python -m helpers.bench.matmul sweep7 (timings are meaningless here; the code paths are not)

def test_sweep_times_matmul_7_beside_matmul_6(ctx, capsys):
    configs = {"default": {}, "64x64 k16": {"BM": 64, "BN": 64, "BK": 16, "THREADS": 64},
               "128x128 k16": {"BK": 16}}                         # 33280 bytes: more than llvmpipe has
    rows = bench_matmul.sweep(ctx, quick=True, configs=configs, rung=bench_matmul.SWEEP7_RUNG,
                              baseline="matmul_6_subgroup.comp")
    out = capsys.readouterr().out
    timed = {r["impl"] for r in rows}
    skipped = "skipped, more shared memory than this driver has: 128x128 k16" in out
    assert timed == {"matmul_6_subgroup (today)", "default", "64x64 k16"} | (set() if skipped else {"128x128 k16"})
    assert f"matmul_7_vec4k.comp; all {len(timed) - 1} configurations match NumPy" in out
    assert "highest median rate at 128³" in out and "× matmul_6_subgroup" in out
    assert {(r["impl"], r["size"]) for r in rows} == {(name, n) for name in timed for n in bench_matmul.QUICK_SWEEP_SIZES}
    assert next(r for r in rows if r["impl"] == "64x64 k16" and r["size"] == 128)["groups"] == 4


def test_sweep7_starts_with_the_default_and_stays_within_48_kib():
    names = list(bench_matmul.SWEEP7)
    assert bench_matmul.SWEEP7[names[0]] == {} and 16 <= len(names) <= 36
    assert len({tuple(sorted(d.items())) for d in bench_matmul.SWEEP7.values()}) == len(names)   # no repeats
    source = gl.shader_source(RUNG)
    for defines in bench_matmul.SWEEP7.values():
        d = {name: int(gl.define(source, name)) for name in ("BM", "BN", "BK", "PAD", "COPIES")} | defines
        assert d["COPIES"] * d["BK"] * (d["BM"] + 4 * d["PAD"] + d["BN"]) * 4 <= 48 * 1024, defines

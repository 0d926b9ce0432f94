"""matmul_9_interior.comp and matmul_10_prefetch.comp: their two loops (interior blocks with no bounds checks,
edge blocks with matmul_6's checked loads) against float64 NumPy, alone and in one dispatch; matmul_10 gives
matmul_9's bits (the same multiply-adds in the same order, its operands read one row of k earlier).

A block is interior when it lies wholly inside C, K is a multiple of BK (at least BK) and N of 4. The
shapes below choose which blocks take which loop; C is NaN-poisoned with a spare row (assert_multiplies),
so an output left unwritten, or written past C[M,N], shows. Every tile here fits llvmpipe's 32 KiB.
"""

import numpy as np
import pytest

from helpers import gl, matmul
from test_matmul import assert_multiplies   # random A @ B against NumPy, C NaN-poisoned, a spare row

RUNG = "matmul_9_interior.comp"
PREFETCH = "matmul_10_prefetch.comp"
TILES = {"default": {},                                                       # 128x128, 16x8 a thread
         "8x8-256": {"TM": 8, "THREADS": 256},                                # matmul_6's thread layout
         "64x64-4x4": {"BM": 64, "BN": 64, "TM": 4, "TN": 4, "THREADS": 256},  # A tile: fewer vec4s than threads
         "128x64-BK16": {"BN": 64, "BK": 16, "TM": 8, "THREADS": 128},
         "top-1024": matmul.top_rung(1024, 1024, 1024)[1]}                   # 64x64, 8x4 a thread, 128 threads
# (M, K, N) and which loop the blocks take with the default 128x128 block, BK 8
SHAPES = {"all-interior": (256, 64, 256),
          "interior-and-edge": (300, 72, 260),    # 2x2 interior blocks, the rest on the edge
          "K-not-a-multiple": (256, 68, 256),     # K % BK != 0: every block checked
          "N-not-a-multiple-of-4": (256, 64, 258),
          "one-tile": (128, 8, 128),              # the interior loop's last tile is its first
          "K-below-BK": (128, 4, 128)}


@pytest.fixture(scope="module")
def kernels(ctx):
    return {(rung, name): matmul.load(ctx, rung, defines) for rung in (RUNG, PREFETCH)
            for name, defines in TILES.items()}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("rung", [RUNG, PREFETCH])
def test_both_loops_match_numpy(ctx, kernels, rng, rung, tiles, shape):
    assert_multiplies(ctx, kernels[rung, tiles], rng, *SHAPES[shape])


@pytest.mark.parametrize("shape", ["interior-and-edge", "N-not-a-multiple-of-4"])
@pytest.mark.parametrize("tiles", TILES)
def test_prefetch_gives_the_same_bits(ctx, kernels, rng, tiles, shape):
    M, K, N = SHAPES[shape]
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    nine, ten = (matmul.multiply(ctx, kernels[rung, tiles], a, b) for rung in (RUNG, PREFETCH))
    assert not np.isnan(ten).any()
    assert np.array_equal(nine, ten), f"{np.count_nonzero(nine != ten)} of {nine.size} outputs differ"


@pytest.mark.parametrize("rung", [RUNG, PREFETCH])
def test_bad_tiles_are_refused(ctx, rung):
    with pytest.raises(gl.ShaderError, match="multiple of BK and of BN/4|THREADS == "):
        matmul.load(ctx, rung, {"BM": 32, "BN": 256, "TM": 4, "TN": 8, "LM": 8, "LN": 4, "THREADS": 32})


def test_top_rung_picks_small_blocks_up_to_1024_squared_outputs_and_rung_10_above():
    small, large = matmul.top_rung(1024, 1024, 1024), matmul.top_rung(1024, 1025, 1024)
    assert small == (RUNG, {"BM": 64, "BN": 64, "TM": 8, "TN": 4, "THREADS": 128})
    assert large == (PREFETCH, {}) == matmul.top_rung(4096, 4096, 4096)
    assert matmul.top_rung(1, 1024 * 1024, 7) == small              # by outputs, whatever the shape
    small[1]["BM"] = 1                                               # a copy: the table stays as it is
    assert matmul.top_rung(1024, 1024, 1024)[1]["BM"] == 64


@pytest.mark.parametrize("size", [(1024, 1024, 1024), (2048, 2048, 2048)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("shape", ["interior-and-edge", "K-not-a-multiple"])
def test_top_rung_matches_numpy(ctx, rng, size, shape):
    kernel = matmul.load(ctx, *matmul.top_rung(*size))
    assert_multiplies(ctx, kernel, rng, *SHAPES[shape])

"""matmul_8_splitk.comp (the pieces of a split-K matmul), splitk_sum_1_vec4.comp (their sum) and
helpers.matmul.SplitK (both, with the number of pieces chosen from the GPU's places) against NumPy.

Pieces that divide neither K nor BK, shapes that fit no tile, N % 4 == 0 (vec4 stores) or not; P and C are
poisoned with NaN and one element longer than they must be, so an output not written or written past its end
shows. The ladder's own tests (test_matmul.py) run SplitK too, with the places this GPU has: one piece on
llvmpipe, which has no SM count; here `places` is given, so the split path runs everywhere.
"""

import numpy as np
import pytest

from helpers import gl, matmul
from test_matmul import assert_multiplies   # random A @ B against NumPy, C NaN-poisoned, a spare row

TOL = 1e-5
TILES = {"default": {}, "64x64": {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "THREADS": 256},
         "interior": {"INTERIOR": 1},                                          # the unchecked loop where it can
         "interior 16x8": {"INTERIOR": 1, "TM": 16, "THREADS": 128},
         "interior 64x64": {"INTERIOR": 1, "BM": 64, "BN": 64, "TM": 8, "THREADS": 64}}
# (M, K, N) with 128×128 blocks wholly inside C and blocks on its edge in one dispatch (K % 8 == 0, N % 4 == 0),
# and one that is all interior blocks: with INTERIOR 1 both loops run
MIXED = ((257, 96, 260), (256, 64, 128))


@pytest.mark.parametrize("interior", [0, 1])
@pytest.mark.parametrize("KS", [8, 7, 24, 100, 300])   # BK 8: a multiple, not one, several tiles, one piece
@pytest.mark.parametrize("shape", [(37, 70, 13), (129, 257, 64), (1, 300, 77), *MIXED],
                         ids=lambda s: "x".join(map(str, s)))
def test_every_piece_matches_numpy(ctx, rng, shape, KS, interior):
    M, K, N = shape
    kernel = gl.Kernel(ctx, matmul.SPLITK, {"INTERIOR": interior})
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    ref = matmul.pieces_in_numpy(a, b, KS)
    A, B = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B")
    P = gl.empty(ctx, (ref.size + 1,), name="P")                     # NaN, one spare element
    kernel.run(*kernel.groups(M=M, N=N, K=K, KS=KS), bindings={0: A, 1: B, 2: P}, M=M, N=N, K=K, KS=KS)
    p = P.read()
    assert kernel.groups(M=M, N=N, K=K, KS=KS)[2] == len(ref) == -(-K // KS)
    assert np.isnan(p[-1]), "a piece was written past P's end"
    for z, piece in enumerate(p[:-1].reshape(ref.shape)):
        assert np.abs(piece - ref[z]).max() <= TOL * np.abs(ref[z]).max() + 1e-6, f"piece {z} of {len(ref)}"


@pytest.mark.parametrize("pieces", [1, 2, 5])
@pytest.mark.parametrize("shape", [(37, 13), (64, 64), (3, 1), (33, 32)], ids=lambda s: "x".join(map(str, s)))
def test_the_sum_adds_the_pieces_in_order(ctx, rng, shape, pieces):
    # float32 additions in the order z = 0, 1, ...: the same bits as NumPy adding them in that order
    M, N = shape             # M*N: not a multiple of 4 (scalar path), 4096 = 16 work groups of 4*256 (vec4), ...
    kernel = gl.Kernel(ctx, matmul.SPLITK_SUM)
    p = rng.standard_normal((pieces, M * N)).astype(np.float32)
    want = p[0].copy()
    for piece in p[1:]:
        want += piece
    P, C = gl.upload(ctx, p.reshape(-1), "P"), gl.empty(ctx, (M * N + 1,), name="C")
    kernel.run(*kernel.groups(M=M, N=N), bindings={2: C, 3: P}, M=M, N=N, pieces=pieces)
    c = C.read()
    assert np.isnan(c[-1]), "the sum wrote past C's end"
    assert np.array_equal(c[:-1], want)


def test_pieces_fill_the_places_and_no_more(ctx):
    k = matmul.SplitK(ctx, places=264)                    # an H100: 132 SMs, two 128×128 groups each
    assert k.pieces(1024, 1024, 1024) == 4                # 64 tiles × 4 = 256 work groups
    assert k.pieces(2048, 2048, 2048) == 1                # 256 tiles fill it already
    assert k.pieces(4096, 4096, 4096) == 1
    assert k.pieces(100, 100, 20) == 3                    # one tile, but only ceil(20/8) = 3 pieces of 8
    assert k.piece_length(1024, 1024, 1024) == 256
    assert k.piece_length(100, 100, 20) == 8
    assert matmul.groups(k, 1024, 1024, 1024) == (8, 8, 4)
    assert matmul.groups(matmul.load(ctx, "matmul_6_subgroup.comp"), 1024, 1024, 1024) == (8, 8, 1)
    assert matmul.SplitK(ctx, places=0).pieces(1024, 1024, 1024) == 1    # no SM count: no split


@pytest.mark.parametrize("places", [0, 264, 10_000])
@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("shape", [(37, 70, 13), (129, 257, 65), (130, 44, 132), (1, 300, 77), (77, 300, 1), *MIXED],
                         ids=lambda s: "x".join(map(str, s)))
def test_splitk_matches_numpy(ctx, rng, shape, tiles, places):
    kernel = matmul.SplitK(ctx, TILES[tiles], places=places)
    try:
        assert_multiplies(ctx, kernel, rng, *shape)
    finally:
        kernel.release()


def test_splitk_gives_the_same_bits_every_run(ctx, rng):
    kernel = matmul.SplitK(ctx, places=10_000)
    a, b = rng.standard_normal((130, 300)).astype(np.float32), rng.standard_normal((300, 68)).astype(np.float32)
    runs = [matmul.multiply(ctx, kernel, a, b) for _ in range(3)]
    kernel.release()
    assert kernel.pieces(130, 68, 300) > 1
    assert all(np.array_equal(runs[0], r) for r in runs[1:])


def test_sm_count_is_a_count_or_none(ctx):
    count = matmul.sm_count(ctx)              # gl_SMCountNV: NVIDIA only
    assert count is None if gl.is_software(ctx) else (count is None or count > 0)


def test_interior_splitk_gives_the_same_bits_every_run(ctx, rng):
    kernel = matmul.SplitK(ctx, {"INTERIOR": 1}, places=10_000)
    M, K, N = MIXED[0]
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    runs = [matmul.multiply(ctx, kernel, a, b) for _ in range(3)]
    kernel.release()
    assert kernel.pieces(M, N, K) > 1
    assert all(np.array_equal(runs[0], r) for r in runs[1:])


def test_interior_needs_whole_rows_of_loads(ctx):
    # the unchecked loads step by whole rows: THREADS (32 here) a multiple of BK (12 here) and of BN/4; the
    # checked loop alone takes any BK
    tile = {"BK": 12, "BM": 16, "BN": 64, "TM": 4, "TN": 8, "THREADS": 32}
    gl.Kernel(ctx, matmul.SPLITK, dict(tile, INTERIOR=0))
    with pytest.raises(gl.ShaderError):
        gl.Kernel(ctx, matmul.SPLITK, dict(tile, INTERIOR=1))

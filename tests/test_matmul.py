"""The matmul ladder (glsl/matmul_*.comp) and the inference layers (glsl/dense_3_tiled.comp,
glsl/dense_4_u8.comp) against NumPy, every dispatch sized by Kernel.groups from the shader's banner.

Awkward shapes (not multiples of any tile, one row, one column, N % 4 == 0 for the vec4 paths), outputs
poisoned with NaN first, float64 NumPy as the reference; relative error < 1e-5 (helpers.check.rel_error).
"""

import numpy as np
import pytest

from helpers import check, data, gl, matmul, timing
from helpers.bench import matmul as bench_matmul
from helpers.inference import BatchedForward

RUNGS = matmul.rungs()
SHAPES = [(37, 70, 13), (1, 300, 77), (77, 300, 1), (1, 1, 1), (129, 257, 65), (130, 40, 132), (300, 300, 300)]
TOL = 1e-5


def test_the_ladder_has_its_rungs():
    assert [name.split("_")[1] for name in RUNGS] == [str(i) for i in range(1, len(RUNGS) + 1)]
    assert len(RUNGS) >= 3 and matmul.FASTEST in RUNGS


@pytest.fixture(scope="module")
def kernels(ctx):
    return {name: matmul.load(ctx, name) for name in RUNGS}


def dispatch(kernel, A, B, C, M, N, K):
    """C = A @ B by a rung with the sizes given (not read from the arrays, so that K = 0 can be asked for)."""
    if isinstance(kernel, matmul.SplitK):     # two shaders: the pieces, then their sum
        kernel.run(A, B, C, M, N, K)
    else:
        kernel.run(*kernel.groups(M=M, N=N), bindings={0: A, 1: B, 2: C}, M=M, N=N, K=K)


def assert_multiplies(ctx, kernel, rng, M, K, N):
    """kernel's C = A @ B for random A[M,K], B[K,N] matches float64 NumPy; C is NaN-poisoned first, with one
    spare row that must stay NaN (a write past C[M,N] would show there)."""
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (M + 1, N), name="C")
    try:
        dispatch(kernel, A, B, C, M, N, K)
        c = C.read()
    finally:
        for array in (A, B, C):
            array.release()
    assert np.isnan(c[M:]).all(), f"{kernel} wrote past C[{M},{N}]"
    assert check.rel_error(c[:M], a.astype(np.float64) @ b) < TOL


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", RUNGS)
def test_rung_matches_numpy(ctx, kernels, rng, name, shape):
    assert_multiplies(ctx, kernels[name], rng, *shape)


@pytest.mark.parametrize("name", RUNGS)
def test_rung_gives_zeros_for_empty_k(ctx, kernels, name):
    A, B = gl.empty(ctx, (5, 1), name="A"), gl.empty(ctx, (1, 8), name="B")    # K = 0: nothing is read
    C = gl.empty(ctx, (5, 8), name="C")
    dispatch(kernels[name], A, B, C, 5, 8, 0)
    assert (C.read() == 0).all()


@pytest.mark.parametrize("defines", [{"BM": 64, "BN": 64, "TM": 4, "TN": 4, "THREADS": 256},
                                     {"BN": 64, "THREADS": 128}, {"BK": 4}],
                         ids=["64x64_4x4", "128x64", "BK4"])
def test_fastest_rung_with_other_tiles(ctx, rng, defines):
    kernel = matmul.load(ctx, matmul.FASTEST, defines)
    a = rng.standard_normal((131, 45)).astype(np.float32)
    b = rng.standard_normal((45, 68)).astype(np.float32)
    assert check.rel_error(matmul.multiply(ctx, kernel, a, b), a.astype(np.float64) @ b) < TOL


# --- matmul_6_subgroup: every B path (1: subgroup shuffles where the driver has them, else shared memory;
# 0: shared memory; 2: the shuffle path's indexing with shuffles emulated in shared memory) and tile shape

SUBGROUP = "matmul_6_subgroup.comp"
SUBGROUP_TILES = {"default": {},                                                    # 128x128, 4x8 lanes
                  "8x4-lanes": {"LM": 8, "LN": 4},
                  "128x64-BK16": {"BN": 64, "BK": 16, "THREADS": 128},
                  "64x64-8x4": {"BM": 64, "BN": 64, "TN": 4, "THREADS": 128},
                  "64x64-8x8": {"BM": 64, "BN": 64, "THREADS": 64, "BK": 16}}


@pytest.mark.parametrize("shape", [(129, 257, 65), (130, 44, 132), (1, 9, 4)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("tiles", SUBGROUP_TILES, ids=str)
@pytest.mark.parametrize("path", [1, 0, 2], ids=["subgroup-or-fallback", "shared", "emulated-shuffle"])
def test_subgroup_rung_paths_match_numpy(ctx, rng, path, tiles, shape):
    M, K, N = shape          # K and N % 4: the scalar and the vec4 loads; M: rows past the last block
    kernel = matmul.load(ctx, SUBGROUP, {**SUBGROUP_TILES[tiles], "USE_SUBGROUP": path})
    assert_multiplies(ctx, kernel, rng, M, K, N)


def test_subgroup_rung_with_matmul_5_layout_matches_numpy(ctx, rng):
    # LM = BM/TM, LN = BN/TN: one "sub-tile" for the whole block, matmul_5_pipelined's layout
    kernel = matmul.load(ctx, SUBGROUP, {"LM": 16, "LN": 16})
    a, b = rng.standard_normal((131, 45)).astype(np.float32), rng.standard_normal((45, 68)).astype(np.float32)
    assert check.rel_error(matmul.multiply(ctx, kernel, a, b), a.astype(np.float64) @ b) < TOL


def test_subgroup_rung_refuses_a_layout_it_cannot_do(ctx):
    with pytest.raises(gl.ShaderError, match="LM\\*LN == 32"):    # one sub-tile per work group: no subgroup
        matmul.load(ctx, SUBGROUP, {"LM": 16, "LN": 16, "USE_SUBGROUP": 2})
    with pytest.raises(gl.ShaderError, match="THREADS must equal"):
        matmul.load(ctx, SUBGROUP, {"BM": 64})
    with pytest.raises(gl.ShaderError, match="multiple of LM\\*TM"):
        matmul.load(ctx, SUBGROUP, {"LM": 32, "LN": 1})


def test_subgroup_rung_without_loads_reads_neither_input(ctx):
    # LOADS 0, the benchmark's experiment: A and B all NaN, so a single read of either would make C NaN
    kernel = matmul.load(ctx, SUBGROUP, {"LOADS": 0})
    M, K, N = 131, 45, 68
    A, B, C = gl.empty(ctx, (M, K), name="A"), gl.empty(ctx, (K, N), name="B"), gl.empty(ctx, (M + 1, N), name="C")
    kernel.run(*kernel.groups(M=M, N=N), bindings={0: A, 1: B, 2: C}, M=M, N=N, K=K)
    c = C.read()
    assert np.isfinite(c[:M]).all(), "LOADS 0 read A or B"
    assert np.isnan(c[M:]).all(), f"LOADS 0 wrote past C[{M},{N}]"


def test_shuffle_probe_answers(ctx):
    assert matmul.has_subgroup_shuffle(ctx) in (True, False)


def test_bad_tile_defines_are_refused_at_compile_time(ctx):
    with pytest.raises(gl.ShaderError, match="THREADS must equal"):
        matmul.load(ctx, matmul.FASTEST, {"BM": 64})


def test_mismatched_shapes_are_explained(ctx, kernels):
    A, B = gl.empty(ctx, (4, 5), name="A"), gl.empty(ctx, (6, 3), name="B")
    with pytest.raises(ValueError, match="do not fit"):
        matmul.run(kernels[RUNGS[0]], A, B, gl.empty(ctx, (4, 3), name="C"))


# --- the inference layers: matmul_5 plus bias and ReLU, float32 or uint8-packed input -------------

LAYER_SHAPES = [(37, 784, 13), (1, 16, 10), (70, 784, 128), (65, 20, 1), (33, 12, 8)]


def _layer(ctx, name, relu, X, w, b, B, K, N):
    kernel = gl.Kernel(ctx, name, {"RELU": relu})
    Y = gl.empty(ctx, (B, N), name="Y")
    kernel.run(*kernel.groups(B=B, N=N), bindings={0: X, 1: gl.upload(ctx, w, "W"), 2: gl.upload(ctx, b, "b"), 3: Y},
               B=B, K=K, N=N)
    return Y.read()


@pytest.mark.parametrize("shape", LAYER_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("relu", [1, 0])
def test_dense_layers_match_numpy(ctx, rng, shape, relu):
    B, K, N = shape
    images = rng.integers(0, 256, (B, K), dtype=np.uint8)
    x = (images / np.float32(255)).astype(np.float32)
    w = rng.standard_normal((K, N)).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    ref = x.astype(np.float64) @ w + b
    ref = np.maximum(ref, 0) if relu else ref
    got = _layer(ctx, "dense_3_tiled.comp", relu, gl.upload(ctx, x, "X"), w, b, B, K, N)
    assert check.rel_error(got, ref) < TOL
    packed = images.reshape(B, -1, 4).copy().view("<u4").reshape(B, -1)
    got = _layer(ctx, "dense_4_u8.comp", relu, gl.upload(ctx, packed, "X"), w, b, B, K, N)
    assert check.rel_error(got, ref) < TOL


def test_u8_layer_ignores_bytes_past_k(ctx, rng):
    B, K, N = 9, 18, 5                      # 18 pixels: the fifth word of a row holds 2 pixels and 2 spare bytes
    images = np.full((B, 20), 255, np.uint8)
    images[:, :K] = rng.integers(0, 256, (B, K), dtype=np.uint8)
    w = rng.standard_normal((K, N)).astype(np.float32)
    b = np.zeros(N, np.float32)
    packed = images.view("<u4")
    got = _layer(ctx, "dense_4_u8.comp", 0, gl.upload(ctx, packed, "X"), w, b, B, K, N)
    assert check.rel_error(got, (images[:, :K] / 255.0) @ w) < TOL


def test_batched_forward_predicts_like_numpy(ctx, rng):
    from helpers import reference
    params = reference.init_params(seed=0)
    images = rng.integers(0, 256, (300, 28, 28), dtype=np.uint8)
    X = data.normalise(images)
    ref = reference.forward(params, X)[0]
    for packed, inputs in ((False, X), (True, data.pack_images(images))):
        fwd = BatchedForward(ctx, params, capacity=128, packed=packed)   # 300 rows: three chunks
        assert check.rel_error(fwd.logits(inputs[:100]), ref[:100]) < TOL
        assert (fwd.predict(inputs) == ref.argmax(axis=1)).all()
        np.testing.assert_array_equal(fwd.read_new(44), fwd.read(44))   # both read the staging copy
        with pytest.raises(ValueError, match="capacity=128"):
            fwd.upload(inputs[:129])
        for n in (0, 129):
            with pytest.raises(ValueError, match=r"1\.\.128"):
                fwd.dispatch(n)
            with pytest.raises(ValueError, match=r"1\.\.128"):
                fwd.read(n)
        fwd.release()


# --- the benchmark's sweep configurations and table (timings are meaningless here; the code paths are not) --------

SWEEPS = [(bench_matmul.SWEEP7_RUNG, bench_matmul.SWEEP7, name) for name in bench_matmul.SWEEP7]


@pytest.mark.parametrize("rung, configs, name", SWEEPS, ids=[f"{r[:8]}-{n}" for r, _, n in SWEEPS])
def test_every_sweep_configuration_matches_numpy(ctx, rng, rung, configs, name):
    """Each configuration of `sweep7` (matmul_7), on shapes with K, N % 4 != 0 and == 0."""
    try:
        kernel = matmul.load(ctx, rung, configs[name])
    except gl.ShaderError as error:          # llvmpipe has 32 KiB of shared memory, NVIDIA 48 KiB
        if "shared memory" in str(error).lower():
            pytest.skip(f"{name}: more shared memory than this driver has")
        raise
    for M, K, N in ((67, 21, 70), (33, 40, 36)):
        a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
        assert check.rel_error(matmul.multiply(ctx, kernel, a, b), a.astype(np.float64) @ b) < TOL


def test_table_gives_each_rung_its_share_of_cublas_at_every_size():
    rows = [{"impl": impl, "size": n, "seconds": s * n, "gflops": 1e4 / s, "clock": "x"}
            for impl, s in (("matmul_6_subgroup", 2.0), ("cuBLAS fp32 (torch, TF32 off)", 1.0)) for n in (1024, 4096)]
    text = bench_matmul.table(rows)
    assert "share of cuBLAS fp32 (same run):    1024    4096" in text
    assert "  matmul_6_subgroup               50.0%   50.0%" in text


def test_tile_loop_counts_the_first_loop_of_the_assembly():
    text = "!!NVcp5.0\nLDB.F32 R0.x, sbo_buf0[R1.x];\nREP.S ;\nLDS.F32X4 R1, shared_mem[R0.x];\n" \
           "MAD.F32 R2, R1.x, R1, R2;\nMAD.F32 R3, R1.y, R1, R3;\nLDB.F32X4 R4, sbo_buf1[R0.y];\n" \
           "STS.F32X4 R4, shared_mem[R0.z];\nBAR ;\nENDREP;\nREP.S ;\nMAD.F32 R5, R1, R1, R5;\nENDREP;\n"
    loop = matmul.tile_loop(text)
    assert loop["instructions"] == 6
    assert loop["counts"] == {"MAD.F32": 2, "LDS": 1, "STS": 1, "LDB": 1, "BAR": 1}
    assert loop["at"]["MAD.F32"] == (1, 2) and loop["at"]["LDB"] == (3, 3)
    summary = matmul.loop_summary(loop)
    assert summary.startswith("6 instructions: 2 × MAD.F32") and "global loads at instructions 3..3" in summary
    assert matmul.tile_loop("!!NVcp5.0\nMAD.F32 R0, R1, R1, R0;\n") is None


def test_interior_tile_loop_holds_the_thread_tile_on_nvidia(ctx):
    kernel = matmul.load(ctx, "matmul_9_interior.comp")
    text = gl.driver_assembly(kernel.program)
    if text is None:
        pytest.skip("this driver's program binary holds no assembly text (NVIDIA's does)")
    loop = matmul.tile_loop(text)     # the first loop: the interior blocks' tile loop
    TM, TN, BK = (kernel.define(d) for d in ("TM", "TN", "BK"))
    assert loop["counts"]["MAD.F32"] == BK * TM * TN // 4      # every output of the thread tile, every k
    assert loop["counts"]["LDS"] == BK * (TM + TN) // 4        # a vec4 read per 4 rows of A, per 4 columns of B
    assert loop["counts"]["BAR"] == 1


def test_against_cublas_gives_the_fastest_rung_and_what_its_loads_cost():
    rows = [{"impl": impl, "size": n, "seconds": s, "gflops": 1e4 / s, "clock": "x"}
            for impl, s in (("matmul_5_pipelined", 1.5), ("matmul_6_subgroup", 1.25), (bench_matmul.NO_LOADS, 1.0),
                            ("matmul_9_interior", 1.1), ("numpy (CPU)", 0.5), ("cuBLAS fp32 (torch, TF32 off)", 1.0))
            for n in (256, 1024, 4096)]
    got = bench_matmul.against_cublas(rows)
    assert [g["size"] for g in got] == [1024, 4096]              # only the sizes set against the limit
    g = got[0]
    assert g["best"] == "matmul_9_interior" and g["share"] == pytest.approx(0.909)   # 9091 / 10000 GFLOP/s, printed
    assert g["matmul_6"] == pytest.approx(0.8) and g["without_loads"] == pytest.approx(1.0)
    assert g["won_back"] == pytest.approx((0.909 - 0.8) / 0.2)
    assert bench_matmul.against_cublas([r for r in rows if not r["impl"].startswith("cuBLAS")]) == []


def test_ladder_figure_shows_only_the_rungs_that_teach():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.bench import matmul as bench_matmul

    def row(impl, n, seconds):
        return {"impl": impl, "size": n, "seconds": seconds, "seconds_low": seconds * 0.98,
                "seconds_high": seconds * 1.02, "gflops": 2 * n ** 3 / seconds / 1e9}
    impls = {"matmul_1_naive": 8, "matmul_2_tiled": 4, "matmul_3_blocked": 2, "matmul_5_pipelined": 1.2,
             "matmul_6_subgroup": 1.1, "matmul_9_interior": 1.0, bench_matmul.NO_LOADS: 0.5,
             "numpy (CPU)": 50, "cuBLAS fp32 (torch, TF32 off)": 0.9}
    rows = [row(impl, n, k * n ** 3 * 1e-12) for impl, k in impls.items() for n in (256, 1024)]
    assert bench_matmul.fastest_rung_name(rows) == "matmul_9_interior"
    fig = bench_matmul.plot(rows)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["matmul_1_naive", "matmul_2_tiled", "matmul_3_blocked",
                      "matmul_9_interior (the top rung at 1024³)", "cuBLAS fp32 (torch, TF32 off)"]
    colours = {tuple(line.get_color()) if not isinstance(line.get_color(), str) else line.get_color()
               for line in fig.axes[0].get_lines()}
    assert len(colours) == 5


# --- the rung cells time each rung as the benchmark does: a stream of dispatches per sample -----------------

class _CountingClock:
    """A stand-in for timing.Clock: runs the timed function, counts what it dispatched, says 2 ms a stream."""
    source = "fake clock"

    def __init__(self):
        self.streams = []

    def kernel(self, fn):
        before = len(self.dispatched)
        fn()
        self.streams.append(len(self.dispatched) - before)
        return 2e-3


def test_stream_sample_times_a_stream_and_divides_by_its_dispatches(monkeypatch):
    clock = _CountingClock()
    clock.dispatched = []
    monkeypatch.setattr(matmul, "run", lambda kernel, A, B, C, barrier=True: clock.dispatched.append(barrier))
    sample = matmul.stream_sample("k", "A", "B", "C", clock, 4)
    assert sample() == pytest.approx(2e-3 / 4)
    assert clock.streams == [4] and clock.dispatched == [True] * 4     # each dispatch with its barrier


def test_bench_and_demo_stream_the_same_number_of_dispatches(ctx):
    assert matmul.streamed(ctx) == (1 if gl.is_software(ctx) else matmul.STREAM)
    assert bench_matmul.STREAM == matmul.STREAM


def test_rung_seconds_times_one_dispatch_of_a_rung(ctx):
    """The helper notebook 04's exercise names: the median of rung_sample's samples, a positive time."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((33, 20)).astype(np.float32)
    b = rng.standard_normal((20, 17)).astype(np.float32)
    A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (33, 17), name="C")
    seconds = bench_matmul.rung_seconds(ctx, matmul.load(ctx, "matmul_1_naive.comp"), A, B, C,
                                        timing.Clock(ctx), repeat=3, warmup=0.0)
    assert 0 < seconds < 1 and check.rel_error(C.read(), a.astype(np.float64) @ b) < 1e-5


@pytest.mark.parametrize("calls, words", [(None, None), (3, "per dispatch in streams of 3 back to back")])
def test_demo_times_streams_of_the_length_streamed_gives(ctx, monkeypatch, capsys, calls, words):
    if calls is not None:
        monkeypatch.setattr(matmul, "streamed", lambda context: calls)
    asked = []

    def spy(kernel, A, B, C, clock, n_calls):
        asked.append(n_calls)
        return lambda: 1e-3 * n_calls                   # made-up seconds a dispatch: 1 ms × the stream length
    monkeypatch.setattr(matmul, "stream_sample", spy)
    result = matmul.demo(ctx, "matmul_3_blocked.comp", 64, timing.Clock(ctx), repeat=5)
    expected = matmul.streamed(ctx)
    assert asked == [expected] and result["calls"] == expected
    assert result["check"] and result["seconds"] == pytest.approx(1e-3 * expected)
    assert result["gflops"] == pytest.approx(2 * 64 ** 3 / (1e-3 * expected) / 1e9)
    line = capsys.readouterr().out.splitlines()[-1]
    assert (words or matmul.per_dispatch(expected)) in line
    assert f"{result['timing'].text()}, {matmul.gflops_text(result['gflops'])} GFLOP/s" in line


def test_demo_names_the_configuration_it_ran(ctx, capsys):
    name, defines = matmul.top_rung(64, 64, 64)
    result = matmul.demo(ctx, name, 64, timing.Clock(ctx), repeat=3, defines=defines)
    out = capsys.readouterr().out
    assert result["check"] and result["defines"] == defines
    label = f"matmul_9_interior with top_rung's {defines['BM']}×{defines['BN']} blocks"
    assert f"{label}: matches NumPy" in out and f"{label}, 64³, by " in out


def test_per_dispatch_words_either_side_of_one():
    assert matmul.per_dispatch(1) == "one dispatch a sample"
    assert matmul.per_dispatch(10) == "per dispatch in streams of 10 back to back"


def test_configuration_names_defines_other_than_the_file_s():
    name, defines = matmul.top_rung(1024, 1024, 1024)
    assert matmul.configuration(name, 1024, {}) == "matmul_9_interior"
    assert matmul.configuration(name, 1024, defines) == \
        f"matmul_9_interior with top_rung's {defines['BM']}×{defines['BN']} blocks"
    assert matmul.configuration(name, 4096, defines) == f"matmul_9_interior with {defines['BM']}×{defines['BN']} blocks"
    assert matmul.configuration("matmul_5_pipelined.comp", 256, {"BK": 16}) == "matmul_5_pipelined with BK 16"


def _rows(with_defines: bool):
    top = matmul.top_rung(1024, 1024, 1024)[1]
    rows = []
    for n in (1024, 4096):
        for impl, s in (("matmul_6_subgroup", 2.0), ("matmul_9_interior", 1.0), ("cuBLAS fp32 (torch, TF32 off)", 1.0)):
            r = {"impl": impl, "size": n, "seconds": s, "gflops": 2 * n ** 3 / s / 1e9, "clock": "x"}
            if with_defines and impl.startswith("matmul_"):
                r["defines"] = top if impl == "matmul_9_interior" and n == 1024 else {}
            rows.append(r)
    return rows


@pytest.mark.parametrize("with_defines", [True, False])
def test_table_names_the_rows_that_ran_other_blocks(with_defines):
    top = matmul.top_rung(1024, 1024, 1024)[1]
    rows = _rows(with_defines)
    listed = ", ".join(f"{k} {v}" for k, v in top.items())
    said = (f"matmul_9_interior at 1024³ ran with {top['BM']}×{top['BN']} blocks ({listed}), top_rung's choice at "
            "that size; every other rung figure is its file's defaults.")
    assert bench_matmul.configurations(rows) == said
    assert bench_matmul.table(rows).endswith("\n" + said)
    assert bench_matmul.label(rows, "matmul_9_interior", 1024) == matmul.configuration("matmul_9_interior", 1024, top)
    assert bench_matmul.label(rows, "matmul_9_interior", 4096) == "matmul_9_interior"
    assert [g["label"] for g in bench_matmul.against_cublas(rows)] == \
        [matmul.configuration("matmul_9_interior", 1024, top), "matmul_9_interior"]


def test_table_says_nothing_of_configurations_where_every_row_ran_its_defaults():
    rows = [dict(r, defines={}) for r in _rows(True)]
    assert bench_matmul.configurations(rows) is None
    assert "defaults" not in bench_matmul.table(rows)


def test_demo_in_turn_times_the_configurations_alternately(ctx, capsys, monkeypatch):
    order = []

    def spy(kernel, A, B, C, clock, n_calls):
        key = kernel.defines.get("BM", "file")
        return lambda: order.append(key) or 1e-3 * (2 if key == "file" else 1)
    monkeypatch.setattr(matmul, "stream_sample", spy)
    name, defines = matmul.top_rung(64, 64, 64)
    file_result, top_result = matmul.demo_in_turn(ctx, name, 64, timing.Clock(ctx), [None, defines], repeat=4)
    timed = order[-8:]                                   # the repeats, after the warm-up
    assert timed == ["file", defines["BM"]] * 4
    assert file_result["seconds"] == pytest.approx(2e-3) and top_result["seconds"] == pytest.approx(1e-3)
    assert file_result["defines"] == {} and top_result["defines"] == defines
    lines = [l for l in capsys.readouterr().out.splitlines() if "taken in turn" in l]
    assert len(lines) == 2 and lines[0].startswith("matmul_9_interior, 64³") and "top_rung's" in lines[1]

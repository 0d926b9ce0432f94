"""The sentences notebooks 03 and 04 print from their timings, each tested with made-up distributions on all
three sides (A faster, B faster, the same within the noise), so a printed verdict can never contradict the
numbers printed beside it."""

import pytest

from helpers import inference, matmul, timing
from helpers.bench.fused import RESULTS_FILE


def t(median, spread=0.02):
    """A made-up Timing: samples around `median`, the 20–80 % band about ±spread of it."""
    return timing.Timing(tuple(median * (1 + spread * k) for k in (-2, -1, 0, 1, 2)))


# --- split-K: each size judged on its own distributions --------------------------------------------------

def test_splitk_verdict_all_faster():
    v = matmul.splitk_verdict({512: (t(1.67), t(1.0)), 1024: (t(2.03), t(1.0))})
    assert v.outcome == timing.A_FASTER
    assert v.startswith(f"At 512³ (split-K {t(1.0).text()} against matmul_6's {t(1.67).text()}, 1.67× its speed) "
                        f"and 1024³ (split-K {t(1.0).text()} against matmul_6's {t(2.03).text()}, 2.03× its speed) "
                        "filling the idle SMs pays")


def test_splitk_verdict_all_slower():
    v = matmul.splitk_verdict({256: (t(1.0), t(1.27))})
    assert v.outcome == timing.B_FASTER and "pays" not in v
    assert v.startswith(f"At 256³ (split-K {t(1.27).text()} against matmul_6's {t(1.0).text()}, 1.27× slower) "
                        "the pieces' trip")


def test_splitk_verdict_same_within_noise():
    v = matmul.splitk_verdict({1024: (t(1.0), t(1.02))})
    assert v.outcome == timing.SAME and "are the same within the noise we measured" in v and "pays" not in v


def test_splitk_verdict_same_says_noise_only_where_the_bands_overlap():
    """1.04× with narrow bands: inside the 5 % margin, the bands apart: not 'within the noise'."""
    v = matmul.splitk_verdict({1024: (t(1.0, 0.002), t(1.04, 0.002))})
    assert v.outcome == timing.SAME and "within the noise" not in v
    close = f"1024³ (split-K {t(1.04, 0.002).text()} against matmul_6's {t(1.0, 0.002).text()})"
    assert v == f"At {close} split-K and matmul_6 are 1.04× apart, within the 5 % we call the same."
    both = matmul.splitk_verdict({512: (t(1.0), t(1.02)), 1024: (t(1.0, 0.002), t(1.04, 0.002))})
    assert both == (f"At 512³ (split-K {t(1.02).text()} against matmul_6's {t(1.0).text()}, 0.98× its speed) "
                    f"split-K and matmul_6 are the same within the noise we measured; at {close} "
                    "split-K and matmul_6 are 1.04× apart, within the 5 % we call the same.")


def test_splitk_verdict_mixed_names_each_side():
    v = matmul.splitk_verdict({256: (t(1.0), t(1.27)), 512: (t(1.67), t(1.0)), 1024: (t(1.0), t(1.01))})
    assert v.outcome == "mixed"
    assert v.startswith("At 512³ (split-K ") and ", 1.67× its speed) filling the idle SMs pays" in v
    assert ", 1.27× slower) the pieces' trip" in v and "at 1024³ (" in v and "0.99× its speed" in v
    assert "within the noise" in v


@pytest.mark.parametrize("t6, t8, outcome, words", [
    (156.9, 148.9, timing.A_FASTER, "1.054× its speed) filling the idle SMs pays"),   # two decimals: 1.05, the margin
    (148.9, 156.9, timing.B_FASTER, "1.054× slower) the pieces' trip"),
    (156.0, 148.9, timing.SAME, "1.048× apart, within the 5 % we call the same"),      # 1.0477: inside the margin
    (160.0, 148.9, timing.A_FASTER, "1.07× its speed) filling")])                     # well beyond: three digits
def test_splitk_verdict_prints_a_win_or_loss_just_beyond_the_margin_beyond_it(t6, t8, outcome, words):
    """156.9 against 148.9 µs is 1.054: beyond the 5 % margin, so it prints 1.054×, never a 1.05× that reads as
    within it; the same gap the other way prints 1.054× slower; 156 against 148.9 (1.048) is within."""
    def us(median):
        return timing.Timing.from_row({"us": median, "us_low": median - 0.1, "us_high": median + 0.1}, "us", 1e6)
    v = matmul.splitk_verdict({1024: (us(t6), us(t8))})
    assert v.outcome == outcome and words in v
    assert "1.05× its speed" not in v and "1.05× slower" not in v


def test_splitk_verdict_without_pieces():
    assert "no size" in matmul.splitk_verdict({})


# --- notebook 04's comparisons of two rungs --------------------------------------------------------------

def test_shuffle_verdict_three_sides():
    win = matmul.shuffle_verdict(shared=t(1.2), shuffle=t(1.0))
    assert win.outcome == timing.A_FASTER and "the shuffles win here" in win
    lose = matmul.shuffle_verdict(shared=t(1.0), shuffle=t(1.25))
    assert lose.outcome == timing.B_FASTER and "does not pay" in lose and "win" not in lose
    level = matmul.shuffle_verdict(shared=t(1.0), shuffle=t(1.01))
    assert level.outcome == timing.SAME and "within the noise" in level and "win" not in level


def test_rung_verdict_three_sides():
    faster = matmul.rung_verdict("matmul_7_vec4k", "matmul_6_subgroup", 4096, t(1.0), t(1.1))
    assert faster.outcome == timing.A_FASTER and faster.startswith("At 4096³ matmul_7_vec4k")
    assert "1.1× faster than matmul_6_subgroup" in faster
    slower = matmul.rung_verdict("matmul_7_vec4k", "matmul_6_subgroup", 4096, t(1.1), t(1.0))
    assert slower.outcome == timing.B_FASTER and "matmul_6_subgroup (" in slower.split("faster")[0]
    level = matmul.rung_verdict("matmul_7_vec4k", "matmul_6_subgroup", 4096, t(1.0), t(1.03))
    assert level.outcome == timing.SAME and "are the same within the noise we measured" in level


def test_shared_bound_verdict_three_sides():
    assert matmul.shared_bound_verdict(0.72, 0.8).outcome == matmul.BOUND
    assert "bound by the number of shared-memory reads" in matmul.shared_bound_verdict(0.72, 0.8)
    assert matmul.shared_bound_verdict(0.4, 0.6).outcome == matmul.NOT_BOUND
    close = matmul.shared_bound_verdict(0.65, 0.75)
    assert close.outcome == matmul.CLOSE and "too close" in close


# --- notebook 03: staging for uploads, a mapped output buffer --------------------------------------------

def test_staging_upload_verdict_three_sides():
    slow = inference.staging_upload_verdict(staged=t(8e-3), direct=t(2e-3))
    assert slow.outcome == timing.B_FASTER and "adds a second copy" in slow
    fast = inference.staging_upload_verdict(staged=t(1e-3), direct=t(2e-3))
    assert fast.outcome == timing.A_FASTER and "direct write costs more" in fast
    level = inference.staging_upload_verdict(staged=t(2e-3), direct=t(2.02e-3))
    assert level.outcome == timing.SAME and "neither costs nor saves" in level


def test_mapped_output_verdict_three_sides():
    moved = inference.mapped_output_verdict(unmapped=t(1e-5), mapped=t(1e-4))
    assert moved.outcome == inference.MOVED and "moved" in moved
    kept = inference.mapped_output_verdict(unmapped=t(1e-5), mapped=t(1.05e-5))
    assert kept.outcome == inference.IN_PLACE and "left it in place" in kept
    faster = inference.mapped_output_verdict(unmapped=t(1e-4), mapped=t(1e-5))
    assert faster.outcome == inference.MAPPED_FASTER and "moved" not in faster


def test_mapped_output_verdict_threshold():
    assert inference.mapped_output_verdict(t(1.0, 0.01), t(inference.MAPPED_SLOWER + 0.01, 0.01)).outcome == inference.MOVED
    assert inference.mapped_output_verdict(t(1.0, 0.01), t(inference.MAPPED_SLOWER - 0.01, 0.01)).outcome == inference.IN_PLACE


def test_mapped_output_verdict_refuses_nonsense():
    with pytest.raises(ValueError, match="positive"):
        inference.mapped_output_verdict(unmapped=timing.Timing((0.0,)), mapped=t(1.0))


# --- the crossover ---------------------------------------------------------------------------------------

def sweep_row(batch, total, numpy):
    return {"batch": batch, "total": total, "numpy": numpy, "timings": {"total": t(total), "numpy": t(numpy)}}


def test_crossover_sentence_three_sides():
    rows = [sweep_row(1, 2.0, 1.0), sweep_row(10, 2.0, 2.01), sweep_row(100, 2.0, 3.1), sweep_row(1000, 2.0, 30.0)]
    gpu = inference.crossover_sentence(rows)
    assert gpu.outcome == inference.GPU_FROM and "from a batch of 100" in gpu and "at 10 images" in gpu
    numpy = inference.crossover_sentence(rows[:1])
    assert numpy.outcome == inference.NUMPY_EVERYWHERE and "NumPy is ahead or level" in numpy
    level = inference.crossover_sentence(rows[1:2])
    assert level.outcome == inference.NUMPY_EVERYWHERE and "same within the noise" in level


@pytest.mark.parametrize("numpy, outcome", [(2.9, inference.NUMPY_EVERYWHERE),   # 1.45×: inside the 1.5× margin
                                            (3.1, inference.GPU_FROM)])          # 1.55×: beyond it
def test_crossover_either_side_of_the_host_margin(numpy, outcome):
    v = inference.crossover_sentence([sweep_row(1, 2.0, 1.0), sweep_row(1000, 2.0, numpy)])
    assert v.outcome == outcome
    assert ("1.45× lower" in v) == (outcome == inference.NUMPY_EVERYWHERE)


@pytest.mark.parametrize("gpu, numpy, says", [(4.14, 5.49, "1.33× lower"), (4.05, 5.06, "1.25× lower")])
def test_crossover_of_two_h100_runs_is_one_verdict(gpu, numpy, says):
    # 10,000 images in two runs of notebook 03: the bands parted in one and overlapped in the other
    v = inference.crossover_sentence([sweep_row(1, 0.40, 0.05), sweep_row(10000, gpu, numpy)])
    assert v.outcome == inference.NUMPY_EVERYWHERE and f"the GPU's median is {says}" in v


MARGIN_WORDS = ("within the 50 % by which either side must win to count as ahead, set that wide because a round "
                "trip through host memory varies far more from run to run than within one")


@pytest.mark.parametrize("numpy, noise", [(2.01, True),     # bands overlap: the same within the noise
                                           (2.5, False)])    # bands apart, 1.25× inside the 1.5× margin
def test_crossover_level_rows_say_noise_only_where_the_bands_overlap(numpy, noise):
    v = inference.crossover_sentence([sweep_row(1, 2.0, 1.0), sweep_row(10, 2.0, numpy)])
    assert v.outcome == inference.NUMPY_EVERYWHERE
    if noise:
        assert v == ("with float32 input to the GPU, NumPy is ahead or level at every batch size here (at 10 images the two are the same within "
                     "the noise we measured)")
    else:
        assert v == f"with float32 input to the GPU, NumPy is ahead or level at every batch size here (at 10 images the GPU's median is 1.25× lower, {MARGIN_WORDS})"


def _each_once(v, *figures):
    for figure in figures:
        assert v.count(figure) == 1, (figure, v)


def test_crossover_names_both_kinds_of_level_rows():
    v = inference.crossover_sentence([sweep_row(10, 2.0, 2.01), sweep_row(100, 2.0, 2.5), sweep_row(1000, 2.0, 9.0)])
    assert v.outcome == inference.GPU_FROM
    assert v == ("with float32 input to the GPU, the GPU is ahead of NumPy from a batch of 1000 (at 10 images the two are the same within the noise "
                 f"we measured; at 100 images the GPU's median is 1.25× lower, {MARGIN_WORDS})")
    _each_once(v, "at 10 images", "at 100 images", "50 %")


def test_crossover_two_level_rows_in_the_overlap_name_each_batch_once():
    rows = [sweep_row(1, 2.0, 1.0), sweep_row(10, 2.0, 2.01), sweep_row(100, 2.0, 1.99), sweep_row(1000, 2.0, 9.0)]
    v = inference.crossover_sentence(rows)
    assert v.outcome == inference.GPU_FROM
    assert v == ("with float32 input to the GPU, the GPU is ahead of NumPy from a batch of 1000 (at 10 and 100 images the two are the same within "
                 "the noise we measured)")
    assert "50 %" not in v and "lower" not in v


def test_crossover_two_level_rows_apart_name_each_batch_and_the_margin_once():
    # the committed H100 case: 1.10× and 1.21× apart, both inside the margin, the bands parted
    rows = [sweep_row(1, 0.4, 0.05), sweep_row(1000, 2.0, 2.2), sweep_row(10000, 4.37, 5.29)]
    v = inference.crossover_sentence(rows)
    assert v.outcome == inference.NUMPY_EVERYWHERE
    assert v == ("with float32 input to the GPU, NumPy is ahead or level at every batch size here (at 1000 images the GPU's median is 1.10× lower "
                 f"and at 10000 images the GPU's median is 1.21× lower, each {MARGIN_WORDS})")
    assert f"{5.29 / 4.37:.2f}" == "1.21" and f"{2.2 / 2.0:.2f}" == "1.10"      # the printed ratios are the medians'
    _each_once(v, "at 1000 images", "at 10000 images", "50 %")


def test_crossover_level_rows_of_both_kinds_and_either_side_lower():
    rows = [sweep_row(1, 2.0, 2.01), sweep_row(10, 2.0, 1.99), sweep_row(100, 2.0, 1.5), sweep_row(1000, 2.0, 2.6)]
    v = inference.crossover_sentence(rows)
    assert v.outcome == inference.NUMPY_EVERYWHERE
    assert v == ("with float32 input to the GPU, NumPy is ahead or level at every batch size here (at 1 and 10 images the two are the same within "
                 "the noise we measured; at 100 images NumPy's median is 1.33× lower and at 1000 images the GPU's "
                 f"median is 1.30× lower, each {MARGIN_WORDS})")
    _each_once(v, "at 1 and 10 images", "at 100 images", "at 1000 images", "50 %")


def test_crossover_without_level_rows_has_no_parenthesis():
    numpy = inference.crossover_sentence([sweep_row(1, 2.0, 1.0), sweep_row(10, 2.0, 0.5)])
    assert numpy == "with float32 input to the GPU, NumPy is ahead or level at every batch size here" and numpy.outcome == inference.NUMPY_EVERYWHERE
    gpu = inference.crossover_sentence([sweep_row(1, 2.0, 1.0), sweep_row(10, 2.0, 9.0)])
    assert gpu == "with float32 input to the GPU, the GPU is ahead of NumPy from a batch of 10" and gpu.outcome == inference.GPU_FROM


def test_crossover_gpu_ahead_but_not_at_every_larger_batch_does_not_say_numpy_everywhere():
    rows = [sweep_row(1, 2.0, 1.0), sweep_row(10, 2.0, 9.0), sweep_row(100, 2.0, 2.01)]
    v = inference.crossover_sentence(rows)
    assert v.outcome == inference.GPU_SOMEWHERE and "NumPy is ahead or level" not in v
    assert v == ("with float32 input to the GPU, the GPU is ahead of NumPy at 10 images but at no batch size from which it stays ahead (at 100 "
                 "images the two are the same within the noise we measured)")


@pytest.mark.parametrize("mapped, noise", [(1.04e-5, True), (1.06e-5, False)])   # bands 0.976–1.024 and ±2.4 %
def test_mapped_output_in_place_says_noise_only_where_the_bands_overlap(mapped, noise):
    v = inference.mapped_output_verdict(unmapped=t(1e-5), mapped=t(mapped))
    assert v.outcome == inference.IN_PLACE and "left it in place" in v
    assert ("the same within the noise we measured, so this driver left it in place" in v) is noise
    assert ("1.06× apart, within the 20 % we call the same, so this driver left it in place" in v) is not noise


def test_crossover_needs_the_gpu_ahead_at_every_larger_batch():
    rows = [sweep_row(1, 1.0, 2.0), sweep_row(10, 2.0, 2.0), sweep_row(100, 1.0, 3.0)]
    assert inference.crossover(rows) == 100


# --- the appendix: what costs BK 16 its second group per SM (counts, not timings) ------------------------

def test_occupancy_verdict_three_sides():
    shared = matmul.occupancy_verdict(held_base=2, held_deep=1, held_padded=1)
    assert shared.outcome == "shared memory" and "shared memory, not registers" in shared
    other = matmul.occupancy_verdict(held_base=2, held_deep=1, held_padded=2)
    assert other.outcome == "something else" and "something else (registers)" in other
    same = matmul.occupancy_verdict(held_base=2, held_deep=2, held_padded=2)
    assert same.outcome == "not limited" and "as many groups" in same


# --- notebook 02: new buffers and a direct read against the staging path ---------------------------------

def test_allocating_verdict_three_sides():
    from helpers import forward
    faster = forward.allocating_verdict(allocating=t(100e-6), staged=t(140e-6))
    assert faster.outcome == timing.A_FASTER and "order, not speed" in faster and "1.4× faster" in faster
    slower = forward.allocating_verdict(allocating=t(200e-6), staged=t(140e-6))
    assert slower.outcome == timing.B_FASTER and "cost more than the staging copies" in slower
    level = forward.allocating_verdict(allocating=t(140e-6), staged=t(141e-6))
    assert level.outcome == timing.SAME and "neither way is faster" in level


# --- notebook 04: shares of cuBLAS above 100 % get their sentence ----------------------------------------

def test_cublas_share_notes_both_kinds():
    from helpers.bench import matmul as bench_matmul

    def row(impl, n, seconds):
        return _banded({"impl": impl, "size": n, "seconds": seconds, "gflops": 2 * n ** 3 / seconds / 1e9})
    rows = [row("cuBLAS fp32 (torch, TF32 off)", 256, 20e-6), row("matmul_1_naive", 256, 14e-6),
            row("cuBLAS fp32 (torch, TF32 off)", 512, 15e-6), row("matmul_8_splitk", 512, 12e-6),
            row("matmul_2_tiled", 512, 20e-6),
            row("cuBLAS fp32 (torch, TF32 off)", 4096, 3e-3), row("matmul_9_interior", 4096, 3.5e-3)]
    notes = bench_matmul.cublas_share_notes(rows)
    assert [v.outcome for v in notes] == [bench_matmul.OVERHEAD, bench_matmul.UNDER_PEAK]
    assert "At 256³" in notes[0] and "matmul_1_naive 142.8%" in notes[0] and "fixed cost of a call" in notes[0]
    assert "At 512³" in notes[1] and "matmul_8_splitk 125.0%" in notes[1] and "matmul_2_tiled" not in notes[1]
    assert bench_matmul.cublas_share_notes([row("matmul_1_naive", 256, 1.0)]) == []


# --- audit: each threshold just inside and just outside, each wording branch -----------------------------

@pytest.mark.parametrize("low, high, outcome, words", [
    (0.70, 0.80, matmul.BOUND, "bound by the number of shared-memory reads"),   # the slow end at 70 %: bound
    (0.69, 0.80, matmul.CLOSE, "too close"),                                     # just below: straddles
    (0.50, 0.70, matmul.CLOSE, "too close"),                                     # the fast end at 70 %: straddles
    (0.50, 0.69, matmul.NOT_BOUND, "something besides the shared reads")])      # just below: not bound
def test_shared_bound_verdict_either_side_of_its_threshold(low, high, outcome, words):
    v = matmul.shared_bound_verdict(low, high)
    assert v.outcome == outcome and words in v


@pytest.mark.parametrize("slower, outcome, words", [(inference.MAPPED_SLOWER + 0.01, inference.MAPPED_FASTER,
                                                     "faster beyond the noise"),
                                                    (inference.MAPPED_SLOWER - 0.01, inference.IN_PLACE,
                                                     "left it in place")])
def test_mapped_output_verdict_faster_either_side_of_the_threshold(slower, outcome, words):
    v = inference.mapped_output_verdict(unmapped=t(slower, 0.01), mapped=t(1.0, 0.01))
    assert v.outcome == outcome and words in v and "moved" not in v


def test_mapped_output_verdict_threshold_words():
    moved = inference.mapped_output_verdict(t(1.0, 0.01), t(inference.MAPPED_SLOWER + 0.01, 0.01))
    assert "moved the mapped buffer" in moved and "1.21×" in moved
    kept = inference.mapped_output_verdict(t(1.0, 0.01), t(inference.MAPPED_SLOWER - 0.01, 0.01))
    assert "left it in place" in kept and "moved" not in kept and "1.19×" in kept


def test_crossover_sentence_names_numpy_lower_when_it_is_level_but_ahead():
    v = inference.crossover_sentence([sweep_row(10, 2.0, 1.5)])    # NumPy 1.33× lower, inside the 1.5× margin
    assert v.outcome == inference.NUMPY_EVERYWHERE and "NumPy's median is 1.33× lower" in v
    assert "GPU's median" not in v


@pytest.mark.parametrize("total, numpy, outcome", [(1.0, 1.49, timing.SAME), (1.0, 1.51, timing.A_FASTER),
                                                   (1.49, 1.0, timing.SAME), (1.51, 1.0, timing.B_FASTER)])
def test_ahead_by_medians_either_side_of_the_host_margin(total, numpy, outcome):
    assert inference.ahead({"batch": 1, "total": total, "numpy": numpy}) == outcome   # a row without its timings


def test_sweep_table_faster_column_on_all_three_sides():
    def plain(batch, total, numpy):
        return {"batch": batch, "upload": 1e-6, "kernel": 1e-6, "readback": 1e-6, "total": total, "numpy": numpy,
                "clock": "wall clock"}
    table = inference.sweep_table([plain(1, 3e-6, 1e-6), plain(10, 2e-6, 2.5e-6), plain(100, 2e-6, 4e-6)])
    assert [line.split()[-1] for line in table.splitlines()[1:4]] == ["NumPy", "same", "GPU"]


def _banded(row, spread=0.01):
    """A benchmark row with a 20–80 % band of ±spread around its median (seconds_low, seconds_high)."""
    return dict(row, seconds_low=row["seconds"] * (1 - spread), seconds_high=row["seconds"] * (1 + spread))


def _blas_row(impl, n, seconds, gflops):
    return _banded({"impl": impl, "size": n, "seconds": seconds, "gflops": gflops})


@pytest.mark.parametrize("own, outcome, words", [(0.24, "cuBLAS mostly launch overhead", "fixed cost of a call"),
                                                 (0.26, "cuBLAS below its best", "26% of its own best speed")])
def test_cublas_share_notes_either_side_of_launch_bound(own, outcome, words):
    from helpers.bench import matmul as bench_matmul
    rows = [_blas_row("cuBLAS fp32 (torch, TF32 off)", 4096, 3e-3, 40_000.0),
            _blas_row("cuBLAS fp32 (torch, TF32 off)", 512, 20e-6, own * 40_000.0),
            _blas_row("matmul_8_splitk", 512, 16e-6, 1.25 * own * 40_000.0)]
    (note,) = bench_matmul.cublas_share_notes(rows)
    assert note.outcome == outcome and words in note and "matmul_8_splitk 125.0%" in note


@pytest.mark.parametrize("own_gflops, outcome", [(21_000.0, "cuBLAS at about its best"),   # 100 % of its best
                                                  (18_950.0, "cuBLAS at about its best"),   # 90.2 %
                                                  (18_850.0, "cuBLAS below its best")])     # 89.8 %
def test_cublas_share_notes_at_cublas_best_size_does_not_call_it_far_from_its_best(own_gflops, outcome):
    from helpers.bench import matmul as bench_matmul
    rows = [_blas_row("cuBLAS fp32 (torch, TF32 off)", 2048, 1000e-6, 21_000.0),
            _blas_row("cuBLAS fp32 (torch, TF32 off)", 1024, 100e-6, own_gflops),
            _blas_row("matmul_9_interior", 1024, 90e-6, 23_000.0)]
    (note,) = bench_matmul.cublas_share_notes(rows)
    assert note.outcome == outcome
    assert ("far from its best" in note) == (outcome == "cuBLAS below its best")
    assert ("at about its best here" in note) == (outcome == "cuBLAS at about its best")


# --- notebook 04: several kernels against one, its time named once ---------------------------------------

def test_against_names_the_base_once_and_keeps_each_outcome():
    base = t(468e-6)
    verdicts, said = matmul.against("matmul_6", base, {"loop alone": t(412e-6), "committed": t(402e-6)})
    assert {k: v.outcome for k, v in verdicts.items()} == {"loop alone": timing.A_FASTER, "committed": timing.A_FASTER}
    assert said == (f"against matmul_6 ({base.text()}), loop alone ({t(412e-6).text()}) is 1.14× faster and "
                    f"committed ({t(402e-6).text()}) is 1.16× faster")
    assert said.count(base.text()) == 1 and said.count("matmul_6") == 1
    assert f"{468 / 412:.3g}" == "1.14" and f"{468 / 402:.3g}" == "1.16"   # the printed ratios are the medians'


def test_against_on_all_three_sides_and_both_kinds_of_same():
    base = t(1e-3)
    close = timing.Timing((1.03e-3,) * 5)             # no spread: the bands part, 1.03× inside the 5 % margin
    verdicts, said = matmul.against("base", base, {"slow": t(2e-3), "level": t(1.01e-3), "close": close,
                                                   "fast": t(0.5e-3)})
    assert {k: v.outcome for k, v in verdicts.items()} == {
        "slow": timing.B_FASTER, "level": timing.SAME, "close": timing.SAME, "fast": timing.A_FASTER}
    assert said == (f"against base ({base.text()}), slow ({t(2e-3).text()}) is 2× slower; level ({t(1.01e-3).text()}) "
                    f"is the same within the noise we measured; close ({close.text()}) is 1.03× apart, within the "
                    f"5 % we call the same; and fast ({t(0.5e-3).text()}) is 2× faster")
    assert "faster than" not in said and said.count(base.text()) == 1
    for name, v in verdicts.items():                  # each recorded verdict is timing.versus's own
        assert v.outcome == timing.compare({"slow": t(2e-3), "level": t(1.01e-3), "close": close,
                                            "fast": t(0.5e-3)}[name], base)


def test_against_needs_something_to_compare():
    with pytest.raises(ValueError):
        matmul.against("base", t(1.0), {})


def _limit(share, m6=0.40, without=0.57):
    won_back = None if without == m6 else (share - m6) / (without - m6)
    return {"size": 1024, "best": "matmul_9_interior", "share": share, "matmul_6": m6, "without_loads": without,
            "won_back": won_back}


def test_loads_sentence_beyond_the_loads_never_wins_back_more_than_all():
    from helpers.bench import matmul as bench_matmul
    said = bench_matmul.loads_sentence(_limit(0.90))     # won_back 2.94: more than removing every load gives
    assert said == ("1024³: matmul_6 reaches 40.0% of cuBLAS, and without its global loads would reach 57.0%; "
                    "matmul_9 reaches 90.0%, beyond what removing matmul_6's loads alone gives: its own changes gain more than "
                    "the loads cost.")
    assert "winning back" not in said


def test_loads_sentence_below_the_loads_says_how_much_it_wins_back():
    from helpers.bench import matmul as bench_matmul
    said = bench_matmul.loads_sentence(_limit(0.87, m6=0.75, without=0.93))
    assert said == ("1024³: matmul_6 reaches 75.0% of cuBLAS, and without its global loads would reach 93.0%; "
                    "matmul_9 reaches 87.0%, winning back 67% of the loads' cost.")
    assert round(100 * (0.87 - 0.75) / (0.93 - 0.75)) == 67          # the printed share is the derived one
    assert "beyond" not in said


def test_loads_sentence_level_with_the_loads_and_without_a_gain():
    from helpers.bench import matmul as bench_matmul
    level = bench_matmul.loads_sentence(_limit(0.5704))   # 57.0% printed on both sides
    assert level.endswith("matmul_9 reaches 57.0% too, as much as removing matmul_6's loads gives.")
    assert "winning back" not in level and "beyond" not in level
    nothing = bench_matmul.loads_sentence(_limit(0.90, m6=0.60, without=0.55))
    assert "removing them gains nothing here; matmul_9 reaches 90.0%." in nothing
    assert bench_matmul.loads_sentence(_limit(0.90, m6=0.57, without=0.57)) is None


def test_against_says_the_same_within_the_noise_once_for_all_it_holds_for():
    base = t(1e-3)
    verdicts, said = matmul.against("base", base, {"a": t(1.01e-3), "b": t(0.99e-3)})
    assert {v.outcome for v in verdicts.values()} == {timing.SAME}
    assert said == (f"against base ({base.text()}), a ({t(1.01e-3).text()}) and b ({t(0.99e-3).text()}) are both "
                    "the same within the noise we measured")
    assert said.count("the same within the noise") == 1
    verdicts, said = matmul.against("base", base, {"a": t(1.01e-3), "fast": t(0.5e-3), "b": t(0.99e-3)})
    assert said == (f"against base ({base.text()}), a ({t(1.01e-3).text()}) and b ({t(0.99e-3).text()}) are both "
                    f"the same within the noise we measured and fast ({t(0.5e-3).text()}) is 2× faster")
    _, one = matmul.against("base", base, {"a": t(1.01e-3)})
    assert one == f"against base ({base.text()}), a ({t(1.01e-3).text()}) is the same within the noise we measured"


# --- matmul_9 with its file's blocks against top_rung's, and the table's timings against the rung cells' ----

@pytest.mark.parametrize("file, top, sms, outcome, idle", [
    (173e-6, 66.7e-6, 132, timing.A_FASTER, True),     # top_rung's blocks faster, the file's leave SMs idle
    (173e-6, 66.7e-6, None, timing.A_FASTER, False),   # faster, but no SM count: no cause claimed
    (173e-6, 66.7e-6, 40, timing.A_FASTER, False),     # faster, with a group for every SM: no cause claimed
    (66.7e-6, 173e-6, 132, timing.B_FASTER, False),
    (100e-6, 100e-6, 132, timing.SAME, False)])
def test_blocks_verdict_on_every_side(file, top, sms, outcome, idle):
    v = matmul.blocks_verdict("matmul_9_interior", 1024, t(file), t(top), "128×128 blocks", "64×64 blocks", 64, 256, sms)
    assert v.outcome == outcome
    assert f"matmul_9_interior with top_rung's 64×64 blocks ({t(top).text()})" in v
    assert f"matmul_9_interior with its file's 128×128 blocks ({t(file).text()})" in v
    assert v.endswith("top_rung, which picks the benchmark's blocks by the size of C, gives 64×64 blocks at 1024³: "
                      "256 work groups.")
    if idle:
        assert ": the file's 128×128 blocks give only 64 work groups at 1024³ for this GPU's 132 SMs, so 68 SMs " \
               "have nothing to do; top_rung" in v
    else:
        assert "nothing to do" not in v
        assert ("; the file's 128×128 blocks give 64 work groups "
                + (f"for this GPU's {sms} SMs" if sms else "(the driver gives no SM count here)") + "; top_rung") in v


def test_blocks_verdict_counts_one_work_group_as_one():
    v = matmul.blocks_verdict("matmul_9_interior", 128, t(2e-3), t(2e-3), "128×128 blocks", "64×64 blocks", 1, 4, None)
    assert "give 1 work group (the driver" in v and v.endswith(": 4 work groups.")


def test_retimed_all_bands_overlap_and_names_the_widest_gap():
    from helpers.bench import matmul as bench_matmul
    rows = [dict(r, impl=impl, size=1024, clock="x", gflops=1.0, defines={})
            for impl, r in (("matmul_1_naive", t(468e-6).row("seconds", 1.0)),
                            ("matmul_6_subgroup", t(150e-6).row("seconds", 1.0)))]
    timed = {("matmul_1_naive.comp", ()): t(470e-6), ("matmul_6_subgroup.comp", ()): t(149e-6),
             ("matmul_9_interior.comp", ()): t(100e-6)}            # no row: left out
    said = bench_matmul.retimed(timed, rows, 1024)
    assert said.startswith("At 1024³ the table timed these rungs again, in turn, per dispatch the same way as the "
                           "cells above: both pairs of 20–80 % bands overlap, and the medians lie at most")
    worst = "matmul_6_subgroup"                                  # 150/149 > 470/468
    assert f"at most {150 / 149:.2f}× apart ({worst}: {t(149e-6).text()} above, " in said
    assert timing.Timing.from_row(rows[1], "seconds", 1.0).text() + " in the table): the same kernel" in said
    assert said.endswith("moves that much, within the 5 % margin that a verdict asks for beyond the bands.")


def test_retimed_counts_the_pairs_whose_bands_do_not_overlap_and_matches_configurations():
    from helpers.bench import matmul as bench_matmul
    top = matmul.top_rung(1024, 1024, 1024)[1]
    rows = [dict(t(94e-6).row("seconds", 1.0), impl="matmul_8_splitk", size=1024, clock="x", gflops=1.0, defines={}),
            dict(t(66.7e-6).row("seconds", 1.0), impl="matmul_9_interior", size=1024, clock="x", gflops=1.0,
                 defines=top)]
    timed = {("matmul_8_splitk.comp", ()): t(75e-6), ("matmul_9_interior.comp", ()): t(173e-6),   # file's blocks: no row
             ("matmul_9_interior.comp", tuple(sorted(top.items()))): t(66.7e-6)}
    said = bench_matmul.retimed(timed, rows, 1024)
    assert ": 1 of 2 pairs of 20–80 % bands overlap, and the medians lie at most" in said
    assert f"at most {94 / 75:.2f}× apart (matmul_8_splitk: {t(75e-6).text()} above, {t(94e-6).text()} in the table): " in said
    assert "moved beyond the 5 % margin" in said and "could come out otherwise" in said          # 1.25x
    assert bench_matmul.retimed({("matmul_1_naive.comp", ()): t(1.0)}, rows, 1024) is None


def test_loads_sentence_names_the_configuration_it_is_given():
    from helpers.bench import matmul as bench_matmul
    said = bench_matmul.loads_sentence(dict(_limit(0.90), label="matmul_9_interior with 64×64 blocks"))
    assert "; matmul_9_interior with 64×64 blocks reaches 90.0%" in said
    assert said.endswith("its own changes, the layout it runs with here among them, gain more than the loads cost.")


def test_loads_sentence_names_the_layout_only_where_it_is_not_the_files():
    from helpers.bench import matmul as bench_matmul
    g = _limit(0.90)
    for label in (None, g["best"]):
        said = bench_matmul.loads_sentence(dict(g, label=label))
        assert said.endswith(": its own changes gain more than the loads cost.")


@pytest.mark.parametrize("above, words", [(150e-6, "the two 20–80 % bands overlap"),
                                          (100e-6, "the two 20–80 % bands do not overlap")])
def test_retimed_one_pair_on_either_side_of_the_overlap(above, words):
    from helpers.bench import matmul as bench_matmul
    rows = [dict(t(150e-6).row("seconds", 1.0), impl="matmul_6_subgroup", size=2048, clock="x", gflops=1.0)]
    said = bench_matmul.retimed({("matmul_6_subgroup.comp", ()): t(above)}, rows, 2048)
    assert said == (f"At 2048³ the table timed this rung again, in turn, per dispatch the same way as the cells above: "
                    f"{words}, and the medians lie {max(above, 150e-6) / min(above, 150e-6):.2f}× apart "
                    f"(matmul_6_subgroup: {t(above).text()} above, {t(150e-6).text()} in the table): "
                    + ("the same kernel timed twice in one run moves that much, within the 5 % margin that a verdict "
                       "asks for beyond the bands." if above == 150e-6 else
                       "the same kernel timed twice in one run moved beyond the 5 % margin that a verdict asks for, so "
                       "a verdict this close in the table could come out otherwise."))


def test_mapped_output_names_an_equal_printed_figure_once():
    same = inference.mapped_output_verdict(unmapped=t(19.1e-6, 0.005), mapped=t(19.1e-6, 0.005))
    figure = t(19.1e-6, 0.005).text()
    assert same.outcome == inference.IN_PLACE and same.count(figure) == 1
    assert same.startswith(f"the output layer took {figure} both ways, writing a buffer the CPU had mapped")
    assert "1.00×" not in same
    near = inference.mapped_output_verdict(unmapped=t(19.1e-6, 0.005), mapped=t(19.4e-6, 0.005))
    assert "both ways" not in near and "1.02× the" in near
    assert t(19.4e-6, 0.005).text() in near and t(19.1e-6, 0.005).text() in near


@pytest.mark.parametrize("gflops, text", [(4570.0, "4,570"), (32561.3, "32,561"), (100.0, "100"),
                                          (99.94, "99.9"), (13.72, "13.7"), (0.5234, "0.523")])
def test_gflops_text_either_side_of_100(gflops, text):
    assert matmul.gflops_text(gflops) == text


def test_cublas_share_notes_write_percent_one_way():
    from helpers.bench import matmul as bench_matmul
    rows = [_banded(r) for r in (
        {"impl": "cuBLAS fp32 (torch, TF32 off)", "size": 256, "seconds": 30e-6, "gflops": 1000.0},
        {"impl": "cuBLAS fp32 (torch, TF32 off)", "size": 4096, "seconds": 3e-3, "gflops": 50000.0},
        {"impl": "matmul_2_tiled", "size": 256, "seconds": 15e-6, "gflops": 2000.0})]
    (note,) = bench_matmul.cublas_share_notes(rows)
    assert "matmul_2_tiled 200.0% of cuBLAS's speed (" in note and " 200.0 %" not in note     # the table's way
    assert "the 5 % margin" in note and "5%" not in note                                  # the notebook's way
    assert "so the rung named faster costs less per call here" in note and "share above" not in note


def test_loads_sentence_wins_back_what_the_printed_percentages_give():
    """Printed, 87.4, 74.6 and 92.6 give (87.4 - 74.6) / (92.6 - 74.6), 71 %, which is what the sentence says.
    Equal printed percentages for matmul_6 with and without its loads say that removing them gains nothing,
    never a division by zero; a rung no faster than matmul_6 wins nothing back, never a negative share."""
    from helpers.bench import matmul as bench_matmul
    said = bench_matmul.loads_sentence(_limit(0.874, m6=0.746, without=0.926))
    assert "reaches 87.4%, winning back 71% of the loads' cost." in said
    said = bench_matmul.loads_sentence(_limit(0.744, m6=0.746, without=0.7462))
    assert "removing them gains nothing here" in said
    said = bench_matmul.loads_sentence(_limit(0.744, m6=0.746, without=0.748))
    assert said.endswith("reaches 74.4%, no more than matmul_6 with its loads.") and "winning" not in said


def test_cublas_share_notes_print_the_share_as_the_table_does():
    """The table prints 175.5 % for a rung at 1.755 of cuBLAS's speed; the note names the same figure."""
    from helpers.bench import matmul as bench_matmul
    rows = [{"impl": "cuBLAS fp32 (torch, TF32 off)", "size": 256, "seconds": 35.1e-6, "gflops": 956.0},
            {"impl": "cuBLAS fp32 (torch, TF32 off)", "size": 4096, "seconds": 3e-3, "gflops": 50000.0},
            {"impl": "matmul_1_naive", "size": 256, "seconds": 20e-6, "gflops": 1678.0}]
    rows = [_banded(dict(r, clock="CUDA events" if r["impl"].startswith("cuBLAS") else "GPU timer query")) for r in rows]
    (note,) = bench_matmul.cublas_share_notes(rows)
    row = next(line for line in bench_matmul.table(rows).splitlines() if line.strip().startswith("matmul_1_naive")
               and "%" in line)
    assert "175.5%" in row and "matmul_1_naive 175.5%" in note


def test_crossover_level_ratio_is_the_one_of_the_table_figures():
    """The sweep table prints whole µs, 1007 and 1214: the sentence's ratio is theirs, 1.21×, not the 1.20× of
    the medians as Timing.text() prints them (1.01 and 1.21 ms)."""
    v = inference.crossover_sentence([sweep_row(1, 0.4, 0.05), sweep_row(1000, 1007.4e-6, 1214.4e-6)])
    assert "at 1000 images the GPU's median is 1.21× lower" in v
    assert timing.times(timing.ratio(t(1214.4e-6), t(1007.4e-6))) == "1.20"


def test_loads_sentence_quotes_the_table_share():
    """Run Q: the table printed 87.5 % for a rung at 87.48 % of cuBLAS, and the sentence, rounding that printed
    figure again, said 88 % where the sentence on the top rung said 87 %. It now quotes the table's 87.5 %."""
    from helpers.bench import matmul as bench_matmul
    said = bench_matmul.loads_sentence(_limit(0.8748, m6=0.75, without=0.95))
    assert "reaches 87.5%, winning back 63% of the loads' cost." in said              # 12.5 / 20 = 62.5 %, half up
    assert "88%" not in said


@pytest.mark.parametrize("gpu_us, numpy_us, outcome, column", [
    (1000.4, 1504.9, timing.A_FASTER, "GPU"),    # table 1000 / 1505: beyond 1.5×
    (999.6, 1499.6, timing.SAME, "same")])       # table 1000 / 1500: exactly 1.5×, though 1499.6 / 999.6 > 1.5
def test_ahead_judges_the_margin_on_the_table_figures(gpu_us, numpy_us, outcome, column):
    """The sweep table prints whole µs: 1505 against 1000 is beyond the 1.5× margin, 1500 is not, whatever the
    medians' own three-digit text says (1.5 ms both times)."""
    narrow = lambda us: timing.Timing((0.999 * us * 1e-6, us * 1e-6, 1.001 * us * 1e-6))   # noqa: E731
    row = {"batch": 1000, "total": gpu_us * 1e-6, "numpy": numpy_us * 1e-6, "upload": 1e-6, "kernel": 1e-6,
           "readback": 1e-6, "clock": "GPU timer query",
           "timings": {"total": narrow(gpu_us), "numpy": narrow(numpy_us)}}
    assert inference.ahead(row) == outcome
    line = [l for l in inference.sweep_table([row]).splitlines() if l.strip().startswith("1000")][0]
    assert line.split()[-1] == column


@pytest.mark.parametrize("share, m6, without, words", [
    (0.949, 0.75, 0.95, "winning back 99.5% of the loads' cost."),     # 19.9 / 20: not "100%"
    (0.551, 0.55, 0.80, "winning back 0.4% of the loads' cost."),      # 0.1 / 25: not "0%"
    (0.85, 0.75, 0.95, "winning back 50% of the loads' cost."),
    (0.101, 0.10, 3.10, "winning back 0.03% of the loads' cost."),     # 0.1 / 300: not "0.0%"
    (3.0994, 0.10, 3.10, "winning back 99.97% of the loads' cost.")])  # 299.9 / 300: not "100.0%"
def test_loads_sentence_never_wins_back_none_or_all_of_a_cost_it_only_partly_won(share, m6, without, words):
    from helpers.bench import matmul as bench_matmul
    assert bench_matmul.loads_sentence(_limit(share, m6=m6, without=without)).endswith(words)


def test_loads_sentence_no_more_than_matmul_6_on_the_printed_shares():
    """74.62 % and 74.6 % print as 74.6 % both: the rung is no faster than matmul_6 as printed; 74.66 % is."""
    from helpers.bench import matmul as bench_matmul
    assert bench_matmul.loads_sentence(_limit(0.7462, m6=0.746, without=0.748)).endswith(
        "matmul_9 reaches 74.6%, no more than matmul_6 with its loads.")
    assert "winning back 50% of" in bench_matmul.loads_sentence(_limit(0.7466, m6=0.746, without=0.748))


@pytest.mark.parametrize("rung_gflops, cublas_gflops", [(3058.4, 1245.4), (34_900.0, 40_000.0)])
def test_one_share_is_printed_one_way_in_the_table_the_notes_and_the_sentence(rung_gflops, cublas_gflops):
    """The quotient of the table's printed GFLOP/s (3058 / 1245 = 245.6 %, where the unrounded speeds give
    245.5 %; 34900 / 40000 = 87.25 %, a tie, up): the table, the loads sentence and the limits row all print it."""
    from helpers.bench import limits, matmul as bench_matmul
    row = lambda impl, g: {"impl": impl, "size": 1024, "seconds": 1 / g, "gflops": g, "clock": "c"}   # noqa: E731
    rows = [row("cuBLAS fp32", cublas_gflops), row("matmul_9_interior", rung_gflops),
            row("matmul_6_subgroup", rung_gflops / 2), row(bench_matmul.NO_LOADS, rung_gflops * 2)]
    shown = bench_matmul.percent_of(rung_gflops, cublas_gflops)
    text = bench_matmul.table(rows).split("share of cuBLAS fp32")[1]
    line = [l for l in text.splitlines() if l.strip().startswith("matmul_9_interior")][0]
    assert line.split()[-1] == f"{shown}%"
    (g,) = bench_matmul.against_cublas(rows)
    assert f"reaches {shown}%" in bench_matmul.loads_sentence(g)
    assert limits.matmul_limits(rows)[0]["against"] == f"{shown}% of its speed"


def test_percent_rounds_half_up():
    from decimal import Decimal
    from helpers.bench import matmul as bench_matmul
    assert bench_matmul.percent(0.87496) == Decimal("87.5") and bench_matmul.percent(0.8725) == Decimal("87.3")
    assert bench_matmul.percent(0.87249) == Decimal("87.2")


# --- the committed record's round trips against NumPy, by the sweep's rule -------------------------------

def record_rows(float32_ms, numpy_ms, uint8_ms=None, spread=0.03):
    """Rows shaped like the committed record's inference rows: median and 20–80 % band in seconds."""
    def row(what, ms):
        return {"what": what, "seconds": ms / 1e3, "seconds_low": ms * (1 - spread) / 1e3,
                "seconds_high": ms * (1 + spread) / 1e3, "repeats": 20, "clock": "wall clock", "images": 10000}
    rows = [row("upload float32 into existing buffer", 2.38), row(inference.RECORD_GPU["float32"], float32_ms)]
    if uint8_ms is not None:
        rows.append(row(inference.RECORD_GPU["uint8"], uint8_ms))
    return rows + [row(inference.RECORD_NUMPY, numpy_ms)]


def test_record_round_trips_three_sides():
    gpu = inference.record_round_trips(record_rows(3.0, 6.0))
    assert gpu.outcome == f"float32: {timing.A_FASTER}"
    assert "with float32 input (3.00 ms (2.91–3.09)) the GPU is 2× faster" in gpu
    numpy = inference.record_round_trips(record_rows(6.0, 3.0))
    assert numpy.outcome == f"float32: {timing.B_FASTER}" and "NumPy is 2× faster" in numpy
    level = inference.record_round_trips(record_rows(3.0, 3.05))
    assert level.outcome == f"float32: {timing.SAME}" and "the two are the same within the noise we measured" in level
    for v in (gpu, numpy, level):
        assert v.startswith("In the committed benchmark record, a run of its own and not this one,")
        assert "these are the record's verdicts, not this run's" in v and "by more than 1.5×" in v
        assert "on 10,000 images" in v and "uint8" not in v


@pytest.mark.parametrize("numpy_ms, outcome, words", [
    (4.35, timing.SAME, "the two are 1.45× apart, within the 50 % we call the same"),   # bands apart, inside 1.5×
    (4.65, timing.A_FASTER, "the GPU is 1.6× faster"),                                  # 1.55×: beyond it
    (4.5, timing.SAME, "the two are 1.50× apart, within the 50 % we call the same")])   # exactly 1.5×: not beyond
def test_record_round_trips_either_side_of_the_host_margin(numpy_ms, outcome, words):
    v = inference.record_round_trips(record_rows(3.0, numpy_ms, spread=0.01))
    assert v.outcome == f"float32: {outcome}" and words in v


def test_record_round_trips_of_the_committed_h100_record():
    """The audit's case: 3.10 ms (3.00–3.42) against NumPy's 4.78 ms (4.59–5.17) is 1.54×, beyond 1.5× with the bands
    apart, so by the sweep's rule the GPU wins at 10,000 images in the record; uint8's 1.46 ms is 3.3×."""
    ms = lambda median, low, high, what: {"what": what, "seconds": median / 1e3, "seconds_low": low / 1e3,  # noqa: E731
                                          "seconds_high": high / 1e3, "clock": "wall clock", "images": 10000}
    rows = [ms(3.095346, 2.999327, 3.419343, inference.RECORD_GPU["float32"]),
            ms(1.464219, 1.426930, 1.546996, inference.RECORD_GPU["uint8"]),
            ms(4.783278, 4.588304, 5.165512, inference.RECORD_NUMPY)]
    v = inference.record_round_trips(rows, f"the committed benchmark record (results/{RESULTS_FILE.name})")
    assert v.outcome == f"float32: {timing.A_FASTER}; uint8: {timing.A_FASTER}"
    assert ("NumPy's forward and argmax on 10,000 images took 4.78 ms (4.59–5.17) by wall clock, timed in turn with the "
            "GPU's whole round trips: with float32 input (3.10 ms (3.00–3.42)) the GPU is 1.54× faster; with uint8 input "
            "(1.46 ms (1.43–1.55)) the GPU is 3.3× faster.") in v
    assert v.startswith(f"In the committed benchmark record (results/{RESULTS_FILE.name}), a run of its own")


def test_record_round_trips_judges_each_input_on_its_own():
    v = inference.record_round_trips(record_rows(8.0, 4.0, uint8_ms=4.05))
    assert v.outcome == f"float32: {timing.B_FASTER}; uint8: {timing.SAME}"
    assert "with float32 input (8.00 ms (7.76–8.24)) NumPy is 2× faster; with uint8 input" in v
    assert v.count("the same within the noise we measured") == 1


def test_record_round_trips_needs_numpy_and_float32_rows():
    assert inference.record_round_trips(record_rows(3.0, 6.0)[:-1]) is None                 # no NumPy row
    no_float32 = [r for r in record_rows(3.0, 6.0, uint8_ms=2.0) if r["what"] != inference.RECORD_GPU["float32"]]
    assert inference.record_round_trips(no_float32) is None
    timeless = record_rows(3.0, 6.0)
    timeless[1] = {"what": inference.RECORD_GPU["float32"], "seconds": None, "clock": "not available here"}
    assert inference.record_round_trips(timeless) is None


@pytest.mark.parametrize("t6, t8, shown", [
    (1.5851e-6, 1.2349e-6, "1.29"),   # printed 1.59 µs over 1.23 µs: 1.2927; the medians give 1.2836, 1.28
    (1.44e-6, 1.28e-6, "1.13")])      # 1.44 / 1.28 = 1.125 exactly: half up 1.13, where :.2f gives 1.12
def test_splitk_verdict_ratio_is_the_quotient_of_the_printed_times(t6, t8, shown):
    """The speed-up split-K's verdict prints is matmul_6's printed time over split-K's, rounded half up, and
    both times stand beside it, so a reader who divides them gets the printed ratio."""
    a, b = t(t6, 0.005), t(t8, 0.005)
    v = matmul.splitk_verdict({256: (a, b)})
    assert v.outcome == timing.A_FASTER
    assert f"(split-K {b.text()} against matmul_6's {a.text()}, {shown}× its speed)" in v
    assert f"{t6 / t8:.2f}" != shown          # the old ratio of unrounded medians, printed with :.2f


# --- audit of notebooks 03 and 04: shares of cuBLAS judged with bands, ratios near the margin, figures with
# their bands, the crossover's input ------------------------------------------------------------------------

def _us_row(impl, n, median, low, high):
    """A benchmark row from µs figures: median and 20–80 % band, GFLOP/s from the median."""
    return {"impl": impl, "size": n, "seconds": median * 1e-6, "seconds_low": low * 1e-6,
            "seconds_high": high * 1e-6, "gflops": 2 * n ** 3 / (median * 1e-6) / 1e9}


BLAS = "cuBLAS fp32 (torch, TF32 off)"


def _at_512(rung):
    """cuBLAS at 512³ (25.8 µs) and at 4096³ (its best, 34.4 TFLOP/s, so 512³ is at 30 % of it), beside one
    rung at 512³."""
    return [_us_row(BLAS, 4096, 4000.0, 3990.0, 4010.0), _us_row(BLAS, 512, 25.8, 25.6, 25.9), rung]


def test_cublas_share_notes_call_a_lead_inside_the_margin_level():
    """The audit's case: matmul_9 at 102.7 % of cuBLAS at 512³, its band below cuBLAS's but its median only
    1.03× apart: level, not cheaper per call."""
    from helpers.bench import matmul as bench_matmul
    (note,) = bench_matmul.cublas_share_notes(_at_512(_us_row("matmul_9_interior", 512, 25.1, 25.0, 25.2)))
    assert note.outcome == bench_matmul.LEVEL
    assert note == ("At 512³ cuBLAS took 25.8 µs (25.6–25.9) a call; matmul_9_interior 102.8% of cuBLAS's speed "
                    "(25.1 µs (25.0–25.2)) is level with cuBLAS, 1.03× apart, within the 5 % we call the same.")
    assert "less per call" not in note


@pytest.mark.parametrize("rung, outcome, words", [
    ((25.5, 25.3, 25.7), "level with cuBLAS", "is level with cuBLAS, the same within the noise we measured"),
    ((26.2, 26.1, 26.3), "level with cuBLAS", "matmul_9_interior 98.5% of cuBLAS's speed (26.2 µs (26.1–26.3)) is level"),
    ((23.0, 22.9, 23.1), "cuBLAS below its best", "costs less per call, beyond the noise and the 5 % margin"),
    ((28.0, 27.9, 28.1), None, None)])      # cuBLAS faster beyond the noise: no note
def test_cublas_share_notes_on_every_side_of_the_noise_and_margin(rung, outcome, words):
    from helpers.bench import matmul as bench_matmul
    notes = bench_matmul.cublas_share_notes(_at_512(_us_row("matmul_9_interior", 512, *rung)))
    if outcome is None:
        assert notes == []
        return
    (note,) = notes
    assert note.outcome == outcome and words in note
    assert note.startswith("At 512³ cuBLAS took 25.8 µs (25.6–25.9) a call; matmul_9_interior ")
    assert ("less per call" in note) == (outcome != bench_matmul.LEVEL)


def test_cublas_share_notes_name_faster_and_level_rungs_apart():
    from helpers.bench import matmul as bench_matmul
    rows = _at_512(_us_row("matmul_8_splitk", 512, 23.0, 22.9, 23.1)) + [
        _us_row("matmul_9_interior", 512, 25.5, 25.3, 25.7), _us_row("matmul_2_tiled", 512, 60.0, 59.0, 61.0)]
    (note,) = bench_matmul.cublas_share_notes(rows)
    assert note.outcome == bench_matmul.UNDER_PEAK
    faster, level = note.split("; matmul_9_interior")
    assert "matmul_8_splitk 112" in faster and "costs less per call" in faster and "that rung beats" in faster
    assert level.startswith(" 101") and "is level with cuBLAS, the same within the noise" in level
    assert "matmul_2_tiled" not in note


def test_cublas_share_notes_never_call_a_row_without_a_band_faster():
    from helpers.bench import matmul as bench_matmul

    def bare(row):
        return {k: v for k, v in row.items() if k not in ("seconds_low", "seconds_high")}
    fast = _us_row("matmul_9_interior", 512, 20.0, 19.9, 20.1)         # 1.29× ahead by its median
    for rows in (_at_512(bare(fast)), [bare(r) for r in _at_512(fast)]):
        (note,) = bench_matmul.cublas_share_notes(rows)
        assert note.outcome == bench_matmul.UNJUDGED
        assert "matmul_9_interior 129.0% of cuBLAS's speed has a median below cuBLAS's, but with no 20–80 % band " \
               "stored, whether it is faster beyond the noise cannot be judged" in note
        assert "less per call" not in note and "level" not in note
    assert bench_matmul.cublas_share_notes(_at_512(bare(_us_row("matmul_9_interior", 512, 30.0, 29.9, 30.1)))) == []


def test_rung_verdict_prints_a_ratio_just_beyond_the_margin_with_enough_digits():
    """The committed 1024³ case: 156.9 over 148.9 µs is 1.054, beyond the 5 % margin; two digits would print
    1.1×, a 10 % gap, and three 1.05×, the margin itself: it prints 1.054×."""
    m6 = timing.Timing.from_row({"us": 148.9, "us_low": 148.8, "us_high": 148.9}, "us", 1e6)
    m7 = timing.Timing.from_row({"us": 156.9, "us_low": 156.9, "us_high": 157.0}, "us", 1e6)
    v = matmul.rung_verdict("matmul_7_vec4k", "matmul_6_subgroup", 1024, m7, m6)
    assert v.outcome == timing.B_FASTER
    assert v == ("At 1024³ matmul_6_subgroup (148.9 µs (148.8–148.9)) is 1.054× faster than matmul_7_vec4k "
                 "(156.9 µs (156.9–157.0)).")
    assert timing.versus(m7, m6, "a", "b").count("1.1×") == 1          # what timing.versus's two digits print
    wider = matmul.rung_verdict("matmul_9", "matmul_6", 2048, t(402e-6, 0.002), t(468e-6, 0.002))
    assert wider.outcome == timing.A_FASTER and "is 1.16× faster than matmul_6" in wider
    inside = matmul.rung_verdict("matmul_9", "matmul_6", 2048, t(1.0, 0.002), t(1.04, 0.002))
    assert inside.outcome == timing.SAME and "1.04× apart, within the 5 % we call the same" in inside


@pytest.mark.parametrize("slow, fast, text", [((156.9, 156.9, 157.0), (148.9, 148.8, 148.9), "1.054"),
                                              ((105.0,) * 3, (100.0,) * 3, "1.05"), ((116.0,) * 3, (100.0,) * 3, "1.16"),
                                              ((200.0,) * 3, (100.0,) * 3, "2"), ((510.0,) * 3, (100.0,) * 3, "5.1")])
def test_faster_by_prints_three_digits_and_more_only_at_the_margin(slow, fast, text):
    def us(median, low, high):
        return timing.Timing.from_row({"us": median, "us_low": low, "us_high": high}, "us", 1e6)
    assert matmul.faster_by(us(*slow), us(*fast)) == text


def test_against_prints_a_ratio_just_beyond_the_margin_with_enough_digits():
    def us(median, low, high):
        return timing.Timing.from_row({"us": median, "us_low": low, "us_high": high}, "us", 1e6)
    verdicts, said = matmul.against("base", us(156.9, 156.9, 157.0), {"a": us(148.9, 148.8, 148.9),
                                                                       "b": us(165.0, 164.9, 165.1)})
    assert verdicts["a"].outcome == timing.A_FASTER and "a (148.9 µs (148.8–148.9)) is 1.054× faster" in said
    assert verdicts["b"].outcome == timing.B_FASTER and "b (165.0 µs (164.9–165.1)) is 1.052× slower" in said
    assert "1.1×" not in said


@pytest.mark.parametrize("median, low, high, text", [
    (402.0, 400.0, 403.0, "42.7 TFLOP/s (42.6–42.9)"),           # 2·2048³ flops over 403, 402 and 400 µs
    (468.0, 467.9, 468.1, "36.71 TFLOP/s (36.70–36.72)"),         # a narrow band gets more digits
    (402.0, 402.0, 402.0, "42.7 TFLOP/s (no spread recorded)")])
def test_tflops_text_prints_the_band_of_a_speed(median, low, high, text):
    from helpers.bench import matmul as bench_matmul
    t_row = timing.Timing.from_row({"us": median, "us_low": low, "us_high": high}, "us", 1e6)
    assert bench_matmul.tflops_text(t_row, 2048) == text


def test_rows_verdict_on_every_side_and_without_bands():
    from helpers.bench import matmul as bench_matmul
    rows = [_us_row("matmul_6_subgroup", 2048, 468.0, 467.0, 469.0), _us_row("matmul_9_interior", 2048, 402.0, 400.0, 403.0),
            _us_row("matmul_7_vec4k", 2048, 470.0, 467.5, 471.0)]
    faster = bench_matmul.rows_verdict(rows, "matmul_9_interior", "matmul_6_subgroup", 2048)
    assert faster.outcome == timing.A_FASTER
    assert faster == ("At 2048³ matmul_9_interior (402 µs (400–403)) is 1.16× faster than matmul_6_subgroup "
                      "(468 µs (467–469)); in speed, matmul_9 42.7 TFLOP/s (42.6–42.9) and matmul_6 "
                      "36.7 TFLOP/s (36.6–36.8).")
    slower = bench_matmul.rows_verdict(rows, "matmul_6_subgroup", "matmul_9_interior", 2048)
    assert slower.outcome == timing.B_FASTER and slower.startswith("At 2048³ matmul_9_interior (402 µs")
    level = bench_matmul.rows_verdict(rows, "matmul_7_vec4k", "matmul_6_subgroup", 2048)
    assert level.outcome == timing.SAME and "are the same within the noise we measured; in speed" in level
    bare = [{k: v for k, v in r.items() if k != "seconds_high"} for r in rows]
    unjudged = bench_matmul.rows_verdict(bare, "matmul_9_interior", "matmul_6_subgroup", 2048)
    assert unjudged.outcome == bench_matmul.UNJUDGED and "cannot be judged" in unjudged and "faster than" not in unjudged
    assert bench_matmul.rows_verdict(rows, "matmul_8_splitk", "matmul_6_subgroup", 2048) is None


@pytest.mark.parametrize("blas, outcome, words", [
    ((346.0, 344.0, 348.0), timing.B_FASTER, "per call, cuBLAS fp32 (346 µs (344–348)) is 1.16× faster than matmul_9"),
    ((398.0, 380.0, 420.0), timing.SAME, "per call, matmul_9 (402 µs (400–403)) and cuBLAS fp32 (398 µs (380–420)) "
                                         "are the same within the noise we measured"),
    ((500.0, 498.0, 503.0), timing.A_FASTER, "per call, matmul_9 (402 µs (400–403)) is 1.24× faster than cuBLAS")])
def test_limit_sentence_judges_the_fastest_rung_against_cublas(blas, outcome, words):
    from helpers.bench import matmul as bench_matmul
    rows = [_us_row("matmul_6_subgroup", 2048, 468.0, 467.0, 469.0), _us_row("matmul_9_interior", 2048, 402.0, 400.0, 403.0),
            _us_row(BLAS, 2048, *blas)]
    (g,) = bench_matmul.against_cublas(rows)
    v = bench_matmul.limit_sentence(rows, g)
    assert v.outcome == outcome and words in v
    ours, theirs = bench_matmul.tflops_text(timing.Timing.from_row(rows[1], "seconds", 1.0), 2048), \
        bench_matmul.tflops_text(timing.Timing.from_row(rows[2], "seconds", 1.0), 2048)
    share = bench_matmul.percent_of(rows[1]["gflops"], rows[2]["gflops"])    # as the table prints it
    assert v.startswith(f"At 2048³ the rung of lowest median, matmul_9_interior, ran {ours} and cuBLAS fp32 {theirs} in the "
                        f"same run, {share}% of cuBLAS fp32's speed from the table's GFLOP/s; per call, ")
    clocked = [dict(r, clock="test") for r in rows]
    assert f"{share}%" in bench_matmul.table(clocked) and share == bench_matmul.percent(g["share"])


def test_limit_sentence_prints_the_share_the_table_and_what_we_measured_print():
    """65.8 against 64.9 µs at 1024³: the TFLOP/s as printed, 32.6 against 33.1, give 98 % in whole percent, the
    table's 32636 against 33088 GFLOP/s give 98.6 %: the sentence prints the table's figure, the one README and
    "What we measured" print (percent(g['share'])), never a second rounding of the TFLOP/s figures."""
    from decimal import Decimal
    from helpers.bench import matmul as bench_matmul
    rows = [_us_row("matmul_9_interior", 1024, 65.8, 65.7, 65.9), _us_row(BLAS, 1024, 64.9, 64.8, 65.0)]
    (g,) = bench_matmul.against_cublas(rows)
    v = bench_matmul.limit_sentence(rows, g)
    share = bench_matmul.percent(g["share"])
    assert share == bench_matmul.percent_of(rows[0]["gflops"], rows[1]["gflops"]) == Decimal("98.6")
    assert "ran 32.6 TFLOP/s (32.6–32.7) and cuBLAS fp32 33.1 TFLOP/s (33.0–33.1) in the same run, " in v
    assert f", {share}% of cuBLAS fp32's speed from the table's GFLOP/s;" in v and "98%" not in v
    assert f"{share}%" in bench_matmul.table([dict(r, clock="test") for r in rows])


def test_what_we_measured_prints_the_share_of_cublas_as_the_table_does():
    """Notebook 04's "What we measured" prints the fastest rung's share with percent (one decimal), not :.0%."""
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).parent.parent / "notebooks" / "04_matmul_ladder.ipynb").read_text())
    (src,) = ["".join(c["source"]) for c in nb["cells"] if "findings.what_we_measured" in "".join(c["source"])]
    assert "bench_matmul.percent(best['share'])}%" in src and "best['share']:.0%" not in src


def test_limit_sentence_names_the_rungs_level_with_the_lowest_median():
    """matmul_9 402 µs (400–403) and matmul_8 404 µs (401–406) meet: the sentence names matmul_9 as the rung of
    lowest median and matmul_8 as level with it; with matmul_8 at 440 µs it names matmul_9 alone."""
    from helpers.bench import matmul as bench_matmul
    for m8, level in (((404.0, 401.0, 406.0), " (level with matmul_8_splitk)"), ((440.0, 438.0, 442.0), "")):
        rows = [_us_row("matmul_9_interior", 2048, 402.0, 400.0, 403.0), _us_row("matmul_8_splitk", 2048, *m8),
                _us_row(BLAS, 2048, 346.0, 344.0, 348.0)]
        (g,) = bench_matmul.against_cublas(rows)
        assert g["best"] == "matmul_9_interior" and g["level"] == (["matmul_8_splitk"] if level else [])
        assert bench_matmul.limit_sentence(rows, g).startswith(
            f"At 2048³ the rung of lowest median, matmul_9_interior{level}, ran ")


def test_limit_sentence_without_bands_does_not_judge():
    from helpers.bench import matmul as bench_matmul
    rows = [{k: v for k, v in r.items() if k not in ("seconds_low", "seconds_high")} for r in
            (_us_row("matmul_9_interior", 2048, 402.0, 400.0, 403.0), _us_row(BLAS, 2048, 500.0, 498.0, 503.0))]
    (g,) = bench_matmul.against_cublas(rows)
    v = bench_matmul.limit_sentence(rows, g)
    assert v.outcome == bench_matmul.UNJUDGED and "cannot be judged" in v and "faster than" not in v
    assert "(no spread recorded)" in v


@pytest.mark.parametrize("rows, given, kind", [
    ([sweep_row(1, 2.0, 1.0)], None, "float32"),                                   # no input named: float32
    ([dict(sweep_row(1, 2.0, 1.0), input="uint8")], None, "uint8"),                 # sweep() names it
    ([dict(sweep_row(1, 2.0, 9.0), input="uint8")], "float32", "float32")])         # given wins
def test_crossover_sentence_names_the_gpu_input(rows, given, kind):
    v = inference.crossover_sentence(rows, given)
    assert v.startswith(f"with {kind} input to the GPU, ")
    assert ("NumPy is ahead or level" in v) == (v.outcome == inference.NUMPY_EVERYWHERE)


def test_cublas_share_notes_say_cheaper_per_call_only_of_the_rungs_named_faster():
    """The committed 256³ case: cuBLAS mostly launch overhead, two rungs faster beyond the noise and one above
    100 % level with it. The note says the rungs named faster cost less per call, not that any share above
    100 % does (matmul_1_naive's 105.3 % is level), and each share says whose speed it is of: cuBLAS's."""
    from helpers.bench import matmul as bench_matmul
    rows = [_us_row(BLAS, 4096, 2700.0, 2690.0, 2710.0), _us_row(BLAS, 256, 20.7, 20.0, 21.5),
            _us_row("matmul_1_naive", 256, 19.66, 19.5, 20.1), _us_row("matmul_2_tiled", 256, 11.1, 11.0, 11.2),
            _us_row("matmul_9_interior", 256, 15.6, 15.5, 15.7)]
    (note,) = bench_matmul.cublas_share_notes(rows)
    assert note.outcome == bench_matmul.OVERHEAD
    assert "matmul_2_tiled 186.5% of cuBLAS's speed (11.1 µs (11.0–11.2)) and matmul_9_interior 132.7% of cuBLAS's speed " \
           "(15.6 µs (15.5–15.7)) cost less per call, beyond the noise and the 5 % margin" in note
    assert "so the rungs named faster cost less per call here, which says nothing of whether their arithmetic" in note
    assert "; matmul_1_naive 105.3% of cuBLAS's speed (19.7 µs (19.5–20.1)) is level with cuBLAS, the same within the " \
           "noise we measured." in note
    assert "share above" not in note and "%)" not in note


@pytest.mark.parametrize("ninth, named", [(1.00e-3, "matmul_9"),     # 10 % ahead, bands apart: named
                                          (1.06e-3, "level"),        # bands apart, 4 % ahead: within the 5 %
                                          (1.095e-3, "level"),       # bands overlap
                                          (1.30e-3, "matmul_6")])    # the other way round
def test_fastest_beyond_noise_names_a_rung_only_past_the_noise(ninth, named):
    """The 'fastest on the H100' row of notebook 04 names the rung of lowest median only where compare()
    calls it faster than every other rung; otherwise 'level'. A rung without a row at that size is left out."""
    from helpers.bench import matmul as bench_matmul

    def row(impl, seconds):
        return _banded({"impl": impl, "size": 1024, "seconds": seconds, "gflops": 2 * 1024 ** 3 / seconds / 1e9})
    rows = [row("matmul_9_interior", ninth), row("matmul_6_subgroup", 1.1e-3), row("matmul_1_naive", 9e-3)]
    rungs = ["matmul_1_naive", "matmul_6_subgroup", "matmul_8_splitk", "matmul_9_interior"]
    assert bench_matmul.fastest_beyond_noise(rows, rungs, 1024) == named
    with pytest.raises(ValueError, match="no rung has a row at 2048"):
        bench_matmul.fastest_beyond_noise(rows, rungs, 2048)


@pytest.mark.parametrize("at_4096, words, outcome", [
    ((180.0, 179.0, 181.0), "From 2048³ (256 work groups) matmul_4 is ahead beyond the noise", "from a size"),
    ((200.0, 199.0, 201.0), "At no larger size is matmul_4 ahead of matmul_3 beyond the noise.", "never")])
def test_bigger_blocks_ahead_from_a_size_and_every_larger_one(at_4096, words, outcome):
    """matmul_4 ahead at 2048³; at 4096³ ahead too (from 2048³ on) or level with matmul_3 (nowhere from a size on,
    so never); 1024³, where it is behind, is not a larger size than `after`."""
    from helpers.bench import matmul as bench_matmul
    rows = [_us_row("matmul_3_blocked", 1024, 150.0, 149.0, 151.0), _us_row("matmul_4_bigtile", 1024, 196.0, 195.0, 197.0),
            _us_row("matmul_3_blocked", 2048, 100.0, 99.0, 101.0), _us_row("matmul_4_bigtile", 2048, 80.0, 79.0, 81.0),
            _us_row("matmul_3_blocked", 4096, 200.0, 199.0, 201.0), _us_row("matmul_4_bigtile", 4096, *at_4096)]
    groups = {("matmul_4_bigtile", 2048): 256, ("matmul_4_bigtile", 4096): 1024}
    v = bench_matmul.bigger_blocks_ahead(rows, "matmul_4_bigtile", "matmul_3_blocked", (1024, 2048, 4096), 1024, groups)
    assert v.startswith(words) and v.outcome == outcome

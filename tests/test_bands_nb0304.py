"""Notebooks 03 and 04: every figure with its 20–80 % band, never collapsed, trailing zeros kept; every speed
claim judged (timing.compare), each sentence function on both sides of its threshold."""

from decimal import Decimal

import pytest

from helpers import inference, timing
from helpers.bench import inference as bench_inference
from helpers.bench import matmul as bench_matmul

SIX, EIGHT = "matmul_6_subgroup", "matmul_8_splitk"


def _us_row(impl, n, median, low, high, banded=True):
    """A benchmark row from µs figures: median and (where banded) its 20–80 % band, GFLOP/s from the median."""
    row = {"impl": impl, "size": n, "seconds": median * 1e-6, "gflops": 2 * n ** 3 / (median * 1e-6) / 1e9,
           "clock": "GPU timer query", "defines": {}}
    if banded:
        row.update(seconds_low=low * 1e-6, seconds_high=high * 1e-6)
    return row


def _us(*samples):
    return timing.Timing(tuple(s * 1e-6 for s in samples))


# --- notebook 04: split-K at one piece, judged --------------------------------------------------------------

def test_splitk_one_piece_same_where_the_bands_part_within_the_margin():
    """The committed 2048³ case: 461 against 467.9 µs, bands apart, 1.01× apart: the same, not faster; and the
    sentence keeps that with one piece split-K does matmul_6's work in one dispatch, in a shader of its own."""
    rows = [_us_row(EIGHT, 2048, 461.0, 460.5, 461.2), _us_row(SIX, 2048, 467.9, 467.5, 468.2)]
    v = bench_matmul.splitk_size_sentence(rows, 2048, 1, 256)
    assert v.outcome == timing.SAME
    assert v.startswith("At 2048³, 1 piece of k in 256 work groups, matmul_8 ran ")
    assert "with one piece split-K does matmul_6's work in one dispatch, in a shader of its own" in v
    assert "are 1.01× apart, within the 5 % we call the same" in v
    assert "same kernel" not in v and "faster" not in v


def test_splitk_one_piece_same_where_the_bands_overlap():
    rows = [_us_row(EIGHT, 2048, 465.0, 460.0, 470.0), _us_row(SIX, 2048, 467.0, 462.0, 472.0)]
    v = bench_matmul.splitk_size_sentence(rows, 2048, 1, 256)
    assert v.outcome == timing.SAME and timing.SAME_WITHIN_NOISE in v


def test_splitk_one_piece_faster_beyond_the_margin():
    rows = [_us_row(EIGHT, 4096, 3400.0, 3390.0, 3410.0), _us_row(SIX, 4096, 3619.0, 3610.0, 3625.0)]
    v = bench_matmul.splitk_size_sentence(rows, 4096, 1, 1024)
    assert v.outcome == timing.A_FASTER
    assert "matmul_8 (3.40 ms (3.39–3.41)) is 1.06× faster than matmul_6 (3.62 ms (3.61–3.62))" in v


def test_splitk_one_piece_slower_beyond_the_margin():
    rows = [_us_row(EIGHT, 4096, 3900.0, 3890.0, 3910.0), _us_row(SIX, 4096, 3619.0, 3610.0, 3625.0)]
    v = bench_matmul.splitk_size_sentence(rows, 4096, 1, 1024)
    assert v.outcome == timing.B_FASTER and "matmul_6 (3.62 ms (3.61–3.62)) is 1.08× faster than matmul_8 (3.90 ms (3.89–3.91))" in v


def test_splitk_one_piece_without_bands_is_not_judged():
    rows = [_us_row(EIGHT, 2048, 400.0, 0, 0, banded=False), _us_row(SIX, 2048, 467.9, 467.5, 468.2)]
    v = bench_matmul.splitk_size_sentence(rows, 2048, 1, 256)
    assert v.outcome == bench_matmul.UNJUDGED and "cannot be judged" in v
    assert "faster than" not in v and "the same" not in v


def test_splitk_several_pieces_prints_the_speeds_and_claims_nothing():
    """With several pieces the speeds alone, each with its band: matmul.splitk_verdict judges those sizes."""
    rows = [_us_row(EIGHT, 1024, 74.3, 73.9, 74.6), _us_row(SIX, 1024, 148.0, 147.9, 148.2)]
    v = bench_matmul.splitk_size_sentence(rows, 1024, 4, 256)
    assert v.outcome == bench_matmul.SEVERAL_PIECES
    assert v == ("At 1024³, 4 pieces of k in 256 work groups, matmul_8 ran 28.9 TFLOP/s (28.8–29.1) against "
                 "matmul_6's 14.51 TFLOP/s (14.49–14.52).")
    assert bench_matmul.splitk_size_sentence(rows[:1], 1024, 4, 256) is None       # no matmul_6 row


# --- notebook 04: the ladder's climb, rates with their bands ----------------------------------------------

def test_climb_text_names_the_top_alone_where_it_is_faster_than_every_rung():
    timings = {"matmul_1_naive": _us(469.0, 469.5, 470.0, 470.2, 470.5), "matmul_2_tiled": _us(305.0, 305.1, 305.1, 305.2, 305.3),
               "matmul_9_interior": _us(65.6, 65.7, 65.7, 65.8, 65.8)}
    text = bench_matmul.climb_text(timings, "matmul_1_naive", 1024)
    assert text.startswith("the ladder went from matmul_1_naive's 4.569 TFLOP/s (4.567–4.575) to ")
    assert text.endswith("for matmul_9_interior, the rung of lowest median")
    assert "level with" not in text


def test_climb_text_names_the_rungs_level_with_the_top():
    timings = {"matmul_1_naive": _us(469.0, 469.5, 470.0, 470.2, 470.5),
               "matmul_8_splitk": _us(66.0, 66.5, 67.0, 67.5, 68.0), "matmul_9_interior": _us(65.5, 66.0, 66.5, 67.0, 67.5)}
    text = bench_matmul.climb_text(timings, "matmul_1_naive", 1024)
    assert text.endswith("for matmul_9_interior, the rung of lowest median, level with matmul_8_splitk")


def test_climb_text_never_prints_a_collapsed_band_and_keeps_trailing_zeros():
    """2·1024³ flops in 53.687 µs is 40.000 TFLOP/s: its zeros kept; a band narrower than three digits gets more."""
    timings = {"matmul_1_naive": _us(470.0, 470.01, 470.02), "matmul_9_interior": _us(53.686, 53.687, 53.688)}
    text = bench_matmul.climb_text(timings, "matmul_1_naive", 1024)
    assert "matmul_1_naive's 4.5690 TFLOP/s (4.5690–4.5691)" in text
    assert "to 40.000 TFLOP/s (40.000–40.001)" in text


def test_tflops_text_keeps_trailing_zeros():
    t = timing.Timing.from_row({"us": 3619.0, "us_low": 3600.0, "us_high": 3622.0}, "us", 1e6)
    assert bench_matmul.tflops_text(t, 4096) == "38.0 TFLOP/s (37.9–38.2)"


@pytest.mark.parametrize("value, shown", [(70.0, "70.0"), (5.2, "5.20"), (0.12, "0.120"), (99.96, "100"),
                                          (349.4, "349"), (1230.0, "1230")])
def test_table_figures_keep_trailing_zeros_below_100_and_are_whole_above(value, shown):
    assert bench_matmul._fmt(value) == shown


def test_percent_of_reads_the_figures_with_their_zeros():
    """70.0 over 140 GFLOP/s as the table prints them: 50.0 %, the zeros changing no value."""
    assert bench_matmul.percent_of(70.0, 140.0) == Decimal("50.0")
    table = bench_matmul.table([{"impl": "matmul_1_naive", "size": 64, "seconds": 1.0, "gflops": 5.2, "clock": "x"}])
    assert "5.20" in table


# --- notebook 03: the range of the level uploads' shares ---------------------------------------------------

PIPELINED = "upload float32 via a persistently mapped buffer, 2 threads, pipelined + GPU copy"
ORPHANED = "upload float32 into existing buffer, orphaned first"


def _upload_rows(orphaned, pipelined, ceiling=52.7):
    bytes_ = 31_360_000
    return [{"what": w, "seconds": bytes_ / g / 1e9, "clock": "wall", "gbps": g} for w, g in [
        ("upload float32 into existing buffer", 10.0), (ORPHANED, orphaned), (PIPELINED, pipelined),
        (bench_inference.CEILING, ceiling)]]


@pytest.mark.parametrize("rows, words", [
    ([{"gbps": 13.79}, {"gbps": 14.01}], "they reach 26% to 27% of it"),     # 26.2 % and 26.6 %: two shares
    ([{"gbps": 14.01}, {"gbps": 14.05}], "each reaches 27% of it")])        # both print 27 %
def test_shares_range_lowest_to_highest_or_one_share(rows, words):
    assert bench_inference.shares_range(rows, {"gbps": 52.7}) == words


def test_other_uploads_gives_the_range_of_the_level_ways_shares_not_a_quickest():
    level = bench_inference.other_uploads(_upload_rows(14.01, 13.79))                 # 1.016×: level
    assert "the fastest ways are level" in level and "they reach 26% to 27% of it." in level
    assert "quickest" not in level
    alone = bench_inference.other_uploads(_upload_rows(14.01, 13.0))                  # 1.08×: beyond the margin
    assert "the fastest, into existing buffer, orphaned first, ahead of the others" in alone
    assert "reaches 27% of it." in alone and "they reach" not in alone


def test_table_names_the_upload_of_highest_median_rate_not_the_fastest():
    rows = [dict(r, images=10_000, bytes=31_360_000) for r in _upload_rows(14.01, 13.79)]
    text = bench_inference.table(rows)
    assert f"float32 upload of highest median rate: {ORPHANED}, 14.01 GB/s, 27% of the ceiling" in text
    assert "fastest" not in text


# --- notebook 03: the training time per epoch with its band ------------------------------------------------

def test_training_time_text_several_epochs_prints_the_median_and_band_an_epoch():
    assert inference.training_time_text([0.36, 0.367, 0.38]) == (
        "367 ms (363–375) an epoch of training by wall clock, the median and 20–80 % band of 3 epochs")


def test_training_time_text_a_narrow_band_gets_more_digits_and_zeros_stay():
    text = inference.training_time_text([0.3670, 0.36705, 0.3671])
    assert text.startswith("367.1 ms (367.0–367.1) an epoch")           # 367 ms (367–367) at three digits
    assert inference.training_time_text([1.0, 1.0001, 1.0002]).startswith("1.0001 s (1.0000–1.0002) an epoch")


def test_training_time_text_one_epoch_has_no_band():
    assert inference.training_time_text([0.367]) == "367 ms for its one epoch of training by wall clock"
    assert inference.training_time_text([2.0]) == "2.00 s for its one epoch of training by wall clock"


def test_training_time_text_equal_epochs_and_none():
    assert inference.training_time_text([0.367, 0.367]) == "367 ms for each of its 2 epochs of training by wall clock"
    assert inference.training_time_text([]) == "no epoch of training"


# --- notebook 03: the batch-size sweep table's bands never collapse ----------------------------------------

def _sweep_row(batch, **phases):
    """A sweep row from µs samples per phase."""
    timings = {k: _us(*v) for k, v in phases.items()}
    return {"batch": batch, **{k: t.median for k, t in timings.items()}, "timings": timings,
            "clock": "GPU timer query", "input": "float32"}


def test_sweep_table_band_that_would_collapse_gets_more_digits():
    """The committed run printed '349 (349–349)' for the kernel at batch 10; now '349.2 (349.1–349.3)'."""
    row = _sweep_row(10, upload=(4.2, 4.5, 5.0), kernel=(349.1, 349.15, 349.2, 349.25, 349.3),
                     readback=(32, 33, 35), total=(411, 412, 419), numpy=(51, 53, 63))
    table = inference.sweep_table([row])
    assert "349.2 (349.1–349.3)" in table and "349 (349–349)" not in table
    assert "412 (411–416)" in table and "53 (52–59)" in table and " 4 (4–5)" in table   # whole µs where they part


def test_sweep_table_whole_us_where_the_band_parts():
    assert inference._us_figures(_us(3062, 3130, 3207)) == ("3130", "3089", "3176")
    assert inference._us_figures(_us(999.5, 999.6, 999.7)) == ("999.6", "999.5", "999.7")   # would collapse at 1000
    assert inference._us_figures(_us(998.0, 999.6, 1001.0)) == ("1000", "999", "1000")      # whole µs: 999.6 is 1000


def test_shown_us_is_the_median_the_table_prints():
    row = _sweep_row(10, upload=(4, 5, 6), kernel=(349.1, 349.15, 349.2, 349.25, 349.3), readback=(3, 4, 5),
                     total=(999.0, 999.6, 1002.0), numpy=(50, 53, 60))
    assert inference.shown_us(row, "kernel") == Decimal("349.2")
    assert inference.shown_us(row, "total") == Decimal("1000")
    assert inference.shown_us({"batch": 1, "total": 357.4e-6}, "total") == Decimal("357")   # no timings: the median


@pytest.mark.parametrize("gpu, numpy, outcome", [
    ((349.1, 349.2, 349.3), (523.5, 523.9, 524.0), timing.A_FASTER),   # 523.9 / 349.2 = 1.5003: beyond 1.5×
    ((349.1, 349.2, 349.3), (523.5, 523.8, 524.0), timing.SAME)])      # 523.8 / 349.2 = 1.5: not beyond
def test_ahead_judges_the_margin_on_the_extra_digits_the_table_prints(gpu, numpy, outcome):
    row = _sweep_row(1000, upload=(1, 2, 3), kernel=(1, 2, 3), readback=(1, 2, 3), total=gpu, numpy=numpy)
    assert inference._us_figures(row["timings"]["total"])[0] == "349.2"
    assert inference.ahead(row) == outcome


@pytest.mark.parametrize("first_us, unit", [
    (2.147483648e9 / 1.1e10 * 1e6, "TFLOP/s"),    # matmul_1 at 11 GFLOP/s: at or above 10 GFLOP/s, TFLOP/s
    (2.147483648e9 / 0.9e10 * 1e6, "GFLOP/s")])   # at 9 GFLOP/s: below, GFLOP/s for both figures
def test_climb_text_speaks_in_gflops_below_ten_gflops(first_us, unit):
    timings = {"matmul_1_naive": _us(0.99 * first_us, first_us, 1.01 * first_us),
               "matmul_9_interior": _us(0.099 * first_us, 0.1 * first_us, 0.101 * first_us)}
    text = bench_matmul.climb_text(timings, "matmul_1_naive", 1024)
    assert text.count(unit) == 2 and ({"TFLOP/s", "GFLOP/s"} - {unit}).pop() not in text


def test_climb_text_on_a_software_renderer_prints_no_zeros_for_figures():
    """llvmpipe at 128³: 0.03 and 0.8 GFLOP/s, never '0 TFLOP/s (0–0)'."""
    flops = 2 * 128 ** 3
    timings = {"matmul_1_naive": _us(*(flops / g * 1e6 for g in (0.031e9, 0.030e9, 0.029e9))),
               "matmul_4_bigtile": _us(*(flops / g * 1e6 for g in (0.81e9, 0.80e9, 0.79e9)))}
    text = bench_matmul.climb_text(timings, "matmul_1_naive", 128)
    assert "matmul_1_naive's 0.0300 GFLOP/s (0.0294–0.0306)" in text and "to 0.800 GFLOP/s (0.794–0.806)" in text
    assert "TFLOP/s" not in text


def test_training_time_names_the_range_where_only_the_band_has_no_width():
    from helpers import inference as inf
    text = inf.training_time_text([1, 2, 2, 2, 2, 2, 2, 2, 9])
    assert "each of its" not in text and "from 1.00 to 9.00 s" in text
    assert "for each of its 3 epochs" in inf.training_time_text([2, 2, 2])


def _row(gpu, numpy):
    T = lambda m, lo, hi: timing.Timing(tuple(x * 1e-6 for x in (lo, lo, m, hi, hi)))   # noqa: E731
    return {"batch": 10, "total": gpu[0] * 1e-6, "numpy": numpy[0] * 1e-6,
            "timings": {"total": T(*gpu), "numpy": T(*numpy)}}


def test_sweep_verdicts_judge_the_bands_the_table_prints():
    from helpers import inference as inf
    row = _row((20, 19, 29.6), (40, 30.4, 50))            # prints 20 (19–30) against 40 (30–50): they meet
    assert inf._us_figures(row["timings"]["total"]) == ("20", "19", "30")
    assert inf._us_figures(row["timings"]["numpy"]) == ("40", "30", "50")
    assert inf.ahead(row) == timing.SAME
    close = _row((34.9, 34.2, 35.1), (35.4, 35.2, 36.4))  # 35 (34–35) against 35 (35–36): they meet
    assert "the same within the noise" in inf.crossover_sentence([close])

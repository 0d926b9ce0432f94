"""Bands and figures of notebooks 05 to 07 (and the appendix's helpers they share): every measured figure printed
with its 20–80 % band, never collapsed; a sum or a difference of printed figures written to the decimals those
figures were printed to; each sentence function tried on both sides of its thresholds."""

import re
from decimal import Decimal

import pytest

from helpers import fused_mlp, timing
from helpers.bench import dropout as bench_dropout
from helpers.bench import fused as bench_fused
from helpers.bench import profile, train

US = 1e-6


def T_us(median_us, spread=0.01):
    """A made-up Timing around median_us µs, its band about ± 0.6 spread of it."""
    m = median_us * US
    return timing.Timing(tuple(m * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)))


def T_ms(ms, spread=0.01, n=9):
    return timing.Timing(tuple(ms * 1e-3 * (1 + spread * (2 * i / (n - 1) - 1)) for i in range(n)))


# --- notebook 05: the epoch's parts and the transfers, with their bands -------------------------------------------

def _epoch_profile(readback_steps=50):
    return {"step_timing": T_us(43.1), "readback_timing": T_us(35.2), "order_upload_timing": T_us(52.0),
            "readback_steps": readback_steps}


@pytest.mark.parametrize("readbacks, words", [(10, "10 readbacks of 35.2 µs (35.0–35.4) each"),
                                              (1, "a readback of 35.2 µs (35.0–35.4)")])
def test_epoch_parts_sentence_gives_each_part_its_band(readbacks, words):
    text = profile.epoch_parts_sentence(_epoch_profile(), 469, readbacks, T_ms(21.9))
    assert text.startswith(f"The 469 steps of {T_us(43.1).text()}, {words} (the losses of 50 steps)")
    assert f"the order upload of {T_us(52.0).text()}" in text and "52.0 µs (" in text   # its zero kept
    assert text.endswith(f"add up to the back-to-back epoch, {T_ms(21.9).text()}.")
    assert ("readbacks" in text) == (readbacks > 1)


@pytest.mark.parametrize("reads, words", [(50, "(the losses of 50 steps)"), (1, "(the losses of 1 step)")])
def test_epoch_parts_sentence_one_step_read_back_or_many(reads, words):
    assert words in profile.epoch_parts_sentence(_epoch_profile(reads), 469, 10, T_ms(21.9))


def test_epoch_parts_sentence_never_prints_a_collapsed_band():
    prof = _epoch_profile()
    prof["readback_timing"] = T_us(35.2, spread=0.0004)       # 35.19..35.21: at three figures 35.2 (35.2–35.2)
    text = profile.epoch_parts_sentence(prof, 469, 10, T_ms(21.9))
    assert "(35.2–35.2)" not in text and "35.20 µs (35.19–35.21)" in text


def _crossings(order_time, readback_time):
    return [("once", "training images (uint8, 4 a word) + labels + initial parameters", "CPU → GPU", 3, 47_687_296, None),
            ("per epoch", "the sample order", "CPU → GPU", 1, 240_000, order_time),
            ("per check", "loss sum and correct count of 50 steps", "GPU → CPU", 1, 400, readback_time)]


def test_transfer_table_columns_line_up_whatever_the_widest_cell():
    """The 'what' cell of the first row is longer than the 58 characters the header once had: every column
    starts at the same place in every line."""
    lines = train.transfer_table(_crossings(T_us(52.0), T_us(35.2))).split("\n")
    assert len(lines) == 4
    start = lines[0].index("direction")
    assert all(line[start:].startswith(("direction", "CPU → GPU", "GPU → CPU")) for line in lines)
    ends = {len(line) for line in (lines[0], lines[2], lines[3])}   # right-aligned times: the timed rows end together
    assert len(ends) == 1, lines
    assert lines[1].endswith("47,687,296")                         # an untimed row stops at its bytes
    byte_end = lines[0].index("bytes") + len("bytes")
    assert all(line[:byte_end].endswith(figure) for line, figure in
               zip(lines, ("bytes", "47,687,296", "240,000", "400")))


def test_transfer_table_prints_a_time_with_its_band_and_leaves_untimed_rows_empty():
    lines = train.transfer_table(_crossings(T_us(52.0), None)).split("\n")
    assert lines[2].endswith(T_us(52.0).text()) and "(51.7–52.3)" in lines[2]
    assert lines[1].endswith("47,687,296") and lines[3].endswith("400")     # no time: nothing after the bytes


# --- notebook 05: what the parts overrun the epoch by, its trailing zeros kept ----------------------------------

def _overrun(rest_ms):
    parts = {"kernel": 11.8e-3, "dispatch": 7e-3, "readback": 0.4e-3, "upload": 0.049e-3, "unaccounted": rest_ms * 1e-3}
    parts["between dispatches"] = 20e-3 - sum(parts.values())
    return parts


@pytest.mark.parametrize("rest_ms, figure", [(-0.6, "0.60 ms"), (-2.0, "2.0 ms"), (-0.62, "0.62 ms"),
                                             (-99.4, "99 ms"), (-100.0, "100 ms"), (-1234.0, "1,234 ms")])
def test_unaccounted_sentence_keeps_its_trailing_zeros_either_side_of_100_ms(rest_ms, figure):
    """Two significant digits below 100 ms, with their zeros (0.60, 2.0: as timing._g writes them); whole
    milliseconds from 100 ms up."""
    said = train.unaccounted_sentence(_overrun(rest_ms))
    assert f"by {figure} (" in said


@pytest.mark.parametrize("rest_ms", [0.0, 0.5])
def test_unaccounted_sentence_says_nothing_at_zero_or_above(rest_ms):
    assert train.unaccounted_sentence(_overrun(rest_ms)) == ""


# --- notebook 06: the kernels of a step added up, one figure for the table and the sentences ---------------------

def _prof(kernels):
    timings = {f"k{i}.comp": t for i, t in enumerate(kernels)}
    return {"kernel_timing": timings, "kernel": {k: t.median for k, t in timings.items()}, "empty": 2.53e-6}


def test_kernels_a_step_is_the_printed_kernels_added_up():
    """9.88 + 5.23 + 6.26 + 5.31 + 9.27 + 4.26 (each printed to hundredths) = 40.21 µs, the figure the
    kernel-share sentence gives; the kernels' medians at three figures would print 40.2."""
    kernels = [T_us(m, 0.001) for m in (9.88, 5.23, 6.26, 5.31, 9.27, 4.26)]
    prof = _prof(kernels)
    assert bench_fused.kernels_a_step(prof) == "40.21 µs"
    assert bench_fused.kernels_above(prof)[0] == bench_fused.kernels_a_step(prof)
    assert bench_fused.kernels_a_step(prof) == profile.added_up(kernels)


@pytest.mark.parametrize("figure, places", [("40.21 µs", 2), ("40.2 µs", 1), ("349 µs", 0), ("0.120 ms", 3)])
def test_decimals_of_a_printed_figure(figure, places):
    assert bench_fused.decimals(figure) == places


@pytest.mark.parametrize("decimals, kernels", [(1, ("40.2 µs", "21.1 µs")), (2, ("40.21 µs", "21.11 µs"))])
def test_fusion_segments_prints_the_kernels_at_the_tables_decimals(decimals, kernels):
    v = fused_mlp.fusion_segments(40.21e-6, 42.43e-6, 21.11e-6, 23.03e-6, (6, 2), 2.64e-6, decimals=decimals)
    assert f"from {kernels[0]} to {kernels[1]}" in v and v.outcome == fused_mlp.KERNEL_FELL_MORE


def test_fusion_segments_at_hundredths_is_the_difference_of_its_printed_figures():
    v = fused_mlp.fusion_segments(40.21e-6, 42.43e-6, 21.11e-6, 23.03e-6, (6, 2), 2.64e-6, decimals=2)
    got = re.search(r"from ([\d.]+) µs to ([\d.]+) µs \(down ([\d.]+) µs\).* from 6 × 2.64 µs = ([\d.]+) µs to "
                    r"2 × 2.64 µs = ([\d.]+) µs \(down ([\d.]+) µs\).* went from ([\d.]+) µs to ([\d.]+) µs "
                    r"\(down ([\d.]+) µs\)", v)
    k_u, k_f, k_d, f_u, f_f, f_d, r_u, r_f, r_d = (Decimal(g) for g in got.groups())
    assert k_u - k_f == k_d and f_u - f_f == f_d and r_u - r_f == r_d
    assert (f_u, f_f, r_u, r_f) == (Decimal("15.84"), Decimal("5.28"), Decimal("2.22"), Decimal("1.92"))


@pytest.mark.parametrize("empty_us, outcome", [(2.51, fused_mlp.BOTH_ALIKE),          # fixed down 10.04: 0.04 apart
                                               (1.99, fused_mlp.KERNEL_FELL_MORE),    # fixed down 7.96: 2.04 > 2.00
                                               (3.13, fused_mlp.FIXED_FELL_MORE)])    # fixed down 12.52: 2.52 > 2.504
def test_fusion_segments_at_hundredths_either_side_of_the_margin(empty_us, outcome):
    v = fused_mlp.fusion_segments(30e-6, 45e-6, 20e-6, 25e-6, (6, 2), empty_us * US, decimals=2)
    assert v.outcome == outcome and "from 30.00 µs to 20.00 µs (down 10.00 µs)" in v


# --- notebook 07: the kernels with bands that never collapse, and the cost sentence at their decimals ------------

PLAIN = {"fused_forward_1_xent.comp": T_us(68.4), "fused_backward_1_update.comp": T_us(40.2, 0.001)}
REGULARISED = {"fused_forward_2_dropout.comp": T_us(81.9), "fused_backward_2_dropout.comp": T_us(55.8),
               "maxnorm_1_columns.comp": T_us(7.02, 0.0005)}


def test_kernels_text_never_prints_a_collapsed_band():
    """A band of 7.0175 to 7.0225 µs printed to 0.1 µs read '7.0 µs (7.0–7.0)': here it gets its hundredths
    and more, and a wide band keeps three figures."""
    text = bench_dropout.kernels_text(REGULARISED)
    assert "(7.0–7.0)" not in text and "maxnorm_1_columns.comp 7.020 µs (7.018–7.022)" in text
    assert "fused_forward_2_dropout.comp 81.9 µs (81.4–82.4)" in text
    for low, high in re.findall(r"\(([\d.]+)–([\d.]+)\)", text + bench_dropout.kernels_text(PLAIN)):
        assert low != high


def test_kernel_costs_are_the_printed_figures_at_their_decimals():
    """81.9 - 68.4 + 55.8 - 40.20 = 29.10 µs (40.20: the plain backward printed to hundredths); max-norm 7.020."""
    dropout_s, maxnorm_s, places = bench_dropout.kernel_costs(PLAIN, REGULARISED)
    assert PLAIN["fused_backward_1_update.comp"].text("µs").startswith("40.20 µs")
    assert places == (2, 3)
    assert f"{1e6 * dropout_s:.2f}" == "29.10" and f"{1e6 * maxnorm_s:.3f}" == "7.020"


def test_cost_sentence_quotes_the_kernels_as_printed_above_it():
    dropout_s, maxnorm_s, places = bench_dropout.kernel_costs(PLAIN, REGULARISED)
    v = bench_dropout.cost_sentence(T_ms(67.6), T_ms(53.6), dropout_s, maxnorm_s, steps=469, decimals=places)
    assert "add up to 29.10 µs more than the plain pair's" in v and "max-norm dispatch's median is 7.020 µs" in v
    assert "7.0 µs" not in v
    # 469 × (29.10 + 7.020) µs = 16.94 ms, printed 16.9 ms, against 67.6 - 53.6 = 14.0 ms
    assert "those figures come to 16.9 ms against the epochs' difference of 14.0 ms" in v


@pytest.mark.parametrize("decimals, extra, maxnorm", [(1, "29.1 µs", "7.0 µs"), (2, "29.10 µs", "7.02 µs"),
                                                       ((1, 2), "29.1 µs", "7.02 µs")])
def test_cost_sentence_decimals_one_for_both_or_a_pair(decimals, extra, maxnorm):
    v = bench_dropout.cost_sentence(T_ms(67.6), T_ms(53.6), 29.1e-6, 7.02e-6, steps=469, decimals=decimals)
    assert f"add up to {extra} more" in v and f"median is {maxnorm}" in v


@pytest.mark.parametrize("regularised, copies", [(67.6, True),     # 16.9 ms of kernels against 14.0 ms
                                                 (72.5, False)])   # against 18.9 ms: nothing to explain
def test_cost_sentence_at_hundredths_either_side_of_the_epochs_difference(regularised, copies):
    v = bench_dropout.cost_sentence(T_ms(regularised), T_ms(53.6), 29.10e-6, 7.02e-6, steps=469, decimals=(2, 2))
    assert v.outcome == bench_dropout.COSTS_MORE and "7.02 µs" in v
    assert ("copies" in v) is copies


@pytest.mark.parametrize("regularised, outcome", [(53.7, timing.SAME), (50.0, bench_dropout.COSTS_LESS)])
def test_cost_sentence_at_hundredths_sets_no_epoch_figure_unless_the_epoch_costs_more(regularised, outcome):
    v = bench_dropout.cost_sentence(T_ms(regularised), T_ms(53.6), -1.50e-6, 7.02e-6, steps=469, decimals=2)
    assert v.outcome == outcome and "over an epoch" not in v and "1.50 µs less" in v

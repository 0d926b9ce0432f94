"""The timing helper: a Timing's median and spread, warm-up by time, interleaved repeats, and the three-way
verdict (A faster, B faster, the same within the noise) tested on every side of its thresholds."""

import json
from decimal import Decimal
import time

import pytest

from helpers import findings, timing
from helpers.timing import A_FASTER, B_FASTER, SAME, Timing


def spread(median, low, high):
    return Timing((low, low, median, high, high))     # 20th percentile: low, 80th: high


def test_timing_median_and_percentiles():
    t = Timing(tuple(range(1, 102)))          # 1 .. 101
    assert t.median == 51
    assert t.low == pytest.approx(21) and t.high == pytest.approx(81)
    assert t.noise == pytest.approx(60 / 51)


def test_timing_needs_samples():
    with pytest.raises(ValueError, match="at least one sample"):
        Timing(())


def test_text_gives_median_and_band_in_a_unit():
    assert spread(12.3e-6, 12.1e-6, 12.6e-6).text() == "12.3 µs (12.1–12.6)"
    assert spread(0.0123, 0.0121, 0.0126).text() == "12.3 ms (12.1–12.6)"
    assert spread(0.0123, 0.0121, 0.0126).text("µs") == "12300 µs (12100–12600)"


def test_row_round_trip():
    t = spread(0.0123, 0.0121, 0.0126)
    row = t.row()
    assert row["ms"] == pytest.approx(12.3) and row["ms_low"] == pytest.approx(12.1) and row["repeats"] == 5
    back = Timing.from_row(row)
    assert (back.median, back.low, back.high) == pytest.approx((t.median, t.low, t.high))
    plain = Timing.from_row({"ms": 5.0})
    assert plain.low == plain.high == plain.median == pytest.approx(5e-3)


def test_per_divides_every_sample():
    assert Timing((2.0, 4.0)).per(2).samples == (1.0, 2.0)


@pytest.mark.parametrize("a, b, outcome", [
    (spread(1.0, 0.98, 1.02), spread(1.5, 1.45, 1.55), A_FASTER),      # bands apart, 50 % apart
    (spread(1.5, 1.45, 1.55), spread(1.0, 0.98, 1.02), B_FASTER),
    (spread(1.0, 0.9, 1.2), spread(1.1, 1.0, 1.3), SAME),              # bands overlap
    (spread(1.0, 0.999, 1.001), spread(1.03, 1.029, 1.031), SAME),     # bands apart, but within the 5 % margin
    (spread(1.0, 0.999, 1.001), spread(1.06, 1.059, 1.061), A_FASTER), # just past the margin
])
def test_compare_three_outcomes(a, b, outcome):
    assert timing.compare(a, b) == outcome


@pytest.mark.parametrize("a, b, outcome", [
    (spread(1.0, 0.9, 1.1), spread(1.5, 1.1, 1.6), SAME),              # bands touch: not wholly below
    (spread(1.0, 0.9, 1.1), spread(1.5, 1.11, 1.6), A_FASTER),         # bands just apart, 50 % apart
    (spread(1.03, 1.029, 1.031), spread(1.0, 0.999, 1.001), SAME),     # B ahead, within the 5 % margin
    (spread(1.06, 1.059, 1.061), spread(1.0, 0.999, 1.001), B_FASTER), # B just past the margin
])
def test_compare_band_and_margin_on_both_sides_for_each_runner(a, b, outcome):
    assert timing.compare(a, b) == outcome


@pytest.mark.parametrize("slow, above", [(1.07, False),    # 1.07 against 1.02 × 1.05 = 1.071: inside the margin
                                         (1.075, True)])   # just beyond it
def test_typical_above_either_side_of_its_margin(slow, above):
    assert timing.typical_above(spread(slow, slow, slow), spread(1.0, 0.98, 1.02)) is above


def test_typical_above_sees_a_gap_that_compare_calls_the_same():
    loop = Timing((1.0, 1.0, 1.7, 1.8, 1.9))          # two modes: two epochs at full speed, its band reaches down
    back = spread(1.0, 0.99, 1.01)
    assert timing.compare(loop, back) == SAME and timing.typical_above(loop, back)
    assert not timing.typical_above(back, loop)


def test_versus_sentences_match_their_outcome():
    fast, slow = spread(1e-3, 0.98e-3, 1.02e-3), spread(2e-3, 1.95e-3, 2.05e-3)
    v = timing.versus(fast, slow, "fused", "unfused")
    assert v.outcome == A_FASTER and "fused (1.00 ms (0.980–1.02)) is 2× faster than unfused" in v
    v = timing.versus(slow, fast, "unfused", "fused")
    assert v.outcome == B_FASTER and v.startswith("fused (") and "2× faster than unfused" in v
    v = timing.versus(fast, spread(1.01e-3, 0.97e-3, 1.05e-3), "fused", "unfused")
    assert v.outcome == SAME and v.endswith("are the same within the noise we measured") and "faster" not in v
    v = timing.versus(spread(1e-6, 0.99e-6, 1.01e-6), spread(1.5e-3, 1.49e-3, 1.51e-3), "kernel", "epoch")
    assert "is 1500× faster than epoch" in v and "e+" not in v       # a large ratio, written without an exponent


@pytest.mark.parametrize("a, b, overlaps", [
    (spread(1.0, 0.9, 1.1), spread(1.2, 1.1, 1.3), True),      # bands touch
    (spread(1.0, 0.9, 1.1), spread(1.2, 1.11, 1.3), False),    # just apart
    (spread(1.2, 1.11, 1.3), spread(1.0, 0.9, 1.1), False),    # the other way round
])
def test_overlap_either_side_of_touching(a, b, overlaps):
    assert timing.overlap(a, b) is overlaps


def test_versus_same_with_bands_apart_says_how_far_and_the_margin():
    """The round trip against NumPy of notebook 03: bands apart, medians 1.3× apart, inside a 1.5× margin."""
    gpu, numpy = spread(4.1e-3, 3.87e-3, 4.58e-3), spread(5.33e-3, 4.93e-3, 5.56e-3)
    v = timing.versus(gpu, numpy, "the GPU", "NumPy", margin=0.5)
    assert v.outcome == SAME and "within the noise" not in v
    assert v.endswith("are 1.30× apart, within the 50 % we call the same")
    # bands apart under the default 5 % margin: 1.03× apart
    v = timing.versus(spread(1.0, 0.999, 1.001), spread(1.03, 1.029, 1.031), "a", "b")
    assert v.outcome == SAME and v.endswith("are 1.03× apart, within the 5 % we call the same")


@pytest.mark.parametrize("b, said", [(spread(1.03, 1.0, 1.06), "are the same within the noise we measured"),
                                     (spread(1.03, 1.021, 1.06), "are 1.03× apart, within the 5 % we call the same")])
def test_versus_same_either_side_of_the_bands_touching(b, said):
    v = timing.versus(spread(1.0, 0.99, 1.01), b, "a", "b")
    assert v.outcome == SAME and v.endswith(said)


@pytest.mark.parametrize("a, b, margin, said", [
    (spread(1.0, 0.99, 1.01), spread(1.03, 1.0, 1.06), 0.05, "the same within the noise we measured"),  # bands touch
    (spread(1.03, 1.0, 1.06), spread(1.0, 0.99, 1.01), 0.05, "the same within the noise we measured"),  # either order
    (spread(1.0, 0.99, 1.01), spread(1.03, 1.021, 1.06), 0.05, "1.03× apart, within the 5 % we call the same"),
    (spread(5.33, 4.93, 5.56), spread(4.1, 3.87, 4.58), 0.5, "1.30× apart, within the 50 % we call the same")])
def test_the_same_says_noise_where_the_bands_overlap_and_the_margin_where_they_do_not(a, b, margin, said):
    assert timing.compare(a, b, margin) == SAME          # only ever said of two timings compare() calls the same
    assert timing.the_same(a, b, margin) == said
    assert ("noise" in said) is timing.overlap(a, b) and ("we call the same" in said) is not timing.overlap(a, b)


@pytest.mark.parametrize("slow, said", [
    (spread(1.03, 1.0, 1.06), "the same within the noise we measured"),                      # bands touch
    (spread(1.03, 1.021, 1.06), "typically within the 5 % we call the same (the slower median no more than "
                                "that above the other's 80th percentile)")])
def test_not_above_says_noise_where_the_bands_overlap_and_the_margin_where_they_do_not(slow, said):
    fast = spread(1.0, 0.99, 1.01)
    assert not timing.typical_above(slow, fast)          # only ever said of two timings typical_above() keeps together
    assert timing.not_above(slow, fast) == said


def test_warm_up_runs_for_its_time_and_at_least_once():
    calls = []
    start = time.perf_counter()
    n = timing.warm_up(lambda: calls.append(1), seconds=0.05)
    assert time.perf_counter() - start >= 0.05 and n == len(calls) > 1
    assert timing.warm_up(lambda: calls.append(1), seconds=0.0) == 1


def test_measure_interleaves_repeats():
    order = []

    def sample(name):
        def run():
            order.append(name)
            return 1.0
        return run
    result = timing.measure_interleaved({"A": sample("A"), "B": sample("B")}, repeat=3, warmup=0.0)
    assert order[-6:] == ["A", "B"] * 3
    assert set(result) == {"A", "B"} and len(result["A"].samples) == 3


def test_measure_refuses_no_repeats():
    with pytest.raises(ValueError, match="repeat"):
        timing.measure(lambda: 1.0, repeat=0, warmup=0.0)


def test_verdict_is_recorded_and_logged(tmp_path, monkeypatch):
    log = tmp_path / "v.jsonl"
    monkeypatch.setenv(findings.VERDICTS_LOG, str(log))
    v = findings.verdict("fused-vs-unfused", timing.Verdict("fused is faster", A_FASTER))
    assert v == "fused is faster" and findings.recorded["fused-vs-unfused"] == A_FASTER
    assert json.loads(log.read_text()) == {"id": "fused-vs-unfused", "outcome": A_FASTER}


def test_verdict_refuses_a_plain_sentence():
    with pytest.raises(TypeError, match="timing.Verdict"):
        findings.verdict("x", "fused is faster")


@pytest.mark.parametrize("t, said", [
    (spread(12.3e-6, 12.1e-6, 12.6e-6), "12.3 µs (12.1–12.6)"),            # a band wider than the last digit
    (spread(10.82e-3, 10.79e-3, 10.85e-3), "10.82 ms (10.79–10.85)"),      # narrower: one more digit
    (spread(27.6e-3, 27.6e-3, 27.6e-3), "27.6 ms (no spread recorded)"),   # none at all
    (spread(1.0, 0.99999999, 1.00000001), "1.0000000 s (0.99999999–1.0000000)"),   # as many digits as part them
])
def test_text_never_prints_a_band_that_reads_as_one_figure_unless_it_must(t, said):
    assert t.text() == said


# --- twice: one quantity timed in two places (notebooks 02, 03, 08) --------------------------------------

def test_twice_same_within_the_noise_names_both_figures_once_and_no_cause():
    a, b = _t(53.5e-6), _t(53.3e-6)
    s = timing.twice("dense_1's kernels", a, "in the rounds above", b, "taken alone")
    assert s == (f"dense_1's kernels took {a.text()} in the rounds above and {b.text()} taken alone: "
                 "the same within the noise we measured.")
    assert "does not show" not in s


def test_twice_apart_within_the_margin_says_so():
    s = timing.twice("X", _t(1.0, 0.002), "here", _t(1.04, 0.002), "there")
    assert s.endswith(": 1.04× apart, within the 5 % we call the same.") and "does not show" not in s


@pytest.mark.parametrize("margin, differs", [(0.05, True), (0.10, False)])
def test_twice_either_side_of_the_margin(margin, differs):
    a, b = _t(106e-6, 0.01), _t(114e-6, 0.01)         # bands apart, medians 1.075× apart
    s = timing.twice("fwd.predict", a, "in turn with NumPy", b, "in turn with the allocating version", margin)
    assert ("1.08× apart; the two places differ" in s and "does not show" in s) == differs
    assert (f"{100 * margin:.3g} % we call the same" in s) == (not differs)
    assert a.text() in s and b.text() in s and s.endswith(".")


def test_twice_never_reads_one_times_apart():
    """Bands that do not overlap, medians 0.14 % apart (notebook 08's step): within the margin, '1.00×'."""
    a, b = _t(21.52e-6, 0.0001), _t(21.49e-6, 0.0001)
    s = timing.twice("A step", a, "in section 2", b, "here")
    assert s.endswith(": 1.00× apart, within the 5 % we call the same.") and " 1× " not in s


def _t(median, spread=0.02):
    """A made-up Timing: samples around `median`, the 20–80 % band about ±spread of it."""
    return Timing(tuple(median * (1 + spread * k) for k in (-2, -1, 0, 1, 2)))



@pytest.mark.parametrize("median, printed", [(138.6e-6, 139e-6), (25.54e-6, 25.5e-6), (10.71e-3, 10.7e-3)])
def test_shown_is_the_median_as_printed(median, printed):
    t = timing.Timing((0.99 * median, median, 1.01 * median), timing.WALL)
    assert timing.shown(t) == pytest.approx(printed, rel=1e-12)
    assert t.text().startswith(f"{timing._g(printed * (1e6 if printed < 1e-3 else 1e3), 3)} ")


@pytest.mark.parametrize("value, kw, text", [
    (41 / 40, {}, "1.03"), (1.0249, {}, "1.02"), (1.0, {}, "1.00"),            # half up, as a reader rounds 1.025
    (139 / 25.5, dict(digits=2), "5.5"), (5.44, dict(digits=2), "5.4"), (2.0, dict(digits=2), "2"),
    (1234.5, dict(digits=2), "1200"), (0.0456, dict(digits=2), "0.046"), (10.05, dict(digits=3), "10.1"),
    (-0.4, dict(decimals=0), "0"), (49.5, dict(decimals=0), "50")])
def test_times_rounds_a_ratio_half_up(value, kw, text):
    assert timing.times(value, **kw) == text


def test_ratios_are_those_of_the_printed_medians():
    """139 µs against 25.5 µs as printed: a reader divides and gets 5.45, so 5.5×, where the unrounded medians
    (138.6 and 25.54 µs) would give 5.4×. And 41 against 40 µs, 1.025, is 1.03× in every sentence."""
    fast = timing.Timing((25.3e-6, 25.54e-6, 25.8e-6), timing.WALL)
    slow = timing.Timing((137e-6, 138.6e-6, 140e-6), timing.WALL)
    assert fast.text().startswith("25.5 µs") and slow.text().startswith("139 µs")
    assert "is 5.5× faster than" in timing.versus(fast, slow, "A", "B")
    assert "is 5.5× faster than" in timing.versus(slow, fast, "B", "A")
    forty = timing.Timing((39.9e-6, 40e-6, 40.1e-6), timing.WALL)
    forty_one = timing.Timing((40.9e-6, 41.02e-6, 41.1e-6), timing.WALL)
    assert forty_one.text().startswith("41.0 µs") and float(timing.ratio(forty_one, forty)) == pytest.approx(1.025)
    assert "1.03× apart" in timing.apart(forty, forty_one, margin=0.05)
    assert "1.03× apart" in timing.twice("it", forty, "here", forty_one, "there", margin=0.01)


@pytest.mark.parametrize("slow_median, outcome", [(10.449e-6, timing.SAME),      # prints 10.4: 1.045× as printed
                                                  (10.6e-6, timing.A_FASTER)])    # prints 10.6: 1.065×
def test_the_margin_is_judged_on_the_printed_medians(slow_median, outcome):
    """9.95 µs against a median of 10.449 µs is 1.0501× unrounded, past a 5 % margin, but the sentence prints
    9.95 and 10.4, 1.045× apart: the verdict follows the printed figures, and its words agree with them."""
    fast = timing.Timing((9.94e-6, 9.95e-6, 9.96e-6), timing.WALL)
    slow = timing.Timing((slow_median - 0.02e-6, slow_median, slow_median + 0.02e-6), timing.WALL)
    v = timing.versus(fast, slow, "A", "B", margin=0.05)
    assert v.outcome == outcome
    if outcome == timing.SAME:
        assert "1.045× apart, within the 5 % we call the same" in v
    else:
        assert "is 1.1× faster than" in v


def _at(median, spread=0.001):
    return timing.Timing((median * (1 - spread), median, median * (1 + spread)), timing.WALL)


@pytest.mark.parametrize("fast_us, slow_us, margin", [(32, 33.6, 0.05), (42, 46.2, 0.10), (76, 87.4, 0.15),
                                                      (72.8, 91, 0.25)])
def test_a_ratio_exactly_at_the_margin_is_the_same(fast_us, slow_us, margin):
    """33.6 / 32 is exactly 1.05: not beyond a 5 % margin, though the binary floats say it is."""
    fast, slow = _at(fast_us * 1e-6), _at(slow_us * 1e-6)
    v = timing.versus(fast, slow, "A", "B", margin)
    assert v.outcome == timing.SAME and f"{1 + margin:.2f}× apart, within the {100 * margin:.3g} %" in v


def test_a_ratio_beyond_the_margin_prints_beyond_it():
    """14.5 against 16.6 ms is 1.145× at a 10 % margin: '1.1×' would read as within it, so it prints 1.14; and
    twice() prints 39 against 41 µs, 1.0513×, beyond 5 %, as 1.051, not 1.05."""
    v = timing.versus(_at(14.5e-3), _at(16.6e-3), "A", "B", margin=0.10)
    assert v.outcome == timing.A_FASTER and "is 1.14× faster than" in v
    assert "is 1.3× faster than" in timing.versus(_at(10e-3), _at(13e-3), "A", "B", margin=0.10)
    said = timing.twice("it", _at(39e-6), "here", _at(41e-6), "there", margin=0.05)
    assert "1.051× apart" in said


def test_a_ratio_ending_in_an_exact_five_rounds_up():
    """1.44 / 1.28 ms is exactly 1.125: 1.13 as a reader rounds it, where binary floats give 1.12."""
    assert timing.times(timing.ratio(_at(1.44e-3), _at(1.28e-3))) == "1.13"
    assert "1.13× apart" in timing.apart(_at(1.28e-3), _at(1.44e-3), margin=0.15)


def test_a_negative_duration_takes_the_unit_of_its_size():
    """A cost beyond a floor can come out below zero: -14.1 ms prints as such, not as -14100 µs."""
    assert timing.Timing((-0.0233, -0.0141, 0.054)).text() == "-14.1 ms (-19.6–26.8)"   # 20–80 % of three


def test_apart_never_prints_a_ratio_inside_the_margin_as_the_margin():
    """1.047 within 5 % prints 1.047×, not a 1.05× that reads as on the margin; 1.04 prints 1.04×."""
    from helpers import timing as t
    a, b = t.Timing((10.0e-3,)), t.Timing((9.55e-3,))                  # 10.0 / 9.55 = 1.0471
    assert t.apart(a, b, 0.05).startswith("1.047× apart, within the 5 % we call the same")
    assert t.apart(t.Timing((9.93e-3,)), b, 0.05).startswith("1.04× apart")  # 1.0398
    ten = t.Timing((10.0e-3,))
    assert t.apart(t.Timing((10.5e-3,)), ten, 0.05).startswith("1.05× apart")  # exactly on it: 1.05 is not beyond


def test_bands_that_meet_as_printed_overlap():
    """1.0 (0.99–1.01) and 1.03 (1.011–1.06) are apart unrounded, but print as 0.99–1.01 and 1.01–1.06: a
    reader sees them meet, so they overlap, and compare() never calls them apart or one faster."""
    from helpers import timing as t
    a = t.Timing((0.99e-3, 0.99e-3, 1.0e-3, 1.01e-3, 1.01e-3))
    b = t.Timing((1.011e-3, 1.011e-3, 1.03e-3, 1.06e-3, 1.06e-3))
    assert a.high < b.low and t.band_shown(a)[1] == t.band_shown(b)[0]
    assert t.overlap(a, b) and t.the_same(a, b) == "the same within the noise we measured"
    assert t.compare(a, b, 0.01) == SAME                        # 1.03× is beyond 1 %, but the bands meet


def test_rounds_text_gives_the_band_or_says_every_round():
    """Per-round ratios with a band print it; ratios alike in every round (one sample, or equal) say so,
    never '1.11× (1.11–1.11)'."""
    assert timing.rounds_text(timing.Timing((1.24, 1.25, 1.26), "ratio")) == "1.25× (1.24–1.26) round by round"
    assert timing.rounds_text(timing.Timing((1.11,), "ratio")) == "1.11× in every round"
    assert timing.rounds_text(timing.Timing((1.0151, 1.0153, 1.0168, 1.0176, 1.0178), "ratio")) == \
        "1.017× (1.015–1.018) round by round"                       # the median at the band's digits
    a, b = timing.Timing((2.0, 2.5, 3.0)), timing.Timing((1.0, 2.0, 2.4))
    assert timing.paired_text(a, b) == timing.rounds_text(timing.paired_ratio(a, b))


def _ms(ms):
    return timing.Timing(tuple(ms * 1e-3 * (1 + 0.002 * k) for k in (-1, 0, 1)))


@pytest.mark.parametrize("pick, close, level, alone", [
    (timing.lowest, 10.2, ("a", ["c"]), ("a", [])),      # 2 % from the lowest: within the 5 %; 20 %: a alone
    (timing.highest, 11.8, ("b", ["c"]), ("b", []))])    # 1.7 % from the highest: within the 5 %; 20 %: b alone
def test_lowest_and_highest_name_the_pick_and_those_level_with_it(pick, close, level, alone):
    """The one rule behind 'fastest', 'largest' and 'level': the lowest (highest) median, and the others
    compare() calls the same."""
    assert pick({"a": _ms(10.0), "b": _ms(12.0), "c": _ms(close)}) == level
    assert pick({"a": _ms(10.0), "b": _ms(12.0)}) == alone
    with pytest.raises(ValueError, match="at least one timing"):
        pick({})


@pytest.mark.parametrize("ratios, outcome", [
    ((1.0510, 1.0513, 1.0516, 1.0519, 1.0521), timing.B_FASTER),   # printed 1.052×: beyond the 5 %
    ((1.0490, 1.0493, 1.0496, 1.0499, 1.0501), timing.SAME),       # printed 1.050×: not beyond it
    ((1 / 1.0516, 1 / 1.0513, 1 / 1.0519, 1 / 1.0510, 1 / 1.0521), timing.A_FASTER)])
def test_compare_paired_judges_the_ratio_as_rounds_text_prints_it(ratios, outcome):
    b = Timing(tuple(10e-6 for _ in ratios))
    a = Timing(tuple(r * 10e-6 for r in ratios))
    assert timing.compare_paired(a, b) == outcome, timing.paired_text(a, b)


def test_phase_table_never_prints_a_collapsed_band():
    phases = timing.Phases()
    for us in (7.01, 7.02, 7.03, 7.04):
        phases.add("upload", us * 1e-6)
    for us in (120.0, 125.0, 130.0):
        phases.add("kernel", us * 1e-6)
    upload, kernel = phases.table().splitlines()[1:]
    assert upload.split()[1:4] == ["7.02", "7.02", "7.03"]      # one decimal would read 7.0 (7.0–7.0)
    assert kernel.split()[1:4] == ["125", "122", "128"]


@pytest.mark.parametrize("value, digits, text", [(7, 3, "7.00"), (0.12, 3, "0.120"), (349.2, 3, "349"),
                                                 (1234.5, 3, "1230"), (1.234e-5, 3, "0.0000123"),
                                                 (-1.2e-6, 2, "-0.0000012")])
def test_figures_keep_their_zeros_and_never_print_an_exponent(value, digits, text):
    assert timing._g(value, digits) == text


def test_a_band_a_few_nanoseconds_wide_on_a_millisecond_never_prints_collapsed():
    t = Timing((0.0201, 0.0201, 0.0201000001, 0.0201000002, 0.0201000002))
    median, band = t.text().split(" ms ")
    low, high = band.strip("()").split("–")
    assert low != high, t.text()


def test_compare_paired_judges_the_printed_band_not_the_unrounded_one():
    """A band whose low end rounds onto 1.00 is not wholly above 1 as printed: no verdict."""
    a = Timing((1.0004, 1.0004, 1.07, 1.07, 1.07, 1.08, 1.08, 1.08, 1.09, 1.0004))
    b = Timing((1.0,) * 10)
    assert "(1.00–" in timing.paired_text(a, b)
    assert timing.compare_paired(a, b) == timing.SAME


def test_compare_and_overlap_take_a_tables_bands():
    a, b = Timing((1.0, 1.0, 1.1, 1.2, 1.2)), Timing((1.3, 1.3, 1.4, 1.5, 1.5))
    assert timing.compare(a, b) == timing.A_FASTER and not timing.overlap(a, b)
    wide = lambda t: (Decimal(0), Decimal(2))     # noqa: E731 - a table that prints wider bands
    assert timing.compare(a, b, bands=wide) == timing.SAME and timing.overlap(a, b, bands=wide)


@pytest.mark.parametrize("slow, fast, difference", [((72.9, 73.0, 73.1), (55.2, 55.3, 55.4), "17.7"),
                                                    ((21.6, 21.7, 21.75), (21.2, 21.3, 21.4), "0.4"),
                                                    ((25.0, 25.0, 25.1), (28.0, 28.0, 28.1), "-3.0")])
def test_printed_difference_is_the_readers_subtraction_at_the_coarser_decimals(slow, fast, difference):
    as_us = lambda v: Timing(tuple(x * 1e-6 for x in v))     # noqa: E731
    assert f"{timing.printed_difference(as_us(slow), as_us(fast), 'µs'):f}" == difference


@pytest.mark.parametrize("figure, places", [("40.21 µs", 2), ("40.2", 1), ("349 µs", 0), ("0.0000123", 7)])
def test_figure_decimals_counts_the_written_places(figure, places):
    assert timing.figure_decimals(figure) == places

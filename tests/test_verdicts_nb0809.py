"""The sentences notebook 08 prints from their numbers, each on both sides of its threshold, so that a
printed verdict can never contradict the numbers printed beside it (made-up numbers, no GPU)."""

import re

import pytest

from helpers import timing
from helpers.bench import limits

US = 1e-6


# --- notebook 08: the budget of a step ------------------------------------------------------------------------

def T(median_us, spread=0.01):
    """A made-up Timing around median_us with a 20-80 % band of about +-0.6 spread."""
    m = median_us * US
    return timing.Timing(tuple(m * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)))


def test_uniform_cost_on_each_side():
    changed = limits.uniform_cost(T(28.0), T(25.0), T(24.9))
    assert changed.outcome == "changing costs" and "3.0 µs" in changed
    written = limits.uniform_cost(T(27.0), T(27.0), T(24.0))
    assert written.outcome == "writing costs" and "3.0 µs" in written
    assert limits.uniform_cost(T(26.0), T(26.0), T(24.0)).outcome == "no measurable cost"   # 8 %: within 10 %
    nothing = limits.uniform_cost(T(24.2), T(24.1), T(24.0))
    assert nothing.outcome == "no measurable cost"


def test_uniform_cost_noisy_streams_are_the_same():
    v = limits.uniform_cost(T(26, 0.3), T(24, 0.3), T(22, 0.3))
    assert v.outcome == "no measurable cost" and "the three are the same within the noise we measured (" in v


@pytest.mark.parametrize("bare, noise", [(24.9, True),     # 25.0 and 24.9 µs, bands ±0.6 %: they overlap
                                         (24.0, False)])   # 25.0 and 24.0: bands apart, 4 % inside the 10 %
def test_uniform_cost_says_noise_only_where_the_bands_overlap(bare, noise):
    v = limits.uniform_cost(T(25.0), T(25.0), T(bare))
    assert v.outcome == "no measurable cost"
    assert ("the three are the same within the noise we measured (" in v) is noise
    assert ("with it written and without, a step's times are 1.04× apart, within the 10 % we call the same; with its "
            "value changing and the same every time, they are the same within the noise we measured; and with its value "
            "changing and none written, they are 1.04× apart, within the 10 % we call the same (" in v) is not noise


def test_uniform_cost_names_each_pair_apart_inside_the_margin():
    v = limits.uniform_cost(T(26.0), T(25.0), T(24.0))     # 1.04× each step, 1.08× in all: the bands apart, inside 10 %
    assert v.outcome == "no measurable cost" and "noise" not in v
    assert ("a step's times are 1.04× apart, within the 10 % we call the same; with its value changing and the same "
            "every time, they are 1.04× apart, within the 10 % we call the same; and with its value changing and none "
            "written, they are 1.08× apart, within the 10 % we call the same (" in v)


def test_barrier_wait_on_both_sides():
    waits = limits.barrier_wait(T(23.6), T(12.0))
    assert waits.outcome == "barriers cost" and "49 %" in waits
    same = limits.barrier_wait(T(22.1), T(20.7))          # 6.8 % apart: within the 10 % streams vary
    assert same.outcome == timing.SAME and "same within the noise" not in same
    assert "1.07× apart, within the 10 % we call the same, so the barriers cost no more than that here" in same
    noisy = limits.barrier_wait(T(22.1, 0.1), T(20.7, 0.1))   # the same, its bands overlapping
    assert noisy.outcome == timing.SAME and "%" not in noisy
    assert "the same within the noise we measured, so the barriers cost no more than that here" in noisy


def test_epoch_shares_add_to_a_hundred_and_name_the_largest_only_when_it_leads():
    parts = {"kernel": 15.9e-3, "dispatch": 4.8e-3, "between dispatches": -2.9e-3, "readback": 0.35e-3,
             "upload": 0.06e-3, "unaccounted": 0.7e-3}
    v = limits.epoch_shares(parts)
    shares = [int(n) for n in re.findall(r"(-?\d+) %", v)]
    assert sum(shares) in (99, 100, 101) and v.outcome == "largest: kernel"
    close = limits.epoch_shares({"kernel": 0.5, "dispatch": 0.45, "readback": 0.05})
    assert close.outcome == "too close to call" and "largest" not in close
    with pytest.raises(ValueError):
        limits.epoch_shares({"kernel": 0.0})


def test_bytes_against_time_on_three_sides():
    assert limits.bytes_against_time(2.0, T(11.8), T(9.3)).outcome == timing.B_FASTER
    assert limits.bytes_against_time(2.0, T(7.0), T(9.3)).outcome == timing.A_FASTER
    same = limits.bytes_against_time(4.0, T(33.3), T(32.0))    # 1.04× in every round: inside the 10 % margin
    assert same.outcome == timing.SAME and "1.04× in every round, within the 10 % we call the same" in same
    assert "no time saved beyond that" in same and "noise" not in same
    beyond = limits.bytes_against_time(4.0, T(35.3), T(32.0))  # 1.10× as printed: not beyond 10 %
    assert beyond.outcome == timing.SAME
    assert limits.bytes_against_time(4.0, T(35.4), T(32.0)).outcome == timing.B_FASTER   # 1.11×


def _rounds(median_us, slowed_us, slowed=(3, 4, 8)):
    """Ten rounds of one kernel at about median_us, the rounds in `slowed` disturbed to slowed_us."""
    return timing.Timing(tuple((slowed_us if i in slowed else median_us * (1 + 0.001 * i)) * US for i in range(10)))


def test_bytes_against_time_sees_the_gap_through_a_disturbance_of_both_kernels():
    """A run whose disturbance slowed both kernels in three rounds of ten: their 20–80 % bands overlap, so
    compare() calls them the same, but each round's ratio is still about 1.25: the rounds' ratios keep the
    verdict (08's split forward, 12.9 µs (12.9–17.7) against 10.3 µs (10.3–15.8) in a disturbed run)."""
    split, fused = _rounds(12.88, 17.7), _rounds(10.29, 15.8)
    assert timing.compare(split, fused, limits.NOISY) == timing.SAME
    v = limits.bytes_against_time(2.0, split, fused)
    assert v.outcome == timing.B_FASTER and "round by round, longer" in v


def test_compare_paired_on_each_side_and_its_rounds():
    a, b = _rounds(12.0, 12.0, ()), _rounds(10.0, 10.0, ())
    assert timing.compare_paired(a, b, 0.1) == timing.B_FASTER and timing.compare_paired(b, a, 0.1) == timing.A_FASTER
    assert timing.compare_paired(_rounds(10.5, 10.5, ()), b, 0.1) == timing.SAME
    with pytest.raises(ValueError, match="same number of rounds"):
        timing.paired_ratio(a, timing.Timing(b.samples[:5]))
    mixed = timing.Timing(tuple(s * (1.0 if i % 2 else 1.5) for i, s in enumerate(b.samples)))   # half the rounds
    assert timing.compare_paired(mixed, b, 0.1) == timing.SAME       # ratio band 1.0 to 1.5: not wholly above 1


H100 = limits.datasheet("NVIDIA H100 80GB HBM3")


def test_datasheet_by_card_with_its_source():
    assert H100["hbm"] == 3.35e12 and "H100" in H100["source"] and H100["sms"] == 132
    assert limits.datasheet("NVIDIA H200")["hbm"] == 4.8e12
    assert limits.datasheet("llvmpipe (LLVM 15.0.7, 256 bits)") is None


@pytest.mark.parametrize("work_us, outcome", [(3.0, "latency-bound"), (4.6, "in between"), (7.5, "in between"),
                                              (28.0, "from L2"), (9.3, "in between"), (10.5, "in between")])
def test_bound_kind_on_each_side(work_us, outcome):
    assert limits.bound_kind(work_us * US, T(9.3, 0.05), H100).outcome == outcome


def test_bound_kind_is_not_judged_without_a_datasheet():
    v = limits.bound_kind(3.0 * US, T(9.3), None)
    assert v.outcome == "not judged" and v.startswith("not judged")


# --- audit: each threshold just inside and just outside, each wording branch --------------------------------

@pytest.mark.parametrize("changing, outcome", [(27.4, "no measurable cost"),    # 9.6 % above step(0): inside 10 %
                                               (27.6, "changing costs")])       # 10.4 %: beyond it
def test_uniform_cost_changing_either_side_of_the_margin(changing, outcome):
    v = limits.uniform_cost(T(changing), T(25.0), T(25.0))
    assert v.outcome == outcome and ("beyond writing the same value" in v) == (outcome == "changing costs")


@pytest.mark.parametrize("same, outcome", [(26.3, "no measurable cost"),     # 9.6 % above no uniform
                                           (26.6, "writing costs")])         # 10.8 %
def test_uniform_cost_writing_either_side_of_the_margin(same, outcome):
    v = limits.uniform_cost(T(same), T(same), T(24.0))
    assert v.outcome == outcome and ("whether or not its value changes" in v) == (outcome == "writing costs")


@pytest.mark.parametrize("changing, same, bare", [(23.0, 24.4, 34.6),    # no uniform 42 % slower
                                                 (20.0, 26.0, 26.1)])   # changing the value 23 % faster
def test_uniform_cost_does_not_call_streams_far_apart_the_same(changing, same, bare):
    v = limits.uniform_cost(T(changing), T(same), T(bare))
    assert v.outcome == "not resolved" and "not resolved" in v
    assert "the same within the noise" not in v and "we call the same" not in v


@pytest.mark.parametrize("loose, outcome", [(20.2, timing.SAME),              # 22.1 / 20.2 = 1.094: inside 10 %
                                            (19.9, "barriers cost")])         # 1.111: beyond it
def test_barrier_wait_either_side_of_the_margin(loose, outcome):
    v = limits.barrier_wait(T(22.1), T(loose))
    assert v.outcome == outcome
    assert ("of a step is waiting at the barriers" in v) == (outcome == "barriers cost")
    assert ("within the 10 % we call the same" in v) == (outcome == timing.SAME)   # bands apart: no "noise"


def test_barrier_wait_does_not_call_a_slower_loose_stream_the_same():
    v = limits.barrier_wait(T(12.0), T(23.6))
    assert "same within the noise" not in v and v.outcome == "no barrier cost" and "longer than with them" in v


@pytest.mark.parametrize("parts, outcome", [({"kernel": 0.55, "dispatch": 0.44, "readback": 0.01}, "largest: kernel"),
                                            ({"kernel": 0.50, "dispatch": 0.41, "readback": 0.09}, "too close to call")])
def test_epoch_shares_either_side_of_the_lead(parts, outcome):
    v = limits.epoch_shares(parts)     # leads of 11 and 9 points against 10
    assert v.outcome == outcome
    assert ("the largest part is kernel" in v) == (outcome != "too close to call")
    assert ("kernel and dispatch are too close" in v) == (outcome == "too close to call")


def test_bytes_against_time_words_on_each_side():
    slower = limits.bytes_against_time(2.0, T(11.8), T(9.3))
    assert "longer: what the split adds costs more" in slower and "cut the time" not in slower
    faster = limits.bytes_against_time(2.0, T(7.0), T(9.3))
    assert "cutting the bytes cut the time" in faster and "longer" not in faster


@pytest.mark.parametrize("work_us, outcome, words", [
    (4.49, "latency-bound", "latency-bound"),          # 45 % of the kernel's 10 µs, at 0.5 × (1 − 10 %): bound
    (4.51, "in between", "neither latency nor"),
    (10.99, "in between", "neither latency nor"),      # 110 %, at 1 + 10 %: not yet from L2
    (11.01, "from L2", "comes from L2")])
def test_bound_kind_either_side_of_each_threshold(work_us, outcome, words):
    v = limits.bound_kind(work_us * US, timing.Timing((10 * US,)), H100)
    assert v.outcome == outcome and words in v


# --- the two shares of a step (08): named so that they cannot be read as parts of one whole ----------------------

def test_barrier_wait_says_its_share_overlaps_the_kernels_share():
    v = limits.barrier_wait(T(21.3), T(6.22))
    assert v.outcome == "barriers cost"
    assert "71 % of a step is waiting at the barriers" in v            # 1 - 6.22 / 21.3 = 0.708
    assert "inside the kernels' own times" in v and "overlaps theirs instead of adding to it" in v


def test_epoch_shares_read_on_after_a_lead_in():
    v = limits.epoch_shares({"kernel": 0.7, "dispatch": 0.23, "readback": 0.07})
    assert v == "kernel 70 %, dispatch 23 %, readback 7 % of the epoch; the largest part is kernel"
    assert "shares of the epoch" not in v and not v.startswith("An epoch")
    assert "rounded so that they add up to 100" not in v          # each part is its own rounding


def test_epoch_shares_say_when_a_part_was_rounded_to_make_100():
    """Run N of notebook 08: upload 0.047 of a 10.4 ms epoch (0.45 %) printed as 1 % so that the parts add up to 100."""
    lifted = limits.epoch_shares({"kernel": 0.692, "dispatch": 0.222, "between": 0.062, "readback": 0.040,
                                  "upload": 0.0045, "unaccounted": -0.0205})
    assert "upload 1 %" in lifted and "(whole percents, rounded so that they add up to 100)" in lifted
    level = limits.epoch_shares({"kernel": 0.692, "dispatch": 0.222, "between": 0.062, "readback": 0.040,
                                 "upload": 0.0055, "unaccounted": -0.0215})
    assert "upload 1 %" in level and "rounded so that" not in level


# --- the GPU's dispatches against Python's issue time (profile.pace, in step_account) ------------------------------

@pytest.mark.parametrize("gpu, python, outcome, how", [(20.3, 11.1, "GPU longer", "1.8× as long as"),
                                                       (20.3, 18.0, "GPU longer", "1.1× as long as"),
                                                       (11.1, 20.3, "Python longer", "1.8× as long as"),
                                                       (20.0, 20.2, "Python longer", "about as long as"),
                                                       (20.0, 20.0, "GPU longer", "about as long as")])
def test_pace_gives_the_ratio_and_names_no_side_as_setting_the_pace(gpu, python, outcome, how):
    from helpers.bench import profile
    kernels, issue = T(gpu), T(python)
    v = profile.pace(kernels, issue)
    assert v.outcome == outcome
    assert kernels.text() in v and issue.text() in v                    # both figures, as passed in
    assert how in v and "can differ in another run" in v and v.endswith(".")
    assert "slower side;" not in v and "is the slower" not in v          # no side named: it flipped between runs
    first = "The GPU's dispatches alone" if outcome == "GPU longer" else "Python's issue of the step"
    assert v.startswith(first)


# --- notebook 08: the epoch added up ---------------------------------------

from helpers.bench import profile as _profile   # noqa: E402


@pytest.mark.parametrize("unaccounted, words", [(-1.1e-3, "overrun the epoch's median by 1.10 ms"),
                                                (0.4e-3, "leave 400 µs of the epoch's median unaccounted")])
def test_epoch_sum_text_either_side_of_zero(unaccounted, words):
    text = _profile.epoch_sum_text(T(10_400), 469, T(23), unaccounted)
    assert words in text and "469 steps of 23.0 µs" in text and text.startswith("The epoch takes 10.40 ms")
    assert ("below zero" in text) == (unaccounted < 0) and "-" not in text.split("overrun")[-1]
    assert "shown as" not in text and (("bar runs past the epoch" in text) == (unaccounted < 0))   # nothing drawn below zero


def test_epoch_sum_text_prints_the_epoch_to_four_digits():
    """The shares of the epoch are whole percents of its median: 10.345 ms printed 10.3 would move a 69 %
    share to 70 % for a reader who divides by it."""
    text = _profile.epoch_sum_text(T(10_345, 0.002), 469, T(21.7), -0.39e-3)
    assert text.startswith("The epoch takes 10.35 ms (10.33–10.36)"), text


@pytest.mark.parametrize("floor_ms, words", [
    (7.44, ": 1.06× the count in this run."),
    (7.02, ": 1.00× the count in this run."),
    (6.50, ": 1.08× below the count in this run.")])
def test_floor_against_estimate_on_each_side_of_the_count(floor_ms, words):
    """The floor against the count: their ratio as printed, either way, and no direction claimed (the floor
    holds Python's pace, which moves between runs: the ratio went from below 1 to 2 in runs of one card)."""
    said = _profile.floor_against_estimate(T(floor_ms * 1e3), 469, 6, 2.5e-6, "GPU timer query")
    assert said.startswith("Counted from one empty dispatch timed by GPU timer query, 469 steps × 6 × 2.50 µs = "
                           "7.04 ms of fixed cost; the floor, an epoch of the same empty dispatches timed by wall "
                           "clock, is ")
    assert words in said and "need not agree, and this ratio is this run's." in said
    assert "cost more than" not in said and "cost less than" not in said and "agree within" not in said


@pytest.mark.parametrize("spread, wide", [(0.16, False), (0.18, True), (0.8, True)])
def test_floor_against_estimate_says_when_the_floor_band_is_wide(spread, wide):
    floor = T(4760, spread)
    assert (floor.noise > _profile.WIDE_BAND) == wide     # 0.16 and 0.18 give bands of 19 % and 22 %
    said = _profile.floor_against_estimate(floor, 469, 2, 2.54e-6, "GPU timer query")
    assert ("of its median wide." in said) == wide
    if wide:
        assert f"band is {100 * floor.noise:.0f} % of its median wide" in said


def test_floor_against_estimate_names_what_it_counts():
    said = _profile.floor_against_estimate(T(7440), 469, 6, 2.5e-6, "GPU timer query", "notebook 05's trainer")
    assert said.startswith("Notebook 05's trainer: counted from one empty dispatch timed by GPU timer query, 469 "
                           "steps × 6 × 2.50 µs")


def test_floor_against_estimate_multiplies_the_printed_empty_dispatch():
    said = _profile.floor_against_estimate(T(7430), 469, 6, 2.6375e-6, "GPU timer query")
    assert "469 steps × 6 × 2.64 µs = 7.43 ms of fixed cost" in said    # 469 × 6 × 2.6375 µs would print 7.42 ms


@pytest.mark.parametrize("seconds, back", [(2.6375e-6, 2.64e-6), (999.7e-6, 1e-3), (7.4249e-3, 7.42e-3)])
def test_printed_seconds_reads_back_what_seconds_text_prints(seconds, back):
    assert _profile.printed_seconds(seconds) == pytest.approx(back, rel=1e-12)


def test_fixed_cost_is_the_product_of_its_printed_factors():
    seconds, text = _profile.fixed_cost(469, 6, 2.6375e-6)
    assert text == "469 steps × 6 × 2.64 µs = 7.43 ms" and seconds == pytest.approx(469 * 6 * 2.64e-6)


def test_floor_against_estimate_divides_the_printed_floor_by_the_printed_count():
    """469 × 6 × 2.40 µs = 6.7536 ms prints as 6.75 ms; a floor printed as 7.190 ms is then 1.07× the count
    (7.190 / 6.75 = 1.0652), not the 1.06× of the unrounded count."""
    said = _profile.floor_against_estimate(T(7190, 0.001), 469, 6, 2.4e-6, "GPU timer query")
    assert "= 6.75 ms of fixed cost" in said and "is 7.190 ms" in said and ": 1.07× the count" in said


def test_barrier_wait_share_is_the_printed_figures_rounded_half_up():
    """13.9 against 20 µs: 1 - 13.9 / 20 is exactly 30.5 %, so 31 %."""
    said = limits.barrier_wait(T(20.0, 0.001), T(13.9, 0.001))
    assert said.outcome == "barriers cost" and "31 % of a step is waiting" in said


def test_floor_against_estimate_rounds_an_exact_half_up():
    """A floor of 1.44 ms against a count printed as 1.28 ms is exactly 1.125×: 1.13×."""
    said = _profile.floor_against_estimate(T(1440, 0.001), 100, 4, 3.2e-6, "GPU timer query")
    assert "= 1.28 ms of fixed cost" in said and ": 1.13× the count" in said


def _empty(median_us, low_us, high_us):
    """An empty dispatch's Timing whose median and 20-80 % band are the given figures."""
    return timing.Timing.from_row({"us": median_us, "us_low": low_us, "us_high": high_us}, "us", 1e6)


def test_floor_against_estimate_prints_the_empty_dispatchs_band_scaled_to_the_count():
    """Notebook 08's committed run: an empty dispatch of 2.49 µs (2.48–2.9), 469 steps of 2 dispatches: the
    count is 2.34 ms, and its band the empty dispatch's scaled to it, 2.33 to 2.72 ms."""
    said = _profile.floor_against_estimate(T(2460), 469, 2, _empty(2.49, 2.48, 2.9), "GPU timer query")
    assert said.startswith("Counted from one empty dispatch timed by GPU timer query, 469 steps × 2 × 2.49 µs = "
                           "2.34 ms of fixed cost (2.33–2.72 ms from the empty dispatch's 20–80 % band); the floor")
    assert ": 1.05× the count in this run." in said


def test_floor_against_estimate_with_a_median_alone_has_no_band():
    """A caller that passes the empty dispatch's median (seconds), not its Timing, gets the count alone."""
    said = _profile.floor_against_estimate(T(2460), 469, 2, 2.49e-6, "GPU timer query")
    assert "20–80 % band" not in said and ": 1.05× the count in this run." in said


# --- notebook 08: ratios and shares beside their figures are the quotients of the printed figures -------------

def test_epochs_table_ratio_is_the_one_of_its_printed_figures():
    """The committed run: PyTorch eager's 507.0846 ms against the fused 10.9557 ms print as 507.08 and 10.96:
    46.27× (the unrounded medians gave 46.29×)."""
    from helpers.bench import fused as bench_fused
    main = {"name": "fused 784-128-10 SGD", "ms": 10.955654, "ms_low": 10.94, "ms_high": 11.18, "dispatches_per_step": 2}
    eager = {"name": "PyTorch eager 784-128-10 SGD", "ms": 507.084629, "ms_low": 477.88, "ms_high": 523.67}
    assert bench_fused.times_epoch(eager["ms"], main["ms"]) == "46.27×"
    lines = bench_fused.epochs_table([eager, main], main).splitlines()
    assert lines[0] == "| row | epoch (ms), median (20–80 %) | dispatches a step | median against fused 784-128-10 SGD |"
    assert lines[2] == "| PyTorch eager 784-128-10 SGD | 507.08 (477.88–523.67) |  | 46.27× |"
    assert lines[3] == "| fused 784-128-10 SGD | 10.96 (10.94–11.18) | 2 | 1.00× |"


def _ms_timing(ms, spread=0.01, n=9):
    return timing.Timing(tuple(ms * 1e-3 * (1 + spread * (2 * i / (n - 1) - 1)) for i in range(n)))


@pytest.mark.parametrize("part_ms, whole_ms, printed, share", [(2.4749, 10.05, ("2.47 ms", "10.1 ms"), "24 %"),
                                                               (2.5049, 10.25, ("2.50 ms", "10.2 ms"), "25 %")])
def test_share_text_of_two_timings_is_the_one_of_their_printed_medians(part_ms, whole_ms, printed, share):
    """The dispatch floor's share of an epoch: 2.47 of 10.1 ms is 24.46 %, 24 % (the medians gave 24.63 %, 25 %);
    2.50 of 10.2 ms is 24.51 %, 25 % (the medians gave 24.44 %, 24 %); a share of numbers rounds half up."""
    from helpers.bench import profile
    part, whole = _ms_timing(part_ms), _ms_timing(whole_ms)
    assert (part.text().split(" (")[0], whole.text().split(" (")[0]) == printed
    assert profile.share_text(part, whole) == share
    assert profile.share_text(-0.001, 1.0) == "0 %" and profile.share_text(0.245, 1.0) == "25 %"   # numbers: half up


# --- derived figures from the printed ones: the stream's start, the kernels added up ------------------------------

@pytest.mark.parametrize("short_us, long_us, printed, once", [(18.96, 15.34, ("19.0", "15.3"), "111 µs"),
                                                              (54.66, 49.63, ("54.7", "49.6"), "153 µs")])
def test_stream_start_multiplies_the_printed_figures(short_us, long_us, printed, once):
    """Raw (18.96 - 15.34) x 30 = 108.6 µs and (54.66 - 49.63) x 30 = 150.9 µs; from the printed figures
    (19.0 - 15.3) x 30 = 111 and (54.7 - 49.6) x 30 = 153, as a reader multiplies them."""
    from helpers.bench import profile
    short, long_ = T(short_us), T(long_us)
    assert (short.text().split(" ")[0], long_.text().split(" ")[0]) == printed
    said = profile.stream_start({"issue_short_timing": short, "issue_timing": long_, "short_steps": 30,
                                 "stream_steps": 469})
    assert f"costs about {once} once" in said


def test_pace_with_parts_adds_the_printed_kernels():
    """Kernels printed 10.30 µs and 10.19 µs; the median of per-round sums is 20.61 µs: the sentence gives the
    20.49 µs a reader adds up, and the ratio from it; the outcome stays the medians'."""
    from helpers.bench import profile
    first, second = T(10.3, 0.001), T(10.19, 0.001)
    assert (first.text().split(" ")[0], second.text().split(" ")[0]) == ("10.30", "10.19")
    v = profile.pace(T(20.61, 0.001), T(15.3), [first, second])
    assert "dispatches alone (20.49 µs, the kernels above added up)" in v and "20.61" not in v
    assert v.outcome == "GPU longer" and "1.3× as long as" in v
    # 13.77 / 10.2 = 1.35 from the printed figures: 1.4× (raw medians 13.74 / 10.2 give 1.3×)
    w = profile.pace(T(13.74, 0.001), T(10.2, 0.001), [T(6.887, 0.001), T(6.883, 0.001)])
    assert "(13.77 µs, the kernels above added up)" in w and "1.4× as long as" in w


def test_sweep_source_names_the_card_and_the_date_of_the_sweep():
    """Notebook 08 runs tunables from the committed sweep: the sentence names its file, card and date (the
    sweep ran on another day than the notebook), or says the shaders' defaults run where there is no file."""
    import json
    from helpers.bench import fused as bench_fused, limits
    path = bench_fused.tuning_file("fused-sweep")
    sweep = json.loads(path.read_text())
    said = limits.sweep_source(path, sweep, "tunables")
    card = sweep["device"]["describe"].split("/")[0]
    assert said == f"tunables from notebooks/results/{path.name} (a sweep on {card}, {sweep['device']['date']})"
    made_up = {"device": {"describe": "Some GPU/PCIe | OpenGL 4.6", "date": "2030-01-02"}}
    assert limits.sweep_source("/elsewhere/s.json", made_up) == "tunables from /elsewhere/s.json (a sweep on Some GPU, 2030-01-02)"
    assert "shaders' own defaults" in limits.sweep_source(path, None)


def test_nb08_summary_puts_the_record_limits_in_the_record():
    """The last bullet of notebook 08's summary gives the record's epoch against the record's floor and cuBLAS: it
    says so, after a bullet with this run's own floor, instead of 'That epoch ... in the same run'."""
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "08_dispatch_floor.ipynb").read_text())
    code = next("".join(c["source"]) for c in nb["cells"]
                if c["cell_type"] == "code" and "findings.what_we_measured(" in "".join(c["source"]))
    assert "In the benchmark record, that epoch" in code and "That epoch took" not in code
    assert "in the same run." not in code


def test_barrier_wait_is_a_lower_bound_where_python_set_the_pace():
    """Without barriers the stream can go no faster than Python issues it: where the stream is not beyond
    Python's issue time, the GPU's own time was not measured and the share is 'at least'; where it is beyond
    it, the GPU set the pace and the share is measured."""
    paced = limits.barrier_wait(T(21.2), T(6.31), issue=T(6.4))
    assert paced.outcome == "barriers cost"
    assert "no longer than Python's time to issue them" in paced and "at least 70 % of a step" in paced
    level = limits.barrier_wait(T(21.2), T(6.31), issue=T(6.28))    # 6.31 against 6.28: bands overlap
    assert "no longer than" not in level and "the same within the noise we measured: Python set" in level
    longer = limits.barrier_wait(T(21.2), T(6.6), issue=T(6.28))   # longer than the issue time, within the margin
    assert "no longer than" not in longer and "against Python's time to issue them (6.28 µs (6.24–6.32)), 1.05× apart, within the 10 % we call the same: Python set" in longer
    assert "at least" in longer
    gpu = limits.barrier_wait(T(21.2), T(9.0), issue=T(6.28))       # 9.0 against 6.28: beyond Python's pace
    assert gpu.outcome == "barriers cost"
    assert "at least" not in gpu and "Python set that pace" not in gpu and "58 % of a step" in gpu
    assert "at least" not in limits.barrier_wait(T(21.2), T(6.31))  # no issue time given: nothing claimed

"""The sentences notebook 09 prints from its measurements (grid barriers, the persistent kernel, one dispatch a
step), each on made-up Timings on every side of its threshold, so a printed verdict can never contradict the
numbers printed beside it (no GPU)."""

from decimal import Decimal

import pytest

from helpers import lookahead_mlp, persistent_mlp, timing

US = 1e-6


def T(seconds, spread=0.01, n=9):
    """A made-up Timing: n samples around `seconds`, spread ± `spread` of it (evenly)."""
    return timing.Timing(tuple(seconds * (1 + spread * (2 * i / (n - 1) - 1)) for i in range(n)))


# --- the grid barrier, one account from three measurements ------------------------------------------------------

def test_grid_barrier_account_saving_and_its_parts_agree():
    # empty dispatch + barrier 2.71 µs, a grid barrier 2.49 µs; three phases as dispatches 74.2 µs, joined 55.9 µs
    v = persistent_mlp.grid_barrier_account(T(2.71 * US), T(2.49 * US), T(74.2 * US), T(55.9 * US))
    assert v.outcome == persistent_mlp.SAVED and "saved 18.3 µs a step" in v
    assert "3.15 µs of it" in v                                          # 3 × 2.71 − 2 × 2.49: the fixed costs
    assert "other 15.2 µs" in v                                          # the rest: starting and draining


@pytest.mark.parametrize("as_us, inside_us, saved", [(72.32, 55.94, "16.4"),    # 72.3 and 55.9
                                                     (72.3, 55.86, "16.4"),     # 72.30 and 55.9: 55.9's tenths
                                                     (74.2, 55.9, "18.30")])    # 74.20 and 55.90: both hundredths
def test_grid_barrier_account_saving_is_the_printed_figures_difference(as_us, inside_us, saved):
    """72.32 and 55.94 print as 72.3 and 55.9: the saving printed is 16.4, what a reader subtracts, not 16.38
    rounded to 16.4 by luck or 16.3 as the unrounded medians' 72.3 - 55.94 = 16.36 would give; a difference of
    figures printed to different decimals is printed to the coarser one's (72.30 - 55.9 = 16.4, not 16.40)."""
    v = persistent_mlp.grid_barrier_account(T(2.48 * US, 0.001), T(2.53 * US, 0.001), T(as_us * US, 0.001),
                                            T(inside_us * US, 0.001))
    a, b = (Decimal(x) for x in (T(as_us * US, 0.001).text("µs").split()[0], T(inside_us * US, 0.001).text("µs").split()[0]))
    decimals = len(saved.split(".")[1])
    assert f"saved {saved} µs a step" in v and f"{a - b:.{decimals}f}" == saved
    assert "explain 2.38 µs of it" in v and f"the other {Decimal(saved) - Decimal('2.38'):.{decimals}f} µs" in v
    assert persistent_mlp.step_saving_us(T(as_us * US, 0.001), T(inside_us * US, 0.001)) == (float(saved), decimals)


def test_grid_barrier_account_same_within_noise_or_costs():
    same = persistent_mlp.grid_barrier_account(T(2.7 * US), T(2.5 * US), T(60.0 * US), T(60.5 * US))
    assert same.outcome == timing.SAME and "less than the noise" in same and "saved" not in same
    worse = persistent_mlp.grid_barrier_account(T(2.0 * US), T(3.0 * US), T(60.0 * US), T(66.0 * US))
    assert worse.outcome == persistent_mlp.COST and "cost 6.0 µs a step more" in worse   # 66.0 - 60.0, as printed


def test_grid_barrier_account_saving_that_the_fixed_costs_do_not_explain():
    v = persistent_mlp.grid_barrier_account(T(2.0 * US), T(3.1 * US), T(70.0 * US), T(60.0 * US))
    assert v.outcome == persistent_mlp.SAVED and "saved 10.0 µs a step" in v and "none of it" in v


def test_grid_barrier_account_without_a_persistent_run():
    v = persistent_mlp.grid_barrier_account(T(2.7 * US), T(2.5 * US), T(60.0 * US), None)
    assert "not measured here" in v and v.outcome == persistent_mlp.NOT_MEASURED


def test_persistent_epoch_on_all_sides():
    slower = persistent_mlp.persistent_epoch(T(27.8e-3), T(15.8e-3), 18.3 * US, steps=469)
    assert slower.outcome == timing.B_FASTER and "1.8× faster than the persistent" in slower
    assert "18.3 µs a step (8.58 ms an epoch)" in slower and slower.startswith("The fused trainer's epoch")
    faster = persistent_mlp.persistent_epoch(T(12.0e-3), T(15.8e-3), 18.3 * US, steps=469)
    assert faster.outcome == timing.A_FASTER and faster.startswith("The persistent kernel's epoch")
    same = persistent_mlp.persistent_epoch(T(15.9e-3), T(15.8e-3), None, steps=469)
    assert same.outcome == timing.SAME and "not measured" in same
    none = persistent_mlp.persistent_epoch(T(27.8e-3), T(15.8e-3), -1.0 * US, steps=469)
    assert "saved nothing" in none


@pytest.mark.parametrize("account, words", [
    (persistent_mlp.SAVED, "the grid barriers saved 1.2 µs a step (0.56 ms an epoch)"),
    (timing.SAME, "the grid barriers changed a step by less than the noise we measured"),
    (persistent_mlp.COST, "the grid barriers saved nothing"),
    (persistent_mlp.NOT_MEASURED, "what the grid barriers saved was not measured here")])
def test_persistent_epoch_says_saved_only_where_the_account_found_a_saving(account, words):
    """A positive difference of medians (1.2 µs) is a saving only where grid_barrier_account judged it one
    beyond the noise; where it called the step unchanged, the sentence says so and prints no saving."""
    v = persistent_mlp.persistent_epoch(T(27.8e-3), T(15.8e-3), 1.2 * US, steps=469, account=account)
    assert words in v.lower()
    assert ("saved 1.2 µs" in v) == (account == persistent_mlp.SAVED)


# --- one dispatch a step against two ------------------------------------------------------------------------------

def test_the_epochs_margin_is_the_benchmarks():
    from helpers.bench import limits
    assert lookahead_mlp.MARGIN == limits.EPOCHS


def test_one_dispatch_against_two_on_all_sides():
    beat = lookahead_mlp.one_against_two(T(10.0e-3), T(13.54e-3))
    assert beat.outcome == timing.A_FASTER and "one dispatch a step beat two" in beat
    lost = lookahead_mlp.one_against_two(T(16.0e-3), T(12.24e-3), where="there")
    assert lost.outcome == timing.B_FASTER and "did not beat two" in lost and lost.startswith("The fused epoch")
    close = lookahead_mlp.one_against_two(T(13.44e-3), T(12.64e-3))   # 6 %: inside the 25 % margin
    assert close.outcome == timing.SAME and "neither is faster" in close


def test_runs_agree_or_differ():
    a, b = lookahead_mlp.one_against_two(T(16e-3), T(12e-3)), lookahead_mlp.one_against_two(T(17e-3), T(12e-3))
    assert lookahead_mlp.runs_agree(a, b).outcome == "agree"
    c = lookahead_mlp.one_against_two(T(12.5e-3), T(12e-3))
    assert lookahead_mlp.runs_agree(a, c).outcome == "differ"


def B(ms, low, high):
    """A made-up Timing of a median and a 20-80 % band, in ms (five samples: low, low, median, high, high)."""
    return timing.Timing((low * 1e-3, low * 1e-3, ms * 1e-3, high * 1e-3, high * 1e-3))


@pytest.mark.parametrize("look, look_floor, outcome, words", [
    # 09's H100 run: floor 2.4× higher, work 2.5× less, the epochs the same within the noise
    (B(11.0, 10.9, 11.2), B(7.99, 7.32, 8.09), timing.SAME,
     "So its smaller work and its higher floor cancel, which is why the two epochs come out the same."),
    (B(14.0, 13.9, 14.1), B(7.99, 7.9, 8.09), lookahead_mlp.FUSED_FASTER,
     "So its higher floor outweighs its smaller work: the lookahead epoch is 1.3× slower than the fused one."),
    (B(8.5, 8.4, 8.6), B(7.99, 7.9, 8.09), lookahead_mlp.LOOKAHEAD_FASTER,
     "So its smaller work outweighs its higher floor: the lookahead epoch is 1.3× faster than the fused one."),
    (B(8.5, 8.4, 8.6), B(3.38, 3.3, 3.4), lookahead_mlp.LOOKAHEAD_FASTER,
     "the two are the same within the noise we measured; above its floor"),
    (B(16.0, 15.9, 16.1), B(3.4, 3.35, 3.45), lookahead_mlp.FUSED_FASTER,
     "So the lookahead epoch is 1.5× slower than the fused one, by its larger work."),
    (B(18.0, 17.9, 18.1), B(7.99, 7.9, 8.09), lookahead_mlp.FUSED_FASTER,
     "So the lookahead epoch is 1.7× slower than the fused one, by its larger work and its higher floor."),
    (B(16.0, 15.9, 16.1), B(7.99, 7.9, 8.09), lookahead_mlp.FUSED_FASTER,     # work 8.01 ms: 1.07×, the same
     "8.01 ms (7.81–8.20) an epoch against the fused trainer's 7.52 ms (7.45–7.70): the two are 1.07× apart")])
def test_floor_account_says_what_each_part_did_and_which_won(look, look_floor, outcome, words):
    fused, fused_floor = B(10.9, 10.85, 11.0), B(3.38, 3.3, 3.4)
    v = lookahead_mlp.floor_account(look, look_floor, fused, fused_floor)
    assert v.outcome == outcome and words in v
    work_look, work_fused = look.median - look_floor.median, fused.median - fused_floor.median
    assert f"took {look_floor.text()}" in v and f"floor of two empty dispatches a step, {fused_floor.text()}" in v
    assert f"its work took {timing.Timing((work_look,)).text().split(' (')[0]}" in v      # the medians' difference
    assert f"the fused trainer's {timing.Timing((work_fused,)).text().split(' (')[0]}" in v
    if "2.4× the fused trainer's floor" in v:
        assert f"{look_floor.median / fused_floor.median:.2g}" == "2.4"
    if "less than the fused trainer's" in v:
        assert f"{work_fused / work_look:.2g}× less than the fused trainer's" in v
    assert "did not lose" not in v and "loses" not in v


# --- audit: each threshold just inside and just outside, each wording branch --------------------------------

@pytest.mark.parametrize("look, outcome, words", [(12.4e-3, timing.SAME, "neither is faster"),        # 24 %: inside
                                                  (12.6e-3, timing.B_FASTER, "did not beat two"),     # 26 %
                                                  (8.05e-3, timing.SAME, "neither is faster"),        # 24.2 %
                                                  (7.95e-3, timing.A_FASTER, "beat two")])            # 25.8 %
def test_one_against_two_either_side_of_the_margin(look, outcome, words):
    v = lookahead_mlp.one_against_two(T(look), T(10.0e-3))
    assert v.outcome == outcome and words in v


# the fused epoch 10.46 ms above a floor of 2.40 ms: its work 8.06 ms; each part and the epochs at their margins
@pytest.mark.parametrize("look, outcome", [(12.9, timing.SAME),                       # 23.3 % slower: inside 25 %
                                           (13.2, lookahead_mlp.FUSED_FASTER),        # 26.2 %
                                           (8.45, timing.SAME),                       # 23.8 % faster
                                           (8.3, lookahead_mlp.LOOKAHEAD_FASTER)])    # 26.0 %
def test_floor_account_outcome_either_side_of_the_margin(look, outcome):
    v = lookahead_mlp.floor_account(T(look * 1e-3, 0.001), T(2.40e-3, 0.001), T(10.46e-3, 0.001), T(2.40e-3, 0.001))
    assert v.outcome == outcome
    assert ("the two epochs come out the same" in v) == (outcome == timing.SAME)


@pytest.mark.parametrize("look_floor, words", [(2.98, "against the fused trainer's floor"),    # 1.242×: the same
                                               (3.02, "1.3× the fused trainer's floor")])       # 1.258×: higher
def test_floor_account_floor_either_side_of_the_margin(look_floor, words):
    v = lookahead_mlp.floor_account(T(13.5e-3, 0.001), T(look_floor * 1e-3, 0.001), T(10.46e-3, 0.001),
                                    T(2.40e-3, 0.001))
    assert words in v and ("its higher floor" in v) == (look_floor == 3.02)


def test_floor_account_writes_large_ratios_without_an_exponent():
    v = lookahead_mlp.floor_account(T(382e-3), T(167e-3), T(117e-3), T(0.571e-3))      # a software renderer's
    assert "290× the fused trainer's floor" in v and "e+" not in v


def test_floor_account_without_work_above_a_floor():
    v = lookahead_mlp.floor_account(T(2.0e-3), T(2.5e-3), T(10.46e-3), T(2.40e-3))
    assert "nothing to compare" in v and "-0.50 ms an epoch (medians)" in v and v.outcome == lookahead_mlp.LOOKAHEAD_FASTER


def test_grid_barrier_account_saving_smaller_than_its_fixed_costs():
    # fixed costs 3 × 2.71 − 2 × 2.49 = 3.15 µs; the step saved only 2.0 µs: the fixed costs explain all of it
    v = persistent_mlp.grid_barrier_account(T(2.71 * US), T(2.49 * US), T(20.0 * US), T(18.0 * US))
    assert v.outcome == persistent_mlp.SAVED and "saved 2.0 µs a step" in v     # 20.0 - 18.0, as printed
    assert "explain 2.00 µs of it" in v and "the other" not in v


# --- the appendix: the lookahead epoch's kinds of work group, the whole against the sum of its parts -------------

def _parts(chain, w1, q):
    return {"chain groups alone": T(chain * 1e-3), "W1 groups alone": T(w1 * 1e-3), "Q groups alone": T(q * 1e-3)}


@pytest.mark.parametrize("whole, outcome, words", [
    (13.2, lookahead_mlp.LESS_THAN_THE_SUM, "the sum of the parts costs 1.8× the whole, so the kinds run at least partly side by side"),
    (12.0, lookahead_mlp.ABOUT_THE_SUM, "about the sum of its parts (the same within the noise we measured), as if"),   # 5.00 against 5.00
    (14.0, lookahead_mlp.MORE_THAN_THE_SUM, "1.4× the sum of its parts, so together the kinds cost more than alone")])
def test_whole_against_parts_on_all_three_sides(whole, outcome, words):
    floor = T(7.28e-3) if whole == 13.2 else T(7.0e-3)
    parts = _parts(11.9, 9.37, 11.5) if whole == 13.2 else _parts(9.0, 8.0, 9.0)
    v = lookahead_mlp.whole_against_parts(T(whole * 1e-3), parts, floor)
    assert v.outcome == outcome and words in v


@pytest.mark.parametrize("whole, outcome", [(12.50, lookahead_mlp.ABOUT_THE_SUM),       # 5.50 against 5.00: 1.10×
                                            (12.55, lookahead_mlp.MORE_THAN_THE_SUM),   # 1.11×: beyond the 10 %
                                            (11.55, lookahead_mlp.ABOUT_THE_SUM),       # 4.55: 1.099× below
                                            (11.54, lookahead_mlp.LESS_THAN_THE_SUM),   # 4.54: 1.1013× below
                                            (11.50, lookahead_mlp.LESS_THAN_THE_SUM)])  # 4.50: 1.11× below
def test_whole_against_parts_either_side_of_the_margin(whole, outcome):
    v = lookahead_mlp.whole_against_parts(T(whole * 1e-3), _parts(9.0, 8.0, 9.0), T(7.0e-3))
    assert v.outcome == outcome
    assert ("we call the same" in v) == (outcome == lookahead_mlp.ABOUT_THE_SUM)      # bands apart: the margin named
    assert "within the noise" not in v


def test_whole_against_parts_prints_a_ratio_beyond_the_margin_just_past_it():
    """4.54 against 5.00 ms is 1.1013: printed as the sum over the whole with the digits it takes to read as
    beyond the 10 % (a whole at 0.91× the sum would read as 1/0.91 = 1.099, within it)."""
    v = lookahead_mlp.whole_against_parts(T(11.54e-3), _parts(9.0, 8.0, 9.0), T(7.0e-3))
    assert "the sum of the parts costs 1.101× the whole" in v and "0.91" not in v


def test_whole_against_parts_prints_the_figures_it_compares():
    v = lookahead_mlp.whole_against_parts(T(12.0e-3), _parts(9.0, 8.0, 9.0), T(7.0e-3))
    assert "at once cost 5.00 ms (4.97–5.03) an epoch and the three kinds alone, added up round by round (a median of sums, not a sum of the medians above), 5.00 ms (4.97–5.03)" in v


def test_whole_against_parts_adds_the_parts_round_by_round():
    """Run Q of the appendix: the whole 4.42 ms beyond the floor, the parts 6.45 ms (4.46–7.95) with each band
    at its widest, and a verdict of 'about the sum' where four other runs found 0.59-0.74×. A drift shared by
    the epochs of a round cancels when each round's parts are added up within the round."""
    import random
    rng = random.Random(1)
    drift = [rng.uniform(-0.6e-3, 0.6e-3) for _ in range(15)]             # the clock moving between rounds
    epoch = lambda base: timing.Timing(tuple(base + d + rng.gauss(0, 0.05e-3) for d in drift))   # noqa: E731
    floor, whole = epoch(6.3e-3), epoch(10.72e-3)
    parts = {"chain groups alone": epoch(9.36e-3), "W1 groups alone": epoch(6.94e-3), "Q groups alone": epoch(9.03e-3)}
    widest = lookahead_mlp._beyond(list(parts.values()), floor), lookahead_mlp._beyond([whole], floor)
    assert widest[1].high > widest[0].low                                    # bands at their widest overlap
    v = lookahead_mlp.whole_against_parts(whole, parts, floor)
    assert v.outcome == lookahead_mlp.LESS_THAN_THE_SUM and "the sum of the parts costs 1.4× the whole" in v
    # the line printed for the whole is the figure the sentence compares
    assert f"at once cost {lookahead_mlp.beyond_floor(whole, floor).text()} an epoch" in v


def test_whole_against_parts_needs_one_sample_a_round():
    with pytest.raises(ValueError, match="one sample a round"):
        lookahead_mlp.whole_against_parts(T(12.0e-3, n=9), _parts(9.0, 8.0, 9.0), T(7.0e-3, n=5))


def test_whole_against_parts_with_nothing_beyond_the_floor():
    v = lookahead_mlp.whole_against_parts(T(6.9e-3), _parts(9.0, 8.0, 9.0), T(7.0e-3))
    assert v.outcome == lookahead_mlp.NO_COST and "no sum to compare" in v


def test_grid_barrier_saving_and_remainder_are_the_printed_figures_exactly():
    """73.00 µs and 55.3 µs as printed: the saving is 73.00 − 55.3 = 17.7 µs at the coarser figure's decimals
    (not 17.70, a digit 55.3 does not have, nor 18), the remainder 17.7 − 2.43 = 15.3 µs, and the epoch
    17.7 µs × 469 = 8.30 ms (not 8.44)."""
    as_d, inside = T(73.0 * US, 0.001), T(55.3 * US, 0.01)
    assert as_d.text("µs").startswith("73.00 µs") and inside.text("µs").startswith("55.3 µs")
    assert persistent_mlp.step_saving_us(as_d, inside) == (17.7, 1)
    v = persistent_mlp.grid_barrier_account(T(2.49 * US, 0.001), T(2.52 * US, 0.001), as_d, inside)
    assert "saved 17.7 µs a step" in v and "explain 2.43 µs of it" in v and "the other 15.3 µs" in v
    saved_us, decimals = persistent_mlp.step_saving_us(as_d, inside)
    e = persistent_mlp.persistent_epoch(T(28.8e-3), T(10.7e-3), 1e-6 * saved_us, steps=469, decimals=decimals)
    assert "saved 17.7 µs a step (8.30 ms an epoch)" in e
    whole = persistent_mlp.persistent_epoch(T(28.8e-3), T(10.7e-3), 18e-6, steps=469, decimals=0)
    assert "saved 18 µs a step (8.44 ms an epoch)" in whole


def test_floor_account_in_turn_takes_each_rounds_epoch_less_its_floor():
    """Run V1 of notebook 09: a few disturbed rounds slowed an epoch and its floor together (the floor's band
    7.14-12.1 ms); taken band against band, the lookahead's work read 3.43 ms (-1.36-3.87), a negative time.
    Taken round by round, the disturbance cancels and the sentence says how the work was taken."""
    calm = [10.8, 10.8, 10.9, 10.8, 10.7, 10.8]
    floors = [7.4, 7.4, 7.5, 7.4, 7.3, 7.4]
    look = timing.Timing(tuple(1e-3 * x for x in calm + [15.6, 16.1, 15.9, 16.0]))      # 4 rounds in 10 disturbed
    look_floor = timing.Timing(tuple(1e-3 * x for x in floors + [12.1, 12.6, 12.4, 12.5]))
    fused = timing.Timing(tuple(1e-3 * x for x in [10.6] * 6 + [26.6, 27.0, 26.8, 26.9]))
    fused_floor = timing.Timing(tuple(1e-3 * x for x in [3.5] * 6 + [19.5, 19.9, 19.7, 19.8]))
    wide = lookahead_mlp.floor_account(look, look_floor, fused, fused_floor)
    assert "(-" in wide and "round by round" not in wide                 # band against band: below zero
    v = lookahead_mlp.floor_account(look, look_floor, fused, fused_floor, in_turn=True)
    assert "above its floor, round by round, its work took 3.40 ms (3.40–3.50) an epoch" in v and "(-" not in v, v

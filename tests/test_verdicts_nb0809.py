"""The sentences notebooks 08 and 09 print from their numbers, each on both sides of its threshold, so that a
printed verdict can never contradict the numbers printed beside it (made-up numbers, no GPU)."""

import pytest

from helpers import lookahead_mlp, persistent_mlp
from helpers.bench import limits

US = 1e-6


# --- notebook 08: the budget of a step ------------------------------------------------------------------------

def test_step_bound_names_python_or_the_gpu():
    assert limits.step_bound(30 * US, 20 * US).startswith("Python bounds a step here")
    assert "1.50×" in limits.step_bound(30 * US, 20 * US)
    assert limits.step_bound(7 * US, 20 * US).startswith("The GPU bounds a step here")
    assert "35%" in limits.step_bound(7 * US, 20 * US)


def test_uniform_cost_does_not_blame_a_changing_value_that_is_faster_than_a_fixed_one():
    # the measured case: step(s) 25.1, step(0) every time 25.9, no uniform 23.6 µs
    sentence = limits.uniform_cost(25.1 * US, 25.9 * US, 23.6 * US)
    assert "whether or not its value changes" in sentence and "+1.5 µs" in sentence
    assert "slower when the uniform changes" not in sentence


def test_uniform_cost_on_each_side_of_its_thresholds():
    changed = limits.uniform_cost(28.0 * US, 25.0 * US, 24.0 * US)      # changing costs 3 µs beyond a fixed value
    assert changed.startswith("Changing the step uniform's value") and "+3.0 µs" in changed
    nothing = limits.uniform_cost(24.2 * US, 24.1 * US, 24.0 * US)      # all within 5 %
    assert "no measurable cost" in nothing
    written = limits.uniform_cost(26.0 * US, 26.0 * US, 24.0 * US)      # both writes 2 µs over, equal to each other
    assert "whether or not its value changes" in written and "+2.0 µs" in written


def test_barrier_wait_on_both_sides():
    waits = limits.barrier_wait(23.6 * US, 12.0 * US)
    assert "49% of a step is the wait the barriers impose" in waits
    little = limits.barrier_wait(23.6 * US, 21.0 * US)
    assert "the barriers cost little here" in little and "%" not in little.split(":")[1]


@pytest.mark.parametrize("kernel, words", [(0.7, "mostly kernel work"), (0.47, "about half"),
                                           (0.6, "about half"), (0.3, "mostly not kernel work")])
def test_epoch_shares_words_follow_the_kernel_share(kernel, words):
    rest = 1 - kernel
    sentence = limits.epoch_shares({"upload": 0.0, "kernel": kernel, "readback": 0.02, "dispatch": rest - 0.02})
    assert words in sentence and f"kernel {kernel:.0%}" in sentence


def test_largest_bound_above_and_below():
    bounds = {"dispatch floor": 2.9e-3, "Python's issue cost": 3.5e-3, "kernels": 9.9e-3}
    above = limits.largest_bound(bounds, 15.8e-3)
    assert above.startswith("The largest bound: kernels; the epoch is 1.60× it.")
    below = limits.largest_bound(bounds, 8.0e-3)
    assert "0.81× it" in below and "disagree" in below


def test_bytes_against_time_on_both_sides():
    assert "Fewer bytes, no less time" in limits.bytes_against_time(2.0, 1.26)
    assert "Cutting the bytes cut the time" in limits.bytes_against_time(2.0, 0.7)


@pytest.mark.parametrize("explained, words", [(0.3, "latency-bound"), (0.75, "near bandwidth-bound"),
                                              (2.8, "faster than HBM could deliver it")])
def test_bound_kind_on_each_side(explained, words):
    assert words in limits.bound_kind(explained, software=False)


def test_bound_kind_is_not_judged_on_a_software_renderer():
    assert limits.bound_kind(0.3, software=True).startswith("not judged")


# --- notebook 09: the grid barrier, one account from three measurements ----------------------------------------

def test_grid_barrier_account_saving_and_its_parts_agree():
    # empty dispatch + barrier 2.71 µs, a grid barrier 2.49 µs; three phases as dispatches 74.2 µs, joined 55.9 µs
    text = persistent_mlp.grid_barrier_account(2.71 * US, 2.49 * US, 74.2 * US, 55.9 * US)
    assert "saved 18.3 µs a step" in text
    assert "3.15 µs of it" in text                                       # 3 × 2.71 − 2 × 2.49: the fixed costs
    assert "other 15.2 µs" in text                                       # the rest: starting and draining
    assert "at most" not in text


def test_grid_barrier_account_when_joining_saves_nothing_or_costs():
    same = persistent_mlp.grid_barrier_account(2.7 * US, 2.5 * US, 60.0 * US, 60.0 * US)
    assert "saved nothing" in same
    worse = persistent_mlp.grid_barrier_account(2.0 * US, 3.0 * US, 60.0 * US, 64.0 * US)
    assert "cost 4.0 µs a step more" in worse
    small = persistent_mlp.grid_barrier_account(2.0 * US, 3.1 * US, 62.0 * US, 61.9 * US)   # fixed costs -> none
    assert "saved 0.1 µs a step" in small and "none of it" in small


def test_grid_barrier_account_without_a_persistent_run():
    assert "not measured here" in persistent_mlp.grid_barrier_account(2.7 * US, 2.5 * US, 60.0 * US, None)


def test_persistent_epoch_names_the_saving_it_was_given():
    slower = persistent_mlp.persistent_epoch(27.8e-3, 15.8e-3, 18.3 * US, steps=469)
    assert "1.76× the fused epoch" in slower and "18.3 µs a step (8.58 ms an epoch)" in slower
    assert "a little" not in slower
    faster = persistent_mlp.persistent_epoch(12.0e-3, 15.8e-3, 18.3 * US, steps=469)
    assert faster.startswith("The persistent kernel is faster here: 1.3× faster")
    none = persistent_mlp.persistent_epoch(27.8e-3, 15.8e-3, -1.0 * US, steps=469)
    assert "saved nothing" in none
    unmeasured = persistent_mlp.persistent_epoch(27.8e-3, 15.8e-3, None, steps=469)
    assert "not measured" in unmeasured and "saved nothing" not in unmeasured


def test_one_dispatch_against_two_on_both_sides():
    beat = lookahead_mlp.one_against_two(11.87e-3, 13.54e-3)
    assert beat.startswith("One dispatch a step beat two here") and "0.88×" in beat
    lost = lookahead_mlp.one_against_two(13.44e-3, 12.64e-3, where="there")
    assert lost.startswith("One dispatch a step did not beat two there") and "1.06×" in lost


def test_runs_that_disagree_say_so():
    assert "smaller than what the same epoch varies" in lookahead_mlp.runs_agree(11.87, 13.54, 13.44, 12.64)
    assert lookahead_mlp.runs_agree(11.0, 13.0, 12.0, 13.0) == ("This run and the committed one order the two "
                                                                "trainers the same way.")


def test_uniform_cost_when_the_stream_without_the_uniform_is_the_slowest():
    # the H200 run: step(s) 23.0, step(0) 24.4, no uniform 34.6 µs: not "within 5 %"
    sentence = limits.uniform_cost(23.0 * US, 24.4 * US, 34.6 * US)
    assert "within 5 % of writing none" not in sentence and "no uniform 34.6" in sentence
    assert "slower than" in sentence and "not the uniform" in sentence
    assert "within 5 % of writing none" in limits.uniform_cost(24.2 * US, 24.1 * US, 24.0 * US)
    # no uniform slower by less than the tolerance: still within 5 %
    assert "within 5 % of writing none" in limits.uniform_cost(24.0 * US, 24.0 * US, 25.0 * US)
    # the second H200 run: 24.1 and 23.7 against 22.6 (6.6 % apart at most): no claim that all three are within 5 %
    assert "three streams" not in limits.uniform_cost(24.1 * US, 23.7 * US, 22.6 * US)

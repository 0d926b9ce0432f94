"""The sentences notebook 08 prints from their numbers, each on both sides of its threshold, so that a
printed verdict can never contradict the numbers printed beside it (made-up numbers, no GPU)."""

import pytest

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

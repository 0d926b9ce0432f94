"""The sentences notebooks 06 and 07 print from their measurements, on made-up numbers either side of each
threshold, so a printed verdict can never contradict the numbers printed beside it; and which shaders
FusedMLP picks when given no layout (a rule of the net's shape, no GPU needed to check it)."""

import re
from decimal import Decimal
from pathlib import Path

import pytest

from helpers import fused_mlp, timing
from helpers.bench import fused as bench_fused
from helpers.bench import dropout as bench_dropout
from helpers.bench import train as bench_train


def T(ms, spread=0.01, n=9):
    """A made-up Timing: n epochs around `ms` milliseconds, spread ± `spread` of it (evenly)."""
    return timing.Timing(tuple(ms * 1e-3 * (1 + spread * (2 * i / (n - 1) - 1)) for i in range(n)))


# --- notebook 06, section 4: how much of an epoch is kernel time, and how fusion moved it ------------------------

def test_kernel_share_gives_figures_and_no_verdict():
    """The share moves with the epoch's wall clock between runs (62 to 70 % for the fused trainer in six H100
    runs), so its sentence gives the figures and no word that a threshold picks."""
    v = fused_mlp.kernel_share("fused", 0.62, low=0.62, high=0.63)
    assert v == "fused: kernels 62 % (62–63 %) of the epoch" and not hasattr(v, "outcome")
    assert fused_mlp.kernel_share("fused", 0.5) == "fused: kernels 50 % of the epoch"


@pytest.mark.parametrize("before, after, outcome", [
    ((0.51, 0.50, 0.52), (0.62, 0.62, 0.63), fused_mlp.SHARE_ROSE),      # the six H100 runs of notebook 06
    ((0.53, 0.51, 0.54), (0.70, 0.70, 0.70), fused_mlp.SHARE_ROSE),
    ((0.46, 0.45, 0.48), (0.67, 0.67, 0.67), fused_mlp.SHARE_ROSE),
    ((0.58, 0.57, 0.59), (0.68, 0.68, 0.68), fused_mlp.SHARE_ROSE),
    ((0.58, 0.58, 0.58), (0.66, 0.66, 0.69), fused_mlp.SHARE_ROSE),
    ((0.59, 0.58, 0.59), (0.70, 0.70, 0.70), fused_mlp.SHARE_ROSE),
    ((0.60, 0.58, 0.62), (0.63, 0.62, 0.64), fused_mlp.SHARE_LEVEL),    # bands touch: level
    ((0.60, 0.58, 0.62), (0.60, 0.59, 0.61), fused_mlp.SHARE_LEVEL),
    ((0.60, 0.58, 0.62), (0.55, 0.54, 0.57), fused_mlp.SHARE_FELL)])
def test_share_shift_on_each_side_of_the_bands(before, after, outcome):
    v = fused_mlp.share_shift(before, after)
    assert v.outcome == outcome
    assert (f"from {fused_mlp.share_band_text(*before)} of notebook 05's epoch to {fused_mlp.share_band_text(*after)} of the "
            "fused epoch") in v
    assert {fused_mlp.SHARE_ROSE: "raised", fused_mlp.SHARE_FELL: "lowered", fused_mlp.SHARE_LEVEL: "level"}[outcome] in v
    # the share is W / (W + F): it rises exactly when F fell by a larger FRACTION than W, which the words say in
    # relative terms (an absolute "removed more fixed costs than arithmetic" was false beside fusion_segments)
    says = {fused_mlp.SHARE_ROSE: "relative to the kernels' own work, the fixed costs and waiting shrank",
            fused_mlp.SHARE_FELL: "relative to the fixed costs and waiting, the kernels' own work shrank",
            fused_mlp.SHARE_LEVEL: "kept about the same proportion"}
    assert all((words in v) == (out == outcome) for out, words in says.items())
    assert "removed more" not in v


def _rounds(epochs_u, epochs_f, kernel_u=11e-3, kernel_f=7.4e-3):
    return bench_fused.share_rounds(kernel_u, timing.Timing(tuple(1e-3 * e for e in epochs_u)),
                                    kernel_f, timing.Timing(tuple(1e-3 * e for e in epochs_f)))


def test_share_rounds_cancels_a_disturbance_that_slows_both_epochs_of_a_round():
    """Run V2 of notebook 06: two rounds in ten slowed both epochs, the fused epoch's 80th percentile went to
    17.9 ms beside a 10.8 ms median, and the share bands overlapped; each round's ratio of shares did not move."""
    calm_u, calm_f = [20.3, 20.4, 20.2, 20.5, 20.3, 20.4, 20.3, 20.2], [10.8, 10.8, 10.7, 10.9, 10.8, 10.8, 10.8, 10.7]
    r = _rounds(calm_u + [33.0, 35.0], calm_f + [17.6, 18.6])
    assert 1.24 < r.low and r.high < 1.31                # (7.4 / 10.8) / (11 / 20.3) = 1.26 in every calm round
    before, after = (0.54, 0.49, 0.55), (0.69, 0.42, 0.69)   # the bands overlap: alone they would say level
    assert fused_mlp.share_shift(before, after).outcome == fused_mlp.SHARE_LEVEL
    v = fused_mlp.share_shift(before, after, rounds=r)
    assert v.outcome == fused_mlp.SHARE_ROSE and "round by round" in v and "raised" in v
    assert f"the share after over the share before {timing.times(r.median)}× (" in v
    with pytest.raises(ValueError, match="paired_ratio needs the same number of rounds"):
        _rounds(calm_u, calm_f[:-1])
    with pytest.raises(ValueError, match="kernel phase before must be positive"):
        _rounds(calm_u, calm_f, kernel_u=0.0)


@pytest.mark.parametrize("fused_ms, after, outcome", [
    (10.8, (0.69, 0.68, 0.69), fused_mlp.SHARE_ROSE),      # every round's share ratio about 1.26
    (13.6, (0.54, 0.54, 0.55), fused_mlp.SHARE_LEVEL),     # about 1.00: rounds straddle 1
    (16.0, (0.46, 0.46, 0.47), fused_mlp.SHARE_FELL)])     # about 0.85
def test_share_shift_round_by_round_on_each_side_of_one(fused_ms, after, outcome):
    epochs_u = [20.3 * (1 + 0.002 * k) for k in (-2, -1, 0, 1, 2)]
    epochs_f = [fused_ms * (1 + 0.002 * k) for k in (1, -2, 0, 2, -1)]     # not in step with the rounds
    v = fused_mlp.share_shift((0.54, 0.54, 0.55), after, rounds=_rounds(epochs_u, epochs_f))
    assert v.outcome == outcome
    assert ("(the share after over the share before" in v) == (outcome == fused_mlp.SHARE_LEVEL)
    assert "round by round" in v and "bands overlap" not in v


def test_share_shift_round_by_round_needs_the_printed_shares_to_differ():
    """Rounds above 1 but two shares that print the same whole percent: level, never 'raised' beside 54 % and 54 %."""
    r = _rounds([20.3] * 4 + [20.4], [13.5] * 4 + [13.4])      # about 1.01 in every round
    assert r.low > 1
    assert fused_mlp.share_shift((0.54, 0.54, 0.54), (0.54, 0.54, 0.54), rounds=r).outcome == fused_mlp.SHARE_LEVEL


@pytest.mark.parametrize("share, low, high, text", [(0.70, 0.698, 0.702, "70 %"),                 # band rounds to 70 %
                                                    (0.62, 0.62, 0.63, "62 % (62–63 %)"),
                                                    (0.59, 0.584, 0.594, "59 % (58–59 %)")])    # 58.4 rounds to 58
def test_share_band_text_gives_the_band_only_where_it_shows(share, low, high, text):
    assert fused_mlp.share_band_text(share, low, high) == text
    assert fused_mlp.share_band_text(0.62, 0.615, 0.624) == "62 %"     # a band that rounds to the share: no band


def test_kernel_share_refuses_a_share_outside_0_1():
    with pytest.raises(ValueError, match="share"):
        fused_mlp.kernel_share("fused", 1.5)
    with pytest.raises(ValueError, match="share"):
        fused_mlp.kernel_share("fused", 0.5, low=0.6)



class _Trainer:
    steps_per_epoch, check_every = 469, 50


def _prof(kernels_us=(12.9, 8.3), empty_us=2.3):
    return {"kernel": {f"k{i}.comp": k * 1e-6 for i, k in enumerate(kernels_us)}, "empty": empty_us * 1e-6,
            "readback": 35e-6, "order_upload": 60e-6}


@pytest.mark.parametrize("epoch_ms, share", [(10.0, 0.78), (16.5, 0.47), (30.0, 0.26)])   # 7.79 ms of each
def test_kernel_share_account_prints_every_figure_of_its_share(epoch_ms, share):
    words, (value, low, high) = bench_fused.kernel_share_account("fused", _Trainer(), _prof(), T(epoch_ms))
    assert (f"(kernels 21.2 µs a step, less 2 × 2.30 µs of empty dispatch, × 469 steps: 7.79 ms of a "
            f"{T(epoch_ms).text()} epoch)") in words
    printed = int(re.search(r"kernels (\d+) %", words).group(1))             # the share, rebuilt by hand
    assert printed == round(100 * (21.2 - 2 * 2.3) * 469 / 1e3 / epoch_ms) == round(100 * share)
    assert low <= value <= high and abs(value - share) < 0.01


@pytest.mark.parametrize("kernels_us, empty_us", [((20.125, 20.125), 2.5036),   # 40.25 and 2.504 print as 40.2, 2.5
                                                  ((10.0, 5.0, 6.0, 5.0, 9.0, 5.0), 2.494),   # old: 11.7 ms
                                                  ((12.96, 8.34), 2.349)])
def test_kernel_share_account_arithmetic_holds_on_the_printed_figures(kernels_us, empty_us):
    """The kernels' epoch time it prints is (printed kernels - n × printed empty) × steps, to three figures."""
    words, (share, _, _) = bench_fused.kernel_share_account("fused", _Trainer(), _prof(kernels_us, empty_us), T(20.0))
    got = re.search(r"kernels ([\d.]+) µs a step, less (\d+) × ([\d.]+) µs of empty dispatch, × 469 steps: "
                    r"([\d.]+) ms of a", words)
    k, n, e, ms = float(got.group(1)), int(got.group(2)), float(got.group(3)), float(got.group(4))
    assert f"{(k - n * e) * 469 / 1e3:.3g}" == f"{ms:.3g}"
    assert int(re.search(r"kernels (\d+) %", words).group(1)) == round(100 * (k - n * e) * 469 / 1e3 / 20.0)


def test_kernel_share_account_names_a_kernel_no_longer_than_an_empty_dispatch():
    words, _ = bench_fused.kernel_share_account("fused", _Trainer(), _prof((12.9, 8.3, 2.0)), T(16.5))
    assert "less 2 × 2.30 µs" in words and "1 kernel no longer than an empty dispatch counts nothing" in words


def test_kernel_share_account_says_when_the_parts_overrun_the_epoch():
    words, (share, _, _) = bench_fused.kernel_share_account("fused", _Trainer(), _prof((30.0, 20.0)), T(16.5))
    assert share <= 1 and "more than its median, and the share is of that" in words
    assert "more than its median" not in bench_fused.kernel_share_account("fused", _Trainer(), _prof(), T(16.5))[0]

# --- notebook 06, question 2: which segment did fusion shrink? ----------------------------------------------
# fusion_segments judges the kernels' drop against the fixed cost of the dispatches fusion removed, both timed
# one dispatch at a time (timer queries); the rest of a step (wall clock) is printed as this run's, not judged.

X1 = (40.29e-6, 40.29e-6 + 15.36e-6, 21.10e-6, 21.10e-6 + 6.41e-6)   # notebook 06 on an H100, first run


def test_fusion_segments_on_the_first_runs_figures():
    v = fused_mlp.fusion_segments(*X1, (6, 2), 2.96e-6, decimals=2)
    assert v.outcome == fused_mlp.KERNEL_FELL_MORE
    assert "from 40.29 µs to 21.10 µs (down 19.19 µs)" in v
    assert "from 6 × 2.96 µs = 17.76 µs to 2 × 2.96 µs = 5.92 µs (down 11.84 µs)" in v
    assert "the kernels' time fell more than the fixed cost" in v
    assert "went from 15.36 µs to 6.41 µs (down 8.95 µs) in this run" in v
    assert "which move from one run to the next, so it is not judged" in v
    assert "by GPU timer query" in v


@pytest.mark.parametrize("rest_u, rest_f", [(15.36, 6.41), (43.36, 7.03), (2.45, 1.77)])   # the three runs' rests
def test_fusion_segments_outcome_does_not_follow_the_wall_clock_rest(rest_u, rest_f):
    """The kernels (40.22 -> 21.11 µs) and the empty dispatch held still between three runs while the rest of a
    step moved twentyfold: the outcome must not move with it."""
    v = fused_mlp.fusion_segments(40.22e-6, (40.22 + rest_u) * 1e-6, 21.11e-6, (21.11 + rest_f) * 1e-6, (6, 2),
                                  2.62e-6, decimals=2)
    assert v.outcome == fused_mlp.KERNEL_FELL_MORE
    assert f"went from {rest_u:.2f} µs to {rest_f:.2f} µs" in v


@pytest.mark.parametrize("empty_us, outcome, words", [
    (2.00, fused_mlp.KERNEL_FELL_MORE, "the kernels' time fell more than the fixed cost"),   # 10.00 vs 8.00: 2.00, not < 2.00
    (2.01, fused_mlp.BOTH_ALIKE, "fell by about the fixed cost removed"),                   # 10.00 vs 8.04: 1.96 < 2.00
    (3.12, fused_mlp.BOTH_ALIKE, "fell by about the fixed cost removed"),                   # 10.00 vs 12.48: 2.48 < 2.496
    (3.13, fused_mlp.FIXED_FELL_MORE, "the fixed cost fell more than the kernels' time")])  # 10.00 vs 12.52: 2.52 > 2.504
def test_fusion_segments_either_side_of_the_margin(empty_us, outcome, words):
    """Kernels down 10.00 µs against four empty dispatches removed (6 -> 2): alike within 20 % of the larger."""
    v = fused_mlp.fusion_segments(30e-6, 45e-6, 20e-6, 30e-6, (6, 2), empty_us * 1e-6, decimals=2)
    assert v.outcome == outcome and words in v, v
    assert "from 30.00 µs to 20.00 µs (down 10.00 µs)" in v


def test_fusion_segments_either_side_at_tenths():
    """At the default tenth of a µs the kernels print 30.0 -> 20.0 (down 10.0), the fixed cost at the empty
    dispatch's own hundredths; the margin is judged on those printed figures."""
    kernel = fused_mlp.fusion_segments(30e-6, 45e-6, 20e-6, 30e-6, (6, 2), 2.00e-6)
    alike = fused_mlp.fusion_segments(30e-6, 45e-6, 20e-6, 30e-6, (6, 2), 2.01e-6)
    assert kernel.outcome == fused_mlp.KERNEL_FELL_MORE and alike.outcome == fused_mlp.BOTH_ALIKE
    assert "from 30.0 µs to 20.0 µs (down 10.0 µs)" in kernel
    assert "6 × 2.01 µs = 12.06 µs to 2 × 2.01 µs = 4.02 µs (down 8.04 µs)" in alike


def test_fusion_segments_fixed_cost_fell_more_when_the_kernels_rose():
    """A software renderer: the fused kernels take longer than the unfused ones, the fixed cost still fell."""
    v = fused_mlp.fusion_segments(37e-6, 36e-6, 88e-6, 80e-6, (6, 2), 5e-6, clock=timing.WALL_FINISH)
    assert v.outcome == fused_mlp.FIXED_FELL_MORE and "(up 51.0 µs)" in v and "(down 20.00 µs)" in v
    assert "timed alone by wall clock around ctx.finish()" in v
    assert "from 0.0 µs to 0.0 µs (unchanged) in this run" in v     # kernels beyond the step: no rest


def test_fusion_segments_neither_fell_and_kernels_alone():
    neither = fused_mlp.fusion_segments(30e-6, 40e-6, 31e-6, 40e-6, (2, 2), 3e-6)
    assert neither.outcome == fused_mlp.NEITHER_FELL and "neither fell here" in neither and "(unchanged)" in neither
    kernels = fused_mlp.fusion_segments(30e-6, 40e-6, 29e-6, 40e-6, (2, 2), 3e-6)   # the same dispatches, faster
    assert kernels.outcome == fused_mlp.KERNEL_FELL_MORE and "(down 1.0 µs)" in kernels


_FIGURE = r"(?:(\d+) × ([\d.]+) µs = )?([\d.]+) µs"


def _printed_drops(v):
    """Every 'from [n × e µs = ]X µs to [m × e µs = ]Y µs (down|up Z µs | unchanged)' of a fusion_segments
    sentence, as exact decimals: (X, Y, the signed drop), each product n × e checked against its X or Y."""
    found = re.findall(rf"from {_FIGURE} to {_FIGURE} \((?:(down|up) ([\d.]+) µs|unchanged)\)", v)
    drops = []
    for n_u, e_u, x, n_f, e_f, y, way, d in found:
        for n, e, figure in ((n_u, e_u, x), (n_f, e_f, y)):
            assert not n or int(n) * Decimal(e) == Decimal(figure), (n, e, figure)
        drops.append((Decimal(x), Decimal(y), {"down": 1, "up": -1, "": 0}[way] * Decimal(d or 0)))
    return drops


@pytest.mark.parametrize("figures, dispatches, empty, decimals", [
    (X1, (6, 2), 2.96e-6, 2),
    ((40.34e-6, 42.84e-6, 21.16e-6, 22.96e-6), (6, 2), 2.5e-6, 1),     # 19.18 -> "19.1"
    ((10.14e-6, 12.16e-6, 9.96e-6, 11.04e-6), (6, 2), 2.655e-6, 1),   # 0.18 -> "0.1"; 2.655 prints 2.66 (or 2.65)
    ((30.04e-6, 45.06e-6, 30.04e-6, 44.95e-6), (6, 6), 3e-6, 1),      # kernels and fixed cost unchanged
    ((20.0e-6, 21.0e-6, 22.46e-6, 23.0e-6), (2, 3), 1.234e-6, 2)])     # kernels up, a dispatch more
def test_fusion_segments_printed_drop_is_the_difference_of_the_printed_figures(figures, dispatches, empty, decimals):
    drops = _printed_drops(fused_mlp.fusion_segments(*figures, dispatches, empty, decimals=decimals))
    assert len(drops) == 3
    assert all(before - after == drop for before, after, drop in drops)


def test_fusion_segments_judges_the_printed_drops():
    """Kernels 19.96 -> 10.04 µs fell 9.92 µs, which against the fixed cost's 8.00 (4 × 2.00) is within 20 %
    (1.92 < 1.984), but they print 20.0 -> 10.0 (down 10.0), 2.00 from 8.00, not within 20 % of 10.0: the
    outcome is the printed figures' (the kernels fell more), so the words agree with what the reader sees."""
    v = fused_mlp.fusion_segments(19.96e-6, 30e-6, 10.04e-6, 15e-6, (6, 2), 2.0e-6)
    assert "from 20.0 µs to 10.0 µs (down 10.0 µs)" in v and "(down 8.00 µs)" in v
    assert v.outcome == fused_mlp.KERNEL_FELL_MORE


def test_fusion_segments_prints_the_empty_dispatch_as_the_fixed_cost_count_does():
    """The empty dispatch as a Timing: its median, to the three digits profile.fixed_cost prints beside it."""
    from helpers.bench import profile
    empty = timing.Timing(tuple(x * 1e-6 for x in (2.91, 2.95, 2.96, 2.97, 3.1)))
    v = fused_mlp.fusion_segments(*X1, (6, 2), empty, decimals=2)
    assert "469 steps × 6 × 2.96 µs" in profile.fixed_cost(469, 6, empty.median)[1] and "6 × 2.96 µs" in v


def test_fusion_segments_rest_is_the_printed_step_less_the_printed_kernels():
    """Kernels of 40.16 µs print as 40.2: a step of 42.43 µs (the epoch as printed, over its steps) less the
    printed 40.2 is 2.23, so 2.2 µs, the difference a reader takes; less the unrounded 40.16 it would be 2.3."""
    v = fused_mlp.fusion_segments(40.16e-6, 42.43e-6, 21.2e-6, 22.84e-6, (6, 2), 2.5e-6)
    assert "from 40.2 µs to 21.2 µs" in v and "from 2.2 µs to 1.6 µs" in v


def test_versus_sentence_starts_with_a_capital_either_way():
    slow, fast = T(20.0), T(10.0)
    assert bench_fused.versus(slow, fast, "the fused epoch", "notebook 05's").startswith("Notebook 05's")
    assert bench_fused.versus(fast, slow, "the fused epoch", "notebook 05's").startswith("The fused epoch")


# --- notebook 06, section 6: the training loop's epochs against back-to-back ones ----------------------------

def test_loop_epochs_is_a_sentence_that_orders_nothing():
    """Loop epochs of two trainers: their figures, each against its own back-to-back epoch; no verdict (in
    runs of notebook 06 on one H100 the fused loop epochs were at full speed in one run and 2.8× slower in
    the next, so any order of the two in the loop flipped)."""
    fused = timing.Timing(tuple(ms * 1e-3 for ms in (13.2, 13.5, 13.8, 14.0, 48.6)))
    text = fused_mlp.loop_epochs({"the fused trainer": fused, "notebook 05's trainer": T(22.5)},
                                 {"the fused trainer": T(13.4), "notebook 05's trainer": T(23.1)})
    assert not isinstance(text, timing.Verdict)
    assert text.startswith("The fused trainer's loop epochs took 13.8 ms at the median (fastest 13.2 ms, slowest "
                           "48.6 ms; the median 1.03× its back-to-back median)")
    assert "notebook 05's trainer's loop epochs took 22.5 ms at the median" in text and "0.97×" in text
    assert "faster" not in text and "slower" not in text and "only back-to-back epochs compare" in text


def test_loop_epochs_names_a_figure_once_where_the_epochs_agree():
    one = fused_mlp.loop_epochs({"the fused trainer": timing.Timing((0.770,))}, {"the fused trainer": T(1040.0)})
    assert one.startswith("The fused trainer's one loop epoch took 770 ms (0.74× its back-to-back median):")
    level = fused_mlp.loop_epochs({"x": timing.Timing((0.2171, 0.2172))}, {"x": T(217.0)})
    assert "X's loop epochs took 217 ms each (1.00× its back-to-back median)" in level and level.count("217 ms") == 1


@pytest.mark.parametrize("loop, back, outcome, words", [(59.6, 29.2, "slower in the loop", "2.04× as long as back-to-back"),
                                                        (34.0, 29.2, "slower in the loop", "1.16× as long as back-to-back"),
                                                        (33.0, 29.2, timing.SAME, "about as long as back-to-back"),
                                                        (29.2, 29.2, timing.SAME, "about as long as back-to-back")])
def test_loop_slowdown_either_side_of_15_percent(loop, back, outcome, words):
    v = fused_mlp.loop_slowdown(T(loop), T(back))
    assert words in v and v.outcome == outcome
    assert ("notebook 05" in v) == (outcome != timing.SAME)   # the pointer to the clock lesson only for a gap


def test_loop_slowdown_noisy_loop_with_a_median_inside_the_margin_is_not_called_slower():
    """The loop's median 1.13× back to back (inside 15 %), its band wide: no gap claimed."""
    assert fused_mlp.loop_slowdown(T(33.0, 0.4), T(29.2, 0.01)).outcome == timing.SAME


def test_loop_slowdown_same_says_noise_only_where_the_bands_overlap():
    level = fused_mlp.loop_slowdown(T(29.4), T(29.2))
    apart = fused_mlp.loop_slowdown(T(31.5, 0.001), T(29.2, 0.001))   # 1.08×, bands apart, inside 15 %
    assert level.outcome == apart.outcome == timing.SAME
    assert "1.01× at the median; the two are the same within the noise we measured:" in level
    assert "within the noise" not in apart and "the two are typically within the 15 % we call the same (" in apart


def test_loop_slowdown_two_modes_are_slower_with_the_fast_epochs_named():
    """Ten loop epochs, two at the back-to-back pace and eight slowed (a run of notebook 06 on an H100): the
    band reaches the back-to-back band, yet a typical loop epoch takes 2.9× as long."""
    loop = timing.Timing(tuple(ms * 1e-3 for ms in (13.6, 14.0, 38.0, 39.0, 39.3, 39.7, 40.0, 40.4, 40.9, 41.6)))
    v = fused_mlp.loop_slowdown(loop, T(13.5, 0.02))
    assert v.outcome == "slower in the loop" and "At the median" in v and "about as fast as back-to-back ones" in v
    assert v.endswith(". Its fastest epoch, 13.6 ms, was about as fast as back-to-back ones, at 1.01× their median "
                      "(within the 15 % we call the same)")
    assert "fastest epoch" not in fused_mlp.loop_slowdown(T(59.6), T(29.2))


@pytest.mark.parametrize("fastest, words", [
    (24.1, ". Its fastest epoch, 24.1 ms, took less than four in five back-to-back epochs, at 0.87× their median"),          # 06's run
    (27.5, ". Its fastest epoch, 27.5 ms, was about as fast as back-to-back ones, at 0.996× their median"),  # in the band
    (31.6, ". Its fastest epoch, 31.6 ms, was about as fast as back-to-back ones, at 1.14× their median"),  # < 1.15 × 27.74
    (32.2, None)])                                                                               # beyond the 15 %
def test_loop_slowdown_fastest_epoch_either_side_of_back_to_back(fastest, words):
    """Back to back 27.6 ms (27.46–27.74): the loop's fastest epoch below its band is no slower than back to
    back (never 'about as fast' for an epoch 13 % faster), inside it or within 15 % above it about as fast,
    beyond that not named; the loop's median 52.5 ms is slower either way."""
    loop = timing.Timing(tuple(ms * 1e-3 for ms in (fastest, 50.2, 51.0, 52.5, 53.0, 62.8)))
    v = fused_mlp.loop_slowdown(loop, T(27.6))
    assert v.outcome == "slower in the loop"
    if words is None:
        assert "fastest epoch" not in v
    else:
        assert words.replace("0.996×", f"{fastest / 27.6:.2f}×") in v
        assert ("took less than four in five back-to-back epochs" in v) == (fastest * 1e-3 < T(27.6).low)
        # the pause explains the median, and comes before the fastest epoch's sentence
        assert v.index("the loop drew") < v.index("notebook 05 measures") < v.index("Its fastest epoch")


def test_loop_slowdown_names_what_the_loop_drew():
    drew = fused_mlp.loop_slowdown(T(56.0), T(29.2), drawing=6e-3)
    assert "progress bar and a live plot" in drew and "6.0 ms an epoch" in drew
    assert "drew nothing" in fused_mlp.loop_slowdown(T(30.0), T(29.2))


# --- notebook 06, section 8 and What we measured: the fused epoch against PyTorch -------------------------

def row(name, ms, spread=0.01):
    return {"name": name, "ms": ms, "ms_low": ms * (1 - spread), "ms_high": ms * (1 + spread)}


def test_against_pytorch_faster_slower_and_same():
    rows = [row("fused 784-128-10 SGD", 12.6), row("PyTorch eager 784-128-10 SGD", 630.0),
            row("PyTorch CUDA graph per step 784-128-10 SGD", 36.7)]
    v = fused_mlp.against_pytorch(rows, "NVIDIA H100")
    assert "12.6 ms" in v and "36.7 ms" in v and "2.9× faster" in v and "CUDA graph per step" in v
    assert "NVIDIA H100" in v and v.outcome == timing.A_FASTER
    assert v.startswith("On the NVIDIA H100, in the committed benchmark, the fused epoch (12.6 ms")
    assert "here" not in v and v.count("committed benchmark") == 1
    rows[2] = row("PyTorch CUDA graph per step 784-128-10 SGD", 10.0)
    slower = fused_mlp.against_pytorch(rows, "card")
    assert slower.outcome == timing.B_FASTER and "1.3× faster than the fused epoch" in slower
    rows[2] = row("PyTorch CUDA graph per step 784-128-10 SGD", 12.8)
    assert fused_mlp.against_pytorch(rows, "card").outcome == timing.SAME


def test_against_pytorch_reads_rows_without_a_band():
    rows = [{"name": "fused 784-128-10 SGD", "ms": 12.6}, {"name": "PyTorch eager 784-128-10 SGD", "ms": 630.0}]
    assert fused_mlp.against_pytorch(rows, "card").outcome == timing.A_FASTER


def test_pytorch_eager_row_is_the_fused_sections_row():
    rows = [{"name": "fused 784-128-10 SGD", "ms": 12.6}, {"name": "PyTorch eager 784-128-10 SGD", "ms": 630.0}]
    assert fused_mlp.bench_row(rows, bench_train.EAGER_ROW)["ms"] == 630.0
    with pytest.raises(KeyError, match="no row"):
        fused_mlp.bench_row(rows, "nothing like it")


@pytest.mark.parametrize("whole, step, outcome, why", [(37.0, 36.7, timing.SAME, "never waits for it"),
                                                       (30.0, 36.7, timing.A_FASTER, "waited for Python"),
                                                       (40.0, 36.7, timing.B_FASTER, "does not say why")])
def test_graphs_compared_gives_the_reason_of_its_outcome(whole, step, outcome, why):
    rows = [row("PyTorch CUDA graph whole epoch 784-128-10 SGD", whole), row("PyTorch CUDA graph per step 784-128-10 SGD", step)]
    v = bench_fused.graphs_compared(rows)
    assert v.outcome == outcome and why in v


def test_graphs_compared_without_both_rows():
    assert bench_fused.graphs_compared([row("PyTorch CUDA graph per step 784-128-10 SGD", 36.7)]).outcome == "not measured"


def test_fastest_glsl_reads_the_rows_and_skips_floors_and_switched_off_work():
    rows = [row("fused 784-128-10 SGD", 12.6), row("fused blocked 784-128-10 SGD", 11.9),
            row(bench_fused.LOOKAHEAD_FLOOR, 6.5), row("floor: 469×2 empty dispatches + barriers", 2.5),
            row("JAX jit(lax.scan) 784-128-10 SGD, fp32, precision highest", 5.0)]
    assert bench_fused.fastest_glsl(rows, 128)["name"] == "fused blocked 784-128-10 SGD"
    assert bench_fused.fastest_glsl(rows, 800) is None


# --- FusedMLP's default layout: its fastest configuration for the net's shape -------------------------------

@pytest.mark.parametrize("hidden, expected", [(128, dict(blocked=True, tiled_hidden=False)),
                                              (256, dict(blocked=True, tiled_hidden=False)),
                                              (257, dict(blocked=True, tiled_hidden=True)),
                                              (800, dict(blocked=True, tiled_hidden=True))])
def test_default_layout_by_hidden_width(hidden, expected):
    assert fused_mlp.default_layout(hidden) == expected


@pytest.mark.parametrize("options", [dict(dropout=True), dict(split_hidden=True)])
def test_default_layout_without_a_blocked_version(options):
    assert fused_mlp.default_layout(800, **options) == dict(blocked=False, tiled_hidden=False)


# --- notebook 07: the final runs against the goal --------------------------------------------------------

@pytest.mark.parametrize("lowest, highest, outcome", [(98.95, 98.97, bench_dropout.REACHED),
                                                      (98.80, 98.85, bench_dropout.REACHED),
                                                      (98.79, 98.85, bench_dropout.ON_THE_LINE),
                                                      (98.70, 98.79, bench_dropout.MISSED)])
def test_goal_sentence_either_side_of_the_goal(lowest, highest, outcome):
    mean = (lowest + highest) / 2
    v = bench_dropout.goal_sentence(mean, 0.02, lowest, goal=98.8, highest=highest)
    assert v.outcome == outcome and f"{mean:.2f} ± 0.02 %" in v and f"lowest seed {lowest:.2f} %" in v


@pytest.mark.parametrize("longest, budget, words", [(57.9, 60.0, "within"), (60.0, 60.0, "within"),
                                                    (60.1, 60.0, "over")])
def test_budget_sentence_either_side_of_the_budget(longest, budget, words):
    v = bench_dropout.budget_sentence(longest, budget)
    assert words in v and v.outcome == words


@pytest.mark.parametrize("regularised, plain, outcome, words", [
    (67.3, 52.5, bench_dropout.COSTS_MORE, ["+28 %", "30.5 µs more"]),
    (49.0, 52.5, bench_dropout.COSTS_LESS, ["-7 %", "30.5 µs more"]),
    (53.0, 52.5, timing.SAME, ["+1 %, the same within the noise we measured)"]),         # bands overlap
    (54.0, 52.5, timing.SAME, ["+3 %, 1.03× apart, within the 5 % we call the same)"])])  # bands apart, inside 5 %
def test_cost_sentence_on_all_sides(regularised, plain, outcome, words):
    v = bench_dropout.cost_sentence(T(regularised), T(plain), 30.5e-6, 6.9e-6)
    assert v.outcome == outcome and all(w in v for w in words) and "6.9 µs" in v


def test_cost_sentence_says_less_for_a_negative_dropout_cost():
    assert "1.5 µs less" in bench_dropout.cost_sentence(T(60.0), T(52.5), -1.5e-6, 6.9e-6)


def test_split_noise_of_ten_thousand_images():
    assert bench_dropout.split_noise(0.988, 10_000) == pytest.approx(0.1089, abs=1e-3)


def test_sweep_verdict_within_noise_and_clear_best():
    close = bench_dropout.sweep_verdict({"A": 0.9879, "B": 0.9872, "C": 0.9850}, 10_000)
    assert close.outcome == bench_dropout.WITHIN_NOISE and "; B lies within the noise of 0.22 points" in close
    assert "C" not in close.split(";")[1] and close.count("noise") == 2      # the noise, and its source
    three = bench_dropout.sweep_verdict({"A": 0.9879, "B": 0.9872, "C": 0.9870, "D": 0.9869}, 10_000)
    assert "; B, C and D lie within the noise of 0.22 points" in three and "the same within" not in three
    clear = bench_dropout.sweep_verdict({"A": 0.9879, "B": 0.9850}, 10_000)
    assert clear.outcome == bench_dropout.CLEAR_BEST and "A's 98.79 %" in clear
    wide = bench_dropout.sweep_verdict({"A": 0.9879, "B": 0.9850}, 10_000, seed_range=0.4)   # seeds spread more
    assert wide.outcome == bench_dropout.WITHIN_NOISE and "0.40 points (the spread across seeds)" in wide
    assert "twice the sampling noise of 10,000 validation images" in clear


def test_shown_path_is_relative_to_the_repository():
    assert bench_dropout.shown(bench_dropout.RESULTS / "dropout-final.json") == "notebooks/results/dropout-final.json"
    assert bench_dropout.shown(Path("/tmp/dropout-final-quick.json")) == "dropout-final-quick.json in the temporary folder"


@pytest.mark.parametrize("blocked, plain, outcome", [(25.1, 26.2, timing.SAME),      # 4 %: inside the 15 % margin
                                                     (24.7, 26.0, timing.SAME),      # 5 %: a 5 % margin flipped here
                                                     (16.0, 14.5, timing.SAME),      # 10 %: a 10 % margin flipped here
                                                     (16.8, 14.5, timing.B_FASTER),  # 16 %: beyond it
                                                     (22.0, 26.0, timing.A_FASTER)])  # 18 %: beyond it
def test_layouts_are_called_different_only_beyond_the_layout_margin(blocked, plain, outcome):
    v = timing.versus(T(blocked), T(plain), "the blocked epoch", "the plain one", margin=fused_mlp.LAYOUT_MARGIN)
    assert v.outcome == outcome


# --- audit: each threshold just inside and just outside, each wording branch --------------------------------

@pytest.mark.parametrize("lowest, highest, outcome, words", [
    (98.80, 98.85, bench_dropout.REACHED, "every seed reached the 98.8 % goal"),
    (98.79, 98.85, bench_dropout.ON_THE_LINE, "lies within the spread across seeds"),
    (98.70, 98.80, bench_dropout.ON_THE_LINE, "lies within the spread across seeds"),
    (98.70, 98.79, bench_dropout.MISSED, "every seed missed the 98.8 % goal")])
def test_goal_sentence_words_match_the_outcome(lowest, highest, outcome, words):
    v = bench_dropout.goal_sentence((lowest + highest) / 2, 0.02, lowest, goal=98.8, highest=highest)
    assert v.outcome == outcome and words in v and f"highest {highest:.2f} %" in v


# twice the sampling noise of 10,000 images at 98.79 %: 0.2187 points
@pytest.mark.parametrize("other, outcome", [(0.9858, bench_dropout.WITHIN_NOISE),   # 0.21 points below the best
                                            (0.9856, bench_dropout.CLEAR_BEST)])    # 0.23 points below
def test_sweep_verdict_either_side_of_the_noise(other, outcome):
    v = bench_dropout.sweep_verdict({"A": 0.9879, "B": other}, 10_000)
    assert v.outcome == outcome and "0.22 points" in v
    assert ("B lies within the noise of 0.22 points" in v) == (outcome == bench_dropout.WITHIN_NOISE)
    assert ("better than every other recipe" in v) == (outcome == bench_dropout.CLEAR_BEST)


@pytest.mark.parametrize("seed_range, source", [(0.21, "twice the sampling noise"),    # below 0.2187: the split's
                                                (0.23, "the spread across seeds")])    # above: the seeds'
def test_sweep_verdict_noise_source_either_side(seed_range, source):
    v = bench_dropout.sweep_verdict({"A": 0.9879, "B": 0.9850}, 10_000, seed_range=seed_range)
    assert source in v and v.outcome == bench_dropout.CLEAR_BEST


@pytest.mark.parametrize("jax_ms, outcome, words", [
    (17.3, timing.A_FASTER, "that trainer's epoch (10.5 ms (10.4–10.6)) is 1.6× faster than JAX's epoch in fp32 "
                            "(17.3 ms (17.1–17.5))"),
    (8.0, timing.B_FASTER, "JAX's epoch in fp32 (8.00 ms (7.92–8.08)) is 1.3× faster than that trainer's epoch"),
    (10.6, timing.SAME, "that trainer's epoch (10.5 ms (10.4–10.6)) and JAX's epoch in fp32 (10.6 ms (10.5–10.7)) "
                        "are the same within the noise")])
def test_fastest_versus_names_the_trainer_in_its_own_clause(jax_ms, outcome, words):
    v = bench_fused.fastest_versus(row("fused blocked 784-128-10 SGD", 10.5), row("JAX fp32", jax_ms),
                                   "JAX's epoch in fp32")
    assert v.outcome == outcome and words in v
    assert v.startswith("The GLSL trainer with the benchmark's lowest median epoch at this size is fused blocked 784-128-10 SGD: ")


# --- notebook 07: the sweep's budget and the chosen recipe, for a reader ---------------------------------------

@pytest.mark.parametrize("seconds, words", [(40.0, "shorter than the default 50 s"), (50.0, "the default, which"),
                                            (55.0, "longer than the default 50 s")])
def test_sweep_budget_sentence_either_side_of_the_default(seconds, words):
    text = bench_dropout.sweep_budget_sentence(4, 6, seconds, [668, 653, 660], ["H1024-e1", "H2048-e1-c2.5"],
                                               default=50.0)
    assert words in text and f"with a budget of {seconds:g} s of training each (653 to 668 epochs)" in text
    assert text.startswith("The sweep ran 4 of the grid's 6 recipes") and text.endswith(
        "; not run: H1024-e1 and H2048-e1-c2.5.")


def test_sweep_budget_sentence_one_epoch_count_and_nothing_left_out():
    text = bench_dropout.sweep_budget_sentence(6, 6, 50.0, [700, 700], [], default=50.0)
    assert "(700 epochs)" in text and "not run" not in text and text.endswith("as many epochs as a final run.")


def test_validate_default_gives_the_final_runs_epochs():
    assert bench_dropout.VALIDATE_SECONDS == bench_dropout.BUDGET * 5 / 6


def test_recipe_text_has_no_repr():
    text = bench_dropout.recipe_text("H2048-e0.5", bench_dropout.RECIPES["H2048-e0.5"])
    assert "{" not in text and "'" not in text and text.endswith(".")
    assert "2,048 hidden units" in text and "step size 0.5" in text and "max-norm 3.5" in text


def test_goal_sentence_puts_the_unit_after_the_spread():
    v = bench_dropout.goal_sentence(98.93, 0.04, 98.9, goal=98.8, highest=98.97)
    assert "98.93 ± 0.04 % (lowest seed 98.90 %" in v


@pytest.mark.parametrize("regularised, plain, words", [
    (67.3, 52.5, "; over an epoch's 469 steps those figures come to 17.5 ms against the epochs' difference of "
                 "14.8 ms (the kernels were timed in streams of their own copies, not inside these epochs)"),
    (69.9, 52.4, "; over an epoch's 469 steps those figures come to 17.5 ms against the epochs' difference of "
                 "17.5 ms"),                                  # equal as printed: nothing to explain
    (72.5, 52.5, "; over an epoch's 469 steps those figures come to 17.5 ms against the epochs' difference of "
                 "20.0 ms")])
def test_cost_sentence_sets_the_steps_beside_the_epochs_difference(regularised, plain, words):
    v = bench_dropout.cost_sentence(T(regularised), T(plain), 30.4e-6, 6.9e-6, steps=469)   # 469 × 37.3 µs
    assert v.outcome == bench_dropout.COSTS_MORE and words in v
    assert ("copies" in v) == (regularised < 69)             # only where the printed sum is the larger


@pytest.mark.parametrize("regularised", [53.0, 49.0])         # the same, and cheaper: no epoch clause
def test_cost_sentence_sets_no_epoch_figure_unless_the_epoch_costs_more(regularised):
    v = bench_dropout.cost_sentence(T(regularised), T(52.5), -1.5e-6, 6.9e-6, steps=469)
    assert v.outcome != bench_dropout.COSTS_MORE and "over an epoch" not in v


def test_cost_sentence_percentage_is_the_printed_epochs_rounded_half_up():
    """Epochs printed as 10.2 and 9.95 ms differ by 2.51 %, so +3 %; the unrounded medians (10.18 and 9.95 ms)
    would give +2 %."""
    regularised, plain = T(10.18), T(9.95)
    assert regularised.text("ms").startswith("10.2 ms") and plain.text("ms").startswith("9.95 ms")
    assert "(+3 %" in bench_dropout.cost_sentence(regularised, plain, 0.5e-6, 0.1e-6)


def test_loop_slowdown_ratio_is_the_printed_medians():
    """A loop median of 30.05 ms prints as 30.1 beside 20.0 ms: 30.1 / 20 = 1.505, so 1.51× (half up), where the
    unrounded medians give 1.50×: the sentence divides what it prints."""
    loop, back = T(30.05), T(20.0)
    assert loop.text().startswith("30.1 ms") and back.text().startswith("20.0 ms")
    assert "took 1.51× as long as back-to-back" in fused_mlp.loop_slowdown(loop, back, None)


def test_cost_sentence_percentage_of_an_exact_half_rounds_up():
    """20.5 against 20 ms is exactly +2.5 %: +3 %, as the 1.03× beside it says."""
    said = bench_dropout.cost_sentence(T(20.5, 0.001), T(20.0, 0.001), 0.5e-6, 0.1e-6)
    assert "(+3 %" in said


def test_kernel_share_account_share_is_the_one_of_its_printed_figures():
    """7.7854 ms of kernels print as 7.79 ms, a 10.15 ms epoch as 10.2 ms: 76.4 %, 76 % (the unrounded figures
    gave 76.7 %, 77 %); the band's ends are of the band's printed ends (10.1 and 10.2 ms)."""
    epoch = T(10.15)
    assert epoch.text() == "10.2 ms (10.1–10.2)"
    words, (share, low, high) = bench_fused.kernel_share_account("fused", _Trainer(), _prof(), epoch)
    assert "7.79 ms of a 10.2 ms (10.1–10.2) epoch" in words
    assert words.startswith("fused: kernels 76 % (76–77 %) of the epoch")          # 7.79/10.2, 7.79/10.1
    assert (share, low, high) == (0.76, 0.76, 0.77)


def test_against_pytorch_does_not_call_one_of_two_equal_graphs_the_fastest():
    """Per step 36.8 ms and whole epoch 37.3 ms are 1.01× apart, within 5 %: neither is 'PyTorch's fastest way',
    and the tie is left to the graphs' own sentence, printed next (it was said twice in a row)."""
    rows = [row("fused 784-128-10 SGD", 11.9), row("PyTorch eager 784-128-10 SGD", 610.0, 0.05),
            row("PyTorch CUDA graph per step 784-128-10 SGD", 36.8, 0.001),
            row("PyTorch CUDA graph whole epoch 784-128-10 SGD", 37.3, 0.001)]
    v = fused_mlp.against_pytorch(rows, "card")
    assert "fastest way," not in v and "3.1× faster than PyTorch's CUDA graph per step (36.80 ms" in v
    assert "whole epoch" not in v and "level" not in v       # graphs_compared, printed next, judges the two graphs
    assert "37.3" not in v and "fastest" not in v and v.outcome == timing.A_FASTER


@pytest.mark.parametrize("figure, word", [("11 ms (11–11.3)", "an"), ("8.44 ms", "an"), ("18 µs", "an"),
                                          ("80.2 ms", "an"), ("11,500", "an"), ("812 µs", "an"), ("1.8 ms", "a"),
                                          ("10 ms", "a"), ("110 ms", "a"), ("25.8 ms (25.2–26.2)", "a")])
def test_article_before_a_printed_figure(figure, word):
    assert bench_fused.article(figure) == word


def test_kernel_share_account_says_an_11_ms_epoch():
    words, _ = bench_fused.kernel_share_account("fused", _Trainer(), _prof(), T(11.0))
    assert f"of an {T(11.0).text()} epoch" in words and "of a 11" not in words


def test_cost_sentence_difference_is_the_exact_one_of_the_printed_epochs():
    """Run T1 printed 69.5 and 55 ms and 'the epochs' difference of 14 ms' (rounded to the coarser figure, half
    to even); the printed figures differ by 14.5."""
    v = bench_dropout.cost_sentence(T(69.5), T(55.0), 28.0e-6, 7.0e-6, steps=469)
    assert "69.5 ms" in v and "55.0 ms" in v and "the epochs' difference of 14.5 ms" in v


def test_kernel_share_account_adds_the_kernels_as_the_table_prints_them():
    """With the kernels' Timings (as profile_step gives them), the kernels a step are their printed medians
    added up (profile.added_up), the figure of the step's table: 10.2 + 10.8 = 21.0 µs, where the unrounded
    medians 10.24 + 10.84 would print 21.1."""
    prof = _prof((10.24, 10.84), 2.73)
    prof["kernel_timing"] = {k: timing.Timing((m - 0.1e-6, m, m + 0.1e-6)) for k, m in prof["kernel"].items()}
    assert [t.text().split(" (")[0] for t in prof["kernel_timing"].values()] == ["10.2 µs", "10.8 µs"]
    words, _ = bench_fused.kernel_share_account("fused", _Trainer(), prof, T(10.71))
    assert "kernels 21.0 µs a step, less 2 × 2.73 µs of empty dispatch, × 469 steps: 7.29 ms" in words, words
    assert abs(bench_fused.kernel_phase(_Trainer(), prof) - (21.0 - 2 * 2.73) * 1e-6 * 469) < 1e-12

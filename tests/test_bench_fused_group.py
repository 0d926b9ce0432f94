"""helpers/bench/fused.py's measure_group: contenders of one width taken in turn, and one that fails (a grid
barrier that gave up) set aside with its error instead of losing the others' rows (no GPU: made-up samples)."""

import itertools

from helpers.bench import fused as bench_fused


def test_group_takes_contenders_in_turn_and_sets_failures_aside():
    calls = []
    counter = itertools.count()

    def steady(name, seconds):
        def sample():
            calls.append(name)
            return seconds
        return sample

    def fails_at_once():
        raise RuntimeError("a grid barrier gave up in steps [0, 50) of epoch 0: not resident")

    def fails_later():
        calls.append("later")
        if next(counter) >= 3:
            raise RuntimeError("a grid barrier gave up later")
        return 0.5

    measured, errors = bench_fused.measure_group(
        {"A": steady("A", 0.010), "B": steady("B", 0.020), "broken": fails_at_once, "later": fails_later},
        repeat=4, warmup=0.0)
    assert set(measured) == {"A", "B"} and set(errors) == {"broken", "later"}
    assert errors["broken"].startswith("a grid barrier gave up")
    assert measured["A"].median == 0.010 and len(measured["B"].samples) == 4
    timed = [c for c in calls if c in ("A", "B")][2:]       # after the trial epoch of each
    assert timed[:6] == ["A", "B", "A", "B", "A", "B"]       # A B A B: interleaved


def test_rows_keep_the_median_and_store_the_band():
    from helpers import timing
    row = bench_fused._row("fused 784-128-10 SGD", timing.Timing((0.010, 0.011, 0.012, 0.013, 0.014)), steps=469)
    assert row["ms"] == 12.0 and row["ms_low"] < 12.0 < row["ms_high"] and row["repeats"] == 5
    assert row["min_ms"] == 10.0 and row["epochs"] == 5 and row["steps"] == 469
    assert bench_fused.row_timing(row).median == 0.012

"""The takeaways page: ranked by the measured factor, every number from the JSON, robust to missing rows."""

import json
from pathlib import Path

from helpers import takeaways

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "notebooks" / "results" / "bench-h100.json"


def test_committed_run_gives_ranked_rules():
    rules = takeaways.rules(json.loads(COMMITTED.read_text()))
    assert len(rules) >= 6
    factors = [r.factor for r in rules]
    assert factors == sorted(factors, reverse=True)
    assert all(r.factor > 0 and (ROOT / "notebooks" / r.notebook).exists() for r in rules)


def test_rules_skip_what_a_run_lacks():
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {"train": [], "fused": [], "inference": []}}
    assert takeaways.rules(bench) == []
    assert "| rank |" in takeaways.page(bench, "x.json")


def test_duration_units_on_both_sides():
    assert takeaways.duration(1.5) == "1.5 s"
    assert takeaways.duration(0.999) == "999 ms"
    assert takeaways.duration(0.001) == "1 ms"
    assert takeaways.duration(0.000999) == "999 µs"


def test_committed_page_is_current():
    bench = json.loads(COMMITTED.read_text())
    assert takeaways.PAGE.read_text() == takeaways.page(bench, "notebooks/results/bench-h100.json"), \
        "run: python -m helpers.takeaways notebooks/results/bench-h100.json"


def test_company_note_gives_both_figures_of_the_six_dispatch_epoch_or_nothing():
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {
        "train": [{"name": "GLSL (ModernGL)", "ms": 21.7, "ms_low": 21.6, "ms_high": 21.8}],
        "fused": [{"name": "unfused 784-128-10 SGD (notebook 05)", "ms": 23.4, "ms_low": 23.0, "ms_high": 23.9}]}}
    note = takeaways.company_note(bench)
    assert "21.7 ms (21.6–21.8)" in note and "23.4 ms (23–23.9)" in note
    assert note in takeaways.page(bench, "x.json")
    bench["benches"]["fused"] = []
    assert takeaways.company_note(bench) == "" and "epoch has two rows" not in takeaways.page(bench, "x.json")


def test_keep_it_on_the_gpu_compares_the_two_epochs_timed_in_turn():
    """NumPy's epoch is timed in turn with the six-dispatch GLSL epoch (the training benchmark), not with the
    fused trainer's (the fused benchmark): the first rule sets those two side by side."""
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {
        "train": [{"name": "GLSL (ModernGL)", "epoch_s": 0.024}, {"name": "NumPy (CPU)", "epoch_s": 0.307}],
        "fused": [{"name": "fused 784-128-10 SGD", "ms": 10.96, "dispatches_per_step": 2}]}}
    first = next(r for r in takeaways.rules(bench) if r.rule.startswith("Keep the data"))
    assert (first.slow_s, first.fast_s) == (0.307, 0.024) and "6 dispatches a step" in first.fast


def test_factor_is_the_quotient_of_the_printed_durations():
    """2.3796 ms against 1.0148 ms print as 2.38 and 1.01 ms: 2.356, 2.4× (the unrounded seconds give 2.345,
    which printed 2.3×)."""
    rule = takeaways.Rule("r", "slow", "fast", 2.3796e-3, 1.0148e-3, "03_batched_inference.ipynb")
    assert rule.factor_text == "2.4"
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {"inference": [
        {"what": "upload float32 into existing buffer", "seconds": 2.3796e-3},
        {"what": "upload uint8-packed into existing buffer", "seconds": 1.0148e-3}]}}
    assert "2.38 ms; uploading them as uint8, four pixels a word: 1.01 ms (**2.4×**)" in takeaways.page(bench, "x.json")


def test_committed_page_factors_are_the_quotients_of_its_printed_durations():
    import re
    from decimal import Decimal
    from helpers import timing
    page = takeaways.page(json.loads(COMMITTED.read_text()), "notebooks/results/bench-h100.json")
    rows = re.findall(r": ([\d.]+) (s|ms|µs); .*: ([\d.]+) (s|ms|µs) \(\*\*([\d.]+)×\*\*\)", page)
    assert len(rows) >= 6
    factors = [Decimal(f) for *_, f in rows]
    for slow, su, fast, fu, factor in rows:
        assert factor == timing.times(timing.seconds_exactly(slow, su) / timing.seconds_exactly(fast, fu), 1)
    assert factors == sorted(factors, reverse=True)                  # ranked by the factors as printed


def test_compiler_rule_sets_jax_against_the_glsl_trainer_of_lowest_median():
    """The rule against JAX uses the trainer README and notebook 08 set against it (the lowest median of the
    GLSL trainers), not the plain fused layout, so the three give one factor."""
    rows = [{"name": "fused 784-128-10 SGD", "ms": 11.9, "dispatches_per_step": 2},
            {"name": "fused blocked 784-128-10 SGD", "ms": 10.6, "dispatches_per_step": 2},
            {"name": "JAX jit(lax.scan) 784-128-10 SGD, fp32, precision highest", "ms": 17.5}]
    rule = next(r for r in takeaways.rules({"benches": {"fused": rows}}) if r.rule.startswith("Measure against"))
    assert rule.fast == "the GLSL epoch of lowest median (fused blocked 784-128-10 SGD)" and rule.factor_text == "1.7"
    rows[0]["ms"] = 10.0                                     # the plain layout now has the lowest median
    rule = next(r for r in takeaways.rules({"benches": {"fused": rows}}) if r.rule.startswith("Measure against"))
    assert rule.fast.endswith("(fused 784-128-10 SGD)") and rule.factor_text == "1.8"

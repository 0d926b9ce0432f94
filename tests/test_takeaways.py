"""The takeaways page: ranked by the measured factor, every number from the JSON, robust to missing rows."""

import json
import re
from pathlib import Path

import pytest

from helpers import takeaways
from helpers.bench.fused import RESULTS_FILE

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = RESULTS_FILE
COMMITTED_ARG = str(RESULTS_FILE.relative_to(ROOT))   # notebooks/results/bench-<card>.json


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
    assert takeaways.duration(1.5) == "1.50 s"
    assert takeaways.duration(0.999) == "999 ms"
    assert takeaways.duration(0.001) == "1.00 ms"
    assert takeaways.duration(0.000999) == "999 µs"


def test_committed_page_is_current():
    bench = json.loads(COMMITTED.read_text())
    assert takeaways.PAGE.read_text() == takeaways.page(bench, COMMITTED_ARG), \
        f"run: python -m helpers.takeaways {COMMITTED_ARG}"


def test_company_note_gives_both_figures_of_the_six_dispatch_epoch_or_nothing():
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {
        "train": [{"name": "GLSL (ModernGL)", "ms": 21.7, "ms_low": 21.6, "ms_high": 21.8}],
        "fused": [{"name": "unfused 784-128-10 SGD (notebook 05)", "ms": 23.4, "ms_low": 23.0, "ms_high": 23.9}]}}
    note = takeaways.company_note(bench)
    assert "21.7 ms (21.6–21.8)" in note and "23.4 ms (23.0–23.9)" in note
    assert note in takeaways.page(bench, "x.json")
    bench["benches"]["fused"] = []
    assert takeaways.company_note(bench) == "" and "epoch has two rows" not in takeaways.page(bench, "x.json")


def test_keep_it_on_the_gpu_compares_the_two_epochs_timed_in_turn():
    """NumPy's epoch is timed in turn with the six-dispatch GLSL epoch (the training benchmark), not with the
    fused trainer's (the fused benchmark): the first rule sets those two side by side."""
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {
        "train": [{"name": "GLSL (ModernGL)", "ms": 24.0}, {"name": "NumPy (CPU)", "ms": 307.0}],
        "fused": [{"name": "fused 784-128-10 SGD", "ms": 10.96, "dispatches_per_step": 2}]}}
    first = next(r for r in takeaways.rules(bench) if r.rule.startswith("Keep the data"))
    assert (first.slow_s, first.fast_s) == (0.307, 0.024) and "6 dispatches a step" in first.fast


def test_factor_is_the_quotient_of_the_printed_durations():
    """2.3796 ms against 1.0148 ms would print as 2.38 and 1.01 ms, whose 2.356 is 2.4× where the unrounded
    seconds give 2.345, 2.3×: they print with four digits, 2.380 and 1.015 ms (2.345, 2.3×)."""
    rule = takeaways.Rule("r", "slow", "fast", 2.3796e-3, 1.0148e-3, "03_batched_inference.ipynb")
    assert rule.shown == ("2.380 ms", "1.015 ms") and rule.factor_text == "2.3"
    bench = {"device": {"renderer": "X", "date": "d"}, "benches": {"inference": [
        {"what": "upload float32 into existing buffer", "seconds": 2.3796e-3},
        {"what": "upload uint8-packed into existing buffer", "seconds": 1.0148e-3}]}}
    assert "2.380 ms; uploading them as uint8, four pixels a word: 1.015 ms (**2.3×**)" in takeaways.page(bench, "x.json")


def test_durations_get_the_digits_their_factor_needs():
    """The fusion rule of the committed run: 22.512 against 10.964 ms is 2.053, 2.1×; at three digits they
    print as 22.5 and 11 ms, whose 2.045 is 2.0×, so the page prints 22.51 and 10.96 ms. A pair whose three
    digits give the factor of the unrounded times keeps them."""
    rule = takeaways.Rule("r", "slow", "fast", 22.512e-3, 10.964e-3, "06_fused_training.ipynb")
    assert rule.shown == ("22.51 ms", "10.96 ms") and rule.factor_text == "2.1"
    rule = takeaways.Rule("r", "slow", "fast", 0.38858, 20.108e-3, "05_backprop_sgd_glsl.ipynb")
    assert rule.shown == ("389 ms", "20.1 ms") and rule.factor_text == "19"
    assert takeaways.duration(11e-3, 4) == "11.00 ms" and takeaways.duration(2.5, 4) == "2.500 s"


@pytest.mark.parametrize("slow, fast", [(22.512e-3, 10.964e-3), (0.38858, 20.108e-3), (30.2128e-3, 3.0661e-3),
                                        (2.3796e-3, 1.0148e-3), (1.29449, 0.99551), (5.25e-3, 2.1e-3),
                                        (0.1234e-3, 0.05e-3), (1.5, 0.011), (7.77e-6, 3.1e-6)])
def test_factor_printed_is_the_quotient_of_the_figures_printed_and_of_the_times(slow, fast):
    """On made-up times: the factor in bold is the quotient of the two figures beside it, as a reader divides
    them, and prints as the quotient of the unrounded times does."""
    from decimal import Decimal
    from helpers import report, timing
    rule = takeaways.Rule("r", "slow", "fast", slow, fast, "03_batched_inference.ipynb")
    line = takeaways.page({"device": {"renderer": "X", "date": "d"}, "benches": {"inference": [
        {"what": "upload float32 into existing buffer", "seconds": slow},
        {"what": "upload uint8-packed into existing buffer", "seconds": fast}]}}, "x.json")
    a, au, b, bu, factor = re.search(r"as float32: ([\d.]+) (s|ms|µs); .*: ([\d.]+) (s|ms|µs) \(\*\*([\d.]+)×\*\*\)",
                                     line).groups()
    assert factor == rule.factor_text == report.ratio_text(timing.seconds_exactly(a, au) / timing.seconds_exactly(b, bu))
    assert factor == report.ratio_text(Decimal(repr(slow)) / Decimal(repr(fast)))


def test_readme_and_takeaways_print_the_same_factor_for_the_same_pair():
    """Made-up records with each pair the two pages share (the epoch against NumPy's, the matmul ladder's first
    rung against its top, the batch against NumPy's inference, the compiler rule against README's JAX row): the
    same figures and the same factor on both."""
    from helpers import report
    for numpy_s, glsl_s, naive_s, top_s, cpu_s, gpu_s, jax_ms, ours_ms in [
            (0.38858, 0.020108, 0.0302128, 0.0030661, 0.0059379, 0.0019038, 17.539, 10.512),
            (0.2875, 0.0115, 0.0217, 0.00205, 0.00705, 0.00235, 22.512, 10.964),
            (1.234, 0.0499, 0.0125, 0.00105, 0.0125, 0.0049, 18.0, 13.65)]:
        size = 4096
        bench = {"device": {"renderer": "X", "date": "d"}, "benches": {
            "train": [{"name": "GLSL (ModernGL)", "ms": glsl_s * 1e3, "epoch_s": glsl_s, "dispatches_per_step": 6},
                      {"name": "NumPy (CPU)", "ms": numpy_s * 1e3, "epoch_s": numpy_s}],
            "matmul": [{"impl": impl, "size": size, "seconds": s, "gflops": 2 * size ** 3 / s / 1e9, "clock": "c"}
                       for impl, s in (("matmul_1_naive", naive_s), ("matmul_9_interior", top_s))],
            "inference": [{"what": "NumPy forward + argmax on the CPU", "seconds": cpu_s, "clock": "c"},
                          {"what": "end to end, uint8: upload+kernels+readback+argmax", "seconds": gpu_s, "clock": "c"}],
            "fused": [{"name": "fused blocked 784-128-10 SGD", "ms": ours_ms, "dispatches_per_step": 2},
                      {"name": "JAX jit(lax.scan) 784-128-10 SGD, fp32, precision highest", "ms": jax_ms}]}}
        page = takeaways.page(bench, "x.json")
        rows = {r[0].split(" (")[0].split(":")[0]: r for r in report.headline_rows(bench)}
        readme = {"Keep the data": rows["one training epoch of 784-128-10"],
                  "Tile a matrix": rows["matmul 4096³"],
                  "Send the GPU": rows["10,000 test images through 784-128-10"],
                  "Measure against": rows["one training epoch of 784-128-10, same run"]}
        for start, (_, ours, theirs, said) in readme.items():
            line = next(l for l in page.splitlines() if f"| {start}" in l)
            slow, fast, factor = re.search(r": ([\d.]+ (?:s|ms|µs)); .*: ([\d.]+ (?:s|ms|µs)) \(\*\*([\d.]+)×\*\*\)",
                                           line).groups()
            assert said.startswith(f"{factor}× "), (start, said, line)
            shown = f"{ours} {theirs}"
            for figure in (slow, fast):
                value, unit = figure.split()
                if unit == "s":                                  # README prints ms where the page prints s
                    figure = f"{report.significant(float(value) * 1e3, len(value.replace('.', '')))} ms"
                assert figure in shown, (start, figure, ours, theirs)


def test_committed_page_factors_are_the_quotients_of_its_printed_durations():
    from decimal import Decimal
    from helpers import report, timing
    page = takeaways.page(json.loads(COMMITTED.read_text()), COMMITTED_ARG)
    rows = re.findall(r": ([\d.]+) (s|ms|µs); .*: ([\d.]+) (s|ms|µs) \(\*\*([\d.]+)×\*\*\)", page)
    assert len(rows) >= 6
    factors = [Decimal(f) for *_, f in rows]
    for slow, su, fast, fu, factor in rows:
        assert factor == report.ratio_text(timing.seconds_exactly(slow, su) / timing.seconds_exactly(fast, fu))
    for rule, (*_, factor) in zip(takeaways.rules(json.loads(COMMITTED.read_text())), rows):   # and of the JSON's times
        assert factor == report.ratio_text(Decimal(repr(rule.slow_s)) / Decimal(repr(rule.fast_s))), rule.rule
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


def _fusion_bench(unfused_ms, fused_ms):
    row = lambda name, ms: {"name": name, "ms": ms, "ms_low": 0.99 * ms, "ms_high": 1.01 * ms,   # noqa: E731
                            "dispatches_per_step": 6 if name.startswith("unfused") else 2}
    return {"device": {"renderer": "X", "date": "d"}, "benches": {
        "fused": [row("unfused 784-128-10 SGD (notebook 05)", unfused_ms), row("fused 784-128-10 SGD", fused_ms)]}}


@pytest.mark.parametrize("unfused_ms, fused_ms, ranked, words", [
    (20.0, 10.0, True, None),                                  # 2×: beyond the 25 %
    (12.6, 10.0, True, None),                                  # 1.26×: just beyond
    (12.5, 10.0, False, "1.25× apart, within the 25 % we call the same"),
    (10.05, 10.0, False, "the same within the noise we measured"),
    (10.0, 13.0, False, "the second took longer, 1.3×")])
def test_a_rule_is_ranked_only_where_the_run_bears_it_out(unfused_ms, fused_ms, ranked, words):
    bench = _fusion_bench(unfused_ms, fused_ms)
    rule = next(r for r in takeaways.rules(bench) if r.rule.startswith("Fuse"))
    page = takeaways.page(bench, "x.json")
    assert (rule.outcome == takeaways.timing.A_FASTER) == ranked
    assert ("| 1 | Fuse the step's kernels" in page) == ranked
    assert ("Not borne out by this run, so not ranked: *Fuse the step's kernels" in page) == (not ranked)
    if words:
        assert words in page and takeaways.not_borne_out(rule) in page

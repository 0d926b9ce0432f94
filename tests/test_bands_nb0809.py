"""Notebook 08's bands and pair-by-pair words: the uniform's three streams judged pair by pair, the limits table
and the two products printed with their bands (never collapsed, trailing zeros kept), cuBLAS's epoch marked
derived; each sentence function on both sides of its thresholds (made-up numbers, no GPU)."""

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from helpers import timing
from helpers.bench import limits, products
from helpers.bench.fused import RESULTS_FILE

US = 1e-6
NB08 = Path(__file__).resolve().parents[1] / "notebooks" / "08_dispatch_floor.ipynb"
COLLAPSED = re.compile(r"([\d.]+) \(\1–\1\)|\(([\d.]+)–\2\)")      # '20.1 (20.1–20.1)' or '(349–349)'


def T(median_us, spread=0.01):
    """A made-up Timing around median_us with a 20-80 % band of about ±0.6 spread."""
    m = median_us * US
    return timing.Timing(tuple(m * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)))


def B(median_us, low_us, high_us):
    """A made-up Timing of a median and a 20-80 % band in µs (five samples: low, low, median, high, high)."""
    return timing.Timing(tuple(x * US for x in (low_us, low_us, median_us, high_us, high_us)))


# --- the step uniform, pair by pair -----------------------------------------------------------------------------

def test_uniform_cost_of_the_committed_run_says_noise_only_where_the_bands_meet():
    """Notebook 08's H100 run: 21.7 (21.5–21.9), 21.3 (21.2–21.5), 21.2 (21.1–21.3). The changing stream's band and
    the bare one's do not meet: that pair is 1.02× apart, within the 10 %, not 'the same within the noise'."""
    changing, same, bare = B(21.7, 21.5, 21.9), B(21.3, 21.2, 21.5), B(21.2, 21.1, 21.3)
    assert not timing.overlap(changing, bare) and timing.overlap(changing, same) and timing.overlap(same, bare)
    v = limits.uniform_cost(changing, same, bare)
    assert v.outcome == "no measurable cost" and "the three are" not in v
    assert ("with it written and without, a step's times are the same within the noise we measured; with its value "
            "changing and the same every time, they are the same within the noise we measured; and with its value "
            "changing and none written, they are 1.02× apart, within the 10 % we call the same (step(s) 21.7 µs "
            "(21.5–21.9), step(0) every time 21.3 µs (21.2–21.5), no uniform 21.2 µs (21.1–21.3))") in v


@pytest.mark.parametrize("bare_band, three", [((21.1, 21.5), True),       # touches 21.5: every pair's bands meet
                                              ((21.1, 21.4), False)])     # 21.4 < 21.5: changing and bare apart
def test_uniform_pairs_say_the_three_only_where_every_pair_meets(bare_band, three):
    changing, same, bare = B(21.7, 21.5, 21.9), B(21.4, 21.2, 21.5), B(21.3, *bare_band)
    said = limits.uniform_pairs(changing, same, bare)
    assert (said == "the three are the same within the noise we measured") is three
    assert ("with its value changing and none written, they are 1.02× apart, within the 10 % we call the same"
            in said) is not three


def test_uniform_pairs_refuse_a_pair_called_apart():
    with pytest.raises(ValueError, match="apart"):
        limits.uniform_pairs(T(28.0), T(25.0), T(25.0))         # changing 1.12× the others: beyond 10 %


@pytest.mark.parametrize("changing, outcome", [(27.2, "no measurable cost"),    # 27.2 / 24.8 = 1.097: inside 10 %
                                               (27.4, "uniform costs")])        # 27.4 / 24.8 = 1.105: beyond it
def test_uniform_cost_across_both_steps_either_side_of_the_margin(changing, outcome):
    """Each step alone inside the margin (changing 1.05× the same number, that 1.05× no uniform), the two together
    beyond it or not: the uniform as train() writes it costs something only where changing against none is apart."""
    v = limits.uniform_cost(T(changing), T(26.0), T(24.8))
    assert v.outcome == outcome
    if outcome == "uniform costs":
        assert f"costs {Decimal(str(changing)) - Decimal('24.8')} µs a step against writing none" in v
        assert "though each step between them is called the same on its own: with it written and without" in v
        assert "no cost we can measure" not in v
    else:
        assert "they are 1.097× apart, within the 10 % we call the same (" in v   # 1.10 would read as on it


@pytest.mark.parametrize("bare, outcome", [(26.3, "no measurable cost"),        # 26.3 / 24.0 = 1.096
                                           (26.5, "not resolved")])             # 1.104: changing faster than none
def test_uniform_cost_changing_faster_than_none_is_not_resolved(bare, outcome):
    v = limits.uniform_cost(T(24.0), T(25.2), T(bare))
    assert v.outcome == outcome and ("something else moved them" in v) == (outcome == "not resolved")


@pytest.mark.parametrize("slow, fast, difference", [
    (T(28.0), T(25.0), "3.0"),                                  # 28.0 − 25.0
    (B(21.7, 21.68, 21.72), B(21.3, 21.2, 21.5), "0.4"),       # 21.70 − 21.3 = 0.40: at 21.3's tenths
    (B(21.75, 21.73, 21.77), B(21.3, 21.2, 21.5), "0.5"),      # 21.75 − 21.3 = 0.45: half up
    (B(21.76, 21.751, 21.769), B(21.34, 21.331, 21.349), "0.42")])  # both to hundredths
def test_printed_difference_is_the_printed_figures_difference(slow, fast, difference):
    assert limits.printed_difference_us(slow, fast) == difference


def test_uniform_cost_quotes_the_printed_difference():
    """28.04 against 25.0 µs print as 28.0 and 25.0: the cost is 3.0 µs, not the medians' 3.04 rounded."""
    v = limits.uniform_cost(T(28.04), T(25.0), T(24.9))
    assert v.outcome == "changing costs" and "costs 3.0 µs a step beyond" in v
    w = limits.uniform_cost(T(27.04), T(27.0), T(24.0))
    assert w.outcome == "writing costs" and "costs 3.0 µs a step whether" in w


# --- the limits table: each epoch with its band, trailing zeros kept, cuBLAS's epoch derived ----------------------

@pytest.mark.parametrize("ms, low, high, printed", [
    (12.0, None, None, ("12.00", None, None)),                  # trailing zeros kept, no band stored
    (2.5, 2.5, 2.5, ("2.50", None, None)),                      # a band of no width: no band printed
    (10.37, 10.34, 10.39, ("10.37", "10.34", "10.39")),         # two decimals tell the ends apart
    (10.371, 10.368, 10.372, ("10.371", "10.368", "10.372")),   # they would not: a digit more
    (436.96, 416.78, 473.27, ("436.96", "416.78", "473.27")),
    (0.0412, 0.0410, 0.0415, ("0.0412", "0.0410", "0.0415"))])  # below 1 ms: three significant digits
def test_epoch_figures_keep_zeros_and_never_collapse(ms, low, high, printed):
    assert limits.epoch_figures(ms, low, high) == printed


@pytest.mark.parametrize("figure, words", [("10.37", "to two decimals"), ("10.4", "to one decimal"),
                                           ("10.371", "to three decimals"), ("349", "to whole numbers")])
def test_decimals_words(figure, words):
    assert limits.decimals_words(figure) == words


def _product_rows(ladder_us, blas_us, hidden=128):
    """Product rows whose two products each take half of a step given as (median, low, high) µs, by the fastest
    rung and by cuBLAS."""
    return [{"product": p, "hidden": hidden, "shape": list(shape), "impl": impl, "seconds": m / 2 * US,
             "seconds_low": lo / 2 * US, "seconds_high": hi / 2 * US, "clock": "c"}
            for p, shape in products.shapes(hidden).items()
            for impl, (m, lo, hi) in (("matmul_9_interior", ladder_us), (products.CUBLAS, blas_us))]


def _epoch_rows():
    return [{"name": "fused blocked 784-128-10 SGD", "ms": 10.37, "ms_low": 10.34, "ms_high": 10.39, "steps": 469},
            {"name": "floor: 469×2 empty dispatches + barriers", "ms": 2.5, "ms_low": 2.49, "ms_high": 2.97,
             "steps": 469, "dispatches_per_step": 2},
            {"name": "JAX jit(lax.scan) 784-128-10 SGD, fp32", "ms": 17.25, "ms_low": 17.2, "ms_high": 17.39,
             "precision": "highest"}]


@pytest.mark.parametrize("blas, step, epoch", [
    ((12.6, 12.54, 12.71), "12.6 µs (12.5–12.7)", "5.91 ms (5.86–5.96)"),        # three digits tell the ends apart
    ((12.63, 12.62, 12.64), "12.63 µs (12.62–12.64)", "5.92 ms (5.92–5.93)"),    # they would not: a digit more
    ((12.627, 12.62, 12.63), "12.63 µs (12.62–12.63)", "5.923 ms (5.919–5.923)")])  # the epoch's ends too
def test_epoch_limits_print_bands_and_mark_cublas_derived(blas, step, epoch):
    floor, blas_row, jax = limits.epoch_limits(_epoch_rows(), _product_rows((31.9, 31.8, 32.0), blas), 128)
    assert floor["ours"] == "fused blocked 784-128-10 SGD, 10.37 ms (10.34–10.39)"
    assert floor["limit"] == "empty-dispatch floor 2.50 ms (2.49–2.97)" and not floor["derived"]
    assert floor["against"] == "4.15× its time"                                    # 10.37 / 2.50
    assert jax["limit"] == "JAX fp32 17.25 ms (17.20–17.39)" and not jax["derived"]   # zeros kept
    assert blas_row["derived"] and blas_row["limit"] == f"cuBLAS's two products alone {epoch}, derived"
    assert blas_row["source"] == f"cuBLAS fp32 in a CUDA graph: a step's {step} × 469 steps, same run"
    # the derived epoch is the printed step × 469, its band the printed band's ends × 469
    step_median = Decimal(step.split()[0])
    assert Decimal(epoch.split()[0]) == (step_median * 469 / 1000).quantize(Decimal(epoch.split()[0]))
    for r in (floor, blas_row, jax):
        assert not COLLAPSED.search(r["ours"] + r["limit"] + r["source"]), r


def test_limits_table_of_the_committed_record_prints_bands_and_says_derived():
    path = RESULTS_FILE
    if not path.is_file():
        pytest.skip("no committed benchmark record")
    table = limits.table(json.loads(path.read_text()))
    epoch_rows = [line for line in table.splitlines() if " epoch |" in line]
    assert epoch_rows and all(re.search(r" ms \([\d.]+–[\d.]+\) \|", line) for line in epoch_rows)
    assert all(("derived" in line) == ("cuBLAS" in line) for line in epoch_rows)
    assert not COLLAPSED.search(table)


def test_against_limits_quotes_the_tables_figures():
    rows = limits.epoch_limits(_epoch_rows(), _product_rows((31.9, 31.8, 32.0), (12.6, 12.54, 12.71)), 128)[:2]
    said = limits.against_limits("that epoch's median to two decimals", rows)
    assert said == ("that epoch's median to two decimals, 10.37 ms (10.34–10.39), takes 4.15× the time of the "
                    "empty-dispatch floor (2.50 ms (2.49–2.97)) and 1.75× the time of cuBLAS's two products alone "
                    "(5.91 ms (5.86–5.96), derived: a step's 12.6 µs (12.5–12.7) × 469 steps)")
    with pytest.raises(ValueError, match="one epoch"):
        limits.against_limits("x", [])
    with pytest.raises(ValueError, match="one epoch"):
        limits.against_limits("x", [rows[0], dict(rows[1], ours="fused 784-128-10 SGD, 10.87 ms (10.84–10.90)")])


# --- the two products: never a collapsed band ---------------------------------------------------------------------

@pytest.mark.parametrize("blas, printed", [((12.6, 12.5, 12.7), "12.6 µs (12.5–12.7)"),       # 3 digits suffice
                                           ((12.63, 12.62, 12.64), "12.63 µs (12.62–12.64)")])  # '12.6 (12.6–12.6)'
def test_two_products_never_print_a_collapsed_band(blas, printed):
    said = limits.two_products(_product_rows((31.9, 31.8, 32.0), blas), 128)
    assert f"and {printed} by cuBLAS" in said and "31.9 µs (31.8–32.0) by the matmul ladder's" in said
    assert not COLLAPSED.search(said)
    ratio = timing.times(Decimal("31.9") / Decimal(printed.split()[0]))
    assert said.endswith(f", {ratio}× less")                                # of the medians as printed


@pytest.mark.parametrize("ladder, words", [
    ((12.9, 12.7, 13.1), ": the same within the noise we measured"),            # the bands meet at 12.7
    ((13.0, 12.8, 13.1), ": 1.03× apart, within the 5 % we call the same"),      # apart, 13.0 / 12.6 = 1.032
    ((13.2, 13.1, 13.3), ": 1.048× apart, within the 5 % we call the same"),     # 1.0476: just inside the 5 %
    ((13.4, 13.3, 13.5), ", 1.06× less")])                                       # 1.0635: beyond it
def test_two_products_on_each_side_of_the_noise_and_the_margin(ladder, words):
    """cuBLAS's 12.6 µs (12.5–12.7) against a ladder whose band meets it, lies apart within the 5 %, or beyond."""
    said = limits.two_products(_product_rows(ladder, (12.6, 12.5, 12.7)), 128)
    assert said.endswith(words) and "12.6 µs (12.5–12.7) by cuBLAS" in said and not COLLAPSED.search(said)


def test_step_figures_of_a_step_without_a_band_print_the_median_alone():
    rows = [dict(r, seconds_low=r["seconds"], seconds_high=r["seconds"])
            for r in _product_rows((31.9, 31.9, 31.9), (12.0, 12.0, 12.0))]
    assert limits.step_figures(products.step_timing(rows, 128, cublas=True)) == ("12.0", None, None)


# --- notebook 08's cells: the sweep's pick and the record's epoch named as what they are --------------------------

def test_nb08_names_the_sweeps_pick_and_the_quoted_median():
    nb = json.loads(NB08.read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "fastest tunables" not in code and "tunables of lowest median for this size" in code
    assert "that epoch's median" in code and "limits.decimals_words(" in code
    assert "limits.against_limits(" in code and "limit_ms']:.2f" not in code and "ours_ms']:.2f" not in code


def test_uniform_costs_names_why_each_step_is_the_same_bands_or_margin():
    """A step called the same because its bands meet, though its medians are more than 10 % apart, is said to
    be the same within the noise, never 'within the 10 %'."""
    def band(m, lo, hi):
        return timing.Timing(tuple(x * 1e-6 for x in (lo, lo, m, hi, hi)))
    v = limits.uniform_cost(band(113, 102, 124), band(112, 100.5, 124), band(100, 99, 101))
    assert v.outcome == "uniform costs"
    assert "with it written and without, a step's times are the same within the noise we measured" in v
    assert "within the 10 % we call the same" not in v

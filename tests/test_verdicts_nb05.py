"""The sentences notebook 05 prints from its measurements, each tried with made-up numbers on both sides of
its threshold, so that a sentence can never contradict the figures printed beside it."""

import re

import pytest

from helpers import frequency, timing
from helpers.bench import profile, train


# a step: parts that add up to it, Python call by call, and who sets the pace (three outcomes) ---------------

US = 1e-6


def T(median_us, spread=0.01):
    """A made-up Timing around median_us with a 20-80 % band of about +-0.6 spread."""
    m = median_us * US
    return timing.Timing(tuple(m * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)))


def _profile(step=40.0, kernels=(18.0, 4.0, 5.0, 4.0, 9.0, 3.0), empty=1.7, issue=20.0, calls=(12.0, 2.0, 4.0),
             short=None):
    kernel_timing = {f"k{i}.comp": T(k) for i, k in enumerate(kernels)}
    calls = dict(zip(("run()", "memory_barrier()", "uniform write"),
                     ({"per_step": T(c), "calls": n} for c, n in zip(calls, (6, 6, 4)))))
    short = issue if short is None else short
    return {"kernel": {k: t.median for k, t in kernel_timing.items()}, "kernel_timing": kernel_timing,
            "kernel_total": sum(kernels) * US, "empty": empty * US, "empty_timing": T(empty),
            "dispatches_per_step": len(kernels),
            "step": step * US, "step_timing": T(step), "issue": issue * US, "issue_timing": T(issue),
            "issue_short": short * US, "issue_short_timing": T(short), "short_steps": 30, "stream_steps": 469,
            "calls": calls, "python_around": (issue - sum(c["per_step"].median / US for c in calls.values())) * US,
            "clock": timing.GPU_QUERY}


def _percents(text):
    """The shares a step_account sentence gives the step, signed ('less N %' counts negative)."""
    head = text.split(". Python")[0]
    return [(-1 if before.endswith("less ") else 1) * int(n) for before, n in re.findall(r"(less )?(\d+) %", head)]


def test_step_account_shares_add_to_a_hundred_with_a_gap_between_dispatches():
    prof = _profile(step=60.0, kernels=(10.0, 10.0, 10.0), empty=2.0, issue=20.0)
    text = profile.step_account(prof)
    assert _percents(text) == [40, 10, 50]                # each rounds alone to these: no note
    assert "between its dispatches" in text and "less" not in text.split(". Python")[0]
    assert "rounded so that they add up to 100" not in text


def test_step_account_shares_add_to_a_hundred_when_kernels_overlap():
    prof = _profile(step=40.0, kernels=(18.0, 4.0, 5.0, 4.0, 9.0, 4.0), empty=1.7, issue=20.0)   # 44 µs alone
    text = profile.step_account(prof)
    shares = _percents(text)
    assert any(s < 0 for s in shares) and sum(shares) == 100
    assert "overlap" in text


def test_step_account_shares_add_to_exactly_a_hundred_where_each_rounded_alone_gives_101():
    """Arithmetic 24.5 %, fixed 24.5 %, rest 51 %: each rounded half up alone gives 25 + 25 + 51 = 101; the
    printed shares are whole_percents', which add up to 100, and the sentence says how they were rounded."""
    prof = _profile(step=100.0, kernels=(9.8,) * 5, empty=4.9)    # fixed 5 x 4.9, arithmetic 49 - 24.5
    parts = profile.step_shares(prof["step"], prof["kernel_total"], prof["empty"] * 5)
    assert [100 * parts[k] / prof["step"] for k in ("arithmetic", "fixed", "rest")] == pytest.approx([24.5, 24.5, 51])
    text = profile.step_account(prof)
    shares = _percents(text)
    assert sum(shares) == 100 and sorted(shares[:2]) == [24, 25] and shares[2] == 51
    assert "51 % (whole percents, rounded so that they add up to 100). Python takes" in text


def test_step_account_shares_are_those_of_the_figures_it_prints():
    """Notebook 05's committed run: six kernels printed 9.92, 5.18, 6.25, 5.24, 9.35 and 4.25 µs (40.19 µs
    added up, as the sentence prints it), an empty dispatch 2.49 µs, a step 41.7 µs, while the median of the
    per-round sums was 40.5 µs. From the printed figures: kernels (40.19 - 6 x 2.49) / 41.7 = 60.6 %, fixed
    14.94 / 41.7 = 35.8 %, between 1.51 / 41.7 = 3.6 %: 60 / 36 / 4 to add up to 100. From kernel_total the
    sentence printed 61 / 36 / 3."""
    kernels = (9.92, 5.18, 6.25, 5.24, 9.35, 4.25)
    prof = _profile(step=41.7, kernels=kernels, empty=2.49)
    prof["kernel_total"] = 40.5 * US                     # the median of the rounds' sums, not what is printed
    old = profile.step_shares(prof["step"], prof["kernel_total"], prof["empty"] * 6)
    assert profile.whole_percents({k: v / prof["step"] for k, v in old.items()}) == {"arithmetic": 61, "fixed": 36,
                                                                                      "rest": 3}
    text = profile.step_account(prof)
    assert "(40.19 µs, the kernels above added up)" in text
    assert "the fixed cost of 6 dispatches and barriers (6 × 2.49 µs, an empty dispatch's median) 36 %" in text
    assert _percents(text) == [60, 36, 4]
    assert "(whole percents, rounded so that they add up to 100)" in text    # 60.55 % alone rounds to 61


def test_step_account_shares_from_the_printed_figures_where_kernels_overlap():
    """Kernels printed 20.1 + 20.1 = 40.2 µs against a step of 40 µs: the rest is -0.2 / 40 = -0.5 %, whatever
    the median of the rounds' sums (39.9 µs here would have given a gap between dispatches)."""
    prof = _profile(step=40.0, kernels=(20.1, 20.1), empty=2.0)
    prof["kernel_total"] = 39.9 * US
    text = profile.step_account(prof)
    assert "overlap" in text and "between its dispatches" not in text and sum(_percents(text)) == 100


@pytest.mark.parametrize("issue, kernels, side", [(30.0, 37.0, "The GPU's dispatches alone"),
                                                 (30.0, 31.0, "The GPU's dispatches alone"),
                                                 (37.0, 30.0, "Python's issue of the step"),
                                                 (20.0, 60.0, "The GPU's dispatches alone")])
def test_step_account_is_three_sentences_and_gives_the_ratio_for_this_run(issue, kernels, side):
    """Python's issue time moves by tens of percent between runs (05: 29 to 49 µs against the GPU's 40 µs
    over three runs), so the account gives the ratio of this run (profile.pace, tested in
    test_verdicts_nb0809.py), names no side as setting the pace, and says that it can differ in another run."""
    prof = _profile(step=max(issue, kernels) + 2, kernels=(kernels / 2, kernels / 2), empty=2.0, issue=issue,
                    calls=(issue / 4, 1.0, 2.0))
    text = profile.step_account(prof, "a fused 784-128-10 step")
    where, issuing, who = re.split(r"(?<=\.) (?=[A-Z])", text)     # three sentences, each with its own job
    assert where.startswith("A fused 784-128-10 step in a stream of 469 takes")
    assert re.search(r" %( \(whole percents, rounded so that they add up to 100\))?\.$", where)
    assert sum(_percents(text)) == 100
    assert "the kernels beyond an empty dispatch, their drain included," in where and "arithmetic" not in where
    assert issuing.startswith(f"Python takes {T(issue).text()} to issue it: 6 × run()")
    assert f"({profile.added_up(list(prof['kernel_timing'].values()))}, the kernels above added up)" in who   # as printed
    assert T(issue).text() in who
    assert who.startswith(side) and "can differ in another run" in who


def test_step_account_names_each_call_and_the_python_around_them():
    text = profile.step_account(_profile(issue=20.0, calls=(12.0, 2.0, 4.0)))
    assert f"6 × run() {T(12.0).text()}, " in text and f"4 × uniform write {T(4.0).text()} and" in text
    assert "(11.9–12.1)" in text                       # each call with its 20-80 % band, not a bare median
    assert "2.0 µs of Python around those calls" in text


def test_step_account_python_around_the_calls_is_the_difference_of_the_figures_it_prints():
    """A call whose band is narrow prints a fourth digit (8.041 µs (8.039–8.043)): 14.2 - (8.041 + 1.03 + 3.88)
    = 1.249, so 1.2 µs, where the calls' medians at three digits (8.04) would have given 1.25, so 1.3 µs."""
    prof = _profile(issue=14.2)
    prof["calls"] = {"run()": {"per_step": T(8.041, spread=0.0005), "calls": 6},
                     "memory_barrier()": {"per_step": T(1.03), "calls": 6},
                     "uniform write": {"per_step": T(3.88), "calls": 4}}
    text = profile.step_account(prof)
    assert "6 × run() 8.041 µs (8.039–8.043)" in text
    assert "and 1.2 µs of Python around those calls" in text


@pytest.mark.parametrize("issue, calls, left", [
    (14.2e-6, (8.04e-6, 1.03e-6, 3.89e-6), "1.2 µs"),      # 14.2 - 12.96 at the issue time's one decimal
    (14.2e-6, (8.04e-6, 2.33e-6, 3.89e-6), "-0.1 µs"),     # the calls add up to 14.26: more than the issue
    (20e-6, (12e-6, 2e-6, 4e-6), "2.0 µs"),           # 20.0 printed with its zero: to the tenth
    (14.2e-6, (8.04e-6, 1.03e-6, 3.88e-6), "1.3 µs")])     # 14.2 - 12.95 = 1.25: half up, as a reader rounds
def test_python_around_the_calls_is_the_difference_of_the_printed_figures(issue, calls, left):
    t = timing.Timing((0.97 * issue, issue, 1.03 * issue), timing.WALL)
    assert profile.around_the_calls(t, [timing.Timing((0.97 * c, c, 1.03 * c)) for c in calls]) == left


def test_step_account_when_the_calls_take_the_whole_issue_time_as_printed():
    text = profile.step_account(_profile(issue=18.0, calls=(12.0, 2.0, 4.0)))
    assert "no time around those calls that the printed figures can show" in text


def test_step_account_when_the_calls_add_up_to_more_than_the_issue_time():
    text = profile.step_account(_profile(issue=17.0, calls=(12.0, 2.0, 4.0)))
    assert "nothing measurable around them" in text and "-" not in text.split("Python takes")[1].split(".")[0]


def test_step_shares_add_up_to_the_step_and_refuse_no_time():
    parts = profile.step_shares(40e-6, 44e-6, 10e-6)
    assert sum(parts.values()) == pytest.approx(40e-6) and parts["rest"] < 0
    with pytest.raises(ValueError, match="step"):
        profile.step_shares(0.0, 1e-6, 1e-6)


def test_stream_start_on_both_sides():
    costly = profile.stream_start(_profile(issue=10.0, short=29.5))
    assert "costs about 585 µs once" in costly and "overstates" in costly
    same = profile.stream_start(_profile(issue=10.0, short=10.1))
    assert "costs nothing we can measure" in same


def test_epoch_account_adds_up_to_the_epoch():
    class Trainer:
        steps_per_epoch, check_every = 469, 50
    prof = dict(_profile(step=38.0), readback=35e-6, order_upload=60e-6)
    parts = profile.epoch_account(Trainer(), prof, 18.9e-3)
    assert sum(parts.values()) == pytest.approx(18.9e-3)
    assert parts["readback"] == pytest.approx(10 * 35e-6) and set(parts) >= {"kernel", "dispatch", "unaccounted"}
    assert parts["kernel"] + parts["dispatch"] + parts["between dispatches"] == pytest.approx(469 * 38e-6)


# the mapped-read experiment (appendix): a conclusion only from the figures it names ---------------------

@pytest.mark.parametrize("mapped", [41.8, 54.6])   # two runs on one H100: 1.04× and 1.35× after mapped reads
def test_mapped_read_verdict_judges_the_staged_reads_only(mapped):
    v = profile.mapped_read_verdict("dense_backward_1_relu.comp", 2.39, none=T(40.3), staged=T(40.3), mapped=T(mapped))
    assert v.outcome == timing.SAME and "the same within the noise we measured" in v.split(";")[0]
    assert "2.39×" in v and "can differ from one run to the next" in v
    assert "slower" not in v and "left the buffers" not in v          # no verdict on mapping, no claim on the driver


@pytest.mark.parametrize("staged, outcome, word", [(42.0, timing.SAME, "1.05× apart, within the 10 % we call the same"),
                                                   (46.0, timing.A_FASTER, "slower")])                  # 1.15×
def test_mapped_read_verdict_staged_reads_either_side_of_the_margin(staged, outcome, word):
    v = profile.mapped_read_verdict("x.comp", 1.5, none=T(40), staged=T(staged), mapped=T(52))
    assert v.outcome == outcome and word in v.split(";")[0]


def test_summed_adds_the_kernels_round_by_round():
    total = profile.summed({"a": T(10), "b": T(5)})
    assert total.median == pytest.approx(15 * US)


# the one PyTorch eager epoch every notebook quotes --------------------------------------------------------

def _record():
    return {"device": {"describe": "NVIDIA H100 80GB HBM3/PCIe/SSE2 | OpenGL 4.3"},
            "benches": {
                "train": [{"name": "GLSL (ModernGL)", "epoch_s": 0.0216},
                          {"name": "PyTorch eager (CUDA fp32, TF32 off)", "epoch_s": 0.548},
                          {"name": "NumPy (CPU)", "epoch_s": 0.487}],
                "fused": [{"name": "fused 784-128-10 SGD", "ms": 12.6},
                          {"name": "unfused 784-128-10 SGD (six dispatches a step)", "ms": 21.5},
                          {"name": "PyTorch eager 784-128-10 SGD", "ms": 630.0},
                          {"name": "PyTorch eager 784-800-10 Momentum", "ms": 700.0}]}}


def test_committed_epochs_read_the_fused_benchs_eager_row():
    epochs = train.committed_epochs(_record())
    assert epochs["PyTorch eager"] == pytest.approx(630.0)    # the fused bench's row, never the train bench's
    assert epochs["GLSL, six dispatches a step"] == pytest.approx(21.5)
    assert epochs["NumPy (CPU)"] == pytest.approx(487.0)


def test_committed_epochs_without_the_rows():
    assert train.committed_epochs({"benches": {}}) == {}


# --- audit: each threshold just inside and just outside, each wording branch --------------------------------

@pytest.mark.parametrize("short, costs", [(10.4, False),    # 4 % above the epoch-long stream: inside 5 %
                                          (10.6, True)])    # 6 %: beyond it
def test_stream_start_either_side_of_the_margin(short, costs):
    text = profile.stream_start(_profile(issue=10.0, short=short))
    assert ("costs about" in text and "overstates" in text) == costs
    assert ("costs nothing we can measure" in text) == (not costs)


def test_stream_start_does_not_call_a_clearly_faster_short_stream_the_same():
    text = profile.stream_start(_profile(issue=10.0, short=5.0))
    assert "5.00 µs" in text and "10.0 µs" in text
    assert "the same within the noise" not in text and "understates" in text


@pytest.mark.parametrize("staged, outcome, word", [(37.0, timing.SAME, "1.08× apart, within the 10 % we call the same"),
                                                   (35.0, timing.B_FASTER, "faster")])                 # 1.14×
def test_mapped_read_verdict_staged_reads_faster_either_side_of_the_margin(staged, outcome, word):
    v = profile.mapped_read_verdict("x.comp", 1.5, none=T(40), staged=T(staged), mapped=T(52))
    assert v.outcome == outcome and word in v.split(";")[0] and "slower" not in v.split(";")[0]




@pytest.mark.parametrize("short, noise", [(10.1, True),     # 10.1 µs (10.04–10.16) against 10 µs (9.94–10.06): overlap
                                          (10.3, False)])   # (10.24–10.36): bands apart as printed, 3 % inside 5 %
def test_stream_start_says_noise_only_where_the_bands_overlap(short, noise):
    text = profile.stream_start(_profile(issue=10.0, short=short))
    assert ("the same within the noise we measured, so the start of a stream costs nothing we can measure beyond "
            "that" in text) is noise
    assert ("1.03× apart, within the 5 % we call the same, so the start of a stream costs nothing we can measure "
            "beyond that" in text) is not noise


@pytest.mark.parametrize("staged, noise", [(40.3, True), (41.0, False)])   # 41 against 40: bands apart, 2.5 %
def test_mapped_read_verdict_same_says_noise_only_where_the_bands_overlap(staged, noise):
    v = profile.mapped_read_verdict("x.comp", 1.5, none=T(40), staged=T(staged), mapped=T(52))
    assert v.outcome == timing.SAME
    assert ("the same within the noise we measured" in v) is noise
    assert ("1.03× apart, within the 10 % we call the same" in v) is not noise


# --- the benchmark record's epochs beside this notebook's: what they are, and two comparisons ---------------

def _banded(ms, spread=0.01, **extra):
    return {"ms": ms, "ms_low": ms * (1 - spread), "ms_high": ms * (1 + spread), **extra}


def _timed_record(eager_ms=536.0, numpy_ms=486.0, images=60_000):
    return {"device": {"describe": "NVIDIA H100 80GB HBM3/PCIe/SSE2 | OpenGL 4.3", "date": "2026-11-27"},
            "benches": {"train": [{"name": "NumPy (CPU)", "epoch_s": numpy_ms / 1e3, "images": images, "repeats": 5,
                                   **_banded(numpy_ms)}],
                        "fused": [{"name": "unfused 784-128-10 SGD (notebook 05)", **_banded(22.9)},
                                  {"name": "PyTorch eager 784-128-10 SGD", **_banded(eager_ms)}]}}


def test_committed_timings_keep_each_rows_band():
    t = train.committed_timings(_timed_record())
    assert t["NumPy (CPU)"].text() == "486 ms (481–491)" and t["PyTorch eager"].text() == "536 ms (531–541)"
    assert t["GLSL, six dispatches a step"].text() == "22.9 ms (22.7–23.1)"
    assert train.committed_timings(_record())["NumPy (CPU)"].text() == "487 ms (no spread recorded)"   # a row with no band


def test_record_account_says_what_the_figures_are():
    intro, _ = train.record_account(_timed_record())
    assert intro.startswith("These are the benchmark record's epochs, run on the NVIDIA H100 80GB HBM3 on "
                            "2026-11-27, not in this notebook's run")


@pytest.mark.parametrize("eager_ms, ratio", [(800.0, "1.65"), (300.0, "0.62"), (536.0, "1.10"), (490.0, "1.01")])
def test_record_account_gives_eager_against_numpy_as_a_ratio_with_no_side(eager_ms, ratio):
    """The two rows come from different benchmarks, not taken in turn, one a CPU's: the records of one card
    gave them 1.0x and 1.5x apart, so no margin keeps a verdict from flipping between records. The sentence
    gives both figures and the ratio of the printed medians, and names no faster side, on either side of 1."""
    _, v = train.record_account(_timed_record(eager_ms=eager_ms))
    eager = train.committed_timings(_timed_record(eager_ms=eager_ms))["PyTorch eager"]
    assert v.outcome == train.RATIO_ONLY and v.startswith("In the record, ")
    assert (f"PyTorch eager's epoch on the GPU ({eager.text()}) took {ratio}× NumPy's epoch on the CPU "
            "(486 ms (481–491))") in v
    assert "faster" not in v.replace("names no faster side", "") and "the same within" not in v and "apart" not in v
    assert v.endswith("so the ratio is this record's and names no faster side")


def test_record_account_does_not_compare_missing_rows():
    _, eager = train.record_account({"benches": {}})
    assert eager.outcome == train.NOT_COMPARED


@pytest.mark.parametrize("rest_ms, words", [(-0.62, "by 0.62 ms (3 % of it)"), (-0.004, "by 0.0040 ms (0 % of it)"),
                                            (0.0, None), (1.5, None)])
def test_unaccounted_sentence_only_for_a_negative_rest(rest_ms, words):
    """Parts of a 20 ms epoch: a rest below zero is put in words, with the figures the bar's note and the
    shares print (0.62 ms, 3 %); a rest of zero or above is the markdown's, and gets no sentence."""
    parts = {"kernel": 11.8e-3, "dispatch": 7e-3, "readback": 0.4e-3, "upload": 0.049e-3}
    parts["unaccounted"] = rest_ms * 1e-3
    parts["between dispatches"] = 20e-3 - sum(parts.values())
    said = train.unaccounted_sentence(parts)
    if words is None:
        assert said == ""
    else:
        assert words in said and said.startswith("The parts measured apart add up to more than the epoch")
        assert said.endswith(".") and "below zero" in said and "overlap" in said


def test_unaccounted_sentence_gives_the_share_the_parts_print():
    """-1.4 % of the epoch alone rounds to -1 %, but the parts printed beside it (limits.epoch_shares, largest
    remainder so they add up to 100) show it as -2 %: the sentence says 2 %, as the shares do."""
    from helpers.bench import limits
    parts = {"kernel": 0.607, "dispatch": 0.357, "between dispatches": 0.04, "readback": 0.01,
             "upload": 0.0, "unaccounted": -0.014}
    shares = str(limits.epoch_shares(parts))
    said = train.unaccounted_sentence(parts)
    printed = int(re.search(r"unaccounted (-?\d+) %", shares).group(1))
    assert f"({-printed} % of it)" in said and printed == -2


@pytest.mark.parametrize("here_ms, ratio", [(22.9, "1.00×"), (20.0, "0.87×"), (30.0, "1.31×")])
def test_glsl_here_vs_record_gives_the_ratio_and_no_word_a_threshold_picks(here_ms, ratio):
    """The record's six-dispatch epoch 22.9 ms (22.2–23.2) against this notebook's: both figures and the ratio
    of the printed medians, the same words whatever the ratio (two runs); no row, no sentence."""
    record = {"benches": {"fused": [{"name": train.UNFUSED_ROW + " (notebook 05)", "ms": 22.9, "ms_low": 22.2,
                                     "ms_high": 23.2, "steps": 469}]}}
    here = timing.Timing(tuple(here_ms * 1e-3 * (1 + 0.005 * k) for k in (-1, -0.5, 0, 0.5, 1)))
    said = train.glsl_here_vs_record(record, here, 469)
    assert said == (f"This notebook's back-to-back epoch ({here.text()}) took {ratio} the record's six-dispatch "
                    "epoch (22.9 ms (22.2–23.2)), the same trainer by the same clock in another run: there its epochs "
                    "alternate with notebook 06's faster trainers' in a run of their benchmark, here they follow one another, "
                    "so the ratio holds for this pair of runs only.")
    assert f"{here_ms / 22.9:.2f}×" == ratio
    assert train.glsl_here_vs_record({"benches": {}}, here, 469) == ""
    assert train.glsl_here_vs_record(record, here, 16) == ("This notebook's epochs (16 steps) and the record's "
                                                           "six-dispatch epochs (469 steps) are of different sizes, "
                                                           "so they are not compared.")


def test_overrun_sentence_takes_the_share_from_the_printed_figures():
    """Parts that overrun a 21.7 ms epoch by 2.254 ms: the bar's note prints 2.3 ms, and 2.3 / 21.7 is 10.6 %,
    11 %, where the unrounded 2.254 / 21.7 is 10.4 % (the 10 % the old sentence printed)."""
    from helpers.bench.profile import overrun_sentence
    epoch = timing.Timing((21.5e-3, 21.6e-3, 21.7e-3, 21.8e-3, 21.9e-3))
    parts = {"kernel": 12e-3, "dispatch": 7e-3, "between dispatches": 4.554e-3, "readback": 0.4e-3, "upload": 0.0}
    parts["unaccounted"] = epoch.median - sum(parts.values())
    said = overrun_sentence(parts, epoch)
    assert epoch.text().startswith("21.7 ms") and "by 2.3 ms (11 % of its median, 21.7 ms)" in said
    assert said.startswith("The parts measured apart add up to more than the epoch") and "below zero" in said
    assert overrun_sentence({**parts, "unaccounted": 0.0}, epoch) == ""
    small = overrun_sentence({**parts, "unaccounted": -0.04e-3}, epoch)
    assert "by 0.040 ms (less than 1 % of its median" in small   # two figures, its zero kept
    half = overrun_sentence({**parts, "unaccounted": -0.11e-3}, epoch)    # 0.11 / 21.7 = 0.51 %: not '1 %'
    assert "by 0.11 ms (less than 1 % of its median" in half


# --- notebook 05's own cells: what its code says of a single timing -------------------------------------------

def _nb05_code():
    import json
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "notebooks" / "05_backprop_sgd_glsl.ipynb"
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_nb05_upload_time_is_measured_and_printed_with_its_band():
    """The training set's upload is timed as every figure is (timing.measure: a warm-up, then repeats) and
    printed with its band, not the constructor's single wall-clock figure."""
    code = _nb05_code()
    assert not any("upload_seconds" in cell for cell in code)
    cell = next(cell for cell in code if "def upload_once" in cell)
    assert "timing.measure(upload_once, repeat=mode.pick(" in cell and "{upload.text()}" in cell


def test_nb05_prints_the_drawing_time_with_its_band():
    cell = next(cell for cell in _nb05_code() if "display_seconds" in cell)
    assert "timing.Timing(history['display_seconds']).text()" in cell and "np.median" not in cell


def test_nb05_epoch_verdicts_use_the_host_margin_and_say_they_were_timed_apart():
    """Both epoch verdicts set a CPU's pace (NumPy's epoch, PyTorch eager's Python issue) against the GPU's,
    timed apart: judged with inference.HOST_MARGIN, and the sentence says they were not taken in turn."""
    cell = next(cell for cell in _nb05_code() if '"gpu-vs-numpy-epoch"' in cell)
    for vid in ("gpu-vs-numpy-epoch", "glsl-vs-pytorch-eager"):
        call = cell.split(f'findings.verdict("{vid}"', 1)[1].split("))", 1)[0]
        assert "margin=inference.HOST_MARGIN" in call, vid
    assert cell.count("not in turn") == 2 and cell.count("bench_train.host_margin_named(") == 2


def test_host_margin_named_where_the_verdict_does_not_name_it():
    """Named after a side ahead and after 'the same within the noise' (bands overlap); not after 'N× apart,
    within the 50 % we call the same' (bands apart, medians within the margin), whose words name it."""
    m = train.HOST_MARGIN
    tail = f"either side counts as ahead only beyond {1 + m:g}×"
    ahead = (T(100.0), T(200.0))                         # 2× apart, beyond 1.5×
    within = (T(100.0), T(140.0))                        # bands apart, 1.4×: within the margin
    noise = (T(100.0, spread=0.2), T(110.0, spread=0.2))  # bands overlap
    said = {}
    for name, (a, b) in {"ahead": ahead, "within": within, "noise": noise}.items():
        judged = timing.versus(a, b, "A", "B", margin=m)
        said[name] = (judged.outcome, train.host_margin_named(judged, a, b))
    assert said["ahead"][0] == timing.A_FASTER and said["ahead"][1].endswith(tail)
    assert said["within"][0] == timing.SAME and tail not in said["within"][1]
    assert "within the 50 % we call the same" in said["within"][1]
    assert said["noise"][0] == timing.SAME and said["noise"][1].endswith(tail)
    assert timing.SAME_WITHIN_NOISE in said["noise"][1]


@pytest.mark.parametrize("parts, total", [
    ([(10.3, 0.01), (10.2, 0.01)], "20.5 µs"),             # the same decimals: the exact sum
    ([(10.3, 0.01), (10.19, 0.001)], "20.5 µs"),           # 10.19 printed finer: the sum keeps 10.3's tenths
    ([(10.27, 0.001), (10.19, 0.001)], "20.46 µs"),        # both to hundredths: hundredths kept
    ([(51_200, 0.01), (71.2, 0.01)], "51.3 ms"),           # mixed units: not 51.2712 ms
    ([(51_200, 0.01), (40.0, 0.01)], "51.2 ms"),           # rounded half up, and down below the half
    ([(10.29, 0.0005), (10.0, 0.003)], "20.3 µs")])        # 10.0 printed with its zero counts to the tenth
def test_added_up_keeps_the_coarsest_printed_decimal(parts, total):
    """A sum of printed figures is written to the last decimal of the coarsest one: the reader adding them
    gets that figure once rounded, never more digits than any part could give."""
    timings = [T(m, s) for m, s in parts]
    assert profile.added_up(timings) == total, [t.text() for t in timings]


# the epoch's largest part (notebook 05): shares as this run's, the verdict on the timer-query parts alone ----

from helpers.bench import limits  # noqa: E402

TIMED = ("kernel", "dispatch")
MS = 1e-3
# three runs of notebook 05 on one H100: kernel and dispatch (timer queries) held still, the wall-clock parts moved
RUNS = [{"kernel": 11.76 * MS, "dispatch": 7.28 * MS, "between dispatches": 10.1 * MS, "readback": 0.428 * MS,
         "upload": 0.054 * MS, "unaccounted": -1.3 * MS},
        {"kernel": 11.84 * MS, "dispatch": 7.06 * MS, "between dispatches": 0.50 * MS, "readback": 0.387 * MS,
         "upload": 0.063 * MS, "unaccounted": 5.35 * MS},
        {"kernel": 11.88 * MS, "dispatch": 6.93 * MS, "between dispatches": 0.79 * MS, "readback": 0.367 * MS,
         "upload": 0.052 * MS, "unaccounted": -0.17 * MS}]


def test_epoch_shares_timed_on_the_first_runs_parts():
    v = limits.epoch_shares(RUNS[0], timed=TIMED)
    assert v.outcome == "larger timed part: kernel"
    assert v.startswith("kernel 42 %, dispatch 26 %, between dispatches 36 %, readback 1 %, upload 0 %, "
                        "unaccounted -5 % of the epoch (whole percents, rounded so that they add up to 100). ")
    assert ("Of the parts timed one dispatch at a time by GPU timer query (kernel 11.8 ms, dispatch 7.28 ms), "
            "kernel is the larger, 1.62× dispatch; ") in v
    assert v.endswith("between dispatches, readback, upload and unaccounted are this run's wall-clock figures: "
                      "they follow Python's pace of issue and the GPU's clock between dispatches, which move from "
                      "one run to the next, so they are not judged")


def test_epoch_shares_timed_holds_where_the_shares_alone_flipped():
    """The shares' own verdict moved with the wall-clock parts (too close to call in the first run, kernel in
    the other two); the verdict on the timed parts is the same in all three."""
    assert [limits.epoch_shares(p).outcome for p in RUNS] == ["too close to call", "largest: kernel", "largest: kernel"]
    assert {limits.epoch_shares(p, timed=TIMED).outcome for p in RUNS} == {"larger timed part: kernel"}


@pytest.mark.parametrize("kernel_ms, dispatch_ms, outcome, words", [
    (12.0, 10.0, "timed parts too close to call", "kernel 1.2× dispatch, within the 20 % we call the same"),
    (12.1, 10.0, "larger timed part: kernel", "kernel is the larger, 1.21× dispatch"),
    (10.0, 12.0, "timed parts too close to call", "dispatch 1.2× kernel, within the 20 % we call the same"),
    (10.0, 12.1, "larger timed part: dispatch", "dispatch is the larger, 1.21× kernel")])
def test_epoch_shares_timed_either_side_of_the_margin(kernel_ms, dispatch_ms, outcome, words):
    v = limits.epoch_shares({"kernel": kernel_ms * MS, "dispatch": dispatch_ms * MS, "between dispatches": 1 * MS},
                            timed=TIMED)
    assert v.outcome == outcome and words in v, v


def test_epoch_shares_timed_judges_the_printed_figures():
    """12.049 ms over 10.0 ms is 1.2049, beyond 1.2, but 12.049 prints 12.0 and 12.0 / 10.0 is 1.2: within."""
    v = limits.epoch_shares({"kernel": 12.049 * MS, "dispatch": 10.0 * MS, "unaccounted": 1 * MS}, timed=TIMED)
    assert "(kernel 12.0 ms, dispatch 10.0 ms)" in v and v.outcome == "timed parts too close to call"
    assert "unaccounted is this run's wall-clock figure: it follows" in v and v.endswith("so it is not judged")


def test_epoch_shares_timed_with_a_part_that_took_no_time_and_another_clock():
    v = limits.epoch_shares({"kernel": 0.0, "dispatch": 7 * MS, "between dispatches": 1 * MS}, timed=TIMED,
                            clock=timing.WALL_FINISH)
    assert v.outcome == "larger timed part: dispatch" and "dispatch is the larger, kernel taking no time" in v
    assert "timed one dispatch at a time by wall clock around ctx.finish()" in v
    with pytest.raises(ValueError):
        limits.epoch_shares({"kernel": 1 * MS, "readback": 1 * MS}, timed=TIMED)


def test_epoch_shares_without_timed_is_unchanged():
    """Notebook 08 passes no `timed`: the shares and the largest part, as before, nothing about timed parts."""
    v = limits.epoch_shares(RUNS[2])
    assert v == ("kernel 60 %, dispatch 35 %, between dispatches 4 %, readback 2 %, upload 0 %, unaccounted -1 % "
                 "of the epoch; the largest part is kernel")
    assert v.outcome == "largest: kernel"

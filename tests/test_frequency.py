"""helpers.frequency: the SM-clock sampler, with a stand-in nvidia-smi here and the real one on an NVIDIA GPU;
and the epoch windows (started, ended) that Trainer.train records for it."""

import shutil
import stat
import time

import numpy as np
import pytest

from helpers import reference
from helpers.frequency import CLOCK_HIGHER, CLOCK_LOWER, CLOCK_SAME, GAP, NO_GAP, FrequencyLog, verdict
from helpers.gpu_mlp import GPUTrainer

FAKE = """#!/bin/sh
# prints what nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,utilization.gpu prints, then waits
echo "1980, 1980, 87"
echo "[N/A], 1980, 0"
echo "No devices were found"
echo "405, 1980, 22"
exec sleep 30
"""


@pytest.fixture
def fake_smi(tmp_path):
    path = tmp_path / "fake-nvidia-smi"
    path.write_text(FAKE)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_lines_become_timed_samples_and_bad_lines_are_skipped(fake_smi):
    before = time.perf_counter()
    with FrequencyLog(command=fake_smi) as log:
        deadline = time.perf_counter() + 5
        while len(log.samples) < 2 and time.perf_counter() < deadline:
            time.sleep(0.01)
    after = time.perf_counter()
    assert log.available and log.note == ""
    assert [(mhz, busy) for _, mhz, busy in log.samples] == [(1980.0, 87.0), (405.0, 22.0)]
    assert log.max_mhz == 1980.0
    assert all(before <= t <= after for t, _, _ in log.samples)
    assert log.median_mhz() == (1980 + 405) / 2
    first, second = log.samples[0][0], log.samples[1][0]
    assert log.median_mhz([(second, after)]) == 405.0       # only the samples inside the window
    assert log.median_busy([(before, first)]) == 87.0
    assert log.median_mhz([(after + 1, after + 2)]) is None


def test_the_sampler_stops_with_its_block(fake_smi):
    with FrequencyLog(command=fake_smi) as log:
        process = log._process
    assert process.poll() is not None, "nvidia-smi still running after the with block"


def test_without_nvidia_smi_it_records_nothing_and_says_why():
    with FrequencyLog(command="no-such-gpu-tool") as log:
        pass
    assert not log.available
    assert "no no-such-gpu-tool on this machine" in log.note
    assert log.samples == [] and log.median_mhz() is None and log.max_mhz is None


def test_train_records_each_epochs_window(ctx):
    rng = np.random.default_rng(3)
    images, labels = rng.integers(0, 256, (90, 784), dtype=np.uint8), rng.integers(0, 10, 90)
    trainer = GPUTrainer(ctx, reference.init_params(784, 20, 10, seed=1), images, labels, batch_size=32)
    before = time.perf_counter()
    history = trainer.train(2, progress=False, evaluate=())
    trainer.release()
    started, ended = history["started"], history["ended"]
    assert len(started) == len(ended) == 2
    assert before <= started[0] < ended[0] <= started[1] < ended[1] <= time.perf_counter()
    for s, e, seconds, shown in zip(started, ended, history["seconds"], history["display_seconds"]):
        assert e - s == pytest.approx(seconds + shown)


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="no nvidia-smi: not an NVIDIA GPU machine")
def test_the_real_nvidia_smi_reports_a_clock():
    with FrequencyLog() as log:
        time.sleep(0.5)
    assert log.samples, "nvidia-smi printed no sample in half a second"
    assert all(0 < mhz <= log.max_mhz for _, mhz, _ in log.samples)


def _epochs(ms, spread=0.01):
    from helpers import timing
    return timing.Timing(tuple(ms * 1e-3 * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)))


@pytest.mark.parametrize("slow, clock_ratio, outcome, says", [
    (20.5, 3.0, NO_GAP, "no gap to explain"),
    (50.0, 1.10, CLOCK_SAME, "the clock does not explain them"),     # within the 15 % margin
    (50.0, 1.20, CLOCK_LOWER, "clocked down"),                       # beyond it
    (50.0, 3.5, CLOCK_LOWER, "ran at a clock 3.50× lower, which can stretch a kernel by as much:"),
    (60.0, 1.5, CLOCK_LOWER, "ran at a clock 1.50× lower, which can stretch a kernel by as much:"),
])
def test_verdict(slow, clock_ratio, outcome, says):
    v = verdict(_epochs(slow), _epochs(20.0), clock_ratio)
    assert (v.outcome, getattr(v, "clock", NO_GAP)) == ((NO_GAP, NO_GAP) if outcome == NO_GAP else (GAP, outcome))
    assert says in v
    if outcome != NO_GAP:
        assert v.endswith("so what the clock did holds for this run only")   # the clock is not the verdict   # the clock's figure once; the qualifier before the figures, no parenthesis after a band
        assert v.count(f"{clock_ratio:.2f}×") == 1
        assert (f"the slower epochs took {slow / 20:.2f}× as long at the median, {_epochs(slow).text()} against "
                f"{_epochs(20.0).text()}, ") in v
        assert ") (" not in v and "), " + f"{slow / 20:.2f}" not in v
    assert "explains the gap" not in v and "part of the gap" not in v   # how far a GPU clocks down varies by run


def test_verdict_calls_noisy_epochs_the_same():
    assert verdict(_epochs(23.0, 0.3), _epochs(20.0, 0.3), 3.0).outcome == NO_GAP   # 23 inside 20 ms (14–26)


def test_verdict_sees_a_gap_when_a_few_loop_epochs_ran_at_full_speed():
    # a loop with two modes: two epochs of ten at the back-to-back pace, the rest slowed (as notebook 05's do)
    loop = _timing_ms(24.0, 25.0, 55.0, 60.0, 62.0, 63.0, 64.0, 70.0, 78.0, 81.0)
    assert verdict(loop, _epochs(24.0), 2.5).outcome == GAP and verdict(loop, _epochs(24.0), 2.5).clock == CLOCK_LOWER
    assert verdict(_timing_ms(24.0, 24.2, 24.5, 24.1, 60.0), _epochs(24.0), 2.5).outcome == NO_GAP


def _timing_ms(*ms):
    from helpers import timing
    return timing.Timing(tuple(m * 1e-3 for m in ms))


def test_epoch_seconds_warms_the_gpu_up_before_it_times(ctx, monkeypatch):
    from helpers.bench import profile

    rng = np.random.default_rng(4)
    images, labels = rng.integers(0, 256, (40, 784), dtype=np.uint8), rng.integers(0, 10, 40)
    trainer = GPUTrainer(ctx, reference.init_params(784, 20, 10, seed=1), images, labels, batch_size=32)
    events = []
    monkeypatch.setattr(profile, "warm_up", lambda ctx_, issue_step, seconds=None: events.append(("warm_up", ctx_)))
    monkeypatch.setattr(trainer, "run_epoch", lambda e, order: events.append(("epoch", e, order.tolist())) or 0.5 + e)
    losses = []
    times = profile.epoch_seconds(trainer, epochs=2, losses=losses)
    trainer.release()
    assert losses == [0.5, 1.5, 2.5]   # every epoch's mean loss, the untimed one first
    # each epoch gets the order the trainer would draw itself, drawn before the clock started
    orders = [reference.epoch_order(40, e, trainer.seed).tolist() for e in range(3)]
    assert events == [("warm_up", ctx)] + [("epoch", e, orders[e]) for e in range(3)] and len(times) == 2


# --- audit: the gap's threshold (typical_above) just inside and just outside ---------------------------------

@pytest.mark.parametrize("slow, outcome", [(21.0, NO_GAP),         # 21.0 against 20.12 × 1.05 = 21.13 ms: no gap
                                           (21.3, GAP)])           # just beyond: a gap, the clock 2× lower
def test_verdict_either_side_of_the_gap(slow, outcome):
    v = verdict(_epochs(slow), _epochs(20.0), 2.0)
    assert v.outcome == outcome
    assert ("no gap to explain" in v) == (outcome == NO_GAP) and ("clocked down" in v) == (outcome == GAP)


@pytest.mark.parametrize("clock_ratio", [3.67, 1.0])   # two runs of notebook 05 on one H100: 3.67× lower, then the same
def test_the_outcome_does_not_depend_on_the_clock(clock_ratio):
    v = verdict(_epochs(50.0), _epochs(20.0), clock_ratio)
    assert v.outcome == GAP and "holds for this run only" in v


@pytest.mark.parametrize("slow, noise", [(20.2, True),      # 20.2 ms (20.08–20.32) against 20 ms (19.88–20.12)
                                         (20.4, False)])    # (20.28–20.52): bands apart, yet within 5 % of 20.12
def test_verdict_no_gap_says_noise_only_where_the_bands_overlap(slow, noise):
    v = verdict(_epochs(slow), _epochs(20.0), 2.0)
    assert v.outcome == NO_GAP and "no gap to explain" in v
    assert ("the two kinds of epoch (20.2 ms (20.1–20.3) and 20 ms (19.9–20.1)) are the same within the noise we "
            "measured: there is no gap to explain" in v) is noise
    assert ("are typically within the 5 % we call the same (the slower median no more than that above the other's "
            "80th percentile): there is no gap to explain" in v) is not noise


@pytest.mark.parametrize("ratio, outcome", [(0.88, CLOCK_SAME),       # 1 / 0.88 = 1.14: inside the 15 % margin
                                            (0.85, CLOCK_HIGHER),     # 1 / 0.85 = 1.18: beyond it
                                            (0.50, CLOCK_HIGHER)])
def test_verdict_does_not_call_a_higher_clock_about_the_same(ratio, outcome):
    v = verdict(_epochs(50.0), _epochs(20.0), ratio)
    # the slow epochs' clock is 1 / ratio times the fast ones': higher, never printed as "0.85× the fast clock"
    assert v.clock == outcome and f"{1 / ratio:.2f}× higher" in v and "does not explain" in v
    assert ("about the same clock" in v) == (outcome == CLOCK_SAME) and ("yet ran at a clock" in v) == (outcome == CLOCK_HIGHER)




@pytest.mark.parametrize("ratio, words", [(1.10, "a clock 1.10× lower"), (0.85, "a clock 1.18× higher"),
                                          (1.001, "the same clock"), (0.999, "the same clock")])
def test_clock_words_say_which_way_with_the_figure_of_that_way(ratio, words):
    from helpers.frequency import clock_words
    assert clock_words(ratio) == words
    v = verdict(_epochs(50.0), _epochs(20.0), ratio)
    assert words.removeprefix("a clock ") in v and (" the same clock" in v) == (v.clock == CLOCK_SAME)
    assert ("a clock 1.10× lower" not in v) and "clock (a clock" not in v

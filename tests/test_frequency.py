"""helpers.frequency: the SM-clock sampler, with a stand-in nvidia-smi here and the real one on an NVIDIA GPU;
and the epoch windows (started, ended) that Trainer.train records for it."""

import shutil
import stat
import time
from decimal import Decimal

import numpy as np
import pytest

from helpers import reference
from helpers.frequency import FrequencyLog, account
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


def test_each_window_counts_once_however_many_samples_it_holds():
    """A long first epoch at 1980 MHz (five samples) and two short ones after the clock fell (one sample each):
    the median over epochs is the fallen clock, where a median over samples would give 1980 MHz."""
    log = FrequencyLog(command="no-such-gpu-tool")
    log.samples = [(0.1 * i, 1980.0, 90.0) for i in range(5)] + [(1.0, 800.0, 50.0), (2.0, 450.0, 40.0)]
    epochs = [(0.0, 0.45), (0.95, 1.05), (1.95, 2.05), (3.0, 3.1)]     # the last holds no sample: left out
    assert log.median_mhz(epochs) == 800.0
    assert log.median_mhz() == 1980.0 and log.median_busy(epochs) == 50.0


def test_a_window_between_samples_takes_the_nearest_within_one_interval():
    """Epochs shorter than the 50 ms sampling interval: six at 1980 MHz, most holding no sample, then four
    longer ones after the clock fell. Leaving the empty windows out would give the fallen clock; taking each
    one's nearest sample gives the clock most epochs ran at."""
    log = FrequencyLog(command="no-such-gpu-tool")
    log.samples = [(0.05 * i, 1980.0, 90.0) for i in range(1, 4)] + [(0.05 * i, 600.0, 30.0) for i in range(4, 9)]
    fast = [(0.01 + 0.025 * i, 0.03 + 0.025 * i) for i in range(6)]     # 20 ms each, 0.01 .. 0.155 s
    slow = [(0.16 + 0.06 * i, 0.21 + 0.06 * i) for i in range(4)]       # 50 ms each, after the fall
    assert sum(1 for w in fast if log.inside([w])) < len(fast)           # some fast epochs hold no sample
    assert log.median_mhz(fast + slow) == 1980.0
    assert log.median_mhz(slow) == 600.0
    far = (5.0, 5.01)                                                    # nothing within 50 ms: left out
    assert log.median_mhz([far]) is None and log.median_mhz([far] + slow) == 600.0


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
    trainer.check_every = 1                      # a check, and so a drawing, after every step

    class SlowPlot:                              # a live plot that takes 20 ms to draw
        def update(self, *args, **kwargs):
            time.sleep(0.02)

    before = time.perf_counter()
    history = trainer.train(2, progress=False, evaluate=(), live=SlowPlot())
    trainer.release()
    started, ended = history["started"], history["ended"]
    assert len(started) == len(ended) == 2
    assert before <= started[0] < ended[0] <= started[1] < ended[1] <= time.perf_counter()
    for s, e, seconds, shown in zip(started, ended, history["seconds"], history["display_seconds"]):
        # the GPU runs the queued steps while the CPU draws, so the drawing stays in the epoch's time
        assert seconds == pytest.approx(e - s) and shown >= 3 * 0.02 and seconds > shown


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="no nvidia-smi: not an NVIDIA GPU machine")
def test_the_real_nvidia_smi_reports_a_clock():
    with FrequencyLog() as log:
        time.sleep(0.5)
    assert log.samples, "nvidia-smi printed no sample in half a second"
    assert all(0 < mhz <= log.max_mhz for _, mhz, _ in log.samples)


def _epochs(ms, spread=0.01):
    from helpers import timing
    return timing.Timing(tuple(ms * 1e-3 * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)))


@pytest.mark.parametrize("clock_ratio, says", [
    (3.67, ", at a clock 3.67× lower, which can stretch a kernel by as much;"),   # a run where the GPU clocked down
    (1.20, ", at a clock 1.20× lower, which can stretch a kernel by as much;"),   # beyond the 15 % margin
    (1.10, ", at about the same clock (1.10× lower, within the 15 % we call the same);"),
    (1.0, ", at the same clock;"),                                                # the next run: it did not
    (0.88, ", at about the same clock (1.14× higher, within the 15 % we call the same);"),
    (0.85, ", at a clock 1.18× higher;"),
    (None, " the back-to-back median;"),                                         # the clock not sampled
])
def test_account_states_the_run_and_judges_nothing(clock_ratio, says):
    loop, steady = _epochs(50.0), _epochs(20.0)
    text = account(loop, steady, clock_ratio)
    assert text.startswith(f"the training loop's epochs took {loop.text()} against {steady.text()} back to back, "
                           "2.50× the back-to-back median")
    assert says in text and text.endswith("so these figures hold for this run only")
    assert "no gap" not in text and "explain" not in text               # no verdict: it flipped between runs
    if clock_ratio:
        assert text.count(f"{max(clock_ratio, 1 / clock_ratio):.2f}×") <= 1  # the clock's figure at most once


def test_account_gives_the_ratio_whichever_way_it_goes():
    assert "0.90× the back-to-back median" in account(_epochs(18.0), _epochs(20.0), 1.0)


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




@pytest.mark.parametrize("ratio, words", [(1.10, "a clock 1.10× lower"), (0.85, "a clock 1.18× higher"),
                                          (1.001, "the same clock"), (0.999, "the same clock")])
def test_clock_words_say_which_way_with_the_figure_of_that_way(ratio, words):
    from helpers.frequency import clock_words
    assert clock_words(ratio) == words
    text = account(_epochs(50.0), _epochs(20.0), ratio)
    assert words.removeprefix("a clock ") in text and "clock (a clock" not in text


def test_account_ratio_is_the_printed_medians():
    """20.16 ms prints as 20.2 ms beside 19.7 ms: 20.2 / 19.7 = 1.025..., so 1.03×, where the unrounded medians
    give 1.02×."""
    from helpers import timing
    loop, steady = (timing.Timing(tuple(m * (1 + 0.01 * k) for k in (-1, -0.5, 0, 0.5, 1))) for m in (20.16e-3, 19.7e-3))
    assert loop.text().startswith("20.2 ms") and steady.text().startswith("19.7 ms")
    assert "1.03× the back-to-back median" in account(loop, steady, None)


@pytest.mark.parametrize("fast, slow, printed, ratio", [
    (1980.0, 517.5, "518", "3.82"),   # 1980 / 518 = 3.822; the unrounded 1980 / 517.5 = 3.826 would print 3.83
    (1980.0, 518.4, "518", "3.82"),   # the same printed figures, the same ratio
    (1980.0, 540.0, "540", "3.67"),   # rounding changes nothing here
])
def test_clock_ratio_is_the_one_of_the_printed_clocks(fast, slow, printed, ratio):
    from helpers import frequency
    assert frequency.mhz_text(slow) == printed
    r = frequency.clock_ratio(fast, slow)
    assert r == Decimal(frequency.mhz_text(fast)) / Decimal(printed)
    text = account(_epochs(50.0), _epochs(20.0), r)
    assert f", at a clock {ratio}× lower, which can stretch a kernel by as much;" in text


def test_clock_ratio_of_an_unsampled_clock_is_none():
    from helpers import frequency
    assert frequency.clock_ratio(None, 518.0) is None and frequency.clock_ratio(1980.0, None) is None


@pytest.mark.parametrize("fast, slow, words", [
    (1150.0, 1000.4, "a clock 1.15× lower, which can stretch"),       # printed 1150 / 1000: at the 15 % margin
    (1140.0, 1000.4, "about the same clock (1.14× lower, within the 15 %")])
def test_account_judges_the_margin_on_the_printed_clocks(fast, slow, words):
    """15 % margin, a clock named lower from 1.15× on: 1150 against 1000.4 MHz, printed as 1000, is exactly 1.15
    (the unrounded 1.1495 would have been within the margin); 1140 against it is 1.14, within."""
    from helpers import frequency
    assert words in account(_epochs(50.0), _epochs(20.0), frequency.clock_ratio(fast, slow))


@pytest.mark.parametrize("fast, slow, words", [
    (1980.0, 1722.0, "a clock 1.15× lower, which can stretch"),     # 1.1498, printed 1.15: named lower, as 1.15 is
    (1980.0, 1721.4, "a clock 1.15× lower, which can stretch"),     # printed 1721: 1.1505, the same printed figure
    (1980.0, 1731.0, "about the same clock (1.14× lower, within the 15 %"),   # 1.1438, printed 1.14: within
    (1722.0, 1980.0, "at a clock 1.15× higher;"),                   # 1 / 0.86970 = 1.1498, printed 1.15: beyond
    (1732.0, 1980.0, "about the same clock (1.14× higher, within the 15 %")])
def test_account_judges_the_margin_on_the_ratio_as_printed(fast, slow, words):
    """One printed ratio, one outcome: 1980 against 1722 MHz is 1.1498 unrounded, within 15 %, but prints 1.15,
    as 1980 against 1721 (1.1505) does; both are named lower. The same holds the other way, for a higher clock."""
    from helpers import frequency
    text = account(_epochs(50.0), _epochs(20.0), frequency.clock_ratio(fast, slow))
    assert words in text
    assert not ("1.15×" in text and "within" in text)


@pytest.mark.parametrize("mhz, printed", [(516.5, "517"), (516.49, "516"), (517.5, "518"), (1980.0, "1980")])
def test_mhz_text_rounds_half_up(mhz, printed):
    """516.5 MHz prints 517, as a reader rounds it (Python's :.0f rounds half to even: 516); 516.49 prints 516."""
    from helpers import frequency
    assert frequency.mhz_text(mhz) == printed

"""The sentences notebook 05 prints from its measurements, each tried with made-up numbers on both sides of
its threshold, so that a sentence can never contradict the figures printed beside it."""

import pytest

from helpers import frequency
from helpers.bench import profile, train


# a step: which share of it is arithmetic, and who sets the pace ------------------------------------------

def test_step_verdict_arithmetic_under_half_is_not_called_dominant():
    # the figures an H100 printed: kernels 40.2 µs in all, 6 empty dispatches 15.0 µs, step 57.2, Python 32.9
    text = profile.step_verdict(step=57.2e-6, kernel_total=40.2e-6, fixed=15.0e-6, issue=32.9e-6)
    assert "44 %" in text and "less than half" in text
    assert "dominates" not in text
    assert "26 %" in text and "30 %" in text          # fixed cost, and the rest
    assert "the GPU sets the pace" in text           # Python queues a step faster than the GPU runs it


def test_step_verdict_arithmetic_over_half():
    text = profile.step_verdict(step=50e-6, kernel_total=45e-6, fixed=5e-6, issue=10e-6)
    assert "80 %" in text and "more than half" in text
    assert "less than half" not in text


def test_step_verdict_python_slower_than_the_gpu_sets_the_pace():
    text = profile.step_verdict(step=60e-6, kernel_total=30e-6, fixed=12e-6, issue=58e-6)
    assert "Python sets the pace" in text
    assert "the GPU sets the pace" not in text


def test_step_verdict_kernels_that_overlap_leave_no_negative_rest():
    # each kernel timed alone can sum to more than the step (neighbours overlap in a real step)
    text = profile.step_verdict(step=40e-6, kernel_total=44e-6, fixed=10e-6, issue=20e-6)
    assert "-" not in text.split("µs")[0]          # no negative share anywhere
    assert "overlap" in text
    assert "77 %" in text and "23 %" in text       # shares of the kernels' sum, never over 100 %
    assert "85 %" not in text


def test_step_verdict_far_over_the_step_gives_no_share_over_a_hundred():
    # a software renderer: kernels one by one 180 ms against a 154 ms step
    text = profile.step_verdict(step=0.154, kernel_total=0.180, fixed=6e-5, issue=0.19)
    assert "117 %" not in text and "100 %" in text


def test_step_verdict_refuses_a_step_of_no_time():
    with pytest.raises(ValueError, match="step"):
        profile.step_verdict(step=0.0, kernel_total=1e-6, fixed=1e-6, issue=1e-6)


# nvidia-smi's busy figure: a comment where it disagrees with the clock ------------------------------------

def test_busy_note_far_below_back_to_back_explains_the_sample_period():
    text = frequency.busy_note(loop_busy=0.0, steady_busy=70.0)
    assert "0 %" in text and "70 %" in text
    assert "sample period" in text and "not" in text


def test_busy_note_close_to_back_to_back_says_so():
    text = frequency.busy_note(loop_busy=65.0, steady_busy=70.0)
    assert "65 %" in text and "70 %" in text
    assert "about as busy" in text
    assert "sample period" not in text


def test_busy_note_without_samples():
    assert "not sampled" in frequency.busy_note(None, 70.0)


# the mapped-read experiment (appendix): a conclusion only from the figure it names ------------------------

def test_mapped_read_verdict_small_effect_is_called_small():
    # an H100 printed: worst kernel 1.4×, the step's kernels 1.06×, staged 1.00×
    text = profile.mapped_read_verdict(worst_name="dense_backward_1_relu.comp", worst=1.35, step=1.06, staged=1.00)
    assert "1.06×" in text and "1.35×" in text
    assert "within" in text                         # the step's kernels moved by less than the margin
    assert "left the buffers" not in text           # no claim about what the driver did


def test_mapped_read_verdict_large_effect_is_called_a_slowdown():
    text = profile.mapped_read_verdict(worst_name="gather_backward_1_u8.comp", worst=3.0, step=1.8, staged=1.01)
    assert "1.80×" in text and "slower" in text
    assert "within" not in text.split(";")[0]


def test_mapped_read_verdict_staged_reads_that_cost_are_reported():
    text = profile.mapped_read_verdict(worst_name="x.comp", worst=1.5, step=1.3, staged=1.25)
    assert "staged reads" in text and "1.25×" in text and "slower" in text.split(";")[-1]


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

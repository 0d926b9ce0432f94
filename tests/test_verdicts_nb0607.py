"""The sentences notebooks 06 and 07 print from their measurements, on made-up numbers either side of each
threshold, so a printed verdict can never contradict the numbers printed beside it; and which shaders
FusedMLP picks when given no layout (a rule of the net's shape, no GPU needed to check it)."""

import pytest

from helpers import fused_mlp
from helpers.bench import dropout as bench_dropout
from helpers.bench import train as bench_train


# --- notebook 06, section 4: is an epoch mostly kernel time? ---------------------------------------------

@pytest.mark.parametrize("share, words", [(0.60, "mostly kernel time"), (0.56, "mostly kernel time"),
                                          (0.54, "about half"), (0.50, "about half"), (0.46, "about half"),
                                          (0.44, "mostly fixed costs"), (0.20, "mostly fixed costs")])
def test_kernel_share_either_side_of_half(share, words):
    sentence = fused_mlp.kernel_share("fused", share)
    assert words in sentence and f"{share:.0%}" in sentence


def test_kernel_share_at_half_is_not_called_mostly_fixed_costs():
    """The verdict that said 'mostly fixed costs and waiting' of kernels at 50 % of the epoch."""
    assert "mostly" not in fused_mlp.kernel_share("notebook 05's trainer", 0.50)


def test_kernel_share_refuses_a_share_outside_0_1():
    with pytest.raises(ValueError, match="share"):
        fused_mlp.kernel_share("fused", 1.5)


# --- notebook 06, section 6: the training loop's epochs against back-to-back ones ----------------------------

def test_loop_order_agrees_with_back_to_back():
    s = fused_mlp.loop_order(loop_fused=0.0130, loop_unfused=0.0240, back_fused=0.0126, back_unfused=0.0231)
    assert "the same order" in s and "1.8× faster" in s and "reverses" not in s


def test_loop_order_reversed_says_so_with_both_ratios():
    """The case the committed run printed without comment: fused 26.1 ms in the loop against 24.4 ms unfused,
    while back to back the fused epoch was 1.83× faster."""
    s = fused_mlp.loop_order(loop_fused=0.0261, loop_unfused=0.0244, back_fused=0.0126, back_unfused=0.02307)
    assert "reverses" in s and "1.1× slower" in s and "1.8× faster" in s
    assert "2.07×" in s and "1.06×" in s        # each trainer's loop epoch against its back-to-back one


def test_loop_order_just_either_side_of_equal():
    faster = fused_mlp.loop_order(loop_fused=0.0199, loop_unfused=0.0200, back_fused=0.010, back_unfused=0.020)
    slower = fused_mlp.loop_order(loop_fused=0.0201, loop_unfused=0.0200, back_fused=0.010, back_unfused=0.020)
    assert "the same order" in faster and "reverses" in slower


@pytest.mark.parametrize("loop, back, words", [(0.0596, 0.0292, "2.04× a back-to-back epoch"),
                                               (0.0340, 0.0292, "1.16× a back-to-back epoch"),
                                               (0.0330, 0.0292, "about a back-to-back epoch"),
                                               (0.0292, 0.0292, "about a back-to-back epoch")])
def test_loop_slowdown_either_side_of_15_percent(loop, back, words):
    s = fused_mlp.loop_slowdown(loop, back)
    assert words in s
    assert ("notebook 05" in s) == ("about" not in words)   # the pointer to the clock lesson only for a gap


# --- notebook 06, section 8 and What we measured: the fused epoch against PyTorch -------------------------

def test_against_pytorch_faster_and_slower():
    rows = [{"name": "fused 784-128-10 SGD", "ms": 12.6}, {"name": "PyTorch eager 784-128-10 SGD", "ms": 630.0},
            {"name": "PyTorch CUDA graph per step 784-128-10 SGD", "ms": 36.7}]
    s = fused_mlp.against_pytorch(rows, "NVIDIA H100")
    assert "12.6 ms" in s and "36.7 ms" in s and "2.9× faster" in s and "CUDA graph per step" in s
    assert "NVIDIA H100" in s
    rows[2]["ms"] = 10.0
    assert "1.3× slower" in fused_mlp.against_pytorch(rows, "card")


def test_pytorch_eager_row_is_the_fused_sections_row():
    rows = [{"name": "fused 784-128-10 SGD", "ms": 12.6}, {"name": "PyTorch eager 784-128-10 SGD", "ms": 630.0}]
    assert fused_mlp.bench_row(rows, bench_train.EAGER_ROW)["ms"] == 630.0
    with pytest.raises(KeyError, match="no row"):
        fused_mlp.bench_row(rows, "nothing like it")


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

@pytest.mark.parametrize("mean, lowest, words", [(98.96, 98.95, "reached"), (98.80, 98.70, "reached"),
                                                 (98.79, 98.70, "missed")])
def test_goal_sentence_either_side_of_the_goal(mean, lowest, words):
    s = bench_dropout.goal_sentence(mean, 0.02, lowest, goal=98.8)
    assert words in s and f"{mean:.2f} %" in s


@pytest.mark.parametrize("longest, budget, words", [(57.9, 60.0, "within"), (60.0, 60.0, "within"),
                                                    (60.1, 60.0, "over")])
def test_budget_sentence_either_side_of_the_budget(longest, budget, words):
    assert words in bench_dropout.budget_sentence(longest, budget)


@pytest.mark.parametrize("extra, dropout_s, words", [(0.27, 30.5e-6, ["+27 %", "30.5 µs more"]),
                                                     (-0.05, -1.5e-6, ["-5 %", "1.5 µs less"])])
def test_cost_sentence_signs(extra, dropout_s, words):
    s = bench_dropout.cost_sentence(extra, dropout_s, 6.9e-6)
    assert all(w in s for w in words) and "6.9 µs" in s

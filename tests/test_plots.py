"""The figures' layout rules that can be checked without looking: a label written after a bar ends inside
the axes (past it, it would run under the legend beside the axes)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from helpers import plots  # noqa: E402


@pytest.mark.parametrize("rows", [
    {"fused 784-128-10, 2 dispatches a step": {"kernel": 7.2e-3, "dispatch": 2.3e-3, "between dispatches": 1.3e-3,
                                               "readback": 0.6e-3, "upload": 0.051e-3},
     "dispatch floor: the same empty dispatches": {"dispatch": 2.47e-3}},
    {"a": {"kernel": 1e-3}, "b": {"kernel": 1e-3, "upload": 1e-6, "readback": 2e-6, "dispatch": 3e-6}},
])
def test_every_label_after_a_bar_ends_inside_the_axes(rows):
    fig, _ = plots.epoch_bars(rows, title="a long title, as the notebooks give theirs, for the axes to be narrow")
    fig.canvas.draw()
    ax = fig.axes[0]
    right = ax.get_window_extent().x1
    ends = [t.get_window_extent().x1 for t in ax.texts]
    assert ends and max(ends) <= right, f"a label ends at {max(ends):.0f} px, past the axes' {right:.0f} px"

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
    {"fused 784-128-10, 2 dispatches a step": {"kernel": 7.2e-3, "dispatch": 2.4e-3, "between dispatches": 1.2e-3,
                                               "readback": 0.7e-3, "upload": 0.076e-3, "unaccounted": -1.18e-3},
     "dispatch floor: the same empty dispatches": {"dispatch": 2.48e-3}},
])
def test_every_label_after_a_bar_ends_inside_the_axes(rows):
    fig, _ = plots.epoch_bars(rows, title="a long title, as the notebooks give theirs, for the axes to be narrow")
    fig.canvas.draw()
    ax = fig.axes[0]
    right = ax.get_window_extent().x1
    ends = [t.get_window_extent().x1 for t in ax.texts]
    assert ends and max(ends) <= right, f"a label ends at {max(ends):.0f} px, past the axes' {right:.0f} px"


def test_phase_colours_are_told_apart_at_a_glance():
    """Every two phases a figure can show side by side differ clearly in colour (an RGB distance of at least
    45 of 441): "python" and "between dispatches" were once two nearly equal greys in notebook 08's step."""
    import itertools

    import numpy as np

    rgb = {name: np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)]) for name, c in plots.PHASE_COLOURS.items()}
    close = [(a, b) for a, b in itertools.combinations(rgb, 2) if np.linalg.norm(rgb[a] - rgb[b]) < 45]
    assert not close, f"phases too close in colour: {close}"


def test_a_bar_whose_parts_overrun_the_whole_says_both():
    """Parts measured apart can add up to more than the epoch; the bar (the parts that can be drawn) then
    names its sum and the whole, so it is never read as the epoch's time. A bar with no negative part keeps
    its total."""
    rows = {"fused": {"kernel": 7.2e-3, "dispatch": 2.4e-3, "readback": 0.7e-3, "unaccounted": -1.2e-3},
            "floor": {"dispatch": 2.48e-3}}
    fig, notes = plots.epoch_bars(rows, title="one epoch")
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert any("10.3 ms in parts,\n 9.10 ms the whole" in label for label in labels), labels
    assert any(label.strip() == "2.48 ms" for label in labels), labels
    assert "unaccounted -1.2 ms" in notes["fused"]

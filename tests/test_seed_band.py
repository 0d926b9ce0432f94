"""plots.seed_band (notebook 07): several seeds as one median line and one lowest-to-highest band on one axis."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import plots  # noqa: E402


def test_one_axis_median_line_and_band_up_to_the_shortest_seed():
    series = {"seed 0": (np.arange(1, 6), [1.0, 0.5, 0.2, 0.1, 0.05]), "seed 1": (np.arange(1, 6), [1.2, 0.6, 0.3, 0.1, 0.04]),
              "seed 2": (np.arange(1, 5), [0.8, 0.4, 0.25, 0.12])}                  # stopped one epoch early
    fig = plots.seed_band(series, ylabel="loss", log=True)
    (ax,) = fig.axes
    (line,) = ax.get_lines()
    assert np.allclose(line.get_xdata(), [1, 2, 3, 4]) and np.allclose(line.get_ydata(), [1.0, 0.5, 0.25, 0.1])
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.1) and band[:, 1].max() == pytest.approx(1.2)
    assert ax.get_yscale() == "log"


def test_seeds_sampled_at_other_points_are_refused():
    with pytest.raises(ValueError, match="same xs"):
        plots.seed_band({"a": ([1, 2, 3], [1, 2, 3]), "b": ([1, 3, 5], [1, 2, 3])}, ylabel="loss")

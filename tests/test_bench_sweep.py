"""helpers/bench/sweep.py, the fused kernels' tuning tool: its kernel sweep on a small net with random
images (no MNIST needed), on whatever GL this machine has. The figures are not judged, only their shape."""

import numpy as np
import pytest

from helpers import fused_mlp, reference
from helpers.bench import sweep


def trainer(ctx, **options):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (300, 784), dtype=np.uint8)
    labels = rng.integers(0, 10, 300).astype(np.uint32)
    return fused_mlp.FusedMLP(ctx, reference.init_params(784, 32, 10, seed=0), images, labels,
                              optimizer=reference.SGD(0.1), batch_size=128, seed=0, **options)


def test_the_plain_way_sweeps_the_plain_pair(ctx):
    t = trainer(ctx, **sweep.SWEEP["fused"][0])
    try:
        assert (t.forward.name, t.backward.name) == (fused_mlp.FORWARD, fused_mlp.BACKWARD)
    finally:
        t.release()


def test_kernel_sweep_times_every_set_that_compiles_and_skips_the_rest(ctx):
    t = trainer(ctx, **sweep.SWEEP["fused"][0])
    grids = {"forward": [dict(S=1, KS=8), dict(S=2, KS=16)],
             "backward": [dict(BC=32, TJ=32, TKT=8, KPT=2), dict(BC=32, TJ=2000, TKT=8, KPT=2)]}   # TJ 2000: too many threads
    try:
        rows = sweep.kernel_sweep(ctx, t, repeat=1, grids=grids, rounds=2)
    finally:
        t.release()
    assert [(r["kernel"], r["tunables"]) for r in rows] == [("forward", grids["forward"][0]),
                                                           ("forward", grids["forward"][1]),
                                                           ("backward", grids["backward"][0])]
    for r in rows:
        assert 0 < r["us_low"] <= r["us"] <= r["us_high"] and r["repeats"] == 2 and r["groups"] >= 1

"""helpers/bench/inference.py on a few images: every upload way delivers the images, the table reads old and
new rows (the committed H100 JSON predates the ceiling rows), and the ceiling says when torch is missing."""

import json
from pathlib import Path

import numpy as np

from helpers import reference
from helpers.bench import inference as bench_inference

SAVED = Path(__file__).resolve().parent.parent / "notebooks" / "results" / "bench-h100.json"


def test_measure_times_every_upload_way_and_the_ceiling(ctx, rng):
    images = rng.integers(0, 256, (40, 28, 28), dtype=np.uint8)
    rows = bench_inference.measure(ctx, reference.init_params(seed=0), images, repeat=1)
    names = [r["what"] for r in rows]
    assert set(bench_inference.UPLOADS) <= set(names)       # each was checked by a read-back before timing
    assert bench_inference.CEILING in names
    ceiling = next(r for r in rows if r["what"] == bench_inference.CEILING)
    assert ceiling["seconds"] is None or ceiling["gbps"] > 0
    text = bench_inference.table(rows)
    assert "fastest float32 upload: upload float32" in text
    bench_inference.phases(rows)


def test_table_reads_the_committed_rows():
    if SAVED.is_file():
        rows = json.loads(SAVED.read_text())["benches"]["inference"]
        assert "fastest float32 upload" in bench_inference.table(rows)


def test_table_judges_the_ceiling_share():
    rows = [{"what": w, "seconds": s, "clock": c, "images": 10_000, **({"bytes": b, "gbps": b / s / 1e9} if b else {})}
            for w, s, c, b in [("upload float32 into existing buffer", 2e-3, "wall", 31_360_000),
                               ("upload float32 via a staging buffer + GPU copy", 1e-3, "wall", 31_360_000),
                               (bench_inference.CEILING, 0.8e-3, "wall", 31_360_000),
                               ("kernels, float32 input (2 dispatches)", 1e-4, "GPU timer query", None),
                               ("kernels, uint8 input (2 dispatches)", 1e-4, "GPU timer query", None)]]
    text = bench_inference.table(rows)
    assert "fastest float32 upload: upload float32 via a staging buffer + GPU copy" in text
    assert "ceiling: 80% met" in text

"""helpers/bench/inference.py on a few images: every upload way delivers the images, the table reads old and
new rows (the committed JSON predates the ceiling rows), and the ceiling says when torch is missing.
The pipelined upload through the mapped buffer (several threads, pieces) delivers every byte, last piece short."""

import json

import numpy as np
import pytest

from helpers import reference
from helpers.bench import inference as bench_inference
from helpers.bench.fused import RESULTS_FILE

SAVED = RESULTS_FILE
PIPELINED = (f"upload float32 via a persistently mapped buffer, {bench_inference.COPY_THREADS} threads, "
             "pipelined + GPU copy")


def mapped_staging(ctx, nbytes, threads):
    try:
        return bench_inference.MappedStaging(ctx, nbytes, threads)
    except OSError as exc:       # the bench prints this and marks the mapped rows "not available here"
        pytest.skip(f"no persistently mapped buffer here: {exc}")


def test_write_pipelined_delivers_every_byte(ctx, rng):
    X = rng.standard_normal((37, 70)).astype(np.float32)     # 10,360 bytes: 10 pieces of 1,000 and one of 360
    stage = mapped_staging(ctx, X.nbytes + 100, threads=3)
    buffer = ctx.buffer(np.full(X.size + 16, np.nan, np.float32))   # poisoned, and longer than X
    try:
        stage.write_pipelined(X, buffer, chunk=1000)        # pieces split floats: bytes are what is copied
        got = np.frombuffer(buffer.read(), np.float32)
        np.testing.assert_array_equal(got[:X.size].reshape(X.shape), X)
        assert np.isnan(got[X.size:]).all()                 # nothing written past the array
        Y = X[::-1] * 2 + 1                                 # the staging buffer is free again: write it over
        stage.write_pipelined(Y, buffer, chunk=1000)
        np.testing.assert_array_equal(np.frombuffer(buffer.read(), np.float32)[:X.size].reshape(X.shape), Y)
        with pytest.raises(ValueError):
            stage.write_pipelined(np.zeros(X.size + 100, np.float32), buffer)
        stage.array[:] = 0
        stage.fill(X, chunk=1000)                           # the CPU copy alone: into the mapped memory only
        np.testing.assert_array_equal(stage.array[:X.nbytes].view(np.float32).reshape(X.shape), X)
        assert not stage.array[X.nbytes:].any()
        with pytest.raises(ValueError):
            stage.fill(np.zeros(X.size + 100, np.float32))
    finally:
        buffer.release()
        stage.release()


def test_measure_times_every_upload_way_and_the_ceiling(ctx, rng):
    images = rng.integers(0, 256, (40, 28, 28), dtype=np.uint8)
    rows = bench_inference.measure(ctx, reference.init_params(seed=0), images, repeat=1)
    names = [r["what"] for r in rows]
    assert set(bench_inference.UPLOADS) <= set(names)       # each was checked by a read-back before timing
    assert PIPELINED in names and PIPELINED.startswith("upload float32 via")   # a candidate for the fastest
    assert bench_inference.COPY_ALONE in names and not bench_inference.COPY_ALONE.startswith("upload")  # not one
    assert bench_inference.CEILING in names
    ceiling = next(r for r in rows if r["what"] == bench_inference.CEILING)
    assert ceiling["seconds"] is None or ceiling["gbps"] > 0
    text = bench_inference.table(rows)
    assert "float32 upload of highest median rate: upload float32" in text
    bench_inference.phases(rows)


def test_table_reads_the_committed_rows():
    if SAVED.is_file():
        rows = json.loads(SAVED.read_text())["benches"]["inference"]
        assert "float32 upload of highest median rate" in bench_inference.table(rows)


def test_table_gives_the_ceiling_share():
    rows = [{"what": w, "seconds": s, "clock": c, "images": 10_000, **({"bytes": b, "gbps": b / s / 1e9} if b else {})}
            for w, s, c, b in [("upload float32 into existing buffer", 2e-3, "wall", 31_360_000),
                               ("upload float32 via a staging buffer + GPU copy", 1e-3, "wall", 31_360_000),
                               (bench_inference.CEILING, 0.8e-3, "wall", 31_360_000),
                               ("kernels, float32 input (2 dispatches)", 1e-4, "GPU timer query", None),
                               ("kernels, uint8 input (2 dispatches)", 1e-4, "GPU timer query", None)]]
    text = bench_inference.table(rows)
    assert "float32 upload of highest median rate: upload float32 via a staging buffer + GPU copy, 31.36 GB/s, 80% of the ceiling" in text


def test_table_gives_a_readback_no_share_of_the_host_to_device_ceiling():
    rows = [{"what": w, "seconds": s, "clock": "wall", "images": 10_000, "bytes": b, "gbps": b / s / 1e9}
            for w, s, b in [("upload float32 into existing buffer", 2e-3, 31_360_000),
                            (bench_inference.CEILING, 0.8e-3, 31_360_000),
                            ("readback into a new array", 4e-5, 400_000)]]
    lines = {line.split("  ")[0]: line for line in bench_inference.table(rows).splitlines()}
    assert lines["upload float32 into existing buffer"].split()[-2] == "40%"          # 15.68 of 39.2 GB/s
    assert "%" not in lines["readback into a new array"]                               # the other direction
    assert "a readback goes the other way and gets no share" in bench_inference.table(rows)


def test_table_counts_the_pipelined_row_among_the_uploads():
    rows = [{"what": w, "seconds": s, "clock": "wall", "images": 10_000, "bytes": 31_360_000,
             "gbps": 31_360_000 / s / 1e9} for w, s in [("upload float32 into existing buffer", 2e-3),
                                                        (PIPELINED, 0.9e-3), (bench_inference.CEILING, 0.6e-3)]]
    text = bench_inference.table(rows + [{"what": w, "seconds": 1e-4, "clock": "GPU timer query", "images": 10_000}
                                         for w in ("kernels, float32 input (2 dispatches)",
                                                   "kernels, uint8 input (2 dispatches)")])
    assert f"float32 upload of highest median rate: {PIPELINED}" in text and "67% of the ceiling" in text
    assert "CPU copy alone" not in text                     # no such row: no line about it
    for seconds, words in ((1.2e-3, "50% of the ceiling, before any GPU work"),
                           (0.8e-3, "75% of the ceiling, before any GPU work")):
        alone = {"what": bench_inference.COPY_ALONE, "seconds": seconds, "clock": "wall", "images": 10_000,
                 "bytes": 31_360_000, "gbps": 31_360_000 / seconds / 1e9}
        text = bench_inference.table(rows + [alone] + [{"what": w, "seconds": 1e-4, "clock": "GPU timer query",
                                                        "images": 10_000} for w in ("kernels, float32 input (2 dispatches)",
                                                                                    "kernels, uint8 input (2 dispatches)")])
        assert f"the pipelined upload's CPU copy alone reaches {words}" in text
        assert f"float32 upload of highest median rate: {PIPELINED}" in text    # the copy alone is not an upload
    columns = {line.rindex("  wall") for line in text.splitlines() if line.startswith(("upload", "host"))}
    assert len(columns) == 1                                # the long row name widens the column, for every row


def test_main_rows_and_other_uploads():
    rows = [{"what": w, "seconds": s, "clock": "wall", "images": 10_000, "bytes": 31_360_000,
             "gbps": 31_360_000 / s / 1e9} for w, s in [("upload float32 into existing buffer", 2e-3),
                                                        (PIPELINED, 1e-3), (bench_inference.CEILING, 0.5e-3)]]
    assert [r["what"] for r in bench_inference.main_rows(rows)] == ["upload float32 into existing buffer",
                                                                    bench_inference.CEILING]
    text = bench_inference.other_uploads(rows)
    assert "31.36" in text and "15.68" in text and "62.72" in text and "reaches 50% of it" in text
    assert "ahead of the others beyond the noise and the 5 % margin" in text
    assert bench_inference.other_uploads(rows[:1]) is None


def test_other_uploads_names_every_way_level_with_the_fastest():
    """Ways that compare() cannot tell from the fastest (here no band stored: medians within the 5 % margin) are
    level: the sentence names them with it, not one of them as the fastest, and gives the range of their shares
    of the ceiling, lowest to highest, as the table prints them (of_ceiling). A way beyond the margin leaves the
    fastest named alone, with its share."""
    orphaned = "upload float32 into existing buffer, orphaned first"
    bytes_ = 31_360_000
    rows = [{"what": w, "seconds": bytes_ / g / 1e9, "clock": "wall", "gbps": g} for w, g in [
        ("upload float32 into existing buffer", 10.0), (orphaned, 14.01), (PIPELINED, 13.79),   # 1.016x: level
        (bench_inference.CEILING, 52.7)]]
    level = bench_inference.other_uploads(rows)
    assert (f"the fastest ways are level ({orphaned.removeprefix('upload float32 ')}; "
            f"{PIPELINED.removeprefix('upload float32 ')}: the same within the noise or the 5 % margin)") in level
    assert "and they reach 26% to 27% of it" in level       # 13.79 / 52.70 = 26.2 %, 14.01 / 52.70 = 26.6 %
    assert "quickest" not in level                           # no one of the level ways picked as the quickest
    assert bench_inference.of_ceiling(rows[1], rows[3]) == "27%"
    rows[2].update(gbps=13.0, seconds=bytes_ / 13.0e9)                         # 1.08x: beyond the margin
    ahead = bench_inference.other_uploads(rows)
    assert "are level" not in ahead and ("the fastest, into existing buffer, orphaned first, ahead of the others beyond "
                                         "the noise and the 5 % margin, reaches 27% of it") in ahead


def test_other_uploads_prints_each_rate_with_its_band():
    """Each GB/s comes with its 20–80 % band, the rate's: the band's longer time (seconds_high) is its lower
    GB/s. A band that two decimals cannot tell apart gets more; a row stored with no band says so."""
    bytes_ = 31_360_000
    rows = [{"what": w, "seconds": s, "seconds_low": lo, "seconds_high": hi, "clock": "wall", "bytes": bytes_,
             "gbps": bytes_ / s / 1e9} for w, s, lo, hi in [
        ("upload float32 into existing buffer", 2e-3, 1.6e-3, 2.5e-3),               # 15.68 (12.54–19.60)
        (PIPELINED, 1e-3, 0.99999e-3, 1.00001e-3),                                   # 31.36 (31.3597–31.3603)
        (bench_inference.CEILING, 0.5e-3, 0.49e-3, 0.52e-3)]]                        # 62.72 (60.31–64.00)
    text = bench_inference.other_uploads(rows)
    assert "in GB/s (median and 20–80 % band)" in text
    assert "against buffer.write's 15.68 (12.54–19.60)" in text
    assert f"{PIPELINED.removeprefix('upload float32 ')} 31.3600 (31.3597–31.3603)" in text
    assert "a copy from pinned memory's 62.72 (60.31–64.00), the limit" in text
    assert "the fastest, " in text and "reaches 50% of it" in text        # the judgement is the timings', as before
    assert bench_inference.gbps_text({"seconds": 2e-3, "gbps": 15.68}) == "15.68 (no spread recorded)"
    assert bench_inference.gbps_text({"seconds": 2e-3, "seconds_low": 2e-3, "seconds_high": 2e-3,
                                      "gbps": 15.68}) == "15.68 (no spread recorded)"


def test_mapped_output_timings_times_both_buffers(ctx, rng):
    from helpers import inference, timing
    params = reference.init_params(seed=0)
    fwd = inference.BatchedForward(ctx, params, 16)
    fwd.upload(rng.random((16, 784), dtype=np.float32))
    plain, mapped = inference.mapped_output_timings(fwd, timing.Clock(ctx), 16, reads=2, repeat=3)
    assert plain.median > 0 and mapped.median > 0 and len(plain.samples) == len(mapped.samples) == 3
    fwd.release()


def test_stacked_bars_name_a_thin_segment_in_text_not_in_the_legend():
    import matplotlib
    matplotlib.use("Agg")
    from helpers import plots
    rows = {"float32": {"upload": 2.6e-3, "kernel": 0.12e-3, "readback": 0.045e-3}, "NumPy": {"numpy": 9.7e-3}}
    fig = plots.stacked_bars(rows, scale=1e3, unit="ms")
    ax = fig.axes[0]     # the kernel, 1.2 % of the longest bar, can be seen: in the legend; the readback, 0.5 %: in words
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["upload", "kernel", "numpy"]
    labels = " ".join(t.get_text() for t in ax.texts)
    assert "kernel 0.12" not in labels and "readback 0.045" in labels
    rows["float32"]["kernel"] = 0.09e-3                                   # 0.9 %: too thin to see
    thin = plots.stacked_bars(rows, scale=1e3, unit="ms").axes[0]
    assert [t.get_text() for t in thin.get_legend().get_texts()] == ["upload", "numpy"]
    assert "kernel 0.09" in " ".join(t.get_text() for t in thin.texts)
    wide = plots.stacked_bars({"a": {"upload": 1.0, "kernel": 1.0}}, small=0.02)
    assert [t.get_text() for t in wide.axes[0].get_legend().get_texts()] == ["upload", "kernel"]


def test_a_share_of_the_ceiling_is_the_one_of_the_printed_gb_s():
    """10.1951 GB/s prints as 10.20, and 10.20 / 40.00 is 25.5 %, 26 % half up (the unrounded 25.49 % gives 25)."""
    from helpers.bench import inference as bench_inference
    assert bench_inference.of_ceiling({"gbps": 10.1951}, {"gbps": 40.0}) == "26%"
    assert bench_inference.of_ceiling({"gbps": 10.1949}, {"gbps": 40.0}) == "25%"


def test_record_round_trips_quote_the_committed_table():
    """Notebook 03 prints the committed record's table and, under it, inference.record_round_trips: every
    figure the sentence quotes is the one the table prints on the same row, and it says whose figures they are."""
    import re

    from helpers import inference
    rows = json.loads(SAVED.read_text())["benches"]["inference"]
    said = inference.record_round_trips(rows, "the committed benchmark record")
    lines = bench_inference.table(bench_inference.main_rows(rows), full=False).splitlines()
    quoted = 0
    for what in (inference.RECORD_NUMPY, *inference.RECORD_GPU.values()):
        if bench_inference.timing_of(rows, what) is not None:
            line = next(line for line in lines if line.startswith(what + " "))
            figure = re.search(r"\S+ ms \([^)]*\)", line[len(what):]).group(0)    # '3.1 ms (3–3.42)'
            assert f"({figure})" in said or f"took {figure}" in said, (what, figure)
            quoted += 1
    assert quoted >= 2
    assert "these are the record's verdicts, not this run's" in said


# --- section 4's fresh buffers against reused ones (reuse_verdicts) ---------------------------------------

def _pair_rows(reused, fresh, spread=0.01, banded=True, reused_what="upload float32 into existing buffer",
               fresh_what="upload float32 into a fresh buffer"):
    def row(what, seconds):
        r = {"what": what, "seconds": seconds, "clock": "wall clock around ctx.finish()", "images": 10_000}
        if banded:
            r.update(seconds_low=seconds * (1 - spread), seconds_high=seconds * (1 + spread))
        return r
    return [row(reused_what, reused), row(fresh_what, fresh)]


@pytest.mark.parametrize("reused, fresh, outcome, words", [
    (2.14e-3, 6.2e-3, "A faster", "is 2.9× faster than making a fresh buffer of them"),     # reused faster
    (6.2e-3, 2.14e-3, "B faster", "making a fresh buffer of them (2.14 ms"),               # fresh faster
    (2.14e-3, 2.16e-3, "same within noise", "are the same within the noise we measured"),  # bands overlap
    (2.14e-3, 2.22e-3, "same within noise", "1.04× apart, within the 5 % we call the same")])  # apart, inside 5 %
def test_reuse_verdicts_on_every_side(reused, fresh, outcome, words):
    (key, v), = bench_inference.reuse_verdicts(_pair_rows(reused, fresh)).items()
    assert key == "upload" and v.outcome == outcome and words in v
    assert v.startswith("for 10,000 images, taken in turn by wall clock around ctx.finish(), ")
    assert "writing the float32 images into the existing buffer (" in v and "making a fresh buffer of them (" in v
    assert ("reusing the buffer pays here" in v) == (outcome == "A faster")
    assert ("the fresh one is faster here" in v) == (outcome == "B faster")
    assert ("neither costs nor saves" in v) == (outcome == "same within noise")


def test_reuse_verdicts_without_bands_do_not_judge():
    rows = _pair_rows(2.14e-3, 6.2e-3, banded=False)
    (v,) = bench_inference.reuse_verdicts(rows).values()
    assert v.outcome == bench_inference.NOT_JUDGED and "cannot be judged" in v
    assert "faster" not in v and "the same" not in v
    assert "2.14 ms (no spread recorded)" in v and "6.20 ms (no spread recorded)" in v
    half = [dict(rows[0], seconds_low=2.1e-3, seconds_high=2.2e-3), rows[1]]       # one row banded is not enough
    assert bench_inference.reuse_verdicts(half)["upload"].outcome == bench_inference.NOT_JUDGED


def test_reuse_verdicts_name_the_readback_and_skip_missing_rows():
    rows = _pair_rows(42.6e-6, 43.8e-6, spread=0.005, reused_what="readback into a preallocated array",
                      fresh_what="readback into a new array")
    said = bench_inference.reuse_verdicts(rows)
    assert list(said) == ["readback"]
    assert "reading the logits into the preallocated array (42.6 µs" in said["readback"]
    assert "reusing the array neither costs nor saves here" in said["readback"]
    assert bench_inference.reuse_verdicts(rows[:1]) == {}
    assert bench_inference.reuse_verdicts([dict(rows[0], seconds=None), rows[1]]) == {}


def test_reuse_verdicts_read_the_committed_record():
    if not SAVED.is_file():
        pytest.skip("no committed benchmark")
    said = bench_inference.reuse_verdicts(json.loads(SAVED.read_text())["benches"]["inference"])
    assert set(said) == {"upload", "readback"} and all("taken in turn" in v for v in said.values())


def test_measure_takes_each_fresh_and_reused_pair_in_turn(ctx, rng, monkeypatch):
    """reuse_verdicts says 'taken in turn': measure() must time both rows of each pair in one interleaved group."""
    groups = []
    interleaved = bench_inference.timing.measure_interleaved

    def recording(samples, *args, **kwargs):
        groups.append(set(samples))
        return interleaved(samples, *args, **kwargs)
    monkeypatch.setattr(bench_inference.timing, "measure_interleaved", recording)
    images = rng.integers(0, 256, (16, 28, 28), dtype=np.uint8)
    bench_inference.measure(ctx, reference.init_params(seed=0), images, repeat=1)
    for _, reused, fresh, *_ in bench_inference.REUSE_PAIRS:
        assert any({reused, fresh} <= group for group in groups), (reused, fresh, groups)


def test_sweep_rows_name_the_gpu_input(ctx, rng):
    from helpers import data, inference, timing
    params = reference.init_params(seed=0)
    images = rng.integers(0, 256, (4, 28, 28), dtype=np.uint8)
    X = data.normalise(images)
    clock = timing.Clock(ctx)
    for packed, kind, given in ((False, "float32", X), (True, "uint8", data.pack_images(images))):
        fwd = inference.BatchedForward(ctx, params, 4, packed=packed)
        try:
            rows = inference.sweep(fwd, given, [1, 4], clock, params, X_float=X, repeat=1)
        finally:
            fwd.release()
        assert [r["input"] for r in rows] == [kind, kind]
        assert inference.crossover_sentence(rows).startswith(f"with {kind} input to the GPU, ")

"""helpers.report: the README's headline rows, RESULTS.md and the figure are the committed benchmark JSON;
a JSON from a machine without PyTorch or JAX works too, its unmeasured rows left out and named."""

import copy
import json

import pytest

from helpers import report, timing
from helpers.bench.fused import RESULTS_FILE

JSON = RESULTS_FILE


def committed() -> dict:
    return report.load(JSON)


def test_readme_and_results_page_are_the_committed_json():
    record = committed()
    readme = (report.ROOT / "README.md").read_text()
    fix = f"run .venv/bin/python -m helpers.report --write-committed notebooks/results/{RESULTS_FILE.name}"
    assert report.headline(record, report.dropout_record(record)) in readme, f"README.md's results differ: {fix}"
    assert report.FULL_TABLE.read_text() == report.results_page(record), f"RESULTS.md differs: {fix}"


def test_headline_is_short_names_the_card_and_tells_the_story():
    record = committed()
    rows = report.headline_rows(record, report.dropout_record(record))
    assert 5 <= len(rows) <= report.HEADLINE_ROWS
    text = report.headline(record, report.dropout_record(record))
    assert record["device"]["renderer"].split("/")[0] in text and "RESULTS.md" in text   # the record's own card
    whats = " ".join(r[0] + r[2] for r in rows)
    for needed in ("NumPy", "kernels", "cuBLAS", "JAX", "PyTorch", "accuracy"):
        assert needed in whats, needed
    assert "wrong" not in text and "alone" not in text   # experiments stay in the full table


def without_torch(record: dict) -> dict:
    """The record as a machine without PyTorch and JAX writes it: torch rows with seconds None, no cuBLAS,
    JAX or PyTorch rows."""
    record = copy.deepcopy(record)
    benches = record["benches"]
    for r in benches["inference"]:
        if "torch" in r["what"]:
            r.update(seconds=None, clock="torch with CUDA not installed")
            r.pop("gbps", None), r.pop("bytes", None)
    benches["matmul"] = [r for r in benches["matmul"] if "cuBLAS" not in r["impl"]]
    benches["products"] = [r for r in benches["products"] if "cuBLAS" not in r["impl"]]
    benches["fused"] = [r for r in benches["fused"] if not r["name"].startswith(("JAX", "PyTorch"))]
    benches["train"] = [r for r in benches["train"] if not r["name"].startswith("PyTorch")]
    return record


def test_a_json_made_without_pytorch_works_and_says_what_it_left_out(tmp_path):
    record = without_torch(committed())
    path = tmp_path / "bench-mine.json"
    path.write_text(json.dumps(record))
    readme = tmp_path / "README.md"
    readme.write_text("# x\n<!-- RESULTS-PLOT -->\n<!-- /RESULTS-PLOT -->\n<!-- RESULTS-TABLE -->\n<!-- /RESULTS-TABLE -->\n")
    assert report.write_committed(str(path), readme=readme, results=tmp_path / "RESULTS.md",
                                  image=tmp_path / "fig.png") == 0
    page = (tmp_path / "RESULTS.md").read_text()
    torch_rows = sum("torch" in r["what"] for r in record["benches"]["inference"])
    assert f"Left out, as this run could not measure them ({torch_rows} rows)" in page
    assert "host-to-device ceiling: torch copy from pinned memory (torch with CUDA not installed)" in page
    assert "None" not in page
    text = readme.read_text()
    assert "JAX, fp32:" not in text and "PyTorch eager:" not in text and "left out" in text
    assert (tmp_path / "fig.png").stat().st_size > 10_000


def test_unmeasured_and_measured_split_the_rows():
    record = {"device": {}, "benches": {
        "inference": [{"what": "a", "seconds": 1e-3}, {"what": "b", "seconds": None, "clock": "no torch"}],
        "fused": [{"name": "c", "ms": 2.0}, {"name": "d", "error": "gave up"}, {"name": "e", "ms": None}]}}
    assert report.unmeasured(record) == ["inference: b (no torch)", "fused: d (gave up)", "fused: e (not measured)"]
    kept = report.measured(record)["benches"]
    assert [r["what"] for r in kept["inference"]] == ["a"] and [r["name"] for r in kept["fused"]] == ["c"]
    assert report.left_out_note({"benches": {}}) == ""


@pytest.mark.parametrize("ours, theirs, said", [
    (12.6, 18.2, "1.4× faster"), (18.2, 12.6, "1.4× slower"), (25.12, 25.82, "1.03× faster"),
    (25.82, 25.12, "1.03× slower"), (10.0, 10.0, "as fast"), (1.0, 50.0, "50× faster"),
    (0.010449, 0.018151, "1.7× faster")])      # printed 10.45 and 18.15 ms (10.4 and 18.2 would give 1.75, 1.8): 1.737
def test_against_says_faster_or_slower_on_both_sides(ours, theirs, said):
    assert report.against(ours, theirs) == said


def _band(ms, low, high):
    from helpers import timing
    return timing.Timing.from_row({"ms": ms, "ms_low": low, "ms_high": high})


@pytest.mark.parametrize("ours, theirs, said", [
    (_band(25.33, 24.92, 26.06), _band(25.94, 25.89, 26.01), "the same within the noise we measured (1.02×)"),   # the wide net
    (_band(25.33, 24.92, 25.78), _band(25.94, 25.89, 26.01), "1.02× apart, within the 5 % we call the same"),  # bands apart
    (_band(25.33, 24.92, 25.88), _band(25.94, 25.89, 26.01), "the same within the noise we measured (1.02×)"),  # meet as printed
    (_band(25.33, 24.92, 25.89), _band(25.94, 25.89, 26.01), "the same within the noise we measured (1.02×)"),   # bands touch
    (_band(12.81, 12.22, 13.03), _band(17.32, 17.21, 17.44), "1.4× faster"),
    (_band(17.32, 17.21, 17.44), _band(12.81, 12.22, 13.03), "1.4× slower")])
def test_against_with_bands_calls_only_what_the_noise_separates(ours, theirs, said):
    assert report.against(ours, theirs) == said


def test_a_file_that_is_not_a_benchmark_gets_a_clear_error(tmp_path):
    (tmp_path / "x.json").write_text("{\"a\": 1}")
    with pytest.raises(SystemExit, match="not a benchmark record"):
        report.load(tmp_path / "x.json")
    with pytest.raises(SystemExit, match="helpers.bench all --out"):
        report.load(tmp_path / "missing.json")


def _row(impl, size, gflops):
    return {"impl": impl, "size": size, "gflops": gflops, "seconds": 2 * size ** 3 / gflops / 1e9, "clock": "c"}


def test_matmul_rows_name_each_size_fastest_rung():
    from helpers.bench import matmul as bench_matmul

    rows = [_row(name, n, g) for n in (512, 1024, 4096) for name, g in
            (("matmul_1_naive", 1e3), ("matmul_8_splitk", 2e4 if n == 1024 else 3e4),
             (bench_matmul.NO_LOADS, 9e4), ("numpy (CPU)", 5e2), ("cuBLAS fp32 (torch, TF32 off)", 4e4))]
    lines = report.matmul_rows(rows)
    assert sum("matmul 4096³," in line for line in lines) == 5                # every row at the largest size
    assert lines[-1] == "| matmul 1024³, rung of lowest median: matmul_8_splitk | 20.000 TFLOP/s (50.0% of cuBLAS's 40.000) | c |"
    assert not any("512³" in line for line in lines)                        # below 1024³


def test_products_rows_name_the_fastest_rung_beside_cublas():
    from helpers.bench import products

    shape = {product: list(s) for product, s in products.shapes(128).items()}
    rows = [{"product": p, "hidden": 128, "shape": shape[p], "impl": impl, "seconds": s, "clock": "c"}
            for p in shape for impl, s in (("matmul_3_blocked", 9e-6), ("matmul_9_interior", 7e-6), (products.CUBLAS, 5e-6))]
    lines = report.products_rows(rows)
    assert lines[0] == ("| a 784-128-10 step's layer 1: Z1 = X·W1 (128×784×128), rung of lowest median: matmul_9_interior | "
                        "7.00 µs (cuBLAS in a CUDA graph 5.00 µs) | c |")
    assert len(lines) == 2 and "(784×128×128)" in lines[1]
    assert "cuBLAS" not in report.products_rows([r for r in rows if r["impl"] != products.CUBLAS])[0]


def test_shown_names_drop_an_old_notebook_number():
    assert report.shown("unfused 784-128-10 SGD (notebook 04)") == "unfused 784-128-10 SGD"
    assert report.shown("kernels, dense_1_naive (notebook 02)") == "kernels, dense_1_naive"
    assert report.shown("fused 784-128-10 SGD") == "fused 784-128-10 SGD"


# --- a reader's own run: nothing tracked is written, and a QUICK run's rows say the sizes they measured ---

def quick(record: dict) -> dict:
    """The record as a QUICK run on a software renderer writes it: 256 test images, 4,096 training images,
    a fused epoch of 8 steps, matmul at a few GFLOP/s, an upload shorter than the kernels."""
    record = copy.deepcopy(record)
    record["quick"] = True
    record["device"]["software"] = True
    benches = record["benches"]
    for r in benches["inference"]:
        r["images"] = 256
        if r["what"].startswith("kernels, float32"):
            r["seconds"] = 0.05
    for r in benches["train"]:
        r["images"], r["steps"] = 4096, 32
    for r in benches["fused"]:
        r["steps"] = 8
    for r in benches["matmul"]:
        r["gflops"] = r["gflops"] / 1e4
    return record


def test_a_quick_json_labels_every_row_with_its_sizes():
    record = quick(committed())
    page = report.results_page(record)
    text = report.headline(record, None)
    for shown in (page, text):
        assert "10,000" not in shown and "60,000 images" not in shown and "one MNIST epoch" not in shown
        assert "0.0 TFLOP/s" not in shown and " 0× " not in shown
    assert "| 256 test images: upload float32 into existing buffer |" in page
    assert "an epoch of 4,096 images (not all 60,000), 784-128-10, batch 128: GLSL (ModernGL)" in page
    assert "an epoch of 8 steps (not all 60,000), batch 128: fused 784-128-10 SGD" in page
    assert "GFLOP/s" in page and "in QUICK mode" in page
    assert "256 test images through 784-128-10" in text and "(4,096 images)" in text
    assert "the kernels take" in text and "× the upload" in text


def test_full_sizes_keep_the_committed_labels():
    page = report.results_page(committed())
    assert "| 10,000 test images: upload float32 into existing buffer |" in page
    assert "| one MNIST epoch, 784-128-10, batch 128: GLSL (ModernGL) |" in page
    assert report.epoch_label({"steps": 469}, "one MNIST epoch, x") == "one MNIST epoch, x"
    assert report.epoch_label({"images": 512}, "one MNIST epoch, x") == "an epoch of 512 images (not all 60,000), x"
    assert report._flops(22_500) == "22.500 TFLOP/s" and report._flops(3.14) == "3.14 GFLOP/s"


def test_the_default_writes_beside_the_json_and_touches_nothing_tracked(tmp_path, capsys):
    tracked = {p: p.stat().st_mtime_ns for p in (report.ROOT / "README.md", report.FULL_TABLE, report.FIGURE)}
    path = tmp_path / "bench-mine.json"
    path.write_text(json.dumps(quick(committed())))
    assert report.main([str(path)]) == 0
    assert (tmp_path / "bench-mine.md").read_text().startswith("# Results")
    assert (tmp_path / "bench-mine.png").stat().st_size > 10_000
    assert "--write-committed rewrites those" in capsys.readouterr().out
    assert all(p.stat().st_mtime_ns == t for p, t in tracked.items()), "a tracked file was written"


def test_the_default_refuses_to_overwrite_a_tracked_file():
    with pytest.raises(SystemExit, match="a file the course tracks"):
        report.write_beside(report.ROOT / "notebooks" / "results" / "RESULTS.json")   # RESULTS.md is tracked


def test_help_is_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        report.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--write-committed" in out and "no such file" not in out


def test_bench_help_suggests_a_file_that_is_not_committed(capsys):
    from helpers.bench import __main__ as bench_main

    with pytest.raises(SystemExit):
        bench_main.main(["--help"])
    out = capsys.readouterr().out
    assert "bench-mine.json" in out and RESULTS_FILE.name not in out
    assert report._tracked(RESULTS_FILE)
    assert not report._tracked(report.ROOT / "notebooks" / "results" / "bench-mine.json")


class _Info:
    def __init__(self, renderer):
        self.info = {"GL_RENDERER": renderer}


def test_bench_warns_at_once_about_full_sizes_on_a_software_renderer():
    from helpers.bench import __main__ as bench_main

    note = bench_main.software_note(_Info("llvmpipe (LLVM 15.0.6, 256 bits)"), quick=False)
    assert "QUICK=1" in note and "software renderer" in note
    assert bench_main.software_note(_Info("llvmpipe (LLVM 15.0.6, 256 bits)"), quick=True) == ""
    assert bench_main.software_note(_Info("NVIDIA H100 80GB HBM3/PCIe/SSE2"), quick=False) == ""


def test_timed_rows_print_a_band_only_where_stored_and_never_collapsed():
    assert report._timed({"ms": 12.8, "ms_low": 12.2, "ms_high": 13.0}, "ms", 1e-3) == "12.8 ms (12.2–13.0)"
    assert report._timed({"seconds": 41.7e-6, "seconds_low": 41.3e-6, "seconds_high": 42.3e-6}, "seconds", 1.0) \
        == "41.7 µs (41.3–42.3)"
    assert report._timed({"ms": 20.11, "ms_low": 20.08, "ms_high": 20.14}, "ms", 1e-3) == "20.11 ms (20.08–20.14)"
    assert report._timed({"ms": 12.8}, "ms", 1e-3) == "12.8 ms"


def test_flops_band_is_the_rate_at_the_band_of_the_time():
    row = {"gflops": 45_000.0, "seconds": 1.0, "seconds_low": 0.99, "seconds_high": 1.01}
    assert report._flops_band(row) == " (44.554–45.455)"
    narrow = {"gflops": 45_000.0, "seconds": 1.0, "seconds_low": 0.99999, "seconds_high": 1.00001}
    assert report._flops_band(narrow) == " (44.9996–45.0005)"        # whole GFLOP/s would read 45.000–45.000
    assert report._flops_band({"gflops": 45_000.0, "seconds": 1.0}) == ""


def test_accuracy_row_counts_the_warm_up_epochs_or_names_no_total():
    """The GLSL trainer trains in the benchmark's warm-up too: with 5 timed epochs it trained more than 6."""
    row = {"test_acc": 0.9739, "epochs_s": [0.024] * 5}
    unknown = report.accuracy_row(row)
    assert unknown[1] == "97.39 % after the benchmark's epochs" and "6" not in " ".join(unknown)
    assert "the epochs of its warm-up (GLSL and NumPy epochs in turn for a second) and 5 timed ones" in unknown[3]
    known = report.accuracy_row({**row, "epochs_trained": 9})
    assert known[1] == "97.39 % after 9 epochs" and "run of 9 epochs (4 in its warm-up, 5 timed)" in known[3]


# --- a ratio beside two figures is the quotient of the figures as printed -----------------------------------

def test_upload_against_kernels_is_the_quotient_of_the_printed_figures():
    """2.3751 ms of upload against 0.12249 ms of kernels would print as 2.38 and 0.122 ms, whose 19.5 is 20×
    where the unrounded figures give 19.39, 19×: they print with four digits, 2.375 and 0.1225 ms (19.39, 19×)."""
    record = {"device": {"renderer": "X", "date": "d"}, "benches": {"inference": [
        {"what": "upload float32 into existing buffer", "seconds": 2.3751e-3, "clock": "c"},
        {"what": "kernels, float32 input (2 dispatches)", "seconds": 1.2249e-4, "clock": "c"}]}}
    (row,) = report.headline_rows(record)
    assert row[1:] == ("upload: 2.375 ms", "the two kernels: 0.1225 ms", "the upload takes 19× the kernels")


@pytest.mark.parametrize("a, b, shown", [
    (22.512e-3, 10.964e-3, ("22.51 ms", "10.96 ms")),    # 22.5 / 11 = 2.045, 2.0×; the times give 2.053, 2.1×
    (30.2128e-3, 3.0661e-3, ("30.21 ms", "3.066 ms")),   # 30.2 / 3.07 = 9.837, 9.8×; the times give 9.854, 9.9×
    (0.38858, 20.108e-3, ("389 ms", "20.1 ms")),         # 19.35 and 19.32: both 19×, three digits do
    (11.004e-3, 5.3651e-3, ("11.00 ms", "5.365 ms")),    # 11 / 5.37 = 2.048, 2.0×; the times give 2.051, 2.1×
    (1.5, 0.25, ("1500 ms", "250 ms"))])                 # no exponent: not '1.5e+03 ms'
def test_printed_pair_prints_the_digits_that_keep_the_factor_of_the_times(a, b, shown):
    from decimal import Decimal
    from helpers import timing
    assert report.printed_pair(a, b) == shown
    (x, xu), (y, yu) = (t.split() for t in shown)
    printed = timing.seconds_exactly(x, xu) / timing.seconds_exactly(y, yu)
    assert report.ratio_text(printed) == report.ratio_text(Decimal(repr(a)) / Decimal(repr(b)))


@pytest.mark.parametrize("ours_ms, theirs_ms", [(10.512, 17.539), (10.964, 22.512), (20.108, 388.58), (25.12, 25.82),
                                                (23.26, 20.633), (0.12249, 2.3751), (12.345, 13.5801), (99.95, 10.05)])
def test_a_headline_factor_is_the_quotient_of_the_figures_printed_beside_it(ours_ms, theirs_ms):
    """On made-up epochs: the factor of a headline row against a rival is the quotient of the two times the row
    prints, as a reader divides them, and prints as the quotient of the unrounded times does."""
    from decimal import Decimal
    import re
    from helpers import timing
    record = {"device": {"renderer": "X", "date": "d"}, "benches": {"fused": [
        {"name": "fused 784-128-10 SGD", "ms": ours_ms, "dispatches_per_step": 2},
        {"name": "JAX jit(lax.scan) 784-128-10 SGD, fp32, precision highest", "ms": theirs_ms}]}}
    (row,) = report.headline_rows(record)
    (ours, ou), (theirs, tu) = (re.search(r": ([\d.]+) (ms|µs)$", cell).groups() for cell in row[1:3])
    ours, theirs = timing.seconds_exactly(ours, ou), timing.seconds_exactly(theirs, tu)
    factor = re.match(r"([\d.]+)× (faster|slower|apart)", row[3]).group(1)   # apart: no band, within the margin
    assert factor == report.ratio_text(max(ours, theirs) / min(ours, theirs))
    exact = Decimal(repr(ours_ms)) / Decimal(repr(theirs_ms))
    assert factor == report.ratio_text(max(exact, 1 / exact))


# the committed run's speeds at 4096³ (GFLOP/s): at two decimals of TFLOP/s, 45.13 / 51.73 = 87.24 % would print
# 87.2 % where notebook 04's table (whole GFLOP/s: 45134 / 51729) prints 87.3 %
AT_4096 = (("matmul_1_naive", 4570.104982335532), ("matmul_5_pipelined", 37786.45603452978),
           ("matmul_9_interior", 45133.59747460099), ("cuBLAS fp32 (torch, TF32 off)", 51728.86424713176))


def test_matmul_shares_are_the_quotients_of_the_printed_speeds_and_04s_table():
    import re
    from decimal import Decimal
    from helpers import timing
    from helpers.bench import matmul as bench_matmul

    rows = [_row(name, 4096, g) for name, g in AT_4096]
    assert report._share(rows[2], rows[3]) == "87.3"                 # 45134 / 51729, as 04's table prints it
    lines = report.matmul_rows(rows)
    assert lines[3] == "| matmul 4096³, cuBLAS fp32 (torch, TF32 off) | 51.729 TFLOP/s | c |"
    table = bench_matmul.table(rows).split("share of cuBLAS fp32")[1]
    for line, r in zip(lines[:3], rows):
        speed, share = re.search(r"\| ([\d.]+) TFLOP/s (?:\([\d.]+–[\d.]+\) )?\(([\d.]+)% of cuBLAS\)", line).groups()
        assert share == timing.times(100 * Decimal(speed) / Decimal("51.729"), 1)            # a reader's quotient
        if r["impl"].startswith("matmul_"):                                                  # 04's table
            assert f"{share}%" in next(l for l in table.splitlines() if l.strip().startswith(r["impl"]))
    assert "45.134 TFLOP/s (87.3% of cuBLAS)" in lines[2] and "37.786 TFLOP/s (73.0% of cuBLAS)" in lines[1]


def test_percent_of_is_the_quotient_of_the_table_figures_half_up():
    """3058 and 1245 GFLOP/s as the table prints them give 245.6 %, where the unrounded speeds give 245.5 %;
    an exact tie (34.9 of 40 TFLOP/s is 87.25 %) rounds up."""
    from helpers.bench import matmul as bench_matmul
    assert f"{bench_matmul.percent_of(3058.4, 1245.4)}" == "245.6"
    assert f"{bench_matmul.percent_of(34900, 40000)}" == "87.3"
    assert bench_matmul.percent_of(34900, 40000, 0) == 87


def test_committed_pages_print_shares_and_speedups_that_are_their_printed_quotients():
    from decimal import Decimal
    import re
    from helpers import timing

    page = report.results_page(committed())
    blas = Decimal(re.search(r"cuBLAS fp32 \(torch, TF32 off\) \| ([\d.]+) TFLOP/s", page).group(1))
    for line in page.splitlines():
        if "% of cuBLAS)" in line:                            # a row at the largest size, against the cuBLAS row
            rung, share = re.search(r"\| ([\d.]+) TFLOP/s (?:\([\d.]+–[\d.]+\) )?\(([\d.]+)% of cuBLAS\)", line).groups()
            assert share == timing.times(100 * Decimal(rung) / blas, 1), line
        elif "% of cuBLAS's" in line:                         # a fastest rung, cuBLAS's speed beside it
            rung, share, theirs = re.search(r"\| ([\d.]+) TFLOP/s (?:\([\d.]+–[\d.]+\) )?\(([\d.]+)% of cuBLAS's ([\d.]+)\)", line).groups()
            assert share == timing.times(100 * Decimal(rung) / Decimal(theirs), 1), line
    text = report.headline(committed())
    first = next(line for line in text.splitlines() if "first rung to its top" in line)
    top, top_ms, naive, naive_ms, speedup = re.search(r": ([\d.]+) TFLOP/s, ([\d.]+) ms \| .*: ([\d.]+) TFLOP/s, "
                                                      r"([\d.]+) ms \| ([\d.]+)× the speed", first).groups()
    assert speedup == report.ratio_text(Decimal(naive_ms) / Decimal(top_ms))       # of the times printed beside it
    assert speedup == report.ratio_text(Decimal(top) / Decimal(naive))            # and of the speeds
    from helpers import takeaways                                                 # and TAKEAWAYS' factor of the pair
    tile = next(r for r in takeaways.rules(committed()) if r.rule.startswith("Tile"))
    assert tile.shown == (f"{naive_ms} ms", f"{top_ms} ms") and tile.factor_text == speedup
    cublas = next(line for line in text.splitlines() if "against cuBLAS fp32" in line)
    top, theirs, share = re.search(r"at (\d+)³: ([\d.]+) TFLOP/s \| cuBLAS at \1³: ([\d.]+) TFLOP/s .* ([\d.]+)% at \1³ \|$",
                                   cublas).group(2, 3, 4)
    assert share == timing.times(100 * Decimal(top) / Decimal(theirs), 1)


def test_headline_says_why_the_six_dispatch_epoch_has_two_rows():
    """README's row against NumPy's epoch and RESULTS.md's fused rows time notebook 05's trainer in different company: the
    headline says so where the record has both, and names neither where it lacks one."""
    record = {"device": {"renderer": "X", "date": "d"}, "benches": {
        "train": [{"name": "GLSL 784-128-10", "ms": 20.7, "ms_low": 20.3, "ms_high": 20.7}],
        "fused": [{"name": "unfused 784-128-10 SGD", "ms": 25.3, "ms_low": 22.1, "ms_high": 27.5}]}}
    text = report.headline(record)
    assert "20.7 ms (20.3–20.7) timed with NumPy's epoch (the row against NumPy's epoch above)" in text
    assert "25.3 ms (22.1–27.5) timed in turn with the fused trainers (RESULTS.md's fused rows)" in text
    record["benches"]["fused"] = []
    assert "two rows" not in report.headline(record)


@pytest.mark.parametrize("jax_ms, close", [(25.8, "784-800-10 against JAX fp32 would be the same"),   # 1.11x
                                           (31.0, None)])                                            # 1.33x
def test_close_pairs_note_names_the_jax_pairs_inside_the_epochs_margin(jax_ms, close):
    """The README judges each row within one run (5 %); pairs within the 25 % by which epochs move between
    runs are named as ones another run could judge differently; none named, no sentence."""
    def row(name, ms):
        return {"name": name, "ms": ms, "ms_low": ms * 0.998, "ms_high": ms * 1.002}
    record = {"benches": {"fused": [row("fused 784-800-10 Momentum", 23.3),
                                    dict(row("JAX jit(lax.scan) 784-800-10 Momentum, fp32", jax_ms), precision="highest")]}}
    note = report.close_pairs_note(record)
    if close is None:
        assert note == ""
    else:
        assert close in note and "5 % margin of one run" in note and "could judge it differently" in note
    assert report.close_pairs_note({"benches": {}}) == ""


def test_with_band_prints_the_band_at_the_medians_decimals_and_never_collapsed():
    t = timing.Timing((10.30e-3, 10.31e-3, 10.37e-3, 10.42e-3, 10.44e-3))
    assert report.with_band(t, "10.4 ms") == "10.4 ms (10.3–10.4)"
    narrow = timing.Timing((20.08e-3, 20.081e-3, 20.09e-3, 20.139e-3, 20.14e-3))
    assert report.with_band(narrow, "20.1 ms") == "20.1 ms (20.08–20.14)"       # 20.1–20.1 would collapse
    assert report.with_band(timing.Timing((5e-6,)), "5.00 µs") == "5.00 µs"      # no band stored


def test_rows_with_a_band_of_no_width_print_the_median_alone():
    assert report._timed({"seconds": .0201, "seconds_low": .0201, "seconds_high": .0201}, "seconds", 1.0) == "20.1 ms"
    assert report._flops_band({"gflops": 45134, "seconds": 1, "seconds_low": 1, "seconds_high": 1}) == ""
    slow = {"gflops": 56.5, "seconds": 1.0, "seconds_low": 0.98, "seconds_high": 1.02}
    assert report._flops_band(slow) == " (55.4–57.7)"                       # GFLOP/s, as _flops prints it

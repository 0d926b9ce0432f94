"""One card, one run: every committed figure (notebook outputs, README, RESULTS.md, TAKEAWAYS.md, the glossary,
the benchmark and dropout records) comes from the same run on the same card, and the verdicts the notebooks
print came out the same in every run recorded in notebooks/results/verdicts-<card>.json.

A run is the notebooks executed in full by .ci/execute_notebooks.py (which stores the card, the date and each
verdict in every notebook's metadata) together with the benchmark of the same day on the same card.

Tuning records (the sweeps that chose a shader's defaults or the dropout recipe) are inputs, not results:
they must come from the same card, and each names its own date, which a notebook may print beside it.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from helpers.bench import fused as bench_fused

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RESULTS = ROOT / "notebooks" / "results"
TEXTS = [ROOT / "README.md", *sorted((ROOT / "notebooks").glob("*.md")), *sorted(RESULTS.glob("*.md"))]
CARD = re.compile(r"NVIDIA [A-Z]\d{3}[\w ]*?(?= ?[/|,)(*\n]|\s*$|\s{2})")
TUNING = (*(bench_fused.tuning_file(tool).name for tool in ("fused-sweep", "matmul7-sweep", "top-rung")),
          "dropout-validate.json")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")

spec = importlib.util.spec_from_file_location("verdicts_tool", ROOT / ".ci" / "verdicts.py")
verdicts_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdicts_tool)


def card_of(renderer: str) -> str:
    return renderer.split("/")[0].strip()


def records() -> dict[str, dict]:
    """Every JSON record in notebooks/results with a device: {file name: {"card", "date"}}."""
    found = {}
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "device" in data:
            device = data["device"]
            renderer = device.get("renderer") or device["describe"].split("|")[0]
            found[path.name] = {"card": card_of(renderer), "date": device["date"]}
    return found


def notebook_runs() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text())["metadata"].get("run") for p in NOTEBOOKS}


def output_text(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            parts += ["".join(v) for k, v in out.get("data", {}).items() if k in ("text/plain", "text/markdown")]
    return "\n".join(parts)


def test_every_notebook_records_its_run():
    missing = [name for name, run in notebook_runs().items() if not run]
    assert not missing, f"notebooks with no run record (execute them with .ci/execute_notebooks.py): {missing}"


def test_the_committed_files_name_the_card_of_the_run():
    cards = {verdicts_tool.slug(rec["card"]) for rec in records().values()}
    assert cards == {bench_fused.CARD}, (f"the committed records ran on {sorted(cards)}, but helpers.bench.fused.CARD "
                                         f"is {bench_fused.CARD!r}: the files it names are not the run's")
    assert bench_fused.RESULTS_FILE.is_file() and verdict_file().name == f"verdicts-{bench_fused.CARD}.json"


def test_tuning_records_come_from_the_same_card():
    cards = {rec["card"] for rec in records().values()}
    assert len(cards) == 1, f"results from more than one card: {sorted(cards)}"


def test_one_card_and_one_date_everywhere():
    seen = {}   # (card, date) -> where
    tuning_dates = {rec["date"] for name, rec in records().items() if name in TUNING}
    for name, rec in records().items():
        if name not in TUNING:
            seen.setdefault((rec["card"], rec["date"]), []).append(f"results/{name}")
    for name, run in notebook_runs().items():
        if run:
            seen.setdefault((run["card"], run["date"]), []).append(f"{name} (metadata)")
    assert len(seen) == 1, "committed artifacts come from different runs: " + "; ".join(
        f"{card}, {date}: {', '.join(where)}" for (card, date), where in seen.items())
    (card, date), = seen
    for path in TEXTS + NOTEBOOKS:
        text = output_text(path) if path.suffix == ".ipynb" else path.read_text()
        cards = {c.strip() for c in CARD.findall(text) if not re.search(r"datasheet|whitepaper|Tensor Core", c)} - {card}
        dates = set(DATE.findall(text)) - {date} - tuning_dates
        assert not cards, f"{path.relative_to(ROOT)} names another card than the run's ({card}): {sorted(cards)}"
        assert not dates, f"{path.relative_to(ROOT)} names another date than the run's ({date}): {sorted(dates)}"


def verdict_file() -> Path:
    files = sorted(RESULTS.glob("verdicts-*.json"))
    assert len(files) == 1, f"expected one notebooks/results/verdicts-<card>.json, found {[f.name for f in files]}"
    return files[0]


def test_verdicts_record_three_runs_on_the_results_card():
    record = json.loads(verdict_file().read_text())
    assert len(record["runs"]) >= 3, f"{verdict_file().name} holds {len(record['runs'])} runs; at least 3 are needed"
    cards = {rec["card"] for rec in records().values()}
    assert cards == {record["card"]}, f"verdicts ran on {record['card']}, the results on {cards}"


# Verdicts the record shows flipping between runs: open defects, each with its measured reason. The test fails
# on any other flip, and on one of these that stops flipping (then take it out of the list).
KNOWN_TO_DIFFER: set = set()
# Notebooks whose verdicts fewer than three runs of the committed code executed: open defects, each with its
# reason.
KNOWN_TOO_FEW: set = set()


def test_verdicts_hold_on_every_run():
    runs = json.loads(verdict_file().read_text())["runs"]
    differ, few = verdicts_tool.differing(runs), verdicts_tool.too_few_runs(runs)
    assert set(differ) == KNOWN_TO_DIFFER and set(few) == KNOWN_TOO_FEW, \
        (f"verdicts that came out differently between runs: {differ}; known: {sorted(KNOWN_TO_DIFFER)}; "
         f"too few runs: {few}; known: {sorted(KNOWN_TOO_FEW)}")


def test_notebooks_show_the_verdicts_of_the_record():
    runs = json.loads(verdict_file().read_text())["runs"]
    for path in NOTEBOOKS:
        stored = json.loads(path.read_text())["metadata"].get("verdicts", {})
        first = next((run for run in runs if verdicts_tool.ran(run, path.stem)), {"verdicts": {}})
        recorded = {vid.split("/", 1)[1]: outcome for vid, outcome in first["verdicts"].items()
                    if vid.split("/", 1)[0] == path.stem}
        assert stored == recorded, f"{path.name}: its stored verdicts differ from the recorded runs'"


VERDICT_CALL = re.compile(r"findings\.verdict\(\s*(f?)([\"'])(.+?)\2")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_verdict_ids_in_the_code_were_recorded(path):
    """Every findings.verdict("<id>", ...) in a notebook's code produced a verdict in its stored run (an
    f-string id matches any value of its placeholders)."""
    cells = json.loads(path.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    stored = json.loads(path.read_text())["metadata"].get("verdicts", {})
    for f, _, vid in VERDICT_CALL.findall(code):
        pattern = re.sub(r"\\\{.*?\\\}", ".+", re.escape(vid)) if f else re.escape(vid)
        assert any(re.fullmatch(pattern, s) for s in stored), f"{path.name}: verdict {vid!r} is not in the stored run"


def test_differing_finds_a_flip_and_a_missing_verdict():
    runs = [{"verdicts": {"a": "A faster", "b": "same within noise"}},
            {"verdicts": {"a": "B faster", "b": "same within noise"}},
            {"verdicts": {"b": "same within noise"}}]
    assert verdicts_tool.differing(runs) == {"a": ["A faster", "B faster", None]}
    assert verdicts_tool.differing(runs[:1] * 3) == {}


def test_a_run_that_skipped_a_notebook_is_not_compared_on_it():
    runs = [{"notebooks": ["n1", "n2"], "verdicts": {"n1/a": "A faster", "n2/b": "B faster"}},
            {"notebooks": ["n1"], "verdicts": {"n1/a": "A faster"}},
            {"notebooks": ["n1"], "verdicts": {"n1/a": "A faster"}}]
    assert verdicts_tool.differing(runs) == {}
    assert verdicts_tool.too_few_runs(runs) == {"n2": 1}


def test_card_slug():
    assert verdicts_tool.slug("NVIDIA H100 80GB HBM3") == "h100"
    assert verdicts_tool.slug("NVIDIA H200") == "h200"

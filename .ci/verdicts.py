"""Add the verdicts of notebook runs to notebooks/results/verdicts-<card>.json, and say which ones differ.

    python3 .ci/verdicts.py RUN_DIR [RUN_DIR ...]      # each RUN_DIR holds the verdicts.json of one run
    python3 .ci/verdicts.py --check                    # only report the committed file

A run is notebooks executed in full by .ci/execute_notebooks.py on one card. The file keeps
{"card": ..., "runs": [{"date": ..., "notebooks": [...], "verdicts": {"<notebook>/<id>": "<outcome>"}}, ...]};
runs on another card, or in QUICK mode, are refused. A verdict whose outcome is not the same in every run
of its notebook is a defect: measure it better, or let it call the two the same (timing.the_same); so is a
notebook with verdicts that fewer than three runs executed. Exit status 1 when either is found.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"


def slug(card: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100': the file name part for a card."""
    found = re.search(r"\b([A-Z]\d{2,4}[A-Z]?)\b", card)
    return (found.group(1) if found else re.sub(r"\W+", "-", card)).lower()


def ran(run: dict, notebook: str) -> bool:
    """Whether the run executed the notebook (a run that lists no notebooks executed every one)."""
    return notebook in run.get("notebooks", [notebook])


def differing(runs: list[dict]) -> dict:
    """{verdict id: [outcome of each run that executed its notebook]} for every id whose outcome is not the
    same in all of them (an id missing from such a run counts as a different outcome, None)."""
    ids = sorted({vid for run in runs for vid in run["verdicts"]})
    table = {vid: [run["verdicts"].get(vid) for run in runs if ran(run, vid.split("/")[0])] for vid in ids}
    return {vid: outcomes for vid, outcomes in table.items() if len(set(outcomes)) > 1}


def too_few_runs(runs: list[dict], least: int = 3) -> dict:
    """{notebook: runs that executed it} for every notebook with verdicts that fewer than `least` runs executed."""
    notebooks = {vid.split("/")[0] for run in runs for vid in run["verdicts"]}
    counts = {nb: sum(ran(run, nb) for run in runs) for nb in sorted(notebooks)}
    return {nb: n for nb, n in counts.items() if n < least}


def main(argv: list[str]) -> int:
    runs_in = [dict(json.loads((Path(d) / "verdicts.json").read_text()),
                    notebooks=sorted(p.stem for p in Path(d).glob("*.ipynb"))) for d in argv if d != "--check"]
    cards = {r["card"] for r in runs_in}
    if len(cards) > 1:
        raise SystemExit(f"runs from different cards: {sorted(cards)}; a file holds one card's runs")
    if any(r.get("mode") != "FULL" for r in runs_in):
        raise SystemExit("a QUICK run's verdicts prove nothing about the full sizes: run the notebooks in full")
    files = sorted(RESULTS.glob("verdicts-*.json"))
    path = RESULTS / f"verdicts-{slug(cards.pop())}.json" if runs_in else (files[0] if files else None)
    if path is None:
        raise SystemExit("no verdicts file yet: give the run folders to add")
    record = json.loads(path.read_text()) if path.exists() else {"card": runs_in[0]["card"], "runs": []}
    for run in runs_in:
        if run["card"] != record["card"]:
            raise SystemExit(f"{path.name} holds runs on {record['card']}, this one ran on {run['card']}")
        record["runs"].append({"date": run["date"], "notebooks": run["notebooks"], "verdicts": run["verdicts"]})
    if runs_in:
        path.write_text(json.dumps(record, indent=1) + "\n")
    diff, few = differing(record["runs"]), too_few_runs(record["runs"])
    print(f"{path.name}: {len(record['runs'])} runs on {record['card']}, "
          f"{len(record['runs'][-1]['verdicts']) if record['runs'] else 0} verdicts in the last, {len(diff)} differing")
    for vid, outcomes in diff.items():
        print(f"  {vid}: " + " | ".join(str(o) for o in outcomes))
    for notebook, n in few.items():
        print(f"  {notebook}: its verdicts ran in {n} run(s), fewer than 3")
    return 1 if diff or few else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

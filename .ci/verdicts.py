"""Add the verdicts of notebook runs to notebooks/results/verdicts-<card>.json, and say which ones differ.

    python3 .ci/verdicts.py RUN_DIR [RUN_DIR ...]      # each RUN_DIR holds the verdicts.json of one run
    python3 .ci/verdicts.py --check                    # only report the committed file

A run is every notebook executed in full by .ci/execute_notebooks.py on one card. The file keeps
{"card": ..., "runs": [{"date": ..., "verdicts": {"<notebook>/<id>": "<outcome>"}}, ...]}; runs on another
card, or in QUICK mode, are refused. A verdict whose outcome is not the same in every run is a defect:
measure it better, or let it say "the same within the noise". Exit status 1 when any differs.
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


def differing(runs: list[dict]) -> dict:
    """{verdict id: [outcome of each run]} for every id whose outcome is not the same in all runs (an id
    missing from a run counts as a different outcome, None)."""
    ids = sorted({vid for run in runs for vid in run["verdicts"]})
    table = {vid: [run["verdicts"].get(vid) for run in runs] for vid in ids}
    return {vid: outcomes for vid, outcomes in table.items() if len(set(outcomes)) > 1}


def main(argv: list[str]) -> int:
    runs_in = [json.loads((Path(d) / "verdicts.json").read_text()) for d in argv if d != "--check"]
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
        record["runs"].append({"date": run["date"], "verdicts": run["verdicts"]})
    if runs_in:
        path.write_text(json.dumps(record, indent=1) + "\n")
    diff = differing(record["runs"])
    print(f"{path.name}: {len(record['runs'])} runs on {record['card']}, "
          f"{len(record['runs'][-1]['verdicts']) if record['runs'] else 0} verdicts in the last, {len(diff)} differing")
    for vid, outcomes in diff.items():
        print(f"  {vid}: " + " | ".join(str(o) for o in outcomes))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

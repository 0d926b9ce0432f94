"""A notebook's closing "What we measured": the findings of this run, one sentence each.

Every notebook ends with a cell that calls `what_we_measured(...)` with three to six sentences, each built by
code from numbers this run measured (or read from the committed benchmark), so it stays true on another
machine. A sentence that draws a conclusion from numbers comes from a small function in the module of its
topic, tested with made-up numbers on both sides of its threshold, so it can never contradict the numbers
printed beside it.
"""

from __future__ import annotations

import json
import os

from . import mode
from .timing import Verdict

VERDICTS_LOG = "VERDICTS_LOG"   # environment variable: a file each verdict is appended to (the runs that check them)
recorded: dict[str, str] = {}   # this process's verdicts: id -> outcome


def what_we_measured(*findings: str) -> None:
    """Print the findings as a list under the mode the run was made in."""
    print(f"What we measured ({mode.banner()}):")
    for finding in findings:
        print(f"  • {sentence(finding)}")


def verdict(vid: str, judged: Verdict) -> Verdict:
    """Record a verdict under the id `vid` (unique in its notebook) and return it to be printed.

    A verdict is a sentence that chose one of a fixed set of outcomes from measurements (a `timing.Verdict`:
    "A faster", "B faster", "same within noise", or the like). The outcomes of every run are kept, so a
    verdict that came out differently on a second run of the same notebook on the same card is found."""
    if not isinstance(judged, Verdict):
        raise TypeError(f"verdict {vid!r}: expected a timing.Verdict (a sentence with its outcome), "
                        f"got {type(judged).__name__}")
    recorded[vid] = judged.outcome
    path = os.environ.get(VERDICTS_LOG)
    if path:
        with open(path, "a") as log:
            log.write(json.dumps({"id": vid, "outcome": judged.outcome}) + "\n")
    return judged


def listed(names) -> str:
    """Names for a sentence: 'a', 'a and b', 'a, b and c'."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def sentence(text: str) -> str:
    """`text` as a sentence: a capital first letter (unless the first word is a name from the code, such
    as dense_1), one full stop at the end."""
    text = text.strip()
    if not text:
        raise ValueError("a finding needs words")
    first = text.split()[0]
    if first.rstrip(".,;:!?").replace("'", "").replace("-", "").isalpha():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def than(a: float, b: float, above: str, below: str, equal: str | None = None) -> str:
    """`above` when a > b, `below` when a < b, and `equal` (default: `below`) when they are equal."""
    if a > b:
        return above
    if a < b:
        return below
    return below if equal is None else equal


def why_worst(gradient_smaller: float, difference_larger: float, factor: float = 10) -> str:
    """Why a gradient check's worst entry (the largest relative error) is the worst: its gradient is
    `gradient_smaller` times smaller than the median gradient and its |analytic - numerical| difference
    `difference_larger` times the median difference. Where the first exceeds `factor` times the second, the
    relative error is large because it divides by a tiny gradient, not because the difference is; otherwise
    the entry is a real outlier (at exactly `factor` times, too)."""
    if gradient_smaller > factor * difference_larger:
        return "a tiny gradient, not a large error, makes it the worst."
    return "a real outlier."

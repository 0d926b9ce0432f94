"""A notebook's closing "What we measured": the findings of this run, one sentence each.

Every notebook ends with a cell that calls `what_we_measured(...)` with three to six sentences, each built by
code from numbers this run measured (or read from the committed benchmark), so it stays true on another
machine. A sentence that draws a conclusion from numbers comes from a small function in the module of its
topic, tested with made-up numbers on both sides of its threshold, so it can never contradict the numbers
printed beside it.
"""

from __future__ import annotations

from . import mode


def what_we_measured(*findings: str) -> None:
    """Print the findings as a list under the mode the run was made in."""
    print(f"What we measured ({mode.banner()}):")
    for finding in findings:
        print(f"  • {sentence(finding)}")


def sentence(text: str) -> str:
    """`text` as a sentence: a capital first letter (unless the first word is a name from the code, such
    as dense_1), one full stop at the end."""
    text = text.strip()
    if not text:
        raise ValueError("a finding needs words")
    first = text.split()[0]
    if first.rstrip(".,;:!?").replace("'", "").isalpha():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def than(a: float, b: float, above: str, below: str, equal: str | None = None) -> str:
    """`above` when a > b, `below` when a < b, and `equal` (default: `below`) when they are equal."""
    if a > b:
        return above
    if a < b:
        return below
    return below if equal is None else equal


def times(a: float, b: float) -> str:
    """'2.3× faster' or '1.4× slower': a measured against b (two times in the same unit)."""
    if a <= 0 or b <= 0:
        raise ValueError(f"times need positive durations, got {a} and {b}")
    return f"{b / a:.2g}× faster" if a <= b else f"{a / b:.2g}× slower"

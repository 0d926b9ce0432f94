"""The course's shape: every notebook one idea a reader can finish, with nothing in it the reader cannot see.

Each notebook: at most 3,000 words of markdown; its first cell holds the title, the ← → links and "You will
learn" with three to five items; a code cell near the end prints "What we measured" through
helpers.findings.what_we_measured; its last cell repeats the links. Nowhere a reader looks (notebooks,
README, glsl/, helpers/) names an issue number, and nbval markers are cell tags, never comments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_WORDS = 3000


def cells(path: Path) -> list[dict]:
    return [dict(c, text="".join(c["source"])) for c in json.loads(path.read_text())["cells"]]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_shape(path):
    nb = cells(path)
    words = sum(len(c["text"].split()) for c in nb if c["cell_type"] == "markdown")
    assert words <= MAX_WORDS, f"{path.name}: {words} words of markdown, over {MAX_WORDS}"
    first, last = nb[0]["text"], nb[-1]["text"]
    assert first.startswith("# ") and "[Contents](../README.md)" in first, f"{path.name}: title and links first"
    learn = first.split("**You will learn**", 1)
    assert len(learn) == 2, f"{path.name}: no 'You will learn' in the first cell"
    items = [line for line in learn[1].splitlines() if line.startswith("- ")]
    assert 3 <= len(items) <= 5, f"{path.name}: 'You will learn' has {len(items)} items"
    assert "[Contents](../README.md)" in last.strip().splitlines()[-1], f"{path.name}: the links close it"
    closing = [i for i, c in enumerate(nb) if c["cell_type"] == "code" and "what_we_measured(" in c["text"]]
    assert closing and closing[-1] >= len(nb) * 2 // 3, f"{path.name}: no 'What we measured' printed near the end"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_nbval_markers_are_tags(path):
    comments = [i for i, c in enumerate(cells(path)) if c["cell_type"] == "code" and re.search(r"#\s*NBVAL_", c["text"])]
    assert not comments, f"{path.name}: nbval markers written as comments in cells {comments}; use cell tags"


def reader_files():
    yield from NOTEBOOKS
    yield ROOT / "README.md"
    yield from (ROOT / "notebooks").glob("*.md")
    yield from (ROOT / "glsl").glob("*")
    yield from (ROOT / "helpers").rglob("*.py")


def test_no_issue_numbers_where_a_reader_looks():
    found = []
    for path in reader_files():
        text = path.read_text(errors="replace")
        if path.suffix == ".ipynb":
            text = "\n".join(c["text"] for c in cells(path))
        for match in re.finditer(r"(?i)\bissues? ?#\d+|\bissue \d+\b", text):
            found.append(f"{path.relative_to(ROOT)}: {match.group(0)!r}")
    assert not found, "issue numbers a reader cannot follow:\n" + "\n".join(found)

"""Set each glossary entry's "First in [NN](file)." to the first notebook, in the course's order, that links
to the entry (GLOSSARY.md#anchor) or defines its term in bold; an entry no notebook uses is left alone.

    python3 .ci/glossary.py            # rewrite notebooks/GLOSSARY.md in place
    python3 .ci/glossary.py --check    # exit 1 and list the entries whose "First in" is wrong

tests/test_glossary.py runs the check.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "notebooks" / "GLOSSARY.md"
ORDER = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + ["appendix_experiments.ipynb"]
FIRST_IN = re.compile(r"\s*First in \[[^\]]*\]\([^)]*\)\.?")


def notebook_text(name: str) -> str:
    cells = json.loads((ROOT / "notebooks" / name).read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells)


def entries(text: str) -> list[tuple[str, str, str]]:
    """(anchor, term, body) for each `### anchor` section: term is the bold words that open its body."""
    out = []
    for block in re.split(r"(?m)^### ", text)[1:]:
        anchor, _, body = block.partition("\n")
        term = re.match(r"\*\*(.+?)\*\*", body.strip())
        out.append((anchor.strip(), term.group(1) if term else anchor, body))
    return out


def slug(anchor: str) -> str:
    return re.sub(r"[^\w\- ]", "", anchor.lower()).replace(" ", "-")


def first_notebook(anchor: str, term: str, texts: dict) -> str | None:
    """The first notebook, in the course's order, that links to the entry or writes its term in bold."""
    link = f"GLOSSARY.md#{slug(anchor)}"
    names = [n.strip() for n in re.split(r"[(),]", term) if n.strip()]
    bold = re.compile(r"(?i)\*\*(" + "|".join(re.escape(n) for n in names) + r")\*\*")
    for name in ORDER:
        if link in texts[name] or bold.search(texts[name]):
            return name
    return None


def label(name: str) -> str:
    return name[:2] if name[:2].isdigit() else "appendix"


def rewrite(text: str, texts: dict) -> tuple[str, list[str]]:
    """The glossary with every entry's First in set; and the list of entries that changed."""
    changed, pieces = [], re.split(r"(?m)^(### .*\n)", text)
    for i in range(1, len(pieces), 2):
        anchor = pieces[i][4:].strip()
        body = pieces[i + 1]
        term = re.match(r"\s*\*\*(.+?)\*\*( \([^)]*\))?", body)   # the bold term and an alias in brackets
        first = first_notebook(anchor, "".join(g or "" for g in term.groups()) if term else anchor, texts)
        old = FIRST_IN.search(body)
        if first is None or old is None or f"]({first})" in old.group(0):   # nothing to change
            continue
        stripped = FIRST_IN.sub("", body.rstrip()).rstrip()
        last = stripped.rsplit("\n", 1)[-1]
        clause = f"First in [{label(first)}]({first})."
        new = stripped + ("\n" if len(last) + len(clause) > 110 else " ") + clause + "\n\n"
        if new.strip() != body.strip():
            changed.append(anchor)
        pieces[i + 1] = new
    return "".join(pieces).rstrip() + "\n", changed


def main(argv: list[str]) -> int:
    texts = {name: notebook_text(name) for name in ORDER}
    new, changed = rewrite(GLOSSARY.read_text(), texts)
    if "--check" in argv:
        for anchor in changed:
            print(f"GLOSSARY.md: entry {anchor!r}: its 'First in' is not the first notebook that uses it")
        return 1 if changed else 0
    GLOSSARY.write_text(new)
    print(f"{len(changed)} entries changed: {', '.join(changed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

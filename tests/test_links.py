"""Every relative link a reader can click works where `python3 -m helpers.quickstart lab` serves them.

The quick start serves the repository root (helpers.quickstart.lab_args), so a link resolves against the
folder of the file that holds it and must stay inside the repository: `../glsl/x.comp` from a notebook
opens, `../../x` does not. Checked: every link (`[text](target)`, `![alt](target)`, `<a href>`,
`<img src>`) in the markdown cells of every notebook and in every markdown file of the repository, code
spans and fenced code left out. A link with an anchor (`GLOSSARY.md#key`, `05_backprop_sgd_glsl.ipynb#Section`,
`#requirements`) must also name a heading of its target, with the id JupyterLab gives it (the heading's
text, spaces as '-') or the one GitHub gives it (lower case, punctuation dropped, spaces as '-'), or an
`<a id=...>` / `<a name=...>` in it. Links to the web (http:, https:, mailto:) and to a cell's attachments
are not checked here. A link to a folder, or to a hidden file or folder (a name starting with '.'), is dead
too: JupyterLab answers "is a directory" for the one and its server refuses the other.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

from helpers import quickstart

ROOT = quickstart.ROOT
SKIP_DIRS = {".venv", ".git", ".ipynb_checkpoints", "node_modules", "__pycache__"}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_ID = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")   # http:, https:, mailto:, attachment:, data:


def repository_files(pattern: str) -> list[Path]:
    """The repository's files matching `pattern`, outside SKIP_DIRS and hidden folders."""
    return sorted(p for p in ROOT.rglob(pattern)
                  if not any(part in SKIP_DIRS or part.startswith(".") for part in p.relative_to(ROOT).parts))


def markdown_files() -> list[Path]:
    return repository_files("*.md")


def notebooks() -> list[Path]:
    return repository_files("*.ipynb")


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def documents():
    """(file, where, markdown text): each markdown file whole, each markdown cell of each notebook."""
    for path in markdown_files():
        yield path, "", path.read_text(encoding="utf-8")
    for path in notebooks():
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                yield path, f"cell {index}", _source(cell)


def without_code(text: str) -> str:
    return CODE_SPAN.sub(" ", FENCE.sub("", text))


def links(text: str) -> list[str]:
    text = without_code(text)
    found = MD_LINK.findall(text) + REF_DEF.findall(text) + HTML_LINK.findall(text)
    return [html.unescape(t) for t in found]


def plain(heading: str) -> str:
    """A heading's text as rendered: links as their text, no code ticks, emphasis or HTML tags."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    return html.unescape(text).strip()


def jupyterlab_id(text: str) -> str:
    return text.replace(" ", "-")


def github_id(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _anchors_of_text(text: str) -> set[str]:
    text = FENCE.sub("", text)
    ids, seen = set(HTML_ID.findall(text)), {}
    for heading in HEADING.findall(text):
        title = plain(heading)
        ids.add(jupyterlab_id(title))
        slug = github_id(title)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        ids.add(slug if count == 0 else f"{slug}-{count}")   # GitHub numbers repeated headings
    return ids


@lru_cache(maxsize=None)
def anchors(path: Path) -> frozenset[str]:
    """Every id a link's #fragment may name in `path` (a markdown file or a notebook's markdown cells)."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    return frozenset(_anchors_of_text(text))


def problem(source: Path, target: str) -> str | None:
    """Why `target`, a link in `source`, is dead where the quick start serves it; None when it opens."""
    if EXTERNAL.match(target):
        return None
    address, _, fragment = target.partition("#")
    address = unquote(address.split("?")[0])
    if address.startswith("/"):
        return "an absolute path: the server's root is the repository, write it relative to this file"
    resolved = (source.parent / address).resolve() if address else source
    try:
        resolved.relative_to(ROOT)
    except ValueError:
        return "points above the repository root, which JupyterLab does not serve"
    if not resolved.exists():
        return f"no such file: {resolved.relative_to(ROOT)}"
    inside = resolved.relative_to(ROOT)
    if any(part.startswith(".") for part in inside.parts):
        return (f"{inside} is hidden (a name starting with '.'): JupyterLab's server refuses it; name it in "
                "code (`.ci/run`) instead of linking it")
    if resolved.is_dir():
        return (f"{inside} is a folder: JupyterLab opens files, not folders ('is a directory'); link a file "
                "in it, such as its README.md")
    if fragment and resolved.suffix in (".md", ".ipynb") and unquote(fragment) not in anchors(resolved):
        return f"{resolved.relative_to(ROOT)} has no heading with the id '{unquote(fragment)}'"
    return None


def dead_links() -> list[str]:
    dead = []
    for path, where, text in documents():
        for target in links(text):
            why = problem(path, target)
            if why:
                place = f"{path.relative_to(ROOT)}{', ' + where if where else ''}"
                dead.append(f"{place}: ({target}) {why}")
    return dead


def test_the_quick_start_serves_the_repository_root():
    args = quickstart.lab_args()
    assert f"--ServerApp.root_dir={ROOT}" in args
    assert f"--LabApp.default_url=/lab/tree/{quickstart.FIRST_NOTEBOOK}" in args
    assert "--ServerApp.answer_yes=True" in args   # the README's "Ctrl-C stops it": no question asked first
    assert (ROOT / quickstart.FIRST_NOTEBOOK).exists()


def test_the_checker_finds_dead_links_and_anchors(tmp_path, monkeypatch):
    notes = ROOT / "notebooks"
    assert problem(notes / "x.ipynb", "../glsl/matmul_1_naive.comp") is None
    assert "above the repository root" in problem(notes / "x.ipynb", "../../glsl/matmul_1_naive.comp")
    assert "no such file" in problem(notes / "x.ipynb", "../glsl/no_such_shader.comp")
    assert problem(ROOT / "README.md", "https://example.com/nothing") is None
    assert "is a folder" in problem(ROOT / "README.md", "glsl/")
    assert "is a folder" in problem(ROOT / "README.md", "glsl")
    assert problem(ROOT / "README.md", "glsl/README.md") is None
    assert "is hidden" in problem(ROOT / "README.md", ".ci/run")
    assert "is hidden" in problem(notes / "x.ipynb", "../.ci/browser_check.py")
    assert problem(ROOT / "README.md", "#quick-start") is None
    assert problem(notes / "x.ipynb", "GLOSSARY.md#banner") is None
    assert "no heading" in problem(notes / "x.ipynb", "GLOSSARY.md#no-such-term")
    assert links("see `[not](a.md)` and [yes](b.md#c) and <a href=\"d.ipynb\">d</a>") == ["b.md#c", "d.ipynb"]
    assert {"Section-4:-x-and-y", "section-4-x-and-y"} <= _anchors_of_text("## Section 4: `x` and *y*")
    assert {"a", "a-1", "anchor"} <= _anchors_of_text('# A\n## a\n<a id="anchor"></a>\n```\n# not a heading\n```')
    assert github_id("What we measured") == jupyterlab_id("What we measured").lower() == "what-we-measured"


def test_every_relative_link_opens():
    dead = dead_links()
    assert not dead, f"{len(dead)} dead links (file, cell: (target) why):\n" + "\n".join(dead)

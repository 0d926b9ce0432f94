"""No measured figure typed into a notebook's prose.

A figure a run measures (a time, a rate, a ratio, an accuracy, a share) belongs in a code cell's output,
and a sentence that draws a conclusion from it is printed by code from the measured numbers, so it stays
true on another machine. This test reads the markdown cells of every notebooks/*.ipynb and fails listing
each line with a measurement-like number (µs, us, ns, ms, s, GB/s, MB/s, GFLOP/s, TFLOP/s, %, a factor
such as 3.4× or "ten times slower", "a hundred microseconds") that names no source on the same line. A line passes when it names
where the figure comes from: a paper or a year in brackets, the seed notebook, a goal, target or "at
least", a results table or a JSON file, a datasheet. Dimensions (16×16, 37×70×13) are not factors.

It catches every line that shared/tools/prose_numbers.py (the project's first checker) catches, except
a line excused by a JSON file it names, and more: factors, ns and MB/s... with units, number words with
"times", and it takes neither a bare "seed", a bare "table" nor any year-like number (2048) as a source.

It also checks that every link into notebooks/GLOSSARY.md names one of its entries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

NUMBER = r"(?<![\w.×/])(\d+(?:[.,]\d+)*)"
UNIT = re.compile(NUMBER + r"\s*(µs|us\b|ns\b|ms\b|s\b|sec\b|seconds?\b|(?:micro|milli|nano)seconds?\b|minutes?\b|"
                  r"GB/s|GiB/s|MB/s|GFLOP/s|TFLOP/s|GFLOPS\b|TFLOPS\b|%|percent\b)")
# 3.4×, 4x faster, (10×): a number then × or x that is not a dimension (no number after it)
FACTOR = re.compile(NUMBER + r"\s*[×x](?![\w×-]|\s*\d|\s*[A-Za-z_]\w*\s*[×x])")
WORDS = r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|a hundred|hundred|" \
        r"a thousand|thousand)"
WORD_UNIT = re.compile(r"(?i)\b" + WORDS + r"\s+(?:(?:micro|milli|nano)?seconds|minutes)\b")
TIMES = re.compile(r"(?i)\b(\d+(?:\.\d+)?|" + WORDS + r")\s+times\s+(?:faster|slower|longer|shorter|quicker|"
                   r"as fast|as slow|as long|more time|less time)")
SOURCE = re.compile(
    r"(?i)(seed notebook|the seed's|asks for|at least|target|goal|paper|published|datasheet|"
    r"whitepaper|spec sheet|\(\d{4}\)|\bet al\b|lecun|simard|srivastava|hinton|kingma|glorot|"
    r"results table|readme|\btable \d|\.json\b|source:)")


def figures(line: str) -> list[str]:
    """The measurement-like figures in one line of prose."""
    found = [m.group(0) for m in UNIT.finditer(line)]
    found += [m.group(0) for m in FACTOR.finditer(line)]
    found += [m.group(0) for m in TIMES.finditer(line)]
    found += [m.group(0) for m in WORD_UNIT.finditer(line)]
    return found


def unsourced(line: str) -> list[str]:
    """The figures of a line that names no source (empty if it names one or has none)."""
    found = figures(line)
    return found if found and not SOURCE.search(line) else []


def markdown_lines(path: Path):
    """(cell index, line) for every line of every markdown cell."""
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                yield i, line


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_unsourced_figures_in_prose(path):
    hits = [f"  cell {i}: {', '.join(found)} | {line.strip()[:120]}"
            for i, line in markdown_lines(path) if (found := unsourced(line))]
    assert not hits, (f"{path.name}: {len(hits)} line(s) of prose state a figure with no source on the line; "
                      "print it (and any conclusion drawn from it) from code, or name the source:\n"
                      + "\n".join(hits))


@pytest.mark.parametrize("line", [
    "The surprise is how little of it is arithmetic: the kernel is 59 % of the total.",
    "an earlier run on the lent H100 gave 94 µs (write, 2 dispatches, read) against 46 µs.",
    "the output layer took ten times longer when it wrote the same buffer",
    "tiling gains only 1.6× at 4096³",
    "the GPU path is 4.5x slower",
    "at about 0.59 s per epoch on this machine",
    "it reads 15.1 GB/s, and 37.3 TFLOP/s at 2048",        # a year-like number is no source
    "with seed 0 it reaches 97.83% test accuracy",         # nor is the random seed
    "the table below: 3.39 ms",                            # nor a bare 'table'
    "a kernel of 350 ns",
    "It is about a hundred microseconds on the H100",
])
def test_catches(line):
    assert unsourced(line), line


@pytest.mark.parametrize("line", [
    "A 16×16 work group loads a 16×16 tile; check on 37×70×13, 1×300×77",
    "784 × 128 + 128 × 10 ≈ 100 k multiply-adds",
    "the seed notebook trained 784-10-10 to 91.0 % test accuracy",
    "the series asks for at least 97.5 % in full mode",
    "the 784-800-10 net (published: 98.4 %, Simard et al. (2003))",
    "README results table: 37.3 TFLOP/s",
    "the committed run (notebooks/results/bench-h100.json): 22.5 TFLOP/s",
    "at 4096³ the 16 threads of a column, one per 4 bytes, std430",
    "set TILE to 8: predict, then measure",
    "float32 rounds to about 1e-7; a mask of 4 x-coordinates",
])
def test_passes(line):
    assert not unsourced(line), line


def _shared_checker():
    for path in (ROOT.parent / "shared" / "tools" / "prose_numbers.py", Path("/work/shared/tools/prose_numbers.py")):
        if path.is_file():
            return path
    return None


def test_catches_what_the_shared_checker_catches():
    """Every line shared/tools/prose_numbers.py flags in any notebook, this test flags too (or it names a JSON file)."""
    tool = _shared_checker()
    if tool is None:
        pytest.skip("shared/tools/prose_numbers.py is not beside this checkout")
    source = tool.read_text()
    unit = re.compile(re.search(r'UNIT = re\.compile\((r".*")\)', source).group(1)[2:-1])
    sourced = re.compile(re.search(r'SOURCE = re\.compile\((r".*")\)', source).group(1)[2:-1])
    missed = []
    for path in NOTEBOOKS:
        for i, line in markdown_lines(path):
            if line.strip().startswith(("```", "    ")):
                continue
            if unit.search(line) and not sourced.search(line) and not unsourced(line) \
                    and not re.search(r"\.json\b", line):
                missed.append(f"{path.name}[{i}]: {line.strip()[:120]}")
    assert not missed, "lines the shared checker flags and this test lets pass:\n" + "\n".join(missed)


def test_glossary_links_resolve():
    """Every GLOSSARY.md#anchor a notebook or the glossary links to names one of its entries. Entries are
    '### ' headings in lower case letters, digits, spaces and hyphens, so that GitHub and JupyterLab make
    the same anchor of them (spaces become hyphens)."""
    glossary = (ROOT / "notebooks" / "GLOSSARY.md").read_text()
    headings = re.findall(r"(?m)^### (.+)$", glossary)
    odd = [h for h in headings if not re.fullmatch(r"[a-z0-9 -]+", h)]
    assert not odd, f"glossary headings GitHub and JupyterLab would anchor differently: {odd}"
    anchors = {h.replace(" ", "-") for h in headings}
    links = [(path.name, a) for path in NOTEBOOKS for a in re.findall(r"GLOSSARY\.md#([\w-]+)", path.read_text())]
    links += [("GLOSSARY.md", a) for a in re.findall(r"\]\(#([\w-]+)\)", glossary)]
    broken = sorted({f"{name}: #{a}" for name, a in links if a not in anchors})
    assert not broken, "links to no glossary entry:\n" + "\n".join(broken)

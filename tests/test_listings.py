"""Every shader listing a notebook shows fits on a screen, and its line ranges still match the file.

plots.show_shader shows a long shader as its banner's title and Dispatch field plus the core lines a
cell names (`lines=`): strings searched in the file. A shader edit can move or remove such a line; this
test runs every show_shader call in the notebooks through shader_excerpt (no GL needed), so a range that
no longer matches fails here, and so does a listing longer than plots.SCREEN_LINES.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from helpers import plots

ROOT = Path(__file__).resolve().parent.parent


def listing_calls():
    """(notebook, cell index, shader name, lines) for every plots.show_shader(...) call in a code cell."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        for index, cell in enumerate(cells):
            if cell["cell_type"] != "code" or "show_shader" not in "".join(cell["source"]):
                continue
            for node in ast.walk(ast.parse("".join(cell["source"]))):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "show_shader":
                    args = [ast.literal_eval(a) for a in node.args]
                    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
                    yield path.name, index, *args, kwargs.get("lines", args[1] if len(args) > 1 else None)


CALLS = list(listing_calls())


def test_the_notebooks_show_shaders():
    assert len(CALLS) >= 20, f"found only {len(CALLS)} show_shader calls: did the parsing break?"


@pytest.mark.parametrize("notebook, cell, name, lines", CALLS, ids=[f"{c[0][:2]}-cell{c[1]}-{c[2]}" for c in CALLS])
def test_listing_fits_a_screen(notebook, cell, name, lines):
    text, kept = plots.shader_excerpt(name, lines)
    shown = text.count("\n")
    assert shown <= plots.SCREEN_LINES, (
        f"{notebook} cell {cell} shows {shown} lines of {name} (ranges {kept}), more than a screen "
        f"({plots.SCREEN_LINES}): narrow its lines=[...]")


def test_a_long_shader_keeps_its_title_and_dispatch():
    name = "fused_forward_1_xent.comp"
    source = (ROOT / "glsl" / name).read_text().splitlines()
    assert len(source) > plots.SCREEN_LINES
    text, kept = plots.shader_excerpt(name, [("// 1. Gather", "// 1. Gather")])
    shown = text.splitlines()
    assert shown[:2] == source[:2]                                  # #version and the title
    assert any(line.startswith("// Dispatch") for line in shown)
    assert not any(line.startswith("// Bindings") for line in shown)
    assert any("not shown (banner: " in line and "Bindings" in line for line in shown)
    assert "    // 1. Gather: four pixels per word, straight from the resident training set." in shown
    assert shown[-1].startswith("// ... lines ") and shown[-1].endswith(f"-{len(source)} not shown ...")


def test_a_short_shader_is_kept_whole():
    name = "update_1_sgd.comp"
    text, kept = plots.shader_excerpt(name)
    assert text == (ROOT / "glsl" / name).read_text() and len(kept) == 1


def test_a_range_that_matches_nothing_names_the_file():
    with pytest.raises(ValueError, match="fused_forward_1_xent.comp: no line containing 'no such line'"):
        plots.shader_excerpt("fused_forward_1_xent.comp", [("no such line", -1)])

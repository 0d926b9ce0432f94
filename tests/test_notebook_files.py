"""What a reader gets on opening a notebook in JupyterLab: listings that fit a screen, a file that
opening does not mark modified.

Every shader listing a notebook shows fits on a screen, and its line ranges still match the file.
plots.show_shader shows a long shader as its banner's title and Dispatch field plus the core lines a
cell names (`lines=`): strings searched in the file. A shader edit can move or remove such a line; this
test runs every show_shader call in the notebooks through shader_excerpt (no GL needed), so a range that
no longer matches fails here, and so does a listing longer than plots.SCREEN_LINES.

JupyterLab marks a notebook modified when the kernel it starts reports another language_info than the
one stored, and saves whole numbers in widget state as JSON integers. The committed notebooks all carry
one kernelspec and language_info (.ci/execute_notebooks.py --stamp) and integers where a number is whole.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from helpers import plots

ROOT = Path(__file__).resolve().parent.parent


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def listing_calls():
    """(notebook, cell index, shader name, lines) for every plots.show_shader(...) call in a code cell."""
    for path in NOTEBOOKS:
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


def test_every_notebook_stores_the_same_kernel_metadata():
    stored = {path.name: {key: json.loads(path.read_text())["metadata"].get(key)
                          for key in ("kernelspec", "language_info")} for path in NOTEBOOKS}
    first = stored[NOTEBOOKS[0].name]
    assert first["kernelspec"] and first["language_info"], f"{NOTEBOOKS[0].name} stores no kernel metadata"
    differ = [name for name, meta in stored.items() if meta != first]
    assert not differ, (f"{differ} store other kernel metadata than {NOTEBOOKS[0].name} "
                        f"({first['language_info'].get('version')}): run .ci/execute_notebooks.py --stamp on them")


def test_widget_state_stores_whole_numbers_as_integers():
    def floats(value, where):
        if isinstance(value, dict):
            for key, item in value.items():
                yield from floats(item, f"{where}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from floats(item, f"{where}[{i}]")
        elif isinstance(value, float) and value.is_integer():
            yield where

    found = [where for path in NOTEBOOKS
             for where in floats(json.loads(path.read_text())["metadata"].get("widgets", {}), path.name)]
    assert not found, f"whole numbers stored as floats (JupyterLab saves them as integers): {found[:5]}"


INTERACTIVE = "interactive-widget"   # .ci/execute_notebooks.py's tag for a widget the notebook means to show


def test_committed_outputs_hold_no_widget_views():
    """A stored widget view is drawn only in a trusted notebook, and there with no kernel behind it, as a
    widget with red 'disconnected' icons: a committed progress bar is text (.ci/execute_notebooks.py stores
    it so). Only a cell tagged `interactive-widget` may keep one, beside a static picture of its last state."""
    found = []
    for path in NOTEBOOKS:
        for index, cell in enumerate(json.loads(path.read_text())["cells"]):
            outputs = cell.get("outputs", [])
            if INTERACTIVE in cell.get("metadata", {}).get("tags", []):
                if not any("image/png" in o.get("data", {}) for o in outputs):
                    found.append(f"{path.name} cell {index}: tagged '{INTERACTIVE}' but no picture of its last state")
                continue
            views = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
            if views:
                found.append(f"{path.name} cell {index}: {views}")
    assert not found, ("widget views stored in cells not tagged 'interactive-widget' (run "
                       f".ci/execute_notebooks.py --text-widgets on the notebook), or a tagged cell with no "
                       f"image/png output beside its widget: {found}")

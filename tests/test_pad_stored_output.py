"""Notebook 10's pad, as a reader meets it without running it: the stored notebook holds only the picture of
the pad (no widget view, no saved widget state), so JupyterLab shows that picture, opened plainly (no raw
`HBox(children=...)` text) and after "Trust Notebook" (no widget drawn from saved state, disconnected). The
live pad appears when the cell runs: the execute step (.ci/execute_notebooks.py) drops the widget view of a
cell not tagged `interactive-widget`, and the saved state with it. .ci/browser_check.py checks the same in
a real browser, both ways."""

import importlib.util
import json

import nbformat

from helpers.quickstart import ROOT

NOTEBOOK = ROOT / "notebooks" / "10_draw_a_digit.ipynb"
VIEW, STATE = "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"


def pad_cell(nb):
    found = [c for c in nb["cells"] if c["cell_type"] == "code" and "pad.widget()" in "".join(c["source"])]
    assert len(found) == 1, "notebook 10 should display the pad in one cell"
    return found[0]


def test_the_stored_pad_is_only_its_picture():
    nb = json.loads(NOTEBOOK.read_text())
    cell = pad_cell(nb)
    assert "interactive-widget" not in cell["metadata"].get("tags", []), \
        "a tagged cell keeps its widget view, which a reader sees as text or as a dead pad"
    assert "widgets" not in nb["metadata"], "saved widget state: JupyterLab draws a dead pad from it once trusted"
    views = [i for i, c in enumerate(nb["cells"]) for o in c.get("outputs", []) if VIEW in o.get("data", {})]
    assert not views, f"widget views stored in cells {views}"
    texts = ["".join(o.get("data", {}).get("text/plain", "")) for o in cell["outputs"]]
    assert not any("children=" in t for t in texts), "a widget's repr stored as text"
    assert cell["outputs"] and all("image/png" in o.get("data", {}) for o in cell["outputs"]), \
        "the pad cell should store the picture of the pad, and only that"


def _execute_notebooks():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / ".ci" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_running_the_pad_cell_then_the_execute_step_leaves_only_the_picture():
    """What the pad cell outputs when run (the widget's view, then the picture), through the execute step's
    widget conversion: the view and every saved model go, the picture stays."""
    ex = _execute_notebooks()
    nb = nbformat.read(NOTEBOOK, 4)
    cell = pad_cell(nb)
    picture = cell.outputs[0]
    view = nbformat.v4.new_output("display_data", data={
        VIEW: {"model_id": "box", "version_major": 2, "version_minor": 0},
        "text/plain": "HBox(children=(VBox(children=(Canvas(height=280, …"})
    cell.outputs = [view, picture]
    nb.metadata["widgets"] = {STATE: {"state": {"box": {"model_name": "HBoxModel", "state": {"children": []}}},
                                      "version_major": 2, "version_minor": 0}}
    assert ex.text_widgets(nb) == 1
    assert cell.outputs == [picture] and "widgets" not in nb.metadata

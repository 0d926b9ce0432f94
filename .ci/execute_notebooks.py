"""Execute notebooks top to bottom and save them with their outputs (used for the committed GPU runs).

    python3 .ci/execute_notebooks.py OUT_DIR notebooks/02_forward_pass_glsl.ipynb ...

Each notebook runs in a fresh kernel with notebooks/ as its working directory, so no state is shared, and
is written to OUT_DIR (created if needed) as soon as it has run, so a failure later loses nothing.
Figures are kept (the inline backend), so MPLBACKEND must not force Agg here. Progress bars are stored
as text, the last line they showed: a stream bar's final line, and for a widget bar (tqdm.auto) its
text/plain fallback rewritten from the bar's last state, with the widget view itself dropped. A stored
widget view is drawn only in a trusted notebook, and there, with no kernel behind it, with red
"disconnected" icons; JupyterLab still draws live bars while a reader runs a cell. Only a cell tagged
`interactive-widget` (a widget the notebook means to show, committed with a static picture of its last
state beside it) keeps its widget view and the saved state it needs. Whole numbers in that saved state
are stored as JSON integers (469, not 469.0, as JupyterLab saves them), and empty stream outputs are
dropped.

Every verdict a notebook records (helpers.findings.verdict) is stored in its metadata, "verdicts": {id:
outcome}, beside "run": {card, date, mode}; OUT_DIR/verdicts.json gathers them as one run of
notebooks/results/verdicts-<card>.json (.ci/verdicts.py adds it there).

    python3 .ci/execute_notebooks.py --text-widgets notebooks/*.ipynb

does only that conversion, in place, without executing anything.

    python3 .ci/execute_notebooks.py --stamp notebooks/*.ipynb

writes, without executing anything, the kernelspec and language_info that a python3 kernel of this
machine reports, which is what JupyterLab writes on opening: a notebook whose stored language_info differs
(another Python version) is marked modified as soon as it opens. The GPU runs execute on the device's
Python (3.12); the committed notebooks are stamped afterwards on the Python CI uses, so a reader with
that Python opens them unmodified (CONTRIBUTING.md, section "The committed notebook outputs").
"""

import datetime
import html
import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def coalesce_streams(nb) -> None:
    """Merge consecutive stdout/stderr outputs of a cell and drop text a carriage return overwrote, so a
    progress bar is stored as the last line it showed (as JupyterLab displays it), not one line per update."""
    for cell in nb.cells:
        merged = []
        for output in cell.get("outputs", []):
            if (output.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == output.name):
                merged[-1].text += output.text
            else:
                merged.append(output)
        for output in merged:
            if output.output_type == "stream":
                output.text = re.sub(r"[^\n]*\r(?=[^\n])", "", output.text)
        if cell.cell_type == "code":
            cell.outputs = [o for o in merged if not (o.output_type == "stream" and not o.text.strip())]


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
INTERACTIVE = "interactive-widget"   # the cell tag that keeps a widget view in the committed notebook


def _state(nb) -> dict:
    return nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def bar_text(state: dict, model_id: str) -> str:
    """The text a progress bar widget (tqdm.auto's HBox: label, bar, counts) showed last; '' if not one."""
    box = state.get(model_id, {})
    if box.get("model_name") != "HBoxModel":
        return ""
    parts = [state.get(child.removeprefix("IPY_MODEL_"), {}) for child in box["state"].get("children", [])]
    bar = next((p["state"] for p in parts if p.get("model_name") in ("FloatProgressModel", "IntProgressModel")), None)
    texts = [html.unescape(p["state"]["value"]).replace("\u2007", " ").strip()
             for p in parts if p.get("model_name") == "HTMLModel" and p["state"].get("value")]
    if bar is not None and len(texts) == 2 and bar.get("max"):   # label, bar drawn as text, counts
        filled = round(10 * min(1.0, bar.get("value", 0) / bar["max"]))
        texts.insert(1, "|" + "\u2588" * filled + " " * (10 - filled) + "|")
    return " ".join(t for t in texts if t)


def _referenced(state: dict, roots: list[str]) -> set[str]:
    """`roots` and every model their saved state names ("IPY_MODEL_<id>"), transitively."""
    keep, todo = set(), list(roots)
    while todo:
        model = todo.pop()
        if model in keep or model not in state:
            continue
        keep.add(model)
        todo += re.findall(r"IPY_MODEL_(\w+)", json.dumps(state[model].get("state", {})))
    return keep


def text_widgets(nb) -> int:
    """Store every widget view as text, except in cells tagged `interactive-widget`: a progress bar becomes
    its last line (bar_text) as a plain-text output; any other widget view is dropped (its fallback is only
    the widget's repr). The saved widget state keeps only the models the remaining views need (none: no
    state at all). Returns how many widget views were converted or dropped."""
    state, changed, kept = _state(nb), 0, []
    for cell in nb.cells:
        interactive = INTERACTIVE in cell.get("metadata", {}).get("tags", [])
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                outputs.append(output)
            elif interactive:
                outputs.append(output)
                kept.append(view["model_id"])
            else:
                changed += 1
                text = bar_text(state, view["model_id"])
                if text:
                    outputs.append(nbformat.v4.new_output("display_data", data={"text/plain": text}))
        if cell.cell_type == "code":
            cell.outputs = outputs
    if "widgets" in nb.metadata:
        keep = _referenced(state, kept)
        if keep:
            saved = nb.metadata["widgets"][WIDGET_STATE]
            saved["state"] = {model: value for model, value in state.items() if model in keep}
        else:
            del nb.metadata["widgets"]
    return changed


def whole_numbers(value):
    """`value` (saved widget state) with every float that is a whole number as an int: 469.0 -> 469."""
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def set_kernel_metadata(nb, kernel_name: str = "python3", language_info: dict | None = None) -> None:
    """The kernelspec JupyterLab writes for `kernel_name`, and `language_info` when given (after a run,
    nbclient has already stored the executing kernel's)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    nb.metadata["kernelspec"] = {"display_name": spec.display_name, "language": spec.language, "name": kernel_name}
    if language_info is not None:
        nb.metadata["language_info"] = language_info


def kernel_language_info(kernel_name: str = "python3") -> dict:
    """The language_info a fresh `kernel_name` kernel of this machine reports (what JupyterLab stores)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name=kernel_name)
    try:
        return client.kernel_info(reply=True, timeout=60)["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def stamp(*paths: str) -> int:
    """Set the kernelspec and language_info of each notebook to this machine's, in place; nothing runs."""
    info = kernel_language_info()
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        set_kernel_metadata(nb, language_info=info)
        nbformat.write(nb, path)
        print(f"{path}: language_info {info['name']} {info['version']}")
    return 0


def text_only(*paths: str) -> int:
    """text_widgets on each notebook, in place; nothing runs."""
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        changed = text_widgets(nb)
        nbformat.write(nb, path)
        print(f"{path}: {changed} widget views stored as text")
    return 0


def this_card() -> str:
    """The card the notebooks will run on, by the renderer name of a context made here."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from helpers import gl

    ctx = gl.create_context()
    try:
        return gl.card(ctx)
    finally:
        ctx.release()


def read_verdicts(log: Path, name: str) -> dict:
    """{id: outcome} from a notebook's verdict log; an id recorded twice with two outcomes is an error."""
    verdicts = {}
    for line in (log.read_text().splitlines() if log.exists() else []):
        entry = json.loads(line)
        if verdicts.get(entry["id"], entry["outcome"]) != entry["outcome"]:
            raise SystemExit(f"{name}: verdict id {entry['id']!r} recorded twice with different outcomes: "
                             "give each verdict of a notebook its own id")
        verdicts[entry["id"]] = entry["outcome"]
    return verdicts


def main(out_dir: str, *paths: str) -> int:
    os.environ.pop("MPLBACKEND", None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    run = {"card": this_card(), "date": datetime.date.today().isoformat(),
           "mode": "QUICK" if os.environ.get("QUICK", "").strip().lower() not in ("", "0", "false", "no") else "FULL"}
    everything = dict(run, verdicts={})
    for path in map(Path, paths):
        nb = nbformat.read(path, as_version=4)
        log = out / f"{path.stem}.verdicts.jsonl"
        log.unlink(missing_ok=True)
        os.environ["VERDICTS_LOG"] = str(log.resolve())   # the kernel inherits it; helpers.findings.verdict appends
        start = time.perf_counter()
        client = NotebookClient(nb, timeout=900, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        try:
            client.execute()
        except Exception as exc:  # keep what ran, report, go on with the next notebook
            failed += 1
            print(f"{path.name}: FAILED after {time.perf_counter() - start:.1f} s: {type(exc).__name__}: "
                  f"{str(exc)[-2000:]}", flush=True)
        else:
            print(f"{path.name}: ran in {time.perf_counter() - start:.1f} s", flush=True)
        coalesce_streams(nb)
        text_widgets(nb)
        widgets = nb.metadata.get("widgets")
        if widgets:
            nb.metadata["widgets"] = whole_numbers(widgets)
        set_kernel_metadata(nb)
        verdicts = read_verdicts(log, path.name)
        nb.metadata["run"] = run
        nb.metadata["verdicts"] = verdicts
        everything["verdicts"].update({f"{path.stem}/{vid}": outcome for vid, outcome in verdicts.items()})
        nbformat.write(nb, out / path.name)   # now: a later notebook's failure or a killed run loses nothing
        (out / "verdicts.json").write_text(json.dumps(everything, indent=1) + "\n")
        print(f"  written to {out / path.name} ({len(verdicts)} verdicts)", flush=True)
    return failed


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: python3 .ci/execute_notebooks.py OUT_DIR NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]\n"
              "       python3 .ci/execute_notebooks.py --text-widgets NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]\n"
              "       python3 .ci/execute_notebooks.py --stamp NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]", file=sys.stderr)
        sys.exit(2)
    modes = {"--stamp": stamp, "--text-widgets": text_only}
    sys.exit(modes[sys.argv[1]](*sys.argv[2:]) if sys.argv[1] in modes else main(*sys.argv[1:]))

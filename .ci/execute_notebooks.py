"""Execute notebooks top to bottom and save them with their outputs (used for the committed GPU runs).

    python3 .ci/execute_notebooks.py OUT_DIR notebooks/02_forward_pass_glsl.ipynb ...

Each notebook runs in a fresh kernel with notebooks/ as its working directory, so no state is shared.
Figures are kept (the inline backend), so MPLBACKEND must not force Agg here. Progress bars are stored
as the last line they showed (a widget bar's plain-text fallback too), whole numbers in the saved widget
state as JSON integers (469, not 469.0, as JupyterLab saves them), and empty stream outputs are dropped.

    python3 .ci/execute_notebooks.py --stamp notebooks/*.ipynb

writes, without executing anything, the kernelspec and language_info that a python3 kernel of this
machine reports, which is what JupyterLab writes on opening: a notebook whose stored language_info differs
(another Python version) is marked modified as soon as it opens. The GPU runs execute on the device's
Python (3.12); the committed notebooks are stamped afterwards on the Python CI uses, so a reader with
that Python opens them unmodified (README, "Running the notebooks").
"""

import html
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


def widget_text(nb) -> None:
    """A progress bar drawn as a widget (tqdm.auto) keeps its first text as the plain-text fallback that
    viewers without widgets show ("0/469"); replace it with the bar's last state from the saved widgets."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            box = state.get(view["model_id"], {}) if view else {}
            if box.get("model_name") != "HBoxModel":
                continue
            parts = [state.get(child.removeprefix("IPY_MODEL_"), {}) for child in box["state"].get("children", [])]
            text = " ".join(html.unescape(part["state"]["value"]).replace("\u2007", " ").strip()
                            for part in parts if part.get("model_name") == "HTMLModel" and part["state"].get("value"))
            if text:
                output["data"]["text/plain"] = text


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


def main(out_dir: str, *paths: str) -> int:
    os.environ.pop("MPLBACKEND", None)
    failed = 0
    for path in map(Path, paths):
        nb = nbformat.read(path, as_version=4)
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
        widget_text(nb)
        widgets = nb.metadata.get("widgets")
        if widgets:
            nb.metadata["widgets"] = whole_numbers(widgets)
        set_kernel_metadata(nb)
        nbformat.write(nb, Path(out_dir) / path.name)
    return failed


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: python3 .ci/execute_notebooks.py OUT_DIR NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]\n"
              "       python3 .ci/execute_notebooks.py --stamp NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(stamp(*sys.argv[2:]) if sys.argv[1] == "--stamp" else main(*sys.argv[1:]))

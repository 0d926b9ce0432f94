"""Execute notebooks top to bottom and save them with their outputs (used for the committed GPU runs).

    python3 .ci/execute_notebooks.py OUT_DIR notebooks/02_forward_pass_glsl.ipynb ...

Each notebook runs in a fresh kernel with notebooks/ as its working directory, so no state is shared.
Figures are kept (the inline backend), so MPLBACKEND must not force Agg here. Progress bars are stored
as the last line they showed (a widget bar's plain-text fallback too), empty stream outputs are dropped, and the notebook's kernelspec and
language_info are set to what JupyterLab writes for this kernel, so opening it does not mark it modified.
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


def set_kernel_metadata(nb, kernel_name: str = "python3") -> None:
    """The kernelspec JupyterLab writes for `kernel_name` (nbclient already stored the kernel's language_info)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    nb.metadata["kernelspec"] = {"display_name": spec.display_name, "language": spec.language, "name": kernel_name}


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
        set_kernel_metadata(nb)
        nbformat.write(nb, Path(out_dir) / path.name)
    return failed


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: python3 .ci/execute_notebooks.py OUT_DIR NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))

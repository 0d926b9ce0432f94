"""Execute notebooks top to bottom and save them with their outputs (used for the committed GPU runs).

    python3 .ci/execute_notebooks.py OUT_DIR notebooks/02_forward_pass_glsl.ipynb ...

Each notebook runs in a fresh kernel with notebooks/ as its working directory, so no state is shared.
Figures are kept (the inline backend), so MPLBACKEND must not force Agg here.
"""

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


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
        nbformat.write(nb, Path(out_dir) / path.name)
    return failed


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

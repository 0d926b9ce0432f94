"""pytest --nbval-lax on the notebooks: every notebook trains or tests on MNIST, so on a machine that cannot
get MNIST (no MNIST_DIR with the four files, nothing in tensorflow-datasets' cache, no network) their cells
are reported as skipped, with one line saying why and how to fix it, instead of failing one after another.
Where MNIST can be had (MNIST_DIR set to a good folder, the cache filled, or the network up), every cell
runs as before. helpers.data.unavailable() decides, with the loader's own rules. With REQUIRE_MNIST=1
(as .ci/run sets it, where the four files must be there) the cells fail with that line instead of skipping."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NO_MNIST = {}   # "reason": why the notebooks cannot run here, once decided at collection


def _is_notebook_cell(item) -> bool:
    return Path(str(getattr(item, "path", getattr(item, "fspath", "")))).suffix == ".ipynb"


def pytest_collection_modifyitems(config, items):
    if "reason" not in NO_MNIST and any(_is_notebook_cell(item) for item in items):
        from helpers import data

        problem = data.unavailable()
        NO_MNIST["reason"] = problem and f"the notebooks need MNIST, which this machine cannot get: {problem}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip before the notebook's kernel starts; raised here, the skips of every cell fold into one -rs line."""
    if _is_notebook_cell(item) and NO_MNIST.get("reason"):
        if os.environ.get("REQUIRE_MNIST"):
            pytest.fail(NO_MNIST["reason"], pytrace=False)
        pytest.skip(NO_MNIST["reason"])

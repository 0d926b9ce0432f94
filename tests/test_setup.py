"""The quick start: it stops at once with the one apt-get line for what is missing, hands its process to
JupyterLab (no orphan when it is stopped), prints skip reasons, and the README shows commands that work."""

import ctypes.util
import importlib.util
import os
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import quickstart

ROOT = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the package checks are for Linux")


def bare_machine(tmp_path, monkeypatch, *, root=False, keep=()):
    """A machine with none of the system packages, except those in `keep`; no .venv yet."""
    lib, vendors = tmp_path / "lib", tmp_path / "egl_vendor.d"
    (lib / "dri").mkdir(parents=True), vendors.mkdir()
    if "libegl1" in keep:
        (lib / "libEGL.so.1").touch()
    if "libegl-mesa0" in keep:
        (lib / "libEGL_mesa.so.0").touch()
        (vendors / "50_mesa.json").write_text("{}")
    if "libgl1-mesa-dri" in keep:
        (lib / "dri" / "swrast_dri.so").touch()
    monkeypatch.setattr(quickstart, "LIB_DIRS", (str(lib),))
    monkeypatch.setattr(quickstart, "EGL_VENDOR_DIRS", (str(vendors),))
    monkeypatch.setattr(quickstart, "APT_LISTS", str(ROOT / "README.md"))   # apt has its package lists
    monkeypatch.setattr(quickstart, "VENV", tmp_path / "no-venv-yet")
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    real_which, real_find_spec = quickstart.shutil.which, importlib.util.find_spec
    monkeypatch.setattr(quickstart.shutil, "which", lambda name: (real_which(name) if "glslang-tools" in keep or
                                                                  name != "glslangValidator" else None))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: (real_find_spec(name, *a) if
                                                                       "python3-venv" in keep or name != "ensurepip"
                                                                       else None))
    monkeypatch.setattr(quickstart, "_venv_package", lambda: "python3-venv")
    monkeypatch.setattr(os, "geteuid", lambda: 0 if root else 1000)

    def must_not_run():
        raise AssertionError("ensure_venv ran although system packages are missing")

    monkeypatch.setattr(quickstart, "ensure_venv", must_not_run)


@linux_only
def test_a_bare_machine_gets_one_apt_line_at_once(tmp_path, monkeypatch, capsys):
    bare_machine(tmp_path, monkeypatch)
    start = time.perf_counter()
    assert quickstart.main(["lab"]) == 1
    assert time.perf_counter() - start < 5
    printed = capsys.readouterr().err
    commands = [line.strip() for line in printed.splitlines() if "apt-get" in line]
    assert commands == ["sudo apt-get install python3-venv libegl1 libegl-mesa0 libgl1-mesa-dri glslang-tools"], printed


@linux_only
def test_only_what_is_missing_is_named_and_root_needs_no_sudo(tmp_path, monkeypatch, capsys):
    bare_machine(tmp_path, monkeypatch, root=True, keep=("python3-venv", "libegl1", "libegl-mesa0", "libgl1-mesa-dri"))
    assert quickstart.main(["test"]) == 1
    assert "\n    apt-get install glslang-tools\n" in capsys.readouterr().err


@linux_only
def test_a_fresh_container_gets_apt_get_update_first(tmp_path, monkeypatch):
    bare_machine(tmp_path, monkeypatch, root=True)
    monkeypatch.setattr(quickstart, "APT_LISTS", str(tmp_path / "lists" / "*_Packages*"))
    assert quickstart.apt_line(["libegl1"]) == "apt-get update && apt-get install libegl1"


@linux_only
def test_checking_this_machine_is_cheap():
    start = time.perf_counter()
    quickstart.missing_packages()
    assert time.perf_counter() - start < 2


def test_the_test_command_prints_skip_reasons():
    assert "-rs" in quickstart.TEST_ARGS or any(a.startswith("-r") and "s" in a for a in quickstart.TEST_ARGS)


STAND_IN = """#!/bin/sh
# stands in for .venv/bin/python: says which process it is, then waits like JupyterLab
echo "PID $$ CWD $(pwd) ARGS $*"
exec sleep 60
"""

DRIVER = """
import pathlib, sys
sys.path.insert(0, sys.argv[1])
from helpers import quickstart
quickstart.missing_packages = lambda: []
quickstart.ensure_venv = lambda: pathlib.Path(sys.argv[2])
sys.exit(quickstart.main(["lab", "--no-browser"]))
"""


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_lab_hands_its_process_to_jupyterlab(tmp_path):
    """Stopping `quickstart lab` (SIGTERM) must stop JupyterLab too: it is the same process."""
    stand_in = tmp_path / "python"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(ROOT), str(stand_in)], stdout=subprocess.PIPE,
                              text=True, cwd=tmp_path)
    try:
        line = driver.stdout.readline().split()
        pid = int(line[1])
        assert line[3] == str(ROOT), "JupyterLab starts in the repository"
        assert line[5:7] == ["-m", "jupyterlab"] and line[-1] == "--no-browser", line
        assert f"--ServerApp.root_dir={ROOT}" in line, "JupyterLab serves the repository root: links to ../glsl open"
        assert f"--LabApp.default_url=/lab/tree/{quickstart.FIRST_NOTEBOOK}" in line, "it opens on the first notebook"
        assert pid == driver.pid, "quickstart waits on a child process instead of becoming JupyterLab"
        driver.terminate()
        driver.wait(timeout=10)
    finally:
        if driver.poll() is None:
            driver.kill()
        if "pid" in locals() and pid != driver.pid:   # today's behaviour: the child outlives its parent
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


# --- the README -----------------------------------------------------------------------------------

def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_readme_apt_line_and_ci_install_every_package_quickstart_checks():
    lines = re.findall(r"apt-get install ([\w. -]+)", readme_section("Requirements"))
    assert [line.split() for line in lines] == [list(quickstart.SYSTEM_PACKAGES)]
    ci = (ROOT / ".ci" / "run").read_text()
    assert all(package in ci.split() for package in quickstart.SYSTEM_PACKAGES)


def test_readme_commands_run_in_the_quickstart_environment():
    """After the quick start there is no moderngl outside .venv: every command is quickstart or .venv/bin/python."""
    for title in ("Quick start", "Requirements", "Tests"):
        section = readme_section(title)
        spans = re.findall(r"`([^`\n]+)`", section.replace("```", ""))
        block_lines = [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()]
        for command in spans + block_lines:
            command = command.split("#")[0].strip()
            if not re.search(r"(^|[\s/])python3?(\s|$)", command):
                continue   # not a command that runs Python
            if not re.match(r"^(MNIST_DIR=\S+ )?(python3 -m helpers\.quickstart |\.venv/bin/python )", command):
                pytest.fail(f"README {title}: `{command}` needs .venv/bin/python (moderngl lives in .venv)")
            module = re.search(r"-m (helpers\.\w+)", command)
            assert module and importlib.util.find_spec(module.group(1)) is not None, command


def test_the_install_shows_progress(tmp_path, monkeypatch, capsys):
    """The first install takes about a minute: a line before, pip's own lines (no -q), a line after."""
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.touch()
    (tmp_path / "lib").mkdir()
    calls = []
    monkeypatch.setattr(quickstart, "VENV", tmp_path)
    monkeypatch.setattr(quickstart, "venv_python", lambda: python)
    monkeypatch.setattr(quickstart, "_run", lambda command, what: calls.append(command))
    monkeypatch.setattr(quickstart.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, 0, stdout=str(tmp_path / "lib") + "\n"))
    quickstart.ensure_venv()
    printed = capsys.readouterr().out.splitlines()
    install = [c for c in calls if "-r" in c]
    assert install and "-q" not in install[0], "pip install -r runs quietly: nothing shows for a minute"
    assert printed[0].startswith("installing the pinned packages") and printed[-1].startswith("installed the pinned"), printed


# --- what the README's other commands write -----------------------------------------------------------

def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_a_readers_benchmark_runs_are_ignored_by_git():
    for path in ("notebooks/results/bench-mine.json", "notebooks/results/bench-rtx4090.json"):
        assert _git("check-ignore", "-q", path).returncode == 0, f"{path} is not ignored by git"
    from helpers.bench.fused import RESULTS_FILE   # the committed run: bench-<card>.json
    assert _git("check-ignore", "-q", str(RESULTS_FILE.relative_to(ROOT))).returncode == 1, \
        "the committed benchmark run must not be ignored"
    readme = (ROOT / "README.md").read_text()
    for written in re.findall(r"--out (\S+\.json)", readme):
        assert _git("check-ignore", "-q", written).returncode == 0, f"the README's bench command writes {written}, not ignored"


def _execute_notebooks():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / ".ci" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bar_state(prefix: str, value: int, total: int) -> dict:
    html_model = lambda text: {"model_name": "HTMLModel", "state": {"value": text}}   # noqa: E731
    return {f"{prefix}box": {"model_name": "HBoxModel", "state": {"children": [
                f"IPY_MODEL_{prefix}label", f"IPY_MODEL_{prefix}bar", f"IPY_MODEL_{prefix}count"]}},
            f"{prefix}label": html_model("epoch 1: 100%"),
            f"{prefix}bar": {"model_name": "FloatProgressModel", "state": {"value": value, "max": total,
                                                                           "style": f"IPY_MODEL_{prefix}style"}},
            f"{prefix}style": {"model_name": "ProgressStyleModel", "state": {}},
            f"{prefix}count": html_model(f"{value}/{total} [00:01&lt;00:00]")}


def test_execute_notebooks_stores_progress_bars_as_text_and_keeps_tagged_widgets():
    import nbformat

    ex = _execute_notebooks()
    view = lambda model: nbformat.v4.new_output("display_data", data={   # noqa: E731
        ex.WIDGET_VIEW: {"model_id": model, "version_major": 2, "version_minor": 0}, "text/plain": "0/469"})
    bar = nbformat.v4.new_code_cell("train()", outputs=[view("abox")])
    pad = nbformat.v4.new_code_cell("pad", outputs=[view("pbox"), nbformat.v4.new_output(
        "display_data", data={"image/png": "iVBOR"})], metadata={"tags": [ex.INTERACTIVE]})
    other = nbformat.v4.new_code_cell("w", outputs=[view("zzz")])
    nb = nbformat.v4.new_notebook(cells=[bar, pad, other])
    state = {**_bar_state("a", 469, 469), **_bar_state("p", 3, 10), "zzz": {"model_name": "ButtonModel", "state": {}}}
    nb.metadata["widgets"] = {ex.WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    assert ex.text_widgets(nb) == 2
    assert bar.outputs == [nbformat.v4.new_output("display_data", data={
        "text/plain": "epoch 1: 100% |\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 469/469 [00:01<00:00]"})]
    assert other.outputs == []                                      # a widget's repr says nothing to a reader
    assert ex.WIDGET_VIEW in pad.outputs[0]["data"]                 # the tagged widget stays, with what it needs
    assert set(nb.metadata["widgets"][ex.WIDGET_STATE]["state"]) == {"pbox", "plabel", "pbar", "pstyle", "pcount"}
    nb.cells[1].metadata["tags"] = []
    ex.text_widgets(nb)
    assert "widgets" not in nb.metadata                             # nothing left that needs saved state


def test_execute_notebooks_makes_out_dir_and_writes_each_notebook_when_it_has_run(tmp_path, monkeypatch):
    import nbformat

    ex = _execute_notebooks()
    for name in ("a.ipynb", "b.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), tmp_path / name)
    written_before_b = []

    class Client:
        def __init__(self, nb, **kwargs):
            self.nb = nb

        def execute(self):
            if self.nb.cells[0].source == "2":
                written_before_b.extend(p.name for p in (tmp_path / "out" / "deep").glob("*.ipynb"))
                raise RuntimeError("the kernel died")

    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("2")]), tmp_path / "b.ipynb")
    monkeypatch.setattr(ex, "NotebookClient", Client)
    monkeypatch.setattr(ex, "set_kernel_metadata", lambda nb: None)
    monkeypatch.setattr(ex, "this_card", lambda: "a card")
    assert ex.main(str(tmp_path / "out" / "deep"), str(tmp_path / "a.ipynb"), str(tmp_path / "b.ipynb")) == 1
    assert written_before_b == ["a.ipynb"]
    assert sorted(p.name for p in (tmp_path / "out" / "deep").glob("*.ipynb")) == ["a.ipynb", "b.ipynb"]
    assert json.loads((tmp_path / "out" / "deep" / "verdicts.json").read_text())["card"] == "a card"


def test_execute_notebooks_docstring_names_a_contributing_section_that_exists():
    doc = _execute_notebooks().__doc__
    sections = re.findall(r'CONTRIBUTING\.md, section "([^"]+)"', doc)
    assert sections, "the docstring points to no CONTRIBUTING.md section"
    for title in sections:
        assert f"\n## {title}\n" in (ROOT / "CONTRIBUTING.md").read_text(), f"CONTRIBUTING.md has no section '{title}'"


def test_a_notebooks_kernel_starts_in_its_folder_under_the_quick_starts_root():
    """The quick start serves the repository root; JupyterLab starts a notebook's kernel in the notebook's
    folder, so the notebooks still run with notebooks/ as their working directory (data paths, ../glsl)."""
    contents = pytest.importorskip("jupyter_server.services.contents.filemanager")
    kernels = pytest.importorskip("jupyter_server.services.kernels.kernelmanager")
    path = contents.FileContentsManager(root_dir=str(ROOT)).get_kernel_path(quickstart.FIRST_NOTEBOOK)
    assert path == "notebooks", path
    assert kernels.MappingKernelManager(root_dir=str(ROOT)).cwd_for_path(path) == str(ROOT / "notebooks")

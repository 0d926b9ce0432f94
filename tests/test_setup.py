"""The quick start: it stops at once with the one apt-get line for what is missing, hands its process to
JupyterLab (no orphan when it is stopped), prints skip reasons, and the README shows commands that work."""

import ctypes.util
import importlib.util
import os
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
        assert line[5:7] == ["-m", "jupyterlab"] and line[-2:] == [str(ROOT / "notebooks"), "--no-browser"], line
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

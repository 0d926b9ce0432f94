"""No OpenGL context: `python -m helpers.gl` prints the message alone (no traceback, exit status 1), with
advice that fits what this machine has: the apt line for missing packages, or what to check when the
packages are there and EGL still finds no device. Context creation and library lookups are monkeypatched."""

import ctypes.util
import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from helpers import quickstart

ROOT = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the EGL/Mesa advice is for Linux")


@pytest.fixture
def no_context(monkeypatch):
    """moderngl finds no display and EGL finds no device, as on a headless machine with a broken EGL."""
    import moderngl

    def fails(require=330, backend=None, **kwargs):
        if backend == "egl":
            raise Exception("requested device index 0, but found 0 devices")
        raise Exception("(standalone) XOpenDisplay: cannot open display")

    monkeypatch.setattr(moderngl, "create_standalone_context", fails)


def fake_system(tmp_path, monkeypatch, libraries=(), vendors=(), dri=False):
    """A library folder holding `libraries` (and dri/swrast_dri.so if `dri`), EGL vendor files `vendors`."""
    lib, vendor_dir = tmp_path / "lib", tmp_path / "glvnd" / "egl_vendor.d"
    (lib / "dri").mkdir(parents=True), vendor_dir.mkdir(parents=True)
    for name in libraries:
        (lib / name).touch()
    for name in vendors:
        (vendor_dir / name).write_text("{}")
    if dri:
        (lib / "dri" / "swrast_dri.so").touch()
    monkeypatch.setattr(quickstart, "LIB_DIRS", (str(lib),))
    monkeypatch.setattr(quickstart, "EGL_VENDOR_DIRS", (str(vendor_dir),))
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(quickstart, "APT_LISTS", str(tmp_path / "apt-lists" / "*"))
    (tmp_path / "apt-lists").mkdir()
    (tmp_path / "apt-lists" / "deb_Packages").touch()


def run_helpers_gl(capsys) -> tuple[object, str]:
    """`python -m helpers.gl` in this process; returns (exit code, everything printed)."""
    with pytest.raises(SystemExit) as done, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "'helpers.gl' found in sys.modules", RuntimeWarning)  # already imported
        runpy.run_module("helpers.gl", run_name="__main__", alter_sys=False)
    out = capsys.readouterr()
    return done.value.code, out.out + out.err + (done.value.code if isinstance(done.value.code, str) else "")


@linux_only
def test_packages_missing_gives_the_apt_line_and_no_traceback(no_context, tmp_path, monkeypatch, capsys):
    fake_system(tmp_path, monkeypatch)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, printed = run_helpers_gl(capsys)
    assert code not in (0, None)
    assert "Traceback" not in printed
    assert "Could not create an OpenGL 4.3 context" in printed and "found 0 devices" in printed
    assert "sudo apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri" in printed
    assert "/dev/dri" not in printed, "no device checklist when the packages themselves are missing"


@linux_only
def test_only_the_missing_package_is_named(no_context, tmp_path, monkeypatch, capsys):
    fake_system(tmp_path, monkeypatch, libraries=["libEGL.so.1", "libEGL_mesa.so.0"])
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    _, printed = run_helpers_gl(capsys)
    assert "\n    apt-get install libgl1-mesa-dri\n" in printed, printed   # root: no sudo


@linux_only
def test_packages_present_says_what_to_check_instead(no_context, tmp_path, monkeypatch, capsys):
    fake_system(tmp_path, monkeypatch, libraries=["libEGL.so.1", "libEGL_mesa.so.0"], vendors=["50_mesa.json"],
                dri=True)
    monkeypatch.setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nowhere/10_nvidia.json")
    code, printed = run_helpers_gl(capsys)
    assert code not in (0, None) and "Traceback" not in printed
    assert "apt-get" not in printed, "the packages are installed: installing them again is not the fix"
    assert "egl_vendor.d: 50_mesa.json" in printed
    assert "__EGL_VENDOR_LIBRARY_FILENAMES=/nowhere/10_nvidia.json" in printed
    assert "/dev/dri" in printed and "NVIDIA driver" in printed


@linux_only
def test_an_nvidia_egl_vendor_makes_mesa_optional(tmp_path, monkeypatch):
    fake_system(tmp_path, monkeypatch, libraries=["libEGL.so.1"], vendors=["10_nvidia.json"])
    assert quickstart.missing_gl_packages() == []


@linux_only
def test_real_failure_from_the_command_line_has_no_traceback():
    """A real EGL that finds no vendor (the variable points at no file) and no X display."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["__EGL_VENDOR_LIBRARY_FILENAMES"] = "/nonexistent/egl_vendor.json"
    run = subprocess.run([sys.executable, "-m", "helpers.gl"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and run.stderr.startswith("Could not create an OpenGL 4.3 context")
    assert "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl_vendor.json" in run.stderr

"""The README's two quick-start commands. Standard library only: it runs before anything is installed.

    python3 -m helpers.quickstart lab     # .venv + pinned packages, then JupyterLab on the first notebook
    python3 -m helpers.quickstart test    # .venv + pinned packages, then the whole test suite (QUICK=1)

First, in well under a second, it checks the system packages the series needs on Linux (python3-venv,
Mesa's EGL and software renderer, glslangValidator); if any is missing it stops and prints the one
`apt-get install` line that adds exactly those. Then both commands create ./.venv on first use (and
reinstall when requirements.txt changes), and put the repository on that environment's path (a .pth
file), so `import helpers` works in JupyterLab, nbval and pytest. `lab` then becomes JupyterLab (the same
process, so stopping it stops JupyterLab), serving the repository root, so every relative link in the
notebooks (../glsl/*.comp, ../README.md) opens, and showing the first notebook; JupyterLab starts each
notebook's kernel in the notebook's folder, so the notebooks run with notebooks/ as working directory.
Extra arguments after `test` go to pytest, e.g. `python3 -m helpers.quickstart test -k matmul`. Every
other command in the README runs in that environment: `.venv/bin/python -m helpers.gl`.
"""

from __future__ import annotations

import ctypes.util
import glob
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
FIRST_NOTEBOOK = "notebooks/01_numpy_mlp.ipynb"   # what `lab` opens on, relative to ROOT
TEST_ARGS = ["tests", "notebooks", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider",
             "-rs"]   # -rs: print why each skipped test was skipped

# Where Debian and Ubuntu put shared libraries and Mesa's DRI drivers, and where EGL looks for vendors.
LIB_DIRS = ("/usr/lib/*-linux-gnu*", "/usr/lib64", "/usr/lib")
EGL_VENDOR_DIRS = ("/usr/share/glvnd/egl_vendor.d", "/etc/glvnd/egl_vendor.d")
APT_LISTS = "/var/lib/apt/lists/*_Packages*"   # empty until the first apt-get update (fresh containers)
# Every system package the series needs, in the order the README's apt line names them.
SYSTEM_PACKAGES = ("python3-venv", "libegl1", "libegl-mesa0", "libgl1-mesa-dri", "glslang-tools")


def _has_library(name: str) -> bool:
    """True if lib<name>.so* is in a library folder, or the dynamic loader knows it (ldconfig)."""
    return any(glob.glob(f"{folder}/lib{name}.so*") for folder in LIB_DIRS) or bool(ctypes.util.find_library(name))


def egl_vendors() -> list[Path]:
    """The EGL vendor files glvnd reads (50_mesa.json, 10_nvidia.json, ...)."""
    return sorted(p for folder in EGL_VENDOR_DIRS for p in Path(folder).glob("*.json"))


def missing_gl_packages() -> list[str]:
    """The Debian/Ubuntu packages of EGL and Mesa's renderer that are not installed (Linux only).

    libegl1 (the EGL loader) is always needed. Mesa's EGL vendor and its DRI drivers (llvmpipe, AMD, Intel)
    are needed unless another vendor's EGL is there (the NVIDIA driver installs 10_nvidia.json).
    """
    if not sys.platform.startswith("linux"):
        return []
    missing = [] if _has_library("EGL") else ["libegl1"]
    if any("mesa" not in p.name.lower() for p in egl_vendors()):
        return missing
    if not _has_library("EGL_mesa"):
        missing.append("libegl-mesa0")
    if not any(glob.glob(f"{folder}/dri/swrast_dri.so") for folder in LIB_DIRS):
        missing.append("libgl1-mesa-dri")
    return missing


def _venv_package() -> str:
    """python3-venv for the system's python3; python3.X-venv for another Python on the same machine."""
    python3 = shutil.which("python3")
    same = python3 and os.path.realpath(python3) == os.path.realpath(sys.executable)
    return "python3-venv" if same else f"python{sys.version_info[0]}.{sys.version_info[1]}-venv"


def missing_packages() -> list[str]:
    """Every system package this machine lacks for the quick start (Linux only; cheap: no subprocess
    unless a library is in none of LIB_DIRS)."""
    if not sys.platform.startswith("linux"):
        return []
    missing = []
    if not venv_python().exists() and (importlib.util.find_spec("ensurepip") is None
                                       or importlib.util.find_spec("venv") is None):
        missing.append(_venv_package())
    missing += missing_gl_packages()
    if shutil.which("glslangValidator") is None:
        missing.append("glslang-tools")
    return missing


def apt_line(packages: list[str]) -> str:
    """The one command that installs `packages` (no sudo as root; apt-get update first if apt has no lists)."""
    sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
    install = f"{sudo}apt-get install {' '.join(packages)}"
    if not glob.glob(APT_LISTS):   # a fresh container: apt knows no packages yet
        return f"{sudo}apt-get update && {install}"
    return install


def missing_message(packages: list[str]) -> str:
    why = {"glslang-tools": "glslangValidator, for the shader tests", "libegl1": "EGL: OpenGL without a display",
           "libegl-mesa0": "Mesa's EGL", "libgl1-mesa-dri": "Mesa's renderers, llvmpipe among them"}
    named = ", ".join(f"{p} ({why.get(p, 'virtual environments')})" for p in packages)
    line = apt_line(packages)
    if not shutil.which("apt-get"):
        line += "   # Debian/Ubuntu names: install your distribution's equivalents"
    return f"Missing system packages: {named}. Install them, then run this command again:\n\n    {line}\n"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _run(command: list[str], what: str) -> None:
    """Run a set-up step; stop with one clear line (no traceback) if it fails."""
    if subprocess.run(command).returncode != 0:
        sys.exit(f"{what} failed (command: {' '.join(command)}); see the lines above. "
                 "Fix that, then run this command again.")


def ensure_venv() -> Path:
    if sys.version_info < (3, 10):
        sys.exit(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]}.")
    python = venv_python()
    if not python.exists():
        print(f"creating {VENV}", flush=True)
        if subprocess.run([sys.executable, "-m", "venv", str(VENV)]).returncode != 0 or not python.exists():
            shutil.rmtree(VENV, ignore_errors=True)   # a half-made .venv would break the next run
            sys.exit("Could not create a virtual environment. On Debian/Ubuntu: " + apt_line([_venv_package()]))
    requirements = ROOT / "requirements.txt"
    stamp = VENV / ".requirements.sha256"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        print("installing the pinned packages from requirements.txt (about a minute the first time)...", flush=True)
        start = time.monotonic()
        _run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], "Upgrading pip")
        _run([str(python), "-m", "pip", "install", "--progress-bar", "off", "-r", str(requirements)],
             "Installing requirements.txt")
        stamp.write_text(digest)
        print(f"installed the pinned packages in {time.monotonic() - start:.0f} s", flush=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "gpu-mlp-series.pth").write_text(str(ROOT) + "\n")
    return python


def hand_over(command: list[str], env: dict | None = None) -> int:
    """Replace this process by `command` (run in ROOT): a signal for this process (Ctrl-C, SIGTERM from a
    service manager or a container's stop) then reaches `command` itself, with no orphan left behind.
    Windows has no exec that keeps the process, so there we wait for a child instead."""
    env = dict(os.environ if env is None else env)
    if os.name == "nt":
        return subprocess.call(command, cwd=ROOT, env=env)
    sys.stdout.flush(), sys.stderr.flush()
    os.chdir(ROOT)
    os.execve(command[0], command, env)
    return 0   # not reached


def lab_args(root: Path = ROOT) -> list[str]:
    """JupyterLab's arguments (after `python -m jupyterlab`) for the quick start and the browser check
    (.ci/browser_check.py): serve `root`, so links from a notebook to ../glsl/ or ../README.md stay inside
    what the server serves, and open on the first notebook; the first Ctrl-C stops it (answer_yes: no
    "Shut down this Jupyter server (y/[n])?" to answer). As root (containers) JupyterLab must be told
    that is intended."""
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return [*as_root, f"--ServerApp.root_dir={root}", f"--LabApp.default_url=/lab/tree/{FIRST_NOTEBOOK}",
            "--ServerApp.answer_yes=True"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("lab", "test"):
        print(__doc__)
        return 2
    missing = missing_packages()
    if missing:
        print(missing_message(missing), file=sys.stderr)
        return 1
    python = str(ensure_venv())
    if argv[0] == "lab":
        return hand_over([python, "-m", "jupyterlab", *lab_args(), *argv[1:]])
    env = dict(os.environ, QUICK=os.environ.get("QUICK", "1"), MPLBACKEND="Agg")
    return hand_over([python, "-m", "pytest", *TEST_ARGS, *argv[1:]], env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The README's two quick-start commands. Standard library only: it runs before anything is installed.

    python3 -m helpers.quickstart lab     # .venv + pinned packages, then JupyterLab on notebooks/
    python3 -m helpers.quickstart test    # .venv + pinned packages, then the whole test suite (QUICK=1)

Both create ./.venv on first use (and reinstall when requirements.txt changes), and put the repository
on that environment's path (a .pth file), so `import helpers` works in JupyterLab, nbval and pytest.
Extra arguments after `test` go to pytest, e.g. `python3 -m helpers.quickstart test -k matmul`.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
TEST_ARGS = ["tests", "notebooks", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider"]


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv() -> Path:
    if sys.version_info < (3, 10):
        sys.exit(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]}.")
    python = venv_python()
    if not python.exists():
        print(f"creating {VENV}", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        except subprocess.CalledProcessError:
            sys.exit("Could not create a virtual environment. On Debian/Ubuntu: sudo apt-get install python3-venv")
    requirements = ROOT / "requirements.txt"
    stamp = VENV / ".requirements.sha256"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        print("installing the pinned packages from requirements.txt", flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(requirements)], check=True)
        stamp.write_text(digest)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "gpu-mlp-series.pth").write_text(str(ROOT) + "\n")
    return python


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("lab", "test"):
        print(__doc__)
        return 2
    python = ensure_venv()
    if argv[0] == "lab":
        as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # containers, CI
        return subprocess.call([str(python), "-m", "jupyterlab", *as_root, str(ROOT / "notebooks"), *argv[1:]],
                               cwd=ROOT)
    env = dict(os.environ, QUICK=os.environ.get("QUICK", "1"), MPLBACKEND="Agg")
    return subprocess.call([str(python), "-m", "pytest", *TEST_ARGS, *argv[1:]], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

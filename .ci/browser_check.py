"""Open every notebook in JupyterLab, served as `python3 -m helpers.quickstart lab` serves it, in a real
headless Chromium, and fail on what a reader would meet. Nothing is executed: each notebook opens with its
saved outputs (JupyterLab starts an idle kernel, as it does for a reader).

    .ci/.browser-venv/bin/python .ci/browser_check.py [--screenshots DIR] [notebooks/NN_x.ipynb ...]

A notebook fails on:
  * an error output, or a stderr box (a stream to stderr, as JupyterLab draws it: a red box);
  * a dead link: every link of the rendered markdown is resolved through the server (a file or folder
    the server does not have is dead), and every in-page #anchor must name a heading of the page;
  * the modified dot on its tab after opening (JupyterLab would save a changed file on the reader's disk);
  * a widget that shows disconnected, or a widget's repr shown as text (`HBox(children=(…`). A cloned
    notebook is untrusted, and JupyterLab draws widgets only in trusted ones, so a notebook that stores
    widget views, or has a cell that displays a widget when run (`.widget()`, notebook 10's pad), is also
    opened trusted (signed in a throw-away trust database, as `jupyter trust` does: the file is not
    touched), where no widget may show the red 'disconnected' icons or 'Error displaying widget';
  * a cell that displays a widget when run and shows, before it is run, anything but its stored picture:
    opened plainly and opened trusted, it must show an image and no widget at all (no text repr, no pad
    drawn from saved state: a blank canvas and a dead button).

JupyterLab is started by this script: `.venv/bin/python -m jupyterlab` with helpers.quickstart.lab_args()
(the repository root, opening on the first notebook), no token, a free port, throw-away settings (cells all
rendered: windowing off) and trust database, QUICK=1 for any kernel a later step runs. Each page is closed
well before JupyterLab's 2-minute autosave, so a notebook that opens modified is not written; the end
says whether any file changed on disk.

Then `.ci/browser_draw.py` runs with the same server: `python .ci/browser_draw.py LAB_URL`
(this interpreter, so it has playwright; CHROMIUM in its environment names the browser); a non-zero exit
fails this check.

Needs Debian's chromium (/usr/bin/chromium, or $CHROMIUM) and the pip package playwright, used with that
chromium (no `playwright install`); `.ci/run` installs both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from helpers import quickstart  # noqa: E402  (standard library only)

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
AUTOSAVE_MARGIN = 90   # seconds a page may stay open (JupyterLab autosaves a modified notebook at 120 s)
SETTLE = 3             # seconds to wait after the page has settled before reading the modified dot
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
INTERACTIVE = "interactive-widget"
LIVE_WIDGET = ".widget()"   # a cell whose code displays a widget when run (notebook 10's pad.widget())
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                                "checkForUpdates": False}}

COUNTS = f"""() => ({{
    cells: document.querySelectorAll('.jp-NotebookPanel .jp-Notebook > .jp-WindowedPanel-outer .jp-Cell, '
                                      + '.jp-NotebookPanel .jp-Notebook .jp-Cell').length,
    stderr: document.querySelectorAll('.jp-NotebookPanel {STDERR}').length,
    widgets: document.querySelectorAll('.jp-NotebookPanel .jupyter-widgets').length,
    dirty: !!document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty'),
    busy: !!document.querySelector('.jp-NotebookPanel-toolbar .jp-KernelStatus-busy, '
                                   + '.jp-Notebook-ExecutionIndicator[data-status="busy"]'),
}})"""
# What each cell shows that a reader should not meet: stderr boxes, disconnected or broken widgets.
PER_CELL = f"""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')].map((cell, i) => ({{
    index: i,
    stderr: [...cell.querySelectorAll('{STDERR}')].map(e => e.textContent.trim().slice(0, 160)),
    disconnected: cell.querySelectorAll('.jupyter-widgets-disconnected').length,
    broken: [...cell.querySelectorAll('.jp-OutputArea-output')].filter(
        e => /Error displaying widget|model not found/.test(e.textContent)).length,
}})).filter(c => c.stderr.length || c.disconnected || c.broken)"""
# Per cell: pictures, widgets drawn (live or from saved state), and widget reprs shown as text.
OUTPUTS = r"""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')].map((cell, i) => ({
    index: i,
    images: cell.querySelectorAll('.jp-OutputArea-output img').length,
    widgets: cell.querySelectorAll('.jp-OutputArea-output .jupyter-widgets, .jp-OutputArea-output canvas').length,
    reprs: [...cell.querySelectorAll('.jp-OutputArea-output')].map(e => e.textContent.trim()).filter(
        t => /^\w+\(children=\(/.test(t) || /^(HBox|VBox|Canvas|Button|Image|HTML)\(/.test(t)).map(t => t.slice(0, 80)),
}))"""
LINKS = """async () => {
    const out = [], cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')];
    const ids = new Set([...document.querySelectorAll('[id], [data-jupyter-id]')].flatMap(
        e => [e.id, e.getAttribute('data-jupyter-id')]).filter(Boolean));
    const seen = new Map();
    for (const [index, cell] of cells.entries()) {
        for (const a of cell.querySelectorAll('.jp-RenderedMarkdown a[href], .jp-RenderedHTMLCommon a[href]')) {
            if (a.classList.contains('jp-InternalAnchorLink')) continue;
            const raw = a.getAttribute('href'), url = new URL(a.href, location.href);
            let why = null;
            if (raw.startsWith('#')) {
                const id = decodeURIComponent(raw.slice(1));
                if (!ids.has(id)) why = 'no heading with this id on the page';
            } else if (url.origin === location.origin) {
                const m = url.pathname.match(/^\\/(?:files|lab\\/tree)\\/(.*)$/);
                const api = m ? '/api/contents/' + m[1] + '?content=0' : url.pathname;
                if (!seen.has(api)) seen.set(api, (await fetch(api)).status);
                if (seen.get(api) >= 400) why = `the server answers ${seen.get(api)} for ${decodeURIComponent(m ? m[1] : url.pathname)}`;
            }
            if (why) out.push({index, href: raw.replace(location.origin, '').replace(/\\?_xsrf=[^#]*/, ''), why});
        }
    }
    return out;
}"""
SHUT_DOWN = """async path => {   // the idle kernel the page started; the API wants the _xsrf cookie back
    const xsrf = (document.cookie.match(/_xsrf=([^;]*)/) || [])[1];
    for (const s of await (await fetch('/api/sessions')).json())
        if (s.path === path) await fetch('/api/sessions/' + s.id, {method: 'DELETE', headers: {'X-XSRFToken': xsrf}});
}"""


# --- the server ----------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def lab_server(scratch: Path):
    """JupyterLab as the quick start starts it (helpers.quickstart.lab_args), on a free port with no token;
    yields its URL and the environment (throw-away settings and trust database) its tools must share."""
    settings = scratch / "settings"
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(scratch / "ws"),
               JUPYTER_DATA_DIR=str(scratch / "data"), JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
               QUICK=os.environ.get("QUICK", "1"))
    env.pop("MPLBACKEND", None)   # a kernel run from the page draws inline
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(scratch / "jupyterlab.log", "w")
    server = subprocess.Popen([str(VENV_PYTHON), "-m", "jupyterlab", *quickstart.lab_args(), "--no-browser",
                               f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", "--ServerApp.token=",
                               "--ServerApp.password=", "--ServerApp.port_retries=0"],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 120
        while True:
            if server.poll() is not None:
                raise SystemExit(f"JupyterLab exited with {server.returncode}:\n{(scratch / 'jupyterlab.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.time() > deadline:
                    raise SystemExit("JupyterLab did not answer within 120 s; its log: " + str(scratch / "jupyterlab.log"))
                time.sleep(0.5)
        with urllib.request.urlopen(url, timeout=10) as response:   # the quick start's landing page
            landing = urllib.parse.urlparse(response.url).path
        yield url, env, landing
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def stored(url: str, path: str) -> dict:
    """The notebook as the server reads it from disk."""
    with urllib.request.urlopen(f"{url}/api/contents/{urllib.parse.quote(path)}?content=1") as response:
        model = json.load(response)
    cells = model["content"]["cells"]
    return {"cells": cells, "last_modified": model["last_modified"],
            "views": sum(WIDGET_VIEW in o.get("data", {}) for c in cells for o in c.get("outputs", [])),
            "interactive": {i for i, c in enumerate(cells) if INTERACTIVE in c["metadata"].get("tags", [])},
            "live": {i for i, c in enumerate(cells) if c["cell_type"] == "code" and LIVE_WIDGET in _text(c["source"])}}


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def notary(path: str, action: str, env: dict) -> None:
    """Sign or unsign the notebook in the (throw-away) trust database; the file is not written."""
    code = ("import sys, nbformat; from nbformat.sign import NotebookNotary\n"
            "with NotebookNotary() as n: getattr(n, sys.argv[1])(nbformat.read(sys.argv[2], 4))")
    subprocess.run([str(VENV_PYTHON), "-c", code, action, path], check=True, cwd=ROOT, env=env)


# --- one page ------------------------------------------------------------------------------------------------

def open_notebook(browser, url: str, path: str, cells: int):
    """A page showing the notebook, once every cell is there and the counts have stopped changing."""
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(f"{url}/lab/tree/{path}?reset")
    page.add_style_tag(content=".Toastify { display: none !important; }")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    end, last, same = time.time() + 40, None, 0
    while time.time() < end:   # widgets are restored last, after the kernel connects
        counts = page.evaluate(COUNTS)
        same = same + 1 if counts == last else 0
        if counts["cells"] >= cells and same >= 2 and not counts["busy"]:
            break
        last = counts
        page.wait_for_timeout(700)
    page.wait_for_timeout(SETTLE * 1000)
    return page


def close(page, path: str) -> None:
    page.evaluate(SHUT_DOWN, path)
    page.close()


def screenshots(page, out: Path, stem: str, deadline: float) -> int:
    """Scroll the notebook a screen at a time and save each screen; returns how many."""
    scroller = page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").first
    panel = page.locator(".jp-NotebookPanel").first
    shots, top = 0, -1
    while time.time() < deadline:
        scroller.evaluate("(e, first) => e.scrollTop = first ? 0 : e.scrollTop + e.clientHeight - 60", shots == 0)
        page.wait_for_timeout(400)
        now = scroller.evaluate("e => e.scrollTop")
        if now == top:
            return shots
        top, shots = now, shots + 1
        panel.screenshot(path=out / f"{stem}_page_{shots:02d}.png")
    return shots


def problems_on_page(page, path: str, note: dict, trusted: bool) -> list[str]:
    """What a reader meets on this page, one line each ('' when nothing)."""
    where = f"{path} ({'trusted' if trusted else 'as opened'})"
    found = []
    counts = page.evaluate(COUNTS)
    if counts["dirty"]:
        found.append(f"{where}: the tab shows the modified dot after opening (JupyterLab would save the file)")
    if counts["cells"] < len(note["cells"]):
        found.append(f"{where}: only {counts['cells']} of {len(note['cells'])} cells rendered")
    for cell in page.evaluate(PER_CELL):
        i = cell["index"]
        stored_error = any(o.get("output_type") == "error" for o in note["cells"][i].get("outputs", []))
        for text in cell["stderr"]:
            if not stored_error:   # an error output is reported once, from the file
                found.append(f"{where}, cell {i}: a stderr box: {text!r}")
        if cell["disconnected"] or cell["broken"]:
            found.append(f"{where}, cell {i}: {cell['disconnected']} widgets show disconnected, "
                         f"{cell['broken']} fail to display (store them as text: .ci/execute_notebooks.py "
                         f"--text-widgets; a widget meant to be used is displayed when its cell runs, with a "
                         f"picture of it as the stored output)")
    for cell in page.evaluate(OUTPUTS):
        i = cell["index"]
        for text in cell["reprs"]:
            found.append(f"{where}, cell {i}: a widget shown as its text repr: {text!r}")
        if i in note["live"] and (cell["widgets"] or not cell["images"]):
            found.append(f"{where}, cell {i}: a cell that displays a widget when run shows, before it is run, "
                         f"{cell['widgets']} widget elements and {cell['images']} pictures (only its picture "
                         f"should show: store no widget view and no widget state)")
    if not trusted:
        for link in page.evaluate(LINKS):
            found.append(f"{where}, cell {link['index']}: dead link ({link['href']}): {link['why']}")
    return found


def check(browser, url: str, path: str, env: dict, shots: Path | None) -> tuple[list[str], dict]:
    start = time.time()
    note = stored(url, path)
    found = [f"{path}, cell {i}: an error output: {output.get('ename')}: {output.get('evalue', '')[:120]}"
             for i, cell in enumerate(note["cells"]) for output in cell.get("outputs", [])
             if output.get("output_type") == "error"]   # an error stored in the file, whether drawn or not
    page = open_notebook(browser, url, path, len(note["cells"]))
    found += problems_on_page(page, path, note, trusted=False)
    if shots is not None:
        screenshots(page, shots, Path(path).stem[:2], start + AUTOSAVE_MARGIN)
    close(page, path)
    if note["views"] or note["live"]:   # widgets are drawn only when trusted: look as a reader who trusts the file
        notary(path, "sign", env)
        try:
            page = open_notebook(browser, url, path, len(note["cells"]))
            found += problems_on_page(page, path, note, trusted=True)
            close(page, path)
        finally:
            notary(path, "unsign", env)
    if stored(url, path)["last_modified"] != note["last_modified"]:
        found.append(f"{path}: the file changed on disk while it was open")
    note["seconds"] = time.time() - start
    return found, note


def run_draw_step(url: str) -> list[str]:
    """`.ci/browser_draw.py LAB_URL` against the same server."""
    start = time.time()
    result = subprocess.run([sys.executable, str(ROOT / ".ci" / "browser_draw.py"), url], cwd=ROOT,
                            env=dict(os.environ, CHROMIUM=CHROMIUM))
    print(f".ci/browser_draw.py: exit {result.returncode} in {time.time() - start:.0f} s", flush=True)
    return [] if result.returncode == 0 else [f".ci/browser_draw.py {url} failed (exit {result.returncode})"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="default: every notebooks/*.ipynb")
    parser.add_argument("--screenshots", type=Path, help="save each notebook's screens here")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    paths = args.notebooks or sorted(f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb"))
    paths = [str(Path(p).resolve().relative_to(ROOT)) if Path(p).exists() else p for p in paths]
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    start, failures = time.time(), []
    with tempfile.TemporaryDirectory(prefix="browser-check-") as scratch, lab_server(Path(scratch)) as (url, env, landing):
        expected = f"/lab/tree/{quickstart.FIRST_NOTEBOOK}"
        if landing != expected:
            failures.append(f"the quick start's server opens on {landing}, not {expected}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for path in paths:
                found, note = check(browser, url, path, env, args.screenshots)
                failures += found
                print(f"{path}: {len(note['cells'])} cells, {note['views']} stored widget views, "
                      f"{len(note['live'])} cells showing a widget when run (checked plainly and trusted), "
                      f"{'FAIL: ' + str(len(found)) + ' problems' if found else 'ok'} ({note['seconds']:.0f} s)", flush=True)
            browser.close()
        failures += run_draw_step(url)
    print(f"browser check: {len(paths)} notebooks in {time.time() - start:.0f} s, {len(failures)} problems")
    for line in failures:
        print("  " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

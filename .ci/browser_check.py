"""Open each notebook in JupyterLab in a real (headless) Chromium and report what a reader sees (issue #11).

Nothing is executed: each notebook opens with its saved outputs (JupyterLab starts an idle kernel, as it
does for a reader). Per notebook it prints the widget progress bars rendered against those stored in the
file, stderr outputs (and empty ones), and whether the tab shows the modified dot after 10 s; it writes
screenshots of the whole notebook to OUT_DIR/NN_page_KK.png.

A cloned notebook is untrusted, and JupyterLab draws widgets only in trusted ones (ipywidgets' renderer is
"unsafe"; an untrusted notebook shows the bar's text/plain fallback). So the notebook is then signed in
Jupyter's trust database (as `jupyter trust` does: the file is not touched; JupyterLab's own "Trust
Notebook" command would save it), opened again, its bars counted and each bar's cell saved to
OUT_DIR/NN_trusted_bar_K.png, and the signature removed again. Each page is closed well before
JupyterLab's 2-minute autosave, so a notebook that opens modified is not written; the last line says
whether any file changed on disk.

Set-up (Debian, as root), then run it from the repository root:

    apt-get install -y chromium
    python3 -m venv /tmp/pw && /tmp/pw/bin/pip install playwright      # no `playwright install` needed
    .venv/bin/jupyter lab --no-browser --port 8899 --ServerApp.token='' --ServerApp.password='' \
        --ServerApp.root_dir="$PWD" --allow-root &
    /tmp/pw/bin/python .ci/browser_check.py OUT_DIR [notebooks/03_batched_inference.ipynb ...]
"""

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

LAB = "http://localhost:8899"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
AUTOSAVE_MARGIN = 90   # seconds a page may stay open (JupyterLab autosaves a modified notebook at 120 s)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
BAR = ".jp-OutputArea-output .widget-hprogress"   # ipywidgets 8's horizontal (Float|Int)Progress
COUNTS = f"""() => ({{
    cells: document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length,
    bars: document.querySelectorAll('{BAR}').length,
    done: document.querySelectorAll('{BAR} .progress-bar-success').length,
    unlinked: document.querySelectorAll('{BAR}.jupyter-widgets-disconnected').length,
    stderr: document.querySelectorAll('{STDERR}').length,
    empty: [...document.querySelectorAll('{STDERR}')].filter(e => !e.textContent.trim()).length,
    dirty: !!document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty'),
}})"""
SHUT_DOWN = """async path => {   // the idle kernel the page started; the API wants the _xsrf cookie back
    const xsrf = (document.cookie.match(/_xsrf=([^;]*)/) || [])[1];
    for (const s of await (await fetch('/api/sessions')).json())
        if (s.path === path) await fetch('/api/sessions/' + s.id, {method: 'DELETE', headers: {'X-XSRFToken': xsrf}});
}"""


def stored(path: str) -> dict:
    """The notebook as the server reads it from disk: cells, widget outputs, trusted, last_modified."""
    with urllib.request.urlopen(f"{LAB}/api/contents/{path}?content=1") as response:
        model = json.load(response)
    cells = model["content"]["cells"]
    outputs = [o for c in cells for o in c.get("outputs", [])]
    return {"cells": len(cells), "widgets": sum(WIDGET_VIEW in o.get("data", {}) for o in outputs),
            "trusted": all(c["metadata"].get("trusted") for c in cells if c["cell_type"] == "code"),
            "last_modified": model["last_modified"]}


def notary(path: str, action: str) -> None:
    """Sign or unsign the notebook in Jupyter's trust database (the project's nbformat; no file written)."""
    code = ("import sys, nbformat; from nbformat.sign import NotebookNotary\n"
            "with NotebookNotary() as n: getattr(n, sys.argv[1])(nbformat.read(sys.argv[2], 4))")
    subprocess.run([".venv/bin/python", "-c", code, action, path], check=True)


def open_notebook(browser, path: str, expected: dict):
    """A page showing the notebook, once every cell is there and the counts stop changing."""
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(f"{LAB}/lab/tree/{path}?reset")
    page.add_style_tag(content=".Toastify { display: none !important; }")   # the "Jupyter news?" toast
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()   # hide the file browser
    end, last, same = time.time() + 30, None, 0
    while time.time() < end:   # widgets are restored last, after the kernel connects
        counts = page.evaluate(COUNTS)
        same = same + 1 if counts == last else 0
        if counts["cells"] >= expected["cells"] and (counts["bars"] >= expected["widgets"] or same >= 3):
            break
        last = counts
        page.wait_for_timeout(1000)
    return page


def close(page, path: str) -> None:
    page.evaluate(SHUT_DOWN, path)
    page.close()


def screenshots(page, out: Path, stem: str, deadline: float) -> int:
    """Scroll the notebook panel a screen at a time and save each screen; returns how many."""
    scroller = page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").first
    panel = page.locator(".jp-NotebookPanel").first
    shots, top = 0, -1
    while time.time() < deadline:
        # step from where the page is now: cells that render as they come on screen can move it
        scroller.evaluate("(e, first) => e.scrollTop = first ? 0 : e.scrollTop + e.clientHeight - 60", shots == 0)
        page.wait_for_timeout(600)   # let content-visibility render the cells now on screen
        now = scroller.evaluate("e => e.scrollTop")
        past_end = scroller.evaluate("e => [...e.querySelectorAll('.jp-Cell')].pop().getBoundingClientRect().bottom"
                                     " < e.getBoundingClientRect().top + 60")   # the blank space under the last cell
        if now == top or past_end:
            return shots
        top, shots = now, shots + 1
        panel.screenshot(path=out / f"{stem}_page_{shots:02d}.png")
    print(f"  (screenshots stopped at {AUTOSAVE_MARGIN} s, before autosave)")
    return shots


def check(browser, path: str, out: Path) -> None:
    stem, before = Path(path).name[:2], stored(path)
    start = time.time()
    page = open_notebook(browser, path, before)
    page.wait_for_timeout(max(0, 10 - (time.time() - start)) * 1000)
    counts = page.evaluate(COUNTS)
    shots = screenshots(page, out, stem, start + AUTOSAVE_MARGIN)
    close(page, path)

    if not before["trusted"]:
        notary(path, "sign")
    try:
        page = open_notebook(browser, path, before)
        trusted = page.evaluate(COUNTS)
        for k, cell in enumerate(page.locator(f".jp-Cell:has({BAR})").all(), 1):
            cell.scroll_into_view_if_needed()
            page.wait_for_timeout(300)
            cell.screenshot(path=out / f"{stem}_trusted_bar_{k}.png")
        trusted["dirty"] = page.evaluate(COUNTS)["dirty"]
        close(page, path)
    finally:
        if not before["trusted"]:
            notary(path, "unsign")

    after = stored(path)
    yes = {True: "YES", False: "no"}
    print(f"{path}: {counts['cells']}/{before['cells']} cells, {shots} screenshots\n"
          f"  progress bars drawn, as opened ({'trusted' if before['trusted'] else 'untrusted'}): "
          f"{counts['bars']} of {before['widgets']} widget outputs\n"
          f"  progress bars drawn, trusted:  {trusted['bars']} ({trusted['done']} green: completed; "
          f"{trusted['unlinked']} with the red 'disconnected' icon)\n"
          f"  stderr outputs:                {counts['stderr']} ({counts['empty']} empty)\n"
          f"  modified dot after 10 s:       {yes[counts['dirty']]} (trusted: {yes[trusted['dirty']]})\n"
          f"  file changed on disk:          {yes[after['last_modified'] != before['last_modified']]}")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    paths = sys.argv[2:] or sorted(f"notebooks/{p.name}" for p in Path("notebooks").glob("0*.ipynb"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for path in paths:
            check(browser, path, out)
        browser.close()


if __name__ == "__main__":
    main()

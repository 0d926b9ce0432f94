"""Draw digits on notebook 10's pad in a real (headless) Chromium and check what the net reads.

Given a running JupyterLab (its URL; root_dir the repository root, QUICK=1 and MNIST_DIR in its
environment, as .ci/browser_check.py starts it), this opens notebooks/10_draw_a_digit.ipynb, clears its
stored outputs, runs every cell, and on the pad's canvas draws with the mouse a "1", a "0" and a "7",
pressing Clear between them. After each digit it reads the line `prediction: N` (CSS class
digit-prediction; a weak net's caveat may follow) from the page and checks N. The page is closed without saving (well before JupyterLab's
2-minute autosave), the kernel it started is shut down, and the notebook on disk must be unchanged.
Exit status 0 when every digit is read as drawn; otherwise 1, with one line per problem.

    CHROMIUM=/usr/bin/chromium python .ci/browser_draw.py http://127.0.0.1:8899 [SCREENSHOT_DIR]

Needs only the pip package playwright (it drives the given chromium; no `playwright install`). With a
SCREENSHOT_DIR it saves the pad after each digit there (pad_1.png, pad_0.png, pad_7.png).
"""

import json
import math
import re
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from browser_check import CHROMIUM, CHROMIUM_ARGS, SHUT_DOWN   # .ci/, this script's folder, is on sys.path

NOTEBOOK = "notebooks/10_draw_a_digit.ipynb"
PAD, PREDICTION, CLEAR = "canvas.digit-pad", ".digit-prediction", ".digit-clear"   # helpers/pad.py's classes
RUN_SECONDS = 240     # the whole notebook in QUICK mode on llvmpipe takes well under this
READ_SECONDS = 30     # from the mouse lifting to the new prediction on the page
SIZE = 280            # the pad's pixels a side (helpers/pad.py SIZE)
READ = re.compile(r"prediction: (\d)\b")   # 'prediction: 7', or 'prediction: 7 (weak net: …)'


def ellipse(cx, cy, rx, ry, n=40):
    return [(cx + rx * math.sin(2 * math.pi * k / n), cy - ry * math.cos(2 * math.pi * k / n)) for k in range(n + 1)]


# One stroke each, in the pad's pixels (x right, y down), as a hand would draw them.
DIGITS = {
    1: [(110, 85), (150, 40), (150, 240)],
    0: ellipse(140, 140, 65, 100),
    7: [(65, 55), (215, 55), (125, 245)],
}
# JupyterLab's autosave off while the page runs the notebook (a run makes it modified), the user's settings
# put back afterwards: the raw text the server had, given back as it was.
AUTOSAVE = """async raw => {
    const xsrf = (document.cookie.match(/_xsrf=([^;]*)/) || [])[1];
    const url = '/lab/api/settings/@jupyterlab/docmanager-extension:plugin';
    const before = (await (await fetch(url)).json()).raw;
    const put = await fetch(url, {method: 'PUT', headers: {'X-XSRFToken': xsrf, 'Content-Type': 'application/json'},
                                  body: JSON.stringify({raw: raw === null ? '{"autosave": false}' : raw})});
    if (!put.ok) throw new Error('settings API answered ' + put.status);
    return before;
}"""


def last_modified(lab: str) -> str:
    with urllib.request.urlopen(f"{lab}/api/contents/{NOTEBOOK}?content=0") as response:
        return json.load(response)["last_modified"]


def command(page, label: str) -> None:
    """Run a JupyterLab command by its label through the command palette (Ctrl+Shift+C)."""
    page.keyboard.press("Control+Shift+C")
    box = page.locator(".lm-CommandPalette-input")
    box.wait_for(state="visible", timeout=10_000)
    box.fill(label)
    item = page.locator(".lm-CommandPalette-item", has_text=label).first
    item.wait_for(state="visible", timeout=10_000)
    item.click()


def prediction(page) -> str:
    return page.locator(PREDICTION).first.inner_text().strip()


def wait_for_text(page, test, seconds: float, what: str) -> str:
    end = time.time() + seconds
    text = ""
    while time.time() < end:
        if page.locator(PREDICTION).count():
            text = prediction(page)
            if test(text):
                return text
        page.wait_for_timeout(250)
    raise TimeoutError(f"{what}: after {seconds:.0f} s the page shows {text!r}")


def draw(page, stroke) -> None:
    """The stroke with the mouse, from pad pixels to the canvas's place on the page."""
    canvas = page.locator(PAD).first
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    sx, sy = box["width"] / SIZE, box["height"] / SIZE
    points = [(box["x"] + x * sx, box["y"] + y * sy) for x, y in stroke]
    page.mouse.move(*points[0])
    page.mouse.down()
    for point in points[1:]:
        page.mouse.move(*point, steps=4)
    page.mouse.up()


def main(lab: str, shots: Path | None) -> int:
    lab = lab.rstrip("/")
    start, problems = time.time(), []
    before = last_modified(lab)
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        settings = None
        try:
            page.goto(f"{lab}/lab/tree/{NOTEBOOK}?reset")
            page.add_style_tag(content=".Toastify { display: none !important; }")   # the "Jupyter news?" toast
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
            page.locator(".jp-StatusBar-TextItem", has_text="| Idle").first.wait_for(timeout=60_000)  # kernel up
            settings = page.evaluate(AUTOSAVE, None)
            page.locator(".jp-NotebookPanel .jp-Cell").first.click()
            command(page, "Clear Outputs of All Cells")           # no stored widget view stands in for the live one
            command(page, "Run All Cells")
            page.wait_for_selector(PAD, state="attached", timeout=RUN_SECONDS * 1000)
            wait_for_text(page, lambda t: t.startswith("prediction: "), RUN_SECONDS, "the pad's first prediction")
            print(f"notebook ran up to the pad in {time.time() - start:.0f} s; the pad shows {prediction(page)!r}")
            for digit, stroke in DIGITS.items():
                page.locator(CLEAR).first.click()
                wait_for_text(page, lambda t: t.startswith("prediction: none"), READ_SECONDS, "after Clear")
                draw(page, stroke)
                try:
                    text = wait_for_text(page, lambda t: READ.match(t) is not None, READ_SECONDS,
                                         f"after drawing a {digit}")
                except TimeoutError as exc:
                    problems.append(str(exc))
                    continue
                if shots:
                    page.locator(PAD).first.locator("xpath=ancestor::div[contains(@class,'widget-hbox')][1]") \
                        .screenshot(path=str(shots / f"pad_{digit}.png"), timeout=10_000)
                read = int(READ.match(text).group(1))   # a weak net's caveat may follow the digit
                print(f"drew a {digit}: the page says {text!r}")
                if read != digit:
                    problems.append(f"drew a {digit} with the mouse, the pad read {read}")
        except Exception as exc:   # a timeout or a missing element: say what the page showed
            problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
            if shots:
                page.screenshot(path=str(shots / "failure.png"))
        finally:
            page.evaluate(SHUT_DOWN, NOTEBOOK)
            if settings is not None:
                page.evaluate(AUTOSAVE, settings)
            page.close()
            browser.close()
    if last_modified(lab) != before:
        problems.append(f"{NOTEBOOK} changed on disk while the page was open (JupyterLab saved it)")
    print(f"browser draw: {len(DIGITS)} digits in {time.time() - start:.0f} s, {len(problems)} problems")
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) == 3 else None))

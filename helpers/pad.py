"""The drawing pad of notebook 10: strokes in, the image the net sees and its ten probabilities out.

`Pad` holds the logic and needs no browser: down/move/up feed it pen positions (as the canvas's mouse
and touch events do), and each stroke's end reads the drawing through a digits.ShaderNet. `Pad.widget()`
wraps it in an ipycanvas canvas with a Clear button, a text line `prediction: N` (CSS class
digit-prediction) and a picture of what the net saw; the widget only forwards events and shows results.
`HAND` is a scripted hand: strokes of each digit as polylines, for a record that needs no mouse.

    pad = Pad(net)
    pad.draw(hand(7))              # strokes, as a mouse would draw them -> digits.Reading
    pad.last.label, pad.last.probabilities
    display(pad.widget())          # in JupyterLab: draw with the mouse or a finger
"""

from __future__ import annotations

import io

import numpy as np

from . import digits

SIZE, PEN = 280, 26   # the pad's pixels a side and the pen's width: a digit drawn across most of the pad
                      # ends, scaled to MNIST's 20-pixel box, with strokes about 2 pixels wide, like MNIST's
PICTURE, DPI = (4.6, 2.2), 90                         # the widget's picture: inches, and dots an inch
PICTURE_PIXELS = (round(PICTURE[0] * DPI), round(PICTURE[1] * DPI))   # its size on the page, fixed: no jump
PREDICTION_CLASS, CLEAR_CLASS, PAD_CLASS, TIMINGS_CLASS = "digit-prediction", "digit-clear", "digit-pad", "digit-timings"


def _arc(cx, cy, r, start, end, ry=None, n=24):
    """Points of an arc in the unit box (y down): angles in degrees, 0 = right, 90 = down."""
    a = np.radians(np.linspace(start, end, n))
    return list(zip(cx + r * np.cos(a), cy + (ry or r) * np.sin(a)))


# Each digit as strokes in a unit box (x right, y down), the pen lifted between strokes.
HAND = {
    0: [_arc(0.5, 0.5, 0.3, -90, 270, ry=0.45, n=40)],
    1: [[(0.35, 0.2), (0.55, 0.04), (0.55, 0.96)]],
    2: [_arc(0.5, 0.3, 0.27, 200, 400) + [(0.18, 0.95), (0.85, 0.95)]],
    3: [_arc(0.5, 0.27, 0.22, 200, 450) + _arc(0.5, 0.73, 0.23, 270, 520)[1:]],
    4: [[(0.6, 0.04), (0.12, 0.66), (0.88, 0.66)], [(0.64, 0.3), (0.64, 0.96)]],
    5: [[(0.78, 0.05), (0.32, 0.05), (0.29, 0.47)] + _arc(0.5, 0.68, 0.28, 225, 500)[1:]],
    6: [[(0.72, 0.04), (0.5, 0.16), (0.34, 0.38)] + _arc(0.5, 0.72, 0.22, 200, 560, n=36)],
    7: [[(0.18, 0.08), (0.84, 0.08), (0.42, 0.96)]],
    8: [_arc(0.5, 0.26, 0.2, 90, 450, n=30), _arc(0.5, 0.72, 0.25, 270, 630, n=36)],
    9: [_arc(0.5, 0.3, 0.24, 0, 360, n=30) + [(0.7, 0.62), (0.62, 0.96)]],
}


def hand(digit: int, size: int = SIZE, slant: float = 0.12, seed: int = 0) -> list:
    """The strokes of `digit` in pad pixels, as a hand would draw them: the unit-box strokes of HAND
    scaled to the pad's middle, slanted (x moves right as y goes up), every point a little off and
    about every 4 pixels a point, as a mouse reports its moves."""
    if digit not in HAND:
        raise ValueError(f"the scripted hand draws the digits 0 to 9, not {digit!r}")
    rng = np.random.default_rng([seed, digit])
    strokes = []
    for stroke in HAND[digit]:
        points = np.asarray(stroke, float)
        points[:, 0] += slant * (0.5 - points[:, 1])
        points = 0.15 * size + 0.7 * size * points
        dense = [points[0]]
        for a, b in zip(points[:-1], points[1:]):
            steps = max(1, int(np.hypot(*(b - a)) // 4))
            dense += [a + (b - a) * t for t in np.arange(1, steps + 1) / steps]
        dense = np.asarray(dense) + rng.normal(0, 0.6, (len(dense), 2))
        strokes.append([(float(x), float(y)) for x, y in dense])
    return strokes


def label_text(reading, caveat: str = "") -> str:
    """The pad's text line: 'prediction: 7', or what to do when nothing is drawn; a caveat about the net (a
    weak one, digits.caveat) after it."""
    text = ("prediction: none (draw a digit)" if reading is None or reading.blank else
            f"prediction: {reading.label}")
    return f"{text} ({caveat})" if caveat else text


class Pad:
    """Pen strokes -> (on each stroke's end) digits.mnist_like image -> net.read: a digits.Reading in self.last."""

    def __init__(self, net, size: int = SIZE, pen: float = PEN, caveat: str = ""):
        self.net, self.size, self.pen, self.caveat = net, int(size), float(pen), caveat
        self.strokes, self.drawing, self.last = [], False, None
        self.listeners = []          # called with each new reading (the widget's display)

    def down(self, x: float, y: float) -> None:
        """The pen touches the pad: a new stroke starts."""
        self.strokes.append([(float(x), float(y))])
        self.drawing = True

    def move(self, x: float, y: float):
        """The pen moves: while it is down, the stroke grows; returns the new segment ((x0, y0), (x1, y1))
        for a canvas to draw, or None while the pen is up."""
        if not self.drawing:
            return None
        previous = self.strokes[-1][-1]
        self.strokes[-1].append((float(x), float(y)))
        return previous, (float(x), float(y))

    def up(self):
        """The pen lifts (or leaves the pad): the stroke ends and the drawing is read. Returns the reading,
        or None when no stroke was in progress."""
        if not self.drawing:
            return None
        self.drawing = False
        return self.read()

    def clear(self) -> None:
        self.strokes, self.drawing, self.last = [], False, None
        for listener in self.listeners:
            listener(None)

    def image(self) -> np.ndarray:
        """uint8 (28, 28): the strokes so far, MNIST-like."""
        return digits.mnist_like(digits.rasterise(self.strokes, self.size, self.pen))

    def read(self):
        self.last = self.net.read(self.image())
        for listener in self.listeners:
            listener(self.last)
        return self.last

    def draw(self, strokes):
        """Draw whole strokes (lists of (x, y)) as a pen would, each read at its end; returns the last reading."""
        for stroke in strokes:
            self.down(*stroke[0])
            for x, y in stroke[1:]:
                self.move(x, y)
            self.up()
        return self.last

    def widget(self):
        """The pad in JupyterLab: an ipycanvas canvas, a Clear button, the prediction and its timings, and a
        picture of the image the net saw beside its ten probabilities (redrawn at every stroke's end)."""
        import ipywidgets as w
        from ipycanvas import Canvas

        canvas = Canvas(width=self.size, height=self.size, layout=w.Layout(width=f"{self.size}px", height=f"{self.size}px",
                                                                          border="1px solid #888"))
        canvas.add_class(PAD_CLASS)
        clear = w.Button(description="Clear", icon="eraser")
        clear.add_class(CLEAR_CLASS)
        prediction = w.HTML(label_text(self.last, self.caveat), layout=w.Layout(height="3em", width=f"{PICTURE_PIXELS[0]}px"))
        prediction.add_class(PREDICTION_CLASS)
        timings = w.HTML("", layout=w.Layout(height="3em", width=f"{PICTURE_PIXELS[0]}px"))
        timings.add_class(TIMINGS_CLASS)
        picture = w.Image(format="png", layout=w.Layout(width=f"{PICTURE_PIXELS[0]}px", height=f"{PICTURE_PIXELS[1]}px"))

        def paper():
            canvas.clear()
            canvas.fill_style = "white"
            canvas.fill_rect(0, 0, self.size, self.size)
            canvas.stroke_style = canvas.fill_style = "black"
            canvas.line_width, canvas.line_cap, canvas.line_join = self.pen, "round", "round"
            for stroke in self.strokes:
                canvas.stroke_lines(stroke) if len(stroke) > 1 else canvas.fill_circle(*stroke[0], self.pen / 2)

        def show(reading):
            prediction.value = label_text(reading, self.caveat)
            timings.value = "" if reading is None else digits.timings_line(reading)
            picture.value = png(reading_figure(reading, size=PICTURE))

        def down(x, y):
            self.down(x, y)
            canvas.fill_circle(x, y, self.pen / 2)

        def move(x, y):
            segment = self.move(x, y)
            if segment is not None:
                canvas.stroke_line(*segment[0], *segment[1])

        def up(*_):
            self.up()

        def touch(handler):
            return lambda touches: handler(*touches[0]) if touches else None

        canvas.on_mouse_down(down)
        canvas.on_mouse_move(move)
        canvas.on_mouse_up(up)
        canvas.on_mouse_out(up)
        canvas.on_touch_start(touch(down))
        canvas.on_touch_move(touch(move))
        canvas.on_touch_end(lambda touches: up())
        canvas.on_touch_cancel(lambda touches: up())
        clear.on_click(lambda _: (self.clear(), paper()))
        self.listeners.append(show)
        paper()
        show(self.last)
        return w.HBox([w.VBox([canvas, clear]), w.VBox([prediction, picture, timings])])


# --- figures -----------------------------------------------------------------------------------

def reading_figure(reading, size=(6.0, 2.6)):
    """A matplotlib Figure (not attached to pyplot): the 28×28 image the net saw, and its ten
    probabilities as bars, the most probable one marked."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    ax_image, ax_bars = fig.subplots(1, 2, width_ratios=[1, 1.6])
    _seen(ax_image, reading)
    _bars(ax_bars, reading)
    return fig


def _seen(ax, reading):
    image = np.zeros((28, 28), np.uint8) if reading is None else reading.image
    ax.imshow(image, cmap="gray_r", vmin=0, vmax=255)
    ax.set_title("what the net sees (28×28)", fontsize=8)
    ax.set_xticks([]), ax.set_yticks([])


def _bars(ax, reading, fontsize=8):
    p = np.zeros(10) if reading is None else reading.probabilities
    colours = ["#bbbbbb"] * 10
    if reading is not None and not reading.blank:
        colours[reading.label] = "#1f77b4"
    ax.bar(range(10), p, color=colours)
    ax.set_xticks(range(10))
    ax.set_ylim(0, 1)
    ax.set_xlabel("digit", fontsize=fontsize)
    ax.set_ylabel("probability", fontsize=fontsize)
    ax.tick_params(labelsize=fontsize - 1)
    ax.set_title(label_text(reading), fontsize=fontsize)   # the caveat goes in the figure's title


def record_figure(drawn, size: int = SIZE, pen: float = PEN, per_row: int = 5):
    """A matplotlib Figure of drawings read by the net, `per_row` to a row, each in three panels: the
    strokes as drawn, the 28×28 image the net saw, and its ten probabilities with the prediction's upload,
    kernel and readback times. drawn: a list of (strokes, reading)."""
    from matplotlib.figure import Figure

    n = len(drawn)
    rows, columns = -(-n // per_row), min(n, per_row)
    fig = Figure(figsize=(2.0 * columns, 6.0 * rows), layout="constrained")
    axes = fig.subplots(3 * rows, columns, squeeze=False, height_ratios=[1, 1, 0.9] * rows)
    for ax in axes.flat:
        ax.set_visible(False)
    for i, (strokes, reading) in enumerate(drawn):
        top, middle, bottom = axes[3 * (i // per_row):3 * (i // per_row) + 3, i % per_row]
        for ax in (top, middle, bottom):
            ax.set_visible(True)
        top.imshow(digits.rasterise(strokes, size, pen), cmap="gray_r", vmin=0, vmax=1)
        middle.imshow(reading.image, cmap="gray_r", vmin=0, vmax=255)
        for ax in (top, middle):
            ax.set_xticks([]), ax.set_yticks([])
        _bars(bottom, reading, fontsize=7)
        s = reading.seconds
        bottom.set_xlabel(f"digit\nup {s['upload'] * 1e6:.0f} · kernel {s['kernel'] * 1e6:.0f}\n"
                          f"· back {s['readback'] * 1e6:.0f} µs", fontsize=7)
        if i % per_row:
            bottom.set_ylabel("")
        else:
            top.set_ylabel(f"drawn ({size}×{size})", fontsize=8)
            middle.set_ylabel("net's input (28×28)", fontsize=8)
    fig.suptitle(f"each prediction: upload and readback by wall clock, kernel by {drawn[0][1].clock}", fontsize=8)
    return fig


def pad_figure(pad):
    """A picture of the pad as it stands: its drawing, the image the net saw, the probabilities, the times."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 2.6), layout="constrained")
    ax_pad, ax_image, ax_bars = fig.subplots(1, 3, width_ratios=[1, 1, 1.6])
    ax_pad.imshow(digits.rasterise(pad.strokes, pad.size, pad.pen), cmap="gray_r", vmin=0, vmax=1)
    ax_pad.set_title("the pad", fontsize=8)
    ax_pad.set_xticks([]), ax_pad.set_yticks([])
    _seen(ax_image, pad.last)
    _bars(ax_bars, pad.last)
    lines = ([pad.caveat] if pad.caveat else []) + ([digits.timings_line(pad.last)] if pad.last is not None else [])
    if lines:
        fig.suptitle("\n".join(lines), fontsize=8)
    return fig


def png(fig) -> bytes:
    """The figure as PNG bytes (for an ipywidgets.Image)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()

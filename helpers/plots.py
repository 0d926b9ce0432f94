"""Figures for the series: training curves, digit grids, transfer-vs-kernel bars, a live training plot,
and shader listings.

Introduced in notebook 01 (show_shader in notebook 02). Each plotting function draws one figure and
returns it; assign the result (`fig = curves(history)`) so Jupyter shows the figure once.
"""

from __future__ import annotations

import re

import numpy as np

from .timing import _g

# One colour per phase, the same in every notebook.
PHASE_COLOURS = {
    "python": "#bbbbbb", "upload": "#4c72b0", "dispatch": "#8172b2", "kernel": "#55a868",
    "sync": "#ccb974", "readback": "#c44e52", "numpy": "#dd8452",
}


def curves(history: dict, title: str = ""):
    """Loss and accuracy per epoch from a history dict (keys loss, train_acc, test_acc)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.5))
    epochs = np.arange(1, len(history["loss"]) + 1)
    ax_loss.plot(epochs, history["loss"], marker="o")
    if len(epochs) < 2:   # one point draws no line: say so on the figure rather than look empty
        ax_loss.text(0.5, 0.9, "one epoch: a point, not a curve", transform=ax_loss.transAxes, ha="center")
    ax_loss.set(xlabel="epoch", ylabel="training loss (mean cross-entropy)", yscale="log")
    for key, label in (("train_acc", "train"), ("test_acc", "test")):
        if history.get(key):
            ax_acc.plot(epochs, 100 * np.asarray(history[key]), marker="o", label=label)
    ax_acc.set(xlabel="epoch", ylabel="accuracy (%)")
    ax_acc.legend()
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))   # whole epochs, no 1.25
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def lines(series: dict, xlabel: str = "", ylabel: str = "", title: str = ""):
    """One line per entry of series = {label: (xs, ys)}, each with its own colour and marker (on every point
    while a line has few, on about a dozen spread along it otherwise); the legend outside the data, right."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.5))
    for i, (label, (xs, ys)) in enumerate(series.items()):
        colour, marker = STYLES[i % len(STYLES)]
        every = 1 if len(xs) <= 30 else max(1, len(xs) // 12)
        ax.plot(xs, ys, color=colour, marker=marker, markevery=every, markersize=4, label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


STYLES = (("tab:blue", "o"), ("tab:orange", "s"), ("tab:green", "^"), ("tab:red", "D"), ("tab:purple", "v"))


def seed_band(series: dict, ylabel: str, xlabel: str = "epoch", log: bool = False, title: str = ""):
    """One recipe run from several seeds as one line and one band on one axis: series {seed label: (xs, ys)},
    all sampled at the same xs (up to the shortest run). The line is the median across seeds at each x, the shaded band spans the
    lowest to the highest seed, so seeds that lie on top of each other do not hide one another; log: a
    logarithmic y axis (an error rate that falls by orders of magnitude)."""
    import matplotlib.pyplot as plt

    items = [(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)) for xs, ys in series.values()]
    n = min(len(x) for x, _ in items)   # a run stopped early by its time budget: the points all seeds have
    xs = items[0][0][:n]
    if any(not np.array_equal(x[:n], xs) for x, _ in items):
        raise ValueError("seed_band needs every seed sampled at the same xs")
    ys = np.array([y[:n] for _, y in items])
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.fill_between(xs, ys.min(0), ys.max(0), color="tab:blue", alpha=0.25, lw=0,
                    label=f"lowest to highest of {len(items)} seeds")
    ax.plot(xs, np.median(ys, axis=0), color="tab:blue", marker="o" if len(xs) <= 40 else None, markersize=3, lw=1.2,
            label="median of the seeds")
    if log:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3, which="both" if log else "major")
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def digit_grid(images: np.ndarray, labels=None, predicted=None, cols: int = 10, title: str = ""):
    """A grid of 28x28 digits; with `predicted`, each title is 'pred (true)' and mistakes are red."""
    import matplotlib.pyplot as plt

    images = np.asarray(images).reshape(len(images), 28, 28)
    rows = -(-len(images) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.1, rows * 1.3), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for i, ax in enumerate(axes.flat[:len(images)]):
        ax.imshow(images[i], cmap="gray_r")
        if predicted is not None:
            wrong = labels is not None and predicted[i] != labels[i]
            text = f"{predicted[i]}" + (f" ({labels[i]})" if wrong else "")
            ax.set_title(text, color="red" if wrong else "black", fontsize=9)
            if wrong:
                ax.axis("on")
                ax.set_xticks([]), ax.set_yticks([])
                for spine in ax.spines.values():
                    spine.set_color("red"), spine.set_linewidth(2)
        elif labels is not None:
            ax.set_title(str(labels[i]), fontsize=9)
    fig.suptitle(title or ("predicted (true label where wrong)" if predicted is not None else ""))
    fig.tight_layout()
    return fig


THIN = 0.01   # a bar segment under this share of the longest bar is too thin to see: named in words


def stacked_bars(rows: dict, scale: float = 1e6, unit: str = "µs", title: str = "", log: bool = False,
                 small: float = THIN, figures: dict | None = None):
    """Stacked horizontal bars: one bar per row (a version, a batch size), one segment per phase.

    rows = {"naive": {"upload": 1e-5, "kernel": 2e-6, "readback": 8e-6}, ...}, seconds. small: a segment
    narrower than this share of the longest bar is too thin to see, so its phase and value are written after
    the bar's total (0: never), and the legend names only the phases some bar shows wide enough to see.
    figures: {row: text} written after a bar instead of its total (a bar that is not the whole it stands for).
    """
    import matplotlib.pyplot as plt

    names = list(rows)
    phases = list(dict.fromkeys(p for r in rows.values() for p in r))
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(names) + 1.5))
    left = np.zeros(len(names))
    longest = max(sum(r.values()) for r in rows.values()) * scale
    for i, phase in enumerate(phases):
        values = np.array([rows[n].get(phase, 0.0) * scale for n in names])
        colour = PHASE_COLOURS.get(phase, plt.cm.tab10(i % 10))
        seen = any(v >= small * longest for v in values) or len(phases) == 1
        ax.barh(names, values, left=left, label=phase if seen else "_thin", color=colour)   # "_": no legend
        left += values
    room = left.max() * 1.25   # the right end of a linear axis: the longest bar, and each label after its bar
    texts = []
    for y, total in enumerate(left):
        parts = [phase for phase in phases if rows[names[y]].get(phase, 0.0) > 0]
        thin = [f"{phase} {part_figure(rows[names[y]][phase] * scale)}" for phase in parts
                if len(parts) > 1 and rows[names[y]][phase] * scale < small * longest]
        note = f"\n ({', '.join(thin)} {unit})" if thin else ""
        figure = f"{total:,.0f}" if total >= 1000 else _g(total, 3)
        label = f" {(figures or {}).get(names[y], f'{figure} {unit}')}{note}"
        texts.append(ax.text(total, y, label, va="center", fontsize=9 if not thin else 8))
        chars = max(len(line) for line in label.splitlines())
        room = max(room, total / max(1 - 0.011 * chars, 0.35))   # about 0.011 of the axis a character
    ax.invert_yaxis()
    ax.set(xlabel=f"time ({unit})", title=title)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(right=left.max() * 3)
    else:
        ax.set_xlim(0, room)   # time starts at 0
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)   # outside: never over a bar or its label
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    if not log:
        _fit_labels(fig, ax, texts)
    return fig


def _fit_labels(fig, ax, texts, tries: int = 3) -> None:
    """Widen a linear x axis until every label written after a bar ends inside it, measured as drawn (a
    label that runs past the axis would run under the legend beside it)."""
    for _ in range(tries):
        fig.canvas.draw()
        right = ax.get_window_extent().x1
        over = max((t.get_window_extent().x1 for t in texts), default=right)
        if over <= right - 2:
            return
        low, high = ax.get_xlim()
        ax.set_xlim(low, low + (high - low) * (over - ax.get_window_extent().x0 + 6) /
                    (right - ax.get_window_extent().x0))
        fig.tight_layout()


PHASE_COLOURS.update({"between dispatches": "#64b5cd", "unaccounted": "#ece7c9"})   # epoch_bars' parts


def epoch_bars(rows: dict, scale: float = 1e3, unit: str = "ms", title: str = "", small: float = THIN):
    """An epoch (or a step) in parts, one stacked bar per row, seconds as stacked_bars takes them. A part too
    thin to see (under `small` of the longest bar) is left out of the legend and named in words; a
    negative part (an overlap, or parts measured apart adding up to more than the whole) cannot be drawn,
    so it is left out of the bar and named with them, and that bar is labelled with its parts' sum and the
    whole (all parts, the negative one included). Returns the figure and those words ({row: text}) for the
    notebook to print under it."""
    drawn = {name: {k: v for k, v in parts.items() if v >= 0} for name, parts in rows.items()}
    longest = max(sum(p.values()) for p in drawn.values())
    size = lambda v: f"{v * scale:,.0f} {unit}" if v * scale >= 1000 else f"{_g(v * scale, 3)} {unit}"   # noqa: E731
    figures = {name: f"{size(sum(drawn[name].values()))} in parts,\n {size(sum(parts.values()))} the whole"
               for name, parts in rows.items() if any(v < 0 for v in parts.values())}   # the bar overruns the whole
    fig = stacked_bars(drawn, scale=scale, unit=unit, title=title, small=small, figures=figures)   # thin parts: in the notes
    ax = fig.axes[0]
    visible = {k for p in drawn.values() for k, v in p.items() if v >= small * longest}
    handles, labels = ax.get_legend_handles_labels()
    kept = [(h, label) for h, label in zip(handles, labels) if label in visible]
    ax.legend(*zip(*kept), loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    notes = {}
    for name, parts in rows.items():
        def figure(v):
            return f"{part_figure(v * scale)} {unit}"
        thin = [f"{k} {figure(v)}" for k, v in parts.items() if 0 <= v < small * longest and len(parts) > 1]
        negative = [f"{k} {figure(v)}" for k, v in parts.items() if v < 0]
        words = (["too thin to see: " + ", ".join(thin)] if thin else []) + \
                (["not drawn, below zero: " + ", ".join(negative)] if negative else [])
        if words:
            notes[name] = "; ".join(words)
    fig.tight_layout()
    return fig, notes


def part_figure(x: float) -> str:
    """A part of an epoch_bars row, in the row's unit, as its notes print it: whole from 100 up ('1,234'), two
    significant digits below, trailing zeros kept ('2.3', '-0.34', '2.0')."""
    return f"{x:,.0f}" if abs(x) >= 100 else _g(x, 2)


def clock_trace(log, windows=(), title: str = ""):
    """The SM clock (MHz) a frequency.FrequencyLog sampled, against seconds since its first sample, with the
    (start, end) perf_counter windows shaded (the epochs of a training loop, say). One axis: the clock;
    the highest clock the driver reports is named in the title, not drawn over the samples."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 3.2))
    t0 = log.samples[0][0]
    t, mhz = (np.array(column) for column in list(zip(*log.samples))[:2])
    for i, (start, end) in enumerate(windows):
        ax.axvspan(start - t0, end - t0, color="tab:green", alpha=0.15, lw=0, label="epochs" if i == 0 else None)
    ax.plot(t - t0, mhz, color="tab:blue", marker=".", markersize=3, label="SM clock")
    top = log.max_mhz or float(mhz.max())
    ax.set(xlabel="seconds", ylabel="SM clock (MHz)", ylim=(0, 1.15 * top),
           title=f"{title} (highest clock the driver reports: {top:.0f} MHz)" if title else
           f"highest clock the driver reports: {top:.0f} MHz")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


class LivePlot:
    """A loss/accuracy figure that redraws in place while training runs in JupyterLab.

    plot = LivePlot(title, epochs=10); plot.update(step, loss=...); plot.update(epoch, test_acc=...); ...
    plot.close(). The axes are labelled and span the epochs from the start; the first update draws at once,
    then update() records every point but redraws only for an accuracy, which Trainer.train reports once an
    epoch: a redraw keeps the CPU busy for a tenth of a second or so, and a GPU left idle that long lowers
    its clock, which slows the next steps (notebook 05 measures it). The notebook keeps only the final
    figure. Outside Jupyter, update() just records.
    """

    MARKERS = {"train_acc": ("o", "tab:blue"), "test_acc": ("s", "tab:orange")}

    def __init__(self, title: str = "training", epochs: int | None = None):
        from matplotlib.figure import Figure

        self.title, self.epochs = title, epochs
        self.points = {"loss": [], "train_acc": [], "test_acc": []}
        self.fig = Figure(figsize=(10, 3.5))
        self.ax_loss, self.ax_acc = self.fig.subplots(1, 2)
        self.handle = None
        self.drawn = False
        try:
            from IPython import get_ipython
            from IPython.display import display

            if get_ipython() is not None:
                self.redraw(show=False)
                self.handle = display(self.fig, display_id=True)
        except ImportError:
            pass

    def update(self, x: float, **values) -> None:
        for key, value in values.items():
            if value is not None:
                self.points.setdefault(key, []).append((x, value))
        if self.handle is not None and (not self.drawn or any(key != "loss" for key in values)):
            self.redraw()   # the first point at once, then once an epoch

    def redraw(self, show: bool = True) -> None:
        self.ax_loss.clear(), self.ax_acc.clear()
        if self.points["loss"]:
            xs, ys = zip(*self.points["loss"])
            self.ax_loss.plot(xs, ys, marker="o" if len(xs) <= 30 else None, markersize=3, color="tab:blue")
            self.ax_loss.set_yscale("log")
        else:
            self.ax_loss.text(0.5, 0.5, "the first losses come back\nat the first check", ha="center",
                              va="center", transform=self.ax_loss.transAxes, color="grey")
            self.ax_loss.set_yticks([])   # no made-up 0-1 scale before there is a loss
        self.ax_loss.set(xlabel="epoch", ylabel="training loss", title=self.title)
        accuracies = [key for key in ("train_acc", "test_acc") if self.points.get(key)]
        for key in accuracies:
            xs, ys = zip(*self.points[key])
            marker, colour = self.MARKERS[key]
            self.ax_acc.plot(xs, 100 * np.asarray(ys), marker=marker, color=colour, label=key.replace("_acc", ""))
        if accuracies:
            self.ax_acc.legend(loc="upper left", bbox_to_anchor=(1.01, 1))   # outside the data
            values = [100 * v for key in accuracies for _, v in self.points[key]]
            middle = (max(values) + min(values)) / 2
            if max(values) - min(values) < 2:   # at least two points of accuracy tall: no 0.01 % ticks
                self.ax_acc.set_ylim(middle - 1, middle + 1)
        else:
            self.ax_acc.text(0.5, 0.5, "accuracy after each epoch", ha="center", va="center",
                             transform=self.ax_acc.transAxes, color="grey")
            self.ax_acc.set_yticks([])
        self.ax_acc.set(xlabel="epoch", ylabel="accuracy (%)")
        xs = [x for series in self.points.values() for x, _ in series]
        right = self.epochs or max(xs + [1])
        for ax in (self.ax_loss, self.ax_acc):
            ax.set_xlim(0, right * 1.02)   # the whole run's epochs from the first update: one point is not a range
            ax.grid(alpha=0.3)
        self.fig.tight_layout()
        self.drawn = self.drawn or bool(xs)
        if show and self.handle is not None:
            self.handle.update(self.fig)

    def close(self):
        """Draw the final figure (also outside Jupyter) and return it."""
        self.redraw()
        return self.fig


SCREEN_LINES = 45   # a listing longer than this (about a screen) shows its title, Dispatch and core lines, and a link


def _line_number(lines: list[str], spec, start: int, name: str) -> int:
    """1-based line number: an int as given (-1: the last line), a str as the first line at or after
    `start` containing it ("^text": the first line that is exactly `text`)."""
    if isinstance(spec, int):
        spec = len(lines) + 1 + spec if spec < 0 else spec
        if not 1 <= spec <= len(lines):
            raise ValueError(f"{name} has {len(lines)} lines; line {spec} does not exist")
        return spec
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        if (line.rstrip() == spec[1:]) if spec.startswith("^") else (spec in line):
            return number
    raise ValueError(f"{name}: no line containing {spec!r} at or after line {start}")


def _banner_ranges(source: list[str]) -> list[tuple[int, int]]:
    """The (first, last) line ranges of a long listing's banner: #version and the title paragraph, and
    the Dispatch field with its continuation lines."""
    from .banner import field_name

    end = 1                                   # the comment block under #version: lines 2..end
    while end < len(source) and source[end].startswith("//"):
        end += 1
    title = 1
    while title < end and source[title].strip() != "//" and not field_name(source[title]):
        title += 1
    ranges = [(1, title)]
    for number in range(2, end + 1):
        if field_name(source[number - 1]) == "Dispatch":
            last = number
            while last < end and source[last].startswith("//   ") and source[last][2:].strip():
                last += 1
            ranges.append((number, last))
    return ranges


def _elided(source: list[str], first: int, last: int) -> str:
    """The comment standing for lines first..last (1-based) of a listing; it names the banner fields left out."""
    from .banner import field_name

    names = [name for name in map(field_name, source[first - 1:last]) if name]
    return f"// ... lines {first}-{last} not shown" + (f" (banner: {', '.join(names)})" if names else "") + " ..."


def shader_excerpt(name: str, lines=None, screen: int = SCREEN_LINES) -> tuple[str, list[tuple[int, int]]]:
    """The text show_shader displays, and the (first, last) line ranges it keeps (1-based, inclusive).

    Short files (at most `screen` lines) are kept whole. Otherwise: the banner's title (what the shader
    computes) and its Dispatch field (how the work is split), then each range of `lines`
    [(first, last), ...], where first and last
    are line numbers (-1: the last line) or strings (the first line containing the string, or being
    exactly the text after a leading "^", searched from the end of the previous range for `first`,
    from `first` for `last`),
    or, without `lines`, the lines between `// core` and `// end core` markers in the file, or without
    those, main() to the end of the file. Left-out
    stretches become one `// ... lines a-b ...` comment each.
    """
    from . import gl

    text = gl.shader_path(name).read_text()
    source = text.splitlines()
    if len(source) <= screen:
        return text, [(1, len(source))]
    keep = _banner_ranges(source)
    if lines is None:
        marks = [i + 1 for i, line in enumerate(source) if re.match(r"\s*//\s*(end )?core\b", line)]
        if len(marks) % 2:
            raise ValueError(f"{name}: a '// core' marker without its '// end core'")
        lines = [(marks[i] + 1, marks[i + 1] - 1) for i in range(0, len(marks), 2)] or [("void main", -1)]
    for first, last in lines:
        a = _line_number(source, first, keep[-1][1] + 1 if isinstance(first, str) else 1, name)
        b = _line_number(source, last, a, name)
        if b < a:
            raise ValueError(f"{name}: range {first!r}..{last!r} ends (line {b}) before it starts (line {a})")
        keep.append((a, b))
    shown, previous = [], 0
    for a, b in sorted(keep):
        if a > previous + 1 and not all(not line.strip() for line in source[previous:a - 1]):
            shown.append(_elided(source, previous + 1, a - 1))
        elif a > previous + 1:
            shown.extend(source[previous:a - 1])   # only blank lines between: keep them
        shown.extend(source[max(a, previous + 1) - 1:b])
        previous = max(previous, b)
    if previous < len(source):
        shown.append(_elided(source, previous + 1, len(source)))
    return "\n".join(shown) + "\n", sorted(keep)


def show_shader(name: str, lines=None) -> None:
    """Display glsl/<name> highlighted as GLSL, with a link to the file under it.

    The whole file when it fits on a screen; otherwise its banner's title and Dispatch field and the
    core lines (see shader_excerpt for `lines` and the `// core` markers), so the reader sees the idea
    and opens the file for the rest. Outside Jupyter the listing is printed.
    """
    from IPython.display import Code, Markdown, display

    text, kept = shader_excerpt(name, lines)
    total = text.count("\n") if len(kept) == 1 else None
    what = "the whole file" if total is not None else "lines " + ", ".join(f"{a}-{b}" for a, b in kept)
    display(Code(text, language="glsl"),
            Markdown(f"[glsl/{name}](../glsl/{name}) ({what} shown)"))

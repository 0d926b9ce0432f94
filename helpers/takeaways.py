"""The course's takeaways: the rules the series measured, ranked by measured effect, written from one benchmark JSON.

    python -m helpers.takeaways notebooks/results/bench-<card>.json    # rewrites notebooks/TAKEAWAYS.md

Each rule is a comparison of two rows of the same run: the slower way, the faster way, and the notebook
that shows it. The page sorts the rules by the factor between the two, so the rule that bought the most
comes first, and every number on it comes from the JSON it names.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from . import timing
from .bench.fused import fastest_glsl
from .report import fastest_rung, printed_pair, ratio_text, significant

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "notebooks" / "TAKEAWAYS.md"


MARGIN = 0.25   # a rule is ranked only where its fast row beats its slow row beyond the noise and this margin


@dataclass(frozen=True)
class Rule:
    rule: str              # the advice, one sentence
    slow: str              # what the slower row is, in words
    fast: str              # what the faster row is, in words
    slow_t: timing.Timing  # the rows' medians and 20-80 % bands (timing.Timing.from_row); seconds alone give a
    fast_t: timing.Timing  # Timing of no spread
    notebook: str          # the notebook file that shows it

    def __post_init__(self):
        for name in ("slow_t", "fast_t"):
            if not isinstance(getattr(self, name), timing.Timing):
                object.__setattr__(self, name, timing.Timing((getattr(self, name),)))

    @property
    def slow_s(self) -> float:
        return self.slow_t.median

    @property
    def fast_s(self) -> float:
        return self.fast_t.median

    @property
    def outcome(self) -> str:
        """timing.compare of the fast row against the slow one with MARGIN: A_FASTER where the run bears the rule
        out, SAME or B_FASTER where it does not."""
        return timing.compare(self.fast_t, self.slow_t, MARGIN)

    @property
    def shown(self) -> tuple[str, str]:
        """The two durations as the page prints them: duration()'s three significant digits, more where the
        factor of those would print otherwise than the factor of the seconds (report.printed_pair, as README
        prints the same pair): 2.3796 and 1.0148 ms print as 2.380 and 1.015 ms, not as 2.38 and 1.01 ms,
        whose 2.356 would print 2.4× where the seconds give 2.345, 2.3×."""
        return printed_pair(self.slow_s, self.fast_s, duration)

    @property
    def factor(self) -> Decimal:
        """The slow row over the fast one, of the two durations as the page prints them (shown), exactly."""
        slow, fast = (timing.seconds_exactly(*text.split()) for text in self.shown)
        return slow / fast

    @property
    def factor_text(self) -> str:
        """The factor as the page prints it, with README's digits for the same pair (report.ratio_text): '2.3'."""
        return ratio_text(self.factor)


def rules(bench: dict) -> list[Rule]:
    """Every rule the JSON has the rows for, fastest gain first."""
    b = bench["benches"]
    fused = {r["name"]: r for r in b.get("fused", []) if "ms" in r}
    infer = {r["what"]: r for r in b.get("inference", []) if r.get("seconds") is not None}
    found: list[Rule] = []

    def add(rule, slow, fast, slow_t, fast_t, notebook):
        if slow_t and fast_t:
            found.append(Rule(rule, slow, fast, slow_t, fast_t, notebook))

    def row(r, key="ms", scale=1e3):               # a row's median and band, or None where the run lacks it
        return timing.Timing.from_row(r, key, scale) if r and r.get(key) else None

    ours = fused.get("fused 784-128-10 SGD")       # the fused trainer's epoch: the faster side of two rules
    seconds = lambda what: row(infer.get(what), "seconds", 1)   # noqa: E731

    train = b.get("train", [])                     # NumPy's epoch and the GLSL trainer's, timed in turn
    numpy_epoch = row(next((r for r in train if r.get("name") == "NumPy (CPU)"), None))
    glsl = next((r for r in train if r.get("name") == "GLSL (ModernGL)"), {})
    add("Keep the data and the whole training step on the GPU.",
        "an epoch of 784-128-10 in NumPy on the CPU",
        f"the same epoch on the GPU, the data resident, {glsl.get('dispatches_per_step', 6)} dispatches a step",
        numpy_epoch, row(glsl), "05_backprop_sgd_glsl.ipynb")
    matmul = b.get("matmul", [])
    if matmul:
        size = max(r["size"] for r in matmul)
        naive = row(next((r for r in matmul if r["size"] == size and r["impl"] == "matmul_1_naive"), None), "seconds", 1)
        best = fastest_rung(matmul, size)
        if best:
            add("Tile a matrix multiply: shared memory, register blocks, then the loads hidden behind the math.",
                f"the naive matmul at {size}³", f"the ladder's rung of lowest median ({best['impl']}) at {size}³",
                naive, row(best, "seconds", 1), "04_matmul_ladder.ipynb")
    add("Send the GPU a whole batch at once, not one sample per call.",
        "10,000 test images through NumPy on the CPU",
        "the same images uploaded, run and read back in one batch on the GPU",
        seconds("NumPy forward + argmax on the CPU"),
        seconds("end to end, uint8: upload+kernels+readback+argmax"), "03_batched_inference.ipynb")
    add("Upload bytes, not floats: store images as uint8 and convert in the shader.",
        "uploading 10,000 images as float32", "uploading them as uint8, four pixels a word",
        seconds("upload float32 into existing buffer"),
        seconds("upload uint8-packed into existing buffer"), "03_batched_inference.ipynb")
    add("Allocate buffers once and reuse them.",
        "uploading 10,000 images into a new buffer", "uploading them into a buffer allocated once",
        seconds("upload float32 into a fresh buffer"),
        seconds("upload float32 into existing buffer"), "03_batched_inference.ipynb")
    unfused = next((r for name, r in fused.items() if name.startswith("unfused 784-128-10 SGD")), None)
    if unfused and ours:
        add("Fuse the step's kernels: fewer dispatches, fewer barriers.",
            f"an epoch in {unfused['dispatches_per_step']} dispatches a step",
            f"the same epoch in {ours['dispatches_per_step']} dispatches a step",
            row(unfused), row(ours), "06_fused_training.ipynb")
    jax = fused.get("JAX jit(lax.scan) 784-128-10 SGD, fp32, precision highest")
    fastest = fastest_glsl(list(fused.values()), 128)   # the lowest median of the GLSL trainers, as README and 08 set it
    add("Measure against a compiler in the same run: small fused shaders can beat a general one.",
        "JAX's compiled epoch (fp32)", f"the GLSL epoch of lowest median ({fastest['name']})" if fastest else "",
        row(jax), row(fastest), "08_dispatch_floor.ipynb")
    return sorted(found, key=lambda r: r.factor, reverse=True)


def not_borne_out(r: Rule) -> str:
    """The sentence for a rule this run does not bear out (its fast row not faster than its slow one beyond the
    noise and MARGIN), which the ranked table leaves out: its two rows with their bands, and what the run found."""
    slow, fast = r.slow_t.text(), r.fast_t.text()
    found = (f"the two are {timing.the_same(r.fast_t, r.slow_t, MARGIN)}" if r.outcome == timing.SAME
             else f"the second took longer, {timing.times(timing.ratio(r.fast_t, r.slow_t), digits=2)}×")
    return (f"Not borne out by this run, so not ranked: *{r.rule}* {r.slow[0].upper() + r.slow[1:]}: {slow}; "
            f"{r.fast}: {fast}: {found}. ([{r.notebook[:2]}]({r.notebook}))")


def duration(seconds: float, digits: int = 3) -> str:
    """`digits` significant digits in s, ms or µs, whichever keeps the number at or above 1."""
    if seconds >= 1:
        return f"{significant(seconds, digits)} s"
    if seconds >= 1e-3:
        return f"{significant(seconds * 1e3, digits)} ms"
    return f"{significant(seconds * 1e6, digits)} µs"


def company_note(bench: dict, alone_where: str = "the README's row and the first rule",
                 among_where: str = "the fusion rule above") -> str:
    """Where the record times notebook 05's six-dispatch epoch twice, in different company (alone against
    NumPy in `train`, the README's row; in turn with the fused trainers in `fused`, rule 'Fuse'), a sentence
    giving both, so a reader who meets both figures knows why they differ; '' where the record lacks one."""
    b = bench["benches"]
    alone = next((r for r in b.get("train", []) if r.get("name", "").startswith("GLSL") and "ms" in r), None)
    among = next((r for r in b.get("fused", []) if r.get("name", "").startswith("unfused 784-128-10") and "ms" in r),
                 None)
    if not (alone and among):
        return ""
    text = lambda r: timing.Timing.from_row(r).text()   # noqa: E731
    return (f"Notebook 05's six-dispatch epoch has two rows in this run: {text(alone)} timed with NumPy's epoch "
            f"({alone_where}) and {text(among)} timed in turn with the fused trainers ({among_where}). "
            "The trainer is the same; a GPU epoch's time depends on what runs between its repeats, so each comparison "
            "is made between rows measured together.")


def page(bench: dict, source: str) -> str:
    device = bench["device"]
    lines = ["# Takeaways: making a small model train fast on a GPU", "",
             "The rules this course measured, ranked by how much each bought in one benchmark run "
             f"(`{source}`, {device['renderer'].split('/')[0]}, {device['date']}). Each line compares two rows of that run, "
             f"and a rule is ranked only where its faster row beats the other beyond the noise and by more than "
             f"{100 * MARGIN:.0f} %; the notebook beside it shows the work. Generated by `python -m helpers.takeaways`.", "",
             "| rank | rule | measured | shown in |", "| --- | --- | --- | --- |"]
    found = rules(bench)
    for rank, r in enumerate([r for r in found if r.outcome == timing.A_FASTER], 1):
        slow, fast = r.shown
        measured = f"{r.slow}: {slow}; {r.fast}: {fast} (**{r.factor_text}×**)"
        lines.append(f"| {rank} | {r.rule} | {measured} | [{r.notebook[:2]}]({r.notebook}) |")
    for r in found:
        if r.outcome != timing.A_FASTER:
            lines += ["", not_borne_out(r)]
    twice = company_note(bench)
    if twice:
        lines += ["", twice]
    lines += ["", "Every time above is the median of a wall-clock or GPU-timer figure from that one run "
              "([RESULTS.md](results/RESULTS.md) gives each with its spread); on another GPU the "
              "factors differ, and `python -m helpers.bench all` measures yours.", "",
              "[Contents](../README.md) · [Glossary](GLOSSARY.md)", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    path = Path(argv[0])
    bench = json.loads(path.read_text())
    source = path.resolve().relative_to(ROOT).as_posix() if path.resolve().is_relative_to(ROOT) else path.name
    PAGE.write_text(page(bench, source))
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

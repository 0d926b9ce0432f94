"""What gl.Kernel's checks cost a dispatch: `python -m helpers.bench.contract [dispatches]`.

Before every dispatch, Kernel.run and kernel.program.run check that every uniform the shader reads has been
set, that the group counts are those the banner's Dispatch field gives for the uniforms set, the banner's
Requires conditions on the uniforms and the length of every buffer bound to the shader's bindings; each
re-checks only what changed since the last dispatch. This times fused_forward_1_xent (seven conditions,
eight bindings, a Dispatch field that names `step`) at a step past the last batch, where the banner's
group count is 0: every loop dispatches zero work groups, so only the CPU's side is measured. Each checked
loop is measured interleaved with the bare ModernGL loop that makes the same calls (the same uniform
written, the same buffers bound): nothing changed; `step` changed, which the group count names (the fused
trainers' hot loop), through program[...] and through Kernel.run; gather_forward_1_u8's `start` changed,
which a length names (notebook 05's trainer sets it every step; N = 0, so it too dispatches zero groups);
`n_hidden` changed, which two conditions and three lengths name; the same buffers given again, which bind()
type-checks. It prints microseconds per
dispatch with their 20-80 % band, and the check's cost: the checked loop's time less the bare loop's,
sample by sample.

Then whole epochs (`epochs`): notebook 05's six-dispatch trainer and the fused trainer, each built twice on
the same images, once as the series uses it and once made to dispatch through the bare ComputeShaders
(`without_checks`), their epochs interleaved: whether the checks slow a real epoch beyond the noise.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from .. import gl, mode, reference, timing
from ..fused_mlp import FusedMLP
from ..gpu_mlp import GPUTrainer

SHADER = "fused_forward_1_xent.comp"
GATHER = "gather_forward_1_u8.comp"
BATCH = 20      # dispatches a sample times


def _sample(loop, counter: list, batch: int = BATCH):
    """sample() for timing.measure: seconds per dispatch of `batch` calls of loop(i), i counting on."""
    def sample() -> float:
        first = counter[0]
        counter[0] += batch
        start = time.perf_counter()
        for i in range(first, first + batch):
            loop(i)
        return (time.perf_counter() - start) / batch
    return sample


def measure(ctx, dispatches: int = 2000) -> dict[str, tuple[timing.Timing, timing.Timing]]:
    """{what: (bare, checked)}: Timings (seconds per dispatch) of each checked loop and of the bare loop
    measured with it, interleaved; `dispatches` of each, in samples of BATCH."""
    n_in, n_hidden, batch, n_samples, images = 784, 128, 128, 1024, 1024
    past = -(-n_samples // batch)            # a step past the last batch: the banner gives 0 work groups
    kernel = gl.Kernel(ctx, SHADER, {"MAX_H": n_hidden})
    arrays = {0: gl.empty(ctx, (images * n_in // 4,), np.uint32, "images"),
              1: gl.empty(ctx, (images,), np.uint32, "labels"), 2: gl.empty(ctx, (n_samples,), np.uint32, "order"),
              3: gl.empty(ctx, ((n_in + 11) * n_hidden + 10,), name="params"),
              6: gl.empty(ctx, (batch * n_hidden,), name="A1"), 7: gl.empty(ctx, (batch * n_hidden,), name="dZ1"),
              8: gl.empty(ctx, (batch * 10,), name="dlogits"), 9: gl.empty(ctx, (n_samples,), name="losses")}
    kernel.run(0, bindings=arrays, n_in=n_in, n_hidden=n_hidden, n_samples=n_samples, batch_size=batch, step=past,
               barrier=False)
    # notebook 05's trainer: gather_forward_1_u8 with `start` set every step, which order's length names;
    # N = 0 hidden units, so its banner gives 0 work groups too
    gather = gl.Kernel(ctx, GATHER)
    gather_arrays = {0: arrays[0], 1: gl.empty(ctx, (n_samples,), np.uint32, "order"), 3: arrays[3],
                     4: arrays[3], 7: arrays[6]}
    gather.run(*gather.groups(B=batch, K=n_in, N=0), bindings=gather_arrays, B=batch, K=n_in, N=0, start=0,
               barrier=False)
    gather_groups = gather.groups(B=batch, K=n_in, N=0)
    gather_raw, gather_checked = gather.program.unchecked, gather.program
    raw_start, checked_start = gather_raw["start"], gather_checked["start"]
    starts = [batch * (i % (n_samples // batch - 1)) for i in range(64)]

    def bare_start(i):
        raw_start.value = starts[i % 64]
        gather_raw.run(*gather_groups)

    def checked_start_loop(i):
        checked_start.value = starts[i % 64]
        gather_checked.run(*gather_groups)

    raw = kernel.program.unchecked             # the moderngl ComputeShader itself: no checks
    checked = kernel.program                   # what a trainer's loop holds: checks, then dispatches
    raw_step, raw_hidden = raw["step"], raw["n_hidden"]
    checked_step = checked["step"]
    steps = [past + i % 64 for i in range(64)]  # 64 steps, each past the end: as many as an epoch's, cached
    sizes = (n_hidden, n_hidden - 4)

    def bare_rebind(i):
        for binding, array in arrays.items():
            array.buffer.bind_to_storage_buffer(binding, offset=array.offset, size=array.nbytes)
        raw.run(0, 1, 1)

    def bare_step(i):
        raw_step.value = steps[i % 64]
        raw.run(0, 1, 1)

    def checked_step_loop(i):
        checked_step.value = steps[i % 64]
        checked.run(0, 1, 1)

    def bare_hidden(i):
        raw_hidden.value = sizes[i % 2]
        raw.run(0, 1, 1)

    def bare_run(i):
        raw.run(0, 1, 1)

    pairs = {
        "kernel.program.run, nothing changed": (bare_run, lambda i: checked.run(0, 1, 1)),
        "Kernel.run, nothing changed": (bare_run, lambda i: kernel.run(0, barrier=False)),
        "program['step'].value = s; program.run (the group count names step)": (bare_step, checked_step_loop),
        "Kernel.run(step=s)": (bare_step, lambda i: kernel.run(0, barrier=False, step=steps[i % 64])),
        "program['start'].value = s; program.run (a length names start)": (bare_start, checked_start_loop),
        "Kernel.run(n_hidden=...), 2 conditions and 3 lengths": (
            bare_hidden, lambda i: kernel.run(0, barrier=False, n_hidden=sizes[i % 2])),
        "Kernel.run(bindings=...), the same 8 buffers": (
            bare_rebind, lambda i: kernel.run(0, bindings=arrays, barrier=False)),
    }
    repeat = max(3, dispatches // BATCH)
    rows = {}
    for name, (bare, loop) in pairs.items():
        kernel.run(0, barrier=False, n_hidden=n_hidden, step=past)   # every pair starts from the same state
        raw_hidden.value, raw_step.value = n_hidden, past
        counters = [0], [0]
        measured = timing.measure_interleaved({"bare": _sample(bare, counters[0]),
                                               "checked": _sample(loop, counters[1])}, repeat)
        rows[name] = (measured["bare"], measured["checked"])
    ctx.finish()
    for array in (*arrays.values(), gather_arrays[1]):
        array.release()
    return rows


def cost(bare: timing.Timing, checked: timing.Timing) -> timing.Timing:
    """The check's cost per dispatch: each checked sample less the bare sample taken just before it."""
    return timing.Timing(tuple(c - b for b, c in zip(bare.samples, checked.samples)), checked.clock)


def report(rows: dict) -> str:
    """A line per checked loop: the bare loop's time, the checked loop's and the difference, each with its
    20-80 % band, in µs per dispatch."""
    lines = [f"{'checked loop':68s} {'bare ModernGL':>22s} {'checked':>22s} {'the checks cost':>24s}"]
    for name, (bare, checked) in rows.items():
        lines.append(f"{name:68s} {bare.text('µs'):>22s} {checked.text('µs'):>22s} "
                     f"{cost(bare, checked).text('µs'):>24s}")
    lines.append("(µs per dispatch of zero work groups: the CPU's side alone; median (20th–80th percentile); "
                 "the cost is taken sample by sample, each checked sample less the bare one beside it)")
    return "\n".join(lines)


def without_checks(trainer):
    """Make a trainer dispatch through the bare moderngl ComputeShaders, for measuring what the checks cost:
    every Kernel's program becomes the ComputeShader itself, and the uniforms and programs its step loop
    holds become the bare ones. The trainer checks nothing afterwards. Returns it."""
    for kernel in trainer.kernels.values():
        kernel._checked_program = kernel._checked_program.unchecked
    bare = lambda held: held.unchecked if isinstance(held, gl.CheckedProgram) else getattr(held, "_uniform", held)  # noqa: E731
    for name in ("_u_step", "_u_start", "_u_rng_step"):
        if getattr(trainer, name, None):
            setattr(trainer, name, type(getattr(trainer, name))(bare(u) for u in getattr(trainer, name)))
    for name in ("_u_slot", "_u_step_head"):
        if getattr(trainer, name, None) is not None:
            setattr(trainer, name, bare(getattr(trainer, name)))
    if getattr(trainer, "plan", None) and isinstance(trainer.plan[0], tuple) and len(trainer.plan[0]) == 2 \
            and isinstance(trainer.plan[0][0], gl.CheckedProgram):
        trainer.plan = [(bare(program), groups) for program, groups in trainer.plan]
    return trainer


TRAINERS = {"notebook 05's trainer (6 dispatches a step)": GPUTrainer, "the fused trainer (2 dispatches a step)": FusedMLP}


def epochs(ctx, repeat: int = 15, n: int | None = None) -> dict[str, tuple[timing.Timing, timing.Timing]]:
    """{trainer: (bare, checked)}: Timings of whole epochs (back to back, wall clock with ctx.finish() at both
    ends) of each trainer as the series uses it and of its twin made by without_checks, interleaved after a
    warm-up, on n random images (default 60,000; 1,024 in QUICK mode), 784-128-10, batch 128, SGD."""
    from .fused import epoch_sampler
    n = n or mode.pick(60_000, 1024)
    rng = np.random.default_rng(0)
    images, labels = rng.integers(0, 256, (n, 784), dtype=np.uint8), rng.integers(0, 10, n)
    rows = {}
    for name, kind in TRAINERS.items():
        made = {way: kind(ctx, reference.init_params(seed=0), images, labels, optimizer=reference.SGD(0.1),
                          batch_size=128, seed=0) for way in ("bare", "checked")}
        without_checks(made["bare"])
        measured = timing.measure_interleaved({way: epoch_sampler(t) for way, t in made.items()}, repeat)
        rows[name] = (measured["bare"], measured["checked"])
        for trainer in made.values():
            trainer.release()
    return rows


def epoch_verdicts(rows: dict) -> list[timing.Verdict]:
    """A sentence per trainer: its epoch with the checks against without them (timing.versus)."""
    return [timing.versus(bare, checked, f"{name}'s epoch without the checks", "with them")
            for name, (bare, checked) in rows.items()]


def main(argv: list[str] | None = None) -> None:
    """python -m helpers.bench.contract [dispatches]"""
    argv = sys.argv[1:] if argv is None else argv
    ctx = gl.create_context()
    print(gl.describe(ctx))
    print(report(measure(ctx, int(argv[0]) if argv else 2000)))
    rows = epochs(ctx)
    for name, (bare, checked) in rows.items():
        print(f"{name}: an epoch without the checks {bare.text()}, with them {checked.text()}, "
              f"the difference {cost(bare, checked).text()}")
    for sentence in epoch_verdicts(rows):
        print(sentence[0].upper() + sentence[1:] + ".")


if __name__ == "__main__":
    main()

"""Measuring the trainers (notebooks 05 and 06, and the train / fused benchmarks): the one place that times
epochs, takes a step apart, measures the empty-dispatch floor, and shows what a mapped buffer costs.

    times = epoch_seconds(trainer, epochs=5)            # back to back, after a warm-up
    profile = profile_step(trainer)                     # each dispatch, an empty one, a step, a readback
    phases = epoch_phases(trainer, profile, median)     # upload / kernel / readback / dispatch of an epoch
    floor = empty_epochs(ctx, steps, [groups, ...])     # the same dispatch pattern with no work in it
    with put_back(trainer): ...                         # measure, then the trainer as it was

Kernels are timed by timing.Clock: GPU timer queries on a GPU, the wall clock around ctx.finish() on a
software renderer (whose timer queries mean nothing). Epochs are wall clock with ctx.finish() at both ends.
"""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager

import moderngl
import numpy as np

from .. import gl, reference, timing

EMPTY_SHADER = "#version 430\nlayout(local_size_x = 64) in;\nvoid main() {}\n"  # a dispatch doing nothing
BARRIER = moderngl.SHADER_STORAGE_BARRIER_BIT


def time_epochs(run_epoch, finish, epochs: int, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of `epochs` calls run_epoch(e) after `warmup` untimed ones; finish() around each.
    Every epoch timing of the series (GLSL trainers, PyTorch, the floor) goes through here."""
    times = []
    for e in range(warmup + epochs):
        finish()
        start = time.perf_counter()
        run_epoch(e)
        finish()
        if e >= warmup:
            times.append(time.perf_counter() - start)
    return times


def epoch_seconds(trainer, epochs: int, warmup: int = 1, losses: list | None = None) -> list[float]:
    """Seconds of `epochs` of the trainer's epochs back to back, after `warm_up`'s sustained steps and
    `warmup` untimed epochs. A GPU that was mostly idle runs at a low clock, and an epoch or two of training
    did not always bring the H100's back (notebook 05 samples it). The epochs' sample orders
    are drawn before the clock starts, as `python -m helpers.bench fused` draws them: drawing one
    (reference.epoch_order) is CPU work while the GPU waits, not part of the epoch's GPU work. losses: a list
    that gets every epoch's mean loss, the untimed ones first. It trains: save and restore the weights around
    it if they matter."""
    orders = [reference.epoch_order(trainer.n, e, trainer.seed) for e in range(warmup + epochs)]
    losses = [] if losses is None else losses
    trainer.start_epoch(0)
    warm_up(trainer.ctx, lambda: trainer.step(0))
    return time_epochs(lambda e: losses.append(trainer.run_epoch(e, order=orders[e])), trainer.ctx.finish,
                       epochs, warmup)


def warm_up(ctx, issue_step, seconds: float | None = None) -> None:
    """Run steps for `seconds` (default 0.6 s on a GPU, none on a software renderer), untimed, so a GPU that
    sat idle is back at its working clocks before anything is timed (the H100's SM clock took about half a
    second to climb from 345 to 1980 MHz, sampled by nvidia-smi every 0.2 s)."""
    seconds = (0.0 if gl.is_software(ctx) else 0.6) if seconds is None else seconds
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        for _ in range(20):
            issue_step()
        ctx.finish()


def dispatch_seconds(ctx, program, groups, repeat: int, clock) -> float:
    """One dispatch of `program` with `groups` plus its barrier, in a stream of `repeat` back-to-back
    copies (what it adds to a step while the GPU is kept busy); the median of three streams."""
    def stream():
        for _ in range(repeat):
            program.run(*groups)
            ctx.memory_barrier(BARRIER)
    program.run(*groups)  # warm-up
    return statistics.median(clock.kernel(stream) for _ in range(3)) / repeat


@contextmanager
def put_back(trainer):
    """Runs the `with` block, then puts the trainer's parameters, optimizer state, step counter and counts
    back as they were before it: measuring a step trains, and a timing must not change the training."""
    saved = {name: trainer.read(name) for name in ("params", "m", "v") if name in trainer.arrays}
    t, counts = trainer.t, dict(trainer._counts)
    try:
        yield
    finally:
        for name, values in saved.items():
            trainer.write(name, values)
        trainer.t, trainer._counts = t, counts


def profile_step(trainer, repeat: int = 30, clock=None, warmup: float | None = None) -> dict:
    """One full-size step of either trainer taken apart; parameters, optimizer state and counts restored.

    Seconds: kernel[file] one dispatch + barrier (dispatch_seconds, uniforms of step 0 of epoch 0);
    empty, the same for a dispatch that does nothing (the fixed cost of a dispatch + barrier); and by the
    wall clock: step (one step in a stream of `repeat`), issue (Python's time to queue one), readback
    (the losses of check_every steps) and order_upload (one epoch's order). overhead = step - kernels.
    """
    ctx, clock = trainer.ctx, clock or timing.Clock(trainer.ctx)
    with put_back(trainer):
        trainer.start_epoch(0)
        trainer.step(0)  # sets step 0's uniforms (and the batch size)
        warm_up(ctx, lambda: trainer.step(0), warmup)
        kernel = {k.name: dispatch_seconds(ctx, k.program, groups, repeat, clock)
                  for k, groups in trainer.dispatches(0)}
        empty_program = ctx.compute_shader(EMPTY_SHADER)
        empty = dispatch_seconds(ctx, empty_program, (1, 1, 1), repeat, clock)
        empty_program.release()

        def steps():
            for _ in range(repeat):
                trainer.step(0)
        steps()
        step = statistics.median(clock.wall(steps) for _ in range(3)) / repeat
        ctx.finish()
        start = time.perf_counter()
        steps()
        issue = (time.perf_counter() - start) / repeat
        ctx.finish()
        reads = min(trainer.check_every, trainer.steps_per_epoch)
        readback = statistics.median(clock.wall(lambda: trainer.loss_sums(0, reads)) for _ in range(5))
        order = reference.epoch_order(trainer.n, 0, trainer.seed)
        order_upload = statistics.median(clock.wall(lambda: trainer.write("order", order)) for _ in range(5))
    total = sum(kernel.values())
    return {"kernel": kernel, "kernel_total": total, "empty": empty, "step": step, "issue": issue,
            "overhead": max(step - total, 0.0), "readback": readback, "readback_steps": reads,
            "order_upload": order_upload, "clock": clock.source, "batch": trainer.batch(0)[1],
            "dispatches_per_step": trainer.dispatches_per_step, "barriers_per_step": trainer.dispatches_per_step}


def step_verdict(step: float, kernel_total: float, fixed: float, issue: float, margin: float = 0.1) -> str:
    """One sentence on a step taken apart (profile_step's figures, seconds): the share of the step that is
    the kernels' arithmetic (kernel_total - fixed), more or less than half; the fixed cost of the dispatches
    and barriers (fixed: an empty dispatch + barrier times their number); the rest of the step; and whether
    Python (issue: its time to queue a step) or the GPU sets the pace: Python does where queueing a step takes
    within `margin` of the whole step (the step, timed back to back by the wall clock, contains the queueing)."""
    if step <= 0:
        raise ValueError(f"a step takes a positive time, got step={step}")
    work = max(kernel_total - fixed, 0.0)
    if kernel_total <= step:
        half = "more than half" if work > step / 2 else "less than half"
        text = (f"the kernels' arithmetic is {work / step:.0%} of a {step * 1e6:.1f} µs step ({half}), the fixed "
                f"cost of its dispatches and barriers {fixed / step:.0%}, and the other {(step - kernel_total) / step:.0%} "
                "is what the kernels cost together beyond each one alone")
    else:   # shares of the kernels' sum: a share of the step would pass 100 %
        half = "more than half" if work > kernel_total / 2 else "less than half"
        text = (f"the kernels timed one by one add up to {kernel_total * 1e6:.1f} µs, more than the "
                f"{step * 1e6:.1f} µs step, because in a step each one's start can overlap the previous one's "
                f"tail; of that sum the arithmetic is {work / kernel_total:.0%} ({half}) and the fixed cost of the "
                f"dispatches and barriers {fixed / kernel_total:.0%}")
    python_bound = issue >= (1 - margin) * step   # the wall-clock step includes Python's queueing of it
    pace = ("so Python sets the pace: the GPU waits for the next dispatch" if python_bound
            else "so the GPU sets the pace, not Python")
    return f"{text}; Python queues a step in {issue * 1e6:.1f} µs, {issue / step:.0%} of it, {pace}".replace("%", " %")


def epoch_phases(trainer, profile: dict, epoch_seconds: float) -> dict:
    """One epoch in seconds, from profile_step's profile: upload (the order), kernel (each kernel's work
    beyond an empty dispatch's cost, every step), readback (one per check), and dispatch: the rest of the
    wall clock (the fixed cost of each dispatch and barrier, the GPU waiting for Python)."""
    steps = trainer.steps_per_epoch
    kernel = sum(max(t - profile["empty"], 0.0) for t in profile["kernel"].values()) * steps
    readback = profile["readback"] * -(-steps // trainer.check_every)
    upload = profile["order_upload"]
    return {"upload": upload, "kernel": kernel, "readback": readback,
            "dispatch": max(epoch_seconds - kernel - readback - upload, 0.0)}


def empty_epochs(ctx, steps: int, groups: list, epochs: int = 3) -> list[float]:
    """Epochs of empty dispatches: `steps` steps of one dispatch + barrier per entry of `groups` (its
    work-group counts), no work in them: the floor a trainer with that dispatch pattern cannot go under."""
    program = ctx.compute_shader(EMPTY_SHADER)

    def epoch(_):
        for _ in range(steps):
            for g in groups:
                program.run(*g)
                ctx.memory_barrier(BARRIER)
    times = time_epochs(epoch, ctx.finish, epochs)
    program.release()
    return times


def mapped_read_effect(make_trainer, buffers=("A1", "dZ1"), reads: int = 5, repeat: int = 30, clock=None) -> dict:
    """What mapping a kernel's buffers does to the kernels that use them afterwards (the appendix).

    Three fresh trainers from make_trainer(), each run one step and then: no reads; `reads` reads of each of
    trainer.arrays[buffers] through the staging buffer (GPUArray.read, what the trainers do); `reads` reads
    of the same buffers by mapping them (moderngl's Buffer.read_into). Then
    every dispatch of a step is timed (profile_step's kernel figures). The reads come before any other use
    of the buffers, which is when the driver decides where a buffer lives. Returns {"no reads" | "staged
    reads" | "mapped reads": {file: seconds}}. Each trainer is released afterwards.
    """
    result = {}
    for label, read in (("no reads", None), ("staged reads", lambda a: a.read()),
                        ("mapped reads", lambda a: a.buffer.read_into(np.empty(a.shape, a.dtype), offset=a.offset))):
        trainer = make_trainer()
        trainer.start_epoch(0)
        trainer.step(0)
        trainer.ctx.finish()
        for _ in range(reads if read else 0):
            trainer.ctx.memory_barrier()
            for name in buffers:
                read(trainer.arrays[name])
        result[label] = profile_step(trainer, repeat, clock)["kernel"]
        trainer.release()
    return result


def mapped_read_verdict(worst_name: str, worst: float, step: float, staged: float, margin: float = 0.1) -> str:
    """One sentence on mapped_read_effect's figures: worst, the largest ratio of one kernel's time after
    mapped reads to its time with no reads; step and staged, the step's kernels together after mapped and
    after staged reads against no reads. A ratio within `margin` of 1 is called within the run-to-run noise;
    the sentence claims nothing about where the driver put the buffers, which no GL call reports."""
    def effect(ratio):
        return (f"within {margin:.0%} of no reads".replace("%", " %") if abs(ratio - 1) <= margin
                else ("slower" if ratio > 1 else "faster"))
    return (f"after mapped reads a step's kernels took {step:.2f}× their time with no reads ({effect(step)}; "
            f"the most affected, {worst_name}, {worst:.2f}×); after staged reads {staged:.2f}× ({effect(staged)})")


def grid_barrier(ctx, n_groups: int, rounds: int, defines: dict | None = None, clock=None) -> dict:
    """One dispatch of grid_barrier_1_atomic: `rounds` grid-wide barriers across n_groups work groups.
    Returns seconds (timing.Clock), arrivals, flags (1: a wait gave up, the groups were not all resident;
    2: a group read a stale slot), the most polls one wait took, and whether every slot ended at `rounds`."""
    clock = clock or timing.Clock(ctx)
    kernel = gl.Kernel(ctx, "grid_barrier_1_atomic.comp", defines)
    sync = gl.upload(ctx, np.zeros(4, np.uint32), "sync")
    seen = gl.empty(ctx, (n_groups,), np.uint32, name="seen", fill=0)
    kernel.bind({0: sync, 1: seen})
    kernel.set(n_groups=n_groups, rounds=rounds)
    seconds = clock.kernel(lambda: kernel.program.run(n_groups))
    ctx.memory_barrier()
    arrivals, flags, polls, _ = (int(v) for v in sync.read())
    ok = bool(np.all(seen.read() == rounds))
    for resource in (sync, seen, kernel.program):
        resource.release()
    return {"seconds": seconds, "arrivals": arrivals, "flags": flags, "max_polls": polls, "slots_ok": ok,
            "groups": n_groups, "rounds": rounds}


def grid_barrier_seconds(ctx, n_groups: int, rounds: int = 2000, defines: dict | None = None) -> dict:
    """What one grid barrier costs with n_groups work groups: (time of `rounds` barriers - time of none) /
    rounds, both one dispatch (median of three); with the check of the last run (grid_barrier's dict)."""
    runs = [grid_barrier(ctx, n_groups, r, defines) for r in (0, rounds) for _ in range(3)]
    base = statistics.median(r["seconds"] for r in runs[:3])
    full = statistics.median(r["seconds"] for r in runs[3:])
    return dict(runs[-1], per_barrier=(full - base) / rounds, empty_dispatch=base)


def phase_seconds(trainer, repeat: int = 50, clock=None) -> dict:
    """A PersistentMLP's step taken apart (notebook 09): each of its PHASES phases as a dispatch of its own
    with its barrier (in a stream of `repeat`, the median of three streams), and, when the trainer runs
    persistent, one step inside a dispatch of `repeat` steps (the same phases joined by grid barriers).
    It trains (phase 2 updates the weights): run it inside put_back(trainer) if they matter."""
    clock = clock or timing.Clock(trainer.ctx)
    trainer.start_epoch(0)
    warm_up(trainer.ctx, lambda: trainer.run_steps(0, 1))

    def median_of_three(issue):
        return statistics.median(clock.kernel(issue) for _ in range(3)) / repeat
    out = {}
    for p in range(trainer.PHASES):
        out[f"phase {p}"] = median_of_three(lambda p=p: [trainer.dispatch(p, p + 1) for _ in range(repeat)])
    if trainer.persistent:
        steps = min(repeat, trainer.steps_per_epoch)  # steps of one epoch: the order holds no more batches
        trainer.start_epoch(0)  # the barrier's counters back to zero
        out["persistent step"] = median_of_three(lambda: trainer.dispatch(0, trainer.PHASES * steps)) * repeat / steps
        out["flags"] = trainer.barrier_flags()["flags"]
    return out

"""Measuring the trainers (notebooks 05 and 06, and the train / fused benchmarks): the one place that times
epochs, takes a step apart, measures the empty-dispatch floor, and shows what a mapped buffer costs.

    times = epoch_seconds(trainer, epochs=5)            # back to back, after a warm-up
    profile = profile_step(trainer)                     # each dispatch, an empty one, a step, Python's calls
    print(step_account(profile))                        # what a step is made of, Python's side and the GPU's
    parts = epoch_account(trainer, profile, epoch)      # an epoch = steps x step + readbacks + upload + rest
    phases = epoch_phases(trainer, profile, median)     # upload / kernel / readback / dispatch of an epoch
    floor = empty_epochs(ctx, steps, [groups, ...])     # the same dispatch pattern with no work in it
    with put_back(trainer): ...                         # measure, then the trainer as it was

Kernels are timed by timing.Clock: GPU timer queries on a GPU, the wall clock around ctx.finish() on a
software renderer (whose timer queries mean nothing). Epochs are wall clock with ctx.finish() at both ends.
Every figure is a timing.Timing (median and 20-80 % band) measured after a warm-up by time; figures that
are compared are measured interleaved (timing.measure_interleaved). A step is measured the way an epoch
issues it: a stream of as many steps as an epoch has, so that the step and the epoch divided by its steps
are the same thing, apart from what the epoch adds (readbacks, the order upload), which epoch_account names.
"""

from __future__ import annotations

import math
import statistics
import time
from contextlib import contextmanager
from decimal import ROUND_HALF_UP, Decimal

import moderngl
import numpy as np

from .. import gl, plots, reference, timing

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
    """Issue steps (20 at a time, then ctx.finish()) for `seconds` of wall clock (default: timing's warm-up,
    1 s on a GPU, less in QUICK mode), untimed, so a GPU that sat idle is back at its working clock before
    anything is timed (timing.warm_up does the work)."""
    timing.warm_up(lambda: [issue_step() for _ in range(20)], seconds, finish=ctx.finish)


def dispatch_sample(ctx, program, groups, repeat: int, clock):
    """sample() -> seconds of one dispatch of `program` with `groups` plus its barrier, in a stream of `repeat`
    back-to-back copies (what it adds to a step while the GPU is kept busy), timed by `clock` and divided by
    `repeat`: a sample for timing.measure or timing.measure_interleaved."""
    def stream():
        for _ in range(repeat):
            program.run(*groups)
            ctx.memory_barrier(BARRIER)
    return lambda: clock.kernel(stream) / repeat


def dispatch_timing(ctx, program, groups, repeat: int, clock, samples: int = 10) -> timing.Timing:
    """A Timing of `samples` of dispatch_sample's streams. No warm-up of its own: warm up first (warm_up)."""
    return timing.measure(dispatch_sample(ctx, program, groups, repeat, clock), samples, warmup=0.0,
                          clock=clock.source)


def dispatch_seconds(ctx, program, groups, repeat: int, clock) -> float:
    """dispatch_timing's median, in seconds (after one untimed dispatch)."""
    program.run(*groups)
    return dispatch_timing(ctx, program, groups, repeat, clock, samples=3).median


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


class StepTiming(timing.Timing):
    """A timing.Timing that float() turns into its median, so that a profile holding them is written to a
    benchmark's JSON (json.dumps(..., default=float)) as plain medians."""

    def __float__(self) -> float:
        return self.median


def _kept(t: timing.Timing) -> StepTiming:
    return StepTiming(t.samples, t.clock)


CALLS = ("run()", "memory_barrier()", "uniform write")   # the calls a step makes, as issue_calls names them


@contextmanager
def _timed_calls(totals: dict):
    """While inside, every ComputeShader.run, Context.memory_barrier and Uniform.value write adds its own
    seconds (perf_counter around the call alone) and a count to totals[name] = [seconds, calls]."""
    originals = (moderngl.ComputeShader.run, moderngl.Context.memory_barrier, moderngl.Uniform.value)
    clock = time.perf_counter

    def timed(name, call):
        def wrapper(*args, **kwargs):
            start = clock()
            result = call(*args, **kwargs)
            spent = clock() - start
            entry = totals[name]
            entry[0] += spent
            entry[1] += 1
            return result
        return wrapper

    value = originals[2]
    moderngl.ComputeShader.run = timed("run()", originals[0])
    moderngl.Context.memory_barrier = timed("memory_barrier()", originals[1])
    moderngl.Uniform.value = property(value.fget, timed("uniform write", value.fset))
    try:
        yield
    finally:
        moderngl.ComputeShader.run, moderngl.Context.memory_barrier, moderngl.Uniform.value = originals


def issue_calls(trainer, steps: int, samples: int = 5) -> dict:
    """Python's time to issue a step, call by call: `samples` streams of `steps` steps as an epoch issues
    them (no wait for the GPU in the timed part), each call of the kinds in CALLS timed on its own.
    Returns {call: {"per_step": Timing (seconds of that kind of call a step), "calls": calls a step}}."""
    ctx, per = trainer.ctx, {name: [] for name in CALLS}
    counts = {}
    for _ in range(samples):
        totals = {name: [0.0, 0] for name in CALLS}
        ctx.finish()
        with _timed_calls(totals):
            for s in range(steps):
                trainer.step(s % trainer.steps_per_epoch)
        ctx.finish()
        for name, (seconds, calls) in totals.items():
            per[name].append(seconds / steps)
            counts[name] = calls / steps
    return {name: {"per_step": StepTiming(tuple(v), timing.WALL), "calls": counts[name]} for name, v in per.items()}


def profile_step(trainer, repeat: int = 30, clock=None, warmup: float | None = None, stream: int | None = None,
                 samples: int = 7) -> dict:
    """One full-size step of either trainer taken apart; parameters, optimizer state and counts restored.

    After a warm-up by time (warm_up), in seconds (medians; the same figures as timing.Timing under the
    keys ending in _timing):
      kernel[file]: one dispatch + barrier, in a stream of `repeat` (uniforms of step 0 of epoch 0), by
        clock (timer queries on a GPU); empty: the same for a dispatch that does nothing (the fixed cost of
        a dispatch + barrier); measured interleaved;
      step: one step in a stream of `stream` steps (default: as many as an epoch has, issued as the epoch
        issues them), wall clock with ctx.finish() at both ends, divided by the steps; issue: Python's time
        to issue the same stream (no wait for the GPU), a step; issue_short: the same for a stream of
        `repeat` steps right after ctx.finish(); measured interleaved;
      calls: issue_calls, Python's issue time call by call; python_around: issue minus the calls (the
        Python of the step method around them);
      readback (the losses of check_every steps) and order_upload (one epoch's order), wall clock.
    overhead = step - kernels.
    """
    ctx, clock = trainer.ctx, clock or timing.Clock(trainer.ctx)
    stream = stream or trainer.steps_per_epoch
    with put_back(trainer):
        trainer.start_epoch(0)
        trainer.step(0)  # sets step 0's uniforms (and the batch size)
        warm_up(ctx, lambda: trainer.step(0), warmup)
        empty_program = ctx.compute_shader(EMPTY_SHADER)

        def kernel_sample(program, groups):
            def stream_of_one():
                for _ in range(repeat):
                    program.run(*groups)
                    ctx.memory_barrier(BARRIER)
            return lambda: clock.kernel(stream_of_one) / repeat
        trainer.step(0)
        dispatched = {k.name: kernel_sample(k.program, groups) for k, groups in trainer.dispatches(0)}
        dispatched["(empty)"] = kernel_sample(empty_program, (1, 1, 1))
        kernel = timing.measure_interleaved(dispatched, samples + 3, warmup=0.0, clock=clock.source)
        empty = kernel.pop("(empty)")
        empty_program.release()

        def issue(n):
            def sample():
                ctx.finish()
                start = time.perf_counter()
                for s in range(n):
                    trainer.step(s % trainer.steps_per_epoch)
                seconds = time.perf_counter() - start
                ctx.finish()
                return seconds / n
            return sample
        streams = timing.measure_interleaved(
            {"step": lambda: clock.wall(lambda: [trainer.step(s % trainer.steps_per_epoch) for s in range(stream)]) / stream,
             "issue": issue(stream), "issue_short": issue(repeat)}, samples, warmup=0.0)
        calls = issue_calls(trainer, stream, max(3, samples // 2))
        reads = min(trainer.check_every, trainer.steps_per_epoch)
        readback = timing.measure(lambda: clock.wall(lambda: trainer.loss_sums(0, reads)), 5, warmup=0.0)
        order = reference.epoch_order(trainer.n, 0, trainer.seed)
        order_upload = timing.measure(lambda: clock.wall(lambda: trainer.write("order", order)), 5, warmup=0.0)
    kernel, empty = {k: _kept(t) for k, t in kernel.items()}, _kept(empty)
    streams = {k: _kept(t) for k, t in streams.items()}
    readback, order_upload = _kept(readback), _kept(order_upload)
    total = float(timing.seconds_exactly(*added_up(list(kernel.values())).split()))   # the kernels' sum as printed
    step, issued = streams["step"], streams["issue"]
    python_around = issued.median - sum(c["per_step"].median for c in calls.values())
    return {"kernel": {k: t.median for k, t in kernel.items()}, "kernel_total": total, "empty": empty.median,
            "step": step.median, "issue": issued.median, "issue_short": streams["issue_short"].median,
            "overhead": max(step.median - total, 0.0), "readback": readback.median, "readback_steps": reads,
            "order_upload": order_upload.median, "clock": clock.source, "batch": trainer.batch(0)[1],
            "dispatches_per_step": trainer.dispatches_per_step, "barriers_per_step": trainer.dispatches_per_step,
            "stream_steps": stream, "short_steps": repeat, "calls": calls, "python_around": python_around,
            "kernel_timing": kernel, "empty_timing": empty, "step_timing": step, "issue_timing": issued,
            "issue_short_timing": streams["issue_short"], "readback_timing": readback,
            "order_upload_timing": order_upload}


def seconds_text(seconds: float) -> str:
    """A duration in the unit that suits it, three significant digits: '12.3 µs', '1.72 ms', '-4.4 ms'."""
    scale, unit = timing._unit(abs(seconds), "auto")
    return f"{'-' if seconds < 0 else ''}{timing._g(abs(seconds) * scale, 3)} {unit}"


def share_text(part, whole) -> str:
    """part / whole as a whole percentage rounded half up, with a space before the sign and never '-0 %'. Two
    timing.Timings give the share of their medians as their text() prints them (timing.ratio), the one a
    reader gets from the printed figures: 2.47 ms of 10.1 ms is 24.46 %, 24 %, where medians of 2.4749 and
    10.05 ms give 24.63 %, 25 %; two numbers (seconds), the share of the numbers themselves."""
    if isinstance(part, timing.Timing) and isinstance(whole, timing.Timing):
        return f"{timing.times(100 * timing.ratio(part, whole), 0)} %"
    return f"{timing.times(100 * part / whole, 0)} %"


def whole_percents(shares: dict) -> dict:
    """Shares that add up to 1 as whole percents that add up to exactly 100 (largest remainder: each share
    rounded down, then the points left over go to the largest remainders), so a reader who adds the printed
    parts gets 100, which rounding each alone does not promise: 60.4 + 35.6 + 4.4 + 1.6 + 0.2 - 2.2 rounds to
    60 + 36 + 4 + 2 + 0 - 2 = 100, but 20.5 + 20.5 + 59, each rounded alone (half to even), give
    20 + 20 + 59 = 99."""
    floors = {k: math.floor(100 * v) for k, v in shares.items()}
    left = round(100 * sum(shares.values())) - sum(floors.values())
    for k in sorted(shares, key=lambda k: 100 * shares[k] - floors[k], reverse=True)[:max(left, 0)]:
        floors[k] += 1
    return {k: v + 0 for k, v in floors.items()}


def rounding_note(shares: dict, percents: dict) -> str:
    """' (whole percents, rounded so that they add up to 100)' where whole_percents gave some part a point more
    or less than rounding it alone, half up, gives (a reader who rounds that part finds another figure); ''
    otherwise. Read after the list of percents."""
    alone = {k: int(timing.times(100 * v, 0)) for k, v in shares.items()}
    return " (whole percents, rounded so that they add up to 100)" if percents != alone else ""


def kernels_timing(profile: dict) -> timing.Timing:
    """The step's dispatches, each timed alone, added up: a Timing whose samples are the sums of the kernels'
    interleaved samples taken in the same round."""
    columns = zip(*(t.samples for t in profile["kernel_timing"].values()))
    return timing.Timing(tuple(sum(c) for c in columns), profile["clock"])


def step_shares(step: float, kernel_total: float, fixed: float) -> dict:
    """A step (seconds, in a stream) as parts that add up to it: the kernels' arithmetic (each kernel beyond
    an empty dispatch), the fixed cost of its dispatches and barriers (fixed: empty x dispatches), and the
    rest, step - kernel_total: positive, the GPU idle or waiting between dispatches; negative, the kernels
    timed one by one overlap in a step (one's start hides under the previous one's tail). Seconds as floats,
    or as exact Decimals (step_account passes the figures as printed)."""
    if step <= 0:
        raise ValueError(f"a step takes a positive time, got step={step}")
    work = max(kernel_total - fixed, kernel_total * 0)   # a zero of the figures' own type: floats or Decimals
    return {"arithmetic": work, "fixed": kernel_total - work, "rest": step - kernel_total}


GPU_LONGER, PYTHON_LONGER = "GPU longer", "Python longer"   # pace()'s outcomes: which median is the larger


def added_up(parts: list) -> str:
    """The medians of `parts` (timing.Timings) as their text() prints them, added up and printed in the unit
    of the sum, to the last decimal of the coarsest printed figure (rounded half up), as a sum of measured
    figures is written: 10.3 µs and 10.2 µs give '20.5 µs', 51.2 ms and 71.2 µs give '51.3 ms' (not
    '51.2712 ms': the first figure says nothing past its tenth of a millisecond). Printed figures keep their
    trailing zeros, so a figure's last written digit is its last decimal: 10.29 µs and 10.0 µs give '20.3 µs'."""
    figures = [t.text().split(" ", 2)[:2] for t in parts]
    total = sum(timing.seconds_exactly(f, u) for f, u in figures)
    quantum = max(timing.seconds_exactly(str(Decimal(1).scaleb(Decimal(f).as_tuple().exponent)), u) for f, u in figures)
    scale, unit = timing._unit(float(total), "auto")
    scale = Decimal(str(scale))
    return f"{(total * scale).quantize((quantum * scale).normalize(), ROUND_HALF_UP) + 0:f} {unit}"


def pace(kernels: timing.Timing, issue: timing.Timing, parts: list | None = None) -> timing.Verdict:
    """The GPU's dispatches alone (kernels: a step's kernels timed one by one, added up) against Python's time
    to issue the step (issue), as one sentence: the larger as a multiple of the smaller, at the medians, and
    why that ratio is this run's only. No side is named as the one that sets the pace: Python's issue time
    moved by tens of percent between runs on one H100 (notebook 05: 29 to 49 µs against the GPU's 40 µs;
    notebook 08: 10 to 17 µs against 20 µs), so any such verdict flipped between runs, and no notebook
    records this outcome. Outcome GPU_LONGER (also when the two medians are equal) or PYTHON_LONGER.
    With `parts` (the kernels' own Timings, printed one by one above the sentence), the GPU's figure is their
    printed medians added up (added_up) and the ratio is taken from that sum, so a reader who adds the
    printed kernels finds the same figure; the outcome stays the medians'."""
    gpu_figure = added_up(parts) if parts else kernels.text()
    gpu_shown = timing.seconds_exactly(*gpu_figure.split(" ", 2)[:2]) if parts else timing.shown_exactly(kernels)
    if parts:
        gpu_figure += ", the kernels above added up"
    gpu, python = f"the GPU's dispatches alone ({gpu_figure})", f"Python's issue of the step ({issue.text()})"
    caveat = ("a stream goes at the slower side's pace, but Python's side depends on what else the CPU is doing "
              "and moves from one run to the next more than the GPU's, so this ratio, and which side sets the pace, "
              "can differ in another run")
    longer, shorter, outcome = ((gpu, python, GPU_LONGER) if kernels.median >= issue.median else
                                (python, gpu, PYTHON_LONGER))
    issue_shown = timing.shown_exactly(issue)
    ratio = timing.times(max(gpu_shown / issue_shown, issue_shown / gpu_shown), digits=2)
    verb = "take" if outcome == GPU_LONGER else "takes"
    how = "about as long as" if ratio == "1" else f"{ratio}× as long as"
    return timing.Verdict(f"{longer[0].upper()}{longer[1:]} {verb} {how} {shorter}: {caveat}.", outcome)


def step_account(profile: dict, what: str = "a step") -> str:
    """profile_step's figures as three sentences: where the step (`what`) in a stream goes, in whole percents
    that add up to exactly 100 (whole_percents: 24.5 + 24.5 + 51, each rounded half up, would print 101; where
    a share shows a point more or less than its own rounding gives, the sentence says why): the kernels' time
    beyond an empty dispatch (each kernel timed alone with its barrier, so the share holds the kernel's own
    drain, the last work groups finishing while the rest of the GPU waits), the fixed cost of its dispatches
    and barriers and the rest (idle or overlap); what Python spends issuing it, call by call; and pace(): the
    GPU's dispatches alone against Python's issue time, which side is the slower in this run (a sentence, not
    a verdict: see pace).

    The shares are taken from the figures as the sentences print them (step_figures): the step's median, the
    kernels' printed medians added up (the figure pace prints) and the empty dispatch's printed median times
    the dispatches (printed in the first sentence), so a reader who divides them gets the printed percents,
    which the medians of per-round sums (profile["kernel_total"]) need not give."""
    step, kernels, empty = step_figures(profile)
    n = profile["dispatches_per_step"]
    parts = step_shares(step, kernels, empty * n)
    shares = {k: v / step for k, v in parts.items()}
    percents = whole_percents(shares)            # printed, they add up to exactly 100
    rest = parts["rest"]
    rest_words = (f"and the GPU between its dispatches (idle, or waiting for the next) {percents['rest']} %"
                  if rest >= 0 else
                  f"less {-percents['rest']} % that the kernels overlap when they run back to back in a step")
    note = rounding_note(shares, percents)
    where = (f"{what[0].upper()}{what[1:]} in a stream of {profile['stream_steps']} takes "
             f"{profile['step_timing'].text()}: the kernels beyond an empty dispatch, their drain included, "
             f"{percents['arithmetic']} %, the fixed cost of {n} dispatches and barriers ({n} × "
             f"{seconds_text(float(empty))}, an empty dispatch's median) {percents['fixed']} %, {rest_words}{note}.")
    issue = profile["issue_timing"]
    made = {name: c for name, c in profile["calls"].items() if c["calls"]}
    calls = ", ".join(f"{c['calls']:.0f} × {name} {c['per_step'].text()}" for name, c in made.items())
    around = around_the_calls(issue, [c["per_step"] for c in made.values()])   # from the figures printed here
    left = Decimal(around.split()[0])
    issuing = (f"Python takes {issue.text()} to issue it: {calls} and "
               + (f"{around} of Python around those calls." if left > 0 else
                  "no time around those calls that the printed figures can show." if left == 0 else
                  f"nothing measurable around them (the calls timed one by one add up to {around[1:]} more)."))
    return f"{where} {issuing} {pace(kernels_timing(profile), issue, list(profile['kernel_timing'].values()))}"


def step_figures(profile: dict) -> tuple:
    """(step, kernels, empty) of profile_step's profile in seconds, exact Decimals of the figures as printed:
    the step's median as profile["step_timing"].text() prints it, the kernels' medians as their text() prints
    them added up (added_up, the figure pace prints), and one empty dispatch's median as seconds_text prints
    it (three figures), the figure fixed_cost multiplies too, so the two sentences print one figure."""
    kernels = added_up(list(profile["kernel_timing"].values()))
    return (timing.shown_exactly(profile["step_timing"]), timing.seconds_exactly(*kernels.split()),
            timing.seconds_exactly(*seconds_text(profile["empty"]).split()))


def around_the_calls(issue: timing.Timing, calls: list) -> str:
    """Python's issue time of a step less its calls (each call's Timing a step), from the figures as printed
    (text()) and at the issue time's decimals, rounded half up: the difference a reader gets by subtracting
    them (14.2 - 12.95 = 1.25, so 1.3 µs). '-0.3 µs' where the calls add up to more."""
    figure, unit = issue.text().split(" ", 2)[:2]
    left_s = timing.seconds_exactly(figure, unit) - sum(timing.shown_exactly(c) for c in calls)   # as printed, in s
    step = Decimal(1).scaleb(Decimal(figure).as_tuple().exponent)               # the issue time's last decimal
    left = (left_s / timing.seconds_exactly("1", unit)).quantize(step, ROUND_HALF_UP) + 0   # + 0: never '-0.0'
    return f"{left:f} {unit}"


def stream_start(profile: dict) -> str:
    """Why Python's issue time of a short stream can be longer than in an epoch-long one: the first calls
    after ctx.finish() may cost more, once a stream, and a short stream shares that among few steps."""
    short, long_ = profile["issue_short_timing"], profile["issue_timing"]
    head = (f"issued {profile['short_steps']} at a time right after ctx.finish(), a step takes {short.text()} of "
            f"Python against {long_.text()} in a stream of {profile['stream_steps']}")
    outcome = timing.compare(long_, short)
    if outcome == timing.A_FASTER:
        once = float((timing.shown_exactly(short) - timing.shown_exactly(long_)) * profile["short_steps"])  # as printed
        return (f"{head}: the start of a stream costs about {seconds_text(once)} once, shared by its steps, so a "
                "short stream overstates what a step costs to issue")
    if outcome == timing.B_FASTER:
        return (f"{head}: the short stream issued its steps faster beyond the noise, so here a short stream "
                "understates what a step costs to issue in an epoch-long one")
    return (f"{head}: {timing.the_same(long_, short)}, so the start of a stream costs nothing we can measure "
            "beyond that")


EPOCH_PARTS = {"arithmetic": "kernel", "fixed": "dispatch", "rest": "between dispatches"}   # step_shares -> epoch


def epoch_account(trainer, profile: dict, epoch: float) -> dict:
    """An epoch (seconds) as parts that add up to it: the steps (steps x the step in a stream, split as
    step_shares splits it, named as the series' bars name them: kernel (the arithmetic), dispatch (the fixed
    cost of dispatches and barriers), between dispatches (the rest, negative for an overlap)), the readbacks (one per check), the order upload, and
    what is left over ("unaccounted": the epoch minus all of them, negative when the parts measured apart
    add up to more than the epoch)."""
    steps = trainer.steps_per_epoch
    fixed = profile["empty"] * profile["dispatches_per_step"]
    shares = step_shares(profile["step"], profile["kernel_total"], fixed)
    parts = {EPOCH_PARTS[k]: v * steps for k, v in shares.items()}
    parts["readback"] = profile["readback"] * -(-steps // trainer.check_every)
    parts["upload"] = profile["order_upload"]
    parts["unaccounted"] = epoch - sum(parts.values())
    return parts


def epoch_sum_text(epoch: timing.Timing, steps: int, step: timing.Timing, unaccounted: float) -> str:
    """The sentence under epoch_account's bars: the epoch, its steps, and what the parts measured apart leave
    of its median (unaccounted, seconds: epoch_account's "unaccounted"), or, when negative, by how much they
    overrun it (they were measured one at a time, each in a stream of its own, not inside this epoch)."""
    head = (f"The epoch takes {epoch.text(digits=4)}; its parts were measured apart: {steps} steps of {step.text()}, the "
            "readbacks and the upload")
    if unaccounted < 0:
        return (f"{head}, and added up they overrun the epoch's median by {seconds_text(-unaccounted)}: the "
                "unaccounted part below zero, which a bar cannot draw, so the bar runs past the epoch it stands for.")
    return f"{head}, and they leave {seconds_text(unaccounted)} of the epoch's median unaccounted."


def epoch_parts_sentence(profile: dict, steps: int, readbacks: int, epoch: timing.Timing) -> str:
    """The parts epoch_account adds up to an epoch, each measured figure with its 20–80 % band: `steps` steps
    of profile["step_timing"], `readbacks` readbacks of profile["readback_timing"] (the losses of
    profile["readback_steps"] steps each), one order upload of profile["order_upload_timing"], and the
    unaccounted rest, against the back-to-back `epoch`. 'a readback' where there is one."""
    reads = profile["readback_steps"]
    back = (f"a readback of {profile['readback_timing'].text()}" if readbacks == 1 else
            f"{readbacks} readbacks of {profile['readback_timing'].text()} each")
    return (f"The {steps} steps of {profile['step_timing'].text()}, {back} (the losses of {reads} "
            f"step{'s' * (reads != 1)}), the order upload of {profile['order_upload_timing'].text()} and the "
            f"unaccounted rest add up to the back-to-back epoch, {epoch.text()}.")


def overrun_sentence(parts: dict, epoch: timing.Timing) -> str:
    """What a negative 'unaccounted' part of epoch_account's parts means, in words: the parts measured apart
    add up to more than the epoch, by how much (ms, as plots.epoch_bars' note prints it) and what share that
    printed figure is of the epoch's median as epoch.text() prints it (2.3 ms of 21.4 ms is 10.7 %, 11 %,
    where the unrounded parts may give 10 %). "" where the rest is zero or above."""
    rest = parts["unaccounted"]
    if rest >= 0:
        return ""
    ms = 1e3 * -rest
    figure = plots.part_figure(ms)   # as plots.epoch_bars' note gives the part
    whole = epoch.text().split(" ", 2)[:2]
    share = 100 * timing.seconds_exactly(figure.replace(",", ""), "ms") / timing.shown_exactly(epoch)
    said = "less than 1" if share < 1 else timing.times(share, 0)   # 0.5 % would read 1 % beside a shares line's 0 %
    return (f"The parts measured apart add up to more than the epoch, by {figure} ms ({said} % of its median, "
            f"{' '.join(whole)}), so the unaccounted rest is below zero: within the epoch some parts overlap (a "
            "readback is taken while the GPU runs the next chunk) or take less time than they took apart.")


def printed_seconds(seconds: float) -> float:
    """Seconds as seconds_text prints them (three significant digits), back in seconds: the figure a reader
    multiplies, so a product printed beside it is the one the reader gets."""
    return timing.in_seconds(*seconds_text(seconds).split())


def fixed_cost(steps: int, dispatches: int, empty: float) -> tuple[float, str]:
    """An epoch's fixed cost counted from one empty dispatch with its barrier (`empty` seconds): (seconds, and
    '469 steps × 6 × 2.64 µs = 7.43 ms'), the product of the factors as they are printed."""
    seconds = steps * dispatches * printed_seconds(empty)
    return seconds, f"{steps:,} steps × {dispatches} × {seconds_text(empty)} = {seconds_text(seconds)}"


WIDE_BAND = 0.20   # a floor's 20-80 % band wider than this share of its median is called wide


def floor_against_estimate(floor: timing.Timing, steps: int, dispatches: int, empty, clock: str,
                           what: str = "") -> str:
    """An epoch's fixed cost twice, side by side: counted (steps x dispatches x one empty dispatch with its
    barrier, timed by `clock` in a stream of copies) and measured (the floor: an epoch of the same empty
    dispatches, wall clock), with the ratio of the two as printed. No verdict: two ways of measuring one cost,
    the floor's holding Python's issue of every call, whose pace moves from one run to the next, so the
    sentence gives the ratio as this run's and no direction. `empty`: the empty dispatch as a timing.Timing
    (profile_step's profile["empty_timing"]), whose band's printed ends times steps x dispatches are printed
    beside the count; or its median in seconds. `what` (e.g. "the fused trainer") leads the sentence. A floor whose 20-80 % band is wider
    than WIDE_BAND of its median gets one more sentence."""
    band = isinstance(empty, timing.Timing)
    median = empty.median if band else float(empty)
    estimate, count = fixed_cost(steps, dispatches, median)
    lead = f"{what[0].upper()}{what[1:]}: counted" if what else "Counted"
    low, high = ((seconds_text(steps * dispatches * printed_seconds(x)) for x in (empty.low, empty.high))
                 if band else ("", ""))        # the band's ends as the empty dispatch's text() prints them, times the count
    within = f" ({_span(low, high)} from the empty dispatch's 20–80 % band)" if low != high else ""
    head = (f"{lead} from one empty dispatch timed by {clock}, {count} of fixed cost{within}; the floor, an epoch "
            f"of the same empty dispatches timed by wall clock, is {floor.text()}")
    ratio = (timing.seconds_exactly(*floor.text().split()[:2])                 # printed / printed, exactly
             / timing.seconds_exactly(*seconds_text(estimate).split()))
    wide = (f" The floor's 20–80 % band is {100 * floor.noise:.0f} % of its median wide." if floor.noise > WIDE_BAND
            else "")
    side = (f"{timing.times(ratio)}× the count" if ratio >= 1 or timing.times(1 / ratio) == "1.00" else
            f"{timing.times(1 / ratio)}× below the count")
    return (f"{head}: {side} in this run. The floor also holds Python's issue of every call and the wait for the "
            f"last, whose pace moves from one run to the next, so the two need not agree, and this ratio is this "
            f"run's.{wide}")


def _span(low: str, high: str) -> str:
    """Two printed durations as a range: '2.33–2.72 ms', or '990 µs–1.01 ms' where their units differ."""
    (a, unit_a), (b, unit_b) = low.split(), high.split()
    return f"{a}–{b} {unit_a}" if unit_a == unit_b else f"{low}–{high}"


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


def epoch_timing(trainer, epochs: int, warmup: int = 1, losses: list | None = None) -> timing.Timing:
    """epoch_seconds as a timing.Timing (wall clock)."""
    return timing.Timing(tuple(epoch_seconds(trainer, epochs, warmup, losses)), timing.WALL)


STEP_CHANGING, STEP_SAME, NO_UNIFORM, NO_BARRIER = ("step(s), s = 0, 1, 2, ...", "step(0) every time",
                                                    "dispatches alone, no uniform", "dispatches, no barrier (wrong)")


def step_ways(trainer, stream: int | None = None, samples: int = 7, warmup: float | None = None) -> dict:
    """A step issued four ways, each in a stream of `stream` steps (default: an epoch's), wall clock with
    ctx.finish() at both ends, a step; measured interleaved: as train() issues it (the step uniform changes),
    the same step every time, the step's dispatches and barriers with no uniform written, and the same
    dispatches with no barrier between them: wrong results (a kernel reads what the one before it is still
    writing), timed only to show what the barriers cost, and left out for split_hidden trainers (whose
    forward's counters only a barrier keeps apart). {way: timing.Timing}; the trainer is put back after."""
    ctx, clock = trainer.ctx, timing.Clock(trainer.ctx, use_queries=False)
    stream = stream or trainer.steps_per_epoch
    with put_back(trainer):
        trainer.start_epoch(0)
        trainer.step(0)
        passes = trainer.dispatches(0)

        def bare(barriers=True):
            for kernel, groups in passes:
                kernel.program.run(*groups)
                if barriers:
                    ctx.memory_barrier(BARRIER)

        def way(issue):
            return lambda: clock.wall(lambda: [issue(s) for s in range(stream)]) / stream
        ways = {STEP_CHANGING: way(lambda s: trainer.step(s % trainer.steps_per_epoch)),
                STEP_SAME: way(lambda s: trainer.step(0)), NO_UNIFORM: way(lambda s: bare())}
        if not getattr(trainer, "split_hidden", False):
            ways[NO_BARRIER] = way(lambda s: bare(barriers=False))
        result = timing.measure_interleaved(ways, samples, warmup)
        ctx.memory_barrier(BARRIER)   # the racing dispatches are done before put_back writes the weights
    return result


def forwards_interleaved(trainers: dict, repeat: int, clock, samples: int = 10, warmup: float | None = None) -> dict:
    """Each trainer's first dispatch of step 0 (its forward) with its barrier, in a stream of `repeat`, the
    trainers taken in turn (timing.measure_interleaved): {name: Timing, seconds a dispatch}. Each sample
    binds its trainer's buffers first (binding points are the context's), outside the timed part."""
    def sample(t):
        kernel, groups = t.dispatches(0)[0]

        def stream():
            for _ in range(repeat):
                kernel.program.run(*groups)
                t.ctx.memory_barrier(BARRIER)

        def one():
            t.bind()
            return clock.kernel(stream) / repeat
        return one
    for t in trainers.values():
        t.start_epoch(0)
        t.step(0)   # the step's uniforms (and batch size) of step 0
    return timing.measure_interleaved({name: sample(t) for name, t in trainers.items()}, samples, warmup,
                                      clock=clock.source)


def epochs_interleaved(trainers: dict, epochs: int, warmup: float | None = None) -> dict:
    """Epochs of several trainers (epoch 0's order, drawn beforehand), taken in turn after a warm-up by time:
    {name: Timing}, wall clock with ctx.finish() at both ends. It trains: the weights move on."""
    def sample(t):
        order = reference.epoch_order(t.n, 0, t.seed)

        def one():
            t.ctx.finish()
            start = time.perf_counter()
            t.run_epoch(0, order=order)
            t.ctx.finish()
            return time.perf_counter() - start
        return one
    return timing.measure_interleaved({name: sample(t) for name, t in trainers.items()}, epochs, warmup)


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
    every dispatch of a step is timed (profile_step's kernel Timings, streams of `repeat`). The reads come
    before any other use of the buffers, which is when the driver decides where a buffer lives. Returns
    {"no reads" | "staged reads" | "mapped reads": {file: timing.Timing}}. Each trainer is released afterwards.
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
        result[label] = profile_step(trainer, repeat, clock, stream=repeat)["kernel_timing"]
        trainer.release()
    return result


def summed(kernels: dict) -> timing.Timing:
    """{file: Timing} of one step's kernels, measured interleaved, as one Timing of their sum per round."""
    return timing.Timing(tuple(sum(c) for c in zip(*(t.samples for t in kernels.values()))),
                         next(iter(kernels.values())).clock)


def mapped_read_verdict(worst_name: str, worst: float, none, staged, mapped, margin: float = 0.10) -> timing.Verdict:
    """One sentence on mapped_read_effect's figures: worst, the largest ratio of one kernel's median after
    mapped reads to its median with no reads (worst_name, that kernel); none, staged, mapped: Timings of a
    step's kernels together (summed) with no reads, after staged and after mapped reads. The staged reads
    get a verdict, compare's outcome against no reads beyond `margin` (the outcome: "A faster" would mean
    the staged reads slowed the kernels). The mapped reads get their figures and no verdict: whether the
    driver moves a buffer the CPU mapped is its choice, made anew each time (on one H100 the same step took
    1.04× in one run and 1.35× in the next), so a verdict on them would flip between runs. It claims nothing
    about where the driver put the buffers, which no GL call reports."""
    outcome = timing.compare(none, staged, margin)
    same = timing.the_same(none, staged, margin)
    words = {timing.A_FASTER: "slower", timing.B_FASTER: "faster"}.get(outcome, same)
    return timing.Verdict(
        f"after staged reads a step's kernels took {staged.text()}, {timing.times(timing.ratio(staged, none))}× their time "
        f"with no reads, {none.text()}: {words}; after mapped reads they took {mapped.text()}, "
        f"{timing.times(timing.ratio(mapped, none))}× (the largest ratio of one kernel's medians, {worst_name}'s, {timing.times(worst)}×), a figure that can "
        "differ from one run to the next, as the driver chooses anew whether to move a mapped buffer", outcome)


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

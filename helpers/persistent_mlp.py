"""The persistent trainer: many training steps of 784-H-10 in one dispatch. Introduced in notebook 09.

FusedMLP (helpers/fused_mlp.py) needs two dispatches a step because a step has two points where every
work group must wait for all the others. train_1_persistent.comp keeps one dispatch running across those
points with a grid barrier (an atomic counter every group adds to, then polls), so Python issues one
dispatch per `check_every` steps instead of two a step:

    trainer = PersistentMLP(ctx, reference.init_params(784, 128, 10, seed=0), X_train, y_train,
                            optimizer=reference.SGD(0.3), batch_size=128, seed=0)
    trainer.train(10)                     # mlp.Trainer's API: the same history, checks and evaluation

Work group g owns hidden units [g*COLS, (g+1)*COLS): it computes layer 1 only for them and updates only
their parameters, so each step is three phases with two grid barriers (the shader's banner says why).

A grid barrier is only correct when every work group of the dispatch is resident on the GPU at once, and
no API promises that (notebook 09 measures where it holds). `persistent=None` (the default) runs one
dispatch per check on a GPU, and on a software renderer, which runs work groups a few at a time, the same
shader as three dispatches a step, one phase each, where the end of a dispatch is the barrier. A wait that
gives up sets a flag, and the next check raises. Same seed, same bits: one dispatch of many steps and three
dispatches a step give identical weights.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from . import gl, timing
from .fused_mlp import BINDINGS as FUSED_BINDINGS, PREDICT, STORAGE_BARRIER, FusedMLP, N_OUT, step_buffers
from .mlp import Trainer

SHADER = "train_1_persistent.comp"
BINDINGS = dict(FUSED_BINDINGS, sync=14)   # the fused shaders' binding points, and the barrier's counters
PHASES = 3                                  # a step: layer 1, the head, the gradients and update
OPTIMIZER_DEFINE = {"SGD": 0, "Momentum": 1}
# Tunables by hidden size (overrides win): the fastest of a few combinations timed by hand on the H100
# (2026-11-23; notebook 09 prints each phase of these). Wide: COLS 7 keeps 800 units to 115 groups, but on
# the H100 a grid barrier gave up at that size (python -m helpers.bench fused, 2026-11-23): train wide nets
# with persistent=False there, or with FusedMLP
TUNED = {"small": dict(COLS=1, THREADS=512, KSPLIT=4, U=8), "wide": dict(COLS=7, THREADS=256, KSPLIT=2, U=8)}


class PersistentMLP(Trainer):
    """784-H-10 training with train_1_persistent.comp (module docstring); the API is mlp.Trainer's.
    SGD or momentum. persistent: True one dispatch per check, False three dispatches a step (one phase
    each), None persistent unless the renderer is software and there is more than one work group (module
    docstring). defines override the shader's tunables."""

    BINDINGS, PHASES = BINDINGS, PHASES
    GRID_BARRIERS = 2                               # a step, in one dispatch of many steps

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, defines: dict | None = None, persistent: bool | None = None):
        super().__init__(ctx, params, images, labels, optimizer=optimizer, batch_size=batch_size, seed=seed,
                         check_every=check_every)
        if self.kind not in OPTIMIZER_DEFINE:
            raise TypeError(f"PersistentMLP trains with reference.SGD or Momentum, not {self.kind}: "
                            "use fused_mlp.FusedMLP for Adam")
        if self.C != N_OUT or self.K % 16:
            raise ValueError(f"{SHADER} trains n_in-H-{N_OUT} nets with n_in a multiple of 16; "
                             f"got W1 {self.shapes['W1']}, W2 {self.shapes['W2']}")
        self.defines = dict(TUNED["small" if self.H <= 256 else "wide"], MAX_IN=self.K, MAX_B=self.batch_size,
                            OPTIMIZER=OPTIMIZER_DEFINE[self.kind], **(defines or {}))
        self.kernel = gl.Kernel(ctx, SHADER, self.defines)
        self.predictor = gl.Kernel(ctx, PREDICT, dict(MAX_IN=self.K, MAX_H=self.H, VEC4=int(self.H % 4 == 0),
                                                      S=1))
        self.kernels = {"train": self.kernel, "predict": self.predictor}
        self.groups = self.kernel.groups(n_hidden=self.H)
        one = self.groups[0] == 1  # a single work group is always resident
        self.persistent = (one or not gl.is_software(ctx)) if persistent is None else bool(persistent)

        # what the shader hands between phases and to Python: FusedMLP's A1, dZ1, dlogits, losses and the
        # optimizer-state stand-in, at the same bindings
        self.arrays.update(step_buffers(ctx, self.batch_size, self.H, self.n))
        self.arrays["sync"] = gl.empty(ctx, (4,), np.uint32, name="sync (grid barrier)", fill=0)
        self.kernel.set(n_in=self.K, n_hidden=self.H, n_samples=self.n, batch_size=self.batch_size,
                        phase_first=0, phase_end=0)
        self.set_hyperparameters()
        self._u_phases = (self.kernel.program["phase_first"], self.kernel.program["phase_end"])

    @property
    def dispatches_per_step(self) -> float:
        """One dispatch a phase (PHASES a step), or one dispatch per check_every steps."""
        return 1 / self.check_every if self.persistent else self.PHASES

    def set_hyperparameters(self) -> None:
        """The optimizer's hyperparameters into the shader's uniforms (float32, as NumPy's)."""
        self.kernel.set(**self.hyperparameters())

    def dispatch(self, phase_first: int, phase_end: int) -> None:
        """One dispatch of global phases [phase_first, phase_end) (PHASES*step + phase), then a barrier."""
        self._u_phases[0].value = phase_first
        self._u_phases[1].value = phase_end
        self.kernel.program.run(*self.groups)
        self.ctx.memory_barrier(STORAGE_BARRIER)
        self._counts["dispatches"] += 1

    def run_steps(self, first: int, end: int) -> None:
        """Steps [first, end) of the current epoch: one dispatch (persistent), or one per phase."""
        if self.persistent:
            self.dispatch(self.PHASES * first, self.PHASES * end)
        else:
            for q in range(self.PHASES * first, self.PHASES * end):
                self.dispatch(q, q + 1)
        self._counts["steps"] += end - first

    def step(self, s: int) -> None:
        """Step s of the current epoch alone (one dispatch of its phases, or one dispatch a phase)."""
        self.run_steps(s, s + 1)

    def dispatches(self, s: int = 0) -> list:
        """[(Kernel, groups)]: one dispatch (the uniforms say which phases it runs)."""
        return [(self.kernel, self.groups)]

    def start_epoch(self, epoch: int, order=None) -> None:
        """mlp.Trainer.start_epoch, and the grid barrier's counters back to zero (they only grow in an epoch)."""
        super().start_epoch(epoch, order)
        self.write("sync", np.zeros(4, np.uint32))

    def barrier_flags(self) -> dict:
        """The grid barrier's counters this epoch: barriers crossed, flags (1: a wait gave up), most polls."""
        arrivals, flags, polls, _ = (int(v) for v in self.read("sync"))
        return {"crossed": arrivals // self.groups[0], "flags": flags, "max_polls": polls}

    def check(self, first: int, end: int, pending=None) -> float:
        """mlp.Trainer.check, after making sure no grid barrier gave up in the dispatches since the last check."""
        if self.persistent:
            sync = self.barrier_flags()
            if sync["flags"]:
                raise RuntimeError(
                    f"a grid barrier gave up in steps [{first}, {end}) of epoch {self.epoch}: not every one of the "
                    f"{self.groups[0]} work groups was resident on the GPU at once, so the results of those steps "
                    f"are wrong. Train with {type(self).__name__}(..., persistent=False) (a dispatch a phase) or with "
                    "a larger COLS (fewer groups).")
        return super().check(first, end, pending)

    @property
    def counts(self) -> dict:
        return {"steps": self._counts["steps"], "dispatches": self._counts["dispatches"],
                "barriers": self._counts["dispatches"], "readbacks": self._counts["readbacks"]}

    def reset_counts(self) -> None:
        self._counts = {"steps": 0, "dispatches": 0, "readbacks": 0}

    # The barrier's flags cover every dispatch queued so far, so a check reads them right after its chunk
    # (mlp.Trainer.run_epoch): a check one chunk behind would blame a chunk for the next one's give-up.
    check_behind = False
    # the same losses buffer and predictor as FusedMLP
    loss_run, step_losses = FusedMLP.loss_run, FusedMLP.step_losses
    predict = FusedMLP.predict


# --- notebook 09's sentences: one account of what the grid barriers saved (tests/test_verdicts_nb09.py) -------------

SAVED, COST, NOT_MEASURED = "saved", "cost", "not measured"


def step_saving_us(as_dispatches: timing.Timing, inside: timing.Timing) -> tuple[float, int]:
    """What a step inside one dispatch saved against the step as dispatches, in µs, from the two medians as
    they are printed, at the coarser of their decimals, and those decimals to print it with: the difference a
    reader gets by subtracting the printed figures (73.00 − 55.3 = 17.7, never 17.70, which claims a digit 55.3
    does not have, nor 18)."""
    difference = timing.printed_difference(as_dispatches, inside, "µs")
    return float(difference), max(0, -difference.as_tuple().exponent)


def grid_barrier_account(empty: timing.Timing, barrier: timing.Timing, as_dispatches: timing.Timing,
                         inside: timing.Timing | None, dispatches: int = PHASES,
                         grid_barriers: int = PersistentMLP.GRID_BARRIERS) -> timing.Verdict:
    """What joining a step's phases by grid barriers saved, in one account (Timings of seconds): `empty`, an
    empty dispatch with its barrier; `barrier`, one grid barrier; the step as `dispatches` dispatches (one a
    phase) and `inside` one dispatch of many steps (None where the trainer could not run persistent).
    Outcome: SAVED or COST when the step inside one dispatch is faster or slower beyond the noise
    (timing.compare), timing.SAME otherwise, NOT_MEASURED without `inside`. Where it saved, the fixed costs
    (dispatches × empty − grid_barriers × barrier, medians) are the part an empty step would save; the rest is
    what a real dispatch boundary costs beyond an empty dispatch."""
    if inside is None:
        return timing.Verdict("No step ran inside a dispatch of many here (the trainer fell back to a dispatch a "
                              "phase), so what the grid barriers save is not measured here.", NOT_MEASURED)
    outcome = timing.compare(inside, as_dispatches)
    head = (f"A step as {dispatches} dispatches (each run's phases added, then the median of the runs) took "
            f"{as_dispatches.text('µs')}, inside one dispatch of many steps, "
            f"{inside.text('µs')}: joining its phases by {grid_barriers} grid barriers ")
    saved, decimals = step_saving_us(as_dispatches, inside)
    if outcome == timing.B_FASTER:
        return timing.Verdict(head + f"cost {timing.times(-Decimal(repr(saved)), decimals)} µs a step more.", COST)
    if outcome == timing.SAME:
        return timing.Verdict(head + "changed the step by less than the noise we measured.", timing.SAME)
    saved = Decimal(repr(saved))                                          # exact: the printed figures' difference
    text = head + f"saved {timing.times(saved, decimals)} µs a step. "
    empty_us, barrier_us = (Decimal(f"{1e6 * t.median:.2f}") for t in (empty, barrier))   # as printed below
    fixed = dispatches * empty_us - grid_barriers * barrier_us
    if fixed <= 0:
        return timing.Verdict(text + (
            f"The fixed costs explain none of it (an empty dispatch with its barrier {empty.text()}, a grid barrier "
            f"{barrier.text()}): all of it is what a dispatch boundary costs beyond an empty dispatch."), SAVED)
    rest = saved - fixed
    text += (f"The fixed costs explain {timing.times(min(fixed, saved))} µs of it ({dispatches} empty dispatches with their "
             f"barriers at {empty_us:.2f} µs against {grid_barriers} grid barriers at {barrier_us:.2f} µs)")
    if rest > 0:
        text += (f"; the other {timing.times(rest, min(decimals, 2))} µs is what a real dispatch boundary costs beyond an empty "
                 "one: the work groups of one dispatch starting, and its last ones draining while the next may not begin")
    return timing.Verdict(text + ".", SAVED)


def persistent_epoch(epoch_persistent: timing.Timing, epoch_fused: timing.Timing, saved: float | None,
                     steps: int, decimals: int = 1, account: str = SAVED) -> timing.Verdict:
    """The persistent epoch against the fused one (Timings measured interleaved), with what the grid barriers
    saved a step (seconds; None: not measured, as where the trainer fell back to a dispatch a phase), printed
    in µs with `decimals` places (step_saving_us's, so it reads as grid_barrier_account printed it), and that
    figure as printed × steps for an epoch, where grid_barrier_account's outcome (`account`) judged it a saving
    beyond the noise; where it judged the step unchanged (timing.SAME), that the barriers changed a step by less
    than the noise. Outcome: timing.versus's (A: the persistent kernel)."""
    if saved is None or account == NOT_MEASURED:
        saving = "what the grid barriers saved was not measured here"
    elif account == timing.SAME:
        saving = "the grid barriers changed a step by less than the noise we measured"
    elif account == SAVED and saved > 0:
        step_us = Decimal(timing.times(Decimal(repr(1e6 * saved)), decimals))     # the figure as printed
        saving = (f"the grid barriers saved {step_us} µs a step "
                  f"({timing.times(step_us * steps / 1000)} ms an epoch)")
    else:
        saving = "the grid barriers saved nothing"
    v = timing.versus(epoch_persistent, epoch_fused, "the persistent kernel's epoch", "the fused trainer's epoch")
    v = timing.Verdict(v[0].upper() + v[1:], v.outcome)
    if v.outcome == timing.B_FASTER:
        return timing.Verdict(f"{v}. {saving[0].upper() + saving[1:]}; the persistent kernel's phases cost more "
                              "than the fused trainer's two kernels.", v.outcome)
    return timing.Verdict(f"{v}; {saving}.", v.outcome)

"""The lookahead trainer: one SGD step of 784-H-10 in ONE dispatch. Timed by `python -m helpers.bench fused`
(its lookahead row); notebook 09 teaches it.

FusedMLP needs two dispatches a step, because layer 1 of step t needs all of W1 after step t-1's update,
and that update needs all of step t-1's dZ1. The update is known in closed form, though. With Xt = [X, 1]
(a batch with a column of ones) and W = [W1; b1], SGD sets W_t = W_{t-1} - lr·Xt_{t-1}^T dZ1_{t-1}, so

    Xt_t W_t = Xt_t W_{t-1} - lr·(Xt_t Xt_{t-1}^T)·dZ1_{t-1}

Xt_t W_{t-1} (the long sum over 785 inputs) can be computed one dispatch early, and the batch-by-batch dot
products Xt_t Xt_{t-1}^T depend only on the images: gram_1_lags.comp computes them for the whole epoch in one
dispatch, once the epoch's order is known. What is left between two steps is a sum over the 128 samples of
the batch, so train_2_lookahead.comp does in one dispatch what FusedMLP does in two (its banner has the
three kinds of work group). The arithmetic is plain SGD's in another order of rounding: the weights agree
with FusedMLP's to float32 rounding, and the same seed gives the same bits every run.

    trainer = LookaheadMLP(ctx, reference.init_params(784, 128, 10, seed=0), X_train, y_train,
                           optimizer=reference.SGD(0.3), batch_size=128, seed=0)
    trainer.train(10)                     # mlp.Trainer's API: the same history, checks and evaluation

An epoch is one gram dispatch, one dispatch before the first step (Q_0), one a step, and one after the last
(the last update). The shader keeps two copies of the weights (a step reads one and writes the other), in
buffer "weights"; "params" gets the newest copy at the end of every epoch, on the GPU.
"""

from __future__ import annotations

from . import gl, timing
from .fused_mlp import PREDICT, STORAGE_BARRIER, FusedMLP, N_OUT
from .mlp import Trainer

SHADER, GRAM = "train_2_lookahead.comp", "gram_1_lags.comp"
BINDINGS = {"images": 0, "labels": 1, "order": 2, "weights": 3, "gram": 4, "dZ1": 7, "losses": 9, "Q": 12,
            "w2parts": 13}
ALL_ROLES = 7   # the shader's `roles`: chain, W1 and Q groups (fewer only to time one kind alone)


SHARED_LIMIT = 32 * 1024   # GL_MAX_COMPUTE_SHARED_MEMORY_SIZE guaranteed by OpenGL 4.3, where a driver does not say


def shared_bytes(defines: dict) -> int:
    """Bytes of shared memory a work group of SHADER uses with these defines: its seven shared arrays, each
    rounded up to 16 bytes as a driver lays them out (a define left out takes the file's default)."""
    source = gl.shader_path(SHADER).read_text()
    rc, b, h, c = (int(defines[k]) if k in defines else int(gl.define(source, k))
                   for k in ("RC", "B_PAD", "HIDDEN", "N_OUT"))
    floats = (rc * b, rc, rc * h, (h + 1) * c, 3 * rc * c, 4 * 1024, b)   # g4_s y_s z_s w2_s logit_s tile row_start
    return sum(-(-4 * n // 16) * 16 for n in floats)


class LookaheadMLP(Trainer):
    """784-H-10 SGD training with train_2_lookahead.comp, one dispatch a step (module docstring); the API is
    mlp.Trainer's. H must be a multiple of 4; defines override the shader's tunables (RC, S)."""

    BINDINGS = BINDINGS
    dispatches_per_step = 1

    def __init__(self, ctx, params: dict, images=None, labels=None, *, optimizer=None, batch_size: int = 128,
                 seed: int = 0, check_every: int = 50, defines: dict | None = None):
        super().__init__(ctx, params, images, labels, optimizer=optimizer, batch_size=batch_size, seed=seed,
                         check_every=check_every)
        if self.kind != "SGD":
            raise TypeError(f"LookaheadMLP trains with reference.SGD only (its identity is plain SGD's update), "
                            f"not {self.kind}: use fused_mlp.FusedMLP for momentum or Adam")
        if self.C != N_OUT or self.K % 4 or self.H % 4:
            raise ValueError(f"{SHADER} trains n_in-H-{N_OUT} nets with n_in and H multiples of 4; "
                             f"got W1 {self.shapes['W1']}, W2 {self.shapes['W2']}")
        self.B_PAD = -(-self.batch_size // 32) * 32   # the shader's batch rows: a multiple of its 32-row tiles
        sizes = dict(N_IN=self.K, HIDDEN=self.H, B_PAD=self.B_PAD)
        self.defines = dict(sizes, **(defines or {}))
        need, limit = shared_bytes(self.defines), gl.max_shared_memory(ctx) or SHARED_LIMIT
        if need > limit:   # refused before the compiler sees it: a driver may take minutes to fail
            raise ValueError(f"{SHADER} keeps [W2; b2] and a block of the hidden layer's rows in shared memory: "
                             f"at {self.K}-{self.H}-{N_OUT} a work group needs {need:,} bytes, "
                             f"over the {limit:,} this OpenGL gives one. Fix: a smaller H (or RC), or "
                             f"fused_mlp.FusedMLP, which trains any width")
        self.kernel = gl.Kernel(ctx, SHADER, self.defines)
        self.gram = gl.Kernel(ctx, GRAM, dict(N_IN=self.K, B_PAD=self.B_PAD))
        self.predictor = gl.Kernel(ctx, PREDICT, dict(MAX_IN=self.K, MAX_H=self.H, VEC4=1, S=1))
        self.kernels = {"train": self.kernel, "gram": self.gram, "predict": self.predictor}
        self.groups = self.kernel.groups()
        self.stride = -(-self.n_params // 4) * 4   # floats between the two copies of the weights (16-byte aligned)
        self.arrays["weights"] = gl.empty(ctx, (2, self.stride), name="weights (two copies)", fill=0.0)
        if self.n:
            B, H, S, RC = self.B_PAD, self.H, self.kernel.define("S"), self.kernel.define("RC")
            self.arrays["gram"] = gl.empty(ctx, (self.steps_per_epoch, 2, B, B), name="gram")
            self.arrays["Q"] = gl.empty(ctx, (2, S + 1, B, H), name="Q (the next step's layer 1, in parts)")
            self.arrays["dZ1"] = gl.empty(ctx, (2, B, H), name="dZ1", fill=0.0)   # finite: a 0 times it is 0
            self.arrays["w2parts"] = gl.empty(ctx, (2, B // RC, (H + 1) * N_OUT), name="w2parts")
            self.arrays["losses"] = gl.empty(ctx, (self.n,), name="losses")
            for kernel in (self.kernel, self.gram):
                kernel.set(n_samples=self.n, batch_size=self.batch_size, steps=self.steps_per_epoch)
            self.kernel.set(param_stride=self.stride, roles=ALL_ROLES, step=-1)
            self.gram_groups = self.gram.groups(steps=self.steps_per_epoch)
        self.set_hyperparameters()
        self._u_step = self.kernel.program["step"]

    def set_hyperparameters(self) -> None:
        """The learning rate into the shader's uniform (float32, as NumPy's)."""
        self.kernel.set(**self.hyperparameters())

    def dispatch(self, step: int) -> None:
        """One dispatch of the shader for `step` (-1: before the first step, steps_per_epoch: after the last),
        then a barrier."""
        self._u_step.value = step
        self.kernel.program.run(*self.groups)
        self.ctx.memory_barrier(STORAGE_BARRIER)

    def start_epoch(self, epoch: int, order=None) -> None:
        """mlp.Trainer.start_epoch (the order, the bindings), then, all on the GPU: both copies of the weights
        from params, the epoch's gram dispatch, and step -1 (Q_0, and zeros handed to step 0)."""
        super().start_epoch(epoch, order)
        params, weights = self.arrays["params"], self.arrays["weights"]
        for copy in (0, 1):
            self.ctx.copy_buffer(weights.buffer, params.buffer, params.nbytes, write_offset=copy * self.stride * 4)
        self.gram.program.run(*self.gram_groups)
        self.ctx.memory_barrier(STORAGE_BARRIER)
        self.dispatch(-1)

    def step(self, s: int) -> None:
        """Queue step s of the current epoch: one dispatch and one barrier; after the last step one more
        (the last update), then the newest weights are copied into params on the GPU."""
        self.dispatch(s)
        self._counts["steps"] += 1
        if s == self.steps_per_epoch - 1:
            last = self.steps_per_epoch
            self.dispatch(last)
            self.ctx.memory_barrier()   # the shader's writes, for the copy
            self.ctx.copy_buffer(self.arrays["params"].buffer, self.arrays["weights"].buffer, self.n_params * 4,
                                 read_offset=(last % 2) * self.stride * 4)

    def dispatches(self, s: int = 0) -> list:
        """[(Kernel, groups)] of a step: one dispatch."""
        return [(self.kernel, self.groups)]

    # the same losses buffer and predictor as FusedMLP
    loss_run, step_losses = FusedMLP.loss_run, FusedMLP.step_losses
    predict = FusedMLP.predict


# --- notebook 09's sentences (tests/test_verdicts_nb09.py) -------------------------------------------------------

# One dispatch a step against two: epochs of two trainers whose medians are closer than 25 % are never called
# different. An epoch holds Python's issue of every step, which moves between runs: on one H200 the fused
# 784-128-10 epoch's median was 9.22, 9.74 and 11.3 ms in three runs of notebook 09, and the lookahead epoch
# against it 1.12x, 1.07x and 1.01x; a 10 % margin called the pair different in one run and the same in two.
# The same margin as helpers.bench.limits.EPOCHS (tests/test_verdicts_nb09.py checks that they agree).
MARGIN = 0.25
PARTS_MARGIN = 0.10   # the appendix: the kinds of work group of one trainer, their costs taken round by round


def one_against_two(lookahead: timing.Timing, fused: timing.Timing, where: str = "here") -> timing.Verdict:
    """The lookahead epoch (one dispatch a step) against the fused epoch (two), measured interleaved (or two
    rows of one benchmark run): timing.versus with a margin of MARGIN. Outcome: A faster (lookahead), B
    faster (fused), or called the same (timing.the_same's words)."""
    v = timing.versus(lookahead, fused, f"the lookahead epoch {where}", "the fused epoch", MARGIN)
    words = {timing.A_FASTER: "one dispatch a step beat two", timing.B_FASTER: "one dispatch a step did not beat two",
             timing.SAME: "neither is faster by a margin this measurement can show"}[v.outcome]
    return timing.Verdict(f"{v[0].upper()}{v[1:]}: {words}.", v.outcome)


def runs_agree(here: timing.Verdict, there: timing.Verdict) -> timing.Verdict:
    """Whether two verdicts of one_against_two (this run's, the committed benchmark's) came out the same.
    Outcome: "agree" or "differ"."""
    if here.outcome == there.outcome:
        return timing.Verdict("This run and the committed one come to the same verdict.", "agree")
    return timing.Verdict("This run and the committed one come to different verdicts: the gap between one dispatch "
                          "a step and two is about as large as what the same epoch varies between runs.", "differ")


LOOKAHEAD_FASTER, FUSED_FASTER = "lookahead faster", "fused faster"   # floor_account's outcomes, with timing.SAME


def _ratio_words(a: timing.Timing, b: timing.Timing, outcome: str) -> str:
    """a against b, read after a's figure: ', 2.4× less than' where compare(a, b) found a faster, ', 2.4× ' where
    b, or ' against' (the sentence then ends in the_same's words)."""
    if outcome == timing.A_FASTER:
        return f", {timing.times(timing.ratio(b, a), digits=2)}× less than"
    if outcome == timing.B_FASTER:
        return f", {timing.times(timing.ratio(a, b), digits=2)}×"
    return " against"


def floor_account(look: timing.Timing, look_floor: timing.Timing, fused: timing.Timing, fused_floor: timing.Timing,
                  margin: float = MARGIN, in_turn: bool = False) -> timing.Verdict:
    """The lookahead epoch against the fused one in two parts, from the two epochs and their floors (Timings
    measured together): the floor (the lookahead's: its epoch with every group's work switched off, the gram
    dispatch and one dispatch a step that does nothing; the fused one: two empty dispatches a step) and the
    work, an epoch above its floor: where the four were taken in turn (in_turn, measure_interleaved's rounds),
    each round's epoch less that round's floor (_paired_beyond), so a round slowed as a whole cancels, and the
    sentence says "round by round"; otherwise (rows of a record) a Timing whose band takes the epoch's and the
    floor's bands at their widest (_beyond). Each part is compared as timing.compare compares two timings (`margin`),
    and the sentence says what each part did and which one won: 'its higher floor outweighs its smaller work',
    'its smaller work and its higher floor cancel', or by which parts one trainer won. Outcome: the epochs'
    timing.compare with `margin`, as LOOKAHEAD_FASTER, FUSED_FASTER or timing.SAME."""
    floor_out = timing.compare(look_floor, fused_floor, margin)
    beyond = _paired_beyond if in_turn else _beyond     # taken in turn: each round's epoch less that round's floor
    work_look, work_fused = beyond([look], look_floor), beyond([fused], fused_floor)
    has_work = work_look.median > 0 and work_fused.median > 0
    work_out = timing.compare(work_look, work_fused, margin) if has_work else None
    floor_text = (f"The lookahead's floor, its epoch with no group's work, took {look_floor.text()}"
                  f"{_ratio_words(look_floor, fused_floor, floor_out)} the fused trainer's floor of two "
                  f"empty dispatches a step, {fused_floor.text()}"
                  + (f": the two are {timing.the_same(look_floor, fused_floor, margin)}" if floor_out == timing.SAME
                     else ""))
    if has_work:
        work_text = (f"above its floor{', round by round,' if in_turn else ''} its work took {work_look.text()} an epoch"
                     f"{_ratio_words(work_look, work_fused, work_out)} the fused trainer's {work_fused.text()}"
                     + (f": the two are {timing.the_same(work_look, work_fused, margin)}" if work_out == timing.SAME
                        else ""))
    else:
        work_text = (f"above its floor its work took {1e3 * work_look.median:.2f} ms an epoch (medians) against the "
                     f"fused trainer's {1e3 * work_fused.median:.2f} ms, nothing to compare")
    ahead = [name for name, out in (("its smaller work", work_out), ("its lower floor", floor_out))
             if out == timing.A_FASTER]
    behind = [name for name, out in (("its larger work", work_out), ("its higher floor", floor_out))
              if out == timing.B_FASTER]
    outcome = timing.compare(look, fused, margin)
    if outcome == timing.SAME:
        # the epochs' own comparison (one_against_two) is printed before this sentence, with its margin's words
        verdict = (f"{' and '.join(ahead + behind)} cancel, which is why the two epochs come out the same"
                   if ahead and behind else "the two epochs come out the same")
        return timing.Verdict(f"{floor_text}; {work_text}. So {verdict}.", timing.SAME)
    if outcome == timing.A_FASTER:
        by, against, epochs = ahead, behind, f"the lookahead epoch is {timing.times(timing.ratio(fused, look), digits=2)}× faster"
    else:
        by, against, epochs = behind, ahead, f"the lookahead epoch is {timing.times(timing.ratio(look, fused), digits=2)}× slower"
    epochs += " than the fused one"
    if by and against:
        verdict = f"{' and '.join(by)} {'outweighs' if len(by) == 1 else 'outweigh'} {' and '.join(against)}: {epochs}"
    elif by:
        verdict = f"{epochs}, by {' and '.join(by)}"
    else:
        verdict = f"{epochs}, though neither part alone differs beyond the margin"
    return timing.Verdict(f"{floor_text}; {work_text}. So {verdict}.",
                          LOOKAHEAD_FASTER if outcome == timing.A_FASTER else FUSED_FASTER)


# --- the appendix's sentence on the kinds of work group (tests/test_verdicts_nb09.py) ----------------------------

ABOUT_THE_SUM, LESS_THAN_THE_SUM, MORE_THAN_THE_SUM = "about the sum", "less than the sum", "more than the sum"
NO_COST = "no cost to compare"   # the whole or the parts' sum not above the floor: nothing to compare


def _beyond(epochs: list, floor: timing.Timing) -> timing.Timing:
    """What the epochs together cost beyond `floor` apiece (Timings whose samples do not pair up round by
    round): their medians added up,
    less the floor's for each, with a band as wide as the bands can make it (each epoch's low against the
    floor's high, each high against its low), as five samples whose 20th and 80th percentiles are its ends."""
    n = len(epochs)
    low = sum(e.low for e in epochs) - n * floor.high
    mid = sum(e.median for e in epochs) - n * floor.median
    high = sum(e.high for e in epochs) - n * floor.low
    return timing.Timing((low, low, mid, high, high), floor.clock)


def _paired_beyond(epochs: list, floor: timing.Timing) -> timing.Timing:
    """What the epochs together cost beyond `floor` apiece, round by round: epochs taken in turn with the floor
    (timing.measure_interleaved keeps each one's samples in the order of its rounds), so sample i of the result
    is the sum of the epochs' sample i less the floor's sample i for each. A drift between rounds falls on all
    of them and cancels, which adding up each epoch's band at its widest (_beyond) cannot know."""
    rounds = {len(e.samples) for e in epochs} | {len(floor.samples)}
    if len(rounds) != 1:
        raise ValueError(f"epochs taken in turn have one sample a round each; got {sorted(rounds)} samples")
    n = len(epochs)
    return timing.Timing(tuple(sum(e.samples[i] for e in epochs) - n * floor.samples[i]
                               for i in range(len(floor.samples))), floor.clock)


def beyond_floor(epoch: timing.Timing, floor: timing.Timing) -> timing.Timing:
    """What one epoch cost beyond `floor`, round by round (_paired_beyond): the figure whole_against_parts
    adds up, so the lines a notebook prints for each kind and its sentence on their sum agree."""
    return _paired_beyond([epoch], floor)


def whole_against_parts(whole: timing.Timing, parts: dict, floor: timing.Timing,
                        margin: float = PARTS_MARGIN) -> timing.Verdict:
    """The lookahead epoch with every kind of work group at work (whole) against each kind at work alone
    (parts: {kind: Timing}), each beyond the epoch with no group's work (floor); the epochs taken in turn
    (the appendix), so that a drift falls on the floor and the kinds alike. The whole's cost and the parts'
    costs added up are taken round by round (_paired_beyond) and compared as timing.compare compares two
    timings. Outcome: LESS_THAN_THE_SUM (the kinds run at least partly side by side),
    MORE_THAN_THE_SUM (together they cost more than alone), ABOUT_THE_SUM otherwise (as if one after
    another); NO_COST where the whole or the parts added up cost nothing beyond the floor (at the median)."""
    together, added = _paired_beyond([whole], floor), _paired_beyond(list(parts.values()), floor)
    kinds = {2: "two", 3: "three", 4: "four"}.get(len(parts), str(len(parts)))
    head = (f"Beyond the epoch with no group's work, every kind of work group at once cost {together.text()} an "
            f"epoch and the {kinds} kinds alone, added up round by round (a median of sums, not a sum of the "
            f"medians above), {added.text()}")
    if together.median <= 0 or added.median <= 0:
        return timing.Verdict(f"{head}: one of them costs nothing beyond the floor, so there is no sum to compare "
                              "with", NO_COST)
    outcome = timing.compare(together, added, margin)
    if outcome == timing.A_FASTER:  # the larger over the smaller, so the figure reads as beyond the margin
        by = timing.times_beyond(timing.ratio(added, together), margin)
        return timing.Verdict(f"{head}: the sum of the parts costs {by}× the whole, so the kinds run at least "
                              "partly side by side", LESS_THAN_THE_SUM)
    if outcome == timing.B_FASTER:
        by = timing.times_beyond(timing.ratio(together, added), margin)
        return timing.Verdict(f"{head}: the whole costs {by}× the sum of its parts, so together the kinds cost "
                              "more than alone", MORE_THAN_THE_SUM)
    same = timing.the_same(together, added, margin)
    return timing.Verdict(f"{head}: the whole costs about the sum of its parts ({same}), as if the kinds ran one "
                          "after another", ABOUT_THE_SUM)

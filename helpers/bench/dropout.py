"""Dropout + max-norm on MNIST under a time budget: the validation sweep and the final runs of notebook 07.

    python -m helpers.bench.dropout validate                 # every recipe, 50,000 train / last 10,000 validate
    python -m helpers.bench.dropout validate --only H2048-e1,H4096-e1 --seconds 50
    python -m helpers.bench.dropout final --recipe best      # 3 seeds on all 60,000; test once per seed
    QUICK=1 python -m helpers.bench.dropout validate         # tiny sizes, for a software renderer

The split: `validate` trains on the first 50,000 training images and scores the last 10,000 (never the
test set); `final` trains on all 60,000 and scores the 10,000 test images once, after training.

The time budget: each run trains for as many epochs as fit in `--seconds` (50 for validate, 50,000/60,000
of the final's 60, so both train about the same number of epochs). The epoch count is fixed before the run,
from the median of 2 epochs of a throwaway trainer after a warm-up (timing.measure), times SAFETY, so
the schedules can end where they should; the run still stops if the next epoch would pass the budget.
`train_seconds` is the wall clock of the epochs alone (ctx.finish() at both ends of each; evaluation,
compilation, upload and the probe excluded); `wall_seconds` includes the evaluations.

A recipe: hidden units, keep probabilities (inputs, hidden units), max-norm c on each hidden unit's incoming
weights, batch size, and the schedule of momentum and step size, set as uniforms between epochs:
    mu_e  = mu_start + (mu_end - mu_start) * min(1, e / (ramp * E))        momentum, ramped linearly
    eps_e = eps * (1 + cos(pi * e / E)) / 2                                 step size, cosine to 0
    lr_e  = (1 - mu_e) * eps_e       so a steady gradient g moves a weight by eps_e * g a step whatever mu_e
(the form of momentum of Hinton et al. 2012, arXiv:1207.0580, whose momentum also ramps from 0.5 to 0.99).
He initialisation from the seed.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from .. import data, findings, fused_mlp, gl, mode, reference, timing
from . import profile
from .__main__ import device_record
from .fused import epoch_sampler

RESULTS = Path(__file__).resolve().parents[2] / "notebooks" / "results"
SAFETY = 0.95          # epochs planned = SAFETY * budget / measured epoch time
PROBE_EPOCHS = 2       # epochs of a throwaway trainer timed for that plan (their median)
EVALS = 25             # validation / training-set accuracy points a run records (evaluation is not timed)
BASE = dict(hidden=2048, keep_in=0.8, keep_hidden=0.5, max_norm=3.5, batch=128, eps=1.0, mu_start=0.5,
            mu_end=0.99, ramp=0.15)
RECIPES = {  # the validation grid: width, then step size, then a tighter max-norm, around H2048-e1
    "H1024-e1": dict(BASE, hidden=1024),
    "H2048-e1": dict(BASE),
    "H4096-e1": dict(BASE, hidden=4096),
    "H2048-e0.5": dict(BASE, eps=0.5),
    "H2048-e2": dict(BASE, eps=2.0),
    "H2048-e1-c2.5": dict(BASE, max_norm=2.5),
}
QUICK_HIDDEN = 32      # QUICK mode: every recipe at this width, on a few hundred images


def recipe_text(name: str, recipe: dict) -> str:
    """A recipe of RECIPES for a reader, one sentence: its name, width, keep probabilities, max-norm, batch
    and schedule."""
    return (f"The chosen recipe is {name}: {recipe['hidden']:,} hidden units, keep {recipe['keep_in']:g} of the "
            f"inputs and {recipe['keep_hidden']:g} of the hidden units, max-norm {recipe['max_norm']:g}, batches of "
            f"{recipe['batch']}, step size {recipe['eps']:g} falling to 0, momentum from {recipe['mu_start']:g} to "
            f"{recipe['mu_end']:g} over the first {100 * recipe['ramp']:g} % of the epochs.")


def schedule(recipe: dict, epochs: int):
    """(lr_schedule, mu_schedule): functions of the epoch, for FusedMLP.train."""
    ramp = max(1.0, recipe["ramp"] * epochs)

    def mu(e):
        return recipe["mu_start"] + (recipe["mu_end"] - recipe["mu_start"]) * min(1.0, e / ramp)

    def lr(e):
        return (1 - mu(e)) * recipe["eps"] * 0.5 * (1 + math.cos(math.pi * e / epochs))
    return lr, mu


def make_trainer(ctx, recipe: dict, images, labels, seed: int, quick: bool):
    hidden = QUICK_HIDDEN if quick else recipe["hidden"]
    lr, mu = schedule(recipe, 1)
    steps = -(-len(labels) // recipe["batch"])
    return fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=seed), images, labels,
                              optimizer=reference.Momentum(lr(0), mu(0)), batch_size=recipe["batch"], seed=seed,
                              check_every=steps, dropout=(recipe["keep_in"], recipe["keep_hidden"]),
                              max_norm=recipe["max_norm"])


def plan_epochs(ctx, recipe: dict, images, labels, seconds: float, quick: bool) -> tuple[int, float]:
    """(epochs that fit in `seconds`, measured seconds an epoch) from a throwaway trainer."""
    probe = make_trainer(ctx, recipe, images, labels, seed=12345, quick=quick)
    per_epoch = round(timing.measure(epoch_sampler(probe), repeat=PROBE_EPOCHS).median, 4)   # after a warm-up; as printed (0.1 ms)
    probe.release()
    return max(1, int(SAFETY * seconds / per_epoch)), per_epoch


def train_recipe(ctx, recipe: dict, images, labels, eval_sets: dict, seconds: float, seed: int, epochs: int,
                 quick: bool, live=None, evals: int = EVALS) -> dict:
    """Train one recipe for `epochs` epochs (stopping early only if the next epoch would pass `seconds`),
    scoring the sets in eval_sets {name: (images, labels)} at `evals` points and at the end (untimed).
    Returns the run's record; `trainer` in it is the trained FusedMLP (the caller releases it)."""
    trainer = make_trainer(ctx, recipe, images, labels, seed, quick)
    for name, (x, y) in eval_sets.items():
        if name != "train":  # the training set is resident already, under that name
            trainer.add_eval_set(name, x, y)
    lr, mu = schedule(recipe, epochs)
    every = max(1, epochs // evals)
    record = {"recipe": recipe, "seed": seed, "epochs_planned": epochs, "epochs": 0, "train_seconds": 0.0,
              "loss": [], "lr": [], "mu": [], "curve": {"epoch": []}, "stopped": None}
    start = time.perf_counter()
    for e in range(epochs):
        estimate = record["train_seconds"] / e if e else 0.0
        if e and record["train_seconds"] + estimate > seconds:
            record["stopped"] = f"time budget: {e} of {epochs} epochs"
            break
        try:
            history = trainer.train(1, first_epoch=e, lr_schedule=lr, mu_schedule=mu, evaluate=(), progress=False)
        except reference.TrainingDiverged as exc:
            record["stopped"] = f"diverged: {exc}"
            break
        record["train_seconds"] += history["seconds"][0]
        record["epochs"] = e + 1
        record["loss"].append(history["loss"][0])
        record["lr"].append(history["lr"][0])
        record["mu"].append(trainer.mu)
        if (e + 1) % every == 0 or e + 1 == epochs:
            record["curve"]["epoch"].append(e + 1)
            for name in eval_sets:
                record["curve"].setdefault(name, []).append(trainer.accuracy(name))
            if live is not None:
                live.update(e + 1, loss=history["loss"][0],
                            **{f"{n}_acc": record["curve"][n][-1] for n in eval_sets if n in ("train", "test")})
    record["accuracy"] = {name: trainer.accuracy(name) for name in eval_sets}
    record["wall_seconds"] = time.perf_counter() - start
    record["trainer"] = trainer
    return record


GOAL = 98.8           # % mean test accuracy over the seeds, one hidden layer, no augmentation
BUDGET = 60.0         # s of training a run on the GPU
VALIDATE_SECONDS = BUDGET * 5 / 6   # validate's default: 5/6 of the images for 5/6 of the time, as many epochs


REACHED, MISSED, ON_THE_LINE = "reached", "missed", "on the line"


def goal_sentence(mean: float, std: float, lowest: float, goal: float = GOAL,
                  highest: float | None = None) -> timing.Verdict:
    """The final runs' test accuracy (%: mean, standard deviation, lowest and highest seed) against the goal.
    Outcome: REACHED when every seed is at or above it, MISSED when every seed is below, ON_THE_LINE when the
    seeds fall on both sides (the goal lies within the spread across seeds)."""
    highest = mean if highest is None else highest
    if lowest >= goal:
        outcome, words = REACHED, f"every seed reached the {goal} % goal"
    elif highest < goal:
        outcome, words = MISSED, f"every seed missed the {goal} % goal"
    else:
        outcome, words = ON_THE_LINE, (f"the {goal} % goal lies within the spread across seeds: some reached it, "
                                       "some did not")
    return timing.Verdict(f"The mean test accuracy over the seeds is {mean:.2f} ± {std:.2f} % (lowest seed "
                          f"{lowest:.2f} %, highest {highest:.2f} %): {words}", outcome)


def sweep_budget_sentence(ran: int, grid: int, seconds: float, epochs: list, left_out: list,
                          default: float = VALIDATE_SECONDS) -> str:
    """What the committed sweep covered, for a reader: how many of the grid's recipes ran, the training time
    each had and the epochs that gave, against validate's default time (`default`, the one that gives as
    many epochs as a final run), and the recipes it left out."""
    span = (f"{min(epochs):,} epochs" if min(epochs) == max(epochs) else f"{min(epochs):,} to {max(epochs):,} epochs")
    if seconds < default:
        against = f"shorter than the default {default:g} s, which gives as many epochs as a final run"
    elif seconds > default:
        against = f"longer than the default {default:g} s, which gives as many epochs as a final run"
    else:
        against = "the default, which gives as many epochs as a final run"
    text = (f"The sweep ran {ran} of the grid's {grid} recipes with a budget of {seconds:g} s of training each ({span}), "
            f"{against}")
    if left_out:
        text += f"; not run: {findings.listed(left_out)}"
    return text + "."


def budget_sentence(longest: float, budget: float = BUDGET) -> timing.Verdict:
    """The longest run's training seconds against the budget. Outcome "within" (at or below) or "over"."""
    outcome = "within" if longest <= budget else "over"
    return timing.Verdict(f"The longest run trained for {longest:.1f} s, {outcome} the {budget:g} s budget", outcome)


# the dropout trainer's kernels against the plain fused pair they replace, and its max-norm dispatch
DROPOUT_PAIRS = (("fused_forward_2_dropout.comp", "fused_forward_1_xent.comp"),
                 ("fused_backward_2_dropout.comp", "fused_backward_1_update.comp"))
MAXNORM_KERNEL = "maxnorm_1_columns.comp"


def kernels_text(timings: dict) -> str:
    """A step's kernels one by one, each with its median and 20–80 % band in µs as Timing.text prints them
    (band_figures: more digits where the band's ends would print alike, never '7.0 µs (7.0–7.0)'):
    'fused_forward_1_xent.comp 68.4 µs (67.8–68.8), maxnorm_1_columns.comp 7.02 µs (7.01–7.03)'."""
    return ", ".join(f"{name} {t.text('µs')}" for name, t in timings.items())


def kernel_costs(plain: dict, regularised: dict) -> tuple:
    """(dropout_s, maxnorm_s, (dropout places, max-norm places)) for cost_sentence, from the kernels' Timings
    ({name: Timing}, profile_step's kernel_timing) as kernels_text prints them: the dropout shaders' printed
    medians less the plain pair's (DROPOUT_PAIRS), exactly, written to the finest decimals of those four
    figures, and the max-norm kernel's printed median at its own decimals."""
    def printed(t):
        figure = timing.printed_figure(t, "µs")
        return figure, timing.figure_decimals(str(figure))
    pairs = [(printed(regularised[r]), printed(plain[p])) for r, p in DROPOUT_PAIRS]
    extra = sum(r - p for (r, _), (p, _) in pairs)
    extra_places = max(places for pair in pairs for _, places in pair)
    maxnorm, maxnorm_places = printed(regularised[MAXNORM_KERNEL])
    return float(extra) * 1e-6, float(maxnorm) * 1e-6, (extra_places, maxnorm_places)


COSTS_MORE, COSTS_LESS = "costs more", "costs less"


def cost_sentence(regularised: timing.Timing, plain: timing.Timing, dropout_s: float, maxnorm_s: float,
                  steps: int | None = None, decimals: int | tuple = 1) -> timing.Verdict:
    """What dropout and max-norm add to an epoch: the regularised and the plain epoch (Timings measured
    interleaved), the dropout shaders' extra kernel seconds a step against the plain pair, and the max-norm
    dispatch's seconds a step; given the epoch's `steps` and an epoch that costs more, those per-step figures
    over an epoch beside the epochs' difference, both from the figures as printed, and where the first is the
    larger, that the kernels were timed apart from these epochs. Outcome: COSTS_MORE or COSTS_LESS when the
    epochs differ beyond the noise (timing.compare), timing.SAME otherwise. `decimals`: the places of a µs the
    two per-step figures are printed to, one for both or (dropout, max-norm), the decimals of the kernel
    figures printed above the sentence (kernel_costs gives them), so the sentence quotes those figures."""
    extra_places, maxnorm_places = decimals if isinstance(decimals, tuple) else (decimals, decimals)
    outcome = {timing.B_FASTER: COSTS_MORE, timing.A_FASTER: COSTS_LESS}.get(timing.compare(regularised, plain), timing.SAME)
    with_printed, without_printed = (Decimal(t.text("ms").split()[0]) for t in (regularised, plain))   # as printed
    extra = (100 * (with_printed / without_printed - 1)).quantize(Decimal(1), ROUND_HALF_UP) + 0      # + 0: no -0
    more = "more" if dropout_s >= 0 else "less"
    head = (f"With dropout and max-norm an epoch took {regularised.text('ms')} against {plain.text('ms')} without "
            f"({'+' if extra >= 0 else ''}{extra} %")
    head += ")" if outcome != timing.SAME else f", {timing.the_same(regularised, plain)})"
    said = (f"{head}: per step the dropout shaders' medians add up to {1e6 * abs(dropout_s):.{extra_places}f} µs {more} "
            f"than the plain pair's, and the max-norm dispatch's median is {1e6 * maxnorm_s:.{maxnorm_places}f} µs")
    if steps and outcome == COSTS_MORE:
        gap_ms = with_printed - without_printed              # exact, of the printed figures: 69.5 - 55 = 14.5
        total = steps * (round(1e6 * dropout_s, extra_places) + round(1e6 * maxnorm_s, maxnorm_places)) * 1e-6   # as printed
        said += (f"; over an epoch's {steps:,} steps those figures come to {profile.seconds_text(total)} against the "
                 f"epochs' difference of {gap_ms:f} ms")
        if 1e3 * profile.printed_seconds(total) > gap_ms:
            said += " (the kernels were timed in streams of their own copies, not inside these epochs)"
    return timing.Verdict(said, outcome)


CLEAR_BEST, WITHIN_NOISE = "clear best", "same within noise"


def split_noise(accuracy: float, n: int) -> float:
    """The standard deviation, in percentage points, of an accuracy (a fraction) measured on n images: the
    sampling noise of a validation split of that size (binomial)."""
    return 100 * math.sqrt(accuracy * (1 - accuracy) / n)


def sweep_verdict(accuracies: dict, n_val: int, seed_range: float = 0.0) -> timing.Verdict:
    """Is the sweep's best recipe better than the others by more than the noise? accuracies {recipe: validation
    accuracy, a fraction}; n_val the validation images; seed_range the spread (max - min, percentage points)
    the final runs measured across seeds. The noise is the larger of seed_range and twice the split's sampling
    noise (split_noise): a recipe closer than that to the best is the same within the noise. Outcome:
    CLEAR_BEST or WITHIN_NOISE."""
    best = max(accuracies, key=accuracies.get)
    sampling = 2 * split_noise(accuracies[best], n_val)
    noise = max(seed_range, sampling)
    close = [name for name, a in accuracies.items() if name != best and 100 * (accuracies[best] - a) < noise]
    source = ("the spread across seeds" if seed_range > sampling else
              f"twice the sampling noise of {n_val:,} validation images")
    head = f"The best validation accuracy is {best}'s {100 * accuracies[best]:.2f} %"
    if not close:
        return timing.Verdict(f"{head}, better than every other recipe's by more than the noise of {noise:.2f} points "
                              f"({source})", CLEAR_BEST)
    names = findings.listed(close)
    return timing.Verdict(f"{head}; {names} {'lies' if len(close) == 1 else 'lie'} within the noise of {noise:.2f} "
                          f"points ({source}) below it, so the choice among them is not a measured difference",
                          WITHIN_NOISE)


def _data(quick: bool):
    (X_train, y_train), (X_test, y_test) = data.load_mnist()
    if quick:
        X_train, y_train, X_test, y_test = X_train[:1000], y_train[:1000], X_test[:500], y_test[:500]
    return X_train, y_train, X_test, y_test


def split(X_train, y_train):
    """(train images, labels), (validation images, labels): the last sixth of the training set held out
    (the last 10,000 of MNIST's 60,000)."""
    cut = len(X_train) * 5 // 6
    return (X_train[:cut], y_train[:cut]), (X_train[cut:], y_train[cut:])


def per_epoch_figures(train_seconds: float, epochs: int) -> tuple[str, str]:
    """The training time as printed ('56.8', seconds to 0.1) and the time an epoch in ms that a reader gets by
    dividing that printed figure by the epochs, rounded half up to 0.1 ms: 56.77 s over 4560 epochs prints
    56.8 s and 12.5 ms (56.8 / 4560 = 12.456 ms), where the unrounded 56.77 s gives 12.450 ms, 12.4 (a run
    that trained no epoch counts as one)."""
    seconds = f"{train_seconds:.1f}"
    ms = (Decimal(seconds) * 1000 / max(epochs, 1)).quantize(Decimal("0.1"), ROUND_HALF_UP) + 0
    return seconds, f"{ms:f}"


def per_epoch_text(train_seconds: float, epochs: int) -> str:
    """'56.8 s of training, 12.5 ms an epoch': per_epoch_figures in words, for final's line a seed."""
    seconds, ms = per_epoch_figures(train_seconds, epochs)
    return f"{seconds} s of training, {ms} ms an epoch"


def _public(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "trainer"}


def validate(ctx, names, seconds: float, quick: bool) -> dict:
    X_train, y_train, _, _ = _data(quick)
    (X_fit, y_fit), (X_val, y_val) = split(X_train, y_train)
    print(f"validate: train on {len(y_fit)}, validate on the last {len(y_val)} training images; "
          f"{seconds:g} s of training a recipe")
    runs = []
    for name in names:
        recipe = RECIPES[name]
        epochs, per_epoch = plan_epochs(ctx, recipe, X_fit, y_fit, seconds, quick)
        run = train_recipe(ctx, recipe, X_fit, y_fit, {"val": (X_val, y_val)}, seconds, seed=0, epochs=epochs,
                           quick=quick)
        run["trainer"].release()
        run.update(name=name, probe_epoch_seconds=per_epoch)
        runs.append(_public(run))
        seconds_shown, ms_shown = per_epoch_figures(run["train_seconds"], run["epochs"])
        print(f"  {name:22s} val {100 * run['accuracy']['val']:6.2f} %   {run['epochs']:4d} epochs in "
              f"{seconds_shown:>5} s ({ms_shown:>6} ms an epoch)"
              + (f"   [{run['stopped']}]" if run["stopped"] else ""), flush=True)
    best = max(runs, key=lambda r: r["accuracy"]["val"])
    print(f"best on validation: {best['name']} ({100 * best['accuracy']['val']:.2f} %)")
    return {"split": "train: training images [0, 5/6 n); validation: the last n/6", "seconds": seconds,
            "runs": runs, "best": best["name"]}


def final(ctx, name: str, seeds, seconds: float, quick: bool, live_factory=None) -> dict:
    """Train `name` on all training images for each seed (the same epoch count for all, planned once) and
    score the test set once, after training; curves of training-set accuracy and loss (no test curve)."""
    X_train, y_train, X_test, y_test = _data(quick)
    recipe = RECIPES[name]
    epochs, per_epoch = plan_epochs(ctx, recipe, X_train, y_train, seconds, quick)
    print(f"final: {name} on all {len(y_train):,} training images, {epochs} epochs planned "
          f"({100 * SAFETY:.0f} % of the {seconds:g} s budget ÷ {1e3 * per_epoch:.1f} ms an epoch, the median of "
          f"{PROBE_EPOCHS} epochs of a throwaway trainer of the recipe timed here after a warm-up), "
          "test once per seed.")
    runs = []
    for seed in seeds:
        live = live_factory(seed) if live_factory else None
        run = train_recipe(ctx, recipe, X_train, y_train, {"train": (X_train, y_train)}, seconds, seed, epochs,
                           quick, live=live)
        trainer = run.pop("trainer")
        trainer.add_eval_set("test", X_test, y_test)
        run["test_accuracy"] = trainer.accuracy("test")   # the one look at the test set
        trainer.release()
        if live is not None:
            run["figure"] = live.close()
        runs.append(run)
        print(f"  seed {seed}: test {100 * run['test_accuracy']:.2f} %   {run['epochs']} epochs in "
              f"{per_epoch_text(run['train_seconds'], run['epochs'])} ({run['wall_seconds']:.1f} s with evaluation)"
              + (f"   [{run['stopped']}]" if run["stopped"] else ""), flush=True)
    acc = [100 * r["test_accuracy"] for r in runs]
    summary = {"mean": statistics.mean(acc), "std": statistics.stdev(acc) if len(acc) > 1 else 0.0,
               "min": min(acc), "max": max(acc)}
    print(f"test accuracy over {len(acc)} seeds: {summary['mean']:.2f} ± {summary['std']:.2f} % "
          f"(min {summary['min']:.2f}, max {summary['max']:.2f}).")
    return {"recipe_name": name, "recipe": recipe, "seconds": seconds, "epochs_planned": epochs,
            "probe_epoch_seconds": per_epoch, "runs": [{k: v for k, v in r.items() if k != "figure"} for r in runs],
            "test_accuracy_percent": summary, "figures": [r.get("figure") for r in runs]}


def results_path(kind: str, quick: bool) -> Path:
    """notebooks/results/dropout-<kind>.json; QUICK runs write to the temporary folder instead (their
    numbers mean nothing and must not replace a committed run)."""
    return (Path(tempfile.gettempdir()) / f"dropout-{kind}-quick.json") if quick else RESULTS / f"dropout-{kind}.json"


def best_recipe(quick: bool) -> str:
    path = results_path("validate", quick)
    if not path.is_file():
        raise SystemExit(f"--recipe best needs {path}: run `python -m helpers.bench.dropout validate` first")
    return json.loads(path.read_text())["best"]


def shown(path: Path) -> str:
    """A path as the reader may see it: relative to the repository, or the file's name in the temporary
    folder (never the folder the course happens to sit in)."""
    try:
        return str(path.resolve().relative_to(RESULTS.parents[1]))
    except ValueError:
        return f"{path.name} in the temporary folder"


def write(kind: str, record: dict, ctx, quick: bool, out: Path | None = None) -> Path:
    path = out or results_path(kind, quick)
    record = {"device": device_record(ctx), "quick": quick, **{k: v for k, v in record.items() if k != "figures"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, default=float) + "\n")
    print(f"wrote {shown(path)}")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=("validate", "final"))
    parser.add_argument("--only", help="comma-separated recipe names (validate; default: all of " + ", ".join(RECIPES) + ")")
    parser.add_argument("--recipe", default="best", help="final: a recipe name, or best (from the validate JSON)")
    parser.add_argument("--seeds", default="0,1,2", help="final: comma-separated seeds")
    parser.add_argument("--seconds", type=float, help="training budget a run (default: validate 50, final 60; QUICK 2)")
    parser.add_argument("--out", type=Path, help="JSON file (default notebooks/results/dropout-<which>.json; QUICK: the temporary folder)")
    args = parser.parse_args(argv)
    quick = mode.is_quick()
    ctx = gl.create_context()
    print(f"device: {gl.describe(ctx)}   ({'QUICK' if quick else 'full'} sizes)")
    if args.which == "validate":
        names = args.only.split(",") if args.only else list(RECIPES)
        unknown = [n for n in names if n not in RECIPES]
        if unknown:
            raise SystemExit(f"unknown recipe(s) {unknown}; the recipes are {list(RECIPES)}")
        seconds = args.seconds or (2.0 if quick else VALIDATE_SECONDS)
        write("validate", validate(ctx, names, seconds, quick), ctx, quick, args.out)
    else:
        name = best_recipe(quick) if args.recipe == "best" else args.recipe
        if name not in RECIPES:
            raise SystemExit(f"unknown recipe {name!r}; the recipes are {list(RECIPES)}")
        seeds = [int(s) for s in args.seeds.split(",")]
        seconds = args.seconds or (3.0 if quick else BUDGET)
        write("final", final(ctx, name, seeds, seconds, quick), ctx, quick, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

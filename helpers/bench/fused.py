"""Benchmark: one MNIST epoch of the GLSL trainers against PyTorch and JAX on the same GPU.

    python -m helpers.bench fused                    # QUICK=1: a few thousand images, for llvmpipe

Introduced in notebook 06; notebooks 08 and 09 read its committed rows. Everything of one width is measured
together: after a warm-up of at least WARMUP_SECONDS in which every contender runs an epoch in turn, the
epochs go round, A B C … A B C …, REPEAT times (timing.measure_interleaved), so a drift of the GPU's clock
falls on all of them alike. Each row stores the median epoch and its spread, the 20th and 80th percentiles
(ms, ms_low, ms_high, repeats: timing.Timing.row), wall clock from the first command to the end of the epoch
(ctx.finish() / torch.cuda.synchronize(), JAX's block_until_ready):

  * fused 784-128-10 at batch 128 with SGD (the series' recipe), momentum and Adam, and the floor: the same
    number of empty dispatches and barriers, with the same work-group counts;
  * the wide net 784-800-10 (momentum), the net of notebook 06's accuracy run;
  * both nets with the register-blocked backward (FusedMLP(blocked=True)), and blocked in three dispatches a
    step, layer 1 as a tiled product of its own (the "3-pass" step: FusedMLP(blocked=True, tiled_hidden=True));
    and the wide 3-pass step with layer 1 in one piece (ONE_PIECE: every group sums all 784 inputs) beside its
    default, whose layer 1 splits the inputs among work groups (fused_mlp.TUNED's KSPLIT);
  * 784-128-10 as one persistent dispatch per check_every steps (PersistentMLP, notebook 09), or the error
    that stopped it, and in one dispatch a step (LookaheadMLP, notebook 09), with its floor: the same
    dispatches with every work group's work switched off;
  * the unfused trainer of notebook 05 (helpers/gpu_mlp.py) and its floor;
  * the fused 784-128-10 SGD pair reading each chunk's losses right after it (check_behind off) instead of
    one chunk behind (mlp.Trainer.run_epoch), beside the same pair's row;
  * PyTorch, where it is installed with CUDA: eager, one CUDA graph per step (replayed), and the whole
    epoch captured as one CUDA graph; fp32 with TF32 off, data resident on the GPU, same init and order;
  * JAX, where it is installed: jit of lax.scan over the epoch, served by a process of its own
    (jax_epoch.py) one epoch per request, fp32 ("highest") and JAX's default precision (TF32 on NVIDIA).
"""

from __future__ import annotations

import itertools
import json
import time
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from pathlib import Path

import numpy as np

from .. import data, fused_mlp, gl, reference, timing
from . import profile
from ..gpu_mlp import GPUTrainer
from ..lookahead_mlp import ALL_ROLES, LookaheadMLP
from ..persistent_mlp import PersistentMLP
from .profile import epoch_phases, profile_step
from .jax_epoch import JaxEpochs
from .train import torch_eager_epoch, torch_fp32

BATCH, LR, HIDDEN, WIDE = 128, 0.3, 128, 800
REPEAT = 10              # epochs timed per contender (QUICK: 1)
WARMUP_SECONDS = 1.0     # at least this much of every contender's real work, in turn, before the repeats
ORDERS = 4               # sample orders the epochs cycle through (reference.epoch_order, seed 0)
CLOCK = "wall clock, ctx.finish() / torch.cuda.synchronize() at both ends"
RESULTS = Path(__file__).resolve().parents[2] / "notebooks" / "results"
# The card of the committed run, as its files name it: every committed figure comes from one run on this card
# (bench-<CARD>.json, verdicts-<CARD>.json, and the tuning records tuning_file() names). Moving the course to
# another card: a tuning run and a committed run there, then this name (CONTRIBUTING.md).
CARD = "h200"
RESULTS_FILE = RESULTS / f"bench-{CARD}.json"

ONE_PIECE = dict(RQ=8, TQ=8, BK=8, KS=8, KSPLIT=1)   # the wide net's layer 1 with all its inputs in every group
ONE_PIECE_NAME = ", layer 1 in one piece"            # the row's name ends so: the default 3-pass step otherwise


def tuning_file(tool: str) -> Path:
    """The record a tuning tool made on the committed run's card: tuning_file("top-rung") is
    notebooks/results/top-rung-<CARD>.json (tools: fused-sweep, matmul7-sweep, top-rung)."""
    return RESULTS / f"{tool}-{CARD}.json"


def wide_hidden(quick: bool) -> int:
    """The wide net's hidden size: WIDE, or 256 in QUICK mode (a software renderer)."""
    return 256 if quick else WIDE


def _row(name: str, measured: timing.Timing, **extra) -> dict:
    """A benchmark row: the median epoch with its 20-80 % band (timing.Timing.row), the fastest epoch,
    the number of epochs and the clock, and any other fields."""
    return {"name": name, **measured.row(), "min_ms": 1e3 * min(measured.samples), "epochs": len(measured.samples),
            "clock": CLOCK, **extra}


# ---------------------------------------------------------------------------------------------
# One epoch as a sample: the contenders measure_interleaved takes in turn
# ---------------------------------------------------------------------------------------------

def epoch_sampler(trainer, losses: list | None = None, orders: int = ORDERS):
    """sample() -> seconds of one epoch of a GLSL trainer, wall clock with ctx.finish() at both ends; the
    epochs cycle through `orders` sample orders drawn beforehand (drawing one is CPU work, not the epoch's).
    losses, if given, gets each epoch's mean loss. It trains."""
    drawn = [reference.epoch_order(trainer.n, e, trainer.seed) for e in range(orders)]
    count = itertools.count()
    losses = [] if losses is None else losses

    def sample() -> float:
        e = next(count)
        trainer.ctx.finish()
        start = time.perf_counter()
        losses.append(trainer.run_epoch(e, order=drawn[e % orders]))
        trainer.ctx.finish()
        return time.perf_counter() - start
    return sample


def floor_sampler(ctx, steps: int, groups: list):
    """(sample, release): sample() -> seconds of an epoch of `steps` steps of empty dispatches, one with its
    barrier per entry of `groups` (work-group counts): the floor a trainer with that pattern cannot beat."""
    program = ctx.compute_shader(profile.EMPTY_SHADER)

    def sample() -> float:
        ctx.finish()
        start = time.perf_counter()
        for _ in range(steps):
            for g in groups:
                program.run(*g)
                ctx.memory_barrier(profile.BARRIER)
        ctx.finish()
        return time.perf_counter() - start
    return sample, program.release


def interleaved_epochs(trainers: dict, repeat: int, warmup: float | None = None, floors: dict | None = None,
                       clock: str = timing.WALL) -> dict:
    """{name: Timing} of trainers' epochs ({name: trainer}) and of floors ({name: (steps, [groups, ...])}),
    measured interleaved (timing.measure_interleaved) after `warmup` seconds (default timing's). Trains."""
    samples = {name: epoch_sampler(t) for name, t in trainers.items()}
    releases = []
    for name, (steps, groups) in (floors or {}).items():
        samples[name], release = floor_sampler(next(iter(trainers.values())).ctx, steps, groups)
        releases.append(release)
    try:
        return timing.measure_interleaved(samples, repeat, warmup, clock)
    finally:
        for release in releases:
            release()


def measure_group(contenders: dict, repeat: int, warmup: float) -> tuple[dict, dict]:
    """({name: Timing}, {name: error}): every contender ({name: sample}) tried once (it compiles, and one
    that fails, such as a grid barrier that gave up, is set aside with its error), then the rest measured
    interleaved. A contender that fails during the repeats is set aside too."""
    errors, ok = {}, {}
    for name, sample in contenders.items():
        try:
            sample()
            ok[name] = sample
        except RuntimeError as exc:
            errors[name] = str(exc)

    def guarded(name, sample):
        def run():
            if name in errors:
                return float("nan")
            try:
                return sample()
            except RuntimeError as exc:
                errors[name] = str(exc)
                return float("nan")
        return run
    measured = timing.measure_interleaved({n: guarded(n, s) for n, s in ok.items()}, repeat, warmup)
    return {n: t for n, t in measured.items() if n not in errors}, errors


# ---------------------------------------------------------------------------------------------
# PyTorch: eager, a CUDA graph per step, the whole epoch as one CUDA graph
# ---------------------------------------------------------------------------------------------

@contextmanager
def torch_contenders(images, labels, orders, hidden: int, repeat: int = REPEAT):
    """Yields ({row name: (Timing, extra fields)}, note): PyTorch's three ways, each measured on its own
    (timing.measure: warm-up by time, then `repeat` epochs, synchronised at both ends), fp32 with TF32 off
    while the block runs; ({}, why) where PyTorch or CUDA is missing. They are not taken in turn with the
    GLSL trainers: a CUDA graph replayed after another graph was captured in the same process failed
    (device-side assert on the H100), so each graph is timed and released before the next is captured."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        yield {}, "PyTorch is not installed here: no PyTorch rows"
        return
    if not torch.cuda.is_available():
        yield {}, "PyTorch has no CUDA device here: no PyTorch rows"
        return
    with torch_fp32(torch):
        yield _torch_contenders(torch, F, images, labels, orders, hidden, repeat), \
            f"PyTorch {torch.__version__}, {torch.cuda.get_device_name()}"


def _synced(torch, epoch, orders: int):
    count = itertools.count()

    def sample() -> float:
        e = next(count) % orders
        torch.cuda.synchronize()
        start = time.perf_counter()
        epoch(e)
        torch.cuda.synchronize()
        return time.perf_counter() - start
    return sample


def _torch_contenders(torch, F, images, labels, orders, hidden: int, repeat: int) -> dict:
    dev = torch.device("cuda")
    X = torch.from_numpy(data.normalise(images)).to(dev)
    Y = torch.from_numpy(labels.astype(np.int64)).to(dev)
    order_t = [torch.from_numpy(o.astype(np.int64)).to(dev) for o in orders]
    n, B = len(X), BATCH
    steps = -(-n // B)
    p0 = reference.init_params(784, hidden, 10, seed=0)

    def fresh():
        params = [torch.tensor(p0[k], device=dev, requires_grad=True) for k in ("W1", "b1", "W2", "b2")]
        return params, torch.optim.SGD(params, lr=LR)

    def loss_fn(params, idx):
        W1, b1, W2, b2 = params
        return F.cross_entropy(torch.relu(X[idx] @ W1 + b1) @ W2 + b2, Y[idx])

    out = {}
    eager = torch_eager_epoch(torch, F, images, labels, p0, orders)  # bench_train's loop: same orders (seed 0)
    out[f"PyTorch eager 784-{hidden}-10 SGD"] = (timing.measure(_synced(torch, eager, len(orders)), repeat),
                                                 dict(launches_per_step="~15 kernels, one Python call each"))

    # One CUDA graph per batch size (a full batch and the leftover), replayed once a step.
    params, opt = fresh()
    sizes = sorted({B, n - (steps - 1) * B})
    static = {size: torch.zeros(size, dtype=torch.int64, device=dev) for size in sizes}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as the CUDA graphs documentation asks
        for size in sizes:
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                loss_fn(params, static[size]).backward()
                opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graphs = {}
    for size in sizes:
        graphs[size] = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graphs[size]):
            loss_fn(params, static[size]).backward()
            opt.step()

    def graph_steps(e):
        order = order_t[e]
        for s in range(steps):
            size = min(B, n - s * B)
            static[size].copy_(order[s * B:s * B + size])
            graphs[size].replay()

    out[f"PyTorch CUDA graph per step 784-{hidden}-10 SGD"] = (timing.measure(_synced(torch, graph_steps, len(orders)),
                                                                              repeat),
                                                               dict(launches_per_step="1 graph replay + 1 index copy"))
    del graphs
    torch.cuda.synchronize()

    # The whole epoch captured as one graph: one launch per epoch.
    try:
        params2, opt2 = fresh()
        order_static = torch.zeros(n, dtype=torch.int64, device=dev)
        with torch.cuda.stream(side):
            for _ in range(3):
                opt2.zero_grad(set_to_none=True)
                loss_fn(params2, order_static[:B]).backward()
                opt2.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        start = time.perf_counter()
        with torch.cuda.graph(graph):
            for s in range(steps):
                opt2.zero_grad(set_to_none=True)
                loss_fn(params2, order_static[s * B:(s + 1) * B]).backward()
                opt2.step()
        capture = time.perf_counter() - start

        def graph_epoch(e):
            order_static.copy_(order_t[e])
            graph.replay()

        out[f"PyTorch CUDA graph whole epoch 784-{hidden}-10 SGD"] = (
            timing.measure(_synced(torch, graph_epoch, len(orders)), repeat),
            dict(launches_per_step="1 graph replay per epoch", capture_s=capture))
        del graph
    except Exception as exc:  # report, do not lose the other rows
        out["PyTorch CUDA graph whole epoch"] = (None, {"error": f"{type(exc).__name__}: {exc}"})
    return out


# ---------------------------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------------------------

def _glsl(ctx, images, labels, optimizer, hidden=HIDDEN, tiled=False, blocked=False, one_piece=False):
    trainer = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels,
                                 optimizer=optimizer, batch_size=BATCH, seed=0, tiled_hidden=tiled, blocked=blocked,
                                 hidden_defines=ONE_PIECE if one_piece else None)
    way = (" blocked" if blocked else "") + (" 3-pass" if tiled else "")
    return f"fused{way} 784-{hidden}-10 {type(optimizer).__name__}{ONE_PIECE_NAME if one_piece else ''}", trainer


def _trainer_row(name, measured, trainer, losses, steps) -> dict:
    extra = dict(dispatches_per_step=trainer.dispatches_per_step, steps=steps, loss=losses[-1] if losses else None)
    if isinstance(trainer, PersistentMLP):
        extra.update(barriers_per_step=PersistentMLP.GRID_BARRIERS if trainer.persistent else PersistentMLP.PHASES,
                     groups=trainer.groups[0], persistent=trainer.persistent)
    elif isinstance(trainer, LookaheadMLP):
        extra.update(barriers_per_step=1, groups=trainer.groups[0])
    else:
        extra.update(barriers_per_step=trainer.dispatches_per_step)
        if isinstance(trainer, fused_mlp.FusedMLP):
            extra.update(samples_per_group=trainer.S)
            if trainer.head is not None:   # the 3-pass step: how many pieces of its inputs layer 1 is cut into
                extra.update(layer1_pieces=trainer.head_defines["KSPLIT"])
    return _row(name, measured, **extra)


def run(ctx, quick: bool) -> list[dict]:
    (X_train, y_train), _ = data.load_mnist()
    n = 1024 if quick else len(X_train)  # llvmpipe takes about a second per fused step
    repeat = 1 if quick else REPEAT
    warmup = timing.default_warmup() if quick else max(WARMUP_SECONDS, timing.WARMUP_SECONDS)
    images, labels = X_train[:n], y_train[:n]
    orders = [reference.epoch_order(n, e, 0) for e in range(ORDERS)]
    steps = -(-n // BATCH)
    wide = wide_hidden(quick)
    rows, notes, main = [], [], None
    for hidden in (HIDDEN, wide):
        with ExitStack() as stack:
            trainers, contenders, extras = {}, {}, {}
            if hidden == HIDDEN:
                optimizers = ((reference.SGD(LR), reference.Adam(1e-3)) if quick else   # QUICK: no momentum row
                              (reference.SGD(LR), reference.Momentum(0.05, 0.9), reference.Adam(1e-3)))
                specs = [dict(optimizer=o) for o in optimizers]
                specs += [dict(optimizer=reference.SGD(LR), blocked=True, tiled=t) for t in (False, True)]
            else:
                specs = [dict(optimizer=reference.Momentum(0.2, 0.9), hidden=wide)]   # notebook 06's recipe
                specs += [dict(optimizer=reference.Momentum(0.2, 0.9), hidden=wide, blocked=True, tiled=t)
                          for t in (False, True)]
                specs += [dict(optimizer=reference.Momentum(0.2, 0.9), hidden=wide, blocked=True, tiled=True,
                               one_piece=True)]   # the default 3-pass step, its layer 1 not split
            for spec in specs:
                name, trainer = _glsl(ctx, images, labels, **spec)
                trainers[name] = trainer
            if hidden == HIDDEN:
                common = dict(optimizer=reference.SGD(LR), batch_size=BATCH, seed=0)
                trainers[f"persistent 784-{HIDDEN}-10 SGD"] = PersistentMLP(
                    ctx, reference.init_params(784, HIDDEN, 10, seed=0), images, labels, **common)
                look = LookaheadMLP(ctx, reference.init_params(784, HIDDEN, 10, seed=0), images, labels, **common)
                trainers[f"lookahead 784-{HIDDEN}-10 SGD"] = look
                trainers["unfused 784-128-10 SGD (notebook 05)"] = GPUTrainer(
                    ctx, reference.init_params(seed=0), images, labels, **common)
                right_after = fused_mlp.FusedMLP(ctx, reference.init_params(784, HIDDEN, 10, seed=0), images, labels,
                                                 blocked=False, tiled_hidden=False, **common)   # FUSED_ROW's layout
                right_after.check_behind = False   # each check waits for its chunk: the GPU idles meanwhile
                trainers[CHECKS_RIGHT_AFTER] = right_after
            for trainer in trainers.values():
                stack.callback(trainer.release)
            losses = {name: [] for name in trainers}
            contenders.update({name: epoch_sampler(t, losses[name]) for name, t in trainers.items()})
            if hidden == HIDDEN:   # the floors: the fused and the unfused dispatch patterns, and the lookahead's
                main_name = f"fused 784-{HIDDEN}-10 SGD"
                for per_step, trainer in ((2, trainers[main_name]), (6, trainers["unfused 784-128-10 SGD (notebook 05)"])):
                    sample, release = floor_sampler(ctx, steps, [g for _, g in trainer.dispatches(0)])
                    stack.callback(release)
                    name = f"floor: {steps}×{per_step} empty dispatches + barriers"
                    contenders[name] = sample
                    extras[name] = dict(dispatches_per_step=per_step, barriers_per_step=per_step, steps=steps)
                contenders[LOOKAHEAD_FLOOR] = lookahead_floor_sampler(look)
                extras[LOOKAHEAD_FLOOR] = dict(dispatches_per_step=1, barriers_per_step=1, steps=steps)
                torch_with = stack.enter_context(torch_contenders(images, labels, orders, HIDDEN, repeat))
                for name, (measured, extra) in torch_with[0].items():
                    rows.append({"name": name, **extra} if measured is None else _row(name, measured, **extra))
                notes.append(torch_with[1])
            optimizer, lr = ("sgd", LR) if hidden == HIDDEN else ("momentum", 0.2)
            for precision in ("highest", "default"):   # each a process of its own, serving epochs
                served = stack.enter_context(JaxEpochs(hidden, optimizer, lr, precision, quick))
                if served.ready:
                    contenders[served.name], extras[served.name] = served.sample, served.meta
                if served.reason not in notes:
                    notes.append(served.reason)
            if hidden == HIDDEN:   # the main row's profile first: measuring the group trains every trainer
                main_trainer = trainers[main_name]
                step_profile = profile_step(main_trainer, repeat=2 if quick else 50)
            measured, errors = measure_group(contenders, repeat, warmup)
            for name, error in errors.items():
                trainer = trainers.get(name)
                groups = f" ({trainer.groups[0]} work groups)" if hasattr(trainer, "groups") else ""
                rows.append({"name": name, "error": error.split(":")[0] + groups})
            group_rows = {}
            for name, t in measured.items():
                if name in trainers:
                    group_rows[name] = _trainer_row(name, t, trainers[name], losses[name], steps)
                else:
                    group_rows[name] = _row(name, t, **{k: v for k, v in extras.get(name, {}).items()
                                                       if k not in ("name",)})
            if hidden == HIDDEN and main_name in group_rows:
                main = group_rows[main_name]
                main["profile"] = {k: v for k, v in step_profile.items() if k != "kernel"}
                main["kernel_us"] = {k: 1e6 * v for k, v in step_profile["kernel"].items()}
                main["phases"] = epoch_phases(main_trainer, step_profile, main["ms"] / 1e3)
                main["bound_ms"] = group_rows[f"floor: {steps}×2 empty dispatches + barriers"]["ms"]
                unfused = group_rows.get("unfused 784-128-10 SGD (notebook 05)")
                if unfused:
                    unfused["bound_ms"] = group_rows[f"floor: {steps}×6 empty dispatches + barriers"]["ms"]
            rows += group_rows.values()
    if main is not None:
        for row in rows:
            if row.get("name", "").startswith("PyTorch") and "ms" in row:
                row["fused_speedup"] = row["ms"] / main["ms"]
    print(f"one epoch: {n} images, batch {BATCH}, {steps} steps; each width measured interleaved, {repeat} epochs "
          f"a contender after a warm-up of {warmup:g} s; {'; '.join(notes)}")
    print(f"{'':56s} {'ms/epoch (20–80 %)':>24s} {'disp/step':>9s}  vs fused")
    for row in rows:
        if "error" in row:
            print(f"{row['name']:56s} not run: {row['error']}")
            continue
        ratio = f"{times_epoch(row['ms'], main['ms']):>9s}" if main else ""
        band = f"{row['ms']:.2f} ({row['ms_low']:.2f}–{row['ms_high']:.2f})"
        print(f"{row['name']:56s} {band:>24s} {str(row.get('dispatches_per_step', '')):>9s} {ratio}")
    if main is not None:
        print(f"fused SGD: kernels per step {', '.join(f'{k} {v:.1f} µs' for k, v in main['kernel_us'].items())} "
              f"({step_profile['clock']}); step {1e6 * step_profile['step']:.1f} µs, Python issue "
              f"{1e6 * step_profile['issue']:.1f} µs; dispatch floor {main['bound_ms']:.2f} ms an epoch on {gl.describe(ctx)}")
    return rows


LOOKAHEAD_FLOOR = f"lookahead 784-{HIDDEN}-10, no group's work (its floor; weights wrong)"
CHECKS_RIGHT_AFTER = f"fused 784-{HIDDEN}-10 SGD, losses read right after each chunk"


def lookahead_floor_sampler(trainer):
    """sample() -> seconds of one epoch of a LookaheadMLP with every work group's work switched off (the
    shader's `roles` 0): the gram dispatch, the dispatch before the first step and one a step, each group
    returning at once. Its floor; the weights it leaves are wrong, so it puts them back afterwards."""
    epoch = epoch_sampler(trainer)

    def sample() -> float:
        saved = trainer.read("params")
        trainer.kernel.set(roles=0)
        try:
            return epoch()
        finally:
            trainer.kernel.set(roles=ALL_ROLES)
            trainer.write("params", saved)
    return sample


def times_epoch(ms: float, main_ms: float) -> str:
    """An epoch against another (ms each), as the tables print them: the quotient of the two figures printed to
    two decimals, rounded half up ('46.27×' for 507.08 against 10.96 ms, where the unrounded medians gave
    46.29×)."""
    return f"{timing.times(Decimal(f'{ms:.2f}') / Decimal(f'{main_ms:.2f}'))}×"


def epochs_table(rows: list[dict], main: dict) -> str:
    """Notebook 08's table of a run's epochs (rows with 'ms', 'ms_low', 'ms_high'): each epoch's median and band
    in ms to two decimals, its dispatches a step, and its median against main's (times_epoch: of the figures as
    printed), as Markdown."""
    lines = [f"| row | epoch (ms), median (20–80 %) | dispatches a step | median against {main['name']} |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {r['name'].removesuffix(' (notebook 04)')} | {r['ms']:.2f} ({r['ms_low']:.2f}–{r['ms_high']:.2f}) "
              f"| {r.get('dispatches_per_step', '')} | {times_epoch(r['ms'], main['ms'])} |" for r in rows]
    return "\n".join(lines)


def fastest_glsl(rows: list[dict], hidden: int) -> dict | None:
    """The fastest GLSL trainer's row for 784-hidden-10 among a run's fused rows (timed whole epochs only:
    not the floors, not the rows whose work is switched off); None if the run has none."""
    ours = [r for r in rows if r["name"].startswith(("fused", "persistent", "lookahead")) and f"784-{hidden}-10" in r["name"]
            and "ms" in r and "alone" not in r["name"] and "weights wrong" not in r["name"]]
    return min(ours, key=lambda r: r["ms"]) if ours else None


def jax_by_precision(rows: list[dict], hidden: int) -> dict:
    """JAX's rows for 784-hidden-10 in a run's fused rows, by precision ("highest": fp32, "default": TF32)."""
    return {r["precision"]: r for r in rows if r["name"].startswith("JAX") and f"784-{hidden}-10" in r["name"]}


def benchmark_figures(ctx, images, labels, quick: bool, results=RESULTS_FILE) -> tuple[list[dict], str]:
    """Rows for notebook 06's results table: every row of the committed benchmark JSON if it exists, else
    ([], why not). The string says where the figures came from (the file, its card and date)."""
    if not results.is_file():
        return [], f"no committed benchmark at notebooks/results/{results.name}: run python -m helpers.bench fused"
    record = json.loads(results.read_text())
    rows = [r for r in record["benches"].get("fused", []) if "ms" in r]
    device = record["device"]["describe"].split(" |")[0]
    return rows, f"from notebooks/results/{results.name} ({device}, {record['device']['date']})"


# ---------------------------------------------------------------------------------------------
# Benchmark rows as verdicts (notebooks 06 and 09; tests/test_verdicts_nb0607.py)
# ---------------------------------------------------------------------------------------------

def article(figure: str) -> str:
    """'a' or 'an' before a printed figure, by how it is read aloud: 'an' before eight…, eleven… and
    eighteen… ('an 8.5 ms', 'an 11 ms', 'an 18 µs', 'an 80.2 ms', 'an 11,500'), 'a' otherwise ('a 1.8 ms')."""
    whole = figure.strip().split(" ", 1)[0].split(".", 1)[0].replace(",", "")
    return "an" if whole.startswith("8") or (len(whole) % 3 == 2 and whole[:2] in ("11", "18")) else "a"


def kernel_share_account(name: str, trainer, prof: dict, epoch: timing.Timing) -> tuple:
    """fused_mlp.kernel_share of an epoch, with every figure it is computed from: the kernels' time a step
    (prof, from profile.profile_step: each kernel's median), less an empty dispatch's cost for each kernel
    that takes longer than one, times the epoch's steps (profile.epoch_phases' kernel phase), against the
    epoch (its median; its band gives the share's band). The kernel phase is computed from the figures as
    printed (three significant digits), so the sentence's arithmetic holds for a reader who redoes it.
    Returns (the sentence, (share, low, high)), the second for fused_mlp.share_shift."""
    phases = profile.epoch_phases(trainer, prof, epoch.median)
    empty = prof["empty"]
    figure, _, above = kernels_above(prof)
    kernel = kernel_phase(trainer, prof)
    rest = phases["readback"] + phases["upload"]
    total = max(epoch.median, kernel + rest)               # the epoch's median, unless the parts overrun it
    share, low, high = _printed_shares(kernel, epoch, total)
    words = fused_mlp.kernel_share(name, share, low, high)
    left = len(prof["kernel"]) - above
    left_out = (f"; {left} kernel{'s' * (left > 1)} no longer than an empty dispatch count{'s' * (left == 1)} nothing"
                if left else "")
    figures = (f"kernels {figure} a step, less {above} × "
               f"{profile.seconds_text(empty)} of empty dispatch, × {trainer.steps_per_epoch} steps: "
               f"{profile.seconds_text(kernel)} of {article(epoch.text())} {epoch.text()} epoch{left_out}")
    if total > epoch.median:
        figures += (f"; the epoch's parts add up to {profile.seconds_text(total)}, more than its median, and the "
                    "share is of that")
    return f"{words} ({figures})", (share, low, high)


def kernels_above(prof: dict) -> tuple[str, float, int]:
    """The kernels longer than an empty dispatch, a step, added up as their figures print: (the figure,
    seconds, how many kernels). With the kernels' Timings (prof["kernel_timing"], as profile_step gives them) it is
    profile.added_up of them, the figure the step's table prints for all of them; with medians alone, their
    sum at three digits."""
    names = [k for k, t in prof["kernel"].items() if t > prof["empty"]]
    if "kernel_timing" in prof:
        figure = profile.added_up([prof["kernel_timing"][k] for k in names]) if names else "0 µs"
    else:
        figure = profile.seconds_text(sum(prof["kernel"][k] for k in names))
    return figure, timing.in_seconds(*figure.split()), len(names)


def kernels_a_step(prof: dict) -> str:
    """Every kernel of a step (prof["kernel_timing"], profile.profile_step's Timings, printed one by one above
    it) added up as printed: profile.added_up, the one figure a table and a sentence give for them."""
    return profile.added_up(list(prof["kernel_timing"].values()))


def decimals(figure: str) -> int:
    """The decimals a printed figure is written to: '40.21 µs' 2, '40.2 µs' 1, '349 µs' 0 (timing.figure_decimals)."""
    return timing.figure_decimals(figure)


def kernel_phase(trainer, prof: dict) -> float:
    """An epoch's kernel phase (seconds), as kernel_share_account computes and prints it: the kernels longer
    than an empty dispatch, added up as printed (kernels_above), less an empty dispatch each, times the
    epoch's steps."""
    _, seconds, count = kernels_above(prof)
    per_step = seconds - count * profile.printed_seconds(prof["empty"])
    return max(per_step, 0.0) * trainer.steps_per_epoch


def share_rounds(kernel_before: float, epoch_before: timing.Timing, kernel_after: float,
                 epoch_after: timing.Timing) -> timing.Timing:
    """The kernels' share of the epoch after over the share before, round by round, for two epochs taken in
    turn (interleaved_epochs): (kernel_after / epoch_after[i]) / (kernel_before / epoch_before[i]). A
    disturbance that slows both epochs of one round (the clock, another process) cancels in that round's
    ratio, where it would widen both shares' bands (fused_mlp.share_shift judges on it). A Timing of ratios."""
    if kernel_before <= 0:
        raise ValueError(f"the kernel phase before must be positive to take a share of it, got {kernel_before}")
    return timing.Timing(tuple(r * kernel_after / kernel_before
                               for r in timing.paired_ratio(epoch_before, epoch_after).samples), "ratio")


def _printed_shares(kernel: float, epoch: timing.Timing, total: float) -> tuple[float, float, float]:
    """kernel_share_account's share of the epoch and its band, each a whole percent rounded half up from the
    figures as printed: the kernel phase (profile.seconds_text) over the epoch's median, or over `total` where
    the parts overrun it, and over the ends of the epoch's band (epoch.text()), so a reader who divides the
    printed figures gets the printed share (7.79 ms of a 10.2 ms epoch: 76.4 %, 76 %, where the unrounded
    7.7854 ms of a 10.15 ms median gave 76.7 %, 77 %)."""
    exactly = lambda seconds: timing.seconds_exactly(*profile.seconds_text(seconds).split())   # noqa: E731
    figure, unit, band = epoch.text().split(" ", 2)
    median = timing.seconds_exactly(figure, unit)
    low_s, high_s = ((timing.seconds_exactly(x, unit) for x in band.strip("()").split("–")) if "–" in band
                     else (median, median))
    k, whole = exactly(kernel), exactly(total) if total > epoch.median else median
    pct = lambda part, of: float(timing.times(100 * part / of, 0)) / 100 if of > 0 else 1.0   # noqa: E731
    share = pct(k, whole)
    return share, min(share, pct(k, high_s)), max(share, min(1.0, pct(k, low_s)))


def row_timing(row: dict) -> timing.Timing:
    """A row's epoch as a Timing: its median and 20-80 % band (a row with no band: no spread)."""
    return timing.Timing.from_row(row)


def versus(a: timing.Timing, b: timing.Timing, name_a: str, name_b: str, margin: float = timing.MARGIN) -> timing.Verdict:
    """timing.versus as a sentence: its first letter a capital, whichever name comes first."""
    v = timing.versus(a, b, name_a, name_b, margin)
    return timing.Verdict(v[0].upper() + v[1:], v.outcome)


def rows_versus(row_a: dict, row_b: dict, name_a: str, name_b: str, margin: float = timing.MARGIN) -> timing.Verdict:
    """versus of two benchmark rows' epochs."""
    return versus(row_timing(row_a), row_timing(row_b), name_a, name_b, margin)


def layer1_pieces_pair(rows: list) -> tuple | None:
    """(the wide 3-pass row with layer 1 split, the same step's ONE_PIECE row) of a record's rows, both with
    epochs; None where the record has no such pair."""
    named = {r["name"]: r for r in rows}
    one = next((r for r in rows if r["name"].endswith(ONE_PIECE_NAME) and "ms" in r), None)
    split = named.get(one["name"][:-len(ONE_PIECE_NAME)]) if one else None
    if split is None or "ms" not in split:
        return None
    return split, one


def layer1_pieces(rows: list, margin: float = timing.MARGIN) -> timing.Verdict | None:
    """The wide 3-pass epoch with layer 1 split among work groups against the same step with layer 1 in one
    piece (the record's ONE_PIECE row and the row it is named after): 'The wide 3-pass epoch with layer 1's
    inputs in 4 pieces (…) is 1.1× faster than the wide 3-pass epoch with layer 1 in one piece (…)', the other way round, or the
    same (timing.versus's outcome). None where the record has no such pair."""
    pair = layer1_pieces_pair(rows)
    if pair is None:
        return None
    split, one = pair
    k = split.get("layer1_pieces", 1)
    pieces = "in one piece" if k == 1 else f"in {k} pieces"
    return rows_versus(split, one, f"the wide 3-pass epoch with layer 1's inputs {pieces}",
                       "the wide 3-pass epoch with layer 1 in one piece",
                       margin)


def fastest_versus(fastest: dict, other: dict, other_name: str, margin: float = timing.MARGIN) -> timing.Verdict:
    """The fastest GLSL trainer's row (fastest_glsl) against another row: 'The GLSL trainer with the benchmark's
    lowest median epoch at this size is <name>: that trainer's epoch (…) is 1.6× faster than <other_name> (…)'
    (the lowest median, not a verdict against the other GLSL trainers, which may be level with it), or the
    other way round, or the same (timing.versus's outcome). The trainer is named in a clause of its own, so no
    appositive runs into the timing's parenthesis."""
    v = timing.versus(row_timing(fastest), row_timing(other), "that trainer's epoch", other_name, margin)
    return timing.Verdict(f"The GLSL trainer with the benchmark's lowest median epoch at this size is {fastest['name']}: {v}",
                          v.outcome)


WHY_GRAPHS = {
    timing.SAME: ("one graph for the whole epoch saves Python's call a step, but with a graph a step Python "
                  "issues the next replay while the GPU still runs the step before, so the GPU never waits for "
                  "it, and both epochs are the same kernels back to back on the GPU"),
    "whole faster": ("with a graph a step the GPU waited for Python's replay between steps; the whole-epoch "
                     "graph has no such gap"),
    "step faster": ("a gap between steps does not explain it (the whole-epoch graph has none); this measurement "
                    "does not say why"),
}


def graphs_compared(rows: list[dict], hidden: int = HIDDEN) -> timing.Verdict:
    """PyTorch's whole epoch as one CUDA graph against one graph a step, from a run's rows, with the reason
    that fits the outcome (WHY_GRAPHS); outcome: timing.A_FASTER (the whole-epoch graph), B_FASTER, SAME,
    or "not measured"."""
    named = {r["name"]: r for r in rows if "ms" in r}
    whole = named.get(f"PyTorch CUDA graph whole epoch 784-{hidden}-10 SGD")
    step = named.get(f"PyTorch CUDA graph per step 784-{hidden}-10 SGD")
    if whole is None or step is None:
        return timing.Verdict("The two CUDA-graph epochs are not both in these rows.", "not measured")
    v = rows_versus(whole, step, "PyTorch's whole epoch as one CUDA graph", "one CUDA graph a step")
    why = WHY_GRAPHS[{timing.A_FASTER: "whole faster", timing.B_FASTER: "step faster"}.get(v.outcome, timing.SAME)]
    return timing.Verdict(f"{v}: {why}", v.outcome)

"""Benchmark: one MNIST epoch of the GLSL trainers against PyTorch and JAX on the same GPU.

    python -m helpers.bench fused                    # QUICK=1: a few thousand images, for llvmpipe

Introduced in notebook 06; notebooks 08 and 09 read its committed rows. Each row is the median of REPEAT
epochs after warm-up steps and one warm-up epoch, wall clock from the first command to the end of the epoch
(ctx.finish() / torch.cuda.synchronize(), JAX's block_until_ready):

  * fused 784-128-10 at batch 128 with SGD (the series' recipe), momentum and Adam, and the floor: the same
    number of empty dispatches and barriers, with the same work-group counts;
  * the wide net 784-800-10 (momentum), the net of notebook 06's accuracy run;
  * both nets with the register-blocked backward (FusedMLP(blocked=True)), and blocked in three dispatches a
    step, layer 1 as a tiled product of its own (the "3-pass" step: FusedMLP(blocked=True, tiled_hidden=True));
  * 784-128-10 as one persistent dispatch per check_every steps (PersistentMLP, notebook 09), or the error
    that stopped it, and in one dispatch a step (LookaheadMLP, notebook 09);
  * the unfused trainer of notebook 05 (helpers/gpu_mlp.py) and its floor;
  * PyTorch, where it is installed with CUDA: eager, one CUDA graph per step (replayed), and the whole
    epoch captured as one CUDA graph; fp32 with TF32 off, data resident on the GPU, same init and order;
  * JAX, where it is installed: jit of lax.scan over the epoch, in a process of its own (jax_epoch.py),
    fp32 ("highest") and JAX's default precision (TF32 on NVIDIA), for both nets.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np

from .. import data, fused_mlp, gl, reference, timing
from . import profile
from ..gpu_mlp import GPUTrainer
from ..lookahead_mlp import LookaheadMLP
from ..persistent_mlp import PersistentMLP
from .profile import empty_epochs, epoch_phases, profile_step, time_epochs
from .jax_epoch import jax_rows
from .train import torch_epochs

BATCH, LR, HIDDEN, WIDE = 128, 0.3, 128, 800
CLOCK = "wall clock, ctx.finish() / torch.cuda.synchronize() at both ends"
RESULTS_FILE = Path(__file__).resolve().parents[2] / "notebooks" / "results" / "bench-h100.json"


def wide_hidden(quick: bool) -> int:
    """The wide net's hidden size: WIDE, or 256 in QUICK mode (a software renderer)."""
    return 256 if quick else WIDE


def _row(name: str, times: list[float], **extra) -> dict:
    return {"name": name, "ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times), "epochs": len(times),
            "clock": CLOCK, **extra}


def torch_rows(images, labels, orders, hidden: int, repeat: int) -> tuple[list[dict], str]:
    """PyTorch epochs of the same model, batch, init and order; ([], reason) where it cannot run."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return [], "PyTorch is not installed here: no PyTorch rows"
    if not torch.cuda.is_available():
        return [], "PyTorch has no CUDA device here: no PyTorch rows"
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        return _torch_rows(torch, F, images, labels, orders, hidden, repeat)
    finally:  # fp32 with TF32 off for the measurement only: restore the caller's settings
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _torch_rows(torch, F, images, labels, orders, hidden: int, repeat: int) -> tuple[list[dict], str]:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
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

    sync = torch.cuda.synchronize
    rows = []

    eager, _ = torch_epochs(images, labels, p0, repeat)  # bench_train's loop: same orders (seed 0)
    rows.append(_row(f"PyTorch eager 784-{hidden}-10 SGD", eager, launches_per_step="~15 kernels, one Python call each"))

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

    rows.append(_row(f"PyTorch CUDA graph per step 784-{hidden}-10 SGD", time_epochs(graph_steps, sync, repeat),
                     launches_per_step="1 graph replay + 1 index copy"))
    del graphs

    # The whole epoch captured as one graph: the strongest PyTorch baseline (one launch per epoch).
    try:
        params, opt = fresh()
        order_static = torch.zeros(n, dtype=torch.int64, device=dev)
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                loss_fn(params, order_static[:B]).backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        start = time.perf_counter()
        with torch.cuda.graph(graph):
            for s in range(steps):
                opt.zero_grad(set_to_none=True)
                loss_fn(params, order_static[s * B:(s + 1) * B]).backward()
                opt.step()
        capture = time.perf_counter() - start

        def graph_epoch(e):
            order_static.copy_(order_t[e])
            graph.replay()

        rows.append(_row(f"PyTorch CUDA graph whole epoch 784-{hidden}-10 SGD", time_epochs(graph_epoch, sync, repeat),
                         launches_per_step="1 graph replay per epoch", capture_s=capture))
        del graph
    except Exception as exc:  # report, do not lose the other rows
        rows.append({"name": "PyTorch CUDA graph whole epoch", "error": f"{type(exc).__name__}: {exc}"})
    return rows, f"PyTorch {torch.__version__}, {torch.cuda.get_device_name()}"


def run(ctx, quick: bool) -> list[dict]:
    (X_train, y_train), _ = data.load_mnist()
    n = 1024 if quick else len(X_train)  # llvmpipe takes about a second per fused step
    repeat = 1 if quick else 5
    images, labels = X_train[:n], y_train[:n]
    orders = [reference.epoch_order(n, e, 0) for e in range(repeat + 1)]
    steps = -(-n // BATCH)
    rows = []

    def fused(optimizer, hidden=HIDDEN, tiled=False, blocked=False):
        trainer = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels,
                                     optimizer=optimizer, batch_size=BATCH, seed=0, tiled_hidden=tiled, blocked=blocked)
        times, losses = timed_epochs(trainer, repeat)
        way = (" blocked" if blocked else "") + (" 3-pass" if tiled else "")
        row = _row(f"fused{way} 784-{hidden}-10 {type(optimizer).__name__}", times,
                   dispatches_per_step=trainer.dispatches_per_step,
                   barriers_per_step=trainer.dispatches_per_step, steps=steps, samples_per_group=trainer.S,
                   loss=losses[-1])
        return trainer, row

    trainer, main = fused(reference.SGD(LR))
    step_profile = profile_step(trainer, repeat=2 if quick else 50)
    main["profile"] = {k: v for k, v in step_profile.items() if k != "kernel"}
    main["kernel_us"] = {k: 1e6 * v for k, v in step_profile["kernel"].items()}
    main["phases"] = epoch_phases(trainer, step_profile, main["ms"] / 1e3)
    floor = empty_epochs(ctx, steps, [groups for _, groups in trainer.dispatches(0)])
    main["bound_ms"] = 1e3 * statistics.median(floor)  # the dispatch bound, measured in this run
    rows.append(main)
    rows.append(_row(f"floor: {steps}×2 empty dispatches + barriers", floor,
                     dispatches_per_step=2, barriers_per_step=2, steps=steps))
    trainer.release()
    for optimizer in (reference.Momentum(0.05, 0.9), reference.Adam(1e-3))[quick:]:  # QUICK: Adam only
        t, row = fused(optimizer)
        rows.append(row)
        t.release()
    wide = wide_hidden(quick)
    t, row = fused(reference.Momentum(0.2, 0.9), hidden=wide)  # notebook 06's recipe
    rows.append(row)
    t.release()
    # blocked: 4x4 outputs a thread in the backward; tiled: layer 1 a dispatch of its own (the 3-pass step)
    for tiled in (False, True):
        for optimizer, hidden in ((reference.SGD(LR), HIDDEN), (reference.Momentum(0.2, 0.9), wide)):
            t, row = fused(optimizer, hidden=hidden, tiled=tiled, blocked=True)
            rows.append(row)
            t.release()
    rows.append(persistent_row(ctx, images, labels, repeat, steps))    # notebook 09
    rows.append(lookahead_row(ctx, images, labels, repeat, steps))

    # the unfused trainer of notebook 05, for the dispatch counts and the speed-up
    unfused = GPUTrainer(ctx, reference.init_params(seed=0), images, labels, optimizer=reference.SGD(LR),
                         batch_size=BATCH)
    times = time_epochs(lambda e: unfused.run_epoch(e, order=orders[e % len(orders)]), ctx.finish, repeat)
    floor = empty_epochs(ctx, steps, [groups for _, groups in unfused.dispatches(0)])
    per_step = unfused.dispatches_per_step
    rows.append(_row("unfused 784-128-10 SGD (notebook 05)", times, dispatches_per_step=per_step,
                     barriers_per_step=per_step, steps=steps, bound_ms=1e3 * statistics.median(floor)))
    unfused.release()
    rows.append(_row(f"floor: {steps}×{per_step} empty dispatches + barriers", floor,
                     dispatches_per_step=per_step, barriers_per_step=per_step, steps=steps))

    rows_torch, torch_note = torch_rows(images, labels, orders, HIDDEN, repeat)
    for row in rows_torch:
        if "ms" in row:
            row["fused_speedup"] = row["ms"] / main["ms"]
    rows += rows_torch
    jax_notes = []
    for hidden, optimizer, lr in ((HIDDEN, "sgd", LR), (wide, "momentum", 0.2)):  # a process of its own
        rows_jax, note = jax_rows(hidden, optimizer, lr, repeat, quick)
        rows += rows_jax
        jax_notes.append(note)

    print(f"one epoch: {n} images, batch {BATCH}, {steps} steps; {torch_note}; {jax_notes[0]}")
    print(f"{'':52s} {'ms/epoch':>9s} {'min':>8s} {'disp/step':>9s} {'bar/step':>8s}  vs fused")
    for row in rows:
        if "error" in row:
            print(f"{row['name']:52s} not run: {row['error']}")
            continue
        ratio = f"{row['ms'] / main['ms']:8.2f}×"
        print(f"{row['name']:52s} {row['ms']:9.2f} {row['min_ms']:8.2f} {str(row.get('dispatches_per_step', '')):>9s} "
              f"{str(row.get('barriers_per_step', '')):>8s} {ratio}")
    print(f"fused SGD: kernels per step {', '.join(f'{k} {v:.1f} µs' for k, v in main['kernel_us'].items())} "
          f"({step_profile['clock']}); step {1e6 * step_profile['step']:.1f} µs, Python issue {1e6 * step_profile['issue']:.1f} µs")
    print(f"dispatch floor (the floor measured above: {steps} steps × {main['dispatches_per_step']} empty "
          f"dispatches + barriers, wall clock) {main['bound_ms']:.2f} ms per epoch; the fused epoch {main['ms']:.2f} ms "
          f"is {main['ms'] / main['bound_ms']:.2f}× that on {gl.describe(ctx)}")
    return rows


def timed_epochs(trainer, epochs: int) -> tuple[list[float], list[float]]:
    """Seconds and mean losses of `epochs` epochs of a trainer, timed by profile.epoch_seconds as the notebooks
    time them (a warm-up first, the orders reference.epoch_order draws, drawn before the clock starts)."""
    losses = []
    return profile.epoch_seconds(trainer, epochs, losses=losses), losses


def persistent_row(ctx, images, labels, repeat, steps) -> dict:
    """An epoch of PersistentMLP (train_1_persistent.comp, 784-128-10 SGD), or a row with the error that
    stopped it (a grid barrier gave up: not every work group was resident)."""
    name = f"persistent 784-{HIDDEN}-10 SGD"
    trainer = PersistentMLP(ctx, reference.init_params(784, HIDDEN, 10, seed=0), images, labels,
                            optimizer=reference.SGD(LR), batch_size=BATCH, seed=0)
    try:
        times, losses = timed_epochs(trainer, repeat)
    except RuntimeError as exc:
        return {"name": name, "error": str(exc).split(":")[0] + f" ({trainer.groups[0]} work groups)"}
    finally:
        trainer.release()
    return _row(name, times, dispatches_per_step=trainer.dispatches_per_step, steps=steps, loss=losses[-1],
                barriers_per_step=PersistentMLP.GRID_BARRIERS if trainer.persistent else PersistentMLP.PHASES,
                groups=trainer.groups[0], persistent=trainer.persistent)


def lookahead_row(ctx, images, labels, repeat, steps) -> dict:
    """An epoch of 784-128-10 SGD with one dispatch a step (LookaheadMLP, train_2_lookahead.comp)."""
    trainer = LookaheadMLP(ctx, reference.init_params(784, HIDDEN, 10, seed=0), images, labels,
                           optimizer=reference.SGD(LR), batch_size=BATCH, seed=0)
    times, losses = timed_epochs(trainer, repeat)
    trainer.release()
    return _row(f"lookahead 784-{HIDDEN}-10 SGD", times, dispatches_per_step=1, barriers_per_step=1, steps=steps,
                loss=losses[-1], groups=trainer.groups[0])


def fastest_glsl(rows: list[dict], hidden: int) -> dict | None:
    """The fastest GLSL trainer's row for 784-hidden-10 among a run's fused rows (timed whole epochs only:
    not the floors, not the rows of one kind of work group alone); None if the run has none."""
    ours = [r for r in rows if r["name"].startswith(("fused", "persistent", "lookahead")) and f"784-{hidden}-10" in r["name"]
            and "ms" in r and "alone" not in r["name"]]
    return min(ours, key=lambda r: r["ms"]) if ours else None


def jax_by_precision(rows: list[dict], hidden: int) -> dict:
    """JAX's rows for 784-hidden-10 in a run's fused rows, by precision ("highest": fp32, "default": TF32)."""
    return {r["precision"]: r for r in rows if r["name"].startswith("JAX") and f"784-{hidden}-10" in r["name"]}


def benchmark_figures(ctx, images, labels, quick: bool, results=RESULTS_FILE) -> tuple[list[dict], str]:
    """Rows for notebook 06's results table: every row of the committed benchmark JSON if it exists,
    else the PyTorch rows measured now where PyTorch with CUDA is importable, else ([], why not).
    The string says where the figures came from."""
    if results.is_file():
        record = json.loads(results.read_text())
        rows = [r for r in record["benches"].get("fused", []) if "ms" in r]
        here, device = gl.describe(ctx), record["device"]["describe"]
        where = f"notebooks/results/{results.name} ({device}, {record['device']['date']})"
        if device != here:
            where += f"; NOT this notebook's device ({here}): compare with care"
        return rows, "from " + where
    n = len(labels)
    orders = [reference.epoch_order(n, e, 0) for e in range(3)]
    rows, note = torch_rows(images, labels, orders, HIDDEN, 1 if quick else 2)
    return rows, ("PyTorch measured now: " + note) if rows else note


# ---------------------------------------------------------------------------------------------
# Where a step's time goes (notebook 08)
# ---------------------------------------------------------------------------------------------

STEP_SHADER = """#version 430
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Out { uint out_[]; };
uniform uint step;
void main() { out_[0] = step; }
"""


def issue_costs(ctx, calls: int = 2000) -> dict:
    """Python's time to issue one of each call a fused step makes (no waiting: the GPU runs behind)."""
    program = ctx.compute_shader(STEP_SHADER)
    out = gl.empty(ctx, (1,), np.uint32, name="out")
    out.bind_to(0)
    uniform = program["step"]
    costs = {}
    for name, call in (("uniform write", lambda i: setattr(uniform, "value", i)),
                       ("dispatch (program.run)", lambda i: program.run(1)),
                       ("memory_barrier", lambda i: ctx.memory_barrier(profile.BARRIER))):
        ctx.finish()
        start = time.perf_counter()
        for i in range(calls):
            call(i)
        costs[name] = (time.perf_counter() - start) / calls
        ctx.finish()
    out.release()
    program.release()
    return costs


COUNT_WORDS = {2: "two", 3: "three", 4: "four"}
NO_BARRIER = "{} dispatches, no barrier (wrong)"   # step_anatomy's timing-only way, with the dispatch count


def step_anatomy(ctx, trainer, repeat: int) -> dict:
    """Seconds per step of a fused trainer issued five ways, in streams (GPU kept busy): each kernel alone,
    the step as train() issues it (the step uniform changes every step), the same step number every time,
    the step's dispatches (two, or three with tiled_hidden) with no uniform written at all, and those
    dispatches with no barrier between them: wrong results (a kernel reads what the one before it is still
    writing), timed only to show what the barriers cost; not for split_hidden, whose forward counts finished
    groups in counters that only a barrier keeps apart from the next step's. The trainer is put back
    afterwards (profile.put_back)."""
    with profile.put_back(trainer):
        return _step_anatomy(ctx, trainer, repeat)


def _step_anatomy(ctx, trainer, repeat: int) -> dict:
    clock = timing.Clock(ctx)
    trainer.start_epoch(0)
    trainer.step(0)
    profile.warm_up(ctx, lambda: trainer.step(0))
    steps = trainer.steps_per_epoch
    passes = trainer.dispatches(0)
    role = {trainer.forward: "layer 1" if trainer.tiled_hidden else "forward", trainer.head: "head",
            trainer.backward: "backward", trainer.maxnorm: "max-norm"}

    def bare(barriers=True):
        for kernel, groups in passes:
            kernel.program.run(*groups)
            if barriers:
                ctx.memory_barrier(profile.BARRIER)

    def stream(issue):  # seconds a step, the median of three streams of `repeat` steps
        return statistics.median(clock.wall(lambda: [issue(s) for s in range(repeat)]) for _ in range(3)) / repeat

    result = {f"{role[kernel]} alone": profile.dispatch_seconds(ctx, kernel.program, groups, repeat, clock)
              for kernel, groups in passes}
    result.update({"step(s), s = 0, 1, 2, ...": stream(lambda s: trainer.step(s % steps)),
                   "step(0) every time": stream(lambda s: trainer.step(0)),
                   f"{COUNT_WORDS[len(passes)]} dispatches, no uniform": stream(lambda s: bare())})
    if not trainer.split_hidden:
        result[NO_BARRIER.format(COUNT_WORDS[len(passes)])] = stream(lambda s: bare(barriers=False))
        ctx.memory_barrier(profile.BARRIER)   # the racing dispatches are done before put_back writes the weights
    if trainer.split_hidden:  # the forward's counters must be back at zero after all that
        assert not trainer.read("counters").any(), "fused_forward_3_split left a counter set"
    return result

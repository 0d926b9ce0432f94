"""Benchmark: one MNIST epoch with the fused trainer (two dispatches a step) against PyTorch on the same GPU.

    python -m helpers.bench fused                    # QUICK=1: a few thousand images, for llvmpipe

Introduced in notebook 05. Rows, each the median of REPEAT epochs after 0.6 s of warm-up steps and one
warm-up epoch, wall clock from the first command to the end of the epoch (ctx.finish() /
torch.cuda.synchronize(), JAX's block_until_ready):

  * fused 784-128-10 at batch 128 with SGD (the series' recipe), momentum and Adam;
  * the floor: the same number of empty dispatches and barriers, with the same work-group counts;
  * the unfused trainer of notebook 04 (helpers/gpu_mlp.py), where it exists;
  * the wide net 784-800-10 (momentum), the net of notebook 05's accuracy run;
  * both nets with the forward pass split over hidden units (fused_forward_3_split, notebook 07);
  * both nets in three dispatches a step, layer 1 as a tiled product shared by RB samples
    (FusedMLP(tiled_hidden=True): fused_hidden_1_tiled, fused_head_1_xent, then the backward);
  * 784-128-10 SGD in one dispatch a step (LookaheadMLP, train_3_lookahead.comp), and
    its three kinds of work group timed alone;
  * both nets as one persistent dispatch per check_every steps (PersistentMLP, train_1_persistent.comp,
    notebook 07), or the error that stopped it (a grid barrier gave up: not every work group resident);
  * PyTorch, where it is installed with CUDA: eager, one CUDA graph per step (replayed), and the whole
    epoch captured as one CUDA graph; fp32 with TF32 off, data resident on the GPU, same init and order;
  * JAX, where it is installed: jit of lax.scan over the epoch, in a process of its own (jax_epoch.py),
    fp32 ("highest") and JAX's default precision (TF32 on NVIDIA), for both nets.

    python -m helpers.bench.fused sweep              # where a step's time goes; the kernels' tunables
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np

from .. import data, fused_mlp, gl, matmul, reference, timing
from . import profile
from ..gpu_mlp import GPUTrainer
from ..lookahead_mlp import LookaheadMLP
from ..persistent_mlp import OneBarrierMLP, PersistentMLP
from .profile import empty_epochs, epoch_phases, profile_step, time_epochs
from .jax_epoch import jax_rows
from .train import torch_epochs

BATCH, LR, HIDDEN, WIDE = 128, 0.3, 128, 800
CLOCK = "wall clock, ctx.finish() / torch.cuda.synchronize() at both ends"
EPOCH_GOALS = ((6.0, 2.0), (12.0, 1.7))   # issue #12, on the H100: (epoch ms at most, times JAX fp32's speed at
                                          # least) for 784-128-10, then for 784-800-10
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

    def fused(optimizer, hidden=HIDDEN, epochs=repeat, name=None, split=False, tiled=False, blocked=False):
        trainer = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels,
                                     optimizer=optimizer, batch_size=BATCH, seed=0, split_hidden=split,
                                     tiled_hidden=tiled, blocked=blocked)
        times, losses = timed_epochs(trainer, epochs)
        kind = type(optimizer).__name__
        way = (" blocked" if blocked else "") + (" split" if split else " 3-pass" if tiled else "")
        row = _row(name or f"fused{way} 784-{hidden}-10 {kind}", times, dispatches_per_step=trainer.dispatches_per_step,
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
    t, row = fused(reference.Momentum(0.2, 0.9), hidden=wide, epochs=repeat)  # notebook 05's recipe
    rows.append(row)
    t.release()
    # split: notebook 07; tiled: layer 1 shared by RB samples; blocked: 4x4 outputs a thread (notebook 07)
    for split, tiled, blocked in ((True, False, False), (False, True, False), (False, False, True), (False, True, True)):
        for optimizer, hidden in ((reference.SGD(LR), HIDDEN), (reference.Momentum(0.2, 0.9), wide)):
            t, row = fused(optimizer, hidden=hidden, split=split, tiled=tiled, blocked=blocked)
            rows.append(row)
            t.release()

    # the persistent kernels (notebook 07): one dispatch per check_every steps, two grid barriers a step, or
    # one (train_2, whose every group holds all of W2: the small net only)
    for optimizer, hidden in ((reference.SGD(LR), HIDDEN), (reference.Momentum(0.2, 0.9), wide)):
        rows.append(persistent_row(ctx, optimizer, hidden, images, labels, repeat, steps))
    rows.append(persistent_row(ctx, reference.SGD(LR), HIDDEN, images, labels, repeat, steps, OneBarrierMLP))
    rows += lookahead_rows(ctx, images, labels, repeat, steps)

    # the unfused trainer of notebook 04, for the dispatch counts and the speed-up
    unfused = GPUTrainer(ctx, reference.init_params(seed=0), images, labels, optimizer=reference.SGD(LR),
                         batch_size=BATCH)
    times = time_epochs(lambda e: unfused.run_epoch(e, order=orders[e % len(orders)]), ctx.finish, repeat)
    floor = empty_epochs(ctx, steps, [groups for _, groups in unfused.dispatches(0)])
    per_step = unfused.dispatches_per_step
    rows.append(_row("unfused 784-128-10 SGD (notebook 04)", times, dispatches_per_step=per_step,
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
    print(f"dispatch bound (the floor measured above: {steps} steps × {main['dispatches_per_step']} empty "
          f"dispatches + barriers, wall clock) {main['bound_ms']:.2f} ms per epoch, "
          f"{1e3 * main['bound_ms'] / (steps * main['dispatches_per_step']):.1f} µs a dispatch; the fused epoch "
          f"{main['ms']:.2f} ms is {main['ms'] / main['bound_ms']:.2f}× that on {gl.describe(ctx)}; "
          f"target 30 ms per epoch: {'met' if main['ms'] <= 30 else 'not met'}")
    for line in against_jax(rows, wide):
        print(line)
    return rows


def timed_epochs(trainer, epochs: int) -> tuple[list[float], list[float]]:
    """Seconds and mean losses of `epochs` epochs of a trainer, timed by profile.epoch_seconds as the notebooks
    time them (a warm-up first, the orders reference.epoch_order draws, drawn before the clock starts)."""
    losses = []
    return profile.epoch_seconds(trainer, epochs, losses=losses), losses


def persistent_row(ctx, optimizer, hidden, images, labels, repeat, steps, cls=PersistentMLP) -> dict:
    """An epoch of PersistentMLP (train_1_persistent.comp) or another persistent trainer class, or a row with
    the error that stopped it."""
    kind = "" if cls is PersistentMLP else "one-barrier "
    name = f"persistent {kind}784-{hidden}-10 {type(optimizer).__name__}"
    trainer = cls(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels,
                            optimizer=optimizer, batch_size=BATCH, seed=0)
    try:
        times, losses = timed_epochs(trainer, repeat)
    except RuntimeError as exc:  # a grid barrier gave up: not every work group was resident
        return {"name": name, "error": str(exc).split(":")[0] + f" ({trainer.groups[0]} work groups)"}
    finally:
        trainer.release()
    return _row(name, times, dispatches_per_step=trainer.dispatches_per_step,
                barriers_per_step=cls.GRID_BARRIERS if trainer.persistent else cls.PHASES, steps=steps, loss=losses[-1],
                groups=trainer.groups[0], persistent=trainer.persistent)


def lookahead_rows(ctx, images, labels, repeat, steps) -> list[dict]:
    """784-128-10 SGD with one dispatch a step (LookaheadMLP, train_3_lookahead.comp):
    the epoch as the other rows time it, then the same epochs with one kind of work group alone (the shader's
    `roles`; the weights are then wrong, so these rows have no loss, and the loss checks read the full epoch's
    losses still in the buffer) and with none (the epoch's gram dispatch and the empty step dispatches)."""
    trainer = LookaheadMLP(ctx, reference.init_params(784, HIDDEN, 10, seed=0), images, labels,
                           optimizer=reference.SGD(LR), batch_size=BATCH, seed=0)
    times, losses = timed_epochs(trainer, repeat)
    rows = [_row(f"lookahead 784-{HIDDEN}-10 SGD", times, dispatches_per_step=1, barriers_per_step=1, steps=steps,
                 loss=losses[-1], groups=trainer.groups[0])]
    for roles, what in ((1, "chain groups"), (2, "W1 groups"), (4, "Q groups"), (0, "no groups' work")):
        trainer.kernel.set(roles=roles)
        times, _ = timed_epochs(trainer, repeat)
        rows.append(_row(f"lookahead 784-{HIDDEN}-10, {what} alone (weights wrong)", times, dispatches_per_step=1,
                         barriers_per_step=1, steps=steps))
    trainer.release()
    return rows


def fastest_glsl(rows: list[dict], hidden: int) -> dict | None:
    """The fastest GLSL trainer's row for 784-hidden-10 among a run's fused rows (timed whole epochs only:
    not the floors, not the rows of one kind of work group alone); None if the run has none."""
    ours = [r for r in rows if r["name"].startswith(("fused", "persistent", "lookahead")) and f"784-{hidden}-10" in r["name"]
            and "ms" in r and "alone" not in r["name"]]
    return min(ours, key=lambda r: r["ms"]) if ours else None


def jax_by_precision(rows: list[dict], hidden: int) -> dict:
    """JAX's rows for 784-hidden-10 in a run's fused rows, by precision ("highest": fp32, "default": TF32)."""
    return {r["precision"]: r for r in rows if r["name"].startswith("JAX") and f"784-{hidden}-10" in r["name"]}


def against_jax(rows: list[dict], wide: int) -> list[str]:
    """The fastest GLSL epoch of each net against JAX's rows of the same run, as issue #12's goals put it
    (784-128-10: <= 6 ms and 2x JAX fp32; 784-800-10: <= 12 ms and 1.7x; both faster than JAX's default)."""
    lines = []
    for hidden, (limit, factor) in zip((HIDDEN, wide), EPOCH_GOALS):
        best, jax = fastest_glsl(rows, hidden), jax_by_precision(rows, hidden)
        if best is None:
            continue
        line = f"784-{hidden}-10: fastest GLSL {best['name']} {best['ms']:.2f} ms (goal <= {limit:g} ms: " \
               f"{'met' if best['ms'] <= limit else 'not met'})"
        if "highest" in jax:
            ratio = jax["highest"]["ms"] / best["ms"]
            line += f"; JAX fp32 {jax['highest']['ms']:.2f} ms, {ratio:.2f}x ours (goal {factor:g}x: " \
                    f"{'met' if ratio >= factor else 'not met'})"
        if "default" in jax:
            line += f"; JAX default (TF32) {jax['default']['ms']:.2f} ms: ours " \
                    f"{'faster' if best['ms'] < jax['default']['ms'] else 'slower'}"
        lines.append(line if jax else line + "; no JAX rows in this run")
    return lines


def benchmark_figures(ctx, images, labels, quick: bool, results=RESULTS_FILE) -> tuple[list[dict], str]:
    """Rows for notebook 05's results table: every row of the committed benchmark JSON if it exists,
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
# python -m helpers.bench.fused sweep: where a fused step's time goes, and the tunables that cut it
# ---------------------------------------------------------------------------------------------

FORWARD_SWEEP = [dict(S=s, KS=ks) for s in (1, 2, 4) for ks in (8, 16, 32)]           # JT 32
SPLIT_SWEEP = [dict(SB=sb, HQ=hq, KS=ks) for sb in (4, 8, 16) for hq in (4, 8, 16) for ks in (8, 16, 32)
               if hq * ks <= 1024 and 4 * sb * (196 + ks * 4 * hq + 4 * hq + 10) <= 48 * 1024]
# fused_hidden_1_tiled (RB samples x 4*TQ hidden units a work group, KS input slices) and fused_head_1_xent
HIDDEN_SWEEP = [dict(RB=rb, TQ=tq, KS=ks) for rb in (4, 8) for tq in (8, 16, 32) for ks in (4, 8, 16, 32)
                if tq * ks <= 1024 and 4 * max(rb * 784, ks * rb * 4 * tq) <= 48 * 1024]
HEAD_SWEEP = [dict(S=s, LOCAL=local) for s in (1, 2, 4) for local in (128, 256)]
# The register-blocked pair (FusedMLP(blocked=True)): threads <= 1024 and shared memory <= 48 KiB (banners)
HIDDEN_BLOCKED_SWEEP = [dict(RQ=rq, TQ=tq, BK=bk, KS=ks) for rq in (1, 2, 4, 8) for tq in (4, 8, 16) for bk in (8, 16)
                        for ks in (4, 8, 16) if tq * rq * ks <= 1024
                        and 16 * max(4 * rq * (ks * bk // 4 + 1) + ks * bk * tq, (ks - 1) * 4 * rq * tq) + 16 * rq <= 48 * 1024]
BACKWARD_BLOCKED_SWEEP = [dict(TQ=tq, KQ=kq, BS=bs, BC=bc) for tq in (2, 4, 8, 16) for kq in (4, 8) for bs in (2, 4, 8)
                          for bc in (8, 16, 32) if tq * kq * bs <= 1024
                          and 16 * max(bs * bc * (kq + tq), bs * 4 * kq * tq) <= 48 * 1024]
BACKWARD_SWEEP = [dict(BC=bc, TJ=tj, TKT=tkt, KPT=kpt) for bc in (32, 64, 128)
                  for tj, tkt, kpt in ((32, 8, 2), (32, 8, 4), (32, 16, 1), (64, 4, 2), (16, 16, 1))]
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


def kernel_sweep(ctx, trainer, repeat: int, grids: dict) -> list[dict]:
    """Each tunable set of grids["forward"] / grids["backward"] (and grids["head"] with tiled_hidden) timed
    as one dispatch + barrier (profile.dispatch_seconds) with the trainer's shaders and bound buffers at
    step 0, after profile.warm_up's sustained run of the same dispatch (the GPU's clock back up after the
    compile); shapes that do not compile (a #error of the shader) or need more than 48 KiB of shared memory
    are skipped."""
    clock = timing.Clock(ctx)
    trainer.start_epoch(0)
    trainer.step(0)
    profile.warm_up(ctx, lambda: trainer.step(0))
    sizes = dict(n_in=trainer.K, n_hidden=trainer.H, n_samples=trainer.n, batch_size=trainer.batch_size, step=0)
    rows = []
    kernels = [("forward", trainer.forward, trainer.forward_defines),
               ("backward", trainer.backward, trainer.backward_defines)]
    if trainer.head is not None:
        kernels.insert(1, ("head", trainer.head, trainer.head_defines))
    for which, kernel, base in kernels:
        for tunables in grids.get(which, []):
            defines = dict(base, **tunables)
            if which == "forward" and "S" in tunables and fused_mlp.shared_bytes(defines["S"], trainer.K, trainer.H,
                                                                                 32, defines["KS"]) > 48 * 1024:
                continue
            try:
                candidate = gl.Kernel(ctx, kernel.name, defines)
            except gl.ShaderError:
                continue
            candidate.set(**sizes, **(trainer.hyperparameters() if which == "backward" else {}))
            groups = candidate.groups(**sizes)
            # compiling left the GPU idle, and an idle GPU's clock drops: without this, candidates were timed
            # up to 4x slower than the same program inside a trainer (H100, 2026-11-24; 0.15 s was too short)
            profile.warm_up(ctx, lambda: (candidate.program.run(*groups), ctx.memory_barrier(profile.BARRIER)))
            seconds = profile.dispatch_seconds(ctx, candidate.program, groups, repeat, clock)
            rows.append({"kernel": which, "shader": kernel.name, "hidden": trainer.H, "tunables": tunables,
                         "us": 1e6 * seconds, "groups": groups[0] * groups[1]})
            candidate.program.release()
    return rows


def sweep(ctx, quick: bool) -> dict:
    """Where a fused step's time goes (the Python calls, the step issued four ways, the grid barrier) and
    the fused kernels' tunables timed one by one, then epochs of the best against the defaults."""
    (X_train, y_train), _ = data.load_mnist()
    n = 1024 if quick else len(X_train)
    images, labels = X_train[:n], y_train[:n]
    repeat = 2 if quick else 50
    out = {"sm": matmul.sm_count(ctx), "issue": issue_costs(ctx, 100 if quick else 5000)}
    print(f"SMs (gl_SMCountNV, GL_NV_shader_thread_group): {out['sm']}")
    print("Python issue cost: " + ", ".join(f"{k} {1e6 * v:.2f} µs" for k, v in out["issue"].items()))
    out["grid_barrier"] = []
    for groups in ((1, 2) if quick else (1, 32, 66, 132, 264, 528)):
        result = profile.grid_barrier_seconds(ctx, groups, 20 if quick else 2000)
        out["grid_barrier"].append(result)
        print(f"grid barrier, {groups:4d} groups of 256: {1e6 * result['per_barrier']:7.2f} µs a barrier, "
              f"flags {result['flags']}, most polls {result['max_polls']}, slots ok {result['slots_ok']}")
    out["anatomy"], out["kernels"], out["epochs"] = {}, [], []
    for hidden, optimizer in ((HIDDEN, reference.SGD(LR)), (wide_hidden(quick), reference.Momentum(0.2, 0.9))):
        def make(forward=None, backward=None, way="fused", head=None, blocked=False):  # way: fused, split, 3-pass
            tiled = way == "3-pass"  # forward: the tunables of the step's first dispatch
            return fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), images, labels,
                                      optimizer=optimizer, batch_size=BATCH, seed=0,
                                      forward_defines=None if tiled else forward, backward_defines=backward,
                                      split_hidden=way == "split", tiled_hidden=tiled, blocked=blocked,
                                      hidden_defines=forward if tiled else None, head_defines=head)
        best = {}
        for way, grids in (("fused", {"forward": FORWARD_SWEEP, "backward": BACKWARD_SWEEP}),
                           ("split", {"forward": SPLIT_SWEEP}),
                           ("3-pass", {"forward": HIDDEN_SWEEP, "head": HEAD_SWEEP}),
                           ("blocked", {"forward": HIDDEN_BLOCKED_SWEEP, "backward": BACKWARD_BLOCKED_SWEEP})):
            blocked = way == "blocked"  # the blocked pair, in the 3-pass step; SB 4, HQ 4: the split's largest scratch
            trainer = make(dict(SB=4, HQ=4) if way == "split" else None, way="3-pass" if blocked else way,
                           blocked=blocked)
            label = f"784-{hidden}-10{'' if way == 'fused' else ' ' + way}"
            out["anatomy"][label] = step_anatomy(ctx, trainer, repeat)
            print(f"\n{label} step, µs: " + ", ".join(f"{k} {1e6 * v:.1f}" for k, v in out["anatomy"][label].items()))
            rows = kernel_sweep(ctx, trainer, repeat, grids)
            out["kernels"] += rows
            trainer.release()
            for which in ("forward", "head", "backward"):
                mine = sorted((r for r in rows if r["kernel"] == which), key=lambda r: r["us"])
                if mine:
                    best[which, way] = mine[0]["tunables"]
                    print(f"{mine[0]['shader']}: " + "; ".join(f"{r['tunables']} {r['us']:.1f} µs ({r['groups']} groups)"
                                                              for r in mine[:6]))
        for label, way, f, h, b, blocked in (
                ("defaults", "fused", None, None, None, False),
                ("best", "fused", best["forward", "fused"], None, best["backward", "fused"], False),
                ("split, best", "split", best["forward", "split"], None, best["backward", "fused"], False),
                ("3-pass, best", "3-pass", best["forward", "3-pass"], best["head", "3-pass"], best["backward", "fused"],
                 False),
                ("blocked backward, best", "fused", best["forward", "fused"], None, best["backward", "blocked"], True),
                ("blocked 3-pass, best", "3-pass", best["forward", "blocked"], best["head", "3-pass"],
                 best["backward", "blocked"], True)):
            trainer = make(f, b, way, h, blocked)
            trainer.start_epoch(0)
            profile.warm_up(ctx, lambda: trainer.step(0))  # an idle GPU's clock is low for half a second
            times = time_epochs(lambda e: trainer.run_epoch(e), ctx.finish, 1 if quick else 5)
            trainer.release()
            out["epochs"].append(_row(f"fused 784-{hidden}-10 {type(optimizer).__name__} ({label})", times,
                                      forward=f, head=h, backward=b, split_hidden=way == "split",
                                      tiled_hidden=way == "3-pass", blocked=blocked))
            print(f"epoch with {label}: {out['epochs'][-1]['ms']:.2f} ms  (forward {f}, "
                  f"{f'head {h}, ' if h else ''}backward {b})")
    return out


if __name__ == "__main__":   # python -m helpers.bench.fused sweep [--quick] [--out FILE]
    import sys

    from .. import mode

    if sys.argv[1:2] != ["sweep"]:
        raise SystemExit("usage: python -m helpers.bench.fused sweep [--quick] [--out FILE]")
    context = gl.create_context()
    print(gl.describe(context))
    result = sweep(context, quick="--quick" in sys.argv or mode.is_quick())
    result = {"device": {"describe": gl.describe(context), "date": time.strftime("%Y-%m-%d"),
                         "command": "python -m helpers.bench.fused " + " ".join(sys.argv[1:])}, **result}
    if "--out" in sys.argv:
        Path(sys.argv[sys.argv.index("--out") + 1]).write_text(json.dumps(result, indent=1, default=float) + "\n")

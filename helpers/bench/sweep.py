"""The fused kernels' tunables, each set timed as one dispatch with its barrier, for both nets and every way of
the step that FusedMLP offers. FusedMLP.TUNED (helpers/fused_mlp.py) holds an H100 run's winners; the committed
run is notebooks/results/fused-sweep-<card>.json (helpers.bench.fused.tuning_file). Nothing in the notebooks
runs it: a tuning tool.

    python -m helpers.bench.sweep [--quick] [--out FILE]
    python -m helpers.bench.sweep epochs [--quick] [--jax] [--nets 128,wide] [--out FILE]

`epochs` times whole epochs instead (EPOCHS: the default layout beside tunable sets and layouts that the
kernel sweep cannot judge alone, since a step is more than the sum of its dispatches), all of one net
interleaved by timing.measure_interleaved; with --jax also JAX's epoch of each net run, at both precisions
(helpers/bench/jax_epoch.py, a process of its own) in the same run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import data, fused_mlp, gl, matmul, reference, timing
from . import profile
from .fused import BATCH, HIDDEN, LR, ONE_PIECE, wide_hidden

# Each way of the step: (FusedMLP options, the tunables tried per kernel), within 1024 threads and 48 KiB of
# shared memory (the shaders' banners).
SWEEP = {
    # the plain pair (fused_forward_1, fused_backward_1), asked for by name: given neither option the trainer
    # would run its default layout, whose blocked backward these tunables do not fit
    "fused": (dict(blocked=False, tiled_hidden=False),
              {"forward": [dict(S=s, KS=ks) for s in (1, 2, 4) for ks in (8, 16, 32)],
               "backward": [dict(BC=bc, TJ=tj, TKT=tkt, KPT=kpt) for bc in (32, 64, 128) for tj, tkt, kpt in
                            ((32, 8, 2), (32, 8, 4), (32, 16, 1), (64, 4, 2), (16, 16, 1))]}),
    "split": (dict(split_hidden=True, forward_defines=dict(SB=4, HQ=4)),  # SB 4, HQ 4: the largest scratch
              {"forward": [dict(SB=sb, HQ=hq, KS=ks) for sb in (4, 8, 16) for hq in (4, 8, 16) for ks in (8, 16, 32)
                           if hq * ks <= 1024 and 4 * sb * (196 + ks * 4 * hq + 4 * hq + 10) <= 48 * 1024]}),
    "3-pass": (dict(tiled_hidden=True),
               {"forward": [dict(RB=rb, TQ=tq, KS=ks) for rb in (4, 8) for tq in (8, 16, 32) for ks in (4, 8, 16, 32)
                            if tq * ks <= 1024 and 4 * max(rb * 784, ks * rb * 4 * tq) <= 48 * 1024],
                "head": [dict(S=s, LOCAL=local) for s in (1, 2, 4) for local in (128, 256)]}),
    "blocked": (dict(tiled_hidden=True, blocked=True),
                {"forward": [dict(RQ=rq, TQ=tq, BK=bk, KS=ks) for rq in (1, 2, 4, 8) for tq in (4, 8, 16)
                             for bk in (8, 16) for ks in (4, 8, 16) if tq * rq * ks <= 1024 and 16 * max(
                                 4 * rq * (ks * bk // 4 + 1) + ks * bk * tq, (ks - 1) * 4 * rq * tq) + 16 * rq <= 48 * 1024],
                 "backward": [dict(TQ=tq, KQ=kq, BS=bs, BC=bc) for tq in (2, 4, 8, 16) for kq in (4, 8) for bs in (2, 4, 8)
                              for bc in (8, 16, 32) if tq * kq * bs <= 1024
                              and 16 * max(bs * bc * (kq + tq), bs * 4 * kq * tq) <= 48 * 1024]})}


def kernel_sweep(ctx, trainer, repeat: int, grids: dict, rounds: int = 5) -> list[dict]:
    """Each tunable set of grids["forward"] / grids["backward"] (and grids["head"] with tiled_hidden) timed
    as one dispatch + barrier with the trainer's shaders and bound buffers at step 0: every set of a kernel
    compiled first, then all of them timed in turn (timing.measure_interleaved: a warm-up of all of them,
    then `rounds` rounds; a sample is a stream of `repeat` dispatches, profile.dispatch_sample), so that the
    GPU's clock, which drops while the CPU compiles, is back up before any is timed and a drift falls on
    every set alike. A row stores the median and the 20-80 % band (us, us_low, us_high). Shapes that do not
    compile (a #error of the shader) or need more than 48 KiB of shared memory are skipped."""
    clock = timing.Clock(ctx)
    trainer.start_epoch(0)
    trainer.step(0)
    sizes = dict(n_in=trainer.K, n_hidden=trainer.H, n_samples=trainer.n, batch_size=trainer.batch_size, step=0)
    rows = []
    kernels = [("forward", trainer.forward, trainer.forward_defines),
               ("backward", trainer.backward, trainer.backward_defines)]
    if trainer.head is not None:
        kernels.insert(1, ("head", trainer.head, trainer.head_defines))
    for which, kernel, base in kernels:
        candidates = []   # (tunables, Kernel, groups)
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
            candidates.append((tunables, candidate, candidate.groups(**sizes)))
        if not candidates:
            continue
        took = timing.measure_interleaved(
            {i: profile.dispatch_sample(ctx, c.program, g, repeat, clock) for i, (_, c, g) in enumerate(candidates)},
            repeat=rounds, clock=clock.source)
        for i, (tunables, candidate, groups) in enumerate(candidates):
            rows.append({"kernel": which, "shader": kernel.name, "hidden": trainer.H, "tunables": tunables,
                         **took[i].row("us", 1e6), "groups": groups[0] * groups[1]})
            candidate.program.release()
    return rows


def sweep(ctx, quick: bool) -> dict:
    """Every way of SWEEP for both nets: each kernel's tunable sets timed one by one (kernel_sweep)."""
    (X_train, y_train), _ = data.load_mnist()
    n = 1024 if quick else len(X_train)
    out = {"sm": matmul.sm_count(ctx), "kernels": []}
    for hidden, optimizer in ((HIDDEN, reference.SGD(LR)), (wide_hidden(quick), reference.Momentum(0.2, 0.9))):
        for way, (options, grids) in SWEEP.items():
            trainer = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), X_train[:n], y_train[:n],
                                         optimizer=optimizer, batch_size=BATCH, seed=0, **options)
            rows = kernel_sweep(ctx, trainer, 2 if quick else 50, grids, 2 if quick else 5)
            out["kernels"] += rows
            trainer.release()
            for which in ("forward", "head", "backward"):
                mine = sorted((r for r in rows if r["kernel"] == which), key=lambda r: r["us"])[:6]
                if mine:
                    print(f"784-{hidden}-10 {way} {mine[0]['shader']}: "
                          + "; ".join(f"{r['tunables']} {r['us']:.1f} µs ({r['groups']} groups)" for r in mine))
    return out


# Whole epochs, batch 128, data resident: {hidden: {name: FusedMLP options}}; "default" is FusedMLP as it
# stands (default_layout and TUNED). The wide net's head (fused_head_1_xent) gets fewer threads a sample; its
# layer 1 (fused_hidden_2_blocked) more and smaller work groups; the small net's forward one sample a group.
EPOCHS = {
    HIDDEN: {"default": {},
             "forward S 1, KS 32 (128 groups)": dict(forward_defines=dict(S=1, KS=32)),
             "fused_backward_1 (not blocked)": dict(blocked=False, tiled_hidden=False)},
    "wide": {"default": {},
             "head LOCAL 256": dict(blocked=True, tiled_hidden=True, head_defines=dict(LOCAL=256)),
             "head LOCAL 512": dict(blocked=True, tiled_hidden=True, head_defines=dict(LOCAL=512)),
             "layer 1 in one piece (RQ 8, TQ 8, BK 8, KS 8: 100 groups)": dict(blocked=True, tiled_hidden=True, hidden_defines=ONE_PIECE),
             "layer 1 in 2 pieces (RQ 4, TQ 8, BK 8, KS 4: 400 groups)": dict(blocked=True, tiled_hidden=True, hidden_defines=dict(RQ=4, TQ=8, BK=8, KS=4, KSPLIT=2)),
             "layer 1 in 7 pieces (RQ 8, TQ 8, BK 8, KS 2: 700 groups)": dict(blocked=True, tiled_hidden=True, hidden_defines=dict(RQ=8, TQ=8, BK=8, KS=2, KSPLIT=7)),
             "backward TQ 16, KQ 8, BS 4, BC 32": dict(blocked=True, tiled_hidden=True, backward_defines=dict(TQ=16, KQ=8, BS=4, BC=32)),
             "backward TQ 8, KQ 8, BS 4, BC 16 (its file's)": dict(blocked=True, tiled_hidden=True, backward_defines=dict(TQ=8, KQ=8, BS=4, BC=16)),
             "blocked 2-pass (forward_1 + blocked backward)": dict(blocked=True, tiled_hidden=False)},
}


def epoch_sweep(ctx, quick: bool, repeat: int = 5, jax: bool = False, nets=None) -> list[dict]:
    """Each net's EPOCHS candidates, one epoch a sample, interleaved (timing.measure_interleaved: a warm-up of
    timing.default_warmup() seconds of all of them in turn, then `repeat` rounds); wall clock from
    ctx.finish() to ctx.finish() around Trainer.run_epoch, the sample orders drawn before. One printed line
    per candidate: median ms with its 20-80 % band, and its ratio to the default's median. nets: the keys of
    EPOCHS to run (default all); with jax, JAX's epochs of those nets too."""
    (X_train, y_train), _ = data.load_mnist()
    n = 1024 if quick else len(X_train)
    rows = []
    widths = []
    for hidden, candidates in EPOCHS.items():
        if nets is not None and hidden not in nets:
            continue
        hidden = wide_hidden(quick) if hidden == "wide" else hidden
        widths.append(hidden)
        optimizer = reference.SGD(LR) if hidden == HIDDEN else reference.Momentum(0.2, 0.9)
        trainers, samples = {}, {}
        orders = [reference.epoch_order(n, e, 0) for e in range(8)]
        for name, options in candidates.items():
            try:
                t = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), X_train[:n], y_train[:n],
                                       optimizer=optimizer, batch_size=BATCH, seed=0, **options)
            except gl.ShaderError as error:
                print(f"784-{hidden}-10 {name}: skipped ({str(error).splitlines()[0]})")
                continue
            trainers[name] = t
            count = [0]

            def sample(t=t, count=count):
                order = orders[count[0] % len(orders)]
                count[0] += 1
                ctx.finish()
                start = time.perf_counter()
                t.run_epoch(count[0], order=order)
                ctx.finish()
                return time.perf_counter() - start
            samples[name] = sample
        timings = timing.measure_interleaved(samples, repeat=2 if quick else repeat)
        base = timings["default"]
        print(f"784-{hidden}-10 {type(optimizer).__name__}, one epoch of {n} images, batch {BATCH} "
              f"(wall clock, {2 if quick else repeat} interleaved epochs each after the warm-up):")
        for name, t in timings.items():
            outcome = {timing.A_FASTER: "faster", timing.B_FASTER: "slower"}.get(timing.compare(t, base), "same")
            print(f"  {name:48s} {t.text('ms'):>24s}  {t.median / base.median:.3f}× the default's time ({outcome})")
            rows.append({"net": f"784-{hidden}-10", "name": name, **t.row(), "options": candidates[name],
                         "vs_default": t.median / base.median, "outcome": timing.compare(t, base)})
        for t in trainers.values():
            t.release()
    for hidden in widths if jax else ():
        from .jax_epoch import jax_rows
        optimizer, lr = ("sgd", LR) if hidden == HIDDEN else ("momentum", 0.2)
        jrows, note = jax_rows(hidden, optimizer, lr, 2 if quick else repeat, quick)
        print(note)
        for row in jrows:
            print(f"  {row['name']:60s} {row['ms']:.2f} ms (min {row['min_ms']:.2f})")
        rows += [dict(r, net=f"784-{hidden}-10") for r in jrows]
    return rows


if __name__ == "__main__":   # python -m helpers.bench.sweep [epochs] [--quick] [--jax] [--out FILE]
    import sys

    from .. import mode

    context = gl.create_context()
    print(gl.describe(context))
    if sys.argv[1:2] == ["epochs"]:
        nets = None   # --nets 128,wide: those keys of EPOCHS only
        if "--nets" in sys.argv:
            nets = [k if k == "wide" else int(k) for k in sys.argv[sys.argv.index("--nets") + 1].split(",")]
        result = {"epochs": epoch_sweep(context, quick="--quick" in sys.argv or mode.is_quick(),
                                        jax="--jax" in sys.argv, nets=nets)}
    else:
        result = sweep(context, quick="--quick" in sys.argv or mode.is_quick())
    result = {"device": {"describe": gl.describe(context), "date": time.strftime("%Y-%m-%d"),
                         "command": "python -m helpers.bench.sweep " + " ".join(sys.argv[1:])}, **result}
    if "--out" in sys.argv:
        Path(sys.argv[sys.argv.index("--out") + 1]).write_text(json.dumps(result, indent=1, default=float) + "\n")

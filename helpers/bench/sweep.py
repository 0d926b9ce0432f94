"""The fused kernels' tunables, each set timed as one dispatch with its barrier, for both nets and every way of
the step that FusedMLP offers. FusedMLP.TUNED (helpers/fused_mlp.py) holds the winners; the committed H100
run is notebooks/results/fused-sweep-h100.json. Nothing in the notebooks runs it: a tuning tool.

    python -m helpers.bench.sweep [--quick] [--out FILE]
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import data, fused_mlp, gl, matmul, reference, timing
from . import profile
from .fused import BATCH, HIDDEN, LR, wide_hidden

# Each way of the step: (FusedMLP options, the tunables tried per kernel), within 1024 threads and 48 KiB of
# shared memory (the shaders' banners).
SWEEP = {
    "fused": ({}, {"forward": [dict(S=s, KS=ks) for s in (1, 2, 4) for ks in (8, 16, 32)],
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
    """Every way of SWEEP for both nets: each kernel's tunable sets timed one by one (kernel_sweep)."""
    (X_train, y_train), _ = data.load_mnist()
    n = 1024 if quick else len(X_train)
    out = {"sm": matmul.sm_count(ctx), "kernels": []}
    for hidden, optimizer in ((HIDDEN, reference.SGD(LR)), (wide_hidden(quick), reference.Momentum(0.2, 0.9))):
        for way, (options, grids) in SWEEP.items():
            trainer = fused_mlp.FusedMLP(ctx, reference.init_params(784, hidden, 10, seed=0), X_train[:n], y_train[:n],
                                         optimizer=optimizer, batch_size=BATCH, seed=0, **options)
            rows = kernel_sweep(ctx, trainer, 2 if quick else 50, grids)
            out["kernels"] += rows
            trainer.release()
            for which in ("forward", "head", "backward"):
                mine = sorted((r for r in rows if r["kernel"] == which), key=lambda r: r["us"])[:6]
                if mine:
                    print(f"784-{hidden}-10 {way} {mine[0]['shader']}: "
                          + "; ".join(f"{r['tunables']} {r['us']:.1f} µs ({r['groups']} groups)" for r in mine))
    return out


if __name__ == "__main__":   # python -m helpers.bench.sweep [--quick] [--out FILE]
    import sys

    from .. import mode

    context = gl.create_context()
    print(gl.describe(context))
    result = sweep(context, quick="--quick" in sys.argv or mode.is_quick())
    result = {"device": {"describe": gl.describe(context), "date": time.strftime("%Y-%m-%d"),
                         "command": "python -m helpers.bench.sweep " + " ".join(sys.argv[1:])}, **result}
    if "--out" in sys.argv:
        Path(sys.argv[sys.argv.index("--out") + 1]).write_text(json.dumps(result, indent=1, default=float) + "\n")

"""Benchmark: one MNIST epoch with the fast trainer (helpers/fast_mlp.py) against the fused one, the
dispatch floor, PyTorch and JAX on the same GPU. Introduced in notebook 06.

    python -m helpers.bench fast                       # the table (QUICK=1: a subset, for llvmpipe)
    python -m helpers.bench.fast sweep                 # time the shader's tunables on this GPU, one line each

Rows, each the median of REPEAT epochs after one warm-up epoch (wall clock, ctx.finish() /
block_until_ready / torch.cuda.synchronize() at both ends), batch 128, fp32, data resident on the GPU:

  * 784-128-10 SGD (lr 0.3) and 784-800-10 momentum (lr 0.2, mu 0.9): fused (notebook 05), fast with two
    dispatches a step, fast persistent (one dispatch per 50 steps, where its residency probe passes);
  * the floor: the same number of empty dispatches and barriers as the two-dispatch step;
  * PyTorch (784-128-10 SGD, helpers/bench/fused.py's rows) where torch with CUDA is importable;
  * JAX where `import jax` works: jit of lax.scan over the epoch's full batches (and one step for the
    leftover), same init and order, precision "highest" (true fp32) and the default (TF32 allowed);
  * test accuracy after a few epochs of 784-128-10 SGD, fused against fast, same recipe.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time

import numpy as np

from .. import data, fast_mlp, fused_mlp, gl, mode, reference, timing
from .fused import RESULTS_FILE, torch_rows
from .profile import dispatch_seconds, empty_epochs, profile_step, time_epochs

BATCH = 128
RECIPES = {128: ("SGD", lambda: reference.SGD(0.3)), 800: ("Momentum", lambda: reference.Momentum(0.2, 0.9))}
GOALS = {128: (6.0, 2.0), 800: (12.0, 1.7)}   # issue #12: epoch ms at most, and at least this × faster than JAX fp32
CLOCK = "wall clock, ctx.finish() / block_until_ready / torch.cuda.synchronize() at both ends"


def _row(name: str, times: list[float], **extra) -> dict:
    return {"name": name, "ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times), "epochs": len(times),
            "clock": CLOCK, **extra}


# ---------------------------------------------------------------------------------------------
# JAX
# ---------------------------------------------------------------------------------------------

def jax_rows(images, labels, orders, hidden: int, kind: str, repeat: int) -> tuple[list[dict], str]:
    """JAX epochs of the same model, batch, init and order: jit(lax.scan) over the full batches plus one
    step for the leftover, params resident; ([], why) where JAX cannot be imported."""
    try:
        import jax
        import jax.numpy as jnp
    except Exception as exc:   # ImportError, or a broken install
        return [], f"JAX not installed ({type(exc).__name__})"
    X = jax.device_put(data.normalise(images))
    Y = jax.device_put(labels.astype(np.int32))
    n = len(labels)
    full = n // BATCH
    p0 = reference.init_params(784, hidden, 10, seed=0)
    lr, mu = (0.3, 0.0) if kind == "SGD" else (0.2, 0.9)

    def loss(params, xb, yb):
        W1, b1, W2, b2 = params
        logits = jnp.maximum(xb @ W1 + b1, 0) @ W2 + b2
        return jnp.mean(jax.nn.logsumexp(logits, axis=1) - jnp.take_along_axis(logits, yb[:, None], 1)[:, 0])

    def update(carry, idx):
        params, velocity = carry
        value, grads = jax.value_and_grad(loss)(params, X[idx], Y[idx])
        if kind == "SGD":
            params = tuple(p - lr * g for p, g in zip(params, grads))
        else:
            velocity = tuple(mu * v + g for v, g in zip(velocity, grads))
            params = tuple(p - lr * v for p, v in zip(params, velocity))
        return (params, velocity), value

    def epoch(params, velocity, order):
        carry, losses = jax.lax.scan(update, (params, velocity), order[:full * BATCH].reshape(full, BATCH))
        if n % BATCH:
            carry, _ = update(carry, order[full * BATCH:])
        return carry[0], carry[1], losses

    rows = []
    device = str(jax.devices()[0])
    for precision, label in (("highest", "fp32"), ("default", "default precision, TF32 allowed")):
        with jax.default_matmul_precision(precision):
            run = jax.jit(epoch)
            state = [tuple(jax.device_put(p0[k]) for k in ("W1", "b1", "W2", "b2"))]
            state.append(tuple(jnp.zeros_like(p) for p in state[0]))
            order_d = [jax.device_put(o.astype(np.int32)) for o in orders]

            def one(e):
                params, velocity, losses = run(state[0], state[1], order_d[e % len(order_d)])
                jax.block_until_ready(params)
                state[0], state[1] = params, velocity
            times = time_epochs(one, lambda: None, repeat)
        rows.append(_row(f"JAX jit(lax.scan) 784-{hidden}-10 {kind} {label}", times, precision=precision,
                         launches_per_step="one jit call per epoch"))
    return rows, f"JAX {jax.__version__} on {device}"


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

def software_defines(ctx) -> dict:
    """On a software renderer a few work groups (each group of phase 2 redoes the batch's softmax)."""
    return {"GROUPS": 8} if gl.is_software(ctx) else {}


def _epochs(trainer, orders, repeat) -> tuple[list[float], float]:
    losses = []
    times = time_epochs(lambda e: losses.append(trainer.run_epoch(e, order=orders[e % len(orders)])),
                        trainer.ctx.finish, repeat)
    return times, losses[-1]


def run(ctx, quick: bool) -> list[dict]:
    (X_train, y_train), (X_test, y_test) = data.load_mnist()
    n = 512 if quick else len(X_train)
    repeat = 1 if quick else 5
    images, labels = X_train[:n], y_train[:n]
    orders = [reference.epoch_order(n, e, 0) for e in range(repeat + 1)]
    steps = -(-n // BATCH)
    soft = software_defines(ctx)
    sms = fast_mlp.sm_count(ctx)
    rows, best = [], {}

    for hidden in (128, 800 if not quick else 256):
        kind, make = RECIPES[128 if hidden == 128 else 800]
        p0 = reference.init_params(784, hidden, 10, seed=0)
        fused = fused_mlp.FusedMLP(ctx, p0, images, labels, optimizer=make(), batch_size=BATCH, seed=0)
        times, loss = _epochs(fused, orders, repeat)
        rows.append(_row(f"fused 784-{hidden}-10 {kind} (notebook 05)", times, dispatches_per_step=2, loss=loss,
                         hidden=hidden, trainer="fused"))
        fused.release()

        fast = fast_mlp.FastMLP(ctx, p0, images, labels, optimizer=make(), batch_size=BATCH, seed=0, defines=soft)
        times, loss = _epochs(fast, orders, repeat)
        profile = profile_step(fast, repeat=2 if quick else 50)
        row = _row(f"fast 784-{hidden}-10 {kind}, 2 dispatches a step", times, dispatches_per_step=2, loss=loss,
                   hidden=hidden, trainer="fast", groups=[g[0] for g in fast.groups], defines=fast.defines,
                   kernel_us={k: 1e6 * v for k, v in profile["kernel"].items()}, issue_us=1e6 * profile["issue"],
                   step_us=1e6 * profile["step"], empty_us=1e6 * profile["empty"], subgroups=fast.subgroups)
        rows.append(row)
        floor = empty_epochs(ctx, steps, [g for _, g in fast.dispatches(0)])
        rows.append(_row(f"floor: {steps}×2 empty dispatches + barriers ({hidden} hidden groups)", floor,
                         dispatches_per_step=2, hidden=hidden, trainer="floor"))
        two_params = fast.read_params()
        fast.release()

        persistent = fast_mlp.FastMLP(ctx, p0, images, labels, optimizer=make(), batch_size=BATCH, seed=0,
                                      defines=soft, persistent=True, persistent_groups=1 if gl.is_software(ctx) else None,
                                      check_every=1 if gl.is_software(ctx) else 50)   # llvmpipe: loops stop at 65535
        if persistent.persistent is not None:
            try:
                times, loss = _epochs(persistent, orders, repeat)
                same = all(np.array_equal(a, b) for a, b in
                           zip(persistent.read_params().values(), two_params.values()))
                rows.append(_row(f"fast 784-{hidden}-10 {kind}, persistent", times, loss=loss, hidden=hidden,
                                 trainer="persistent", note=persistent.persistent_note,
                                 dispatches_per_epoch=-(-steps // persistent.check_every), same_bits=same))
            except RuntimeError as exc:
                rows.append({"name": f"fast 784-{hidden}-10 {kind}, persistent", "error": str(exc)})
        else:
            rows.append({"name": f"fast 784-{hidden}-10 {kind}, persistent", "error": persistent.persistent_note})
        persistent.release()

        if not quick or hidden == 128:
            jrows, jnote = jax_rows(images, labels, orders, hidden, kind, repeat)
            for r in jrows:
                r["hidden"] = hidden
            rows += jrows
            best[f"jax_note"] = jnote
    trows, tnote = torch_rows(images, labels, orders, 128, repeat)
    for r in trows:
        r["hidden"] = 128
    rows += trows

    accuracy = _accuracy(ctx, images, labels, X_test[:mode.pick(10_000, 500)], y_test[:mode.pick(10_000, 500)],
                         epochs=1 if quick else 3, soft=soft)
    rows.append(accuracy)
    _print(ctx, rows, n, steps, sms, best.get("jax_note", "JAX not run"), tnote)
    return rows


def _accuracy(ctx, images, labels, X_test, y_test, epochs: int, soft: dict) -> dict:
    """784-128-10 SGD lr 0.3, batch 128, seed 0, `epochs` epochs: fused and fast test accuracy."""
    result = {"name": f"test accuracy after {epochs} epochs, 784-128-10 SGD", "epochs": epochs}
    for name, cls, kwargs in (("fused", fused_mlp.FusedMLP, {}), ("fast", fast_mlp.FastMLP, {"defines": soft})):
        trainer = cls(ctx, reference.init_params(seed=0), images, labels, optimizer=reference.SGD(0.3),
                      batch_size=BATCH, seed=0, **kwargs)
        trainer.add_eval_set("test", X_test, y_test)
        trainer.train(epochs, progress=False, evaluate=())
        result[name] = trainer.accuracy("test")
        trainer.release()
    return result


def _print(ctx, rows, n, steps, sms, jax_note, torch_note) -> None:
    print(f"one epoch: {n} images, batch {BATCH}, {steps} steps; {jax_note}; {torch_note}")
    print(f"SMs: {sms if sms else 'not reported by this driver (GL_NV_shader_sm_builtins absent)'}")
    print(f"{'':62s} {'ms/epoch':>9s} {'min':>8s}")
    for row in rows:
        if "error" in row:
            print(f"{row['name']:62s} not run: {row['error']}")
        elif "ms" in row:
            extra = ""
            if row.get("trainer") == "fast":
                extra = (f"  kernels {' + '.join(f'{v:.1f}' for v in row['kernel_us'].values())} µs, "
                         f"issue {row['issue_us']:.1f} µs, groups {row['groups']}, subgroups {row['subgroups']}")
            if row.get("trainer") == "persistent":
                extra = f"  {row['note']}; same bits as 2 dispatches: {row['same_bits']}"
            print(f"{row['name']:62s} {row['ms']:9.2f} {row['min_ms']:8.2f}{extra}")
    acc = rows[-1]
    print(f"{acc['name']}: fused {100 * acc['fused']:.2f} %, fast {100 * acc['fast']:.2f} % "
          f"(difference {100 * abs(acc['fused'] - acc['fast']):.2f} points; goal within 0.1)")
    for hidden, (limit, factor) in GOALS.items():
        timed = [r for r in rows if r.get("hidden") == hidden and "ms" in r]
        ours = [r for r in timed if r.get("trainer") in ("fast", "persistent") and r.get("same_bits", True)]
        jax32 = [r for r in timed if r.get("precision") == "highest"]
        tf32 = [r for r in timed if r.get("precision") == "default"]
        if not ours:
            continue
        fastest = min(ours, key=lambda r: r["ms"])
        verdict = f"784-{hidden}-10: fastest GLSL {fastest['ms']:.2f} ms ({fastest['name']}); goal <= {limit} ms: " \
                  f"{'met' if fastest['ms'] <= limit else 'not met'}"
        if jax32:
            ratio = jax32[0]["ms"] / fastest["ms"]
            verdict += f"; {ratio:.2f}× JAX fp32 (goal {factor}×: {'met' if ratio >= factor else 'not met'})"
        if tf32:
            verdict += f"; faster than JAX TF32: {fastest['ms'] < tf32[0]['ms']}"
        print(verdict)
    print(f"device: {gl.describe(ctx)}")


# ---------------------------------------------------------------------------------------------
# The sweep: python -m helpers.bench.fast sweep
# ---------------------------------------------------------------------------------------------

FORWARD_GRID = {"THREADS": (128, 256), "KS": (8, 16, 32), "BT": (4, 8)}
BACKWARD_GRID = {"TJ": (32, 64), "TK": (16, 32, 64), "BC": (16, 32)}
GROUP_FACTORS = (None, 1, 2, 4)   # None: one work group per tile; k: k work groups per SM (grid-stride)


def _grid(grid: dict):
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def sweep(ctx, quick: bool) -> list[dict]:
    """Each phase's kernel time (GPU clock) for every tunable combination of its grid, at both net sizes,
    then whole-epoch times of the best combination with two dispatches and persistent. One line each."""
    (X_train, y_train), _ = data.load_mnist()
    n = 512 if quick else len(X_train)
    images, labels = X_train[:n], y_train[:n]
    clock = timing.Clock(ctx)
    sms = fast_mlp.sm_count(ctx) or (2 if gl.is_software(ctx) else fast_mlp.H100_SMS)
    repeat = 2 if quick else 20
    lines = []
    forward_grid, backward_grid = _grid(FORWARD_GRID), _grid(BACKWARD_GRID)
    factors = (None, 1) if quick else GROUP_FACTORS
    if quick:
        forward_grid, backward_grid = forward_grid[:2], backward_grid[:2]
    print(f"sweep on {gl.describe(ctx)}; kernels by {clock.source}; {sms} SMs; repeat {repeat}")
    for hidden in ((128,) if quick else (128, 800)):
        kind, make = RECIPES[hidden]
        p0 = reference.init_params(784, hidden, 10, seed=0)
        best = {}
        for phase, grid in ((0, forward_grid), (1, backward_grid)):
            for tunables, factor, subgroup in itertools.product(grid, factors, (1, 0)):
                if subgroup == 0 and (phase == 1 or factor is not None):
                    continue   # the lane exchange is phase 1's; try SUBGROUP 0 at one group count only
                defines = dict(tunables, SUBGROUP=subgroup, **({"GROUPS": factor * sms} if factor else {}))
                try:
                    trainer = fast_mlp.FastMLP(ctx, p0, images[:4096], labels[:4096], optimizer=make(),
                                               batch_size=BATCH, seed=0, defines=defines)   # a kernel sees one batch
                except (gl.ShaderError, ValueError) as exc:
                    print(f"H {hidden} phase {phase + 1} {defines}: refused ({str(exc).splitlines()[0][:80]})")
                    continue
                trainer.start_epoch(0)
                kernel, groups = trainer.dispatches(0)[phase]
                us = 1e6 * dispatch_seconds(ctx, kernel.program, groups, repeat, clock)
                line = {"hidden": hidden, "phase": phase + 1, "defines": defines, "groups": groups[0], "us": us}
                lines.append(line)
                print(f"H {hidden} phase {phase + 1} {us:8.2f} µs  groups {groups[0]:4d}  {defines}")
                key = phase
                if key not in best or us < best[key]["us"]:
                    best[key] = line
                trainer.release()
        forward_best = {k: v for k, v in best[0]["defines"].items() if k in FORWARD_GRID or k == "SUBGROUP"}
        backward_best = {k: v for k, v in best[1]["defines"].items() if k in BACKWARD_GRID}
        combined = dict(forward_best, **backward_best)
        print(f"H {hidden} best phase 1 {best[0]['us']:.2f} µs {best[0]['defines']}; "
              f"best phase 2 {best[1]['us']:.2f} µs {best[1]['defines']}")
        orders = [reference.epoch_order(n, e, 0) for e in range(3)]
        for label, kwargs in (("2 dispatches, one group per tile", {}),
                              ("persistent", {"persistent": True, "persistent_groups": sms})):
            try:
                trainer = fast_mlp.FastMLP(ctx, p0, images, labels, optimizer=make(), batch_size=BATCH, seed=0,
                                           defines=combined, **kwargs)
            except (gl.ShaderError, ValueError) as exc:
                print(f"H {hidden} {label}: refused ({str(exc).splitlines()[0][:80]})")
                continue
            if kwargs and trainer.persistent is None:
                print(f"H {hidden} {label}: {trainer.persistent_note}")
                trainer.release()
                continue
            try:
                times = time_epochs(lambda e: trainer.run_epoch(e, order=orders[e % 3]), ctx.finish, 1 if quick else 3)
                ms = 1e3 * statistics.median(times)
                print(f"H {hidden} epoch {label}: {ms:.2f} ms  {combined}")
                lines.append({"hidden": hidden, "epoch": label, "ms": ms, "defines": combined})
            except RuntimeError as exc:
                print(f"H {hidden} {label}: {exc}")
            trainer.release()
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv or mode.is_quick()
    ctx = gl.create_context()
    start = time.perf_counter()
    if "sweep" in argv:
        sweep(ctx, quick)
    else:
        run(ctx, quick)
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

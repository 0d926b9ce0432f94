"""Benchmark: the 10,000-image test-set forward pass (784-128-10) on the GPU, phase by phase.

    python -m helpers.bench inference        # QUICK=1: 256 images

Random images and He-initialised weights (the timings do not depend on the values; notebook 03 uses
the trained ones). Both layers run through glsl/dense_3_tiled.comp (the fastest matmul rung with bias
and ReLU in its epilogue); the uint8 path reads packed pixels through glsl/dense_4_u8.comp.
Uploads and readbacks: wall clock around the call and ctx.finish(); kernels: helpers.timing.Clock (GPU
timer queries on a real GPU). Medians after warm-up. Targets (issue 4, on the H100): kernels <= 0.3 ms,
upload into an existing buffer >= 5 GB/s.
"""

from __future__ import annotations

import numpy as np

from .. import check, data, reference, timing
from ..forward import Forward
from ..inference import BatchedForward
from ..matmul import warm_up

KERNEL_TARGET_S, UPLOAD_TARGET_GBS = 0.3e-3, 5.0


def _median(measure, repeat: int) -> float:
    """Median of `repeat` calls to `measure()` (seconds) after one warm-up call."""
    return timing.median_seconds(measure, repeat=repeat, warmup=1)


def _wall(fn):
    """A measure() that times one call of fn() by perf_counter, no synchronisation added."""
    return lambda: timing.wall_seconds(fn)


def run(ctx, quick: bool) -> list[dict]:
    n, repeat = (256, 3) if quick else (10_000, 20)
    rng = np.random.default_rng(0)
    params = reference.init_params(seed=0)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    rows = measure(ctx, params, images, repeat)
    print(table(rows))
    return rows


def measure(ctx, params: dict, images: np.ndarray, repeat: int = 20) -> list[dict]:
    """Every phase of the forward pass over `images` (uint8 (n, 28, 28)), validated first; row dicts."""
    n = len(images)
    X, packed = data.normalise(images), data.pack_images(images)
    clock = timing.Clock(ctx)
    fwd = BatchedForward(ctx, params, n)
    fwd8 = BatchedForward(ctx, params, n, packed=True)

    print(f"{n} images, 784-{fwd.H}-{fwd.N}; validate first:")
    ref = reference.forward(params, X)[0]
    ok = check.compare("float32 in", fwd.logits(X), ref) & check.compare("uint8 in", fwd8.logits(packed), ref)
    same = int((fwd.predict(X) == ref.argmax(axis=1)).sum())
    print(f"predictions equal to NumPy's: {same} of {n}")
    if not ok:
        raise RuntimeError("the GPU forward pass does not match NumPy: fix it before timing it")

    rows = []

    def add(what, seconds, source, nbytes=None):
        row = {"what": what, "seconds": seconds, "clock": source, "images": n}
        if nbytes:
            row["bytes"], row["gbps"] = nbytes, nbytes / seconds / 1e9
        rows.append(row)

    wall = timing.WALL_FINISH
    add("upload float32 into existing buffer", _median(lambda: clock.wall(lambda: fwd.upload(X)), repeat), wall, X.nbytes)
    add("upload uint8-packed into existing buffer", _median(lambda: clock.wall(lambda: fwd8.upload(packed)), repeat),
        wall, packed.nbytes)

    def fresh_buffer():
        holder = []
        seconds = clock.wall(lambda: holder.append(ctx.buffer(X)))
        holder[0].release()
        return seconds
    add("upload float32 into a fresh buffer", _median(fresh_buffer, repeat), wall, X.nbytes)
    add("pack_images on the CPU (once per data set)", _median(_wall(lambda: data.pack_images(images)), repeat), "wall clock")

    fwd.upload(X), fwd8.upload(packed)
    warm_up(ctx, lambda: fwd.dispatch(n), 0.2 if n >= 10_000 else 0.0)   # an idle GPU starts at low clocks
    add("kernels, float32 input (2 dispatches)", _median(lambda: clock.kernel(lambda: fwd.dispatch(n)), repeat),
        clock.source)
    add("kernels, uint8 input (2 dispatches)", _median(lambda: clock.kernel(lambda: fwd8.dispatch(n)), repeat),
        clock.source)
    slow = Forward(ctx, params, max_batch=n)   # notebook 02's one-thread-per-output layer, for scale
    slow.upload(X)
    add("kernels, dense_1_naive (notebook 02)", _median(lambda: clock.kernel(lambda: slow.dispatch(n)), repeat),
        clock.source)
    slow.release()

    ctx.finish()
    size = n * fwd.N * 4
    add("readback into a new array", _median(_wall(lambda: fwd.read_new(n)), repeat), "wall clock", size)
    add("readback into a preallocated array", _median(_wall(lambda: fwd.read(n)), repeat), "wall clock", size)
    add("end to end, float32: upload+kernels+readback+argmax", _median(_wall(lambda: fwd.predict(X)), repeat),
        "wall clock")
    add("end to end, uint8: upload+kernels+readback+argmax", _median(_wall(lambda: fwd8.predict(packed)), repeat),
        "wall clock")
    add("NumPy forward + argmax on the CPU", _median(_wall(lambda: reference.forward(params, X)[0].argmax(axis=1)),
                                                     max(3, repeat // 4)), "wall clock")
    fwd.release(), fwd8.release()
    return rows


def table(rows: list[dict]) -> str:
    lines = [f"{'phase':<52s} {'ms':>9s} {'GB/s':>7s}  clock"]
    for r in rows:
        gbps = f"{r['gbps']:7.2f}" if "gbps" in r else f"{'':>7s}"
        lines.append(f"{r['what']:<52s} {r['seconds'] * 1e3:9.3f} {gbps}  {r['clock']}")
    get = {r["what"]: r for r in rows}
    kernels = min(get["kernels, float32 input (2 dispatches)"]["seconds"], get["kernels, uint8 input (2 dispatches)"]["seconds"])
    upload = get["upload float32 into existing buffer"]["gbps"]
    n = rows[0]["images"]
    if n != 10_000 or "timer" not in get["kernels, float32 input (2 dispatches)"]["clock"]:
        lines.append("(the targets are for 10,000 images timed by GPU timer queries on the H100: not judged here)")
        return "\n".join(lines)
    lines.append(f"target (H100, {n} images): kernels <= {KERNEL_TARGET_S * 1e3:.1f} ms: {kernels * 1e3:.3f} ms "
                 f"{'met' if kernels <= KERNEL_TARGET_S else 'NOT met'}; upload into an existing buffer >= "
                 f"{UPLOAD_TARGET_GBS:.0f} GB/s: {upload:.2f} GB/s {'met' if upload >= UPLOAD_TARGET_GBS else 'NOT met'}")
    return "\n".join(lines)


def phases(rows: list[dict]) -> dict:
    """The rows as {variant: {phase: seconds}} for plots.stacked_bars."""
    get = {r["what"]: r["seconds"] for r in rows}
    return {
        "float32, fresh buffer, new array": {"upload": get["upload float32 into a fresh buffer"],
                                             "kernel": get["kernels, float32 input (2 dispatches)"],
                                             "readback": get["readback into a new array"]},
        "float32, buffers reused": {"upload": get["upload float32 into existing buffer"],
                                    "kernel": get["kernels, float32 input (2 dispatches)"],
                                    "readback": get["readback into a preallocated array"]},
        "uint8 packed, buffers reused": {"upload": get["upload uint8-packed into existing buffer"],
                                         "kernel": get["kernels, uint8 input (2 dispatches)"],
                                         "readback": get["readback into a preallocated array"]},
        "NumPy (CPU)": {"numpy": get["NumPy forward + argmax on the CPU"]},
    }

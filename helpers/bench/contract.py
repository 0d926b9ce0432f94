"""What gl.Kernel.run's contract check costs a dispatch: `python -m helpers.bench.contract`.

Kernel.run checks, before every dispatch, the banner's Requires conditions on the uniforms and the length of
every buffer bound to the shader's bindings, re-checking only what changed since the last dispatch. This
times fused_forward_1_xent (seven conditions, eight bindings) dispatched with zero work groups, so only the
CPU's side is measured: the bare ModernGL calls a loop would make, and Kernel.run making the same calls
plus the check, in four loops (nothing changed; `step` changed, which no condition names; `n_hidden`
changed, which two conditions and three lengths name; the same buffers given again, which bind()
type-checks). It prints microseconds per dispatch; the difference is the check's cost.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from .. import gl

SHADER = "fused_forward_1_xent.comp"


def _per_dispatch(loop, dispatches: int, batch: int = 20) -> float:
    """Microseconds per dispatch of loop(i): the fastest of dispatches/batch timed batches of `batch` calls
    (other work on the machine only ever adds time, so the fastest batch is the one it least disturbed)."""
    for i in range(batch):
        loop(i)
    best, clock = float("inf"), time.perf_counter
    for first in range(0, max(dispatches, batch), batch):
        start = clock()
        for i in range(first, first + batch):
            loop(i)
        best = min(best, clock() - start)
    return best / batch * 1e6


def measure(ctx, dispatches: int = 2000) -> dict[str, float]:
    """{loop: µs per dispatch}: bare program.run loops and the same loops through Kernel.run."""
    n_in, n_hidden, batch, n_samples, images = 784, 128, 128, 1024, 1024
    kernel = gl.Kernel(ctx, SHADER, {"MAX_H": n_hidden})
    arrays = {0: gl.empty(ctx, (images * n_in // 4,), np.uint32, "images"),
              1: gl.empty(ctx, (images,), np.uint32, "labels"), 2: gl.empty(ctx, (n_samples,), np.uint32, "order"),
              3: gl.empty(ctx, ((n_in + 11) * n_hidden + 10,), name="params"),
              6: gl.empty(ctx, (batch * n_hidden,), name="A1"), 7: gl.empty(ctx, (batch * n_hidden,), name="dZ1"),
              8: gl.empty(ctx, (batch * 10,), name="dlogits"), 9: gl.empty(ctx, (n_samples,), name="losses")}
    kernel.run(0, bindings=arrays, n_in=n_in, n_hidden=n_hidden, n_samples=n_samples, batch_size=batch, step=0,
               barrier=False)
    program, step, hidden = kernel.program, kernel.program["step"], kernel.program["n_hidden"]
    sizes = (n_hidden, n_hidden - 4)

    def bare_rebind(i):
        for binding, array in arrays.items():
            array.buffer.bind_to_storage_buffer(binding, offset=array.offset, size=array.nbytes)
        program.run(0, 1, 1)

    def bare_step(i):
        step.value = i
        program.run(0, 1, 1)

    def bare_hidden(i):
        hidden.value = sizes[i % 2]
        program.run(0, 1, 1)

    loops = {
        "no check (program.run)": lambda i: program.run(0, 1, 1),
        "Kernel.run, nothing changed": lambda i: kernel.run(0, barrier=False),
        "bare: set step, program.run": bare_step,
        "Kernel.run(step=...), a uniform no condition names": lambda i: kernel.run(0, barrier=False, step=i),
        "bare: set n_hidden, program.run": bare_hidden,
        "Kernel.run(n_hidden=...), 2 conditions and 3 lengths": lambda i: kernel.run(0, barrier=False,
                                                                                     n_hidden=sizes[i % 2]),
        "bare: bind 8 buffers, program.run": bare_rebind,
        "Kernel.run(bindings=...), the same 8 buffers": lambda i: kernel.run(0, bindings=arrays, barrier=False),
    }
    rows = {name: _per_dispatch(loop, dispatches) for name, loop in loops.items()}
    ctx.finish()
    for array in arrays.values():
        array.release()
    return rows


def report(rows: dict[str, float]) -> str:
    """The rows as lines, each Kernel.run loop beside the bare loop it repeats, with the difference."""
    names = list(rows)
    lines = [f"{'loop':56s} {'µs/dispatch':>12s} {'check costs':>12s}"]
    for bare, checked in zip(names[::2], names[1::2]):
        lines.append(f"{bare:56s} {rows[bare]:12.2f}")
        lines.append(f"{checked:56s} {rows[checked]:12.2f} {rows[checked] - rows[bare]:+11.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """python -m helpers.bench.contract [dispatches]"""
    argv = sys.argv[1:] if argv is None else argv
    ctx = gl.create_context()
    print(gl.describe(ctx))
    print(report(measure(ctx, int(argv[0]) if argv else 2000)))


if __name__ == "__main__":
    main()

"""How many work groups of a kernel each SM runs at the same time (its occupancy), measured from inside.

NVIDIA's GL_NV_shader_thread_group gives a shader gl_SMIDNV, the SM it runs on, and GL_ARB_shader_clock
gives clock2x32ARB(), that SM's clock. `instrument` adds both to a shader: invocation 0 of each work group
writes (its SM, the clock when main starts, the clock when main ends) to one more buffer. `groups_per_sm`
runs the instrumented kernel once, and `overlaps` counts on each SM the most groups whose start-to-end
intervals overlap. llvmpipe has neither extension: there groups_per_sm returns None.

    counts = occupancy.groups_per_sm(kernel, kernel.groups(M=n, N=n), {0: A, 1: B, 2: C}, M=n, N=n, K=n)
    counts["most"]        # the most groups one SM ran at once; counts["median"] over the SMs

The two clock reads and the store add a little work to each group, so time the kernel as committed.
"""

from __future__ import annotations

import copy
import re

import numpy as np

from .. import gl

BINDING = 15        # the record buffer's binding: far above the ones the shaders of glsl/ use
EXTENSIONS = ("#extension GL_NV_shader_thread_group : require\n"
              "#extension GL_ARB_shader_clock : require\n")


def instrument(source: str) -> str:
    """`source` with the record added. Its main() must be the file's last function, ending at the file's
    last `}`, with no early return for invocation 0 (true of the matmul rungs)."""
    if len(re.findall(r"\bvoid\s+main\s*\(\s*\)\s*\{", source)) != 1 or not source.rstrip().endswith("}"):
        raise ValueError("instrument needs one `void main() {` whose closing brace ends the file")
    version, rest = source.split("\n", 1)
    rest = re.sub(r"\bvoid\s+main\s*\(\s*\)\s*\{",
                  f"layout(std430, binding = {BINDING}) writeonly buffer Residency {{ uvec4 residency[]; }};\n"
                  "void main() {\n    uint start_clock_ = clock2x32ARB().x;", rest)
    end = rest.rstrip()[:-1]   # everything before main's closing brace
    record = ("    uint group_ = (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x"
              " + gl_WorkGroupID.x;\n"
              "    if (gl_LocalInvocationIndex == 0u)\n"
              "        residency[group_] = uvec4(gl_SMIDNV, start_clock_, clock2x32ARB().x, 1u);\n}\n")
    return f"{version}\n{EXTENSIONS}{end}{record}"


def overlaps(records: np.ndarray) -> dict[int, int]:
    """{SM: the most work groups running on it at once} from rows (SM, start, end, 1) of 32-bit clocks.

    The clock's low 32 bits wrap around every few seconds: a group's length is (end - start) mod 2**32, and
    on an SM whose starts straddle the wrap (spread over more than half the range) the small ones are moved
    up by 2**32. A start at the same clock as another group's end counts as overlapping it."""
    sm = records[:, 0].astype(np.int64)
    start = records[:, 1].astype(np.int64)
    length = (records[:, 2].astype(np.int64) - start) % (1 << 32)
    most = {}
    for s in np.unique(sm):
        mine = sm == s
        begins = start[mine]
        if begins.max() - begins.min() > 1 << 31:
            begins = np.where(begins < 1 << 31, begins + (1 << 32), begins)
        ends = begins + length[mine]
        events = sorted([(t, 0, +1) for t in begins] + [(t, 1, -1) for t in ends])
        running = peak = 0
        for _, _, change in events:
            running += change
            peak = max(peak, running)
        most[int(s)] = peak
    return most


def groups_per_sm(kernel: gl.Kernel, groups: tuple, bindings: dict, **uniforms) -> dict | None:
    """Run `kernel` (a gl.Kernel) once, instrumented, with `groups`, `bindings` and `uniforms` as for
    Kernel.run; {"most", "median", "sms", "groups"}: the most groups one SM ran at once, the median of that
    over the SMs used, how many SMs ran a group, and the groups dispatched. None without the extensions."""
    source = instrument(kernel.source)
    try:
        program = kernel.ctx.compute_shader(source)
    except Exception:            # moderngl.Error: no GL_NV_shader_thread_group or GL_ARB_shader_clock here
        return None
    probe = copy.copy(kernel)    # the same kernel (banner, length checks), the instrumented program
    probe.program, probe.buffers = program, gl.storage_buffers(source)
    count = int(np.prod(groups))
    record = gl.empty(kernel.ctx, (count, 4), np.uint32, name="residency", fill=0)
    try:
        probe.run(*groups, bindings={**bindings, BINDING: record}, **uniforms)
        rows = record.read()
    finally:
        record.release()
        program.release()
    if not rows[:, 3].all():
        raise RuntimeError(f"{kernel.name}: {int((rows[:, 3] == 0).sum())} of {count} work groups wrote no "
                           "record (does invocation 0 return early?)")
    most = list(overlaps(rows).values())
    return {"most": max(most), "median": float(np.median(most)), "sms": len(most), "groups": count}

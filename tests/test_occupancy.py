"""helpers/bench/occupancy.py: groups per SM from (SM, start clock, end clock) records, the shader it
instruments, and the measurement itself (None on llvmpipe, which lacks the two extensions; counted on NVIDIA,
where the instrumented kernel must still compute what the committed one does)."""

import numpy as np
import pytest

from helpers import check, gl, matmul
from helpers.bench import occupancy


def test_overlaps_counts_the_groups_an_sm_ran_at_once():
    rows = np.array([[0, 10, 20, 1], [0, 15, 30, 1], [0, 30, 40, 1],   # SM 0: two at once, the third starts as one ends
                     [1, 2**32 - 5, 5, 1], [1, 0, 3, 1],              # SM 1: across the clock's wrap, still overlapping
                     [2, 7, 7, 1], [2, 100, 200, 1]], np.uint32)      # SM 2: one at a time
    assert occupancy.overlaps(rows) == {0: 2, 1: 2, 2: 1}


def test_instrument_records_every_group_and_refuses_what_it_cannot_instrument():
    source = gl.shader_source("matmul_6_subgroup.comp")
    text = occupancy.instrument(source)
    assert text.startswith("#version 430\n" + occupancy.EXTENSIONS)
    assert gl.storage_buffers(text)[occupancy.BINDING] == ("Residency", np.uint32)
    assert text.rstrip().endswith("clock2x32ARB().x, 1u);\n}") and text.count("start_clock_") == 2
    with pytest.raises(ValueError, match="void main"):
        occupancy.instrument(source + "\nvoid extra() {}\nvoid main() {}\n")


def test_groups_per_sm_measures_without_changing_the_result(ctx, rng):
    kernel = matmul.load(ctx, "matmul_6_subgroup.comp")
    M, K, N = 300, 70, 260
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    A, B, C = gl.upload(ctx, a, "A"), gl.upload(ctx, b, "B"), gl.empty(ctx, (M, N), name="C")
    groups = kernel.groups(M=M, N=N)
    counts = occupancy.groups_per_sm(kernel, groups, {0: A, 1: B, 2: C}, M=M, N=N, K=K)
    if counts is None:
        assert not occupancy_extensions(ctx), "the driver has both extensions, yet nothing was measured"
        pytest.skip("no GL_NV_shader_thread_group / GL_ARB_shader_clock here (llvmpipe)")
    assert counts["groups"] == np.prod(groups) and 1 <= counts["sms"] <= counts["groups"]
    assert 1 <= counts["median"] <= counts["most"] <= counts["groups"]
    assert check.rel_error(C.read(), a.astype(np.float64) @ b) < 1e-5   # the instrumented run computed C


def occupancy_extensions(ctx) -> bool:
    try:
        ctx.compute_shader("#version 430\n" + occupancy.EXTENSIONS + "layout(local_size_x = 1) in;\nvoid main() {}\n")
        return True
    except Exception:
        return False

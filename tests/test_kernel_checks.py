"""gl.Kernel refuses, before any dispatch, a uniform the shader reads that was never set and group counts
other than the banner's Dispatch field gives, through Kernel.run and through kernel.program (bind, set or
program[...], then program.run, as notebook 05 dispatches); the legal dispatches still run and match NumPy."""

import numpy as np
import pytest

from helpers import banner, gl

M, N, K = 129, 45, 33     # C[129, 45]: matmul_9_interior's 128×128 blocks need 1×2×1 groups


@pytest.fixture
def product(ctx):
    rng = np.random.default_rng(41)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    arrays = {0: gl.upload(ctx, a, "A"), 1: gl.upload(ctx, b, "B"), 2: gl.empty(ctx, (M, N), name="C")}
    yield arrays, a @ b
    for array in arrays.values():
        array.release()


def matches(C, expected) -> bool:
    got = C.read()
    return not np.isnan(got).any() and np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max()


def untouched(C) -> bool:
    """Nothing was dispatched: C is still all NaN, as gl.empty made it."""
    return np.isnan(C.read()).all()


# ---- a uniform the shader reads, never set ---------------------------------------------------------------

def check_unset_message(error, uniform="K"):
    message = str(error.value)
    for part in ("matmul_9_interior.comp", f"uniform {uniform} ", "never set", f"{uniform} = 0", "Fix:",
                 f"kernel.set({uniform}=...)", f"kernel.program[{uniform!r}].value"):
        assert part in message, f"{part!r} missing from: {message}"


def test_run_refuses_a_uniform_never_set(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    with pytest.raises(gl.ShaderError) as error:
        kernel.run(*kernel.groups(M=M, N=N), bindings=arrays, M=M, N=N)       # no K: it would read 0
    check_unset_message(error)
    assert untouched(arrays[2])


def test_program_run_refuses_a_uniform_never_set_after_bind_and_set(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.bind(arrays)
    kernel.set(M=M, N=N)
    with pytest.raises(gl.ShaderError) as error:
        kernel.program.run(*kernel.groups(M=M, N=N))
    check_unset_message(error)
    assert untouched(arrays[2])


def test_program_run_refuses_a_uniform_never_set_through_program_items(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.bind(arrays)
    kernel.program["M"].value = M
    kernel.program["K"] = K
    with pytest.raises(gl.ShaderError) as error:
        kernel.program.run(*kernel.groups(M=M, N=N))
    check_unset_message(error, "N")
    assert untouched(arrays[2])


def test_every_unset_uniform_is_named(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.bind(arrays)
    with pytest.raises(gl.ShaderError, match=r"uniforms K, M, N are read by the shader but never set"):
        kernel.program.run(1, 2, 1)


def test_uniforms_set_through_program_items_count_as_set(ctx, product):
    arrays, expected = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.bind(arrays)
    kernel.program["M"].value = M
    kernel.program["N"] = N
    kernel.program["K"].write(np.uint32(K).tobytes())     # raw bytes count too
    kernel.program.run(*kernel.groups(M=M, N=N))
    kernel.ctx.memory_barrier()
    assert kernel.uniforms == {"M": M, "N": N, "K": K}
    assert matches(arrays[2], expected)


def test_a_uniform_the_compiler_removed_need_not_be_set(ctx):
    """Only the uniforms the compiled program reads count: fused_backward_1_update compiled for SGD reads
    no Adam or momentum uniform (the banner lists them all), so those need not be set."""
    kernel = gl.Kernel(ctx, "fused_backward_1_update.comp")
    assert {"beta1", "mu", "eps"} <= set(kernel.banner.uniforms) and not {"beta1", "mu", "eps"} & kernel._unset
    assert kernel._unset == {n for n in kernel.program.unchecked if gl._is_value_uniform(kernel.program.unchecked[n])}
    assert "lr" in kernel._unset
    kernel.set(**{name: 4 for name in kernel._unset - {"lr"}})
    for binding, (_, dtype) in kernel.buffers.items():   # buffers long enough, whatever earlier tests left bound
        gl.empty(ctx, (4096,), dtype or np.float32, name=f"b{binding}").bind_to(binding)
    with pytest.raises(gl.ShaderError, match="uniform lr is read by the shader but never set"):
        kernel.program.run(1, 1, 1)


# ---- group counts ---------------------------------------------------------------------------------------

def check_groups_message(error, given="1×1×1", axis="y = 1 < 2"):
    message = str(error.value)
    for part in ("matmul_9_interior.comp", f"{given} work groups", "groups (ceil(N/BN), ceil(M/BM), 1)",
                 "gives 1×2×1", f"M = {M}, N = {N}", "BM = 128", axis, "Fix:", f"kernel.groups(M={M}, N={N})"):
        assert part in message, f"{part!r} missing from: {message}"


def test_run_refuses_too_few_groups(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    with pytest.raises(gl.ShaderError) as error:
        kernel.run(1, 1, 1, bindings=arrays, M=M, N=N, K=K)      # 45 of the 129 rows would stay unwritten
    check_groups_message(error)
    assert untouched(arrays[2])


def test_program_run_refuses_too_few_groups(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.bind(arrays)
    kernel.set(M=M, N=N, K=K)
    with pytest.raises(gl.ShaderError) as error:
        kernel.program.run(1, 1, 1)
    check_groups_message(error)
    assert untouched(arrays[2])


def test_groups_are_checked_again_when_a_size_changes(ctx, product):
    """A dispatch that passed, then M set larger through program[...] with the same groups: refused."""
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.run(1, 1, 1, bindings=arrays, M=64, N=N, K=K)        # C's first 64 rows: one block
    kernel.program["M"].value = M
    with pytest.raises(gl.ShaderError) as error:
        kernel.program.run(1, 1, 1)
    check_groups_message(error)


def test_more_groups_are_refused_where_the_banner_does_not_allow_them(ctx, product):
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    with pytest.raises(gl.ShaderError) as error:
        kernel.run(2, 2, 1, bindings=arrays, M=M, N=N, K=K)
    check_groups_message(error, "2×2×1", "x = 2 > 1")
    assert "or more" in str(error.value)
    assert untouched(arrays[2])


@pytest.mark.parametrize("path", ["Kernel.run", "program.run"])
def test_exact_groups_run_and_match_numpy(ctx, product, path):
    arrays, expected = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    if path == "Kernel.run":
        kernel.run(*kernel.groups(M=M, N=N), bindings=arrays, M=M, N=N, K=K)
    else:
        kernel.bind(arrays)
        kernel.set(M=M, N=N, K=K)
        kernel.program.run(*kernel.groups(M=M, N=N))
        ctx.memory_barrier()
    assert matches(arrays[2], expected)


@pytest.mark.parametrize("path", ["Kernel.run", "program.run"])
def test_more_groups_where_the_banner_says_the_shader_ignores_them(ctx, product, path):
    """matmul_2_tiled: `groups (ceil(N/TILE) or more, ceil(M/TILE) or more, 1)`; its threads past C return."""
    arrays, expected = product
    kernel = gl.Kernel(ctx, "matmul_2_tiled.comp")
    x, y, z = kernel.groups(M=M, N=N)
    if path == "Kernel.run":
        kernel.run(x + 3, y + 1, z, bindings=arrays, M=M, N=N, K=K)
    else:
        kernel.bind(arrays)
        kernel.set(M=M, N=N, K=K)
        kernel.program.run(x + 3, y + 1, z)
        ctx.memory_barrier()
    assert matches(arrays[2], expected)
    with pytest.raises(gl.ShaderError, match=r"z = 2 > 1"):                # z has no `or more`
        kernel.run(x, y, 2)
    with pytest.raises(gl.ShaderError, match=r"y = 8 < 9"):                # fewer: never
        kernel.run(x, y - 1, z)


def test_a_dispatch_loop_checks_once(ctx, product, monkeypatch):
    """Uniforms set once, the same groups: check_dispatch runs at the first dispatch only; a uniform the
    Dispatch field names (written through program[...]) makes the next dispatch check again."""
    arrays, expected = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.bind(arrays)
    kernel.set(M=M, N=N, K=K)
    calls = []
    check = kernel.check_dispatch
    monkeypatch.setattr(kernel, "check_dispatch", lambda *groups: (calls.append(groups), check(*groups)))
    groups = kernel.groups(M=M, N=N)
    for _ in range(5):
        kernel.program.run(*groups)
    assert calls == [groups]
    kernel.program["K"].value = K          # no check names K
    kernel.program.run(*groups)
    assert len(calls) == 1
    kernel.program["M"].value = M          # the Dispatch field names M: checked again (same value, same groups)
    kernel.program.run(*groups)
    assert len(calls) == 2
    ctx.memory_barrier()
    assert matches(arrays[2], expected)


def test_a_new_program_starts_with_no_uniform_set(ctx, product):
    """Assigning kernel.program (as the occupancy probe does with an instrumented copy) starts afresh."""
    arrays, _ = product
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    kernel.run(*kernel.groups(M=M, N=N), bindings=arrays, M=M, N=N, K=K)
    kernel.program = ctx.compute_shader(kernel.source)
    assert kernel.uniforms == {} and isinstance(kernel.program, gl.CheckedProgram)
    with pytest.raises(gl.ShaderError, match="never set"):
        kernel.program.run(*kernel.groups(M=M, N=N))


def test_checked_program_is_the_compute_shader_otherwise(ctx):
    kernel = gl.Kernel(ctx, "matmul_9_interior.comp")
    raw = kernel.program.unchecked
    assert kernel.program.glo == raw.glo and kernel.program.ctx is raw.ctx
    assert set(kernel.program) == set(raw) and "K" in kernel.program and "nope" not in kernel.program
    assert kernel.program.get("nope", None) is None and kernel.program.get("K", None) is kernel.program["K"]
    assert kernel.program["BufA"] is raw["BufA"]          # a storage block: as moderngl gives it


# ---- the banner's `or more` ----------------------------------------------------------------------------

def test_banner_reads_or_more_per_axis():
    source = "#version 430\n// Dispatch  local (16, 16, 1); groups (ceil(N/16) or more, ceil(M/16), 1)\n"
    parsed = banner.parse(source, "probe.comp")
    assert parsed.groups == ("ceil(N/16)", "ceil(M/16)", "1")
    assert parsed.extra_groups == (True, False, False)
    assert banner.dispatch_groups(parsed, {"N": 33, "M": 17}) == (3, 2, 1)

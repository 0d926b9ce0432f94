"""Every glsl/*.comp as a GLSL user tunes it, and the contract its banner states on uniforms and #defines.

- A `#define NAME value` placed right after `#version` overrides a tunable in bare ModernGL (no helpers in
  the compile): the work group size it sets is the one the driver reports, and a value a `#if ... #error`
  block refuses hits that #error.
- The banner's Requires field states every `#if ... #error` condition of the file (checked over many
  values of the #defines), every `#if VEC4` path's need of n_hidden, every bound a MAX_* or B_PAD #define
  puts on a uniform, and the notes of the Uniforms field ("multiple of 4", "<= MAX_IN").
- gl.Kernel.run refuses a uniform that breaks a condition, on every dispatch path, with a message naming
  the shader, the uniform, the condition and the fix; and a buffer too short for the uniforms set, bound
  now, by bind(), or earlier by another kernel.
- A group count the Dispatch field marks `or more` is one the shader means: 3 extra groups on that axis
  change no buffer it writes, bit for bit, not even past an array's end.
"""

import ctypes
import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import banner, gl

GLSL = Path(__file__).resolve().parent.parent / "glsl"
SHADERS = sorted(GLSL.glob("*.comp"))
IDS = [path.name for path in SHADERS]
# Uniform values that meet every shader's Requires with its default #defines (the bad values are made from these).
SIZES = dict(B=37, K=70, N=13, M=29, C=10, n=1001, start=5, slot=3, n_in=784, n_hidden=128, n_samples=1000,
             batch_size=64, step=2, count=50, n_groups=7, rounds=3, KS=24, pieces=3, steps=16,
             param_stride=102_808, phase_first=0, phase_end=1, roles=7, seed=1, rng_step=0)
# A #define that only a condition's derived macro stands for, as its #if reads on a GPU without subgroups.
DERIVED = {"defined(B_BY_SHUFFLE)": "(USE_SUBGROUP == 2)"}
# A condition whose `if` is false under a shader's own #defines is tested compiled with these, where it binds.
DEFINES_FOR = {("fused_head_1_xent.comp", "n_hidden <= MAX_H if KSPLIT > 1"): {"KSPLIT": 2, "MAX_H": SIZES["n_hidden"]}}
_COMPUTE_WORK_GROUP_SIZE = 0x8267


def error_blocks(source: str) -> list[tuple[str, str]]:
    """(condition, message) of every `#if <condition>` whose next line is `#error <message>`."""
    return re.findall(r"^[ \t]*#if[ \t]+(.+?)[ \t]*\n[ \t]*#error[ \t]+(.+?)[ \t]*$", source, re.MULTILINE)


def as_python(condition: str) -> str:
    """A preprocessor condition (integers only) as a Python expression with the same value."""
    for derived, meaning in DERIVED.items():
        condition = condition.replace(derived, meaning)
    condition = condition.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    return re.sub(r"!(?!=)", " not ", condition)


def c_true(condition: str, values: dict, zero_divisor: bool = True) -> bool:
    """The condition's value; a zero divisor, which the preprocessor refuses, counts as `zero_divisor`."""
    try:
        return bool(eval(as_python(condition), {"__builtins__": {}}, dict(values)))
    except ZeroDivisionError:
        return zero_divisor


def with_define(source: str, name: str, value) -> str:
    """What a GLSL user does: a `#define` right after `#version`."""
    first, rest = source.split("\n", 1)
    return f"{first}\n#define {name} {value}\n{rest}"


def candidates(value: int) -> list[int]:
    """Other values a #define might be given: around, above and below its default, and odd ones."""
    return sorted({0, 1, 2, 3, 5, 6, 7, 12, 33, 2048, value - 1, value + 1, value + 2, value * 2, value * 4,
                   max(value // 2, 0), value * 3} - {value})


def work_group_size(ctx, program) -> tuple:
    size = (ctypes.c_int * 3)()
    gl.function(ctx, "glGetProgramiv", None, ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_int))(
        program.glo, _COMPUTE_WORK_GROUP_SIZE, size)
    return tuple(size)


def compile_error(ctx, source: str) -> str | None:
    try:
        ctx.compute_shader(source).release()
    except Exception as exc:
        return str(exc)
    return None


# --- tunables overridable after #version, in bare ModernGL ------------------------------------------

@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_every_tunable_is_guarded(path):
    source = path.read_text()
    top = source[:re.search(r"^\s*layout\s*\(", source, re.MULTILINE).start()]
    plain = re.findall(r"^[ \t]*#define[ \t]+(\w+)", top, re.MULTILINE)
    guarded = gl.tunables(source)
    derived = {name for name in plain if not name in guarded and
               re.search(rf"^[ \t]*#(?:if|ifdef|elif|else).*\n(?:.*\n)??[ \t]*#define[ \t]+{name}\b", top, re.MULTILINE)}
    assert guarded, f"glsl/{path.name}: no `#ifndef NAME` / `#define NAME value` / `#endif` tunable"
    assert set(plain) - set(guarded) <= derived, \
        f"glsl/{path.name}: guard {sorted(set(plain) - set(guarded) - derived)} with #ifndef so a #define after #version overrides them"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_an_override_after_version_takes_effect(ctx, path):
    """The local size an override sets is the driver's; without the guard the same source would fail with
    "Redefinition of macro"."""
    source = path.read_text()
    parsed = banner.parse(source, path.name)
    defaults = banner.define_values(source)
    assert work_group_size(ctx, ctx.compute_shader(source)) == tuple(banner.evaluate(e, defaults) for e in parsed.local)
    tested = 0
    for name in sorted({n for e in parsed.local for n in banner.names(e)} & set(gl.tunables(source))):
        for value in candidates(defaults[name]):
            values = {**defaults, name: value}
            if value < 1 or banner.unmet(parsed, values) or any(c_true(c, values) for c, _ in error_blocks(source)):
                continue
            expected = tuple(banner.evaluate(e, values) for e in parsed.local)
            if expected == work_group_size(ctx, ctx.compute_shader(source)) or max(expected) > 1024:
                continue
            program = ctx.compute_shader(with_define(source, name, value))
            assert work_group_size(ctx, program) == expected, f"glsl/{path.name}: #define {name} {value} after #version"
            program.release()
            tested += 1
            break
    assert tested or error_blocks(source), f"glsl/{path.name}: no override could be shown to take effect"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_a_bad_override_hits_its_error(ctx, path):
    source = path.read_text()
    defaults = banner.define_values(source)
    blocks = error_blocks(source)
    if not blocks:
        pytest.skip(f"glsl/{path.name} has no #error check")
    for condition, message in blocks:
        assert not c_true(condition, defaults), f"glsl/{path.name}: the defaults trip `#if {condition}`"
        trips = lambda change: c_true(condition, {**defaults, **change}, zero_divisor=False)
        bad = next(({name: value} for name in sorted(defaults) for value in candidates(defaults[name])
                    if trips({name: value})), None)
        if bad is None:     # a pair of defines: try the defaults' neighbours
            bad = next(({a: va, b: vb} for a, b in itertools.combinations(sorted(defaults), 2)
                        for va in candidates(defaults[a]) for vb in candidates(defaults[b])
                        if trips({a: va, b: vb})), None)
        assert bad is not None, f"glsl/{path.name}: found no value that trips `#if {condition}`"
        text = source
        for name, value in bad.items():
            text = with_define(text, name, value)
        error = compile_error(ctx, text)
        assert error is not None and message.strip('"')[:30] in error, \
            f"glsl/{path.name}: {bad} after #version should hit `#error {message}`, got: {error}"


# --- the banner states every condition the file has ---------------------------------------------------

def define_requirements(parsed, defaults):
    return [r for r in parsed.requires if r.names <= defaults.keys()]


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_requires_states_every_error_condition(path):
    """Wherever `#if <condition>` / `#error` fires, over each #define's neighbourhood and pairs of them,
    a Requires condition on #defines fails too; and the defaults meet every condition."""
    source = path.read_text()
    parsed = banner.parse(source, path.name)
    defaults = banner.define_values(source)
    assert not banner.unmet(parsed, defaults), f"glsl/{path.name}: the defaults break {banner.unmet(parsed, defaults)}"
    blocks = error_blocks(source)
    if blocks:
        assert define_requirements(parsed, defaults), f"glsl/{path.name}: #error checks but no `// Requires` conditions"
    names = sorted(n for n in defaults if any(re.search(rf"\b{n}\b", c) for c, _ in blocks))
    trials = [{n: v} for n in names for v in candidates(defaults[n])]
    trials += [{a: va, b: vb} for a, b in itertools.combinations(names, 2)
               for va in candidates(defaults[a])[::3] for vb in candidates(defaults[b])[::3]]
    for change in trials:
        values = {**defaults, **change}
        for condition, message in blocks:
            if c_true(condition, values):
                assert any(banner.holds(r, values) is False for r in define_requirements(parsed, defaults)), \
                    f"glsl/{path.name}: {change} trips `#if {condition}` (#error {message}), but the banner's " \
                    f"Requires holds; state the condition there"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_requires_states_what_uniforms_need(path):
    source = path.read_text()
    parsed = banner.parse(source, path.name)
    stated = {r.text for r in parsed.requires}
    if re.search(r"^[ \t]*#if[ \t]+VEC4\b", source, re.MULTILINE):
        assert "n_hidden % 4 == 0 if VEC4" in stated, f"glsl/{path.name}: the VEC4 path needs `n_hidden % 4 == 0 if VEC4`"
    for bound in (n for n in gl.tunables(source) if n.startswith("MAX_") or n == "B_PAD"):
        assert any(bound in r.names and r.names - set(gl.tunables(source)) for r in parsed.requires), \
            f"glsl/{path.name}: {bound} bounds a uniform; state it in Requires (e.g. `n_in <= MAX_IN`)"
    uniforms = parsed.fields.get("Uniforms", "")
    for name, note in re.findall(r"(\w+) \(([^()]*)\)", uniforms):
        if "multiple of 4" in note:
            assert f"{name} % 4 == 0" in stated, f"glsl/{path.name}: Uniforms says {name} is a multiple of 4; Requires does not"
        for limit in re.findall(r"<= (\w+)", note):
            assert f"{name} <= {limit}" in stated, f"glsl/{path.name}: Uniforms says {name} <= {limit}; Requires does not"


def test_a_condition_outside_the_language_is_refused():
    with pytest.raises(gl.ShaderError, match=r"x\.comp: the banner's Requires field does not parse at 'n \*\* 2 < 4'"):
        banner.parse("#version 430\n// x.comp: t\n//\n// Requires  n ** 2 < 4\n", "x.comp")
    parsed = banner.parse("#version 430\n// Requires  n % 4 == 0 if VEC4;  1 <= COLS <= 8;  "
                          "(L & (L - 1)) == 0;  A == 1 or A == 2\n", "y.comp")
    holds = lambda **v: [banner.holds(r, v) for r in parsed.requires]
    assert holds(n=6, VEC4=1, COLS=8, L=64, A=2) == [False, True, True, True]
    assert holds(n=6, VEC4=0, COLS=9, L=48, A=3) == [True, False, False, False]
    assert holds(n=6) == [None, None, None, None]          # values not given: not checked


# --- Kernel.run refuses a uniform that breaks a condition --------------------------------------------

def uniform_cases():
    for path in SHADERS:
        parsed = banner.parse(path.read_text(), path.name)
        for requirement in parsed.requires:
            if requirement.names & parsed.uniforms.keys():
                yield pytest.param(path.name, requirement.text, id=f"{path.name}: {requirement.text}")


def breaking(parsed, requirement, values: dict, uniforms: dict) -> dict:
    """One uniform of `requirement` changed so that it, and no other condition, fails."""
    for name in sorted(requirement.names & uniforms.keys()):
        v = values[name]
        for value in (v + 1, v - 1, v + 2, v + 4, v * 2, v * 16, v * 10 + 1, 1_000_000, 1_000_003, 0):
            if [r.text for r in banner.unmet(parsed, {**values, name: value})] == [requirement.text]:
                return {name: value}
    raise AssertionError(f"no uniform value breaks {requirement.text}")


@pytest.mark.parametrize("name, text", list(uniform_cases()))
def test_kernel_run_refuses_a_uniform_that_breaks_the_banner(ctx, name, text):
    kernel = gl.Kernel(ctx, name, DEFINES_FOR.get((name, text)))
    requirement = next(r for r in kernel.banner.requires if r.text == text)
    good = {u: SIZES[u] for u in kernel.banner.uniforms if u in SIZES and u in kernel.program}
    assert not banner.unmet(kernel.banner, {**kernel.define_values, **good}), "SIZES must meet every condition"
    bad = breaking(kernel.banner, requirement, {**kernel.define_values, **good}, good)
    uniform = next(iter(bad))
    for attempt in ("now", "set earlier"):
        kernel.set(**good)
        with pytest.raises(gl.ShaderError) as error:
            if attempt == "now":
                kernel.run(1, 1, 1, **bad)
            else:
                kernel.set(**bad)
                kernel.run(1, 1, 1)
        message = str(error.value)
        for part in (name, f"uniform {uniform}", f"`{text}`", f"{uniform} = {bad[uniform]}", "Fix: set"):
            assert part in message, f"{part!r} missing from: {message}"


def test_the_silent_wrong_result_is_refused(ctx):
    """fused_forward_1_xent with VEC4 1 reads W1 four hidden units at a time: n_hidden = 37 gave wrong
    numbers without an error."""
    kernel = gl.Kernel(ctx, "fused_forward_1_xent.comp")
    kernel.set(n_in=784, n_samples=100, batch_size=10, step=0)
    with pytest.raises(gl.ShaderError, match=r"fused_forward_1_xent\.comp: uniform n_hidden breaks the banner's "
                                             r"requirement `n_hidden % 4 == 0 if VEC4` \(VEC4 = 1, n_hidden = 37\).*"
                                             r"Fix: set n_hidden so that it holds, or compile with other VEC4"):
        kernel.run(1, n_hidden=37)
    gl.Kernel(ctx, "fused_forward_1_xent.comp", {"VEC4": 0}).set(n_hidden=37)   # the other path takes any size


# --- Kernel.run checks bound buffers on every path ----------------------------------------------------

@pytest.fixture
def dense(ctx):
    kernel = gl.Kernel(ctx, "dense_1_naive.comp")
    arrays = {0: gl.empty(ctx, (16, 5), name="X"), 1: gl.empty(ctx, (5, 16), name="W"), 2: gl.empty(ctx, (16,), name="b"),
              3: gl.empty(ctx, (8, 8), name="Y")}
    return kernel, arrays


def test_buffers_bound_earlier_are_checked(ctx, dense):
    kernel, arrays = dense
    short = gl.empty(ctx, (2, 2), name="Y (short)")
    kernel.run(1, 1, bindings=arrays, B=8, K=5, N=8)                     # fits
    kernel.bind({**arrays, 3: short})                                    # bound by bind(), run without bindings
    with pytest.raises(gl.ShaderError, match=r"binding 3 \(Y\) holds 4 elements, but the banner needs float\[B\*N\] = 64"):
        kernel.run(1, 1)
    kernel.bind(arrays)
    kernel.run(1, 1)
    short.bind_to(3)                                                     # bound by someone else
    with pytest.raises(gl.ShaderError, match=r"binding 3 \(Y\) holds 4 elements"):
        kernel.run(1, 1)
    arrays[3].bind_to(3)
    kernel.run(1, 1)
    with pytest.raises(gl.ShaderError, match=r"binding 3 \(Y\) holds 64 elements, but the banner needs float\[B\*N\] = 72"):
        kernel.run(1, 1, B=9)                                            # a uniform grows past a bound buffer
    kernel.set(B=8)
    other = gl.Kernel(ctx, "dense_2_splitk.comp")                        # another kernel binds a short X
    with pytest.raises(gl.ShaderError, match=r"dense_2_splitk\.comp: binding 0 \(X\) holds 4 elements"):
        other.run(1, 1, bindings={**arrays, 0: gl.empty(ctx, (4,), name="X (short)")}, B=8, K=5, N=8)
    with pytest.raises(gl.ShaderError, match=r"dense_1_naive\.comp: binding 0 \(X\) holds 4 elements"):
        kernel.run(1, 1)                                                 # it stays bound: this kernel sees it too


def test_a_check_that_failed_is_made_again(ctx, dense):
    kernel, arrays = dense
    kernel.bind(arrays)
    for _ in range(2):
        with pytest.raises(gl.ShaderError, match="holds 80 elements"):
            kernel.run(1, 1, B=8, K=11, N=8)


def test_contract_cost_runs(ctx):
    from helpers.bench import contract

    rows = contract.measure(ctx, dispatches=60)
    assert {"kernel.program.run, nothing changed", "Kernel.run, nothing changed", "Kernel.run(step=s)"} <= set(rows)
    for bare, checked in rows.values():
        assert len(bare.samples) == len(checked.samples) == 3 and bare.median > 0 and checked.median > 0
    text = contract.report(rows)
    assert all(name in text for name in rows) and text.count("µs (") == 3 * len(rows)


def test_contract_cost_is_taken_sample_by_sample():
    from helpers import timing
    from helpers.bench import contract

    bare, checked = timing.Timing((1e-6, 2e-6, 3e-6)), timing.Timing((1.5e-6, 2.5e-6, 3.5e-6))
    assert contract.cost(bare, checked).samples == pytest.approx((0.5e-6,) * 3)


@pytest.mark.parametrize("kind", ["GPUTrainer", "FusedMLP"])
def test_a_trainer_without_checks_trains_the_same_bits_and_holds_nothing_checked(ctx, kind):
    from helpers import fused_mlp, gpu_mlp, reference
    from helpers.bench import contract

    cls = {"GPUTrainer": gpu_mlp.GPUTrainer, "FusedMLP": fused_mlp.FusedMLP}[kind]
    rng = np.random.default_rng(3)
    images, labels = rng.integers(0, 256, (300, 784), dtype=np.uint8), rng.integers(0, 10, 300)
    made = [cls(ctx, reference.init_params(784, 20, 10, seed=1), images, labels, optimizer=reference.SGD(0.1),
                batch_size=64, seed=2) for _ in range(2)]
    contract.without_checks(made[0])
    for trainer in made:
        trainer.run_epoch(0)
    held = [getattr(made[0], name, None) for name in ("_u_step", "_u_start", "_u_rng_step", "_u_slot", "_u_step_head")]
    flat = [u for h in held if h is not None for u in (h if isinstance(h, (list, tuple)) else (h,))]
    flat += [p for p, _ in made[0].plan] if kind == "GPUTrainer" else []
    assert flat and not any(isinstance(u, (gl.CheckedProgram, gl.CheckedUniform)) for u in flat)
    assert all(not isinstance(k.program, gl.CheckedProgram) for k in made[0].kernels.values())
    a, b = made[0].read_params(), made[1].read_params()
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    for trainer in made:
        trainer.release()


def test_contract_epochs_run_and_say_which_is_faster(ctx):
    from helpers.bench import contract

    rows = contract.epochs(ctx, repeat=2, n=256)
    assert set(rows) == set(contract.TRAINERS)
    assert all(len(b.samples) == len(c.samples) == 2 for b, c in rows.values())
    assert [v.outcome for v in contract.epoch_verdicts(rows)] and all(
        "without the checks" in v for v in contract.epoch_verdicts(rows))


# ---- `<count> or more`: the banner's promise that extra work groups change nothing ----------------------

def extra_group_cases():
    for path in SHADERS:
        parsed_banner = banner.parse(path.read_text(), path.name)
        for axis, more in enumerate(parsed_banner.extra_groups):
            if more:
                yield pytest.param(path.name, axis, id=f"{path.name}: {'xyz'[axis]}")


def test_some_banners_allow_extra_groups():
    assert len(list(extra_group_cases())) >= 5


@pytest.mark.parametrize("name, axis", list(extra_group_cases()))
def test_extra_groups_where_the_banner_allows_them_change_nothing(ctx, name, axis):
    """Run the shader with the banner's group counts and again with 3 more on an `or more` axis, from the
    same random contents, every buffer with a poisoned tail past its banner length: every buffer it writes
    comes out bit for bit the same (no write past an array's end, no work done twice)."""
    rng = np.random.default_rng(7)
    results = []
    for extra in (0, 3):
        kernel = gl.Kernel(ctx, name)
        uniforms = {u: SIZES[u] if kernel.banner.uniforms[u] != "float" else 0.5
                    for u in kernel.banner.uniforms if u in kernel.program}
        values = {**kernel.define_values, **uniforms}
        arrays = {}
        for number, binding in kernel.banner.bindings.items():
            length = banner.evaluate(binding.length, values) + 64        # 64 elements past the end: poison
            dtype = kernel.buffers[number][1]
            data = (rng.standard_normal(length).astype(np.float32) if dtype is np.float32
                    else rng.integers(0, 2 ** 31, length).astype(dtype))
            data[-64:] = np.nan if dtype is np.float32 else 0xDEADBEEF
            arrays[number] = gl.upload(ctx, data, binding.name)
        rng = np.random.default_rng(7)                                   # the same contents both times
        groups = list(kernel.groups(**uniforms))
        groups[axis] += extra
        kernel.run(*groups, bindings=arrays, **uniforms)
        written = [n for n, b in kernel.banner.bindings.items() if b.access != "readonly"]
        results.append({n: arrays[n].read().tobytes() for n in written})
        for array in arrays.values():
            array.release()
    assert results[0] == results[1]

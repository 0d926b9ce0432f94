"""The banner is a contract: every glsl/*.comp file's name and banner against its own source, and the two
things helpers do with a banner (gl.Kernel.groups sizes a dispatch, gl.Kernel.run checks bound lengths).

The rules are in glsl/README.md: `<operation>_<version>_<idea>.comp`; Bindings `<binding> <name>
<type>[<length>] (<access>)`; Uniforms `<type> <name>, ...`; Dispatch `local (x, y, z); groups (x, y, z)`.
"""

import re
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from helpers import banner, gl

GLSL = Path(__file__).resolve().parent.parent / "glsl"
SHADERS = sorted(GLSL.glob("*.comp"))
IDS = [path.name for path in SHADERS]
NAME = re.compile(r"([a-z]+(?:_[a-z]+)*)_([1-9][0-9]*)_([a-z0-9]+)\.comp")
SHADER_REFERENCE = re.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+(?:_[a-z0-9]+)?\b")   # matmul_2_tiled, or a stale matmul_2
# Sample sizes for every uniform and data size a banner names: awkward, not multiples of any tile.
SIZES = dict(B=37, K=70, N=13, M=29, C=10, n=1001, start=5, slot=3, n_in=784, n_hidden=130, n_samples=1000,
             batch_size=64, step=2, count=50, n_images=1200, n_groups=7, rounds=3, KS=24, pieces=3,
             steps=16, param_stride=102_808)


def comments(source: str) -> str:
    """The banner as text: the `//` lines right after `#version`."""
    lines = []
    for line in source.splitlines()[1:]:
        if not line.startswith("//"):
            break
        lines.append(line[2:])
    return "\n".join(lines)


def declarations(source: str) -> dict:
    """{binding: (array name, element type, access)} from the layout(binding=...) lines; first view wins."""
    found = {}
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.DOTALL)
    pattern = r"layout\s*\(([^)]*)\)\s*((?:\w+\s+)*)buffer\s+\w+\s*\{\s*(\w+)\s+(\w+)\s*\[\s*\]\s*;\s*\}"
    for layout, qualifiers, type_, name in re.findall(pattern, code):
        number = int(re.search(r"binding\s*=\s*(\d+)", layout).group(1))
        access = "readonly" if "readonly" in qualifiers else "writeonly" if "writeonly" in qualifiers else "read-write"
        found.setdefault(number, (name, type_, access))
    return found


def uniforms(source: str) -> dict:
    """{name: type} of every `uniform` line, those inside #if blocks included."""
    code = re.sub(r"//[^\n]*", "", source)
    return {name: type_ for type_, names in re.findall(r"^\s*uniform\s+(\w+)\s+([\w\s,]+);", code, re.MULTILINE)
            for name in re.split(r"\s*,\s*", names.strip())}


def local_size(source: str) -> tuple:
    """The expressions of layout(local_size_x = ..., ...) in; a missing one is 1."""
    layout = re.search(r"layout\s*\(([^)]*local_size[^)]*)\)\s*in\s*;", source).group(1)
    sizes = dict(re.findall(r"local_size_([xyz])\s*=\s*(\w+)", layout))
    return tuple(sizes.get(axis, "1") for axis in "xyz")


def parsed(path: Path):
    source = path.read_text()
    return source, banner.parse(source, path.name), {**banner.define_values(source), **SIZES}


# --- file names and versions ------------------------------------------------------------------------

@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_file_name_follows_the_rule(path):
    assert NAME.fullmatch(path.name), f"glsl/{path.name}: name it <operation>_<version>_<idea>.comp (glsl/README.md)"


def test_versions_of_each_operation_are_numbered_without_gaps():
    versions = defaultdict(list)
    for path in SHADERS:
        operation, version, _ = NAME.fullmatch(path.name).groups()
        versions[operation].append(int(version))
    for operation, numbers in versions.items():
        assert sorted(numbers) == list(range(1, len(numbers) + 1)), \
            f"{operation}_*.comp have versions {sorted(numbers)}: number them 1..{len(numbers)}, once each"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_changed_names_the_version_it_changes(path):
    changed = banner.parse(path.read_text(), path.name).fields.get("Changed", "")
    version = int(NAME.fullmatch(path.name).group(2))
    if version == 1:
        assert changed.startswith("first version"), f"glsl/{path.name}: a version 1 says `// Changed   first version...`"
        return
    match = re.match(r"vs (\w+): ", changed)
    assert match, f"glsl/{path.name}: version {version} needs `// Changed   vs <file without .comp>: what changed`"
    assert (GLSL / f"{match.group(1)}.comp").is_file() and match.group(1) != path.stem, \
        f"glsl/{path.name}: `Changed vs {match.group(1)}` names no other shader in glsl/"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_every_shader_a_banner_names_exists(path):
    stems = {p.stem for p in SHADERS}
    stale = sorted(set(SHADER_REFERENCE.findall(comments(path.read_text()))) - stems)
    assert not stale, f"glsl/{path.name}: the banner names {stale}; no such file in glsl/ (give the whole file name)"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_banner_stands_alone(path):
    text = comments(path.read_text())
    for word in ("helpers.", "helpers/", "reference.", "pack_u8"):
        assert word not in text, f"glsl/{path.name}: the banner mentions {word!r}; say it in the banner instead"


# --- the banner against the source ------------------------------------------------------------------

@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_bindings_match_the_layout_lines(path):
    source, parsed_banner, _ = parsed(path)
    declared = declarations(source)
    assert set(parsed_banner.bindings) == set(declared), \
        f"glsl/{path.name}: banner bindings {sorted(parsed_banner.bindings)}, layout(binding=...) {sorted(declared)}"
    assert set(declared) == set(gl.storage_buffers(source))   # the same reading as gl.Kernel.bind
    for number, (name, type_, access) in declared.items():
        b = parsed_banner.bindings[number]
        assert (b.name, b.type, b.access) == (name, type_, access), \
            f"glsl/{path.name}: binding {number} is `{name} {type_}[] ({access})` in the source, " \
            f"`{b.name} {b.type}[...] ({b.access})` in the banner"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_uniforms_match_the_source(path):
    source, parsed_banner, _ = parsed(path)
    assert parsed_banner.uniforms == uniforms(source), f"glsl/{path.name}: banner Uniforms differ from the source"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_lengths_and_groups_evaluate(path):
    source, parsed_banner, values = parsed(path)
    assert parsed_banner.local and parsed_banner.groups, f"glsl/{path.name}: no Dispatch field"
    known = set(uniforms(source)) | set(banner.define_values(source))
    shapes = parsed_banner.fields.get("Shapes", "")
    for expression in (*parsed_banner.local, *parsed_banner.groups, *(b.length for b in parsed_banner.bindings.values())):
        for name in banner.names(expression) - known:   # a data size: the Shapes field must say what it is
            assert re.search(rf"\b{name}\b", shapes), f"glsl/{path.name}: {expression} uses {name}, which Shapes never explains"
    counts = banner.dispatch_groups(parsed_banner, values)
    assert all(isinstance(c, int) and c >= 1 for c in counts), counts
    for number, b in parsed_banner.bindings.items():
        length = banner.evaluate(b.length, values)
        assert isinstance(length, int) and length >= 0, f"glsl/{path.name}: binding {number} length {b.length} = {length}"
    # the local size the banner states is the one the shader declares
    local = tuple(banner.evaluate(e, values) for e in parsed_banner.local)
    assert local == tuple(banner.evaluate(e, values) for e in local_size(source)), f"glsl/{path.name}: local {local}"


def test_update_shaders_share_params_and_grads():
    updates = sorted(GLSL.glob("update_*.comp"))
    assert len(updates) == 3
    first = None
    for path in updates:
        source = path.read_text()
        b = banner.parse(source, path.name).bindings
        shared = ({n: b[n] for n in (17, 18)}, {n: declarations(source)[n] for n in (17, 18)})
        assert first is None or shared == first, f"glsl/{path.name}: params and grads differ from {updates[0].name}"
        first = shared


# --- expressions ------------------------------------------------------------------------------------

def test_expressions_are_exact_and_whitelisted():
    assert banner.evaluate("ceil(N/TILE)", {"N": 17, "TILE": 16}) == 2
    assert banner.evaluate("N/TILE", {"N": 17, "TILE": 16}) == Fraction(17, 16)    # exact, not 1 or 1.0625
    assert banner.evaluate("min(a, b)*2 + max(a, b) // 3 % 5 - 1", {"a": 4, "b": 9}) == 10
    assert banner.evaluate("(OPTIMIZER // 2)*n", {"OPTIMIZER": 1, "n": 7}) == 0
    for bad in ("__import__('os')", "N**2", "N.real", "N if N else 1", "[N]", "abs(N)", "1.5*N", "-N", "N < 2"):
        with pytest.raises(gl.ShaderError, match="not allowed"):
            banner.evaluate(bad, {"N": 3})
    with pytest.raises(banner.MissingValue) as missing:
        banner.evaluate("B*K", {"B": 2})
    assert missing.value.name == "K"


def test_a_malformed_banner_is_refused():
    source = "#version 430\n// x.comp: test\n//\n// Bindings  0 X float[B*K] readonly\n"
    with pytest.raises(gl.ShaderError, match=r"x\.comp: the banner's Bindings field does not parse at '0 X float\[B\*K\] readonly'"):
        banner.parse(source, "x.comp")
    with pytest.raises(gl.ShaderError, match="Dispatch"):
        banner.parse("#version 430\n// Dispatch  local (16, 1); groups (1, 1, 1)\n", "y.comp")


# --- Kernel.groups: the one place that sizes a dispatch -------------------------------------------

def ceil(a, b):
    return -(-a // b)


# Group counts worked out by hand from each family's tile: (x, y, z) from the kernel's defines and sizes.
BY_HAND = {
    "matmul_1_naive.comp": lambda d, s: (ceil(s["N"], d("LOCAL_X")), ceil(s["M"], d("LOCAL_Y")), 1),
    "matmul_2_tiled.comp": lambda d, s: (ceil(s["N"], d("TILE")), ceil(s["M"], d("TILE")), 1),
    "matmul_3_blocked.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "matmul_4_bigtile.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "matmul_5_pipelined.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "matmul_6_subgroup.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "matmul_7_vec4k.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "matmul_8_splitk.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), ceil(s["K"], s["KS"])),
    "matmul_9_interior.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "matmul_10_prefetch.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["M"], d("BM")), 1),
    "dense_1_naive.comp": lambda d, s: (ceil(s["N"], d("LOCAL_X")), ceil(s["B"], d("LOCAL_Y")), 1),
    "dense_2_splitk.comp": lambda d, s: (ceil(s["N"], d("LOCAL_X")), s["B"], 1),
    "dense_3_tiled.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["B"], d("BM")), 1),
    "dense_4_u8.comp": lambda d, s: (ceil(s["N"], d("BN")), ceil(s["B"], d("BM")), 1),
    "update_1_sgd.comp": lambda d, s: (ceil(s["n"], d("LOCAL")), 1, 1),
    "update_2_momentum.comp": lambda d, s: (ceil(s["n"], d("LOCAL")), 1, 1),
    "update_3_adam.comp": lambda d, s: (ceil(s["n"], d("LOCAL")), 1, 1),
    "gather_forward_1_u8.comp": lambda d, s: (ceil(s["N"], d("TN")), ceil(s["B"], d("RB")), 1),
    "logits_forward_1_splitk.comp": lambda d, s: (ceil(s["N"], d("TN")), ceil(s["B"], d("RB")), 1),
    "gather_backward_1_u8.comp": lambda d, s: (ceil(s["N"], d("LX")), ceil(s["K"], 4) + 1, 1),
    "dense_backward_1_relu.comp": lambda d, s: (ceil(s["K"] * s["N"] + s["N"], d("LX"))
                                                + ceil(s["B"] * s["K"], d("LX") * d("BS")), 1, 1),
}
SAMPLES = [dict(M=1, N=1, K=1, B=1, n=1, KS=8), dict(M=300, N=200, K=70, B=37, n=1001, KS=24),
           dict(M=128, N=256, K=784, B=10_000, n=256, KS=784)]
# Other tiles, with rows and columns of a block that differ, so a banner that swaps them fails.
TUNED = {"matmul_1_naive.comp": {"LOCAL_X": 32, "LOCAL_Y": 8}, "matmul_2_tiled.comp": {"TILE": 8},
         "matmul_3_blocked.comp": {"BN": 32, "THREADS": 128}, "matmul_4_bigtile.comp": {"BN": 64, "THREADS": 128},
         "matmul_5_pipelined.comp": {"BN": 64, "THREADS": 128}, "matmul_6_subgroup.comp": {"BM": 64, "THREADS": 128},
         "matmul_7_vec4k.comp": {"BM": 64, "THREADS": 128, "GROUP_M": 3},
         "matmul_8_splitk.comp": {"BM": 64, "THREADS": 128},
         "matmul_9_interior.comp": {"BM": 64, "THREADS": 64},
         "matmul_10_prefetch.comp": {"BN": 64, "TM": 8, "THREADS": 128},
         "dense_1_naive.comp": {"LOCAL_X": 8},
         "dense_2_splitk.comp": {"LOCAL_X": 8}, "dense_3_tiled.comp": {"BM": 32, "THREADS": 64},
         "dense_4_u8.comp": {"BM": 32, "THREADS": 64}, "update_1_sgd.comp": {"LOCAL": 64},
         "update_2_momentum.comp": {"LOCAL": 64}, "update_3_adam.comp": {"LOCAL": 64},
         "gather_forward_1_u8.comp": {"TN": 16}, "logits_forward_1_splitk.comp": {"RB": 2},
         "gather_backward_1_u8.comp": {"LX": 32}, "dense_backward_1_relu.comp": {"LX": 16, "BS": 4}}


def test_by_hand_covers_the_matmul_dense_and_update_families():
    families = {p.name for p in SHADERS if p.name.startswith(("matmul_", "dense_", "update_"))}
    assert families <= set(BY_HAND), f"add these to BY_HAND: {sorted(families - set(BY_HAND))}"
    assert set(TUNED) == set(BY_HAND)


@pytest.mark.parametrize("tuned", [False, True], ids=["defaults", "tuned"])
@pytest.mark.parametrize("sizes", SAMPLES, ids=["1", "300x200", "10000"])
@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_kernel_groups_equal_ceil_size_over_tile(ctx, name, sizes, tuned):
    kernel = gl.Kernel(ctx, name, TUNED[name] if tuned else None)
    needed = {k: sizes[k] for n in kernel.banner.groups for k in banner.names(n) if k in sizes}
    assert kernel.groups(**needed) == BY_HAND[name](kernel.define, sizes)


def test_kernel_groups_use_the_overridden_defines(ctx):
    assert gl.Kernel(ctx, "matmul_2_tiled.comp").groups(M=300, N=200) == (13, 19, 1)          # TILE 16
    assert gl.Kernel(ctx, "matmul_5_pipelined.comp").groups(M=300, N=200) == (2, 3, 1)       # 128×128
    small = gl.Kernel(ctx, "matmul_5_pipelined.comp", {"BN": 64, "THREADS": 128})
    assert small.define("BN") == 64 and small.groups(M=300, N=200) == (4, 3, 1)
    assert gl.Kernel(ctx, "dense_1_naive.comp", {"LOCAL_X": 8}).groups(B=37, N=13) == (2, 3, 1)
    with pytest.raises(gl.ShaderError, match=r"dense_1_naive\.comp: the group count ceil\(B/LOCAL_Y\) needs B"):
        gl.Kernel(ctx, "dense_1_naive.comp").groups(N=13)


def test_bad_defines_are_refused_at_compile_time(ctx):
    with pytest.raises(gl.ShaderError, match="power of two"):
        gl.Kernel(ctx, "dense_2_splitk.comp", {"LOCAL_Y": 12})
    with pytest.raises(gl.ShaderError, match="<= 1024"):
        gl.Kernel(ctx, "update_1_sgd.comp", {"LOCAL": 2048})


# --- Kernel.run: bound lengths against the banner ---------------------------------------------------

def test_a_too_short_output_is_refused_and_a_long_enough_one_runs(ctx, rng):
    B = N = 8
    K = 5
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((B, K), (K, N), (N,)))
    kernel = gl.Kernel(ctx, "dense_1_naive.comp")
    inputs = {0: gl.upload(ctx, x, "X"), 1: gl.upload(ctx, w, "W"), 2: gl.upload(ctx, b, "b")}
    short = gl.empty(ctx, (2, 2), name="Y")
    with pytest.raises(gl.ShaderError) as error:
        kernel.run(*kernel.groups(B=B, N=N), bindings={**inputs, 3: short}, B=B, K=K, N=N)
    message = str(error.value)
    for part in ("dense_1_naive.comp", "binding 3 (Y)", "holds 4 elements", "float[B*N] = 64", "B=8, N=8"):
        assert part in message, f"{part!r} missing from: {message}"
    assert np.isnan(short.read()).all(), "nothing may be dispatched when the check fails"

    # the uniforms set earlier count: run() without uniforms still knows B and N
    with pytest.raises(gl.ShaderError, match=r"binding 3 \(Y\) holds 4 elements"):
        kernel.run(1, 1, bindings={**inputs, 3: short})

    Y = gl.empty(ctx, (B, N), name="Y")                                  # exactly B*N: runs
    kernel.run(*kernel.groups(B=B, N=N), bindings={**inputs, 3: Y}, B=B, K=K, N=N)
    np.testing.assert_allclose(Y.read(), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    with pytest.raises(gl.ShaderError, match=r"binding 0 \(X\) holds 40 elements, but the banner needs float\[B\*K\] = 48"):
        kernel.check({0: inputs[0]}, K=K + 1)


def test_data_sizes_the_kernel_cannot_know_are_not_checked(ctx):
    kernel = gl.Kernel(ctx, "gather_forward_1_u8.comp")
    one_word = gl.empty(ctx, (1,), np.uint32, name="images")
    kernel.check({0: one_word}, B=4, K=8, N=3, start=0)      # images uint[n_images*ceil(K/4)]: n_images unknown
    with pytest.raises(gl.ShaderError, match=r"binding 1 \(order\) holds 1 elements, but the banner needs uint\[start \+ B\] = 6"):
        kernel.check({1: gl.empty(ctx, (1,), np.uint32, name="order")}, B=4, K=8, N=3, start=2)


# ---- which sizes may be zero: the banner's promise against what bare ModernGL can do ---------------------

OFFSETS = {"start", "slot"}     # positions in an array, not sizes: 0 is an ordinary value
SIZE_CLAUSE = re.compile(r"((?:\w+, )*\w+) ≥ ([01])\b")
# Each size a banner says may be 0, with the other sizes of a bare-ModernGL run that shows it
ZERO_SIZE_RUNS = {**{path.stem: dict(M=5, N=8, K=0) for path in SHADERS if path.stem.startswith("matmul_")},
                  "matmul_8_splitk": dict(M=5, N=8, K=0, KS=16)}


def size_clauses(path: Path) -> dict:
    """{uniform: 0 or 1}: the least value the Shapes field's `sizes:` line allows each size."""
    shapes = banner.parse(path.read_text(), path.name).fields.get("Shapes", "")
    _, found, text = shapes.partition("sizes: ")
    assert found, f"{path.name}: the Shapes field has no `sizes: ... ≥ 1` line"
    least = {}
    for names, bound in SIZE_CLAUSE.findall(text):
        for name in names.split(", "):
            assert name not in least, f"{path.name}: {name} is named twice in `sizes:`"
            least[name] = int(bound)
    return least


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_banner_says_which_sizes_may_be_zero(path):
    """Every uniform that sizes a binding is in the Shapes field's `sizes:` line, ≥ 1 or ≥ 0, and none
    is promised as `any`: ModernGL makes no empty buffer, so a zero size needs saying how to bind it."""
    parsed_banner = banner.parse(path.read_text(), path.name)
    sizes = set().union(*(banner.names(b.length) for b in parsed_banner.bindings.values()))
    sizes = {name for name in sizes if name in parsed_banner.uniforms} - OFFSETS
    least = size_clauses(path)
    assert sizes <= least.keys(), f"{path.name}: `sizes:` does not say {sorted(sizes - least.keys())}"
    assert set(least) <= set(parsed_banner.uniforms), f"{path.name}: `sizes:` names a uniform it does not have"
    assert not re.search(r"\bany (?:\w+, )+\w+\b", parsed_banner.fields["Shapes"]), \
        f"{path.name}: Shapes promises `any` sizes; say `... ≥ 1` (or ≥ 0, with a test that runs it)"
    zero = {name for name, bound in least.items() if bound == 0}
    if zero:
        assert "one-float buffer" in parsed_banner.fields["Shapes"], f"{path.name}: say how to bind an empty array"
        run = ZERO_SIZE_RUNS.get(path.stem, {})
        assert all(run.get(name) == 0 for name in zero), \
            f"{path.name}: {sorted(zero)} may be 0, but ZERO_SIZE_RUNS has no bare-ModernGL run with them 0"


def test_moderngl_makes_no_empty_buffer(ctx):
    """Why a zero size needs a word in the banner."""
    with pytest.raises(Exception, match="cannot be empty"):
        ctx.buffer(b"")


@pytest.mark.parametrize("name", sorted(ZERO_SIZE_RUNS))
def test_a_zero_size_a_banner_allows_runs_in_bare_moderngl(ctx, name):
    """What the banner says, done with ModernGL alone: one-float buffers for the empty arrays, the uniforms
    set, the groups of the Dispatch field; every array the shader writes comes out 0 (a sum over no k)."""
    path = GLSL / f"{name}.comp"
    source = path.read_text()
    parsed_banner = banner.parse(source, path.name)
    sizes = ZERO_SIZE_RUNS[name]
    values = {**banner.define_values(source), **sizes}
    program = ctx.compute_shader(source)
    buffers = {}
    for number, binding in parsed_banner.bindings.items():
        length = banner.evaluate(binding.length, values)
        data = np.full(max(1, length), np.nan, np.float32)        # an empty array: one float, never read
        buffers[number] = ctx.buffer(data.tobytes())
        buffers[number].bind_to_storage_buffer(number)
    for uniform, value in sizes.items():
        program[uniform].value = value
    program.run(*banner.dispatch_groups(parsed_banner, values))
    ctx.memory_barrier()
    written = [n for n, b in parsed_banner.bindings.items() if b.access != "readonly"]
    assert written
    for number in written:
        length = banner.evaluate(parsed_banner.bindings[number].length, values)
        got = np.frombuffer(buffers[number].read(), np.float32)[:length]
        assert length > 0 and (got == 0).all(), f"{name}: binding {number} holds {got[:8]} with K = 0"
    for buffer in buffers.values():
        buffer.release()
    program.release()

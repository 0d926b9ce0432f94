"""The shader exercises (helpers/exercises.py, notebooks/exercises/): every solution passes its checker,
every starter compiles and fails it, broken variants of the guard and tiled-matmul solutions fail on the
awkward shapes (and pass on friendly ones, so it is the shapes that catch them), a compile error names the
file and the line, and the subgroup exercise runs only where the context has subgroup arithmetic."""

import dataclasses
import re

import numpy as np
import pytest

from helpers import exercises, gl

IDS = list(exercises.EXERCISES)


@pytest.fixture(scope="module")
def subgroups(ctx):
    return exercises.has_subgroup_arithmetic(ctx)


def run_check(ctx, capsys, exercise_id, path):
    """check()'s result and what it printed."""
    result = exercises.check(exercise_id, path, ctx=ctx)
    return result, capsys.readouterr().out


def skip_without_subgroups(exercise, subgroups, result, out):
    """On a context without subgroups the checker must say so and return None; then the test skips."""
    if exercise.subgroups and not subgroups:
        assert result is None and "GL_KHR_shader_subgroup_arithmetic" in out and "not run" in out, out
        pytest.skip("no GL_KHR_shader_subgroup_arithmetic on this context (Mesa's llvmpipe lacks it): "
                    "the checker said so and returned None")


def test_at_least_two_exercises_per_notebook():
    per_notebook = {nb: [e for e in IDS if exercises.EXERCISES[e].notebook == nb] for nb in ("02", "03", "04", "05", "06")}
    assert all(len(ids) >= (1 if nb == "03" else 2) for nb, ids in per_notebook.items()), per_notebook
    assert len(IDS) >= 8


@pytest.mark.parametrize("exercise_id", IDS)
def test_starter_and_solution_files(exercise_id):
    """Same banner, bindings as the checker binds them, a TODO in the starter only."""
    exercise = exercises.EXERCISES[exercise_id]
    starter, solution = exercise.starter.read_text(), exercise.solution.read_text()
    for name, source in (("starter", starter), ("solution", solution)):
        assert source.splitlines()[0] == "#version 430", f"{name}: line 1 must be #version 430"
        assert source.splitlines()[1].startswith(f"// {exercise_id}.comp: "), f"{name}: banner's first line"
        assert set(gl.storage_buffers(source)) == set(exercise.bindings), f"{name} declares other bindings"
        for field in ("Shapes", "NumPy", "Bindings", "Uniforms", "Dispatch", "Exercise", "Checked"):
            assert re.search(rf"^// {field} ", source, re.MULTILINE), f"{name}: no `// {field}` in the banner"
        for binding, array in exercise.bindings.items():
            assert re.search(rf"\b{binding} {array} \w+\[", source), f"{name}: banner lacks `{binding} {array} type[length]`"
        assert f'exercises.check("{exercise_id}"' in source, f"{name}: the banner's Checked line names the call"
    banner = lambda source: source[:source.index("\n#define")]
    assert banner(starter) == banner(solution), "starter and solution banners differ"
    assert "// TODO" in starter and "// TODO" not in solution


@pytest.mark.parametrize("exercise_id", IDS)
def test_banner_states_the_checkers_dispatch(exercise_id):
    """Where helpers/banner.py reads banners, the banner's groups are the checker's, shape by shape."""
    banner = pytest.importorskip("helpers.banner")
    exercise = exercises.EXERCISES[exercise_id]
    source = exercise.solution.read_text()
    parsed = banner.parse(source, exercise.solution.name)
    assert {number: b.name for number, b in parsed.bindings.items()} == exercise.bindings
    define = lambda name: int(gl.define(source, name))
    for shape in exercise.shapes:
        case = exercise.case(np.random.default_rng(0), define, **shape)
        values = {**banner.define_values(source), **case.uniforms}
        assert banner.dispatch_groups(parsed, values) == tuple(case.groups), shape
        assert set(parsed.uniforms) == set(case.uniforms)


@pytest.mark.parametrize("exercise_id", IDS)
def test_inputs_are_random(exercise_id):
    """No input is all-equal, so wrong index math cannot pass by luck."""
    exercise = exercises.EXERCISES[exercise_id]
    for shape in exercise.shapes:
        case = exercise.case(np.random.default_rng(0), lambda name: 16, **shape)
        for binding, array in case.inputs.items():
            assert array.size == 1 or len(np.unique(array)) > 1, (shape, binding)


@pytest.mark.parametrize("exercise_id", IDS)
def test_solution_passes(ctx, capsys, subgroups, exercise_id):
    exercise = exercises.EXERCISES[exercise_id]
    result, out = run_check(ctx, capsys, exercise_id, exercise.solution)
    skip_without_subgroups(exercise, subgroups, result, out)
    assert result is True, out
    assert out.count(" pass") >= len(exercise.shapes) and "FAIL" not in out, out


@pytest.mark.parametrize("exercise_id", IDS)
def test_starter_compiles_and_fails(ctx, capsys, subgroups, exercise_id):
    exercise = exercises.EXERCISES[exercise_id]
    result, out = run_check(ctx, capsys, exercise_id, exercise.starter)
    skip_without_subgroups(exercise, subgroups, result, out)
    assert "failed to compile" not in out, out
    assert result is False, out


# Broken solutions, made by editing the solution: (exercise, what is wrong, [(old, new), ...], printed).
BROKEN = [
    ("02_guard", "no guard", [("    if (n >= N || m >= M) return;", "")], "written past the end"),
    ("02_guard", "off by one", [("n >= N || m >= M", "n > N || m > M")], "written past the end"),
    ("02_guard", "x guarded only", [("n >= N || m >= M", "n >= N")], "FAIL"),
    ("04_tiled", "unguarded loads", [("if (m < M && k0 + tx < K) a", "a"), ("if (k0 + ty < K && n < N) b", "b")],
     "expected"),
    ("04_tiled", "off-by-one k guards", [("k0 + tx < K", "k0 + tx <= K"), ("k0 + ty < K", "k0 + ty <= K")], "expected"),
    ("04_tiled", "unguarded store", [("if (m < M && n < N) C[", "C[")], "written past the end"),
    ("05_relu_backward", "masked elements skipped", [("dZ[row * H + h] = A[row * H + h] > 0.0 ? sum : 0.0;",
                                                      "if (A[row * H + h] > 0.0) dZ[row * H + h] = sum;")],
     "never written"),
    ("06_weight_decay", "biases decayed too", [("if (i < n_weights) g += decay * p;", "g += decay * p;")], "expected"),
]


@pytest.mark.parametrize("exercise_id, what, edits, printed", BROKEN, ids=[f"{b[0]}-{b[1]}" for b in BROKEN])
def test_broken_variant_fails(ctx, capsys, monkeypatch, tmp_path, exercise_id, what, edits, printed):
    exercise = exercises.EXERCISES[exercise_id]
    source = exercise.solution.read_text()
    for old, new in edits:
        assert source.count(old) == 1, f"the edit {old!r} for {what!r} no longer applies to the solution"
        source = source.replace(old, new)
    path = tmp_path / f"{exercise_id}.comp"
    path.write_text(source)
    result, out = run_check(ctx, capsys, exercise_id, path)
    assert result is False and printed in out, out
    if exercise_id in ("02_guard", "04_tiled"):  # the same code passes where every size is a multiple of 16
        friendly = [{key: 32 for key in shape} for shape in exercise.shapes[:1]]
        monkeypatch.setitem(exercises.EXERCISES, exercise_id, dataclasses.replace(exercise, shapes=friendly))
        result, out = run_check(ctx, capsys, exercise_id, path)
        assert result is True, f"{what}: fails even on multiples of the tile size:\n{out}"


def test_compile_error_names_file_and_line(ctx, capsys, tmp_path):
    source = exercises.EXERCISES["04_tiled"].solution.read_text()
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "acc += As[ty][k]" in text)
    path = tmp_path / "my_tiled.comp"
    path.write_text(source.replace("acc += As[ty][k] * Bs[k][tx];", "acc += As[ty][k] * Bz[k][tx];"))
    result, out = run_check(ctx, capsys, "04_tiled", path)
    assert result is False
    assert f"{path}:{line}:" in out and "Bz" in out, out


def test_missing_file_and_unknown_exercise(ctx, capsys, tmp_path):
    result, out = run_check(ctx, capsys, "02_guard", tmp_path / "absent.comp")
    assert result is False and "exercises.start(" in out, out
    with pytest.raises(KeyError, match="02_guard"):
        exercises.check("02_gaurd", tmp_path / "absent.comp", ctx=ctx)


def test_start_copies_the_starter_once(capsys, tmp_path):
    path = tmp_path / "my_guard.comp"
    exercises.start("02_guard", path)
    assert path.read_text() == exercises.EXERCISES["02_guard"].starter.read_text()
    path.write_text("my work")
    exercises.start("02_guard", path)
    assert path.read_text() == "my work" and "kept" in capsys.readouterr().out


def test_a_tiled_exercise_without_shared_memory_is_not_done(ctx, capsys, tmp_path):
    """The naive matmul gives the right numbers, but the exercise is to tile it."""
    naive = exercises.EXERCISES["04_tiled"].solution.read_text()
    naive = naive[:naive.index("shared float As")] + """void main() {
    uint n = gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y;
    if (m >= M || n >= N) return;
    float acc = 0.0;
    for (uint k = 0u; k < K; ++k) acc += A[m * K + k] * B[k * N + n];
    C[m * N + n] = acc;
}
"""
    path = tmp_path / "naive.comp"
    path.write_text(naive)
    result, out = run_check(ctx, capsys, "04_tiled", path)
    assert result is False and "FAIL" not in out and "not done" in out, out


def test_exercise_readme_lists_every_exercise():
    readme = (exercises.EXERCISE_DIR / "README.md").read_text()
    for exercise_id in IDS:
        assert f"{exercise_id}.comp" in readme and f'exercises.check("{exercise_id}"' in readme, exercise_id


"""Shader exercises that check themselves. Introduced in notebook 02; notebooks 02 to 06 each have some.

Starters are in notebooks/exercises/ (its README.md lists them). Copy one, fill in its `// TODO`s, check
your copy from a notebook cell (the notebooks run in notebooks/):

    from helpers import exercises
    exercises.start("02_guard", "my_guard.comp")           # copies the starter; an existing file is kept
    exercises.check("02_guard", "my_guard.comp", ctx=ctx)  # True when every shape matches NumPy

`check` compiles the file (errors name file and line) and runs it on random inputs, never all equal, over
awkward shapes: one row, sizes no work group or tile fits, one large. Outputs start as NaN and are followed
by a NaN guard zone, so unwritten elements and writes past the end show; reads past an input's end get
random values. One printed line per shape: pass, or the first wrong element, its index, expected and got.
Bindings, uniforms and dispatch are fixed (the starter's banner states them); the work-group counts come
from your file's own #defines (LOCAL_X, TILE, ...). An exercise is data: bindings, shapes, and a function
making one random case (inputs, uniforms, the NumPy answer, work groups).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from . import gl, matmul

ROOT = Path(__file__).resolve().parent.parent
EXERCISE_DIR = ROOT / "notebooks" / "exercises"
SOLUTION_DIR = EXERCISE_DIR / "solutions"
EXERCISES: dict[str, "Exercise"] = {}


class Case(NamedTuple):
    """One random instance of an exercise."""
    inputs: dict          # binding -> NumPy array (float32 or uint32)
    uniforms: dict        # name -> value
    expected: np.ndarray  # the output NumPy computes, float64
    groups: tuple         # work groups (x, y, z)


@dataclass
class Exercise:
    id: str                  # also the starter's and the solution's file name, without .comp
    what: str                # one line
    bindings: dict           # binding -> name, as in the banner
    output: int              # the binding checked; when it is also an input, the shader updates it in place
    shapes: list             # keyword arguments of `case`, one dict per shape
    case: Callable           # case(rng, define, **shape) -> Case; define("TILE") reads your file's #define
    rtol: float = 1e-5       # element ok when |got - expected| <= rtol * max|expected|
    needs: tuple = ()        # (regex, what is missing): the source, comments removed, must match each
    subgroups: bool = False  # needs GL_KHR_shader_subgroup_arithmetic

    @property
    def notebook(self) -> str:
        return self.id[:2]

    @property
    def starter(self) -> Path:
        return EXERCISE_DIR / f"{self.id}.comp"

    @property
    def solution(self) -> Path:
        return SOLUTION_DIR / f"{self.id}.comp"


def _exercise(id, what, bindings, output, shapes, **options):
    def register(case):
        EXERCISES[id] = Exercise(id, what, bindings, output, shapes, case, **options)
        return case
    return register


def _normal(rng, *shape, scale=1.0) -> np.ndarray:
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


groups = gl.groups

# --------------------------------------------------------------------------------------------
# The exercises, in notebook order
# --------------------------------------------------------------------------------------------

@_exercise("02_guard", "T = Aᵀ, threads past the matrix guarded", {0: "A", 1: "T"}, 1,
           [dict(M=1, N=1), dict(M=1, N=70), dict(M=37, N=70), dict(M=515, N=1000)])
def _guard(rng, define, M, N):
    a = _normal(rng, M, N)
    return Case({0: a}, dict(M=M, N=N), a.T.astype(np.float64),
                (groups(N, define("LOCAL_X")), groups(M, define("LOCAL_Y")), 1))


@_exercise("02_bias_relu", "Y = relu(X·W + b): the bias and ReLU epilogue", {0: "X", 1: "W", 2: "b", 3: "Y"}, 3,
           [dict(B=1, K=784, N=128), dict(B=37, K=70, N=13), dict(B=33, K=5, N=16), dict(B=1000, K=200, N=130)])
def _bias_relu(rng, define, B, K, N):
    x, w, b = _normal(rng, B, K), _normal(rng, K, N, scale=K ** -0.5), _normal(rng, N)
    return Case({0: x, 1: w, 2: b}, dict(B=B, K=K, N=N), np.maximum(x.astype(np.float64) @ w + b, 0),
                (groups(N, define("LOCAL_X")), groups(B, define("LOCAL_Y")), 1))


@_exercise("04_tiled", "C = A·B through TILE×TILE tiles in shared memory", {0: "A", 1: "B", 2: "C"}, 2,
           [dict(M=1, K=1, N=1), dict(M=1, K=300, N=77), dict(M=37, K=13, N=70), dict(M=77, K=300, N=1),
            dict(M=129, K=257, N=65), dict(M=256, K=512, N=300)],
           needs=((r"\bshared\b", "no `shared` array: the exercise is to stage tiles of A and B in shared memory"),
                  (r"\bbarrier\s*\(", "no barrier(): the work group must wait for its tiles")))
def _tiled(rng, define, M, K, N):
    a, b, tile = _normal(rng, M, K), _normal(rng, K, N), define("TILE")
    return Case({0: a, 1: b}, dict(M=M, N=N, K=K), a.astype(np.float64) @ b, (groups(N, tile), groups(M, tile), 1))


@_exercise("03_unpack_u8", "X = pixels / 255 from bytes packed four per uint32", {0: "words", 1: "X"}, 1,
           [dict(B=1, K=784), dict(B=1, K=5), dict(B=3, K=1), dict(B=37, K=70), dict(B=129, K=13),
            dict(B=1000, K=783)])
def _unpack_u8(rng, define, B, K):
    words_per_row = -(-K // 4)
    pixels = rng.integers(0, 256, (B, 4 * words_per_row), dtype=np.uint8)
    pixels[:, K:] = rng.integers(1, 256, (B, 4 * words_per_row - K), dtype=np.uint8)  # padding, never 0
    words = pixels.view("<u4").astype(np.uint32)
    return Case({0: words}, dict(B=B, K=K), pixels[:, :K] / 255.0,
                (groups(words_per_row, define("LOCAL_X")), groups(B, define("LOCAL_Y")), 1))


@_exercise("04_splitk_pieces", "P[z] = A[:, z*KS:(z+1)*KS] @ B[z*KS:(z+1)*KS, :]: the pieces of a split-K matmul",
           {0: "A", 1: "B", 2: "P"}, 2,
           [dict(M=1, K=1, N=1, KS=1), dict(M=37, K=70, N=13, KS=16), dict(M=1, K=300, N=77, KS=300),
            dict(M=77, K=300, N=1, KS=7), dict(M=129, K=257, N=65, KS=64), dict(M=200, K=1024, N=300, KS=256)])
def _splitk_pieces(rng, define, M, K, N, KS):
    a, b = _normal(rng, M, K), _normal(rng, K, N)
    pieces = matmul.pieces_in_numpy(a, b, KS)
    return Case({0: a, 1: b}, dict(M=M, N=N, K=K, KS=KS), pieces,
                (groups(N, define("LOCAL_X")), groups(M, define("LOCAL_Y")), len(pieces)))


@_exercise("05_xent_grad", "dlogits = (softmax(logits) - onehot(labels)) / B",
           {0: "logits", 1: "labels", 2: "dlogits"}, 2,
           [dict(B=1, C=10, scale=1), dict(B=37, C=10, scale=3), dict(B=130, C=13, scale=1),
            dict(B=5, C=3, scale=100), dict(B=4099, C=10, scale=5)])
def _xent_grad(rng, define, B, C, scale):
    z, labels = _normal(rng, B, C, scale=scale), rng.integers(0, C, B).astype(np.uint32)
    d = _softmax(z.astype(np.float64))
    d[np.arange(B), labels] -= 1
    return Case({0: z, 1: labels}, dict(B=B, C=C), d / B, (groups(B, define("LOCAL")), 1, 1))


@_exercise("05_relu_backward", "dZ = (dY·Wᵀ) ⊙ (A > 0)", {0: "dY", 1: "W", 2: "A", 3: "dZ"}, 3,
           [dict(B=1, H=128, C=10), dict(B=37, H=70, C=13), dict(B=130, H=17, C=10), dict(B=16, H=33, C=1),
            dict(B=512, H=300, C=10)])
def _relu_backward(rng, define, B, H, C):
    dy, w, a = _normal(rng, B, C), _normal(rng, H, C), np.maximum(_normal(rng, B, H), 0)
    return Case({0: dy, 1: w, 2: a}, dict(B=B, H=H, C=C), (dy.astype(np.float64) @ w.T) * (a > 0),
                (groups(H, define("LOCAL_X")), groups(B, define("LOCAL_Y")), 1))


@_exercise("06_weight_decay", "SGD with L2 weight decay on the weights, not the biases", {17: "params", 18: "grads"},
           17, [dict(K=1, N=1), dict(K=37, N=13), dict(K=5, N=300), dict(K=784, N=128)])
def _weight_decay(rng, define, K, N):
    n, n_weights, lr, decay = K * N + N, K * N, np.float32(0.25), np.float32(0.1)
    p, g = _normal(rng, n), _normal(rng, n)
    is_weight = np.arange(n) < n_weights                  # biases are not decayed
    expected = p - lr * (g + decay * p * is_weight)
    return Case({17: p, 18: g}, dict(n=n, n_weights=n_weights, lr=float(lr), decay=float(decay)),
                expected.astype(np.float64), (groups(n, define("LOCAL")), 1, 1))


@_exercise("06_subgroup_sum", "per work group sums with subgroupAdd", {0: "x", 1: "partial"}, 1,
           [dict(n=1), dict(n=257), dict(n=1000), dict(n=100_003)], subgroups=True)
def _subgroup_sum(rng, define, n):
    x, local = _normal(rng, n), define("LOCAL")
    padded = np.zeros(groups(n, local) * local)
    padded[:n] = x
    return Case({0: x}, dict(n=n), padded.reshape(-1, local).sum(axis=1), (groups(n, local), 1, 1))


@_exercise("06_fused_softmax", "probs = softmax(X·W + b), both stages in one dispatch",
           {0: "X", 1: "W", 2: "b", 3: "probs"}, 3,
           [dict(B=1, K=784, C=10), dict(B=37, K=70, C=13), dict(B=65, K=5, C=16), dict(B=3, K=1, C=1),
            dict(B=2000, K=128, C=10)])
def _fused_softmax(rng, define, B, K, C):
    x, w, b = _normal(rng, B, K), _normal(rng, K, C, scale=K ** -0.5), _normal(rng, C)
    return Case({0: x, 1: w, 2: b}, dict(B=B, K=K, C=C), _softmax(x.astype(np.float64) @ w + b),
                (groups(B, define("LOCAL")), 1, 1))


# --------------------------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------------------------

_SUBGROUP_PROBE = """#version 430
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { float v[]; };
void main() { v[gl_GlobalInvocationID.x] = subgroupAdd(v[gl_GlobalInvocationID.x]); }
"""
_default_ctx = None


def has_subgroup_arithmetic(ctx) -> bool:
    """Whether shaders on this context can call subgroupAdd (GL_KHR_shader_subgroup_arithmetic)."""
    if "GL_KHR_shader_subgroup" not in ctx.extensions:
        return False
    try:
        ctx.compute_shader(_SUBGROUP_PROBE).release()
    except Exception:
        return False
    return True


class _Shader(NamedTuple):
    """A learner's compiled file: its path as given, source, moderngl program, declared storage buffers."""
    name: str
    source: str
    program: object
    buffers: dict  # binding -> (block name, NumPy dtype), from gl.storage_buffers


def _compile(ctx, path: Path) -> _Shader:
    """Compile any file (gl's loader reads glsl/ only); a failure raises gl.ShaderError naming file and line."""
    source = path.read_text()
    try:
        program = ctx.compute_shader(source)
    except Exception as exc:  # gl turns the driver's log into file:line lines (written as glsl/<name>)
        message = str(gl._compile_error(str(path), source, str(exc)))
        raise gl.ShaderError(message.replace(f"glsl/{path}:", f"{path}:")) from None
    return _Shader(str(path), source, program, gl.storage_buffers(source))


def _get(exercise_id: str) -> Exercise:
    if exercise_id not in EXERCISES:
        raise KeyError(f"no exercise {exercise_id!r}; the exercises are: {', '.join(EXERCISES)}")
    return EXERCISES[exercise_id]


def start(exercise_id: str, path) -> Path:
    """Copy the exercise's starter to `path`, unless `path` exists (your work is never overwritten)."""
    exercise, path = _get(exercise_id), Path(path)
    if path.exists():
        print(f"{path} exists: kept (delete it to start over from {exercise.starter.name})")
    else:
        shutil.copyfile(exercise.starter, path)
        print(f"copied the starter to {path}: fill in its TODOs, then exercises.check({exercise_id!r}, '{path}')")
    return path


def check(exercise_id: str, path, *, ctx=None, seed: int = 0) -> bool | None:
    """Run the shader in `path` as exercise `exercise_id` on every shape, one printed line per shape.

    True when every shape matches NumPy; False otherwise (a compile error included); None when this
    context cannot run the exercise (subgroups on llvmpipe), with a line saying where to run it.
    """
    global _default_ctx
    exercise, path = _get(exercise_id), Path(path)
    if ctx is None:
        _default_ctx = ctx = _default_ctx or gl.create_context()
    print(f"{exercise.id}: {exercise.what} | {path}")
    if not path.is_file():
        print(f"  no file {path} (working directory {Path.cwd()}): copy the starter with "
              f"exercises.start({exercise_id!r}, '{path}')")
        return False
    if exercise.subgroups and not has_subgroup_arithmetic(ctx):
        here = path.resolve()
        shown = here.relative_to(ROOT) if here.is_relative_to(ROOT) else here
        print(f"  not run: {ctx.info['GL_RENDERER']} has no GL_KHR_shader_subgroup_arithmetic, so subgroupAdd does "
              "not compile here.\n  Mesa's llvmpipe lacks it; NVIDIA, AMD and Intel GPU drivers have it. Run this "
              "cell on a machine with one,\n  or there from the repository root: python -c \"from helpers import "
              f"exercises; exercises.check('{exercise_id}', '{shown}')\"")
        return None
    try:
        shader = _compile(ctx, path)
    except gl.ShaderError as exc:
        print(exc)
        return False
    problems = _source_problems(exercise, shader)
    for problem in problems:
        print(f"  {problem}")
    rng = np.random.default_rng(seed)
    passed = 0 if problems else sum(_run_shape(exercise, shader, ctx, rng, shape) for shape in exercise.shapes)
    shader.program.release()
    missing = [message for pattern, message in exercise.needs if not re.search(pattern, _code(shader.source))]
    for message in missing:  # the numbers can match without it, but then the exercise is not done
        print(f"  not done: {message}")
    ok = passed == len(exercise.shapes) and not missing
    print(f"{exercise.id}: {passed} of {len(exercise.shapes)} shapes pass{', but not done' if missing else ''}"
          f"{': done' if ok else ''}")
    return ok


def _source_problems(exercise: Exercise, shader: _Shader) -> list[str]:
    """What in the source keeps it from running as this exercise, as lines to print (empty when fine)."""
    problems = []
    if set(shader.buffers) != set(exercise.bindings):
        wanted = ", ".join(f"{b} {name}" for b, name in exercise.bindings.items())
        problems.append(f"{shader.name} declares bindings {sorted(shader.buffers)}; the exercise binds {wanted} "
                        "(see the starter's banner)")
    sample = exercise.case(np.random.default_rng(0), lambda name: 1, **exercise.shapes[0])  # a small case
    for binding, (block, dtype) in shader.buffers.items():
        given = sample.inputs.get(binding)
        given_dtype = np.float32 if given is None else given.dtype
        if dtype is not None and np.dtype(dtype) != given_dtype:
            problems.append(f"binding {binding} ({block}) holds {np.dtype(given_dtype).name} elements in this "
                            f"exercise; {shader.name} reads them as {np.dtype(dtype).name}")
    unused = sorted(set(sample.uniforms) - set(shader.program))
    if unused:  # not an error (a starter may not read them yet), but a misspelt name shows here
        print(f"  note: {shader.name} does not read uniform(s) {', '.join(unused)}, so the compiler removed them")
    return problems


def _code(source: str) -> str:
    """The source without its comments."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.DOTALL)


def _run_shape(exercise: Exercise, shader: _Shader, ctx, rng, shape: dict) -> bool:
    """Run one shape; print its line; True when it matches NumPy."""
    label = " ".join(f"{key}={value}" for key, value in shape.items())
    try:
        case = exercise.case(rng, lambda name: int(gl.define(shader.source, name)), **shape)
    except (gl.ShaderError, ValueError) as exc:
        print(f"  {label:<22s} cannot size the dispatch from your #defines: {exc}")
        return False
    size = case.expected.size
    spare = 16 * size + 4096  # room for what threads past the edge touch when a guard is missing
    arrays = {}
    for binding, array in case.inputs.items():  # a read past an input's end gets random values, not 0
        tail = (np.full(spare, np.nan, np.float32) if binding == exercise.output  # updated in place
                else rng.integers(1, 256, spare).astype(array.dtype) if array.dtype == np.uint32
                else _normal(rng, spare))
        arrays[binding] = gl.upload(ctx, np.concatenate([array.ravel(), tail]), exercise.bindings[binding])
    if exercise.output not in arrays:
        arrays[exercise.output] = gl.empty(ctx, size + spare, name=exercise.bindings[exercise.output])
    for binding, array in arrays.items():
        array.buffer.bind_to_storage_buffer(binding)
    for key, value in case.uniforms.items():
        if key in shader.program:
            shader.program[key].value = value
    shader.program.run(*case.groups)
    ctx.memory_barrier()
    got = arrays[exercise.output].read()
    for array in arrays.values():
        array.release()
    verdict = _verdict(exercise.bindings[exercise.output], got[:size].reshape(case.expected.shape),
                       case.expected, got[size:], exercise.rtol)
    print(f"  {label:<22s} groups {str(tuple(case.groups)):<15s} {verdict}")
    return verdict == "pass"


def _verdict(name: str, got: np.ndarray, expected: np.ndarray, tail: np.ndarray, rtol: float) -> str:
    """'pass', or 'FAIL' with the first wrong element, the elements left NaN, writes past the end."""
    scale = float(np.max(np.abs(expected))) or 1.0
    nan = np.isnan(got)
    wrong = ~(np.abs(got - expected) <= rtol * scale) & ~nan
    at = lambda flat: f"{name}[{', '.join(str(int(i)) for i in np.unravel_index(flat, got.shape))}]"
    found = []
    if wrong.any():
        first = int(np.flatnonzero(wrong)[0])
        found.append(f"{at(first)}: expected {expected.flat[first]:.6g}, got {got.flat[first]:.6g} "
                     f"({int(wrong.sum())} of {got.size} wrong)")
    if nan.any():
        where = ", ".join(at(i) for i in np.flatnonzero(nan)[:3]) + (", ..." if nan.sum() > 3 else "")
        found.append(f"{int(nan.sum())} of {got.size} still NaN, never written (or computed as NaN): {where}")
    if not np.isnan(tail).all():
        found.append(f"{int((~np.isnan(tail)).sum())} element(s) written past the end of {name}: "
                     "a thread outside the output wrote (a missing guard?)")
    return "FAIL  " + "; ".join(found) if found else "pass"

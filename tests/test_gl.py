"""The OpenGL helpers: context errors, shader errors with file and line, checked uploads and bindings."""

import sys

import moderngl
import numpy as np
import pytest

from helpers import gl, timing


def test_no_backend_gives_one_clear_error(monkeypatch):
    def refuse(**kwargs):
        raise Exception(f"cannot open display ({kwargs.get('backend', 'default')})")

    monkeypatch.setattr(moderngl, "create_standalone_context", refuse)
    with pytest.raises(gl.GLContextError) as info:
        gl.create_context()
    message = str(info.value)
    assert "Tried:" in message and "default" in message and "egl" in message
    assert "4.3" in message


def test_macos_is_told_it_has_no_compute_shaders(monkeypatch):
    monkeypatch.setattr(moderngl, "create_standalone_context", lambda **kw: (_ for _ in ()).throw(Exception("no")))
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(gl.GLContextError, match=r"macOS stops at OpenGL 4\.1"):
        gl.create_context()


def test_context_has_compute_shaders(ctx):
    assert ctx.version_code >= 430
    assert "backend" in gl.describe(ctx)


BROKEN = """#version 430
layout(local_size_x = 1) in;
void main() {
    undeclared_thing = 1.0;
}
"""


def test_compile_error_names_file_and_line(ctx, tmp_path, monkeypatch):
    (tmp_path / "broken.comp").write_text(BROKEN)
    monkeypatch.setattr(gl, "GLSL_DIR", tmp_path)
    with pytest.raises(gl.ShaderError, match=r"glsl/broken\.comp:4:(.|\n)*undeclared_thing"):
        gl.compile_shader(ctx, "broken.comp")


def test_compile_error_given_a_path_shows_that_path(ctx, tmp_path):
    (tmp_path / "broken.comp").write_text(BROKEN)
    with pytest.raises(gl.ShaderError) as error:
        gl.compile_shader(ctx, str(tmp_path / "broken.comp"))
    assert f"  {tmp_path}/broken.comp:4:" in str(error.value) and "glsl/" not in str(error.value)


def test_an_override_keeps_the_files_line_numbers(ctx, tmp_path, monkeypatch):
    (tmp_path / "tuned.comp").write_text("#version 430\n#ifndef N\n#define N 4\n#endif\n"
                                         "layout(local_size_x = 1) in;\nvoid main() {\n    float x = N;\n}\n")
    monkeypatch.setattr(gl, "GLSL_DIR", tmp_path)
    gl.compile_shader(ctx, "tuned.comp", {"N": 8}).release()
    with pytest.raises(gl.ShaderError, match=r"glsl/tuned\.comp:7:(.|\n)*7 \| float x = N;(.|\n)*overrides N=undefined_thing"):
        gl.compile_shader(ctx, "tuned.comp", {"N": "undefined_thing"})


def test_overrides_go_after_version_and_only_for_tunables():
    source = gl.shader_source("dense_1_naive.comp", {"RELU": 0, "LOCAL_X": 8})
    assert source.startswith("#version 430\n#define RELU 0\n#define LOCAL_X 8\n")
    assert source.count("\n") == gl.shader_path("dense_1_naive.comp").read_text().count("\n") + 2
    assert gl.tunables(source) == ["RELU", "LOCAL_X", "LOCAL_Y"]
    with pytest.raises(gl.ShaderError, match=r"no `#define TILE4` to override \(TILE4 is derived from the others, "
                                             r"not a tunable\); its tunables are: RB, TQ, KS, MAX_IN, VEC4, N_OUT"):
        gl.shader_source("fused_hidden_1_tiled.comp", {"TILE4": 8})


def test_too_much_shared_memory_names_shader_overrides_and_fix(ctx):
    with pytest.raises(gl.ShaderError) as error:
        gl.Kernel(ctx, "fused_forward_1_xent.comp", {"S": 8})
    message = str(error.value)
    for part in ("fused_forward_1_xent.comp failed to compile", "shared memory", "compiled with the overrides S=8",
                 "Fix: lower S (8; the file's default is 2)", "the banner says: 4 * (S * (MAX_IN + KS*4*JT + MAX_H + N_OUT)) bytes"):
        assert part in message, f"{part!r} missing from: {message}"


def test_unknown_shader_and_unknown_define_are_explained():
    with pytest.raises(gl.ShaderError, match="No shader 'nope.comp'"):
        gl.shader_path("nope.comp")
    with pytest.raises(gl.ShaderError, match="no `#define NOPE`.*RELU, LOCAL_X, LOCAL_Y"):
        gl.shader_source("dense_1_naive.comp", {"NOPE": 1})
    with pytest.raises(gl.ShaderError, match="no `#define NOPE`.*LOCAL_X"):
        gl.define(gl.shader_source("dense_1_naive.comp"), "NOPE")


def test_define_reads_a_value_and_aliased_bindings_keep_the_first_name():
    source = "#define BM 64  // rows\n#define BM2 8\n#define SCALE 2.0\n" + """
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
"""
    assert gl.define(source, "BM") == "64" and gl.define(source, "BM2") == "8" and gl.define(source, "SCALE") == "2.0"
    assert gl.storage_buffers(source) == {0: ("A", np.float32)}


COPY = """#version 430
// copy.comp: y = x * SCALE
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
uniform uint n;
#define SCALE 2.0
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n) y[i] = x[i] * SCALE;
}
"""


@pytest.fixture
def copy_kernel(ctx, tmp_path, monkeypatch):
    (tmp_path / "copy.comp").write_text(COPY)
    monkeypatch.setattr(gl, "GLSL_DIR", tmp_path)
    return gl.Kernel(ctx, "copy.comp", defines={"SCALE": "3.0"})


def test_kernel_runs_with_defines_and_leaves_the_tail_untouched(ctx, copy_kernel, rng):
    x = rng.standard_normal(100).astype(np.float32)
    X, Y = gl.upload(ctx, x, "x"), gl.empty(ctx, (100,), name="y")
    assert copy_kernel.buffers == {0: ("X", np.float32), 1: ("Y", np.float32)}
    copy_kernel.run(gl.groups(70, 64), bindings={0: X, 1: Y}, n=70)
    y = Y.read()
    np.testing.assert_array_equal(y[:70], x[:70] * 3)
    assert np.isnan(y[70:]).all()


def test_kernel_errors_name_the_binding_and_uniform(ctx, copy_kernel):
    X = gl.upload(ctx, np.zeros(4, np.float32), "x")
    labels = gl.upload(ctx, np.zeros(4, np.uint32), "labels")
    with pytest.raises(gl.ShaderError, match=r"binding\(s\) 1 \(Y\) not given"):
        copy_kernel.run(1, bindings={0: X})
    with pytest.raises(gl.ShaderError, match=r"binding 1 \(Y\) holds float32 elements, but GPUArray 'labels' is uint32"):
        copy_kernel.run(1, bindings={0: X, 1: labels})
    with pytest.raises(gl.ShaderError, match=r"no active uniform 'N'.*'n'"):
        copy_kernel.set(N=4)
    with pytest.raises(gl.ShaderError, match="has no `#define TILE`.*SCALE"):
        gl.shader_source("copy.comp", {"TILE": 8})
    with pytest.raises(gl.ShaderError, match=r"binding 1 \(Y\) got a NumPy array; upload it first: gl\.upload"):
        copy_kernel.run(1, bindings={0: X, 1: np.zeros(4, np.float32)})
    with pytest.raises(gl.ShaderError, match=r"binding 1 \(Y\) got a list, not a GPUArray"):
        copy_kernel.run(1, bindings={0: X, 1: [0.0] * 4})


def test_gpu_array_checks_shape_and_dtype(ctx):
    W = gl.empty(ctx, (3, 4), name="W1")
    with pytest.raises(ValueError, match=r"'W1' holds float32 \(3, 4\); got float64 \(3, 4\).*astype\(np.float32\)"):
        W.write(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"'W1' holds float32 \(3, 4\); got float32 \(4, 3\)"):
        W.write(np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match="float64 is not one a shader reads"):
        gl.upload(ctx, np.zeros(3), "x")
    out = np.empty((3, 4), np.float32)
    W.write(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert W.read(out) is out and out[2, 3] == 11
    fresh = W.read()
    fresh[0, 0] = -1                                    # a new, writable array: the buffer is untouched
    assert W.read()[0, 0] == 0
    assert np.isnan(gl.empty(ctx, (5,)).read()).all()
    assert (gl.empty(ctx, (5,), np.uint32).read() == 0xFFFFFFFF).all()


def test_software_renderer_times_by_wall_clock(ctx):
    clock = timing.Clock(ctx)
    if gl.is_software(ctx):
        assert clock.source == timing.WALL_FINISH and "meaningless" in clock.note
    busy = ctx.compute_shader("#version 430\nlayout(local_size_x = 64) in;\n"
                              "layout(std430, binding = 0) buffer Out { float x[]; };\n"
                              "void main() { float s = 0.0; for (int i = 0; i < 20000; i++) s = s * 0.999 + float(i);"
                              " x[gl_GlobalInvocationID.x] = s; }\n")
    idle = ctx.compute_shader("#version 430\nlayout(local_size_x = 64) in;\nvoid main() {}\n")
    out = ctx.buffer(reserve=64 * 64 * 4)
    out.bind_to_storage_buffer(0)
    work, nothing = clock.kernel(lambda: busy.run(64)), clock.kernel(lambda: idle.run(64))
    assert work > nothing > 0, f"a kernel doing work should take longer than an empty one: {work} vs {nothing}"
    for thing in (busy, idle, out):
        thing.release()


def test_driver_assembly_is_nvidias_text_or_none(ctx):
    program = gl.Kernel(ctx, "matmul_2_tiled.comp").program
    text = gl.driver_assembly(program)
    if "nvidia" in ctx.info["GL_VENDOR"].lower():
        assert text is not None and text.startswith("!!NVcp5.0") and "MAD.F32" in text
    else:
        assert text is None or text.startswith("!!NV")

"""OpenGL plumbing for the series: a compute-capable context, shaders loaded from glsl/, GPU arrays.

Introduced in notebook 02. Importing this module creates nothing; call `create_context()`.

    ctx = create_context()                      # OpenGL >= 4.3: the platform default, then EGL
    print(describe(ctx))                        # renderer | OpenGL version | backend
    k = Kernel(ctx, "matmul_1_naive.comp")      # compiled from glsl/, errors name file and line
    A, B = upload(ctx, a, "A"), upload(ctx, b, "B")
    C = empty(ctx, (M, N), name="C")            # NaN-filled (integer dtypes: their maximum), so an unwritten element shows
    k.run(groups(N, 16), groups(M, 16), bindings={0: A, 1: B, 2: C}, M=M, N=N, K=K)   # group counts x, y (, z)
    c = C.read()                                # a new, writable NumPy array
    driver_assembly(k.program)                  # NVIDIA: the assembly text the driver compiled k into (the appendix)

Every tunable of a shader in glsl/ is guarded (`#ifndef TILE` / `#define TILE 16` / `#endif`), so a
`#define TILE 8` placed right after `#version` overrides it; Kernel(ctx, name, {"TILE": 8}) does exactly
that. `Kernel.run` checks that every buffer the shader declares is bound and has the element type the shader
reads, and before every dispatch (through `Kernel.run` or `k.program.run`) that every uniform the shader
reads has been set (one never set reads as 0), that the group counts are those the banner's Dispatch field
gives for the uniforms set, and that the uniforms and the buffers bound so far meet the banner's contract
(its Requires and Bindings fields); `GPUArray.write` checks shape and dtype. Each error names the shader,
the binding, array or uniform that is wrong, and the fix.
"""

from __future__ import annotations

import ctypes
import re
import sys
from pathlib import Path

import numpy as np

GLSL_DIR = Path(__file__).resolve().parent.parent / "glsl"

# GLSL element types of a storage-buffer array, and the NumPy dtype that matches them in std430.
_GLSL_DTYPES = {
    "float": np.float32, "vec2": np.float32, "vec4": np.float32,
    "uint": np.uint32, "uvec2": np.uint32, "uvec4": np.uint32,
    "int": np.int32, "ivec2": np.int32, "ivec4": np.int32,
}


from .gpu_array import GPUArray, bound_buffers, empty, staging_buffer, upload  # noqa: E402,F401  (gl.upload etc.)


class GLContextError(RuntimeError):
    """No OpenGL 4.3 context (compute shaders) could be created."""


class ShaderError(RuntimeError):
    """A shader failed to compile or was used in a way its source does not allow."""


# --------------------------------------------------------------------------------------------
# Context
# --------------------------------------------------------------------------------------------

def create_context(require: int = 430, backends: tuple[str, ...] = ("default", "egl")):
    """Return a standalone moderngl context with at least OpenGL `require` (430 = 4.3, compute shaders).

    Tries the platform's default backend first (a desktop session, WGL on Windows), then EGL, which
    works on headless Linux with a GPU driver or with Mesa's software renderer (llvmpipe).
    Raises GLContextError listing every attempt and how to get a working context.
    """
    import moderngl

    tried = []
    for backend in backends:
        kwargs = {} if backend == "default" else {"backend": backend}
        try:
            ctx = moderngl.create_standalone_context(require=require, **kwargs)
        except Exception as exc:  # moderngl raises bare Exception for missing displays and libraries
            tried.append(f"  {backend:8s} {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}")
            continue
        if ctx.version_code < require:
            tried.append(f"  {backend:8s} gave OpenGL {ctx.version_code / 100:.1f} only")
            ctx.release()
            continue
        ctx.extra = {"backend": backend}
        return ctx
    raise GLContextError(_no_context_message(require, tried))


def _no_context_message(require: int, tried: list[str]) -> str:
    """What was tried, and advice that fits this machine: the missing packages' apt line, or (when they are
    installed) what to check for EGL finding no device."""
    import os

    from . import quickstart   # standard library only: the same package checks the quick start makes

    lines = [f"Could not create an OpenGL {require // 100}.{require % 100 // 10} context (compute shaders need 4.3).",
             "Tried:", *tried]
    if sys.platform == "darwin":
        return "\n".join(lines + ["macOS stops at OpenGL 4.1 and has no compute shaders: run the series on Linux "
                                  "or Windows (a cloud machine or a Linux VM with Mesa works)."])
    if not sys.platform.startswith("linux"):
        return "\n".join(lines + ["Install your GPU vendor's current driver (OpenGL 4.3 or newer)."])
    missing = quickstart.missing_gl_packages()
    if missing:
        return "\n".join(lines + [
            f"Missing: {', '.join(missing)} (EGL and Mesa's software renderer). Install them with",
            f"    {quickstart.apt_line(missing)}",
            "then check with: .venv/bin/python -m helpers.gl (llvmpipe: correct but slow; with an NVIDIA GPU its "
            "driver's EGL is used instead)."])
    vendors = quickstart.egl_vendors()
    lines += ["EGL and Mesa are installed, so EGL found no device it can use. Check:",
              f"  EGL vendor files in {' and '.join(quickstart.EGL_VENDOR_DIRS)}: "
              + (", ".join(p.name for p in vendors) if vendors else "none (reinstall libegl-mesa0, or the NVIDIA driver)")]
    for name in ("__EGL_VENDOR_LIBRARY_FILENAMES", "__EGL_VENDOR_LIBRARY_DIRS"):
        if os.environ.get(name):
            lines.append(f"  {name}={os.environ[name]}: only these vendors are tried; unset it to try all")
        elif name == "__EGL_VENDOR_LIBRARY_FILENAMES":
            lines.append(f"  {name}: unset, so every vendor file above is tried (as it should be)")
    nodes = sorted(Path("/dev/dri").glob("*"))
    denied = [p.name for p in nodes if not os.access(p, os.R_OK | os.W_OK)]
    if not nodes:
        lines.append("  /dev/dri: absent (fine for llvmpipe; a GPU needs it, and a container must be given it)")
    elif denied:
        lines.append(f"  /dev/dri permissions: no read/write access to {', '.join(denied)}; join their group "
                     "(ls -l /dev/dri; e.g. sudo usermod -aG render,video $USER, then log in again)")
    else:
        lines.append(f"  /dev/dri: {', '.join(p.name for p in nodes)}, all accessible")
    nvidia_egl = any("nvidia" in p.name.lower() for p in vendors)
    lines.append("  the NVIDIA driver, with an NVIDIA GPU: nvidia-smi must work and its EGL vendor file "
                 f"10_nvidia.json must be there ({'it is' if nvidia_egl else 'it is not'}); in a container, "
                 "NVIDIA_DRIVER_CAPABILITIES must include graphics")
    return "\n".join(lines + ["Then check with: .venv/bin/python -m helpers.gl"])


def is_software(ctx) -> bool:
    """True on a software renderer (Mesa's llvmpipe/softpipe, SwiftShader): correct, slow, no GPU clock."""
    renderer = ctx.info.get("GL_RENDERER", "").lower()
    return any(name in renderer for name in ("llvmpipe", "softpipe", "swiftshader", "software"))


def card(ctx) -> str:
    """The card's name, the renderer string before its first '/': 'NVIDIA H100 80GB HBM3' (the driver adds
    '/PCIe/SSE2' to every NVIDIA renderer, whatever bus the card sits on)."""
    return ctx.info["GL_RENDERER"].split("/")[0].strip()


def describe(ctx) -> str:
    """One line: renderer | OpenGL version string (it carries the driver version) | backend."""
    backend = getattr(ctx, "extra", None) or {}
    return (f"{ctx.info['GL_RENDERER']} | OpenGL {ctx.info['GL_VERSION']} | "
            f"backend {backend.get('backend', '?')}")


def function(ctx, name: str, restype, *argtypes):
    """An OpenGL function ModernGL does not wrap, from the context's own loader (EGL or GLX), via ctypes:
    function(ctx, "glFlush", None)() calls glFlush. Raises OSError where the loader has no address for the name
    (EGL's may hand back one even for a function the driver lacks: ask only for what OpenGL 4.3 has)."""
    if (getattr(ctx, "extra", None) or {}).get("backend") == "egl":
        loader = ctypes.CDLL("libEGL.so.1").eglGetProcAddress
    else:
        loader = ctypes.CDLL("libGL.so.1").glXGetProcAddressARB
    loader.restype, loader.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    address = loader(name.encode())
    if not address:
        raise OSError(f"no {name} in this OpenGL")
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


_PROGRAM_BINARY_LENGTH = 0x8741


def driver_assembly(program) -> str | None:
    """The assembly text a driver compiled `program` (a moderngl ComputeShader, e.g. Kernel.program) into,
    where its program binary (glGetProgramBinary) holds one: NVIDIA's holds the program in NVIDIA's assembly
    language for OpenGL, a text that starts with "!!NVcp5.0" (NV_compute_program5). None where the binary
    holds no such text (Mesa's does not)."""
    u, i, ctx = ctypes.c_uint, ctypes.c_int, program.ctx
    length = i(0)
    function(ctx, "glGetProgramiv", None, u, u, ctypes.POINTER(i))(program.glo, _PROGRAM_BINARY_LENGTH,
                                                                    ctypes.byref(length))
    if length.value <= 0:
        return None
    blob, written, form = (ctypes.c_ubyte * length.value)(), i(0), u(0)
    function(ctx, "glGetProgramBinary", None, u, i, ctypes.POINTER(i), ctypes.POINTER(u), ctypes.c_void_p)(
        program.glo, length.value, ctypes.byref(written), ctypes.byref(form), blob)
    data = bytes(blob[:written.value])
    start = data.find(b"!!NV")
    if start < 0:
        return None
    end = data.find(b"\0", start)
    return data[start:end if end >= 0 else len(data)].decode("ascii", "replace")


# --------------------------------------------------------------------------------------------
# Shaders
# --------------------------------------------------------------------------------------------

def shader_path(name: str) -> Path:
    """glsl/<name>, with a clear error listing the shaders when it does not exist."""
    path = GLSL_DIR / name
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in GLSL_DIR.glob("*.comp"))) or "(none)"
        raise ShaderError(f"No shader {name!r} in {GLSL_DIR}. Shaders there: {known}")
    return path


def tunables(source: str) -> list[str]:
    """The #defines a source lets a `#define` placed after `#version` override: each guarded
    `#ifndef NAME` / `#define NAME value` / `#endif`, in file order."""
    return re.findall(r"^[ \t]*#ifndef[ \t]+(\w+)[ \t]*\n[ \t]*#define[ \t]+\1\b", source, re.MULTILINE)


def with_defines(source: str, defines: dict | None, name: str = "shader") -> str:
    """`source` with a `#define NAME value` line right after `#version` for each of `defines`: what a GLSL
    user does by hand. A name the source does not guard with #ifndef is refused, with its tunables listed
    (an unguarded `#define NAME` line, in a shader of your own, is rewritten in place instead)."""
    if not defines:
        return source
    guarded, inserted = set(tunables(source)), []
    for key, value in defines.items():
        if key in guarded:
            inserted.append(f"#define {key} {value}")
            continue
        pattern = re.compile(rf"^([ \t]*#define[ \t]+{re.escape(key)})\b[^\n]*$", re.MULTILINE)
        plain = len(pattern.findall(source))
        if plain == 1:
            source = pattern.sub(lambda m: f"{m.group(1)} {value}", source)
            continue
        derived = f" ({key} is derived from the others, not a tunable)" if plain else ""
        known = tunables(source) or re.findall(r"^[ \t]*#define[ \t]+(\w+)", source, re.MULTILINE)
        raise ShaderError(f"{name} has no `#define {key}` to override{derived}; its tunables are: "
                          f"{', '.join(known) or '(none)'}")
    first, newline, rest = source.partition("\n")
    if not first.startswith("#version"):
        return "\n".join(inserted) + "\n" + source
    return first + newline + "\n".join(inserted) + "\n" + rest


def shader_source(name: str, defines: dict | None = None) -> str:
    """The source of glsl/<name> with a `#define NAME value` line after `#version` for each of `defines`
    (with_defines): the file's guarded default of each is then skipped."""
    return with_defines(shader_path(name).read_text(), defines, name)


def _inserted_lines(source: str, original: str) -> int:
    """How many lines with_defines put after `#version` (0 when `source` is the file as it is)."""
    return source.count("\n") - original.count("\n")


def _compile_error(name: str, source: str, message: str, inserted: int = 0) -> ShaderError:
    """Turn a driver's compile log into 'glsl/file.comp:LINE: message' lines with the source line.
    `inserted`: lines of #define overrides after `#version`, so line numbers are those of the file on disk."""
    lines = source.splitlines()
    where = name if "/" in str(name) else f"glsl/{name}"   # a path of its own is shown as given
    out = [f"{name} failed to compile:"]
    for entry in message.splitlines():
        # Mesa: "0:12(5): error: ...", NVIDIA: "0(12) : error C1008: ...", AMD: "ERROR: 0:12: ..."
        match = re.search(r"(?:^|\s)\d+(?::(\d+)\(\d+\)|\((\d+)\)|:(\d+):)", entry)
        if "error" not in entry.lower() or not match:
            continue
        number = int(next(g for g in match.groups() if g))
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        if 1 < number <= 1 + inserted:
            out.append(f"  the override `{text}` (inserted after #version): {entry.strip()}")
            continue
        shown = number - inserted if number > 1 else number
        out.append(f"  {where}:{shown}: {entry.strip()}")
        if text:
            out.append(f"      {shown} | {text}")
    if len(out) == 1:
        out.append(message.strip())
    return ShaderError("\n".join(out))


_MAX_COMPUTE_SHARED_MEMORY_SIZE = 0x8262


def max_shared_memory(ctx) -> int | None:
    """GL_MAX_COMPUTE_SHARED_MEMORY_SIZE: the bytes of shared memory a work group may use (None if unknown)."""
    try:
        value = ctypes.c_int(0)
        function(ctx, "glGetIntegerv", None, ctypes.c_uint, ctypes.POINTER(ctypes.c_int))(
            _MAX_COMPUTE_SHARED_MEMORY_SIZE, ctypes.byref(value))
        return value.value or None
    except (OSError, AttributeError):
        return None


def compile_shader(ctx, name: str, defines: dict | None = None):
    """A moderngl ComputeShader from glsl/<name> (or a path), `defines` placed after `#version`; a failure
    raises ShaderError naming file and line, and the overrides with a hint where they are the likely cause
    (a work group's shared memory over the limit)."""
    original = shader_path(name).read_text()
    source = with_defines(original, defines, name)
    try:
        return ctx.compute_shader(source)
    except Exception as exc:
        error = _compile_error(name, source, str(exc), _inserted_lines(source, original))
    if defines:
        overrides = ", ".join(f"{k}={v}" for k, v in defines.items())
        hint = f"\n  compiled with the overrides {overrides}"
        if "shared" in str(error).lower():
            limit = max_shared_memory(ctx)
            defaults = {}
            for key in defines:
                try:
                    defaults[key] = int(define(original, key))
                except (ShaderError, ValueError):
                    pass
            raised = [f"{k} ({defines[k]}; the file's default is {defaults[k]})" for k in defines
                      if k in defaults and str(defines[k]).isdigit() and int(defines[k]) > defaults[k]]
            tunables_field = " ".join(banner.fields(original).get("Tunables", []))
            grows = [part.strip() for part in tunables_field.split(";") if "shared" in part]
            hint += (f": they ask for more shared memory than this OpenGL gives a work group"
                     f"{f' ({limit} bytes)' if limit else ''}. Fix: lower {', '.join(raised) or ', '.join(defines)}"
                     + (f"; the banner says: {'; '.join(grows)}" if grows else ""))
        error = ShaderError(str(error) + hint)
    raise error from None


def define(source: str, name: str) -> str:
    """The value of `#define name value` in a shader's source (as text, e.g. "16").

    Raises ShaderError naming the define and listing the file's tunables when it has no such line.
    """
    match = re.search(rf"^[ \t]*#define[ \t]+{re.escape(name)}[ \t]+([^\n]*?)[ \t]*(?://[^\n]*)?$",
                      source, re.MULTILINE)
    if not match:
        tunables = re.findall(r"^[ \t]*#define[ \t]+(\w+)", source, re.MULTILINE)
        raise ShaderError(f"shader has no `#define {name}`; its defines are: {', '.join(tunables) or '(none)'}")
    return match.group(1)


def storage_buffers(source: str) -> dict[int, tuple[str, type]]:
    """The storage buffers a shader declares: {binding: (block name, NumPy dtype of its elements)}.

    A binding declared twice (e.g. a float view and a vec4 view of one buffer) is named by its first
    declaration, the one the shader's banner describes.
    """
    found = {}
    pattern = re.compile(r"layout\s*\(([^)]*)\)\s*((?:\w+\s+)*)buffer\s+(\w+)\s*\{([^}]*)\}", re.MULTILINE)
    for layout, _qualifiers, block, body in pattern.findall(_strip_comments(source)):
        binding = re.search(r"binding\s*=\s*(\d+)", layout)
        member = re.search(r"(\w+)\s+\w+\s*\[", body)
        if binding and member:
            found.setdefault(int(binding.group(1)), (block, _GLSL_DTYPES.get(member.group(1))))
    return found


def _strip_comments(source: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.DOTALL)


class Kernel:
    """A compute shader from glsl/ with checked bindings and uniforms, sized and checked by its banner.

    `groups(**sizes)` gives the work groups of a dispatch from the banner's Dispatch line and the
    shader's own #defines; `run(*groups, bindings={0: A, ...}, **uniforms)` binds the GPUArrays, sets the
    uniforms, checks the contract (below), dispatches and (by default) issues a memory barrier so the next
    dispatch or read sees the writes.

        k = Kernel(ctx, "matmul_2_tiled.comp")
        k.run(*k.groups(M=M, N=N), bindings={0: A, 1: B, 2: C}, M=M, N=N, K=K)

    The contract: the banner's Requires conditions on #defines alone are checked before compiling; before
    every dispatch, by run() and by program.run() alike (check_dispatch): those naming uniforms (with the
    values set so far, by run(), set() or program[name]), the length of every buffer bound to the shader's
    bindings (now, by bind(), or earlier by another kernel or GPUArray.bind_to) against the banner's
    Bindings lengths, that every uniform the compiled shader reads has been set, and that the group counts
    are those of the banner's Dispatch field for the uniforms set (more only on an axis it marks
    `or more`). Only what changed since the last dispatch is checked again: a loop that sets its uniforms
    once pays a few comparisons a dispatch (helpers.bench.contract measures it).

    `program` is the compiled moderngl ComputeShader seen through a CheckedProgram: `k.program["K"].value
    = 7` counts as set and `k.program.run(*groups)` checks first; `k.program.unchecked` is the
    ComputeShader itself.
    """

    def __init__(self, ctx, name: str, defines: dict | None = None):
        self.ctx, self.name, self.defines = ctx, name, dict(defines or {})
        self.source = shader_source(name, defines)
        self.banner = banner.parse(self.source, name)
        self.define_values = banner.define_values(self.source)   # {"TILE": 16, ...}, overrides applied
        broken = banner.unmet(self.banner, self.define_values)   # conditions on #defines alone: before compiling
        if broken:
            message = banner.requirement_error(self.banner, broken[0], self.define_values, self.define_values)
            try:                                                  # the shader's own #error says why, if it has one
                compile_shader(ctx, name, defines).release()
            except ShaderError as error:
                message = f"{error}\n{message}"
            raise ShaderError(message)
        self.buffers = storage_buffers(self.source)
        self._groups = {}        # groups(**sizes), remembered per sizes: a dispatch loop pays a dict lookup
        # the checks before a dispatch, indexed by the names they use, so a changed uniform re-runs only its own
        self._uniform_checks = {}
        for requirement in self.banner.requires:
            if not requirement.names <= self.define_values.keys():
                for used in requirement.names:
                    self._uniform_checks.setdefault(used, []).append(requirement)
        self._length_names = {number: tuple(sorted(banner.names(b.length))) for number, b in self.banner.bindings.items()}
        self._length_users = {}       # {uniform: the bindings whose lengths name it}
        for number, used in self._length_names.items():
            for uniform in used:
                self._length_users.setdefault(uniform, []).append(number)
        self._lengths_passed = set()  # (binding, elements, values of the names its length uses) that passed
        # the uniforms the Dispatch field's group counts name (the #defines in it never change)
        self._dispatch_names = tuple(sorted(set().union(*map(banner.names, self.banner.groups or ()))
                                            - self.define_values.keys()))
        self._watched = set(self._uniform_checks).union(*self._length_names.values())  # names check_contract uses
        self._dispatch_set = frozenset(self._dispatch_names)
        self._dtypes = {binding: np.dtype(dtype) for binding, (_, dtype) in self.buffers.items() if dtype is not None}
        self._bound = bound_buffers(ctx)
        self._needed = {}             # {values of the Dispatch field's uniforms: the group counts they need}
        self.program = compile_shader(ctx, name, defines)   # a CheckedProgram around it (the property below)

    @property
    def program(self) -> "CheckedProgram":
        """The compiled program: a moderngl ComputeShader seen through a CheckedProgram, so that
        `kernel.program["K"].value = 7` is remembered as set and `kernel.program.run(*groups)` checks what
        Kernel.run checks before it dispatches. Everything else is the ComputeShader's own."""
        return self._checked_program

    @program.setter
    def program(self, program) -> None:
        """Use another compiled program (a moderngl ComputeShader) of the same source: none of its uniforms
        counts as set yet."""
        if isinstance(program, CheckedProgram):
            program = program.unchecked
        self._program = program
        self._checked_program = CheckedProgram(self, program)
        self.uniforms = {}       # every uniform value set so far, by set(), run() or program[...]: the checks use them
        self._values = dict(self.define_values)   # the #defines and self.uniforms in one dict: what checks evaluate with
        # the uniforms the compiled shader reads (the compiler removes the others), none set yet: a uniform
        # never set reads as 0, so each must be set before the first dispatch
        self._unset = {key for key in program if _is_value_uniform(program[key])}
        self._checked_version = -1    # the bound buffers' version the lengths were last checked at
        self._checked_arrays = {}     # {binding: the array checked there}
        self._changed = set(self._watched)   # uniforms check_contract uses changed since it last ran: all, at first
        self._checked_groups = None   # the group counts the last dispatch was checked with

    def define(self, name: str) -> int:
        """The integer value of `#define name` in this kernel's source (overrides applied), e.g. k.define("TILE")."""
        value = define(self.source, name)
        try:
            return int(value)
        except ValueError:
            raise ShaderError(f"{self.name}: `#define {name} {value}` is not an integer") from None

    def groups(self, **sizes) -> tuple[int, int, int]:
        """Work groups (x, y, z) of one dispatch: the banner's `groups (...)` evaluated with this kernel's
        #defines and `sizes`, the uniforms it names: Kernel(ctx, "matmul_2_tiled.comp").groups(M=300, N=200)
        is (ceil(200/16), ceil(300/16), 1) = (13, 19, 1). The one place that sizes a dispatch."""
        key = tuple(sorted(sizes.items()))
        if key not in self._groups:
            self._groups[key] = banner.dispatch_groups(self.banner, {**self.define_values, **sizes})
        return self._groups[key]

    def check(self, bindings: dict, **sizes) -> None:
        """Raise ShaderError when a bound buffer is shorter than the banner says it must be, computed from
        the uniforms set so far and `sizes` (which win), e.g. k.check({3: Y}, B=max_batch) before a loop."""
        lengths = {binding: array.size if isinstance(array, GPUArray) else array.size // 4  # moderngl: bytes
                   for binding, array in bindings.items() if hasattr(array, "size")}
        banner.check_lengths(self.banner, lengths, {**self.define_values, **self.uniforms, **sizes})

    def check_contract(self) -> None:
        """Raise ShaderError, naming the shader, the uniform or binding, the banner's condition and the fix,
        when the uniforms set so far break a Requires condition of the banner or a buffer bound to one of the
        shader's bindings is shorter than its Bindings length. run() calls it before every dispatch; it
        re-checks only what changed since it last passed (a uniform's value, a binding's buffer)."""
        rebound = self._bound.version != self._checked_version
        changed = self._changed
        if not changed and not rebound:
            return
        values = self._values
        if len(changed) == 1:                    # a loop's one changing uniform: its own checks, precomputed
            for name in changed:
                requirements = self._uniform_checks.get(name, ())
                numbers = self._length_names if rebound else self._length_users.get(name, ())
        else:
            requirements = {id(r): r for name in changed for r in self._uniform_checks.get(name, ())}.values()
            # every binding after a rebinding anywhere; else only those whose lengths name a changed uniform
            numbers = (self._length_names if rebound
                       else {n for name in changed for n in self._length_users.get(name, ())})
        for requirement in requirements:
            if banner.holds(requirement, values) is False:
                raise ShaderError(banner.requirement_error(self.banner, requirement, values, self.define_values))
        arrays, checked, passed = self._bound.arrays, self._checked_arrays, self._lengths_passed
        lengths, keys = {}, []
        for number in numbers:
            array = arrays.get(number)
            if array is None or (array is checked.get(number) and changed.isdisjoint(self._length_names[number])):
                continue
            elements = array.size if isinstance(array, GPUArray) else array.size // 4
            key = (number, elements, tuple([values.get(name) for name in self._length_names[number]]))
            if key in passed:          # this length with these values passed before (an earlier epoch's step)
                checked[number] = array
                continue
            lengths[number] = elements
            keys.append(key)
        if lengths:
            banner.check_lengths(self.banner, lengths, values)
            checked.update((number, arrays[number]) for number in lengths)
            if len(passed) > 65536:
                passed.clear()
            passed.update(keys)
        changed.clear()
        self._checked_version = self._bound.version

    def __repr__(self):
        return f"Kernel({self.name!r}, defines={self.defines})"

    def set(self, **uniforms) -> None:
        """Set uniforms by name; an unknown name lists the ones the compiled shader has."""
        program = self._program
        for key, value in uniforms.items():
            try:
                uniform = program[key]
            except KeyError:
                uniform = None
            if not _is_value_uniform(uniform):
                active = sorted(k for k in program if _is_value_uniform(program[k]))
                raise ShaderError(f"{self.name} has no active uniform {key!r}; it has {active}. "
                                  "(A uniform the shader never reads is removed by the compiler.)") from None
            uniform.value = value
            self._wrote(key, value)

    def _wrote(self, key: str, value) -> None:
        """Remember that uniform `key` was set to `value` (by set(), run() or program[key])."""
        if self._unset:
            self._unset.discard(key)
        if key in self._watched and self.uniforms.get(key, _UNSET) != value:
            self._changed.add(key)
        if key in self._dispatch_set:
            self._checked_groups = None   # the next dispatch checks its group counts again
        self.uniforms[key] = self._values[key] = value

    def check_dispatch(self, group_x: int, group_y: int, group_z: int) -> None:
        """Raise ShaderError, naming the shader, the uniform or the Dispatch expression, the numbers and the
        fix, when the uniforms and buffers break the banner's contract (check_contract()), when a uniform the
        compiled shader reads was never set (it would read 0), or when the group counts are fewer than the
        banner's Dispatch field gives for the uniforms set (outputs left unwritten), or more on an axis whose
        count the banner does not mark `or more`. Kernel.run and kernel.program.run call it before a dispatch
        whenever something changed since the last one passed: a loop that sets its uniforms once and
        dispatches the same groups pays a few comparisons."""
        if self._changed or self._bound.version != self._checked_version:
            self.check_contract()
        if self._unset:
            raise ShaderError(self._unset_message())
        given = (group_x, group_y, group_z)
        if given != self._checked_groups and self.banner.groups is not None:
            uniforms = self.uniforms
            key = tuple([uniforms.get(name) for name in self._dispatch_names])
            needed = self._needed.get(key)
            if needed is None:
                needed = self._needed[key] = self._needed_groups()
            if given != needed:
                more = self.banner.extra_groups
                for axis, (count, least) in enumerate(zip(given, needed)):
                    if least is not None and (count < least or (count > least and not more[axis])):
                        raise ShaderError(self._groups_message(given, needed, axis))
        self._checked_groups = given

    def _unset_message(self) -> str:
        names = sorted(self._unset)
        them, one = ", ".join(names), names[0]
        declared = [n for n in names if n in self.banner.uniforms]
        return (f"{self.name}: uniform{'s' if len(names) > 1 else ''} {them} "
                f"{'are' if len(names) > 1 else 'is'} read by the shader but never set on this program; a "
                f"uniform never set reads as 0, so the shader would compute with {one} = 0 without an error"
                f"{'' if declared == names else ' (the banner lists ' + (', '.join(declared) or 'none of them') + ')'}. "
                f"Fix: set {'each' if len(names) > 1 else 'it'} before the dispatch: kernel.run(..., {one}=...), "
                f"kernel.set({one}=...) or kernel.program[{one!r}].value = ...")

    def _needed_groups(self) -> tuple:
        """The banner's group count on each axis for the uniforms set (None where one it names is unknown)."""
        values = {**self.define_values, **self.uniforms}
        needed = []
        for expression in self.banner.groups:
            try:
                count = banner.evaluate(expression, values)
            except (banner.MissingValue, ZeroDivisionError):
                count = None
            needed.append(None if count is None or count != int(count) else max(0, int(count)))
        return tuple(needed)

    def _groups_message(self, given: tuple, needed: tuple, axis: int) -> str:
        used = sorted(set().union(*map(banner.names, self.banner.groups)))
        sizes = ", ".join(f"{n} = {self.uniforms[n]}" for n in used if n in self.uniforms)
        defines = ", ".join(f"{n} = {self.define_values[n]}" for n in used if n in self.define_values)
        known = ", ".join(f"{n}={self.uniforms[n]}" for n in self._dispatch_names if n in self.uniforms)
        shown = tuple("?" if n is None else n for n in needed)
        expression = "groups ({})".format(", ".join(g + (" or more" if more else "")
                                                   for g, more in zip(self.banner.groups, self.banner.extra_groups)))
        head = (f"{self.name}: {'×'.join(map(str, given))} work groups, but the banner's Dispatch field "
                f"`{expression}` gives {'×'.join(map(str, shown))} for {sizes or 'these #defines'}"
                f"{f' ({defines})' if defines else ''}")
        fix = f"Fix: dispatch kernel.groups({known}) = {tuple(shown)}: kernel.program.run(*kernel.groups({known}))"
        if given[axis] < needed[axis]:
            return (f"{head}; too few: {'xyz'[axis]} = {given[axis]} < {needed[axis]}, so part of the output "
                    f"would never be computed, and no error would say so. {fix}")
        return (f"{head}; {'xyz'[axis]} = {given[axis]} > {needed[axis]}, and the banner does not say the shader "
                f"ignores extra groups on that axis (`<count> or more`), so they may write past the arrays or "
                f"repeat work. {fix}")

    def bind(self, bindings: dict) -> None:
        """Bind GPUArrays to binding points after checking them against the shader's declarations."""
        missing = sorted(set(self.buffers) - set(bindings))
        if missing:
            names = ", ".join(f"{b} ({self.buffers[b][0]})" for b in missing)
            raise ShaderError(f"{self.name}: binding(s) {names} not given")
        for binding, array in bindings.items():
            if binding not in self.buffers:
                raise ShaderError(f"{self.name} declares no storage buffer at binding {binding}; "
                                  f"it has {sorted(self.buffers)}")
            block, dtype = self.buffers[binding][0], self._dtypes.get(binding)
            if isinstance(array, np.ndarray):
                raise ShaderError(f"{self.name}: binding {binding} ({block}) got a NumPy array; upload it first: "
                                  f"gl.upload(ctx, a, {block!r})")
            if isinstance(array, GPUArray):
                if dtype is not None and array.dtype != dtype:
                    raise ShaderError(f"{self.name}: binding {binding} ({block}) holds {dtype.name} "
                                      f"elements, but GPUArray {array.name!r} is {array.dtype.name}")
                array.bind_to(binding)
            elif hasattr(array, "bind_to_storage_buffer"):  # a bare moderngl.Buffer: its length in bytes
                array.bind_to_storage_buffer(binding)
                self._bound.record(binding, array)
            else:
                raise ShaderError(f"{self.name}: binding {binding} ({block}) got a {type(array).__name__}, not a "
                                  "GPUArray or moderngl.Buffer; make one with gl.upload(ctx, a, name) or gl.empty")

    def run(self, group_x: int = 1, group_y: int = 1, group_z: int = 1, *, bindings: dict | None = None,
            barrier: bool = True, **uniforms) -> None:
        """Bind `bindings`, set `uniforms`, check the contract (check_contract()), dispatch the group counts
        (from groups()), then a memory barrier unless barrier=False."""
        if bindings is not None:
            self.bind(bindings)
        if uniforms:
            self.set(**uniforms)
        self.program.run(int(group_x), int(group_y), int(group_z))   # checks (check_dispatch), then dispatches
        if barrier:
            self.ctx.memory_barrier()


_UNSET = object()


def _is_value_uniform(member) -> bool:
    """True for a uniform a program must be given a value (moderngl.Uniform, not a sampler or image, whose
    unit the shader's layout fixes); False for storage and uniform blocks (bound, not set) and None."""
    return type(member).__name__ == "Uniform" and not _is_opaque(getattr(member, "gl_type", 0))


def _is_opaque(gl_type: int) -> bool:
    """GL_SAMPLER_* and GL_IMAGE_* type enums (0x8B5D-0x8B64, 0x8DC0-0x8DDF, 0x904C-0x906C, 0x9108-0x910D)."""
    return (0x8B5D <= gl_type <= 0x8B64 or 0x8DC0 <= gl_type <= 0x8DDF or 0x904C <= gl_type <= 0x906C
            or 0x9108 <= gl_type <= 0x910D)


class CheckedUniform:
    """A moderngl Uniform whose writes (`.value = ...`, `.write(bytes)`) its Kernel remembers as set."""

    __slots__ = ("_uniform", "_kernel", "_name")

    def __init__(self, kernel: "Kernel", name: str, uniform):
        self._uniform, self._kernel, self._name = uniform, kernel, name

    @property
    def value(self):
        return self._uniform.value

    @value.setter
    def value(self, value) -> None:
        self._uniform.value = value
        self._kernel._wrote(self._name, value)

    def write(self, data) -> None:
        self._uniform.write(data)
        self._kernel._wrote(self._name, self._uniform.value)

    def __getattr__(self, name: str):
        return getattr(self._uniform, name)

    def __repr__(self):
        return f"<{self._kernel.name} uniform {self._name}, checked>"


class CheckedProgram:
    """Kernel.program: the moderngl ComputeShader, but `run` checks first (Kernel.check_dispatch) and the
    uniforms got by `program[name]` tell the Kernel when they are set. Anything else (glo, release, ...)
    is the ComputeShader's own."""

    def __init__(self, kernel: "Kernel", program):
        self._kernel, self._program, self._members = kernel, program, {}
        self.unchecked = program   # the ComputeShader itself: its run and uniforms check nothing

    def run(self, group_x: int = 1, group_y: int = 1, group_z: int = 1) -> None:
        """Check (unset uniforms, group counts, the banner's Requires and lengths; only what changed since
        the last dispatch), then dispatch (x, y, z) work groups."""
        kernel = self._kernel
        if (kernel._changed or kernel._unset or kernel._bound.version != kernel._checked_version
                or (group_x, group_y, group_z) != kernel._checked_groups):
            kernel.check_dispatch(group_x, group_y, group_z)
        self._program.run(group_x, group_y, group_z)

    def run_indirect(self, buffer, offset: int = 0) -> None:
        """Dispatch with group counts read from `buffer` on the GPU (so not checked); uniforms checked."""
        kernel = self._kernel
        if kernel._unset:
            raise ShaderError(kernel._unset_message())
        self._program.run_indirect(buffer, offset)

    def __getitem__(self, key: str):
        member = self._members.get(key)
        if member is None:
            member = self._program[key]
            if _is_value_uniform(member):
                member = CheckedUniform(self._kernel, key, member)
            self._members[key] = member
        return member

    def __setitem__(self, key: str, value) -> None:
        self[key].value = value

    def get(self, key: str, default=None):
        return self[key] if key in self._program._members else default

    def __iter__(self):
        return iter(self._program)

    def __contains__(self, key) -> bool:
        return key in self._program._members

    def __getattr__(self, name: str):
        return getattr(self._program, name)

    def __repr__(self):
        return f"<checked {self._program!r} of {self._kernel.name}>"

from . import banner  # noqa: E402  (here, at the end: helpers/banner.py imports this module)


def groups(n: int, local: int) -> int:
    """Work groups needed to cover n items with `local` threads each: ceil(n / local), at least 1.

    For a shader from glsl/, Kernel.groups(**sizes) reads the whole dispatch from its banner instead.
    """
    return max(1, -(-int(n) // int(local)))


if __name__ == "__main__":  # python -m helpers.gl: say what this machine gives, or why it gives nothing
    try:
        print(describe(create_context()))
    except GLContextError as exc:
        sys.exit(str(exc))   # the message alone, on stderr, exit status 1

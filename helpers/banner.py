"""Read a shader's banner, the contract at the top of every glsl/*.comp file, and check buffers against it.

Introduced in notebook 02 (gl.Kernel uses it for every dispatch). The banner gives, in a fixed form
(glsl/README.md, "The banner"):

    // Bindings  0 X float[B*K] (readonly)  1 W float[K*N] (readonly)  2 b float[N] (readonly)
    //           3 Y float[B*N] (writeonly)
    // Uniforms  uint B, K, N
    // Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X), ceil(B/LOCAL_Y), 1)
    // Requires  LOCAL_X*LOCAL_Y <= 1024

    b = parse(source, "dense_1_naive.comp")
    b.bindings[3]                                   # Binding(name='Y', length='B*N', type='float', access='writeonly')
    values = {**define_values(source), "B": 8, "K": 70, "N": 8}
    evaluate(b.groups[0], values)                   # 1: ceil(8/16)
    check_lengths(b, {0: 560, 1: 560, 2: 8, 3: 4}, values)   # ShaderError: binding 3 (Y) holds 4 elements ...

A group count followed by `or more` says the shader ignores the work groups past it on that axis (their
threads return before they touch an array), so a larger count there is harmless; without it, gl.Kernel
refuses more groups as it refuses fewer (extra groups could write past an array, or update it twice).
Lengths and group counts are expressions of the uniforms and #defines: names, integers, + - * / // %,
ceil, min, max and parentheses. `/` is exact division, so ceil(N/TILE) is what it says. The Requires field
lists what the shader needs of its uniforms and #defines, `;`-separated conditions: two expressions
compared (== != < <= > >=, chains too), `&`, `and`, `or`, `not`, and an optional ` if <condition>`:

    // Requires  n_in % 4 == 0;  n_in <= MAX_IN;  n_hidden % 4 == 0 if VEC4;  JT*KS <= 1024

    unmet(b, {"n_hidden": 37, "VEC4": 1, ...})     # [Requirement('n_hidden % 4 == 0 if VEC4', ...)]

gl.Kernel checks the conditions on #defines alone before it compiles and the others before every dispatch.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from . import gl

FIELDS = ("Shapes", "NumPy", "Bindings", "Uniforms", "Dispatch", "Requires", "Changed", "Checked", "Tunables")
ACCESS = ("readonly", "writeonly", "read-write")
TYPES = ("float", "uint", "int")


class Binding(NamedTuple):
    name: str       # the array's name in the shader
    length: str     # elements, an expression of uniforms and #defines, e.g. "B*K"
    type: str       # float, uint or int: the element the length counts
    access: str     # readonly, writeonly or read-write


class Requirement(NamedTuple):
    text: str            # as the banner states it: "n_hidden % 4 == 0 if VEC4"
    names: frozenset     # the uniforms and #defines it names


class Banner(NamedTuple):
    shader: str                      # the file name, for error messages
    fields: dict                     # {"Bindings": "0 X float[B*K] (readonly) ...", ...}: each field's text
    bindings: dict                   # {binding number: Binding}
    uniforms: dict                   # {name: GLSL type}
    local: tuple | None              # three expressions: the work group's size
    groups: tuple | None             # three expressions: the work groups of one dispatch
    requires: tuple = ()             # Requirement per condition of the Requires field
    extra_groups: tuple = (False, False, False)   # per axis: `<count> or more`, the shader ignores groups past it


def field_name(line: str) -> str | None:
    """The banner field a line starts ("// Dispatch  local ..." -> "Dispatch"), or None."""
    match = re.match(r"// (\w+)\s", line)
    return match.group(1) if match and match.group(1) in FIELDS else None


def fields(source: str) -> dict[str, list[str]]:
    """The banner's fields as {name: [first line, continuation lines...]} (text after the field name).

    The banner is the block of `//` lines right after `#version` (and any `#define` overrides placed there).
    A field starts with its name at the start of a line (`// Bindings  ...`); lines indented further
    continue it; a blank `//` ends it.
    """
    found, current = {}, None
    lines = source.splitlines()[1:]
    while lines and lines[0].startswith("#define"):   # overrides placed after #version come first
        lines.pop(0)
    for line in lines:
        if not line.startswith("//"):
            break
        text, name = line[2:], field_name(line)
        if name:
            current = found.setdefault(name, [])
            current.append(line[3 + len(name):].strip())
        elif current is not None and text.startswith("   ") and text.strip():
            current.append(text.strip())
        else:
            current = None  # a blank line, the title, or free prose
    return found


def parse(source: str, shader: str = "shader") -> Banner:
    """The banner of a shader's source. A Bindings, Uniforms or Dispatch field that does not follow the
    syntax raises gl.ShaderError naming the shader and the text; a missing field gives {} or None."""
    lines = fields(source)

    def fail(field, text, expected):
        raise gl.ShaderError(f"{shader}: the banner's {field} field does not parse at {text!r}; expected {expected}")

    bindings = {}
    entry = re.compile(r"(\d+) (\w+) (\w+)\[([^\]]+)\] \(([\w-]+)\)")
    for line in lines.get("Bindings", []):
        if not line[0].isdigit():
            continue  # a note for the reader
        for item in re.split(r"\s{2,}", line):
            match = entry.fullmatch(item)
            if not match or match.group(3) not in TYPES or match.group(5) not in ACCESS:
                fail("Bindings", item, "`<binding> <name> <float|uint|int>[<length>] (<readonly|writeonly|read-write>)`")
            number, name, type_, length, access = match.groups()
            bindings[int(number)] = Binding(name, length, type_, access)

    uniforms = {}
    for line in lines.get("Uniforms", []):
        if line.split(" ")[0] not in TYPES:
            continue  # a note
        while re.search(r"\([^()]*\)", line):  # drop descriptions in parentheses
            line = re.sub(r"\([^()]*\)", "", line)
        for part in line.split(";"):
            match = re.fullmatch(r"\s*(\w+)\s+(\w+(?:\s*,\s*\w+)*)\s*", part)
            if not match or match.group(1) not in TYPES:
                fail("Uniforms", part, "`<type> <name>, <name>; <type> <name>`")
            for name in re.split(r"\s*,\s*", match.group(2)):
                uniforms[name] = match.group(1)

    local = groups = None
    extra_groups = (False, False, False)
    if "Dispatch" in lines:
        text = " ".join(lines["Dispatch"])
        match = re.match(r"local\s*(\(.*)", text)
        local, rest = _tuple(match.group(1)) if match else (None, "")
        match = re.match(r"\s*;\s*groups\s*(\(.*)", rest)
        groups, _ = _tuple(match.group(1)) if match else (None, "")
        if groups is not None:
            extra_groups = tuple(g.endswith(" or more") for g in groups)
            groups = tuple(g[:-len(" or more")] if more else g for g, more in zip(groups, extra_groups))
        if local is None or groups is None:
            fail("Dispatch", text, "`local (<x>, <y>, <z>); groups (<x>, <y>, <z>)`")
    requires = []
    for text in " ".join(lines.get("Requires", [])).split(";"):
        text = " ".join(text.split())
        if not text:
            continue
        try:
            _code, used = _condition(text)
        except gl.ShaderError as error:
            fail("Requires", text, f"`<expression> <comparison> <expression> [if <condition>]` ({error})")
        requires.append(Requirement(text, used))
    return Banner(shader, {k: " ".join(v) for k, v in lines.items()}, bindings, uniforms, local, groups,
                  tuple(requires), extra_groups)


def _tuple(text: str):
    """('(a, min(b, c), 1) rest') -> (('a', 'min(b, c)', '1'), ' rest'): a parenthesised triple and what follows."""
    depth = 0
    for end, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            break
    triple = text[:end + 1]
    try:
        tree = ast.parse(triple, mode="eval").body
    except SyntaxError:
        return None, ""
    if not isinstance(tree, ast.Tuple) or len(tree.elts) != 3:
        return None, ""
    return tuple(ast.get_source_segment(triple, e) for e in tree.elts), text[end + 1:]


def define_values(source: str) -> dict[str, int]:
    """Every `#define NAME <integer>` of a source, read with gl.define: {"TILE": 16, ...}."""
    values = {}
    for name in dict.fromkeys(re.findall(r"^[ \t]*#define[ \t]+(\w+)", source, re.MULTILINE)):
        try:
            values[name] = int(gl.define(source, name))
        except ValueError:
            pass  # not a plain integer (e.g. SCALE 2.0): no length or group count can use it
    return values


# ---------------------------------------------------------------------------------------------------
# Expressions: a whitelist of Python's syntax, checked node by node, then evaluated exactly (Fractions)
# ---------------------------------------------------------------------------------------------------

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_FUNCTIONS = {"ceil": math.ceil, "min": min, "max": max}
_GLOBALS = {"__builtins__": {}, "_div": lambda a, b: Fraction(a) / b, **_FUNCTIONS}


class MissingValue(gl.ShaderError):
    """An expression names a value that was not given (`.name` says which)."""

    def __init__(self, name: str, expression: str):
        super().__init__(f"{expression} needs a value for {name}")
        self.name = name


@lru_cache(maxsize=None)
def names(expression: str) -> frozenset:
    """The names an expression uses, functions excluded: names("ceil(N/TILE)") == {"N", "TILE"}."""
    return _compiled(expression, False)[1]


class _ExactDivision(ast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Div):
            return ast.copy_location(ast.Call(ast.Name("_div", ast.Load()), [node.left, node.right], []), node)
        return node


@lru_cache(maxsize=None)
def _compiled(expression: str, condition: bool):
    """(code, names) of a banner expression after checking every node against the whitelist: arithmetic
    (names, integers, + - * / // %, ceil, min, max), and for a condition also comparisons, &, and, or, not."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise gl.ShaderError(f"not an expression: {expression!r}") from None
    called = set()

    def allowed(node) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.Name):
            return True
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, _ARITHMETIC) or (condition and isinstance(node.op, ast.BitAnd))
        if isinstance(node, ast.Call):
            called.add(getattr(node.func, "id", None))
            return (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and node.args
                    and not node.keywords and all(map(allowed, node.args)))
        if condition and isinstance(node, ast.Compare):
            return all(isinstance(op, _COMPARISONS) for op in node.ops)
        if condition and isinstance(node, ast.BoolOp):
            return True
        if condition and isinstance(node, ast.UnaryOp):
            return isinstance(node.op, ast.Not)
        return False

    for node in ast.walk(tree.body):
        if isinstance(node, (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)):
            continue
        if not allowed(node):
            extra = ", comparisons, &, and, or, not" if condition else ""
            raise gl.ShaderError(f"{expression!r}: {ast.unparse(node)!r} is not allowed in a banner expression "
                                 f"(names, integers, + - * / // %, ceil, min, max, parentheses{extra})")
    used = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)) - called
    code = compile(ast.fix_missing_locations(_ExactDivision().visit(tree)), "<banner>", "eval")
    return code, used


def evaluate(expression: str, values: dict):
    """The value of a banner expression, given {name: value}: an int when it is whole, else a Fraction.

    Raises MissingValue for a name not in `values`, gl.ShaderError for anything outside the whitelist.
    """
    code, used = _compiled(expression, False)
    for name in used:
        if name not in values:
            raise MissingValue(name, expression)
    result = eval(code, _GLOBALS, values)   # a whitelisted tree: names, integers, arithmetic, ceil/min/max
    return int(result) if result == int(result) else result


@lru_cache(maxsize=None)
def _condition(text: str):
    """(code, names) of one Requires condition, `<condition> [if <guard>]`; the guard's false means it holds."""
    condition, _, guard = text.partition(" if ")
    code, used = _compiled(condition, True)
    if not guard:
        return code, used
    guard_code, guard_names = _compiled(guard, True)
    return _Guarded(guard_code, code), used | guard_names


class _Guarded(NamedTuple):
    guard: object
    condition: object


def holds(requirement: Requirement, values: dict) -> bool | None:
    """Whether a Requires condition holds for `values`; None when a name it uses is not among them."""
    if not requirement.names <= values.keys():
        return None
    code, _ = _condition(requirement.text)
    try:
        if isinstance(code, _Guarded):
            return not eval(code.guard, _GLOBALS, values) or bool(eval(code.condition, _GLOBALS, values))
        return bool(eval(code, _GLOBALS, values))
    except ZeroDivisionError:   # a zero divisor (TM 0 in BM // TM): the preprocessor refuses it too
        return False


def unmet(banner: Banner, values: dict) -> list:
    """The banner's Requires conditions that `values` break (those naming a value not given are skipped)."""
    return [r for r in banner.requires if holds(r, values) is False]


def requirement_error(banner: Banner, requirement: Requirement, values: dict, defines: dict) -> str:
    """The message for a broken requirement: the shader, the values, the condition and how to fix it."""
    given = ", ".join(f"{name} = {values[name]}" for name in sorted(requirement.names))
    tunables = sorted(requirement.names & defines.keys())
    uniforms = sorted(requirement.names - defines.keys())
    example = (f"gl.Kernel(ctx, {banner.shader!r}, defines={{{', '.join(f'{d!r}: ...' for d in tunables)}}})"
               if tunables else "")
    if uniforms:
        fix = f"set {', '.join(uniforms)} so that it holds"
        if tunables:
            fix += f", or compile with other {', '.join(tunables)}: {example}"
        return (f"{banner.shader}: uniform {' and '.join(uniforms)} breaks the banner's requirement `{requirement.text}` "
                f"({given}); the shader would compute wrong results without an error. Fix: {fix}")
    return (f"{banner.shader}: the #defines break the banner's requirement `{requirement.text}` ({given}); the "
            f"shader cannot work with them. Fix: choose {', '.join(tunables)} so that it holds: {example}")


def dispatch_groups(banner: Banner, values: dict) -> tuple[int, int, int]:
    """The banner's `groups (x, y, z)` evaluated with `values`; each must come out a whole number."""
    if banner.groups is None:
        raise gl.ShaderError(f"{banner.shader}: the banner has no `// Dispatch  local (...); groups (...)` line")
    counts = []
    for expression in banner.groups:
        try:
            count = evaluate(expression, values)
        except MissingValue as missing:
            raise gl.ShaderError(f"{banner.shader}: the group count {expression} needs {missing.name}; pass it: "
                                 f"kernel.groups({missing.name}=...)") from None
        if count != int(count):
            raise gl.ShaderError(f"{banner.shader}: the group count {expression} = {count} is not a whole number")
        counts.append(int(count))
    return tuple(counts)


def check_lengths(banner: Banner, lengths: dict, values: dict) -> None:
    """Raise gl.ShaderError when a bound buffer is shorter than its banner length.

    lengths: {binding: elements bound there}; values: the uniforms and #defines. A binding whose length
    names a value not given (e.g. n_images, which only the data knows) is not checked.
    """
    for number, elements in lengths.items():
        binding = banner.bindings.get(number)
        if binding is None:
            continue
        try:
            needed = evaluate(binding.length, values)
        except MissingValue:
            continue
        if elements < needed:
            given = ", ".join(f"{name}={values[name]}" for name in sorted(names(binding.length)))
            raise gl.ShaderError(f"{banner.shader}: binding {number} ({binding.name}) holds {elements} elements, "
                                 f"but the banner needs {binding.type}[{binding.length}] = {needed} ({given})")

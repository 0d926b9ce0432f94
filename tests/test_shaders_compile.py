"""Every glsl/*.comp, as committed: compiles through ModernGL and glslangValidator, has `#version 430`
on line 1 and a banner that starts with the file name and has the fields glsl/README.md requires; the
README's index lists every shader. Shaders added later are picked up by the glob. What the banner's
fields say (bindings, lengths, dispatch) is checked in tests/test_banners.py."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

GLSL = Path(__file__).resolve().parent.parent / "glsl"
SHADERS = sorted(GLSL.glob("*.comp"))
IDS = [path.name for path in SHADERS]
BANNER_FIELDS = ("Shapes", "NumPy", "Bindings", "Uniforms", "Dispatch", "Changed", "Checked")


def test_there_are_shaders():
    assert SHADERS, "no glsl/*.comp found"


def banner(source: str) -> list[str]:
    """The comment lines right after `#version`, without their `//`."""
    lines = []
    for line in source.splitlines()[1:]:
        if not line.startswith("//"):
            break
        lines.append(line[2:].strip())
    return lines


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_compiles_with_moderngl(ctx, path):
    try:
        ctx.compute_shader(path.read_text()).release()
    except Exception as exc:
        pytest.fail(f"glsl/{path.name} does not compile as committed:\n{exc}")


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_compiles_with_glslangvalidator(path):
    validator = shutil.which("glslangValidator")
    if validator is None:
        message = "glslangValidator not found: install glslang-tools"
        if os.environ.get("CI_REQUIRE_GL"):
            pytest.fail(message)
        pytest.skip(message)
    result = subprocess.run([validator, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, f"glslangValidator glsl/{path.name}:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_version_line_and_banner(path):
    source = path.read_text()
    assert source.splitlines()[0].strip() == "#version 430", f"glsl/{path.name}: line 1 must be `#version 430`"
    lines = banner(source)
    assert lines and lines[0].startswith(path.name), \
        f"glsl/{path.name}: the banner's first line must start with the file name"
    for field in BANNER_FIELDS:
        assert any(line.startswith(field) for line in lines), \
            f"glsl/{path.name}: the banner has no `// {field}` line (glsl/README.md, \"The banner\")"


def test_glsl_readme_lists_every_shader():
    """glsl/README.md's index has one row for every shader file, and no row for a file that is gone."""
    index = (GLSL / "README.md").read_text()
    listed = set(re.findall(r"^\| ([\w.]+\.comp) \|", index, re.MULTILINE))
    on_disk = {p.name for p in GLSL.glob("*.comp")}
    assert on_disk - listed == set(), f"add these to glsl/README.md's index: {sorted(on_disk - listed)}"
    assert listed - on_disk == set(), f"listed but not in glsl/: {sorted(listed - on_disk)}"

"""Each glossary entry's "First in" names the first notebook, in the course's order, that links to the entry or
defines its term in bold (.ci/glossary.py computes it and can rewrite the file)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("glossary_tool", ROOT / ".ci" / "glossary.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


def test_first_in_is_the_first_notebook_that_uses_the_term():
    texts = {name: tool.notebook_text(name) for name in tool.ORDER}
    _, changed = tool.rewrite(tool.GLOSSARY.read_text(), texts)
    assert not changed, f"run python3 .ci/glossary.py: these entries name the wrong notebook: {changed}"


def test_no_hidden_comments_in_the_glossary():
    assert "<!--" not in tool.GLOSSARY.read_text()


def test_rewrite_moves_first_in_to_the_first_user():
    text = "### warm-up\n**Warm-up**: untimed work first. First in [05](05_x.ipynb).\n"
    texts = {name: "" for name in tool.ORDER}
    texts[tool.ORDER[1]] = "see [warm-up](GLOSSARY.md#warm-up)"
    new, changed = tool.rewrite(text, texts)
    assert changed == ["warm-up"] and f"First in [{tool.ORDER[1][:2]}]({tool.ORDER[1]})." in new

"""The closing findings' shared wording."""

import pytest

from helpers import findings


def test_what_we_measured_prints_each_finding(capsys):
    findings.what_we_measured("one.", "two.")
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("What we measured (")
    assert "  • One.\n  • Two.\n" in out


def test_than_on_both_sides_and_equal():
    assert findings.than(2, 1, "above", "below") == "above"
    assert findings.than(1, 2, "above", "below") == "below"
    assert findings.than(1, 1, "above", "below") == "below"
    assert findings.than(0.975, 0.975, "met", "not met", equal="met") == "met"
    assert findings.than(0.9749, 0.975, "met", "not met", equal="met") == "not met"


def test_sentence_capitalises_and_ends_once():
    assert findings.sentence("the net read 10 of 10") == "The net read 10 of 10."
    assert findings.sentence("Already one.") == "Already one."
    assert findings.sentence("dense_1's kernels took 5 µs") == "dense_1's kernels took 5 µs."
    assert findings.sentence("re-made digits read 97 %") == "Re-made digits read 97 %."   # a hyphenated first word
    with pytest.raises(ValueError):
        findings.sentence("  ")


@pytest.mark.parametrize("names, words", [(["a"], "a"), (["a", "b"], "a and b"), (("a", "b", "c"), "a, b and c")])
def test_listed_joins_names_for_a_sentence(names, words):
    assert findings.listed(names) == words and findings.listed(iter(names)) == words

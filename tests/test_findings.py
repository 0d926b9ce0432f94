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


def test_than_on_a_tie_prints_the_equal_words():
    """Notebook 01's comparisons of two accuracies: a tie reads as a tie, not as the lower side."""
    assert findings.than(0.9465, 0.9465, "further than", "not as far as", equal="as far as") == "as far as"
    assert findings.than(0.8948, 0.8948, "above", "below", equal="level with") == "level with"
    assert findings.than(0.9466, 0.9465, "further than", "not as far as", equal="as far as") == "further than"
    assert findings.than(0.8947, 0.8948, "above", "below", equal="level with") == "below"


def test_why_worst_on_both_sides_of_ten_times():
    tiny = "a tiny gradient, not a large error, makes it the worst."
    assert findings.why_worst(170, 5.8) == tiny                       # 170 > 58
    assert findings.why_worst(58.1, 5.8) == tiny
    assert findings.why_worst(58, 5.8) == "a real outlier."            # exactly ten times: not beyond it
    assert findings.why_worst(20, 5.8) == "a real outlier."
    assert findings.why_worst(20, 5.8, factor=3) == tiny


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

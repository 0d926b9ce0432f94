"""Notebook 10's sentences (helpers.digits) on made-up numbers, on both sides of each threshold."""

from helpers import digits


def test_preprocessing_within_a_point():
    text = digits.preprocessing_sentence(0.005, 0.9997, 0.9780, 0.9781, 10_000)
    assert "within a point" in text and "97.80%" in text and "97.81%" in text and "99.97%" in text
    assert "0.005 grey levels" in text and "10,000 test digits" in text


def test_preprocessing_more_than_a_point():
    text = digits.preprocessing_sentence(12.0, 0.1, 0.9780, 0.9500, 10_000)
    assert "more than a point apart" in text and "within a point" not in text


def test_preprocessing_says_stayed_when_equal_as_printed():
    text = digits.preprocessing_sentence(0.006, 0.9996, 0.97841, 0.97839, 10_000)     # both print as 97.84%
    assert "the net's test accuracy stayed at 97.84%, so the preprocessing gives the net what MNIST gave it" in text
    assert "went from" not in text and "within a point" not in text and text.count("97.84%") == 1
    moved = digits.preprocessing_sentence(0.006, 0.9996, 0.9784, 0.9783, 10_000)
    assert "went from 97.84% to 97.83%: within a point" in moved and "stayed" not in moved


def test_preprocessing_starts_with_a_capital_word():
    assert digits.preprocessing_sentence(0.0, 1.0, 0.95, 0.94, 100).startswith("The 100 test digits, re-made")


def test_preprocessing_at_the_threshold():
    assert "within a point" in digits.preprocessing_sentence(0.0, 1.0, 0.95, 0.94, 100)
    assert "more than a point" in digits.preprocessing_sentence(0.0, 1.0, 0.95, 0.9399, 100)

"""Notebook 10's sentences (helpers.digits) on made-up numbers, on both sides of each threshold."""

from helpers import digits


def test_preprocessing_within_a_point():
    text = digits.preprocessing_sentence(0.005, 0.9997, 0.9780, 0.9781, 10_000)
    assert "within a point" in text and "97.80%" in text and "97.81%" in text and "99.97%" in text
    assert "0.005 grey levels" in text and "10000 test digits" in text


def test_preprocessing_more_than_a_point():
    text = digits.preprocessing_sentence(12.0, 0.1, 0.9780, 0.9500, 10_000)
    assert "more than a point apart" in text and "within a point" not in text


def test_preprocessing_at_the_threshold():
    assert "within a point" in digits.preprocessing_sentence(0.0, 1.0, 0.95, 0.94, 100)
    assert "more than a point" in digits.preprocessing_sentence(0.0, 1.0, 0.95, 0.9399, 100)

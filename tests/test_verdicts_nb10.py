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


def test_split_transfers_longer():
    text = digits.split_sentence(40e-6, 10e-6, 30e-6, "GPU timer query")
    assert text.startswith("one drawn digit's prediction: upload 40 µs, kernel 10 µs (GPU timer query)")
    assert "the two transfers took longer than the kernel (7× its time)" in text


def test_split_kernel_longer():
    text = digits.split_sentence(50e-6, 2400e-6, 30e-6, "wall clock around ctx.finish()", n=10)
    assert text.startswith("a drawn digit's prediction (medians of 10)")
    assert "the kernel took longer than the two transfers together (30× their time)" in text

"""The sentences notebooks 03 and 04 print from their numbers, each tested with made-up numbers on both sides
of its threshold, so a printed verdict can never contradict the numbers printed beside it."""

import pytest

from helpers import inference, matmul


# --- split-K: each size judged on its own gain (the verdict once followed only the smallest size) ---------

def test_splitk_verdict_all_faster():
    text = matmul.splitk_verdict({512: 1.67, 1024: 2.03})
    assert "512³ and 1024³" in text and "1.67×" in text and "2.03×" in text
    assert "pays" in text and "cost more" not in text


def test_splitk_verdict_all_slower():
    text = matmul.splitk_verdict({256: 0.79})
    assert "256³" in text and "0.79×" in text and "cost more" in text and "pays" not in text


def test_splitk_verdict_mixed_names_each_side():
    text = matmul.splitk_verdict({256: 0.79, 512: 1.67, 1024: 2.03})
    pays, costs = text.split(";")
    assert "512³ and 1024³" in pays and "pays" in pays and "256³" not in pays
    assert "256³" in costs and "cost more" in costs and "0.79×" in costs


def test_splitk_verdict_at_the_threshold_is_not_a_win():
    assert "pays" not in matmul.splitk_verdict({1024: 1.0})


def test_splitk_verdict_without_pieces():
    assert "no size" in matmul.splitk_verdict({})


# --- rung 6's shuffles -------------------------------------------------------------------------------

def test_shuffle_verdict_both_sides():
    assert "the shuffles win here" in matmul.shuffle_verdict(1.2)
    text = matmul.shuffle_verdict(0.8)
    assert "does not pay" in text and "0.80×" in text


# --- rung 7 against rung 6 ----------------------------------------------------------------------------

def test_rung_verdict_both_sides():
    faster = matmul.rung_verdict("matmul_7_vec4k", "matmul_6_subgroup", 4096, 1.1)
    slower = matmul.rung_verdict("matmul_7_vec4k", "matmul_6_subgroup", 4096, 0.95)
    assert "1.1× faster" in faster and "4096³" in faster
    assert "slower" in slower and "faster" not in slower


# --- rung 2 against its shared-read ceiling ------------------------------------------------------------

def test_shared_bound_verdict_both_sides():
    assert "bound by the number of shared-memory reads" in matmul.shared_bound_verdict(0.8)
    assert "something besides the shared reads" in matmul.shared_bound_verdict(0.5)


# --- the staging-buffer rule's two measured reasons ----------------------------------------------------

def test_staging_upload_verdict_both_sides():
    slow = inference.staging_upload_verdict(staged=8e-3, direct=2e-3)
    assert "4× slower" in slow and "buffer.write" in slow
    fast = inference.staging_upload_verdict(staged=1e-3, direct=2e-3)
    assert "2× faster" in fast and "here" in fast


def test_mapped_output_verdict_both_sides():
    moved = inference.mapped_output_verdict(unmapped=1e-5, mapped=1e-4)
    assert "10.00×" in moved and "moved" in moved
    kept = inference.mapped_output_verdict(unmapped=1e-5, mapped=1.05e-5)
    assert "left it in place" in kept and "1.05×" in kept


def test_mapped_output_verdict_threshold():
    assert "moved" in inference.mapped_output_verdict(unmapped=1.0, mapped=inference.MAPPED_SLOWER + 0.01)
    assert "left it in place" in inference.mapped_output_verdict(unmapped=1.0, mapped=inference.MAPPED_SLOWER - 0.01)


# --- the crossover --------------------------------------------------------------------------------------

def test_crossover_sentence_both_sides():
    rows = [{"batch": 1, "total": 2.0, "numpy": 1.0}, {"batch": 100, "total": 2.0, "numpy": 3.0}]
    assert "from a batch of 100" in inference.crossover_sentence(rows)
    assert "NumPy is ahead at every batch size" in inference.crossover_sentence(rows[:1])


def test_verdicts_refuse_nonsense():
    with pytest.raises(ValueError, match="positive"):
        inference.staging_upload_verdict(staged=0.0, direct=1.0)


# --- the appendix: what costs BK 16 its second group per SM ---------------------------------------------

def test_occupancy_verdict_both_sides():
    shared = matmul.occupancy_verdict(held_base=2, held_deep=1, held_padded=1)
    assert "shared memory, not registers" in shared
    other = matmul.occupancy_verdict(held_base=2, held_deep=1, held_padded=2)
    assert "something else (registers)" in other
    same = matmul.occupancy_verdict(held_base=2, held_deep=2, held_padded=2)
    assert "as many groups" in same

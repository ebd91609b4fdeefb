"""SetFitEmbedder's budget: n_pairs="auto" and train_max_length="auto" per device and texts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skembed.text.transformer import _budget
from skembed.text.transformer._budget import resolve_budget


def budget(n_pairs="auto", train_max_length="auto", lengths=(30,), epochs=2, on_cpu=True):
    lengths = np.asarray(lengths)
    return resolve_budget(
        n_pairs, train_max_length, lengths, epochs=epochs, max_length=256, on_cpu=on_cpu
    )


def test_the_cpu_pays_for_a_fixed_number_of_word_pieces():
    # tweets of 30 word pieces: 400,000 / (2 epochs x 2 documents x 30) = 3,333 -> the cap
    assert budget(lengths=[30] * 100).n_pairs == 3200
    # documents of 120 word pieces: 400,000 / 480 = 833.3 -> 833 pairs
    assert budget(lengths=[120] * 100).n_pairs == 833
    # one epoch pays for twice the pairs
    assert budget(lengths=[120] * 100, epochs=1).n_pairs == 1666
    # documents longer than the window cost the window only: 400,000 / (4 x 256) = 390
    assert budget(lengths=[2000] * 100).n_pairs == 390
    # however long the documents are, 256 pairs (8 steps of 32)
    assert budget(lengths=[250] * 100, epochs=8).n_pairs == 256


def test_the_training_length_is_the_95th_percentile_on_the_cpu():
    lengths = np.arange(1, 201)  # 1..200: numpy's 95th percentile is 190.05
    b = budget(lengths=lengths)
    assert b.max_length == 191
    # the mean is taken over the documents as cut: (sum(1..191) + 9 * 191) / 200
    mean = (191 * 192 / 2 + 9 * 191) / 200
    assert b.n_pairs == min(3200, math.floor(400_000 / (4 * mean)))
    assert "auto" in b.reason and f"{mean:.0f} per document" in b.reason
    # the window of the encoder caps it
    assert budget(lengths=[600] * 20).max_length == 256


def test_off_the_cpu_the_budget_is_the_full_one_whatever_the_texts():
    b = budget(lengths=[200] * 100, on_cpu=False)
    assert (b.n_pairs, b.max_length) == (3200, 256)


def test_stated_values_are_kept():
    assert budget(n_pairs=100, train_max_length=64, lengths=[200] * 10)[:2] == (100, 64)
    assert budget(train_max_length=None, lengths=[20] * 10).max_length == 256


def test_a_training_length_above_the_window_is_refused():
    with pytest.raises(
        ValueError, match=r"train_max_length=300 exceeds the encoder's window of 256"
    ):
        budget(train_max_length=300)


def test_the_constants_are_what_the_docs_say():
    assert (_budget.FULL_PAIRS, _budget.CPU_WORD_PIECES, _budget.MIN_AUTO_PAIRS) == (
        3200,
        400_000,
        256,
    )
    assert _budget.LENGTH_PERCENTILE == 95

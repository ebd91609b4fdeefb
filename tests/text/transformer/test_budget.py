"""SetFitEmbedder's budget: n_pairs="auto" and train_max_length="auto" per device and texts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skembed.text.transformer import _budget
from skembed.text.transformer._budget import resolve_budget


def budget(
    n_pairs="auto", train_max_length="auto", lengths=(30,), epochs=2, on_cpu=True, max_length=256
):
    lengths = np.asarray(lengths)
    return resolve_budget(
        n_pairs, train_max_length, lengths, epochs=epochs, max_length=max_length, on_cpu=on_cpu
    )


def test_the_cpu_pays_for_a_fixed_number_of_word_pieces():
    # 800 documents of 120 word pieces: 180,000 / (2 epochs x 2 documents x 120) = 375 pairs
    assert budget(lengths=[120] * 800).n_pairs == 375
    # one epoch pays for twice the pairs
    assert budget(lengths=[120] * 800, epochs=1).n_pairs == 750
    # documents longer than the window cost the window only: 180,000 / (4 x 128) = 351
    assert budget(lengths=[2000] * 800, max_length=128).n_pairs == 351
    # short documents: never more than 3,200 pairs
    assert budget(lengths=[10] * 800).n_pairs == 3200
    # however long the documents are, 256 pairs (8 steps of 32)
    assert budget(lengths=[250] * 800).n_pairs == 256


def test_the_word_pieces_grow_with_the_square_root_of_the_documents():
    # 3,200 tweets of 30 word pieces: 180,000 x sqrt(4) / (4 x 30) = 3,000 pairs
    b = budget(lengths=[30] * 3200)
    assert b.n_pairs == 3000
    assert "360,000 training word pieces for 3200 documents, at 30 per document" in b.reason
    # 200 documents of 30: 180,000 x sqrt(1/4) / 120 = 750 pairs
    assert budget(lengths=[30] * 200).n_pairs == 750


def test_the_training_length_is_the_95th_percentile_on_the_cpu():
    lengths = np.tile(np.arange(1, 201), 4)  # 800 documents, 1..200: 95th percentile 190.05
    b = budget(lengths=lengths)
    assert b.max_length == 191
    # the mean is taken over the documents as cut: (sum(1..191) + 9 * 191) / 200
    mean = (191 * 192 / 2 + 9 * 191) / 200
    assert b.n_pairs == math.floor(180_000 / (4 * mean))
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
    constants = (_budget.FULL_PAIRS, _budget.CPU_WORD_PIECES, _budget.MIN_AUTO_PAIRS)
    assert constants == (3200, 180_000, 256)
    assert _budget.REFERENCE_DOCUMENTS == 800
    assert _budget.LENGTH_PERCENTILE == 95

"""SetFitEmbedder's fine-tuning budget: how many pairs, and how many word pieces per document.

``n_pairs="auto"`` and ``train_max_length="auto"`` fit the budget to the device and the texts.
A fine-tuning step costs about what its word pieces cost (forward and backward through the
encoder), so on the CPU the pairs are those a fixed number of training word pieces pays for, and
long documents get fewer pairs than tweets. The budget is decided from the texts and the
device type only, never from a timing, so a seed gives the same weights on any CPU; a bound in
seconds is ``max_time``'s job (:class:`~skembed.text.transformer._finetune.StepPlan`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

#: the pair budget of a fine-tuning off the CPU, and the most "auto" gives on it
FULL_PAIRS = 3200

#: word pieces (special tokens included) a CPU fine-tuning on :data:`REFERENCE_DOCUMENTS`
#: documents runs through forward and backward passes with ``n_pairs="auto"``: 375 pairs of
#: documents of 120 word pieces twice, which fits 3 minutes on 2 cores
CPU_WORD_PIECES = 180_000

#: the training set size :data:`CPU_WORD_PIECES` is set for; the budget grows with the square
#: root of the size, so 4 times the documents get twice the word pieces (3,200 tweets of 30
#: word pieces: 3,000 pairs), a compromise between a fixed time and SetFit's pairs per document
REFERENCE_DOCUMENTS = 800

#: the fewest pairs "auto" gives on the CPU, however long the documents: 8 steps of 32
MIN_AUTO_PAIRS = 256

#: the percentile of the training documents' lengths that ``train_max_length="auto"`` keeps
LENGTH_PERCENTILE = 95


class TrainingBudget(NamedTuple):
    """What one fine-tuning runs: ``n_pairs`` pairs per epoch, documents cut to ``max_length``."""

    n_pairs: int
    max_length: int
    reason: str


def resolve_budget(n_pairs, train_max_length, lengths, *, epochs, max_length, on_cpu):
    """The :class:`TrainingBudget` of ``n_pairs`` and ``train_max_length`` for these documents.

    Parameters
    ----------
    n_pairs : int or "auto"
        ``SetFitEmbedder.n_pairs``. ``"auto"``: :data:`FULL_PAIRS` off the CPU; on the CPU the
        pairs whose ``2 * epochs`` passes over two documents each cost
        ``CPU_WORD_PIECES * sqrt(n_documents / REFERENCE_DOCUMENTS)`` word pieces at the
        documents' mean training length, between :data:`MIN_AUTO_PAIRS` and
        :data:`FULL_PAIRS`.
    train_max_length : int, "auto" or None
        ``SetFitEmbedder.train_max_length``, in word pieces with the special tokens. ``None``:
        ``max_length``. ``"auto"``: ``max_length`` off the CPU; on the CPU the
        :data:`LENGTH_PERCENTILE`-th percentile of ``lengths`` (rounded up), at most
        ``max_length``.
    lengths : numpy.ndarray of shape (n_documents,), int
        Word pieces of each training document, special tokens and prompt included, uncut.
    epochs : int
        Passes over the pairs.
    max_length : int
        The encoder's window (``max_length_``): the most a training document may keep.
    on_cpu : bool
        Whether the fine-tuning runs on the CPU.

    Returns
    -------
    TrainingBudget
        ``n_pairs`` and ``max_length`` (ints), and ``reason``: one sentence saying what decided
        them, for the fit log.

    Raises
    ------
    ValueError
        ``train_max_length`` above ``max_length``: the encoder would not see the extra word
        pieces at ``transform``.
    """
    cut = _training_length(train_max_length, lengths, max_length, on_cpu)
    if n_pairs != "auto":
        return TrainingBudget(int(n_pairs), cut, f"n_pairs={n_pairs}")
    if not on_cpu:
        return TrainingBudget(FULL_PAIRS, cut, f"n_pairs='auto' off the CPU: {FULL_PAIRS}")
    mean = float(np.minimum(lengths, cut).mean())
    word_pieces = CPU_WORD_PIECES * math.sqrt(len(lengths) / REFERENCE_DOCUMENTS)
    fit = math.floor(word_pieces / (2 * epochs * mean))
    pairs = min(FULL_PAIRS, max(MIN_AUTO_PAIRS, fit))
    reason = (
        f"n_pairs='auto' on the CPU: {word_pieces:,.0f} training word pieces for "
        f"{len(lengths)} documents, at {mean:.0f} per document and {epochs} epoch(s)"
    )
    return TrainingBudget(pairs, cut, reason)


def _training_length(train_max_length, lengths, max_length, on_cpu):
    if train_max_length is None or (train_max_length == "auto" and not on_cpu):
        return int(max_length)
    if train_max_length == "auto":
        quantile = math.ceil(float(np.percentile(lengths, LENGTH_PERCENTILE)))
        return int(min(max_length, quantile))
    if train_max_length > max_length:
        raise ValueError(
            f"train_max_length={train_max_length} exceeds the encoder's window of {max_length} "
            "word pieces (max_length_): transform would never see the extra word pieces. Use "
            f"train_max_length<={max_length}, or raise max_length."
        )
    return int(train_max_length)

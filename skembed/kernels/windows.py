"""The torch engine's training examples, drawn with word2vec's dynamic window (numba only).

:func:`skipgram_pairs` and :func:`cbow_windows` turn a chunk of vocabulary ids into the
(input, target) pairs and context windows that ``engine="torch"`` trains on, with the same LCG,
window draw and centre walk as the compiled kernels (:mod:`skembed.kernels._core`), so the
torch engine sees the examples the numba engine would (Mikolov et al. 2013, word2vec.c).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._core import _S16, _ZERO, _lcg, _seed_state

__all__ = ["cbow_windows", "skipgram_pairs"]


@njit(cache=True, nogil=True)
def skipgram_pairs(ids, offsets, window, seed):
    """(input, target) pairs of skip-gram with word2vec's dynamic window (torch engine).

    Parameters
    ----------
    ids : numpy.ndarray of shape (n_tokens,), int32
    offsets : numpy.ndarray of shape (n_docs + 1,), int64
    window : int
    seed : int

    Returns
    -------
    inputs : numpy.ndarray of shape (n_pairs,), int32
        Context words (their input vectors predict the target), as word2vec.c.
    targets : numpy.ndarray of shape (n_pairs,), int32
        Centre words.
    """
    # first pass: count the pairs (same draws), so memory is exact whatever ``window`` is
    state = _seed_state(seed, _ZERO)
    n_pairs = 0
    for d in range(offsets.size - 1):
        s = offsets[d]
        e = offsets[d + 1]
        for p in range(s, e):
            state = _lcg(state)
            b = np.int64((state >> _S16) % np.uint64(window))
            n_pairs += max(0, min(e, p + window + 1 - b) - max(s, p - window + b) - 1)
    inputs = np.empty(n_pairs, dtype=np.int32)
    targets = np.empty(n_pairs, dtype=np.int32)
    state = _seed_state(seed, _ZERO)
    k = 0
    for d in range(offsets.size - 1):
        s = offsets[d]
        e = offsets[d + 1]
        for p in range(s, e):
            state = _lcg(state)
            b = np.int64((state >> _S16) % np.uint64(window))
            for c in range(max(s, p - window + b), min(e, p + window + 1 - b)):
                if c != p:
                    inputs[k] = ids[c]
                    targets[k] = ids[p]
                    k += 1
    return inputs, targets


@njit(cache=True, nogil=True)
def cbow_windows(ids, offsets, window, seed):
    """Context windows of CBOW with word2vec's dynamic window (torch engine).

    Returns
    -------
    contexts : numpy.ndarray of shape (n_examples, width), int32
        Context word ids, padded with ``-1``; ``width`` is ``2 * window`` or
        the longest document minus one, whichever is smaller (at least 1).
    targets : numpy.ndarray of shape (n_examples,), int32
        Centre words (centres without any context are skipped).
    """
    n = ids.size
    longest = 0
    for d in range(offsets.size - 1):
        longest = max(longest, offsets[d + 1] - offsets[d])
    width = max(1, min(2 * np.int64(window), longest - 1))
    contexts = np.full((n, width), -1, dtype=np.int32)
    targets = np.empty(n, dtype=np.int32)
    state = _seed_state(seed, _ZERO)
    k = 0
    for d in range(offsets.size - 1):
        s = offsets[d]
        e = offsets[d + 1]
        for p in range(s, e):
            state = _lcg(state)
            b = np.int64((state >> _S16) % np.uint64(window))
            j = 0
            for c in range(max(s, p - window + b), min(e, p + window + 1 - b)):
                if c != p:
                    contexts[k, j] = ids[c]
                    j += 1
            if j > 0:
                targets[k] = ids[p]
                k += 1
    return contexts[:k].copy(), targets[:k].copy()

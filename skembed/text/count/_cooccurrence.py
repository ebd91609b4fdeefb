"""Sparse word–context co-occurrence counting, shared by PPMIEmbedder and GloVeTransformer.

Counting is vectorised and memory-bounded. The corpus (a flat array of word
ids with document offsets) is cut into chunks of ``chunk_tokens`` tokens. For
each chunk and each distance ``d`` in ``1..window`` the pairs ``(ids[t],
ids[t + d])`` inside one document are encoded as one ``int64`` key per pair
and distance, the keys are sorted, and runs of equal keys are reduced to
``(pair, weighted count)``. Each chunk's sorted, reduced result is merged into
the running total with a binary search and an insertion, so peak memory is
governed by the number of distinct pairs plus one chunk, not by the corpus
length. With ``symmetric=True`` only the canonical pair ``(min, max)`` is
counted (halving the distinct pairs held) and the matrix is mirrored at the
end.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._analyzer import effective_window

WEIGHTINGS = ("harmonic", "uniform", "linear")


def distance_weights(window, weighting="harmonic", reach=None):
    """Weight of a context at distance ``d = 1..window``.

    Parameters
    ----------
    window : int
        Maximum distance, at least 1.
    weighting : {"harmonic", "uniform", "linear"}, default="harmonic"
        ``"harmonic"``: ``1 / d``, as the GloVe tools (Pennington et al. 2014);
        ``"uniform"``: 1 for every position in the window;
        ``"linear"``: ``(window - d + 1) / window``, the expected weight of
        word2vec's dynamic window (a window size drawn uniformly in
        ``1..window``), as in Levy, Goldberg & Dagan (2015).
    reach : int or None, default=None
        Only the first ``min(window, reach)`` distances (a window longer than
        every document is clipped to it without changing any weight).

    Returns
    -------
    weights : numpy.ndarray of shape (min(window, reach),), dtype float64
        ``weights[d - 1]`` is the weight at distance ``d``.

    Raises
    ------
    ValueError
        If ``weighting`` is not one of the options.
    """
    d = np.arange(1, min(window, window if reach is None else reach) + 1, dtype=np.float64)
    if weighting == "harmonic":
        return 1.0 / d
    if weighting == "uniform":
        return np.ones_like(d)
    if weighting == "linear":
        return (window - d + 1.0) / window
    raise ValueError(f"weighting={weighting!r} is not one of {WEIGHTINGS}.")


def _chunk_pairs(ids, rem, start, stop, n_words, window, weights, symmetric, keys_buf):
    """Reduced ``(pair_key, weighted_count)`` of the pairs whose left token is in a chunk.

    ``pair_key = row * n_words + col``; sorted, unique.
    """
    n_tokens = ids.shape[0]
    n = np.int64(n_words)
    fill = 0
    for d in range(1, window + 1):
        hi = min(stop, n_tokens - d)
        if hi <= start:
            break
        ok = rem[: hi - start] >= d  # right token in the same document
        a = ids[start:hi][ok]
        if a.size == 0:
            continue
        b = ids[start + d : hi + d][ok]
        if symmetric:
            lo = np.minimum(a, b)
            b = np.maximum(a, b)
            a = lo
        m = a.size
        out = keys_buf[fill : fill + m]
        np.multiply(a, n, out=out)
        out += b
        if window > 1:
            out *= window
            out += d - 1
        fill += m
    if fill == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    keys = keys_buf[:fill]
    keys.sort()
    # runs of equal (pair, distance) keys
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    run = np.diff(np.append(starts, fill)).astype(np.float64)
    ukeys = keys[starts]
    if window > 1:
        run *= weights[ukeys % window]
        ukeys //= window
        # runs of equal pairs (different distances are adjacent after the sort)
        pstarts = np.flatnonzero(np.concatenate(([True], ukeys[1:] != ukeys[:-1])))
        return ukeys[pstarts], np.add.reduceat(run, pstarts)
    return ukeys, run * weights[0]


def _merge(keys, vals, new_keys, new_vals):
    """Merge sorted unique ``(new_keys, new_vals)`` into sorted unique ``(keys, vals)``."""
    if keys.size == 0:
        return new_keys, new_vals
    pos = np.searchsorted(keys, new_keys)
    found = pos < keys.size
    found[found] = keys[pos[found]] == new_keys[found]
    if found.any():
        # positions are unique (new_keys are unique), so fancy += is exact
        vals[pos[found]] += new_vals[found]
    new = ~found
    if new.any():
        keys = np.insert(keys, pos[new], new_keys[new])
        vals = np.insert(vals, pos[new], new_vals[new])
    return keys, vals


def cooccurrence_matrix(
    ids,
    offsets,
    n_words,
    window,
    weighting="harmonic",
    symmetric=True,
    chunk_tokens=1_000_000,
    dtype=np.float64,
):
    """Count weighted co-occurrences of word ids within a window.

    Parameters
    ----------
    ids : numpy.ndarray of shape (n_tokens,), int
        Word ids of the corpus (unknown words already removed, so they do not
        take window positions, as in word2vec and the GloVe tools).
    offsets : numpy.ndarray of shape (n_documents + 1,), int
        Document boundaries in ``ids``; windows never cross them.
    n_words : int
        Vocabulary size; ids must lie in ``[0, n_words)``.
    window : int
        Maximum distance between a word and its context, at least 1.
    weighting : {"harmonic", "uniform", "linear"}, default="harmonic"
        See :func:`distance_weights`.
    symmetric : bool, default=True
        Count contexts on both sides (``X[i, j] == X[j, i]``); otherwise only
        the right context (``X[i, j]``: ``j`` follows ``i``). A word next to
        itself counts on both sides, so ``X[i, i]`` is twice the weighted
        count of ``(i, i)`` pairs when symmetric.
    chunk_tokens : int, default=1_000_000
        Tokens per counting chunk; the temporary memory of a chunk is about
        ``chunk_tokens * window * 24`` bytes (keys, sort and run flags).
    dtype : numpy dtype, default=numpy.float64
        Dtype of the counts (accumulation is always in float64).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_words, n_words)
        ``X[i, j]`` is the weighted number of times ``j`` occurs within
        ``window`` positions of ``i``. Sorted indices, no explicit zeros,
        ``int32`` indices when they fit.

    Raises
    ------
    ValueError
        If ``window < 1``, ids fall outside ``[0, n_words)``, the offsets do
        not describe ``ids``, or ``n_words**2 * window`` overflows int64.

    Notes
    -----
    Peak memory is about ``16 * 2 * n_distinct_pairs`` bytes (sorted keys and
    float64 counts, doubled while a chunk is inserted) plus one chunk, so it
    grows with the vocabulary's distinct pairs, not with the corpus length.
    The counts equal those of the GloVe ``cooccur`` tool (Pennington, Socher
    & Manning 2014) for ``weighting="harmonic"``, ``symmetric=True``.

    Examples
    --------
    >>> import numpy as np
    >>> X = cooccurrence_matrix(np.array([0, 1, 2]), np.array([0, 3]), 3, window=2)
    >>> X.toarray()
    array([[0. , 1. , 0.5],
           [1. , 0. , 1. ],
           [0.5, 1. , 0. ]])
    """
    plan = _count_plan(ids, offsets, n_words, window, weighting)
    n_words = plan.n_words
    keys, vals = _count_pairs(plan, symmetric, chunk_tokens)
    rows = keys // n_words
    index_dtype = np.int32 if n_words < 2**31 - 1 and keys.size < 2**31 - 1 else np.int64
    cols = (keys - rows * n_words).astype(index_dtype)
    del keys
    indptr = np.zeros(n_words + 1, dtype=index_dtype)
    np.cumsum(np.bincount(rows, minlength=n_words), out=indptr[1:])
    del rows
    X = sp.csr_matrix((vals.astype(dtype, copy=False), cols, indptr), shape=(n_words, n_words))
    X.has_sorted_indices = True
    if symmetric:
        X = (X + X.T.tocsr()).tocsr()
        X.sort_indices()
    X.eliminate_zeros()
    return X


class _CountPlan(NamedTuple):
    """A checked corpus and what counting it needs."""

    #: word ids, int32 where the vocabulary allows
    ids: np.ndarray
    #: document boundaries in ``ids``, int64
    offsets: np.ndarray
    n_words: int
    #: the distances counted: the window clipped to the longest document
    window: int
    #: ``weights[d - 1]``, the weight at distance ``d``
    weights: np.ndarray


class _Counts(NamedTuple):
    """Sorted unique pair keys ``row * n_words + col`` and their float64 weighted counts."""

    keys: np.ndarray
    vals: np.ndarray


def _count_plan(ids, offsets, n_words, window, weighting):
    """Check the arguments of :func:`cooccurrence_matrix` and clip the window to the corpus."""
    if int(window) < 1:
        raise ValueError(f"window must be at least 1, got {window}.")
    window = int(window)
    n_words = int(n_words)
    if n_words < 1:
        raise ValueError(f"n_words must be at least 1, got {n_words}.")
    ids = _compact_ids(np.asarray(ids), n_words)
    offsets = np.asarray(offsets, dtype=np.int64)
    n_tokens = ids.shape[0]
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or offsets[-1] != n_tokens:
        raise ValueError("offsets must start at 0 and end at len(ids).")
    if np.any(np.diff(offsets) < 0):
        raise ValueError("offsets must be non-decreasing.")
    if n_tokens and (ids.min() < 0 or ids.max() >= n_words):
        raise ValueError(f"word ids must lie in [0, {n_words}).")
    # no pair lies further apart than the longest document: window=10**9 asked for 969 GiB
    longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
    reach = effective_window(window, longest)
    weights = distance_weights(window, weighting, reach=reach)
    if float(n_words) ** 2 * reach >= 2.0**63:
        raise ValueError(f"n_words={n_words} is too large for int64 pair keys.")
    return _CountPlan(ids, offsets, n_words, reach, weights)


def _compact_ids(ids, n_words):
    if ids.dtype.kind not in "iu":
        return ids.astype(np.int64)  # e.g. an empty float array
    if ids.dtype.itemsize > 4 and n_words <= np.iinfo(np.int32).max:
        return ids.astype(np.int32)  # halves the corpus copy; keys are formed in int64
    return ids


def _count_pairs(plan, symmetric, chunk_tokens):
    """The corpus's pair counts, summed chunk by chunk into one sorted total."""
    n_tokens = plan.ids.shape[0]
    chunk_tokens = max(int(chunk_tokens), 1)
    keys = np.zeros(0, np.int64)
    vals = np.zeros(0, np.float64)
    keys_buf = np.empty(min(chunk_tokens, max(n_tokens, 1)) * plan.window, dtype=np.int64)
    for start in range(0, n_tokens, chunk_tokens):
        stop = min(start + chunk_tokens, n_tokens)
        rem = _left_in_document(plan.offsets, start, stop)
        ck, cv = _chunk_pairs(
            plan.ids, rem, start, stop, plan.n_words, plan.window, plan.weights, symmetric, keys_buf
        )
        keys, vals = _merge(keys, vals, ck, cv)
        del ck, cv, rem
    return _Counts(keys, vals)


def _left_in_document(offsets, start, stop):
    """Tokens left in the same document after each position of ``start:stop``."""
    pos = np.arange(start, stop, dtype=np.int64)
    doc_end = offsets[np.searchsorted(offsets, pos, side="right")]
    return doc_end - pos - 1

"""Sparse word–context co-occurrence counting, shared by PPMIEmbedder and GloVeTransformer.

Counting is vectorised: for each distance ``d`` in ``1..window`` the pairs
``(ids[t], ids[t + d])`` inside one document are formed with array slicing,
summed per chunk of the corpus into a sparse matrix (scipy sums duplicate
entries) and the chunk matrices are added. Peak memory is governed by the
number of distinct pairs plus one chunk, not by the corpus length.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

WEIGHTINGS = ("harmonic", "uniform", "linear")


def distance_weights(window, weighting="harmonic"):
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

    Returns
    -------
    weights : numpy.ndarray of shape (window,), dtype float64
        ``weights[d - 1]`` is the weight at distance ``d``.
    """
    d = np.arange(1, window + 1, dtype=np.float64)
    if weighting == "harmonic":
        return 1.0 / d
    if weighting == "uniform":
        return np.ones_like(d)
    if weighting == "linear":
        return (window - d + 1.0) / window
    raise ValueError(f"weighting={weighting!r} is not one of {WEIGHTINGS}.")


def cooccurrence_matrix(
    ids,
    offsets,
    n_words,
    window,
    weighting="harmonic",
    symmetric=True,
    chunk_tokens=2_000_000,
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
        the right context (``X[i, j]``: ``j`` follows ``i``).
    chunk_tokens : int, default=2_000_000
        Tokens per counting chunk; bounds the temporary memory to roughly
        ``chunk_tokens * window * 16`` bytes.
    dtype : numpy dtype, default=numpy.float64
        Dtype of the counts.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_words, n_words)
        ``X[i, j]`` is the weighted number of times ``j`` occurs within
        ``window`` positions of ``i``. Sorted indices, no explicit zeros.

    Raises
    ------
    ValueError
        If ``window < 1`` or ids fall outside ``[0, n_words)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = cooccurrence_matrix(np.array([0, 1, 2]), np.array([0, 3]), 3, window=2)
    >>> X.toarray()
    array([[0. , 1. , 0.5],
           [1. , 0. , 1. ],
           [0.5, 1. , 0. ]])
    """
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}.")
    ids = np.asarray(ids, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= n_words):
        raise ValueError(f"word ids must lie in [0, {n_words}).")
    weights = distance_weights(window, weighting)
    n_tokens = ids.shape[0]
    # document index of each token, to keep windows inside documents
    doc_of = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    total = sp.csr_matrix((n_words, n_words), dtype=dtype)
    chunk_tokens = max(int(chunk_tokens), 1)
    for start in range(0, n_tokens, chunk_tokens):
        stop = min(start + chunk_tokens, n_tokens)
        rows, cols, vals = [], [], []
        for d in range(1, window + 1):
            # left positions t in [start, stop), right positions t + d < n_tokens
            hi = min(stop, n_tokens - d)
            if hi <= start:
                continue
            left = slice(start, hi)
            right = slice(start + d, hi + d)
            same = doc_of[left] == doc_of[right]
            if not same.any():
                continue
            rows.append(ids[left][same])
            cols.append(ids[right][same])
            vals.append(np.full(int(same.sum()), weights[d - 1], dtype=dtype))
        if not rows:
            continue
        r = np.concatenate(rows)
        c = np.concatenate(cols)
        v = np.concatenate(vals)
        del rows, cols, vals
        chunk = sp.coo_matrix((v, (r, c)), shape=(n_words, n_words)).tocsr()
        del r, c, v
        total = total + chunk
    if symmetric:
        total = total + total.T.tocsr()
    total = total.tocsr()
    total.sum_duplicates()
    total.eliminate_zeros()
    total.sort_indices()
    return total

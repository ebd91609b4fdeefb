"""Training preparation shared by the word2vec-family kernels (Word2Vec, FastText).

Plain numpy, no numba, no torch, no scikit-learn. Everything here is computed
once per ``fit`` (vocabulary-sized arrays) and handed to the compiled kernels
of :mod:`skembed.kernels.word2vec`:

- :func:`noise_distribution`, :func:`alias_table`, :func:`cumulative_table`:
  the negative-sampling distribution ``count(w)**ns_exponent`` (Mikolov et al.
  2013) as an O(1) Walker alias table (what the kernels sample from) and as
  gensim's cumulative table (reference);
- :func:`keep_probabilities`: frequent-word subsampling with the formula of the
  original word2vec tool;
- :func:`huffman_tree`: Huffman codes and paths for hierarchical softmax, built
  with word2vec.c's two-queue algorithm;
- :func:`sigmoid_tables`: word2vec.c's precomputed sigmoid table and the log
  sigmoid table used for the loss;
- :func:`lcg_next`, :data:`LCG_MULTIPLIER`, :data:`LCG_INCREMENT`: the linear
  congruential generator of word2vec.c (the kernels inline the same recurrence).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "EXP_TABLE_SIZE",
    "MAX_EXP",
    "LCG_MULTIPLIER",
    "LCG_INCREMENT",
    "noise_distribution",
    "alias_table",
    "cumulative_table",
    "keep_probabilities",
    "huffman_tree",
    "sigmoid_tables",
    "lcg_next",
]

#: number of entries of the sigmoid table (word2vec.c ``EXP_TABLE_SIZE``)
EXP_TABLE_SIZE = 1000
#: scores outside ``[-MAX_EXP, MAX_EXP]`` are clipped (word2vec.c ``MAX_EXP``)
MAX_EXP = 6.0
#: word2vec.c's LCG: ``next = next * 25214903917 + 11 (mod 2**64)``
LCG_MULTIPLIER = 25214903917
LCG_INCREMENT = 11


def noise_distribution(counts, ns_exponent=0.75):
    """Negative-sampling (noise) distribution over the vocabulary.

    Parameters
    ----------
    counts : array-like of shape (n_words,)
        Corpus count of each word (non-negative).
    ns_exponent : float, default=0.75
        ``P(w) ∝ count(w) ** ns_exponent``; ``1`` samples by frequency, ``0``
        uniformly, negative values favour rare words.

    Returns
    -------
    probabilities : numpy.ndarray of shape (n_words,), float64
        Sums to 1.

    Raises
    ------
    ValueError
        If ``counts`` is empty, has negative values or sums to zero.

    References
    ----------
    Mikolov, Sutskever, Chen, Corrado & Dean (2013), "Distributed
    Representations of Words and Phrases and their Compositionality", NIPS.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 1 or counts.size == 0:
        raise ValueError("counts must be a non-empty 1-D array of word counts.")
    if (counts < 0).any():
        raise ValueError("counts must be non-negative.")
    if ns_exponent == 0:
        weights = np.ones_like(counts)
    else:
        weights = np.where(counts > 0, counts, 0.0) ** ns_exponent
        weights[counts == 0] = 0.0
    total = weights.sum()
    if not total > 0:
        raise ValueError("counts sums to zero: no word can be sampled.")
    return weights / total


def alias_table(probabilities):
    """Walker's alias table for O(1) sampling from a discrete distribution.

    Sampling: draw ``i`` uniformly in ``[0, n)`` and ``u`` uniformly in
    ``[0, 1)``; the sample is ``i`` if ``u < prob[i]`` else ``alias[i]``.

    Parameters
    ----------
    probabilities : array-like of shape (n,)
        Non-negative, summing to 1 (renormalised here).

    Returns
    -------
    prob : numpy.ndarray of shape (n,), float32
        Acceptance probability of each column.
    alias : numpy.ndarray of shape (n,), int32
        Alternative outcome of each column.

    References
    ----------
    Walker (1977), "An Efficient Method for Generating Discrete Random
    Variables with General Distributions", ACM TOMS 3(3); Vose (1991).
    """
    p = np.asarray(probabilities, dtype=np.float64)
    n = p.size
    scaled = p * (n / p.sum())
    prob = np.ones(n, dtype=np.float64)
    alias = np.arange(n, dtype=np.int64)
    small = [i for i in np.flatnonzero(scaled < 1.0)]
    large = [i for i in np.flatnonzero(scaled >= 1.0)]
    while small and large:
        s = small.pop()
        g = large.pop()
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    # leftovers are 1 up to rounding
    return prob.astype(np.float32), alias.astype(np.int32)


def cumulative_table(counts, ns_exponent=0.75, domain=2**31 - 1):
    """gensim's cumulative noise table (``Word2Vec.make_cum_table``).

    Sampling draws ``r`` uniformly in ``[0, domain)`` and takes
    ``searchsorted(table, r, side="right")``. Provided for reference and
    tests; the kernels sample from :func:`alias_table`.

    Parameters
    ----------
    counts : array-like of shape (n_words,)
    ns_exponent : float, default=0.75
    domain : int, default=2**31 - 1

    Returns
    -------
    table : numpy.ndarray of shape (n_words,), uint32
        Non-decreasing, last entry ``domain``.
    """
    p = noise_distribution(counts, ns_exponent)
    table = np.round(np.cumsum(p) * domain)
    table[-1] = domain
    return table.astype(np.uint32)


def keep_probabilities(counts, sample=1e-3, total_words=None):
    """Probability of keeping each occurrence of a word under frequent-word subsampling.

    The formula of the original word2vec tool (also used by gensim), with
    ``t = sample * total_words`` and ``c = count(w)``::

        keep(w) = min(1, (sqrt(c / t) + 1) * t / c)

    Parameters
    ----------
    counts : array-like of shape (n_words,)
        Corpus count of each vocabulary word.
    sample : float, default=1e-3
        Threshold ``t`` as a fraction of the corpus; ``0`` disables
        subsampling (all probabilities 1).
    total_words : int or None, default=None
        Corpus size the threshold refers to; ``counts.sum()`` by default
        (word2vec.c's ``train_words``, the retained words).

    Returns
    -------
    keep : numpy.ndarray of shape (n_words,), float32
        In ``(0, 1]``.

    References
    ----------
    Mikolov et al. (2013), NIPS; word2vec.c (``sample`` option).
    """
    c = np.asarray(counts, dtype=np.float64)
    if sample <= 0 or c.size == 0:
        return np.ones(c.size, dtype=np.float32)
    total = float(c.sum() if total_words is None else total_words)
    t = sample * total
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = (np.sqrt(c / t) + 1.0) * t / c
    keep = np.where(c > 0, np.minimum(keep, 1.0), 1.0)
    return keep.astype(np.float32)


def huffman_tree(counts):
    """Huffman codes and inner-node paths for hierarchical softmax.

    word2vec.c's ``CreateBinaryTree``: the two lowest-count nodes are merged
    repeatedly (two-queue method, O(n) on counts sorted by decreasing
    frequency); the ``n - 1`` inner nodes are numbered ``0 .. n - 2`` with the
    root ``n - 2``. The path of a word lists the inner nodes from the root
    down; its code lists the branch taken at each of them (1 for the node of
    the larger count, as in word2vec.c).

    Parameters
    ----------
    counts : array-like of shape (n_words,)
        Word counts (any order; they are sorted internally).

    Returns
    -------
    codes : numpy.ndarray of shape (n_words, max_code_length), uint8
        Branch bits, padded with 0.
    points : numpy.ndarray of shape (n_words, max_code_length), int32
        Inner-node indices (rows of the ``syn1`` matrix), padded with 0.
    code_lengths : numpy.ndarray of shape (n_words,), int32
        Number of valid entries of each row; 0 for a vocabulary of one word.

    References
    ----------
    Morin & Bengio (2005), "Hierarchical Probabilistic Neural Network Language
    Model", AISTATS; Mikolov et al. (2013), word2vec.c.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.size
    if n < 2:
        return (np.zeros((n, 1), np.uint8), np.zeros((n, 1), np.int32), np.zeros(n, np.int32))
    order = np.argsort(-counts, kind="stable")  # decreasing, as word2vec.c's sorted vocab
    binary = np.zeros(2 * n, dtype=np.uint8)
    parent = np.zeros(2 * n, dtype=np.int64)
    pos1, pos2 = n - 1, n
    # Python ints: counts near 2**62 sum past int64, and the unmerged slots' sentinel must
    # exceed every sum (a fixed int64 sentinel below the counts ran pos2 off the end)
    cnt = counts[order].tolist()
    cnt += [2 * sum(cnt) + 1] * n
    for a in range(n - 1):
        if pos1 >= 0 and cnt[pos1] < cnt[pos2]:
            min1 = pos1
            pos1 -= 1
        else:
            min1 = pos2
            pos2 += 1
        if pos1 >= 0 and cnt[pos1] < cnt[pos2]:
            min2 = pos1
            pos1 -= 1
        else:
            min2 = pos2
            pos2 += 1
        cnt[n + a] = cnt[min1] + cnt[min2]
        parent[min1] = n + a
        parent[min2] = n + a
        binary[min2] = 1
    root = 2 * n - 2
    parent_l = parent.tolist()
    binary_l = binary.tolist()
    paths = []
    max_len = 1
    for b in range(n):
        code, point = [], []
        node = b
        while node != root:
            code.append(binary_l[node])
            point.append(parent_l[node] - n)
            node = parent_l[node]
        code.reverse()
        point.reverse()
        paths.append((code, point))
        max_len = max(max_len, len(code))
    codes = np.zeros((n, max_len), dtype=np.uint8)
    points = np.zeros((n, max_len), dtype=np.int32)
    lengths = np.zeros(n, dtype=np.int32)
    for b, (code, point) in enumerate(paths):
        w = order[b]
        lengths[w] = len(code)
        codes[w, : len(code)] = code
        points[w, : len(point)] = point
    return codes, points, lengths


def sigmoid_tables(size=EXP_TABLE_SIZE, max_exp=MAX_EXP):
    """word2vec.c's precomputed sigmoid table and the matching log-sigmoid table.

    Entry ``i`` is ``sigmoid(x_i)`` with ``x_i = (2 i / size - 1) * max_exp``;
    a score ``f`` in ``(-max_exp, max_exp)`` is looked up at
    ``i = int((f + max_exp) * size / (2 * max_exp))``.

    Returns
    -------
    sigmoid : numpy.ndarray of shape (size,), float32
    log_sigmoid : numpy.ndarray of shape (size,), float32
        ``log(sigmoid)`` of the same points (for the training loss).
    """
    x = (np.arange(size, dtype=np.float64) / size * 2.0 - 1.0) * max_exp
    e = np.exp(x)
    sig = e / (e + 1.0)
    return sig.astype(np.float32), np.log(sig).astype(np.float32)


def lcg_next(state):
    """One step of word2vec.c's linear congruential generator (Python ints).

    Parameters
    ----------
    state : int
        Current 64-bit state.

    Returns
    -------
    state : int
        ``(state * 25214903917 + 11) mod 2**64``. The kernels use the bits
        ``state >> 16`` (the low bits of an LCG are poor).
    """
    return (int(state) * LCG_MULTIPLIER + LCG_INCREMENT) % (1 << 64)

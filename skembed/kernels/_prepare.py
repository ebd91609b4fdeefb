"""Chunk preparation of the word2vec family: vocabulary remap and subsampling, on threads.

:func:`prepare_chunk` maps a chunk's raw token ids to vocabulary ids, drops unknown tokens and
subsamples frequent words with word2vec.c's LCG (one draw per in-vocabulary token whose keep
probability is below 1). It runs before every chunk is trained, on the CPU, whatever the
engine, so on one thread it is the serial part of a fit (``docs/benchmarks/word2vec.md``, "A model of
thread scaling"; on a GPU it is the host's share of every epoch). Its loop is branch-free:
whether a token is kept is a coin toss, which a branch mispredicts half the time
(``benchmarks/bench_prepare.py`` times it).

With ``n_threads > 1`` the chunk's documents are split into contiguous pieces, one per
thread. Piece 0 starts from the seed's LCG state at once; the thread of piece ``j > 0`` first
counts the draws of piece ``j - 1`` (:func:`_count_draws`), waits until those counts are all
in, and jumps the LCG ahead by the draws before its piece (:func:`lcg_jump`, Brown 1994) to
the state the sequential loop has there; then each prepares its piece
(:func:`_prepare_into`). So the kept tokens are the same, bit for bit, on any number of
threads.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from ._core import _INC, _MUL, _ZERO, _lcg, _seed_state, _uniform
from ._sync import on_threads

#: fewest raw tokens per thread for :func:`prepare_chunk` to split a chunk: starting a thread
#: costs about 0.1 ms, a piece of this size about 0.25 ms (4 ns per token, 2-core Xeon)
MIN_PIECE_TOKENS = 65_536

_MASK64 = (1 << 64) - 1
#: time to count a token's draw (:func:`_count_draws`) over the time to prepare it
#: (:func:`_prepare_into`), 0.9 ms over 2.9 ms on BBC News (2-core Xeon): the first piece, whose
#: thread counts nothing, is longer by this much
_COUNT_COST = 0.3


def lcg_jump(state, n):
    """The LCG state after ``n`` steps of ``x -> x * 25214903917 + 11 (mod 2**64)``.

    The ``n``-fold composition of an affine map is affine; it is built by repeated squaring
    in ``O(log n)`` steps (Brown, "Random number generation with arbitrary strides", 1994).

    Parameters
    ----------
    state : int
        Starting state, ``0 <= state < 2**64``.
    n : int
        Steps, ``>= 0``.

    Returns
    -------
    int
        The state after ``n`` steps.

    Examples
    --------
    >>> from skembed.kernels._prepare import lcg_jump
    >>> lcg_jump(1, 1) == 25214903917 + 11
    True
    >>> lcg_jump(lcg_jump(5, 3), 4) == lcg_jump(5, 7)
    True
    """
    mul, inc = int(_MUL), int(_INC)
    acc_mul, acc_inc = 1, 0
    n = int(n)
    while n > 0:
        if n & 1:
            acc_mul, acc_inc = (acc_mul * mul) & _MASK64, (acc_inc * mul + inc) & _MASK64
        mul, inc = (mul * mul) & _MASK64, (inc * (mul + 1)) & _MASK64
        n >>= 1
    return (acc_mul * int(state) + acc_inc) & _MASK64


def prepare_chunk(raw_ids, raw_offsets, remap, keep_prob, seed, n_threads=1):
    """Map raw ids to vocabulary ids, drop unknown tokens and subsample frequent words.

    Parameters
    ----------
    raw_ids : numpy.ndarray of shape (n_raw,), int32
        Token ids in the corpus' provisional numbering.
    raw_offsets : numpy.ndarray of shape (n_docs + 1,), int64
    remap : numpy.ndarray of shape (n_provisional,), int32
        Vocabulary id of each provisional id, ``-1`` for dropped words.
    keep_prob : numpy.ndarray of shape (n_words,), float32
        Keep probability of each vocabulary word (``sampling.keep_probabilities``).
    seed : int
        Seed of the LCG deciding which tokens are kept.
    n_threads : int, default=1
        Threads to use. The documents are split into up to ``n_threads`` contiguous pieces
        of at least :data:`MIN_PIECE_TOKENS` raw tokens; the result does not depend on it.

    Returns
    -------
    ids : numpy.ndarray of shape (n_kept,), int32
    offsets : numpy.ndarray of shape (n_docs + 1,), int64
    n_known : int
        Number of in-vocabulary tokens before subsampling.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed.kernels._prepare import prepare_chunk
    >>> raw = np.array([0, 1, 2, 3, 0, 2], np.int32)
    >>> remap = np.array([1, -1, 0, 2], np.int32)  # provisional id 1 is not in the vocabulary
    >>> ids, offsets, n_known = prepare_chunk(raw, np.array([0, 3, 6]), remap, np.ones(3, np.float32), 0)
    >>> ids.tolist(), offsets.tolist(), n_known
    ([1, 0, 2, 1, 0], [0, 2, 5], 5)
    """
    n_docs = raw_offsets.size - 1
    ids = np.empty(raw_ids.size, dtype=np.int32)
    offsets = np.zeros(raw_offsets.size, dtype=np.int64)
    start = int(_seed_state(np.int64(seed), _ZERO))
    n_pieces = int(min(max(int(n_threads), 1), raw_ids.size // MIN_PIECE_TOKENS, n_docs))
    if n_pieces < 2:
        bounds = np.array([0, n_docs], dtype=np.int64)
    else:  # contiguous runs of documents (a document stays whole), the first one longer
        share = np.concatenate(([1.0 + _COUNT_COST], np.ones(n_pieces - 1)))
        n_raw = raw_offsets[-1] - raw_offsets[0]
        targets = raw_offsets[0] + np.round(n_raw * np.cumsum(share)[:-1] / share.sum())
        cuts = np.searchsorted(raw_offsets, targets.astype(np.int64))  # then the nearer boundary
        cuts -= (targets - raw_offsets[cuts - 1]) < (
            raw_offsets[np.minimum(cuts, n_docs)] - targets
        )
        bounds = np.unique(np.concatenate(([0], cuts, [n_docs]))).astype(np.int64)
    n_pieces = bounds.size - 1
    kept = np.zeros(n_pieces, dtype=np.int64)
    known = np.zeros(n_pieces, dtype=np.int64)
    draws_in = np.zeros(n_pieces, dtype=np.int64)  # LCG draws of each piece but the last
    draws = None  # per provisional id: a draw (in the vocabulary, kept with probability < 1)
    if n_pieces > 1:
        draws = np.zeros(remap.size, dtype=np.bool_)
        if keep_prob.size:
            draws = (remap >= 0) & (keep_prob[np.maximum(remap, 0)] < 1.0)
    counted = threading.Barrier(n_pieces - 1) if n_pieces > 2 else None

    def piece(j):
        # piece 0 starts at the seed's state at once; thread j > 0 first counts the draws of
        # piece j - 1, waits until all pieces but the last are counted, then jumps ahead
        if j > 0:
            p0, p1 = raw_offsets[bounds[j - 1]], raw_offsets[bounds[j]]
            draws_in[j - 1] = _count_draws(raw_ids, draws, p0, p1)
            if counted is not None:
                counted.wait()
        d0, d1 = bounds[j], bounds[j + 1]
        state = np.uint64(lcg_jump(start, draws_in[:j].sum()))
        end, known[j] = _prepare_into(
            raw_ids, raw_offsets, remap, keep_prob, state, d0, d1, ids, offsets
        )
        kept[j] = end - raw_offsets[d0]

    on_threads(piece, n_pieces, counted.abort if counted is not None else None)
    # each piece wrote from its first raw position on: close the gaps, shift its offsets
    out = np.empty(int(kept.sum()), dtype=np.int32)
    base = 0
    for j in range(n_pieces):
        d0, d1, p0 = bounds[j], bounds[j + 1], raw_offsets[bounds[j]]
        out[base : base + kept[j]] = ids[p0 : p0 + kept[j]]
        offsets[d0 + 1 : d1 + 1] -= p0 - base
        base += kept[j]
    return out, offsets, int(known.sum())


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _count_draws(raw_ids, draws, p0, p1):
    """LCG draws :func:`_prepare_into` makes on raw tokens ``p0:p1`` (``draws``: bool per
    provisional id, in the vocabulary with a keep probability below 1)."""
    n = 0
    for p in range(p0, p1):
        n += draws[raw_ids[p]]
    return n


# allocated in Python: compiled, np.empty/np.zeros compiled numba's array constructors (0.2 s)
@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _prepare_into(raw_ids, raw_offsets, remap, keep_prob, state, d0, d1, ids, offsets):
    """:func:`prepare_chunk`'s loop over documents ``d0:d1`` from LCG ``state``: writes their
    kept ids from ``ids[raw_offsets[d0]]`` on and ``offsets[d0 + 1:d1 + 1]`` (positions in
    ``ids``); returns ``(end, n_known)``, ``end`` the position after the last kept id."""
    k = raw_offsets[d0]
    n_known = 0
    if keep_prob.shape[0] == 0:  # no vocabulary: every token is unknown
        for d in range(d0, d1):
            offsets[d + 1] = k
        return k, n_known
    # branch-free (the keep decisions of subsampling are a coin toss each, so branches on them
    # are mispredicted about half the time): every token is written at ``k``, which advances
    # only past a kept one, and the LCG steps only for a token with a keep probability below 1
    for d in range(d0, d1):
        for p in range(raw_offsets[d], raw_offsets[d + 1]):
            w = remap[raw_ids[p]]
            known = w >= 0
            kp = keep_prob[w if known else 0]
            step = _lcg(state)
            state = step if known & (kp < 1.0) else state
            keep = known & ((kp >= 1.0) | (kp >= _uniform(state)))
            ids[k] = w
            k += keep
            n_known += known
        offsets[d + 1] = k
    return k, n_known

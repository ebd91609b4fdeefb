"""Compiled CPU kernels of the word2vec family (skip-gram / CBOW, negative sampling / HS).

numba only (no scikit-learn, no torch). The estimators
(:class:`skembed.text.word2vec.Word2VecTransformer`, FastText) call them on
corpus *chunks*, so memory does not grow with the corpus:

1. :func:`prepare_chunk` maps a chunk's raw word ids to vocabulary ids, drops
   out-of-vocabulary tokens and applies frequent-word subsampling (decided
   once per token per epoch, before training, with the LCG);
2. :func:`train_chunk` trains on the kept tokens, one contiguous slice of
   documents per thread (``prange``), deterministically or lock-free.

Signature of :func:`train_chunk` (both estimators call it through
:class:`skembed.text._word2vec_training.NumbaEngine`)::

    stats = train_chunk(
        syn0,          # float32 (n_rows, dim)   input vectors, updated in place
        syn1neg,       # float32 (n_words, dim)  output vectors (negative sampling)
        syn1,          # float32 (n_words - 1, dim) inner-node vectors (HS)
        ids,           # int32   (n_tokens,)     vocabulary ids of the chunk (after subsampling)
        offsets,       # int64   (n_docs + 1,)   document d is ids[offsets[d]:offsets[d+1]]
        config,        # KernelConfig: the settings and vocabulary-sized tables of the fit
        alpha_start,   # float: learning rate at the chunk's first token
        alpha_end,     # float: learning rate at its last token (linear in between)
        seed,          # int: seed of the per-thread LCGs
        n_parts,       # int >= 1: contiguous slices trained in parallel (one per thread)
    )
    # stats: float64 (n_parts, 3): summed loss, number of examples, NaN flag (1.0 if a
    # non-finite score was met; the caller must stop and report it)

``config.sub_indptr``/``config.sub_indices``: empty (Word2Vec), the input
vector of word ``w`` is ``syn0[w]``; otherwise it is the mean of the rows
``syn0[sub_indices[sub_indptr[w]:sub_indptr[w + 1]]]`` and its gradient is
added in full to each of those rows, as Facebook fastText and gensim do for
unsupervised models.

Semantics follow word2vec.c: in skip-gram the input vector of each context
word predicts the centre word (with subword rows, FastText, the other way
round as in fastText and gensim: the centre word's bag predicts each context
word, :func:`train_part_bag` with shared negatives); in CBOW the mean of the
context input vectors predicts it and the error is added in full to every
context row. Windows
never cross document boundaries. The learning rate decays linearly over the
tokens of each thread's slice from ``alpha_start`` to ``alpha_end``.

Parallel schemes (``config.sync_tokens``):

- ``sync_tokens > 0`` (deterministic, the estimators' default): training runs
  in *phases*. In a phase each thread trains up to ``sync_tokens`` centre
  tokens of its slice against the shared matrices as they were at the start
  of the phase plus its own updates: the first time it touches a row it
  copies it into a private buffer, and it reads and writes only that copy.
  At the end of the phase (the end of the phase's one parallel region) the
  calling thread visits the rows touched in the phase, part by part: a row
  copied by one part only is copied back, a row copied by several parts gets
  each part's delta (copy minus shared row) added in part order
  (:func:`_merge_phase`). No thread ever reads a row another thread is
  writing, so the result depends on the inputs, ``seed`` and ``n_parts``
  only, never on thread timing. A phase ends early when a buffer is full
  (:data:`BUFFER_FLOATS` per matrix and thread), so memory stays bounded.
  Other threads' updates are seen one phase late (like synchronous
  data-parallel SGD with per-thread local steps).
- ``sync_tokens == 0`` (lock-free): threads update the shared rows directly,
  without locks (Hogwild, as word2vec.c and gensim), so results vary
  slightly from run to run.

With ``n_parts == 1`` both are the same sequential SGD (no buffers),
bit-reproducible.

No reference counting in the hot loops: numba emits ``NRT_incref``/``NRT_decref``
(a call and an atomic add) around row views and around the array arguments of an
inlined helper whose body branches around array code, and cannot always prune them
(numba issue #2345). So the per-part kernels unpack the configuration and the
workspaces once, address every row as ``matrix[row, k]`` of a *working* matrix (the
shared one, or the part's buffer in deterministic mode), look buffer slots up without
a branch (:func:`_slot`), and their helpers take arrays only where their body is
loops without data-dependent branches (branchy helpers take scalars only).
``tests/test_kernels_refcount.py`` counts the increfs with ``NUMBA_DEBUG_NRT=1``:
they do not grow with the number of tokens (they were 6 to 1,260 per token).

Compilation: the first call of each variant compiles it (tens of seconds);
the machine code is cached on disk (``cache=True``), later processes load it
in well under a second.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from ._sampling import EXP_TABLE_SIZE, MAX_EXP

__all__ = [
    "KernelConfig",
    "prepare_chunk",
    "train_chunk",
    "train_part",
    "train_part_shared",
    "train_part_bag",
    "skipgram_pairs",
    "cbow_windows",
]


class KernelConfig(NamedTuple):
    """Settings and vocabulary-sized tables of one fit, passed to :func:`train_chunk` as one value.

    Built once per ``fit`` (``skembed.text._word2vec_training.kernel_config``).

    Attributes
    ----------
    sg : bool
        Skip-gram (True) or CBOW (False).
    hs : bool
        Hierarchical softmax on/off.
    negative : int
        Negative samples per positive example (0: none).
    window : int
        Maximum window; the effective window is drawn in ``1..window``.
    shared_negatives : bool
        Skip-gram with negative sampling only: one draw of negatives per
        window (:func:`train_part_shared`).
    neg_prob : numpy.ndarray of shape (n_words,), float32
    neg_alias : numpy.ndarray of shape (n_words,), int32
        Alias table of the noise distribution (``_sampling.alias_table``).
    codes : numpy.ndarray of shape (n_words, L), uint8
    points : numpy.ndarray of shape (n_words, L), int32
    code_lengths : numpy.ndarray of shape (n_words,), int32
        Huffman tree (``_sampling.huffman_tree``); one dummy column without HS.
    sigmoid, log_sigmoid : numpy.ndarray of shape (EXP_TABLE_SIZE,), float32
        ``_sampling.sigmoid_tables``.
    sub_indptr : numpy.ndarray of shape (n_words + 1,) or (0,), int64
    sub_indices : numpy.ndarray of shape (nnz,), int32
        CSR of the input rows of each word (FastText: its own row, then its
        n-gram bucket rows); empty arrays: word ``w`` is row ``w``.
    sync_tokens : int
        0: lock-free (Hogwild) threads; ``k > 0``: deterministic phases of
        ``k`` centre tokens per thread (see the module docstring).
    """

    sg: bool
    hs: bool
    negative: int
    window: int
    shared_negatives: bool
    neg_prob: np.ndarray
    neg_alias: np.ndarray
    codes: np.ndarray
    points: np.ndarray
    code_lengths: np.ndarray
    sigmoid: np.ndarray
    log_sigmoid: np.ndarray
    sub_indptr: np.ndarray
    sub_indices: np.ndarray
    sync_tokens: int


# fast-math without 'nnan'/'ninf': NaN/inf checks must survive (divergence detection)
_FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}

_MUL = np.uint64(25214903917)
_INC = np.uint64(11)
_S16 = np.uint64(16)
_M24 = np.uint64(0xFFFFFF)
_INV24 = np.float32(1.0 / 16777216.0)
_TABLE_SCALE = np.float32(EXP_TABLE_SIZE / MAX_EXP / 2.0)
_MAXE = np.float32(MAX_EXP)
#: floats of one row buffer of one thread in deterministic mode (16 MiB); a phase ends early
#: when a buffer fills up, so memory stays bounded for any vocabulary or bucket count
BUFFER_FLOATS = 1 << 22


@njit(cache=True, nogil=True, inline="always")
def _lcg(state):
    return state * _MUL + _INC


@njit(cache=True, nogil=True, inline="always")
def _uniform(state):
    """A float32 in [0, 1) from 24 high bits of the LCG state."""
    return np.float32((state >> _S16) & _M24) * _INV24


@njit(cache=True, nogil=True, inline="always")
def _seed_state(seed, part):
    s = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(part + 1) * np.uint64(
        0xBF58476D1CE4E5B9
    )
    s ^= s >> np.uint64(31)
    for _ in range(4):
        s = _lcg(s)
    return s


@njit(cache=True, nogil=True)
def prepare_chunk(raw_ids, raw_offsets, remap, keep_prob, seed):
    """Map raw ids to vocabulary ids, drop unknown tokens and subsample frequent words.

    Parameters
    ----------
    raw_ids : numpy.ndarray of shape (n_raw,), int32
        Token ids in the corpus' provisional numbering.
    raw_offsets : numpy.ndarray of shape (n_docs + 1,), int64
    remap : numpy.ndarray of shape (n_provisional,), int32
        Vocabulary id of each provisional id, ``-1`` for dropped words.
    keep_prob : numpy.ndarray of shape (n_words,), float32
        Keep probability of each vocabulary word (``_sampling.keep_probabilities``).
    seed : int
        Seed of the LCG deciding which tokens are kept.

    Returns
    -------
    ids : numpy.ndarray of shape (n_kept,), int32
    offsets : numpy.ndarray of shape (n_docs + 1,), int64
    n_known : int
        Number of in-vocabulary tokens before subsampling.
    """
    n_docs = raw_offsets.size - 1
    ids = np.empty(raw_ids.size, dtype=np.int32)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    state = _seed_state(seed, 0)
    k = 0
    n_known = 0
    for d in range(n_docs):
        for p in range(raw_offsets[d], raw_offsets[d + 1]):
            w = remap[raw_ids[p]]
            if w < 0:
                continue
            n_known += 1
            kp = keep_prob[w]
            if kp < 1.0:
                state = _lcg(state)
                if kp < _uniform(state):
                    continue
            ids[k] = w
            k += 1
        offsets[d + 1] = k
    return ids[:k].copy(), offsets, n_known


@njit(cache=True, nogil=True, inline="always")
def _table_index(f):
    """Index of score ``f`` in the sigmoid tables (0 outside ``(-MAX_EXP, MAX_EXP)`` or NaN)."""
    if f > -_MAXE and f < _MAXE:
        return int((f + _MAXE) * _TABLE_SCALE)
    return 0


@njit(cache=True, nogil=True, inline="always")
def _logistic(f, label, alpha, sig, log_pos, log_neg):
    """Gradient and loss of one binary logistic example from its score ``f`` (scalars only).

    ``sig``, ``log_pos``, ``log_neg``: the table entries at ``_table_index(f)`` (ignored
    outside the table). Returns ``(g, loss, nan_flag)``.
    """
    if f >= _MAXE:
        return (label - np.float32(1.0)) * alpha, (np.float32(0.0) if label > 0 else f), False
    if f <= -_MAXE:
        return label * alpha, (-f if label > 0 else np.float32(0.0)), False
    if f == f:
        return (label - sig) * alpha, (-log_pos if label > 0 else -log_neg), False
    return np.float32(0.0), np.float32(0.0), True


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _score_update(L, li, out, oi, err, ei, label, alpha, sigmoid, log_sigmoid, dim):
    """One binary logistic example: input ``L[li]``, output row ``out[oi]`` (updated in
    place), input gradient accumulated in ``err[ei]``. Returns (loss, nan_flag).

    Rows are addressed two-dimensionally and the helper has no data-dependent branch around
    array code, so numba's reference-count pruning removes every incref of its arguments.
    """
    f = np.float32(0.0)
    for k in range(dim):
        f += L[li, k] * out[oi, k]
    idx = _table_index(f)
    g, loss, bad = _logistic(
        f, label, alpha, sigmoid[idx], log_sigmoid[idx], log_sigmoid[EXP_TABLE_SIZE - 1 - idx]
    )
    for k in range(dim):
        err[ei, k] += g * out[oi, k]
        out[oi, k] += g * L[li, k]
    return loss, bad


@njit(cache=True, nogil=True, inline="always")
def _slot(mat, r, slot, rows, buf, count, m):
    """Slot of row ``r`` of ``mat`` in one part's buffer (deterministic mode), branch-free.

    The first access of a phase copies the shared row into the buffer (``slot`` maps
    rows to slots, ``rows`` slots to rows, ``count[m]`` is the number of slots in use);
    the part then reads and writes only ``buf[slot]``. Written without a branch around the
    copy (its loop runs 0 or ``dim`` times) so that no reference counting survives.
    """
    s = np.int64(slot[r])
    miss = np.int64(s < 0)
    n = count[m]
    s += miss * (n - s)
    count[m] = n + miss
    slot[r] = s
    rows[s] = r
    for k in range(miss * buf.shape[1]):
        buf[s, k] = mat[r, k]
    return s


@njit(cache=True, nogil=True, inline="always")
def _in_slot(syn0, r, ws):
    """Row of the working input matrix holding input row ``r``: ``r`` itself (``ws is None``,
    lock-free: the shared matrix) or its slot in the part's buffer.

    ``ws is None`` is decided when numba compiles the caller (its type is ``none``), so the
    lock-free variant has no branch and no buffer code.
    """
    if ws is None:
        return np.int64(r)
    return _slot(syn0, r, ws[0], ws[1], ws[2], ws[9], 0)


@njit(cache=True, nogil=True, inline="always")
def _neg_slot(syn1neg, r, ws):
    if ws is None:
        return np.int64(r)
    return _slot(syn1neg, r, ws[3], ws[4], ws[5], ws[9], 1)


@njit(cache=True, nogil=True, inline="always")
def _node_slot(syn1, r, ws):
    if ws is None:
        return np.int64(r)
    return _slot(syn1, r, ws[6], ws[7], ws[8], ws[9], 2)


@njit(cache=True, nogil=True, inline="always")
def _working(syn0, syn1neg, syn1, ws):
    """The matrices the part reads and writes: the shared ones (lock-free) or its buffers."""
    if ws is None:
        return syn0, syn1neg, syn1
    return ws[2], ws[5], ws[8]


@njit(cache=True, nogil=True, inline="always")
def _buffers_full(ws, need):
    """True if one more centre word might overflow a buffer (phase must end)."""
    count = ws[9]
    return (
        count[0] + need[0] > ws[1].shape[0]
        or count[1] + need[1] > ws[4].shape[0]
        or count[2] + need[2] > ws[7].shape[0]
    )


@njit(cache=True, nogil=True, inline="always")
def _draw_negative(state, n_words, neg_prob, neg_alias):
    """One noise word from the alias table (two LCG steps, word2vec.c's order); (word, state)."""
    state = _lcg(state)
    t = np.int64((state >> _S16) % np.uint64(n_words))
    state = _lcg(state)
    keep = np.int64(_uniform(state) < neg_prob[t])
    return t + (1 - keep) * (np.int64(neg_alias[t]) - t), state


@njit(cache=True, nogil=True, inline="always")
def _draw_targets(w, negative, neg_prob, neg_alias, outs, state):
    """``w`` then ``negative`` noise words (those equal to ``w`` dropped) into ``outs``.

    Branch-free; returns (number of targets, new_state). Draws in word2vec.c's order.
    """
    n_words = neg_prob.size
    outs[0] = w
    n = 1
    for _ in range(negative):
        tw, state = _draw_negative(state, n_words, neg_prob, neg_alias)
        outs[n] = tw
        n += np.int64(tw != w)
    return n, state


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _output_layer(L, li, w, err, ei, W1, W2, syn1neg, syn1, ws, t, outs, state, alpha, dim):
    """Train the output layer for the input vector ``L[li]`` and target word ``w``.

    Hierarchical softmax over ``w``'s Huffman code (when ``t.hs``), then ``w`` as the
    positive example and ``t.negative`` noise words drawn from the alias table with the LCG
    ``state`` (word2vec.c's order of draws). ``W1``/``W2`` are the working output matrices
    (:func:`_working`), ``t`` the unpacked tables (:func:`_tables`), ``outs`` an int64
    scratch of ``negative + 1`` entries; ``err[ei]`` accumulates the gradient for the input
    rows. Returns (loss, new_state, nan_flag).

    Loops only, no branch around array code: numba prunes the reference counts of the
    arguments (an early ``return``/``continue`` here costs ~15 increfs per call).
    """
    loss = np.float32(0.0)
    bad = False
    hs, negative, neg_prob, neg_alias, codes, points, code_lengths, sigmoid, log_sigmoid = t
    for j in range(code_lengths[w] * np.int64(hs)):
        s = _node_slot(syn1, points[w, j], ws)
        ls, b = _score_update(
            L, li, W2, s, err, ei, np.float32(1 - codes[w, j]), alpha, sigmoid, log_sigmoid, dim
        )
        loss += ls
        bad |= b
    n_out, state = _draw_targets(w, negative, neg_prob, neg_alias, outs, state)
    for j in range(n_out * np.int64(negative > 0)):
        s = _neg_slot(syn1neg, outs[j], ws)
        ls, b = _score_update(
            L, li, W1, s, err, ei, np.float32(j == 0), alpha, sigmoid, log_sigmoid, dim
        )
        loss += ls
        bad |= b
    return loss, state, bad


@njit(cache=True, nogil=True, inline="always")
def _tables(c):
    """The output-layer settings and tables of a :class:`KernelConfig`, unpacked once."""
    return (
        c.hs, c.negative, c.neg_prob, c.neg_alias, c.codes, c.points, c.code_lengths, c.sigmoid,
        c.log_sigmoid,
    )  # fmt: skip


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _gather_input(W0, syn0, u, sub, ws, L, li, dim):
    """Input vector of word ``u`` into ``L[li]``: its row, or the mean of its subword rows.

    ``sub``: ``None`` (one row per word) or the CSR ``(indptr, indices)`` of the input rows
    of each word, decided at compile time.
    """
    if sub is None:
        s = _in_slot(syn0, u, ws)
        for k in range(dim):
            L[li, k] = W0[s, k]
    else:
        indptr, indices = sub
        r0 = indptr[u]
        r1 = indptr[u + 1]
        for k in range(dim):
            L[li, k] = np.float32(0.0)
        for r in range(r0, r1):
            s = _in_slot(syn0, indices[r], ws)
            for k in range(dim):
                L[li, k] += W0[s, k]
        inv = np.float32(1.0) / np.float32(max(r1 - r0, 1))
        for k in range(dim):
            L[li, k] *= inv


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _add_to_input(W0, syn0, u, grad, gi, sub, ws, dim):
    """Add ``grad[gi]`` in full to every input row of word ``u`` (``sub`` as
    :func:`_gather_input`)."""
    if sub is None:
        s = _in_slot(syn0, u, ws)
        for k in range(dim):
            W0[s, k] += grad[gi, k]
    else:
        indptr, indices = sub
        for r in range(indptr[u], indptr[u + 1]):
            s = _in_slot(syn0, indices[r], ws)
            for k in range(dim):
                W0[s, k] += grad[gi, k]


@njit(cache=True, nogil=True, inline="always")
def _centre(ids, offsets, d, p, window, draw, state):
    """Prologue of centre position ``p``, shared by every per-part kernel.

    Advances the document index ``d`` to ``p``'s document and, when ``draw``, draws
    the effective window in ``1..window`` with the LCG (word2vec.c's
    ``b = next_random % window``) and clips it to the document. Loops and scalar
    branches only (no reference counting survives). Returns
    ``(d, centre_word, lo, hi, state)``: the context positions are ``lo..hi-1``
    except ``p`` (``lo == hi == p`` without ``draw``).
    """
    while offsets[d + 1] <= p:
        d += 1
    lo = p
    hi = p
    if draw:
        state = _lcg(state)
        b = np.int64((state >> _S16) % np.uint64(window))
        lo = max(offsets[d], p - window + b)
        hi = min(offsets[d + 1], p + window + 1 - b)
    return d, ids[p], lo, hi, state


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def train_part(
    syn0,
    syn1neg,
    syn1,
    ids,
    offsets,
    c,
    sub,
    p_start,
    p_end,
    part_start,
    part_tokens,
    alpha_start,
    alpha_end,
    state,
    ws,
    need,
    tmp,
):
    """Train on the centre tokens ``p_start .. p_end - 1`` of one thread's slice.

    Parameters
    ----------
    syn0, syn1neg, syn1, ids, offsets, c
        As :func:`train_chunk` (``c`` the :class:`KernelConfig`).
    sub : tuple (indptr int64, indices int32) or None
        The input rows of each word (FastText subwords), or ``None``: word
        ``w`` is row ``w`` (``c.sub_indptr``/``c.sub_indices`` are not read).
    p_start, p_end : int
        Token positions (in ``ids``) to train as centre words; windows
        extend over the whole document, never across documents.
    part_start, part_tokens : int
        First token and length of the thread's slice: the learning rate
        decays linearly from ``alpha_start`` to ``alpha_end`` over it.
    state : uint64
        LCG state (window draws and negatives).
    ws : tuple or None
        The part's row buffers (``_part_workspace``): read and write private
        row copies instead of the shared matrices (the deterministic mode of
        :func:`train_chunk`); ``None``: the shared rows (lock-free).
    need : numpy.ndarray of shape (3,), int64
        Buffer slots one centre word may need per matrix (0: cannot overflow).
    tmp : tuple
        The part's scratch arrays (:func:`_scratch`), allocated by the caller.

    Returns
    -------
    loss, n_examples : float
    nan : bool
    p_next : int
        First position not trained (``p_end`` unless a buffer filled up).
    state : uint64

    Notes
    -----
    The configuration and the workspaces are unpacked once here and every row is
    addressed as ``matrix[row, k]``: the loop does no reference counting (numba cannot
    prune the increfs of row views and of array arguments passed around branches).
    """
    dim = syn0.shape[1]
    window = c.window
    sg = c.sg
    t = _tables(c)
    W0, W1, W2 = _working(syn0, syn1neg, syn1, ws)
    V = tmp[0]  # rows: 0 the input vector (neu1), 1 its gradient (neu1e)
    outs = tmp[4]
    alpha_step = np.float32((alpha_end - alpha_start) / max(part_tokens, 1))
    alpha0 = np.float32(alpha_start)
    loss_sum = 0.0
    n_examples = 0.0
    zero = np.float32(0.0)
    d = np.searchsorted(offsets, p_start, side="right") - 1
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws, need):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, True, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        if sg:
            for cpos in range(lo, hi):
                if cpos == p:
                    continue
                # word2vec: the context word's vector predicts the centre word; FastText
                # (subword rows): the centre word's n-gram bag predicts the context word
                if sub is None:
                    src = np.int64(ids[cpos])
                    tgt = np.int64(w)
                else:
                    src = np.int64(w)
                    tgt = np.int64(ids[cpos])
                _gather_input(W0, syn0, src, sub, ws, V, 0, dim)
                for k in range(dim):
                    V[1, k] = zero
                ls, state, bad = _output_layer(
                    V, 0, tgt, V, 1, W1, W2, syn1neg, syn1, ws, t, outs, state, alpha, dim
                )
                if bad:
                    return loss_sum, n_examples, True, p, state
                loss_sum += ls
                _add_to_input(W0, syn0, src, V, 1, sub, ws, dim)
                n_examples += 1.0
        else:
            for k in range(dim):
                V[0, k] = zero
                V[1, k] = zero
            cw = 0
            for cpos in range(lo, hi):
                if cpos == p:
                    continue
                u = ids[cpos]
                if sub is None:
                    r = _in_slot(syn0, u, ws)
                    for k in range(dim):
                        V[0, k] += W0[r, k]
                    cw += 1
                else:
                    indptr, indices = sub
                    for q in range(indptr[u], indptr[u + 1]):
                        r = _in_slot(syn0, indices[q], ws)
                        for k in range(dim):
                            V[0, k] += W0[r, k]
                        cw += 1
            if cw == 0:
                continue
            inv = np.float32(1.0) / np.float32(cw)
            for k in range(dim):
                V[0, k] *= inv
            ls, state, bad = _output_layer(
                V, 0, w, V, 1, W1, W2, syn1neg, syn1, ws, t, outs, state, alpha, dim
            )
            if bad:
                return loss_sum, n_examples, True, p, state
            loss_sum += ls
            for cpos in range(lo, hi):
                if cpos != p:
                    _add_to_input(W0, syn0, ids[cpos], V, 1, sub, ws, dim)
            n_examples += 1.0
    return loss_sum, n_examples, False, p_end, state


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def train_part_shared(
    syn0,
    syn1neg,
    ids,
    offsets,
    c,
    sub,
    p_start,
    p_end,
    part_start,
    part_tokens,
    alpha_start,
    alpha_end,
    state,
    ws,
    need,
    tmp,
):
    """Skip-gram with negative samples shared by all context words of a window.

    Same parameters and return value as :func:`train_part` (``n_examples``
    counts pairs). For a centre word ``w`` with ``K`` context words,
    ``c.negative`` noise words are drawn once; the ``K x (1 + negative)``
    scores between the context input vectors and the output vectors of ``w``
    and the noise words are computed from the same parameters, then all rows
    are updated (Ji et al. 2016). Each output row is read once per window
    instead of once per pair.
    """
    dim = syn0.shape[1]
    window = c.window
    negative = c.negative
    neg_prob = c.neg_prob
    neg_alias = c.neg_alias
    sigmoid = c.sigmoid
    log_sigmoid = c.log_sigmoid
    W0, W1, _ = _working(syn0, syn1neg, syn1neg, ws)
    l1s = tmp[1]
    err = tmp[2]
    outg = tmp[3]
    outs = tmp[4]
    ctx = tmp[6]
    alpha_step = np.float32((alpha_end - alpha_start) / max(part_tokens, 1))
    alpha0 = np.float32(alpha_start)
    loss_sum = 0.0
    n_examples = 0.0
    zero = np.float32(0.0)
    d = np.searchsorted(offsets, p_start, side="right") - 1
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws, need):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, True, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        n_ctx = 0
        for cpos in range(lo, hi):
            if cpos == p:
                continue
            u = ids[cpos]
            ctx[n_ctx] = u
            _gather_input(W0, syn0, u, sub, ws, l1s, n_ctx, dim)
            for k in range(dim):
                err[n_ctx, k] = zero
            n_ctx += 1
        if n_ctx == 0:
            continue
        n_out, state = _draw_targets(w, negative, neg_prob, neg_alias, outs, state)
        for j in range(n_out):
            outs[j] = _neg_slot(syn1neg, outs[j], ws)
        for j in range(n_out):
            o = outs[j]
            lab = np.float32(j == 0)
            for k in range(dim):
                outg[j, k] = zero
            for i in range(n_ctx):
                f = np.float32(0.0)
                for k in range(dim):
                    f += l1s[i, k] * W1[o, k]
                idx = _table_index(f)
                g, ls, bad = _logistic(
                    f, lab, alpha, sigmoid[idx], log_sigmoid[idx],
                    log_sigmoid[EXP_TABLE_SIZE - 1 - idx],
                )  # fmt: skip
                if bad:
                    return loss_sum, n_examples, True, p, state
                loss_sum += ls
                for k in range(dim):
                    err[i, k] += g * W1[o, k]
                    outg[j, k] += g * l1s[i, k]
        for j in range(n_out):
            o = outs[j]
            for k in range(dim):
                W1[o, k] += outg[j, k]
        for i in range(n_ctx):
            _add_to_input(W0, syn0, ctx[i], err, i, sub, ws, dim)
        n_examples += n_ctx
    return loss_sum, n_examples, False, p_end, state


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def train_part_bag(
    syn0,
    syn1neg,
    ids,
    offsets,
    c,
    sub,
    p_start,
    p_end,
    part_start,
    part_tokens,
    alpha_start,
    alpha_end,
    state,
    ws,
    need,
    tmp,
):
    """FastText skip-gram: the centre word's n-gram bag predicts each context word.

    Same parameters and return value as :func:`train_part` (``sub`` not ``None``,
    ``n_examples`` counts pairs). fastText's and gensim's convention: the input of the
    pair (centre ``w``, context ``c``) is the mean of ``w``'s subword rows. Here the bag is
    gathered once per window; each context word is a positive example; ``c.negative``
    noise words are drawn once per window and shared by its pairs (a noise word scores
    once, its gradient counted for each pair whose context word it is not); the summed
    input gradient is added once to each row of the bag. Per window that is one bag
    gather and one bag update instead of one per context word.
    """
    dim = syn0.shape[1]
    window = c.window
    negative = c.negative
    neg_prob = c.neg_prob
    neg_alias = c.neg_alias
    sigmoid = c.sigmoid
    log_sigmoid = c.log_sigmoid
    n_words = neg_prob.size
    W0, W1, _ = _working(syn0, syn1neg, syn1neg, ws)
    V = tmp[0]  # rows: 0 the centre's bag mean, 1 its summed gradient
    outs = tmp[4]
    ctx = tmp[6]
    alpha_step = np.float32((alpha_end - alpha_start) / max(part_tokens, 1))
    alpha0 = np.float32(alpha_start)
    loss_sum = 0.0
    n_examples = 0.0
    one = np.float32(1.0)
    zero = np.float32(0.0)
    d = np.searchsorted(offsets, p_start, side="right") - 1
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws, need):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, True, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        n_ctx = 0
        for cpos in range(lo, hi):
            if cpos != p:
                ctx[n_ctx] = ids[cpos]
                n_ctx += 1
        if n_ctx == 0:
            continue
        _gather_input(W0, syn0, w, sub, ws, V, 0, dim)
        for k in range(dim):
            V[1, k] = zero
        bad = False
        for i in range(n_ctx):
            o = _neg_slot(syn1neg, ctx[i], ws)
            ls, b1 = _score_update(V, 0, W1, o, V, 1, one, alpha, sigmoid, log_sigmoid, dim)
            loss_sum += ls
            bad |= b1
        for j in range(negative):
            tw, state = _draw_negative(state, n_words, neg_prob, neg_alias)
            outs[j] = tw
        for j in range(negative):
            tw = outs[j]
            m = 0
            for i in range(n_ctx):
                m += ctx[i] != tw
            if m == 0:
                continue
            o = _neg_slot(syn1neg, tw, ws)
            ls, b1 = _score_update(
                V, 0, W1, o, V, 1, zero, alpha * np.float32(m), sigmoid, log_sigmoid, dim
            )
            loss_sum += ls * m
            bad |= b1
        if bad:
            return loss_sum, n_examples, True, p, state
        _add_to_input(W0, syn0, w, V, 1, sub, ws, dim)
        n_examples += n_ctx
    return loss_sum, n_examples, False, p_end, state


@njit(cache=True, nogil=True)
def _part_bounds(offsets, n_parts):
    """Document boundaries of ``n_parts`` contiguous slices with balanced token counts."""
    n_docs = offsets.size - 1
    n_tok = offsets[n_docs]
    bounds = np.zeros(n_parts + 1, dtype=np.int64)
    for t in range(1, n_parts):
        bounds[t] = np.searchsorted(offsets, (n_tok * t) // n_parts)
    bounds[n_parts] = n_docs
    for t in range(1, n_parts + 1):
        if bounds[t] < bounds[t - 1]:
            bounds[t] = bounds[t - 1]
    return bounds


@njit(cache=True, nogil=True)
def _buffer_sizes(c, n_rows, dim, shared, max_ctx):
    """Slots per matrix and part, and the slots one centre word may take (0: never full).

    ``max_ctx``: most context words of a centre (:func:`_max_context`). Each buffer
    holds at most :data:`BUFFER_FLOATS` floats (but at least two
    centre words' worth) or the whole matrix, whichever is smaller.
    """
    ctx = max_ctx
    max_bag = 1
    if c.sub_indptr.shape[0] > 0:
        max_bag = max(1, np.max(np.diff(c.sub_indptr)))
    need = np.zeros(3, dtype=np.int64)
    need[0] = ctx * max_bag
    if c.negative > 0:
        need[1] = (c.negative + 1) * (ctx if (c.sg and not shared) else 1)
    if c.hs:
        need[2] = c.codes.shape[1] * (ctx if c.sg else 1)
    caps = np.zeros(3, dtype=np.int64)
    budget = max(1, BUFFER_FLOATS // max(dim, 1))
    for m in range(3):
        caps[m] = min(n_rows[m], max(2 * need[m], budget))
        if caps[m] >= n_rows[m]:
            need[m] = 0
    return caps, need


def train_chunk(syn0, syn1neg, syn1, ids, offsets, config, alpha_start, alpha_end, seed, n_parts):
    """Train on one corpus chunk, one contiguous slice of documents per thread.

    See the module docstring for the parameters and the two modes
    (``config.sync_tokens``). Returns ``stats``, float64 of shape
    (n_parts, 3): summed loss, number of examples (skip-gram: pairs, CBOW:
    centre words) and a NaN flag per slice.

    A Python function: it passes the subword CSR and the phase length to the
    compiled kernel as ``None`` when unused, so that numba compiles a variant
    without subword and buffer code for plain Word2Vec and lock-free threads
    (the ``is None`` tests are resolved at compile time; branches on them in
    the innermost loops cost ~30%).
    """
    c = config
    sub = (c.sub_indptr, c.sub_indices) if c.sub_indptr.shape[0] > 0 else None
    phase = int(c.sync_tokens) if (c.sync_tokens > 0 and n_parts > 1) else None
    shared = bool(c.shared_negatives and c.sg and not c.hs and c.negative > 0)
    return _train_chunk(
        syn0, syn1neg, syn1, ids, offsets, c, sub, phase, shared, alpha_start, alpha_end, seed,
        n_parts,
    )  # fmt: skip


@njit(cache=True, nogil=True, parallel=True)
def _train_chunk(
    syn0, syn1neg, syn1, ids, offsets, c, sub, phase, shared, alpha_start, alpha_end, seed,
    n_parts,
):  # fmt: skip
    """The compiled :func:`train_chunk`: ``sub`` as :func:`train_part`, ``phase`` (int or None)
    centre tokens per thread between merges (``None``: lock-free), ``shared`` selects
    :func:`train_part_shared`."""
    dim = syn0.shape[1]
    stats = np.zeros((n_parts, 3), dtype=np.float64)
    starts, ends, states = _part_starts(offsets, seed, n_parts)
    pos = starts.copy()
    n_rows = np.array([syn0.shape[0], syn1neg.shape[0], syn1.shape[0]], dtype=np.int64)
    max_ctx = _max_context(offsets, c.window)
    caps, need = _buffer_sizes(c, n_rows, dim, shared, max_ctx)
    if phase is None:
        step = np.int64(1) << 62
        caps[:] = 0
        n_rows[:] = 0
    else:
        step = np.int64(phase)
    w = _workspaces(n_parts, n_rows, caps, dim)
    scratch = _scratch(n_parts, max_ctx, c.negative, dim)
    while (pos < ends).any():
        for t in prange(n_parts):
            if pos[t] < ends[t]:
                ws = _part_workspace(phase, w, t)
                tmp = _part_scratch(scratch, t)
                stop = min(ends[t], pos[t] + step)
                n_tok = ends[t] - starts[t]
                if shared and sub is not None:
                    loss, nex, bad, p, st = train_part_bag(
                        syn0, syn1neg, ids, offsets, c, sub, pos[t], stop, starts[t], n_tok,
                        alpha_start, alpha_end, states[t], ws, need, tmp,
                    )  # fmt: skip
                elif shared:
                    loss, nex, bad, p, st = train_part_shared(
                        syn0, syn1neg, ids, offsets, c, sub, pos[t], stop, starts[t], n_tok,
                        alpha_start, alpha_end, states[t], ws, need, tmp,
                    )  # fmt: skip
                else:
                    loss, nex, bad, p, st = train_part(
                        syn0, syn1neg, syn1, ids, offsets, c, sub, pos[t], stop, starts[t], n_tok,
                        alpha_start, alpha_end, states[t], ws, need, tmp,
                    )  # fmt: skip
                stats[t, 0] += loss
                stats[t, 1] += nex
                states[t] = st
                pos[t] = ends[t] if bad else p
                if bad:
                    stats[t, 2] = 1.0
        if phase is not None:
            _merge_phase(syn0, syn1neg, syn1, w, n_parts)
    return stats


@njit(cache=True, nogil=True)
def _part_starts(offsets, seed, n_parts):
    """First and end token of each part's slice (:func:`_part_bounds`) and its LCG state."""
    bounds = _part_bounds(offsets, n_parts)
    starts = np.empty(n_parts, dtype=np.int64)
    ends = np.empty(n_parts, dtype=np.int64)
    states = np.empty(n_parts, dtype=np.uint64)
    for t in range(n_parts):
        starts[t] = offsets[bounds[t]]
        ends[t] = offsets[bounds[t + 1]]
        states[t] = _seed_state(seed, t)
    return starts, ends, states


@njit(cache=True, nogil=True)
def _max_context(offsets, window):
    """Most context words a centre can have: ``2 * window``, at most the longest document.

    Bounds the per-part scratch memory whatever ``window`` is (a window longer
    than every document allocates nothing more).
    """
    longest = 0
    for d in range(offsets.size - 1):
        longest = max(longest, offsets[d + 1] - offsets[d])
    return max(1, min(2 * np.int64(window), longest))


@njit(cache=True, nogil=True)
def _scratch(n_parts, max_ctx, negative, dim):
    """Scratch arrays of every part, allocated once per chunk (the per-part kernels are
    compiled without the reference-counting runtime and cannot allocate).

    Per part: three ``dim`` vectors (``neu1``, ``neu1e``, the subword mean), then for
    :func:`train_part_shared` the context input vectors and their gradients
    ``(max_ctx, dim)``, the output-row gradients ``(negative + 1, dim)``, the output rows,
    their labels and the context words.
    """
    n_out = max(negative, 0) + 1
    return (
        np.zeros((n_parts, 3, dim), dtype=np.float32),
        np.zeros((n_parts, max_ctx, dim), dtype=np.float32),
        np.zeros((n_parts, max_ctx, dim), dtype=np.float32),
        np.zeros((n_parts, n_out, dim), dtype=np.float32),
        np.zeros((n_parts, n_out), dtype=np.int64),
        np.zeros((n_parts, n_out), dtype=np.float32),
        np.zeros((n_parts, max_ctx), dtype=np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def _part_scratch(scratch, t):
    """Part ``t``'s slices of :func:`_scratch`."""
    return (
        scratch[0][t], scratch[1][t], scratch[2][t], scratch[3][t], scratch[4][t], scratch[5][t],
        scratch[6][t],
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _workspaces(n_parts, n_rows, caps, dim):
    """Row buffers of every part for the buffered mode (see :func:`_row`).

    Per matrix ``m`` (syn0, syn1neg, syn1): the slot of each row (-1: not
    copied), the row of each slot, the copies; then the slots in use per
    part and matrix. ``n_rows`` and ``caps`` of zero give empty buffers.
    """
    return (
        np.full((n_parts, n_rows[0]), -1, dtype=np.int32),
        np.zeros((n_parts, caps[0]), dtype=np.int64),
        np.zeros((n_parts, caps[0], dim), dtype=np.float32),
        np.full((n_parts, n_rows[1]), -1, dtype=np.int32),
        np.zeros((n_parts, caps[1]), dtype=np.int64),
        np.zeros((n_parts, caps[1], dim), dtype=np.float32),
        np.full((n_parts, n_rows[2]), -1, dtype=np.int32),
        np.zeros((n_parts, caps[2]), dtype=np.int64),
        np.zeros((n_parts, caps[2], dim), dtype=np.float32),
        np.zeros((n_parts, 3), dtype=np.int64),
    )


def _part_workspace(phase, w, t):
    """Part ``t``'s buffers as the ``ws`` tuple of the row accessors, ``None`` if ``phase is None``.

    Chosen by the type of ``phase`` when numba compiles the caller (an
    ``@overload``), so the lock-free variant carries no buffer code at all.
    """
    return None if phase is None else tuple(w[m][t] for m in range(10))


@overload(_part_workspace, inline="always")
def _part_workspace_impl(phase, w, t):
    if isinstance(phase, (types.NoneType, types.Omitted)):
        return lambda phase, w, t: None
    return lambda phase, w, t: (
        w[0][t], w[1][t], w[2][t], w[3][t], w[4][t], w[5][t], w[6][t], w[7][t], w[8][t], w[9][t]
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _merge_phase(syn0, syn1neg, syn1, w, n_parts):
    """End of a phase: write every part's row copies back to the shared matrices, reset.

    Runs on the calling thread, outside the parallel region (one region per phase: a
    second one costs a fork/join, and libgomp's spinning threads make it slow on a loaded
    machine). Only the rows touched in the phase are visited, part by part in part order.
    A row copied by one part only is copied back; a row copied by several parts becomes
    its shared value plus each part's change (copy minus shared value), added in part
    order. Thread timing plays no role.
    """
    _merge_matrix(syn0, w[0], w[1], w[2], w[9], 0, n_parts)
    _merge_matrix(syn1neg, w[3], w[4], w[5], w[9], 1, n_parts)
    _merge_matrix(syn1, w[6], w[7], w[8], w[9], 2, n_parts)
    w[9][:, :] = 0


@njit(cache=True, nogil=True)
def _merge_matrix(mat, slot, rows, buf, count, m, n_parts):
    """:func:`_merge_phase` for one matrix (``slot``/``rows``/``buf`` of every part)."""
    dim = mat.shape[1]
    for t in range(n_parts):
        for i in range(count[t, m]):
            r = rows[t, i]
            if slot[t, r] < 0:  # merged with an earlier part's copy
                continue
            owners = 0
            for q in range(t + 1, n_parts):
                owners += slot[q, r] >= 0
            if owners == 0:
                for k in range(dim):
                    mat[r, k] = buf[t, i, k]
                slot[t, r] = -1
                continue
            for k in range(dim):
                orig = mat[r, k]
                acc = orig + (buf[t, i, k] - orig)
                for q in range(t + 1, n_parts):
                    sq = slot[q, r]
                    if sq >= 0:
                        acc += buf[q, sq, k] - orig
                mat[r, k] = acc
            for q in range(t, n_parts):
                slot[q, r] = -1


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
    state = _seed_state(seed, 0)
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
    state = _seed_state(seed, 0)
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
    state = _seed_state(seed, 0)
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

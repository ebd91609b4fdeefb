"""Compiled CPU kernels of the word2vec family (skip-gram / CBOW, negative sampling / HS).

numba only (no scikit-learn, no torch). The estimators
(:class:`skembed.text.word2vec.Word2VecTransformer`, FastText) call them on
corpus *chunks*, so memory does not grow with the corpus:

1. :func:`prepare_chunk` maps a chunk's raw word ids to vocabulary ids, drops
   out-of-vocabulary tokens and applies frequent-word subsampling (decided
   once per token per epoch, before training, with the LCG);
2. :func:`train_chunk` trains on the kept tokens with Hogwild (lock-free)
   updates, one contiguous slice of documents per thread (``prange``).

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

``sub_indptr``/``sub_indices``: with ``None`` (Word2Vec) the input vector of
word ``w`` is ``syn0[w]``; otherwise it is the mean of the rows
``syn0[sub_indices[sub_indptr[w]:sub_indptr[w + 1]]]`` and its gradient is
added in full to each of those rows, as Facebook fastText and gensim do for
unsupervised models. numba compiles the two cases separately (the ``is None``
test is resolved at compile time), so Word2Vec pays nothing for it.

Semantics follow word2vec.c: in skip-gram the input vector of each context
word predicts the centre word; in CBOW the mean of the context input vectors
predicts it and the error is added in full to every context row. Windows
never cross document boundaries. The learning rate decays linearly over the
tokens of each thread's slice from ``alpha_start`` to ``alpha_end``.

Determinism: with ``n_parts == 1`` the result depends only on the inputs and
``seed`` (bit-reproducible). With more parts, threads update shared rows
without locks (Hogwild, as word2vec.c and gensim), so results vary slightly
from run to run.

Compilation: the first call of each variant compiles it (tens of seconds);
the machine code is cached on disk (``cache=True``), later processes load it
in well under a second.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._sampling import EXP_TABLE_SIZE, MAX_EXP

__all__ = [
    "KernelConfig",
    "prepare_chunk",
    "train_chunk",
    "train_part",
    "train_part_shared",
    "skipgram_pairs",
    "cbow_windows",
]


class KernelConfig(NamedTuple):
    """Settings and vocabulary-sized tables of one fit, passed to :func:`train_chunk` as one value.

    Built once per ``fit`` (``skembed.text._word2vec_training.kernel_config``);
    numba compiles one specialisation per field type, so ``sub_indptr=None``
    (Word2Vec) and a CSR (FastText) are two variants.

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
    sub_indptr : None or numpy.ndarray of shape (n_words + 1,), int64
    sub_indices : None or numpy.ndarray of shape (nnz,), int32
        CSR of the input rows of each word (FastText: its own row, then its
        n-gram bucket rows); ``None``: word ``w`` is row ``w``.
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
    sub_indptr: object = None
    sub_indices: object = None


# fast-math without 'nnan'/'ninf': NaN/inf checks must survive (divergence detection)
_FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}

_MUL = np.uint64(25214903917)
_INC = np.uint64(11)
_S16 = np.uint64(16)
_M24 = np.uint64(0xFFFFFF)
_INV24 = np.float32(1.0 / 16777216.0)
_TABLE_SCALE = np.float32(EXP_TABLE_SIZE / MAX_EXP / 2.0)
_MAXE = np.float32(MAX_EXP)


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


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _score_update(l1, out, neu1e, label, alpha, sigmoid, log_sigmoid, dim):
    """One binary logistic example: update ``out`` in place, accumulate ``neu1e``.

    Returns (loss, nan_flag).
    """
    f = np.float32(0.0)
    for k in range(dim):
        f += l1[k] * out[k]
    if f >= _MAXE:
        g = (label - np.float32(1.0)) * alpha
        loss = np.float32(0.0) if label > 0 else f
    elif f <= -_MAXE:
        g = label * alpha
        loss = -f if label > 0 else np.float32(0.0)
    elif f == f:
        idx = int((f + _MAXE) * _TABLE_SCALE)
        g = (label - sigmoid[idx]) * alpha
        if label > 0:
            loss = -log_sigmoid[idx]
        else:
            loss = -log_sigmoid[EXP_TABLE_SIZE - 1 - idx]
    else:
        return np.float32(0.0), True
    for k in range(dim):
        neu1e[k] += g * out[k]
        out[k] += g * l1[k]
    return loss, False


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _output_layer(
    l1,
    w,
    neu1e,
    hs,
    negative,
    syn1,
    syn1neg,
    codes,
    points,
    code_lengths,
    neg_prob,
    neg_alias,
    state,
    alpha,
    sigmoid,
    log_sigmoid,
    dim,
):
    """Train the output layer for input vector ``l1`` and target word ``w``.

    Hierarchical softmax over ``w``'s Huffman code (when ``hs``), then ``w``
    as the positive example and ``negative`` noise words drawn from the alias
    table with the LCG ``state`` (word2vec.c's order of draws). ``neu1e``
    accumulates the gradient for the input rows.

    Returns (loss, new_state, nan_flag).
    """
    one = np.float32(1.0)
    zero = np.float32(0.0)
    n_words = neg_prob.size
    loss = np.float32(0.0)
    if hs:
        for j in range(code_lengths[w]):
            lab = one - np.float32(codes[w, j])
            ls, bad = _score_update(
                l1, syn1[points[w, j]], neu1e, lab, alpha, sigmoid, log_sigmoid, dim
            )
            if bad:
                return loss, state, True
            loss += ls
    for j in range(negative + 1 if negative > 0 else 0):
        if j == 0:
            target = w
            lab = one
        else:
            state = _lcg(state)
            t = np.int64((state >> _S16) % np.uint64(n_words))
            state = _lcg(state)
            if _uniform(state) >= neg_prob[t]:
                t = neg_alias[t]
            if t == w:
                continue
            target = t
            lab = zero
        ls, bad = _score_update(l1, syn1neg[target], neu1e, lab, alpha, sigmoid, log_sigmoid, dim)
        if bad:
            return loss, state, True
        loss += ls
    return loss, state, False


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def train_part(
    syn0,
    syn1neg,
    syn1,
    ids,
    offsets,
    doc_start,
    doc_end,
    sub_indptr,
    sub_indices,
    neg_prob,
    neg_alias,
    codes,
    points,
    code_lengths,
    sigmoid,
    log_sigmoid,
    sg,
    hs,
    negative,
    window,
    alpha_start,
    alpha_end,
    state,
):
    """Train on documents ``doc_start .. doc_end - 1`` of a chunk (one thread's slice).

    The fields of :class:`KernelConfig` unpacked, the slice bounds, the
    chunk's learning-rate range and the LCG ``state``. Returns ``(loss, n_examples, nan)``.
    """
    dim = syn0.shape[1]
    neu1 = np.zeros(dim, dtype=np.float32)
    neu1e = np.zeros(dim, dtype=np.float32)
    l1buf = np.zeros(dim, dtype=np.float32)
    tok_start = offsets[doc_start]
    n_tok = offsets[doc_end] - tok_start
    if n_tok <= 0:
        return 0.0, 0.0, False
    alpha_step = np.float32((alpha_end - alpha_start) / max(n_tok, 1))
    alpha0 = np.float32(alpha_start)
    loss_sum = 0.0
    n_examples = 0.0
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for d in range(doc_start, doc_end):
        s = offsets[d]
        e = offsets[d + 1]
        for p in range(s, e):
            alpha = alpha0 + alpha_step * np.float32(p - tok_start)
            w = ids[p]
            state = _lcg(state)
            b = np.int64((state >> _S16) % np.uint64(window))
            lo = max(s, p - window + b)
            hi = min(e, p + window + 1 - b)
            if sg:
                for c in range(lo, hi):
                    if c == p:
                        continue
                    u = ids[c]
                    if sub_indptr is None:
                        l1 = syn0[u]
                    else:
                        r0 = sub_indptr[u]
                        r1 = sub_indptr[u + 1]
                        l1 = l1buf
                        for k in range(dim):
                            l1[k] = zero
                        for r in range(r0, r1):
                            row = syn0[sub_indices[r]]
                            for k in range(dim):
                                l1[k] += row[k]
                        inv = one / np.float32(max(r1 - r0, 1))
                        for k in range(dim):
                            l1[k] *= inv
                    for k in range(dim):
                        neu1e[k] = zero
                    ls, state, bad = _output_layer(
                        l1,
                        w,
                        neu1e,
                        hs,
                        negative,
                        syn1,
                        syn1neg,
                        codes,
                        points,
                        code_lengths,
                        neg_prob,
                        neg_alias,
                        state,
                        alpha,
                        sigmoid,
                        log_sigmoid,
                        dim,
                    )
                    if bad:
                        return loss_sum, n_examples, True
                    loss_sum += ls
                    if sub_indptr is None:
                        row = syn0[u]
                        for k in range(dim):
                            row[k] += neu1e[k]
                    else:
                        for r in range(sub_indptr[u], sub_indptr[u + 1]):
                            row = syn0[sub_indices[r]]
                            for k in range(dim):
                                row[k] += neu1e[k]
                    n_examples += 1.0
            else:
                for k in range(dim):
                    neu1[k] = zero
                    neu1e[k] = zero
                cw = 0
                for c in range(lo, hi):
                    if c == p:
                        continue
                    u = ids[c]
                    if sub_indptr is None:
                        row = syn0[u]
                        for k in range(dim):
                            neu1[k] += row[k]
                        cw += 1
                    else:
                        for r in range(sub_indptr[u], sub_indptr[u + 1]):
                            row = syn0[sub_indices[r]]
                            for k in range(dim):
                                neu1[k] += row[k]
                            cw += 1
                if cw == 0:
                    continue
                inv = one / np.float32(cw)
                for k in range(dim):
                    neu1[k] *= inv
                ls, state, bad = _output_layer(
                    neu1,
                    w,
                    neu1e,
                    hs,
                    negative,
                    syn1,
                    syn1neg,
                    codes,
                    points,
                    code_lengths,
                    neg_prob,
                    neg_alias,
                    state,
                    alpha,
                    sigmoid,
                    log_sigmoid,
                    dim,
                )
                if bad:
                    return loss_sum, n_examples, True
                loss_sum += ls
                for c in range(lo, hi):
                    if c == p:
                        continue
                    u = ids[c]
                    if sub_indptr is None:
                        row = syn0[u]
                        for k in range(dim):
                            row[k] += neu1e[k]
                    else:
                        for r in range(sub_indptr[u], sub_indptr[u + 1]):
                            row = syn0[sub_indices[r]]
                            for k in range(dim):
                                row[k] += neu1e[k]
                n_examples += 1.0
    return loss_sum, n_examples, False


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


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def train_part_shared(
    syn0,
    syn1neg,
    ids,
    offsets,
    doc_start,
    doc_end,
    sub_indptr,
    sub_indices,
    neg_prob,
    neg_alias,
    sigmoid,
    log_sigmoid,
    negative,
    window,
    alpha_start,
    alpha_end,
    state,
):
    """Skip-gram with negative samples shared by all context words of a window (one slice).

    For a centre word ``w`` with ``K`` context words, ``negative`` noise words
    are drawn once; the ``K x (1 + negative)`` scores between the context
    input vectors and the output vectors of ``w`` and the noise words are
    computed from the same parameters, then all rows are updated (Ji et al.
    2016). Each output row is read once per window instead of once per pair.
    Returns ``(loss, n_examples, nan)`` with ``n_examples`` counting pairs.
    """
    dim = syn0.shape[1]
    n_words = neg_prob.size
    max_ctx = 2 * window
    l1s = np.zeros((max_ctx, dim), dtype=np.float32)
    err = np.zeros((max_ctx, dim), dtype=np.float32)
    outg = np.zeros((negative + 1, dim), dtype=np.float32)
    outs = np.zeros(negative + 1, dtype=np.int64)
    labels = np.zeros(negative + 1, dtype=np.float32)
    ctx = np.zeros(max_ctx, dtype=np.int64)
    tok_start = offsets[doc_start]
    n_tok = offsets[doc_end] - tok_start
    if n_tok <= 0:
        return 0.0, 0.0, False
    alpha_step = np.float32((alpha_end - alpha_start) / max(n_tok, 1))
    alpha0 = np.float32(alpha_start)
    loss_sum = 0.0
    n_examples = 0.0
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for d in range(doc_start, doc_end):
        s = offsets[d]
        e = offsets[d + 1]
        for p in range(s, e):
            alpha = alpha0 + alpha_step * np.float32(p - tok_start)
            w = ids[p]
            state = _lcg(state)
            b = np.int64((state >> _S16) % np.uint64(window))
            lo = max(s, p - window + b)
            hi = min(e, p + window + 1 - b)
            n_ctx = 0
            for c in range(lo, hi):
                if c == p:
                    continue
                u = ids[c]
                ctx[n_ctx] = u
                if sub_indptr is None:
                    row = syn0[u]
                    for k in range(dim):
                        l1s[n_ctx, k] = row[k]
                else:
                    r0 = sub_indptr[u]
                    r1 = sub_indptr[u + 1]
                    for k in range(dim):
                        l1s[n_ctx, k] = zero
                    for r in range(r0, r1):
                        row = syn0[sub_indices[r]]
                        for k in range(dim):
                            l1s[n_ctx, k] += row[k]
                    inv = one / np.float32(max(r1 - r0, 1))
                    for k in range(dim):
                        l1s[n_ctx, k] *= inv
                for k in range(dim):
                    err[n_ctx, k] = zero
                n_ctx += 1
            if n_ctx == 0:
                continue
            n_out = 1
            outs[0] = w
            labels[0] = one
            for _ in range(negative):
                state = _lcg(state)
                t = np.int64((state >> _S16) % np.uint64(n_words))
                state = _lcg(state)
                if _uniform(state) >= neg_prob[t]:
                    t = neg_alias[t]
                if t == w:
                    continue
                outs[n_out] = t
                labels[n_out] = zero
                n_out += 1
            for j in range(n_out):
                out = syn1neg[outs[j]]
                lab = labels[j]
                for k in range(dim):
                    outg[j, k] = zero
                for i in range(n_ctx):
                    f = np.float32(0.0)
                    for k in range(dim):
                        f += l1s[i, k] * out[k]
                    if f >= _MAXE:
                        g = (lab - one) * alpha
                        if lab == zero:
                            loss_sum += f
                    elif f <= -_MAXE:
                        g = lab * alpha
                        if lab > zero:
                            loss_sum -= f
                    elif f == f:
                        idx = int((f + _MAXE) * _TABLE_SCALE)
                        g = (lab - sigmoid[idx]) * alpha
                        if lab > zero:
                            loss_sum -= log_sigmoid[idx]
                        else:
                            loss_sum -= log_sigmoid[EXP_TABLE_SIZE - 1 - idx]
                    else:
                        return loss_sum, n_examples, True
                    for k in range(dim):
                        err[i, k] += g * out[k]
                        outg[j, k] += g * l1s[i, k]
            for j in range(n_out):
                out = syn1neg[outs[j]]
                for k in range(dim):
                    out[k] += outg[j, k]
            for i in range(n_ctx):
                u = ctx[i]
                if sub_indptr is None:
                    row = syn0[u]
                    for k in range(dim):
                        row[k] += err[i, k]
                else:
                    for r in range(sub_indptr[u], sub_indptr[u + 1]):
                        row = syn0[sub_indices[r]]
                        for k in range(dim):
                            row[k] += err[i, k]
            n_examples += n_ctx
    return loss_sum, n_examples, False


@njit(cache=True, nogil=True, parallel=True)
def train_chunk(syn0, syn1neg, syn1, ids, offsets, config, alpha_start, alpha_end, seed, n_parts):
    """Train on one corpus chunk, one contiguous slice of documents per thread.

    See the module docstring for the parameters. Returns ``stats``, float64
    of shape (n_parts, 3): summed loss, number of examples (skip-gram: pairs,
    CBOW: centre words) and a NaN flag per slice.
    """
    c = config
    shared = c.shared_negatives and c.sg and not c.hs and c.negative > 0
    stats = np.zeros((n_parts, 3), dtype=np.float64)
    bounds = _part_bounds(offsets, n_parts)
    for t in prange(n_parts):
        # slices run side by side, so each decays over the chunk's whole span
        if shared:
            loss, nex, bad = train_part_shared(
                syn0,
                syn1neg,
                ids,
                offsets,
                bounds[t],
                bounds[t + 1],
                c.sub_indptr,
                c.sub_indices,
                c.neg_prob,
                c.neg_alias,
                c.sigmoid,
                c.log_sigmoid,
                c.negative,
                c.window,
                alpha_start,
                alpha_end,
                _seed_state(seed, t),
            )
        else:
            loss, nex, bad = train_part(
                syn0,
                syn1neg,
                syn1,
                ids,
                offsets,
                bounds[t],
                bounds[t + 1],
                c.sub_indptr,
                c.sub_indices,
                c.neg_prob,
                c.neg_alias,
                c.codes,
                c.points,
                c.code_lengths,
                c.sigmoid,
                c.log_sigmoid,
                c.sg,
                c.hs,
                c.negative,
                c.window,
                alpha_start,
                alpha_end,
                _seed_state(seed, t),
            )
        stats[t, 0] = loss
        stats[t, 1] = nex
        stats[t, 2] = 1.0 if bad else 0.0
    return stats


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
    n = ids.size
    inputs = np.empty(n * 2 * window, dtype=np.int32)
    targets = np.empty(n * 2 * window, dtype=np.int32)
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
    return inputs[:k].copy(), targets[:k].copy()


@njit(cache=True, nogil=True)
def cbow_windows(ids, offsets, window, seed):
    """Context windows of CBOW with word2vec's dynamic window (torch engine).

    Returns
    -------
    contexts : numpy.ndarray of shape (n_examples, 2 * window), int32
        Context word ids, padded with ``-1``.
    targets : numpy.ndarray of shape (n_examples,), int32
        Centre words (centres without any context are skipped).
    """
    n = ids.size
    contexts = np.full((n, 2 * window), -1, dtype=np.int32)
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

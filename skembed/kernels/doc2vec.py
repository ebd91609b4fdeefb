"""Compiled CPU kernels of paragraph vectors (Doc2Vec: PV-DBOW and PV-DM).

numba only (no scikit-learn, no torch). The output layer (hierarchical
softmax and negative sampling, one binary logistic update per output row) is
the word2vec kernel's inlined :func:`skembed.kernels.word2vec._output_layer`,
reused as is; what is specific to paragraph vectors is only the *input* of
each example:

- PV-DBOW (``dm=0``): the document vector predicts each kept token of the
  document (skip-gram with the document as the only context word). With
  ``dbow_words=1`` each token is first trained as a skip-gram centre word
  (every context word's input vector predicts it), as gensim does.
- PV-DM (``dm=1``): the mean of the document vector and the window's context
  word vectors predicts the centre word (gensim's ``dm_mean=1``); the error
  is added in full to the document vector and to every context word vector,
  as word2vec's CBOW does.

Two entry points:

:func:`train_chunk`
    Trains one corpus chunk (the trainer of
    :mod:`skembed.text._word2vec_training` calls it through the Doc2Vec
    engine). Deterministic for a given ``seed`` and ``n_parts``: with several
    parts each thread trains its slice of documents on *private copies* of
    the shared matrices (output layers, word vectors; document vectors too
    when tags repeat) for ``round_tokens`` tokens, then the copies' changes
    are summed into the shared matrices in part order (rows in parallel,
    each row's sum in a fixed order) and the copies reset. Document vectors
    of distinct documents are disjoint, so with unique tags they are updated
    in place. No update depends on thread timing.
:func:`infer_documents`
    Infers a vector for each document against a frozen model (only the
    document vector is trained). Each document's randomness (initial vector,
    subsampling, windows, negatives) comes from an LCG seeded by ``seed`` and
    a hash of the document's word ids (:func:`document_seed`), so a document
    gets the same vector whatever batch, order, thread count or process it is
    inferred in.

Semantics follow gensim's ``doc2vec_inner.pyx`` (Le & Mikolov 2014):
windows never cross documents, frequent-word subsampling is decided once per
token per epoch before the windows are drawn, the effective window of each
centre is drawn in ``1..window``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .word2vec import (
    _FASTMATH,
    _MAXE,
    _S16,
    _TABLE_SCALE,
    _lcg,
    _output_layer,
    _seed_state,
    _uniform,
)

__all__ = [
    "document_seed",
    "infer_documents",
    "round_bounds",
    "train_chunk",
]


@njit(cache=True, nogil=True, inline="always")
def _mix64(x):
    """splitmix64's finaliser: a bijective 64-bit mix."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


@njit(cache=True, nogil=True)
def document_seed(ids, seed):
    """A 64-bit seed from ``seed`` and a document's word ids (order and length included).

    Parameters
    ----------
    ids : numpy.ndarray of shape (n_tokens,), int32
        The document's vocabulary ids (unknown words already dropped).
    seed : int
        The fit's seed.

    Returns
    -------
    state : numpy.uint64
        The same for the same ``(ids, seed)`` on every machine and process.
    """
    h = _mix64(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    for i in range(ids.size):
        h = _mix64(h ^ (np.uint64(ids[i]) + np.uint64(0x9E3779B97F4A7C15)))
    return _mix64(h ^ np.uint64(ids.size))


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _train_tokens(
    dv,
    syn0,
    syn1neg,
    syn1,
    ids,
    offsets,
    doc_rows,
    piece,
    p_start,
    p_end,
    c,
    dm,
    dbow_words,
    alpha0,
    alpha_step,
    tok_start,
    state,
    neu1,
    neu1e,
):
    """Train tokens ``p_start .. p_end - 1`` of a chunk; ``piece`` holds ``p_start``.

    Returns ``(loss, n_examples, nan, state, piece)``.
    """
    dim = dv.shape[1]
    loss_sum = 0.0
    n_examples = 0.0
    one = np.float32(1.0)
    zero = np.float32(0.0)
    window = c.window
    for p in range(p_start, p_end):
        while offsets[piece + 1] <= p:
            piece += 1
        s = offsets[piece]
        e = offsets[piece + 1]
        drow = doc_rows[piece]
        doc = dv[drow]
        alpha = alpha0 + alpha_step * np.float32(p - tok_start)
        w = ids[p]
        if dm or dbow_words:
            state = _lcg(state)
            b = np.int64((state >> _S16) % np.uint64(window))
            lo = max(s, p - window + b)
            hi = min(e, p + window + 1 - b)
        else:
            lo = hi = p
        if dm:
            cw = 1
            for k in range(dim):
                neu1[k] = doc[k]
                neu1e[k] = zero
            for q in range(lo, hi):
                if q == p:
                    continue
                row = syn0[ids[q]]
                for k in range(dim):
                    neu1[k] += row[k]
                cw += 1
            inv = one / np.float32(cw)
            for k in range(dim):
                neu1[k] *= inv
            ls, state, bad = _output_layer(
                neu1,
                w,
                neu1e,
                c.hs,
                c.negative,
                syn1,
                syn1neg,
                c.codes,
                c.points,
                c.code_lengths,
                c.neg_prob,
                c.neg_alias,
                state,
                alpha,
                c.sigmoid,
                c.log_sigmoid,
                dim,
            )
            if bad:
                return loss_sum, n_examples, True, state, piece
            loss_sum += ls
            n_examples += 1.0
            for k in range(dim):
                doc[k] += neu1e[k]
            for q in range(lo, hi):
                if q == p:
                    continue
                row = syn0[ids[q]]
                for k in range(dim):
                    row[k] += neu1e[k]
            continue
        # PV-DBOW: skip-gram word pairs first (dbow_words), then the document predicts w
        for q in range(lo, hi):
            if q == p:
                continue
            row = syn0[ids[q]]
            for k in range(dim):
                neu1e[k] = zero
            ls, state, bad = _output_layer(
                row,
                w,
                neu1e,
                c.hs,
                c.negative,
                syn1,
                syn1neg,
                c.codes,
                c.points,
                c.code_lengths,
                c.neg_prob,
                c.neg_alias,
                state,
                alpha,
                c.sigmoid,
                c.log_sigmoid,
                dim,
            )
            if bad:
                return loss_sum, n_examples, True, state, piece
            loss_sum += ls
            n_examples += 1.0
            for k in range(dim):
                row[k] += neu1e[k]
        for k in range(dim):
            neu1e[k] = zero
        ls, state, bad = _output_layer(
            doc,
            w,
            neu1e,
            c.hs,
            c.negative,
            syn1,
            syn1neg,
            c.codes,
            c.points,
            c.code_lengths,
            c.neg_prob,
            c.neg_alias,
            state,
            alpha,
            c.sigmoid,
            c.log_sigmoid,
            dim,
        )
        if bad:
            return loss_sum, n_examples, True, state, piece
        loss_sum += ls
        n_examples += 1.0
        for k in range(dim):
            doc[k] += neu1e[k]
    return loss_sum, n_examples, False, state, piece


@njit(cache=True, nogil=True)
def round_bounds(offsets, doc_rows, n_parts):
    """Token boundaries of ``n_parts`` slices with balanced token counts.

    A boundary never falls between two consecutive pieces of the same
    document row (pieces of a split long document stay in one slice).

    Returns
    -------
    bounds : numpy.ndarray of shape (n_parts + 1,), int64
        Token positions; slice ``t`` is ``bounds[t]:bounds[t + 1]``.
    """
    n_pieces = offsets.size - 1
    n_tok = offsets[n_pieces]
    bounds = np.zeros(n_parts + 1, dtype=np.int64)
    for t in range(1, n_parts):
        i = np.searchsorted(offsets, (n_tok * t) // n_parts)
        while 0 < i < n_pieces and doc_rows[i] == doc_rows[i - 1]:
            i += 1
        bounds[t] = offsets[min(i, n_pieces)]
    bounds[n_parts] = n_tok
    for t in range(1, n_parts + 1):
        if bounds[t] < bounds[t - 1]:
            bounds[t] = bounds[t - 1]
    return bounds


@njit(cache=True, nogil=True, parallel=True)
def _merge(shared, private):
    """``shared += sum_t (private[t] - shared)`` in part order, then ``private[t] = shared``."""
    n_parts = private.shape[0]
    dim = shared.shape[1]
    for r in prange(shared.shape[0]):
        base = shared[r]
        for k in range(dim):
            acc = base[k]
            for t in range(n_parts):
                acc += private[t, r, k] - base[k]
            base[k] = acc
            for t in range(n_parts):
                private[t, r, k] = acc


@njit(cache=True, nogil=True, parallel=True)
def _train_round(
    dv,
    syn0,
    syn1neg,
    syn1,
    p_dv,
    p_syn0,
    p_syn1neg,
    p_syn1,
    ids,
    offsets,
    doc_rows,
    c,
    dm,
    dbow_words,
    alpha0,
    alpha_step,
    cursor,
    ends,
    pieces,
    states,
    stats,
    round_tokens,
    neu,
):
    n_parts = cursor.size
    for t in prange(n_parts):
        p0 = cursor[t]
        p1 = min(ends[t], p0 + round_tokens)
        if p1 <= p0 or stats[t, 2] > 0:
            continue
        tdv = p_dv[t] if p_dv.shape[1] > 0 else dv
        loss, nex, bad, state, piece = _train_tokens(
            tdv,
            p_syn0[t] if p_syn0.shape[1] > 0 else syn0,
            p_syn1neg[t] if p_syn1neg.shape[1] > 0 else syn1neg,
            p_syn1[t] if p_syn1.shape[1] > 0 else syn1,
            ids,
            offsets,
            doc_rows,
            pieces[t],
            p0,
            p1,
            c,
            dm,
            dbow_words,
            alpha0,
            alpha_step,
            0,
            states[t],
            neu[t, 0],
            neu[t, 1],
        )
        cursor[t] = p1
        pieces[t] = piece
        states[t] = state
        stats[t, 0] += loss
        stats[t, 1] += nex
        if bad:
            stats[t, 2] = 1.0


def train_chunk(
    dv,
    syn0,
    syn1neg,
    syn1,
    private,
    ids,
    offsets,
    doc_rows,
    config,
    dm,
    dbow_words,
    alpha_start,
    alpha_end,
    seed,
    round_tokens,
):
    """Train paragraph vectors on one corpus chunk.

    Parameters
    ----------
    dv : numpy.ndarray of shape (n_rows, dim), float32
        Document (tag) vectors, updated in place.
    syn0 : numpy.ndarray of shape (n_words, dim), float32
        Word input vectors (updated with ``dm=1`` or ``dbow_words=1``).
    syn1neg : numpy.ndarray of shape (n_words, dim) or (0, dim), float32
    syn1 : numpy.ndarray of shape (n_words - 1, dim) or (0, dim), float32
        Output layers (negative sampling, hierarchical softmax), updated in place.
    private : tuple of 4 numpy.ndarray of shape (n_parts, n_rows_or_0, dim), float32
        Per-thread copies of ``dv``, ``syn0``, ``syn1neg``, ``syn1`` (equal to
        them on entry; an empty middle axis: not shared, e.g. ``dv`` with
        unique tags). ``n_parts = private[0].shape[0]``; 1 trains in place.
    ids : numpy.ndarray of shape (n_tokens,), int32
        Vocabulary ids of the chunk after subsampling.
    offsets : numpy.ndarray of shape (n_pieces + 1,), int64
    doc_rows : numpy.ndarray of shape (n_pieces,), int64
        Row of ``dv`` of each piece.
    config : skembed.kernels.word2vec.KernelConfig
        Output-layer tables and ``window``.
    dm, dbow_words : bool
    alpha_start, alpha_end : float
        Learning rate at the chunk's first and last token (linear in between).
    seed : int
    round_tokens : int
        Tokens each part trains between two merges (ignored with one part).

    Returns
    -------
    stats : numpy.ndarray of shape (n_parts, 3), float64
        Summed loss, number of examples and a NaN flag per part.
    """
    n_parts = private[0].shape[0]
    dim = dv.shape[1]
    n_tok = ids.size
    alpha0 = np.float32(alpha_start)
    alpha_step = np.float32((alpha_end - alpha_start) / max(n_tok, 1))
    stats = np.zeros((n_parts, 3), dtype=np.float64)
    if n_tok == 0:
        return stats
    bounds = round_bounds(offsets, doc_rows, n_parts)
    cursor = bounds[:-1].copy()
    ends = bounds[1:].copy()
    pieces = np.searchsorted(offsets, cursor, side="right").astype(np.int64) - 1
    pieces = np.clip(pieces, 0, offsets.size - 2)
    states = np.array([_seed_state(seed, t) for t in range(n_parts)], dtype=np.uint64)
    neu = np.zeros((n_parts, 2, dim), dtype=np.float32)
    if n_parts == 1:
        round_tokens = n_tok
        private = tuple(np.zeros((1, 0, dim), np.float32) for _ in range(4))
    step = max(int(round_tokens), 1)
    while (cursor < ends).any() and not stats[:, 2].any():
        _train_round(
            dv,
            syn0,
            syn1neg,
            syn1,
            *private,
            ids,
            offsets,
            doc_rows,
            config,
            bool(dm),
            bool(dbow_words),
            alpha0,
            alpha_step,
            cursor,
            ends,
            pieces,
            states,
            stats,
            step,
            neu,
        )
        for shared, priv in zip((dv, syn0, syn1neg, syn1), private, strict=True):
            if priv.shape[1] > 0:
                _merge(shared, priv)
    return stats


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _frozen_output_layer(l1, w, neu1e, hs, negative, syn1, syn1neg, c, state, alpha, dim):
    """The output layer of :func:`~skembed.kernels.word2vec._output_layer` with frozen rows.

    Accumulates the input gradient in ``neu1e`` without changing ``syn1`` or
    ``syn1neg`` (inference trains only the document vector). Draws the
    negatives in the same order. Returns ``(state, nan_flag)``.
    """
    n_words = c.neg_prob.size
    for j in range(c.code_lengths[w] if hs else 0):
        g, bad = _gradient(l1, syn1[c.points[w, j]], np.float32(1 - c.codes[w, j]), alpha, c, dim)
        if bad:
            return state, True
        for k in range(dim):
            neu1e[k] += g * syn1[c.points[w, j], k]
    for j in range(negative + 1 if negative > 0 else 0):
        target = w
        if j > 0:
            state = _lcg(state)
            target = np.int64((state >> _S16) % np.uint64(n_words))
            state = _lcg(state)
            if _uniform(state) >= c.neg_prob[target]:
                target = c.neg_alias[target]
            if target == w:
                continue
        g, bad = _gradient(l1, syn1neg[target], np.float32(1.0 if j == 0 else 0.0), alpha, c, dim)
        if bad:
            return state, True
        for k in range(dim):
            neu1e[k] += g * syn1neg[target, k]
    return state, False


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _gradient(l1, out, label, alpha, c, dim):
    """``(label - sigmoid(l1 . out)) * alpha`` with word2vec's clipped table; (g, nan_flag)."""
    f = np.float32(0.0)
    for k in range(dim):
        f += l1[k] * out[k]
    if f >= _MAXE:
        return (label - np.float32(1.0)) * alpha, False
    if f <= -_MAXE:
        return label * alpha, False
    if f != f:
        return np.float32(0.0), True
    idx = int((f + _MAXE) * _TABLE_SCALE)
    return (label - c.sigmoid[idx]) * alpha, False


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _infer_one(
    out,
    syn0,
    syn1neg,
    syn1,
    doc_ids,
    c,
    keep_prob,
    dm,
    epochs,
    alpha,
    min_alpha,
    seed,
    buf,
    neu1,
    neu1e,
):
    """Infer one document's vector into ``out``; returns the NaN flag."""
    dim = out.shape[0]
    one = np.float32(1.0)
    zero = np.float32(0.0)
    window = c.window
    state = document_seed(doc_ids, seed)
    for k in range(dim):
        state = _lcg(state)
        out[k] = (_uniform(state) - np.float32(0.5)) / np.float32(dim)
    delta = (alpha - min_alpha) / max(epochs - 1, 1)
    for epoch in range(epochs):
        a = np.float32(alpha - delta * epoch)
        n = 0
        for i in range(doc_ids.size):
            w = doc_ids[i]
            kp = keep_prob[w]
            if kp < 1.0:
                state = _lcg(state)
                if kp < _uniform(state):
                    continue
            buf[n] = w
            n += 1
        for p in range(n):
            w = buf[p]
            for k in range(dim):
                neu1e[k] = zero
            if dm:
                state = _lcg(state)
                b = np.int64((state >> _S16) % np.uint64(window))
                cw = 1
                for k in range(dim):
                    neu1[k] = out[k]
                for q in range(max(0, p - window + b), min(n, p + window + 1 - b)):
                    if q == p:
                        continue
                    row = syn0[buf[q]]
                    for k in range(dim):
                        neu1[k] += row[k]
                    cw += 1
                inv = one / np.float32(cw)
                for k in range(dim):
                    neu1[k] *= inv
                state, bad = _frozen_output_layer(
                    neu1, w, neu1e, c.hs, c.negative, syn1, syn1neg, c, state, a, dim
                )
            else:
                state, bad = _frozen_output_layer(
                    out, w, neu1e, c.hs, c.negative, syn1, syn1neg, c, state, a, dim
                )
            if bad:
                return True
            for k in range(dim):
                out[k] += neu1e[k]
    for k in range(dim):
        if out[k] != out[k] or abs(out[k]) == np.inf:
            return True
    return False


@njit(cache=True, nogil=True, parallel=True)
def infer_documents(
    syn0,
    syn1neg,
    syn1,
    ids,
    offsets,
    config,
    keep_prob,
    dm,
    epochs,
    alpha,
    min_alpha,
    seed,
    n_parts,
):
    """Infer a vector for each document against a frozen model.

    Parameters
    ----------
    syn0 : numpy.ndarray of shape (n_words, dim), float32
        Word input vectors (read with ``dm=1``).
    syn1neg, syn1 : numpy.ndarray, float32
        Output layers of the fitted model (read only).
    ids : numpy.ndarray of shape (n_tokens,), int32
        Vocabulary ids of the documents (unknown words dropped, no subsampling).
    offsets : numpy.ndarray of shape (n_docs + 1,), int64
    config : skembed.kernels.word2vec.KernelConfig
    keep_prob : numpy.ndarray of shape (n_words,), float32
        Subsampling keep probability of each word (decided per epoch).
    dm : bool
    epochs : int
    alpha, min_alpha : float
        Learning rate of the first and last epoch (linear steps in between, as
        gensim's ``infer_vector``).
    seed : int
    n_parts : int
        Threads; the result does not depend on it.

    Returns
    -------
    vectors : numpy.ndarray of shape (n_docs, dim), float32
    bad : numpy.ndarray of shape (n_docs,), bool
        Documents whose inference met a non-finite value.
    """
    n_docs = offsets.size - 1
    dim = syn1neg.shape[1]
    out = np.zeros((n_docs, dim), dtype=np.float32)
    bad = np.zeros(n_docs, dtype=np.bool_)
    max_len = 1
    for d in range(n_docs):
        max_len = max(max_len, offsets[d + 1] - offsets[d])
    for t in prange(n_parts):
        buf = np.empty(max_len, dtype=np.int32)
        neu1 = np.zeros(dim, dtype=np.float32)
        neu1e = np.zeros(dim, dtype=np.float32)
        for d in range(t, n_docs, n_parts):
            bad[d] = _infer_one(
                out[d],
                syn0,
                syn1neg,
                syn1,
                ids[offsets[d] : offsets[d + 1]],
                config,
                keep_prob,
                dm,
                epochs,
                alpha,
                min_alpha,
                seed,
                buf,
                neu1,
                neu1e,
            )
    return out, bad

"""Compiled CPU kernels of paragraph vectors (Doc2Vec: PV-DBOW and PV-DM).

numba only (no scikit-learn, no torch). The output layer (hierarchical
softmax and negative sampling, one binary logistic update per output row) is
the word2vec kernel's inlined :func:`skembed.kernels.word2vec._output_layer`,
reused as is; what is specific to paragraph vectors is only the *input* of
each example:

- PV-DBOW (``dm=0``): the document vector predicts each kept token of the
  document (skip-gram with the document as the only context word). With
  ``dbow_words=1`` each token is first trained as a skip-gram centre word
  (every context word's input vector predicts it), as gensim does. Pure
  PV-DBOW with negative sampling and ``config.shared_negatives`` runs
  :func:`train_part_dbow_shared`: :data:`DBOW_BATCH` consecutive words of a
  document against one draw of noise words.
- PV-DM (``dm=1``): the mean of the document vector and the window's context
  word vectors predicts the centre word (gensim's ``dm_mean=1``); the error
  is added in full to the document vector and to every context word vector,
  as word2vec's CBOW does.

Two entry points:

:func:`~skembed.kernels.scheduler.train_doc2vec_chunk`
    Trains one corpus chunk (the trainer of
    :mod:`skembed.text.word2vec._training` calls it through the Doc2Vec
    engine) with the family's one phase loop
    (:func:`skembed.kernels.scheduler.run_phases`). The document vectors are
    rows of the input matrix after the word rows, so every row access goes
    through the family's slot accessors and ``_output_layer`` and its deterministic parallel scheme
    (``config.sync_tokens``: phases of private row copies whose deltas are
    added in thread order) applies unchanged: the result depends on the
    inputs, ``seed`` and ``n_parts`` only, never on thread timing.
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

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from . import launch_threads
from ._core import (
    _FALSE,
    _FASTMATH,
    _INNER,
    _ONE,
    _PART,
    _S16,
    _ZERO,
    PartModel,
    _add_rows,
    _buffers_full,
    _centre,
    _draw_negative,
    _gather_input,
    _gather_rows,
    _in_slot,
    _lcg,
    _logistic,
    _neg_slot,
    _output_layer,
    _part_start,
    _score_shared_noise,
    _score_update,
    _table_index,
    _uniform,
    _working,
)

launch_threads()  # numba's pool, its idle threads spinning briefly (see launch_threads)

__all__ = [
    "Inference",
    "document_seed",
    "infer_documents",
    "train_part",
    "train_part_dbow_shared",
]


@njit(**_INNER)
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


@njit(**_PART)
def train_part(weights, chunk, c, span, state, ws, tmp):
    """Train the centre tokens ``span.start .. span.end - 1`` of one thread's slice.

    The parameters and return value of :func:`skembed.kernels.word2vec.train_part`;
    ``chunk.doc`` (:class:`~skembed.kernels._core.Documents`) holds the row of ``syn0``
    with the document vector of each piece and the mode (``dm``, ``dbow_words``). Rows are
    read and written through the word2vec kernel's slot accessors and ``_output_layer``, so
    the deterministic buffered mode (``ws`` a workspace; ``None``: lock-free) works
    unchanged. Returns ``(loss, n_examples, nan, p_next, state)``.
    """
    syn0 = weights.syn0
    ids, offsets, doc_rows = chunk.ids, chunk.offsets, chunk.doc.rows
    dm, dbow_words = chunk.doc.dm, chunk.doc.dbow_words
    dim = syn0.shape[1]
    window = c.window
    work = _working(weights, ws)
    model = PartModel(weights, work, ws, c, tmp.outputs)
    W0 = work.syn0
    V = tmp.example  # rows: 0 the input vector, 1 its gradient
    slots = tmp.slots  # PV-DM: working rows of the document and its context words
    alpha0, alpha_step, d = _part_start(offsets, span)
    p_start, p_end, part_start = span.start, span.end, span.part_start
    loss_sum = 0.0
    n_examples = 0.0
    zero = np.float32(0.0)
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, dm or dbow_words, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        if dm:
            # PV-DM: mean of the document vector and the context word vectors
            cw = _gather_input(W0, syn0, doc_rows[d], None, ws, V, _ZERO, slots, _ZERO, dim)
            for k in range(dim):
                V[1, k] = zero
            for q in range(lo, hi):
                if q != p:
                    cw = _gather_rows(W0, syn0, ids[q], None, ws, V, 0, slots, cw, dim)
            inv = np.float32(1.0) / np.float32(cw)
            for k in range(dim):
                V[0, k] *= inv
            ls, state, bad = _output_layer(V, 0, w, V, 1, model, state, alpha, dim)
            if bad:
                return loss_sum, n_examples, True, p, state
            loss_sum += ls
            n_examples += 1.0
            _add_rows(W0, slots, _ZERO, cw, V, _ONE, dim)
            continue
        # PV-DBOW: skip-gram word pairs (dbow_words), then the document vector predicts w
        for q in range(lo, hi + 1):  # q == hi: the document row
            if q == p and q < hi:
                continue
            r = _in_slot(syn0, ids[q] if q < hi else doc_rows[d], ws)
            for k in range(dim):
                V[1, k] = zero
            ls, state, bad = _output_layer(W0, r, w, V, 1, model, state, alpha, dim)
            if bad:
                return loss_sum, n_examples, True, p, state
            loss_sum += ls
            n_examples += 1.0
            for k in range(dim):
                W0[r, k] += V[1, k]
    return loss_sum, n_examples, False, p_end, state


#: PV-DBOW with shared negatives: consecutive words of a document that its vector predicts
#: against one draw of noise words (:func:`train_part_dbow_shared`)
DBOW_BATCH = 4


@njit(**_PART)
def train_part_dbow_shared(weights, chunk, c, span, state, ws, tmp):
    """PV-DBOW (negative sampling, no word training) with negatives shared by a batch.

    Same parameters and return value as :func:`train_part` (``dm=0``, ``dbow_words=0``,
    ``c.hs`` off). The document vector predicts up to :data:`DBOW_BATCH` consecutive
    words of its document (``n_examples`` counts them) against one draw of
    ``c.negative`` noise words; every score uses the document vector as it was at the
    start of the batch (its summed gradient is added once at the end), a noise word
    scores once and its gradient counts for each word of the batch it differs from (the
    shared negatives of skip-gram, Ji et al. 2016, with the document in the place of the
    context word). Per batch of ``B`` words that is ``B + negative`` scores and one
    draw instead of ``B * (1 + negative)`` scores and ``B`` draws.
    """
    syn0, syn1neg = weights.syn0, weights.syn1neg
    ids, offsets, doc_rows = chunk.ids, chunk.offsets, chunk.doc.rows
    dim = syn0.shape[1]
    work = _working(weights, ws)
    model = PartModel(weights, work, ws, c, tmp.outputs)
    W0 = work.syn0
    W1 = work.syn1neg
    V = tmp.example  # rows: 0 the document vector at the batch's start, 1 its summed gradient
    batch = tmp.ints  # the batch's words as int64, the type FastText's bag passes to the noise
    alpha0, alpha_step, d = _part_start(offsets, span)
    p_start, p_end, part_start = span.start, span.end, span.part_start
    loss_sum = 0.0
    n_examples = 0.0
    one = np.float32(1.0)
    zero = np.float32(0.0)
    p = p_start
    while p < p_end:
        if ws is not None:
            if _buffers_full(ws):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, _ONE, _FALSE, state)
        end = p + DBOW_BATCH  # the batch ends at the document's end or the step's
        end = offsets[d + 1] if offsets[d + 1] < end else end
        end = p_end if p_end < end else end
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        r = _in_slot(syn0, doc_rows[d], ws)
        for k in range(dim):
            V[0, k] = W0[r, k]
            V[1, k] = zero
        bad = False
        for q in range(p, end):
            batch[q - p] = ids[q]
            o = _neg_slot(syn1neg, batch[q - p], ws)
            ls, b1 = _score_update(V, _ZERO, W1, o, V, _ONE, one, alpha, c, dim)
            loss_sum += ls
            bad |= b1
        ls, state, b1 = _score_shared_noise(V, model, batch, end - p, state, alpha, dim)
        loss_sum += ls
        bad |= b1
        if bad:
            return loss_sum, n_examples, True, p, state
        for k in range(dim):
            W0[r, k] += V[1, k]
        n_examples += end - p
        p = end
    return loss_sum, n_examples, False, p_end, state


def _needs(c, dm, dbow_words, shared, max_ctx):
    """Buffer slots one centre token (a batch, with ``shared``) may take per matrix
    (syn0, syn1neg, syn1); plain Python, called once per chunk."""
    ctx = max_ctx if (dm or dbow_words) else 0
    examples = 1 if dm else 1 + ctx
    need = np.zeros(3, dtype=np.int64)
    need[0] = ctx + 1
    need[1] = (c.negative + 1) * examples if c.negative > 0 else 0
    if shared:
        need[1] = c.negative + DBOW_BATCH
    need[2] = c.codes.shape[1] * examples if c.hs else 0
    return need


class Inference(NamedTuple):
    """The settings of :func:`infer_documents`.

    Attributes
    ----------
    keep_prob : numpy.ndarray of shape (n_words,), float32
        Subsampling keep probability of each word (decided per epoch).
    dm : bool
        PV-DM (True: the mean of the document vector and the window's word vectors is the
        input) or PV-DBOW (False: the document vector alone).
    epochs : int
    alpha, min_alpha : float
        Learning rate of the first and last epoch (linear steps in between, as
        gensim's ``infer_vector``).
    seed : int
        The fit's seed, mixed with each document's word ids (:func:`document_seed`).
    """

    keep_prob: np.ndarray
    dm: bool
    epochs: int
    alpha: float
    min_alpha: float
    seed: int


@njit(**_INNER)
def _frozen_output_layer(l1, w, neu1e, syn1, syn1neg, c, state, alpha, dim):
    """The output layer of :func:`~skembed.kernels._core._output_layer` with frozen rows.

    Accumulates the input gradient in ``neu1e`` without changing ``syn1`` or
    ``syn1neg`` (inference trains only the document vector). Draws the
    negatives in the same order, with the family's one draw (:func:`_draw_negative`),
    and scores with its one table lookup (:func:`_table_index`, :func:`_logistic`).
    Returns ``(state, nan_flag)``.
    """
    hs = c.hs
    negative = c.negative
    n_words = c.neg_prob.size
    for j in range(c.code_lengths[w] if hs else 0):
        g, bad = _gradient(l1, syn1[c.points[w, j]], np.float32(1 - c.codes[w, j]), alpha, c, dim)
        if bad:
            return state, True
        for k in range(dim):
            neu1e[k] += g * syn1[c.points[w, j], k]
    for j in range(negative + 1 if negative > 0 else 0):
        target = np.int64(w)
        if j > 0:
            target, state = _draw_negative(state, n_words, c.neg_prob, c.neg_alias)
            if target == w:
                continue
        g, bad = _gradient(l1, syn1neg[target], np.float32(1.0 if j == 0 else 0.0), alpha, c, dim)
        if bad:
            return state, True
        for k in range(dim):
            neu1e[k] += g * syn1neg[target, k]
    return state, False


@njit(**_INNER)
def _gradient(l1, out, label, alpha, c, dim):
    """``(label - sigmoid(l1 . out)) * alpha`` with word2vec's clipped table; (g, nan_flag)."""
    f = np.float32(0.0)
    for k in range(dim):
        f += l1[k] * out[k]
    idx = _table_index(f)
    g, _, bad = _logistic(f, label, alpha, c.sigmoid[idx], np.float32(0.0), np.float32(0.0))
    return g, bad


@njit(**_INNER)
def _initial_vector(out, state):
    """The document vector's start, uniform in ``[-0.5, 0.5) / dim`` from the LCG; the state."""
    dim = out.shape[0]
    for k in range(dim):
        state = _lcg(state)
        out[k] = (_uniform(state) - np.float32(0.5)) / np.float32(dim)
    return state


@njit(**_INNER)
def _subsample(doc_ids, keep_prob, buf, state):
    """The epoch's kept tokens of the document into ``buf``; (their number, the state)."""
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
    return n, state


@njit(**_INNER)
def _dm_input(out, syn0, buf, n, p, window, neu1, state):
    """PV-DM's input of kept token ``p`` into ``neu1``: the mean of the document vector and
    the word vectors of a window drawn in ``1..window``; returns the state."""
    dim = out.shape[0]
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
    inv = np.float32(1.0) / np.float32(cw)
    for k in range(dim):
        neu1[k] *= inv
    return state


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _infer_one(out, weights, doc_ids, c, settings, buf, neu1, neu1e):
    """Infer one document's vector into ``out`` (``settings`` an :class:`Inference`,
    ``buf``, ``neu1``, ``neu1e`` the thread's scratch); returns the NaN flag."""
    syn0, syn1neg, syn1 = weights.syn0, weights.syn1neg, weights.syn1
    dim = out.shape[0]
    alpha, min_alpha, epochs = settings.alpha, settings.min_alpha, settings.epochs
    state = _initial_vector(out, document_seed(doc_ids, settings.seed))
    delta = (alpha - min_alpha) / max(epochs - 1, 1)
    for epoch in range(epochs):
        a = np.float32(alpha - delta * epoch)
        n, state = _subsample(doc_ids, settings.keep_prob, buf, state)
        for p in range(n):
            w = buf[p]
            for k in range(dim):
                neu1e[k] = np.float32(0.0)
            if settings.dm:
                state = _dm_input(out, syn0, buf, n, p, c.window, neu1, state)
                state, bad = _frozen_output_layer(neu1, w, neu1e, syn1, syn1neg, c, state, a, dim)
            else:
                state, bad = _frozen_output_layer(out, w, neu1e, syn1, syn1neg, c, state, a, dim)
            if bad:
                return True
            for k in range(dim):
                out[k] += neu1e[k]
    for k in range(dim):
        if out[k] != out[k] or abs(out[k]) == np.inf:
            return True
    return False


@njit(cache=True, nogil=True, parallel=True)
def infer_documents(weights, ids, offsets, config, settings, n_parts):
    """Infer a vector for each document against a frozen model.

    Parameters
    ----------
    weights : skembed.kernels._core.Weights
        The fitted model, read only: ``syn0`` (float32, (n_words, dim)) the word input
        vectors (read with ``settings.dm``), ``syn1neg`` and ``syn1`` the output layers.
    ids : numpy.ndarray of shape (n_tokens,), int32
        Vocabulary ids of the documents (unknown words dropped, no subsampling).
    offsets : numpy.ndarray of shape (n_docs + 1,), int64
    config : skembed.kernels.word2vec.KernelConfig
    settings : Inference
        Keep probabilities, mode, epochs, learning rates and seed.
    n_parts : int
        Threads; the result does not depend on it.

    Returns
    -------
    vectors : numpy.ndarray of shape (n_docs, dim), float32
    bad : numpy.ndarray of shape (n_docs,), bool
        Documents whose inference met a non-finite value.
    """
    n_docs = offsets.size - 1
    dim = weights.syn1neg.shape[1]
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
            doc_ids = ids[offsets[d] : offsets[d + 1]]
            bad[d] = _infer_one(out[d], weights, doc_ids, config, settings, buf, neu1, neu1e)
    return out, bad

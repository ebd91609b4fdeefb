"""The shared core of the word2vec-family kernels (word2vec, FastText, Doc2Vec).

One of each, used by every variant's ``train_part`` (see :mod:`skembed.kernels.word2vec`
for the algorithm and the two threading modes): :class:`KernelConfig`, the random-number
generator (word2vec.c's LCG; the subsampling of each chunk is :mod:`skembed.kernels._prepare`),
the sigmoid table lookup, the buffered row slots of the deterministic mode, the negative draw, the output layer
(negative sampling and hierarchical softmax), the input gather/scatter, the per-token
prologue (:func:`_centre`) and the example builders of the torch engine
(:func:`skipgram_pairs`, :func:`cbow_windows`). Every helper called inside a hot loop takes scalars,
2-D arrays indexed by row and the part's named structures (:class:`PartModel`,
:class:`KernelConfig`, the scratch arrays), and is compiled without numba's runtime
(``_nrt=False``, :data:`_INNER`), so no reference counting happens per token.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .sampling import EXP_TABLE_SIZE, MAX_EXP


class KernelConfig(NamedTuple):
    """Settings and vocabulary-sized tables of one fit, passed to :func:`~skembed.kernels.scheduler.train_word2vec_chunk` as one value.

    Built once per ``fit`` (``skembed.text.word2vec._training.kernel_config``).

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
        Negative sampling without HS: skip-gram draws the negatives once per
        window (:func:`train_part_shared`), CBOW without subword rows once per
        :data:`CBOW_BATCH` consecutive centre words (:func:`train_part_cbow_shared`).
    neg_prob : numpy.ndarray of shape (n_words,), float32
    neg_alias : numpy.ndarray of shape (n_words,), int32
        Alias table of the noise distribution (``sampling.alias_table``).
    codes : numpy.ndarray of shape (n_words, L), uint8
    points : numpy.ndarray of shape (n_words, L), int32
    code_lengths : numpy.ndarray of shape (n_words,), int32
        Huffman tree (``sampling.huffman_tree``); one dummy column without HS.
    sigmoid, log_sigmoid : numpy.ndarray of shape (EXP_TABLE_SIZE,), float32
        ``sampling.sigmoid_tables``.
    sub_indptr : numpy.ndarray of shape (n_words + 1,) or (0,), int64
    sub_indices : numpy.ndarray of shape (nnz,), int32
        CSR of the input rows of each word (FastText: its own row, then its
        n-gram bucket rows); empty arrays: word ``w`` is row ``w``.
    sync_tokens : int
        0: lock-free (Hogwild) threads; ``k > 0``: deterministic phases of
        ``k`` centre tokens per part (see the module docstring).
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


class Weights(NamedTuple):
    """The matrices a fit trains, updated in place; or one part's working copies of them.

    Attributes
    ----------
    syn0 : numpy.ndarray of shape (n_rows, dim), float32
        Input vectors (Doc2Vec: the word rows, then the document rows).
    syn1neg : numpy.ndarray of shape (n_words, dim) or (0, dim), float32
        Output vectors of negative sampling.
    syn1 : numpy.ndarray of shape (n_words - 1, dim) or (0, dim), float32
        Inner-node vectors of hierarchical softmax.
    """

    syn0: np.ndarray
    syn1neg: np.ndarray
    syn1: np.ndarray


class Subwords(NamedTuple):
    """FastText's input rows of each word, as CSR: word ``w``'s rows are
    ``indices[indptr[w]:indptr[w + 1]]`` (its own row, then its n-gram bucket rows)."""

    indptr: np.ndarray
    indices: np.ndarray


class Documents(NamedTuple):
    """Doc2Vec's document rows and mode.

    Attributes
    ----------
    rows : numpy.ndarray of shape (n_pieces,), int64
        Row of ``syn0`` holding the document vector of each piece.
    dm : bool
        PV-DM (True) or PV-DBOW (False).
    dbow_words : bool
        PV-DBOW also trains skip-gram word pairs.
    """

    rows: np.ndarray
    dm: bool
    dbow_words: bool


class Chunk(NamedTuple):
    """A corpus chunk's layout: its tokens, where each document starts, and how a word
    reaches its input rows.

    Attributes
    ----------
    ids : numpy.ndarray of shape (n_tokens,), int32
        Vocabulary ids of the chunk after subsampling.
    offsets : numpy.ndarray of shape (n_docs + 1,), int64
        Document ``d`` is ``ids[offsets[d]:offsets[d + 1]]``.
    sub : Subwords or None
        ``None``: word ``w`` is row ``w``. Its type, not its value, selects the code numba
        compiles (no subword branch in Word2Vec's loops).
    doc : Documents or None
        Doc2Vec's document rows; ``None``: Word2Vec/FastText.
    """

    ids: np.ndarray
    offsets: np.ndarray
    sub: object
    doc: object


class Span(NamedTuple):
    """The centre tokens of one call of a train part, and its slice's learning rate.

    Attributes
    ----------
    start, end : int
        Token positions (in ``Chunk.ids``) to train as centre words; windows extend over
        the whole document, never across documents.
    part_start, part_tokens : int
        First token and length of the part's slice: the learning rate decays linearly from
        ``alpha_start`` to ``alpha_end`` over it.
    alpha_start, alpha_end : float
    """

    start: int
    end: int
    part_start: int
    part_tokens: int
    alpha_start: float
    alpha_end: float


class PartModel(NamedTuple):
    """One train part's access to the model: the matrices it reads and writes, how it
    reaches their rows, and the output layer's tables. Bundled once per call.

    Attributes
    ----------
    weights : Weights
        The shared matrices (the rows a workspace slot copies from).
    work : Weights
        The working matrices (:func:`_working`): the shared ones (lock-free) or the part's
        buffers.
    ws : skembed.kernels._phases.Workspace or None
        The part's row buffers; ``None``: lock-free (decided at compile time).
    c : KernelConfig
        The output layer's tables (Huffman tree, noise distribution, sigmoid tables).
    outs : numpy.ndarray of shape (2 * (negative + CBOW_BATCH),), int64
        The part's scratch of output rows (``Scratch.outputs``).
    """

    weights: Weights
    work: Weights
    ws: object
    c: KernelConfig
    outs: np.ndarray


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
#: consecutive CBOW centre words that share one draw of negatives (``shared_negatives``,
#: :func:`skembed.kernels.word2vec.train_part_cbow_shared`; HogBatch, Ji et al. 2016).
#: 2: on debdocs (11.4M tokens, 3 seeds) a batch of 4 lost 0.027 Google-analogy accuracy to
#: gensim (0.158 vs 0.184), 2 stays within 0.01 on every score (0.177); 4 was 1.35x the words/s
#: of per-example negatives on BBC News, 2 1.20x (docs/benchmarks/word2vec.md)
CBOW_BATCH = 2
#: entries (rows) of padding after each part's block of every per-part scratch and workspace
#: array (``_phases._scratch``, ``_phases._workspaces``): at least 128 bytes, so no two
#: threads ever write the same cache line (or its prefetch pair). Without it both parts'
#: slot counters shared one line, written at every row access of the deterministic mode.
PART_PAD = 32
#: non-literal constants for the helpers' integer and flag arguments: a literal ``0`` or
#: ``True`` types as ``Literal[int](0)``, and numba compiles a separate helper for every
#: literal it is called with (each helper is its own compiled function, LLVM-inlined)
_ZERO, _ONE = np.int64(0), np.int64(1)
_TRUE, _FALSE = np.bool_(True), np.bool_(False)
#: options of the helpers only compiled code calls: compiled once each, LLVM-inlined, no numba
#: runtime, and neither wrapper numba builds for every function (the CPython one, the C one for
#: first-class calls), which shortens every first fit's compilation (``docs/benchmarks/word2vec.md``).
#: Python must not call them (no entry point: the interpreter crashes); tests use an ``njit``
#: function, and tests/kernels/test_core.py checks that no Python function of the package does.
#: ``fastmath`` is named here, for every helper, because numba compiles a callee that names
#: none with its first caller's and caches that one machine code for every later caller (a
#: test calling ``_table_index`` from Python first changed the vectors of every fit in the
#: process and in the disk cache; tests/kernels/test_core.py). The train parts, the helpers'
#: callers, use it; helpers also called without it (``_lcg``, ``_uniform`` by chunk
#: preparation) compute exactly, so it changes nothing there.
_INNER = dict(
    cache=True,
    nogil=True,
    fastmath=_FASTMATH,
    _nrt=False,
    forceinline=True,
    no_cpython_wrapper=True,
    no_cfunc_wrapper=True,
)
#: the train parts' options: as :data:`_INNER` (only the entry points call them), fast-math
_PART = dict(
    cache=True,
    nogil=True,
    fastmath=_FASTMATH,
    _nrt=False,
    no_cpython_wrapper=True,
    no_cfunc_wrapper=True,
)


@njit(**_INNER)
def _lcg(state):
    return state * _MUL + _INC


@njit(**_INNER)
def _uniform(state):
    """A float32 in [0, 1) from 24 high bits of the LCG state."""
    return np.float32((state >> _S16) & _M24) * _INV24


@njit(cache=True, nogil=True, _nrt=False, forceinline=True, no_cfunc_wrapper=True)
def _seed_state(seed, part):
    s = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(part + 1) * np.uint64(
        0xBF58476D1CE4E5B9
    )
    s ^= s >> np.uint64(31)
    for _ in range(4):
        s = _lcg(s)
    return s


@njit(
    cache=True, nogil=True, fastmath=_FASTMATH, _nrt=False, forceinline=True, no_cfunc_wrapper=True
)
def _table_index(f):
    """Index of score ``f`` in the sigmoid tables (0 outside ``(-MAX_EXP, MAX_EXP)`` or NaN)."""
    if f > -_MAXE and f < _MAXE:
        return np.int64((f + _MAXE) * _TABLE_SCALE)
    return 0


@njit(**_INNER)
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


@njit(**_INNER)
def _score_update(L, li, out, oi, err, ei, label, alpha, c, dim):
    """One binary logistic example: input ``L[li]``, output row ``out[oi]`` (updated in
    place), input gradient accumulated in ``err[ei]``; ``c`` the :class:`KernelConfig`
    (its sigmoid tables). Returns (loss, nan_flag).

    Rows are addressed two-dimensionally and the helper has no data-dependent branch around
    array code, so numba's reference-count pruning removes every incref of its arguments.
    """
    sigmoid = c.sigmoid
    log_sigmoid = c.log_sigmoid
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


@njit(**_INNER)
def _block_scores(W1, o, L, n, sc, j, dim):
    """``sc[j, i] = L[i] . W1[o]`` for ``i < n``: one output row against ``n`` input rows.

    Four (then two) input rows per pass over ``W1[o]``, each with its own accumulator,
    so the dot products pipeline instead of waiting on one another; each sum is added in
    the order of a dot product alone (bit-identical). Loops only (no reference counting).
    Skip-gram and CBOW with shared negatives compute every score of a block with it
    before any gradient (HogBatch, Ji et al. 2016): 1.2-1.4x their words/s.
    """
    zero = np.float32(0.0)
    i = 0
    while i + 3 < n:
        f0 = zero
        f1 = zero
        f2 = zero
        f3 = zero
        for k in range(dim):
            wk = W1[o, k]
            f0 += L[i, k] * wk
            f1 += L[i + 1, k] * wk
            f2 += L[i + 2, k] * wk
            f3 += L[i + 3, k] * wk
        sc[j, i] = f0
        sc[j, i + 1] = f1
        sc[j, i + 2] = f2
        sc[j, i + 3] = f3
        i += 4
    while i + 1 < n:
        f0 = zero
        f1 = zero
        for k in range(dim):
            wk = W1[o, k]
            f0 += L[i, k] * wk
            f1 += L[i + 1, k] * wk
        sc[j, i] = f0
        sc[j, i + 1] = f1
        i += 2
    for r in range(i, n):
        f = zero
        for k in range(dim):
            f += L[r, k] * W1[o, k]
        sc[j, r] = f


@njit(**_INNER)
def _input_gradient(err, i, W1, outs, sc, j0, j1, dim):
    """``err[i] += sc[j, i] * W1[outs[j]]`` for ``j0 <= j < j1``, in that order.

    Two output rows per pass over ``err[i]`` (one load and store of it per pair, not per
    row); the additions to each element are those of the row-by-row loop, in its order.
    """
    j = j0
    while j + 1 < j1:
        g0 = sc[j, i]
        g1 = sc[j + 1, i]
        o0 = outs[j]
        o1 = outs[j + 1]
        for k in range(dim):
            e = err[i, k]
            e += g0 * W1[o0, k]
            e += g1 * W1[o1, k]
            err[i, k] = e
        j += 2
    for q in range(j, j1):
        g = sc[q, i]
        o = outs[q]
        for k in range(dim):
            err[i, k] += g * W1[o, k]


@njit(**_INNER)
def _output_gradient(outg, j, L, sc, n, dim):
    """``outg[j] = sum of sc[j, i] * L[i]`` over ``i < n``, added in order, two per pass."""
    for k in range(dim):
        outg[j, k] = np.float32(0.0)
    i = 0
    while i + 1 < n:
        g0 = sc[j, i]
        g1 = sc[j, i + 1]
        for k in range(dim):
            a = outg[j, k]
            a += g0 * L[i, k]
            a += g1 * L[i + 1, k]
            outg[j, k] = a
        i += 2
    for r in range(i, n):
        g = sc[j, r]
        for k in range(dim):
            outg[j, k] += g * L[r, k]


@njit(**_INNER)
def _slot(mat, r, slot, rows, buf, count, m):
    """Slot of row ``r`` of ``mat`` in one part's buffer (deterministic mode).

    The first access of a phase copies the shared row into the buffer (``slot`` maps
    rows to slots, ``rows`` slots to rows, ``count[m]`` is the number of slots in use);
    the part then reads and writes only ``buf[slot]``. A hit is one load: the miss is a
    loop run 0 or 1 times, not an ``if`` (numba keeps the reference counts of the array
    arguments around an ``if``, and an earlier branch-free form stored to ``count``,
    ``slot`` and ``rows`` at every access: CBOW ran 1.06-1.10x slower on one thread).
    """
    s = np.int64(slot[r])
    for _ in range(np.int64(s < 0)):
        s = count[m]
        count[m] = s + 1
        slot[r] = s
        rows[s] = r
        for k in range(buf.shape[1]):
            buf[s, k] = mat[r, k]
    return s


@njit(**_INNER)
def _in_slot(syn0, r, ws):
    """Row of the working input matrix holding input row ``r``: ``r`` itself (``ws is None``,
    lock-free: the shared matrix) or its slot in the part's buffer
    (:class:`~skembed.kernels._phases.Workspace`).

    ``ws is None`` is decided when numba compiles the caller (its type is ``none``), so the
    lock-free variant has no branch and no buffer code.
    """
    if ws is None:
        return np.int64(r)
    b = ws.syn0
    return _slot(syn0, np.int64(r), b.slot, b.rows, b.copies, ws.count, np.int64(0))


@njit(**_INNER)
def _neg_slot(syn1neg, r, ws):
    if ws is None:
        return np.int64(r)
    b = ws.syn1neg
    return _slot(syn1neg, np.int64(r), b.slot, b.rows, b.copies, ws.count, np.int64(1))


@njit(**_INNER)
def _node_slot(syn1, r, ws):
    if ws is None:
        return np.int64(r)
    b = ws.syn1
    return _slot(syn1, np.int64(r), b.slot, b.rows, b.copies, ws.count, np.int64(2))


@njit(**_INNER)
def _working(weights, ws):
    """The matrices the part reads and writes: the shared ones (lock-free) or its buffers."""
    if ws is None:
        return weights
    return Weights(ws.syn0.copies, ws.syn1neg.copies, ws.syn1.copies)


@njit(**_INNER)
def _buffers_full(ws):
    """True if one more centre word might overflow a buffer (phase must end)."""
    count = ws.count
    need = ws.need
    return (
        count[0] + need[0] > ws.syn0.rows.shape[0] - PART_PAD
        or count[1] + need[1] > ws.syn1neg.rows.shape[0] - PART_PAD
        or count[2] + need[2] > ws.syn1.rows.shape[0] - PART_PAD
    )


@njit(**_INNER)
def _draw_negative(state, n_words, neg_prob, neg_alias):
    """One noise word from the alias table (two LCG steps, word2vec.c's order); (word, state)."""
    state = _lcg(state)
    t = np.int64((state >> _S16) % np.uint64(n_words))
    state = _lcg(state)
    keep = np.int64(_uniform(state) < neg_prob[t])
    return t + (1 - keep) * (np.int64(neg_alias[t]) - t), state


@njit(**_INNER)
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


@njit(**_INNER)
def _score_shared_noise(V, model, targets, n_targets, state, alpha, dim):
    """Shared negatives of one fixed input: ``c.negative`` noise words drawn once.

    Each noise word ``n`` scores once against the input ``V[0]`` (label 0, gradient into
    ``V[1]``, its working output row updated in place) with the learning rate
    ``alpha * m``, ``m`` the number of positives ``targets[:n_targets]`` it differs from (so
    its gradient counts once per such pair; a noise word equal to every positive is
    skipped). ``model``: the part's :class:`PartModel` (its ``outs`` holds the draw).
    FastText skip-gram's centre bag (:func:`skembed.kernels.word2vec.train_part_bag`) and
    PV-DBOW's document vector (:func:`skembed.kernels.doc2vec.train_part_dbow_shared`) share
    it. Loops only (the skip is a loop run 0 or 1 times), so no reference counting
    survives. Returns (loss, state, nan_flag).
    """
    c = model.c
    ws = model.ws
    W1 = model.work.syn1neg
    syn1neg = model.weights.syn1neg
    outs = model.outs
    negative = c.negative
    n_words = c.neg_prob.size
    zero = np.float32(0.0)
    loss = 0.0
    bad = False
    for j in range(negative):
        tw, state = _draw_negative(state, n_words, c.neg_prob, c.neg_alias)
        outs[j] = tw
    for j in range(negative):
        tw = outs[j]
        m = 0
        for i in range(n_targets):
            m += targets[i] != tw
        for _ in range(np.int64(m > 0)):
            o = _neg_slot(syn1neg, tw, ws)
            g_alpha = alpha * np.float32(m)
            ls, b1 = _score_update(V, _ZERO, W1, o, V, _ONE, zero, g_alpha, c, dim)
            loss += ls * m
            bad |= b1
    return loss, state, bad


@njit(**_INNER)
def _output_layer(L, li, w, err, ei, model, state, alpha, dim):
    """Train the output layer for the input vector ``L[li]`` and target word ``w``.

    Hierarchical softmax over ``w``'s Huffman code (when ``c.hs``), then ``w`` as the
    positive example and ``c.negative`` noise words drawn from the alias table with the LCG
    ``state`` (word2vec.c's order of draws). ``model``: the part's :class:`PartModel`
    (the shared and working matrices, the workspace, the :class:`KernelConfig` ``c`` and
    an int64 scratch of ``negative + 1`` entries); ``err[ei]`` accumulates the gradient for
    the input rows. Returns (loss, new_state, nan_flag).

    Loops only, no branch around array code: numba prunes the reference counts of the
    arguments (an early ``return``/``continue`` here costs ~15 increfs per call).
    """
    c = model.c
    ws = model.ws
    outs = model.outs
    W1 = model.work.syn1neg
    W2 = model.work.syn1
    syn1neg = model.weights.syn1neg
    syn1 = model.weights.syn1
    negative = c.negative
    codes = c.codes
    points = c.points
    loss = np.float32(0.0)
    bad = False
    for j in range(c.code_lengths[w] * np.int64(c.hs)):
        s = _node_slot(syn1, points[w, j], ws)
        ls, b = _score_update(L, li, W2, s, err, ei, np.float32(1 - codes[w, j]), alpha, c, dim)
        loss += ls
        bad |= b
    n_out, state = _draw_targets(w, negative, c.neg_prob, c.neg_alias, outs, state)
    for j in range(n_out * np.int64(negative > 0)):
        s = _neg_slot(syn1neg, outs[j], ws)
        ls, b = _score_update(L, li, W1, s, err, ei, np.float32(j == 0), alpha, c, dim)
        loss += ls
        bad |= b
    return loss, state, bad


@njit(**_INNER)
def _gather_rows(W0, syn0, u, sub, ws, L, li, slots, n, dim):
    """Add the input rows of word ``u`` to ``L[li]``, recording their working rows.

    ``sub``: ``None`` (word ``u`` is row ``u``) or the CSR ``(indptr, indices)`` of the
    input rows of each word (FastText's bags), decided at compile time. The working row of
    each (:func:`_in_slot`) is written to ``slots[n], slots[n + 1], ...``, so the update of
    the same rows (:func:`_add_rows`) needs no second buffer lookup. Returns the new ``n``.
    """
    if sub is None:
        s = _in_slot(syn0, np.int64(u), ws)  # int64 rows: one _in_slot for all
        slots[n] = s
        for k in range(dim):
            L[li, k] += W0[s, k]
        return n + 1
    indptr, indices = sub
    for r in range(indptr[u], indptr[u + 1]):
        s = _in_slot(syn0, np.int64(indices[r]), ws)
        slots[n] = s
        n += 1
        for k in range(dim):
            L[li, k] += W0[s, k]
    return n


@njit(**_INNER)
def _gather_input(W0, syn0, u, sub, ws, L, li, slots, n, dim):
    """Input vector of word ``u`` into ``L[li]``: its row, or the mean of its subword rows
    (``sub`` as :func:`_gather_rows`, whose ``slots``/``n`` bookkeeping it shares).
    Returns the new ``n``."""
    if sub is None:
        s = _in_slot(syn0, np.int64(u), ws)  # int64 rows: one _in_slot for all
        slots[n] = s
        for k in range(dim):
            L[li, k] = W0[s, k]
        return n + 1
    for k in range(dim):
        L[li, k] = np.float32(0.0)
    n1 = _gather_rows(W0, syn0, u, sub, ws, L, li, slots, n, dim)
    inv = np.float32(1.0) / np.float32(n1 - n if n1 - n > 1 else 1)
    for k in range(dim):
        L[li, k] *= inv
    return n1


@njit(**_INNER)
def _add_rows(W0, slots, n0, n1, grad, gi, dim):
    """Add ``grad[gi]`` in full to the working rows ``slots[n0:n1]`` (recorded by
    :func:`_gather_rows`), in their order."""
    for q in range(n0, n1):
        s = slots[q]
        for k in range(dim):
            W0[s, k] += grad[gi, k]


@njit(**_INNER)
def _part_start(offsets, span):
    """Prologue of a part's step, shared by every ``train_part``: the learning rate at the
    slice's first token and its step per token (linear decay over ``span.part_tokens``),
    and the document of position ``span.start``. Called once per step, outside the token
    loop. Returns ``(alpha0, alpha_step, d)`` (float32, float32, int)."""
    p_start = span.start
    part_tokens = span.part_tokens
    alpha_start = span.alpha_start
    alpha_step = np.float32(
        (span.alpha_end - alpha_start) / (part_tokens if part_tokens > 1 else 1)
    )
    alpha0 = np.float32(alpha_start)
    # the last d with offsets[d] <= p_start (numba's np.searchsorted compiled 0.35 s more)
    lo = _ZERO
    hi = np.int64(offsets.shape[0])
    while lo < hi:
        mid = (lo + hi) >> 1
        if offsets[mid] <= p_start:
            lo = mid + 1
        else:
            hi = mid
    return alpha0, alpha_step, lo - 1


@njit(**_INNER)
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
        lo = p - window + b
        lo = offsets[d] if offsets[d] > lo else lo  # not max(): numba compiles builtins apart
        hi = p + window + 1 - b
        hi = offsets[d + 1] if offsets[d + 1] < hi else hi
    return d, ids[p], lo, hi, state

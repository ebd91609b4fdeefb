"""Compiled CPU kernels of the word2vec family (skip-gram / CBOW, negative sampling / HS).

numba only (no scikit-learn, no torch). The estimators
(:class:`skembed.text.word2vec._word2vec.Word2VecTransformer`, FastText) call them on
corpus *chunks*, so memory does not grow with the corpus:

1. :func:`prepare_chunk` maps a chunk's raw word ids to vocabulary ids, drops
   out-of-vocabulary tokens and applies frequent-word subsampling (decided
   once per token per epoch, before training, with the LCG);
2. :func:`~skembed.kernels.scheduler.train_word2vec_chunk` trains on the kept tokens in ``n_parts`` contiguous
   slices of documents that the threads execute (:func:`~skembed.kernels.scheduler.run_phases`),
   deterministically (the result depends on ``n_parts``, not the thread count) or lock-free.

Signature of :func:`skembed.kernels.scheduler.train_word2vec_chunk` (both estimators call it through
:class:`skembed.text.word2vec._training.NumbaEngine`)::

    stats = train_word2vec_chunk(
        syn0,          # float32 (n_rows, dim)   input vectors, updated in place
        syn1neg,       # float32 (n_words, dim)  output vectors (negative sampling)
        syn1,          # float32 (n_words - 1, dim) inner-node vectors (HS)
        ids,           # int32   (n_tokens,)     vocabulary ids of the chunk (after subsampling)
        offsets,       # int64   (n_docs + 1,)   document d is ids[offsets[d]:offsets[d+1]]
        config,        # KernelConfig: the settings and vocabulary-sized tables of the fit
        alpha_start,   # float: learning rate at the chunk's first token
        alpha_end,     # float: learning rate at its last token (linear in between)
        seed,          # int: seed of the per-part LCGs
        n_parts,       # int >= 1: contiguous slices trained in parallel (the threads execute them)
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
context row (with shared negatives and no subword rows,
:func:`train_part_cbow_shared`, for :data:`CBOW_BATCH` consecutive centre words
at once). Windows
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
  (:data:`BUFFER_FLOATS` per matrix and part), so memory stays bounded.
  Other threads' updates are seen one phase late (like synchronous
  data-parallel SGD with per-part local steps).
- ``sync_tokens == 0`` (lock-free): threads update the shared rows directly,
  without locks (Hogwild, as word2vec.c and gensim), so results vary
  slightly from run to run.

With ``n_parts == 1`` both are the same sequential SGD (no buffers),
bit-reproducible.

No reference counting in the hot loops: numba emits ``NRT_incref``/``NRT_decref``
(a call and an atomic add) around row views and around the array arguments of an
inlined helper whose body branches around array code, and cannot always prune them
(numba issue #2345). So the train parts and their helpers are compiled without numba's
runtime (``_nrt=False``: no reference counting at all, no allocation) and LLVM-inlined
into one another; each train part is a few named steps (``_skipgram_pair``,
``_gather_window``, ``_cbow_batch`` ...) over the part's :class:`~skembed.kernels._core.PartModel`
and scratch arrays, which bind the arrays they write to locals, address every row as
``matrix[row, k]`` of a *working* matrix (the shared one, or the part's buffer in
deterministic mode), and look buffer slots up once per row and update (:func:`_slot`; a
gather records the working rows it read, :func:`_gather_rows`, and the update of the
same rows reuses them, :func:`_add_rows`).
``tests/kernels/test_kernels_refcount.py`` counts the increfs with ``NUMBA_DEBUG_NRT=1``:
they do not grow with the number of tokens (they were 6 to 1,260 per token).

Compilation: the first call of each variant compiles it (3-7 s on 2 cores);
the machine code is cached on disk (``cache=True``), later processes load it
in well under a second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._core import (  # noqa: F401  (KernelConfig, prepare_chunk and the pair builders are this module's API)
    _INNER,
    _ONE,
    _PART,
    _S16,
    _TRUE,
    _ZERO,
    CBOW_BATCH,
    KernelConfig,
    PartModel,
    _add_rows,
    _block_scores,
    _buffers_full,
    _centre,
    _draw_negative,
    _draw_targets,
    _gather_input,
    _gather_rows,
    _in_slot,
    _input_gradient,
    _lcg,
    _logistic,
    _neg_slot,
    _output_gradient,
    _output_layer,
    _part_start,
    _score_shared_noise,
    _score_update,
    _seed_state,
    _table_index,
    _working,
)
from ._prepare import prepare_chunk
from .sampling import EXP_TABLE_SIZE
from .windows import cbow_windows, skipgram_pairs  # noqa: F401  (re-exported)

__all__ = [
    "KernelConfig",
    "prepare_chunk",
    "train_part",
    "train_part_shared",
    "train_part_cbow_shared",
    "train_part_bag",
    "skipgram_pairs",
    "cbow_windows",
]


@njit(**_INNER)
def _skipgram_pair(model, src, tgt, sub, tmp, state, alpha, dim):
    """One skip-gram example: the input vector of word ``src`` (its row, or its subword
    bag's mean) predicts word ``tgt``; returns ``(loss, state, nan_flag)``. The input rows
    are not updated when the flag is set."""
    W0 = model.work.syn0
    V = tmp.example  # rows: 0 the input vector (neu1), 1 its gradient (neu1e)
    slots = tmp.slots  # working rows of the input vector's rows
    n_in = _gather_input(W0, model.weights.syn0, src, sub, model.ws, V, _ZERO, slots, _ZERO, dim)
    for k in range(dim):
        V[1, k] = np.float32(0.0)
    ls, state, bad = _output_layer(V, 0, tgt, V, 1, model, state, alpha, dim)
    if not bad:
        _add_rows(W0, slots, _ZERO, n_in, V, _ONE, dim)
    return ls, state, bad


@njit(**_INNER)
def _cbow_example(model, chunk, tmp, p, lo, hi, w, state, alpha, dim):
    """One CBOW example: the mean of the input rows of the context ``lo..hi-1`` except ``p``
    predicts ``w``. Returns ``(loss, state, nan_flag, n_examples)``: no example (0) without
    a context word; the input rows are not updated when the flag is set."""
    W0 = model.work.syn0
    V = tmp.example
    slots = tmp.slots
    ids, sub = chunk.ids, chunk.sub
    zero = np.float32(0.0)
    for k in range(dim):
        V[0, k] = zero
        V[1, k] = zero
    cw = _ZERO
    for cpos in range(lo, hi):
        if cpos != p:
            cw = _gather_rows(
                W0, model.weights.syn0, ids[cpos], sub, model.ws, V, 0, slots, cw, dim
            )
    if cw == 0:
        return np.float32(0.0), state, False, 0.0
    inv = np.float32(1.0) / np.float32(cw)
    for k in range(dim):
        V[0, k] *= inv
    ls, state, bad = _output_layer(V, 0, w, V, 1, model, state, alpha, dim)
    if not bad:
        _add_rows(W0, slots, _ZERO, cw, V, _ONE, dim)
    return ls, state, bad, 1.0


@njit(**_PART)
def train_part(weights, chunk, c, span, state, ws, tmp):
    """Train on the centre tokens ``span.start .. span.end - 1`` of one thread's slice.

    Parameters
    ----------
    weights : skembed.kernels._core.Weights
        The shared matrices, updated in place (through ``ws`` in deterministic mode).
    chunk : skembed.kernels._core.Chunk
        The chunk's ids and document offsets; ``chunk.sub`` the input rows of each word
        (FastText subwords), or ``None``: word ``w`` is row ``w`` (``c.sub_indptr``/
        ``c.sub_indices`` are not read).
    c : KernelConfig
    span : skembed.kernels._core.Span
        The centre tokens to train (``span.start .. span.end - 1``) and the learning-rate
        schedule of the part's slice.
    state : uint64
        LCG state (window draws and negatives).
    ws : skembed.kernels._phases.Workspace or None
        The part's row buffers (``_part_workspace``): read and write private
        row copies instead of the shared matrices (the deterministic mode of
        :func:`~skembed.kernels.scheduler.train_word2vec_chunk`); ``None``: the shared rows (lock-free).
    tmp : skembed.kernels._phases.Scratch
        The part's scratch arrays, allocated by the caller.

    Returns
    -------
    loss, n_examples : float
    nan : bool
    p_next : int
        First position not trained (``span.end`` unless a buffer filled up).
    state : uint64

    Notes
    -----
    The structures are unpacked once here and every row is addressed as
    ``matrix[row, k]``: the loop does no reference counting (numba cannot prune the
    increfs of row views and of array arguments passed around branches).
    """
    ids, offsets, sub = chunk.ids, chunk.offsets, chunk.sub
    dim = weights.syn0.shape[1]
    window = c.window
    model = PartModel(weights, _working(weights, ws), ws, c, tmp.outputs)
    alpha0, alpha_step, d = _part_start(offsets, span)
    p_start, p_end, part_start = span.start, span.end, span.part_start
    loss_sum = 0.0
    n_examples = 0.0
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, _TRUE, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        if not c.sg:
            ls, state, bad, n = _cbow_example(model, chunk, tmp, p, lo, hi, w, state, alpha, dim)
            if bad:
                return loss_sum, n_examples, True, p, state
            loss_sum += ls
            n_examples += n
            continue
        for cpos in range(lo, hi):
            if cpos == p:
                continue
            # word2vec: the context word's vector predicts the centre word; FastText
            # (subword rows): the centre word's n-gram bag predicts the context word
            src, tgt = np.int64(ids[cpos]), np.int64(w)
            if sub is not None:
                src, tgt = tgt, src
            ls, state, bad = _skipgram_pair(model, src, tgt, sub, tmp, state, alpha, dim)
            if bad:
                return loss_sum, n_examples, True, p, state
            loss_sum += ls
            n_examples += 1.0
    return loss_sum, n_examples, False, p_end, state


@njit(**_INNER)
def _gather_window(model, chunk, tmp, p, lo, hi, dim):
    """The input vectors of the context ``lo..hi-1`` except ``p`` into ``tmp.inputs`` (their
    gradients zeroed), the first working row of each in ``tmp.ints``; returns their number."""
    ids, sub = chunk.ids, chunk.sub
    l1s = tmp.inputs
    err = tmp.input_grads
    ctx = tmp.ints  # ctx[i]: first of context word i's working rows in ``slots``
    slots = tmp.slots
    W0 = model.work.syn0
    syn0 = model.weights.syn0
    n_ctx = _ZERO
    ns = _ZERO
    for cpos in range(lo, hi):
        if cpos == p:
            continue
        ctx[n_ctx] = ns
        ns = _gather_input(W0, syn0, ids[cpos], sub, model.ws, l1s, n_ctx, slots, ns, dim)
        for k in range(dim):
            err[n_ctx, k] = np.float32(0.0)
        n_ctx += 1
    ctx[n_ctx] = ns
    return n_ctx


@njit(**_INNER)
def _window_scores(model, w, tmp, n_ctx, state, dim):
    """Draw the window's targets (``w`` and the noise words) into ``tmp.outputs`` as working
    rows and score each against every context input (``tmp.scores``); (n_out, state)."""
    c = model.c
    outs = tmp.outputs
    W1 = model.work.syn1neg
    n_out, state = _draw_targets(w, c.negative, c.neg_prob, c.neg_alias, outs, state)
    for j in range(n_out):
        outs[j] = _neg_slot(model.weights.syn1neg, outs[j], model.ws)
    for j in range(n_out):  # every score first, from the same parameters
        _block_scores(W1, outs[j], tmp.inputs, n_ctx, tmp.scores, j, dim)
    return n_out, state


@njit(**_INNER)
def _window_gradients(sc, n_out, n_ctx, c, alpha, loss_sum):
    """Scores ``sc[j, i]`` to gradients in place (output 0 the positive); ``loss_sum`` plus
    their losses, in order, and the NaN flag (set: stopped at the non-finite score)."""
    sigmoid = c.sigmoid
    log_sigmoid = c.log_sigmoid
    for j in range(n_out):
        lab = np.float32(j == 0)
        for i in range(n_ctx):
            f = sc[j, i]
            idx = _table_index(f)
            g, ls, bad = _logistic(
                f, lab, alpha, sigmoid[idx], log_sigmoid[idx], log_sigmoid[EXP_TABLE_SIZE - 1 - idx]
            )
            if bad:
                return loss_sum, True
            loss_sum += ls
            sc[j, i] = g
    return loss_sum, False


@njit(**_INNER)
def _window_update(model, tmp, n_out, n_ctx, dim):
    """Apply a window's gradients: ``err[i] += g[j, i] W1[o_j]`` over ``j``, ``outg[j]`` the
    sum of ``g[j, i] l1s[i]``, then the output rows and each context word's input rows."""
    W0 = model.work.syn0
    W1 = model.work.syn1neg
    l1s = tmp.inputs
    err = tmp.input_grads
    outg = tmp.output_grads
    outs = tmp.outputs
    ctx = tmp.ints
    sc = tmp.scores
    for i in range(n_ctx):
        _input_gradient(err, i, W1, outs, sc, 0, n_out, dim)
    for j in range(n_out):
        _output_gradient(outg, j, l1s, sc, n_ctx, dim)
    for j in range(n_out):
        o = outs[j]
        for k in range(dim):
            W1[o, k] += outg[j, k]
    for i in range(n_ctx):
        _add_rows(W0, tmp.slots, ctx[i], ctx[i + 1], err, i, dim)


@njit(**_PART)
def train_part_shared(weights, chunk, c, span, state, ws, tmp):
    """Skip-gram with negative samples shared by all context words of a window.

    Same parameters and return value as :func:`train_part` (``n_examples``
    counts pairs). For a centre word ``w`` with ``K`` context words,
    ``c.negative`` noise words are drawn once; the ``K x (1 + negative)``
    scores between the context input vectors and the output vectors of ``w``
    and the noise words are computed from the same parameters, then all rows
    are updated (Ji et al. 2016). Each output row is read once per window
    instead of once per pair. Every score of the window is computed before any
    gradient (``_core._block_scores``, four context words per pass over an output
    row), then the input and output gradients (``_input_gradient``,
    ``_output_gradient``): the same float32 operations in the same order as a
    pair-by-pair loop, 1.2-1.4x faster (BBC News, one thread).
    """
    ids, offsets = chunk.ids, chunk.offsets
    dim = weights.syn0.shape[1]
    window = c.window
    model = PartModel(weights, _working(weights, ws), ws, c, tmp.outputs)
    sc = tmp.scores  # sc[j, i]: score, then gradient, of output j and context word i
    alpha0, alpha_step, d = _part_start(offsets, span)
    p_start, p_end, part_start = span.start, span.end, span.part_start
    loss_sum = 0.0
    n_examples = 0.0
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, _TRUE, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        n_ctx = _gather_window(model, chunk, tmp, p, lo, hi, dim)
        if n_ctx == 0:
            continue
        n_out, state = _window_scores(model, w, tmp, n_ctx, state, dim)
        loss_sum, bad = _window_gradients(sc, n_out, n_ctx, c, alpha, loss_sum)
        if bad:
            return loss_sum, n_examples, True, p, state
        _window_update(model, tmp, n_out, n_ctx, dim)
        n_examples += n_ctx
    return loss_sum, n_examples, False, p_end, state


@njit(**_INNER)
def _cbow_batch(model, chunk, span, tmp, p, d, alpha0, alpha_step, state, dim):
    """Gather up to :data:`CBOW_BATCH` centre words from position ``p`` on that have a
    context: row ``nb`` of ``tmp.inputs`` the context mean (its gradient zeroed),
    ``tmp.alphas[nb]`` the learning rate, ``tmp.ints[4 nb + 1 .. 4 nb + 3]`` its first and
    end slot and its centre word. Returns ``(nb, p, d, state)``, ``p`` the next position."""
    ids, offsets, sub = chunk.ids, chunk.offsets, chunk.sub
    W0 = model.work.syn0
    syn0 = model.weights.syn0
    ws = model.ws
    window = model.c.window
    l1s = tmp.inputs  # row i: context mean of the batch's centre i
    err = tmp.input_grads  # row i: its input gradient
    alphas = tmp.alphas  # learning rate of centre i
    info = tmp.ints  # 4 i .. 4 i + 3: centre position, window lo, hi, centre word
    slots = tmp.slots  # working rows of the batch's context words, in window order
    p_end, part_start = span.end, span.part_start
    zero = np.float32(0.0)
    nb = _ZERO
    n_slots = _ZERO
    while nb < CBOW_BATCH and p < p_end:
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, _TRUE, state)
        for k in range(dim):
            l1s[nb, k] = zero
        first = n_slots
        for cpos in range(lo, hi):
            if cpos != p:
                n_slots = _gather_rows(W0, syn0, ids[cpos], sub, ws, l1s, nb, slots, n_slots, dim)
        cw = n_slots - first
        if cw > 0:
            inv = np.float32(1.0) / np.float32(cw)
            for k in range(dim):
                l1s[nb, k] *= inv
                err[nb, k] = zero
            alphas[nb] = alpha0 + alpha_step * np.float32(p - part_start)
            info[4 * nb + 1] = first
            info[4 * nb + 2] = n_slots
            info[4 * nb + 3] = w
            nb += 1
        p += 1
    return nb, p, d, state


@njit(**_INNER)
def _cbow_scores(model, tmp, nb, state, dim):
    """Draw the batch's noise words and compute every score first, from the same parameters
    (independent dot products pipeline): ``sc[i, i]`` row ``i`` against its own centre word,
    ``sc[j, i]`` against noise word ``j``. ``outs[:nb + negative]`` become the working rows
    (positives, then noise), ``outs[n_max + j]`` keeps noise output ``j``'s word. The state."""
    c = model.c
    ws = model.ws
    syn1neg = model.weights.syn1neg
    W1 = model.work.syn1neg
    negative = c.negative
    n_words = c.neg_prob.size
    l1s = tmp.inputs
    outs = tmp.outputs
    info = tmp.ints
    sc = tmp.scores
    n_max = CBOW_BATCH + negative  # outs[n_max + j]: the word of noise output j
    for j in range(negative):
        tw, state = _draw_negative(state, n_words, c.neg_prob, c.neg_alias)
        outs[nb + j] = tw
        outs[n_max + nb + j] = tw  # the word; outs[nb + j] becomes its working row
    for i in range(nb):
        o = _neg_slot(syn1neg, info[4 * i + 3], ws)
        outs[i] = o
        f = np.float32(0.0)
        for k in range(dim):
            f += l1s[i, k] * W1[o, k]
        sc[i, i] = f
    for j in range(nb, nb + negative):
        tw = outs[j]
        o = _neg_slot(syn1neg, tw, ws)
        outs[j] = o
        _block_scores(W1, o, l1s, nb, sc, j, dim)
    return state


@njit(**_INNER)
def _cbow_gradient(sc, j, i, label, alpha, c, loss_sum):
    """Score ``sc[j, i]`` to its gradient in place; ``(loss_sum + its loss, nan_flag)``
    (``loss_sum`` unchanged when the flag is set)."""
    log_sigmoid = c.log_sigmoid
    f = sc[j, i]
    idx = _table_index(f)
    g, ls, bad = _logistic(
        f, label, alpha, c.sigmoid[idx], log_sigmoid[idx], log_sigmoid[EXP_TABLE_SIZE - 1 - idx]
    )
    if bad:
        return loss_sum, True
    sc[j, i] = g
    return loss_sum + ls, False


@njit(**_INNER)
def _cbow_gradients(tmp, c, nb, loss_sum):
    """Scores to gradients: row ``i``'s positive is its centre word (label 1), a noise word
    is a negative (label 0) of every row whose centre word it is not (else ``g = 0``).
    Returns ``(loss_sum, nan_flag)`` (set: stopped at the non-finite score)."""
    negative = c.negative
    alphas = tmp.alphas
    outs = tmp.outputs
    info = tmp.ints
    sc = tmp.scores
    n_max = CBOW_BATCH + negative
    for i in range(nb):
        loss_sum, bad = _cbow_gradient(sc, i, i, np.float32(1.0), alphas[i], c, loss_sum)
        if bad:
            return loss_sum, True
    for j in range(nb, nb + negative):
        for i in range(nb):
            if info[4 * i + 3] == outs[n_max + j]:
                sc[j, i] = np.float32(0.0)
                continue
            loss_sum, bad = _cbow_gradient(sc, j, i, np.float32(0.0), alphas[i], c, loss_sum)
            if bad:
                return loss_sum, True
    return loss_sum, False


@njit(**_INNER)
def _cbow_update(model, tmp, nb, dim):
    """Apply a batch's gradients: ``err[i]`` its positive's term, then each noise word's in
    order (two per pass); each output row its summed gradient once; each context row its
    centre's gradient in full, at the working row the gather looked up."""
    negative = model.c.negative
    W0 = model.work.syn0
    W1 = model.work.syn1neg
    l1s = tmp.inputs
    err = tmp.input_grads
    outg = tmp.output_grads
    outs = tmp.outputs
    info = tmp.ints
    sc = tmp.scores
    for i in range(nb):
        _input_gradient(err, i, W1, outs, sc, i, i + 1, dim)  # sc[i, i], outs[i]
        _input_gradient(err, i, W1, outs, sc, nb, nb + negative, dim)
    for i in range(nb):
        g = sc[i, i]
        for k in range(dim):
            outg[i, k] = g * l1s[i, k]
    for j in range(nb, nb + negative):
        _output_gradient(outg, j, l1s, sc, nb, dim)
    for j in range(nb + negative):
        o = outs[j]
        for k in range(dim):
            W1[o, k] += outg[j, k]
    for i in range(nb):
        _add_rows(W0, tmp.slots, info[4 * i + 1], info[4 * i + 2], err, i, dim)


@njit(**_PART)
def train_part_cbow_shared(weights, chunk, c, span, state, ws, tmp):
    """CBOW with negative samples shared by :data:`CBOW_BATCH` consecutive centre words.

    Same parameters and return value as :func:`train_part` (``n_examples`` counts centre
    words). The kernel gathers the context means of up to ``CBOW_BATCH`` consecutive
    centre words of the slice that have a context (each its own window, within its
    document; a centre without context is skipped, as in :func:`train_part`), draws
    ``c.negative`` noise words once for them, and scores the block from the same
    parameters: row ``i``'s positive is its centre word ``w_i`` (label 1), every noise
    word is a negative of every row (label 0), except for a row whose centre word it
    equals (word2vec.c skips it). Then each output row gets its summed gradient once and
    row ``i``'s input gradient is added in full to each of its context rows (word2vec.c's
    CBOW, ``cbow_mean``). The learning rate is that of each centre word's position.
    HogBatch (Ji et al. 2016): each noise row is read once per batch instead of once per
    centre word, and the batch's scores are small dense products.
    """
    dim = weights.syn0.shape[1]
    model = PartModel(weights, _working(weights, ws), ws, c, tmp.outputs)
    alpha0, alpha_step, d = _part_start(chunk.offsets, span)
    loss_sum = 0.0
    n_examples = 0.0
    p = span.start
    while p < span.end:
        if ws is not None:
            if _buffers_full(ws):
                return loss_sum, n_examples, False, p, state
        nb, p, d, state = _cbow_batch(model, chunk, span, tmp, p, d, alpha0, alpha_step, state, dim)
        if nb == 0:
            continue
        state = _cbow_scores(model, tmp, nb, state, dim)
        loss_sum, bad = _cbow_gradients(tmp, c, nb, loss_sum)
        if bad:
            return loss_sum, n_examples, True, p, state
        _cbow_update(model, tmp, nb, dim)
        n_examples += nb
    return loss_sum, n_examples, False, span.end, state


@njit(**_PART)
def train_part_bag(weights, chunk, c, span, state, ws, tmp):
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
    syn0, syn1neg = weights.syn0, weights.syn1neg
    ids, offsets, sub = chunk.ids, chunk.offsets, chunk.sub
    dim = syn0.shape[1]
    window = c.window
    work = _working(weights, ws)
    model = PartModel(weights, work, ws, c, tmp.outputs)
    W0 = work.syn0
    W1 = work.syn1neg
    V = tmp.example  # rows: 0 the centre's bag mean, 1 its summed gradient
    ctx = tmp.ints  # the window's context words
    slots = tmp.slots  # working rows of the centre's bag
    alpha0, alpha_step, d = _part_start(offsets, span)
    p_start, p_end, part_start = span.start, span.end, span.part_start
    loss_sum = 0.0
    n_examples = 0.0
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for p in range(p_start, p_end):
        if ws is not None:
            if _buffers_full(ws):
                return loss_sum, n_examples, False, p, state
        d, w, lo, hi, state = _centre(ids, offsets, d, p, window, _TRUE, state)
        alpha = alpha0 + alpha_step * np.float32(p - part_start)
        n_ctx = _ZERO
        for cpos in range(lo, hi):
            if cpos != p:
                ctx[n_ctx] = ids[cpos]
                n_ctx += 1
        if n_ctx == 0:
            continue
        n_bag = _gather_input(W0, syn0, w, sub, ws, V, _ZERO, slots, _ZERO, dim)
        for k in range(dim):
            V[1, k] = zero
        bad = False
        for i in range(n_ctx):
            o = _neg_slot(syn1neg, ctx[i], ws)
            ls, b1 = _score_update(V, _ZERO, W1, o, V, _ONE, one, alpha, c, dim)
            loss_sum += ls
            bad |= b1
        ls, state, b1 = _score_shared_noise(V, model, ctx, n_ctx, state, alpha, dim)
        loss_sum += ls
        bad |= b1
        if bad:
            return loss_sum, n_examples, True, p, state
        _add_rows(W0, slots, _ZERO, n_bag, V, _ONE, dim)
        n_examples += n_ctx
    return loss_sum, n_examples, False, p_end, state

"""The phase scheduler's support of the word2vec-family kernels (deterministic threads).

Splitting a chunk into parts with balanced token counts, their seeds and scratch space, the
per-part workspaces of the buffered (deterministic) mode and the merge of the rows a phase
touched, in a fixed order. :func:`skembed.kernels.scheduler.train_word2vec_chunk` and
:func:`skembed.kernels.scheduler.train_doc2vec_chunk` run their ``train_part`` over them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from . import DEFAULT_PARTS, MAX_DETERMINISTIC_PARTS
from ._core import BUFFER_FLOATS, CBOW_BATCH, PART_PAD, _seed_state


class Scratch(NamedTuple):
    """Scratch arrays of a train part, allocated by the caller (the train parts are compiled
    without numba's reference-counting runtime and cannot allocate).

    :func:`_scratch` allocates them for every part (a leading ``n_parts`` axis, each part's
    block padded with :data:`PART_PAD` unused entries); :func:`_part_scratch` gives one
    part's. Shapes below are one part's; ``n_out = negative + CBOW_BATCH``,
    ``n_in = max(max_ctx, CBOW_BATCH)``.

    Attributes
    ----------
    example : numpy.ndarray of shape (3, dim), float32
        One example's input vector (row 0) and its gradient (row 1).
    inputs : numpy.ndarray of shape (n_in, dim), float32
        Input vectors of a block: the window's context words (skip-gram, shared
        negatives) or the batch's context means (CBOW, shared negatives).
    input_grads : numpy.ndarray of shape (n_in, dim), float32
        Their gradients.
    output_grads : numpy.ndarray of shape (n_out, dim), float32
        Gradients of the block's output rows.
    outputs : numpy.ndarray of shape (2 * n_out,), int64
        The output rows (words, then working rows); CBOW keeps the noise words in the
        second half beside their working rows.
    alphas : numpy.ndarray of shape (n_out,), float32
        Learning rate of each centre word of a CBOW batch.
    ints : numpy.ndarray of shape (max(max_ctx, 4 * CBOW_BATCH),), int64
        Integers of a block, as its train part says: the first working row of each context
        word, four integers per centre word of a CBOW batch, or the words of a window.
    slots : numpy.ndarray of shape (CBOW_BATCH * max_ctx * max_bag,), int64
        Working rows of the block's input words, in gather order (``max_bag`` the most input
        rows of a word).
    scores : numpy.ndarray of shape (n_out, n_in), float32
        The block's scores, then gradients, output by input (``_core._block_scores``).
    """

    example: np.ndarray
    inputs: np.ndarray
    input_grads: np.ndarray
    output_grads: np.ndarray
    outputs: np.ndarray
    alphas: np.ndarray
    ints: np.ndarray
    slots: np.ndarray
    scores: np.ndarray


class RowBuffer(NamedTuple):
    """One part's private copies of the rows of one matrix (deterministic mode).

    Attributes
    ----------
    slot : numpy.ndarray of shape (n_rows,), int32
        Slot of each row, -1 while it is not copied.
    rows : numpy.ndarray of shape (cap,), int64
        Row of each slot.
    copies : numpy.ndarray of shape (cap, dim), float32
        The copies, which the part reads and writes instead of the shared rows.
    """

    slot: np.ndarray
    rows: np.ndarray
    copies: np.ndarray


class Workspace(NamedTuple):
    """The row buffers of the buffered (deterministic) mode, one per trained matrix.

    :func:`_workspaces` allocates them for every part (a leading ``n_parts`` axis);
    :func:`_part_workspace` gives one part's, which the train parts take as ``ws``
    (``None``: lock-free, the shared rows).

    Attributes
    ----------
    syn0, syn1neg, syn1 : RowBuffer
    count : numpy.ndarray of shape (PART_PAD,), int64
        Slots in use per matrix (``count[m]``, ``m`` 0 to 2 as the fields above).
    need : numpy.ndarray of shape (3,), int64
        Slots one centre word may take per matrix (0: its buffer holds the whole matrix);
        shared by the parts.
    """

    syn0: RowBuffer
    syn1neg: RowBuffer
    syn1: RowBuffer
    count: np.ndarray
    need: np.ndarray


def _part_bounds(offsets, n_parts):
    """Document boundaries of ``n_parts`` contiguous slices with balanced token counts."""
    n_docs = offsets.size - 1
    n_tok = int(offsets[n_docs])
    bounds = np.zeros(n_parts + 1, dtype=np.int64)
    for t in range(1, n_parts):
        bounds[t] = np.searchsorted(offsets, (n_tok * t) // n_parts)
    bounds[n_parts] = n_docs
    return np.maximum.accumulate(bounds)


def _max_bag(c):
    """Most input rows of one word: 1, or with subword rows (FastText) its largest bag."""
    if c.sub_indptr.shape[0] < 2:
        return 1
    return max(1, int(np.diff(c.sub_indptr).max()))


def _buffer_sizes(c, n_rows, dim, shared, max_ctx):
    """Slots per matrix and part, and the slots one centre word may take (0: never full).

    ``max_ctx``: most context words of a centre (:func:`_max_context`); ``shared``: the
    shared-negatives variant, whose CBOW step trains :data:`CBOW_BATCH` centre words
    (their windows' input rows, their own and one draw of noise output rows). Each buffer
    holds at most :data:`BUFFER_FLOATS` floats (but at least two
    centre words' worth) or the whole matrix, whichever is smaller.
    """
    ctx = max_ctx
    max_bag = _max_bag(c)
    batch = CBOW_BATCH if (shared and not c.sg) else 1
    need = np.zeros(3, dtype=np.int64)
    need[0] = ctx * max_bag * batch
    if c.negative > 0:
        need[1] = (c.negative + batch) * (ctx if (c.sg and not shared) else 1)
    if c.hs:
        need[2] = c.codes.shape[1] * (ctx if c.sg else 1)
    return _caps(n_rows, dim, need)


def _caps(n_rows, dim, need):
    """Slots per matrix: twice ``need`` but at least :data:`BUFFER_FLOATS` floats, at most
    the matrix; ``need`` becomes 0 where the buffer holds the whole matrix."""
    caps = np.zeros(3, dtype=np.int64)
    budget = max(1, BUFFER_FLOATS // max(dim, 1))
    for m in range(3):
        caps[m] = min(n_rows[m], max(2 * need[m], budget))
        if caps[m] >= n_rows[m]:
            need[m] = 0
    return caps, need


def _part_starts(offsets, seed, n_parts):
    """First and end token of each part's slice (:func:`_part_bounds`) and its LCG state."""
    bounds = _part_bounds(offsets, n_parts)
    starts = offsets[bounds[:-1]].astype(np.int64)
    ends = offsets[bounds[1:]].astype(np.int64)
    states = np.array([_seed_state(seed, t) for t in range(n_parts)], dtype=np.uint64)
    return starts, ends, states


def _max_context(offsets, window):
    """Most context words a centre can have: ``2 * window``, at most the longest document.

    Bounds the per-part scratch memory whatever ``window`` is (a window longer
    than every document allocates nothing more).
    """
    longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
    return max(1, min(2 * int(window), longest))


def _scratch(n_parts, max_ctx, negative, dim, max_bag):
    """The :class:`Scratch` of every part, allocated once per chunk.

    :func:`~skembed.kernels.word2vec.train_part_cbow_shared` uses the block arrays for a
    batch of :data:`CBOW_BATCH` centre words, hence the ``max`` with the batch sizes. Each
    part's block ends with :data:`PART_PAD` unused entries (rows).
    """
    n_out = max(negative, 0) + CBOW_BATCH
    n_in = max(max_ctx, CBOW_BATCH)
    pad = PART_PAD  # rows after each part's block: no two parts' scratch shares a cache line
    return Scratch(
        example=np.zeros((n_parts, 3 + pad, dim), dtype=np.float32),
        inputs=np.zeros((n_parts, n_in + pad, dim), dtype=np.float32),
        input_grads=np.zeros((n_parts, n_in + pad, dim), dtype=np.float32),
        output_grads=np.zeros((n_parts, n_out + pad, dim), dtype=np.float32),
        outputs=np.zeros((n_parts, 2 * n_out + pad), dtype=np.int64),
        alphas=np.zeros((n_parts, n_out + pad), dtype=np.float32),
        ints=np.zeros((n_parts, max(max_ctx, 4 * CBOW_BATCH) + pad), dtype=np.int64),
        slots=np.zeros((n_parts, CBOW_BATCH * max_ctx * max_bag + pad), dtype=np.int64),
        scores=np.zeros((n_parts, n_out + pad, n_in), dtype=np.float32),
    )


@njit(cache=True, nogil=True, inline="always")
def _part_scratch(s, t):
    """Part ``t``'s :class:`Scratch`: row ``t`` of each array of :func:`_scratch`."""
    return Scratch(
        s.example[t],
        s.inputs[t],
        s.input_grads[t],
        s.output_grads[t],
        s.outputs[t],
        s.alphas[t],
        s.ints[t],
        s.slots[t],
        s.scores[t],
    )


def _workspaces(n_parts, n_rows, caps, dim, need):
    """The :class:`Workspace` of every part for the buffered mode (see ``_core._slot``).

    Per matrix ``m`` (syn0, syn1neg, syn1), ``n_rows[m]`` rows and ``caps[m]`` slots; the
    slot counters of each part; ``need`` as given. ``n_rows`` and ``caps`` of zero give
    empty buffers.

    The row of a slot and its copy are written when the slot is taken, before any read,
    so they are allocated uninitialised (``np.empty``): a page of a buffer becomes resident
    only once a phase has used that many slots. Zeroed, the 16 MiB buffers were resident
    in full at every chunk (debdocs CBOW: 67 MB of the fit's peak RSS, 2 threads).
    """
    pad = PART_PAD
    buffers = [
        RowBuffer(
            slot=np.full((n_parts, n_rows[m] + pad), -1, dtype=np.int32),
            rows=np.empty((n_parts, caps[m] + pad), dtype=np.int64),
            copies=np.empty((n_parts, caps[m] + pad, dim), dtype=np.float32),
        )
        for m in range(3)
    ]
    return Workspace(*buffers, count=np.zeros((n_parts, pad), dtype=np.int64), need=need)


@njit(inline="always")
def _part_rows(b, t):
    """Part ``t``'s :class:`RowBuffer` of one matrix."""
    return RowBuffer(b.slot[t], b.rows[t], b.copies[t])


def _part_workspace(phase, w, t):
    """Part ``t``'s :class:`Workspace` (the ``ws`` of the train parts), ``None`` if ``phase
    is None``.

    Chosen by the type of ``phase`` when numba compiles the caller (an
    ``@overload``), so the lock-free variant carries no buffer code at all.
    """
    if phase is None:
        return None
    rows = [RowBuffer(b.slot[t], b.rows[t], b.copies[t]) for b in (w.syn0, w.syn1neg, w.syn1)]
    return Workspace(*rows, w.count[t], w.need)


@overload(_part_workspace, inline="always")
def _part_workspace_impl(phase, w, t):
    if isinstance(phase, (types.NoneType, types.Omitted)):
        return lambda phase, w, t: None
    return lambda phase, w, t: Workspace(
        _part_rows(w.syn0, t), _part_rows(w.syn1neg, t), _part_rows(w.syn1, t), w.count[t], w.need
    )


@njit(inline="always")  # inlined into each entry point by numba: no library of its own
def _merge_phase(syn0, syn1neg, syn1, w, n_parts, thread, n_threads, orig):
    """End of a phase: write every part's row copies back to the shared matrices.

    Every thread calls it between the phase's two barriers and merges the rows ``r`` with
    ``r % n_threads == thread``, so no two threads touch one row (nor its slots). Only the rows
    touched in the phase are visited, part by part in part order. A row copied by one part
    only is copied back; a row copied by several parts becomes its shared value plus each
    part's change (copy minus shared value), added in part order. Thread timing and the
    thread count play no role. The slot counters (``w.count``) are read, not reset: each part
    resets its own before its next phase (:func:`skembed.kernels.scheduler._run_chunk`, the
    phase loop). ``orig``: float32 (dim,), the thread's scratch row (a row of its part's
    scratch that no part uses between the barriers).
    """
    # np.int64(m), not the literal m: numba would compile one _merge_matrix per literal
    _merge_matrix(syn0, w.syn0, w.count, np.int64(0), n_parts, thread, n_threads, orig)
    _merge_matrix(syn1neg, w.syn1neg, w.count, np.int64(1), n_parts, thread, n_threads, orig)
    _merge_matrix(syn1, w.syn1, w.count, np.int64(2), n_parts, thread, n_threads, orig)


# without numba's runtime and CPython wrapper: it allocates nothing (``orig`` is the caller's)
# and only the entry points call it (as ``_core``'s helpers, ``_core._INNER``)
@njit(
    cache=True,
    nogil=True,
    fastmath=False,
    _nrt=False,
    no_cpython_wrapper=True,
    no_cfunc_wrapper=True,
)
def _merge_matrix(mat, b, count, m, n_parts, thread, n_threads, orig):
    """:func:`_merge_phase` for one matrix (``b`` its :class:`RowBuffer` of every part), the
    rows ``r % n_threads == thread`` only.

    A row several parts copied is updated one part at a time over the whole row (the
    shared value kept in ``orig``), so each loop over the row is branch-free and
    vectorised; every element gets the same float32 additions in the same order as an
    element-by-element merge (no fast-math here), so the result is bit-identical.
    """
    dim = mat.shape[1]
    slot = b.slot
    rows = b.rows
    buf = b.copies
    for t in range(n_parts):
        for i in range(count[t, m]):
            r = rows[t, i]
            if r % n_threads != thread or slot[t, r] < 0:  # another thread's, or merged already
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
                o = mat[r, k]
                orig[k] = o
                mat[r, k] = o + (buf[t, i, k] - o)
            for q in range(t + 1, n_parts):
                sq = slot[q, r]
                if sq >= 0:
                    for k in range(dim):
                        mat[r, k] += buf[q, sq, k] - orig[k]
            for q in range(t, n_parts):
                slot[q, r] = -1


#: longest phase (centre tokens per part) once more than two parts train at a time
_LONG_PHASE = 8192


def training_partition(n_threads, sync_tokens, n_parts=DEFAULT_PARTS):
    """Parts and phase length of one fit of the numba engines.

    Deterministic training (``sync_tokens > 0``) splits each chunk into ``n_parts``
    parts, whatever the thread count: the threads execute the parts (one thread runs
    several in turn, threads beyond ``n_parts`` stay idle), and each part writes only
    its own buffers until the merge, so the vectors are a function of the data,
    ``random_state`` and ``n_parts`` alone -- the same for ``n_jobs`` 1, 2 or 64.

    A merge adds every part's change to a row (:func:`_merge_phase`); a frequent row that
    each part moved to about the same place within a phase therefore moves ``n_parts``
    times as far, and the next phase corrects by ``n_parts - 1`` times the error. Two
    parts are stable; with more, training degrades and then diverges (measured on BBC News,
    5 epochs, 8,192 centre tokens per part and phase: CBOW WordSim-353 0.33 with 2 parts,
    0.28 with 3, -0.09 with 4, NaN loss with 8; PV-DM document accuracy 0.83 with 2 parts,
    0.66 with 4, 0.39 with 8). Shorter phases keep a part from converging alone, so with
    more than two parts the phase shrinks as ``(2 / n_parts) ** 2`` of at most 8,192
    tokens (4 parts: 2,048 tokens, CBOW WordSim-353 0.35, PV-DM 0.93), and above four parts
    to half of that (8 parts: 256 tokens, 16 parts: 64; with ``(2 / n_parts) ** 2`` alone,
    FastText diverged with 8 parts). With these phases 8 and 16 parts trained as well as
    two on BBC News (seeds 0 and 1: WordSim-353, SimLex-999 and the document
    accuracy of PV-DM and PV-DBOW at or above two parts' for Word2Vec, FastText and
    Doc2Vec), at most :data:`MAX_DETERMINISTIC_PARTS`.

    Lock-free training (``sync_tokens == 0``) gives each thread one slice.

    Parameters
    ----------
    n_threads : int
        Threads the caller may use (``>= 1``); sets the parts of lock-free training only.
    sync_tokens : int
        The estimator's phase length (centre tokens per part and phase; 0: lock-free).
    n_parts : int, default=DEFAULT_PARTS
        The estimator's ``n_parts``, 1 to :data:`MAX_DETERMINISTIC_PARTS`.

    Returns
    -------
    n_parts : int
        ``n_threads`` for lock-free training, else ``n_parts``.
    sync_tokens : int
        The phase length to use: ``sync_tokens`` itself for lock-free training and up to
        two parts, shorter above.

    Raises
    ------
    ValueError
        If deterministic training asks for ``n_parts`` outside 1 to
        :data:`MAX_DETERMINISTIC_PARTS`.
    """
    if sync_tokens <= 0:
        return max(int(n_threads), 1), 0
    n_parts = int(n_parts)
    if not 1 <= n_parts <= MAX_DETERMINISTIC_PARTS:
        raise ValueError(
            f"n_parts={n_parts}: deterministic training splits each chunk into 1 to "
            f"{MAX_DETERMINISTIC_PARTS} parts (their changes add up at each merge, and more "
            "parts were not shown to train stably); use n_parts=2, the default, up to "
            f"n_parts={MAX_DETERMINISTIC_PARTS} to give more threads work, or lock_free=True."
        )
    if n_parts <= 2:
        return n_parts, int(sync_tokens)
    shrink = 4 if n_parts <= 4 else 2  # (2 / n_parts) ** 2, halved above four parts
    return n_parts, max(1, min(int(sync_tokens), _LONG_PHASE) * shrink // (n_parts * n_parts))

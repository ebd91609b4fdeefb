"""The one phase scheduler of the word2vec-family kernels (Word2Vec, FastText, Doc2Vec).

:func:`run_phases` trains a corpus chunk, one contiguous slice of documents per part, on
Python threads that each run one compiled, GIL-free call: lock-free (``phase is None``), or
deterministically in phases of ``phase`` centre tokens per part, each phase ending at a
barrier (:mod:`skembed.kernels._sync`) followed by the merge of the rows it touched
(:func:`skembed.kernels._phases._merge_phase`). The phase loop is written once
(:func:`_run_chunk`); each variant supplies only its ``train_part``, and has its own
compiled entry point (:data:`ENTRIES`) into which numba inlines the loop. Every train part
takes the same few named structures, ``train_part(weights, chunk, c, span, state, ws, tmp)``
(:class:`~skembed.kernels._core.Weights`, :class:`~skembed.kernels._core.Chunk`,
:class:`~skembed.kernels._core.KernelConfig`, :class:`~skembed.kernels._core.Span`, the LCG
state, the part's :class:`~skembed.kernels._phases.Workspace` or ``None`` and its
:class:`~skembed.kernels._phases.Scratch`):

- ``chunk.doc is None`` (Word2Vec, FastText): ``variant`` selects
  :func:`~skembed.kernels.word2vec.train_part` (:data:`PER_EXAMPLE`),
  :func:`~skembed.kernels.word2vec.train_part_shared` (:data:`SHARED_SKIPGRAM`),
  :func:`~skembed.kernels.word2vec.train_part_bag` (:data:`SHARED_BAG`) or
  :func:`~skembed.kernels.word2vec.train_part_cbow_shared` (:data:`SHARED_CBOW`);
- ``chunk.doc`` a :class:`~skembed.kernels._core.Documents` (Doc2Vec):
  :func:`skembed.kernels.doc2vec.train_part`, or :data:`SHARED_DBOW` (pure PV-DBOW, negative
  sampling) :func:`~skembed.kernels.doc2vec.train_part_dbow_shared`.

``chunk.sub is None`` and ``phase is None`` are decided by the *type* of the argument when numba
compiles an entry point, so every variant is its own machine code with no branch on the
variant in its inner loops (such branches cost ~30%), and a first fit with an empty numba
cache compiles the one train part it runs, not all four. Without ``prange`` (no
parfor lowering), with the helpers compiled once each and LLVM-inlined (``forceinline``)
instead of re-inlined into every train part by numba, with the per-chunk set-up in numpy,
and with one entry point per variant instead of an ``@overload`` that picked the train part
(numba compiled the overload's wrapper in full, train part linked in, only to inline it),
those three first fits took 13.6-13.9 s on a 2-core Xeon (16.8-19.5 s before the entry
points and the helper types that match across callers, same machine); without the CPython
and C wrappers of what only compiled code calls (``_core._INNER``), 9.7-11.2 s (12.5-14.4 s
before, interleaved, another 2-core Xeon);
:func:`compile_notice` lets the estimators say when compiling happens.

The public entry points live here too, above the variants they dispatch to (so no module
imports this one back): :func:`train_word2vec_chunk`, :func:`train_doc2vec_chunk`, and
:func:`training_partition` (re-exported from ``_phases``), which the engines call.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import NamedTuple

import numba
import numpy as np
from numba import njit
from numba.core import event

from . import doc2vec as _d2v
from . import word2vec as _w2v
from ._core import Chunk, Documents, KernelConfig, Span, Subwords, Weights
from ._phases import (  # noqa: F401  (training_partition: re-exported for the engines)
    _buffer_sizes,
    _max_bag,
    _max_context,
    _merge_phase,
    _part_scratch,
    _part_starts,
    _part_workspace,
    _scratch,
    _workspaces,
    training_partition,
)
from ._sync import ABORT, barrier, new_barrier, on_threads

#: ``variant`` of Word2Vec/FastText: :func:`skembed.kernels.word2vec.train_part`
PER_EXAMPLE = 0
#: :func:`skembed.kernels.word2vec.train_part_shared` (skip-gram, shared negatives)
SHARED_SKIPGRAM = 1
#: :func:`skembed.kernels.word2vec.train_part_bag` (FastText skip-gram, the centre's n-gram bag)
SHARED_BAG = 2
#: :func:`skembed.kernels.word2vec.train_part_cbow_shared` (CBOW, batches of centre words)
SHARED_CBOW = 3
#: ``variant`` of Doc2Vec: :func:`skembed.kernels.doc2vec.train_part_dbow_shared` (pure PV-DBOW,
#: shared negatives); :data:`PER_EXAMPLE`: :func:`skembed.kernels.doc2vec.train_part`
SHARED_DBOW = 4


class Job(NamedTuple):
    """What every thread of one chunk trains (only ``weights`` is written).

    Attributes
    ----------
    weights : Weights
    chunk : Chunk
    config : KernelConfig
    phase : int or None
        Centre tokens per part and phase (deterministic); ``None``: lock-free. Its type
        selects the code numba compiles (no buffer code in the lock-free variant).
    alpha_start, alpha_end : float
        Learning rate at the first and last token of each part's slice.
    """

    weights: Weights
    chunk: Chunk
    config: KernelConfig
    phase: object
    alpha_start: float
    alpha_end: float


class PhaseState(NamedTuple):
    """Everything :func:`run_phases` keeps across the phases of one chunk, allocated once.

    Attributes
    ----------
    stats : numpy.ndarray of shape (n_parts, 3), float64
        Summed loss, number of examples and a NaN flag per part.
    starts, ends : numpy.ndarray of shape (n_parts,), int64
        First and end token of each part's slice.
    states : numpy.ndarray of shape (n_parts,), uint64
        LCG state of each part.
    pos : numpy.ndarray of shape (n_parts,), int64
        Next centre token of each part.
    workspace : skembed.kernels._phases.Workspace
        The parts' row buffers (empty lock-free).
    scratch : skembed.kernels._phases.Scratch
        The parts' scratch arrays.
    step : int
        Phase length in centre tokens (``2 ** 62`` lock-free: one phase).
    """

    stats: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    states: np.ndarray
    pos: np.ndarray
    workspace: object
    scratch: object
    step: int


def _phase_state(job, variant, seed, n_parts):
    """The :class:`PhaseState` of one chunk.

    Plain Python and numpy (setting up is not the hot loop, and compiling it cost a first
    fit about a second per variant). The workspaces of the buffered mode
    (:func:`~skembed.kernels._phases._workspaces`) hold the slots one centre token may take.
    """
    syn0, syn1neg, syn1 = job.weights
    c, offsets, doc = job.config, job.chunk.offsets, job.chunk.doc
    dim = syn0.shape[1]
    stats = np.zeros((n_parts, 3), dtype=np.float64)
    starts, ends, states = _part_starts(offsets, seed, n_parts)
    n_rows = np.array([syn0.shape[0], syn1neg.shape[0], syn1.shape[0]], dtype=np.int64)
    max_ctx = _max_context(offsets, c.window)
    if doc is None:
        caps, need = _buffer_sizes(c, n_rows, dim, variant != PER_EXAMPLE, max_ctx)
    else:  # Doc2Vec: at least twice what one token takes in each matrix
        need = _d2v._needs(c, doc.dm, doc.dbow_words, variant == SHARED_DBOW, max_ctx)
        caps, _ = _buffer_sizes(c, n_rows, dim, False, max_ctx)
        caps = np.minimum(n_rows, np.maximum(caps, 2 * need))
        need[caps >= n_rows] = 0
    if job.phase is None:
        step = np.int64(1) << 62
        caps[:] = 0
        n_rows[:] = 0
    else:
        step = np.int64(job.phase)
    return PhaseState(
        stats=stats,
        starts=starts,
        ends=ends,
        states=states,
        pos=starts.copy(),
        workspace=_workspaces(n_parts, n_rows, caps, dim, need),
        scratch=_scratch(n_parts, max_ctx, c.negative, dim, _max_bag(c)),
        step=step,
    )


@njit(inline="always")
def _run_chunk(train, job, first, n_threads, sync, state):
    """One thread's whole chunk: its parts phase by phase, a :func:`~._sync.barrier` after each.

    In each phase the thread trains parts ``first, first + n_threads, ...`` in turn, each up
    to ``step`` centre tokens from ``pos[t]`` with the variant's train part, writing only
    its own row of ``stats``/``states``/``pos`` and (deterministic mode) its own workspace.
    Deterministic (``phase`` an int), the threads then merge the phase's rows between two
    barriers, each its share of the rows (:func:`~skembed.kernels._phases._merge_phase`);
    lock-free (``phase is None``: one phase), the same two barriers end the chunk. Every
    thread decides whether another phase follows from ``pos`` between the two barriers,
    where no thread writes it, so all agree (read anywhere else, one thread could see the
    last tokens done by another, leave, and let the other wait forever).

    ``train`` is the variant's train part; ``job`` the chunk, its tables and learning
    rates (:class:`Job`), ``state`` its :class:`PhaseState`. Never compiled alone: numba
    inlines it into each entry point of :data:`ENTRIES`.
    """
    # every array this loop writes has a name of its own, bound here: numba's dead-code
    # elimination (run on this loop, into which numba inlines calls) does not see an array
    # reached through a named tuple's attribute as that tuple's, and drops a write to it
    # whose array is not read again (``state.states[t] = st`` would vanish)
    w, scratch, step = state.workspace, state.scratch, state.step
    stats, starts, ends, states, pos, count = (
        state.stats,
        state.starts,
        state.ends,
        state.states,
        state.pos,
        w.count,
    )
    n_parts = pos.shape[0]
    more = False
    for t in range(n_parts):
        more |= pos[t] < ends[t]
    # every thread reads ``pos`` before any trains: a thread that read it after another had
    # finished the last tokens would leave while the other waits at the barrier (a hang)
    if barrier(sync, n_threads):
        return
    while more:
        for t in range(first, n_parts, n_threads):
            for m in range(3):  # its slots were merged (or never used): count from 0
                count[t, m] = 0
            if pos[t] < ends[t]:
                end = ends[t] if ends[t] < pos[t] + step else pos[t] + step
                span = Span(
                    pos[t], end, starts[t], ends[t] - starts[t], job.alpha_start, job.alpha_end
                )
                ws = _part_workspace(job.phase, w, t)
                tmp = _part_scratch(scratch, t)
                loss, nex, bad, p, st = train(
                    job.weights, job.chunk, job.config, span, states[t], ws, tmp
                )
                stats[t, 0] += loss
                stats[t, 1] += nex
                states[t] = st
                pos[t] = ends[t] if bad else p
                if bad:
                    stats[t, 2] = 1.0
        if barrier(sync, n_threads):
            return
        more = False  # ``pos`` holds still until the next barrier: all threads agree
        for t in range(n_parts):
            more |= pos[t] < ends[t]
        if job.phase is not None:
            syn0, syn1neg, syn1 = job.weights
            orig = scratch.example[first, 0]
            _merge_phase(syn0, syn1neg, syn1, w, n_parts, first, n_threads, orig)
        if barrier(sync, n_threads):
            return


# One compiled entry point per train part: the phase loop inlined into it by numba, the
# train part linked in. Without numba's reference-counting runtime
# (``_nrt=False``, as the train parts): with it, every array view in their loops took an
# atomic increment and decrement, and PV-DBOW trained at half speed (BBC News, one thread).
# Six written-out functions, not a factory: numba's disk cache takes module-level functions
# only (the closures of a factory were compiled again in every new process, tried with numba
# 0.68).


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _chunk_skipgram(job, first, n_threads, sync, state):
    _run_chunk(_w2v.train_part_shared, job, first, n_threads, sync, state)


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _chunk_bag(job, first, n_threads, sync, state):
    _run_chunk(_w2v.train_part_bag, job, first, n_threads, sync, state)


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _chunk_cbow(job, first, n_threads, sync, state):
    _run_chunk(_w2v.train_part_cbow_shared, job, first, n_threads, sync, state)


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _chunk_word2vec(job, first, n_threads, sync, state):
    _run_chunk(_w2v.train_part, job, first, n_threads, sync, state)


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _chunk_dbow(job, first, n_threads, sync, state):
    _run_chunk(_d2v.train_part_dbow_shared, job, first, n_threads, sync, state)


@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _chunk_doc2vec(job, first, n_threads, sync, state):
    _run_chunk(_d2v.train_part, job, first, n_threads, sync, state)


#: the compiled entry point of each (family, variant): ``(doc is None, variant)``
ENTRIES = {
    (True, SHARED_SKIPGRAM): _chunk_skipgram,
    (True, SHARED_BAG): _chunk_bag,
    (True, SHARED_CBOW): _chunk_cbow,
    (True, PER_EXAMPLE): _chunk_word2vec,
    (False, SHARED_DBOW): _chunk_dbow,
    (False, PER_EXAMPLE): _chunk_doc2vec,
}


def run_phases(job, variant, seed, n_parts):
    """Train one corpus chunk with ``n_parts`` parts: the family's one phase loop.

    The parts run on Python threads (the calling one and ``n_threads - 1`` started per
    chunk), each in one compiled call that releases the GIL for the whole chunk (the
    variant's entry of :data:`ENTRIES`, running :func:`_run_chunk`; gensim's scheme of
    threads in ``nogil`` code), ``n_threads`` = ``min(numba.get_num_threads(), n_parts)``
    (the estimators set numba's thread count from ``n_jobs``): thread ``k`` runs parts
    ``k, k + n_threads, ...``. Lock-free (``job.phase is None``), each thread trains its
    whole slice and meets the others only at the chunk's start and end (Hogwild);
    deterministic, each phase trains ``job.phase`` centre tokens per part and ends at a
    barrier (:func:`skembed.kernels._sync.barrier`), then the threads merge the rows the
    phase touched, each row by one thread in part order
    (:func:`~skembed.kernels._phases._merge_phase`), so the vectors do not depend on the
    threads. Python threads rather than numba's ``prange``: parfor lowering took seconds of
    every variant's first compilation.

    Parameters
    ----------
    job : Job
        The weights (updated in place), the chunk, the configuration, the phase length and
        the learning rates.
    variant : int
        The train part (Word2Vec/FastText: :data:`PER_EXAMPLE` ... :data:`SHARED_CBOW`;
        Doc2Vec: :data:`PER_EXAMPLE` or :data:`SHARED_DBOW`): which entry point of
        :data:`ENTRIES` runs.
    seed : int
    n_parts : int

    Returns
    -------
    stats : numpy.ndarray of shape (n_parts, 3), float64
        Summed loss, number of examples and a NaN flag (1.0) per part.
    """
    chunk = ENTRIES[(job.chunk.doc is None, variant)]
    state = _phase_state(job, variant, seed, n_parts)
    n_threads = max(1, min(int(numba.get_num_threads()), int(n_parts)))
    sync = new_barrier()

    def stop_the_others():  # they stop at their next barrier; the error is raised after
        sync[ABORT] = 1

    on_threads(lambda k: chunk(job, k, n_threads, sync, state), n_threads, stop_the_others)
    return state.stats


class _CompileNotice(event.Listener):
    """Calls ``notify("start")`` when numba starts compiling (not loading from its disk cache)
    and ``notify(seconds)`` when that outermost compilation ends."""

    def __init__(self, notify):
        self.report, self.depth, self.t0 = notify, 0, 0.0

    def on_start(self, ev):
        self.depth += 1
        if self.depth == 1:
            self.t0 = time.perf_counter()
            self.report("start")

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.report(time.perf_counter() - self.t0)


@contextmanager
def compile_notice(notify):
    """Tell ``notify`` while a kernel compiles in this context (a first use, empty cache).

    numba's ``numba:compile`` event fires only when machine code is built, not when it is
    loaded from the on-disk cache, so a warm process never calls ``notify``.

    Parameters
    ----------
    notify : callable
        Called with ``"start"`` when an outermost compilation starts, then with its
        duration in seconds (float) when it ends.

    Examples
    --------
    >>> from skembed.kernels.scheduler import compile_notice
    >>> seen = []
    >>> with compile_notice(seen.append):
    ...     pass
    >>> seen
    []
    """
    with event.install_listener("numba:compile", _CompileNotice(notify)):
        yield


def train_word2vec_chunk(
    syn0, syn1neg, syn1, ids, offsets, config, alpha_start, alpha_end, seed, n_parts
):
    """Train on one corpus chunk split into ``n_parts`` contiguous slices of documents.

    See :mod:`skembed.kernels.word2vec`'s docstring for the parameters and the two modes
    (``config.sync_tokens``). Returns ``stats``, float64 of shape
    (n_parts, 3): summed loss, number of examples (skip-gram: pairs, CBOW:
    centre words) and a NaN flag per slice.

    A Python function: it passes the subword CSR and the phase length to the
    family's one compiled phase loop (:func:`skembed.kernels.run_phases`)
    as ``None`` when unused, so that numba compiles a variant without subword and
    buffer code for plain Word2Vec and lock-free threads (the ``is None`` tests are
    resolved at compile time; branches on them in the innermost loops cost ~30%), and
    chooses the train part once per chunk.
    """
    c = config
    sub = Subwords(c.sub_indptr, c.sub_indices) if c.sub_indptr.shape[0] > 0 else None
    phase = int(c.sync_tokens) if (c.sync_tokens > 0 and n_parts > 1) else None
    # CBOW with subword rows (FastText) keeps per-example negatives: measured 1.03-1.09x
    # only (the n-gram bags dominate) and its quality not measured over seeds
    shared = bool(c.shared_negatives and not c.hs and c.negative > 0 and (c.sg or sub is None))
    if not shared:
        variant = PER_EXAMPLE
    elif not c.sg:
        variant = SHARED_CBOW
    elif sub is not None:
        variant = SHARED_BAG
    else:
        variant = SHARED_SKIPGRAM
    chunk = Chunk(ids, offsets, sub, None)
    job = Job(Weights(syn0, syn1neg, syn1), chunk, c, phase, alpha_start, alpha_end)
    return run_phases(job, variant, seed, n_parts)


def train_doc2vec_chunk(
    weights, ids, offsets, documents, config, alpha_start, alpha_end, seed, n_parts
):
    """Train paragraph vectors on one corpus chunk split into ``n_parts`` slices of pieces.

    Parameters
    ----------
    weights : skembed.kernels._core.Weights
        ``syn0`` (float32, (n_words + n_doc_rows, dim)): the word input vectors, then the
        document (tag) vectors; ``syn1neg`` (float32, (n_words, dim) or (0, dim)) and
        ``syn1`` (float32, (n_words - 1, dim) or (0, dim)): the output layers (negative
        sampling, hierarchical softmax). Updated in place.
    ids : numpy.ndarray of shape (n_tokens,), int32
        Vocabulary ids of the chunk after subsampling.
    offsets : numpy.ndarray of shape (n_pieces + 1,), int64
    documents : skembed.kernels._core.Documents
        Row of ``syn0`` holding the document vector of each piece (int64, (n_pieces,)),
        and the mode (``dm``, ``dbow_words``, bools).
    config : skembed.kernels.word2vec.KernelConfig
        Output-layer tables, ``window`` and ``sync_tokens`` (the parallel
        scheme of the word2vec kernel, reused here).
    alpha_start, alpha_end : float
        Learning rate at the first and last token of each slice.
    seed : int
    n_parts : int
        Slices trained in parallel.

    Returns
    -------
    stats : numpy.ndarray of shape (n_parts, 3), float64
        Summed loss, number of examples and a NaN flag per slice.
    """
    c = config
    dm, dbow_words = bool(documents.dm), bool(documents.dbow_words)
    phase = int(c.sync_tokens) if (c.sync_tokens > 0 and n_parts > 1) else None
    # pure PV-DBOW with negative sampling only: the batched kernel (shared negatives)
    shared = bool(c.shared_negatives and not dm and not dbow_words and not c.hs and c.negative > 0)
    chunk = Chunk(ids, offsets, None, Documents(documents.rows, dm, dbow_words))
    job = Job(Weights(*weights), chunk, c, phase, alpha_start, alpha_end)
    return run_phases(job, SHARED_DBOW if shared else PER_EXAMPLE, seed, n_parts)

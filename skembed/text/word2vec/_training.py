"""The word2vec family's trainer (Word2Vec, FastText, Doc2Vec): corpus to trained weights.

An estimator of the family reads its parameters, encodes the corpus, picks
the vocabulary and initialises the weights; then one call, :func:`train`,
does the rest, in this file down to the call into the compiled kernels:

- :class:`EncodedCorpus`: the corpus tokenized once into int32 ids in chunks
  (a re-iterable corpus that is not a list is spilled to a temporary file),
  documents longer than :data:`MAX_DOCUMENT_LENGTH` split into pieces;
- :func:`kernel_config`: noise alias table, Huffman tree, sigmoid tables
  and the input-row CSR as one :class:`~skembed.kernels.word2vec.KernelConfig`;
- :func:`train`: subsampling probabilities, the thread limit, the engine
  (:func:`make_engine`, the one place engines are built) and the run's
  figures on the estimator;
- :func:`train_epochs`: the family's epoch step (linear learning-rate decay
  over all tokens, chunk seeds, frequent-word subsampling, the per-chunk
  divergence check) in the library's one loop,
  :class:`skembed.utils._training.EpochLoop`;
- :class:`NumbaEngine` (Doc2Vec: :class:`Doc2VecEngine`): the engine that
  hands each chunk to :func:`skembed.kernels.scheduler.train_word2vec_chunk`.

The torch engines live in :mod:`skembed.text.word2vec._engines`, behind
the small interface below.

Engine interface
----------------
An engine holds the three weight matrices (``syn0`` input rows, ``syn1neg``
negative-sampling output rows, ``syn1`` hierarchical-softmax inner nodes) and
has two methods:

``train_chunk(ids, offsets, alpha_start, alpha_end, seed) -> (loss, n_examples)``
    ``ids`` (int32, vocabulary ids after subsampling) and ``offsets`` (int64,
    ``n_docs + 1``) are one chunk; the learning rate decays linearly from
    ``alpha_start`` to ``alpha_end`` over it; ``seed`` (int) seeds the
    chunk's windows and negatives. Returns the summed loss (float, NaN if
    training diverged) and the number of examples (float).
``weights() -> (syn0, syn1neg, syn1)``
    The current matrices as C-contiguous float32 numpy arrays (``syn1neg``
    of shape (0, dim) without negative sampling, ``syn1`` of shape (0, dim)
    without hierarchical softmax).

Any object with these two methods can train a word2vec-family estimator
(a device-resident engine, for instance). An engine that trains document
vectors (:class:`Doc2VecEngine`) takes one more
argument, ``train_chunk(..., seed, doc_rows)``: the row of ``syn0`` holding
the vector of each piece's document (int64, ``n_docs``). The trainer passes it
when the estimator gives the rows of its documents (:func:`train_epochs`'s
``doc_rows``), and only then, so the word engines keep the five-argument call.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from array import array
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ...exceptions import diverged
from ...utils._compute import limit_threads
from ...utils._seeding import mix_seed
from ...utils._training import EpochLoop
from .._analyzer import effective_window  # re-exported: the shared window clip
from ._engines import KERNEL_LOCK, TorchEngine

logger = logging.getLogger(__name__)


def _tell(estimator, msg, level):
    """``msg`` on stderr at the estimator's ``verbose >= 1``, else a log record at ``level``."""
    if getattr(estimator, "verbose", 0):
        print(msg, file=sys.stderr, flush=True)
    else:
        logger.log(level, msg)


def compile_notifier(estimator):
    """The ``notify`` of :func:`skembed.kernels.scheduler.compile_notice` for ``estimator``.

    A kernel's first use with an empty numba cache compiles it (seconds to tens of
    seconds): one line on stderr at ``verbose >= 1``, else a logging warning, so a first
    fit never looks like a hang; the end is a line (``verbose``) or an INFO record.
    """
    name = type(estimator).__name__
    announced = []

    def notify(what):
        if what == "start":
            if announced:  # one announcement per fit (a fit may compile two kernels)
                return
            announced.append(True)
            msg = (
                f"{name}: compiling the numba training kernel for these parameters; once, "
                "then it is cached on disk (a few seconds)"
            )
        else:
            msg = f"{name}: training kernel compiled in {what:.1f} s"
        _tell(estimator, msg, logging.WARNING if what == "start" else logging.INFO)

    return notify


def idle_threads_notice(estimator, n_threads):
    """Say that deterministic training leaves threads idle (``n_threads > n_parts``).

    The numba engine's deterministic training runs ``n_parts`` parts, so at most
    ``n_parts`` of the ``n_threads`` threads work (``docs/benchmarks/word2vec.md``, "On 16 cores": the
    default 2 parts run skip-gram at 0.76M words/s on 16 threads of a 16-core Xeon, 16
    parts at 1.7-2.4M). One line on stderr at ``verbose >= 1``, else an INFO record: the
    fit is right, only slower than it could be.

    Parameters
    ----------
    estimator : Word2VecTransformer, FastTextTransformer or Doc2VecTransformer
        Its ``n_parts``, ``n_jobs`` and ``verbose`` are read.
    n_threads : int
        Threads the fit may use.
    """
    from ...kernels import MAX_DETERMINISTIC_PARTS

    n_parts = estimator.n_parts
    best = min(n_threads, MAX_DETERMINISTIC_PARTS)
    msg = (
        f"{type(estimator).__name__}: {n_threads} threads (n_jobs={estimator.n_jobs!r}) but "
        f"deterministic training with n_parts={n_parts} runs on {n_parts} of them; "
        f"n_parts={best} would use {best} (the vectors still do "
        "not depend on n_jobs; slower on 1-2 threads)"
        + (" and lock_free=True all of them" if hasattr(estimator, "lock_free") else "")
        + " (docs/word2vec.md)"
    )
    _tell(estimator, msg, logging.INFO)


__all__ = [
    "CHUNK_TOKENS",
    "MAX_DOCUMENT_LENGTH",
    "SYNC_TOKENS",
    "Doc2VecEngine",
    "EncodedCorpus",
    "NumbaEngine",
    "TrainedWeights",
    "chunk_seed",
    "effective_window",
    "kernel_config",
    "make_engine",
    "train",
    "train_epochs",
]

#: documents longer than this are split into pieces (gensim's MAX_WORDS_IN_BATCH)
MAX_DOCUMENT_LENGTH = 10_000
#: tokens per training chunk (memory per chunk: ~12 bytes per token)
CHUNK_TOKENS = 1 << 20
#: centre tokens per part between two merges of the deterministic parallel scheme
SYNC_TOKENS = 8192
#: upper bound of the ``window`` parameter (any larger value trains as the longest
#: document anyway, see :func:`effective_window`; the bound keeps the kernels' int64
#: position arithmetic far from overflow)
MAX_WINDOW = 2**31 - 1


class _FirstSeenIds(dict):
    """Word -> provisional id in first-seen order: looking up a new word assigns the next id.

    ``list(map(ids.__getitem__, tokens))`` encodes a document with the lookups in C;
    ``__missing__`` runs once per distinct word. Splitting and encoding debdocs' 11.4M
    tokens (566k lines, held in memory) took 2.8 s against 3.1-3.7 s with
    ``[ids.setdefault(t, len(ids)) for t in tokens]``; the whole encoding pass from the
    ``.gz`` (about 5 s, reading and the analyzer included) gains only that difference.
    """

    __slots__ = ()

    def __missing__(self, key):
        value = self[key] = len(self)
        return value


class EncodedCorpus:
    """The corpus encoded once as int32 ids in chunks, in memory or in a temporary file.

    Encoding uses provisional ids (first-seen order) so that one pass over the
    text both counts words and encodes them; the vocabulary is chosen
    afterwards and applied per chunk with a ``remap`` array. With
    ``key_to_index`` (warm start) the known vocabulary is used directly and
    unknown words are dropped. ``spill=True`` writes the chunks to an
    anonymous temporary file (re-iterable corpora larger than memory).

    Parameters
    ----------
    documents : iterable of str or of list of str
    analyzer : callable
        Document -> list of str.
    key_to_index : dict of str to int or None, default=None
        A fixed vocabulary (warm start); ``None`` collects one.
    spill : bool, default=False
        Keep the chunks in a temporary file instead of memory.
    chunk_tokens : int or None, default=None
        Tokens per chunk (:data:`CHUNK_TOKENS`).

    Attributes
    ----------
    n_tokens : int
        Raw tokens of the corpus (before unknown words are dropped).
    n_documents : int
    max_length : int
        Tokens of the longest piece (documents are split every
        :data:`MAX_DOCUMENT_LENGTH` tokens; unknown words already dropped with
        ``key_to_index``): no window reaches further, so the estimators clip
        ``window`` to it (:func:`effective_window`).
    keys : list of str or None
        The word of each provisional id (``None`` with ``key_to_index``, and once the
        estimator has chosen its vocabulary: training needs only the ids and a remap).
    counts : numpy.ndarray of shape (len(keys),), int64, or None
    """

    def __init__(self, documents, analyzer, key_to_index=None, spill=False, chunk_tokens=None):
        self.chunk_tokens = int(chunk_tokens or CHUNK_TOKENS)
        self._file = tempfile.TemporaryFile(prefix="skembed-w2v-") if spill else None
        self._chunks = []  # (ids, offsets, doc_of_piece) in memory, or file positions
        self.n_tokens = 0
        self.n_documents = 0
        self.max_length = 0
        vocab = _FirstSeenIds() if key_to_index is None else key_to_index
        fixed = key_to_index is not None
        buf = array("i")
        lengths = array("q")
        docs = array("q")
        get = vocab.get
        lookup = vocab.__getitem__  # a new word gets the next id (_FirstSeenIds.__missing__)
        max_length = 0
        for doc in documents:
            toks = analyzer(doc)
            self.n_tokens += len(toks)
            if fixed:
                row = [i for i in map(get, toks) if i is not None]
            else:
                row = list(map(lookup, toks))
            n = len(row)
            if n <= MAX_DOCUMENT_LENGTH:  # the common case: one piece, no slicing
                if n > max_length:
                    max_length = n
                buf.extend(row)
                lengths.append(n)
                docs.append(self.n_documents)
            else:
                for start in range(0, n, MAX_DOCUMENT_LENGTH):
                    piece = row[start : start + MAX_DOCUMENT_LENGTH]
                    max_length = max(max_length, len(piece))
                    buf.extend(piece)
                    lengths.append(len(piece))
                    docs.append(self.n_documents)
            self.n_documents += 1
            if len(buf) >= self.chunk_tokens:
                self._flush(buf, lengths, docs)
                buf, lengths, docs = array("i"), array("q"), array("q")
        if len(lengths):
            self._flush(buf, lengths, docs)
        self.max_length = max_length
        self.keys = None if fixed else list(vocab)
        self.counts = None
        if not fixed:
            counts = np.zeros(len(vocab), dtype=np.int64)
            for ids, _, _ in self.chunks(with_documents=True):
                counts += np.bincount(ids, minlength=len(vocab))
            self.counts = counts

    def _flush(self, buf, lengths, docs):
        ids = np.frombuffer(buf, dtype=np.int32).copy() if len(buf) else np.zeros(0, np.int32)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=offsets[1:])
        doc_of = np.frombuffer(docs, dtype=np.int64).copy()
        if self._file is None:
            self._chunks.append((ids, offsets, doc_of))
        else:
            pos = self._file.tell()
            for a in (ids, offsets, doc_of):
                self._file.write(a.tobytes())
            self._chunks.append((pos, ids.size, offsets.size))

    def __len__(self):
        return len(self._chunks)

    def chunks(self, with_documents=False):
        """Yield ``(ids int32, offsets int64)`` of each chunk in corpus order.

        With ``with_documents=True`` also the document number of each piece
        (int64 of shape (n_pieces,)): pieces of one long document share it.
        """
        for chunk in self._chunks:
            if self._file is None:
                ids, offsets, doc_of = chunk
            else:
                pos, n_ids, n_off = chunk
                self._file.seek(pos)
                ids = np.fromfile(self._file, dtype=np.int32, count=n_ids)
                offsets = np.fromfile(self._file, dtype=np.int64, count=n_off)
                doc_of = np.fromfile(self._file, dtype=np.int64, count=n_off - 1)
            yield (ids, offsets, doc_of) if with_documents else (ids, offsets)
        if self._file is not None:
            self._file.seek(0, os.SEEK_END)

    def document_counts(self, remap, n_words, matrix=True):
        """Document x word count matrix of the corpus under ``remap``, and the known tokens.

        Parameters
        ----------
        remap : numpy.ndarray of shape (n_provisional,), int32
            Vocabulary id of each id of the encoding (-1: not in the vocabulary).
        n_words : int
        matrix : bool, default=True
            Build the matrix (else only count the known tokens).

        Returns
        -------
        counts : scipy.sparse.csr_matrix of shape (n_documents, n_words), float64, or None
        n_known : int
            Tokens whose word is in the vocabulary.
        """
        rows, cols = [], []
        n_known = 0
        for ids, offsets, doc_of in self.chunks(with_documents=True):
            vocab_ids = remap[ids]
            known = vocab_ids >= 0
            n_known += int(known.sum())
            if matrix:
                rows.append(np.repeat(doc_of, np.diff(offsets))[known])
                cols.append(vocab_ids[known])
        if not matrix:
            return None, n_known
        rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        cols = np.concatenate(cols) if cols else np.zeros(0, np.int32)
        counts = sp.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(self.n_documents, n_words)
        )
        counts.sum_duplicates()
        return counts, n_known

    def close(self):
        """Delete the temporary file, if any."""
        if self._file is not None:
            self._file.close()
            self._file = None


def chunk_seed(seed, epoch, chunk):
    """Seed of one chunk of one epoch (windows, negatives and subsampling draws)."""
    return mix_seed(seed, epoch * 7919 + chunk * 104_729 + 1)


def kernel_config(
    counts, *, sg, hs, negative, window, shared_negatives, ns_exponent, input_rows, sync_tokens
):
    """Build the :class:`~skembed.kernels.word2vec.KernelConfig` of one fit.

    Parameters
    ----------
    counts : numpy.ndarray of shape (n_words,), int64
        Corpus count of each vocabulary word.
    sg, hs : bool
    negative, window : int
    shared_negatives : bool
    ns_exponent : float
    input_rows : tuple (indptr, indices) or (None, None)
        CSR of the input rows of each word (FastText), or ``(None, None)``.
    sync_tokens : int
        Centre tokens per part and phase of the deterministic parallel
        scheme (:data:`SYNC_TOKENS`), or 0 for lock-free threads.

    Returns
    -------
    config : KernelConfig
    """
    from ...kernels import sampling
    from ...kernels.word2vec import KernelConfig

    n_words = len(counts)
    neg_prob, neg_alias = sampling.alias_table(sampling.noise_distribution(counts, ns_exponent))
    if hs:
        codes, points, code_lengths = sampling.huffman_tree(counts)
    else:
        codes = np.zeros((n_words, 1), np.uint8)
        points = np.zeros((n_words, 1), np.int32)
        code_lengths = np.zeros(n_words, np.int32)
    sigmoid, log_sigmoid = sampling.sigmoid_tables()
    return KernelConfig(
        sg=bool(sg),
        hs=bool(hs),
        negative=int(negative),
        window=int(window),
        shared_negatives=bool(shared_negatives),
        neg_prob=neg_prob,
        neg_alias=neg_alias,
        codes=codes,
        points=points,
        code_lengths=code_lengths,
        sigmoid=sigmoid,
        log_sigmoid=log_sigmoid,
        sub_indptr=np.zeros(0, np.int64) if input_rows[0] is None else input_rows[0],
        sub_indices=np.zeros(0, np.int32) if input_rows[1] is None else input_rows[1],
        sync_tokens=int(sync_tokens),
    )


class NumbaEngine:
    """The compiled multi-threaded CPU engine (:func:`skembed.kernels.scheduler.train_word2vec_chunk`).

    Trains the numpy matrices in place; see the module docstring for the
    interface. It lives with the trainer, not with the torch engines of
    :mod:`skembed.text.word2vec._engines`, so that the epoch step and the
    call into the kernels read in one file.

    Parameters
    ----------
    syn0, syn1neg, syn1 : numpy.ndarray, float32
        Weight matrices (updated in place).
    config : KernelConfig
    n_threads : int
        Threads available. Lock-free training splits each chunk into this many
        slices.
    n_parts : int
        Parts of each chunk in deterministic training, whatever ``n_threads``
        (the threads execute them), with shorter phases above 2 parts
        (:func:`skembed.kernels.scheduler.training_partition`): the result
        depends on them, not on the thread count or timing.
    """

    def __init__(self, syn0, syn1neg, syn1, config, n_threads, n_parts):
        from ...kernels.scheduler import training_partition

        self.syn0, self.syn1neg, self.syn1 = syn0, syn1neg, syn1
        self.n_parts, sync_tokens = training_partition(n_threads, config.sync_tokens, n_parts)
        self.config = config._replace(sync_tokens=sync_tokens)

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed):
        from ...kernels.scheduler import train_word2vec_chunk as train_chunk

        with KERNEL_LOCK:
            stats = train_chunk(
                *self.weights(),
                ids,
                offsets,
                self.config,
                float(alpha_start),
                float(alpha_end),
                int(seed),
                self.n_parts,
            )
        return self._chunk_result(stats)

    @staticmethod
    def _chunk_result(stats):
        """``(loss, n_examples)`` from the kernel's per-slice ``(loss, examples, diverged)``."""
        if stats[:, 2].any():
            return float("nan"), 0.0
        return float(stats[:, 0].sum()), float(stats[:, 1].sum())

    def weights(self):
        return self.syn0, self.syn1neg, self.syn1


class Doc2VecEngine(NumbaEngine):
    """Paragraph-vector engine of the word2vec trainer (numba, deterministic threads).

    The engine interface around
    :func:`skembed.kernels.scheduler.train_doc2vec_chunk`, with the documents' rows as
    part of each chunk: ``train_chunk(ids, offsets, alpha_start, alpha_end,
    seed, doc_rows)`` (:func:`train_epochs` passes ``doc_rows`` when the
    estimator gives its documents' rows).

    Parameters
    ----------
    syn0 : numpy.ndarray of shape (n_words + n_rows, vector_size), float32
        Word input vectors, then the document (tag) vectors; trained in place.
    syn1neg, syn1 : numpy.ndarray, float32
        Output layers, trained in place.
    config : KernelConfig
    n_threads : int
        Threads available (:class:`NumbaEngine`).
    n_parts : int
        Parts of each chunk (:class:`NumbaEngine`); the result depends on
        them, not on the thread count or timing.
    dm, dbow_words : bool
    """

    def __init__(self, syn0, syn1neg, syn1, config, n_threads, n_parts, *, dm, dbow_words):
        super().__init__(syn0, syn1neg, syn1, config, n_threads, n_parts)
        self.dm, self.dbow_words = bool(dm), bool(dbow_words)

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed, doc_rows):
        """Train one chunk; ``doc_rows`` (int64, ``n_docs``): the ``syn0`` row of each piece."""
        from ...kernels.scheduler import Documents, Weights
        from ...kernels.scheduler import train_doc2vec_chunk as train_chunk

        with KERNEL_LOCK:
            stats = train_chunk(
                Weights(*self.weights()),
                ids,
                offsets,
                Documents(doc_rows, self.dm, self.dbow_words),
                config=self.config,
                alpha_start=float(alpha_start),
                alpha_end=float(alpha_end),
                seed=int(seed),
                n_parts=self.n_parts,
            )
        return self._chunk_result(stats)


#: mean loss per example (nats) above which a chunk counts as diverged although finite: a
#: negative-sampling example has ``negative + 1`` logistic terms of about ln 2 untrained, at most
#: 6 each in the numba kernels' clamped table, and hierarchical softmax one per code bit (under
#: 64), so a trained or untrained model stays far below; only exploding weights reach it
MAX_EXAMPLE_LOSS = 1e3


def train(
    estimator, corpus, remap, counts, weights, config, *, seed, history, publish, doc_rows=None
):
    """Train ``weights`` for the estimator's ``epochs`` passes and record the run on it.

    The trainer of the family: subsampling probabilities, the thread limit,
    the engine (:func:`make_engine`), then :func:`train_epochs`. Sets
    ``history_``, ``syn1neg_``/``syn1_`` (``None`` without their
    objective), ``n_words_trained_``, ``train_time_`` and
    ``words_per_second_``.

    Parameters
    ----------
    estimator : Word2VecTransformer, FastTextTransformer or Doc2VecTransformer
        Its training parameters are read (``sample``, ``n_jobs``,
        ``n_parts``, ``epochs``, ``alpha``, ``min_alpha``, ``engine_``, ...).
    corpus : EncodedCorpus
    remap : numpy.ndarray of shape (n_provisional,), int32
    counts : numpy.ndarray of shape (n_words,), int64
        Subsampling (``sample``) is computed from them.
    weights : tuple (syn0, syn1neg, syn1) of numpy.ndarray, float32
    config : KernelConfig
    seed : int
    history : list of dict
        The records so far (empty, or a continued fit's); epochs append to it.
    publish : callable
        ``publish(syn0, syn1neg, syn1)`` sets the variant's fitted vectors
        from the current weights; called after each epoch when there are
        callbacks, before they run.
    doc_rows : numpy.ndarray of shape (n_documents,), int64, or None, default=None
        Row of ``syn0`` of each document's vector (Doc2Vec); handed to the
        engine with each chunk.

    Returns
    -------
    weights : TrainedWeights
        The trained ``syn0``, ``syn1neg`` and ``syn1``.
    """
    from ...kernels.sampling import keep_probabilities

    keep = keep_probabilities(counts, estimator.sample)
    estimator.history_ = history
    pools = ("numba",) if estimator.engine_ == "numba" else ("torch",)
    with limit_threads(estimator.n_jobs, modules=pools) as n_threads:
        engine = make_engine(estimator, *weights, config, seed, n_threads, corpus.n_tokens)
        if pools == ("numba",) and config.sync_tokens and n_threads > estimator.n_parts:
            idle_threads_notice(estimator, n_threads)

        def epoch_end():
            publish(*engine.weights())

        run = train_epochs(
            estimator,
            engine,
            corpus,
            remap,
            keep,
            epochs=estimator.epochs,
            alpha=estimator.alpha,
            min_alpha=estimator.min_alpha,
            seed=seed,
            publish=epoch_end,
            doc_rows=doc_rows,
            n_threads=n_threads,
        )
    trained = TrainedWeights(*engine.weights())
    estimator.history_ = history
    estimator.syn1neg_ = trained.syn1neg if estimator.negative > 0 else None
    estimator.syn1_ = trained.syn1 if estimator.hs else None
    estimator.n_words_trained_ = run.n_words_trained
    estimator.train_time_ = run.train_time
    seconds = run.train_time
    estimator.words_per_second_ = run.n_words_trained / seconds if seconds > 0 else 0.0
    return trained


class TrainedWeights(NamedTuple):
    """The three weight matrices of a word2vec-family model, float32.

    Parameters
    ----------
    syn0 : numpy.ndarray of shape (n_rows, vector_size)
        Input rows (words; then n-gram buckets or document rows).
    syn1neg : numpy.ndarray of shape (n_words or 0, vector_size)
        Negative-sampling output rows.
    syn1 : numpy.ndarray of shape (n_words - 1 or 0, vector_size)
        Hierarchical-softmax inner nodes.
    """

    syn0: np.ndarray
    syn1neg: np.ndarray
    syn1: np.ndarray


def make_engine(estimator, syn0, syn1neg, syn1, config, seed, n_threads, n_tokens=0):
    """The engine that trains this fit: the one place the family's engines are built.

    ``estimator.engine_`` names it: ``"numba"`` builds the estimator's
    ``_numba_engine`` (:class:`NumbaEngine`, Doc2Vec's :class:`Doc2VecEngine`),
    ``"torch"`` a :class:`~skembed.text.word2vec._engines.TorchEngine`,
    ``"torch-batched"`` the estimator's ``_batched_engine``.

    Parameters
    ----------
    estimator : Word2VecTransformer, FastTextTransformer or Doc2VecTransformer
    syn0, syn1neg, syn1 : numpy.ndarray, float32
        Initial weights (the numba engines train them in place).
    config : KernelConfig
    seed : int
        Seeds the torch engines' generators.
    n_threads : int
        Threads the numba engines may use; deterministic training runs
        ``n_parts`` parts on them
        (:func:`~skembed.kernels.scheduler.training_partition`).
    n_tokens : int, default=0
        Tokens per epoch: ``batch_size=None`` of the batched torch engine
        is :func:`~skembed.nn.sgns.default_batch_words` of it.

    Returns
    -------
    engine : object with the engine interface (see the module docstring)
    """
    name = estimator.engine_
    if name == "torch":
        return TorchEngine(
            syn0, syn1neg, syn1, config, estimator.device_, estimator.batch_size or 4096, seed
        )
    if name == "torch-batched":
        from ...nn.sgns import default_batch_words

        batch = estimator.batch_size or default_batch_words(n_tokens, config.sg)
        return estimator._batched_engine(
            syn0, syn1neg, syn1, config, estimator.device_, batch, seed
        )
    return estimator._numba_engine(
        syn0, syn1neg, syn1, config, n_threads, estimator.n_parts, **estimator._engine_options()
    )


class EpochsRun(NamedTuple):
    """What :func:`train_epochs` ran.

    Parameters
    ----------
    n_words_trained : int
        Raw tokens times epochs run.
    train_time : float
        Seconds spent training (encoding excluded).
    """

    n_words_trained: int
    train_time: float


def train_epochs(
    estimator,
    engine,
    corpus,
    remap,
    keep,
    *,
    epochs,
    alpha,
    min_alpha,
    seed,
    publish=None,
    doc_rows=None,
    n_threads=1,
):
    """Train ``engine`` on ``corpus`` for ``epochs`` passes of the library's one loop.

    The word2vec family's epoch step (chunks in a fixed order, linear
    learning-rate decay over the raw tokens); the loop around it, with
    ``history_``, progress, callbacks and the divergence check, is the
    library's one training loop (:class:`~skembed.utils._training.EpochLoop`),
    iterated here so that the step runs in this function's frame.

    Parameters
    ----------
    estimator : Word2VecTransformer, FastTextTransformer or Doc2VecTransformer
        Its ``history_`` must be set (an empty list, or the previous fits'
        records for ``warm_start``); epochs are numbered from its length and
        ``callbacks``, ``verbose`` and ``alpha`` are read from it.
    engine : NumbaEngine, TorchEngine or any object with the engine interface
    corpus : EncodedCorpus
    remap : numpy.ndarray of shape (n_provisional,), int32
        Vocabulary id of each id of the encoding (-1: dropped).
    keep : numpy.ndarray of shape (n_words,), float32
        Subsampling keep probability of each word.
    epochs : int
    alpha, min_alpha : float
        Learning rate, decayed linearly over ``epochs * corpus.n_tokens`` raw tokens.
    seed : int
    publish : callable or None, default=None
        Called with no argument before the callbacks of an epoch run (only
        when the estimator has callbacks): sets ``wv_`` (Doc2Vec: ``dv_``)
        from the current weights.
    doc_rows : numpy.ndarray of shape (n_documents,), int64, or None, default=None
        Row of ``syn0`` of each document's vector: with it, each chunk's
        engine call gets ``doc_rows[document of each piece]`` as sixth argument
        (Doc2Vec's engine); without it the call has the five arguments of the
        engine interface.
    n_threads : int, default=1
        Threads that prepare each chunk (vocabulary remap and subsampling,
        :func:`skembed.kernels.word2vec.prepare_chunk`; the same tokens on any count).

    Returns
    -------
    run : EpochsRun
        Raw tokens times epochs run, and the seconds spent training.

    Raises
    ------
    TrainingDivergedError
        If the loss of a chunk is not finite (``alpha`` is too high).
    """
    from ...kernels.scheduler import compile_notice
    from ...kernels.word2vec import prepare_chunk

    total = max(corpus.n_tokens * epochs, 1)
    done = 0
    train_time = 0.0

    def rate(tokens_done):  # linear decay over every epoch's raw tokens
        return alpha - (alpha - min_alpha) * tokens_done / total

    def epoch_step(epoch):
        nonlocal done, train_time
        t0 = time.perf_counter()
        loss = n_examples = 0.0
        a1 = alpha
        for c, (raw_ids, raw_offsets, documents) in enumerate(corpus.chunks(with_documents=True)):
            a0, a1 = rate(done), rate(done + int(raw_ids.size))
            done += int(raw_ids.size)
            s = chunk_seed(seed, epoch, c)
            ids, offsets, _ = prepare_chunk(raw_ids, raw_offsets, remap, keep, s, n_threads)
            if doc_rows is None:
                chunk_loss, chunk_n = engine.train_chunk(ids, offsets, a0, a1, s)
            else:  # a document-vector engine: the row of each piece's document
                chunk_loss, chunk_n = engine.train_chunk(
                    ids, offsets, a0, a1, s, doc_rows[documents]
                )
            check_chunk_loss(estimator, engine, epoch, chunk_loss, chunk_n, alpha)
            loss += chunk_loss
            n_examples += chunk_n
        seconds = time.perf_counter() - t0
        train_time += seconds
        return epoch_record(loss / max(n_examples, 1.0), a1, corpus.n_tokens, seconds)

    callbacks = estimator.callbacks
    refresh = (lambda record: publish()) if callbacks and publish is not None else None
    loop = EpochLoop(
        estimator,
        n_epochs=epochs,
        callbacks=callbacks,
        verbose=estimator.verbose,
        diverged_parameter="alpha",
        diverged_hint=ALPHA_HINT,
        before_callbacks=refresh,
    )
    with compile_notice(compile_notifier(estimator)):
        for epoch in loop:  # the library's one loop, iterated here: the step runs in this frame
            loop.end_epoch(epoch_step(epoch))
    return EpochsRun(done, train_time)


def epoch_record(loss, learning_rate, words, seconds):
    """The keys the family adds to an epoch's history record (the loop adds the rest)."""
    return {
        "loss": loss,
        "learning_rate": learning_rate,
        "words": words,
        "words_per_second": words / seconds if seconds > 0 else 0.0,
    }


#: what the divergence error advises about ``alpha``
ALPHA_HINT = "gensim's default is 0.025 for skip-gram, 0.05 for CBOW."


def check_chunk_loss(estimator, engine, epoch, chunk_loss, chunk_n, alpha):
    """Raise if one chunk diverged: a loss that is not finite, or one per example over
    :data:`MAX_EXAMPLE_LOSS` (a finite loss far above any trained model's is divergence too:
    a GPU fit once reached 1e8-3e12 per example and "trained").

    The check runs per chunk, so a fit stops at the chunk, not at the epoch's end.
    The engine names what to change (torch-batched: its batch), else ``alpha``.

    Raises
    ------
    TrainingDivergedError
    """
    per_example = chunk_loss / chunk_n if chunk_n > 0 else 0.0
    if not np.isfinite(chunk_loss) or per_example > MAX_EXAMPLE_LOSS:
        advice = getattr(engine, "divergence_advice", None)
        parameter, value, why = advice(alpha) if advice else ("alpha", alpha, ALPHA_HINT)
        raise diverged(
            estimator,
            epoch=epoch,
            loss=chunk_loss if not np.isfinite(chunk_loss) else per_example,
            parameter=parameter,
            value=value,
            hint=why,
        )

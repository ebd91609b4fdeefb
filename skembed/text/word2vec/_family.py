"""The word2vec family's estimator base: what Word2Vec, FastText and Doc2Vec share.

:class:`Word2VecFamilyMixin` holds the family's rules once: the parameter
constraints the three estimators have in common, the cross-parameter checks,
the vocabulary and the remap of the encoded corpus, the input-matrix
initialisation, the output-layer allocation and the kernel configuration.
Training itself is one call into the trainer,
:func:`skembed.text.word2vec._training.train` (engine, epochs, the run's
figures). A variant overrides the step it changes:

- :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer` continues a fit
  (``warm_start``: :meth:`~Word2VecFamilyMixin._warm`), picks a torch engine
  (``engine_``) and publishes ``wv_``;
- :class:`~skembed.text.word2vec._fasttext.FastTextTransformer` adds the n-gram rows
  (``_init_input_matrix``, the input-row CSR);
- :class:`~skembed.text.word2vec._doc2vec.Doc2VecTransformer` appends the document rows
  to the input matrix, trains with :class:`~skembed.text.word2vec._training.Doc2VecEngine`
  (:attr:`~Word2VecFamilyMixin._numba_engine`) and gives the trainer the row of
  each document (``doc_rows``), which reaches the engine with each chunk.

The corpus encoding, the kernel tables, the numba engine and the epoch step are in
:mod:`skembed.text.word2vec._training`; the torch engines in
:mod:`skembed.text.word2vec._engines`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ...kernels import MAX_DETERMINISTIC_PARTS
from ...utils._compute import THREAD_PARAMETER_CONSTRAINTS
from ...utils._schema import Array, Number
from ._engines import SgnsEngine
from ._training import MAX_WINDOW, EncodedCorpus, NumbaEngine, kernel_config

#: the most noise words per word (``negative``); gensim's guidance is 5-20
MAX_NEGATIVE = 1000

#: most epochs a fit (or a Doc2Vec inference) may run
MAX_EPOCHS = 10_000

__all__ = ["FAMILY_PARAMETER_CONSTRAINTS", "Word2VecFamilyMixin"]

#: the parameter rules Word2Vec, FastText and Doc2Vec share (``n_jobs`` and ``random_state``
#: included); each estimator adds its own (``sg``, ``engine``, ``dm``, ``infer_alpha``, ...)
FAMILY_PARAMETER_CONSTRAINTS = {
    "vector_size": [Interval(Integral, 1, None, closed="left")],
    "window": [Interval(Integral, 1, MAX_WINDOW, closed="both")],
    "min_count": [Interval(Integral, 1, None, closed="left")],
    "max_vocab_size": [Interval(Integral, 1, None, closed="left"), None],
    "hs": [Interval(Integral, 0, 1, closed="both")],
    # noise words drawn per word, also at inference: bounded so a stored value cannot hang it
    "negative": [Interval(Integral, 0, MAX_NEGATIVE, closed="both")],
    "ns_exponent": [Interval(Real, None, None, closed="neither")],
    "sample": [Interval(Real, 0, None, closed="left")],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "min_alpha": [Interval(Real, 0, None, closed="left")],
    # bounded so that a stored value cannot make a fit or an inference run for days
    "epochs": [Interval(Integral, 1, MAX_EPOCHS, closed="both")],
    **THREAD_PARAMETER_CONSTRAINTS,
    "n_parts": [Interval(Integral, 1, MAX_DETERMINISTIC_PARTS, closed="both")],
    "callbacks": [list, tuple, None],
    "verbose": ["verbose"],
}


class Word2VecFamilyMixin:
    """The rules of the word2vec family (see the module docstring).

    Goes left of the estimator's other bases. The estimator provides the
    family's parameters (:data:`FAMILY_PARAMETER_CONSTRAINTS`) and its fit
    calls, in order: :meth:`_check_params` (before ``X`` is read),
    :meth:`_encode`, :meth:`_vocabulary`, :meth:`_init_input_matrix` and
    :meth:`_output_layers`, :meth:`_kernel_config`, then the trainer,
    :func:`skembed.text.word2vec._training.train`.
    """

    #: learning-rate parameters that decay to ``min_alpha`` (Doc2Vec adds ``infer_alpha``)
    _decaying_rates = ("alpha",)
    #: the output layers the kernels index by word id, checked on load (utils._schema)
    _state_schema = {
        "syn1neg_": Array("float32", ("V", "D"), finite=True, optional="negative"),
        "syn1_": Array("float32", ("V-1", "D"), finite=True, optional="hs"),
        "vector_size": Number(low=1, size="D"),
    }
    #: the class of the numba engine (Doc2Vec: :class:`~skembed.text.word2vec._training.Doc2VecEngine`)
    _numba_engine = NumbaEngine
    #: the class of the batched torch engine (Doc2Vec: :class:`~skembed.text.word2vec._engines.DbowEngine`)
    _batched_engine = SgnsEngine

    # ------------------------------------------------------------------ rules
    def _check_params(self):
        """The family's cross-parameter rules, checked before the corpus is read.

        Raises
        ------
        ValueError
            If ``min_alpha`` exceeds one of :attr:`_decaying_rates` (``None``
            values are skipped), or ``negative=0`` with ``hs=0`` (no training
            objective).
        """
        for name in self._decaying_rates:
            value = getattr(self, name)
            if value is not None and self.min_alpha > value:
                raise ValueError(
                    f"min_alpha={self.min_alpha} exceeds {name}={value}: the learning rate "
                    f"decays from {name} to min_alpha, so min_alpha must not exceed it."
                )
        if not self.hs and self.negative == 0:
            raise ValueError(
                "negative=0 and hs=0 leave no training objective; set negative > 0 (negative "
                "sampling) or hs=1 (hierarchical softmax)."
            )

    def _warm(self):
        """Whether this fit continues the fitted model (Word2Vec's ``warm_start``)."""
        return False

    def _engine_options(self):
        """Keyword arguments of :attr:`_numba_engine` beyond the weights and the config
        (:func:`~skembed.text.word2vec._training.make_engine`)."""
        return {}

    # ------------------------------------------------------------------ corpus and weights
    def _encode(self, documents, analyzer):
        """The corpus encoded once (:class:`EncodedCorpus`); spilled unless a list or tuple.

        A continued fit encodes with the fitted vocabulary (unknown words dropped).
        """
        known = self.wv_.key_to_index if self._warm() else None
        spill = not isinstance(documents, (list, tuple))
        return EncodedCorpus(documents, analyzer, key_to_index=known, spill=spill)

    def _vocabulary(self, corpus):
        """The vocabulary of the encoded corpus and the remap of its provisional ids.

        Parameters
        ----------
        corpus : EncodedCorpus

        Returns
        -------
        index_to_key : list of str
            Kept words (``min_count``, ``max_vocab_size``), most frequent first;
            a continued fit keeps the fitted ones.
        counts : numpy.ndarray of shape (n_words,), int64
        remap : numpy.ndarray of shape (n_provisional,), int32
            Vocabulary id of each id of the encoding (-1: dropped).
        """
        from .._analyzer import vocabulary_order

        if self._warm():
            n = len(self.wv_)
            return self.wv_.index_to_key, self.wv_.counts, np.arange(n, dtype=np.int32)
        order = vocabulary_order(corpus.counts, self.min_count, self.max_vocab_size)
        keys = corpus.keys
        index_to_key = [keys[i] for i in order]
        counts = corpus.counts[order]
        remap = np.full(len(keys), -1, dtype=np.int32)
        remap[order] = np.arange(order.size, dtype=np.int32)
        corpus.keys = None  # training reads ids and the remap: drop the other provisional words
        return index_to_key, counts, remap

    def _init_input_matrix(self, n_rows, rng):
        """Fresh input matrix: ``(rand - 0.5) / vector_size`` per entry, as word2vec.c.

        Parameters
        ----------
        n_rows : int
            Word rows (Doc2Vec: then the document rows; FastText adds its buckets).
        rng : numpy.random.Generator

        Returns
        -------
        syn0 : numpy.ndarray of shape (n_rows, vector_size), float32
        """
        syn0 = rng.random((n_rows, self.vector_size), dtype=np.float32)
        syn0 -= np.float32(0.5)
        syn0 /= np.float32(self.vector_size)
        return syn0

    def _output_layers(self, n_words):
        """Zero output layers, or copies of the fitted ones when the fit continues.

        Returns
        -------
        syn1neg : numpy.ndarray of shape (n_words or 0, vector_size), float32
            Negative-sampling output rows (0 rows with ``negative=0``).
        syn1 : numpy.ndarray of shape (max(n_words - 1, 1) or 0, vector_size), float32
            Hierarchical-softmax inner nodes (0 rows with ``hs=0``).
        """
        dim, warm = self.vector_size, self._warm()
        if warm and self.negative > 0:
            syn1neg = self.syn1neg_.copy()
        else:
            syn1neg = np.zeros((n_words if self.negative > 0 else 0, dim), np.float32)
        if warm and self.hs:
            syn1 = self.syn1_.copy()
        else:
            syn1 = np.zeros((max(n_words - 1, 1) if self.hs else 0, dim), np.float32)
        return syn1neg, syn1

    def _kernel_config(
        self, counts, window, *, sg, shared_negatives, sync_tokens, input_rows=(None, None)
    ):
        """The :class:`~skembed.kernels.word2vec.KernelConfig` of ``counts`` under this objective.

        ``hs``, ``negative`` and ``ns_exponent`` are the estimator's; the
        variant gives the rest (see :func:`~skembed.text.word2vec._training.kernel_config`).
        """
        return kernel_config(
            counts,
            sg=sg,
            hs=self.hs,
            negative=self.negative,
            window=window,
            shared_negatives=shared_negatives,
            ns_exponent=self.ns_exponent,
            input_rows=input_rows,
            sync_tokens=sync_tokens,
        )

"""Base classes shared by the text estimators.

``TextEmbedderMixin`` holds what every text estimator has (tags, text-input
parameter rules, the analyzer); ``ModelTokenizedMixin`` extends it for the
estimators whose model tokenizes the raw text. ``BaseWordEmbedder`` is the base of every
estimator that learns word vectors (``wv_``) and pools them per document:
a subclass implements ``_fit_word_vectors`` and gets ``fit``, ``transform``,
pooling, unknown-word handling, :meth:`BaseWordEmbedder.oov_rate` and
``get_feature_names_out`` from here.
"""

from __future__ import annotations

import re
from itertools import chain
from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._schema import Array, CheckedStateMixin, Ids, Vectors
from ..utils._state import restore_on_failure
from ..utils._validation import check_documents
from ._analyzer import build_analyzer, encode, iter_tokens
from ._pooling import (
    POOLING_OPTIONS,
    count_matrix,
    first_principal_component,
    pool,
    sif_weights,
    smooth_idf,
)
from .corpus import DaskCorpus

TEXT_PARAMETER_CONSTRAINTS = {
    "lowercase": ["boolean"],
    "token_pattern": [str, None],
    "tokenizer": [callable, None],
    "handle_missing": [StrOptions({"error", "empty"})],
    "handle_unknown": [StrOptions({"zeros", "nan", "error"})],
    "dtype": [type, StrOptions({"float16", "float32", "float64"}), np.dtype],
}


def oov_fraction(token_lists, vocabulary):
    """Fraction of the tokens not in ``vocabulary`` (0.0 without tokens); C-speed membership.

    Parameters
    ----------
    token_lists : iterable of list of str
    vocabulary : container of str

    Returns
    -------
    rate : float
        In ``[0, 1]``.

    Examples
    --------
    >>> oov_fraction([["a", "b"], ["c", "d"]], {"a": 0})
    0.75
    """
    tokens = list(chain.from_iterable(token_lists))
    if not tokens:
        return 0.0
    return 1.0 - sum(map(vocabulary.__contains__, tokens)) / len(tokens)


class TextEmbedderMixin(CheckedStateMixin):
    """Tags and helpers common to every text estimator (documents in, dense vectors out)."""

    _vocabulary_attributes = ("vocabulary_",)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.input_tags.one_d_array = True
        tags.input_tags.allow_nan = True
        return tags

    def _analyzer(self):
        return build_analyzer(
            lowercase=self.lowercase,
            token_pattern=self.token_pattern
            if self.token_pattern is not None
            else r"(?u)\b\w\w+\b",
            tokenizer=self.tokenizer,
        )

    def _check_documents(self, X, allow_iterable=False):
        documents = check_documents(
            X, handle_missing=self.handle_missing, allow_iterable=allow_iterable
        )
        if hasattr(documents, "__dask_graph__"):  # a dask bag or Series, allowed above
            return DaskCorpus(documents)  # streamed one partition at a time
        return documents

    def _fitted_vocabulary(self):
        """The fitted mapping word -> index whose words count as known."""
        return self.vocabulary_

    def oov_rate(self, X):
        """Fraction of the tokens of ``X`` that are not in the vocabulary.

        ``oov_rate_`` is this on the training documents (recorded in ``fit``;
        ``transform`` records nothing).

        Parameters
        ----------
        X : iterable of str or of list of str
            Documents, tokenized as in ``fit``.

        Returns
        -------
        rate : float
            In ``[0, 1]``; 0.0 when ``X`` has no token.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.

        Examples
        --------
        >>> from skembed import TfidfLSA
        >>> lsa = TfidfLSA(n_components=1, stop_words=None).fit(["the cat sat", "the dog sat"])
        >>> lsa.oov_rate(["the cow sat", "a cat"])  # "cow" of 4 tokens ("a" is too short)
        0.25
        """
        check_is_fitted(self)
        analyzer = self._analyzer()
        tokens = (analyzer(doc) for doc in self._check_documents(X))
        return oov_fraction(tokens, self._fitted_vocabulary())

    def _apply_handle_unknown(self, out, empty):
        """Set rows of documents without known words per ``handle_unknown``."""
        if not empty.any():
            return out
        if self.handle_unknown == "error":
            rows = np.flatnonzero(empty)
            raise ValueError(
                f"{len(rows)} document(s) have no known word (first rows: {rows[:10].tolist()}); "
                "set handle_unknown='zeros' or 'nan' to embed them as zero or NaN vectors."
            )
        out[empty] = np.nan if self.handle_unknown == "nan" else 0.0
        return out


#: lone surrogate code points (what ``errors="surrogateescape"`` reading produces)
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text):
    """``text`` with lone surrogates replaced by U+FFFD (tokenizers cannot encode them)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


class ModelTokenizedMixin(TextEmbedderMixin):
    """Text estimators whose model's own tokenizer reads the documents (BERT pooling, static
    vectors distilled from a transformer)."""

    def _analyzer(self):
        """Whitespace split: the model tokenizes text itself, and pre-tokenized documents are
        joined with single spaces, so ``[d.split() for d in X]`` embeds exactly like ``X``."""
        return str.split

    def _texts(self, documents):
        """Checked documents as the strings given to the tokenizer (pre-tokenized ones joined
        with single spaces, lone surrogates replaced by U+FFFD)."""
        return [clean_text(d if isinstance(d, str) else " ".join(d)) for d in documents]


class LearnedWords(NamedTuple):
    """What a word-vector estimator's training gives :meth:`BaseWordEmbedder.fit`.

    Parameters
    ----------
    wv : KeyedVectors
        The word vectors, ``counts`` set.
    doc_counts : scipy.sparse.csr_matrix of shape (n_documents, n_words) or None
        The training documents' word counts, when training computed them.
    oov_rate : float or None
        The fraction of training tokens outside the vocabulary, when known.
    """

    wv: object
    doc_counts: object = None
    oov_rate: float | None = None


class BaseWordEmbedder(
    TextEmbedderMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Base of the estimators that learn word vectors and pool them per document.

    Subclasses define ``__init__`` (storing parameters only), extend
    ``_parameter_constraints`` and implement ``_fit_word_vectors(documents,
    analyzer)``, which returns a :class:`LearnedWords`: a
    :class:`~skembed.KeyedVectors` with ``counts`` set and, when training
    already had them, the training documents' count matrix and the fraction
    of training tokens outside the vocabulary (else they are computed here,
    with one more pass over the documents). They may override
    ``_check_params()``, called before ``X`` is read, for cross-parameter
    and device checks. An estimator that writes its own ``fit`` (Word2Vec,
    whose fit then reads down to its trainer in one file) ends it with
    ``_set_learned``, as this one does.

    ``fit`` is all or nothing: if it raises (including ``KeyboardInterrupt``
    or an exception from a callback), every attribute is restored to its
    state before the call, so a fresh estimator stays unfitted and a
    ``warm_start`` one keeps its previous fit.
    """

    _parameter_constraints: dict = {
        **TEXT_PARAMETER_CONSTRAINTS,
        "pooling": [StrOptions(set(POOLING_OPTIONS))],
        "sif_coefficient": [Interval(Real, 0, None, closed="neither")],
    }
    #: accept re-iterable corpus objects (LineCorpus) in fit without materialising them
    _accepts_iterable_corpus = False
    #: fitted state (checked on load, utils._schema): ids of ``vocabulary_`` index ``wv_``'s rows
    _state_schema = {
        "wv_": Vectors("V", "D"),
        "vocabulary_": Ids("W", below="V"),
        "idf_": Array("f", ("V",), finite=True, optional=True),
        "sif_component_": Array("f", ("D",), finite=True, optional=True),
    }

    def _fit_word_vectors(self, documents, analyzer):  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_params(self):
        """Checks that need more than ``_parameter_constraints`` (run before ``X`` is read)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn word vectors from the documents in ``X``.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Raw documents (tokenized by the analyzer) or pre-tokenized ones.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        TypeError
            If ``X`` is a single string or holds non-text documents.
        ValueError
            If ``X`` is empty, a document is missing (see ``handle_missing``)
            or the vocabulary is empty after ``min_count``.
        """
        with restore_on_failure(self):
            self._check_params()
            documents = self._check_documents(X, allow_iterable=self._accepts_iterable_corpus)
            analyzer = self._analyzer()
            self._set_learned(documents, analyzer, self._fit_word_vectors(documents, analyzer))
        return self

    def _set_learned(self, documents, analyzer, learned):
        """Set ``wv_``, ``vocabulary_``, ``oov_rate_`` and the pooling weights from a
        :class:`LearnedWords` (what ``fit`` does after training, for every word embedder)."""
        wv, counts, oov = learned.wv, learned.doc_counts, learned.oov_rate
        self.wv_ = wv
        self.vocabulary_ = wv.key_to_index
        self._n_features_out = wv.vector_size
        if oov is None or (counts is None and self.pooling in ("tfidf", "sif")):
            counts, n_tokens, n_known = self._encode_counts(documents, analyzer)
            oov = 1.0 - n_known / n_tokens if n_tokens else 0.0
        self.oov_rate_ = float(oov)
        self._fit_pooling(documents, analyzer, counts)

    def _fitted_vocabulary(self):
        return self.wv_.key_to_index

    def _encode_counts(self, documents, analyzer):
        ids, offsets, n_tokens = encode(iter_tokens(documents, analyzer), self.wv_.key_to_index)
        return count_matrix(ids, offsets, len(self.wv_)), n_tokens, len(ids)

    def _fit_pooling(self, documents, analyzer, counts=None):
        self.idf_ = None
        self.sif_component_ = None
        if self.pooling not in ("tfidf", "sif"):
            return
        if counts is None:
            counts = self._encode_counts(documents, analyzer)[0]
        self.idf_ = smooth_idf(counts)
        if self.pooling == "sif":
            weights = sif_weights(self.wv_.counts, self.sif_coefficient)
            pooled = pool(counts, self.wv_.vectors, "sif", sif_weight=weights)
            self.sif_component_ = first_principal_component(pooled)

    def transform(self, X):
        """Embed each document as the pooled vectors of its known words.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size), ``dtype``
            ``dtype`` (float32 by default). Documents without any known word
            get zeros, NaN or an error per ``handle_unknown``. Nothing is
            stored on the estimator (see :meth:`oov_rate`).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            If ``handle_unknown="error"`` and a document has no known word.
        """
        check_is_fitted(self, "wv_")
        documents = self._check_documents(X)
        counts = self._encode_counts(documents, self._analyzer())[0]
        weights = (
            sif_weights(self.wv_.counts, self.sif_coefficient) if self.pooling == "sif" else None
        )
        out = pool(
            counts,
            self.wv_.vectors,
            self.pooling,
            idf=self.idf_,
            sif_weight=weights,
            sif_component=self.sif_component_,
        )
        empty = np.diff(counts.indptr) == 0
        out = self._apply_handle_unknown(out, empty)
        return out.astype(self.dtype, copy=False)

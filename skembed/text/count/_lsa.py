"""TfidfLSA: TF-IDF or log-entropy weighting followed by truncated SVD (latent semantic analysis)."""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...utils._compute import (
    COMPUTE_PARAMETER_CONSTRAINTS,
    limit_threads,
    resolve_compute,
)
from ...utils._schema import (
    Array,
    Ids,
    Instance,
    Number,
    Same,
    check_ids,
    is_packed_keys,
    unpack_vocabulary,
)
from ...utils._seeding import seed_from_random_state
from .._analyzer import DEFAULT_TOKEN_PATTERN, vectorizer_kwargs
from .._base import TEXT_PARAMETER_CONSTRAINTS, TextEmbedderMixin, oov_fraction
from ._svd import torch_truncated_svd


class TfidfLSA(TextEmbedderMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Latent semantic analysis: weighted term-document vectors reduced by truncated SVD.

    With ``weighting="tfidf"`` on ``device="cpu"`` this is exactly
    ``make_pipeline(TfidfVectorizer(...), TruncatedSVD(...))`` with the same
    parameters; ``weighting="log_entropy"`` weighs the counts as Dumais (1991)
    and gensim's ``LogEntropyModel``. On a torch device (or with
    ``engine="torch"``) the SVD runs with ``torch.svd_lowrank`` on the sparse
    weighted matrix.

    Parameters
    ----------
    n_components : int, default=100
        Width of the embedding; must be smaller than the vocabulary size.
    min_df, max_df : int or float, default=1, 1.0
        Document-frequency bounds of the vocabulary, as in ``TfidfVectorizer``.
    max_features : int or None, default=None
        Keep only the most frequent terms.
    weighting : {"log_entropy", "tfidf"}, default="log_entropy"
        Term weights before the SVD: scikit-learn's TF-IDF, or log-entropy
        ``log(1 + tf) * g`` with the global weight ``g = 1 + sum_d p log(p) /
        log(n_documents)``, ``p`` the share of the term's corpus count in
        document ``d`` (0 for a term spread evenly over all documents, 1 for a
        term in one document; see Notes).
    stop_words : "english", list of str or None, default="english"
        Words left out of the vocabulary (scikit-learn's ``stop_words``:
        ``"english"`` is its built-in list). A document left with no term
        follows ``handle_unknown``, as an empty document.
    sublinear_tf : bool, default=False
        ``weighting="tfidf"``: use ``1 + log(tf)``. Log-entropy's local weight
        is always ``log(1 + tf)``.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        Word n-gram lengths, ``1 <= min_n <= max_n <= 64``.
    norm : {"l2", "l1"} or None, default="l2"
        Row normalisation of the weighted matrix.
    algorithm : {"randomized", "arpack"}, default="randomized"
        SVD solver of ``TruncatedSVD`` (CPU engine).
    n_iter : int, default=5
        Power iterations of the randomized solvers.
    lowercase : bool, default=True
        Lowercase ``str`` documents before tokenizing.
    token_pattern : str, default=``r"(?u)\\b\\w\\w+\\b"``
        Regular expression of a token (scikit-learn's: words of two or more characters).
    tokenizer : callable or None, default=None
        Tokenization of ``str`` documents; lists of tokens are taken as
        pre-tokenized.
    handle_missing : {"error", "empty"}, default="error"
        ``None``/NaN documents raise, or are treated as empty documents.
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output for documents with no known term (a zero vector by default).
    random_state : int, RandomState instance or None, default=None
        Seeds the randomized SVD.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where the SVD runs. Resolved in ``fit`` into ``device_``.
    engine : {"auto", "sklearn", "torch"}, default="auto"
        ``"auto"``: scikit-learn on the CPU, torch elsewhere; ``"torch"``
        forces the torch path (also on the CPU).
    n_jobs : int or None, default=None
        Threads for BLAS/torch during ``fit``/``transform``. ``None``:
        ``OMP_NUM_THREADS`` if set, else every core (see
        :func:`skembed.utils._compute.resolve_n_jobs`).
    dtype : numpy dtype, default=numpy.float32
        Output dtype; ``numpy.float64`` reproduces the scikit-learn pipeline bit for bit.

    Attributes
    ----------
    vectorizer_ : sklearn.feature_extraction.text.TfidfVectorizer or CountVectorizer
        The TF-IDF vectorizer, or (``weighting="log_entropy"``) the counts'.
    vocabulary_ : dict of str to int
        Term → column of the weighted matrix.
    global_weights_ : numpy.ndarray of shape (n_terms,), float64, or None
        Log-entropy's global weight ``g`` of each term (``None`` with TF-IDF).
    components_ : numpy.ndarray of shape (n_components, n_terms), float64
    explained_variance_ratio_ : numpy.ndarray of shape (n_components,)
    singular_values_ : numpy.ndarray of shape (n_components,)
    device_ : str
    engine_ : {"sklearn", "torch"}
    oov_rate_ : float
        Fraction of the training documents' unigram tokens that are not in
        the vocabulary (dropped by ``min_df``/``max_df``/``max_features``;
        stop words are not counted);
        :meth:`oov_rate` computes it for any documents.

    Raises
    ------
    ValueError
        In ``fit``: before reading ``X``, an ``ngram_range`` that is not
        ``(min_n, max_n)`` with ``1 <= min_n <= max_n <= 64``, ``engine="sklearn"`` on a non-CPU
        device or an unavailable ``device``, an unknown ``weighting`` or
        ``stop_words`` (naming the options); then, if ``n_components`` is not
        smaller than the vocabulary size or larger than the number of
        documents, the vocabulary is empty, or ``weighting="log_entropy"``
        gets a single document (its entropy normalisation ``ln(1)`` is 0).

    See Also
    --------
    PPMIEmbedder : word vectors from PPMI + SVD, pooled per document.

    Notes
    -----
    TF-IDF as scikit-learn: ``tf * (ln((1 + n) / (1 + df)) + 1)``. Log-entropy
    (Dumais 1991): ``log(1 + tf_td) * (1 + sum_d p_td ln(p_td) / ln(n))`` with
    ``p_td = tf_td / sum_d tf_td`` over the ``n`` training documents; gensim's
    ``LogEntropyModel`` divides by ``ln(n + 1)`` instead, a global weight
    closer to 1 for common terms. Rows are then normalised (``norm``); the SVD
    keeps the top ``n_components`` right singular vectors ``V`` and embeds a
    document as ``x V``.

    References
    ----------
    Deerwester, Dumais, Furnas, Landauer & Harshman (1990), "Indexing by
    Latent Semantic Analysis", JASIS 41(6).
    Dumais (1991), "Improving the retrieval of information from external
    sources", Behavior Research Methods, Instruments, & Computers 23(2).

    Examples
    --------
    >>> from skembed import TfidfLSA
    >>> docs = ["the cat sat", "the dog sat", "cats and dogs", "a dog barked"]
    >>> TfidfLSA(n_components=2, random_state=0).fit_transform(docs).shape
    (4, 2)
    """

    #: fitted state checked on load (utils._schema)
    _state_schema = {
        "vectorizer_": Instance("sklearn.feature_extraction.text.CountVectorizer"),
        "global_weights_": Array("f", ("F",), finite=True, optional=True),
        "svd_": Instance("sklearn.decomposition._truncated_svd.TruncatedSVD", optional=True),
        "components_": Array("f", ("K", "F"), finite=True),
        "vocabulary_": Ids("F"),
        "singular_values_": Array("f", ("K",), finite=True),
        "explained_variance_": Array("f", ("K",), optional=True),
        "explained_variance_ratio_": Array("f", ("K",), optional=True),
        "_n_features_out": Number(size="K"),
        # the copies transform reads: the vectorizer's ids and idf, the SVD's components
        "vectorizer_.vocabulary_": Same("vocabulary_"),
        # TF-IDF weighting only (log-entropy counts with a CountVectorizer)
        "vectorizer_._tfidf.idf_": Array("f", ("F",), finite=True, optional=True),
        "vectorizer_._tfidf.n_features_in_": Number(size="F", optional=True),
        "svd_.components_": Same("components_", optional=True),  # svd_ is None with torch
        "svd_.n_features_in_": Number(size="F", optional=True),
    }
    _parameter_constraints: dict = {
        **TEXT_PARAMETER_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "min_df": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="both")],
        "max_df": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="both")],
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
        "weighting": [StrOptions({"tfidf", "log_entropy"})],
        "stop_words": [StrOptions({"english"}), list, None],
        "sublinear_tf": ["boolean"],
        "ngram_range": [tuple],
        "norm": [StrOptions({"l1", "l2"}), None],
        "algorithm": [StrOptions({"randomized", "arpack"})],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        **COMPUTE_PARAMETER_CONSTRAINTS,
        "engine": [StrOptions({"auto", "sklearn", "torch"})],
    }

    def __init__(
        self,
        n_components=100,
        *,
        min_df=1,
        max_df=1.0,
        max_features=None,
        weighting="log_entropy",
        stop_words="english",
        sublinear_tf=False,
        ngram_range=(1, 1),
        norm="l2",
        algorithm="randomized",
        n_iter=5,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        handle_missing="error",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        engine="auto",
        n_jobs=None,
        dtype=np.float32,
    ):
        self.n_components = n_components
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.weighting = weighting
        self.stop_words = stop_words
        self.sublinear_tf = sublinear_tf
        self.ngram_range = ngram_range
        self.norm = norm
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.engine = engine
        self.n_jobs = n_jobs
        self.dtype = dtype

    def __getstate__(self):
        state = super().__getstate__()  # vocabulary_ packed (_vocabulary_attributes)
        vectorizer, vocabulary = state.get("vectorizer_"), getattr(self, "vocabulary_", None)
        if vocabulary is not None and getattr(vectorizer, "vocabulary_", None) is vocabulary:
            # the vectorizer's copy is derived: dropped here, rebuilt from vocabulary_ on load
            state["vectorizer_"] = copy.copy(vectorizer)
            del state["vectorizer_"].vocabulary_
        return state

    def __setstate__(self, state):
        if is_packed_keys(state.get("vocabulary_")):
            vocabulary = unpack_vocabulary(state["vocabulary_"], type(self).__name__, "vocabulary_")
            state = {**state, "vocabulary_": vocabulary}
            vectorizer = state.get("vectorizer_")
            if hasattr(vectorizer, "get_params") and not hasattr(vectorizer, "vocabulary_"):
                vectorizer.vocabulary_ = vocabulary
        super().__setstate__(state)
        _check_ngram_range(self.ngram_range, f"{type(self).__name__}: stored")
        weights = getattr(self, "global_weights_", None)
        if "components_" in state and (weights is not None) != (self.weighting == "log_entropy"):
            raise ValueError(
                f"TfidfLSA state: global_weights_ is {'set' if weights is not None else 'None'} "
                f"but weighting={self.weighting!r}; the file is damaged or was edited: refit."
            )
        # the vectorizer's settings derive from this estimator's: rebuilt, never read from a file
        if getattr(self, "vectorizer_", None) is not None:
            self.vectorizer_.set_params(**self._make_vectorizer().get_params())
        if hasattr(getattr(self, "vectorizer_", None), "_tfidf"):  # TF-IDF weighting only
            self.vectorizer_._tfidf.set_params(
                norm=self.norm, use_idf=True, smooth_idf=True, sublinear_tf=self.sublinear_tf
            )

    def _make_vectorizer(self):
        common = dict(
            min_df=self.min_df,
            max_df=self.max_df,
            max_features=self.max_features,
            stop_words=self.stop_words,
            ngram_range=self.ngram_range,
            **vectorizer_kwargs(
                self.lowercase, self.token_pattern or DEFAULT_TOKEN_PATTERN, self.tokenizer
            ),
        )
        if self.weighting == "log_entropy":
            return CountVectorizer(**common)
        return TfidfVectorizer(sublinear_tf=self.sublinear_tf, norm=self.norm, **common)

    def _analyzer(self):
        """The shared analyzer without the stop words: they are left out on purpose, so
        ``oov_rate`` does not count them as unknown."""
        analyzer = super()._analyzer()
        if self.stop_words is None:
            return analyzer
        stop = ENGLISH_STOP_WORDS if self.stop_words == "english" else frozenset(self.stop_words)
        return lambda doc: [token for token in analyzer(doc) if token not in stop]

    def _weigh(self, documents):
        """The weighted term-document matrix (CSR) of ``documents`` with the fitted vocabulary."""
        counts = self.vectorizer_.transform(documents)
        check_ids(counts.indices, self.components_.shape[1], "TfidfLSA", "vocabulary_")
        if self.global_weights_ is None:
            return counts
        return log_entropy(counts, self.global_weights_, self.norm)

    def _fit_weights(self, token_lists):
        """Fit the vocabulary (and log-entropy's global weights); the weighted matrix."""
        self.vectorizer_ = self._make_vectorizer()
        try:
            counts = self.vectorizer_.fit_transform(token_lists)
        except ValueError as exc:  # empty vocabulary
            raise ValueError(
                f"TfidfLSA: {exc}. The documents contain no usable term; check min_df/max_df, "
                "stop_words and the token_pattern."
            ) from None
        self.global_weights_ = None
        if self.weighting == "tfidf":
            return counts
        self.global_weights_ = entropy_weights(counts)
        return log_entropy(counts, self.global_weights_, self.norm)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the TF-IDF vocabulary and the SVD on ``X``.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.
        y : None
            Ignored.

        Returns
        -------
        self : TfidfLSA
            The fitted estimator.
        """
        self._fit(X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit on ``X`` and return its embedding (equal to ``fit(X).transform(X)``).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.
        y : None
            Ignored.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, n_components), ``dtype``
            The LSA coordinates of each document (``U * S`` of the truncated SVD).
        """
        return self._fit(X)

    def _fit(self, X):
        _check_ngram_range(self.ngram_range, type(self).__name__)
        device, engine, _ = resolve_compute(self, cpu_engine="sklearn")
        self.device_, self.engine_ = device, engine
        documents = self._check_documents(X)
        use_torch = engine == "torch"
        # tokenize once: the token lists feed both the vectorizer and oov_rate_
        analyzer = self._analyzer()
        token_lists = [tuple(analyzer(doc)) for doc in documents]
        with limit_threads(self.n_jobs):
            tfidf = self._fit_weights(token_lists)
            n_docs, n_terms = tfidf.shape
            if self.n_components >= n_terms or self.n_components > n_docs:
                # the SVD has at most n_docs components: more would leave feature names
                # without columns
                raise ValueError(
                    f"n_components={self.n_components} must be smaller than the vocabulary size "
                    f"({n_terms} terms) and at most the number of documents ({n_docs}); use a "
                    "smaller n_components or a larger corpus."
                )
            if use_torch:
                seed = seed_from_random_state(self.random_state)
                U, S, VT = torch_truncated_svd(
                    tfidf, self.n_components, n_iter=self.n_iter, seed=seed, device=self.device_
                )
                X_new = U * S
                self.components_ = VT
                self.singular_values_ = S
                self.explained_variance_ = np.var(X_new, axis=0)
                full_var = _sparse_total_variance(tfidf)
                self.explained_variance_ratio_ = self.explained_variance_ / full_var
                self.svd_ = None
            else:
                self.svd_ = TruncatedSVD(
                    n_components=self.n_components,
                    algorithm=self.algorithm,
                    n_iter=self.n_iter,
                    random_state=self.random_state,
                )
                X_new = self.svd_.fit_transform(tfidf)
                self.components_ = self.svd_.components_
                self.singular_values_ = self.svd_.singular_values_
                self.explained_variance_ = self.svd_.explained_variance_
                self.explained_variance_ratio_ = self.svd_.explained_variance_ratio_
        self.vocabulary_ = self.vectorizer_.vocabulary_
        self._n_features_out = self.n_components
        self.oov_rate_ = oov_fraction(token_lists, self.vocabulary_)
        empty = np.diff(tfidf.indptr) == 0
        return self._apply_handle_unknown(X_new, empty).astype(self.dtype, copy=False)

    def transform(self, X):
        """Embed documents.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, n_components), ``dtype``
            The embedding of each document.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``handle_unknown="error"`` and a document has no known term.
        """
        check_is_fitted(self, "components_")
        documents = self._check_documents(X)
        with limit_threads(self.n_jobs):
            tfidf = self._weigh(documents)
            if self.svd_ is not None:
                X_new = self.svd_.transform(tfidf)
            else:
                X_new = np.asarray(tfidf @ self.components_.T)
        empty = np.diff(tfidf.indptr) == 0
        return self._apply_handle_unknown(X_new, empty).astype(self.dtype, copy=False)


def _sparse_total_variance(X):
    """Sum of the column variances of a sparse matrix, without densifying it."""
    mean = np.asarray(X.mean(axis=0)).ravel()
    mean_sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
    return float(np.sum(mean_sq - mean**2))


def entropy_weights(counts):
    """Log-entropy's global weight of each term: ``1 + sum_d p ln(p) / ln(n_documents)``.

    Parameters
    ----------
    counts : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
        Term counts; every term occurs at least once.

    Returns
    -------
    weights : numpy.ndarray of shape (n_terms,), float64
        In ``[0, 1]``: 1 for a term in one document, 0 for a term spread evenly
        over all of them (Dumais 1991).

    Raises
    ------
    ValueError
        With a single document, where ``ln(n_documents)`` is 0.

    Examples
    --------
    >>> from scipy.sparse import csr_matrix
    >>> entropy_weights(csr_matrix([[1, 2], [1, 0]])).round(3).tolist()
    [0.0, 1.0]
    """
    n_documents = counts.shape[0]
    if n_documents < 2:
        raise ValueError(
            "weighting='log_entropy' needs at least two documents: a term's entropy is "
            f"normalised by ln(n_documents), which is 0 for {n_documents}; fit on more "
            "documents or use weighting='tfidf'."
        )
    counts = counts.tocsr().astype(np.float64)
    totals = np.asarray(counts.sum(axis=0)).ravel()
    p = counts.data / totals[counts.indices]
    plogp = np.bincount(counts.indices, weights=p * np.log(p), minlength=counts.shape[1])
    weights = 1.0 + plogp / np.log(n_documents)
    # an evenly spread term's 1 - 1 leaves rounding noise (2e-16), which the row norm of a
    # document of such terms alone would blow up to a unit vector
    weights[np.abs(weights) < 1e-12] = 0.0
    return weights


def log_entropy(counts, weights, norm):
    """``log(1 + tf) * weights`` per entry, rows normalised by ``norm`` (or not, with ``None``).

    Entries whose term weighs 0 are dropped, so a document of such terms alone is empty.
    """
    X = counts.tocsr().astype(np.float64)
    X.data = np.log1p(X.data) * weights[X.indices]
    X.eliminate_zeros()
    return normalize(X, norm=norm, copy=False) if norm else X


#: The longest n-grams ``ngram_range`` may ask for: each document yields (max_n - min_n + 1)
#: n-grams per token, so a stored (1, 10**12) would never finish.
MAX_NGRAM = 64


def _check_ngram_range(ngram_range, owner):
    """Refuse an ``ngram_range`` that is not ``(min_n, max_n)`` with 1 <= min_n <= max_n <= 64."""
    ok = (
        isinstance(ngram_range, tuple)
        and len(ngram_range) == 2
        and all(isinstance(n, Integral) and not isinstance(n, bool) for n in ngram_range)
        and 1 <= ngram_range[0] <= ngram_range[1] <= MAX_NGRAM
    )
    if not ok:
        raise ValueError(
            f"{owner} ngram_range={ngram_range!r} is not a tuple (min_n, max_n) of integers with "
            f"1 <= min_n <= max_n <= {MAX_NGRAM}; pass, for example, (1, 2)."
        )

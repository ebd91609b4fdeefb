"""GloVeTransformer: global co-occurrence word vectors (GloVe), pooled per document."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ...exceptions import diverged
from ...keyedvectors import KeyedVectors
from ...utils._compute import (
    COMPUTE_PARAMETER_CONSTRAINTS,
    limit_threads,
    resolve_compute,
    resolve_n_jobs,
)
from ...utils._schema import Array
from ...utils._seeding import seed_from_random_state
from ...utils._state import restore_on_failure
from ...utils._training import run_epochs
from .._analyzer import (
    DEFAULT_TOKEN_PATTERN,
    build_vocabulary,
    count_words,
    encode,
    iter_tokens,
    tokenize,
)
from .._base import BaseWordEmbedder, LearnedWords
from .._pooling import count_matrix
from ._cooccurrence import cooccurrence_matrix

__all__ = ["GloVeTransformer"]

#: per-component gradient clipping of glove.c (its ``grad_clip_value`` default)
GRAD_CLIP = 100.0


class GloVeTransformer(BaseWordEmbedder):
    """GloVe word vectors learnt from a sparse co-occurrence matrix, pooled per document.

    Counts word–word co-occurrences over a symmetric window, each pair
    weighted by ``1 / distance`` (as the Stanford GloVe ``cooccur`` tool),
    into a scipy sparse matrix, then fits word and context vectors so that
    ``w_i . c_j + b_i + b~_j`` approximates ``log X_ij``, weighted by
    ``f(X_ij)``, with AdaGrad over the shuffled non-zero entries. The word
    vectors (``wv_``) are ``W + W~`` by default; ``transform`` pools the
    vectors of each document's words.

    Parameters
    ----------
    vector_size : int, default=100
        Width of the word (and document) vectors.
    window : int, default=10
        Maximum distance between a word and a context word (both sides).
    min_count : int, default=5
        Ignore words with a lower corpus count.
    max_vocab_size : int or None, default=None
        Keep only the most frequent words (no cap by default).
    x_max : float, default=100.0
        Count at which the weighting function ``f`` saturates at 1.
    weighting_exponent : float, default=0.75
        Exponent of the weighting function ``f(x) = (x / x_max)**weighting_exponent``
        (the paper's α).
    learning_rate : float, default=0.05
        AdaGrad's initial learning rate (``eta`` of ``glove.c``).
    epochs : int, default=25
        Passes over the non-zero co-occurrences (an upper bound when a
        callback stops training).
    vectors : {"sum", "word"}, default="sum"
        Word vectors returned: ``W + W~`` (``glove.c``'s ``-model 2``) or ``W``.
    keep_cooccurrence : bool, default=False
        Keep the co-occurrence matrix in ``cooccurrence_`` after fit (memory).
    batch_size : int, default=16384
        Non-zeros per AdaGrad step of the torch engine (ignored by numba).
    pooling : {"mean", "sum", "max", "tfidf", "sif"}, default="mean"
        Word vectors → document vector (see :func:`skembed.text._pooling.pool`).
    sif_coefficient : float, default=1e-3
        The ``a`` of SIF weights ``a / (a + p(w))``.
    lowercase : bool, default=True
        Lowercase ``str`` documents before tokenizing.
    token_pattern : str, default=``r"(?u)\\b\\w\\w+\\b"``
        Regular expression of a token (scikit-learn's: words of two or more characters).
    tokenizer : callable or None, default=None
        Tokenization of ``str`` documents (scikit-learn's analyzer).
    handle_missing : {"error", "empty"}, default="error"
        What a missing document (``None`` or NaN) becomes, in ``fit`` and in
        ``transform``: ``"error"`` raises a ``ValueError`` naming the row;
        ``"empty"`` takes it as an empty document, which gives no training
        example and is embedded as ``handle_unknown`` says.
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output for documents without any known word.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial vectors and the shuffling of the non-zeros. The
        same value and the same ``n_jobs`` give bit-identical vectors with
        the numba engine (see Notes).
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where training runs.
    engine : {"auto", "numba", "torch"}, default="auto"
        ``"auto"``: the compiled numba kernel on the CPU, torch elsewhere;
        ``"torch"`` forces the batched torch engine also on the CPU.
    n_jobs : int or None, default=None
        Threads of the numba kernel or of torch. ``None``: ``OMP_NUM_THREADS``
        if set, else every core (:func:`skembed.utils._compute.resolve_n_jobs`). The
        numba engine's result depends on the resolved number, so pass an int
        to reproduce a result on another machine.
    callbacks : list of callable or None, default=None
        Called after every epoch as ``callback(estimator, record)`` (see
        :mod:`skembed.callbacks`), with ``history_``, ``wv_`` and ``bias_``
        up to date; training stops when one returns ``True``.
    verbose : int, default=0
        0: silent; 1: a progress bar over epochs; 2: also a line per epoch.
    dtype : numpy dtype, default=numpy.float32
        Output dtype of ``transform``.

    Attributes
    ----------
    wv_ : KeyedVectors
        Word vectors, shape (n_words, vector_size), float32, with word counts.
    vocabulary_ : dict of str to int
    history_ : list of dict
        One record per epoch (:func:`skembed.callbacks.make_record`):
        ``epoch`` (1-based), ``loss`` (mean ``0.5 * f(X_ij) * (w_i . c_j + b_i
        + b~_j - log X_ij)**2`` over the non-zeros, each computed before that
        record's update, as ``glove.c`` reports it) and ``seconds``.
    loss_history_ : list of float
        ``[r["loss"] for r in history_]`` (read-only; kept for code written
        against earlier versions).
    bias_ : numpy.ndarray of shape (n_words,), float32
        ``b + b~`` (``vectors="sum"``) or ``b`` (``"word"``).
    cooccurrence_ : scipy.sparse.csr_matrix of shape (n_words, n_words)
        Only when ``keep_cooccurrence=True``.
    n_cooccurrences_ : int
        Number of non-zero co-occurrences trained on.
    count_time_, train_time_ : float
        Seconds spent tokenizing and counting (0 for ``fit_cooccurrence``)
        and training.
    device_ : str
    engine_ : {"numba", "torch"}
    n_threads_ : int
        Resolved number of threads (``n_jobs``).
    idf_ : numpy.ndarray or None
    sif_component_ : numpy.ndarray or None

    Raises
    ------
    ValueError
        In ``fit``, before any counting: ``engine="numba"`` on a non-CPU
        device, an unavailable ``device``. After counting: empty corpus,
        empty vocabulary after ``min_count``, no two vocabulary words within
        the window (empty co-occurrence matrix).
    skembed.exceptions.TrainingDivergedError
        (a ``ValueError``) on a NaN/inf loss; lower ``learning_rate``.

    See Also
    --------
    GloVeTransformer.fit_cooccurrence : train from a precomputed matrix.
    skembed.text.PPMIEmbedder : count-based vectors from the same counts.

    Notes
    -----
    ``J = sum_{X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)**2`` with
    ``f(x) = min(1, (x / x_max)**weighting_exponent)``. Initial vectors and
    biases are uniform in ``[-0.5, 0.5] / vector_size``; AdaGrad's
    squared-gradient sums start at 1; each record's vector gradient
    components are clipped at 100, as in ``glove.c`` (GloVe 1.2+).

    The numba engine shuffles the non-zeros once, then splits the words into
    ``T = n_jobs`` blocks and the non-zeros into ``T x T`` cells; each epoch
    runs ``T`` rounds in which the ``T`` threads train cells that share no
    word row and no context row (the stratified scheme of DSGD, Gemulla et
    al. 2011). No two threads ever write the same parameters, so the result
    does not depend on thread timing: the same ``random_state`` and
    ``n_jobs`` give bit-identical vectors, at the speed of ``glove.c``'s
    lock-free threads (measured on BBC News, see ``docs/glove.md``). The
    torch engine reshuffles every epoch and applies summed minibatch
    gradients per row (see :meth:`skembed.nn.glove.GloVeModel.adagrad_step`).

    A ``fit`` that fails (divergence, a raising callback, an interrupt)
    leaves the estimator as it was before that ``fit``.

    References
    ----------
    Pennington, Socher & Manning (2014), "GloVe: Global Vectors for Word
    Representation", EMNLP 2014: 1532-1543.
    Gemulla, Nijkamp, Haas & Sismanis (2011), "Large-scale matrix
    factorization with distributed stochastic gradient descent", KDD 2011.

    Examples
    --------
    >>> from skembed.text.count._glove import GloVeTransformer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs"]
    >>> glove = GloVeTransformer(vector_size=4, window=2, min_count=1, epochs=5,
    ...                          random_state=0, n_jobs=1)
    >>> glove.fit_transform(docs).shape
    (3, 4)
    >>> [r["epoch"] for r in glove.history_]
    [1, 2, 3, 4, 5]
    """

    _accepts_iterable_corpus = True
    _state_schema = {"bias_": Array("float32", ("V",), finite=True, optional=True)}  # on load
    _parameter_constraints: dict = {
        **BaseWordEmbedder._parameter_constraints,
        **COMPUTE_PARAMETER_CONSTRAINTS,
        "vector_size": [Interval(Integral, 1, None, closed="left")],
        "window": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "max_vocab_size": [Interval(Integral, 1, None, closed="left"), None],
        "x_max": [Interval(Real, 0, None, closed="neither")],
        "weighting_exponent": [Interval(Real, 0, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "vectors": [StrOptions({"sum", "word"})],
        "keep_cooccurrence": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "engine": [StrOptions({"auto", "numba", "torch"})],
        "callbacks": [list, tuple, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        vector_size=100,
        *,
        window=10,
        min_count=5,
        max_vocab_size=None,
        x_max=100.0,
        weighting_exponent=0.75,
        learning_rate=0.05,
        epochs=25,
        vectors="sum",
        keep_cooccurrence=False,
        batch_size=16384,
        pooling="mean",
        sif_coefficient=1e-3,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        handle_missing="error",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        engine="auto",
        n_jobs=None,
        callbacks=None,
        verbose=0,
        dtype=np.float32,
    ):
        self.vector_size = vector_size
        self.window = window
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.x_max = x_max
        self.weighting_exponent = weighting_exponent
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.vectors = vectors
        self.keep_cooccurrence = keep_cooccurrence
        self.batch_size = batch_size
        self.pooling = pooling
        self.sif_coefficient = sif_coefficient
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.engine = engine
        self.n_jobs = n_jobs
        self.callbacks = callbacks
        self.verbose = verbose
        self.dtype = dtype

    @property
    def loss_history_(self):
        """Mean loss of each epoch, ``[r["loss"] for r in history_]`` (read-only)."""
        return [r["loss"] for r in self.history_]

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        """Resolve device, engine and threads: every check that needs no data, done first."""
        self.device_, self.engine_, _ = resolve_compute(self, cpu_engine="numba")
        self.n_threads_ = resolve_n_jobs(self.n_jobs)

    # ------------------------------------------------------------------ counting
    def _count(self, documents, analyzer):
        """Vocabulary, word counts, co-occurrence matrix and (if pooling needs it) doc counts."""
        if isinstance(documents, list):
            documents = tokenize(documents, analyzer)
            analyzer = None
        # a re-iterable corpus (LineCorpus) is streamed twice, never materialised

        def source():
            return documents if analyzer is None else iter_tokens(documents, analyzer)

        index_to_key, word_counts = build_vocabulary(
            count_words(source()), self.min_count, self.max_vocab_size
        )
        key_to_index = {w: i for i, w in enumerate(index_to_key)}
        ids, offsets, _ = encode(source(), key_to_index)
        documents = None  # free the token lists before counting pairs
        n_words = len(index_to_key)
        X = cooccurrence_matrix(ids, offsets, n_words, self.window, weighting="harmonic")
        doc_counts = None
        if self.pooling in ("tfidf", "sif"):
            doc_counts = count_matrix(ids, offsets, n_words)
        return {"X": X, "index_to_key": index_to_key, "counts": word_counts, "docs": doc_counts}

    def _fit_word_vectors(self, documents, analyzer):
        t0 = time.perf_counter()
        counted = self._count(documents, analyzer)
        self.count_time_ = time.perf_counter() - t0
        doc_counts = counted.pop("docs")
        # _train pops the matrix from the dict, so it is freed once turned into records
        return LearnedWords(self._train(counted), doc_counts)

    # ------------------------------------------------------------------ training
    def _check_cooccurrence(self, X, n_words):
        if not sp.issparse(X):
            raise TypeError(
                f"X must be a scipy sparse co-occurrence matrix, got {type(X).__name__}."
            )
        if X.ndim != 2 or X.shape != (n_words, n_words):
            raise ValueError(
                f"The co-occurrence matrix has shape {X.shape} but the vocabulary has {n_words} "
                f"words; it must be square with shape ({n_words}, {n_words}), rows and columns "
                "ordered as index_to_key."
            )
        X = sp.csr_matrix(X)
        if not X.has_canonical_format:  # duplicate entries would be trained on separately
            X = X.copy()
            X.sum_duplicates()
        if X.nnz and not np.isfinite(X.data).all():
            raise ValueError("The co-occurrence matrix holds NaN or infinite values.")
        if X.nnz and X.data.min() < 0:
            raise ValueError("The co-occurrence matrix holds negative counts.")
        if X.count_nonzero() == 0:
            raise ValueError(
                "The co-occurrence matrix is empty after min_count: no two vocabulary words occur "
                f"within window={self.window} of each other. Use a lower min_count, a larger "
                "window or a larger corpus."
            )
        return X

    def _train(self, counted):
        index_to_key, word_counts = counted["index_to_key"], counted["counts"]
        n_words = len(index_to_key)
        X = self._check_cooccurrence(counted.pop("X"), n_words)
        if self.keep_cooccurrence:
            self.cooccurrence_ = X
        elif hasattr(self, "cooccurrence_"):
            del self.cooccurrence_
        use_torch = self.engine_ == "torch"
        seed = seed_from_random_state(self.random_state)
        # records: (row, col, X_ij > 0) as int32/int32/float32 copies (shuffled in place)
        rows = np.repeat(np.arange(n_words, dtype=np.int32), np.diff(X.indptr))
        cols = X.indices.astype(np.int32)
        vals = X.data.astype(np.float32)
        if X.nnz != X.count_nonzero():  # explicit zeros are not trained on
            keep = vals > 0
            rows, cols, vals = rows[keep], cols[keep], vals[keep]
        del X
        self.n_cooccurrences_ = int(rows.shape[0])
        self.history_ = []
        # what _publish needs to refresh wv_ for callbacks (removed after training)
        self._vocab = (index_to_key, word_counts)
        t0 = time.perf_counter()
        with limit_threads(self.n_threads_, modules=("torch",) if use_torch else ("numba",)):
            if use_torch:
                W, C, bw, bc = self._train_torch(rows, cols, vals, n_words, seed)
            else:
                W, C, bw, bc = self._train_numba(rows, cols, vals, n_words, seed)
        self.train_time_ = time.perf_counter() - t0
        del self._vocab
        wv, self.bias_ = self._word_vectors(W, C, bw, bc, index_to_key, word_counts)
        if not np.isfinite(wv.vectors).all():
            raise self._diverged(len(self.history_), float("nan"))
        return wv

    def _word_vectors(self, W, C, bw, bc, index_to_key, word_counts):
        """``(KeyedVectors, bias)`` of the trained matrices per ``vectors``."""
        if self.vectors == "sum":
            vectors, bias = W + C, bw + bc
        else:
            vectors, bias = W.copy(), bw.copy()
        return KeyedVectors(vectors, index_to_key, counts=word_counts), bias

    def _publish(self, params):
        """Make ``wv_``/``bias_`` reflect the parameters ``params()`` returns (for callbacks)."""
        self.wv_, self.bias_ = self._word_vectors(*params(), *self._vocab)
        self.vocabulary_ = self.wv_.key_to_index
        self._n_features_out = self.wv_.vector_size

    def _init_params(self, n_words, seed):
        rng = np.random.default_rng(seed)
        d = self.vector_size
        draw = lambda *shape: (rng.random(shape, dtype=np.float32) - 0.5) / d  # noqa: E731
        return draw(n_words, d), draw(n_words, d), draw(n_words), draw(n_words)

    def _diverged(self, epoch, loss):
        return diverged(
            self,
            epoch=epoch,
            loss=loss,
            parameter="learning_rate",
            value=self.learning_rate,
            hint="A smaller x_max also helps.",
        )

    def _run_epochs(self, epoch_step, params):
        """Run ``epoch_step(epoch) -> {"loss": ...}`` through the one training loop.

        ``params`` is a callable returning ``(W, C, bw, bc)`` as numpy
        arrays; ``wv_`` is refreshed from it before callbacks run.
        """
        run_epochs(
            self,
            epoch_step,
            n_epochs=self.epochs,
            callbacks=self.callbacks,
            verbose=self.verbose,
            desc="GloVe",
            diverged_hint="A smaller x_max also helps.",
            before_callbacks=(lambda record: self._publish(params)) if self.callbacks else None,
        )

    def _train_numba(self, rows, cols, vals, n_words, seed):
        from ...kernels.glove import (
            GloveSettings,
            GloveWeights,
            Records,
            block_records,
            blocked_schedule,
            glove_epoch,
            shuffle_records,
        )

        W, C, bw, bc = self._init_params(n_words, seed)
        gW, gC = np.ones_like(W), np.ones_like(C)
        gbw, gbc = np.ones_like(bw), np.ones_like(bc)
        shuffle_records(rows, cols, vals, seed)
        n_blocks = max(1, min(self.n_threads_, n_words))
        offsets = block_records(rows, cols, vals, n_blocks)
        schedule = blocked_schedule(n_blocks)
        n_records = rows.shape[0]

        def epoch_step(epoch):
            costs = glove_epoch(
                Records(rows, cols, vals, offsets),
                schedule,
                GloveWeights(W, C, bw, bc),
                GloveWeights(gW, gC, gbw, gbc),
                GloveSettings(
                    float(self.x_max),
                    float(self.weighting_exponent),
                    float(self.learning_rate),
                    GRAD_CLIP,
                ),
            )
            return {"loss": float(np.sum(costs)) / max(n_records, 1)}

        self._run_epochs(epoch_step, lambda: (W, C, bw, bc))
        return W, C, bw, bc

    def _train_torch(self, rows, cols, vals, n_words, seed):
        import torch

        from ...nn.glove import GloVeModel
        from ...utils._seeding import torch_generator

        device = torch.device(self.device_)
        W, C, bw, bc = self._init_params(n_words, seed)
        model = GloVeModel(n_words, self.vector_size).to(device)
        with torch.no_grad():
            for p, v in zip((model.W, model.C, model.bw, model.bc), (W, C, bw, bc), strict=True):
                p.copy_(torch.from_numpy(v))
        i_all = torch.from_numpy(rows.astype(np.int64)).to(device)
        j_all = torch.from_numpy(cols.astype(np.int64)).to(device)
        x = vals.astype(np.float64)
        log_x = torch.from_numpy(np.log(x).astype(np.float32)).to(device)
        f_x = torch.from_numpy(
            np.minimum((x / self.x_max) ** self.weighting_exponent, 1.0).astype(np.float32)
        ).to(device)
        del x
        # the permutation is drawn on the training device: no host round trip per epoch
        gen = torch_generator(seed, str(device))
        n = i_all.shape[0]

        def epoch_step(epoch):
            perm = torch.randperm(n, generator=gen, device=device)
            total = model.train_epoch(
                i_all,
                j_all,
                log_x,
                f_x,
                perm,
                int(self.batch_size),
                float(self.learning_rate),
                GRAD_CLIP,
            )
            # float(total) is the epoch's one synchronisation with the device
            return {"loss": float(total) / max(n, 1)}

        params = lambda: tuple(  # noqa: E731
            p.detach().cpu().numpy() for p in (model.W, model.C, model.bw, model.bc)
        )
        self._run_epochs(epoch_step, params)
        out = [p.detach().cpu().numpy().astype(np.float32) for p in (model.W, model.C)]
        out += [p.detach().cpu().numpy().astype(np.float32) for p in (model.bw, model.bc)]
        return tuple(out)

    # ------------------------------------------------------------------ precomputed counts
    def fit_cooccurrence(self, X, index_to_key, counts=None):
        """Learn word vectors from a precomputed co-occurrence matrix.

        For corpora counted elsewhere (on a cluster, by the GloVe ``cooccur``
        tool, or by :func:`skembed.text.count._cooccurrence.cooccurrence_matrix`).
        ``window``, ``min_count`` and ``max_vocab_size`` are not applied; the
        matrix is used as given.

        Parameters
        ----------
        X : scipy.sparse matrix of shape (n_words, n_words)
            Non-negative co-occurrence counts ``X_ij``; rows and columns
            ordered as ``index_to_key``. Zeros are not trained on.
        index_to_key : sequence of str of length n_words
            The vocabulary, unique words.
        counts : array-like of shape (n_words,) or None, default=None
            Corpus counts of the words (stored in ``wv_.counts``; needed by
            ``pooling="sif"``). ``None`` leaves ``wv_.counts`` unset.

        Returns
        -------
        self : object
            The fitted estimator; ``transform`` then works as after ``fit``.

        Raises
        ------
        TypeError
            If ``X`` is not a scipy sparse matrix.
        ValueError
            If ``X`` is not ``(n_words, n_words)``, holds negative or
            non-finite values or no non-zero; if ``counts`` has the wrong
            length; if ``pooling`` is ``"tfidf"`` or ``"sif"`` (they need the
            training documents; fit on documents instead).
        skembed.exceptions.TrainingDivergedError
            On a NaN loss (a ``ValueError``). A failed call leaves the
            estimator as it was before it.

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> X = sp.csr_matrix(np.array([[0, 3.0, 1], [3.0, 0, 2], [1, 2, 0]]))
        >>> glove = GloVeTransformer(vector_size=2, epochs=3, random_state=0, n_jobs=1)
        >>> glove.fit_cooccurrence(X, ["a", "b", "c"]).wv_.vectors.shape
        (3, 2)
        """
        self._validate_params()
        if self.pooling in ("tfidf", "sif"):
            raise ValueError(
                f"pooling={self.pooling!r} needs the training documents; use fit(documents) or "
                "pooling='mean', 'sum' or 'max' with fit_cooccurrence."
            )
        index_to_key = list(index_to_key)
        if counts is not None:
            counts = np.asarray(counts)
            if counts.shape != (len(index_to_key),):
                raise ValueError(
                    f"counts has shape {counts.shape} but index_to_key has {len(index_to_key)} "
                    "words."
                )
        with restore_on_failure(self):
            self._check_params()
            self.count_time_ = 0.0
            wv = self._train({"X": X, "index_to_key": index_to_key, "counts": counts})
            self.wv_ = wv
            self.vocabulary_ = wv.key_to_index
            self._n_features_out = wv.vector_size
            self.idf_ = None
            self.sif_component_ = None
        return self

    @classmethod
    def from_cooccurrence(cls, X, index_to_key, counts=None, **params):
        """Build an estimator with ``params`` and fit it on a precomputed matrix.

        Parameters
        ----------
        X, index_to_key, counts : sparse matrix, sequence of str, array-like or None
            As in :meth:`fit_cooccurrence`.
        **params : dict
            Parameters of :class:`GloVeTransformer`.

        Returns
        -------
        estimator : GloVeTransformer
            ``GloVeTransformer(**params).fit_cooccurrence(X, index_to_key, counts)``.
        """
        return cls(**params).fit_cooccurrence(X, index_to_key, counts)

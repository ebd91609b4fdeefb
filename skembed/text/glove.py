"""GloVeTransformer: global co-occurrence word vectors (GloVe), pooled per document."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ..base import limit_threads, progress, resolve_device, seed_from_random_state
from ..keyedvectors import KeyedVectors
from ._analyzer import (
    DEFAULT_TOKEN_PATTERN,
    build_vocabulary,
    count_words,
    encode,
    iter_tokens,
    tokenize,
)
from ._base import DEVICE_CONSTRAINT, BaseWordEmbedder
from ._cooccurrence import cooccurrence_matrix
from ._pooling import count_matrix

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
    alpha : float, default=0.75
        Exponent of the weighting function ``f(x) = (x / x_max)**alpha``.
    learning_rate : float, default=0.05
        AdaGrad's initial learning rate (``eta`` of ``glove.c``).
    epochs : int, default=25
        Passes over the non-zero co-occurrences.
    vectors : {"sum", "word"}, default="sum"
        Word vectors returned: ``W + W~`` (``glove.c``'s ``-model 2``) or ``W``.
    keep_cooccurrence : bool, default=False
        Keep the co-occurrence matrix in ``cooccurrence_`` after fit (memory).
    batch_size : int, default=16384
        Non-zeros per AdaGrad step of the torch engine (ignored by numba).
    pooling : {"mean", "sum", "max", "tfidf", "sif"}, default="mean"
        Word vectors → document vector (see :func:`skembed.text._pooling.pool`).
    sif_alpha : float, default=1e-3
        The ``a`` of SIF weights ``a / (a + p(w))``.
    lowercase, token_pattern, tokenizer
        Tokenization of ``str`` documents (scikit-learn's analyzer).
    handle_missing : {"error", "empty"}, default="error"
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output for documents without any known word.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial vectors and the shuffling of the non-zeros. With
        ``engine="numba"`` results are exactly reproducible only with
        ``n_jobs=1`` (lock-free threads race, as in ``glove.c``).
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where training runs.
    engine : {"auto", "numba", "torch"}, default="auto"
        ``"auto"``: the compiled numba kernel on the CPU, torch elsewhere;
        ``"torch"`` forces the batched torch engine also on the CPU.
    n_jobs : int or None, default=None
        Threads of the numba kernel (lock-free) or of torch.
    callbacks : list of callable or None, default=None
        Each is called after every epoch as ``callback(estimator, epoch,
        loss)``; training stops when one returns ``True``.
    verbose : bool, default=False
        Show a progress bar over epochs.
    dtype : numpy dtype, default=numpy.float32
        Output dtype of ``transform``.

    Attributes
    ----------
    wv_ : KeyedVectors
        Word vectors, shape (n_words, vector_size), float32, with word counts.
    vocabulary_ : dict of str to int
    loss_history_ : list of float
        Mean ``0.5 * f(X_ij) * (w_i . c_j + b_i + b~_j - log X_ij)**2`` over
        the non-zeros in each epoch (computed during the epoch, before each
        record's update, as ``glove.c`` reports it).
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
    idf_ : numpy.ndarray or None
    sif_component_ : numpy.ndarray or None
    oov_rate_ : float
        Fraction of unknown tokens in the last ``transform`` call.

    Raises
    ------
    ValueError
        In ``fit``: empty corpus, empty vocabulary after ``min_count``, no two
        vocabulary words within the window (empty co-occurrence matrix), a
        NaN/inf loss (lower ``learning_rate``), ``engine="numba"`` on a
        non-CPU device, or an unavailable ``device``.

    See Also
    --------
    GloVeTransformer.fit_cooccurrence : train from a precomputed matrix.
    skembed.text.PPMIEmbedder : count-based vectors from the same counts.

    Notes
    -----
    ``J = sum_{X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)**2`` with
    ``f(x) = min(1, (x / x_max)**alpha)``. Initial vectors and biases are
    uniform in ``[-0.5, 0.5] / vector_size``; AdaGrad's squared-gradient
    sums start at 1; each record's vector gradient components are clipped at
    100, as in ``glove.c`` (GloVe 1.2+). The numba engine shuffles the
    non-zeros once and runs lock-free threads over slices of them (as the C
    tool's ``shuffle`` + ``glove``); the torch engine reshuffles every epoch
    and applies summed minibatch gradients per row (see
    :meth:`skembed.nn.glove.GloVeModel.adagrad_step`).

    References
    ----------
    Pennington, Socher & Manning (2014), "GloVe: Global Vectors for Word
    Representation", EMNLP 2014: 1532-1543.

    Examples
    --------
    >>> from skembed.text.glove import GloVeTransformer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs"]
    >>> glove = GloVeTransformer(vector_size=4, window=2, min_count=1, epochs=5,
    ...                          random_state=0, n_jobs=1)
    >>> glove.fit_transform(docs).shape
    (3, 4)
    >>> len(glove.loss_history_)
    5
    """

    _accepts_iterable_corpus = True

    _parameter_constraints: dict = {
        **BaseWordEmbedder._parameter_constraints,
        "vector_size": [Interval(Integral, 1, None, closed="left")],
        "window": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "max_vocab_size": [Interval(Integral, 1, None, closed="left"), None],
        "x_max": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "vectors": [StrOptions({"sum", "word"})],
        "keep_cooccurrence": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "device": DEVICE_CONSTRAINT,
        "engine": [StrOptions({"auto", "numba", "torch"})],
        "n_jobs": [Integral, None],
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
        alpha=0.75,
        learning_rate=0.05,
        epochs=25,
        vectors="sum",
        keep_cooccurrence=False,
        batch_size=16384,
        pooling="mean",
        sif_alpha=1e-3,
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
        verbose=False,
        dtype=np.float32,
    ):
        self.vector_size = vector_size
        self.window = window
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.x_max = x_max
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.vectors = vectors
        self.keep_cooccurrence = keep_cooccurrence
        self.batch_size = batch_size
        self.pooling = pooling
        self.sif_alpha = sif_alpha
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
        self.device_ = resolve_device(self.device)
        t0 = time.perf_counter()
        counted = self._count(documents, analyzer)
        self.count_time_ = time.perf_counter() - t0
        doc_counts = counted.pop("docs")
        # _train pops the matrix from the dict, so it is freed once turned into records
        return self._train(counted), doc_counts

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
        use_torch = self.engine == "torch" or (self.engine == "auto" and self.device_ != "cpu")
        if self.engine == "numba" and self.device_ != "cpu":
            raise ValueError(
                f"engine='numba' runs on the CPU only, but device={self.device!r}; use "
                "engine='auto' or 'torch' for a torch device."
            )
        self.engine_ = "torch" if use_torch else "numba"
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
        self.loss_history_ = []
        t0 = time.perf_counter()
        with limit_threads(
            self.n_jobs, modules=("torch",) if use_torch else ("numba",)
        ) as n_threads:
            if use_torch:
                W, C, bw, bc = self._train_torch(rows, cols, vals, n_words, seed)
            else:
                W, C, bw, bc = self._train_numba(rows, cols, vals, n_words, seed, n_threads)
        self.train_time_ = time.perf_counter() - t0
        if self.vectors == "sum":
            vectors, bias = W + C, bw + bc
        else:
            vectors, bias = W, bw
        if not np.isfinite(vectors).all():
            raise self._nan_error(len(self.loss_history_))
        self.bias_ = bias
        return KeyedVectors(vectors, index_to_key, counts=word_counts)

    def _init_params(self, n_words, seed):
        rng = np.random.default_rng(seed)
        d = self.vector_size
        draw = lambda *shape: (rng.random(shape, dtype=np.float32) - 0.5) / d  # noqa: E731
        return draw(n_words, d), draw(n_words, d), draw(n_words), draw(n_words)

    def _nan_error(self, epoch):
        return ValueError(
            f"GloVe training diverged: the loss became NaN or infinite in epoch {epoch}. "
            f"Lower learning_rate (currently {self.learning_rate}) or x_max."
        )

    def _end_epoch(self, epoch, total_cost, n_records, bar):
        loss = float(total_cost) / max(n_records, 1)
        if not np.isfinite(loss):
            raise self._nan_error(epoch + 1)
        self.loss_history_.append(loss)
        bar.set_postfix(loss=f"{loss:.4g}")
        bar.update(1)
        stop = False
        for callback in self.callbacks or ():
            stop = bool(callback(self, epoch, loss)) or stop
        return stop

    def _train_numba(self, rows, cols, vals, n_words, seed, n_threads):
        from ..kernels.glove import glove_epoch, shuffle_records

        W, C, bw, bc = self._init_params(n_words, seed)
        gW, gC = np.ones_like(W), np.ones_like(C)
        gbw, gbc = np.ones_like(bw), np.ones_like(bc)
        shuffle_records(rows, cols, vals, seed)
        n_threads = max(1, min(int(n_threads), rows.shape[0]))
        with progress(total=self.epochs, verbose=self.verbose, desc="GloVe", unit="epoch") as bar:
            for epoch in range(self.epochs):
                costs = glove_epoch(
                    rows,
                    cols,
                    vals,
                    W,
                    C,
                    bw,
                    bc,
                    gW,
                    gC,
                    gbw,
                    gbc,
                    float(self.x_max),
                    float(self.alpha),
                    float(self.learning_rate),
                    GRAD_CLIP,
                    n_threads,
                )
                if self._end_epoch(epoch, costs.sum(), rows.shape[0], bar):
                    break
        return W, C, bw, bc

    def _train_torch(self, rows, cols, vals, n_words, seed):
        import torch

        from ..base import torch_generator
        from ..nn.glove import GloVeModel

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
            np.minimum((x / self.x_max) ** self.alpha, 1.0).astype(np.float32)
        ).to(device)
        del x
        gen = torch_generator(seed, "cpu")
        n = i_all.shape[0]
        bs = int(self.batch_size)
        with progress(total=self.epochs, verbose=self.verbose, desc="GloVe", unit="epoch") as bar:
            for epoch in range(self.epochs):
                perm = torch.randperm(n, generator=gen).to(device)
                total = 0.0
                for start in range(0, n, bs):
                    idx = perm[start : start + bs]
                    total += model.adagrad_step(
                        i_all[idx],
                        j_all[idx],
                        log_x[idx],
                        f_x[idx],
                        float(self.learning_rate),
                        GRAD_CLIP,
                    )
                if self._end_epoch(epoch, total, n, bar):
                    break
        out = [p.detach().cpu().numpy().astype(np.float32) for p in (model.W, model.C)]
        out += [p.detach().cpu().numpy().astype(np.float32) for p in (model.bw, model.bc)]
        return tuple(out)

    # ------------------------------------------------------------------ precomputed counts
    def fit_cooccurrence(self, X, index_to_key, counts=None):
        """Learn word vectors from a precomputed co-occurrence matrix.

        For corpora counted elsewhere (on a cluster, by the GloVe ``cooccur``
        tool, or by :func:`skembed.text._cooccurrence.cooccurrence_matrix`).
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
            training documents; fit on documents instead); or on a NaN loss.

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
        self.device_ = resolve_device(self.device)
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

        Shorthand for ``GloVeTransformer(**params).fit_cooccurrence(X,
        index_to_key, counts)``; see :meth:`fit_cooccurrence`.

        Returns
        -------
        estimator : GloVeTransformer
            Fitted.
        """
        return cls(**params).fit_cooccurrence(X, index_to_key, counts)

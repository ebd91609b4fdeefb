"""FastTextTransformer: word vectors enriched with character n-grams (Bojanowski et al. 2017).

The estimator extends :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`
and overrides only what subwords change; its vector store is
:class:`~skembed.keyedvectors.FastTextKeyedVectors` and Facebook ``.bin``
files are read by :mod:`skembed.text.word2vec._fasttext_io`.
"""

from __future__ import annotations

from array import array
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ...keyedvectors import FastTextKeyedVectors
from .._analyzer import DEFAULT_TOKEN_PATTERN
from .._pooling import pool, sif_weights
from ._fasttext_io import load_facebook_vectors, read_facebook_bin
from ._word2vec import Word2VecTransformer

__all__ = [
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "fasttext_memory_bytes",
    "load_facebook_vectors",
]

DEFAULT_BUCKET = 500_000


def fasttext_memory_bytes(n_words, bucket=DEFAULT_BUCKET, vector_size=100):
    """Bytes of the float32 matrices a FastText model holds while training.

    Parameters
    ----------
    n_words : int
        Vocabulary size after ``min_count``.
    bucket : int, default=500_000
        Number of n-gram hash buckets.
    vector_size : int, default=100

    Returns
    -------
    nbytes : int
        ``4 * vector_size * ((n_words + bucket) + n_words + n_words)``: the
        input matrix (one row per word and per bucket), the output matrix
        (negative sampling: one row per word) and the composed word vectors
        (``wv_.vectors``). The fitted estimator keeps all three (the output
        matrix for ``warm_start``). With the defaults and 50,000 words:
        240 MB.

    Examples
    --------
    >>> fasttext_memory_bytes(50_000) / 1e6
    260.0
    """
    return 4 * int(vector_size) * (int(n_words) + int(bucket) + 2 * int(n_words))


def _subword_csr(ngram_indptr, ngram_indices, n_words):
    """Input rows of each word: its own row ``w`` then ``n_words + bucket_row`` per n-gram."""
    counts = np.diff(ngram_indptr) + 1
    indptr = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.int32)
    indices[indptr[:-1]] = np.arange(n_words, dtype=np.int32)
    mask = np.ones(indptr[-1], dtype=bool)
    mask[indptr[:-1]] = False
    indices[mask] = (ngram_indices + n_words).astype(np.int32)
    return indptr, indices


class FastTextTransformer(Word2VecTransformer):
    """FastText word vectors (words + character n-grams) trained on your corpus, pooled per document.

    Word2vec (skip-gram or CBOW, negative sampling or hierarchical softmax)
    in which the input vector of a word is the mean of its own vector and
    the vectors of its character n-grams (Bojanowski et al. 2017): the word
    is wrapped in ``<`` and ``>``, its n-grams of ``min_n``..``max_n``
    characters are hashed with Facebook fastText's FNV-1a hash into
    ``bucket`` rows. Words never seen in training get a vector from their
    n-grams (``wv_["unseenword"]``), and ``transform`` uses those vectors for
    unknown tokens (``oov_ngrams=True``).

    In skip-gram the input of the pair (centre word, context word) is the
    centre word's bag of rows, which predicts the context word (Facebook
    fastText's and gensim's convention; Word2Vec's context word predicts the
    centre). With shared negatives (the default) the bag is gathered once
    per window, each context word is a positive example, the noise words are
    drawn once per window, and the summed gradient is added once to each row
    of the bag. The other convention (the context word's bag predicting
    the centre word, one bag gather and update per pair) is compared with
    this one against gensim in ``docs/fasttext.md``.

    Pre-trained Facebook fastText models load with :meth:`from_facebook`.

    The training loop, engines, callbacks, history and warm start are those
    of :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`, which this class
    extends: only the input rows of a word (its own row and its n-gram
    rows), the fitted ``wv_`` and the vectors of unknown tokens differ.

    Parameters
    ----------
    vector_size : int, default=100
        Dimension of the word (and document) vectors.
    sg : {0, 1}, default=1
        1 for skip-gram, 0 for CBOW (gensim's default is 0, CBOW).
    hs : {0, 1}, default=0
        1 for hierarchical softmax over a Huffman tree.
    negative : int, default=5
        Noise words per positive example (0 disables negative sampling; then
        ``hs`` must be 1).
    shared_negatives : bool, default=True
        Negative sampling without hierarchical softmax (``hs=0``), numba
        engine. Skip-gram: draw the negatives once per centre word and share
        them across its context words (Ji et al. 2016), and gather and update
        the centre word's n-gram bag once per window; ``False`` gives
        fastText's per-pair negatives and per-pair bag updates. CBOW
        (``sg=0``) keeps fastText's per-example negatives either way (sharing
        them across centre words measured only 1.03-1.09x faster here).
    ns_exponent : float, default=0.75
        Noise distribution ``count(w) ** ns_exponent``.
    window : int, default=5
        Maximum distance to a context word; the effective window of each
        token is drawn uniformly in ``1..window``. Clipped to the longest
        document as in :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`.
    sample : float, default=1e-3
        Frequent-word subsampling threshold (word2vec's keep probability
        ``(sqrt(c / t) + 1) t / c`` with ``t = sample * n_tokens``); 0 disables it.
    alpha, min_alpha : float, default=0.025, 1e-4
        Learning rate, decayed linearly from ``alpha`` to ``min_alpha`` (at
        most ``alpha``) over all epochs.
    epochs : int, default=5
        Passes over the corpus.
    min_count : int, default=5
        Ignore words rarer than this.
    max_vocab_size : int or None, default=None
        Keep only the most frequent words.
    min_n, max_n : int, default=3, 6
        Character n-gram lengths; ``max_n < min_n`` or ``bucket=0`` trains
        plain word2vec.
    bucket : int, default=500_000
        Number of n-gram hash rows. Memory while training (float32):
        ``4 * vector_size * (n_words + bucket)`` bytes of input matrix plus
        ``4 * vector_size * n_words`` of output matrix, plus the composed word
        vectors ``4 * vector_size * n_words`` (:func:`fasttext_memory_bytes`):
        with the defaults, 200 MB for the buckets plus 1.2 kB per vocabulary
        word (260 MB with 50,000 words). gensim and Facebook use 2,000,000
        (800 MB of buckets at ``vector_size=100``).
    oov_ngrams : bool, default=True
        In ``transform``, embed tokens outside the vocabulary from their
        n-grams (IDF of an unseen word, SIF weight 1); False ignores them as
        the other word embedders do.
    engine : {"auto", "numba", "torch", "torch-batched"}, default="auto"
        As :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`: ``"numba"``,
        the compiled multi-threaded CPU kernel; ``"torch"``, the exact
        per-pair torch engine; ``"torch-batched"``, the batched trainer
        (negative sampling only); ``"auto"``: numba on the CPU, a torch
        engine on any other device.
    lock_free : bool, default=False
        ``True``: lock-free (Hogwild) threads, faster but not reproducible
        with ``n_jobs > 1``; ``False``: deterministic threads (see
        :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`).
    batch_size : int or None, default=None
        Examples per step of the torch engine (see
        :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`).
    warm_start : bool, default=False
        Continue training the fitted vectors on the new ``X`` with the
        existing vocabulary (new words are ignored, counts are not updated).
    callbacks : list of callable or Callback, or None, default=None
        Each is called as ``callback(estimator, record)`` after every epoch
        (``wv_`` and ``history_`` are then up to date); ``True`` stops training.
    pooling : {"mean", "sum", "max", "tfidf", "sif"}, default="mean"
        Word vectors → document vector (see :func:`skembed.text._pooling.pool`);
        out-of-vocabulary words enter through their n-gram vectors when
        ``oov_ngrams=True``.
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
        Output for documents without any embeddable token.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial vectors, the negative draws and the subsampling.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where training runs (``"auto"``: CUDA, then MPS, then the CPU); the
        numba engine runs on the CPU only.
    n_jobs : int or None, default=None
        Training threads (numba) / intra-op threads (torch). The deterministic
        numba default trains ``n_parts`` parts on them, so its vectors do not
        depend on ``n_jobs`` (see Word2Vec's).
    n_parts : int, default=2
        Parts of each chunk in deterministic training, 1 to 16; the vectors
        depend on it, not on ``n_jobs`` (see
        :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`).
    verbose : int, default=0
        0: silent; 1: a progress bar over the epochs (with the loss); 2: also
        a line per epoch.
    dtype : numpy dtype, default=numpy.float32
        Output dtype of ``transform``.

    Attributes
    ----------
    wv_ : FastTextKeyedVectors
        Word vectors, shape (n_words, vector_size), float32; any string can be
        looked up.
    vocabulary_ : dict of str to int
    syn1neg_ : numpy.ndarray of shape (n_words, vector_size) or None
        Output (negative-sampling) matrix, kept for ``warm_start``.
    syn1_ : numpy.ndarray of shape (n_words - 1, vector_size) or None
        Hierarchical-softmax inner-node matrix.
    history_ : list of dict
        One record per epoch (``epoch``, ``loss``, ``seconds``,
        ``learning_rate``, ``words``, ``words_per_second``), as
        :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`.
    loss_history_ : list of float
        Read-only view ``[r["loss"] for r in history_]``.
    n_words_trained_, words_per_second_, train_time_
        As :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer`.
    engine_ : str
    device_ : str
    idf_, sif_component_ : numpy.ndarray or None
    n_train_documents_ : int or None
        Training documents (IDF of an unseen token, ``pooling="tfidf"``).
    oov_rate_ : float
        Fraction of the training tokens outside the vocabulary;
        :meth:`oov_rate` computes it for any documents (with
        ``oov_ngrams=True`` such tokens are still embedded).

    Raises
    ------
    ValueError
        In ``fit``, before any training: empty corpus or vocabulary emptied
        by ``min_count``; ``negative=0`` without ``hs``; ``min_alpha > alpha``.
    skembed.exceptions.TrainingDivergedError
        The loss became NaN (lower ``alpha``).

    Notes
    -----
    Vector of word ``w`` with n-gram rows ``G(w)``: ``(v_w + sum_{g in
    G(w)} z_g) / (1 + |G(w)|)``. Training updates every row of the bag with
    the full gradient, as fastText does for unsupervised models.

    Determinism: with an int ``random_state`` the numba engine is
    bit-reproducible for a given ``n_parts``, whatever ``n_jobs`` (unless
    ``lock_free=True``); the
    torch engine on the CPU for a given thread count.

    The first ``fit`` in a fresh environment compiles the numba kernels
    (measured 14-16 s on a 2-core machine, cached on disk afterwards).

    References
    ----------
    Bojanowski, Grave, Joulin & Mikolov (2017), "Enriching Word Vectors with
    Subword Information", TACL 5: 135-146. Mikolov et al. (2013),
    "Distributed Representations of Words and Phrases and their
    Compositionality", NIPS.

    Examples
    --------
    >>> from skembed.text.word2vec._fasttext import FastTextTransformer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> ft = FastTextTransformer(vector_size=8, min_count=1, bucket=1000, random_state=0, n_jobs=1)
    >>> ft.fit_transform(docs).shape
    (40, 8)
    >>> ft.wv_["cats"].shape  # an unseen word, from its n-grams
    (8,)
    """

    _parameter_constraints: dict = {
        **Word2VecTransformer._parameter_constraints,
        "min_n": [Interval(Integral, 1, None, closed="left")],
        "max_n": [Interval(Integral, 0, None, closed="left")],
        "bucket": [Interval(Integral, 0, 2**31 - 1, closed="both")],
        "oov_ngrams": ["boolean"],
    }

    def __init__(
        self,
        vector_size=100,
        *,
        sg=1,
        hs=0,
        negative=5,
        shared_negatives=True,
        ns_exponent=0.75,
        window=5,
        sample=1e-3,
        alpha=0.025,
        min_alpha=1e-4,
        epochs=5,
        min_count=5,
        max_vocab_size=None,
        min_n=3,
        max_n=6,
        bucket=DEFAULT_BUCKET,
        oov_ngrams=True,
        engine="auto",
        lock_free=False,
        batch_size=None,
        warm_start=False,
        callbacks=None,
        pooling="mean",
        sif_coefficient=1e-3,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        handle_missing="error",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        n_jobs=None,
        n_parts=2,
        verbose=0,
        dtype=np.float32,
    ):
        self.vector_size = vector_size
        self.sg = sg
        self.hs = hs
        self.negative = negative
        self.shared_negatives = shared_negatives
        self.ns_exponent = ns_exponent
        self.window = window
        self.sample = sample
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.epochs = epochs
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.min_n = min_n
        self.max_n = max_n
        self.bucket = bucket
        self.oov_ngrams = oov_ngrams
        self.engine = engine
        self.lock_free = lock_free
        self.batch_size = batch_size
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.pooling = pooling
        self.sif_coefficient = sif_coefficient
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs
        self.n_parts = n_parts
        self.verbose = verbose
        self.dtype = dtype

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_facebook(cls, path, documents=None, *, load_output=False, **params):
        """A fitted transformer from a Facebook fastText ``.bin`` unsupervised model.

        Parameters
        ----------
        path : str or os.PathLike
            Model saved by ``fasttext skipgram``/``cbow`` (or gensim's
            ``save_facebook_model``); uncompressed, old or new format.
        documents : iterable of str or of list of str, or None, default=None
            Needed only for ``pooling="tfidf"``/``"sif"`` (IDF and the SIF
            component are computed on them).
        load_output : bool, default=False
            Also load the output matrix (as much memory again as the word
            rows), needed to continue training with ``warm_start=True``.
        **params
            Parameters of the transformer (``pooling``, ``lowercase``,
            ``token_pattern``, ``handle_unknown``, ...); the training
            parameters are read from the file. Use ``lowercase=False`` for
            cased models such as Facebook's ``cc.*.bin``.

        Returns
        -------
        transformer : FastTextTransformer
            Ready for ``transform``; ``wv_`` equals gensim's
            ``load_facebook_model(path).wv`` (known and unknown words).
            ``fit`` on it retrains from scratch unless ``warm_start=True``
            (negative-sampling models loaded with ``load_output=True``).

        Raises
        ------
        ValueError
            Corrupt or truncated file (file and byte offset named),
            supervised or quantized model; ``pooling="tfidf"``/``"sif"``
            without ``documents``.

        Examples
        --------
        >>> from gensim.test.utils import datapath  # doctest: +SKIP
        >>> ft = FastTextTransformer.from_facebook(datapath("lee_fasttext.bin"), lowercase=False)  # doctest: +SKIP
        >>> ft.transform(["the government said"]).shape  # doctest: +SKIP
        (1, 10)
        """
        m = read_facebook_bin(path, load_output=load_output)
        n = len(m.words)
        est = cls(
            vector_size=m.dim,
            sg=int(m.model == 2),
            hs=int(m.loss == 1),
            negative=m.negative,
            window=max(m.window, 1),
            sample=m.sample,
            epochs=max(m.epochs, 1),
            min_count=max(m.min_count, 1),
            min_n=max(m.min_n, 1),
            max_n=m.max_n,
            bucket=m.bucket,
        )
        est.set_params(**params)
        est._validate_params()
        if est.pooling in ("tfidf", "sif") and documents is None:
            raise ValueError(
                f"pooling={est.pooling!r} needs the documents to compute IDF/SIF weights: "
                "pass documents=... to from_facebook."
            )
        est.wv_ = FastTextKeyedVectors(
            m.input_matrix[:n], m.input_matrix[n:], m.words, m.min_n, m.max_n, counts=m.counts
        )
        est.vocabulary_ = est.wv_.key_to_index
        est._n_features_out = m.dim
        est.syn1neg_ = m.output_matrix if m.loss == 2 and load_output else None
        est.syn1_ = None
        est.history_ = []
        est.engine_ = "numba"
        est.device_ = "cpu"
        docs = est._check_documents(documents) if documents is not None else None
        est.oov_rate_ = est.oov_rate(docs) if docs is not None else None
        est._fit_pooling(docs, est._analyzer())
        return est

    # ------------------------------------------------------- what subwords change
    def _ngram_settings(self, warm):
        """``(min_n, max_n, bucket)`` of the fit: the fitted model's when continuing."""
        if warm:
            return self.wv_.min_n, self.wv_.max_n, self.wv_.bucket
        bucket = self.bucket if self.max_n >= self.min_n else 0
        return self.min_n, self.max_n, bucket

    def _init_input_matrix(self, n_words, rng):
        """Word rows then bucket rows, uniform in ``(-1/vector_size, 1/vector_size)`` as fastText."""
        bucket = self._ngram_settings(False)[2]
        syn0 = rng.random((n_words + bucket, self.vector_size), dtype=np.float32)
        syn0 -= np.float32(0.5)
        syn0 *= np.float32(2.0 / self.vector_size)
        return syn0

    def _warm_input_matrix(self):
        return np.vstack([self.wv_.vectors_vocab, self.wv_.vectors_ngrams])

    def _input_rows(self, index_to_key, warm):
        """Each word's own row, then ``n_words + b`` for each of its n-gram buckets ``b``."""
        from ...kernels.fasttext import vocabulary_ngram_hashes

        min_n, max_n, bucket = self._ngram_settings(warm)
        ng_indptr, ng_indices = vocabulary_ngram_hashes(index_to_key, min_n, max_n, bucket)
        if len(ng_indices) == 0:
            return None, None
        return _subword_csr(ng_indptr, ng_indices, len(index_to_key))

    def _keyed_vectors(self, syn0, index_to_key, counts, warm):
        min_n, max_n, _ = self._ngram_settings(warm)
        n = len(index_to_key)
        return FastTextKeyedVectors(syn0[:n], syn0[n:], index_to_key, min_n, max_n, counts=counts)

    def _fit_pooling(self, documents, analyzer, counts=None):
        self.n_train_documents_ = None
        if self.pooling not in ("tfidf", "sif"):
            self.idf_ = None
            self.sif_component_ = None
            return
        if counts is None:
            counts = self._encode_counts(documents, analyzer)[0]
        self.n_train_documents_ = counts.shape[0]
        super()._fit_pooling(documents, analyzer, counts)

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """Embed each document as the pooled vectors of its tokens.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size), ``dtype``
            ``dtype`` (float32 by default). With ``oov_ngrams=True`` tokens
            outside the vocabulary contribute their n-gram vectors (IDF of an
            unseen word for ``"tfidf"``, weight 1 for ``"sif"``). Documents
            without any embeddable token get zeros, NaN or an error per
            ``handle_unknown``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            If ``handle_unknown="error"`` and a document has no embeddable token.
        """
        check_is_fitted(self, "wv_")
        kv = self.wv_
        if not self.oov_ngrams or kv.bucket == 0:
            return super().transform(X)
        documents = self._check_documents(X)
        analyzer = self._analyzer()
        key_to_index = kv.key_to_index
        n_words = len(kv)
        extra: dict = {}
        buf = array("i")
        lengths = np.zeros(len(documents), dtype=np.int64)
        for d, doc in enumerate(documents):
            toks = analyzer(doc)
            lengths[d] = len(toks)
            for t in toks:
                i = key_to_index.get(t)
                if i is None:
                    i = extra.get(t)
                    if i is None:
                        i = extra[t] = n_words + len(extra)
                buf.append(i)
        ids = (
            np.frombuffer(buf, dtype=np.int32).astype(np.int64)
            if len(buf)
            else np.zeros(0, np.int64)
        )
        rows = np.repeat(np.arange(len(documents)), lengths)
        extra_vecs, has = kv.get_vectors(list(extra))
        keep = np.ones(len(ids), dtype=bool)
        if len(extra):
            oov = ids >= n_words
            keep[oov] = has[ids[oov] - n_words]
        n_cols = n_words + len(extra)
        counts = sp.csr_matrix(
            (np.ones(int(keep.sum())), (rows[keep], ids[keep])), shape=(len(documents), n_cols)
        )
        counts.sum_duplicates()
        vectors = np.vstack([kv.vectors, extra_vecs]) if len(extra) else kv.vectors
        idf = weights = None
        if self.idf_ is not None:
            unseen = np.log(1.0 + self.n_train_documents_) + 1.0
            idf = np.concatenate([self.idf_, np.full(len(extra), unseen)])
        if self.pooling == "sif":
            weights = np.concatenate(
                [sif_weights(kv.counts, self.sif_coefficient), np.ones(len(extra))]
            )
        out = pool(
            counts,
            vectors,
            self.pooling,
            idf=idf,
            sif_weight=weights,
            sif_component=self.sif_component_,
        )
        empty = np.diff(counts.indptr) == 0
        out = self._apply_handle_unknown(out, empty)
        return out.astype(self.dtype, copy=False)

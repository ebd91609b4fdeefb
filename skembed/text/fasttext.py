"""FastTextTransformer: word vectors enriched with character n-grams (Bojanowski et al. 2017).

Also the fastText-specific vector store :class:`FastTextKeyedVectors`, which
composes a vector for *any* string from its character n-grams, and the
loaders of Facebook fastText ``.bin`` models and ``.vec`` files.
"""

from __future__ import annotations

from array import array
from collections import Counter
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import limit_threads, progress, resolve_device, seed_from_random_state
from ..kernels._sampling import (
    alias_table,
    huffman_tree,
    keep_probabilities,
    noise_distribution,
    sigmoid_tables,
)
from ..keyedvectors import KeyedVectors
from ._analyzer import (
    DEFAULT_TOKEN_PATTERN,
    build_vocabulary,
    count_words,
    encode,
    iter_tokens,
)
from ._base import DEVICE_CONSTRAINT, BaseWordEmbedder
from ._fasttext_io import read_facebook_bin
from ._pooling import pool, sif_weights

__all__ = [
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "fasttext_memory_bytes",
    "load_facebook_model",
    "load_facebook_vectors",
]

DEFAULT_BUCKET = 500_000


# numba is imported on first use, so that importing skembed stays light
def ngram_hashes(word, min_n, max_n, bucket):
    """See :func:`skembed.kernels.fasttext.ngram_hashes`."""
    from ..kernels.fasttext import ngram_hashes as impl

    return impl(word, min_n, max_n, bucket)


def vocabulary_ngram_hashes(words, min_n, max_n, bucket):
    """See :func:`skembed.kernels.fasttext.vocabulary_ngram_hashes`."""
    from ..kernels.fasttext import vocabulary_ngram_hashes as impl

    return impl(words, min_n, max_n, bucket)


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
    """
    return 4 * int(vector_size) * (int(n_words) + int(bucket) + 2 * int(n_words))


def _ngram_matrix(indptr, indices, n_rows, bucket):
    data = np.ones(len(indices), dtype=np.float32)
    m = sp.csr_matrix((data, indices, indptr), shape=(n_rows, bucket))
    m.sum_duplicates()
    return m


class FastTextKeyedVectors(KeyedVectors):
    """Word vectors composed of a word's own vector and its character n-gram vectors.

    The vector of a vocabulary word is the mean of its own input row and the
    rows of its character n-grams (``(v_w + sum_g z_g) / (1 + n_g)``, n-grams
    counted with repetition); any other string gets the mean of its n-gram
    rows (zeros when it has none), as in Facebook's fastText and gensim.

    Parameters
    ----------
    vectors_vocab : array-like of shape (n_words, vector_size)
        The words' own input vectors.
    vectors_ngrams : array-like of shape (bucket, vector_size)
        One row per hash bucket.
    index_to_key : sequence of str of length n_words
    min_n, max_n : int
        Character n-gram lengths (``max_n < min_n`` disables n-grams).
    counts : array-like of shape (n_words,) or None, default=None

    Attributes
    ----------
    vectors : numpy.ndarray of shape (n_words, vector_size), float32
        Composed vectors of the vocabulary words.
    vectors_vocab : numpy.ndarray of shape (n_words, vector_size), float32
    vectors_ngrams : numpy.ndarray of shape (bucket, vector_size), float32
    bucket, min_n, max_n : int
    ngram_indptr, ngram_indices : numpy.ndarray
        CSR of each vocabulary word's n-gram bucket rows.

    Notes
    -----
    ``word in kv`` is true only for vocabulary words (unlike gensim, whose
    ``FastTextKeyedVectors.__contains__`` is always true); use
    :meth:`has_vector` to know whether a string gets a non-zero vector.
    ``kv[word]``, :meth:`get_vector`, :meth:`similarity` and
    :meth:`most_similar` accept any string.

    Raises
    ------
    KeyError
        Looking up an unknown word in a model without n-gram buckets
        (``bucket=0``).

    References
    ----------
    Bojanowski, Grave, Joulin & Mikolov (2017), "Enriching Word Vectors with
    Subword Information", TACL 5.

    Examples
    --------
    >>> import numpy as np
    >>> kv = FastTextKeyedVectors(np.ones((1, 2)), np.zeros((10, 2)), ["cat"], 3, 3)
    >>> "cats" in kv, kv.has_vector("cats")
    (False, True)
    >>> kv["cats"].shape
    (2,)
    """

    def __init__(self, vectors_vocab, vectors_ngrams, index_to_key, min_n, max_n, counts=None):
        vectors_vocab = np.ascontiguousarray(vectors_vocab, dtype=np.float32)
        vectors_ngrams = np.ascontiguousarray(vectors_ngrams, dtype=np.float32)
        if vectors_ngrams.ndim != 2 or vectors_ngrams.shape[1] != vectors_vocab.shape[1]:
            raise ValueError(
                f"vectors_ngrams must have shape (bucket, {vectors_vocab.shape[1]}), "
                f"got {vectors_ngrams.shape}."
            )
        self.vectors_vocab = vectors_vocab
        self.vectors_ngrams = vectors_ngrams
        self.bucket = int(vectors_ngrams.shape[0])
        self.min_n = int(min_n)
        self.max_n = int(max_n)
        index_to_key = list(index_to_key)
        self.ngram_indptr, self.ngram_indices = vocabulary_ngram_hashes(
            index_to_key, self.min_n, self.max_n, self.bucket
        )
        super().__init__(self._compose(), index_to_key, counts=counts)

    def _compose(self):
        n = self.vectors_vocab.shape[0]
        out = self.vectors_vocab.copy()
        if self.bucket == 0:
            return out
        m = _ngram_matrix(self.ngram_indptr, self.ngram_indices, n, self.bucket)
        out += m @ self.vectors_ngrams
        out /= (1.0 + np.diff(self.ngram_indptr)).astype(np.float32)[:, None]
        return out

    def __repr__(self):
        return (
            f"<FastTextKeyedVectors: {len(self)} words, {self.bucket} buckets, "
            f"n-grams {self.min_n}..{self.max_n}, vector_size={self.vector_size}>"
        )

    def has_vector(self, key) -> bool:
        """True if ``key`` is a vocabulary word or has at least one character n-gram."""
        return key in self.key_to_index or (
            self.bucket > 0 and len(ngram_hashes(key, self.min_n, self.max_n, self.bucket)) > 0
        )

    def _oov_vector(self, key):
        rows = ngram_hashes(key, self.min_n, self.max_n, self.bucket)
        if len(rows) == 0:
            return np.zeros(self.vector_size, dtype=np.float32)
        return self.vectors_ngrams[rows].mean(axis=0, dtype=np.float32)

    def get_vector(self, key, norm=False):
        """Vector of any string: composed for vocabulary words, from n-grams otherwise.

        Parameters
        ----------
        key : str
        norm : bool, default=False
            Return the unit-length vector (zeros stay zeros).

        Returns
        -------
        vector : numpy.ndarray of shape (vector_size,), float32
            Zeros for a string outside the vocabulary that has no n-gram.

        Raises
        ------
        KeyError
            For a string outside the vocabulary when the model has no n-grams
            (``bucket=0`` or ``max_n < min_n``).
        """
        i = self.key_to_index.get(key)
        if i is None and (self.bucket == 0 or self.max_n < self.min_n):
            raise KeyError(
                f"Word {key!r} is not in the vocabulary ({len(self)} words) and this model has "
                "no character n-grams (bucket=0) to compose it from."
            )
        vec = self.vectors[i] if i is not None else self._oov_vector(key)
        if norm:
            return vec / max(float(np.linalg.norm(vec)), 1e-12)
        return vec

    def __getitem__(self, key):
        """Vector of a string (1-D) or of each string of a list (2-D); see :meth:`get_vector`."""
        if isinstance(key, str):
            return self.get_vector(key)
        return np.vstack([self.get_vector(k) for k in key]).astype(np.float32, copy=False)

    def get_vectors(self, words):
        """Vectors of many strings at once (the n-grams are hashed by the compiled kernel).

        Parameters
        ----------
        words : sequence of str

        Returns
        -------
        vectors : numpy.ndarray of shape (len(words), vector_size), float32
        has_vector : numpy.ndarray of shape (len(words),), bool
            False for strings outside the vocabulary without any n-gram
            (their row is zero).
        """
        words = list(words)
        out = np.zeros((len(words), self.vector_size), dtype=np.float32)
        known = np.array([w in self.key_to_index for w in words], dtype=bool)
        if known.any():
            out[known] = self.vectors[[self.key_to_index[w] for w in np.array(words)[known]]]
        has = known.copy()
        unknown = [w for w, k in zip(words, known, strict=True) if not k]
        if unknown and self.bucket > 0:
            indptr, indices = vocabulary_ngram_hashes(unknown, self.min_n, self.max_n, self.bucket)
            m = _ngram_matrix(indptr, indices, len(unknown), self.bucket)
            n = np.diff(indptr)
            vecs = (m @ self.vectors_ngrams) / np.maximum(n, 1).astype(np.float32)[:, None]
            out[~known] = vecs
            has[~known] = n > 0
        return out, has

    def most_similar(self, positive=(), negative=(), topn=10, restrict_vocab=None):
        """As :meth:`KeyedVectors.most_similar`; words outside the vocabulary are composed from n-grams."""
        if isinstance(positive, (str, np.ndarray)):
            positive = [positive]
        if isinstance(negative, (str, np.ndarray)):
            negative = [negative]

        def convert(terms):
            return [
                self._oov_vector(t) if isinstance(t, str) and t not in self.key_to_index else t
                for t in terms
            ]

        return super().most_similar(convert(positive), convert(negative), topn, restrict_vocab)

    def __getstate__(self):
        state = super().__getstate__()
        # the composed vectors and n-gram CSR are recomputed on load
        state.pop("ngram_indptr", None)
        state.pop("ngram_indices", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.ngram_indptr, self.ngram_indices = vocabulary_ngram_hashes(
            self.index_to_key, self.min_n, self.max_n, self.bucket
        )

    @classmethod
    def load_facebook(cls, path):
        """Read the vectors of a Facebook fastText ``.bin`` model (see :func:`load_facebook_vectors`)."""
        return load_facebook_vectors(path)


def load_facebook_vectors(path):
    """Load the word and n-gram vectors of a Facebook fastText ``.bin`` model.

    Parameters
    ----------
    path : str or os.PathLike
        An unsupervised model saved by ``fasttext skipgram``/``cbow`` (or
        gensim's ``save_facebook_model``), old or new format, uncompressed.

    Returns
    -------
    kv : FastTextKeyedVectors
        Vectors equal to gensim's ``load_facebook_model(path).wv[word]``
        (and to fastText's ``get_word_vector``) for known and unknown words.

    Raises
    ------
    ValueError
        If the file is corrupt or truncated (file and byte offset named), a
        supervised or quantized model.

    See Also
    --------
    load_facebook_model : the same as a fitted :class:`FastTextTransformer`.
    skembed.KeyedVectors.load_word2vec_format : for ``.vec`` files (no n-grams).
    """
    m = read_facebook_bin(path)
    n = len(m.words)
    return FastTextKeyedVectors(
        m.input_matrix[:n], m.input_matrix[n:], m.words, m.min_n, m.max_n, counts=m.counts
    )


def load_facebook_model(path, **params):
    """A fitted :class:`FastTextTransformer` from a Facebook fastText ``.bin`` model.

    Same as :meth:`FastTextTransformer.from_facebook`.
    """
    return FastTextTransformer.from_facebook(path, **params)


# --------------------------------------------------------------------------- training helpers
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


def _bag_rows(words, indptr, indices):
    """Concatenated input rows of ``words`` (CSR gather), with bag offsets and sizes."""
    starts = indptr[words]
    sizes = indptr[words + 1] - starts
    offsets = np.zeros(len(words), dtype=np.int64)
    np.cumsum(sizes[:-1], out=offsets[1:])
    total = int(sizes.sum())
    pos = np.arange(total, dtype=np.int64) - np.repeat(offsets - starts, sizes)
    return indices[pos].astype(np.int64), offsets, sizes


def _provisional_encode(documents, analyzer):
    """Encode a corpus with provisional word ids (first-seen order) in one tokenizing pass.

    Returns
    -------
    ids : numpy.ndarray of shape (n_tokens,), int32
    offsets : numpy.ndarray of shape (n_documents + 1,), int64
    words : list of str
        The word of each provisional id.
    """
    pid: dict = {}
    setdefault = pid.setdefault
    buf = array("i")
    lengths = array("q")
    for doc in documents:
        toks = analyzer(doc)
        buf.extend([setdefault(t, len(pid)) for t in toks])
        lengths.append(len(toks))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=offsets[1:])
    ids = np.frombuffer(buf, dtype=np.int32).copy() if len(buf) else np.zeros(0, np.int32)
    return ids, offsets, list(pid)


def _encoded_chunks(documents, analyzer, key_to_index, chunk_tokens):
    """Yield ``(ids int32, offsets int64, n_tokens)`` of consecutive document chunks."""
    batch, n = [], 0
    for doc in documents:
        toks = analyzer(doc)
        batch.append(toks)
        n += len(toks)
        if n >= chunk_tokens:
            yield encode(batch, key_to_index)
            batch, n = [], 0
    if batch:
        yield encode(batch, key_to_index)


# --------------------------------------------------------------------------- the estimator
class FastTextTransformer(BaseWordEmbedder):
    """fastText word vectors (words + character n-grams) trained on your corpus, pooled per document.

    Word2vec (skip-gram or CBOW, negative sampling or hierarchical softmax)
    in which the input vector of a word is the mean of its own vector and
    the vectors of its character n-grams (Bojanowski et al. 2017): the word
    is wrapped in ``<`` and ``>``, its n-grams of ``min_n``..``max_n``
    characters are hashed with Facebook fastText's FNV-1a hash into
    ``bucket`` rows. Words never seen in training get a vector from their
    n-grams (``wv_["unseenword"]``), and ``transform`` uses those vectors for
    unknown tokens (``oov_ngrams=True``).

    Pre-trained Facebook fastText models load with :meth:`from_facebook`.

    Parameters
    ----------
    vector_size : int, default=100
        Dimension of the word (and document) vectors.
    sg : bool, default=True
        Skip-gram (True) or CBOW (False).
    hs : bool, default=False
        Hierarchical softmax over a Huffman tree (numba engine only).
    negative : int, default=5
        Noise words per positive example (0 disables negative sampling; then
        ``hs`` must be true).
    shared_negatives : bool, default=True
        Skip-gram with negative sampling only (``sg=True, hs=False``), numba
        engine: draw the negatives once per centre word and share them across
        its context words (Ji et al. 2016), as ``Word2VecTransformer`` does;
        ``False`` gives fastText's per-pair negatives.
    ns_exponent : float, default=0.75
        Noise distribution ``count(w) ** ns_exponent``.
    window : int, default=5
        Maximum distance to a context word; the effective window of each
        token is drawn uniformly in ``1..window``.
    sample : float, default=1e-3
        Frequent-word subsampling threshold (word2vec's keep probability
        ``(sqrt(c / t) + 1) t / c`` with ``t = sample * n_tokens``); 0 disables it.
    alpha, min_alpha : float, default=0.025, 1e-4
        Learning rate, decayed linearly from ``alpha`` to ``min_alpha`` over
        all epochs.
    epochs : int, default=5
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
    engine : {"auto", "numba", "torch"}, default="auto"
        ``"numba"``: the compiled multi-threaded Hogwild CPU kernel
        (:func:`skembed.kernels.word2vec.train_chunk`); ``"torch"``: batched
        torch training on ``device`` (also on the CPU); ``"auto"``: numba
        on the CPU, torch on any other device.
    batch_size : int, default=1024
        Examples per step of the torch engine.
    warm_start : bool, default=False
        Continue training the fitted vectors on the new ``X`` with the
        existing vocabulary (new words are ignored, counts are not updated).
    callbacks : list of callable or None, default=None
        Each is called as ``callback(estimator, epoch)`` after every epoch.
    pooling : {"mean", "sum", "max", "tfidf", "sif"}, default="mean"
    sif_alpha : float, default=1e-3
    lowercase, token_pattern, tokenizer
        Tokenization of ``str`` documents (scikit-learn's analyzer).
    handle_missing : {"error", "empty"}, default="error"
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output for documents without any embeddable token.
    random_state : int, RandomState instance or None, default=None
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
    n_jobs : int or None, default=None
        Training threads (numba) / intra-op threads (torch).
    verbose : int, default=0
        Progress bar over epochs when positive.
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
    loss_history_ : list of float
        Mean training loss per example of each epoch.
    engine_ : str
    device_ : str
    idf_, sif_component_ : numpy.ndarray or None
    oov_rate_ : float
        Fraction of the tokens of the last ``transform`` outside the
        vocabulary (with ``oov_ngrams=True`` they are still embedded).

    Raises
    ------
    ValueError
        In ``fit``: empty corpus or vocabulary emptied by ``min_count``;
        ``negative=0`` without ``hs``; ``hs`` with the torch engine; the loss
        became NaN (lower ``alpha``).

    Notes
    -----
    Vector of word ``w`` with n-gram rows ``G(w)``: ``(v_w + sum_{g in
    G(w)} z_g) / (1 + |G(w)|)``. Training updates every row of the bag with
    the full gradient, as fastText does for unsupervised models.

    Determinism: with an int ``random_state`` and ``n_jobs=1`` the numba
    engine is bit-reproducible; with more threads the lock-free (Hogwild)
    updates make results vary slightly between runs. The torch engine on the
    CPU is reproducible for a given ``random_state`` and thread count.

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
    >>> from skembed.text.fasttext import FastTextTransformer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> ft = FastTextTransformer(vector_size=8, min_count=1, bucket=1000, random_state=0, n_jobs=1)
    >>> ft.fit_transform(docs).shape
    (40, 8)
    >>> ft.wv_["cats"].shape  # an unseen word, from its n-grams
    (8,)
    """

    _parameter_constraints: dict = {
        **BaseWordEmbedder._parameter_constraints,
        "vector_size": [Interval(Integral, 1, None, closed="left")],
        "sg": ["boolean", Interval(Integral, 0, 1, closed="both")],
        "hs": ["boolean", Interval(Integral, 0, 1, closed="both")],
        "negative": [Interval(Integral, 0, None, closed="left")],
        "shared_negatives": ["boolean"],
        "ns_exponent": [Interval(Real, None, None, closed="neither")],
        "window": [Interval(Integral, 1, None, closed="left")],
        "sample": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "min_alpha": [Interval(Real, 0, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "max_vocab_size": [Interval(Integral, 1, None, closed="left"), None],
        "min_n": [Interval(Integral, 1, None, closed="left")],
        "max_n": [Interval(Integral, 0, None, closed="left")],
        "bucket": [Interval(Integral, 0, 2**31 - 1, closed="both")],
        "oov_ngrams": ["boolean"],
        "engine": [StrOptions({"auto", "numba", "torch"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "callbacks": [list, tuple, None],
        "random_state": ["random_state"],
        "device": DEVICE_CONSTRAINT,
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }
    _accepts_iterable_corpus = True
    #: tokens per training chunk (memory does not grow with the corpus beyond this)
    _chunk_tokens = 1_000_000

    def __init__(
        self,
        vector_size=100,
        *,
        sg=True,
        hs=False,
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
        batch_size=1024,
        warm_start=False,
        callbacks=None,
        pooling="mean",
        sif_alpha=1e-3,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        handle_missing="error",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        n_jobs=None,
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
        self.batch_size = batch_size
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.pooling = pooling
        self.sif_alpha = sif_alpha
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs
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
        est = cls(
            vector_size=m.dim,
            sg=m.model == 2,
            hs=m.loss == 1,
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
        n = len(m.words)
        est.wv_ = FastTextKeyedVectors(
            m.input_matrix[:n], m.input_matrix[n:], m.words, m.min_n, m.max_n, counts=m.counts
        )
        est.vocabulary_ = est.wv_.key_to_index
        est._n_features_out = m.dim
        est.syn1neg_ = m.output_matrix if m.loss == 2 and load_output else None
        est.syn1_ = None
        est.loss_history_ = []
        est.engine_ = "numba"
        est.device_ = "cpu"
        docs = est._check_documents(documents) if documents is not None else None
        est._fit_pooling(docs, est._analyzer())
        return est

    # ------------------------------------------------------------------ fit
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

    def _resolve_engine(self):
        self.device_ = resolve_device(self.device)
        engine = self.engine
        if engine == "auto":
            engine = "numba" if self.device_ == "cpu" else "torch"
        if engine == "numba" and self.device_ != "cpu":
            raise ValueError(
                f"engine='numba' runs on the CPU only, but device={self.device!r}; use "
                "engine='torch' or 'auto' for other devices."
            )
        if not self.hs and self.negative == 0:
            raise ValueError("negative=0 and hs=False leave no training objective; set one.")
        if self.hs and engine == "torch":
            raise ValueError("hs=True is implemented by the numba engine only; use engine='numba'.")
        return engine

    def _fit_word_vectors(self, documents, analyzer):
        engine = self._resolve_engine()
        self.engine_ = engine
        seed = seed_from_random_state(self.random_state)
        in_memory = isinstance(documents, list)
        continuing = self.warm_start and hasattr(self, "wv_")
        if in_memory:
            # one tokenizing pass: provisional ids in first-seen order, counts by bincount
            raw_ids, raw_offsets, pid_words = _provisional_encode(documents, analyzer)
            pid_counts = np.bincount(raw_ids, minlength=len(pid_words))
            word_counter = Counter(dict(zip(pid_words, pid_counts.tolist(), strict=True)))
        else:
            word_counter = count_words(iter_tokens(documents, analyzer))
        if continuing:
            wv = self.wv_
            if (self.syn1neg_ is None and self.negative > 0) or (self.hs and self.syn1_ is None):
                raise ValueError(
                    "warm_start=True needs the output matrix of the same objective (hs/negative) "
                    "as the fitted model; fit from scratch instead."
                )
            index_to_key, word_counts = wv.index_to_key, wv.counts
            min_n, max_n, bucket, dim = wv.min_n, wv.max_n, wv.bucket, wv.vector_size
            syn0 = np.vstack([wv.vectors_vocab, wv.vectors_ngrams])
            n_known = sum(word_counter.get(w, 0) for w in index_to_key)
            if n_known == 0:
                raise ValueError("warm_start: no token of X is in the fitted vocabulary.")
        else:
            index_to_key, word_counts = build_vocabulary(
                word_counter, self.min_count, self.max_vocab_size
            )
            n_known = int(word_counts.sum())
            min_n, max_n, bucket, dim = self.min_n, self.max_n, self.bucket, self.vector_size
            if max_n < min_n:
                bucket = 0
            syn0 = None
        del word_counter
        n_words = len(index_to_key)
        key_to_index = {w: i for i, w in enumerate(index_to_key)}
        rng = np.random.default_rng(seed)
        if syn0 is None:
            syn0 = rng.random((n_words + bucket, dim), dtype=np.float32)
            syn0 -= np.float32(0.5)
            syn0 *= np.float32(2.0 / dim)  # uniform(-1/dim, 1/dim), as fastText
        syn1neg = syn1 = None
        if self.negative > 0:
            prev = self.syn1neg_ if continuing else None
            syn1neg = prev.copy() if prev is not None else np.zeros((n_words, dim), np.float32)
        if self.hs:
            prev = self.syn1_ if continuing else None
            syn1 = (
                prev.copy()
                if prev is not None
                else np.zeros((max(n_words - 1, 1), dim), np.float32)
            )
        ng_indptr, ng_indices = vocabulary_ngram_hashes(index_to_key, min_n, max_n, bucket)
        sub_indptr, sub_indices = _subword_csr(ng_indptr, ng_indices, n_words)

        # corpus, as encoded chunks (in memory) or a re-encoding stream (re-iterable corpus)
        doc_counts = None
        if in_memory:
            remap = np.fromiter(
                (key_to_index.get(w, -1) for w in pid_words), dtype=np.int32, count=len(pid_words)
            )
            del pid_words
            if self.pooling in ("tfidf", "sif"):
                vocab_ids = remap[raw_ids]
                known = vocab_ids >= 0
                doc_of = np.repeat(np.arange(len(raw_offsets) - 1), np.diff(raw_offsets))
                doc_counts = sp.csr_matrix(
                    (np.ones(int(known.sum())), (doc_of[known], vocab_ids[known])),
                    shape=(len(raw_offsets) - 1, n_words),
                )
                doc_counts.sum_duplicates()
            chunks = list(_split_chunks(raw_ids, raw_offsets, self._chunk_tokens))
            n_progress = len(raw_ids)

            def epoch_chunks():
                return iter(chunks)
        else:
            remap = np.arange(n_words, dtype=np.int32)
            n_progress = n_known

            def epoch_chunks():
                for c_ids, c_offsets, _ in _encoded_chunks(
                    documents, analyzer, key_to_index, self._chunk_tokens
                ):
                    yield c_ids, c_offsets

        trainer = _NumbaTrainer if engine == "numba" else _TorchTrainer
        state = trainer(
            self, syn0, syn1neg, syn1, sub_indptr, sub_indices, word_counts, seed, n_words
        )
        state.remap = remap
        total = float(self.epochs) * max(n_progress, 1)
        done = 0.0
        self.loss_history_ = []
        with limit_threads(self.n_jobs, modules=(self.engine_,)) as n_threads:
            state.n_threads = n_threads
            for epoch in progress(range(self.epochs), verbose=self.verbose, desc="epochs"):
                loss_sum, n_ex = 0.0, 0.0
                for k, (c_ids, c_offsets) in enumerate(epoch_chunks()):
                    a0 = self.alpha - (self.alpha - self.min_alpha) * done / total
                    done += len(c_ids)
                    a1 = self.alpha - (self.alpha - self.min_alpha) * min(done / total, 1.0)
                    ls, nex = state.train(
                        c_ids, c_offsets, a0, a1, seed + 7919 * epoch + 104729 * k
                    )
                    loss_sum += ls
                    n_ex += nex
                self.loss_history_.append(loss_sum / max(n_ex, 1.0))
                for callback in self.callbacks or ():
                    callback(self, epoch)
        syn0, self.syn1neg_, self.syn1_ = state.result()
        wv = FastTextKeyedVectors(
            syn0[:n_words], syn0[n_words:], index_to_key, min_n, max_n, counts=word_counts
        )
        return wv, doc_counts

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """Embed each document as the pooled vectors of its tokens.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size)
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
        n_tokens = n_known = 0
        for d, doc in enumerate(documents):
            toks = analyzer(doc)
            lengths[d] = len(toks)
            n_tokens += len(toks)
            for t in toks:
                i = key_to_index.get(t)
                if i is None:
                    i = extra.get(t)
                    if i is None:
                        i = extra[t] = n_words + len(extra)
                else:
                    n_known += 1
                buf.append(i)
        self.oov_rate_ = float(1.0 - n_known / n_tokens) if n_tokens else 0.0
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
            weights = np.concatenate([sif_weights(kv.counts, self.sif_alpha), np.ones(len(extra))])
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


def _split_chunks(ids, offsets, chunk_tokens):
    """Split an encoded corpus into chunks of whole documents of about ``chunk_tokens`` tokens."""
    n_docs = len(offsets) - 1
    start = 0
    while start < n_docs:
        stop = int(np.searchsorted(offsets, offsets[start] + chunk_tokens, side="left"))
        stop = min(max(stop, start + 1), n_docs)
        t0, t1 = offsets[start], offsets[stop]
        yield ids[t0:t1], offsets[start : stop + 1] - t0
        start = stop


class _NumbaTrainer:
    """Training state of the compiled CPU engine (the shared word2vec kernel)."""

    def __init__(self, est, syn0, syn1neg, syn1, sub_indptr, sub_indices, counts, seed, n_words):
        from ..kernels import word2vec as kw

        self.kw = kw
        self.est = est
        self.syn0 = syn0
        dim = syn0.shape[1]
        self.syn1neg = syn1neg if syn1neg is not None else np.zeros((1, dim), np.float32)
        self.syn1 = syn1 if syn1 is not None else np.zeros((1, dim), np.float32)
        has_ngrams = len(sub_indices) > n_words
        self.sub_indptr = sub_indptr if has_ngrams else None
        self.sub_indices = sub_indices if has_ngrams else None
        self.neg_prob, self.neg_alias = alias_table(noise_distribution(counts, est.ns_exponent))
        if est.hs:
            self.codes, self.points, self.code_lengths = huffman_tree(counts)
        else:
            self.codes = np.zeros((n_words, 1), np.uint8)
            self.points = np.zeros((n_words, 1), np.int32)
            self.code_lengths = np.zeros(n_words, np.int32)
        self.sigmoid, self.log_sigmoid = sigmoid_tables()
        self.keep = keep_probabilities(counts, est.sample)
        self.remap = np.arange(n_words, dtype=np.int32)
        self.has_neg = syn1neg is not None
        self.has_hs = syn1 is not None
        self.n_threads = 1

    def train(self, ids, offsets, alpha0, alpha1, seed):
        est = self.est
        ids, offsets, _ = self.kw.prepare_chunk(ids, offsets, self.remap, self.keep, seed)
        if len(ids) == 0:
            return 0.0, 0.0
        shared = est.shared_negatives and est.sg and not est.hs and est.negative > 0
        kernel = self.kw.train_chunk_shared if shared else self.kw.train_chunk
        stats = kernel(
            self.syn0,
            self.syn1neg,
            self.syn1,
            ids,
            offsets,
            self.sub_indptr,
            self.sub_indices,
            self.neg_prob,
            self.neg_alias,
            self.codes,
            self.points,
            self.code_lengths,
            self.sigmoid,
            self.log_sigmoid,
            bool(est.sg),
            bool(est.hs),
            int(est.negative),
            int(est.window),
            float(alpha0),
            float(alpha1),
            int(seed),
            int(max(1, min(self.n_threads, len(offsets) - 1))),
        )
        if stats[:, 2].any() or not np.isfinite(self.syn0[: min(len(self.syn0), 1000)]).all():
            raise ValueError(
                f"Training diverged (non-finite loss) with alpha={est.alpha}; lower alpha."
            )
        return float(stats[:, 0].sum()), float(stats[:, 1].sum())

    def result(self):
        return (
            self.syn0,
            self.syn1neg if self.has_neg else None,
            self.syn1 if self.has_hs else None,
        )


class _TorchTrainer:
    """Training state of the batched torch engine (any device, CPU included)."""

    def __init__(self, est, syn0, syn1neg, syn1, sub_indptr, sub_indices, counts, seed, n_words):
        import torch

        from ..base import torch_device, torch_generator
        from ..kernels import word2vec as kw
        from ..nn.fasttext import SubwordNegativeSampling

        self.torch = torch
        self.kw = kw
        self.est = est
        self.device = torch_device(est.device_)
        self.model = SubwordNegativeSampling(torch.from_numpy(syn0), torch.from_numpy(syn1neg)).to(
            self.device
        )
        self.sub_indptr = sub_indptr
        self.sub_indices = sub_indices
        cum = np.cumsum(noise_distribution(counts, est.ns_exponent))
        cum /= cum[-1]
        # MPS has no float64
        self.cdf_dtype = torch.float32 if self.device.type == "mps" else torch.float64
        self.noise_cdf = torch.as_tensor(cum, dtype=self.cdf_dtype, device=self.device)
        self.gen = torch_generator(seed, est.device_)
        self.keep = keep_probabilities(counts, est.sample)
        self.remap = np.arange(n_words, dtype=np.int32)
        self.n_words = n_words
        self.n_threads = 1

    def _bags_cbow(self, contexts):
        valid = contexts >= 0
        words = contexts[valid].astype(np.int64)
        rows, _, sizes = _bag_rows(words, self.sub_indptr, self.sub_indices)
        example = np.repeat(np.arange(len(contexts)), valid.sum(axis=1))
        ex_sizes = np.bincount(example, weights=sizes, minlength=len(contexts)).astype(np.int64)
        ex_offsets = np.zeros(len(contexts), dtype=np.int64)
        np.cumsum(ex_sizes[:-1], out=ex_offsets[1:])
        return rows, ex_offsets, ex_sizes

    def train(self, ids, offsets, alpha0, alpha1, seed):
        torch = self.torch
        est = self.est
        ids, offsets, _ = self.kw.prepare_chunk(ids, offsets, self.remap, self.keep, seed)
        if len(ids) == 0:
            return 0.0, 0.0
        if est.sg:
            inputs, targets = self.kw.skipgram_pairs(ids, offsets, est.window, seed)
        else:
            inputs, targets = self.kw.cbow_windows(ids, offsets, est.window, seed)
        n = len(targets)
        if n == 0:
            return 0.0, 0.0
        bs = int(est.batch_size)
        n_batches = (n + bs - 1) // bs
        dev = self.device
        loss_sum = 0.0
        for b in range(n_batches):
            lo, hi = b * bs, min(n, (b + 1) * bs)
            if est.sg:
                rows, bag_off, sizes = _bag_rows(
                    inputs[lo:hi].astype(np.int64), self.sub_indptr, self.sub_indices
                )
            else:
                rows, bag_off, sizes = self._bags_cbow(inputs[lo:hi])
            u = torch.rand(
                (hi - lo) * est.negative, generator=self.gen, device=dev, dtype=self.cdf_dtype
            )
            neg = torch.searchsorted(self.noise_cdf, u).clamp_(max=self.n_words - 1)
            value = self.model(
                torch.from_numpy(rows).to(dev),
                torch.from_numpy(bag_off).to(dev),
                torch.from_numpy(sizes).to(dev),
                torch.from_numpy(targets[lo:hi].astype(np.int64)).to(dev),
                neg.view(hi - lo, est.negative),
                alpha0 + (alpha1 - alpha0) * b / n_batches,
            )
            if not np.isfinite(value):
                raise ValueError(
                    f"Training diverged (non-finite loss) with alpha={est.alpha}; lower alpha."
                )
            loss_sum += value
        return loss_sum, float(n)

    def result(self):
        syn0 = self.model.input_weight.detach().cpu().numpy()
        syn1neg = self.model.output_weight.detach().cpu().numpy()
        return np.ascontiguousarray(syn0), np.ascontiguousarray(syn1neg), None

"""FastTextTransformer: word vectors enriched with character n-grams (Bojanowski et al. 2017).

Also the fastText-specific vector store :class:`FastTextKeyedVectors`, which
composes a vector for *any* string from its character n-grams, and the
loaders of Facebook fastText ``.bin`` models and ``.vec`` files.
"""

from __future__ import annotations

import os
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..keyedvectors import KeyedVectors
from ..kernels.fasttext import ngram_hashes, vocabulary_ngram_hashes
from ._analyzer import DEFAULT_TOKEN_PATTERN, iter_tokens
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
        """
        i = self.key_to_index.get(key)
        vec = self.vectors[i] if i is not None else self._oov_vector(key)
        if norm:
            return vec / max(float(np.linalg.norm(vec)), 1e-12)
        return vec

    def __getitem__(self, key):
        """Vector of a string (1-D) or of each string of a list (2-D); never raises KeyError."""
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

"""KeyedVectors: trained word vectors with their vocabulary, similarity queries and file formats.

A standalone object that cannot train (gensim's ``gensim.models.keyedvectors.KeyedVectors``).
Word-level estimators expose theirs as ``wv_``. :class:`FastTextKeyedVectors` adds fastText's
character n-gram vectors, so that any string has a vector.
"""

from __future__ import annotations

import os

import numpy as np

from .utils._schema import (
    Array,
    Instance,
    Number,
    check_state,
    is_packed_keys,
    pack_keys,
    unpack_keys,
)

__all__ = ["FastTextKeyedVectors", "KeyedVectors"]


class KeyedVectors:
    """Word vectors and their vocabulary.

    Parameters
    ----------
    vectors : array-like of shape (n_words, vector_size)
        Stored as a C-contiguous ``float32`` matrix.
    index_to_key : sequence of str of length n_words
        The word of each row; must be unique.
    counts : array-like of shape (n_words,) or None, default=None
        Corpus counts of the words (kept as ``int64``), when known.

    Attributes
    ----------
    vectors : numpy.ndarray of shape (n_words, vector_size), dtype float32
    index_to_key : list of str
    key_to_index : dict of str to int
    counts : numpy.ndarray of shape (n_words,), dtype int64, or None
    vector_size : int

    Raises
    ------
    ValueError
        If ``vectors`` is not 2-D, its row count differs from the number of
        keys, the keys are not unique, or it holds NaN/inf values.

    Notes
    -----
    Row norms used by the similarity queries are computed lazily on first
    use and cached (``norms``).

    References
    ----------
    The design of gensim's ``KeyedVectors`` (Řehůřek & Sojka 2010); file
    formats of the original word2vec tool (Mikolov et al. 2013) and GloVe
    (Pennington et al. 2014).

    Examples
    --------
    >>> import numpy as np
    >>> kv = KeyedVectors(np.eye(3), ["a", "b", "c"])
    >>> kv["b"]
    array([0., 1., 0.], dtype=float32)
    >>> kv.similarity("a", "b")
    0.0
    """

    #: state checked on load (utils._schema): kernels index ``vectors`` by key row
    _state_schema = {
        "vectors": Array("f", ("V", "D"), finite=True),
        "index_to_key": Instance(list, rows="V"),
        "counts": Array("iuf", ("V",), low=0, optional=True),
    }

    def __init__(self, vectors, index_to_key, counts=None):
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError(
                f"vectors must be 2-D (n_words, vector_size), got shape {vectors.shape}."
            )
        index_to_key = list(index_to_key)
        if len(index_to_key) != vectors.shape[0]:
            raise ValueError(
                f"vectors has {vectors.shape[0]} rows but {len(index_to_key)} keys were given."
            )
        key_to_index = {k: i for i, k in enumerate(index_to_key)}
        if len(key_to_index) != len(index_to_key):
            raise ValueError("index_to_key holds duplicate keys; each word must appear once.")
        if not np.isfinite(vectors).all():
            raise ValueError("vectors holds NaN or infinite values.")
        self.vectors = vectors
        self.index_to_key = index_to_key
        self.key_to_index = key_to_index
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        self._norms = None

    # ------------------------------------------------------------------ basics
    @property
    def vector_size(self) -> int:
        """Number of dimensions of each vector (``vectors.shape[1]``)."""
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.index_to_key)

    def __contains__(self, key) -> bool:
        return key in self.key_to_index

    def __repr__(self) -> str:
        return f"<KeyedVectors: {len(self)} words, vector_size={self.vector_size}>"

    def get_index(self, key) -> int:
        """Row index of ``key``; raises ``KeyError`` naming the word if absent.

        Parameters
        ----------
        key : str
            A vocabulary word.

        Returns
        -------
        int
            Its row in :attr:`vectors`.
        """
        try:
            return self.key_to_index[key]
        except KeyError:
            raise KeyError(f"Word {key!r} is not in the vocabulary ({len(self)} words).") from None

    def __getitem__(self, key):
        """Vector of a word (1-D ``float32``) or of each word of a list (2-D).

        Raises
        ------
        KeyError
            If a word is not in the vocabulary.
        """
        if isinstance(key, str):
            return self.vectors[self.get_index(key)]
        return self.vectors[[self.get_index(k) for k in key]]

    def get_vector(self, key, norm=False):
        """Vector of ``key``; raises ``KeyError`` if absent.

        Parameters
        ----------
        key : str
            A vocabulary word.
        norm : bool, default=False
            Return the vector divided by its L2 norm.

        Returns
        -------
        numpy.ndarray of shape (vector_size,), float32
            The word's row.
        """
        i = self.get_index(key)
        if norm:
            return self.vectors[i] / max(self.norms[i], 1e-12)
        return self.vectors[i]

    @property
    def norms(self):
        """L2 norm of each row, ``float32`` of shape (n_words,), computed once."""
        if self._norms is None or self._norms.shape[0] != self.vectors.shape[0]:
            self._norms = np.linalg.norm(self.vectors, axis=1).astype(np.float32)
        return self._norms

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_norms"] = None
        # the words as two arrays (skops would write a node per word); key_to_index is rebuilt
        state["index_to_key"] = pack_keys(self.index_to_key)
        state.pop("key_to_index", None)
        return state

    def __setstate__(self, state):
        # a pickle or skops file is not trusted: the kernels index ``vectors`` with rows of
        # ``key_to_index`` without bounds checks, so the two are made consistent here
        if is_packed_keys(state.get("index_to_key")):
            state = {
                **state,
                "index_to_key": unpack_keys(
                    state["index_to_key"], type(self).__name__, "index_to_key"
                ),
            }
        self.__dict__.update(state)
        self._check_state()

    def _check_state(self):
        check_state(self)  # the declared _state_schema (FastText's adds its n-gram table)
        name, keys = type(self).__name__, self.index_to_key
        self.vectors = np.ascontiguousarray(self.vectors, dtype=np.float32)
        self.key_to_index = {k: i for i, k in enumerate(keys)}
        if len(self.key_to_index) != len(keys):
            raise ValueError(f"{name}: stored index_to_key holds duplicate keys (damaged file).")
        self._norms = None

    # ------------------------------------------------------------------ similarity
    def similarity(self, w1, w2) -> float:
        """Cosine similarity of two words; raises ``KeyError`` for an unknown word.

        Parameters
        ----------
        w1, w2 : str
            Two vocabulary words.

        Returns
        -------
        float
            Their cosine similarity; 0.0 if either vector is zero.
        """
        a, b = self[w1], self[w2]
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        if na == 0 or nb == 0:
            return 0.0
        return float(np.dot(a, b) / (na * nb))

    def _unit(self, restrict_vocab=None):
        vecs = self.vectors if restrict_vocab is None else self.vectors[:restrict_vocab]
        norms = self.norms if restrict_vocab is None else self.norms[:restrict_vocab]
        return vecs / np.maximum(norms, 1e-12)[:, None]

    def most_similar(self, positive=(), negative=(), topn=10, restrict_vocab=None):
        """Words closest to ``sum(positive) - sum(negative)`` by cosine (3CosAdd).

        Parameters
        ----------
        positive : str or list of (str or array), default=()
            Words (or vectors) that contribute positively.
        negative : str or list of (str or array), default=()
            Words (or vectors) that contribute negatively.
        topn : int or None, default=10
            Number of results; ``None`` returns the similarity to every word
            as a ``float32`` array of shape (n_words,).
        restrict_vocab : int or None, default=None
            Only search the first ``restrict_vocab`` (most frequent) words.

        Returns
        -------
        result : list of (str, float)
            The ``topn`` nearest words with their cosine similarity, query
            words excluded (Mikolov et al. 2013, "Linguistic Regularities in
            Continuous Space Word Representations").

        Raises
        ------
        KeyError
            If a query word is not in the vocabulary.
        ValueError
            If no query word or vector is given.
        """
        if isinstance(positive, (str, np.ndarray)):
            positive = [positive]
        if isinstance(negative, (str, np.ndarray)):
            negative = [negative]
        terms = [(p, 1.0) for p in positive] + [(n, -1.0) for n in negative]
        if not terms:
            raise ValueError("most_similar needs at least one positive or negative word.")
        query = np.zeros(self.vector_size, dtype=np.float32)
        exclude = set()
        for term, sign in terms:
            if isinstance(term, str):
                query += sign * self.get_vector(term, norm=True)
                exclude.add(self.key_to_index[term])
            else:
                vec = np.asarray(term, dtype=np.float32)
                query += sign * vec / max(float(np.linalg.norm(vec)), 1e-12)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        sims = self._unit(restrict_vocab) @ query
        if topn is None:
            return sims
        n = min(int(topn) + len(exclude), sims.shape[0])
        best = np.argpartition(-sims, n - 1)[:n] if n < sims.shape[0] else np.arange(sims.shape[0])
        best = best[np.argsort(-sims[best], kind="stable")]
        return [(self.index_to_key[i], float(sims[i])) for i in best if i not in exclude][:topn]

    def similar_by_vector(self, vector, topn=10, restrict_vocab=None):
        """Words nearest to a raw vector by cosine; ``most_similar(positive=[vector])``.

        Parameters
        ----------
        vector : array-like of shape (vector_size,)
            The query vector (any norm).
        topn, restrict_vocab : int or None
            As in :meth:`most_similar`.

        Returns
        -------
        result : list of (str, float)
            The ``topn`` nearest words and their cosines (``topn=None``: all, as in ``most_similar``).
        """
        return self.most_similar(
            positive=[np.asarray(vector)], topn=topn, restrict_vocab=restrict_vocab
        )

    # ------------------------------------------------------------------ file formats
    def save_word2vec_format(self, path, binary=False, write_header=True):
        """Write the vectors in the word2vec text or binary format.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.
        binary : bool, default=False
            Binary layout of the original word2vec tool (``word`` + space +
            ``vector_size`` little-endian float32, then ``\\n``); text otherwise.
        write_header : bool, default=True
            Write the ``n_words vector_size`` header line. ``False`` writes the
            GloVe text format (no header).

        Notes
        -----
        The file is written under a temporary name in the same directory and renamed
        into place, so a fault during the write (an exception, SIGTERM) leaves a file
        already at ``path`` as it was, and a symbolic link at ``path`` is replaced, not
        written through.
        """
        from ._word2vec_format import write

        write(path, self.vectors, self.index_to_key, binary=binary, write_header=write_header)

    @classmethod
    def load_word2vec_format(
        cls, path, binary=False, no_header=False, limit=None, unicode_errors="strict"
    ):
        """Read vectors written by word2vec, GloVe, fastText (``.vec``) or gensim.

        Parameters
        ----------
        path : str or os.PathLike
            The file to read.
        binary : bool, default=False
            The binary layout (see :meth:`save_word2vec_format`).
        no_header : bool, default=False
            The file has no ``n_words vector_size`` header (GloVe text files).
        limit : int or None, default=None
            Read only the first ``limit`` vectors.
        unicode_errors : {"strict", "replace", "ignore", ...}, default="strict"
            How words that are not valid UTF-8 are decoded (the ``errors``
            argument of :meth:`bytes.decode`; gensim's parameter). Vocabularies
            cut at a byte limit hold words truncated inside a character: load
            them with ``"ignore"`` or ``"replace"``.

        Returns
        -------
        kv : KeyedVectors

        Raises
        ------
        ValueError
            If the header or a line is malformed, a word is not valid UTF-8
            (with ``unicode_errors="strict"``) or appears twice; the message
            names the file and the line number (text) or byte offset (binary),
            and the word.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "v.txt")
        >>> _ = open(path, "wb").write(b"2 2\\ncat 1 0\\ncaf\\xc3 0 1\\n")
        >>> KeyedVectors.load_word2vec_format(path, unicode_errors="ignore").index_to_key
        ['cat', 'caf']
        """
        from ._word2vec_format import read_binary, read_text

        path = os.fspath(path)
        read = read_binary if binary else read_text
        vectors, words = read(path, no_header=no_header, limit=limit, unicode_errors=unicode_errors)
        return cls(vectors, words)


def _kernels():
    """:mod:`skembed.kernels.fasttext`, imported on first use (importing skembed stays light)."""
    from .kernels import fasttext

    return fasttext


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
        The vocabulary, one word per row of ``vectors_vocab``.
    min_n, max_n : int
        Character n-gram lengths (``max_n < min_n`` disables n-grams).
    counts : array-like of shape (n_words,) or None, default=None
        Corpus frequency of each word, if known.

    Attributes
    ----------
    vectors : numpy.ndarray of shape (n_words, vector_size), float32
        Composed vectors of the vocabulary words.
    vectors_vocab : numpy.ndarray of shape (n_words, vector_size), float32
    vectors_ngrams : numpy.ndarray of shape (bucket, vector_size), float32
    bucket, min_n, max_n : int
    ngram_indptr, ngram_indices : numpy.ndarray
        CSR of each vocabulary word's n-gram bucket rows.

    Raises
    ------
    KeyError
        Looking up an unknown word in a model without n-gram buckets
        (``bucket=0``).

    Notes
    -----
    ``word in kv`` is true only for vocabulary words (unlike gensim, whose
    ``FastTextKeyedVectors.__contains__`` is always true); use
    :meth:`has_vector` to know whether a string gets a non-zero vector.
    ``kv[word]``, :meth:`get_vector`, :meth:`similarity` and
    :meth:`most_similar` accept any string.

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

    #: state checked on load (utils._schema): n-gram hashes index ``vectors_ngrams``' rows
    _state_schema = {
        "vectors_vocab": Array("f", ("V", "D"), finite=True),
        "vectors_ngrams": Array("f", ("bucket", "D"), finite=True),
        "bucket": Number(low=0),
        "min_n": Number(low=1),
        "max_n": Number(low="min_n"),
    }

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
        self.ngram_indptr, self.ngram_indices = _kernels().vocabulary_ngram_hashes(
            index_to_key, self.min_n, self.max_n, self.bucket
        )
        super().__init__(self._compose(), index_to_key, counts=counts)

    def _compose(self):
        n = self.vectors_vocab.shape[0]
        out = self.vectors_vocab.copy()
        if self.bucket == 0:
            return out
        m = _kernels().ngram_matrix(self.ngram_indptr, self.ngram_indices, n, self.bucket)
        out += m @ self.vectors_ngrams
        out /= (1.0 + np.diff(self.ngram_indptr)).astype(np.float32)[:, None]
        return out

    def __repr__(self):
        return (
            f"<FastTextKeyedVectors: {len(self)} words, {self.bucket} buckets, "
            f"n-grams {self.min_n}..{self.max_n}, vector_size={self.vector_size}>"
        )

    def has_vector(self, key) -> bool:
        """Whether ``key`` has a vector: a vocabulary word or one with a character n-gram.

        Parameters
        ----------
        key : str
            Any string.

        Returns
        -------
        bool
            ``True`` for a vocabulary word or a string with a character n-gram.
        """
        return bool(self.get_vectors([key])[1][0])

    def _oov_vector(self, key):
        rows = _kernels().ngram_hashes(key, self.min_n, self.max_n, self.bucket)
        if len(rows) == 0:
            return np.zeros(self.vector_size, dtype=np.float32)
        return self.vectors_ngrams[rows].mean(axis=0, dtype=np.float32)

    def get_vector(self, key, norm=False):
        """Vector of any string: composed for vocabulary words, from n-grams otherwise.

        Parameters
        ----------
        key : str
            Any string.
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
            Any strings.

        Returns
        -------
        vectors : numpy.ndarray of shape (len(words), vector_size), float32
            One row per string, as :meth:`get_vector` gives it.
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
            indptr, indices = _kernels().vocabulary_ngram_hashes(
                unknown, self.min_n, self.max_n, self.bucket
            )
            m = _kernels().ngram_matrix(indptr, indices, len(unknown), self.bucket)
            n = np.diff(indptr)
            vecs = (m @ self.vectors_ngrams) / np.maximum(n, 1).astype(np.float32)[:, None]
            out[~known] = vecs
            has[~known] = n > 0
        return out, has

    def most_similar(self, positive=(), negative=(), topn=10, restrict_vocab=None):
        """As :meth:`KeyedVectors.most_similar`; unknown words are composed from n-grams.

        Parameters
        ----------
        positive, negative : str or list of (str or array), default=()
            Words (any string: its n-grams give its vector) or vectors.
        topn, restrict_vocab : int or None
            As in :meth:`KeyedVectors.most_similar`.

        Returns
        -------
        result : list of (str, float)
            The ``topn`` nearest vocabulary words with their cosine similarity.
        """
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
        super().__setstate__(state)
        if not all(isinstance(k, str) for k in self.index_to_key):
            raise ValueError("FastTextKeyedVectors: stored index_to_key holds non-string keys.")
        self.ngram_indptr, self.ngram_indices = _kernels().vocabulary_ngram_hashes(
            self.index_to_key, self.min_n, self.max_n, self.bucket
        )

"""KeyedVectors: trained word vectors with their vocabulary, similarity queries and file formats.

A standalone object that cannot train (the design of gensim's
``gensim.models.keyedvectors.KeyedVectors``). Word-level estimators expose
theirs as ``wv_``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

__all__ = ["KeyedVectors"]


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
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.index_to_key)

    def __contains__(self, key) -> bool:
        return key in self.key_to_index

    def __repr__(self) -> str:
        return f"<KeyedVectors: {len(self)} words, vector_size={self.vector_size}>"

    def get_index(self, key) -> int:
        """Row index of ``key``; raises ``KeyError`` naming the word if absent."""
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
        """Vector of ``key``, unit-normalised when ``norm`` is true."""
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
        return state

    # ------------------------------------------------------------------ similarity
    def similarity(self, w1, w2) -> float:
        """Cosine similarity of two words (0.0 if either vector is zero)."""
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
        """Words nearest to a raw vector by cosine; see :meth:`most_similar`."""
        return self.most_similar(
            positive=[np.asarray(vector)], topn=topn, restrict_vocab=restrict_vocab
        )

    # ------------------------------------------------------------------ file formats
    def save_word2vec_format(self, path, binary=False, write_header=True):
        """Write the vectors in the word2vec text or binary format.

        Parameters
        ----------
        path : str or os.PathLike
        binary : bool, default=False
            Binary layout of the original word2vec tool (``word`` + space +
            ``vector_size`` little-endian float32, then ``\\n``); text otherwise.
        write_header : bool, default=True
            Write the ``n_words vector_size`` header line. ``False`` writes the
            GloVe text format (no header).
        """
        with open(path, "wb") as fh:
            if write_header:
                fh.write(f"{len(self)} {self.vector_size}\n".encode())
            if binary:
                vecs = self.vectors.astype("<f4")
                for word, vec in zip(self.index_to_key, vecs, strict=True):
                    fh.write(word.encode("utf-8") + b" " + vec.tobytes() + b"\n")
            else:
                for word, vec in zip(self.index_to_key, self.vectors, strict=True):
                    fh.write(
                        (word + " " + " ".join(repr(float(x)) for x in vec) + "\n").encode("utf-8")
                    )

    @classmethod
    def load_word2vec_format(cls, path, binary=False, no_header=False, limit=None):
        """Read vectors written by word2vec, GloVe, fastText (``.vec``) or gensim.

        Parameters
        ----------
        path : str or os.PathLike
        binary : bool, default=False
            The binary layout (see :meth:`save_word2vec_format`).
        no_header : bool, default=False
            The file has no ``n_words vector_size`` header (GloVe text files).
        limit : int or None, default=None
            Read only the first ``limit`` vectors.

        Returns
        -------
        kv : KeyedVectors

        Raises
        ------
        ValueError
            If the header or a line is malformed; the message names the file
            and the line number (text) or byte offset (binary).
        """
        path = os.fspath(path)
        if binary:
            return cls._load_binary(path, limit)
        words, rows = [], []
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines: Iterable = fh
            dim = None
            n_expected = None
            if not no_header:
                header = fh.readline().split()
                if len(header) != 2 or not all(h.isdigit() for h in header):
                    raise ValueError(
                        f"{path}: line 1 is not a 'n_words vector_size' header "
                        f"({' '.join(header)[:60]!r}); pass no_header=True for GloVe files."
                    )
                n_expected, dim = int(header[0]), int(header[1])
            for lineno, line in enumerate(lines, start=1 if no_header else 2):
                if limit is not None and len(words) >= limit:
                    break
                parts = line.rstrip("\n").rstrip(" ").split(" ")
                if len(parts) < 2:
                    if not line.strip():
                        continue
                    raise ValueError(f"{path}: line {lineno} has no vector.")
                if dim is None:
                    dim = len(parts) - 1
                if len(parts) != dim + 1:
                    raise ValueError(
                        f"{path}: line {lineno} has {len(parts) - 1} values, expected {dim}."
                    )
                try:
                    rows.append(np.array(parts[1:], dtype=np.float32))
                except ValueError:
                    raise ValueError(f"{path}: line {lineno} holds a non-numeric value.") from None
                words.append(parts[0])
            if n_expected is not None and limit is None and len(words) != n_expected:
                raise ValueError(
                    f"{path}: header announces {n_expected} vectors but the file holds {len(words)} "
                    "(truncated file?)."
                )
        if not words:
            raise ValueError(f"{path}: no vectors found.")
        return cls(np.vstack(rows), words)

    @classmethod
    def _load_binary(cls, path, limit):
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            header = fh.readline()
            parts = header.split()
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise ValueError(
                    f"{path}: byte offset 0: not a word2vec binary header ({header[:60]!r})."
                )
            n_words, dim = int(parts[0]), int(parts[1])
            if dim <= 0 or n_words <= 0 or n_words * dim * 4 > size:
                raise ValueError(
                    f"{path}: byte offset 0: header announces {n_words} x {dim} float32 values, more "
                    f"than the file's {size} bytes hold (corrupt or truncated file)."
                )
            if limit is not None:
                n_words = min(n_words, int(limit))
            vectors = np.empty((n_words, dim), dtype=np.float32)
            words = []
            nbytes = 4 * dim
            for i in range(n_words):
                offset = fh.tell()
                word = bytearray()
                while True:
                    ch = fh.read(1)
                    if ch == b"":
                        raise ValueError(
                            f"{path}: byte offset {offset}: file ends inside word {i}."
                        )
                    if ch == b" ":
                        break
                    if ch != b"\n":
                        word += ch
                    if len(word) > 10_000:
                        raise ValueError(
                            f"{path}: byte offset {offset}: word {i} is not terminated."
                        )
                buf = fh.read(nbytes)
                if len(buf) != nbytes:
                    raise ValueError(
                        f"{path}: byte offset {offset}: file ends inside the vector of word {i}."
                    )
                vectors[i] = np.frombuffer(buf, dtype="<f4")
                words.append(word.decode("utf-8", errors="replace"))
        return cls(vectors, words)

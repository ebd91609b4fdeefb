"""Character n-grams and their FNV-1a hashes, exactly as Facebook's fastText computes them.

fastText (``src/dictionary.cc``: ``Dictionary::hash`` and
``Dictionary::computeSubwords``) wraps a word in ``<`` and ``>``, takes its
UTF-8 byte string, and cuts n-grams of ``min_n``..``max_n`` *characters*
(a character being a UTF-8 lead byte and its continuation bytes). Each
n-gram is hashed with 32-bit FNV-1a in which every byte is first
sign-extended from ``int8`` to ``uint32`` (the C++ code hashes ``char``,
which is signed on x86): bytes >= 0x80 are XOR-ed as ``0xFFFFFF00 | b``.
This quirk matters for any non-ASCII word and is reproduced here so
that models trained by fastText and gensim load with identical vectors.

The pure-Python functions are the reference (and serve single out-of-
vocabulary lookups); :func:`ngram_hashes_csr` is the compiled version that
hashes a whole vocabulary at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._core import _FALSE, _TRUE

FNV_OFFSET = 2166136261
FNV_PRIME = 16777619


def ft_hash_bytes(data: bytes) -> int:
    """32-bit FNV-1a hash of ``data`` with fastText's signed-byte quirk.

    Parameters
    ----------
    data : bytes
        Usually a UTF-8 encoded character n-gram.

    Returns
    -------
    h : int
        In ``[0, 2**32)``; equal to ``Dictionary::hash`` of Facebook's fastText
        and to ``gensim.models.fasttext_inner.ft_hash_bytes``.

    References
    ----------
    Fowler, Noll & Vo, FNV hash (1991); Bojanowski et al. (2017), "Enriching
    Word Vectors with Subword Information", TACL 5.
    """
    h = FNV_OFFSET
    for b in data:
        if b >= 0x80:
            b |= 0xFFFFFF00
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
    return h


def char_ngrams_bytes(word: str, min_n: int, max_n: int) -> list:
    """Character n-grams of ``<word>`` as UTF-8 ``bytes``, in fastText's order.

    Parameters
    ----------
    word : str
    min_n, max_n : int
        Shortest and longest n-gram, in characters. A one-character n-gram
        made of the ``<`` or ``>`` marker alone is never produced.

    Returns
    -------
    ngrams : list of bytes
        For each start character, the n-grams of increasing length (as
        ``computeSubwords`` in fastText and gensim's ``compute_ngrams_bytes``).
        Includes ``<word>`` itself when it has at most ``max_n`` characters.
    """
    b = ("<" + word + ">").encode("utf-8")
    size = len(b)
    out = []
    for i in range(size):
        if b[i] & 0xC0 == 0x80:
            continue
        j, n = i, 1
        while j < size and n <= max_n:
            j += 1
            while j < size and b[j] & 0xC0 == 0x80:
                j += 1
            if n >= min_n and not (n == 1 and (i == 0 or j == size)):
                out.append(b[i:j])
            n += 1
    return out


def ngram_hashes(word: str, min_n: int, max_n: int, bucket: int) -> np.ndarray:
    """Bucket index of each character n-gram of ``word``.

    Returns
    -------
    rows : numpy.ndarray of shape (n_ngrams,), dtype int64
        ``ft_hash_bytes(ngram) % bucket`` for each n-gram of
        :func:`char_ngrams_bytes` (duplicates kept, as in fastText); empty if
        ``bucket == 0``.
    """
    if bucket <= 0 or max_n < min_n or max_n <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.array(
        [ft_hash_bytes(g) % bucket for g in char_ngrams_bytes(word, min_n, max_n)],
        dtype=np.int64,
    )


@njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _ngrams_of(data, start, stop, min_n, max_n, bucket, out, pos, write):
    """Count (``write=False``) or write the n-gram buckets of ``data[start:stop]``."""
    count = 0
    for i in range(start, stop):
        if data[i] & 0xC0 == 0x80:
            continue
        j = i
        n = 1
        h = np.int64(FNV_OFFSET)
        while j < stop and n <= max_n:
            # extend by one character: hash its bytes into the running hash
            b = np.int64(data[j])
            if b >= 0x80:
                b |= 0xFFFFFF00
            h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
            j += 1
            while j < stop and data[j] & 0xC0 == 0x80:
                b = np.int64(data[j]) | 0xFFFFFF00
                h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
                j += 1
            if n >= min_n and not (n == 1 and (i == start or j == stop)):
                if write:
                    out[pos + count] = h % bucket
                count += 1
            n += 1
    return count


def ngram_hashes_csr(data, offsets, min_n, max_n, bucket):
    """Bucket rows of every word's character n-grams, as a CSR structure.

    Parameters
    ----------
    data : numpy.ndarray of shape (n_bytes,), dtype uint8
        The UTF-8 bytes of ``"<" + word + ">"`` of every word, concatenated.
    offsets : numpy.ndarray of shape (n_words + 1,), dtype int64
        Word ``w`` is ``data[offsets[w]:offsets[w + 1]]``.
    min_n, max_n : int
        N-gram lengths in characters.
    bucket : int
        Number of hash buckets (> 0).

    Returns
    -------
    indptr : numpy.ndarray of shape (n_words + 1,), dtype int64
    indices : numpy.ndarray of shape (indptr[-1],), dtype int64
        ``indices[indptr[w]:indptr[w + 1]]`` are the bucket rows (in
        ``[0, bucket)``) of word ``w``'s n-grams, in :func:`char_ngrams_bytes`
        order. Hashing uses the running FNV-1a state, so each n-gram costs
        one multiply per byte added rather than per byte of the n-gram.
    """
    n_words = offsets.shape[0] - 1
    indptr = np.zeros(n_words + 1, dtype=np.int64)
    args = (data, offsets, np.int64(min_n), np.int64(max_n), np.int64(bucket), indptr)
    _ngram_rows(*args, np.zeros(0, dtype=np.int64), _FALSE)  # count each word's n-grams
    indices = np.empty(indptr[n_words], dtype=np.int64)
    _ngram_rows(*args, indices, _TRUE)  # then write them
    return indptr, indices


# the arrays are allocated in Python: compiled, np.zeros/np.empty brought numba's array
# constructors into a first FastText fit's compilation (about 0.2 s)
@njit(cache=True, nogil=True, _nrt=False, no_cfunc_wrapper=True)
def _ngram_rows(data, offsets, min_n, max_n, bucket, indptr, indices, write):
    """:func:`ngram_hashes_csr`'s two passes: ``write=False`` fills ``indptr[1:]`` with the
    running n-gram counts, ``write=True`` writes word ``w``'s bucket rows at
    ``indices[indptr[w]:]``. One :func:`_ngrams_of` for both (``write`` a run-time flag)."""
    for w in range(offsets.shape[0] - 1):
        count = _ngrams_of(
            data, offsets[w], offsets[w + 1], min_n, max_n, bucket, indices, indptr[w], write
        )
        if not write:
            indptr[w + 1] = indptr[w] + count


def vocabulary_ngram_hashes(words, min_n: int, max_n: int, bucket: int):
    """CSR of the n-gram bucket rows of each word of ``words`` (see :func:`ngram_hashes_csr`).

    Parameters
    ----------
    words : sequence of str
    min_n, max_n, bucket : int

    Returns
    -------
    indptr : numpy.ndarray of shape (n_words + 1,), dtype int64
    indices : numpy.ndarray, dtype int64
        Empty rows for every word when ``bucket == 0`` or ``max_n < min_n``.
    """
    n_words = len(words)
    if bucket <= 0 or max_n < min_n or max_n <= 0:
        return np.zeros(n_words + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    encoded = [("<" + w + ">").encode("utf-8") for w in words]
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=n_words)
    offsets = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return ngram_hashes_csr(data, offsets, int(min_n), int(max_n), int(bucket))


def ngram_matrix(indptr, indices, n_rows, bucket):
    """The n-gram CSR as a sparse count matrix: ``M @ vectors_ngrams`` sums each word's rows.

    Parameters
    ----------
    indptr : numpy.ndarray of shape (n_rows + 1,), int64
    indices : numpy.ndarray, int64
        From :func:`vocabulary_ngram_hashes`; a bucket hit twice counts twice.
    n_rows, bucket : int

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, bucket), float32
    """
    import scipy.sparse as sp

    data = np.ones(len(indices), dtype=np.float32)
    m = sp.csr_matrix((data, indices, indptr), shape=(n_rows, bucket))
    m.sum_duplicates()
    return m

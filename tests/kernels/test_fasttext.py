"""fastText's character n-grams and FNV-1a hashes (``skembed.kernels.fasttext``), by hand."""

import numpy as np

from skembed.kernels.fasttext import (
    FNV_OFFSET,
    FNV_PRIME,
    char_ngrams_bytes,
    ft_hash_bytes,
    ngram_hashes,
    ngram_hashes_csr,
)


def test_fnv1a_hash_by_hand_with_the_signed_byte_quirk():
    assert ft_hash_bytes(b"") == FNV_OFFSET == 2166136261
    assert ft_hash_bytes(b"a") == ((2166136261 ^ 0x61) * FNV_PRIME) % 2**32
    # a byte >= 0x80 is sign-extended (fastText hashes int8_t): 0xC3 -> 0xFFFFFFC3
    assert ft_hash_bytes(b"\xc3") == ((2166136261 ^ 0xFFFFFFC3) * FNV_PRIME) % 2**32


def test_char_ngrams_of_a_short_word():
    # "<ab>": 3- and 4-grams in fastText's order (by start, then length)
    assert char_ngrams_bytes("ab", 3, 4) == [b"<ab", b"<ab>", b"ab>"]
    # one-character n-grams of the markers alone are never produced
    assert char_ngrams_bytes("a", 1, 1) == [b"a"]
    # multi-byte characters count as one character
    assert char_ngrams_bytes("é", 3, 3) == ["<é>".encode()]


def test_csr_equals_the_python_hashes_of_each_word():
    words, bucket = ["ab", "été", "x"], 1000
    enc = [("<" + w + ">").encode() for w in words]
    data = np.frombuffer(b"".join(enc), dtype=np.uint8)
    offsets = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
    indptr, indices = ngram_hashes_csr(data, offsets, 3, 5, bucket)
    for w, word in enumerate(words):
        expected = ngram_hashes(word, 3, 5, bucket)
        np.testing.assert_array_equal(indices[indptr[w] : indptr[w + 1]], expected)
        assert (
            expected == [ft_hash_bytes(g) % bucket for g in char_ngrams_bytes(word, 3, 5)]
        ).all()
    assert ngram_hashes("ab", 3, 5, 0).size == 0  # no buckets: no n-gram rows


def test_the_ngram_loop_compiles_once_for_counting_and_writing():
    """``ngram_hashes_csr`` counts, then writes, with one ``_ngrams_of``: called with the
    literals ``0``/``False`` and ``True`` it was compiled twice (0.2-0.4 s of a first
    FastText fit with an empty numba cache). An uncached copy of its compiled loop
    (``_ngram_rows``) is typed here, so the calls resolve ``_ngrams_of`` even when the
    original was loaded from numba's disk cache (which registers no signature of its callees)."""
    from numba import njit, types

    from skembed.kernels.fasttext import _ngram_rows, _ngrams_of

    words = ["<ab>", "<été>"]
    data = np.frombuffer("".join(words).encode(), dtype=np.uint8)
    offsets = np.cumsum([0] + [len(w.encode()) for w in words]).astype(np.int64)
    indptr = np.zeros(3, dtype=np.int64)
    rows = njit(_ngram_rows.py_func)
    args = (data, offsets, np.int64(3), np.int64(4), np.int64(1000), indptr)
    rows(*args, np.zeros(0, dtype=np.int64), np.bool_(False))
    indices = np.zeros(indptr[2], dtype=np.int64)
    rows(*args, indices, np.bool_(True))
    assert list(indices[indptr[0] : indptr[1]]) == list(ngram_hashes("ab", 3, 4, 1000))
    np.testing.assert_array_equal(indices, ngram_hashes_csr(data, offsets, 3, 4, 1000)[1])
    assert len(_ngrams_of.signatures) == 1
    assert not any(isinstance(a, types.Literal) for a in _ngrams_of.signatures[0])

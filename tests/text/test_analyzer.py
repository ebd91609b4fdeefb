import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from skembed.text._analyzer import (
    build_analyzer,
    build_vocabulary,
    count_words,
    encode,
    vocabulary_order,
)


def test_analyzer_equals_sklearn_on_strings():
    doc = "The Cat, the cat's HAT -- a 42 b2 naïve café"
    assert build_analyzer()(doc) == CountVectorizer().build_analyzer()(doc)
    assert build_analyzer(lowercase=False)(doc) == CountVectorizer(
        lowercase=False
    ).build_analyzer()(doc)
    pattern = r"(?u)\b\w+\b"
    assert build_analyzer(token_pattern=pattern)(doc) == CountVectorizer(
        token_pattern=pattern
    ).build_analyzer()(doc)


def test_analyzer_pretokenized_and_custom_tokenizer():
    assert build_analyzer()(("The", "Cat")) == ["The", "Cat"]
    assert build_analyzer(tokenizer=str.split)("A b,c") == ["a", "b,c"]
    with pytest.raises(ValueError, match="capturing groups"):
        build_analyzer(token_pattern=r"(a)(b)")


def test_build_vocabulary_order_and_min_count():
    counts = count_words([["b", "a", "b", "c"], ["a", "b", "d"]])
    words, freq = build_vocabulary(counts, min_count=2)
    assert words == ["b", "a"]
    np.testing.assert_array_equal(freq, [3, 2])
    words, _ = build_vocabulary(counts, min_count=1, max_vocab_size=3)
    assert words == ["b", "a", "c"]  # ties keep first-seen order
    with pytest.raises(ValueError, match="empty after min_count=5.*lower min_count"):
        build_vocabulary(counts, min_count=5)
    with pytest.raises(ValueError, match="no tokens"):
        build_vocabulary(count_words([[], []]))


def test_vocabulary_order_is_build_vocabulary_on_first_seen_counts():
    # provisional ids 0..5 in first-seen order; ties (3, 3 and 1, 1) keep that order
    counts = [1, 3, 7, 3, 1, 0]
    np.testing.assert_array_equal(vocabulary_order(counts), [2, 1, 3, 0, 4])
    np.testing.assert_array_equal(vocabulary_order(counts, min_count=3), [2, 1, 3])
    np.testing.assert_array_equal(vocabulary_order(counts, max_vocab_size=2), [2, 1])
    words = {w: c for w, c in zip("uvwxyz", counts, strict=True)}
    assert build_vocabulary(words)[0] == ["w", "v", "x", "u", "y"]
    with pytest.raises(ValueError, match="empty after min_count=8: .* occurs 7 time"):
        vocabulary_order(counts, min_count=8)
    with pytest.raises(ValueError, match="no tokens"):
        vocabulary_order(np.zeros(0, np.int64))


def test_word2vec_vocabulary_releases_the_provisional_words():
    from skembed.text.word2vec._training import EncodedCorpus
    from skembed.text.word2vec._word2vec import Word2VecTransformer

    corpus = EncodedCorpus([["b", "a", "b", "c"], ["a", "b", "d", "a"]], build_analyzer())
    index_to_key, counts, remap = Word2VecTransformer(min_count=2)._vocabulary(corpus)
    assert index_to_key == ["b", "a"]  # 3 and 3: first seen first
    np.testing.assert_array_equal(counts, [3, 3])
    np.testing.assert_array_equal(remap, [0, 1, -1, -1])  # provisional b, a, c, d
    assert corpus.keys is None  # training needs only the ids and the remap


def test_encoded_corpus_ids_pieces_and_counts(monkeypatch):
    from skembed.text.word2vec import _training as training

    monkeypatch.setattr(training, "MAX_DOCUMENT_LENGTH", 3)
    docs = [["b", "a", "b", "c"], [], ["a", "b", "d", "a", "e", "b", "c"]]
    corpus = training.EncodedCorpus(docs, build_analyzer(), chunk_tokens=4)
    # provisional ids in first-seen order: b 0, a 1, c 2, d 3, e 4; pieces of at most 3
    assert corpus.keys == ["b", "a", "c", "d", "e"]
    np.testing.assert_array_equal(corpus.counts, [4, 3, 2, 1, 1])
    assert (corpus.n_tokens, corpus.n_documents, corpus.max_length) == (11, 3, 3)
    chunks = list(corpus.chunks(with_documents=True))
    assert len(chunks) == 2  # flushed after a document once 4 ids or more are waiting
    ids = np.concatenate([c[0] for c in chunks])
    lengths = np.concatenate([np.diff(c[1]) for c in chunks])
    doc_of = np.concatenate([c[2] for c in chunks])
    np.testing.assert_array_equal(ids, [0, 1, 0, 2, 1, 0, 3, 1, 4, 0, 2])
    np.testing.assert_array_equal(lengths, [3, 1, 0, 3, 3, 1])  # the empty document too
    np.testing.assert_array_equal(doc_of, [0, 0, 1, 2, 2, 2])

    fixed = training.EncodedCorpus(docs, build_analyzer(), key_to_index={"a": 0, "b": 1})
    assert fixed.keys is None and fixed.counts is None and fixed.n_tokens == 11
    ((ids, offsets),) = fixed.chunks()
    np.testing.assert_array_equal(ids, [1, 0, 1, 0, 1, 0, 1])  # c, d, e dropped
    np.testing.assert_array_equal(offsets, [0, 3, 3, 6, 7])


def test_encode_drops_unknown_and_keeps_offsets():
    ids, offsets, n_tokens = encode([["a", "x", "b"], [], ["b"]], {"a": 0, "b": 1})
    np.testing.assert_array_equal(ids, [0, 1, 1])
    np.testing.assert_array_equal(offsets, [0, 2, 2, 3])
    assert ids.dtype == np.int32 and n_tokens == 4

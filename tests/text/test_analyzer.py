import gzip

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from skembed.text._analyzer import build_analyzer, build_vocabulary, count_words, encode
from skembed.text.corpus import LineCorpus


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


def test_encode_drops_unknown_and_keeps_offsets():
    ids, offsets, n_tokens = encode([["a", "x", "b"], [], ["b"]], {"a": 0, "b": 1})
    np.testing.assert_array_equal(ids, [0, 1, 1])
    np.testing.assert_array_equal(offsets, [0, 2, 2, 3])
    assert ids.dtype == np.int32 and n_tokens == 4


def test_line_corpus_is_reiterable_and_reads_gzip(tmp_path):
    path = tmp_path / "c.txt.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("a b c d e\nf g\n")
    corpus = LineCorpus(str(path), max_document_length=2)
    assert list(corpus) == [["a", "b"], ["c", "d"], ["e"], ["f", "g"]]
    assert list(corpus) == list(corpus)
    assert list(LineCorpus(str(path), limit=1)) == [["a", "b", "c", "d", "e"]]
    with pytest.raises(FileNotFoundError):
        LineCorpus(str(tmp_path / "missing.txt"))

"""LineCorpus: a re-iterable corpus read from a (gzipped) text file."""

import gzip

import pytest

from skembed.text.corpus import LineCorpus


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

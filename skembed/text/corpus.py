"""Corpora that stream from disk, for training on text larger than memory.

Pass them to ``fit`` of the estimators that accept a re-iterable corpus
(Word2Vec, FastText, GloVe): each epoch (or the one encoding pass) iterates
the object again instead of holding the documents in memory.
"""

from __future__ import annotations

import gzip
import io
import os

__all__ = ["LineCorpus"]


class LineCorpus:
    """A re-iterable corpus streamed from a text file, one document per line.

    Like gensim's ``LineSentence``: each iteration re-reads the file and
    yields each line split on whitespace, so memory does not grow with the
    corpus. Documents are pre-tokenized (the estimator's ``lowercase`` and
    ``token_pattern`` do not apply); lowercase and tokenize the file
    beforehand if needed.

    Parameters
    ----------
    path : str or os.PathLike
        Text file in UTF-8; a ``.gz`` file is decompressed on the fly.
    max_document_length : int or None, default=None
        Split longer lines into pieces of at most this many tokens
        (gensim uses 10,000).
    limit : int or None, default=None
        Read at most this many lines.

    Raises
    ------
    FileNotFoundError
        At construction, if ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(path, "w").write("the cat sat\\nthe dog ran\\n")
    >>> [doc for doc in LineCorpus(path)]
    [['the', 'cat', 'sat'], ['the', 'dog', 'ran']]
    """

    def __init__(self, path, max_document_length=None, limit=None):
        if not os.path.exists(path):
            raise FileNotFoundError(f"LineCorpus: no such file: {path!r}")
        self.path = os.fspath(path)
        self.max_document_length = max_document_length
        self.limit = limit

    def _open(self):
        if self.path.endswith(".gz"):
            return io.TextIOWrapper(gzip.open(self.path, "rb"), encoding="utf-8", errors="replace")
        return open(self.path, encoding="utf-8", errors="replace")

    def __iter__(self):
        m = self.max_document_length
        with self._open() as fh:
            for n, line in enumerate(fh):
                if self.limit is not None and n >= self.limit:
                    break
                toks = line.split()
                if m is None or len(toks) <= m:
                    yield toks
                else:
                    for start in range(0, len(toks), m):
                        yield toks[start : start + m]

    def __repr__(self):
        return f"LineCorpus({self.path!r})"

"""Corpora that stream from disk, for training on text larger than memory.

Pass them to ``fit`` of the estimators that accept a re-iterable corpus
(Word2Vec, FastText, GloVe): each epoch (or the one encoding pass) iterates
the object again instead of holding the documents in memory.
"""

from __future__ import annotations

import gzip
import io
import os

__all__ = ["DaskCorpus", "LineCorpus"]


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


class DaskCorpus:
    """A re-iterable corpus over the partitions of a ``dask.bag`` or dask Series of documents.

    Each iteration computes the partitions one after another and yields their
    documents, so at most one partition is in this process's memory at a
    time: the memory of a ``fit`` stays flat in the corpus size, as with
    :class:`LineCorpus`. ``fit`` of the estimators that stream a corpus
    (Word2Vec, FastText, Doc2Vec, GloVe) wraps a dask collection in this class
    itself. Documents are ``str`` (tokenized by the estimator's analyzer) or
    lists of tokens. The partitions are computed on the current
    ``distributed.Client`` if there is one, else in this process (the
    synchronous scheduler), so the corpus may live on distributed storage
    (``dask.bag.read_text("s3://.../*.txt")``) while training stays on one machine.

    Parameters
    ----------
    collection : dask.bag.Bag or dask.dataframe.Series
        One document per element / row.

    Raises
    ------
    TypeError
        If ``collection`` is not a dask bag or Series (a dask DataFrame:
        select its text column).

    Examples
    --------
    >>> import dask.bag as db
    >>> corpus = DaskCorpus(db.from_sequence(["the cat sat", "the dog ran"], npartitions=2))
    >>> list(corpus), corpus.npartitions
    (['the cat sat', 'the dog ran'], 2)
    """

    def __init__(self, collection):
        if not hasattr(collection, "__dask_graph__") or not hasattr(collection, "to_delayed"):
            raise TypeError(
                f"DaskCorpus takes a dask.bag or dask Series of documents, got "
                f"{type(collection).__name__}."
            )
        if type(collection).__name__ == "DataFrame":
            raise TypeError(
                "DaskCorpus takes a dask.bag or a dask Series of documents, got a dask DataFrame: "
                "select its text column (ddf['text'])."
            )
        self.collection = collection
        self.npartitions = int(collection.npartitions)

    @staticmethod
    def _scheduler():
        try:
            from distributed import default_client

            default_client()
            return None  # the current client
        except (ImportError, ValueError):
            return "sync"

    def __iter__(self):
        scheduler = self._scheduler()
        for part in self.collection.to_delayed():
            docs = part.compute(scheduler=scheduler)
            yield from (docs.tolist() if hasattr(docs, "tolist") else docs)
            del docs

    def __repr__(self):
        return f"DaskCorpus({type(self.collection).__name__}, npartitions={self.npartitions})"

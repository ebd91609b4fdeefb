"""Tokenizing, vocabulary building and corpus encoding shared by the text estimators.

Strings are tokenized with scikit-learn's analyzer machinery
(``CountVectorizer.build_analyzer``); lists/tuples of tokens are taken as
pre-tokenized. A corpus is encoded once into a flat ``int32`` array of word
ids with document offsets (a CSR-like layout) that the kernels consume.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"


def effective_window(window, longest):
    """``window`` clipped to the longest document (at least 1).

    A context word is never further from its centre than its document is long,
    so a larger window adds no pair; it only sizes buffers: ``window=10**9``
    asked the co-occurrence counts for 969 GiB and the word2vec engines for
    ``2 * window`` context slots. Every windowed estimator (Word2Vec, FastText,
    Doc2Vec, GloVe, PPMI) clips its window here.

    Parameters
    ----------
    window : int
        The ``window`` parameter, at least 1.
    longest : int
        Tokens in the longest document (or piece) of the corpus.

    Returns
    -------
    window : int
        ``max(1, min(window, longest))``.

    Examples
    --------
    >>> effective_window(10**9, 12), effective_window(5, 12), effective_window(5, 0)
    (12, 5, 1)
    """
    return int(max(1, min(int(window), int(longest))))


class _Preprocessor:
    """Lowercase ``str`` documents; leave pre-tokenized ones untouched (picklable)."""

    def __init__(self, lowercase=True):
        self.lowercase = lowercase

    def __call__(self, doc):
        if self.lowercase and isinstance(doc, str):
            return doc.lower()
        return doc


class _Tokenizer:
    """Tokenize ``str`` documents like scikit-learn; pass token sequences through (picklable)."""

    def __init__(self, token_pattern=DEFAULT_TOKEN_PATTERN, tokenizer=None):
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self._findall = None
        if tokenizer is None:
            pattern = re.compile(token_pattern)
            if pattern.groups > 1:
                raise ValueError(
                    f"token_pattern={token_pattern!r} has {pattern.groups} capturing groups; "
                    "at most one is allowed (as in scikit-learn)."
                )
            self._findall = pattern.findall

    # the bound ``findall`` is rebuilt on load, so the state holds only plain values
    # (skops can then persist pipelines of text embedders without pickle)
    def __getstate__(self):
        return {"token_pattern": self.token_pattern, "tokenizer": self.tokenizer}

    def __setstate__(self, state):
        ok = (
            isinstance(state, dict)
            and isinstance(state.get("token_pattern"), str)
            and (state.get("tokenizer") is None or callable(state["tokenizer"]))
        )
        if not ok:  # a pickle or skops file is not trusted
            raise ValueError("The stored tokenizer settings are malformed (damaged file).")
        self.__init__(state["token_pattern"], state["tokenizer"])

    def __call__(self, doc):
        if not isinstance(doc, str):
            return list(doc)
        if self.tokenizer is not None:
            return self.tokenizer(doc)
        return self._findall(doc)


def vectorizer_kwargs(lowercase=True, token_pattern=DEFAULT_TOKEN_PATTERN, tokenizer=None):
    """Keyword arguments that make a scikit-learn vectorizer accept both kinds of document.

    On ``str`` documents the resulting ``CountVectorizer``/``TfidfVectorizer``
    tokenizes exactly as one built with ``lowercase``, ``token_pattern`` and
    ``tokenizer``; lists/tuples of tokens are taken as pre-tokenized (not
    lowercased).

    Returns
    -------
    kwargs : dict
        ``preprocessor``, ``tokenizer``, ``token_pattern=None``, ``lowercase=False``.
    """
    return {
        "preprocessor": _Preprocessor(lowercase),
        "tokenizer": _Tokenizer(token_pattern, tokenizer),
        "token_pattern": None,
        "lowercase": False,
    }


def build_analyzer(lowercase=True, token_pattern=DEFAULT_TOKEN_PATTERN, tokenizer=None):
    """Build the document → tokens function shared by all text estimators.

    Parameters
    ----------
    lowercase : bool, default=True
        Lowercase ``str`` documents before tokenizing.
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
        Regular expression of a token (scikit-learn's default, which drops
        one-character tokens). Ignored when ``tokenizer`` is given.
    tokenizer : callable or None, default=None
        ``str -> list of str``; overrides ``token_pattern``.

    Returns
    -------
    analyzer : callable
        ``document -> list of str``: scikit-learn's ``CountVectorizer``
        analyzer for ``str`` documents (unigrams, no stop words), the tokens
        themselves for a list/tuple of tokens.

    Raises
    ------
    ValueError
        If ``token_pattern`` has more than one capturing group.
    """
    return CountVectorizer(
        **vectorizer_kwargs(lowercase, token_pattern, tokenizer)
    ).build_analyzer()


def iter_tokens(documents: Iterable, analyzer: Callable) -> Iterable[list]:
    """Yield the token list of each document (see :func:`build_analyzer`)."""
    for doc in documents:
        yield analyzer(doc)


def tokenize(documents: Iterable, analyzer: Callable) -> list:
    """Token lists of ``documents`` (see :func:`iter_tokens`) as a list."""
    return list(iter_tokens(documents, analyzer))


def count_words(token_lists: Iterable) -> Counter:
    """Word counts over an iterable of token lists."""
    counts: Counter = Counter()
    for toks in token_lists:
        counts.update(toks)
    return counts


def vocabulary_order(counts, min_count: int = 1, max_vocab_size=None):
    """Indices of the words kept in the vocabulary, most frequent first.

    The array form of :func:`build_vocabulary`, for counts indexed by provisional word
    ids in first-seen order: no dictionary of every distinct word is built (on the
    11.4M-token debdocs corpus, 428k distinct words against 78k kept, two such
    dictionaries added ~40 MB to Word2Vec's peak memory).

    Parameters
    ----------
    counts : array-like of shape (n_distinct,), int
        Corpus count of each distinct word, in first-seen order.
    min_count : int, default=1
        Words seen fewer times are dropped.
    max_vocab_size : int or None, default=None
        Keep at most this many words (the most frequent) after ``min_count``.

    Returns
    -------
    order : numpy.ndarray of shape (n_words,), int64
        Index into ``counts`` of each vocabulary word: decreasing count, ties in
        first-seen order (as gensim).

    Raises
    ------
    ValueError
        If no word is left (empty corpus, or every word rarer than ``min_count``);
        the message suggests a lower ``min_count``.

    Examples
    --------
    >>> vocabulary_order([2, 5, 1, 5], min_count=2).tolist()
    [1, 3, 0]
    """
    counts = np.asarray(counts, dtype=np.int64)
    if counts.size == 0:
        raise ValueError(
            "The corpus has no tokens: every document is empty after tokenization. "
            "Check the documents and the token_pattern/tokenizer parameters."
        )
    kept = np.flatnonzero(counts >= min_count)
    if kept.size == 0:
        raise ValueError(
            f"The vocabulary is empty after min_count={min_count}: the most frequent word occurs "
            f"{int(counts.max())} time(s). Use a lower min_count or a larger corpus."
        )
    order = kept[np.argsort(-counts[kept], kind="stable")]  # stable: ties keep first-seen order
    if max_vocab_size is not None:
        order = order[: int(max_vocab_size)]
    return order


def build_vocabulary(counts: Counter, min_count: int = 1, max_vocab_size=None):
    """Select and order the vocabulary from word counts (by :func:`vocabulary_order`).

    Parameters
    ----------
    counts : collections.Counter
        Word → corpus count, in first-seen order.
    min_count, max_vocab_size
        As in :func:`vocabulary_order`.

    Returns
    -------
    index_to_key : list of str
        Words sorted by decreasing count, ties by first appearance (as gensim).
    word_counts : numpy.ndarray of shape (n_words,), dtype int64
        Count of each word of ``index_to_key``.

    Raises
    ------
    ValueError
        If no word is left (empty corpus, or every word rarer than ``min_count``);
        the message suggests a lower ``min_count``.
    """
    words = list(counts)
    values = np.fromiter(counts.values(), dtype=np.int64, count=len(words))
    order = vocabulary_order(values, min_count, max_vocab_size)
    return [words[i] for i in order], values[order]


def encode(token_lists: Iterable, key_to_index: dict):
    """Encode token lists as a flat array of word ids, dropping unknown words.

    Parameters
    ----------
    token_lists : iterable of list of str
    key_to_index : dict of str to int

    Returns
    -------
    ids : numpy.ndarray of shape (n_known_tokens,), dtype int32
        Word ids in corpus order.
    offsets : numpy.ndarray of shape (n_documents + 1,), dtype int64
        Document ``d`` is ``ids[offsets[d]:offsets[d + 1]]``.
    n_tokens : int
        Number of tokens before unknown words were dropped.
    """
    get = key_to_index.get
    buf = array("i")
    lengths = array("q")
    n_tokens = 0
    for toks in token_lists:
        n_tokens += len(toks)
        row = [i for i in map(get, toks) if i is not None]
        lengths.append(len(row))
        buf.extend(row)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=offsets[1:])
    ids = np.frombuffer(buf, dtype=np.int32).copy() if len(buf) else np.zeros(0, np.int32)
    return ids, offsets, n_tokens

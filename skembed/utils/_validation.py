"""Checks of text input shared by every text estimator."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np


# --------------------------------------------------------------------------- missing values
def is_missing(value) -> bool:
    """Whether one value is missing: None, a float NaN, ``pd.NA`` or ``pd.NaT``.

    The one definition of a missing value in skembed (documents, labels, table cells);
    :func:`missing_mask` applies it to an array. Does not import pandas.

    Examples
    --------
    >>> [is_missing(v) for v in (None, float("nan"), "", 0, "nan")]
    [True, True, False, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    return type(value).__name__ in ("NAType", "NaTType")


def missing_mask(values):
    """Elementwise :func:`is_missing` of an array-like, a pandas Series or column.

    Parameters
    ----------
    values : array-like of shape (n,) or pandas.Series
        Any dtype; numeric arrays are checked for NaN without a Python loop.

    Returns
    -------
    mask : numpy.ndarray of shape (n,), bool

    Examples
    --------
    >>> missing_mask([1.0, float("nan")]).tolist(), missing_mask(["a", None]).tolist()
    ([False, True], [False, True])
    """
    array = np.asarray(values)
    if array.dtype.kind in "fc":
        return np.isnan(array)
    if array.dtype.kind == "M":
        return np.isnat(array)
    if array.dtype.kind != "O":
        return np.zeros(array.shape, dtype=bool)
    return np.fromiter((is_missing(v) for v in array.ravel()), bool, array.size).reshape(
        array.shape
    )


_is_missing = is_missing  # the text-input check's name


# --------------------------------------------------------------------------- text input


def check_documents(X, *, handle_missing="error", allow_iterable=False, name="X"):
    """Validate a collection of text documents.

    Parameters
    ----------
    X : list, tuple, numpy.ndarray or pandas.Series of documents
        Each document is a ``str`` (tokenized later by the estimator's
        analyzer) or a list/tuple of ``str`` tokens (taken as pre-tokenized).
        A 1-column DataFrame or ``(n, 1)`` array is accepted and flattened.
    handle_missing : {"error", "empty"}, default="error"
        What to do with a ``None``/NaN document: raise, or treat it as an
        empty document.
    allow_iterable : bool, default=False
        Accept any re-iterable corpus object (such as
        :class:`skembed.text.LineCorpus`) without materialising it; a one-shot
        iterator or generator is still refused. A ``dask.bag`` or dask Series is
        then returned as is, for the caller to stream
        (:class:`skembed.text.corpus.DaskCorpus`, one partition in memory at a time).
    name : str, default="X"
        Name used in error messages.

    Returns
    -------
    documents : list or re-iterable
        A list of documents (``str`` or tuple of ``str``) with missing
        documents replaced by ``""``; or the re-iterable object itself when
        ``allow_iterable`` and ``X`` is not a sequence.

    Raises
    ------
    TypeError
        If ``X`` is a single string, a one-shot iterator, not iterable, a dask
        collection that cannot be streamed (any, without ``allow_iterable``; a
        dask DataFrame always), or a document is neither a string nor a sequence of strings (the message
        names the row).
    ValueError
        If ``X`` is empty, or a document is missing and
        ``handle_missing="error"`` (the message names the row and the fix).
    """
    _refuse_single_string(X, name)
    if hasattr(X, "__dask_graph__"):  # a dask collection: never materialise it silently
        return _streamable_dask(X, allow_iterable, name)
    if _is_corpus_object(X):
        _refuse_one_shot(X, name)
        if allow_iterable:
            return X
    X = _as_sequence(X, name)
    if len(X) == 0:
        raise ValueError(f"{name} is empty: at least one document is required.")
    return [_checked_document(doc, i, name, handle_missing) for i, doc in enumerate(X)]


def _refuse_single_string(X, name):
    if isinstance(X, (str, bytes)):
        raise TypeError(
            f"Iterable over raw text documents expected, string object received for {name}. "
            "Wrap a single document in a list: [document]."
        )


def _streamable_dask(X, allow_iterable, name):
    """``X`` itself, a dask bag or Series the caller may stream; any other dask input raises."""
    if allow_iterable and type(X).__name__ in ("Bag", "Series"):
        return X  # the text base wraps it in DaskCorpus (streamed one partition at a time)
    raise TypeError(
        f"{name} is a dask {type(X).__name__}, which this estimator cannot stream. "
        "Supported inputs: a list, numpy array or pandas Series of documents; "
        "fit of Word2Vec, FastText, Doc2Vec and GloVe also takes a re-iterable corpus "
        "(skembed.LineCorpus, or a dask.bag / dask Series of documents). To embed a dask "
        "collection with a fitted estimator, use skembed.dask.transform(estimator, collection)."
    )


def _is_corpus_object(X):
    """Whether ``X`` is none of the sequences taken as they are (pandas, numpy, list, tuple)."""
    return not (hasattr(X, "iloc") or isinstance(X, (np.ndarray, list, tuple)))


def _refuse_one_shot(X, name):
    """Raise unless the corpus object ``X`` can be iterated more than once."""
    if not isinstance(X, Iterable):
        raise TypeError(
            f"{name} must be an iterable of documents (list, numpy array, pandas Series), "
            f"got {type(X).__name__}."
        )
    if isinstance(X, Iterator):
        raise TypeError(
            f"{name} is a one-shot iterator ({type(X).__name__}); training iterates the corpus "
            "several times. Pass a list, or a re-iterable corpus such as "
            "skembed.text.LineCorpus(path)."
        )


def _as_sequence(X, name):
    """The documents of ``X`` as a list (a list or tuple is returned as it is)."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # DataFrame
        X = _single_column(X, name)
    if hasattr(X, "iloc"):  # Series
        return X.tolist()
    if isinstance(X, np.ndarray):
        return _flat_array(X, name).tolist()
    if isinstance(X, (list, tuple)):
        return X
    return list(X)


def _single_column(frame, name):
    if frame.shape[1] != 1:
        raise TypeError(
            f"{name} is a DataFrame with {frame.shape[1]} columns; text estimators take one "
            "column of documents. Select it (df['text']) or use a ColumnTransformer."
        )
    return frame.iloc[:, 0]


def _flat_array(X, name):
    if X.ndim == 2 and X.shape[1] == 1:
        X = X[:, 0]
    if X.ndim != 1:
        raise TypeError(
            f"{name} must be a 1-D collection of documents, got an array of shape {X.shape}."
        )
    return X


def _checked_document(doc, i, name, handle_missing):
    """Document ``i``: a string, a tuple of string tokens, or ``""`` for a missing one."""
    if isinstance(doc, str):
        return doc
    if isinstance(doc, (list, tuple, np.ndarray)):
        return _checked_tokens(doc, i, name)
    if _is_missing(doc):
        if handle_missing == "empty":
            return ""
        raise ValueError(
            f"Document {i} of {name} is missing ({doc!r}). Drop or fill missing documents, "
            "or set handle_missing='empty' to treat them as empty documents."
        )
    raise TypeError(
        f"Document {i} of {name} has type {type(doc).__name__} ({doc!r}); each document "
        "must be a string or a list of string tokens."
    )


def _checked_tokens(doc, i, name):
    toks = tuple(doc.tolist() if isinstance(doc, np.ndarray) else doc)
    for tok in toks:
        if not isinstance(tok, str):
            raise TypeError(
                f"Document {i} of {name} is pre-tokenized but contains a token of type "
                f"{type(tok).__name__} ({tok!r}); tokens must be strings."
            )
    return toks

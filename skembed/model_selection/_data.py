"""Checks of the data a comparison is run on."""

from __future__ import annotations

import numbers

import numpy as np

from ..utils._validation import missing_mask
from ._task import looks_numeric


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _take(X, idx):
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    if hasattr(X, "shape"):
        return X[idx]
    return [X[i] for i in idx]


def usable_rows(X, y, *, drop_empty_text=False):
    """Which rows can be compared: a label, and (optionally) non-empty text.

    Parameters
    ----------
    X : list of str, array-like or pandas.DataFrame, n_rows long
        Documents or a table.
    y : array-like of shape (n_rows,)
        Labels or target values; ``None``/NaN marks a missing label.
    drop_empty_text : bool, default=False
        Also drop documents that are missing or only whitespace (``X`` a list of str).

    Returns
    -------
    keep : numpy.ndarray of bool, shape (n_rows,)
        True for the rows to compare.
    dropped : dict of str to int
        ``{"missing label": n, "empty text": m}`` (rows counted once, under
        the first reason that applies).

    Examples
    --------
    >>> from skembed.model_selection import usable_rows
    >>> keep, dropped = usable_rows(["a b", "  ", "c"], ["x", "y", None], drop_empty_text=True)
    >>> keep.tolist(), dropped
    ([True, False, False], {'missing label': 1, 'empty text': 1})
    """
    no_label = missing_mask(np.asarray(y, dtype=object))
    keep = ~no_label
    dropped = {"missing label": int(no_label.sum())}
    if drop_empty_text:
        empty = np.array([not (isinstance(d, str) and d.strip()) for d in X], dtype=bool) & keep
        keep &= ~empty
        dropped["empty text"] = int(empty.sum())
    return keep, dropped


def check_classification_data(y, cv):
    """Check that ``y`` can be cross-validated with ``cv`` stratified folds.

    Parameters
    ----------
    y : array-like of shape (n_rows,)
        Labels (no missing values).
    cv : int or cross-validation splitter
        Only an int is checked.

    Raises
    ------
    ValueError
        With one sentence naming the problem and the fix: no rows, a single
        class, ``cv < 2``, or a class with fewer rows than ``cv`` (suggesting
        ``task='regression'`` when the labels look like many distinct numbers).

    Examples
    --------
    >>> from skembed.model_selection import check_classification_data
    >>> check_classification_data(["a", "a", "b"], cv=2)
    Traceback (most recent call last):
    ...
    ValueError: Class 'b' has only 1 row: cv=2 needs at least 2 rows in every class; add rows of that class.
    """
    y = np.asarray(y, dtype=object)
    if len(y) == 0:
        raise ValueError(
            "There are no rows to compare: give labelled data with at least 2 classes."
        )
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(
                f"cv={cv}: cross-validation needs at least 2 folds: use cv >= 2 (5 is usual)."
            )
    elif not hasattr(cv, "split"):
        raise ValueError(f"cv must be an int >= 2 or a cross-validation splitter, got {cv!r}.")
    classes, counts = np.unique(y.astype(str), return_counts=True)
    if len(classes) < 2:
        raise ValueError(
            f"All {len(y)} rows have the label {str(classes[0])!r}: a classifier needs at least 2 classes; "
            "check the label column."
        )
    smallest = int(np.argmin(counts))
    name, n = str(classes[smallest]), int(counts[smallest])
    if not isinstance(cv, numbers.Integral):
        return
    if n < cv:
        fix = (
            f"use cv={n} or less, or add rows of that class" if n >= 2 else "add rows of that class"
        )
        if looks_numeric(y):
            fix = (
                f"the label looks like a number to predict ({len(classes)} distinct values): "
                "use task='regression'"
            )
        raise ValueError(
            f"Class {name!r} has only {n} row{'s' * (n != 1)}: cv={cv} needs at least {cv} "
            f"rows in every class; {fix}."
        )


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_finite(frame, where):
    """Refuse a table with an infinite number, naming the column and the row.

    One ``inf`` cell made every embedder fail every fold, and ``compare``
    ended with an all-NaN leaderboard and exit status 0.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read; its index numbers the data rows from 0.
    where : str
        The table's name in the message (e.g. the CSV's path).

    Raises
    ------
    ValueError
        ``inf`` or ``-inf`` (or a number too large for float64, e.g. ``1e999``)
        in a numeric column, or a number beyond float32's range (``1e308``).

    Examples
    --------
    >>> import pandas as pd
    >>> from skembed.model_selection._data import check_finite
    >>> check_finite(pd.DataFrame({"x": [1.0, float("inf")]}), "t.csv")
    Traceback (most recent call last):
    ...
    ValueError: t.csv: column 'x' holds inf in data row 2 (line 3 counting the header): replace it with a finite number or leave the cell empty (a missing value).
    """
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind != "f":
            continue
        values = column.to_numpy()
        bad = np.flatnonzero(np.isinf(values) | (np.abs(values) > _FLOAT32_MAX))
        if bad.size:
            row = (
                int(frame.index[bad[0]])
                if np.issubdtype(frame.index.dtype, np.integer)
                else int(bad[0])
            )
            more = f" (and {bad.size - 1} more rows)" if bad.size > 1 else ""
            value = column.iloc[bad[0]]
            why = (
                "replace it with a finite number"
                if np.isinf(value)
                else "it is beyond float32's range (±3.4e38), in which the embedders compute: "
                "rescale the column or replace it"
            )
            raise ValueError(
                f"{where}: column {str(name)!r} holds {value} in data row {row + 1} "
                f"(line {row + 2} counting the header){more}: {why} or "
                "leave the cell empty (a missing value)."
            )

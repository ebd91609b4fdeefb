"""Interaction logs: (user, item[, weight][, time]) rows → ids, a user-by-item matrix, baskets.

The one check of an interaction log (:func:`check_log`) and of what ``transform`` is asked
for (:func:`check_query`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..utils._ids import as_table, check_columns, check_ids, check_weights, id_column
from ..utils._validation import missing_mask

#: the columns of a log, in the order of an array's columns
COLUMNS = ("user", "item", "weight", "time")


class Log(NamedTuple):
    """A checked log: the id of each row's user and item, its weight and time (or None)."""

    users: list
    items: list
    weights: np.ndarray
    times: np.ndarray | None


class Query(NamedTuple):
    """What ``transform`` was asked for: ids (``log`` None), or a log (``ids`` None)."""

    ids: list | None
    log: Log | None


def _columns(X):
    """``{name: column}`` of a log given as a DataFrame or an (n, 2..4) array."""
    if hasattr(X, "columns"):
        check_columns(X, ("user", "item"), ("weight", "time"), "An interaction DataFrame")
        return {name: X[name].to_numpy() for name in COLUMNS if name in X.columns}
    array = as_table(X)
    if array.ndim != 2 or array.shape[1] not in (2, 3, 4):
        raise ValueError(
            "An interaction log is an array of shape (n, 2), (n, 3) or (n, 4) with columns "
            f"(user, item[, weight][, time]), or a DataFrame with those names; got shape "
            f"{array.shape}."
        )
    return {name: array[:, k] for k, name in enumerate(COLUMNS[: array.shape[1]])}


def _weights(column, n):
    return check_weights(column, n, what="row", fix="Drop those rows or fill them (e.g. with 1).")


def check_log(X):
    """Check an interaction log.

    Parameters
    ----------
    X : array-like of shape (n, 2), (n, 3) or (n, 4), or DataFrame
        Rows ``(user, item[, weight][, time])``: int or str ids (one type per column),
        weights finite and > 0 (default 1), times any sortable numbers or datetimes (a
        DataFrame: columns ``user``, ``item`` and optionally ``weight``, ``time``).

    Returns
    -------
    log : Log

    Raises
    ------
    ValueError
        An empty log, a missing id, a NaN, infinite, zero or negative weight, a missing time.
    TypeError
        Ids of mixed types.

    Examples
    --------
    >>> check_log([["u1", "a", 2.0], ["u2", "b", 1.0]]).weights.tolist()
    [2.0, 1.0]
    """
    columns = _columns(X)
    n = len(columns["user"])
    if n == 0:
        raise ValueError("The interaction log is empty; it needs at least one row.")
    users, _ = check_ids(columns["user"], "The user column")
    items, _ = check_ids(columns["item"], "The item column")
    times = columns.get("time")
    if times is not None:
        times = np.asarray(times)
        if times.dtype == object:
            times = np.asarray(times.tolist())
        missing = missing_mask(times)
        if missing.any():
            raise ValueError(
                f"The time column has {int(missing.sum())} missing values (first: row "
                f"{int(np.flatnonzero(missing)[0])}); fill or drop those rows."
            )
    return Log(users, items, _weights(columns.get("weight"), n), times)


class Matrix(NamedTuple):
    """A log as a user-by-item CSR matrix of summed weights, over sorted user and item ids."""

    users: np.ndarray
    items: np.ndarray
    matrix: sp.csr_matrix
    user_rows: np.ndarray
    item_columns: np.ndarray


def log_matrix(log):
    """Index a log: duplicate (user, item) rows are summed into one entry.

    Raises
    ------
    ValueError
        Fewer than two distinct items.
    """
    users, user_rows = np.unique(np.array(log.users), return_inverse=True)
    items, item_columns = np.unique(np.array(log.items), return_inverse=True)
    if len(items) < 2:
        raise ValueError(
            f"The interaction log has {len(items)} distinct item; item vectors need at least "
            "two items to tell apart."
        )
    matrix = sp.csr_matrix((log.weights, (user_rows, item_columns)), shape=(len(users), len(items)))
    matrix.sum_duplicates()
    matrix.sort_indices()
    return Matrix(users, items, matrix, user_rows, item_columns)


def baskets(log, index):
    """Each user's item columns, by time when the log has times (else in row order).

    Returns
    -------
    baskets : list of numpy.ndarray of int64, one per user of ``index.users``
    """
    order = np.lexsort((log.times,) + (index.user_rows,)) if log.times is not None else None
    if order is None:
        order = np.argsort(index.user_rows, kind="stable")
    sorted_rows = index.user_rows[order]
    bounds = np.searchsorted(sorted_rows, np.arange(len(index.users) + 1))
    columns = index.item_columns[order]
    return [columns[bounds[u] : bounds[u + 1]] for u in range(len(index.users))]


def check_query(X):
    """Ids (1-D or one column) or a log (two or more columns) given to ``transform``."""
    if hasattr(X, "columns") and {"user", "item"} <= set(X.columns):
        return Query(None, check_log(X))
    ids = id_column(X)
    return Query(ids, None) if ids is not None else Query(None, check_log(as_table(X)))

"""Ids of things that are not words: graph nodes, users, items.

:func:`check_ids` is the one check of an id column (Node2VecTransformer's nodes,
InteractionEmbedder's users and items): ints or strs, one type, none missing.
"""

from __future__ import annotations

import numpy as np

from ._validation import missing_mask


def check_ids(values, name):
    """A column of ids as a list of Python ints or strs, all of one type.

    Parameters
    ----------
    values : array-like of shape (n,)
        Ints, strs, or floats with integer values (a numeric table's id column; they become
        ints).
    name : str
        What the column is, for the error messages ("The source column").

    Returns
    -------
    ids : list of int or list of str
    kinds : set of type
        ``{int}`` or ``{str}`` (empty for an empty column).

    Raises
    ------
    ValueError
        A missing id (None, NaN), or a float id that is not an integer; the message names the
        row.
    TypeError
        Ids of mixed types (int and str: 1 and "1" would be two things) or of another type.

    Examples
    --------
    >>> check_ids(np.array([3.0, 1.0]), "X")
    ([3, 1], {<class 'int'>})
    """
    values = np.asarray(values)
    missing = missing_mask(values)
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} has a missing (None or NaN) id in row {row}; drop that row.")
    ids = [v.item() if isinstance(v, np.generic) else v for v in values.tolist()]
    kinds = {type(v) for v in ids}
    if float in kinds and kinds <= {int, float}:
        if not all(float(v).is_integer() for v in ids):
            raise ValueError(f"{name} has non-integer float ids; use ints or strs as ids.")
        ids, kinds = [int(v) for v in ids], {int}
    if kinds - {int, str}:
        bad = sorted(k.__name__ for k in kinds - {int, str})
        raise TypeError(f"{name} holds ids of type {bad}; ids are ints or strs.")
    if len(kinds) > 1:
        raise TypeError(
            f"{name} mixes ids of types int and str (as 1 and '1', which would be two "
            "different ids); convert all ids to one type, e.g. str."
        )
    return ids, kinds


def check_weights(values, n, *, what, fix):
    """A weight column as float64, every weight finite and > 0 (ones when ``values`` is None).

    Parameters
    ----------
    values : array-like of shape (n,) or None
    n : int
        Rows, for the default weights.
    what : str
        What a row is, for the message ("edge", "row").
    fix : str
        The advice that ends the message.

    Returns
    -------
    weights : numpy.ndarray of shape (n,), float64

    Raises
    ------
    ValueError
        A weight that is not a number, NaN, infinite, zero or negative; the message names the
        first such row and how many there are.

    Examples
    --------
    >>> check_weights(None, 2, what="edge", fix="").tolist()
    [1.0, 1.0]
    """
    if values is None:
        return np.ones(n)
    try:
        weights = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"Weights must be numbers: {error}.") from None
    bad = ~np.isfinite(weights) | (weights <= 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"Weights must be finite and > 0; {what} {row} has weight {float(weights[row])} "
            f"({int(bad.sum())} such {what}s). {fix}"
        )
    return weights


def check_columns(frame, required, optional, what):
    """Refuse a DataFrame that lacks a required column, naming what it has and what it lacks.

    Parameters
    ----------
    frame : pandas.DataFrame
    required, optional : tuple of str
        Column names it must have, and may have.
    what : str
        What the frame is ("An edge-list DataFrame").

    Raises
    ------
    ValueError
        A required column is missing.
    """
    missing = set(required) - set(frame.columns)
    if missing:
        needs = " and ".join(repr(c) for c in required)
        may = ", ".join(repr(c) for c in optional)
        raise ValueError(
            f"{what} needs columns {needs} (and optionally {may}); it has "
            f"{list(frame.columns)}, missing {sorted(missing)}."
        )


def as_table(X):
    """A table of ids (and numbers) as a numpy array; lists become object arrays, so each id
    keeps its Python type (``[[1, "a"]]`` is not turned into strings); a DataFrame becomes its
    values.

    Examples
    --------
    >>> as_table([[1, "a"]]).dtype, as_table(np.zeros((2, 1))).shape
    (dtype('O'), (2, 1))
    """
    if hasattr(X, "columns"):
        X = X.to_numpy()
    return np.asarray(X) if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)


def id_column(X):
    """The ids of a 1-D array or a one-column table, checked (:func:`check_ids`); None when
    ``X`` has more columns (a table of something else: edges, a log).

    Examples
    --------
    >>> id_column([[3], [1]]), id_column([[3, 1]])
    ([3, 1], None)
    """
    array = as_table(X)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    return check_ids(array, "X")[0] if array.ndim == 1 else None

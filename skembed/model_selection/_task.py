"""The task of a target: classification or regression, inferred and checked."""

from __future__ import annotations

import numbers

import numpy as np

#: integer targets with more distinct values than this are regression targets
MAX_CLASSES = 20


def _as_numbers(y):
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def infer_task(y):
    """``"regression"`` or ``"classification"``, from the target's values.

    Floating-point values that are not all whole numbers, or whole numbers
    with more than :data:`MAX_CLASSES` distinct values, are a regression
    target; anything else (strings, booleans, few integers) is a class label.

    Parameters
    ----------
    y : array-like of shape (n_rows,)
        The target.

    Returns
    -------
    {"regression", "classification"}
        The task ``compare_embedders(task="auto")`` runs.

    Examples
    --------
    >>> from skembed.model_selection import infer_task
    >>> infer_task([3.5, 4.25, 1.0]), infer_task([1, 2, 2, 1]), infer_task(["a", "b"])
    ('regression', 'classification', 'classification')
    """
    values = np.asarray(y)
    if values.dtype.kind in "bOUS":
        return "classification"
    numbers_ = _as_numbers(values)
    if numbers_ is None:
        return "classification"
    whole = np.all(np.mod(numbers_, 1) == 0)
    if not whole or len(np.unique(numbers_)) > MAX_CLASSES:
        return "regression"
    return "classification"


def check_regression_data(y, cv):
    """Check that ``y`` is a numeric target ``cv`` folds can be made of.

    Parameters
    ----------
    y : array-like of shape (n_rows,)
        The target: numbers, or strings that parse as numbers.
    cv : int or cross-validation generator
        The folds to make; an integer is checked against the number of rows.

    Returns
    -------
    numpy.ndarray of shape (n_rows,), float64
        The target as numbers.

    Raises
    ------
    ValueError
        With one sentence naming the problem and the fix: a non-numeric
        target, one value only, or fewer rows than ``cv``.
    """
    values = _as_numbers(y)
    if values is None:
        bad = next(v for v in y if _as_numbers([v]) is None)
        raise ValueError(
            f"The target has a non-numeric value {bad!r}: regression needs numbers; "
            "use task='classification' for class labels."
        )
    if len(values) == 0:
        raise ValueError("There are no rows to compare: give rows with a numeric target.")
    if not np.isfinite(values).all():
        raise ValueError("The target has infinite values: remove those rows.")
    if np.ptp(values) == 0:
        raise ValueError(
            f"All {len(values)} rows have the target value {values[0]:g}: there is nothing "
            "to predict; check the label column."
        )
    if isinstance(cv, numbers.Integral) and len(values) < cv:
        raise ValueError(
            f"{len(values)} rows cannot make cv={cv} folds: use cv={len(values)} or less."
        )
    return values


def looks_numeric(y):
    """Whether class labels look like numbers of a regression target (many distinct numbers)."""
    values = _as_numbers(y)
    if values is None:
        try:
            values = np.asarray([float(v) for v in y])
        except (TypeError, ValueError):
            return False
    return len(np.unique(values)) > MAX_CLASSES

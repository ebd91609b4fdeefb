"""How a comparison splits its rows: shuffled, grouped, or forward-chaining in time."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..utils._validation import missing_mask

#: the kinds of split: shuffled (stratified for classes), grouped, forward-chaining in time
SPLITS = ("shuffle", "group", "time")


@dataclass(frozen=True)
class SplitSpec:
    """How to cut a comparison's rows into folds (:func:`make_folds`).

    Parameters
    ----------
    kind : {"shuffle", "group", "time"}
        Shuffled folds (stratified for classes); whole groups per fold
        (``GroupKFold`` / ``StratifiedGroupKFold``); or forward-chaining folds
        that train on the past and score the next block of time
        (``TimeSeriesSplit``).
    column : str or None
        The table column the groups or times come from.
    values : ndarray of shape (n_rows,) or None
        The group labels, or the times as float64 (numbers, or nanoseconds
        since 1970 for dates), aligned with the rows.
    """

    kind: str = "shuffle"
    column: str | None = None
    values: np.ndarray | None = None

    def take(self, idx):
        """The same split for the rows ``idx``."""
        values = None if self.values is None else self.values[idx]
        return SplitSpec(self.kind, self.column, values)


class SplitColumn(NamedTuple):
    """A column taken out of a table to split by: the features, its spec, the rows it keeps."""

    frame: object
    spec: SplitSpec
    keep: np.ndarray
    note: str | None


def split_column(frame, *, time_column=None, group_column=None):
    """Take the time or group column out of ``frame``: the features, the split, the rows kept.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (features and the split column).
    time_column, group_column : str or None
        At most one of them: the column giving each row's time (numbers,
        datetimes or strings that parse as dates) or group.

    Returns
    -------
    split : SplitColumn
        ``frame`` without the column (it orders or groups the folds and is no
        feature), its :class:`SplitSpec`, ``keep`` (bool mask: rows with a
        value; rows without one are dropped) and ``note`` (a sentence on the
        dropped rows, or ``None``).

    Raises
    ------
    ValueError
        Both columns named; a column not in the table; a time column whose
        values are neither numbers nor dates (naming a value found).
    """
    if time_column is not None and group_column is not None:
        raise ValueError(
            "time_column and group_column are both given: give one (forward-chaining folds "
            "already keep the rows of one time together)."
        )
    column = time_column if time_column is not None else group_column
    if column is None:
        return SplitColumn(frame, SplitSpec(), np.ones(len(frame), dtype=bool), None)
    if not hasattr(frame, "columns") or column not in frame.columns:
        where = list(frame.columns) if hasattr(frame, "columns") else "no named columns"
        raise ValueError(f"Split column {column!r} is not in the table; its columns: {where}.")
    series = frame[column]
    missing = missing_mask(series)
    if time_column is not None:
        values, kind = _times(series, missing, column), "time"
    else:
        values, kind = series.astype(str).to_numpy(dtype=object), "group"
    note = None
    if missing.any():
        note = (
            f"dropped {int(missing.sum())} rows with no {column!r}: a row without a "
            f"{'time' if kind == 'time' else 'group'} has no fold"
        )
    spec = SplitSpec(kind, column, values)
    return SplitColumn(frame.drop(columns=[column]), spec, ~missing, note)


def _times(series, missing, column):
    """``series`` as float64 times: numbers as they are, dates as nanoseconds since 1970."""
    import pandas as pd

    present = series[~missing]
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return _nanoseconds(series)
    numbers_ = pd.to_numeric(present, errors="coerce")
    if pd.api.types.is_bool_dtype(series.dtype) or not numbers_.notna().all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas warns that it guesses each format
            dates = pd.to_datetime(present.astype(str), errors="coerce", format="mixed")
        if pd.api.types.is_bool_dtype(series.dtype) or not dates.notna().all():
            bad = present[dates.isna()].iloc[0] if dates.isna().any() else present.iloc[0]
            raise ValueError(
                f"time column {column!r} holds neither numbers nor dates: found {bad!r} "
                f"({series.dtype}); name a column of numbers or dates, such as '2024-03-01'."
            )
        values = np.full(len(series), np.nan)
        values[~missing] = _nanoseconds(dates)
        return values
    values = np.full(len(series), np.nan)
    values[~missing] = numbers_.to_numpy(dtype=np.float64)
    return values


def _nanoseconds(dates):
    import pandas as pd

    return pd.to_datetime(dates).to_numpy("datetime64[ns]").astype(np.int64).astype(np.float64)


def make_folds(spec, cv, task, y, random_state=0):
    """The ``(train, test)`` row indices of each fold, and the folds in words.

    Parameters
    ----------
    spec : SplitSpec
        How to split.
    cv : int or cross-validation splitter
        The number of folds (a splitter is used as it is, with the groups
        of a grouped split).
    task : {"classification", "regression"}
        Shuffled and grouped folds are stratified for classes.
    y : ndarray of shape (n_rows,)
        Labels or targets.
    random_state : int, default=0
        Seeds the shuffle.

    Returns
    -------
    folds : list of (ndarray, ndarray)
        Training and test row indices of each fold.
    description : str
        The folds in words, for the header and the report.

    Raises
    ------
    ValueError
        Fewer groups than folds; fewer distinct times than ``cv + 1``; a
        training fold with a single class.

    Examples
    --------
    >>> import numpy as np
    >>> spec = SplitSpec("time", "day", np.array([3.0, 1.0, 2.0, 2.0, 4.0, 5.0]))
    >>> folds, words = make_folds(spec, 2, "regression", np.zeros(6))
    >>> [(train.tolist(), test.tolist()) for train, test in folds]
    [([1], [0, 2, 3]), ([0, 1, 2, 3], [4, 5])]
    >>> words
    "2 forward-chaining folds by 'day' (train on the past, score the next block)"
    """
    if spec.kind == "time":
        folds = _forward_folds(spec, cv)
        words = f"{len(folds)} forward-chaining folds by {spec.column!r} "
        words += "(train on the past, score the next block)"
    elif spec.kind == "group":
        folds = _group_folds(spec, cv, task, y, random_state)
        words = f"{len(folds)}-fold CV grouped by {spec.column!r}"
    else:
        folds = _shuffled_folds(cv, task, y, random_state)
        words = f"{len(folds)}-fold CV" if isinstance(cv, numbers.Integral) else repr(cv)
    if task == "classification":
        _check_fold_classes(folds, y, spec)
    return folds, words


def _shuffled_folds(cv, task, y, random_state):
    from sklearn.model_selection import KFold, StratifiedKFold

    if isinstance(cv, numbers.Integral):
        split = StratifiedKFold if task == "classification" else KFold
        cv = split(cv, shuffle=True, random_state=random_state)
    return list(cv.split(np.zeros((len(y), 1)), y))


def _group_folds(spec, cv, task, y, random_state):
    from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

    n_groups = len(set(spec.values.tolist()))
    if isinstance(cv, numbers.Integral):
        if n_groups < cv:
            raise ValueError(
                f"group column {spec.column!r} has {n_groups} groups, fewer than the {cv} folds: "
                f"use cv={max(n_groups, 2)} or fewer folds, or another group column."
            )
        if task == "classification":
            cv = StratifiedGroupKFold(cv, shuffle=True, random_state=random_state)
        else:
            cv = GroupKFold(cv)
    return list(cv.split(np.zeros((len(y), 1)), y, groups=spec.values))


def _forward_folds(spec, cv):
    """Forward-chaining folds with every tie of times on one side of each cut.

    The cuts are those of ``TimeSeriesSplit(cv)`` over the rows sorted by
    time, each moved to the nearer end of the run of rows that share its
    time: a fold trains on every row strictly earlier than its test block,
    so no row is scored with a row of the same time in its training fold
    (two cuts that meet become one, and the folds are fewer, with a warning).
    """
    from sklearn.model_selection import TimeSeriesSplit

    if not isinstance(cv, numbers.Integral):
        raise ValueError("A time split takes cv as a number of folds, not a splitter.")
    times = spec.values
    order = np.argsort(times, kind="stable")
    ordered = times[order]
    n_distinct = len(np.unique(ordered))
    if n_distinct < cv + 1:
        raise ValueError(
            f"time column {spec.column!r} has {n_distinct} distinct times: {cv} forward-chaining "
            f"folds need at least {cv + 1} (one block to train on first); use "
            f"cv={max(n_distinct - 1, 2)} or fewer."
        )
    n = len(ordered)
    starts = [test[0] for _, test in TimeSeriesSplit(cv).split(ordered)]
    cuts = sorted({c for c in (_nearest_boundary(ordered, s) for s in starts) if 0 < c < n})
    cuts.append(n)
    folds = [
        (np.sort(order[:a]), np.sort(order[a:b])) for a, b in zip(cuts, cuts[1:], strict=False)
    ]
    if len(folds) < cv:
        warnings.warn(
            f"time column {spec.column!r}: {len(folds)} forward-chaining folds, not {cv}: "
            "rows of one time stay together, and cuts between the times met.",
            UserWarning,
            stacklevel=5,
        )
    return folds


def _nearest_boundary(ordered, s):
    """The change of time nearest to position ``s`` of the sorted times (``s`` if one is there)."""
    left = int(np.searchsorted(ordered, ordered[s], side="left"))
    right = int(np.searchsorted(ordered, ordered[s], side="right"))
    if left == s or (left > 0 and s - left <= right - s):
        return left
    return right


def _check_fold_classes(folds, y, spec):
    """Refuse a training fold with one class; warn when a test fold has classes it lacks."""
    how = {"time": f"by {spec.column!r}", "group": f"by {spec.column!r}"}.get(spec.kind, "")
    for k, (train, test) in enumerate(folds):
        seen = set(np.asarray(y)[train].tolist())
        if len(seen) < 2:
            raise ValueError(
                f"Fold {k}'s training rows ({how or 'shuffled'}) hold a single class "
                f"({next(iter(seen))!r}): no classifier can be fitted; use fewer folds."
            )
        unseen = sorted(set(np.asarray(y)[test].tolist()) - seen)
        if unseen and spec.kind != "shuffle":
            warnings.warn(
                f"Fold {k} scores classes its training rows lack ({', '.join(map(str, unseen))}): "
                f"the split {how} keeps them apart; its score counts them as errors.",
                UserWarning,
                stacklevel=4,
            )

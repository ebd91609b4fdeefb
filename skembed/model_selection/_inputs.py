"""The data of ``skembed compare``: a checked CSV, or an embedded data set with its defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..datasets import LOANS_RATE_LEAKS
from ._data import _take, check_finite, usable_rows


@dataclass(frozen=True)
class Dataset:
    """An embedded data set of ``skembed compare --dataset``.

    Parameters
    ----------
    loader : str
        Function of :mod:`skembed.datasets`.
    label : str or None
        The label column (``None``: the loader returns ``(texts, labels)``).
    title : str
        Its name in the leaderboard's title.
    limit : int or None
        Default ``--limit``: the full data would take over ~10 minutes with
        every default embedder on 2 cores.
    drop : tuple of str
        Columns that give the label away, dropped.
    """

    loader: str
    label: str | None
    title: str
    limit: int | None = None
    drop: tuple = field(default_factory=tuple)


#: ``--dataset`` names
DATASETS = {
    "bbc": Dataset("load_bbc_news", None, "BBC News"),
    "penguins": Dataset("load_penguins", "species", "Palmer penguins"),
    "tweets": Dataset("load_tweet_sentiment", None, "CrowdFlower tweets", limit=4000),
    "loans": Dataset(
        "load_loans",
        "interest_rate",
        "Lending Club loans",
        limit=None,
        drop=LOANS_RATE_LEAKS,
    ),
    "movies": Dataset(
        "load_movies",
        "rating",
        "IMDb movies",
        limit=5000,
        drop=tuple(f"r{i}" for i in range(1, 11)),
    ),
}


#: rows per chunk when ``--limit`` reads a CSV in two passes (about 10 MB of a 10-column table)
CHUNK_ROWS = 100_000


def _header(path):
    """The CSV's header fields as written (no BOM, no ``.1`` renaming); ``[]`` for an empty file.

    pandas reads it (``header=None``): it strips a UTF-8 byte-order mark, which
    :mod:`csv` kept on the first name (so a repeated label column went unseen), and
    it has no field size limit (:mod:`csv` refused a name over 131,072 characters).
    """
    import pandas as pd

    try:
        first = pd.read_csv(
            path, header=None, nrows=1, dtype=str, keep_default_na=False, encoding="utf-8"
        )
    except pd.errors.EmptyDataError:
        return []
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not a readable CSV file ({exc}).") from None
    return [str(v) for v in first.iloc[0].tolist()] if len(first) else []


def read_csv_checked(path, rows=None, text_columns=()):
    """Read a CSV for ``compare``, refusing what would silently go wrong.

    Parameters
    ----------
    path : str
        The CSV file (UTF-8, a byte-order mark allowed).
    rows : array-like of int or None, default=None
        Read only these data rows (0-based, in increasing order), by chunks of
        :data:`CHUNK_ROWS`; the frame keeps them as its index. None: every row.
    text_columns : sequence of str, default=()
        Columns read as strings whatever they look like: a column of codes
        such as ``00123`` keeps its zeros.

    Returns
    -------
    frame : pandas.DataFrame

    Raises
    ------
    ValueError
        No such file, an empty file, a header without rows, an unreadable
        file, a header naming a column twice (pandas would rename the copy
        ``name.1``, and a repeated label column would leak into the features),
        or an infinite number (:func:`check_finite`).
    """
    import pandas as pd

    if not os.path.exists(path):
        raise ValueError(f"--csv: no such file: {path}")
    header = _header(path)
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise ValueError(
            f"{path} names the column{'s' * (len(repeated) > 1)} {', '.join(map(repr, repeated))} "
            "more than once in its header: rename the copies so that every column has its own name."
        )
    as_text = {name: str for name in text_columns or () if name in header}
    try:
        if rows is None:
            frame = pd.read_csv(path, dtype=as_text)
        else:
            rows = np.asarray(rows, dtype=np.int64)
            parts = [
                chunk.loc[chunk.index.intersection(rows)]
                for chunk in pd.read_csv(path, chunksize=CHUNK_ROWS, dtype=as_text)
            ]
            frame = pd.concat(parts) if parts else pd.read_csv(path, nrows=0)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"{path} is empty: give a CSV with a header row and labelled rows."
        ) from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not a readable CSV file ({exc}).") from None
    if len(frame) == 0:
        raise ValueError(f"{path} has a header but no rows: add labelled rows below the header.")
    check_finite(frame, path)
    return frame


def _csv_rows(path, label, text, limit, random_state):
    """The data rows of a CSV that ``limit`` keeps, read by chunks of two columns; None: all.

    Returns ``(rows, dropped)``: ``dropped`` counts the unusable rows of the whole file.

    The same rows as reading everything and then :func:`subsample`: the usable
    rows (a label; non-empty text when ``text`` is the only feature) are counted,
    and ``limit`` of them drawn with the same generator.
    """
    import pandas as pd

    if limit is None or not isinstance(label, str):
        return None, None
    usecols = [label] + ([text] if text is not None else [])
    usable, n, dropped = [], 0, {}
    try:
        for chunk in pd.read_csv(path, usecols=usecols, chunksize=CHUNK_ROWS):
            docs = chunk[text].tolist() if text is not None else [""] * len(chunk)
            keep, gone = usable_rows(docs, chunk[label], drop_empty_text=text is not None)
            dropped = {why: dropped.get(why, 0) + k for why, k in gone.items()}
            usable.append(np.flatnonzero(keep) + n)
            n += len(chunk)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, ValueError):
        return None, None  # the full read says what is wrong
    usable = np.concatenate(usable) if usable else np.zeros(0, np.int64)
    if limit >= len(usable):
        return None, None
    return usable[_subset(len(usable), limit, random_state)], dropped


def _column(frame, option, name, where):
    if name not in frame.columns:
        raise ValueError(
            f"{option} {name!r} is not a column of {where}; its columns are {list(frame.columns)}."
        )
    return frame[name]


def _subset(n, limit, random_state):
    return np.sort(np.random.RandomState(random_state).choice(n, size=limit, replace=False))


def subsample(X, y, limit, random_state):
    """A random subset of ``limit`` rows, in their original order (all rows if ``limit`` is None)."""
    if limit is None or limit >= len(y):
        return X, y
    idx = _subset(len(y), limit, random_state)
    X = _take(X, idx)
    return (X.reset_index(drop=True) if hasattr(X, "iloc") else X), np.asarray(y)[idx]


def load_compare_data(
    *, csv_path=None, dataset=None, label=None, text_columns=(), limit="default", random_state=0
):
    """The rows ``skembed compare`` runs on.

    A CSV (``csv_path`` with ``label``) or an embedded data set of
    :data:`DATASETS` (default ``"bbc"``). A table whose only feature is one
    text column becomes a list of documents (rows with empty text are dropped).

    Parameters
    ----------
    csv_path : str or None, default=None
        A CSV file to read (with ``label``); None: ``dataset``.
    dataset : str or None, default=None
        A name of :data:`DATASETS`; None with no ``csv_path``: ``"bbc"``.
    label : str or None, default=None
        The target column of the CSV (or of a table data set, which has its own default).
    text_columns : sequence of str, default=()
        Columns to treat as text whatever their detected role.
    limit : int, None or "default", default="default"
        Most rows kept (a random subset in the original order); ``"default"`` is the data
        set's own limit (e.g. 4,000 tweets), None keeps every row.
    random_state : int, default=0
        Seeds the row subset.

    Returns
    -------
    X : list of str or pandas.DataFrame
        Documents, or the table's feature columns.
    y : numpy.ndarray
        Labels or numeric targets (rows with a missing label dropped).
    data_name : str
        The data's name in the report (the CSV's file name or the data set's title).
    dropped : dict of str to int
        Rows dropped, by reason.
    notes : list of str
        What the data set's defaults did (the row limit, the leaking columns dropped).

    Raises
    ------
    ValueError
        Bad CSV (:func:`read_csv_checked`), an unknown column, no usable rows.
    """
    if csv_path is not None:
        loaded = _load_csv(csv_path, label, text_columns, limit, random_state)
    else:
        loaded = _load_dataset(dataset, label)
    X, labels, data_name, notes = loaded.X, loaded.labels, loaded.data_name, loaded.notes
    _check_text_columns(X, labels, text_columns, data_name)
    only_text = (
        hasattr(X, "columns")
        and list(X.columns) == list(text_columns or ())[:1]
        and len(X.columns) == 1
    )
    if only_text:
        X = X.iloc[:, 0].tolist()
    is_text = not hasattr(X, "columns")
    keep, dropped = usable_rows(X, labels, drop_empty_text=is_text)
    if loaded.dropped is not None:
        dropped = loaded.dropped  # counted over the whole file before the limit's read
    idx = np.flatnonzero(keep)
    X = _take(X, idx)
    X = X.reset_index(drop=True) if hasattr(X, "iloc") else X
    y = np.asarray(labels, dtype=object)[idx]
    if len(y) == 0:
        raise ValueError(
            f"No usable rows in {data_name}: every row lacks a label"
            + (
                " or text; check --label-column and --text-column."
                if is_text
                else "; check --label-column."
            )
        )
    y = _numeric_if_possible(y)
    if limit == "default":
        limit = loaded.spec.limit if loaded.spec is not None else None
        if limit is not None and limit < len(y):
            notes.append(
                f"--limit {limit} by default (the full {len(y)} rows take over ~10 minutes on 2 cores; "
                "--limit N to change)"
            )
    X, y = subsample(X, y, limit, random_state)
    return X, y, data_name, dropped, notes


class _Loaded(NamedTuple):
    """The rows as read, before the unusable ones are dropped."""

    #: the feature columns (a table), or the documents
    X: object
    #: the label column
    labels: object
    #: the data's name in the report
    data_name: str
    #: the embedded data set, or None for a CSV
    spec: Dataset | None
    #: rows dropped by reason, counted over a whole CSV before a limit's read; None: count them
    dropped: dict | None
    #: what the data set's defaults did
    notes: list


def _load_csv(csv_path, label, text_columns, limit, random_state):
    """Read the CSV: its label column and its features."""
    if not label:
        raise ValueError("--csv needs --label-column (and --text-column for text data).")
    header = _header(csv_path) if os.path.exists(csv_path) else []
    text = [c for c in header if c != label]
    text = text[0] if len(text) == 1 and text == list(text_columns or ())[:1] else None
    rows, first_dropped = _csv_rows(
        csv_path, label, text, limit if limit != "default" else None, random_state
    )
    frame = read_csv_checked(csv_path, rows, text_columns)
    labels = _column(frame, "--label-column", label, csv_path)
    X = frame.drop(columns=[label])
    return _Loaded(X, labels, os.path.basename(csv_path), None, first_dropped, [])


def _load_dataset(dataset, label):
    """Load an embedded data set, without the columns that give its label away."""
    from .. import datasets

    spec = DATASETS[dataset or "bbc"]
    out = getattr(datasets, spec.loader)()
    if spec.label is None:
        X, labels = out
        return _Loaded(X, labels, spec.title, spec, None, [])
    labels = _column(out, "--label-column", label or spec.label, dataset)
    gone = [c for c in spec.drop if c in out.columns and c != labels.name]
    X = out.drop(columns=[labels.name, *gone])
    notes = []
    if gone:
        notes.append(f"dropped {len(gone)} columns that give {labels.name} away: {', '.join(gone)}")
    return _Loaded(X, labels, spec.title, spec, None, notes)


def _check_text_columns(X, labels, text_columns, data_name):
    """Each --text-column is a column of the table, and not the label."""
    for name in text_columns or ():
        if hasattr(X, "columns"):
            if name == labels.name:
                raise ValueError(
                    f"Column {name!r} is the label and cannot also be a text feature: "
                    "name a different column."
                )
            _column(X.assign(**{str(labels.name): labels}), "--text-column", name, data_name)


def _numeric_if_possible(y):
    """``y`` as int64/float64 when every value is a number (a CSV's numeric column), else as is."""
    try:
        if all(not isinstance(v, (str, bool, np.bool_)) for v in y):
            values = np.asarray(y, dtype=np.float64)
            whole = np.isfinite(values).all() and np.all(np.mod(values, 1) == 0)
            return values.astype(np.int64) if whole else values
    except (TypeError, ValueError):
        pass
    return y

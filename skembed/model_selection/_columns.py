"""Column roles of a table (text, categorical, numeric, datetime) and the rows built on them."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..utils._validation import missing_mask

#: the roles a feature column can take, in the order the leaderboard prints them
ROLES = ("text", "categorical", "numeric", "datetime")
#: a string column is text when its distinct values are at least this share of its rows ...
TEXT_MIN_DISTINCT_SHARE = 0.3
#: ... and its values have at least this many words on average
TEXT_MIN_MEAN_WORDS = 1.5
#: datetime columns become these numeric parts
DATETIME_PARTS = ("year", "month", "day", "day_of_week")


def _is_string(series):
    import pandas as pd

    return pd.api.types.is_object_dtype(series.dtype) or pd.api.types.is_string_dtype(series.dtype)


def _looks_like_text(series):
    values = series[~missing_mask(series)].astype(str)
    if len(values) == 0:
        return False
    distinct = values.nunique()
    words = values.str.split().str.len().mean()
    return (
        distinct > 20
        and distinct >= TEXT_MIN_DISTINCT_SHARE * len(values)
        and (words >= TEXT_MIN_MEAN_WORDS)
    )


def _looks_like_datetime(series):
    import pandas as pd

    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True
    if not _is_string(series):
        return False
    sample = series[~missing_mask(series)].astype(str).head(200)
    if len(sample) == 0 or not sample.str.contains(r"\d").all():
        return False
    if not sample.str.contains(r"[-/:]|\b[A-Za-z]{3}\b").all():
        return False  # plain numbers or codes, not dates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(parsed.notna().all())


def _auto_role(series):
    import pandas as pd

    if pd.api.types.is_bool_dtype(series.dtype):
        return "categorical"
    if _looks_like_datetime(series):
        return "datetime"
    if _is_string(series) or isinstance(series.dtype, pd.CategoricalDtype):
        return "text" if _is_string(series) and _looks_like_text(series) else "categorical"
    if pd.api.types.is_integer_dtype(series.dtype) and series.nunique() <= 2:
        return "categorical"  # 0/1 flags; other integers keep their order as numbers
    return "numeric"


def detect_roles(
    frame,
    *,
    label=None,
    text_columns=None,
    categorical_columns=None,
    numeric_columns=None,
    drop_columns=None,
):
    """The role of every column of a table: text, categorical, numeric or datetime.

    Detection, column by column (overridden by the ``*_columns`` arguments):
    a string column is **text** when it has more than 20 distinct values,
    at least :data:`TEXT_MIN_DISTINCT_SHARE` of its rows distinct, and
    :data:`TEXT_MIN_MEAN_WORDS` words per value on average (a review, a job
    title, a film title); other strings, booleans and integer columns with
    at most 2 values (flags) are **categorical**; datetime columns (and
    strings that all parse as dates) are **datetime** (expanded to
    :data:`DATETIME_PARTS`); everything else is **numeric**.

    Parameters
    ----------
    frame : pandas.DataFrame
        The features (without the label).
    label : str or None, default=None
        The label's name, only to refuse it as a feature.
    text_columns, categorical_columns, numeric_columns, drop_columns : list of str or None
        Columns forced into a role, or dropped.

    Returns
    -------
    roles : dict of str to list of str
        ``{"text": [...], "categorical": [...], "numeric": [...],
        "datetime": [...], "dropped": [...]}``, each in the table's order.

    Raises
    ------
    ValueError
        A named column is not in the table, is the label, or is named for two
        roles; a column is missing in every row; a text column has a single value.

    Examples
    --------
    >>> import pandas as pd
    >>> from skembed.model_selection import detect_roles
    >>> reviews = [f"review number {i} was fine" for i in range(30)]
    >>> frame = pd.DataFrame({"review": reviews, "shop": ["a", "b"] * 15, "stars": range(30)})
    >>> detect_roles(frame)
    {'text': ['review'], 'categorical': ['shop'], 'numeric': ['stars'], 'datetime': [], 'dropped': []}
    """
    forced = {}
    for role, names in (
        ("text", text_columns),
        ("categorical", categorical_columns),
        ("numeric", numeric_columns),
        ("dropped", drop_columns),
    ):
        for name in names or ():
            if label is not None and name == label:
                raise ValueError(
                    f"Column {name!r} is the label and cannot also be a {role} feature: "
                    "name a different column."
                )
            if name not in frame.columns:
                raise ValueError(
                    f"{name!r} is not a column of the table; its columns are {list(frame.columns)}."
                )
            if forced.get(name, role) != role:
                raise ValueError(
                    f"Column {name!r} is named both as {forced[name]} and as {role}: give it one role."
                )
            forced[name] = role
    roles = {role: [] for role in (*ROLES, "dropped")}
    for name in frame.columns:
        role = forced.get(name)
        series = frame[name]
        if role != "dropped" and missing_mask(series).all():
            raise ValueError(
                f"Column {name!r} is missing in every row: drop it (--drop-column {name})."
            )
        if role is None:
            role = _auto_role(series)
        if role == "text" and series[~missing_mask(series)].astype(str).nunique() < 2:
            raise ValueError(
                f"Text column {name!r} has the same value in every row, so it cannot tell rows "
                f"apart: drop it (--drop-column {name}) or name another text column."
            )
        roles[role].append(name)
    return roles


def format_roles(roles, width=6):
    """The roles as one line: ``text: a; categorical: b, c; numeric: d (+3 more)``.

    Parameters
    ----------
    roles : dict
        Returned by :func:`detect_roles`.
    width : int, default=6
        Columns printed per role before ``(+n more)``.

    Returns
    -------
    line : str
        One line, roles separated by ``; `` (``"no feature columns"`` if none).
    """
    parts = []
    for role in (*ROLES, "dropped"):
        names = [str(n) for n in roles.get(role, [])]
        if names:
            more = f" (+{len(names) - width} more)" if len(names) > width else ""
            parts.append(f"{role}: {', '.join(names[:width])}{more}")
    return "; ".join(parts) if parts else "no feature columns"


class PrepareFrame(TransformerMixin, BaseEstimator):
    """:func:`prepare_frame` as a pipeline step (not public): the first step of compare's best
    tabular pipelines. A class with its ``roles`` as state, not a function stored as a value,
    so ``save_pipeline`` writes it with skops and ``load_pipeline`` trusts it.
    """

    def __init__(self, roles=None):
        self.roles = roles

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return prepare_frame(X, self.roles)


def prepare_frame(frame, roles):
    """The table with each column in its role's form, ready for the column transformers.

    Text columns become ``str`` (missing -> ``""``); categorical columns
    ``object`` (missing kept); numeric columns ``float64`` (unparseable ->
    NaN); datetime columns are replaced by their :data:`DATETIME_PARTS`
    (``<name>_year``, ...) as ``float64``; dropped columns go. A pure,
    row-by-row function: applying it before the cross-validation leaks nothing.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read (e.g. from ``skembed compare --csv``).
    roles : dict
        Returned by :func:`detect_roles`.

    Returns
    -------
    prepared : pandas.DataFrame
        Same rows and index.
    """
    import pandas as pd

    out = {}
    for name in frame.columns:
        series = frame[name]
        if name in roles["text"]:
            out[name] = series.astype(object).where(~missing_mask(series), "").astype(str)
        elif name in roles["categorical"]:
            out[name] = series.astype(object)
        elif name in roles["numeric"]:
            out[name] = pd.to_numeric(series, errors="coerce").astype(np.float64)
        elif name in roles["datetime"]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                when = pd.to_datetime(series, errors="coerce", format="mixed")
            for part in DATETIME_PARTS:
                out[f"{name}_{part}"] = getattr(when.dt, part).astype(np.float64)
    return pd.DataFrame(out, index=frame.index)


def prepared_columns(roles):
    """``(text, categorical, numeric)`` column names of :func:`prepare_frame`'s output."""
    numeric = list(roles["numeric"]) + [
        f"{name}_{part}" for name in roles["datetime"] for part in DATETIME_PARTS
    ]
    return list(roles["text"]), list(roles["categorical"]), numeric


def warn_wide_categoricals(frame, roles, n_rows):
    """Warn, naming the column and the fix, for a categorical column with a category per ~row.

    Raises a ``UserWarning`` for each categorical column of ``frame`` whose
    distinct values are more than half of ``n_rows``: one-hot encoding it
    would make about a column per row.
    """
    for name in roles["categorical"]:
        distinct = frame[name].nunique()
        if distinct > n_rows / 2:
            warnings.warn(
                f"Categorical column {name!r} has {distinct} distinct values in {n_rows} rows: "
                f"one-hot encoding makes nearly a column per row. If it is text, name it "
                f"with --text-column {name}; if it is an identifier, --drop-column {name}.",
                UserWarning,
                stacklevel=3,
            )


def other_columns_transformer(categorical, numeric, min_frequency=5):
    """The non-text columns, the same way in every leaderboard row (the ``none`` row alone).

    Numeric columns: median imputation with a missing-indicator column,
    then standardisation. Categorical columns: one-hot, with categories seen
    fewer than ``min_frequency`` times grouped into one infrequent column,
    missing values their own category, unseen categories encoded as the
    infrequent group.

    Parameters
    ----------
    categorical, numeric : list of str
        Columns of :func:`prepare_frame`'s output.
    min_frequency : int, default=5
        Categories seen fewer times are grouped into one infrequent column.

    Returns
    -------
    transformer : sklearn.compose.ColumnTransformer
        Unfitted; dense float output.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from ..tabular import CategoriesAsStr

    parts = []
    if numeric:
        parts.append(
            (
                "num",
                make_pipeline(
                    SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=True),
                    StandardScaler(),
                ),
                list(numeric),
            )
        )
    if categorical:
        parts.append(
            (
                "cat",
                make_pipeline(
                    CategoriesAsStr(),  # a class: load_pipeline refuses a function as a value
                    OneHotEncoder(
                        handle_unknown="infrequent_if_exist",
                        min_frequency=min_frequency,
                        sparse_output=False,
                        dtype=np.float32,
                    ),
                ),
                list(categorical),
            )
        )
    return ColumnTransformer(parts, sparse_threshold=0.0)


def table_embedder(text_embedder, text, categorical, numeric):
    """One leaderboard row of a mixed table: the text columns embedded, the others as usual.

    Each text column goes through its own clone of ``text_embedder`` (fitted
    on that column only); the other columns through
    :func:`other_columns_transformer`. ``text_embedder=None`` gives the
    ``none`` row (the other columns alone).

    Parameters
    ----------
    text_embedder : estimator or None
        The row's text embedder, cloned for each text column; ``None`` for the ``none`` row.
    text, categorical, numeric : list of str
        Columns of :func:`prepare_frame`'s output, by role.

    Returns
    -------
    transformer : sklearn.compose.ColumnTransformer
        Unfitted. Its output is sparse when a text embedding is sparse (TF-IDF).
    """
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer

    parts = []
    if text_embedder is not None:
        parts += [(f"text_{name}", clone(text_embedder), name) for name in text]
    if categorical or numeric:
        parts.append(
            ("other", other_columns_transformer(categorical, numeric), categorical + numeric)
        )
    return ColumnTransformer(parts, sparse_threshold=0.3)


def tabular_row(tabular_embedder, categorical, numeric):
    """A tabular embedder (``raw``, ``pca``, autoencoder, ...) on the non-text columns only."""
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer

    return ColumnTransformer([("tabular", clone(tabular_embedder), categorical + numeric)])

"""The ``preprocessor="auto"`` of the tabular embedders: mixed columns -> one numeric matrix.

:class:`TabularPreprocessor` builds, in ``fit``, a ``ColumnTransformer`` of
this library's :class:`~skembed.preprocessing.ScalerEmbedder` (numeric
columns, median imputation with missing-indicator columns) and
:class:`~skembed.preprocessing.OneHotEmbedder` (categorical columns, missing
values as their own category), remembers the output layout (which output
columns are numeric, which are one-hot groups) for the mixed reconstruction
loss, and maps reconstructions back to the original columns.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    check_array,
    check_is_fitted,
)

from ..preprocessing import OneHotEmbedder, ScalerEmbedder
from ..utils._schema import (
    Array,
    CheckedStateMixin,
    Instance,
    Number,
    refuse_state,
    transform_with_stored,
)
from ..utils._validation import missing_mask

#: label given to missing values of categorical columns before one-hot encoding
MISSING_CATEGORY = "__missing__"


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


def categories_as_str(X):
    """Categorical block as an object array of ``str`` with missing values -> ``MISSING_CATEGORY``.

    Casting to ``str`` makes columns of mixed types (bools and NaN, ints and
    strings) sortable by the one-hot encoder.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_columns) or (n_samples,)
        The categorical columns.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_columns), object
        Each value as ``str``; missing values (None, NaN, NA) as ``MISSING_CATEGORY``.
    """
    values = X.to_numpy(dtype=object) if _is_dataframe(X) else np.asarray(X, dtype=object)
    if values.ndim == 1:
        values = values[:, None]
    mask = missing_mask(values)
    out = values.astype(str).astype(object)
    out[mask] = MISSING_CATEGORY
    return out


class CategoriesAsStr(OneToOneFeatureMixin, TransformerMixin):
    """:func:`categories_as_str` as a stateless pipeline step.

    The first step of the categorical block in :class:`TabularPreprocessor` and
    in ``skembed compare``'s pipelines. A class, not
    ``FunctionTransformer(categories_as_str)``: a function stored as a value is
    refused by :func:`skembed.model_selection.load_pipeline`, an instance of a
    skembed class is not, so such pipelines save with skops. Not an estimator
    of its own (no parameters, nothing learned but the input's width and
    column names).

    See Also
    --------
    categories_as_str : The function it applies.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed.tabular import CategoriesAsStr
    >>> CategoriesAsStr().fit_transform(np.array([[1], [None]], dtype=object)).tolist()
    [['1'], ['__missing__']]
    """

    def get_params(self, deep=True):
        """No parameters (for ``clone``).

        Parameters
        ----------
        deep : bool, default=True
            Ignored.

        Returns
        -------
        params : dict
            Empty.
        """
        return {}

    def set_params(self, **params):
        """Refuse any parameter (there are none).

        Parameters
        ----------
        **params : dict
            Must be empty.

        Returns
        -------
        self : CategoriesAsStr
            Unchanged.
        """
        if params:
            raise ValueError(f"CategoriesAsStr has no parameters; got {sorted(params)}.")
        return self

    def fit(self, X, y=None):
        """Record the input's width (and column names of a DataFrame).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_columns)
            The categorical columns.
        y : None
            Ignored.

        Returns
        -------
        self : CategoriesAsStr
            Fitted.
        """
        self.n_features_in_ = int(np.shape(X)[1]) if np.ndim(X) == 2 else 1
        if _is_dataframe(X):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        return self

    def transform(self, X):
        """Apply :func:`categories_as_str`.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_columns)
            The categorical columns.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_columns), object
            Each value as ``str``; missing values as ``MISSING_CATEGORY``.
        """
        return categories_as_str(X)


def _is_numeric_column(values) -> bool:
    if values.dtype.kind in "iuf":
        return True
    if values.dtype.kind in "bUS":  # a numpy str array is a string column, even of digits
        return False
    try:
        np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True


def column_kinds(X):
    """Split the columns of ``X`` into numeric and categorical ones.

    Parameters
    ----------
    X : pandas.DataFrame or numpy.ndarray of shape (n_samples, n_features)

    Returns
    -------
    numeric, categorical : list of (str or int)
        Column names (DataFrame) or positions (array). ``bool``, ``object``,
        ``category`` and ``string`` columns are categorical, and so are the
        columns of a numpy ``str`` array (dtype ``<U``/``S``, digits or not); for
        object arrays, a column is numeric when all its values convert to float.
    """
    numeric, categorical = [], []
    if _is_dataframe(X):
        for name in X.columns:
            dtype = X[name].dtype
            kind = getattr(dtype, "kind", "O")
            if kind in "iuf" and str(dtype) != "category":
                numeric.append(name)
            else:
                categorical.append(name)
        return numeric, categorical
    X = np.asarray(X)
    for j in range(X.shape[1]):
        (numeric if _is_numeric_column(X[:, j]) else categorical).append(j)
    return numeric, categorical


class TabularPreprocessor(CheckedStateMixin, TransformerMixin, BaseEstimator):
    """Scale and impute numeric columns, one-hot encode categorical ones (``preprocessor="auto"``).

    Parameters
    ----------
    scaling : {"standard", "minmax", "robust"}, default="standard"
        ``ScalerEmbedder`` method of the numeric columns.
    numeric_imputation : {"median", "mean"}, default="median"
        Imputation of missing numeric values; a 0/1 indicator column (not
        scaled) is added for each numeric column with missing values in ``fit``. A column
        missing entirely is imputed with 0 (and reconstructed as NaN).
    handle_unknown : str, default="warn"
        ``OneHotEmbedder(handle_unknown=...)``: by default, a category unseen
        in ``fit`` is encoded as an all-zero block with a ``UserWarning``.
    dtype : numpy dtype, default=numpy.float32
        Output dtype.

    Attributes
    ----------
    column_transformer_ : sklearn.compose.ColumnTransformer
    numeric_columns_, categorical_columns_ : list of (str or int)
    numeric_index_ : numpy.ndarray of int, shape (n_numeric_out,)
        Output columns holding scaled numerics and the (unscaled 0/1)
        missing indicators; all get the squared-error loss.
    categorical_groups_ : list of (int, int)
        ``[start, stop)`` output ranges of each categorical column's one-hot block.
    all_missing_columns_ : list of (str or int)
        Numeric columns missing entirely in ``fit`` (reconstructed as NaN).
    constant_columns_ : dict
        Numeric columns with a single value in ``fit`` → that value
        (reconstructed exactly).
    n_features_out_ : int

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        From ``fit``: an unknown ``scaling`` or ``numeric_imputation`` (a ``ValueError``).
    ValueError
        From ``transform``: a different number of columns than in ``fit``.

    References
    ----------
    scikit-learn's ``ColumnTransformer``, ``SimpleImputer``, ``OneHotEncoder`` and scalers
    (Pedregosa et al. 2011, JMLR 12), to which the computation is delegated.
    """

    #: fitted state checked on load (utils._schema)
    _state_schema = {
        "column_transformer_": Instance("sklearn.compose._column_transformer.ColumnTransformer"),
        "n_features_out_": Number(low=0),
        "numeric_index_": Array("i", (None,), low=0, below="n_features_out_"),
        "_scaled_index": Array("i", (None,), low=0, below="n_features_out_"),
        "columns_": Instance(list),
        "numeric_columns_": Instance(list),
        "categorical_columns_": Instance(list),
        "categorical_groups_": Instance(list),
        "constant_columns_": Instance(dict),
        "category_values_": Instance(list),
        "input_is_dataframe_": Instance(bool),
    }
    #: the steps' own rules, checked again when a file gives them (utils._schema.check_params)
    _parameter_constraints: dict = {
        "scaling": ScalerEmbedder._parameter_constraints["method"],
        "numeric_imputation": [StrOptions({"median", "mean"})],
        "handle_unknown": OneHotEmbedder._parameter_constraints["handle_unknown"],
        "dtype": [type, StrOptions({"float16", "float32", "float64"}), np.dtype],
    }

    def __init__(
        self,
        *,
        scaling="standard",
        numeric_imputation="median",
        handle_unknown="warn",
        dtype=np.float32,
    ):
        self.scaling = scaling
        self.numeric_imputation = numeric_imputation
        self.handle_unknown = handle_unknown
        self.dtype = dtype

    def _check_table(self, X, *, reset):
        """A DataFrame as it is, anything else a 2-D array, with scikit-learn's messages
        (sparse, 1-D, empty and infinite input refused; NaN is a missing value)."""
        if not _is_dataframe(X):
            X = check_array(X, dtype=None, ensure_all_finite="allow-nan")
        elif len(X) == 0 or X.shape[1] == 0:
            check_array(np.empty(X.shape))  # the standard message for an empty table
        if _is_dataframe(X):
            numbers = X.select_dtypes("number").to_numpy(dtype=float)
        elif X.dtype == object:
            numbers = np.array([v for v in X.ravel() if _is_number(v)], dtype=float)
        else:
            numbers = X.astype(float)
        if np.isinf(numbers).any():
            raise ValueError(
                "TabularPreprocessor: X holds infinity; only NaN (a missing value) is "
                "imputed. Replace the infinite values or drop their rows."
            )
        _check_n_features(self, X, reset=reset)
        _check_feature_names(self, X, reset=reset)
        return X

    def _fit(self, X):
        """Build and fit the column transformer on ``X`` (DataFrame or 2-D array)."""
        X = self._check_table(X, reset=True)
        numeric, categorical = column_kinds(X)
        self.numeric_columns_, self.categorical_columns_ = numeric, categorical
        self._learn_input_columns(X)
        steps = self._numeric_transformers(numeric) + self._categorical_transformers(categorical)
        ct = ColumnTransformer(steps, remainder="drop", sparse_threshold=0.0)
        out = ct.fit_transform(X)
        self.column_transformer_ = ct
        self._learn_output_layout(ct, categorical)
        self._learn_special_numeric_columns(X, numeric)
        self.category_values_ = self._category_values(X, categorical)
        return out

    def _learn_input_columns(self, X):
        """The input's kind, its column names (or positions) and a table's dtypes."""
        self.input_is_dataframe_ = _is_dataframe(X)
        if self.input_is_dataframe_:
            self.columns_ = list(X.columns)
            self.dtypes_ = X.dtypes.to_dict()
        else:
            self.columns_ = list(range(np.shape(X)[1]))

    def _numeric_transformers(self, numeric):
        """The column transformer's steps of the numeric columns: none without one."""
        if not numeric:
            return []
        impute = SimpleImputer(strategy=self.numeric_imputation, keep_empty_features=True)
        scale = ScalerEmbedder(method=self.scaling)
        return [
            ("num", Pipeline([("impute", impute), ("scale", scale)]), numeric),
            # 0/1 indicators, unscaled: a rare missing value must not become a huge outlier
            ("missing", MissingIndicator(features="missing-only", error_on_new=False), numeric),
        ]

    def _categorical_transformers(self, categorical):
        """The column transformer's step of the categorical columns: none without one."""
        if not categorical:
            return []
        onehot = OneHotEmbedder(handle_unknown=self.handle_unknown, dtype=self.dtype)
        return [("cat", Pipeline([("as_str", CategoriesAsStr()), ("onehot", onehot)]), categorical)]

    def _learn_output_layout(self, ct, categorical):
        """Which output columns are numeric, and each categorical column's one-hot range."""
        self.n_features_out_ = int(sum(s.stop - s.start for s in ct.output_indices_.values()))
        num_slice = ct.output_indices_.get("num", slice(0, 0))
        self._scaled_index = np.arange(num_slice.start, num_slice.stop)
        ind_slice = ct.output_indices_.get("missing", slice(0, 0))
        self.numeric_index_ = np.concatenate(
            [self._scaled_index, np.arange(ind_slice.start, ind_slice.stop)]
        )
        groups = []
        if categorical:
            start = ct.output_indices_["cat"].start
            for cats in ct.named_transformers_["cat"]["onehot"].categories_:
                groups.append((start, start + len(cats)))
                start += len(cats)
        self.categorical_groups_ = groups

    def _learn_special_numeric_columns(self, X, numeric):
        """The numeric columns missing entirely, and those holding a single value."""
        self.all_missing_columns_ = []
        self.constant_columns_ = {}
        if not numeric:
            return
        values = X[numeric] if self.input_is_dataframe_ else np.asarray(X)[:, numeric]
        values = np.asarray(values, dtype=np.float64)
        missing = np.isnan(values).all(axis=0)
        self.all_missing_columns_ = [c for c, m in zip(numeric, missing, strict=True) if m]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
        self.constant_columns_ = {
            c: float(v)
            for c, v, w, m in zip(numeric, lo, hi, missing, strict=True)
            if not m and v == w
        }

    def _category_values(self, X, categorical):
        """Per categorical column, its labels as strings -> their original values.

        Gives the labels back with their own type on the way out.
        """
        values = []
        if not categorical:
            return values
        raw = X[categorical] if self.input_is_dataframe_ else np.asarray(X)[:, categorical]
        raw = raw.to_numpy(dtype=object) if _is_dataframe(raw) else np.asarray(raw, dtype=object)
        as_str = categories_as_str(raw)
        for j in range(raw.shape[1]):
            labels, first = np.unique(as_str[:, j], return_index=True)
            mapping = {s: raw[i, j] for s, i in zip(labels, first, strict=True)}
            mapping[MISSING_CATEGORY] = np.nan
            values.append(mapping)
        return values

    def fit(self, X, y=None):
        """Build and fit the column transformer on ``X``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            The table; numeric and categorical columns are told apart by their values.
        y : None
            Ignored.

        Returns
        -------
        self : TabularPreprocessor
            Fitted.
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit on ``X`` and return its preprocessed rows (one pass of the column transformer).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            The table.
        y : None
            Ignored.

        Returns
        -------
        numpy.ndarray of shape (n_samples, ``n_features_out_``), ``dtype``
            Equal to ``fit(X).transform(X)``.
        """
        return np.asarray(self._fit(X), dtype=self.dtype)

    def transform(self, X):
        """Preprocess rows with the fitted column transformer.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen in ``fit``.

        Returns
        -------
        numpy.ndarray of shape (n_samples, ``n_features_out_``), ``dtype``
            Numeric columns scaled, categorical columns one-hot.
        """
        check_is_fitted(self, "column_transformer_")
        X = self._check_table(X, reset=False)
        owner = type(self).__name__
        out = transform_with_stored(self.column_transformer_, X, owner, "column_transformer_")
        if out.shape[1] != self.n_features_out_:  # a network downstream reads this width
            raise refuse_state(
                owner,
                "column_transformer_",
                f"gives {out.shape[1]} columns where n_features_out_ is {self.n_features_out_}",
            )
        return np.asarray(out, dtype=self.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value: imputed, with an indicator column
        tags.input_tags.categorical = tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []  # the output dtype is the dtype parameter
        return tags

    def get_feature_names_out(self, input_features=None):
        """Output column names of the column transformer.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input column names; default ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        numpy.ndarray of str (object)
            One name per output column.
        """
        check_is_fitted(self, "column_transformer_")
        return self.column_transformer_.get_feature_names_out(input_features)

    def inverse_transform(self, Xt, *, categorical="argmax", random_state=None):
        """Map preprocessed-space rows (or decoder outputs) back to the original columns.

        Parameters
        ----------
        Xt : array-like of shape (n_samples, ``n_features_out_``)
            Numeric block in the scaled space; each categorical group holds
            scores (one-hot, probabilities or logits).
        categorical : {"argmax", "sample"}, default="argmax"
            Pick each group's highest score, or draw a category from the
            softmax of the group (``Xt`` must then hold logits).
        random_state : int, RandomState or None
            Seeds ``categorical="sample"``.

        Returns
        -------
        X : pandas.DataFrame or numpy.ndarray of shape (n_samples, n_features_in)
            The original columns in their original order: a DataFrame with
            the fitted column names when fitted on a DataFrame; else a
            float64 array (all numeric) or an object array. Missing
            categories, numeric values whose missing indicator is
            reconstructed above 0.5, and all-missing numeric columns come
            back as NaN; integer columns of a DataFrame are rounded back to
            their integer dtype when they have no NaN.
        """
        check_is_fitted(self, "column_transformer_")
        Xt = np.asarray(Xt, dtype=np.float64)
        n = Xt.shape[0]
        ct = self.column_transformer_
        columns = {}
        if self.numeric_columns_:
            block = Xt[:, self._scaled_index]
            scaled = ct.named_transformers_["num"]["scale"].inverse_transform(block)
            values = scaled[:, : len(self.numeric_columns_)].copy()
            # a reconstructed missing indicator above 0.5 gives the value back as missing
            indicator = ct.named_transformers_.get("missing")
            if indicator is not None and len(indicator.features_):
                start = ct.output_indices_["missing"].start
                for k, j in enumerate(indicator.features_):
                    values[Xt[:, start + k] > 0.5, j] = np.nan
            for j, col in enumerate(self.numeric_columns_):
                if col in self.all_missing_columns_:
                    columns[col] = np.full(n, np.nan)
                elif col in self.constant_columns_:
                    columns[col] = np.full(n, self.constant_columns_[col])
                else:
                    columns[col] = values[:, j]
        if self.categorical_columns_:
            rng = check_random_state(random_state)
            cats = ct.named_transformers_["cat"]["onehot"].categories_
            for j, (col, (start, stop)) in enumerate(
                zip(self.categorical_columns_, self.categorical_groups_, strict=True)
            ):
                scores = Xt[:, start:stop]
                if categorical == "sample":
                    p = np.exp(scores - scores.max(axis=1, keepdims=True))
                    p /= p.sum(axis=1, keepdims=True)
                    u = rng.random_sample((n, 1))
                    idx = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), stop - start - 1)
                else:
                    idx = scores.argmax(axis=1)
                labels = cats[j][idx]
                mapping = self.category_values_[j]
                columns[col] = np.array([mapping.get(s, s) for s in labels], dtype=object)
        if self.input_is_dataframe_:
            import pandas as pd

            frame = pd.DataFrame({c: columns[c] for c in self.columns_})
            for c in self.numeric_columns_:
                dtype = self.dtypes_[c]
                if dtype.kind == "f":
                    frame[c] = frame[c].astype(dtype)
                elif dtype.kind in "iu" and not frame[c].isna().any():
                    frame[c] = np.rint(frame[c].to_numpy()).astype(dtype)
            return frame
        if not self.categorical_columns_:
            return np.column_stack([columns[c] for c in self.columns_]).astype(np.float64)
        out = np.empty((n, len(self.columns_)), dtype=object)
        for c in self.columns_:
            out[:, c] = columns[c]
        return out


def _is_number(value):
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def nonfinite_message(est, X, Xt):
    """Why ``est``'s float32 rows ``Xt`` (from ``X``) hold NaN or inf, naming value and column.

    A value past float32's range (1e308 once read "contains NaN or infinity... use
    preprocessor='auto'" with preprocessor='auto'), a missing value, or what the
    preprocessor returned.
    """
    name = type(est).__name__
    rows, cols = np.nonzero(~np.isfinite(Xt))
    row, col = int(rows[0]), int(cols[0])
    if est.preprocessor_ is None:  # the input's own columns: name the value and the column
        value = np.asarray(X[row] if not _is_dataframe(X) else X.iloc[row])[col]
        column = X.columns[col] if _is_dataframe(X) else col
        if np.isfinite(float(value)):
            return (
                f"{name}: column {column!r} holds {float(value):g} in row {row}, beyond the "
                f"float32 range (±{np.finfo(np.float32).max:.1e}) the network trains in: "
                "rescale that column (preprocessor='auto' standardizes it) or drop the row."
            )
        return (
            f"{name}: column {column!r} holds {'NaN (a missing value)' if value != value else value} "
            f"in row {row} and preprocessor=None "
            "does not impute: use preprocessor='auto' (median imputation with indicator "
            "columns), add a SimpleImputer to your preprocessor, or drop the rows."
        )
    return (
        f"{name}: preprocessor={est.preprocessor!r} returned {Xt[row, col]} in row {row}, "
        f"output column {col}, which the network cannot train on: impute missing values "
        "(a SimpleImputer), rescale very large ones, or drop the row."
    )

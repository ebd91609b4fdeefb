"""OneHotEmbedder and LabelEmbedder: categorical columns, delegated to scikit-learn's encoders."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.utils._param_validation import Interval, StrOptions

from ..utils._schema import Instance, Number
from ._base import _DelegatingTransformer


class OneHotEmbedder(_DelegatingTransformer):
    """One-hot embedding of categorical columns (a wrapper over scikit-learn's ``OneHotEncoder``).

    Each input column with ``k`` categories becomes ``k`` indicator columns
    (fewer with ``drop``, or when rare categories are grouped by
    ``min_frequency``/``max_categories``). All the work is delegated to
    :class:`sklearn.preprocessing.OneHotEncoder`, fitted in ``fit`` and exposed
    as ``encoder_``; outputs are identical to it.

    Parameters
    ----------
    categories : "auto" or list of array-like, default="auto"
        Categories per column; ``"auto"`` learns them from the data.
    drop : {"first", "if_binary"}, array-like or None, default=None
        Drop one category per column (for unregularised linear models).
    handle_unknown : {"warn", "ignore", "infrequent_if_exist", "error"}, default="warn"
        What a category unseen in ``fit`` becomes in ``transform``:
        ``"warn"`` (default) encodes it as the column's infrequent category
        when one exists (see ``min_frequency``), else as all zeros in that
        column's block, and emits a ``UserWarning`` naming the columns, so it
        is never silent; ``"ignore"`` does the all-zeros encoding without a
        warning; ``"infrequent_if_exist"`` is ``"warn"`` without the warning;
        ``"error"`` raises ``ValueError``. ``inverse_transform`` maps an
        all-zero block back to ``None``.
    min_frequency : int, float or None, default=None
        Categories seen fewer times (int) or in a smaller fraction of rows
        (float) are grouped into one ``"infrequent_sklearn"`` column.
    max_categories : int or None, default=None
        At most this many output columns per input column, the infrequent
        group included.
    sparse_output : bool, default=False
        Return a ``scipy.sparse`` CSR matrix instead of a dense array (dense by
        default, which ``set_output(transform="pandas")`` requires).
    dtype : numpy dtype, default=numpy.float64
        Output dtype.
    feature_name_combiner : "concat" or callable, default="concat"
        How output column names are built (``"color_red"``).

    Attributes
    ----------
    encoder_ : sklearn.preprocessing.OneHotEncoder
        The fitted encoder.
    categories_ : list of numpy.ndarray
        Categories of each column, in output order.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str, shape (``n_features_in_``,)
        Only when ``X`` had string column names.

    Raises
    ------
    ValueError
        In ``fit``/``transform``: invalid parameters (scikit-learn's parameter
        validation), a column count different from ``fit``'s, or an unseen
        category with ``handle_unknown="error"`` (scikit-learn's message,
        naming the column and category).

    See Also
    --------
    LabelEmbedder : one integer code per column instead of indicator columns.
    ScalerEmbedder : scaling of numeric columns.

    Notes
    -----
    Missing values (``None``/NaN) are treated as their own category.
    Output shape: ``(n_samples, sum_j n_categories_j)``, minus dropped columns.

    References
    ----------
    scikit-learn's ``OneHotEncoder`` (Pedregosa et al. 2011, "Scikit-learn:
    Machine Learning in Python", JMLR 12), to which all computation is delegated.

    Examples
    --------
    >>> from skembed.preprocessing import OneHotEmbedder
    >>> X = [["red", "S"], ["blue", "M"], ["red", "M"]]
    >>> OneHotEmbedder().fit_transform(X)
    array([[0., 1., 0., 1.],
           [1., 0., 1., 0.],
           [0., 1., 1., 0.]])
    """

    _inner_attr = "encoder_"
    #: fitted state checked on load (utils._schema)
    _state_schema = {
        "encoder_": Instance(OneHotEncoder),
        "n_features_in_": Number(low=1),
        "categories_": Instance(list, rows="n_features_in_"),
    }
    _parameter_constraints: dict = {
        "categories": [StrOptions({"auto"}), list],
        "drop": [StrOptions({"first", "if_binary"}), "array-like", None],
        "handle_unknown": [StrOptions({"error", "ignore", "infrequent_if_exist", "warn"})],
        "min_frequency": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
        "max_categories": [Interval(Integral, 1, None, closed="left"), None],
        "sparse_output": ["boolean"],
        "dtype": "no_validation",
        "feature_name_combiner": [StrOptions({"concat"}), callable],
    }

    def __init__(
        self,
        *,
        categories="auto",
        drop=None,
        handle_unknown="warn",
        min_frequency=None,
        max_categories=None,
        sparse_output=False,
        dtype=np.float64,
        feature_name_combiner="concat",
    ):
        self.categories = categories
        self.drop = drop
        self.handle_unknown = handle_unknown
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.sparse_output = sparse_output
        self.dtype = dtype
        self.feature_name_combiner = feature_name_combiner

    def _make_inner(self):
        return OneHotEncoder(
            categories=self.categories,
            drop=self.drop,
            handle_unknown=self.handle_unknown,
            min_frequency=self.min_frequency,
            max_categories=self.max_categories,
            sparse_output=self.sparse_output,
            dtype=self.dtype,
            feature_name_combiner=self.feature_name_combiner,
        )

    def _copy_fitted_attributes(self, inner):
        super()._copy_fitted_attributes(inner)
        self.categories_ = inner.categories_


class LabelEmbedder(_DelegatingTransformer):
    """Ordinal (label) codes of categorical feature columns, over scikit-learn's ``OrdinalEncoder``.

    Each column's categories become the integers ``0 .. k-1`` (sorted
    category order); the output keeps one column per input column. All the
    work is delegated to :class:`sklearn.preprocessing.OrdinalEncoder`, fitted
    in ``fit`` and exposed as ``encoder_``; outputs are identical to it.

    Parameters
    ----------
    categories : "auto" or list of array-like, default="auto"
        Categories per column; ``"auto"`` learns them from the data.
    handle_unknown : {"use_encoded_value", "error"}, default="use_encoded_value"
        ``"use_encoded_value"`` (default) encodes a category unseen in ``fit``
        as ``unknown_value`` (``-1`` by default); ``"error"`` raises
        ``ValueError`` in ``transform``.
    unknown_value : int or numpy.nan, default=-1
        The documented code of unseen categories. ``inverse_transform`` maps
        it back to ``None``.
    encoded_missing_value : int or numpy.nan, default=numpy.nan
        The code of missing values (``None``/NaN) in the input.
    min_frequency : int, float or None, default=None
        Rare categories share one code (the last one of their column).
    max_categories : int or None, default=None
        At most this many codes per column, the infrequent group included.
    dtype : numpy dtype, default=numpy.float64
        Output dtype (float, so that NaN codes are representable).

    Attributes
    ----------
    encoder_ : sklearn.preprocessing.OrdinalEncoder
        The fitted encoder.
    categories_ : list of numpy.ndarray
        Categories of each column; a category's code is its index here.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str, shape (``n_features_in_``,)
        Only when ``X`` had string column names.

    Raises
    ------
    ValueError
        Invalid parameters, or a column count different from ``fit``'s.

    See Also
    --------
    OneHotEmbedder : indicator columns instead of codes.

    Notes
    -----
    This encodes feature columns (2-D ``X``); for a target vector use
    :class:`sklearn.preprocessing.LabelEncoder`. Output shape:
    ``(n_samples, n_features_in_)``.

    References
    ----------
    scikit-learn's ``OrdinalEncoder`` (Pedregosa et al. 2011, JMLR 12), to
    which all computation is delegated.

    Examples
    --------
    >>> from skembed.preprocessing import LabelEmbedder
    >>> enc = LabelEmbedder().fit([["red"], ["blue"], ["red"]])
    >>> enc.transform([["blue"], ["red"], ["green"]]).ravel()
    array([ 0.,  1., -1.])
    """

    _inner_attr = "encoder_"
    #: fitted state checked on load (utils._schema)
    _state_schema = {
        "encoder_": Instance(OrdinalEncoder),
        "n_features_in_": Number(low=1),
        "categories_": Instance(list, rows="n_features_in_"),
    }
    _parameter_constraints: dict = {
        "categories": [StrOptions({"auto"}), list],
        "handle_unknown": [StrOptions({"error", "use_encoded_value"})],
        "unknown_value": [Integral, type(np.nan), None],
        "encoded_missing_value": [Integral, type(np.nan)],
        "min_frequency": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
        "max_categories": [Interval(Integral, 1, None, closed="left"), None],
        "dtype": "no_validation",
    }

    def __init__(
        self,
        *,
        categories="auto",
        handle_unknown="use_encoded_value",
        unknown_value=-1,
        encoded_missing_value=np.nan,
        min_frequency=None,
        max_categories=None,
        dtype=np.float64,
    ):
        self.categories = categories
        self.handle_unknown = handle_unknown
        self.unknown_value = unknown_value
        self.encoded_missing_value = encoded_missing_value
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.dtype = dtype

    def _make_inner(self):
        return OrdinalEncoder(
            categories=self.categories,
            handle_unknown=self.handle_unknown,
            unknown_value=self.unknown_value
            if self.handle_unknown == "use_encoded_value"
            else None,
            encoded_missing_value=self.encoded_missing_value,
            min_frequency=self.min_frequency,
            max_categories=self.max_categories,
            dtype=self.dtype,
        )

    def _copy_fitted_attributes(self, inner):
        super()._copy_fitted_attributes(inner)
        self.categories_ = inner.categories_

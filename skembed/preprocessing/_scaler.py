"""ScalerEmbedder: one scaling estimator whose method is a grid-searchable parameter."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler, RobustScaler, StandardScaler
from sklearn.utils import check_array
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._schema import Array, Instance, Number
from ._base import _DelegatingTransformer


class ScalerEmbedder(_DelegatingTransformer):
    """Scaling of numeric columns, delegated to scikit-learn's scalers.

    ``method`` picks the scaler, so ``GridSearchCV`` can search over it
    (``{"scaler__method": ["standard", "minmax", "robust"]}``). The scaler is
    fitted in ``fit`` and exposed as ``scaler_``; outputs are identical to it.

    Parameters
    ----------
    method : {"standard", "minmax", "robust"}, default="standard"
        - ``"standard"``: :class:`sklearn.preprocessing.StandardScaler`,
          ``(x - mean) / std`` (population std).
        - ``"minmax"``: :class:`sklearn.preprocessing.MinMaxScaler`,
          ``(x - min) / (max - min)`` mapped to ``feature_range``.
        - ``"robust"``: :class:`sklearn.preprocessing.RobustScaler`,
          ``(x - median) / IQR`` over ``quantile_range``.
    with_centering : bool, default=True
        Subtract the mean (``"standard"``) or the median (``"robust"``).
        Must be false for sparse input. Ignored by ``"minmax"``.
    with_scaling : bool, default=True
        Divide by the std (``"standard"``) or the IQR (``"robust"``). Ignored
        by ``"minmax"``.
    feature_range : tuple (min, max), default=(0, 1)
        Target range of ``"minmax"``; ignored by the others.
    clip : bool, default=False
        ``"minmax"`` only: clip transformed values of new data to ``feature_range``.
    quantile_range : tuple (q_min, q_max), default=(25.0, 75.0)
        Percentiles of the ``"robust"`` range; ignored by the others.
    unit_variance : bool, default=False
        ``"robust"`` only: rescale so that normal data has unit variance.
    copy : bool, default=True
        Passed to the scaler.

    Attributes
    ----------
    scaler_ : StandardScaler, MinMaxScaler or RobustScaler
        The fitted scikit-learn scaler, of the columns times ``2**-input_exponent_``.
    input_exponent_ : numpy.ndarray of int64, shape (``n_features_in_``,)
        0 for every column whose largest magnitude is below ``2**480`` (about
        3e144); else the binary exponent of that magnitude, by which the column
        is divided (exactly: a power of two) before the scaler sees it, in
        ``fit``, ``transform`` and ``inverse_transform``. The scaler squares
        and subtracts values, which overflowed to NaN for a constant 1e200
        column or one 1e308 among 60 rows.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str, shape (``n_features_in_``,)
        Only when ``X`` had string column names.

    Raises
    ------
    ValueError
        An unknown ``method``, non-numeric input, or a column count different
        from ``fit``'s (scikit-learn's validation messages).

    See Also
    --------
    OneHotEmbedder : for categorical columns.

    Notes
    -----
    NaNs are ignored in ``fit`` and kept in ``transform`` (as in
    scikit-learn); output dtype is float64 (float32 input stays float32);
    output shape equals input shape. Constant columns are mapped to 0 (their
    scale is taken as 1), never to NaN; finite input gives finite output, up
    to magnitudes of 1.8e308 (``input_exponent_``). ``inf`` is refused.

    References
    ----------
    scikit-learn's ``StandardScaler``, ``MinMaxScaler`` and ``RobustScaler``
    (Pedregosa et al. 2011, JMLR 12), to which all computation is delegated.

    Examples
    --------
    >>> from skembed.preprocessing import ScalerEmbedder
    >>> ScalerEmbedder(method="minmax").fit_transform([[1.0], [3.0], [5.0]]).ravel()
    array([0. , 0.5, 1. ])
    """

    _inner_attr = "scaler_"
    #: fitted state checked on load (utils._schema)
    _state_schema = {
        "scaler_": Instance(StandardScaler, MinMaxScaler, RobustScaler),
        "n_features_in_": Number(low=1),
        "input_exponent_": Array("iu", (None,), low=0, optional=True),
    }
    _parameter_constraints: dict = {
        "method": [StrOptions({"standard", "minmax", "robust"})],
        "with_centering": ["boolean"],
        "with_scaling": ["boolean"],
        "feature_range": [tuple],
        "clip": ["boolean"],
        "quantile_range": [tuple],
        "unit_variance": ["boolean"],
        "copy": ["boolean"],
    }

    def __init__(
        self,
        method="standard",
        *,
        with_centering=True,
        with_scaling=True,
        feature_range=(0, 1),
        clip=False,
        quantile_range=(25.0, 75.0),
        unit_variance=False,
        copy=True,
    ):
        self.method = method
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.feature_range = feature_range
        self.clip = clip
        self.quantile_range = quantile_range
        self.unit_variance = unit_variance
        self.copy = copy

    def _make_inner(self):
        if self.method == "minmax":
            return MinMaxScaler(feature_range=self.feature_range, clip=self.clip, copy=self.copy)
        if self.method == "robust":
            return RobustScaler(
                with_centering=self.with_centering,
                with_scaling=self.with_scaling,
                quantile_range=self.quantile_range,
                unit_variance=self.unit_variance,
                copy=self.copy,
            )
        return StandardScaler(
            with_mean=self.with_centering, with_std=self.with_scaling, copy=self.copy
        )

    def _shifted(self, X, exponent):
        """``X`` times ``2**-exponent`` per column (exact), the same type; ``X`` if all 0."""
        if exponent is None or not np.any(exponent):
            return X
        factor = np.ldexp(1.0, -exponent)  # a power of two (subnormal ones too): exact products
        if hasattr(X, "columns"):
            return X.mul(factor, axis=1)
        return check_array(X, dtype=np.float64, ensure_all_finite="allow-nan") * factor

    def fit(self, X, y=None):
        """Fit the scaler on ``X`` (columns above ``2**480`` in magnitude first rescaled).

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Numeric columns; NaN allowed, ``inf`` refused.
        y : None
            Ignored.

        Returns
        -------
        self : ScalerEmbedder
            The fitted embedder.
        """
        values = check_array(
            X, accept_sparse=True, dtype=None, ensure_all_finite="allow-nan", ensure_min_samples=1
        )
        exponent = np.zeros(values.shape[1], dtype=np.int64)
        if not sp.issparse(values) and values.dtype.kind == "f" and values.size:
            with np.errstate(invalid="ignore"):
                top = np.nanmax(np.abs(values), axis=0)
            big = np.nan_to_num(top) > 2.0**480
            exponent[big] = np.frexp(top[big])[1]
        super().fit(self._shifted(X, exponent), y)
        self.input_exponent_ = exponent
        return self

    def transform(self, X):
        """Scale ``X`` as fitted.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, ``n_features_in_``)
            Numeric rows with the fitted columns.

        Returns
        -------
        X_out : numpy.ndarray of shape (n_samples, ``n_features_in_``), ``dtype``
            The scaled rows (float64 by default), finite for finite input.
        """
        check_is_fitted(self)
        return super().transform(self._shifted(X, getattr(self, "input_exponent_", None)))

    def inverse_transform(self, X):
        """Map scaled rows back to the input's units.

        Parameters
        ----------
        X : array-like of shape (n_samples, ``n_features_in_``)
            Scaled rows, as ``transform`` returns them.

        Returns
        -------
        X_original : numpy.ndarray of shape (n_samples, ``n_features_in_``), float64
            The rows in the input's units.
        """
        check_is_fitted(self)
        out = super().inverse_transform(X)
        exponent = getattr(self, "input_exponent_", None)
        if exponent is None or not np.any(exponent):
            return out
        return np.ldexp(out, exponent)

"""ScalerEmbedder: one scaling estimator whose method is a grid-searchable parameter."""

from __future__ import annotations

from sklearn.preprocessing import MinMaxScaler, RobustScaler, StandardScaler
from sklearn.utils._param_validation import StrOptions

from ..utils._schema import Instance, Number
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
        The fitted scikit-learn scaler.
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
    scale is taken as 1), never to NaN.

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

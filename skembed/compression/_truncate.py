"""EmbeddingTruncator: keep ``truncate_dim`` dimensions of a dense embedding."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.decomposition import PCA
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._schema import Array, CheckedStateMixin, Instance, Number


def check_width(truncate_dim, width):
    """Refuse a ``truncate_dim`` above the embedding's ``width``, naming both and the fix."""
    if truncate_dim > width:
        raise ValueError(
            f"truncate_dim={truncate_dim} is larger than the embedding's width {width}: "
            f"a truncation keeps at most every dimension. Choose truncate_dim <= {width}."
        )


class EmbeddingTruncator(
    CheckedStateMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Keep ``truncate_dim`` dimensions of a dense embedding (Matryoshka prefix or PCA).

    A model trained with a Matryoshka loss (Kusupati et al., 2022, "Matryoshka
    Representation Learning"; sentence-transformers' ``MatryoshkaLoss`` and
    ``truncate_dim``) puts the most information in its first dimensions, so
    its first ``truncate_dim`` coordinates are an embedding on their own:
    ``method="prefix"`` keeps them. Any other model spreads information over
    all coordinates, and its first ones are an arbitrary subset:
    ``method="pca"`` keeps the ``truncate_dim`` leading principal components
    of the training embeddings instead (the best linear ``truncate_dim``-wide
    summary in squared error).

    Parameters
    ----------
    truncate_dim : int, default=64
        Output width; at most the input's width (checked in ``fit``).
    method : {"pca", "prefix"}, default="pca"
        ``"prefix"``: the first ``truncate_dim`` columns (for Matryoshka-trained
        models); ``"pca"``: the leading principal components of the
        embeddings seen in ``fit`` (centred, not whitened).
    random_state : int, RandomState instance or None, default=None
        Seeds PCA's randomized solver (used for large inputs).

    Attributes
    ----------
    pca_ : sklearn.decomposition.PCA
        The fitted PCA (``method="pca"`` only).
    n_features_in_ : int
        Width of the embedding seen in ``fit``.

    See Also
    --------
    EmbeddingQuantizer : store each kept dimension in 8 bits or 1.

    References
    ----------
    .. [1] A. Kusupati et al., "Matryoshka Representation Learning", NeurIPS 2022;
       sentence-transformers' ``MatryoshkaLoss`` and ``truncate_dim``.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed import EmbeddingTruncator
    >>> X = np.arange(12, dtype=np.float32).reshape(3, 4)
    >>> EmbeddingTruncator(2, method="prefix").fit_transform(X)
    array([[0., 1.],
           [4., 5.],
           [8., 9.]], dtype=float32)
    >>> EmbeddingTruncator(1).fit(X).transform(X).shape
    (3, 1)
    """

    _state_schema = {
        "pca_": Instance(PCA, optional=True),
        "n_features_in_": Number(low=1, size="D"),
        # what PCA.transform reads (when method="pca"): finite, as wide as the input
        "pca_.n_features_in_": Number(size="D", optional=True),
        "pca_.mean_": Array("f", ("D",), finite=True, optional=True),
        "pca_.components_": Array("f", (None, "D"), finite=True, optional=True),
    }
    _parameter_constraints: dict = {
        "truncate_dim": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"pca", "prefix"})],
        "random_state": ["random_state"],
    }

    def __init__(self, truncate_dim=64, *, method="pca", random_state=None):
        self.truncate_dim = truncate_dim
        self.method = method
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the width and, for ``method="pca"``, fit the principal components.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Dense embeddings (float).
        y : None
            Ignored.

        Returns
        -------
        self : EmbeddingTruncator
            The fitted truncator.

        Raises
        ------
        ValueError
            If ``truncate_dim > n_features`` (or, for PCA, ``> n_rows``), or
            ``X`` is sparse or not finite.
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        check_width(self.truncate_dim, X.shape[1])
        if hasattr(self, "pca_"):
            del self.pca_
        if self.method == "pca":
            if self.truncate_dim > X.shape[0]:
                raise ValueError(
                    f"truncate_dim={self.truncate_dim} principal components need at least "
                    f"as many rows; fit saw {X.shape[0]}. Fit on more rows, or use "
                    "method='prefix' for a Matryoshka-trained model."
                )
            self.pca_ = PCA(self.truncate_dim, random_state=self.random_state).fit(X)
        return self

    def transform(self, X):
        """The kept dimensions.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Dense embeddings of the width seen in ``fit``.

        Returns
        -------
        Xt : ndarray of shape (n_rows, truncate_dim), dtype float32
            The kept dimensions (a prefix of the columns, or principal components).
        """
        check_is_fitted(self, "n_features_in_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        pca = getattr(self, "pca_", None)
        out = X[:, : self.truncate_dim] if pca is None else pca.transform(X)
        return np.ascontiguousarray(out, dtype=np.float32)

    @property
    def _n_features_out(self):
        return self.truncate_dim

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags

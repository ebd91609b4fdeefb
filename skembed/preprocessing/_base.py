"""Shared machinery of the preprocessing wrappers: delegate to one scikit-learn transformer."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from ..utils._schema import CheckedStateMixin, check_ids, transform_with_stored


class _DelegatingTransformer(CheckedStateMixin, TransformerMixin, BaseEstimator):
    """Base of the wrappers: ``fit`` builds ``self._make_inner()`` and delegates to it.

    Subclasses implement ``_make_inner()`` (a fresh, unfitted scikit-learn
    transformer built from the wrapper's parameters) and expose the fitted
    transformer under a public attribute named by ``_inner_attr``.
    ``n_features_in_`` and ``feature_names_in_`` are copied from the fitted
    transformer, so input validation (and its error messages) is exactly
    scikit-learn's.
    """

    _inner_attr = "estimator_"

    def _make_inner(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _inner(self):
        check_is_fitted(self, self._inner_attr)
        return getattr(self, self._inner_attr)

    def __setstate__(self, state):
        super().__setstate__(state)  # the declared schema first
        inner = vars(self).get(self._inner_attr)
        if inner is not None and hasattr(inner, "_compute_n_features_outs"):
            _rebuild_one_hot_layout(inner, f"{type(self).__name__}: stored {self._inner_attr}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner_tags = self._make_inner().__sklearn_tags__()
        tags.input_tags = inner_tags.input_tags
        tags.transformer_tags = inner_tags.transformer_tags
        tags.requires_fit = True
        return tags

    def _copy_fitted_attributes(self, inner):
        setattr(self, self._inner_attr, inner)
        self.n_features_in_ = inner.n_features_in_
        if hasattr(inner, "feature_names_in_"):
            self.feature_names_in_ = inner.feature_names_in_
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the wrapped scikit-learn transformer on ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Tabular input.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        inner = self._make_inner()
        inner.fit(X, y)
        self._copy_fitted_attributes(inner)
        return self

    def transform(self, X):
        """Transform ``X`` with the fitted scikit-learn transformer.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            Same columns as in ``fit``.

        Returns
        -------
        X_out : numpy.ndarray or scipy.sparse matrix of shape (n_samples, n_features_out), float64
            ``dtype`` where the estimator has one; ScalerEmbedder keeps float32 input float32.
        """
        inner, owner = self._inner(), type(self).__name__
        if not hasattr(inner, "_compute_n_features_outs") or inner.sparse_output:
            return transform_with_stored(inner, X, owner, self._inner_attr, passes_missing=True)
        # one-hot: built sparse and checked before densifying, which trusts the CSR indices
        inner = copy.copy(inner)
        inner.sparse_output = True
        out = transform_with_stored(inner, X, owner, self._inner_attr)
        check_ids(out.indices, out.shape[1], owner, self._inner_attr)
        return out.toarray()

    def inverse_transform(self, X):
        """Map transformed rows back to the original feature space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_out)
            Rows as :meth:`transform` returns them.

        Returns
        -------
        X_original : numpy.ndarray of shape (n_samples, ``n_features_in_``)
            The rows in the input's columns (the wrapped scikit-learn transformer's inverse).
        """
        return self._inner().inverse_transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input column names; defaults to ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : numpy.ndarray of str objects
            One name per output column, as the wrapped scikit-learn transformer names them.
        """
        return self._inner().get_feature_names_out(input_features)


def _rebuild_one_hot_layout(encoder, owner):
    """Rebuild a one-hot encoder's output widths from its categories, and check its drops.

    scikit-learn writes each row's ones at ``category index + offset`` into a
    CSR matrix of the stored widths, and densifying one whose indices pass
    its width writes past the array: the widths are derived data, so they are
    rebuilt, and each dropped index must name one of its column's categories.
    """

    def refuse(problem):
        return ValueError(
            f"{owner} {problem}. The file is damaged or was crafted: refit the estimator."
        )

    categories = encoder.categories_
    if not isinstance(categories, list) or not all(hasattr(c, "__len__") for c in categories):
        raise refuse("categories_ is not a list of arrays")
    drop = getattr(encoder, "drop_idx_", None)
    if drop is not None:
        if not isinstance(drop, np.ndarray) or drop.ndim != 1:
            raise refuse(f"drop_idx_ is {type(drop).__name__}, not a 1-D array of indices")
        if len(drop) != len(categories):
            raise refuse(f"drop_idx_ has {len(drop)} entries for {len(categories)} columns")
        for i, (idx, cats) in enumerate(zip(drop, categories, strict=True)):
            if idx is not None and not (
                isinstance(idx, (int, np.integer)) and 0 <= idx < len(cats)
            ):
                raise refuse(f"drop_idx_[{i}] is {idx!r}, not one of its {len(cats)} categories")
    try:
        encoder._n_features_outs = encoder._compute_n_features_outs()
    except Exception as exc:  # the attributes it reads do not fit together
        raise refuse(f"_n_features_outs cannot be rebuilt ({type(exc).__name__}: {exc})") from None

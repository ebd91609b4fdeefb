"""EntityEmbedder's input side: column selection, category grouping, numerics, target."""

from __future__ import annotations

from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import _check_feature_names_in

from ..utils._targets import check_target
from ..utils._validation import missing_mask
from ._preprocess import _is_dataframe, column_kinds

__all__ = ["EntityInputMixin", "embedding_width"]

#: widest table the "auto" rule gives (Guo & Berkhahn's tables are at most this wide)
MAX_AUTO_WIDTH = 50


def embedding_width(cardinality):
    """Width the ``embedding_dims="auto"`` rule gives a column: ``min(50, (cardinality + 1) // 2)``.

    Parameters
    ----------
    cardinality : int
        Number of distinct values of the column in ``fit`` (missing values
        count as one value, infrequent ones are counted).

    Returns
    -------
    width : int
        At least 1.

    Examples
    --------
    >>> [embedding_width(c) for c in (1, 2, 3, 10, 99, 100, 4000)]
    [1, 1, 2, 5, 50, 50, 50]
    """
    return int(max(1, min(MAX_AUTO_WIDTH, (int(cardinality) + 1) // 2)))


class Standardised(NamedTuple):
    """The numeric columns standardised for training, and the statistics that did it."""

    #: per numeric column, the mean (0 where there is none)
    mean: np.ndarray
    #: per numeric column, the standard deviation (1 where it is 0 or there is none)
    scale: np.ndarray
    #: ``(numeric - mean) / scale`` as float32, missing values 0
    z: np.ndarray


def _missing_to_nan(values):
    """Object array with every None/NaN/pd.NA/NaT replaced by ``float('nan')`` (one category)."""
    values = np.asarray(values, dtype=object)
    mask = missing_mask(values)
    if mask.any():
        values = values.copy()
        values[mask] = np.nan
    return values


class EntityInputMixin:
    """Methods of :class:`~skembed.tabular.EntityEmbedder` that read ``X`` and ``y`` (not public)."""

    # ------------------------------------------------------------------ categories
    def _group_categories(self, X, n_samples):
        """Codes ``(n_samples, n_embedded)`` int64 of the embedded columns, learning categories.

        Sets ``categories_`` (frequent ones, in order of first appearance; code
        ``i + 1``) and ``infrequent_categories_`` (code 0, the unknown row);
        returns ``(codes, cardinalities)`` (cardinalities count infrequent
        values). Written with ``pandas.factorize`` rather than scikit-learn's
        ``OrdinalEncoder(min_frequency=...)``: that encoder refuses columns
        mixing strings and numbers or holding ``pd.NA`` (TypeError), and keeps
        None and NaN apart, where here any hashable values are categories
        and every missing value is one category.
        """
        import pandas as pd

        threshold = (
            self.min_frequency
            if isinstance(self.min_frequency, Integral)
            else self.min_frequency * n_samples
        )
        cat = self.categorical_features_
        categories, infrequent, cards = [], [], []
        codes = np.empty((n_samples, cat.size), dtype=np.int64)
        for k, j in enumerate(cat):
            raw, uniques = pd.factorize(_missing_to_nan(self._column(X, j)), use_na_sentinel=False)
            counts = np.bincount(raw, minlength=len(uniques))
            frequent = counts >= threshold
            new_code = np.zeros(len(uniques), dtype=np.int64)
            new_code[frequent] = np.arange(1, frequent.sum() + 1)
            codes[:, k] = new_code[raw]
            uniques = np.asarray(uniques, dtype=object)
            categories.append(uniques[frequent])
            infrequent.append(uniques[~frequent])
            cards.append(len(uniques))
        self.categories_, self.infrequent_categories_ = categories, infrequent
        return codes, cards

    # ------------------------------------------------------------------ columns
    @staticmethod
    def _column(X, j):
        return X.iloc[:, j].to_numpy() if _is_dataframe(X) else np.asarray(X)[:, j]

    def _select_columns(self, X):
        n = X.shape[1]
        spec = self.categorical_features
        if isinstance(spec, str) and spec == "all":
            cat = np.arange(n)
        elif isinstance(spec, str):
            kinds = column_kinds(X)[1]
            if _is_dataframe(X):
                names = list(X.columns)
                kinds = [names.index(c) for c in kinds]
            cat = np.asarray(kinds, dtype=int)
        else:
            spec = np.asarray(spec)
            if spec.dtype.kind == "b":
                if spec.shape != (n,):
                    raise ValueError(
                        f"categorical_features as a boolean mask must have {n} entries (one "
                        f"per column), got shape {spec.shape}."
                    )
                cat = np.flatnonzero(spec)
            elif spec.dtype.kind in "iu":
                if spec.size and (spec.min() < -n or spec.max() >= n):
                    raise ValueError(
                        f"categorical_features has positions outside [0, {n}): {spec.tolist()}."
                    )
                cat = np.unique(spec % n)
            elif spec.dtype.kind in "UO":
                names = getattr(self, "feature_names_in_", None)
                if names is None:
                    raise ValueError(
                        "categorical_features holds column names but X has no column names; "
                        "pass positions or a boolean mask, or fit on a DataFrame."
                    )
                missing = [s for s in spec.tolist() if s not in set(names)]
                if missing:
                    raise ValueError(
                        f"categorical_features names columns not in X: {missing}. Columns "
                        f"are {list(names)}."
                    )
                cat = np.unique([list(names).index(s) for s in spec.tolist()])
            else:
                raise ValueError(
                    "categorical_features must be 'from_dtype', 'all', or an array of column "
                    f"positions, names or a boolean mask; got {self.categorical_features!r}."
                )
        if cat.size == 0:
            raise ValueError(
                f"{type(self).__name__} found no categorical column in X (categorical_features="
                f"{self.categorical_features!r} selects object, category, string and bool "
                "columns). Pass categorical_features=[...] naming the columns to embed, or 'all'."
            )
        return cat.astype(np.intp), np.setdiff1d(np.arange(n), cat).astype(np.intp)

    def _widths(self, cards):
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        spec = self.embedding_dims
        widths = [embedding_width(c) for c in cards]
        if isinstance(spec, Integral):
            return [int(spec)] * len(cards)
        if isinstance(spec, dict):
            positions = list(self.categorical_features_)
            for key, width in spec.items():
                j = names.index(key) if names is not None and key in names else key
                if not isinstance(j, Integral) or int(j) not in positions:
                    raise ValueError(
                        f"embedding_dims has key {key!r}, which is not an embedded column; "
                        f"the embedded columns are {self._cat_names()}."
                    )
                if not isinstance(width, Integral) or width < 1:
                    raise ValueError(
                        f"embedding_dims[{key!r}] must be a positive int, got {width!r}."
                    )
                widths[positions.index(int(j))] = int(width)
        return widths

    def _input_names(self):
        return _check_feature_names_in(self, None)

    def _cat_names(self):
        names = self._input_names()
        return [str(names[j]) for j in self.categorical_features_]

    def _numeric(self, X):
        """Numeric columns as float64 ``(n_samples, n_numeric)``; infinity is an error."""
        cols = self.numeric_features_
        if cols.size == 0:
            return np.zeros((X.shape[0], 0))
        try:
            if _is_dataframe(X):
                values = X.iloc[:, cols].to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                values = np.asarray(X)[:, cols].astype(np.float64)
        except (TypeError, ValueError) as exc:
            names = self._input_names()
            raise ValueError(
                f"The columns {[str(names[j]) for j in cols]} are treated as numeric but do not "
                f"all convert to float ({exc}); list the categorical ones in "
                "categorical_features."
            ) from exc
        if np.isinf(values).any():
            raise ValueError(
                "Input contains infinity in a numeric column; replace it or treat the column "
                "as categorical (categorical_features)."
            )
        return values

    def _standardise(self, numeric):
        """:class:`Standardised` numeric columns; a column whose variance overflows is an error."""
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: refused just below
            mean = np.nanmean(numeric, axis=0) if numeric.shape[1] else np.zeros(0)
            scale = np.nanstd(numeric, axis=0) if numeric.shape[1] else np.zeros(0)
        overflow = ~np.isfinite(scale) & np.isfinite(numeric).any(axis=0)
        if overflow.any():  # 1e308 made the loss NaN and the advice was to lower learning_rate
            j = int(np.flatnonzero(overflow)[0])
            row = int(np.nanargmax(np.abs(numeric[:, j])))
            raise ValueError(
                f"{type(self).__name__}: numeric column "
                f"{self._input_names()[self.numeric_features_[j]]!r} holds "
                f"{numeric[row, j]:g} in row {row}, too large to standardise (its variance "
                "overflows float64): rescale that column (e.g. a log) or drop the row."
            )
        mean = np.where(np.isfinite(mean), mean, 0.0)
        scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
        z = np.nan_to_num((numeric - mean) / scale, nan=0.0).astype(np.float32)
        return Standardised(mean, scale, z)

    def _codes(self, X):
        """Row codes ``(n_samples, n_embedded)`` int64: 0 unknown/infrequent, i + 1 category i."""
        import pandas as pd

        out = np.empty((X.shape[0], len(self.categorical_features_)), dtype=np.int64)
        for k, j in enumerate(self.categorical_features_):
            values = _missing_to_nan(self._column(X, j))
            idx = pd.Index(self.categories_[k]).get_indexer(values)
            if self.handle_unknown == "error" and (idx < 0).any():
                seen = pd.Index(self.infrequent_categories_[k]).get_indexer(values[idx < 0])
                if (seen < 0).any():
                    unknown = pd.unique(values[idx < 0][seen < 0])[:5].tolist()
                    raise ValueError(
                        f"Found unknown categories {unknown} in column {self._cat_names()[k]!r} "
                        "during transform; set handle_unknown='infrequent' to embed them with "
                        "the unknown row."
                    )
            out[:, k] = idx + 1
        return out

    # ------------------------------------------------------------------ target
    def _check_target(self, y, n_samples):
        """``(kind, classes, target)``: :func:`~skembed.utils._targets.check_target`'s check,
        then the training target: float32 class codes, or the standardised continuous ``y``."""
        target, kind, classes = check_target(
            y,
            n_samples,
            target_type=self.target_type,
            estimator=type(self).__name__,
            constant_ok=True,
        )
        if kind == "continuous":
            std = target.std()
            target = (target - target.mean()) / (std if std > 0 else 1.0)
            return kind, None, target.astype(np.float32)
        return kind, classes, target.astype(np.float32)

"""Tests of ``skembed/compression/_truncate.py``: prefix, PCA, the width check."""

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.utils.estimator_checks import parametrize_with_checks

from skembed import EmbeddingTruncator


def test_prefix_keeps_the_first_columns():
    X = np.arange(20.0).reshape(4, 5)
    out = EmbeddingTruncator(3, method="prefix").fit_transform(X)
    np.testing.assert_array_equal(out, X[:, :3])
    assert out.dtype == np.float32


def test_pca_equals_sklearn_pca():
    X = np.random.RandomState(0).normal(size=(60, 10))
    out = EmbeddingTruncator(4, random_state=0).fit_transform(X)
    ref = PCA(4, random_state=0).fit_transform(X)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    names = EmbeddingTruncator(4).fit(X).get_feature_names_out()
    assert list(names) == [f"embeddingtruncator{i}" for i in range(4)]


def test_pca_keeps_more_than_an_arbitrary_prefix():
    """On data whose variance sits in the last columns, PCA keeps it and the prefix does not."""
    rng = np.random.RandomState(0)
    X = np.hstack([rng.normal(scale=0.01, size=(200, 6)), rng.normal(size=(200, 2))])
    for method, low, high in (("pca", 0.99, 1.0), ("prefix", 0.0, 0.01)):
        out = EmbeddingTruncator(2, method=method).fit_transform(X).astype(np.float64)
        kept = out.var(0).sum() / X.var(0).sum()
        assert low <= kept <= high, (method, kept)


def test_truncate_dim_larger_than_the_width_is_refused():
    X = np.ones((10, 4)) + np.arange(10)[:, None]
    with pytest.raises(ValueError, match=r"truncate_dim=8 is larger than the embedding's width 4"):
        EmbeddingTruncator(8, method="prefix").fit(X)
    with pytest.raises(ValueError, match="at least as many rows"):
        EmbeddingTruncator(3).fit(np.random.RandomState(0).normal(size=(2, 4)))


@parametrize_with_checks(
    [EmbeddingTruncator(1), EmbeddingTruncator(1, method="prefix")],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)

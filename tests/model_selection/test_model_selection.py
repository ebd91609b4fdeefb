import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    return texts[::8], labels[::8]  # 279 articles, every class


class Shrink(TransformerMixin, BaseEstimator):
    """Multiply features by ``factor``: the same embedding at another scale."""

    def __init__(self, factor=1e-3):
        self.factor = factor

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def transform(self, X):
        return np.asarray(X) * self.factor


def _double(X):
    return X * 2

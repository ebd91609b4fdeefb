"""StaticEmbedder's distillation formulas: Zipf SIF weights and the PCA of the token table."""

from __future__ import annotations

import numpy as np

from skembed.text.transformer._static_distil import pca_scores, zipf_sif_weights


def test_zipf_sif_weights_formula():
    w = zipf_sif_weights(4, 0.1)
    inv = 1 / np.array([2, 3, 4, 5])
    p = inv / inv.sum()
    np.testing.assert_allclose(w, 0.1 / (0.1 + p))
    np.testing.assert_array_equal(zipf_sif_weights(3, None), 1.0)


def test_pca_scores_are_sklearn_pca_up_to_sign():
    from sklearn.decomposition import PCA

    X = np.random.RandomState(0).normal(size=(50, 6)) * np.arange(1, 7)
    scores, ratio = pca_scores(X, 3)
    ref = PCA(3, svd_solver="full").fit(X)
    np.testing.assert_allclose(np.abs(scores), np.abs(ref.transform(X)), atol=1e-9)
    np.testing.assert_allclose(ratio, ref.explained_variance_ratio_, rtol=1e-9)
    # sign rule: each component's largest-magnitude score is positive
    assert (scores[np.abs(scores).argmax(0), np.arange(3)] > 0).all()

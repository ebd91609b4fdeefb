"""Fold-in: the exact user step of ALS, and item2vec's weighted mean, by hand."""

from __future__ import annotations

import numpy as np

from skembed.interactions._factorize import als_fold_in, mean_fold_in


def test_als_fold_in_solves_the_normal_equations():
    items = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], np.float32)
    # items 0 and 2 with weights 1 and 3, confidence_scale 2: extra = 2, 6
    got = als_fold_in(items, [0, 2], [1.0, 3.0], 0.5, 2.0)
    Y = items.astype(float)
    A = Y.T @ Y + 0.5 * np.eye(2) + 2 * np.outer(Y[0], Y[0]) + 6 * np.outer(Y[2], Y[2])
    b = 3 * Y[0] + 7 * Y[2]
    np.testing.assert_allclose(got, np.linalg.solve(A, b), rtol=1e-6)


def test_mean_fold_in_is_the_weighted_mean_of_input_vectors():
    inputs = np.array([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]], np.float32)
    np.testing.assert_allclose(mean_fold_in(inputs, [1, 2], [1.0, 3.0]), [3.0, 3.5])

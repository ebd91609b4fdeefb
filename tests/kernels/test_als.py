"""The ALS kernels: the Gram matrix, CG against the exact solve, equality with implicit's
AlternatingLeastSquares from the same start, the loss by hand, any thread count."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from skembed.kernels.als import CsrLog, cg_half_step, implicit_loss, regularized_gram


def _problem(n_rows=300, n_cols=200, d=8, seed=0):
    rng = np.random.default_rng(seed)
    matrix = sp.random(n_rows, n_cols, density=0.05, random_state=seed, format="csr")
    matrix.data[:] = rng.integers(1, 5, matrix.nnz)
    X = (rng.random((n_rows, d)) * 0.01).astype(np.float32)
    Y = (rng.random((n_cols, d)) * 0.01).astype(np.float32)
    return matrix, X, Y


def _log(matrix, scale):
    return CsrLog(
        matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32), scale * matrix.data
    )


def test_regularized_gram_is_yty_plus_ridge():
    Y = np.random.default_rng(0).standard_normal((1300, 5)).astype(np.float32)
    expected = Y.astype(np.float64).T @ Y + 0.5 * np.eye(5)
    np.testing.assert_allclose(regularized_gram(Y, 0.5), expected, rtol=1e-6)  # float32 rows


def test_enough_cg_steps_solve_each_row_exactly():
    matrix, X, Y = _problem()
    Y = np.random.default_rng(1).standard_normal(Y.shape).astype(np.float32)
    cg_half_step(_log(matrix, 2.0), X, Y, 0.1, 50)
    Y64 = Y.astype(np.float64)
    for u in (0, 7, 123):
        cols = matrix.indices[matrix.indptr[u] : matrix.indptr[u + 1]]
        extra = 2.0 * matrix.data[matrix.indptr[u] : matrix.indptr[u + 1]]
        A = Y64.T @ Y64 + 0.1 * np.eye(8) + (Y64[cols].T * extra) @ Y64[cols]
        expected = np.linalg.solve(A, Y64[cols].T @ (1.0 + extra))
        np.testing.assert_allclose(X[u], expected, rtol=1e-4, atol=1e-5)


def test_three_iterations_equal_implicits_from_the_same_start():
    als = pytest.importorskip("implicit.cpu.als")
    matrix, X, Y = _problem()
    alpha = 5.0  # implicit's confidence alpha * w is 1 + extra with extra = alpha * w - 1
    reference = als.AlternatingLeastSquares(
        factors=8, iterations=3, regularization=0.1, alpha=alpha, random_state=0, num_threads=1
    )
    reference.user_factors, reference.item_factors = X.copy(), Y.copy()
    reference.fit(matrix.astype(np.float32), show_progress=False)
    by_user = CsrLog(
        matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32), alpha * matrix.data - 1.0
    )
    transposed = sp.csr_matrix(matrix.T)
    by_item = CsrLog(
        transposed.indptr.astype(np.int64),
        transposed.indices.astype(np.int32),
        alpha * transposed.data - 1.0,
    )
    for _ in range(3):
        cg_half_step(by_user, X, Y, 0.1, 3)
        cg_half_step(by_item, Y, X, 0.1, 3)
    scale = np.abs(reference.user_factors).max()
    assert np.abs(X - reference.user_factors).max() < 1e-3 * scale  # sums in another order
    assert np.abs(Y - reference.item_factors).max() < 1e-3 * np.abs(Y).max()


def test_loss_by_hand():
    matrix, X, Y = _problem(n_rows=6, n_cols=5, d=3, seed=2)
    X, Y = X * 100, Y * 100
    dense = matrix.toarray()
    confidence = 1.0 + 3.0 * dense
    preference = (dense > 0).astype(float)
    scores = X.astype(np.float64) @ Y.T.astype(np.float64)
    objective = (confidence * (preference - scores) ** 2).sum()
    objective += 0.2 * ((X.astype(np.float64) ** 2).sum() + (Y.astype(np.float64) ** 2).sum())
    expected = objective / (confidence.sum())
    assert implicit_loss(_log(matrix, 3.0), X, Y, 0.2) == pytest.approx(expected, rel=1e-5)


def test_same_factors_on_every_thread_count_of_the_pool():
    runs = []
    for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
        numba.set_num_threads(threads)
        matrix, X, Y = _problem(n_rows=3000, n_cols=1200, seed=3)
        cg_half_step(_log(matrix, 4.0), X, Y, 0.1, 3)
        runs.append(X)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for run in runs[1:]:
        np.testing.assert_array_equal(runs[0], run)


def test_warm_up_compiles_the_signature_interaction_fits_use():
    # a fit after the warm-up adds no signature: the warm-up's argument types are the fit's
    from skembed.interactions import InteractionEmbedder
    from skembed.kernels.als import warm_up

    # each user observed one item (confidence 2) of identity item factors: 2 / (2 + 0.1)
    np.testing.assert_allclose(warm_up(), np.diag([2 / 2.1] * 2), rtol=1e-6)
    compiled = list(cg_half_step.signatures)
    log = [["a", "x"], ["a", "y"], ["b", "y"], ["c", "z"]]
    InteractionEmbedder(vector_size=2, epochs=1, n_jobs=1).fit(log)
    assert list(cg_half_step.signatures) == compiled

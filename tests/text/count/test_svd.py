"""The torch-device truncated SVD of TfidfLSA and PPMIEmbedder against numpy's exact SVD."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

torch = pytest.importorskip("torch")

from skembed.text.count._svd import to_torch_sparse, torch_truncated_svd  # noqa: E402


def test_to_torch_sparse_keeps_every_entry():
    X = sp.csr_matrix(np.array([[0.0, 2.5, 0.0], [1.0, 0.0, -3.0]]))
    dense = to_torch_sparse(X, "cpu").to_dense()
    assert dense.dtype == torch.float32
    np.testing.assert_array_equal(dense.numpy(), X.toarray())


def test_rank_three_matrix_is_recovered_with_svd_flip_signs():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 25))  # exactly rank 3
    X = sp.csr_matrix(M)
    U, S, VT = torch_truncated_svd(X, 3, n_iter=7, seed=1)
    ref_s = np.linalg.svd(M, compute_uv=False)[:3]
    np.testing.assert_allclose(S, ref_s, rtol=1e-4)
    assert U.shape == (40, 3) and VT.shape == (3, 25) and U.dtype == np.float64
    # each row of VT has its largest-magnitude entry positive (scikit-learn's svd_flip)
    assert (VT[np.arange(3), np.abs(VT).argmax(1)] > 0).all()
    # the global torch RNG is left alone
    state = torch.random.get_rng_state()
    again = torch_truncated_svd(X, 3, n_iter=7, seed=1)
    assert torch.equal(torch.random.get_rng_state(), state)
    np.testing.assert_array_equal(again[1], S)

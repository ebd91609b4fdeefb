"""Truncated SVD of a sparse matrix with torch (``torch.svd_lowrank``), shared by TfidfLSA and PPMIEmbedder.

The numpy path of both estimators is scikit-learn's (``TruncatedSVD`` /
``randomized_svd``); this module is only the torch-device path.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...utils._seeding import forked_torch_rng


def to_torch_sparse(X, device):
    """A scipy sparse matrix as a torch sparse COO tensor (float32) on ``device``."""
    import torch

    coo = sp.coo_matrix(X)
    indices = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
    values = torch.from_numpy(coo.data.astype(np.float32))
    return torch.sparse_coo_tensor(
        indices, values, coo.shape, device=device, check_invariants=False
    ).coalesce()


def torch_truncated_svd(X, n_components, *, n_oversamples=10, n_iter=5, seed=0, device="cpu"):
    """Randomized truncated SVD of a sparse matrix on a torch device.

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n_rows, n_cols)
    n_components : int
        Number of singular triplets, at most ``min(n_rows, n_cols)``.
    n_oversamples : int, default=10
        Extra random directions (Halko, Martinsson & Tropp 2011).
    n_iter : int, default=5
        Power iterations.
    seed : int, default=0
        Seed of a local torch generator state (the global torch RNG state is
        saved and restored).
    device : str, default="cpu"

    Returns
    -------
    U : numpy.ndarray of shape (n_rows, n_components), float64
    S : numpy.ndarray of shape (n_components,), float64
        Decreasing singular values.
    VT : numpy.ndarray of shape (n_components, n_cols), float64
        Signs fixed as scikit-learn's ``svd_flip(u_based_decision=False)`` so
        results are deterministic and comparable with the numpy path.
    """
    import torch

    A = to_torch_sparse(X, device)
    q = min(n_components + n_oversamples, min(X.shape))
    with forked_torch_rng(seed, device):
        U, S, V = torch.svd_lowrank(A, q=q, niter=n_iter)
    U = U[:, :n_components].double().cpu().numpy()
    S = S[:n_components].double().cpu().numpy()
    VT = V[:, :n_components].T.double().cpu().numpy()
    # svd_flip, v-based: largest-magnitude entry of each row of VT positive
    signs = np.sign(VT[np.arange(VT.shape[0]), np.argmax(np.abs(VT), axis=1)])
    signs[signs == 0] = 1.0
    return U * signs, S, VT * signs[:, None]

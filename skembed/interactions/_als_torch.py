"""Implicit ALS on a torch device: the conjugate-gradient half-step of
:mod:`skembed.kernels.als`, for all rows at once.

Each CG step is a few dense and scatter operations over the observed pairs, so a GPU runs a
half-step as one batch (as implicit's CUDA solver does). torch is imported by the functions
that run, never at import time.
"""

from __future__ import annotations

import numpy as np

from ..kernels.als import CG_TOLERANCE


def _apply(vectors, Y, gram, rows, cols, extra):
    """``(gram + Y^T diag(extra_u) Y) v_u`` for every row ``u`` at once."""
    out = vectors @ gram
    gathered = Y[cols]
    weights = (gathered * vectors[rows]).sum(dim=1) * extra
    return out.index_add_(0, rows, gathered * weights[:, None])


def cg_half_step_torch(pairs, X, Y, regularization, cg_steps):
    """Update every row of ``X`` (a float32 tensor) in place with ``Y`` fixed.

    Parameters
    ----------
    pairs : tuple of torch.Tensor
        ``(rows, cols, extra)`` of the observed pairs: row and column ids (int64) and the
        confidence above 1 (float32), on the device of ``X``.
    X, Y : torch.Tensor of shape (n_rows, d) and (n_columns, d), float32
    regularization : float
    cg_steps : int
    """
    import torch

    rows, cols, extra = pairs
    gram = Y.T @ Y + regularization * torch.eye(Y.shape[1], device=Y.device, dtype=Y.dtype)
    target = torch.zeros_like(X).index_add_(0, rows, Y[cols] * (1.0 + extra)[:, None])
    r = target - _apply(X, Y, gram, rows, cols, extra)
    p = r.clone()
    rs_old = (r * r).sum(dim=1)
    for _ in range(cg_steps):
        active = rs_old >= CG_TOLERANCE
        Ap = _apply(p, Y, gram, rows, cols, extra)
        curvature = (p * Ap).sum(dim=1)
        step = torch.where(active, rs_old / torch.where(active, curvature, 1.0), 0.0)
        X += step[:, None] * p
        r -= step[:, None] * Ap
        rs_new = (r * r).sum(dim=1)
        ratio = torch.where(active, rs_new / torch.where(active, rs_old, 1.0), 0.0)
        p = r + ratio[:, None] * p
        rs_old = torch.where(active, rs_new, rs_old)


def fit_als_torch(matrix, users, items, config, device):
    """Alternate the half-steps on ``device`` from the numpy start ``users``, ``items``."""
    import scipy.sparse as sp
    import torch

    def pairs(csr):
        coo = sp.coo_matrix(csr)
        return (
            torch.as_tensor(coo.row.astype(np.int64), device=device),
            torch.as_tensor(coo.col.astype(np.int64), device=device),
            torch.as_tensor((config.confidence_scale * coo.data).astype(np.float32), device=device),
        )

    by_user, by_item = pairs(matrix), pairs(sp.csr_matrix(matrix.T))
    X = torch.as_tensor(users, device=device)
    Y = torch.as_tensor(items, device=device)
    reg, steps = float(config.regularization), int(config.cg_steps)
    with torch.no_grad():
        for _ in range(config.epochs):
            cg_half_step_torch(by_user, X, Y, reg, steps)
            cg_half_step_torch(by_item, Y, X, reg, steps)
    return X.cpu().numpy(), Y.cpu().numpy()

"""GloVe's torch module: the dense and sparse AdaGrad steps agree, and epochs need no host sync."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.glove import GloVeModel  # noqa: E402


def _problem(n_words=40, nnz=300, seed=0):
    rng = np.random.default_rng(seed)
    i = torch.from_numpy(rng.integers(0, n_words, nnz))
    j = torch.from_numpy(rng.integers(0, n_words, nnz))
    x = torch.from_numpy(rng.integers(1, 50, nnz).astype(np.float32))
    return i, j, x.log(), torch.clamp(x / 20, max=1) ** 0.75


@pytest.mark.parametrize("batch_size", [7, 64, 300])
def test_dense_and_sparse_adagrad_steps_give_the_same_parameters(batch_size):
    i, j, log_x, f_x = _problem()
    models = []
    for dense in (False, True):
        m = GloVeModel(40, 5)
        m.reset_parameters(torch.Generator().manual_seed(1))
        for start in range(0, i.shape[0], batch_size):
            s = slice(start, start + batch_size)
            m._step(i[s], j[s], log_x[s], f_x[s], 0.05, 100.0, dense)
        models.append(m)
    for name in ("W", "C", "bw", "bc", "gW", "gC", "gbw", "gbc"):
        a, b = (getattr(m, name).detach().numpy() for m in models)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # the gradient sums are left at zero for the next step
    for buf in models[0]._grad_sums() + models[1]._grad_sums():
        assert not buf.any()


def test_train_epoch_equals_consecutive_adagrad_steps():
    i, j, log_x, f_x = _problem(seed=2)
    order = torch.randperm(i.shape[0], generator=torch.Generator().manual_seed(0))
    a, b = GloVeModel(40, 5), GloVeModel(40, 5)
    for m in (a, b):
        m.reset_parameters(torch.Generator().manual_seed(3))
    total = a.train_epoch(i, j, log_x, f_x, order, 32, 0.05)
    ref = 0.0
    for start in range(0, order.shape[0], 32):
        idx = order[start : start + 32]
        ref += b.adagrad_step(i[idx], j[idx], log_x[idx], f_x[idx], 0.05)
    assert total.dtype == torch.float64 and total.dim() == 0
    assert float(total) == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(a.W.numpy(), b.W.numpy(), rtol=1e-6, atol=1e-7)

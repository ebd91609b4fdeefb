"""MeanBagLinear: model2vec's trainable static model (weighted mean, normalisation, folding)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.static import MeanBagLinear, bag_batch  # noqa: E402

TABLE = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
IDS = np.array([0, 1, 2, 2, 1])  # documents [0, 1], [2], [], [2, 1]
INDPTR = np.array([0, 2, 3, 3, 5])


def test_pooled_is_the_weighted_mean_of_the_rows_by_hand():
    model = MeanBagLinear(TABLE, 2)
    with torch.no_grad():
        model.weights.copy_(torch.tensor([2.0, 1.0, 0.5]))
        pooled = model.pooled(*bag_batch(IDS, INDPTR, np.arange(4), "cpu")).numpy()
    # (2*[1,0] + 1*[0,2]) / 2, 0.5*[3,4] / 1, zeros, (0.5*[3,4] + [0,2]) / 2
    expected = [[1.0, 1.0], [1.5, 2.0], [0.0, 0.0], [0.75, 2.0]]
    np.testing.assert_allclose(pooled, expected, rtol=1e-6)
    model.normalize = True
    with torch.no_grad():
        unit = model.pooled(*bag_batch(IDS, INDPTR, np.array([1]), "cpu")).numpy()
    np.testing.assert_allclose(unit, [[0.6, 0.8]], rtol=1e-6)


def test_folded_table_makes_the_plain_mean_the_pooled_vector():
    model = MeanBagLinear(TABLE, 3, normalize=False)
    with torch.no_grad():
        model.weights.copy_(torch.tensor([0.2, 1.5, -1.0]))
        pooled = model.pooled(*bag_batch(IDS, INDPTR, np.arange(4), "cpu")).numpy()
    folded = model.folded_table().numpy()
    means = [
        folded[IDS[s:e]].mean(0) if e > s else np.zeros(2)
        for s, e in zip(INDPTR[:-1], INDPTR[1:], strict=True)
    ]
    np.testing.assert_allclose(pooled, np.array(means), rtol=1e-6)


def test_weights_and_table_get_gradients_sparse_for_the_table():
    model = MeanBagLinear(TABLE, 2, normalize=True)
    model.train()
    out = model(*bag_batch(IDS, INDPTR, np.array([0, 3]), "cpu"))
    torch.nn.functional.cross_entropy(out, torch.tensor([0, 1])).backward()
    assert model.table.grad.is_sparse
    grad = model.weights.grad.numpy()
    assert grad.shape == (3,) and np.all(grad != 0)  # every token of the batch moves its weight
    assert model.weights.dtype == torch.float32 and model.weights.detach().numpy().tolist() == [
        1,
        1,
        1,
    ]

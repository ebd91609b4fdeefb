"""EntityEmbeddingNet and the supervised losses of the entity-embedding estimator."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from skembed.nn.entity import EntityEmbeddingNet, supervised_loss  # noqa: E402


def test_embed_concatenates_each_columns_table_row():
    net = EntityEmbeddingNet([4, 10], [2, 3], n_numeric=1, n_outputs=2, hidden_layer_sizes=())
    codes = torch.tensor([[1, 9], [3, 0]])
    rows = net.embed(codes)
    expected = torch.cat([net.embeddings[0].weight[[1, 3]], net.embeddings[1].weight[[9, 0]]], 1)
    assert torch.equal(rows, expected)
    # a linear head reads the embeddings then the numeric columns
    numeric = torch.tensor([[0.5], [-1.0]])
    out = net(codes, numeric)
    assert torch.allclose(out, net.head(torch.cat([rows, numeric], 1)))


def test_mismatched_widths_are_refused():
    with pytest.raises(ValueError, match="2 cardinalities but 1 embedding widths"):
        EntityEmbeddingNet([4, 10], [2], n_numeric=0, n_outputs=1)


def test_supervised_loss_by_hand():
    out = torch.tensor([[0.0, math.log(3.0)], [0.0, 0.0]])
    # class 1 of softmax([0, log 3]) has p = 3/4; class 0 of [0, 0] has p = 1/2
    multi = supervised_loss(out, torch.tensor([1.0, 0.0]), "multiclass")
    assert float(multi) == pytest.approx(-(math.log(0.75) + math.log(0.5)) / 2)
    reg = supervised_loss(out[:, :1], torch.tensor([2.0, -4.0]), "continuous")
    assert float(reg) == pytest.approx(0.5 * (4 + 16) / 2)

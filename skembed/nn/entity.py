"""Entity-embedding network for categorical columns (torch only, no sklearn).

Guo & Berkhahn (2016): one ``nn.Embedding`` per categorical column; the
looked-up rows are concatenated with the numeric columns and fed to a small
MLP trained on the supervised target. The embedding tables are the learned
representation. :class:`skembed.tabular.entity.EntityEmbedder` builds this
module in ``fit``; the module knows nothing of encoding categories, devices
or training loops. It keeps the plain-Python ``config`` dict it was built
from, so it can be rebuilt and its ``state_dict`` reloaded with
``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .autoencoder import mlp

__all__ = ["EntityEmbeddingNet", "supervised_loss"]

#: standard deviation of the initial embedding rows (fast.ai's choice; keeps the
#: first layer's input small whatever the number of columns)
EMBEDDING_INIT_STD = 0.01


class EntityEmbeddingNet(nn.Module):
    """Embeddings of categorical codes + numeric columns -> MLP -> target logits/values.

    Parameters
    ----------
    cardinalities : sequence of int
        Rows of each column's table (known categories plus the shared
        unknown/infrequent row; the caller decides the code layout).
    embedding_dims : sequence of int
        Width of each column's table.
    n_numeric : int
        Numeric columns appended to the concatenated embeddings.
    n_outputs : int
        1 for regression and binary targets, the number of classes otherwise.
    hidden_layer_sizes : tuple of int, default=(64, 32)
        Widths of the MLP head's hidden layers; ``()`` gives a linear head.
    activation : str, default="relu"
        Key of :data:`skembed.nn.autoencoder.ACTIVATIONS`.
    dropout : float, default=0.0
        Dropout on the concatenated embeddings and after each hidden layer.

    Examples
    --------
    >>> import torch
    >>> net = EntityEmbeddingNet([4, 10], [2, 5], n_numeric=1, n_outputs=1)
    >>> codes = torch.tensor([[0, 3], [2, 9]])
    >>> net.embed(codes).shape
    torch.Size([2, 7])
    >>> net(codes, torch.zeros(2, 1)).shape
    torch.Size([2, 1])
    """

    kind = "entity"

    def __init__(
        self,
        cardinalities,
        embedding_dims,
        n_numeric,
        n_outputs,
        hidden_layer_sizes=(64, 32),
        activation="relu",
        dropout=0.0,
    ):
        super().__init__()
        cards = [int(c) for c in cardinalities]
        dims = [int(d) for d in embedding_dims]
        if len(cards) != len(dims):
            raise ValueError(f"{len(cards)} cardinalities but {len(dims)} embedding widths.")
        hidden = [int(h) for h in hidden_layer_sizes]
        self.config = dict(
            cardinalities=tuple(cards),
            embedding_dims=tuple(dims),
            n_numeric=int(n_numeric),
            n_outputs=int(n_outputs),
            hidden_layer_sizes=tuple(hidden),
            activation=str(activation),
            dropout=float(dropout),
        )
        self.embeddings = nn.ModuleList(
            nn.Embedding(c, d) for c, d in zip(cards, dims, strict=True)
        )
        for table in self.embeddings:
            nn.init.normal_(table.weight, std=EMBEDDING_INIT_STD)
        n_in = sum(dims) + int(n_numeric)
        self.input_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.body = mlp([n_in, *hidden], activation, dropout)
        self.head = nn.Linear(hidden[-1] if hidden else n_in, int(n_outputs))

    def embed(self, codes):
        """Concatenated embedding rows: ``(batch, n_columns) long -> (batch, sum(dims))``."""
        return torch.cat([table(codes[:, j]) for j, table in enumerate(self.embeddings)], dim=1)

    def forward(self, codes, numeric):
        """Target logits (classification) or values (regression), ``(batch, n_outputs)``."""
        x = self.input_dropout(self.embed(codes))
        if numeric.shape[1]:
            x = torch.cat([x, numeric], dim=1)
        return self.head(self.body(x))


def supervised_loss(output, target, target_type):
    """Mean loss of a batch: binary cross-entropy, cross-entropy or squared error.

    Parameters
    ----------
    output : torch.Tensor of shape (batch, n_outputs)
        The network's output.
    target : torch.Tensor of shape (batch,)
        0/1 floats (``"binary"``), class indices as floats (``"multiclass"``)
        or standardised values (``"continuous"``).
    target_type : {"binary", "multiclass", "continuous"}

    Returns
    -------
    loss : torch.Tensor, scalar
        Mean over the batch (``0.5 * squared error`` for ``"continuous"``).

    Examples
    --------
    >>> import torch
    >>> out = torch.zeros(2, 1)
    >>> round(float(supervised_loss(out, torch.tensor([0.0, 1.0]), "binary")), 4)
    0.6931
    >>> float(supervised_loss(out, torch.tensor([2.0, 0.0]), "continuous"))
    1.0
    """
    if target_type == "binary":
        return F.binary_cross_entropy_with_logits(output[:, 0], target)
    if target_type == "multiclass":
        return F.cross_entropy(output, target.long())
    return 0.5 * torch.mean((output[:, 0] - target) ** 2)

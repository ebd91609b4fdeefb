"""A static token table with a linear head: the supervised model2vec model (torch only).

A document is the mean of the rows of its token ids (``embedding_bag`` in
``"mean"`` mode, the pooling of :class:`skembed.text.StaticEmbedder`'s
``transform``); a linear layer maps it to class logits or to one regression
output. Nothing here knows about scikit-learn.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["MeanBagLinear"]


class MeanBagLinear(nn.Module):
    """Mean of trainable token vectors, then a linear layer.

    In training mode the table's gradient is sparse (only the rows of the
    batch's tokens), for ``torch.optim.SparseAdam``.

    Parameters
    ----------
    vectors : torch.Tensor of shape (n_tokens, width)
        Initial token table (copied; trained).
    n_outputs : int
        Classes (cross-entropy logits) or 1 (regression).
    """

    def __init__(self, vectors, n_outputs):
        super().__init__()
        self.table = nn.Parameter(vectors.detach().clone())
        self.head = nn.Linear(vectors.shape[1], n_outputs)

    def pooled(self, ids, offsets):
        """Mean token vector of each document, shape (n_documents, width).

        ``ids`` are the concatenated token ids, ``offsets`` the start of each
        document in them (a document without tokens pools to zeros).
        """
        return nn.functional.embedding_bag(
            ids, self.table, offsets, mode="mean", sparse=self.training
        )

    def forward(self, ids, offsets):
        """Outputs of the head, shape (n_documents, n_outputs)."""
        return self.head(self.pooled(ids, offsets))


def bag_batch(ids, indptr, rows, device):
    """The (ids, offsets) tensors of documents ``rows`` from CSR parts ``ids``/``indptr`` (numpy)."""
    import numpy as np

    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    flat = (
        np.concatenate([ids[s:e] for s, e in zip(starts, ends, strict=True)])
        if len(rows)
        else ids[:0]
    )
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return (
        torch.from_numpy(flat.astype(np.int64)).to(device),
        torch.from_numpy(offsets.astype(np.int64)).to(device),
    )

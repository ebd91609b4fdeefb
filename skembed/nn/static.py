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
    """Weighted mean of trainable token vectors, optionally L2-normalised, then a linear layer.

    model2vec's trainable static model (``model2vec.train``, Tulkens & van
    Dongen 2024): each token has a vector and a scalar weight (initially 1),
    a document is ``sum_t w_t e_t / n_tokens``, normalised when the embedder's
    output is, and a linear layer maps it to class logits or to one regression
    output. :meth:`folded_table` folds the weights into the rows, so the plain
    mean of the folded rows is the pooled vector. In training mode the table's
    gradient is sparse (only the rows of the batch's tokens), for
    ``torch.optim.SparseAdam``.

    Parameters
    ----------
    vectors : torch.Tensor of shape (n_tokens, width)
        Initial token table (copied; trained).
    n_outputs : int
        Classes (cross-entropy logits) or 1 (regression).
    normalize : bool, default=False
        L2-normalise the pooled vector before the head (as the transform
        that will serve the table).
    """

    def __init__(self, vectors, n_outputs, normalize=False):
        super().__init__()
        self.table = nn.Parameter(vectors.detach().clone())
        self.weights = nn.Parameter(torch.ones(vectors.shape[0], dtype=vectors.dtype))
        self.head = nn.Linear(vectors.shape[1], n_outputs)
        self.normalize = normalize

    def pooled(self, ids, offsets):
        """Pooled vector of each document, shape (n_documents, width).

        ``ids`` are the concatenated token ids, ``offsets`` the start of each
        document in them (a document without tokens pools to zeros).
        """
        total = nn.functional.embedding_bag(
            ids,
            self.table,
            offsets,
            mode="sum",
            sparse=self.training,
            per_sample_weights=self.weights.index_select(0, ids),
        )
        ends = torch.cat([offsets[1:], offsets.new_tensor([len(ids)])])
        out = total / (ends - offsets).clamp(min=1).unsqueeze(1).to(total.dtype)
        return nn.functional.normalize(out, dim=1) if self.normalize else out

    def forward(self, ids, offsets):
        """Outputs of the head, shape (n_documents, n_outputs)."""
        return self.head(self.pooled(ids, offsets))

    def folded_table(self):
        """Rows times their weights, shape (n_tokens, width): what ``transform`` averages."""
        with torch.no_grad():
            return self.table * self.weights.unsqueeze(1)


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

"""Subword (fastText) negative-sampling model for the batched torch engine (torch only).

The input vector of an example is the mean of a bag of rows of the input
matrix (a word's own row and its character n-gram bucket rows; for CBOW,
those of every context word). Its gradient reaches every row of the bag *in
full* (not divided by the bag size), as in Facebook fastText's unsupervised
``Model::update`` and in the numba kernel
(:func:`skembed.kernels.word2vec.train_chunk`), so both engines follow the
same learning dynamics. The SGD step is written out (closed-form gradients of
the logistic loss and ``index_add_``) rather than left to autograd and an
optimizer: it touches only the rows of the batch and runs several times
faster on the CPU. Nothing here knows about scikit-learn; the estimator
:class:`skembed.text.FastTextTransformer` owns batching, sampling and the
learning-rate schedule.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["SubwordNegativeSampling"]


class SubwordNegativeSampling(nn.Module):
    """Skip-gram / CBOW with negative sampling over bags of input rows.

    Parameters
    ----------
    input_weight : torch.Tensor of shape (n_rows, dim), float32
        Input matrix (words then n-gram buckets); used in place.
    output_weight : torch.Tensor of shape (n_words, dim), float32
        Output matrix; used in place.
    """

    def __init__(self, input_weight, output_weight):
        super().__init__()
        self.input_weight = nn.Parameter(input_weight, requires_grad=False)
        self.output_weight = nn.Parameter(output_weight, requires_grad=False)

    def hidden(self, bag_rows, bag_offsets, bag_sizes):
        """Mean of each bag's input rows, shape (batch, dim)."""
        s = F.embedding_bag(bag_rows, self.input_weight, bag_offsets, mode="sum")
        return s / bag_sizes[:, None]

    @torch.no_grad()
    def forward(self, bag_rows, bag_offsets, bag_sizes, targets, negatives, lr):
        """One SGD step on a batch; returns the summed loss before the step.

        Parameters
        ----------
        bag_rows : torch.Tensor of shape (n_rows_in_batch,), int64
            Input-matrix rows of all bags, concatenated.
        bag_offsets : torch.Tensor of shape (batch,), int64
            Start of each bag in ``bag_rows``.
        bag_sizes : torch.Tensor of shape (batch,), int64
            Number of rows of each bag (>= 1).
        targets : torch.Tensor of shape (batch,), int64
            Word predicted by each bag (label 1).
        negatives : torch.Tensor of shape (batch, k), int64
            Noise words (label 0); entries equal to the target are skipped.
        lr : float
            Learning rate of the step.

        Returns
        -------
        loss : float
            ``sum_b [-log s(h_b . o_t) - sum_j log s(-h_b . o_nj)]`` with ``h_b``
            the mean of bag ``b``'s rows; NaN if the scores diverged.

        Notes
        -----
        With ``g = lr * (label - s(h . o))``: ``o += g h`` for every target and
        noise word, and every input row of the bag gets ``sum g o``.
        """
        w_in, w_out = self.input_weight, self.output_weight
        h = self.hidden(bag_rows, bag_offsets, bag_sizes.to(w_in.dtype))
        o_t = w_out[targets]
        o_n = w_out[negatives]
        pos = (h * o_t).sum(-1)
        neg = torch.bmm(o_n, h.unsqueeze(-1)).squeeze(-1)
        mask = (negatives != targets[:, None]).to(neg.dtype)
        loss = -(F.logsigmoid(pos).sum() + (F.logsigmoid(-neg) * mask).sum())
        g_pos = lr * (1.0 - torch.sigmoid(pos))
        g_neg = -lr * torch.sigmoid(neg) * mask
        grad_h = g_pos[:, None] * o_t + torch.bmm(g_neg.unsqueeze(1), o_n).squeeze(1)
        w_out.index_add_(0, targets, g_pos[:, None] * h)
        w_out.index_add_(
            0, negatives.reshape(-1), (g_neg.unsqueeze(-1) * h.unsqueeze(1)).reshape(-1, h.shape[1])
        )
        bag_of_row = torch.repeat_interleave(
            torch.arange(len(bag_sizes), device=bag_rows.device), bag_sizes
        )
        w_in.index_add_(0, bag_rows, grad_h[bag_of_row])
        return float(loss)

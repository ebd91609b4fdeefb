"""Torch module of the word2vec torch engine (skip-gram / CBOW; negative sampling / HS).

No scikit-learn here. The estimator (:class:`skembed.text.word2vec.Word2VecTransformer`)
builds the batches (with the numba helpers ``skipgram_pairs``/``cbow_windows``
of :mod:`skembed.kernels.word2vec`) and calls :meth:`Word2VecNet.sgd_step`.

The update is word2vec's plain SGD done a batch at a time: for each example
the binary logistic losses of its output rows (the positive target and
negatives, or the Huffman path nodes) give the error ``g = (label -
sigmoid(f)) * lr``; the input side receives ``sum_j g_j * out_j`` and each
output row ``g_j * input``, accumulated with ``index_put_(accumulate=True)``
(a row repeated in the batch gets the sum of its updates, as consecutive
lock-free updates would; batches must therefore stay small enough that
frequent words do not overshoot -- measured: CBOW at ``lr=0.05`` diverges with
4096 windows per batch and matches the numba kernel's loss with 512). No
autograd graph is built, so memory is that of the batch.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["Word2VecNet"]


class Word2VecNet(nn.Module):
    """Input and output embedding matrices of word2vec, trained by batched SGD.

    Parameters
    ----------
    syn0 : torch.Tensor of shape (n_words, dim), float32
        Initial input (word) vectors.
    syn1neg : torch.Tensor of shape (n_words, dim) or None
        Output vectors for negative sampling.
    syn1 : torch.Tensor of shape (n_words - 1, dim) or None
        Inner-node vectors for hierarchical softmax.

    References
    ----------
    Mikolov, Chen, Corrado & Dean (2013), "Efficient Estimation of Word
    Representations in Vector Space", ICLR workshop; Mikolov et al. (2013), NIPS.
    """

    def __init__(self, syn0, syn1neg=None, syn1=None):
        super().__init__()
        self.syn0 = nn.Parameter(syn0, requires_grad=False)
        self.syn1neg = None if syn1neg is None else nn.Parameter(syn1neg, requires_grad=False)
        self.syn1 = None if syn1 is None else nn.Parameter(syn1, requires_grad=False)

    def input_vectors(self, inputs):
        """Input vectors of a batch.

        Parameters
        ----------
        inputs : torch.LongTensor of shape (B,) (skip-gram) or (B, C) (CBOW, ``-1`` padded)

        Returns
        -------
        l1 : torch.Tensor of shape (B, dim)
            The word's vector, or the mean of the context vectors.
        """
        if inputs.dim() == 1:
            return self.syn0[inputs]
        mask = inputs >= 0
        rows = self.syn0[inputs.clamp(min=0)] * mask.unsqueeze(-1)
        return rows.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)

    @torch.no_grad()
    def sgd_step(self, inputs, l1, out, out_idx, labels, mask, lr):
        """One batched SGD step on binary logistic examples; returns the summed loss.

        Parameters
        ----------
        inputs : torch.LongTensor of shape (B,) or (B, C)
            Input word ids (``-1`` padding in CBOW), receiving the input gradient.
        l1 : torch.Tensor of shape (B, dim)
            Their input vectors (:meth:`input_vectors`).
        out : torch.Tensor of shape (n_out, dim)
            The output matrix (``syn1neg`` or ``syn1``), updated in place.
        out_idx : torch.LongTensor of shape (B, M)
            Output rows of each example.
        labels : torch.Tensor of shape (B, M), float32
            1 for the positive row / Huffman bit 0, else 0.
        mask : torch.Tensor of shape (B, M), float32
            1 for rows that take part, 0 for padding.
        lr : float
            Learning rate.

        Returns
        -------
        loss : torch.Tensor, scalar
            ``sum(mask * -log sigmoid(±f))``.
        grad_in : torch.Tensor of shape (B, dim)
            Input-side update (already scaled by ``lr``), to add with :meth:`apply_input`.
        """
        w = out[out_idx]  # (B, M, d)
        f = torch.bmm(w, l1.unsqueeze(-1)).squeeze(-1)  # (B, M)
        sign = labels * 2 - 1
        loss = -(F.logsigmoid(sign * f) * mask).sum()
        g = (labels - torch.sigmoid(f)) * mask * lr  # (B, M)
        grad_in = torch.bmm(g.unsqueeze(1), w).squeeze(1)  # (B, d)
        flat = out_idx.reshape(-1)
        grad_out = (g.unsqueeze(-1) * l1.unsqueeze(1)).reshape(-1, l1.shape[-1])
        out.index_put_((flat,), grad_out, accumulate=True)
        return loss, grad_in

    @torch.no_grad()
    def apply_input(self, inputs, grad_in):
        """Add the input-side update to the input rows (to each context row in CBOW)."""
        if inputs.dim() == 1:
            idx, rows = inputs, grad_in
        else:
            mask = inputs >= 0
            idx = inputs[mask]
            rows = grad_in.unsqueeze(1).expand(-1, inputs.shape[1], -1)[mask]
        self.syn0.index_put_((idx,), rows, accumulate=True)

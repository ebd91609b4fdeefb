"""Torch module of the word2vec family's torch engine (skip-gram / CBOW; negative sampling / HS).

No scikit-learn here. The engine (:class:`skembed.text.word2vec._engines.TorchEngine`,
used by Word2Vec and FastText) builds the batches with the numba helpers
``skipgram_pairs``/``cbow_windows`` of :mod:`skembed.kernels.word2vec` and
calls :meth:`Word2VecNet.hidden`, :meth:`Word2VecNet.output_step` and
:meth:`Word2VecNet.apply_input`.

The input of an example is the mean of a *bag* of input rows: one row
(skip-gram Word2Vec), the context rows (CBOW), and in FastText each word's
own row plus its character n-gram rows. The update is word2vec's plain SGD
done a batch at a time: for each example the binary logistic losses of its
output rows (the positive target and negatives, or the Huffman path nodes)
give the error ``g = (label - sigmoid(f)) * lr``; every row of the input bag
receives ``sum_j g_j * out_j`` in full (word2vec.c's CBOW and Facebook
fastText's unsupervised update) and each output row ``g_j * input``,
accumulated with ``index_add_`` (a row repeated in the batch gets the sum of
its updates, as consecutive lock-free updates would; batches must therefore
stay small enough that frequent words do not overshoot -- measured: CBOW at
``lr=0.05`` diverges with 4096 windows per batch and matches the numba
kernel's loss with 512). No autograd graph is built, so memory is that of
the batch.
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

    def hidden(self, rows, offsets, sizes):
        """Mean input vector of each bag.

        Parameters
        ----------
        rows : torch.LongTensor of shape (n_rows_in_batch,)
            Input rows of all bags, concatenated.
        offsets : torch.LongTensor of shape (B,)
            Start of each bag in ``rows``.
        sizes : torch.LongTensor of shape (B,)
            Rows of each bag (>= 1).

        Returns
        -------
        h : torch.Tensor of shape (B, dim)
        """
        if rows.shape[0] == sizes.shape[0]:  # one row per bag (skip-gram Word2Vec)
            return self.syn0[rows]
        total = F.embedding_bag(rows, self.syn0, offsets, mode="sum")
        return total / sizes[:, None].to(total.dtype)

    @torch.no_grad()
    def output_step(self, l1, out, out_idx, labels, mask, lr):
        """One batched SGD step of an output layer on binary logistic examples.

        Parameters
        ----------
        l1 : torch.Tensor of shape (B, dim)
            Input vectors of the examples (:meth:`hidden`).
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

        Notes
        -----
        ``out[out_idx]`` is updated in place before the input side: the input
        gradient uses the output rows as they were before the step.
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
    def apply_input(self, rows, sizes, grad_h):
        """Add each bag's input-side update, in full, to every row of the bag.

        Parameters
        ----------
        rows : torch.LongTensor of shape (n_rows_in_batch,)
        sizes : torch.LongTensor of shape (B,)
        grad_h : torch.Tensor of shape (B, dim)
        """
        if rows.shape[0] != sizes.shape[0]:
            grad_h = torch.repeat_interleave(grad_h, sizes, dim=0)
        self.syn0.index_add_(0, rows, grad_h)

"""GloVe as a torch module with a batched AdaGrad step (no scikit-learn in here)."""

from __future__ import annotations

import torch
from torch import nn


class GloVeModel(nn.Module):
    """Word and context vectors and biases of GloVe, with AdaGrad state.

    Parameters
    ----------
    n_words : int
        Vocabulary size.
    vector_size : int
        Width of the vectors.

    Attributes
    ----------
    W, C : torch.nn.Parameter of shape (n_words, vector_size), float32
        Word and context vectors.
    bw, bc : torch.nn.Parameter of shape (n_words,), float32
        Word and context biases.
    gW, gC, gbw, gbc : torch.Tensor (buffers)
        AdaGrad squared-gradient sums, initialised to 1 as in ``glove.c``.

    Notes
    -----
    The model predicts ``log X_ij`` as ``w_i . c_j + bw_i + bc_j``
    (Pennington, Socher & Manning 2014). Gradients are written in closed form
    in :meth:`adagrad_step`; autograd is not used.
    """

    def __init__(self, n_words, vector_size):
        super().__init__()
        self.W = nn.Parameter(torch.empty(n_words, vector_size), requires_grad=False)
        self.C = nn.Parameter(torch.empty(n_words, vector_size), requires_grad=False)
        self.bw = nn.Parameter(torch.empty(n_words), requires_grad=False)
        self.bc = nn.Parameter(torch.empty(n_words), requires_grad=False)
        for name in ("gW", "gC"):
            self.register_buffer(name, torch.ones(n_words, vector_size))
        for name in ("gbw", "gbc"):
            self.register_buffer(name, torch.ones(n_words))

    @torch.no_grad()
    def reset_parameters(self, generator=None):
        """Draw every vector and bias uniformly in ``[-0.5, 0.5] / vector_size`` (``glove.c``)."""
        d = self.W.shape[1]
        for p in (self.W, self.C, self.bw, self.bc):
            p.copy_((torch.rand(p.shape, generator=generator, device=p.device) - 0.5) / d)
        for b in (self.gW, self.gC, self.gbw, self.gbc):
            b.fill_(1.0)

    def forward(self, i, j):
        """Predicted ``log X_ij`` for index tensors ``i, j`` of shape (batch,)."""
        return (
            (self.W.index_select(0, i) * self.C.index_select(0, j)).sum(1)
            + self.bw.index_select(0, i)
            + self.bc.index_select(0, j)
        )

    @staticmethod
    def _adagrad_rows(param, gradsq, index, grad, learning_rate):
        """Sum ``grad`` per distinct row of ``index`` and apply one AdaGrad step to those rows."""
        rows, inverse = torch.unique(index, return_inverse=True)
        shape = (rows.shape[0],) + tuple(grad.shape[1:])
        g = torch.zeros(shape, dtype=grad.dtype, device=grad.device).index_add_(0, inverse, grad)
        g.mul_(learning_rate)
        acc = gradsq.index_select(0, rows).addcmul_(g, g)
        gradsq.index_copy_(0, rows, acc)
        param.index_copy_(0, rows, param.index_select(0, rows).sub_(g.div_(acc.sqrt_())))

    @torch.no_grad()
    def adagrad_step(self, i, j, log_x, f_x, learning_rate, grad_clip=100.0):
        """One batched AdaGrad step on the records ``(i, j)``.

        Parameters
        ----------
        i, j : torch.Tensor of shape (batch,), int64
            Word and context ids.
        log_x : torch.Tensor of shape (batch,), float32
            ``log X_ij``.
        f_x : torch.Tensor of shape (batch,), float32
            Weights ``f(X_ij)``.
        learning_rate : float
        grad_clip : float, default=100.0
            Per-component clipping of each record's vector gradient (``glove.c``).

        Returns
        -------
        loss : float
            ``sum 0.5 * f(X_ij) * diff**2`` over the batch, before the step.

        Notes
        -----
        Each record's gradient is computed at the parameters before the step;
        gradients of records sharing a row are summed, the squared (scaled)
        sum is added to the AdaGrad accumulator and the row moves by
        ``learning_rate * g / sqrt(acc)``. Adding before dividing keeps the
        step below 1 per component however many records of a frequent word a
        batch holds.
        """
        wi = self.W.index_select(0, i)
        cj = self.C.index_select(0, j)
        diff = (wi * cj).sum(1) + self.bw.index_select(0, i) + self.bc.index_select(0, j) - log_x
        fdiff = f_x * diff
        loss = 0.5 * float((fdiff * diff).sum())
        gw = (fdiff[:, None] * cj).clamp_(-grad_clip, grad_clip)
        gc = (fdiff[:, None] * wi).clamp_(-grad_clip, grad_clip)
        self._adagrad_rows(self.W, self.gW, i, gw, learning_rate)
        self._adagrad_rows(self.C, self.gC, j, gc, learning_rate)
        self._adagrad_rows(self.bw, self.gbw, i, fdiff, learning_rate)
        self._adagrad_rows(self.bc, self.gbc, j, fdiff, learning_rate)
        return loss

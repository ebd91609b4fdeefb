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
    in :meth:`adagrad_step`; autograd is not used. :meth:`train_epoch` runs an
    epoch on the model's device without host round trips (no ``unique``, no
    loss read back per step), which is what makes it fast on a GPU.
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
    def _adagrad_rows(param, gradsq, index, grad, learning_rate, buf, dense):
        """Sum ``grad`` per distinct row of ``index`` and apply one AdaGrad step to those rows.

        ``buf`` is a zero tensor shaped like ``param`` (left zero on return).
        Sparse form (``dense=False``, O(batch) work, no host synchronisation):
        every record reads its row's summed gradient back from ``buf`` and
        writes the row's new value; records sharing a row compute bit-identical
        values, so the duplicate writes of ``index_copy_`` agree. Dense form:
        one elementwise pass over the whole matrix (rows without a record have
        a zero gradient and do not move), cheaper once a batch holds more
        records than a fraction of the vocabulary. Both give the same result.
        """
        buf.index_add_(0, index, grad)
        if dense:
            g = buf.mul_(learning_rate)
            gradsq.addcmul_(g, g)
            param.sub_(g.div_(gradsq.sqrt()))
            buf.zero_()
            return
        g = buf.index_select(0, index).mul_(learning_rate)
        acc = gradsq.index_select(0, index).addcmul_(g, g)
        new = param.index_select(0, index).sub_(g.div_(acc.sqrt()))
        gradsq.index_copy_(0, index, acc)
        param.index_copy_(0, index, new)
        buf.index_fill_(0, index, 0.0)

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
        batch holds. :meth:`train_epoch` runs many steps without reading the
        loss back; this method returns it as a Python float (a host sync).
        """
        return float(self._step(i, j, log_x, f_x, learning_rate, grad_clip, dense=False))

    def _grad_sums(self):
        bufs = getattr(self, "_grad_buffers", None)
        if bufs is None or bufs[0].device != self.W.device or bufs[0].shape != self.W.shape:
            bufs = tuple(torch.zeros_like(p) for p in (self.W, self.C, self.bw, self.bc))
            self._grad_buffers = bufs
        return bufs

    def _step(self, i, j, log_x, f_x, learning_rate, grad_clip, dense):
        """:meth:`adagrad_step` returning the loss as a 0-d float64 tensor on the device."""
        wi = self.W.index_select(0, i)
        cj = self.C.index_select(0, j)
        diff = (wi * cj).sum(1) + self.bw.index_select(0, i) + self.bc.index_select(0, j) - log_x
        fdiff = f_x * diff
        loss = 0.5 * (fdiff * diff).sum(dtype=torch.float64)
        gw = (fdiff[:, None] * cj).clamp_(-grad_clip, grad_clip)
        gc = (fdiff[:, None] * wi).clamp_(-grad_clip, grad_clip)
        bW, bC, bbw, bbc = self._grad_sums()
        self._adagrad_rows(self.W, self.gW, i, gw, learning_rate, bW, dense)
        self._adagrad_rows(self.C, self.gC, j, gc, learning_rate, bC, dense)
        self._adagrad_rows(self.bw, self.gbw, i, fdiff, learning_rate, bbw, dense)
        self._adagrad_rows(self.bc, self.gbc, j, fdiff, learning_rate, bbc, dense)
        return loss

    @torch.no_grad()
    def train_epoch(self, i, j, log_x, f_x, order, batch_size, learning_rate, grad_clip=100.0):
        """One epoch of batched AdaGrad steps over the records in ``order``, on their device.

        Parameters
        ----------
        i, j : torch.Tensor of shape (nnz,), int64
            Word and context ids of every record, on the model's device.
        log_x, f_x : torch.Tensor of shape (nnz,), float32
            ``log X_ij`` and ``f(X_ij)`` of every record.
        order : torch.Tensor of shape (nnz,), int64
            The order of the records this epoch (a permutation); consecutive
            ``batch_size`` records form a step (:meth:`adagrad_step`).
        batch_size : int
            Records per step.
        learning_rate, grad_clip : float

        Returns
        -------
        loss : torch.Tensor, 0-d, float64, on the device
            Sum over the records of ``0.5 * f(X_ij) * diff**2`` (each before
            its step). Nothing is synchronised with the host during the epoch.

        Examples
        --------
        >>> import torch
        >>> from skembed.nn.glove import GloVeModel
        >>> m = GloVeModel(3, 2)
        >>> m.reset_parameters(torch.Generator().manual_seed(0))
        >>> i, j = torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])
        >>> x = torch.tensor([1.0, 2.0, 3.0])
        >>> first = m.train_epoch(i, j, x.log(), x / 3, torch.arange(3), 2, 0.05)
        >>> second = m.train_epoch(i, j, x.log(), x / 3, torch.arange(3), 2, 0.05)
        >>> bool(second < first)
        True
        """
        n = order.shape[0]
        batch_size = int(batch_size)
        # memory traffic: a sparse step moves ~8 rows per record and matrix, a dense
        # one ~6 passes over the matrix, so dense wins from ~n_words / 4 records on
        dense = batch_size >= self.W.shape[0] // 4
        total = torch.zeros((), dtype=torch.float64, device=self.W.device)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            total += self._step(
                i.index_select(0, idx),
                j.index_select(0, idx),
                log_x.index_select(0, idx),
                f_x.index_select(0, idx),
                learning_rate,
                grad_clip,
                dense,
            )
        return total

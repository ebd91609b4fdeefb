"""fastText subword input for the batched word2vec trainer (:mod:`skembed.nn.sgns`).

A word's input vector is the mean of its rows of ``syn0`` (its own row and its character
n-gram buckets), and the input-side error goes in full to each of those rows, as Facebook
fastText, gensim and the CPU kernel do (Bojanowski et al. 2017).

A batch of ``B`` centres has ``B * 2 * window`` context slots but far fewer distinct words
(the frequent ones fill most slots). The bags are therefore gathered once per distinct word
of a step, not once per slot: the step's bag means are ``(U, dim)`` for its ``U`` distinct
context words, a slot reads its word's mean, and the slots' errors are summed per distinct
word before they go to the bag rows. The sums are the same as slot by slot (only the order
of floating-point additions differs), and so are the update counts of ``update_cap`` and
the curvature sums of ``curvature_bound``: a distinct word's bag rows count once per slot
that holds the word.

The distinct words of every step of a block of centres are found at once (one sort of the
block's slots, one read of the step boundaries on the host), so a step waits on the host
for nothing.

References
----------
Bojanowski, Grave, Joulin & Mikolov (2017), "Enriching Word Vectors with Subword
Information", TACL 5.
"""

from __future__ import annotations

import torch

__all__ = ["BlockBags", "StepBags", "SubwordBags"]


class SubwordBags:
    """The CSR of each word's input rows, on the device (fastText subword input).

    Parameters
    ----------
    sub_indptr : array-like of shape (n_words + 1,), int64
        Word ``u``'s rows are ``sub_indices[sub_indptr[u]:sub_indptr[u + 1]]``.
    sub_indices : array-like of shape (nnz,), int32 or int64
        Rows of ``syn0`` (the word's own row, then its n-gram bucket rows).
    device : str or torch.device

    Attributes
    ----------
    indptr : torch.Tensor of shape (n_words + 1,), int64
    indices : torch.Tensor of shape (nnz,), int64
    lengths : torch.Tensor of shape (n_words + 1,), int64
        Rows per word, then a 0 for the empty bag of a slot outside its centre's window.
    n_words : int

    Examples
    --------
    >>> import torch
    >>> bags = SubwordBags([0, 2, 5], [0, 3, 1, 3, 4], "cpu")
    >>> bags.lengths.tolist()
    [2, 3, 0]
    >>> block = bags.block(torch.tensor([[1, 0], [1, 1]]), torch.tensor([[True, False],
    ...                                                            [True, True]]), 2)
    >>> step = block.step(0)
    >>> step.words.tolist(), step.inv.tolist(), step.rows.tolist()
    ([1, 2], [[0, 1], [0, 0]], [1, 3, 4])
    """

    def __init__(self, sub_indptr, sub_indices, device):
        self.indptr = torch.as_tensor(sub_indptr, device=device).to(torch.int64)
        self.indices = torch.as_tensor(sub_indices, device=device).to(torch.int64)
        self.n_words = int(self.indptr.shape[0]) - 1
        empty = torch.zeros(1, dtype=torch.int64, device=self.indptr.device)
        self.lengths = torch.cat([self.indptr[1:] - self.indptr[:-1], empty])

    def block(self, ctx, valid, batch_words):
        """The distinct context words of each step of a block (one host read).

        Parameters
        ----------
        ctx : torch.Tensor of shape (n, m), int64
            Context word of each slot of the block's ``n`` centres.
        valid : torch.Tensor of shape (n, m), bool
            Slots inside their centre's window and document.
        batch_words : int
            Centres per step: step ``s`` holds centres ``s * batch_words`` onwards.

        Returns
        -------
        BlockBags
        """
        n = ctx.shape[0]
        dev = ctx.device
        width = self.n_words + 1
        step = torch.arange(n, device=dev) // batch_words
        # a slot outside its window holds the empty word ``n_words``
        key = step[:, None] * width + torch.where(valid, ctx, self.n_words)
        uniq, inv = torch.unique(key, sorted=True, return_inverse=True)
        words = uniq % width
        n_steps = -(-n // batch_words)
        first = torch.searchsorted(uniq, torch.arange(n_steps + 1, device=dev) * width)
        counts = self.lengths[words]
        ends = torch.cat([torch.zeros(1, dtype=torch.int64, device=dev), torch.cumsum(counts, 0)])
        bounds = torch.stack([first, ends[first]]).tolist()  # the block's one host read
        return BlockBags(self, words, inv, counts, bounds[0], bounds[1], batch_words)


class BlockBags:
    """The distinct context words of the steps of one block (see :meth:`SubwordBags.block`).

    Attributes
    ----------
    words : torch.Tensor of shape (U,), int64
        Distinct words of step 0, then of step 1, ... (sorted within a step).
    inv : torch.Tensor of shape (n, m), int64
        Index into ``words`` of each slot's word.
    counts : torch.Tensor of shape (U,), int64
        Bag rows of each of ``words``.
    first, row_first : list of int, length n_steps + 1
        Where each step's words and bag rows start.
    batch_words : int
        Centres per step.
    """

    def __init__(self, bags, words, inv, counts, first, row_first, batch_words):
        self.bags, self.words, self.inv, self.counts = bags, words, inv, counts
        self.first, self.row_first, self.batch_words = first, row_first, batch_words

    def step(self, s):
        """Step ``s`` of the block (centres ``s * batch_words`` onwards): a :class:`StepBags`."""
        u0, u1 = self.first[s], self.first[s + 1]
        n_rows = self.row_first[s + 1] - self.row_first[s]
        words, counts = self.words[u0:u1], self.counts[u0:u1]
        bags = self.bags
        dev = words.device
        owner = torch.repeat_interleave(
            torch.arange(u1 - u0, device=dev), counts, output_size=n_rows
        )
        start = torch.cumsum(counts, 0) - counts
        pos = torch.arange(n_rows, device=dev) - start[owner]
        rows = bags.indices[bags.indptr[words][owner] + pos]
        c0 = s * self.batch_words
        inv = self.inv[c0 : c0 + self.batch_words] - u0
        return StepBags(words, inv, rows, owner, counts)


class StepBags:
    """One step's distinct context words and their bag rows.

    Attributes
    ----------
    words : torch.Tensor of shape (U,), int64
    inv : torch.Tensor of shape (b, m), int64
        Index into ``words`` of each slot's word (the empty word for a slot outside its
        window).
    rows, owner : torch.Tensor of shape (R,), int64
        Bag rows of ``words``, bag after bag, and the index into ``words`` of each.
    counts : torch.Tensor of shape (U,), int64
        Rows per bag (0 for the empty word).
    """

    def __init__(self, words, inv, rows, owner, counts):
        self.words, self.inv, self.rows, self.owner, self.counts = words, inv, rows, owner, counts

    def sums(self, syn0):
        """``(U, dim)`` sums of each distinct word's bag rows."""
        out = torch.zeros(self.counts.shape[0], syn0.shape[1], dtype=syn0.dtype, device=syn0.device)
        return out.index_add_(0, self.owner, syn0.index_select(0, self.rows))

    def means(self, syn0):
        """``(U, dim)`` input vectors of the distinct words (0 for the empty word)."""
        return self.sums(syn0) / self.counts.clamp(min=1).unsqueeze(1).to(syn0.dtype)

    def per_word(self, slot_values):
        """Sum per distinct word of a per-slot tensor of shape ``(b * m, ...)``."""
        shape = (self.counts.shape[0],) + tuple(slot_values.shape[1:])
        out = torch.zeros(shape, dtype=slot_values.dtype, device=slot_values.device)
        return out.index_add_(0, self.inv.reshape(-1), slot_values)

    def row_updates(self, grad, weight, curvature=None):
        """Per-slot input errors as bag-row updates for ``_add_rows`` of :mod:`~skembed.nn.sgns`.

        Parameters
        ----------
        grad : torch.Tensor of shape (b * m, dim)
            Error of each slot's input vector (0 for a slot outside its window).
        weight : torch.Tensor of shape (b * m,)
            1 for a slot inside its window, else 0: the update count of each bag row.
        curvature : tuple (torch.Tensor of shape (b * m,), float) or None
            Per-slot ``lr * curvature`` and the bound.

        Returns
        -------
        rows : torch.Tensor of shape (R,), int64
        grad : torch.Tensor of shape (R, dim)
        weight : torch.Tensor of shape (R,)
        curvature : tuple (torch.Tensor of shape (R,), float) or None
        """
        owner = self.owner
        g = self.per_word(grad).index_select(0, owner)
        w = self.per_word(weight).index_select(0, owner)
        if curvature is not None:
            curvature = (self.per_word(curvature[0]).index_select(0, owner), curvature[1])
        return self.rows, g, w, curvature

"""Device-resident PV-DBOW trainer: paragraph vectors with negative sampling, batched.

torch only (no scikit-learn, no numba). PV-DBOW (Le and Mikolov, 2014, "Distributed
Representations of Sentences and Documents") trains each document's vector to predict
every word of the document, as skip-gram trains a context word's vector to predict the
centre: for a token ``w`` of document ``d`` and noise words ``n_1 .. n_K``::

    x = syn0[doc_row(d)]                (dim,)        the document's vector
    outv = syn1neg[w, n_1 .. n_K]       (K + 1, dim)
    g = (label - sigmoid(outv @ x)) * lr
    syn0[doc_row(d)] += g @ outv ;  syn1neg[o_j] += g[j] * x

which is :mod:`skembed.nn.sgns`'s skip-gram step with one "context" slot per centre,
the document's row. So :func:`train_dbow_chunk` builds that step's plan for a batch of
token positions and runs the same step, with the same two bounds on a row's summed
update (``update_cap``, ``curvature_bound``). A document's row takes one update per
token of it in the batch (hundreds for a news article), so the bounds matter more here
than for words: ``update_cap`` turns them into ``update_cap`` steps along their mean.
"""

from __future__ import annotations

import torch

from .sgns import (
    DEFAULT_CURVATURE_BOUND,
    DEFAULT_UPDATE_CAP,
    _batches,
    _on_device,
    _outputs,
    _skipgram_step,
)

__all__ = ["train_dbow_chunk"]

#: token positions whose negatives are drawn at once (bounds the plan's memory)
_BLOCK_TOKENS = 1 << 20


def train_dbow_chunk(
    syn0,
    syn1neg,
    ids,
    offsets,
    doc_rows,
    *,
    neg_prob,
    neg_alias,
    negative,
    alpha_start,
    alpha_end,
    seed,
    batch_words=8192,
    update_cap=DEFAULT_UPDATE_CAP,
    curvature_bound=DEFAULT_CURVATURE_BOUND,
):
    """Train PV-DBOW with negative sampling on one chunk, in place, on syn0's device.

    Parameters
    ----------
    syn0 : torch.Tensor of shape (n_rows, dim), float32
        Input matrix: word rows, then the document rows (only the document
        rows are read and updated here).
    syn1neg : torch.Tensor of shape (n_words, dim), float32
        Output vectors of negative sampling, on the same device, updated in place.
    ids : numpy.ndarray or torch.Tensor of shape (n_tokens,), int32 or int64
        Vocabulary ids of the chunk, remapped and subsampled.
    offsets : numpy.ndarray or torch.Tensor of shape (n_docs + 1,), int64
        Piece ``d`` is ``ids[offsets[d]:offsets[d + 1]]``.
    doc_rows : numpy.ndarray or torch.Tensor of shape (n_docs,), int64
        Row of ``syn0`` holding the vector of each piece's document.
    neg_prob, neg_alias : torch.Tensor of shape (n_words,)
        Alias table of the noise distribution (:func:`~skembed.nn.sgns.device_tables`).
    negative : int >= 1
        Noise words per token. A noise word equal to the token is skipped.
    alpha_start, alpha_end : float
        Learning rate at the first and last token visited (linear in between).
    seed : int
        Seeds the generator of the noise words.
    batch_words : int, default=8192
        Tokens per step. The tokens are visited by their rank in their piece
        (every piece's first token, then every second token, ...), so a
        step holds a few tokens of many documents rather than all tokens of a
        few, and each document's row moves in many steps per epoch.
    update_cap, curvature_bound : float or None
        The bounds on a row's summed update of :func:`~skembed.nn.sgns.train_sgns_chunk`.

    Returns
    -------
    loss : torch.Tensor, 0-d, float64, on the device
        Sum over tokens of ``-log sigmoid(f_pos) - sum log sigmoid(-f_neg)``,
        computed before each batch's update (not synchronised).
    n_examples : torch.Tensor, 0-d, float64, on the device
        Tokens trained (one example each).

    Raises
    ------
    ValueError
        If ``negative`` or ``batch_words`` is below 1, the tensors are on
        different devices, or ``doc_rows`` does not have one row per piece.

    Examples
    --------
    One document (row 2) holding one token (word 0) in a two-word vocabulary; the only
    noise word is word 1:

    >>> import torch
    >>> from skembed.nn.dbow import train_dbow_chunk
    >>> syn0 = torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.5, -0.5]])
    >>> syn1neg = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> loss, n = train_dbow_chunk(syn0, syn1neg, [0], [0, 1], [2],
    ...     neg_prob=torch.tensor([0.0, 1.0]), neg_alias=torch.tensor([1, 1]),
    ...     negative=1, alpha_start=1.0, alpha_end=1.0, seed=0)
    >>> int(n), round(float(loss), 4)
    (1, 0.9482)
    >>> syn0[2]  # += (1 - s(0.5)) * [1, 0] + (0 - s(-0.5)) * [0, 1]
    tensor([ 0.8775, -0.8775])
    """
    negative, batch_words = int(negative), int(batch_words)
    if negative < 1 or batch_words < 1:
        raise ValueError(
            f"negative and batch_words must be >= 1, got {negative} and {batch_words}."
        )
    ids, offsets, prob, alias, gen, labels, loss, n_examples = _on_device(
        syn0, syn1neg, ids, offsets, neg_prob, neg_alias, negative, seed
    )
    dev = syn0.device
    doc_rows = torch.as_tensor(doc_rows).to(device=dev, dtype=torch.int64, non_blocking=True)
    if doc_rows.shape[0] != offsets.shape[0] - 1:
        raise ValueError(
            f"doc_rows has {doc_rows.shape[0]} rows but offsets describes "
            f"{offsets.shape[0] - 1} pieces; give the syn0 row of each piece."
        )
    n_tok = ids.shape[0]
    if n_tok == 0:
        return loss, n_examples
    step = (float(alpha_end) - float(alpha_start)) / max(n_tok, 1)
    bound = None if curvature_bound is None else float(curvature_bound)
    block = max(batch_words, (_BLOCK_TOKENS // batch_words) * batch_words)
    # visit the tokens rank by rank (every piece's first token, then every second, ...):
    # a batch of consecutive positions would hold all of a document's tokens, whose
    # row would then move once per epoch by its capped summed update; this way it
    # takes about batch_words / n_pieces updates in each of many batches
    piece = torch.searchsorted(offsets, torch.arange(n_tok, device=dev), right=True) - 1
    order = torch.argsort(torch.arange(n_tok, device=dev) - offsets[piece], stable=True)
    for b0 in range(0, n_tok, block):
        at = torch.arange(b0, min(b0 + block, n_tok), device=dev)
        pos = order[at]
        centre = ids[pos]
        rows = doc_rows[piece[pos]]
        out_ids, out_keep = _outputs(centre, negative, prob, alias, gen, syn0.dtype)
        ones = torch.ones((pos.shape[0], 1), dtype=torch.bool, device=dev)
        plan = {
            "ctx": rows[:, None],
            "valid": ones,
            "validf": ones.to(syn0.dtype),
            "out_ids": out_ids,
            "out_keep": out_keep,
            "lr": (float(alpha_start) + step * at.to(torch.float64)).to(syn0.dtype),
        }
        for part in _batches(plan, pos.shape[0], batch_words):
            loss_b, n_b = _skipgram_step(syn0, syn1neg, part, labels, None, update_cap, bound)
            loss += loss_b
            n_examples += n_b
    return loss, n_examples

"""Pooling of contextual token vectors into one vector per sequence (torch only).

Every function takes the token vectors of a padded batch and its attention
mask, so padding never enters a pool. Nothing here knows about scikit-learn;
the estimator :class:`skembed.text.BertPooledEmbedder` calls these functions.
"""

from __future__ import annotations

import torch

__all__ = [
    "POOLING_MODES",
    "LAYER_COMBINE_MODES",
    "chunk_pool_sums",
    "combine_layers",
    "finalize_pool",
    "pool",
    "pool_mask",
    "pool_stats",
]

POOLING_MODES = ("cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken")
LAYER_COMBINE_MODES = ("mean", "sum", "concat")


def combine_layers(hidden_states, layers, combine="mean"):
    """Combine selected hidden-state layers of a transformer encoder.

    Parameters
    ----------
    hidden_states : sequence of torch.Tensor, each of shape (batch, seq_len, hidden)
        All hidden states of the encoder as returned with
        ``output_hidden_states=True``: index 0 is the embedding layer output,
        index ``-1`` the last layer.
    layers : sequence of int
        Indices into ``hidden_states`` (negative indices count from the end).
    combine : {"mean", "sum", "concat"}, default="mean"
        Element-wise mean or sum of the selected layers, or their
        concatenation along the last axis (the feature-based recipes of Devlin
        et al. 2019, e.g. the concatenation of the last four layers).

    Returns
    -------
    tokens : torch.Tensor of shape (batch, seq_len, hidden) or (batch, seq_len, hidden * len(layers))
        Same dtype as the hidden states.
    """
    selected = [hidden_states[i] for i in layers]
    if len(selected) == 1:
        return selected[0]
    if combine == "concat":
        return torch.cat(selected, dim=-1)
    out = torch.stack(selected, dim=0).sum(dim=0)
    if combine == "mean":
        out = out / len(selected)
    elif combine != "sum":
        raise ValueError(f"combine must be one of {LAYER_COMBINE_MODES}, got {combine!r}.")
    return out


def pool_mask(attention_mask, n_skip=0):
    """The tokens a pool reads: the real ones, less the first ``n_skip`` of each sequence.

    Parameters
    ----------
    attention_mask : torch.Tensor of shape (batch, seq_len)
        1 for real tokens, 0 for padding (on either side).
    n_skip : int, default=0
        Real tokens left out at the start of each sequence (the special
        prefix and a prompt the model pools without, sentence-transformers'
        ``include_prompt=False``).

    Returns
    -------
    mask : torch.Tensor of shape (batch, seq_len), bool
    """
    real = attention_mask.bool()
    if not n_skip:
        return real
    first = real.int().argmax(dim=1, keepdim=True)  # left padding: the first real position
    positions = torch.arange(real.shape[1], device=real.device).unsqueeze(0)
    return real & (positions >= first + n_skip)


def pool_stats(tokens, attention_mask, mode, n_skip=0):
    """Per-sequence pooling statistics that can be merged across windows.

    Parameters
    ----------
    tokens : torch.Tensor of shape (batch, seq_len, width)
    attention_mask : torch.Tensor of shape (batch, seq_len)
        1 for real tokens (including special tokens), 0 for padding, which
        may be on the left (decoders) or the right.
    mode : {"cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken"}
    n_skip : int, default=0
        Real tokens left out of the pool at the start of each sequence
        (:func:`pool_mask`).

    Returns
    -------
    stat : torch.Tensor of shape (batch, width)
        The first pooled token's vector (``"cls"``), the last one's
        (``"lasttoken"``), the masked sum of the token vectors (``"mean"``,
        ``"mean_sqrt_len"``), their sum weighted by position
        (``"weightedmean"``: the ``k``-th real token weighs ``k``, as
        sentence-transformers) or their masked maximum (``"max"``, left-out
        positions filled with ``-1e9``).
    count : torch.Tensor of shape (batch,)
        Number of pooled tokens of each sequence (``"weightedmean"``: the sum
        of their weights), same dtype as ``tokens``.
    """
    keep = pool_mask(attention_mask, n_skip)
    mask = keep.to(tokens.dtype)
    count = mask.sum(dim=1)
    rows = torch.arange(tokens.shape[0], device=tokens.device)
    if mode == "cls":
        return tokens[rows, keep.int().argmax(dim=1)], count
    if mode == "lasttoken":
        last = keep.shape[1] - 1 - keep.int().flip(1).argmax(dim=1)
        return tokens[rows, last] * mask[rows, last].unsqueeze(-1), count
    if mode == "max":
        return tokens.masked_fill(~keep.unsqueeze(-1), -1e9).max(dim=1).values, count
    if mode == "weightedmean":
        first = attention_mask.int().argmax(dim=1, keepdim=True)
        positions = torch.arange(mask.shape[1], device=mask.device).unsqueeze(0)
        weights = (positions + 1 - first).to(tokens.dtype) * mask
        return torch.einsum("bt,btd->bd", weights, tokens), weights.sum(dim=1)
    if mode in ("mean", "mean_sqrt_len"):
        return torch.einsum("bt,btd->bd", mask, tokens), count
    raise ValueError(f"pooling must be one of {POOLING_MODES}, got {mode!r}.")


def finalize_pool(stat, count, mode):
    """Turn (merged) :func:`pool_stats` into pooled vectors.

    Parameters
    ----------
    stat : torch.Tensor or numpy.ndarray of shape (batch, width)
    count : torch.Tensor or numpy.ndarray of shape (batch,)
    mode : {"cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken"}

    Returns
    -------
    pooled : same type as ``stat``, shape (batch, width)
        ``"mean"`` and ``"weightedmean"``: ``sum / max(count, 1e-9)``; ``"mean_sqrt_len"``:
        ``sum / sqrt(count)`` (Reimers & Gurevych 2019, sentence-transformers);
        ``"cls"``, ``"lasttoken"`` and ``"max"``: ``stat`` unchanged.
    """
    if mode in ("mean", "weightedmean"):
        return stat / count.clip(min=1e-9)[:, None]
    if mode == "mean_sqrt_len":
        return stat / count.clip(min=1e-9)[:, None] ** 0.5
    return stat


def pool(tokens, attention_mask, mode="mean"):
    """Pool token vectors into one vector per sequence, ignoring padding.

    Parameters
    ----------
    tokens : torch.Tensor of shape (batch, seq_len, width)
    attention_mask : torch.Tensor of shape (batch, seq_len)
        1 for real tokens, 0 for padding.
    mode : {"cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken"}, default="mean"
        ``"cls"``: the first token's vector (BERT's [CLS], Devlin et al. 2019);
        ``"lasttoken"``: the last real token's (decoder embedding models such
        as Qwen3-Embedding); ``"weightedmean"``: position-weighted mean
        (Muennighoff 2022, SGPT);
        ``"mean"``: average of the real tokens; ``"max"``: element-wise maximum
        over the real tokens; ``"mean_sqrt_len"``: sum divided by the square
        root of the number of real tokens (sentence-transformers).

    Returns
    -------
    pooled : torch.Tensor of shape (batch, width)
    """
    stat, count = pool_stats(tokens, attention_mask, mode)
    return finalize_pool(stat, count, mode)


def chunk_pool_sums(tokens, attention_mask, mode, chunk_size, n_skip=0):
    """Late chunking: pool each span of ``chunk_size`` tokens of a sequence, sum the spans.

    The token vectors come from one forward pass over the whole sequence, so
    every chunk's tokens saw the whole context (Günther et al. 2024,
    arXiv:2409.04701); each span is pooled on its own (:func:`pool_stats`
    then :func:`finalize_pool`).

    Parameters
    ----------
    tokens : torch.Tensor of shape (batch, seq_len, width)
    attention_mask : torch.Tensor of shape (batch, seq_len)
        1 for real tokens, 0 for padding (either side).
    mode : str
        A pooling mode of :data:`POOLING_MODES`.
    chunk_size : int
        Real tokens per chunk, counted from each row's first real token
        (the first chunk holds the special prefix, the last the suffix).
    n_skip : int, default=0
        Real tokens left out of the first chunk (:func:`pool_mask`).

    Returns
    -------
    sums : torch.Tensor of shape (batch, width)
        The sum of each row's chunk vectors.
    n_chunks : torch.Tensor of shape (batch,)
        Chunks of each row with at least one pooled token, same dtype as ``tokens``.
    """
    real = attention_mask.bool()
    first = real.int().argmax(dim=1, keepdim=True)
    positions = torch.arange(real.shape[1], device=real.device).unsqueeze(0)
    chunk_of = torch.where(real, (positions - first) // chunk_size, -1)
    sums = torch.zeros(tokens.shape[0], tokens.shape[2], dtype=tokens.dtype, device=tokens.device)
    n_chunks = torch.zeros(tokens.shape[0], dtype=tokens.dtype, device=tokens.device)
    for k in range(int(chunk_of.max()) + 1):
        stat, count = pool_stats(tokens, chunk_of == k, mode, n_skip if k == 0 else 0)
        present = (count > 0).to(tokens.dtype)
        vectors = finalize_pool(stat, count, mode) * present.unsqueeze(-1)
        sums += torch.nan_to_num(vectors, neginf=0.0)
        n_chunks += present
    return sums, n_chunks

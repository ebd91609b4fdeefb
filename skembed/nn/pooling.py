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
    "combine_layers",
    "finalize_pool",
    "pool",
    "pool_stats",
]

POOLING_MODES = ("cls", "mean", "max", "mean_sqrt_len")
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


def pool_stats(tokens, attention_mask, mode):
    """Per-sequence pooling statistics that can be merged across windows.

    Parameters
    ----------
    tokens : torch.Tensor of shape (batch, seq_len, width)
    attention_mask : torch.Tensor of shape (batch, seq_len)
        1 for real tokens (including special tokens), 0 for padding.
    mode : {"cls", "mean", "max", "mean_sqrt_len"}

    Returns
    -------
    stat : torch.Tensor of shape (batch, width)
        The first token's vector (``"cls"``), the masked sum of the token
        vectors (``"mean"``, ``"mean_sqrt_len"``) or their masked maximum
        (``"max"``, padding filled with ``-1e9`` as sentence-transformers).
    count : torch.Tensor of shape (batch,)
        Number of real tokens of each sequence, same dtype as ``tokens``.
    """
    mask = attention_mask.to(tokens.dtype)
    count = mask.sum(dim=1)
    if mode == "cls":
        return tokens[:, 0], count
    if mode == "max":
        filled = tokens.masked_fill(~attention_mask.bool().unsqueeze(-1), -1e9)
        return filled.max(dim=1).values, count
    if mode in ("mean", "mean_sqrt_len"):
        return torch.einsum("bt,btd->bd", mask, tokens), count
    raise ValueError(f"pooling must be one of {POOLING_MODES}, got {mode!r}.")


def finalize_pool(stat, count, mode):
    """Turn (merged) :func:`pool_stats` into pooled vectors.

    Parameters
    ----------
    stat : torch.Tensor or numpy.ndarray of shape (batch, width)
    count : torch.Tensor or numpy.ndarray of shape (batch,)
    mode : {"cls", "mean", "max", "mean_sqrt_len"}

    Returns
    -------
    pooled : same type as ``stat``, shape (batch, width)
        ``"mean"``: ``sum / max(count, 1e-9)``; ``"mean_sqrt_len"``:
        ``sum / sqrt(count)`` (Reimers & Gurevych 2019, sentence-transformers);
        ``"cls"`` and ``"max"``: ``stat`` unchanged.
    """
    if mode == "mean":
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
    mode : {"cls", "mean", "max", "mean_sqrt_len"}, default="mean"
        ``"cls"``: the first token's vector (BERT's [CLS], Devlin et al. 2019);
        ``"mean"``: average of the real tokens; ``"max"``: element-wise maximum
        over the real tokens; ``"mean_sqrt_len"``: sum divided by the square
        root of the number of real tokens (sentence-transformers).

    Returns
    -------
    pooled : torch.Tensor of shape (batch, width)
    """
    stat, count = pool_stats(tokens, attention_mask, mode)
    return finalize_pool(stat, count, mode)

"""Contrastive losses on pooled sentence vectors (torch only; no scikit-learn in here).

Used to fine-tune a sentence encoder on pairs built from labels (SetFit,
Tunstall et al. 2022). Every function takes batches of pooled vectors and
returns a scalar loss.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["cosine_similarity_loss", "in_batch_negatives_loss"]


def cosine_similarity_loss(u, v, target):
    """Mean squared error between ``cos(u_i, v_i)`` and a target similarity.

    sentence-transformers' ``CosineSimilarityLoss``, SetFit's default body
    loss: pairs of the same class have target 1, pairs of different classes
    target 0 (for a regression target, a similarity derived from the label
    distance).

    Parameters
    ----------
    u, v : torch.Tensor of shape (n_pairs, width)
        Pooled vectors of the two sides of each pair.
    target : torch.Tensor of shape (n_pairs,)
        Target cosine similarity of each pair.

    Returns
    -------
    loss : torch.Tensor, scalar
        ``mean_i (cos(u_i, v_i) - target_i)^2``.
    """
    cos = F.cosine_similarity(u, v, dim=1)
    return F.mse_loss(cos, target.to(cos.dtype))


def in_batch_negatives_loss(anchors, positives, labels, scale=20.0):
    """Cross-entropy of each anchor against every positive of the batch (in-batch negatives).

    sentence-transformers' ``MultipleNegativesRankingLoss`` (Henderson et al.
    2017) with the label-aware mask of supervised contrastive learning: the
    logits are ``scale * cos(anchor_i, positive_j)``, the correct column is
    ``j = i`` and the other positives of the anchor's own class are masked
    out (they are not negatives).

    Parameters
    ----------
    anchors, positives : torch.Tensor of shape (batch, width)
        ``positives[i]`` has the class of ``anchors[i]``.
    labels : torch.Tensor of shape (batch,)
        Class index of each (anchor, positive) pair.
    scale : float, default=20.0
        Inverse temperature of the softmax (sentence-transformers' default).

    Returns
    -------
    loss : torch.Tensor, scalar
        Mean cross-entropy over the anchors.
    """
    a = F.normalize(anchors, dim=1)
    p = F.normalize(positives, dim=1)
    logits = scale * a @ p.T
    same = labels[:, None] == labels[None, :]
    same.fill_diagonal_(False)
    logits = logits.masked_fill(same, float("-inf"))
    target = torch.arange(len(a), device=a.device)
    return F.cross_entropy(logits, target)

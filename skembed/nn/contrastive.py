"""Contrastive losses on pooled sentence vectors (torch only; no scikit-learn in here).

Used to fine-tune a sentence encoder on pairs built from labels (SetFit,
Tunstall et al. 2022). Every function takes batches of pooled vectors and
returns a scalar loss.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["cosine_similarity_loss", "in_batch_negatives_loss", "supervised_contrastive_loss"]


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


def supervised_contrastive_loss(anchors, positives, labels, scale=20.0):
    """Supervised contrastive loss over both sides of the batch (SupCon).

    Khosla et al. 2020, *Supervised Contrastive Learning* (the ``SupConLoss``
    SetFit ships): the ``2 * batch`` vectors of the anchors and their
    positives are pooled into one set; each vector ``i`` is scored against
    every other vector ``a`` with ``scale * cos(z_i, z_a)``, and its loss is
    the mean, over all other vectors ``p`` of its class, of
    ``-log softmax_a(scale * cos(z_i, z_a))[p]``. Where in-batch negatives
    keep one positive per anchor and mask the rest of its class, this uses
    every same-class vector of the batch as a positive, and every vector as
    an anchor.

    Parameters
    ----------
    anchors, positives : torch.Tensor of shape (batch, width)
        ``positives[i]`` has the class of ``anchors[i]``.
    labels : torch.Tensor of shape (batch,)
        Class index of each (anchor, positive) pair.
    scale : float, default=20.0
        Inverse temperature of the softmax (temperature 0.05; the paper's
        0.07 to 0.1 are scales 14.3 to 10).

    Returns
    -------
    loss : torch.Tensor, scalar
        Mean over the ``2 * batch`` vectors of their mean cross-entropy
        towards the other vectors of their class.
    """
    z = F.normalize(torch.cat([anchors, positives]), dim=1)
    lab = torch.cat([labels, labels])
    n = len(z)
    self_mask = torch.eye(n, dtype=torch.bool, device=z.device)
    logits = (scale * z @ z.T).masked_fill(self_mask, float("-inf"))
    log_prob = (logits - torch.logsumexp(logits, dim=1, keepdim=True)).masked_fill(self_mask, 0.0)
    same = (lab[:, None] == lab[None, :]) & ~self_mask
    per_vector = -(log_prob * same).sum(dim=1) / same.sum(dim=1)
    return per_vector.mean()

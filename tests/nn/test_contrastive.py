"""Contrastive losses of SetFit fine-tuning: by hand and against sentence-transformers / SetFit."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.contrastive import (  # noqa: E402
    cosine_similarity_loss,
    in_batch_negatives_loss,
    supervised_contrastive_loss,
)


def test_cosine_similarity_loss_is_the_squared_error_of_the_cosine():
    u = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    v = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    t = torch.tensor([1.0, 0.0, 0.0])
    # cosines 1, 1/sqrt(2), 0 -> errors 0, 0.5, 0
    assert float(cosine_similarity_loss(u, v, t)) == pytest.approx(0.5 / 3)


def test_losses_equal_sentence_transformers():
    pytest.importorskip("sentence_transformers")
    from sentence_transformers.sentence_transformer.losses import (
        CosineSimilarityLoss,
        MultipleNegativesRankingLoss,
    )

    rng = torch.Generator().manual_seed(0)
    u, v = torch.randn(6, 5, generator=rng), torch.randn(6, 5, generator=rng)
    t = torch.tensor([1.0, 0, 1, 0, 0, 1])
    ref = CosineSimilarityLoss(model=None).compute_loss_from_embeddings([u, v], t)
    assert float(cosine_similarity_loss(u, v, t)) == pytest.approx(float(ref), rel=1e-6)
    # with six distinct classes nothing is masked: MultipleNegativesRankingLoss exactly
    ref = MultipleNegativesRankingLoss(model=None).compute_loss_from_embeddings([u, v], None)
    got = in_batch_negatives_loss(u, v, torch.arange(6))
    assert float(got) == pytest.approx(float(ref), rel=1e-6)


def test_in_batch_negatives_loss_by_hand():
    a = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    p = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    labels = torch.tensor([0, 1, 0])
    got = float(in_batch_negatives_loss(a, p, labels, scale=2.0))
    an = a / a.norm(dim=1, keepdim=True)
    pn = p / p.norm(dim=1, keepdim=True)
    S = 2.0 * (an @ pn.T).numpy()
    # row 0: class 0, the other class-0 positive (column 2) is masked out
    rows = [S[0, [0, 1]], S[1, [0, 1, 2]], S[2, [1, 2]]]
    targets = [0, 1, 1]
    expected = np.mean([np.log(np.exp(r).sum()) - r[t] for r, t in zip(rows, targets, strict=True)])
    assert got == pytest.approx(expected, rel=1e-5)


def test_supervised_contrastive_loss_by_hand():
    a = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    p = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    labels = torch.tensor([0, 1, 0])
    got = float(supervised_contrastive_loss(a, p, labels, scale=2.0))
    z = torch.cat([a, p]).numpy()
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    lab = [0, 1, 0, 0, 1, 0]
    S = 2.0 * z @ z.T
    per = []
    for i in range(6):
        others = [k for k in range(6) if k != i]
        log_z = np.log(np.exp(S[i, others]).sum())
        pos = [k for k in others if lab[k] == lab[i]]
        per.append(np.mean([log_z - S[i, k] for k in pos]))
    assert got == pytest.approx(np.mean(per), rel=1e-5)


def test_supervised_contrastive_loss_equals_setfits_supcon_formula():
    # SetFit's SupConLoss (setfit/losses.py, contrast_mode="all", one view,
    # base_temperature = temperature) on the 2 * batch vectors, written out
    rng = torch.Generator().manual_seed(1)
    a, p = torch.randn(5, 4, generator=rng), torch.randn(5, 4, generator=rng)
    labels = torch.tensor([0, 1, 1, 2, 0])
    temperature = 0.07
    f = torch.nn.functional.normalize(torch.cat([a, p]), dim=1)
    lab = torch.cat([labels, labels]).view(-1, 1)
    mask = torch.eq(lab, lab.T).float()
    logits = f @ f.T / temperature
    logits = logits - logits.max(dim=1, keepdim=True).values
    logits_mask = 1.0 - torch.eye(10)
    mask = mask * logits_mask
    log_prob = logits - torch.log((torch.exp(logits) * logits_mask).sum(1, keepdim=True))
    ref = -((mask * log_prob).sum(1) / mask.sum(1)).mean()
    got = supervised_contrastive_loss(a, p, labels, scale=1 / temperature)
    assert float(got) == pytest.approx(float(ref), rel=1e-5)

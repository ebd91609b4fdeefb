"""fastText subword input of the batched trainer (skembed.nn.subwords), checked on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.sgns import train_sgns_chunk  # noqa: E402
from skembed.nn.subwords import SubwordBags  # noqa: E402


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


#: word 0's bag = rows {0, 3}; word 1's bag = rows {1, 3, 4}; word 2 (the noise word) = row 2
ROWS = {0: [0, 3], 1: [1, 3, 4]}


def _bags():
    return SubwordBags(np.array([0, 2, 5, 6]), np.array([0, 3, 1, 3, 4, 2]), "cpu")


def _window(s0, s1, ctx, centre, lr, noise=2):
    """One context word's fastText update by hand, from ``s0``/``s1`` as they are: the mean
    of its bag rows predicts ``centre`` (label 1) and ``noise`` (label 0). Returns the error
    that each of its bag rows receives and the update of each output row."""
    x = s0[ROWS[ctx]].mean(0)
    e = np.zeros_like(x)
    out = {}
    for target, label in ((centre, 1.0), (noise, 0.0)):
        g = (label - _sig(x @ s1[target])) * lr
        e += g * s1[target]
        out[target] = g * x
    return e, out


def test_bags_average_inputs_and_update_every_row():
    # one centre per step: each step reads the rows the previous one wrote (plain SGD)
    g = torch.Generator().manual_seed(4)
    syn0 = (torch.rand(5, 4, generator=g, dtype=torch.float64) - 0.5).float()
    syn1 = (torch.rand(3, 4, generator=g, dtype=torch.float64) - 0.5).float()
    s0, s1 = syn0.double().numpy().copy(), syn1.double().numpy().copy()
    lr = 0.1
    train_sgns_chunk(
        syn0, syn1, np.array([0, 1], np.int32), np.array([0, 2]), neg_prob=torch.zeros(3),
        neg_alias=torch.full((3,), 2), window=1, negative=1, alpha_start=lr, alpha_end=lr,
        seed=0, subwords=_bags(), batch_words=1,
    )  # fmt: skip
    for centre, ctx in ((0, 1), (1, 0)):
        e, out = _window(s0, s1, ctx, centre, lr)
        for target, update in out.items():
            s1[target] += update
        s0[ROWS[ctx]] += e
    np.testing.assert_allclose(syn0.numpy(), s0, atol=1e-6)
    np.testing.assert_allclose(syn1.numpy(), s1, atol=1e-6)


def test_block_finds_each_steps_distinct_words_and_their_rows():
    # words 0 and 1 share row 3; step 0 holds centres 0-1, step 1 centre 2
    bags = _bags()
    ctx = torch.tensor([[1, 0], [1, 1], [2, 0]])
    valid = torch.tensor([[True, False], [True, True], [True, True]])
    block = bags.block(ctx, valid, 2)
    first = block.step(0)
    assert first.words.tolist() == [1, 3]  # word 3 = the empty bag of the masked slot
    assert first.inv.tolist() == [[0, 1], [0, 0]]
    assert first.rows.tolist() == [1, 3, 4] and first.owner.tolist() == [0, 0, 0]
    assert first.counts.tolist() == [3, 0]
    second = block.step(1)
    assert second.words.tolist() == [0, 2] and second.inv.tolist() == [[1, 0]]
    assert second.rows.tolist() == [0, 3, 2] and second.owner.tolist() == [0, 0, 1]


def _corpus(seed=0, n_words=40, n_tokens=3000):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_words + 1)
    ids = rng.choice(n_words, n_tokens, p=p / p.sum()).astype(np.int32)
    return ids, np.array([0, 700, 702, 2000, n_tokens])


_CUDA = pytest.param(
    "cuda",
    marks=pytest.mark.skipif(
        not torch.cuda.is_available(), reason="no CUDA device in this process"
    ),
)


@pytest.mark.parametrize("device", ["cpu", _CUDA])
@pytest.mark.parametrize("sg", [True, False])
@pytest.mark.parametrize("cap, bound", [(None, None), (3.0, None), (None, 0.02), (8.0, 0.05)])
def test_one_row_bags_train_exactly_like_word_rows(sg, cap, bound, device):
    # a bag of one row per word is Word2Vec: the per-distinct-word sums, the update counts of
    # update_cap and the curvature sums must give what the slot-by-slot path gives (the
    # frequent words fill many slots of each 256-centre step); on CUDA the atomic adds change
    # only the order of the float64 sums
    ids, offsets = _corpus()
    n_words, dim = 40, 8
    out = []
    for bags in (None, SubwordBags(np.arange(n_words + 1), np.arange(n_words), device)):
        g = torch.Generator().manual_seed(1)
        syn0 = (torch.rand(n_words, dim, generator=g, dtype=torch.float64) - 0.5).to(device)
        syn1 = ((torch.rand(n_words, dim, generator=g, dtype=torch.float64) - 0.5) / 4).to(device)
        loss, n = train_sgns_chunk(
            syn0, syn1, ids, offsets, neg_prob=torch.ones(n_words), neg_alias=torch.arange(n_words),
            window=3, negative=3, alpha_start=0.02, alpha_end=0.01, seed=5, sg=sg, subwords=bags,
            batch_words=256, update_cap=cap, curvature_bound=bound,
        )  # fmt: skip
        out.append((syn0, syn1, float(loss), float(n)))
    (a0, a1, la, na), (b0, b1, lb, nb) = out
    assert na == nb > 0
    assert lb == pytest.approx(la, rel=1e-12)
    np.testing.assert_allclose(b0.cpu().numpy(), a0.cpu().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(b1.cpu().numpy(), a1.cpu().numpy(), rtol=0, atol=1e-12)


def test_one_step_sums_every_slot_into_shared_rows_under_the_cap():
    # tokens [0, 1, 0] in one step (window 1, noise word 2): word 0 (bag rows {0, 3}) fills
    # two slots (contexts of centre 1), word 1 (rows {1, 3, 4}) two (contexts of centres 0
    # and 2). Every slot reads the parameters before the step; row 3 is in every bag, so it
    # takes 4 updates and a cap of 2 halves their sum, rows 0, 1 and 4 take 2 each (whole).
    s0 = np.random.default_rng(3).random((5, 4)) - 0.5
    s1 = np.random.default_rng(4).random((3, 4)) - 0.5
    syn0, syn1 = torch.tensor(s0), torch.tensor(s1)
    lr = 0.2
    train_sgns_chunk(
        syn0, syn1, np.array([0, 1, 0], np.int32), np.array([0, 3]),
        neg_prob=torch.zeros(3), neg_alias=torch.full((3,), 2), window=1, negative=1,
        alpha_start=lr, alpha_end=lr, seed=0, subwords=_bags(), batch_words=3, update_cap=2.0,
        curvature_bound=None,
    )  # fmt: skip
    d0, d1 = np.zeros_like(s0), np.zeros_like(s1)
    n_row = np.zeros(5)
    for centre, ctxs in ((0, [1]), (1, [0, 0]), (0, [1])):
        for ctx in ctxs:
            e, out = _window(s0, s1, ctx, centre, lr)  # every slot reads s0, s1 as before
            for target, update in out.items():
                d1[target] += update
            d0[ROWS[ctx]] += e
            n_row[ROWS[ctx]] += 1
    assert n_row.tolist() == [2, 2, 0, 4, 2]
    d0 *= np.minimum(1.0, 2.0 / np.maximum(n_row, 1))[:, None]
    np.testing.assert_allclose(syn0.numpy(), s0 + d0, atol=1e-12)
    # output rows: centre rows 0 and 1 are used by 2 and 1 windows, noise row 2 by 3 windows
    d1[2] *= 2.0 / 3.0
    np.testing.assert_allclose(syn1.numpy(), s1 + d1, atol=1e-12)

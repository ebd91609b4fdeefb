"""Tests of ``skembed/nn/dbow.py``: the batched PV-DBOW step against a hand-written loop."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.dbow import train_dbow_chunk  # noqa: E402


def _forced_noise(n_words, word):
    """An alias table whose every draw is ``word``."""
    prob = torch.zeros(n_words)
    prob[word] = 1.0
    return prob, torch.full((n_words,), word)


def _reference(syn0, syn1neg, ids, offsets, doc_rows, noise, a0, a1):
    """Sequential SGD over the tokens in rank order (each piece's first token, then ...)."""
    syn0, syn1neg = syn0.astype(np.float64), syn1neg.astype(np.float64)
    visits = sorted(
        (p - offsets[d], d, p)
        for d in range(len(offsets) - 1)
        for p in range(offsets[d], offsets[d + 1])
    )
    n = len(visits)
    loss = 0.0
    for k, (_, d, p) in enumerate(visits):
        lr = a0 + (a1 - a0) / n * k
        x = syn0[doc_rows[d]].copy()
        grad_x = np.zeros_like(x)
        for o, label in ((ids[p], 1.0), (noise, 0.0)):
            if label == 0.0 and o == ids[p]:
                continue
            f = x @ syn1neg[o]
            s = 1.0 / (1.0 + np.exp(-f))
            loss -= np.log(s if label else 1.0 - s)
            g = (label - s) * lr
            grad_x += g * syn1neg[o]
            syn1neg[o] += g * x
        syn0[doc_rows[d]] += grad_x
    return syn0, syn1neg, loss


def test_one_token_per_step_is_sequential_sgd_in_rank_order():
    rng = np.random.default_rng(0)
    n_words, dim = 5, 4
    syn0 = rng.normal(scale=0.3, size=(n_words + 2, dim)).astype(np.float32)
    syn1neg = rng.normal(scale=0.3, size=(n_words, dim)).astype(np.float32)
    ids = np.array([0, 1, 2, 3, 1, 4, 3], dtype=np.int32)  # token 3 is the noise word too
    offsets = np.array([0, 4, 7])
    doc_rows = np.array([n_words + 1, n_words])
    want0, want1, want_loss = _reference(syn0, syn1neg, ids, offsets, doc_rows, 3, 0.1, 0.05)
    s0, s1 = torch.from_numpy(syn0.copy()), torch.from_numpy(syn1neg.copy())
    prob, alias = _forced_noise(n_words, 3)
    loss, n = train_dbow_chunk(
        s0, s1, ids, offsets, doc_rows, neg_prob=prob, neg_alias=alias, negative=1,
        alpha_start=0.1, alpha_end=0.05, seed=0, batch_words=1,
    )  # fmt: skip
    assert float(n) == 7
    np.testing.assert_allclose(float(loss), want_loss, rtol=1e-5)
    np.testing.assert_allclose(s0.numpy(), want0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s1.numpy(), want1, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(s0.numpy()[:n_words], syn0[:n_words])  # word rows untouched


def test_a_batch_sums_the_updates_read_from_the_same_parameters():
    # two tokens of one document in one step: the row moves by the sum of both updates,
    # each computed from the vectors before the step
    syn0 = torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.2, -0.1]])
    syn1neg = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    prob, alias = _forced_noise(3, 2)
    x = syn0[3].clone()
    out = syn1neg.clone()
    train_dbow_chunk(
        syn0, syn1neg, [0, 1], [0, 2], [3], neg_prob=prob, neg_alias=alias, negative=1,
        alpha_start=0.5, alpha_end=0.5, seed=0, batch_words=2,
    )  # fmt: skip
    sig = torch.sigmoid
    g = {w: (1 - sig(x @ out[w])) * 0.5 for w in (0, 1)}
    g_noise = -sig(x @ out[2]) * 0.5  # once per token
    want = x + g[0] * out[0] + g[1] * out[1] + 2 * g_noise * out[2]
    torch.testing.assert_close(syn0[3], want)
    torch.testing.assert_close(syn1neg[2], out[2] + 2 * g_noise * x)
    torch.testing.assert_close(syn1neg[0], out[0] + g[0] * x)


def test_bad_input_is_refused_with_the_reason():
    syn0, syn1neg = torch.zeros(4, 2), torch.zeros(3, 2)
    prob, alias = _forced_noise(3, 2)
    kw = dict(neg_prob=prob, neg_alias=alias, alpha_start=0.1, alpha_end=0.1, seed=0)
    with pytest.raises(ValueError, match="doc_rows has 2 rows but offsets describes 1 pieces"):
        train_dbow_chunk(syn0, syn1neg, [0, 1], [0, 2], [3, 3], negative=1, **kw)
    with pytest.raises(ValueError, match="negative and batch_words must be >= 1"):
        train_dbow_chunk(syn0, syn1neg, [0, 1], [0, 2], [3], negative=0, **kw)
    loss, n = train_dbow_chunk(syn0, syn1neg, [], [0, 0], [3], negative=1, **kw)
    assert float(n) == 0 and float(loss) == 0

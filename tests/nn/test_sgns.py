"""The device-resident word2vec trainer (skembed.nn.sgns), checked on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.sgns import train_sgns_chunk  # noqa: E402


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _forced_noise(n_words, word):
    """An alias table that always draws ``word``."""
    prob = torch.zeros(n_words)
    alias = torch.full((n_words,), word, dtype=torch.int64)
    return prob, alias


def _params(n_rows, n_out, dim, seed=0):
    g = torch.Generator().manual_seed(seed)
    syn0 = (torch.rand(n_rows, dim, generator=g, dtype=torch.float64) - 0.5).float()
    syn1 = (torch.rand(n_out, dim, generator=g, dtype=torch.float64) - 0.5).float()
    return syn0, syn1


def test_skipgram_single_pairs_follow_word2vec_formula():
    # document [0, 1] with window 1: centre 0 has context 1, then centre 1 has context 0;
    # one noise word, always word 2; one centre per batch, so the updates are sequential
    syn0, syn1 = _params(3, 3, 4)
    s0, s1 = syn0.double().numpy().copy(), syn1.double().numpy().copy()
    prob, alias = _forced_noise(3, 2)
    lr = 0.1
    loss, n = train_sgns_chunk(
        syn0, syn1, np.array([0, 1], np.int32), np.array([0, 2]), neg_prob=prob,
        neg_alias=alias, window=1, negative=1, alpha_start=lr, alpha_end=lr, seed=3,
        batch_words=1,
    )  # fmt: skip
    expected_loss = 0.0
    for centre, ctx in ((0, 1), (1, 0)):
        l1 = s0[ctx].copy()
        neu1e = np.zeros_like(l1)
        for target, label in ((centre, 1.0), (2, 0.0)):
            f = l1 @ s1[target]
            expected_loss += -np.log(_sig(f if label else -f))
            g = (label - _sig(f)) * lr
            neu1e += g * s1[target]
            s1[target] += g * l1
        s0[ctx] += neu1e
    np.testing.assert_allclose(syn0.numpy(), s0, atol=1e-6)
    np.testing.assert_allclose(syn1.numpy(), s1, atol=1e-6)
    assert float(n) == 2.0
    assert float(loss) == pytest.approx(expected_loss, rel=1e-6)


def test_shared_negatives_within_a_window_read_the_same_parameters():
    # document [0, 1, 0] window 1: centre 1 has contexts 0 and 0 (both read before update)
    syn0, syn1 = _params(3, 3, 4, seed=1)
    s0, s1 = syn0.double().numpy().copy(), syn1.double().numpy().copy()
    prob, alias = _forced_noise(3, 2)
    lr = 0.05
    # batch of one centre: the middle one (positions 0 and 2 form their own batches)
    ids = np.array([0, 1, 0], np.int32)
    train_sgns_chunk(
        syn0, syn1, ids[1:2], np.array([0, 1]), neg_prob=prob, neg_alias=alias,
        window=1, negative=1, alpha_start=lr, alpha_end=lr, seed=0, batch_words=8,
    )  # fmt: skip
    # a single-token document has no context: nothing moves
    np.testing.assert_array_equal(syn0.double().numpy(), s0)
    train_sgns_chunk(
        syn0, syn1, ids, np.array([0, 3]), neg_prob=prob, neg_alias=alias,
        window=1, negative=1, alpha_start=lr, alpha_end=lr, seed=0, batch_words=8,
    )  # fmt: skip
    # all three centres in one batch: every score uses the initial parameters
    grad0 = np.zeros(4)
    grad1 = np.zeros(4)
    d1 = np.zeros((3, 4))
    for centre, ctx in ((0, 1), (1, 0), (1, 0), (0, 1)):
        for target, label in ((centre, 1.0), (2, 0.0)):
            g = (label - _sig(s0[ctx] @ s1[target])) * lr
            (grad1 if ctx == 1 else grad0)[:] += g * s1[target]
            d1[target] += g * s0[ctx]
    np.testing.assert_allclose(syn0.numpy()[0], s0[0] + grad0, atol=1e-6)
    np.testing.assert_allclose(syn0.numpy()[1], s0[1] + grad1, atol=1e-6)
    np.testing.assert_allclose(syn1.numpy(), s1 + d1, atol=1e-6)


def test_cbow_adds_the_error_to_every_context_row():
    syn0, syn1 = _params(3, 3, 4, seed=2)
    s0, s1 = syn0.double().numpy().copy(), syn1.double().numpy().copy()
    prob, alias = _forced_noise(3, 2)
    lr = 0.05
    # centre 1 with contexts 0 and 2 (positions 0 and 2); only that centre: batch it alone
    ids = np.array([0, 1, 2], np.int32)
    # window 1, centres 0 and 2 form other examples; use batch_words=3 so all read s0/s1
    loss, n = train_sgns_chunk(
        syn0, syn1, ids, np.array([0, 3]), neg_prob=prob, neg_alias=alias, window=1,
        negative=1, alpha_start=lr, alpha_end=lr, seed=0, sg=False, batch_words=3,
    )  # fmt: skip
    d0 = np.zeros((3, 4))
    d1 = np.zeros((3, 4))
    for centre, ctxs in ((0, [1]), (1, [0, 2]), (2, [1])):
        h = s0[ctxs].mean(0)
        e = np.zeros(4)
        for target, label in ((centre, 1.0), (2, 0.0)):
            if label == 0.0 and target == centre:
                continue  # a noise word equal to the centre is skipped
            g = (label - _sig(h @ s1[target])) * lr
            e += g * s1[target]
            d1[target] += g * h
        for c in ctxs:
            d0[c] += e
    np.testing.assert_allclose(syn0.numpy(), s0 + d0, atol=1e-6)
    np.testing.assert_allclose(syn1.numpy(), s1 + d1, atol=1e-6)
    assert float(n) == 3.0


@pytest.mark.parametrize(
    "cap, bound, factor", [(None, None, 1.0), (2.0, None, 0.5), (None, 0.25, 0.5), (None, 0.5, 1.0)]
)
def test_learning_rate_decays_linearly_and_frequent_rows_are_capped(cap, bound, factor):
    # zero output vectors: the first update of each centre's output row is
    # lr_p * (1 - 0.5) * input, so the rows reveal the per-centre learning rates.
    # The noise row is used by 4 windows: a count cap of 2 halves its summed update; so does a
    # curvature bound of 0.25, its summed lr * sigmoid'(0) * |x|^2 being 0.5 * (0.4 + 0.3 + 0.2
    # + 0.1) = 0.5 (a bound of 0.5 leaves it whole, and each centre's row is below both bounds)
    n_tok = 4
    syn0 = torch.ones(n_tok + 1, 2)
    syn1 = torch.zeros(n_tok + 1, 2)
    prob, alias = _forced_noise(n_tok + 1, n_tok)
    ids = np.array([0, 1, 2, 3], np.int32)
    offsets = np.array([0, 2, 4])
    train_sgns_chunk(
        syn0, syn1, ids, offsets, neg_prob=prob, neg_alias=alias, window=1, negative=1,
        alpha_start=0.4, alpha_end=0.0, seed=0, batch_words=4, update_cap=cap,
        curvature_bound=bound,
    )  # fmt: skip
    lrs = 0.4 - 0.4 * np.arange(4) / 4
    np.testing.assert_allclose(syn1.numpy()[:4, 0], 0.5 * lrs, atol=1e-7)
    noise = -0.5 * lrs.sum() * factor
    np.testing.assert_allclose(syn1.numpy()[n_tok], [noise, noise], atol=1e-7)


def _reference_epoch(syn0, syn1, ids, offsets, window, negative, lr, prob, alias, sg, rng):
    """word2vec's sequential SGD, one window at a time (shared negatives in skip-gram), in numpy."""
    loss, n = 0.0, 0
    n_words = prob.shape[0]
    for d in range(offsets.size - 1):
        s, e = offsets[d], offsets[d + 1]
        for p in range(s, e):
            w = ids[p]
            eff = window - rng.integers(window)
            ctx = [ids[c] for c in range(max(s, p - eff), min(e, p + eff + 1)) if c != p]
            if not ctx:
                continue
            t = rng.integers(n_words, size=negative)
            t = np.where(rng.random(negative) < prob[t], t, alias[t])
            outs = [w] + [x for x in t if x != w]
            labels = np.array([1.0] + [0.0] * (len(outs) - 1))
            o = syn1[outs]
            if sg:
                c = syn0[ctx]
                f = c @ o.T
                g = (labels - _sig(f)) * lr
                loss -= np.log(_sig(np.where(labels > 0, f, -f))).sum()
                np.add.at(syn1, outs, g.T @ c)
                np.add.at(syn0, ctx, g @ o)
                n += len(ctx)
            else:
                h = syn0[ctx].mean(0)
                f = o @ h
                g = (labels - _sig(f)) * lr
                loss -= np.log(_sig(np.where(labels > 0, f, -f))).sum()
                np.add.at(syn1, outs, g[:, None] * h)
                np.add.at(syn0, ctx, np.broadcast_to(g @ o, (len(ctx), h.size)))
                n += 1
    return loss / n


@pytest.mark.parametrize("sg", [True, False])
def test_loss_decreases_like_sequential_word2vec(sg):
    from skembed.kernels import sampling as _sampling

    rng = np.random.default_rng(0)
    n_words, dim, length = 30, 16, 12
    # a corpus with structure: word w is usually followed by w + 1
    docs = []
    for _ in range(150):
        w = rng.integers(n_words)
        docs.append(
            [
                (w + k) % n_words if rng.random() < 0.9 else rng.integers(n_words)
                for k in range(length)
            ]
        )
    ids = np.concatenate(docs).astype(np.int32)
    offsets = np.arange(0, ids.size + 1, length, dtype=np.int64)
    counts = np.bincount(ids, minlength=n_words)
    prob, alias = _sampling.alias_table(_sampling.noise_distribution(counts, 0.75))
    init = ((rng.random((n_words, dim), dtype=np.float32) - 0.5) / dim).astype(np.float32)
    lr = 0.025 if sg else 0.05
    epochs = 6

    t0, t1 = torch.from_numpy(init.copy()), torch.zeros(n_words, dim)
    mine = []
    for epoch in range(epochs):
        loss, n = train_sgns_chunk(
            t0, t1, ids, offsets, neg_prob=prob, neg_alias=alias, window=3, negative=5,
            alpha_start=lr, alpha_end=lr, seed=epoch, sg=sg, batch_words=64,
        )  # fmt: skip
        mine.append(float(loss / n))
    r0, r1 = init.astype(np.float64), np.zeros((n_words, dim))
    ref_rng = np.random.default_rng(1)
    ref = [
        _reference_epoch(r0, r1, ids, offsets, 3, 5, lr, prob, alias, sg, ref_rng)
        for _ in range(epochs)
    ]
    assert mine[-1] < 0.8 * mine[0]
    # batches of 64 centres follow sequential SGD's loss curve within 5 %
    np.testing.assert_allclose(mine, ref, rtol=0.05)


def test_rejects_bad_arguments():
    syn0, syn1 = _params(3, 3, 4)
    prob, alias = _forced_noise(3, 2)
    kw = dict(neg_prob=prob, neg_alias=alias, alpha_start=0.1, alpha_end=0.1, seed=0)
    with pytest.raises(ValueError, match="window"):
        train_sgns_chunk(syn0, syn1, np.array([0, 1]), np.array([0, 2]), window=0, negative=1, **kw)
    with pytest.raises(ValueError, match="negative"):
        train_sgns_chunk(syn0, syn1, np.array([0, 1]), np.array([0, 2]), window=1, negative=0, **kw)


@pytest.mark.parametrize("cls_name", ["Word2VecTransformer", "FastTextTransformer"])
def test_estimators_train_through_the_batched_engine_as_on_a_gpu(monkeypatch, cls_name):
    # On a GPU the estimators train with SgnsEngine (engine="auto" picks "torch-batched");
    # naming that engine runs the same code here on the CPU (CUDA: tests/test_cuda.py).
    import skembed
    from skembed.datasets import load_bbc_news
    from skembed.text.word2vec import _engines

    texts, _ = load_bbc_news()
    texts = texts[:300]
    used = []
    real = _engines.SgnsEngine.train_chunk
    monkeypatch.setattr(
        _engines.SgnsEngine, "train_chunk", lambda self, *a: used.append(1) or real(self, *a)
    )
    # small steps: 300 articles are ~70k kept tokens per epoch
    params = dict(vector_size=32, epochs=5, min_count=3, engine="torch-batched", batch_size=512)
    params["random_state"] = 0
    if cls_name == "FastTextTransformer":
        params["bucket"] = 20_000
    est = getattr(skembed, cls_name)(**params).fit(texts)
    assert used and est.engine_ == "torch-batched"
    losses = est.loss_history_
    assert np.isfinite(losses).all() and losses[-1] < losses[0]
    wv = est.wv_
    # topical neighbours even from 300 articles: a sports word is closer to another
    assert wv.similarity("match", "game") > wv.similarity("match", "bank")


def test_engine_names_the_trainer():
    from skembed.text.word2vec._word2vec import Word2VecTransformer

    docs = [["a", "b", "c", "a", "b"], ["b", "c", "a", "c"]] * 5
    small = dict(vector_size=4, epochs=1, min_count=1, random_state=0)
    assert Word2VecTransformer(**small).fit(docs).engine_ == "numba"
    assert Word2VecTransformer(engine="torch", **small).fit(docs).engine_ == "torch"
    with pytest.raises(ValueError, match="engine='torch-batched' trains negative sampling only"):
        Word2VecTransformer(engine="torch-batched", hs=1, negative=0, **small).fit(docs)
    with pytest.raises(ValueError, match="engine"):
        Word2VecTransformer(engine="sgns", **small).fit(docs)

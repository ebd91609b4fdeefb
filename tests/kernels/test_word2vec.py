"""Exact tests of the word2vec training preparation and numba kernels on hand-checkable inputs."""

import numpy as np
import pytest

from skembed.kernels import sampling as S
from skembed.kernels.scheduler import train_word2vec_chunk as train_chunk
from skembed.kernels.word2vec import (
    KernelConfig,
)

SIG, LOGSIG = S.sigmoid_tables()


def _table_sigmoid(f):
    """word2vec.c's table lookup, as the kernel does it (scores kept inside (-6, 6))."""
    assert -S.MAX_EXP < f < S.MAX_EXP
    return SIG[int((np.float32(f) + np.float32(S.MAX_EXP)) * np.float32(1000 / 6.0 / 2.0))]


def _ref_pair(syn0_rows, out, targets, labels, alpha):
    """Reference update of one (input rows, output rows) example; returns neu1e."""
    l1 = syn0_rows.mean(axis=0)
    neu1e = np.zeros_like(l1)
    for t, lab in zip(targets, labels, strict=True):
        f = float(l1 @ out[t])
        g = np.float32((lab - _table_sigmoid(f)) * alpha)
        neu1e += g * out[t]
        out[t] += g * l1
    return neu1e


def _tables(n_words):
    codes = np.zeros((n_words, 1), np.uint8)
    points = np.zeros((n_words, 1), np.int32)
    lengths = np.zeros(n_words, np.int32)
    return codes, points, lengths


def _vectors(n_rows, dim, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n_rows, dim), dtype=np.float32) - 0.5).astype(np.float32)


def _run(
    syn0,
    syn1neg,
    ids,
    offsets,
    *,
    sg,
    negative=1,
    hs=False,
    syn1=None,
    huff=None,
    sub=(None, None),
    alpha=0.1,
    window=1,
    shared=False,
    n_parts=1,
    sync_tokens=0,
):
    n_words = syn1neg.shape[0]
    # degenerate alias table: every negative sample is the last word
    neg_prob = np.zeros(n_words, np.float32)
    neg_alias = np.full(n_words, n_words - 1, np.int32)
    codes, points, lengths = huff if huff is not None else _tables(n_words)
    if syn1 is None:
        syn1 = np.zeros((0, syn0.shape[1]), np.float32)
    config = KernelConfig(
        sg=sg,
        hs=hs,
        negative=negative,
        window=window,
        shared_negatives=shared,
        neg_prob=neg_prob,
        neg_alias=neg_alias,
        codes=codes,
        points=points,
        code_lengths=lengths,
        sigmoid=SIG,
        log_sigmoid=LOGSIG,
        sub_indptr=np.zeros(0, np.int64) if sub[0] is None else sub[0],
        sub_indices=np.zeros(0, np.int32) if sub[1] is None else sub[1],
        sync_tokens=sync_tokens,
    )
    ids = np.asarray(ids, np.int32)
    return train_chunk(
        syn0, syn1neg, syn1, ids, np.asarray(offsets, np.int64), config, alpha, alpha, 0, n_parts
    )


def test_skipgram_negative_sampling_step_matches_reference():
    # vocabulary 0..3, word 3 is the (fixed) negative; window=1 draws b=0 always
    dim = 4
    syn0 = _vectors(4, dim)
    syn1neg = _vectors(4, dim, seed=1)
    ref0, ref1 = syn0.copy(), syn1neg.copy()
    stats = _run(syn0, syn1neg, [0, 1, 2], [0, 3], sg=True)
    # word2vec.c order: for each centre p, each context c predicts ids[p]
    expected_loss = 0.0
    for p, c in [(0, 1), (1, 0), (1, 2), (2, 1)]:
        l1 = ref0[c].copy()
        for t, lab in [(p, 1.0), (3, 0.0)]:
            f = float(l1 @ ref1[t])
            idx = int((np.float32(f) + np.float32(6.0)) * np.float32(1000 / 12))
            expected_loss += -LOGSIG[idx] if lab else -LOGSIG[999 - idx]
        ref0[c] += _ref_pair(ref0[[c]], ref1, [p, 3], [1.0, 0.0], 0.1)
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, ref1, rtol=0, atol=1e-6)
    assert stats[0, 1] == 4  # four (context, centre) pairs
    assert stats[0, 0] == pytest.approx(expected_loss, rel=1e-5)
    assert stats[0, 2] == 0


def test_cbow_step_matches_reference():
    dim = 3
    syn0 = _vectors(4, dim)
    syn1neg = _vectors(4, dim, seed=2)
    ref0, ref1 = syn0.copy(), syn1neg.copy()
    _run(syn0, syn1neg, [0, 1, 2], [0, 3], sg=False)
    for p, ctx in [(0, [1]), (1, [0, 2]), (2, [1])]:
        neu1e = _ref_pair(ref0[ctx], ref1, [p, 3], [1.0, 0.0], 0.1)
        for c in ctx:
            ref0[c] += neu1e  # the full error to every context word (word2vec.c)
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, ref1, rtol=0, atol=1e-6)


def test_subword_csr_identity_equals_plain_and_mean_rows_reference():
    dim = 4
    ids, offsets = [0, 1, 2, 1], [0, 4]
    # CBOW: the identity CSR (word w is row w) trains exactly as plain word2vec
    a0, a1 = _vectors(4, dim), _vectors(4, dim, seed=1)
    b0, b1 = a0.copy(), a1.copy()
    _run(a0, a1, ids, offsets, sg=False)
    ident = (np.arange(5, dtype=np.int64), np.arange(4, dtype=np.int32))
    _run(b0, b1, ids, offsets, sg=False, sub=ident)
    np.testing.assert_array_equal(a0, b0)
    np.testing.assert_array_equal(a1, b1)


@pytest.mark.parametrize("shared", [False, True])
def test_fasttext_skipgram_centre_bag_predicts_the_context_word(shared):
    # word w -> rows {w, 4 + w % 2} of a 6-row input matrix (FastText-like buckets);
    # fastText's and gensim's skip-gram: the centre word's bag predicts the context word
    dim = 4
    indptr = np.arange(0, 9, 2, dtype=np.int64)
    indices = np.array([[w, 4 + w % 2] for w in range(4)], np.int32).ravel()
    syn0 = _vectors(6, dim, seed=3)
    syn1neg = _vectors(4, dim, seed=4)
    ref0, ref1 = syn0.copy(), syn1neg.copy()
    _run(syn0, syn1neg, [0, 1], [0, 2], sg=True, sub=(indptr, indices), shared=shared)
    for p, c in [(0, 1), (1, 0)]:
        rows = [p, 4 + p % 2]
        neu1e = _ref_pair(ref0[rows], ref1, [c, 3], [1.0, 0.0], 0.1)
        for r in rows:
            ref0[r] += neu1e  # the full gradient to each row (fastText, gensim)
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, ref1, rtol=0, atol=1e-6)


def test_fasttext_shared_window_sums_the_bag_gradient():
    # one window of two context words: the bag is read once, each context word is a
    # positive, the noise word (the last word) is scored once and counted for both pairs
    dim = 4
    indptr = np.arange(0, 9, 2, dtype=np.int64)
    indices = np.array([[w, 4 + w % 2] for w in range(4)], np.int32).ravel()
    syn0 = _vectors(6, dim, seed=5)
    syn1neg = _vectors(4, dim, seed=6) * np.float32(0.1)
    ref0, ref1 = syn0.copy(), syn1neg.copy()
    # window=1 around the middle token only: ids [2, 0, 1] with centre 0 at position 1
    stats = _run(syn0, syn1neg, [2, 0, 1], [0, 3], sg=True, sub=(indptr, indices), shared=True)
    # windows are drawn in 1..1, so every centre sees its neighbours; do all three
    for p, ctx in [(2, [0]), (0, [2, 1]), (1, [0])]:
        rows = [p, 4 + p % 2]
        h = ref0[rows].mean(axis=0)
        err = np.zeros(dim, np.float32)
        for c in ctx:
            g = np.float32((1.0 - _table_sigmoid(float(h @ ref1[c]))) * 0.1)
            err += g * ref1[c]
            ref1[c] += g * h
        m = sum(c != 3 for c in ctx)
        g = np.float32((0.0 - _table_sigmoid(float(h @ ref1[3]))) * 0.1 * m)
        err += g * ref1[3]
        ref1[3] += g * h
        for r in rows:
            ref0[r] += err
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, ref1, rtol=0, atol=1e-6)
    assert stats[0, 1] == 4  # pairs


def test_hierarchical_softmax_step_matches_reference():
    counts = np.array([5, 3, 1, 1])
    codes, points, lengths = S.huffman_tree(counts)
    dim = 3
    syn0 = _vectors(4, dim)
    syn1 = _vectors(3, dim, seed=5) * 0.1
    ref0, ref1 = syn0.copy(), syn1.copy()
    _run(
        syn0,
        np.zeros((4, dim), np.float32),
        [2, 0],
        [0, 2],
        sg=True,
        negative=0,
        hs=True,
        syn1=syn1,
        huff=(codes, points, lengths),
    )
    for p, c in [(0, 1), (1, 0)]:
        w = [2, 0][p]
        c_word = [2, 0][c]
        path = points[w, : lengths[w]]
        labels = 1.0 - codes[w, : lengths[w]].astype(np.float32)
        ref0[c_word] += _ref_pair(ref0[[c_word]], ref1, path, labels, 0.1)
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1, ref1, rtol=0, atol=1e-6)


def test_nan_scores_are_flagged():
    syn0 = np.full((3, 2), np.nan, np.float32)
    stats = _run(syn0, np.ones((3, 2), np.float32), [0, 1], [0, 2], sg=True)
    assert stats[0, 2] == 1.0


def test_shared_negatives_window_step_matches_reference():
    # every window's scores come from the same parameters, then all rows are updated
    dim = 4
    syn0 = _vectors(5, dim)
    syn1neg = _vectors(5, dim, seed=6)
    ref0, ref1 = syn0.copy(), syn1neg.copy()
    stats = _run(syn0, syn1neg, [0, 1, 2, 3], [0, 4], sg=True, shared=True)
    for p, ctx in [(0, [1]), (1, [0, 2]), (2, [1, 3]), (3, [2])]:
        outs, labels = [p, 4], [1.0, 0.0]
        L = ref0[ctx].copy()
        out_rows = ref1[outs].copy()
        f = L @ out_rows.T
        idx = ((f.astype(np.float32) + np.float32(6.0)) * np.float32(1000 / 12)).astype(int)
        g = ((np.array(labels, np.float32)[None, :] - SIG[idx]) * np.float32(0.1)).astype(
            np.float32
        )
        for i, c in enumerate(ctx):
            ref0[c] += g[i] @ out_rows
        for j, t in enumerate(outs):
            ref1[t] += g[:, j] @ L
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, ref1, rtol=0, atol=1e-6)
    assert stats[0, 1] == 6  # context/centre pairs


@pytest.mark.parametrize("sg,shared", [(True, False), (True, True), (False, False), (False, True)])
def test_deterministic_mode_adds_each_parts_delta(sg, shared):
    # window=1 and a degenerate noise table make every draw irrelevant, so each part's
    # update can be computed alone; both parts write output rows 4 (negatives) and 2/3
    dim = 4
    syn0, syn1neg = _vectors(6, dim), _vectors(6, dim, seed=3)
    docs = ([0, 1, 2], [3, 4, 2])
    kw = dict(sg=sg, shared=shared, window=1)
    alone = []
    for doc in docs:
        a0, a1 = syn0.copy(), syn1neg.copy()
        _run(a0, a1, doc, [0, 3], **kw)
        alone.append((a0 - syn0, a1 - syn1neg))
    for sync in [1, 2, 1000]:
        b0, b1 = syn0.copy(), syn1neg.copy()
        stats = _run(b0, b1, docs[0] + docs[1], [0, 3, 6], n_parts=2, sync_tokens=sync, **kw)
        assert stats[:, 2].sum() == 0
        if sync == 1000:  # one phase: the shared rows get the sum of both parts' deltas
            np.testing.assert_allclose(b0, syn0 + alone[0][0] + alone[1][0], atol=1e-6)
            np.testing.assert_allclose(b1, syn1neg + alone[0][1] + alone[1][1], atol=1e-6)
        c0, c1 = syn0.copy(), syn1neg.copy()
        _run(c0, c1, docs[0] + docs[1], [0, 3, 6], n_parts=2, sync_tokens=sync, **kw)
        np.testing.assert_array_equal(b0, c0)
        np.testing.assert_array_equal(b1, c1)


def _ref_cbow_shared(ref0, ref1, docs, noise, alpha, batch):
    """numpy HogBatch CBOW (window 1, one fixed noise word): ``batch`` consecutive centre
    words with a context score against their own word and the shared noise word from the
    same parameters, then every row is updated. Returns (loss, number of centres)."""
    centres = []
    for doc in docs:
        for i, w in enumerate(doc):
            ctx = doc[max(0, i - 1) : i] + doc[i + 1 : i + 2]
            if ctx:  # a centre without context is skipped
                centres.append((w, ctx))
    loss = 0.0
    for b in range(0, len(centres), batch):
        rows = centres[b : b + batch]
        nb = len(rows)
        L = np.stack([ref0[ctx].mean(axis=0) for _, ctx in rows]).astype(np.float32)
        outs = [w for w, _ in rows] + [noise]
        G = np.zeros((nb, len(outs)), np.float32)
        for i, (w, _) in enumerate(rows):
            for j, o in enumerate(outs):
                if (j < nb and j != i) or (j >= nb and o == w):
                    continue  # another row's positive; the noise word is this row's centre
                lab = np.float32(j == i)
                f = float(L[i] @ ref1[o])
                idx = int((np.float32(f) + np.float32(6.0)) * np.float32(1000 / 12))
                loss += -LOGSIG[idx] if lab else -LOGSIG[999 - idx]
                G[i, j] = (lab - SIG[idx]) * np.float32(alpha)
        E = G @ ref1[outs]  # input gradients, from the output rows before the update
        for j, o in enumerate(outs):
            ref1[o] += G[:, j] @ L
        for i, (_, ctx) in enumerate(rows):
            for c in ctx:
                ref0[c] += E[i]
    return loss, len(centres)


def test_cbow_shared_batch_matches_numpy_reference():
    # scores of CBOW_BATCH consecutive centre words from the same parameters (HogBatch)
    from skembed.kernels._core import CBOW_BATCH

    dim = 4
    syn0 = _vectors(6, dim, seed=4)
    syn1neg = _vectors(6, dim, seed=5)
    ref0, ref1 = syn0.copy(), syn1neg.copy()
    # word 5 is the fixed noise word, and a centre word too (its noise column is skipped);
    # the one-token document has no context (skipped), batches run across documents
    docs = [[0, 1, 2, 5, 3], [1], [2, 3, 0, 4], [5, 1]]
    ids = sum(docs, [])
    offsets = np.cumsum([0] + [len(d) for d in docs])
    stats = _run(syn0, syn1neg, ids, offsets, sg=False, shared=True)
    loss, n_centres = _ref_cbow_shared(ref0, ref1, docs, 5, 0.1, CBOW_BATCH)
    np.testing.assert_allclose(syn0, ref0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, ref1, rtol=0, atol=1e-6)
    assert stats[0, 1] == n_centres == 11
    assert stats[0, 0] == pytest.approx(loss, rel=1e-5)
    assert stats[0, 2] == 0

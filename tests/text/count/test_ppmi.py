import math

import numpy as np
import pytest
import scipy.sparse as sp

from skembed import PPMIEmbedder
from skembed.text.count._ppmi import ppmi_matrix


def test_ppmi_formula_on_hand_computed_counts():
    C = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 3.0], [1.0, 3.0, 4.0]])
    alpha, shift = 0.75, math.log(1.5)
    N = C.sum()
    col_alpha = C.sum(axis=0) ** alpha
    expected = np.zeros_like(C)
    for i in range(3):
        for j in range(3):
            if C[i, j] == 0:
                continue
            pmi = math.log((C[i, j] / N) / ((C[i].sum() / N) * (col_alpha[j] / col_alpha.sum())))
            expected[i, j] = max(pmi - shift, 0.0)
    got = ppmi_matrix(sp.csr_matrix(C), context_smoothing=alpha, shift=shift)
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-12)
    assert got.nnz == np.count_nonzero(expected)  # no explicit zeros kept


def test_word_vectors_are_u_times_s_to_the_eig():
    docs = [
        "the cat sat on the mat and the dog sat on the log",
        "a cat and a dog played on the mat",
        "the bank gave a loan and the market rose",
        "stock market and bank loan rates rose",
    ] * 3
    est = PPMIEmbedder(n_components=3, window=2, eig=0.5, n_iter=30, random_state=0).fit(docs)
    # rebuild the PPMI matrix independently and compare the Gram matrices (sign-invariant)
    from skembed.text._analyzer import build_analyzer, encode, tokenize
    from skembed.text.count._cooccurrence import cooccurrence_matrix

    toks = tokenize(docs, build_analyzer())
    ids, offsets, _ = encode(toks, est.wv_.key_to_index)
    P = ppmi_matrix(
        cooccurrence_matrix(ids, offsets, len(est.wv_), 2, weighting="uniform")
    ).toarray()
    U, S, _ = np.linalg.svd(P)
    W = U[:, :3] * np.sqrt(S[:3])
    np.testing.assert_allclose(est.wv_.vectors @ est.wv_.vectors.T, W @ W.T, atol=1e-4)
    np.testing.assert_allclose(est.singular_values_, S[:3], rtol=1e-6)
    out = est.transform(docs[:2])
    mean0 = np.mean([est.wv_[t] for t in toks[0]], axis=0)
    np.testing.assert_allclose(out[0], mean0, rtol=1e-5)


def test_torch_engine_agrees_with_numpy_engine(bbc_news):
    pytest.importorskip("torch")
    docs = bbc_news[0][:300]
    a = PPMIEmbedder(n_components=5, min_count=3, n_iter=10, random_state=0).fit(docs)
    b = PPMIEmbedder(n_components=5, min_count=3, n_iter=10, random_state=0, engine="torch").fit(
        docs
    )
    Ga = a.wv_.vectors @ a.wv_.vectors.T
    Gb = b.wv_.vectors @ b.wv_.vectors.T
    assert np.linalg.norm(Ga - Gb) / np.linalg.norm(Ga) < 0.02


def test_quality_on_bbc_news(bbc_news, gensim_datapath):
    from skembed.evaluation import word_similarity

    est = PPMIEmbedder(n_components=100, window=5, min_count=5, random_state=0).fit(bbc_news[0])
    res = word_similarity(est.wv_, gensim_datapath("wordsim353.tsv"))
    # 35% of WordSim-353 pairs are out of BBC's vocabulary; gensim skip-gram reaches ~0.35 here
    assert res["n_pairs"] > 150
    assert res["spearman"] > 0.3
    assert est.wv_.most_similar("labour", topn=10, restrict_vocab=5000)[0][0] in {
        "tory",
        "tories",
        "conservatives",
        "party",
        "blair",
        "conservative",
        "lib",
        "labour's",
    }


def test_errors():
    with pytest.raises(ValueError, match="min_count"):
        PPMIEmbedder(n_components=2, min_count=50).fit(["the cat sat", "the dog sat"])
    with pytest.raises(ValueError, match="n_components=5 must be smaller"):
        PPMIEmbedder(n_components=5).fit(["the cat sat", "the dog sat"])
    with pytest.raises(ValueError, match="co-occur"):
        PPMIEmbedder(n_components=1).fit(["cat", "dog", "bird"])


def test_cpu_engine_on_other_device_fails_before_counting(monkeypatch):
    import skembed.text.count._ppmi as ppmi_module
    import skembed.utils._compute as _compute

    def no_counting(*args, **kwargs):
        raise AssertionError("tokenized before checking the engine")

    monkeypatch.setattr(_compute, "resolve_device", lambda device: "cuda:0")
    monkeypatch.setattr(ppmi_module, "tokenize", no_counting)
    with pytest.raises(ValueError, match="engine='sklearn' runs on the CPU only"):
        PPMIEmbedder(n_components=2, engine="sklearn", device="cuda").fit(["the cat sat"])


def test_context_smoothing_changes_the_context_distribution():
    C = sp.csr_matrix(np.array([[0, 4.0, 1.0], [4.0, 0, 1.0], [1.0, 1.0, 0]]))
    plain = ppmi_matrix(C, context_smoothing=1.0).toarray()
    smooth = ppmi_matrix(C, context_smoothing=0.5).toarray()
    # smoothing raises the probability of rare contexts, lowering their PMI
    N, row, col = 12.0, C.toarray().sum(1), C.toarray().sum(0)
    p_c = np.sqrt(col) / np.sqrt(col).sum()
    assert smooth[0, 2] == pytest.approx(max(np.log((1 / N) / (row[0] / N * p_c[2])), 0))
    assert plain[0, 2] == pytest.approx(max(np.log((1 / N) / (row[0] / N * col[2] / N)), 0))
    assert plain[0, 2] > 0 and smooth[0, 2] < plain[0, 2]


def test_huge_window_is_clipped_to_the_longest_document():
    """window=10**9 asked for 969 GiB (issue 40): clipped, with each distance's weight unchanged."""
    import tracemalloc

    from skembed.text.count._cooccurrence import cooccurrence_matrix

    docs = ["the cat sat on the mat", "a dog ran far", "the bird"]
    tracemalloc.start()
    huge = PPMIEmbedder(n_components=2, window=10**7, random_state=0).fit(docs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    exact = PPMIEmbedder(n_components=2, window=6, random_state=0).fit(docs)
    assert peak < 20e6
    np.testing.assert_allclose(huge.transform(docs), exact.transform(docs))
    # "linear" weights (window - d + 1) / window keep the given window: d=1 in window 10**7
    X = cooccurrence_matrix(np.array([0, 1]), np.array([0, 2]), 2, 10**7, weighting="linear")
    assert X[0, 1] == 1.0
    X = cooccurrence_matrix(np.array([0, 1, 2]), np.array([0, 3]), 3, 10**7, weighting="linear")
    assert X[0, 2] == (10**7 - 1) / 10**7

"""Exact co-occurrence counts on hand-checkable corpora; PPMI and GloVe share the module."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from skembed.text.count import _cooccurrence
from skembed.text.count._cooccurrence import cooccurrence_matrix, distance_weights

# corpus: "a b c a" | "b b"  (ids a=0, b=1, c=2), window 3.
# right-context pairs: d=1 (a,b) (b,c) (c,a) (b,b); d=2 (a,c) (b,a); d=3 (a,a)
IDS = np.array([0, 1, 2, 0, 1, 1])
OFFSETS = np.array([0, 4, 6])


def right_context(w1, w2, w3):
    R = np.zeros((3, 3))
    R[0, 1] += w1
    R[1, 2] += w1
    R[2, 0] += w1
    R[1, 1] += w1
    R[0, 2] += w2
    R[1, 0] += w2
    R[0, 0] += w3
    return R


@pytest.mark.parametrize(
    "weighting, w",
    [("harmonic", (1, 1 / 2, 1 / 3)), ("uniform", (1, 1, 1)), ("linear", (1, 2 / 3, 1 / 3))],
)
def test_exact_counts_hand_checked(weighting, w):
    R = right_context(*w)
    X = cooccurrence_matrix(IDS, OFFSETS, 3, window=3, weighting=weighting, symmetric=False)
    np.testing.assert_allclose(X.toarray(), R, rtol=0, atol=1e-12)
    S = cooccurrence_matrix(IDS, OFFSETS, 3, window=3, weighting=weighting, symmetric=True)
    np.testing.assert_allclose(S.toarray(), R + R.T, rtol=0, atol=1e-12)


def test_harmonic_symmetric_values_written_out():
    X = cooccurrence_matrix(IDS, OFFSETS, 3, window=3).toarray()
    expected = np.array(
        [
            [2 / 3, 1.5, 1.5],  # (a,a) at d=3 counted on both sides
            [1.5, 2.0, 1.0],  # (b,b) at d=1 in doc 2, both sides
            [1.5, 1.0, 0.0],
        ]
    )
    np.testing.assert_allclose(X, expected, rtol=0, atol=1e-12)


def test_windows_do_not_cross_document_boundaries():
    one_doc = cooccurrence_matrix(IDS, np.array([0, 6]), 3, window=3, symmetric=False).toarray()
    two_docs = cooccurrence_matrix(IDS, OFFSETS, 3, window=3, symmetric=False).toarray()
    # one document adds exactly the pairs crossing the boundary between positions 3 and 4
    extra = one_doc - two_docs
    cross = np.zeros((3, 3))
    # left token at positions 1..3, right token at 4..5 (b, b), distance <= 3
    for t in range(6):
        for d in range(1, 4):
            if t + d < 6 and t < 4 <= t + d:
                cross[IDS[t], IDS[t + d]] += 1 / d
    np.testing.assert_allclose(extra, cross, atol=1e-12)
    assert cross.sum() > 0
    # empty documents and a single-token document contribute nothing
    X = cooccurrence_matrix(np.array([0, 1]), np.array([0, 0, 1, 1, 2]), 2, window=5)
    assert X.nnz == 0


def brute_force(ids, offsets, n, window, weighting, symmetric):
    w = distance_weights(window, weighting)
    X = np.zeros((n, n))
    for s, e in zip(offsets[:-1], offsets[1:], strict=True):
        for t in range(s, e):
            for d in range(1, window + 1):
                if t + d < e:
                    X[ids[t], ids[t + d]] += w[d - 1]
                    if symmetric:
                        X[ids[t + d], ids[t]] += w[d - 1]
    return X


@pytest.mark.parametrize("seed", range(6))
def test_matches_brute_force_and_chunking_invariance(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    T = int(rng.integers(0, 200))
    ids = rng.integers(0, n, T)
    cuts = np.sort(rng.integers(0, T + 1, int(rng.integers(0, 8))))
    offsets = np.concatenate([[0], cuts, [T]])
    window = int(rng.integers(1, 7))
    weighting = ["harmonic", "uniform", "linear"][seed % 3]
    for symmetric in (True, False):
        ref = brute_force(ids, offsets, n, window, weighting, symmetric)
        for chunk in (1, 7, 64, 10**6):
            X = cooccurrence_matrix(
                ids, offsets, n, window, weighting, symmetric=symmetric, chunk_tokens=chunk
            )
            np.testing.assert_allclose(X.toarray(), ref, rtol=1e-12, atol=1e-12)
            assert X.has_sorted_indices
            assert np.all(X.data != 0)
            if symmetric:
                assert (X != X.T).nnz == 0


def test_output_format_and_dtype():
    X = cooccurrence_matrix(IDS, OFFSETS, 3, window=2, dtype=np.float32)
    assert X.format == "csr"
    assert X.dtype == np.float32
    assert X.indices.dtype == np.int32
    assert X.shape == (3, 3)


def test_peak_memory_follows_distinct_pairs_not_corpus_length():
    # 400k tokens, 4 words: at most 10 distinct (canonical) pairs
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 4, 400_000).astype(np.int64)
    offsets = np.array([0, 400_000])
    tracemalloc.start()
    X = cooccurrence_matrix(ids, offsets, 4, window=5, chunk_tokens=10_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # materialising all 2M (pair, distance) keys at once would take >= 16 MB
    assert peak < 4_000_000, peak
    assert X.sum() == pytest.approx(2 * sum((400_000 - d) / d for d in range(1, 6)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"window": 0}, "window"),
        ({"n_words": 2}, r"ids must lie in \[0, 2\)"),
        ({"offsets": np.array([0, 3])}, "offsets"),
        ({"weighting": "cubic"}, "weighting"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"ids": IDS, "offsets": OFFSETS, "n_words": 3, "window": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        cooccurrence_matrix(**args)


def test_ppmi_and_glove_share_the_module():
    from skembed.text.count import _glove as glove
    from skembed.text.count import _ppmi as ppmi

    assert ppmi.cooccurrence_matrix is _cooccurrence.cooccurrence_matrix
    assert glove.cooccurrence_matrix is _cooccurrence.cooccurrence_matrix


def test_glove_counts_are_the_harmonic_symmetric_matrix():
    from skembed.text.count._glove import GloVeTransformer

    docs = [["a", "b", "c", "a"], ["b", "b"]]
    est = GloVeTransformer(
        vector_size=2, window=3, min_count=1, epochs=1, keep_cooccurrence=True, n_jobs=1
    ).fit(docs)
    order = [est.vocabulary_[w] for w in "abc"]
    X = est.cooccurrence_.toarray()[np.ix_(order, order)]
    np.testing.assert_allclose(X, right_context(1, 1 / 2, 1 / 3) + right_context(1, 1 / 2, 1 / 3).T)


def test_ppmi_uses_its_own_weighting():
    from skembed.text.count._ppmi import PPMIEmbedder

    docs = [["a", "b", "c", "a"], ["b", "b"]]
    out = {}
    for weighting in ("uniform", "harmonic"):
        est = PPMIEmbedder(n_components=1, window=3, dynamic_window=weighting, random_state=0)
        out[weighting] = est.fit(docs).singular_values_
    # different weightings give different PPMI matrices
    assert not np.allclose(out["uniform"], out["harmonic"])

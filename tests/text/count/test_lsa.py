import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from skembed import TfidfLSA

PARAMS = {"min_df": 2, "max_df": 0.9, "sublinear_tf": True, "ngram_range": (1, 2), "norm": "l2"}


@pytest.fixture(scope="module")
def docs(bbc_news):
    return bbc_news[0][:600]


def test_equals_hand_built_sklearn_pipeline(docs):
    # both sides on one BLAS thread: bit equality must not depend on what earlier tests (or
    # libraries they imported) left the process's thread pools at
    ours = TfidfLSA(n_components=20, random_state=0, dtype=np.float64, n_jobs=1, **PARAMS)
    ref = make_pipeline(TfidfVectorizer(**PARAMS), TruncatedSVD(n_components=20, random_state=0))
    with threadpool_limits(limits=1):
        ref_fit = ref.fit_transform(docs)
        ref_head = ref.transform(docs[:50])
        ref_all = ref.transform(docs)
    np.testing.assert_array_equal(ours.fit_transform(docs), ref_fit)
    np.testing.assert_array_equal(ours.transform(docs[:50]), ref_head)
    assert ours.vocabulary_ == ref[0].vocabulary_
    np.testing.assert_array_equal(ours.components_, ref[1].components_)
    np.testing.assert_array_equal(ours.explained_variance_ratio_, ref[1].explained_variance_ratio_)
    np.testing.assert_array_equal(ours.fit(docs).transform(docs), ref_all)
    # the default float32 output is the same numbers rounded
    np.testing.assert_allclose(
        TfidfLSA(n_components=20, random_state=0, n_jobs=1, **PARAMS).fit_transform(docs),
        ref_all,
        rtol=1e-5,
        atol=1e-6,
    )


def _projector(components):
    q, _ = np.linalg.qr(components.T)
    return q @ q.T


def test_torch_engine_spans_the_same_subspace(docs):
    pytest.importorskip("torch")
    k = 5
    cpu = TfidfLSA(n_components=k, n_iter=10, random_state=0, **PARAMS).fit(docs)
    tch = TfidfLSA(n_components=k, n_iter=10, random_state=0, engine="torch", **PARAMS).fit(docs)
    assert tch.device_ == "cpu" and tch.svd_ is None
    # principal angles between the two k-dimensional subspaces are all ~0
    cosines = np.linalg.svd(cpu.components_ @ tch.components_.T, compute_uv=False)
    assert cosines.min() > 0.99
    np.testing.assert_allclose(tch.singular_values_, cpu.singular_values_, rtol=1e-3)
    np.testing.assert_allclose(
        tch.explained_variance_ratio_.sum(), cpu.explained_variance_ratio_.sum(), rtol=1e-2
    )
    np.testing.assert_allclose(
        np.abs(tch.transform(docs[:20])), np.abs(cpu.transform(docs[:20])), atol=2e-3
    )


def test_n_components_too_large_and_empty_vocabulary():
    with pytest.raises(ValueError, match="n_components=5 must be smaller than the vocabulary size"):
        TfidfLSA(n_components=5).fit(["a cat", "the dog"])
    with pytest.raises(ValueError, match="no usable term"):
        TfidfLSA(n_components=1).fit(["a", "b"])


def test_lsa_separates_bbc_topics(bbc_news):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    texts, labels = bbc_news[0][::2], bbc_news[1][::2]
    pipe = make_pipeline(
        TfidfLSA(n_components=100, sublinear_tf=True, min_df=2, random_state=0),
        LogisticRegression(C=10, max_iter=1000),
    )
    assert cross_val_score(pipe, texts, labels, cv=3).mean() > 0.94


def test_oov_rate_on_training_data_and_for_any_documents():
    lsa = TfidfLSA(n_components=1, min_df=2).fit(["the cat sat", "the dog sat", "the cow"])
    # "cat", "dog", "cow" occur once: dropped by min_df=2; 3 of 8 training tokens
    assert lsa.oov_rate_ == pytest.approx(3 / 8)
    before = dict(vars(lsa))
    assert lsa.oov_rate(["the bird sat", ["cat", "the"]]) == pytest.approx(2 / 5)
    assert lsa.oov_rate([""]) == 0.0
    lsa.transform(["the bird"])
    assert vars(lsa).keys() == before.keys()  # transform and oov_rate store nothing
    assert lsa.oov_rate_ == pytest.approx(3 / 8)


def test_cpu_engine_on_other_device_fails_before_reading_documents(monkeypatch):
    import skembed.utils._compute as _compute

    monkeypatch.setattr(_compute, "resolve_device", lambda device: "cuda:0")
    with pytest.raises(ValueError, match="engine='sklearn' runs on the CPU only"):
        # documents are checked after the engine: a bad corpus is not what fails
        TfidfLSA(n_components=1, engine="sklearn", device="cuda").fit([None, 3])


def test_more_components_than_documents_is_refused_not_silently_cut():
    # the SVD of 20 documents has 20 components: 50 gave 20 columns and 50 feature names
    rng = np.random.RandomState(0)
    words = [f"w{i}" for i in range(148)]
    docs = [" ".join(rng.choice(words, 30)) for _ in range(20)]
    with pytest.raises(
        ValueError, match=r"n_components=50 .* at most the number of documents \(20\)"
    ):
        TfidfLSA(n_components=50, random_state=0).fit(docs)
    est = TfidfLSA(n_components=20, random_state=0).fit(docs)
    assert est.transform(docs).shape == (20, 20) and len(est.get_feature_names_out()) == 20

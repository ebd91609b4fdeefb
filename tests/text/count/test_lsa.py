import numpy as np
import pytest
from scipy.sparse import csr_matrix
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from skembed import TfidfLSA
from skembed.text.count._lsa import entropy_weights, log_entropy

PARAMS = {
    "min_df": 2,
    "max_df": 0.9,
    "sublinear_tf": True,
    "ngram_range": (1, 2),
    "norm": "l2",
    "stop_words": "english",
}


@pytest.fixture(scope="module")
def docs(bbc_news):
    return bbc_news[0][:600]


def test_equals_hand_built_sklearn_pipeline(docs):
    # both sides on one BLAS thread: bit equality must not depend on what earlier tests (or
    # libraries they imported) left the process's thread pools at
    ours = TfidfLSA(
        n_components=20, weighting="tfidf", random_state=0, dtype=np.float64, n_jobs=1, **PARAMS
    )
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
        TfidfLSA(
            n_components=20, weighting="tfidf", random_state=0, n_jobs=1, **PARAMS
        ).fit_transform(docs),
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
    # the engines agree to the solver's accuracy; TF-IDF without stop words, as first measured
    params = dict(PARAMS, weighting="tfidf", stop_words=None, n_components=k)
    params.update(n_iter=10, random_state=0)
    cpu = TfidfLSA(**params).fit(docs)
    tch = TfidfLSA(**params, engine="torch").fit(docs)
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
    lsa = TfidfLSA(n_components=1, min_df=2, stop_words=None)
    lsa.fit(["the cat sat", "the dog sat", "the cow"])
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


# ----------------------------------------------------------------- weighting and stop words
TOY = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs", "a dog barked"]


def test_entropy_weights_by_hand():
    # term 0 in every document equally: g = 1 + 2 * (1/2 ln 1/2) / ln 2 = 0;
    # term 1 in one document: g = 1; term 2 split 3:1 over two of three documents:
    # g = 1 + (3/4 ln 3/4 + 1/4 ln 1/4) / ln 3
    counts = csr_matrix([[1, 0, 3], [1, 2, 1]])
    np.testing.assert_allclose(
        entropy_weights(counts),
        [0.0, 1.0, 1.0 + (0.75 * np.log(0.75) + 0.25 * np.log(0.25)) / np.log(2)],
    )
    counts = csr_matrix([[1, 0, 3], [1, 2, 1], [0, 0, 0]])
    expected = 1.0 + (0.75 * np.log(0.75) + 0.25 * np.log(0.25)) / np.log(3)
    np.testing.assert_allclose(entropy_weights(counts)[[1, 2]], [1.0, expected])


def test_log_entropy_equals_gensims_model_up_to_its_normaliser(gensim_datapath):
    """gensim's LogEntropyModel divides the entropy by ln(n + 1), Dumais (and skembed) by
    ln(n): the entropies recovered from gensim's weights are skembed's, and so are the
    unit-length document vectors built from them."""
    from gensim.corpora import Dictionary
    from gensim.models import LogEntropyModel
    from gensim.utils import simple_preprocess

    with open(gensim_datapath("lee_background.cor"), encoding="utf-8") as f:
        documents = [simple_preprocess(line) for line in f]
    lsa = TfidfLSA(n_components=10, weighting="log_entropy", stop_words=None, random_state=0)
    lsa.fit(documents)
    dictionary = Dictionary(documents)
    model = LogEntropyModel([dictionary.doc2bow(d) for d in documents])
    n = len(documents)
    terms = list(lsa.vocabulary_)
    theirs = np.array([model.entr[dictionary.token2id[t]] for t in terms])
    ours = lsa.global_weights_[[lsa.vocabulary_[t] for t in terms]]
    np.testing.assert_allclose((ours - 1) * np.log(n), (theirs - 1) * np.log(n + 1), atol=1e-12)
    # a document's weighted vector: log(1 + tf) * g, unit length (gensim's normalize=True)
    counts = lsa.vectorizer_.transform(documents[:1])
    row = log_entropy(counts, lsa.global_weights_, "l2").toarray()[0]
    expected = np.zeros(len(terms))
    for token_id, tf in dictionary.doc2bow(documents[0]):
        j = lsa.vocabulary_[dictionary[token_id]]
        expected[j] = np.log1p(tf) * lsa.global_weights_[j]
    np.testing.assert_allclose(row, expected / np.linalg.norm(expected), atol=1e-12)


def test_stop_words_leave_the_vocabulary_and_emptied_documents_follow_handle_unknown():
    lsa = TfidfLSA(n_components=2, stop_words="english", random_state=0).fit(TOY)
    assert not {"the", "on", "and"} & set(lsa.vocabulary_)
    assert lsa.oov_rate_ == 0.0 and lsa.oov_rate(["the cat zzz"]) == 0.5  # stop words not unknown
    out = lsa.transform(["the and of", ""])
    assert np.array_equal(out, np.zeros((2, 2), np.float32))
    nan = lsa.set_params(handle_unknown="nan").transform(["the and of"])
    assert np.isnan(nan).all()
    with pytest.raises(ValueError, match="no known"):
        lsa.set_params(handle_unknown="error").transform(["on the"])
    own = TfidfLSA(n_components=2, stop_words=["the", "on"], random_state=0).fit(TOY)
    assert "the" not in own.vocabulary_ and "and" in own.vocabulary_


@pytest.mark.parametrize(
    "params, options",
    [
        ({"weighting": "bm25"}, "'weighting' parameter .* among .*'log_entropy'"),
        ({"stop_words": "french"}, "'stop_words' parameter .* among {'english'}"),
    ],
)
def test_unknown_weighting_or_stop_words_are_refused_naming_the_options(params, options):
    with pytest.raises(ValueError, match=options):
        TfidfLSA(n_components=1, **params).fit(TOY)


def test_log_entropy_on_one_document_says_so():
    with pytest.raises(ValueError, match="needs at least two documents"):
        TfidfLSA(n_components=1, weighting="log_entropy").fit(["a cat and a dog sat"])


def test_log_entropy_transform_uses_the_training_weights():
    lsa = TfidfLSA(n_components=2, weighting="log_entropy", random_state=0, dtype=np.float64)
    X = lsa.fit_transform(TOY)
    np.testing.assert_allclose(lsa.transform(TOY), X, atol=1e-12)
    # a word spread evenly over every training document weighs 0: such a document is empty
    lsa = TfidfLSA(n_components=1, weighting="log_entropy", stop_words=None).fit(
        ["sat cat", "sat dog", "sat cow"]
    )
    assert lsa.global_weights_[lsa.vocabulary_["sat"]] == 0.0
    assert np.array_equal(lsa.transform(["sat sat"]), np.zeros((1, 1), np.float32))


def _neighbour_map(X, labels):
    """Mean average precision of same-label neighbours by cosine, the query left out."""
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    sims = X @ X.T
    np.fill_diagonal(sims, -np.inf)
    hits = labels[np.argsort(-sims, axis=1, kind="stable")[:, :-1]] == labels[:, None]
    precision = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
    return np.mean((precision * hits).sum(axis=1) / hits.sum(axis=1))


@pytest.mark.slow
def test_default_weighting_ranks_same_topic_neighbours_better_on_bbc(bbc_news):
    """Unsupervised document similarity on every 4th BBC News article (557): measured 0.529
    with the defaults, 0.452 with TF-IDF without stop words (all 2,225 at 100 components,
    bench_lsa.py --quality: 0.616 and 0.477)."""
    texts, labels = list(bbc_news[0][::4]), np.asarray(bbc_news[1][::4])
    new = _neighbour_map(TfidfLSA(random_state=0).fit_transform(texts), labels)
    old = TfidfLSA(weighting="tfidf", stop_words=None, random_state=0).fit_transform(texts)
    assert new > 0.5
    assert new > _neighbour_map(old, labels) + 0.05


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


@pytest.mark.parametrize("ngram_range", [(2, 1), (0, 1), (1, 10**12), (1,), (1.0, 2.0)])
def test_ngram_range_out_of_bounds_is_refused_in_fit_and_on_load(ngram_range):
    docs = ["the cat sat", "the dog ran", "a cat ran", "a dog sat"]
    with pytest.raises(ValueError, match=r"ngram_range=.*1 <= min_n <= max_n <= 64"):
        TfidfLSA(n_components=2, ngram_range=ngram_range).fit(docs)
    # a file's (1, 10**12) asked every document for a trillion n-gram lengths: a hang
    state = TfidfLSA(n_components=2).fit(docs).__getstate__()
    state["ngram_range"] = ngram_range
    with pytest.raises(ValueError, match=r"TfidfLSA: stored ngram_range="):
        TfidfLSA.__new__(TfidfLSA).__setstate__(state)

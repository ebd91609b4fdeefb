"""FastTextTransformer, FastTextKeyedVectors, fastText hashing and the Facebook .bin reader."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skembed.kernels.fasttext import (
    char_ngrams_bytes,
    ft_hash_bytes,
    ngram_hashes,
    vocabulary_ngram_hashes,
)
from skembed.keyedvectors import KeyedVectors
from skembed.text import LineCorpus
from skembed.text.word2vec._fasttext import (
    FastTextKeyedVectors,
    FastTextTransformer,
    fasttext_memory_bytes,
    load_facebook_vectors,
)

gensim_ft = pytest.importorskip("gensim.models.fasttext")
from gensim.models.fasttext_inner import compute_ngrams_bytes  # noqa: E402
from gensim.models.fasttext_inner import ft_hash_bytes as gensim_hash  # noqa: E402
from gensim.test.utils import datapath  # noqa: E402

WORDS = [
    "the",
    "a",
    "",
    "naïve",
    "café",
    "Zürich",
    "日本語",
    "Привет",
    "😀emoji",
    "e\u0301",
    "über-cool",
    "x" * 40,
    "governments",
]
OOV = ["nonexistentword", "governmentz", "naïveté", "日本", "x", "ab", "Überzeugung"]
BIN_FILES = ["lee_fasttext.bin", "lee_fasttext_new.bin"]

TINY = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "cats and dogs play together",
    "a cat and a dog",
] * 10


# --------------------------------------------------------------------------- hashing
def test_hash_hand_computed():
    # FNV-1a 32-bit offset basis and the published FNV-1a("a")
    assert ft_hash_bytes(b"") == 2166136261
    assert ft_hash_bytes(b"a") == 0xE40C292C
    # bytes >= 0x80 are sign-extended (fastText hashes signed chars)
    expected = ((2166136261 ^ 0xFFFFFFC3) * 16777619) % 2**32
    assert ft_hash_bytes(b"\xc3") == expected


@pytest.mark.parametrize("min_n,max_n", [(3, 6), (1, 1), (2, 4), (3, 3), (1, 6), (5, 3)])
def test_ngrams_and_hashes_match_gensim(min_n, max_n):
    for word in WORDS:
        ngrams = char_ngrams_bytes(word, min_n, max_n)
        assert ngrams == compute_ngrams_bytes(word, min_n, max_n)
        assert [ft_hash_bytes(g) for g in ngrams] == [gensim_hash(g) for g in ngrams]
        expected = gensim_ft.ft_ngram_hashes(word, min_n, max_n, 2_000_000)
        assert ngram_hashes(word, min_n, max_n, 2_000_000).tolist() == expected
    indptr, indices = vocabulary_ngram_hashes(WORDS, min_n, max_n, 1000)
    for k, word in enumerate(WORDS):
        expected = gensim_ft.ft_ngram_hashes(word, min_n, max_n, 1000)
        assert indices[indptr[k] : indptr[k + 1]].tolist() == expected


def test_ngrams_of_short_word_by_hand():
    assert char_ngrams_bytes("ab", 3, 4) == [b"<ab", b"<ab>", b"ab>"]
    # single-character n-grams never include the markers alone
    assert char_ngrams_bytes("ab", 1, 1) == [b"a", b"b"]


# --------------------------------------------------------------------------- loading
@pytest.fixture(scope="module", params=BIN_FILES)
def loaded(request):
    path = datapath(request.param)
    return path, load_facebook_vectors(path), gensim_ft.load_facebook_model(path).wv


def test_load_matches_gensim_known_and_oov(loaded):
    _, kv, ref = loaded
    assert kv.index_to_key == ref.index_to_key
    assert (kv.min_n, kv.max_n, kv.bucket) == (ref.min_n, ref.max_n, ref.bucket)
    np.testing.assert_allclose(kv.vectors, ref.vectors, atol=1e-5)
    np.testing.assert_allclose(kv.vectors_ngrams, ref.vectors_ngrams, atol=0)
    for word in OOV + WORDS[:-1]:
        np.testing.assert_allclose(kv[word], ref[word], atol=1e-5, err_msg=word)
    batch, has = kv.get_vectors(OOV + kv.index_to_key[:20])
    np.testing.assert_allclose(
        batch, np.vstack([ref[w] for w in OOV + kv.index_to_key[:20]]), atol=1e-5
    )
    assert has.all()
    assert kv.counts.tolist() == [ref.get_vecattr(w, "count") for w in kv.index_to_key]


def test_contains_and_oov_semantics(loaded):
    _, kv, ref = loaded
    assert "governmentz" not in kv  # vocabulary membership (gensim's is always True)
    assert kv.has_vector("governmentz")
    assert kv.similarity("governmentz", "government") == pytest.approx(
        ref.similarity("governmentz", "government"), abs=1e-5
    )
    top = kv.most_similar("governmentz", topn=3)
    assert [w for w, _ in top] == [w for w, _ in ref.most_similar("governmentz", topn=3)]
    # a string without any n-gram gets the zero vector, as fastText
    no_ngram = FastTextKeyedVectors(np.ones((1, 2)), np.ones((5, 2)), ["w"], 4, 4)
    assert not no_ngram.has_vector("a")
    np.testing.assert_array_equal(no_ngram["a"], 0.0)
    # without n-grams at all (bucket=0) an unknown word is a KeyError, not a silent zero
    plain = FastTextKeyedVectors(np.ones((1, 2)), np.zeros((0, 2)), ["w"], 3, 6)
    with pytest.raises(KeyError, match="no character n-grams"):
        plain["unknown"]


def test_pickle_keeps_oov_lookup(loaded):
    _, kv, _ = loaded
    kv2 = pickle.loads(pickle.dumps(kv))
    np.testing.assert_array_equal(kv2["governmentz"], kv["governmentz"])
    np.testing.assert_array_equal(kv2.vectors, kv.vectors)


def test_from_facebook_transform(loaded):
    path, kv, _ = loaded
    ft = FastTextTransformer.from_facebook(path, lowercase=False)
    assert ft.vector_size == kv.vector_size and ft.min_n == 3 and ft.max_n == 6
    doc = ["the", "government", "said"]
    np.testing.assert_allclose(ft.transform([doc])[0], kv[doc].mean(axis=0), atol=1e-6)
    # unknown tokens come from their n-grams
    np.testing.assert_allclose(ft.transform([["governmentz"]])[0], kv["governmentz"], atol=1e-6)
    ft_off = FastTextTransformer.from_facebook(path, lowercase=False, oov_ngrams=False)
    np.testing.assert_array_equal(ft_off.transform([["governmentz"]])[0], 0.0)
    with pytest.raises(ValueError, match="documents"):
        FastTextTransformer.from_facebook(path, pooling="tfidf")
    tf = FastTextTransformer.from_facebook(
        path, documents=[doc, ["other", "words"]], pooling="tfidf"
    )
    assert np.isfinite(tf.transform([doc, ["zzzunseen"]])).all()


def test_vec_file_roundtrip(loaded, tmp_path):
    _, kv, _ = loaded
    path = tmp_path / "model.vec"
    kv.save_word2vec_format(path)
    vec = KeyedVectors.load_word2vec_format(path)
    assert vec.index_to_key == kv.index_to_key
    np.testing.assert_allclose(vec.vectors, kv.vectors, atol=1e-6)


def test_truncated_vec_raises_clear_error(loaded, tmp_path):
    _, kv, _ = loaded
    path = tmp_path / "model.vec"
    kv.save_word2vec_format(path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:50]))
    with pytest.raises(ValueError, match=r"model\.vec: header announces .*truncated"):
        KeyedVectors.load_word2vec_format(path)
    path.write_text("".join(lines[:50]) + lines[50][:30] + "\n")
    with pytest.raises(ValueError, match=r"model\.vec: line 51 has \d+ values, expected 10"):
        KeyedVectors.load_word2vec_format(path)


# --------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(texts))[:900]
    return [texts[i] for i in idx], labels[idx]


TRAIN_PARAMS = dict(
    vector_size=48, epochs=3, min_count=3, bucket=60_000, random_state=0, n_jobs=2, alpha=0.05
)


@pytest.fixture(scope="module")
def trained(bbc):
    texts, _ = bbc
    return {
        "numba": FastTextTransformer(engine="numba", **TRAIN_PARAMS).fit(texts),
        # one intra-op thread: torch's CPU scatter ops slow down badly when cores are shared
        "torch": FastTextTransformer(
            engine="torch", batch_size=4096, **{**TRAIN_PARAMS, "n_jobs": 1}
        ).fit(texts),
    }


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["numba", "torch"])
def test_training_quality_on_bbc_news(trained, bbc, engine):
    ft = trained[engine]
    texts, labels = bbc
    assert ft.engine_ == engine and ft.device_ == "cpu"
    assert len(ft.loss_history_) == 3 and all(np.isfinite(ft.loss_history_))
    X = ft.transform(texts)
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    acc = cross_val_score(clf, X, labels, cv=3).mean()  # measured: 0.92 (both engines)
    assert acc > 0.88, acc
    kv = ft.wv_
    # morphological variants are close, unrelated words are not
    variants = [("government", "governments"), ("company", "companies"), ("market", "markets")]
    sim_var = np.mean([kv.similarity(a, b) for a, b in variants])
    rng = np.random.default_rng(1)
    pairs = rng.integers(0, 2000, size=(200, 2))
    sim_rand = np.mean([_cos(kv.vectors[i], kv.vectors[j]) for i, j in pairs if i != j])
    assert sim_var > sim_rand + 0.3, (sim_var, sim_rand)
    # OOV vectors: non-zero, close to the known word they derive from
    for oov, known in [("governmentz", "government"), ("marketplaces", "market")]:
        assert oov not in kv
        assert np.linalg.norm(kv[oov]) > 0
        assert kv.similarity(oov, known) > 0.6, (oov, kv.similarity(oov, known))


@pytest.mark.slow
def test_engines_reach_similar_quality(trained):
    sims = {
        e: np.mean([t.wv_.similarity("film", "actor"), t.wv_.similarity("election", "labour")])
        for e, t in trained.items()
    }
    assert abs(sims["numba"] - sims["torch"]) < 0.25, sims


def test_memory_formula_matches_arrays():
    ft = FastTextTransformer(vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1)
    ft.fit(TINY)
    kv = ft.wv_
    held = kv.vectors_vocab.nbytes + kv.vectors_ngrams.nbytes + ft.syn1neg_.nbytes
    held += kv.vectors.nbytes
    assert held == fasttext_memory_bytes(len(kv), kv.bucket, kv.vector_size)
    assert fasttext_memory_bytes(50_000) == 4 * 100 * (50_000 + 500_000 + 100_000)


def test_numba_single_thread_is_deterministic():
    params = dict(vector_size=8, min_count=1, bucket=500, random_state=3, n_jobs=1, epochs=2)
    a = FastTextTransformer(**params).fit(TINY).wv_
    b = FastTextTransformer(**params).fit(TINY).wv_
    np.testing.assert_array_equal(a.vectors_vocab, b.vectors_vocab)
    np.testing.assert_array_equal(a.vectors_ngrams, b.vectors_ngrams)
    c = FastTextTransformer(**{**params, "random_state": 4}).fit(TINY).wv_
    assert not np.array_equal(a.vectors, c.vectors)


@pytest.mark.parametrize("engine", ["numba", "torch"])
def test_cbow_and_composition(engine):
    ft = FastTextTransformer(
        vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1, sg=0, engine=engine
    ).fit(TINY)
    kv = ft.wv_
    # vocabulary vectors are the mean of the word row and its n-gram rows
    i = kv.key_to_index["cat"]
    rows = ngram_hashes("cat", 3, 6, 500)
    expected = (kv.vectors_vocab[i] + kv.vectors_ngrams[rows].sum(axis=0)) / (1 + len(rows))
    np.testing.assert_allclose(kv["cat"], expected, rtol=1e-5, atol=1e-7)
    assert np.isfinite(kv.vectors).all()


def test_hierarchical_softmax_trains():
    ft = FastTextTransformer(
        vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1, hs=1, negative=0
    ).fit(TINY)
    assert ft.syn1neg_ is None and ft.syn1_.shape == (len(ft.wv_) - 1, 8)
    assert np.isfinite(ft.loss_history_).all()


def test_transform_embeds_unknown_tokens_from_ngrams():
    ft = FastTextTransformer(vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1)
    ft.fit(TINY)
    out = ft.transform(["catz dogz", "the cat"])
    np.testing.assert_allclose(out[0], (ft.wv_["catz"] + ft.wv_["dogz"]) / 2, rtol=1e-5)
    np.testing.assert_allclose(out[1], (ft.wv_["the"] + ft.wv_["cat"]) / 2, rtol=1e-5)
    assert ft.oov_rate(["catz dogz", "the cat"]) == pytest.approx(0.5)
    assert ft.oov_rate_ == 0.0  # on the training data, with min_count=1
    ft.set_params(oov_ngrams=False)
    np.testing.assert_array_equal(ft.transform(["catz dogz"]), 0.0)
    for pooling in ["tfidf", "sif", "max", "sum"]:
        ft2 = FastTextTransformer(
            vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1, pooling=pooling
        ).fit(TINY)
        assert np.isfinite(ft2.transform(["catz dogz", "the cat"])).all()


def test_line_corpus_equals_list(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(TINY) + "\n")
    params = dict(vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1)
    a = FastTextTransformer(**params).fit(LineCorpus(path)).wv_
    b = FastTextTransformer(**params).fit([doc.split() for doc in TINY]).wv_
    assert a.index_to_key == b.index_to_key
    np.testing.assert_array_equal(a.vectors, b.vectors)


def test_warm_start_keeps_vocabulary():
    ft = FastTextTransformer(
        vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1, warm_start=True, sample=0
    )
    ft.fit(TINY)
    before = ft.wv_.vectors.copy()
    vocab = list(ft.wv_.index_to_key)
    ft.fit(["the cat sat with a brandnewword"] * 5)
    assert ft.wv_.index_to_key == vocab and "brandnewword" not in ft.wv_
    assert not np.array_equal(before, ft.wv_.vectors)


def test_callbacks_and_loss_history():
    seen = []
    ft = FastTextTransformer(
        vector_size=8,
        min_count=1,
        bucket=500,
        epochs=3,
        n_jobs=1,
        random_state=0,
        callbacks=[lambda est, rec: seen.append((est, rec["epoch"]))],
    ).fit(TINY)
    assert [e for _, e in seen] == [1, 2, 3] and seen[0][0] is ft
    assert len(ft.loss_history_) == 3


def test_bad_input():
    with pytest.raises(ValueError, match="min_count"):
        FastTextTransformer(min_count=1000).fit(TINY)
    with pytest.raises(InvalidParameterError):
        FastTextTransformer(vector_size=0).fit(TINY)
    with pytest.raises(InvalidParameterError):
        FastTextTransformer(window=0).fit(TINY)
    with pytest.raises(InvalidParameterError):
        FastTextTransformer(negative=-1).fit(TINY)
    with pytest.raises(ValueError, match="objective"):
        FastTextTransformer(negative=0, min_count=1).fit(TINY)
    with pytest.raises(ValueError, match="diverged"):
        FastTextTransformer(alpha=1e35, min_alpha=1e35, min_count=1, bucket=500, n_jobs=1).fit(TINY)


def test_facebook_model_continues_training():
    path = datapath("lee_fasttext_new.bin")
    ft = FastTextTransformer.from_facebook(
        path, lowercase=False, warm_start=True, n_jobs=1, random_state=0, epochs=1, load_output=True
    )
    assert ft.syn1neg_.shape == (len(ft.wv_), 10)
    before = ft.wv_["government"].copy()
    vocab = list(ft.wv_.index_to_key)
    with open(datapath("lee_background.cor")) as fh:
        docs = [line.split() for line in fh][:100]
    with pytest.raises(ValueError, match="output matrix"):
        FastTextTransformer.from_facebook(path, warm_start=True).fit(docs)
    ft.fit(docs)
    assert ft.wv_.index_to_key == vocab
    assert not np.allclose(ft.wv_["government"], before)
    assert np.isfinite(ft.wv_.vectors).all()


def test_cbow_keeps_per_example_negatives():
    # FastText CBOW does not batch centre words: shared_negatives changes nothing
    docs = [["a", "b", "c", "d", "a", "c"], ["b", "d", "a", "b"]] * 20
    kw = dict(vector_size=8, min_count=1, bucket=500, random_state=0, n_jobs=1, sg=0, epochs=2)
    a = FastTextTransformer(**kw).fit(docs)
    b = FastTextTransformer(shared_negatives=False, **kw).fit(docs)
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)

"""Behaviour and quality tests of Word2VecTransformer (numba and torch engines)."""

import numpy as np
import pytest

from skembed.evaluation import word_similarity
from skembed.text import LineCorpus
from skembed.text.word2vec._word2vec import Word2VecTransformer


@pytest.fixture(scope="module")
def lee_lines(gensim_datapath):
    with open(gensim_datapath("lee_background.cor"), encoding="utf-8") as fh:
        return [line.split() for line in fh.read().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def bbc_texts(bbc_news):
    return bbc_news[0]


@pytest.fixture(scope="module")
def sg_bbc(bbc_texts):
    return Word2VecTransformer(sg=1, n_jobs=2, random_state=0).fit(bbc_texts)


def small(**kw):
    params = dict(vector_size=32, min_count=5, epochs=3, random_state=0, n_jobs=1)
    params.update(kw)
    return Word2VecTransformer(**params)


def test_skipgram_quality_on_bbc(sg_bbc, bbc_texts, gensim_datapath):
    wv = sg_bbc.wv_
    # gensim 4.4 Word2Vec(sg=1) with the same settings reaches 0.19 on BBC News (35% OOV pairs)
    ws = word_similarity(wv, gensim_datapath("wordsim353.tsv"))
    assert ws["spearman"] > 0.15, ws
    assert wv.similarity("minister", "government") > wv.similarity("minister", "football") + 0.2
    assert wv.similarity("film", "actor") > wv.similarity("film", "bank") + 0.2
    assert len(sg_bbc.loss_history_) == 5
    assert sg_bbc.loss_history_[-1] < sg_bbc.loss_history_[0]
    analyzer = sg_bbc._analyzer()
    assert sg_bbc.n_words_trained_ == 5 * sum(len(analyzer(t)) for t in bbc_texts)
    assert sg_bbc.words_per_second_ > 0


def test_cbow_quality_on_bbc(bbc_texts, gensim_datapath):
    model = Word2VecTransformer(sg=0, alpha=0.05, n_jobs=2, random_state=0).fit(bbc_texts)
    # gensim 4.4 Word2Vec(sg=0, alpha=0.05) with the same settings reaches 0.29
    ws = word_similarity(model.wv_, gensim_datapath("wordsim353.tsv"))
    assert ws["spearman"] > 0.22, ws
    X = model.transform(bbc_texts[:4])
    assert X.shape == (4, 100) and X.dtype == np.float32 and np.isfinite(X).all()


@pytest.mark.slow
def test_quality_matches_gensim_on_bbc(sg_bbc, bbc_texts, gensim_datapath):
    """Mean Spearman over three seeds on each side, within 0.03 of gensim's.

    One run per side is too noisy on BBC's small vocabulary: over seeds 0-5 the SimLex
    score moves by 0.018 for skembed and 0.014 for gensim, and gensim with ``workers=2`` is
    not reproducible at all (a CI run drew 0.147 against the 0.138 mean). gensim therefore
    runs with ``workers=1``, which makes both sides deterministic, and each side is
    averaged over seeds 0-2. Measured means (seeds 0-5): skembed 0.246 WordSim / 0.123
    SimLex, gensim 0.199 / 0.138.
    """
    gensim = pytest.importorskip("gensim.models")
    from skembed import KeyedVectors

    docs = [sg_bbc._analyzer()(t) for t in bbc_texts]
    names = ["wordsim353.tsv", "simlex999.txt"]
    ours, theirs = [], []
    for seed in range(3):
        model = (
            sg_bbc
            if seed == 0
            else Word2VecTransformer(sg=1, n_jobs=2, random_state=seed).fit(bbc_texts)
        )
        ref = gensim.Word2Vec(
            docs,
            vector_size=100,
            window=5,
            min_count=5,
            sample=1e-3,
            negative=5,
            sg=1,
            workers=1,
            epochs=5,
            seed=seed,
        )
        ref_kv = KeyedVectors(ref.wv.vectors, ref.wv.index_to_key)
        ours.append([word_similarity(model.wv_, gensim_datapath(n))["spearman"] for n in names])
        theirs.append([word_similarity(ref_kv, gensim_datapath(n))["spearman"] for n in names])
    ours, theirs = np.mean(ours, axis=0), np.mean(theirs, axis=0)
    for name, o, t in zip(names, ours, theirs, strict=True):
        assert o > t - 0.03, (name, o, t)
    assert set(sg_bbc.wv_.index_to_key) == set(ref.wv.index_to_key)


def test_bit_reproducible_with_one_thread(lee_lines):
    a = small().fit(lee_lines)
    b = small().fit(lee_lines)
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
    assert a.loss_history_ == b.loss_history_
    c = small(random_state=1).fit(lee_lines)
    assert not np.array_equal(a.wv_.vectors, c.wv_.vectors)
    assert a.wv_.index_to_key == c.wv_.index_to_key


def test_line_corpus_streams_in_chunks_and_matches_list(lee_lines, tmp_path, monkeypatch):
    import skembed.text.word2vec._training as mod

    path = tmp_path / "lee.txt"
    path.write_text("\n".join(" ".join(doc) for doc in lee_lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(mod, "CHUNK_TOKENS", 5000)  # ~12 chunks: exercises the spill file
    from_file = small().fit(LineCorpus(path))
    from_list = small().fit(lee_lines)
    assert from_file.wv_.index_to_key == from_list.wv_.index_to_key
    np.testing.assert_array_equal(from_file.wv_.vectors, from_list.wv_.vectors)


def test_hierarchical_softmax(lee_lines):
    model = small(hs=1, negative=0, epochs=5).fit(lee_lines)
    assert model.loss_history_[-1] < model.loss_history_[0]
    assert np.isfinite(model.wv_.vectors).all()
    both = small(hs=1, negative=5, sg=0, alpha=0.05).fit(lee_lines)
    assert both.loss_history_[-1] < both.loss_history_[0]


def test_torch_engine_matches_numba_engine(lee_lines):
    pytest.importorskip("torch")
    kw = dict(sg=0, alpha=0.05, epochs=10, vector_size=50)
    numba_model = small(**kw).fit(lee_lines)
    torch_model = small(engine="torch", **kw).fit(lee_lines)
    assert torch_model.engine_ == "torch" and numba_model.engine_ == "numba"
    assert torch_model.device_ == "cpu"
    # same objective, same data: the final mean losses agree within 3%
    # (measured 2.473 for both)
    assert torch_model.loss_history_[-1] == pytest.approx(numba_model.loss_history_[-1], rel=0.03)
    for m in (numba_model, torch_model):
        wv = m.wv_
        assert wv.similarity("police", "officers") > wv.similarity("police", "cricket")
    # skip-gram with both objectives runs on the torch engine too
    sg = small(engine="torch", sg=1, hs=1, epochs=1, vector_size=16).fit(lee_lines)
    assert np.isfinite(sg.loss_history_[0]) and sg.wv_.vectors.shape[1] == 16


def test_cbow_shared_negatives_batches_centre_words(lee_lines):
    # shared_negatives=True (default): CBOW_BATCH centre words share one noise draw; the
    # per-example path stays available (its kernel: test_cbow_step_matches_reference)
    kw = dict(sg=0, alpha=0.05, epochs=5)
    new = small(**kw).fit(lee_lines)
    old = small(shared_negatives=False, **kw).fit(lee_lines)
    assert np.isfinite(new.wv_.vectors).all()
    assert not np.array_equal(new.wv_.vectors, old.wv_.vectors)
    # the same objective: final losses within 5% (measured on BBC: 2.03 vs 1.99)
    assert new.loss_history_[-1] == pytest.approx(old.loss_history_[-1], rel=0.05)
    assert new.loss_history_[-1] < new.loss_history_[0]
    wv = new.wv_
    assert wv.similarity("police", "officers") > wv.similarity("police", "cricket")
    # deterministic with two threads
    a = small(n_jobs=2, **kw).fit(lee_lines)
    b = small(n_jobs=2, **kw).fit(lee_lines)
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
    assert a.loss_history_ == b.loss_history_
    # hierarchical softmax alone: nothing to share, the flag changes nothing
    hs = dict(sg=0, hs=1, negative=0, epochs=1)
    np.testing.assert_array_equal(
        small(**hs).fit(lee_lines).wv_.vectors,
        small(shared_negatives=False, **hs).fit(lee_lines).wv_.vectors,
    )


def test_divergence_raises_clear_error(lee_lines):
    from skembed.exceptions import TrainingDivergedError

    with pytest.raises(TrainingDivergedError, match="diverged.*Lower alpha"):
        small(alpha=1e30, epochs=1).fit(lee_lines)


def test_bad_input_and_parameters(lee_lines):
    with pytest.raises(ValueError, match="lower min_count"):
        small(min_count=10**6).fit(lee_lines)
    with pytest.raises(TypeError, match="one-shot"):
        small().fit(doc for doc in lee_lines)
    with pytest.raises(ValueError, match="negative"):
        small(negative=0, hs=0).fit(lee_lines)
    for bad in [dict(vector_size=0), dict(window=0), dict(negative=-1), dict(sg=2)]:
        with pytest.raises(ValueError, match=list(bad)[0]):
            small(**bad).fit(lee_lines)
    with pytest.raises(ValueError, match="empty"):
        small().fit([])


def test_warm_start_continues_with_existing_vocabulary(lee_lines):
    first = small(epochs=2).fit(lee_lines[:150])
    vocab = dict(first.vocabulary_)
    before = first.wv_.vectors.copy()
    first.set_params(warm_start=True)
    first.fit(lee_lines[150:] + [["zzzunseenword"] * 20])
    assert first.vocabulary_ == vocab  # new words are ignored
    assert "zzzunseenword" not in first.wv_
    assert not np.array_equal(before, first.wv_.vectors)
    # the history continues across warm-start fits
    assert [r["epoch"] for r in first.history_] == [1, 2, 3, 4]


def test_callbacks_every_epoch_and_early_stopping(lee_lines):
    seen = []

    def record(est, rec):
        seen.append((rec["epoch"], len(est.history_), est.wv_.vector_size))

    model = small(callbacks=[record], epochs=3).fit(lee_lines)
    assert seen == [(1, 1, 32), (2, 2, 32), (3, 3, 32)]
    assert len(model.loss_history_) == 3

    stop = small(callbacks=[lambda est, rec: rec["epoch"] == 2], epochs=5).fit(lee_lines)
    assert len(stop.loss_history_) == 2


def test_pooling_options(lee_lines):
    docs = [" ".join(d) for d in lee_lines[:40]]
    for pooling in ["sum", "max", "tfidf", "sif"]:
        model = small(pooling=pooling, min_count=2, epochs=1).fit(docs)
        X = model.transform(docs[:5])
        assert X.shape == (5, 32) and np.isfinite(X).all()
        assert model.get_feature_names_out()[0] == "word2vectransformer0"

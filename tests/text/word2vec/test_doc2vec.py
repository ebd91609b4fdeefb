"""Doc2VecTransformer and its kernels: hand-checked updates, determinism, contract, quality."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skembed.exceptions import TrainingDivergedError
from skembed.kernels import doc2vec as kernels
from skembed.kernels.doc2vec import Inference
from skembed.kernels.sampling import EXP_TABLE_SIZE, MAX_EXP, keep_probabilities, sigmoid_tables
from skembed.kernels.scheduler import Documents, Weights, train_doc2vec_chunk
from skembed.text.word2vec._doc2vec import Doc2VecTransformer
from skembed.text.word2vec._training import kernel_config

DOCS = [
    "the cat sat on the mat and the cat slept",
    "the dog sat on the log and the dog barked",
    "stocks fell as the market slid on rate fears",
    "the market rallied as stocks rose on earnings",
    "a cat and a dog played in the garden",
    "investors sold stocks when the market opened",
] * 5

SMALL = dict(vector_size=8, min_count=1, epochs=3, random_state=0)


def _table_sigmoid(f):
    """word2vec's tabulated sigmoid of a score ``f`` (|f| < MAX_EXP)."""
    sigmoid, _ = sigmoid_tables()
    return sigmoid[int((f + MAX_EXP) * (EXP_TABLE_SIZE / MAX_EXP / 2.0))]


def _hs_config(window=1):
    # two words: one inner node; word 0 (the frequent one) and word 1 have opposite codes
    return kernel_config(
        np.array([3, 1]),
        sg=True,
        hs=1,
        negative=0,
        window=window,
        shared_negatives=False,
        ns_exponent=0.75,
        input_rows=(None, None),
        sync_tokens=0,
    )


def test_pv_dbow_single_update_by_hand():
    config = _hs_config()
    alpha = 0.5
    # input matrix: the two word rows, then the document row
    syn0 = np.array([[0.0, 0.0], [0.0, 0.0], [0.1, 0.2]], np.float32)
    syn1 = np.array([[0.3, -0.1]], np.float32)
    dv0, syn10 = syn0[2].copy(), syn1[0].copy()
    stats = train_doc2vec_chunk(
        Weights(syn0, np.zeros((0, 2), np.float32), syn1), np.array([0], np.int32),
        np.array([0, 1]), Documents(np.array([2]), False, False), config, alpha, alpha, 1, 1,
    )  # fmt: skip
    code = float(config.codes[0, 0])
    g = (1.0 - code - _table_sigmoid(float(dv0 @ syn10))) * alpha
    np.testing.assert_allclose(syn1[0], syn10 + g * dv0, rtol=1e-6)
    np.testing.assert_allclose(syn0[2], dv0 + g * syn10, rtol=1e-6)
    assert stats[0, 1] == 1.0  # one example
    assert np.all(syn0[:2] == 0)  # pure PV-DBOW never touches word vectors


def _shared_dbow_reference(syn0, syn1neg, docs, doc_rows, noise, alpha, batch):
    """PV-DBOW with shared negatives in float64: per batch of ``batch`` words of a document,
    the document vector as it was at the batch's start scores each word (label 1) and the
    noise word once, weighted by the words it differs from (label 0); output rows are
    updated as they are scored, the document row once per batch."""
    sigmoid, log_sigmoid = sigmoid_tables()

    def table(f):
        i = int((np.float32(f) + np.float32(MAX_EXP)) * np.float32(EXP_TABLE_SIZE / MAX_EXP / 2))
        return float(sigmoid[i]), float(log_sigmoid[i]), float(log_sigmoid[EXP_TABLE_SIZE - 1 - i])

    w0, w1 = syn0.astype(np.float64), syn1neg.astype(np.float64)
    loss, n = 0.0, 0
    for doc, row in zip(docs, doc_rows, strict=True):
        for b in range(0, len(doc), batch):
            words = doc[b : b + batch]
            l1, err = w0[row].copy(), np.zeros(w0.shape[1])
            for o, lab, weight in [(u, 1, 1) for u in words] + [
                (noise, 0, sum(u != noise for u in words))
            ]:
                if weight == 0:
                    continue
                sig, log_pos, log_neg = table(l1 @ w1[o])
                g = (lab - sig) * alpha * weight
                loss += weight * (-log_pos if lab else -log_neg)
                err += g * w1[o]
                w1[o] = w1[o] + g * l1
            w0[row] += err
            n += len(words)
    return w0, w1, loss, n


def test_pv_dbow_shared_negatives_match_a_numpy_reference():
    from skembed.kernels.doc2vec import DBOW_BATCH
    from skembed.kernels.word2vec import KernelConfig

    assert DBOW_BATCH == 4
    n_words, dim, alpha = 5, 3, 0.2
    rng = np.random.default_rng(0)
    syn0 = (rng.random((n_words + 2, dim)) - 0.5).astype(np.float32)
    syn1neg = (rng.random((n_words, dim)) - 0.5).astype(np.float32)
    # word 4 is the only noise word (degenerate alias table); the first document's batches
    # are [0 4 1 2] (the noise word counts 3 times) and [3 4 4] (once: a batch ends with its
    # document), the second document's [4 0 1 1] (3 times) and [4] (skipped: it is the word)
    docs = [[0, 4, 1, 2, 3, 4, 4], [4, 0, 1, 1, 4]]
    sig, log_sig = sigmoid_tables()
    config = KernelConfig(
        sg=True, hs=False, negative=1, window=5, shared_negatives=True,
        neg_prob=np.zeros(n_words, np.float32), neg_alias=np.full(n_words, 4, np.int32),
        codes=np.zeros((n_words, 1), np.uint8), points=np.zeros((n_words, 1), np.int32),
        code_lengths=np.zeros(n_words, np.int32), sigmoid=sig, log_sigmoid=log_sig,
        sub_indptr=np.zeros(0, np.int64), sub_indices=np.zeros(0, np.int32), sync_tokens=0,
    )  # fmt: skip
    w0, w1, loss, n = _shared_dbow_reference(syn0, syn1neg, docs, [5, 6], 4, alpha, DBOW_BATCH)
    stats = train_doc2vec_chunk(
        Weights(syn0, syn1neg, np.zeros((0, dim), np.float32)), np.array(sum(docs, []), np.int32),
        np.array([0, 7, 12]), Documents(np.array([5, 6]), False, False), config, alpha, alpha, 1, 1,
    )  # fmt: skip
    np.testing.assert_allclose(syn0, w0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(syn1neg, w1, rtol=0, atol=1e-6)
    assert stats[0, 1] == n == 12
    assert stats[0, 0] == pytest.approx(loss, rel=1e-5)
    assert np.all(syn0[:n_words] == w0[:n_words])  # word rows untouched


def test_pv_dm_two_updates_by_hand():
    """Document [w0, w1], window 1: each word is predicted by mean(doc, the other word)."""
    config = _hs_config(window=1)
    alpha = 0.25
    syn0 = np.array([[0.05, -0.3], [0.4, 0.1], [0.1, 0.2]], np.float32)
    syn1 = np.array([[0.3, -0.1]], np.float32)
    w, s1 = syn0.astype(np.float64), syn1[0].astype(np.float64)
    for centre, context in ((0, 1), (1, 0)):
        h = (w[2] + w[context]) / 2
        g = (1.0 - float(config.codes[centre, 0]) - _table_sigmoid(float(h @ s1))) * alpha
        err = g * s1
        s1 = s1 + g * h
        w[2] = w[2] + err
        w[context] = w[context] + err
    train_doc2vec_chunk(
        Weights(syn0, np.zeros((0, 2), np.float32), syn1), np.array([0, 1], np.int32),
        np.array([0, 2]), Documents(np.array([2]), True, False), config, alpha, alpha, 1, 1,
    )  # fmt: skip
    np.testing.assert_allclose(syn0, w, rtol=1e-5)
    np.testing.assert_allclose(syn1[0], s1, rtol=1e-5)


def test_inference_kernel_leaves_model_unchanged_and_ignores_threads():
    rng = np.random.default_rng(0)
    counts = np.sort(rng.integers(5, 100, 40))[::-1].copy()
    config = kernel_config(
        counts, sg=True, hs=1, negative=3, window=2, shared_negatives=False,
        ns_exponent=0.75, input_rows=(None, None), sync_tokens=0,
    )  # fmt: skip
    syn0 = rng.normal(size=(40, 6)).astype(np.float32) * 0.1
    syn1neg = rng.normal(size=(40, 6)).astype(np.float32) * 0.1
    syn1 = rng.normal(size=(39, 6)).astype(np.float32) * 0.1
    before = [a.copy() for a in (syn0, syn1neg, syn1)]
    ids = rng.integers(0, 40, 300).astype(np.int32)
    offsets = np.array([0, 50, 120, 120, 300])
    keep = keep_probabilities(counts, 1e-2)
    weights, settings = Weights(syn0, syn1neg, syn1), Inference(keep, True, 4, 0.05, 0.001, 7)
    args = (weights, ids, offsets, config, settings)
    one, bad = kernels.infer_documents(*args, 1)
    two, _ = kernels.infer_documents(*args, 2)
    assert not bad.any()
    assert np.array_equal(one, two)
    for a, b in zip((syn0, syn1neg, syn1), before, strict=True):
        assert np.array_equal(a, b)
    # a document alone gives the same vector as inside a batch
    alone, _ = kernels.infer_documents(
        weights, ids[120:300], np.array([0, 180]), config, settings, 1
    )
    assert np.array_equal(alone[0], one[3])
    assert not np.array_equal(one[0], one[1])


def test_document_seed_depends_on_order_and_seed():
    a = np.array([1, 2, 3], np.int32)
    assert kernels.document_seed(a, 0) == kernels.document_seed(a.copy(), 0)
    assert kernels.document_seed(a, 0) != kernels.document_seed(a[::-1].copy(), 0)
    assert kernels.document_seed(a, 0) != kernels.document_seed(a, 1)
    assert kernels.document_seed(a[:0], 0) != kernels.document_seed(a[:1], 0)


@pytest.fixture(scope="module")
def fitted():
    return Doc2VecTransformer(**SMALL, n_jobs=2).fit(DOCS)


def test_transform_is_deterministic_across_batches_orders_threads(fitted):
    full = fitted.transform(DOCS)
    assert full.shape == (len(DOCS), 8) and full.dtype == np.float32
    # duplicated documents get the same vector
    assert np.array_equal(full[0], full[6])
    order = np.random.default_rng(1).permutation(len(DOCS))
    assert np.array_equal(fitted.transform([DOCS[i] for i in order]), full[order])
    assert np.array_equal(fitted.transform(DOCS[3:5]), full[3:5])
    fitted.set_params(n_jobs=1)
    try:
        assert np.array_equal(fitted.transform(DOCS), full)
    finally:
        fitted.set_params(n_jobs=2)


def test_transform_is_identical_in_another_process(fitted, tmp_path):
    import pickle

    path = tmp_path / "d2v.pkl"
    path.write_bytes(pickle.dumps(fitted))
    script = textwrap.dedent(
        f"""
        import pickle, sys, numpy as np
        est = pickle.loads(open({str(path)!r}, "rb").read())
        np.save(sys.argv[1], est.set_params(n_jobs=1).transform({DOCS[:4]!r}))
        """
    )
    out = tmp_path / "out.npy"
    subprocess.run([sys.executable, "-c", script, str(out)], check=True, timeout=300)
    assert np.array_equal(np.load(out), fitted.transform(DOCS[:4]))


def test_transform_does_not_change_the_estimator(fitted):
    state = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(fitted).items()}
    dv = fitted.dv_.vectors.copy()
    fitted.transform(DOCS[:3] + ["completely unknown words"])
    assert set(vars(fitted)) == set(state)
    assert np.array_equal(fitted.dv_.vectors, dv)
    assert np.array_equal(fitted.syn1neg_, state["syn1neg_"])


def test_fit_transform_equals_fit_then_transform():
    a = Doc2VecTransformer(**SMALL, n_jobs=2).fit_transform(DOCS)
    est = Doc2VecTransformer(**SMALL, n_jobs=2).fit(DOCS)
    assert np.array_equal(a, est.transform(DOCS))


@pytest.mark.parametrize("dm", [0, 1])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fit_is_bit_identical_for_same_seed_and_threads(dm, n_jobs):
    params = dict(SMALL, dm=dm, dbow_words=1, hs=1, n_jobs=n_jobs)
    a = Doc2VecTransformer(**params).fit(DOCS)
    b = Doc2VecTransformer(**params).fit(DOCS)
    assert np.array_equal(a.dv_.vectors, b.dv_.vectors)
    assert np.array_equal(a.wv_.vectors, b.wv_.vectors)
    assert np.array_equal(a.syn1neg_, b.syn1neg_)
    assert np.array_equal(a.syn1_, b.syn1_)
    assert a.history_[-1]["loss"] == b.history_[-1]["loss"]


def test_multi_thread_fit_with_repeated_tags_is_deterministic():
    tags = ["animals", "animals", "markets", "markets", "animals", "markets"] * 5
    a = Doc2VecTransformer(**SMALL, n_jobs=2).fit(DOCS, tags=tags)
    b = Doc2VecTransformer(**SMALL, n_jobs=2).fit(DOCS, tags=tags)
    assert a.dv_.index_to_key == ["animals", "markets"]
    assert np.array_equal(a.dv_.vectors, b.dv_.vectors)


def test_learned_attributes_per_architecture():
    dbow = Doc2VecTransformer(**SMALL).fit(DOCS)
    assert dbow.wv_ is None  # pure PV-DBOW trains no word vectors
    assert dbow.dv_.index_to_key == list(range(len(DOCS)))
    assert dbow.dv_.vectors.shape == (len(DOCS), 8)
    assert dbow.syn1_ is None and dbow.syn1neg_.shape == (len(dbow.vocabulary_), 8)
    assert [r["epoch"] for r in dbow.history_] == [1, 2, 3]
    assert all(r["loss"] > 0 and r["words"] == dbow.n_words_trained_ / 3 for r in dbow.history_)
    dm = Doc2VecTransformer(**SMALL, dm=1).fit(DOCS)
    assert dm.wv_.vectors.shape == (len(dm.vocabulary_), 8)
    assert dm.wv_.counts.sum() == sum(len(d.split()) for d in DOCS) - 5 * 2  # "a" x2 per cycle
    assert list(dm.get_feature_names_out()[:2]) == ["doc2vectransformer0", "doc2vectransformer1"]


def test_dv_of_training_documents_are_informative():
    """Documents on the same topic end up closer than documents on different topics."""
    est = Doc2VecTransformer(vector_size=16, min_count=1, epochs=40, random_state=0, n_jobs=1)
    X = est.fit_transform(DOCS)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    topic = np.array([0, 0, 1, 1, 0, 1] * 5)
    sim = X @ X.T
    same = sim[topic[:, None] == topic[None, :]].mean()
    other = sim[topic[:, None] != topic[None, :]].mean()
    assert same > other + 0.1


def test_unknown_documents_follow_handle_unknown(fitted):
    out = fitted.transform(["zzz qqq", DOCS[0]])
    assert np.all(out[0] == 0) and np.any(out[1] != 0)
    nan = fitted.set_params(handle_unknown="nan").transform(["zzz"])
    fitted.set_params(handle_unknown="zeros")
    assert np.isnan(nan).all()


def test_parameter_errors_come_before_training():
    with pytest.raises(ValueError, match="min_alpha"):
        Doc2VecTransformer(alpha=0.01, min_alpha=0.1).fit(DOCS)
    with pytest.raises(ValueError, match="min_alpha"):
        Doc2VecTransformer(infer_alpha=1e-5).fit(DOCS)
    with pytest.raises(ValueError, match="no training objective"):
        Doc2VecTransformer(negative=0, hs=0).fit(DOCS)
    with pytest.raises(ValueError, match="tags has 2 entries"):
        Doc2VecTransformer(**SMALL).fit(DOCS, tags=["a", "b"])
    with pytest.raises(TypeError):
        Doc2VecTransformer(**SMALL).fit("one string")
    with pytest.raises(NotFittedError):
        Doc2VecTransformer().transform(DOCS)


def test_divergence_raises_and_leaves_estimator_unfitted():
    est = Doc2VecTransformer(**SMALL, alpha=1e30, n_jobs=1)
    with pytest.raises(TrainingDivergedError, match="alpha"):
        est.fit(DOCS)
    assert not hasattr(est, "dv_") and not hasattr(est, "history_")


def test_callbacks_see_fitted_state_stop_and_failures_restore():
    seen = []

    def cb(est, record):
        seen.append((record["epoch"], est.dv_.vectors.shape, est.transform(DOCS[:1]).shape))
        return record["epoch"] == 2

    est = Doc2VecTransformer(**dict(SMALL, epochs=5), callbacks=[cb]).fit(DOCS)
    assert seen == [(1, (30, 8), (1, 8)), (2, (30, 8), (1, 8))]
    assert len(est.history_) == 2

    def boom(est, record):
        raise KeyboardInterrupt

    failing = Doc2VecTransformer(**SMALL, callbacks=[boom])
    with pytest.raises(KeyboardInterrupt):
        failing.fit(DOCS)
    with pytest.raises(NotFittedError):
        failing.transform(DOCS)


def test_set_output_pandas(fitted):
    pd = pytest.importorskip("pandas")
    df = Doc2VecTransformer(**SMALL).set_output(transform="pandas").fit_transform(DOCS)
    assert isinstance(df, pd.DataFrame) and list(df.columns)[0] == "doc2vectransformer0"


# --------------------------------------------------------------------------- quality
def _bbc_accuracy(embedder, X, y):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(embedder, StandardScaler(), LogisticRegression(max_iter=2000))
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    return cross_val_score(pipe, X, y, cv=cv).mean()


def _gensim_reference():
    """The benchmark's gensim Doc2Vec + infer_vector transformer (one copy of the reference)."""
    import importlib.util
    import sys
    from pathlib import Path

    benchmarks = Path(__file__).parents[3] / "benchmarks"
    spec = importlib.util.spec_from_file_location("bench_doc2vec", benchmarks / "bench_doc2vec.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(benchmarks))  # the script imports the benchmarks' _util
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(benchmarks))
    return module.GensimDoc2Vec


@pytest.mark.slow
def test_bbc_news_accuracy_at_least_gensim_inferred():
    pytest.importorskip("gensim")
    from skembed.datasets import load_bbc_news

    X, y = load_bbc_news()
    ours = _bbc_accuracy(Doc2VecTransformer(random_state=0, n_jobs=2), X, y)
    # workers=1: gensim with two workers is not reproducible (seed 0 drew 0.9596 and 0.9604
    # in two runs); with one it is (seeds 0, 1, 2: 0.9627, 0.9609, 0.9627).
    gensim = _bbc_accuracy(_gensim_reference()(dm=0, epochs=10, workers=1, seed=0), X, y)
    assert ours > 0.95  # measured 0.9613 (PV-DBOW, 10 epochs)
    assert ours >= gensim - 0.005


def test_torch_batched_engine_trains_pv_dbow_on_the_cpu():
    pytest.importorskip("torch")
    # 30 documents of ~9 tokens, no subsampling: 16 tokens per step, so that an epoch is
    # several steps. The loss falls as the numba engine's does (measured 3.99 -> 2.63 there,
    # 3.97 -> 2.61 here)
    params = {**SMALL, "epochs": 10, "sample": 0, "alpha": 0.1}
    est = Doc2VecTransformer(engine="torch-batched", batch_size=16, **params).fit(DOCS)
    assert (est.engine_, est.device_) == ("torch-batched", "cpu")
    assert est.dv_.vectors.shape == (len(DOCS), 8) and est.wv_ is None
    losses = [h["loss"] for h in est.history_]
    numba = [h["loss"] for h in Doc2VecTransformer(**params).fit(DOCS).history_]
    assert len(losses) == 10 and np.isfinite(losses).all() and losses[-1] < 0.75 * losses[0]
    assert abs(losses[-1] - numba[-1]) < 0.15
    # inference is the numba kernel's, on the CPU, as for the numba engine; it writes no
    # attribute, and the same random_state gives the same vectors (CPU torch is deterministic)
    before = dict(vars(est))
    X = est.transform(DOCS[:4])
    assert X.shape == (4, 8) and np.isfinite(X).all()
    assert vars(est).keys() == before.keys()
    assert all(vars(est)[k] is v for k, v in before.items())
    again = Doc2VecTransformer(engine="torch-batched", batch_size=16, **params).fit(DOCS)
    np.testing.assert_array_equal(again.dv_.vectors, est.dv_.vectors)
    np.testing.assert_array_equal(again.transform(DOCS[:4]), X)


@pytest.mark.parametrize("arch", [dict(dm=1), dict(dbow_words=1), dict(hs=1, negative=0)])
def test_torch_batched_refuses_what_it_does_not_train(arch):
    est = Doc2VecTransformer(engine="torch-batched", **arch, **SMALL)
    with pytest.raises(
        ValueError, match=r"trains pure PV-DBOW with negative sampling.*device='cpu'"
    ):
        est.fit(DOCS)


@pytest.mark.slow
def test_quality_torch_batched_pv_dbow_on_bbc_news_matches_the_numba_engine():
    # issue 39: Doc2Vec trains on a torch device; the batched engine runs the same code on
    # the CPU. BBC News (2,225 articles, 0.85M tokens), defaults: the document vectors'
    # 5-fold accuracy (logistic regression) measured 0.970 (numba engine: 0.949)
    pytest.importorskip("torch")
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    est = Doc2VecTransformer(engine="torch-batched", random_state=0).fit(texts)
    losses = [h["loss"] for h in est.history_]
    assert len(losses) == 10 and np.isfinite(losses).all() and losses[-1] < 2.4, losses
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    model = LogisticRegression(max_iter=2000)
    assert cross_val_score(model, est.dv_.vectors, np.asarray(labels), cv=folds).mean() > 0.95


@pytest.mark.parametrize(
    "dm, dbow_words, n_tokens, expected",
    [
        (0, 0, 1_000, 65_536),  # pure PV-DBOW: only the output layer is shared
        (1, 0, 58_152, 8_192),  # gensim's Lee corpus: Word2Vec's phase
        (1, 0, 200_000, 25_000),  # 4 phases per part and epoch
        (0, 1, 836_357, 65_536),  # BBC News keeps the long phase
    ],
)
def test_phase_length_gives_word_training_at_least_four_phases_per_epoch(
    dm, dbow_words, n_tokens, expected
):
    est = Doc2VecTransformer(dm=dm, dbow_words=dbow_words, n_parts=2)
    assert est._phase_tokens(np.array([n_tokens])) == expected

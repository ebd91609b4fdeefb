"""GloVeTransformer: kernel step vs a numpy reference, engines, precomputed counts, errors, quality."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from skembed.exceptions import TrainingDivergedError
from skembed.kernels.glove import (
    GloveSettings,
    GloveWeights,
    Records,
    block_records,
    blocked_schedule,
    glove_epoch,
    shuffle_records,
)
from skembed.text import LineCorpus
from skembed.text.count._glove import GloVeTransformer

SMALL = dict(vector_size=8, window=3, min_count=1, epochs=5, random_state=0, n_jobs=1)
DOCS = [
    "the cat sat on the mat with another cat",
    "the dog sat on the log near the dog house",
    "cats and dogs play in the garden",
    "stock market prices fell as the bank raised rates",
    "the bank lends money and the market trades stock",
]


# ----------------------------------------------------------------------------- kernel
def one_cell(n):
    """Offsets and schedule of a sequential epoch over ``n`` records."""
    return np.array([0, n], np.int64), np.zeros((1, 1), np.int64)


def reference_epoch(rows, cols, vals, W, C, bw, bc, gW, gC, gbw, gbc, x_max, alpha, lr, clip):
    """glove.c's update, sequential, in float64."""
    cost = 0.0
    for i, j, x in zip(rows, cols, vals, strict=True):
        diff = W[i] @ C[j] + bw[i] + bc[j] - np.log(x)
        fdiff = (min(x / x_max, 1.0) ** alpha) * diff
        cost += 0.5 * fdiff * diff
        g1 = np.clip(fdiff * C[j], -clip, clip) * lr
        g2 = np.clip(fdiff * W[i], -clip, clip) * lr
        W[i] -= g1 / np.sqrt(gW[i])
        C[j] -= g2 / np.sqrt(gC[j])
        gW[i] += g1**2
        gC[j] += g2**2
        gb = fdiff * lr
        bw[i] -= gb / np.sqrt(gbw[i])
        bc[j] -= gb / np.sqrt(gbc[j])
        gbw[i] += gb**2
        gbc[j] += gb**2
    return cost


def small_problem(scale=1.0):
    rng = np.random.default_rng(0)
    n, d = 3, 4
    W = (rng.random((n, d)) - 0.5) * scale
    C = (rng.random((n, d)) - 0.5) * scale
    bw, bc = rng.random(n) - 0.5, rng.random(n) - 0.5
    # (0, 1) below x_max, (2, 0) above it, (0, 1) again after its first update, (1, 1) self
    rows = np.array([0, 2, 0, 1], np.int32)
    cols = np.array([1, 0, 1, 1], np.int32)
    vals = np.array([3.0, 150.0, 3.0, 0.5], np.float32)
    state = [W, C, bw, bc, np.ones_like(W), np.ones_like(C), np.ones(n), np.ones(n)]
    return rows, cols, vals, state


@pytest.mark.parametrize("scale", [1.0, 200.0])  # 200: gradient components hit the clip
def test_kernel_epoch_equals_numpy_reference(scale):
    rows, cols, vals, state = small_problem(scale)
    ref = [a.copy() for a in state]
    got = [a.astype(np.float32) for a in state]
    ref_cost = reference_epoch(rows, cols, vals.astype(np.float64), *ref, 10.0, 0.75, 0.05, 100.0)
    offsets, schedule = one_cell(4)
    costs = glove_epoch(
        Records(rows, cols, vals, offsets),
        schedule,
        GloveWeights(*got[:4]),
        GloveWeights(*got[4:]),
        GloveSettings(10.0, 0.75, 0.05, 100.0),
    )
    assert costs.shape == (1,)
    assert costs[0] == pytest.approx(ref_cost, rel=1e-4)
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=1e-6)
    if scale > 1:  # the clip was active: an unclipped step would differ
        unclipped = [a.copy() for a in state]
        reference_epoch(rows, cols, vals.astype(np.float64), *unclipped, 10.0, 0.75, 0.05, 1e30)
        assert not np.allclose(unclipped[0], ref[0])


def test_kernel_first_step_by_hand():
    # one record, 1-d vectors: every quantity computable by hand
    W, C = np.array([[0.5]], np.float32), np.array([[0.25]], np.float32)
    bw, bc = np.array([0.1], np.float32), np.array([0.2], np.float32)
    g = [np.ones((1, 1), np.float32), np.ones((1, 1), np.float32)]
    gb = [np.ones(1, np.float32), np.ones(1, np.float32)]
    x = np.float32(np.e)  # log x = 1
    offsets, schedule = one_cell(1)
    records = Records(np.zeros(1, np.int32), np.zeros(1, np.int32), np.array([x]), offsets)
    costs = glove_epoch(
        records,
        schedule,
        GloveWeights(W, C, bw, bc),
        GloveWeights(*g, *gb),
        GloveSettings(100.0, 0.75, 0.1, 100.0),
    )
    diff = 0.5 * 0.25 + 0.1 + 0.2 - 1.0  # -0.575
    f = (np.e / 100.0) ** 0.75
    assert costs[0] == pytest.approx(0.5 * f * diff * diff, rel=1e-6)
    fdiff = f * diff
    assert W[0, 0] == pytest.approx(0.5 - 0.1 * fdiff * 0.25, rel=1e-6)
    assert C[0, 0] == pytest.approx(0.25 - 0.1 * fdiff * 0.5, rel=1e-6)
    assert bw[0] == pytest.approx(0.1 - 0.1 * fdiff, rel=1e-6)
    assert g[0][0, 0] == pytest.approx(1 + (0.1 * fdiff * 0.25) ** 2, rel=1e-6)
    assert gb[1][0] == pytest.approx(1 + (0.1 * fdiff) ** 2, rel=1e-6)


def test_shuffle_is_a_seeded_permutation_of_records():
    rows = np.arange(1000, dtype=np.int32)
    cols = rows[::-1].copy()
    vals = rows.astype(np.float32) * 0.5
    a = [rows.copy(), cols.copy(), vals.copy()]
    b = [rows.copy(), cols.copy(), vals.copy()]
    shuffle_records(*a, 7)
    shuffle_records(*b, 7)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], rows)
    np.testing.assert_array_equal(np.sort(a[0]), rows)
    np.testing.assert_array_equal(a[1], 999 - a[0])  # triples stay together
    np.testing.assert_array_equal(a[2], a[0] * 0.5)


def test_block_records_groups_cells_deterministically():
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 50, 2000).astype(np.int32)
    cols = rng.integers(0, 50, 2000).astype(np.int32)
    vals = (rows * 1000 + cols).astype(np.float32)  # identifies each record's pair
    a = [rows.copy(), cols.copy(), vals.copy()]
    offsets = block_records(*a, 3)
    assert (
        offsets.tolist()
        == np.concatenate(
            [[0], np.cumsum(np.bincount((rows % 3) * 3 + cols % 3, minlength=9))]
        ).tolist()
    )
    for c in range(9):
        r, k = a[0][offsets[c] : offsets[c + 1]], a[1][offsets[c] : offsets[c + 1]]
        assert np.all((r % 3) * 3 + k % 3 == c)
    np.testing.assert_array_equal(a[2], a[0] * 1000 + a[1])  # triples stay together
    assert sorted(zip(a[0], a[1], strict=True)) == sorted(zip(rows, cols, strict=True))
    b = [rows.copy(), cols.copy(), vals.copy()]
    block_records(*b, 3)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 5])
def test_blocked_schedule_rounds_share_no_block(n_blocks):
    schedule = blocked_schedule(n_blocks)
    assert schedule.shape == (n_blocks, n_blocks)
    assert sorted(schedule.ravel().tolist()) == list(range(n_blocks * n_blocks))
    for cells in schedule:
        assert len(set(cells // n_blocks)) == n_blocks  # row blocks distinct
        assert len(set(cells % n_blocks)) == n_blocks  # column blocks distinct


def test_blocked_epoch_equals_sequential_reference_in_schedule_order():
    import numba

    rng = np.random.default_rng(2)
    n, d, nnz = 30, 6, 600
    rows = rng.integers(0, n, nnz).astype(np.int32)
    cols = rng.integers(0, n, nnz).astype(np.int32)
    vals = rng.uniform(0.5, 200, nnz).astype(np.float32)
    offsets = block_records(rows, cols, vals, 2)
    schedule = blocked_schedule(2)
    init = [(rng.random((n, d)) - 0.5) / d, (rng.random((n, d)) - 0.5) / d]
    init += [(rng.random(n) - 0.5) / d, (rng.random(n) - 0.5) / d]
    init += [np.ones((n, d)), np.ones((n, d)), np.ones(n), np.ones(n)]
    # cells of one round touch disjoint rows, so any sequential order of a round is exact
    order = np.concatenate([np.arange(offsets[c], offsets[c + 1]) for c in schedule.ravel()])
    ref = [a.copy() for a in init]
    ref_cost = 0.0
    for _ in range(3):
        ref_cost = reference_epoch(
            rows[order], cols[order], vals[order].astype(np.float64), *ref, 100.0, 0.75, 0.05, 100.0
        )
    results = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        got = [a.astype(np.float32) for a in init]
        for _ in range(3):
            costs = glove_epoch(
                Records(rows, cols, vals, offsets),
                schedule,
                GloveWeights(*got[:4]),
                GloveWeights(*got[4:]),
                GloveSettings(100.0, 0.75, 0.05, 100.0),
            )
        results.append(got)
        assert costs.sum() == pytest.approx(ref_cost, rel=1e-4)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    for a, b in zip(*results, strict=True):  # thread count does not change a single bit
        np.testing.assert_array_equal(a, b)


def test_torch_step_equals_numpy_batched_reference():
    torch = pytest.importorskip("torch")
    from skembed.nn.glove import GloVeModel

    rows, cols, vals, state = small_problem()
    W, C, bw, bc = (a.astype(np.float32) for a in state[:4])
    model = GloVeModel(3, 4)
    with torch.no_grad():
        for p, v in zip((model.W, model.C, model.bw, model.bc), (W, C, bw, bc), strict=True):
            p.copy_(torch.from_numpy(v))
    x = vals.astype(np.float64)
    f = np.minimum(x / 10.0, 1.0) ** 0.75
    loss = model.adagrad_step(
        torch.from_numpy(rows.astype(np.int64)),
        torch.from_numpy(cols.astype(np.int64)),
        torch.from_numpy(np.log(x).astype(np.float32)),
        torch.from_numpy(f.astype(np.float32)),
        0.05,
    )
    # reference: per-record gradients at the old parameters, summed per row, AdaGrad add-then-divide
    W, C, bw, bc = (a.astype(np.float64) for a in (W, C, bw, bc))
    diff = np.einsum("kd,kd->k", W[rows], C[cols]) + bw[rows] + bc[cols] - np.log(x)
    fdiff = f * diff
    assert loss == pytest.approx(0.5 * np.sum(fdiff * diff), rel=1e-5)
    GW, GC = np.zeros_like(W), np.zeros_like(C)
    np.add.at(GW, rows, fdiff[:, None] * C[cols])
    np.add.at(GC, cols, fdiff[:, None] * W[rows])
    Gbw, Gbc = np.bincount(rows, fdiff, 3), np.bincount(cols, fdiff, 3)
    for p, G, param in (
        (W, GW, model.W),
        (C, GC, model.C),
        (bw, Gbw, model.bw),
        (bc, Gbc, model.bc),
    ):
        expected = p - 0.05 * G / np.sqrt(1 + (0.05 * G) ** 2)
        np.testing.assert_allclose(param.detach().numpy(), expected, rtol=1e-5, atol=1e-7)


# ----------------------------------------------------------------------------- estimator
def test_fit_is_deterministic_with_one_thread_and_sets_attributes():
    a = GloVeTransformer(**SMALL).fit(DOCS)
    b = GloVeTransformer(**SMALL).fit(DOCS)
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
    assert a.wv_.vectors.dtype == np.float32
    assert a.wv_.vectors.shape == (len(a.vocabulary_), 8)
    assert len(a.loss_history_) == 5
    assert a.device_ == "cpu" and a.engine_ == "numba"
    assert not hasattr(a, "cooccurrence_")
    assert a.n_cooccurrences_ > 0
    assert a.wv_.counts[a.vocabulary_["the"]] == 9
    out = a.transform(DOCS)
    assert out.shape == (5, 8) and out.dtype == np.float32


def test_vectors_word_vs_sum():
    s = GloVeTransformer(**SMALL).fit(DOCS)
    w = GloVeTransformer(**SMALL, vectors="word").fit(DOCS)
    # same seed, same training: sum = W + C and word = W differ by C
    assert not np.allclose(s.wv_.vectors, w.wv_.vectors)
    assert s.loss_history_ == w.loss_history_


def test_keep_cooccurrence_and_fit_cooccurrence_reproduce_fit():
    est = GloVeTransformer(**SMALL, keep_cooccurrence=True).fit(DOCS)
    X = est.cooccurrence_
    assert X.shape == (len(est.vocabulary_),) * 2
    assert (X != X.T).nnz == 0
    again = GloVeTransformer.from_cooccurrence(X, est.wv_.index_to_key, est.wv_.counts, **SMALL)
    np.testing.assert_array_equal(again.wv_.vectors, est.wv_.vectors)
    np.testing.assert_array_equal(again.transform(DOCS), est.transform(DOCS))
    assert again.loss_history_ == est.loss_history_
    # COO / CSC input is accepted too
    other = clone(again).fit_cooccurrence(X.tocoo(), est.wv_.index_to_key)
    np.testing.assert_array_equal(other.wv_.vectors, est.wv_.vectors)
    assert other.wv_.counts is None


def test_fit_cooccurrence_errors():
    X = sp.csr_matrix(np.array([[0, 2.0, 1], [2.0, 0, 1], [1, 1, 0]]))
    est = GloVeTransformer(**SMALL)
    with pytest.raises(ValueError, match=r"shape \(3, 3\) but the vocabulary has 2 words"):
        est.fit_cooccurrence(X, ["a", "b"])
    with pytest.raises(ValueError, match="must be square"):
        est.fit_cooccurrence(X[:2], ["a", "b", "c"])
    with pytest.raises(TypeError, match="scipy sparse"):
        est.fit_cooccurrence(X.toarray(), ["a", "b", "c"])
    with pytest.raises(ValueError, match="negative"):
        est.fit_cooccurrence(-X, ["a", "b", "c"])
    with pytest.raises(ValueError, match="empty"):
        est.fit_cooccurrence(sp.csr_matrix((3, 3)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="counts has shape"):
        est.fit_cooccurrence(X, ["a", "b", "c"], counts=[1, 2])
    with pytest.raises(ValueError, match="pooling='tfidf' needs the training documents"):
        clone(est).set_params(pooling="tfidf").fit_cooccurrence(X, ["a", "b", "c"])
    with pytest.raises(ValueError, match="duplicate"):
        est.fit_cooccurrence(X, ["a", "b", "a"])


def test_empty_vocabulary_or_cooccurrence_errors():
    with pytest.raises(ValueError, match="vocabulary is empty after min_count=50"):
        GloVeTransformer(**{**SMALL, "min_count": 50}).fit(DOCS)
    # every document holds one word: nothing co-occurs
    with pytest.raises(ValueError, match="co-occurrence matrix is empty after min_count"):
        GloVeTransformer(**SMALL).fit(["alpha", "beta", "alpha", "gamma"])


def test_nan_loss_is_a_training_diverged_error_naming_learning_rate():
    est = GloVeTransformer(**{**SMALL, "learning_rate": 1e30, "epochs": 10})
    with pytest.raises(TrainingDivergedError, match=r"Lower learning_rate \(currently 1e\+30\)"):
        est.fit(DOCS * 3)
    with pytest.raises(NotFittedError):  # the failed fit left nothing behind
        est.transform(DOCS)


def test_callbacks_see_each_epoch_with_fresh_vectors_and_can_stop():
    seen = []

    def cb(est, record):
        seen.append((dict(record), est.wv_.vectors.copy(), len(est.history_)))
        return record["epoch"] == 2

    est = GloVeTransformer(**{**SMALL, "epochs": 10, "callbacks": [cb]}).fit(DOCS)
    assert [r["epoch"] for r, _, _ in seen] == [1, 2]
    assert [n for _, _, n in seen] == [1, 2]  # history_ appended before the callback
    assert set(seen[0][0]) == {"epoch", "loss", "seconds"}
    assert est.history_ == [r for r, _, _ in seen]
    assert est.loss_history_ == [r["loss"] for r, _, _ in seen]
    assert not np.array_equal(seen[0][1], seen[1][1])  # wv_ refreshed each epoch
    np.testing.assert_array_equal(seen[1][1], est.wv_.vectors)
    with pytest.raises(AttributeError):
        est.loss_history_ = []


class Boom(Exception):
    pass


def test_failed_fit_leaves_fresh_estimator_unfitted_and_fitted_one_unchanged():
    def explode(est, record):
        if record["epoch"] == 2:
            raise Boom

    est = GloVeTransformer(**{**SMALL, "callbacks": [explode]})
    with pytest.raises(Boom):
        est.fit(DOCS)
    with pytest.raises(NotFittedError):
        est.transform(DOCS)
    assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]
    est.set_params(callbacks=None).fit(DOCS)
    out = est.transform(DOCS)
    params = est.get_params(deep=False)
    before = {k: v for k, v in vars(est).items() if k not in params}
    est.set_params(callbacks=[explode], vector_size=4)
    with pytest.raises(Boom):
        est.fit(DOCS[:3])
    assert vars(est).keys() - params.keys() == before.keys()
    for key, value in before.items():
        assert vars(est)[key] is value, key
    with pytest.raises(Boom):
        est.fit_cooccurrence(sp.csr_matrix(np.array([[0, 2.0], [2.0, 0]])), ["a", "b"])
    est.set_params(vector_size=8)
    np.testing.assert_array_equal(est.transform(DOCS), out)


def test_two_fits_with_two_threads_are_bit_identical(bbc_small):
    params = dict(vector_size=16, window=5, min_count=2, epochs=3, random_state=3, n_jobs=2)
    a = GloVeTransformer(**params).fit(bbc_small)
    b = GloVeTransformer(**params).fit(bbc_small)
    assert a.n_threads_ == 2 and a.n_cooccurrences_ > 100_000
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
    assert a.loss_history_ == b.loss_history_
    one = GloVeTransformer(**{**params, "n_jobs": 1}).fit(bbc_small)
    # another thread count is another (equally good) schedule
    assert one.loss_history_[-1] == pytest.approx(a.loss_history_[-1], rel=0.05)


def test_line_corpus_streams_and_equals_token_lists(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(doc.lower() for doc in DOCS) + "\n")
    a = GloVeTransformer(**SMALL).fit(LineCorpus(path))
    b = GloVeTransformer(**SMALL).fit([doc.split() for doc in DOCS])
    assert a.wv_.index_to_key == b.wv_.index_to_key
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)


def test_numba_engine_on_other_device_fails_before_counting(monkeypatch):
    import skembed.utils._compute as _compute

    def no_counting(*args):
        raise AssertionError("counted before checking the engine")

    monkeypatch.setattr(_compute, "resolve_device", lambda device: "cuda:0")
    monkeypatch.setattr(GloVeTransformer, "_count", no_counting)
    with pytest.raises(ValueError, match="engine='numba' runs on the CPU only"):
        GloVeTransformer(**{**SMALL, "engine": "numba", "device": "cuda"}).fit(DOCS)
    with pytest.raises(ValueError, match="engine='numba' runs on the CPU only"):
        GloVeTransformer(**{**SMALL, "engine": "numba", "device": "cuda"}).fit_cooccurrence(
            sp.csr_matrix(np.array([[0, 2.0], [2.0, 0]])), ["a", "b"]
        )


def test_tfidf_and_sif_pooling_after_fit():
    for pooling in ("tfidf", "sif"):
        est = GloVeTransformer(**SMALL, pooling=pooling).fit(DOCS)
        out = est.transform(DOCS)
        assert out.shape == (5, 8) and np.isfinite(out).all()


# ----------------------------------------------------------------------------- real text
@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    return list(texts), np.asarray(labels)


@pytest.fixture(scope="module")
def bbc_small(bbc):
    return bbc[0][:400]


@pytest.fixture(scope="module")
def bbc_numba(bbc):
    texts, _ = bbc
    return GloVeTransformer(
        vector_size=100, window=10, min_count=5, epochs=12, random_state=0, n_jobs=2
    ).fit(texts)


def test_loss_decreases_and_word_similarity_floor_on_bbc(bbc_numba):
    from gensim.test.utils import datapath

    from skembed.evaluation import word_similarity

    loss = bbc_numba.loss_history_
    assert all(b < a for a, b in zip(loss, loss[1:], strict=False)), loss
    assert loss[-1] < 0.6 * loss[0]
    ws = word_similarity(bbc_numba.wv_, datapath("wordsim353.tsv"))
    # the GloVe C tools' vectors (100-d, 15 iterations) score 0.156 on this corpus
    assert ws["spearman"] > 0.10, ws
    kv = bbc_numba.wv_
    assert kv.similarity("labour", "tory") > kv.similarity("labour", "film")
    assert kv.similarity("film", "actor") > kv.similarity("film", "bank")


def test_document_vectors_classify_bbc(bbc, bbc_numba):
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    texts, labels = bbc
    Xd = bbc_numba.transform(texts)
    clf = make_pipeline(StandardScaler(), RidgeClassifier())
    acc = cross_val_score(clf, Xd, labels, cv=3).mean()
    assert acc > 0.75, acc  # 5 classes: chance is 0.23


@pytest.mark.slow
def test_torch_engine_reaches_numba_quality(bbc):
    pytest.importorskip("torch")
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    texts, labels = bbc
    texts, labels = texts[::3], labels[::3]
    params = dict(vector_size=30, window=5, min_count=3, epochs=8, random_state=0, n_jobs=1)
    fits = {
        engine: GloVeTransformer(**params, engine=engine).fit(texts)
        for engine in ("numba", "torch")
    }
    assert fits["torch"].engine_ == "torch"
    losses = {e: f.loss_history_ for e, f in fits.items()}
    assert losses["torch"][-1] < 0.7 * losses["torch"][0]
    assert losses["torch"][-1] < 1.25 * losses["numba"][-1], losses
    clf = make_pipeline(StandardScaler(), RidgeClassifier())
    acc = {
        e: cross_val_score(clf, f.transform(texts), labels, cv=3).mean() for e, f in fits.items()
    }
    assert acc["torch"] > acc["numba"] - 0.05, acc
    assert acc["torch"] > 0.5, acc  # chance: 0.23


def test_huge_window_is_clipped_to_the_longest_document():
    """window=10**9 asked for 969 GiB (issue 40); no pair lies further apart than a document."""
    import tracemalloc

    tracemalloc.start()
    huge = GloVeTransformer(**{**SMALL, "window": 10**7}).fit(DOCS)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    longest = max(len(d.split()) for d in DOCS)
    exact = GloVeTransformer(**{**SMALL, "window": longest}).fit(DOCS)
    assert peak < 20e6  # was 10**7 * (8 weight + 8 * tokens key) bytes
    np.testing.assert_array_equal(huge.wv_.vectors, exact.wv_.vectors)

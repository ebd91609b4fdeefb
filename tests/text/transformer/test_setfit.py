"""SetFitEmbedder: pair sampling, losses, the fine-tuning contract, backends, saving, errors."""

from __future__ import annotations

import math
import pickle
import pickletools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _helpers import text_data, tiny_bert_dir  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from skembed.callbacks import Callback  # noqa: E402
from skembed.text import BertPooledEmbedder, SetFitEmbedder  # noqa: E402
from skembed.text.transformer._cache import EmbeddingCache  # noqa: E402

X, Y = text_data(24)


@pytest.fixture(scope="module")
def tiny_dir():
    return tiny_bert_dir()


def make(tiny_dir, **params):
    params.setdefault("n_pairs", 48)
    params.setdefault("batch_size", 8)
    params.setdefault("max_length", 32)
    params.setdefault("device", "cpu")
    params.setdefault("n_jobs", 1)
    params.setdefault("random_state", 0)
    return SetFitEmbedder(model=tiny_dir, **params)


@pytest.fixture(scope="module")
def fitted(tiny_dir):
    return make(tiny_dir, learning_rate=1e-3).fit(X, Y)


def cos_gap(E, y):
    """Mean cosine of same-class pairs minus mean cosine of different-class pairs."""
    E = E / np.linalg.norm(E, axis=1, keepdims=True)
    S = E @ E.T
    same = y[:, None] == y[None, :]
    off = ~np.eye(len(y), dtype=bool)
    return S[same & off].mean() - S[~same].mean()


# ----------------------------------------------------------------------------- pair sampling


def test_auto_loss_is_in_batch_negatives_for_classes_and_cosine_for_a_continuous_y(tiny_dir):
    est = make(tiny_dir, n_pairs=40)  # loss="auto"
    est.target_type_ = "binary"
    y = np.array([0, 0, 1, 1, 1])
    _, _, target = est._sample_pairs(y, np.random.RandomState(0))
    assert (target == 1).all()  # positives only: the negatives are the batch's other positives
    est.target_type_ = "continuous"
    _, _, target = est._sample_pairs(
        y.astype(float) + [0, 0.5, 0, 0.25, 0.5], np.random.RandomState(0)
    )
    assert ((target > 0) & (target < 1)).any()  # graded targets of the cosine loss
    fitted = make(tiny_dir, n_pairs=16).fit(X, np.linspace(0, 1, len(X)))
    assert fitted.loss_ == "cosine"
    assert make(tiny_dir, n_pairs=16).fit(X, Y).loss_ == "in_batch_negatives"


# ----------------------------------------------------------------------------- fine-tuning
def test_fit_tunes_a_copy_and_separates_the_classes(tiny_dir, fitted):
    frozen = BertPooledEmbedder(model=tiny_dir, device="cpu", max_length=32, n_jobs=1).fit(X)
    before, after = frozen.transform(X), fitted.transform(X)
    assert fitted.model_ is not frozen.model_
    assert cos_gap(after, Y) > cos_gap(before, Y) + 0.05
    again = BertPooledEmbedder(model=tiny_dir, device="cpu", max_length=32, n_jobs=1).fit(X)
    np.testing.assert_array_equal(again.transform(X), before)  # the shared encoder is untouched
    assert fitted.target_type_ == "binary" and fitted.classes_.tolist() == [0, 1]
    assert len(fitted.weights_digest_) == 32


@pytest.mark.parametrize("loss", ["in_batch_negatives", "supervised_contrastive"])
def test_class_losses_also_separate(tiny_dir, loss):
    frozen = BertPooledEmbedder(model=tiny_dir, device="cpu", max_length=32, n_jobs=1).fit(X)
    est = make(tiny_dir, loss=loss, learning_rate=1e-3).fit(X, Y)
    assert est.loss_ == loss
    assert cos_gap(est.transform(X), Y) > cos_gap(frozen.transform(X), Y) + 0.05


def test_random_state_fixes_the_weights(tiny_dir, fitted):
    same = make(tiny_dir, learning_rate=1e-3).fit(X, Y)
    other = make(tiny_dir, learning_rate=1e-3, random_state=1).fit(X, Y)
    assert same.weights_digest_ == fitted.weights_digest_
    assert other.weights_digest_ != fitted.weights_digest_
    np.testing.assert_array_equal(same.transform(X), fitted.transform(X))
    state = torch.random.get_rng_state()
    make(tiny_dir).fit(X, Y)
    assert torch.equal(torch.random.get_rng_state(), state)  # the global generator is untouched


def test_history_and_callbacks(tiny_dir):
    seen = []

    class StopAfterTwo(Callback):
        def on_epoch_end(self, estimator, record):
            seen.append(record["epoch"])
            return record["epoch"] == 2

    est = make(tiny_dir, epochs=4, callbacks=[StopAfterTwo()]).fit(X, Y)
    assert seen == [1, 2] and [r["epoch"] for r in est.history_] == [1, 2]
    assert {"loss", "seconds", "learning_rate", "pairs"} <= est.history_[0].keys()
    assert est.history_[0]["pairs"] == 48 and np.isfinite(est.history_[0]["loss"])


def test_interrupted_fit_leaves_the_estimator_as_it_was(tiny_dir, fitted):
    def interrupt(estimator, record):
        raise KeyboardInterrupt

    fresh = make(tiny_dir, callbacks=[interrupt])
    with pytest.raises(KeyboardInterrupt):
        fresh.fit(X, Y)
    assert not hasattr(fresh, "device_") and not hasattr(fresh, "history_")
    with pytest.raises(NotFittedError):
        fresh.transform(X)
    est = pickle.loads(pickle.dumps(fitted))
    ref, digest = est.transform(X), est.weights_digest_
    est.set_params(callbacks=[interrupt])
    with pytest.raises(KeyboardInterrupt):
        est.fit(X[::-1], Y[::-1])
    assert est.weights_digest_ == digest
    np.testing.assert_array_equal(est.transform(X), ref)


def test_regression_target_fits(tiny_dir):
    y = np.linspace(0.0, 1.0, len(X)) + Y
    est = make(tiny_dir, learning_rate=1e-3).fit(X, y)
    assert est.target_type_ == "continuous" and est.classes_ is None
    assert np.isfinite(est.transform(X)).all()


def test_cross_fitted_fit_transform(tiny_dir):
    est = make(tiny_dir, cv=2, learning_rate=1e-3)
    crossed = est.fit_transform(X, Y)
    plain = est.transform(X)  # the final encoder, tuned on every row
    assert crossed.shape == plain.shape and not np.allclose(crossed, plain)
    # each fold's rows come from an encoder tuned on the other fold only
    from sklearn.model_selection import StratifiedKFold

    from skembed.utils._seeding import seed_from_random_state

    folds = StratifiedKFold(2, shuffle=True, random_state=seed_from_random_state(0))
    train, test = next(iter(folds.split(X, Y)))
    inner = clone(est).set_params(cv=None).fit([X[i] for i in train], Y[train])
    np.testing.assert_allclose(crossed[test], inner.transform([X[i] for i in test]), atol=1e-6)


# ----------------------------------------------------------------------------- inference reuse
def test_pickle_carries_the_tuned_weights(fitted):
    blob = pickle.dumps(fitted)
    assert len(blob) > 3_900_000  # the 30522 x 32 embedding matrix alone is 3.9 MB
    names = {arg for op, arg, _ in pickletools.genops(blob) if op.name == "SHORT_BINUNICODE"}
    assert not any(str(g).startswith("torch.") for g in names)
    again = pickle.loads(blob)
    np.testing.assert_array_equal(again.transform(X), fitted.transform(X))
    assert again.weights_digest_ == fitted.weights_digest_


def test_skops_file_carries_the_tuned_weights(fitted, tmp_path):
    pytest.importorskip("skops")
    from skembed.model_selection import load_pipeline, save_pipeline

    assert save_pipeline(fitted, tmp_path / "tuned.skops", format="skops") == "skops"
    again = load_pipeline(tmp_path / "tuned.skops")
    np.testing.assert_array_equal(again.transform(X), fitted.transform(X))


def test_save_pretrained_loads_in_sentence_transformers(fitted, tmp_path):
    st = pytest.importorskip("sentence_transformers")
    est = clone(fitted).set_params(normalize=True).fit(X, Y)
    est.save_pretrained(tmp_path / "tuned")
    model = st.SentenceTransformer(str(tmp_path / "tuned"), device="cpu")
    ref = model.encode(X, convert_to_numpy=True)
    np.testing.assert_allclose(est.transform(X), ref, atol=1e-5)
    # BertPooledEmbedder reads the saved pipeline (pooling and the Normalize module): the
    # tuned model's own vectors, those of est, without being told normalize=True
    frozen = BertPooledEmbedder(model=str(tmp_path / "tuned"), device="cpu", n_jobs=1).fit(X)
    np.testing.assert_allclose(frozen.transform(X), est.transform(X), atol=1e-5)


def test_save_pretrained_refuses_inner_layers(tiny_dir, tmp_path):
    est = make(tiny_dir, layers=[-2, -1]).fit(X, Y)
    with pytest.raises(ValueError, match="last layer only"):
        est.save_pretrained(tmp_path / "x")


def test_int8_and_cache_use_the_tuned_weights(tiny_dir, fitted):
    ref = fitted.transform(X)
    q = clone(fitted).set_params(quantize="int8").fit(X, Y)
    cos = np.sum(q.transform(X) * ref, 1) / np.linalg.norm(q.transform(X), axis=1)
    assert (cos / np.linalg.norm(ref, axis=1)).min() > 0.99
    cache = EmbeddingCache()
    a = clone(fitted).set_params(cache=cache).fit(X, Y)
    np.testing.assert_array_equal(a.transform(X), ref)
    b = clone(fitted).set_params(cache=cache, random_state=1).fit(X, Y)
    assert not np.allclose(b.transform(X), ref)  # other weights: no stale cache hit
    np.testing.assert_array_equal(a.transform(X), ref)


def test_onnx_backend_serves_the_tuned_model(fitted, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("SKEMBED_CACHE_DIR", str(tmp_path))
    ref = fitted.transform(X)
    onnx = clone(fitted).set_params(backend="onnx").fit(X, Y)
    out = onnx.transform(X)
    cos = np.sum(out * ref, 1) / np.linalg.norm(out, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.9999
    other = clone(fitted).set_params(backend="onnx", random_state=1).fit(X, Y)
    assert not np.allclose(other.transform(X), out)  # a second export, not the first one
    assert len(list((tmp_path / "exports").iterdir())) == 2


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "y, match",
    [
        (None, "requires y to be passed"),
        (Y[:-1], "one label per row"),
        (np.r_[Y[:-1].astype(float), np.nan], "missing"),
        (np.array([None] + ["a", "b"] * 11 + ["a"], dtype=object), "missing"),
        (np.zeros(len(X)), "only one class"),
        (np.r_[np.zeros(len(X) - 1), 1], "fewer than 2 rows, so no positive pair"),
        (np.zeros((len(X), 2)), "one label per row"),
    ],
    ids=["missing", "short", "nan", "none", "one-class", "singleton", "2d"],
)
def test_bad_targets_are_clear_errors(tiny_dir, y, match):
    est = make(tiny_dir)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)
    assert not hasattr(est, "device_")


def test_cross_fitting_a_too_small_class_fails_before_any_fine_tuning(tiny_dir):
    y = np.array(["a", "b", "c", "a", "b", "c", "a", "b", "a", "b"])  # "c" has 2 documents
    X10 = (list(X) * 2)[:10]
    est = make(tiny_dir, cv=3)
    with pytest.raises(ValueError, match=r"cv=3.*class\(es\) \['c'\].*set cv=None"):
        est.fit_transform(X10, y)
    assert not hasattr(est, "weights_digest_")  # nothing was tuned


def test_interrupted_cross_fitting_leaves_the_estimator_as_it_was(tiny_dir, fitted, monkeypatch):
    import copy

    import skembed.utils._targets as targets

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(targets, "cross_fitted", interrupt)
    est = copy.deepcopy(fitted).set_params(cv=2)
    with pytest.raises(KeyboardInterrupt):  # after the new fit, during the cross-fitting
        est.fit_transform(X[::-1], Y[::-1])
    assert est.weights_digest_ == fitted.weights_digest_
    fresh = make(tiny_dir, cv=2)
    with pytest.raises(KeyboardInterrupt):
        fresh.fit_transform(X, Y)
    assert not hasattr(fresh, "weights_digest_")


def test_a_single_step_budget_trains(tiny_dir):
    # n_pairs <= batch_size and one epoch: one optimiser step, warm-up == total
    est = make(tiny_dir, n_pairs=4, batch_size=32, epochs=1, learning_rate=1e-3).fit(X, Y)
    frozen = BertPooledEmbedder(model=tiny_dir, device="cpu", max_length=32, n_jobs=1).fit(X)
    assert len(est.history_) == 1
    assert not np.allclose(est.transform(X[:4]), frozen.transform(X[:4]), atol=1e-4)


def test_zero_pairs_and_regression_in_batch_are_errors(tiny_dir):
    with pytest.raises(ValueError, match="n_pairs"):
        make(tiny_dir, n_pairs=0).fit(X, Y)
    for loss in ("in_batch_negatives", "supervised_contrastive"):
        with pytest.raises(ValueError, match=f"loss='{loss}' needs class labels.*loss='cosine'"):
            make(tiny_dir, loss=loss).fit(X, np.linspace(0, 1, len(X)))


def test_diverging_learning_rate_names_the_parameter(tiny_dir):
    from skembed.exceptions import TrainingDivergedError

    with pytest.raises(TrainingDivergedError, match="learning_rate"):
        make(tiny_dir, learning_rate=1e30, epochs=3).fit(X, Y)


def test_tags_require_y(tiny_dir):
    assert make(tiny_dir).__sklearn_tags__().target_tags.required


def test_early_stopping_can_restore_the_best_epochs_weights(tiny_dir):
    from skembed.callbacks import EarlyStopping

    stop = EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    est = make(tiny_dir, epochs=3, callbacks=[stop]).fit(X, Y)
    assert 1 <= stop.best_epoch_ <= len(est.history_) <= 3
    losses = [r["loss"] for r in est.history_]
    assert losses[stop.best_epoch_ - 1] == min(losses)
    assert np.isfinite(est.transform(X)).all()


# ----------------------------------------------------------------------------- speed paths
def test_micro_batches_give_the_vectors_of_one_padded_batch(fitted, monkeypatch):
    # _pooled_train runs length-sorted micro-batches of 16 on the CPU; the encoder sees each
    # sequence on its own, so the vectors (and their order) are those of one padded batch
    import skembed.text.transformer._setfit as setfit_module

    fitted = pickle.loads(pickle.dumps(fitted))
    fitted.mixed_precision_ = "no"  # float32 passes: equal to rounding
    ids = [list(x) for x in fitted._tokenize(list(X))]
    ids = [x[: 3 + 2 * (i % 9)] for i, x in enumerate(ids * 2)]  # 48 sequences, 9 lengths
    with torch.no_grad():
        chunked = fitted._pooled_train(ids, "cpu").numpy()
        monkeypatch.setattr(setfit_module, "_CPU_MICRO_BATCH", len(ids))
        whole = fitted._pooled_train(ids, "cpu").numpy()
        monkeypatch.undo()
        single = np.stack([fitted._pooled_train([x], "cpu").numpy()[0] for x in ids[:9]])
    assert chunked.shape == (48, fitted._n_features_out)
    np.testing.assert_allclose(chunked, whole, atol=1e-5)
    np.testing.assert_allclose(chunked[:9], single, atol=1e-5)
    assert np.abs(chunked[0] - chunked[1]).max() > 1e-3  # different lengths, different vectors


def test_bf16_fine_tuning_separates_and_is_reproducible(tiny_dir):
    frozen = BertPooledEmbedder(model=tiny_dir, device="cpu", max_length=32, n_jobs=1).fit(X)
    a = make(tiny_dir, learning_rate=1e-3, mixed_precision="bf16").fit(X, Y)
    b = make(tiny_dir, learning_rate=1e-3, mixed_precision="bf16").fit(X, Y)
    f32 = make(tiny_dir, learning_rate=1e-3, mixed_precision="no").fit(X, Y)
    assert a.mixed_precision_ == "bf16" and f32.mixed_precision_ == "no"
    assert a.weights_digest_ == b.weights_digest_  # same seed, same weights under autocast too
    assert a.weights_digest_ != f32.weights_digest_  # the bfloat16 passes did run
    assert cos_gap(a.transform(X), Y) > cos_gap(frozen.transform(X), Y) + 0.05
    for name, p in a.model_.named_parameters():
        assert p.dtype == torch.float32, name  # weights stay float32


def test_a_max_time_below_one_step_is_refused_and_verbose_shows_the_estimate(tiny_dir, capsys):
    full = make(tiny_dir, n_pairs=96, epochs=2).fit(X, Y)
    assert [r["pairs"] for r in full.history_] == [96, 96]
    short = make(tiny_dir, n_pairs=96, epochs=2, max_time=1e-9)
    with pytest.raises(ValueError, match=r"max_time=1e-09 s is shorter than one training step"):
        short.fit(X, Y)
    shown = make(tiny_dir, n_pairs=96, epochs=2, verbose=1).fit(X, Y)
    captured = capsys.readouterr()
    shown_text = captured.err + captured.out
    assert "SetFitEmbedder: about" in shown_text
    assert "pairs/s (24 steps of 8 pairs in all)" in shown_text
    assert "pair/s" in captured.err  # the bar over the pairs, with its rate
    assert len(shown.history_) == 2


def test_auto_budget_is_sized_to_the_training_texts_and_stated(tiny_dir, monkeypatch, capsys):
    from skembed.text.transformer import _budget

    # a budget this small keeps the test fast; the rule is the one of test_budget.py
    monkeypatch.setattr(_budget, "CPU_WORD_PIECES", 4000)
    monkeypatch.setattr(_budget, "MIN_AUTO_PAIRS", 8)
    seen = []
    original = SetFitEmbedder._pooled_train

    def spy(self, seqs, device):
        seen.append(max(len(s) for s in seqs))
        return original(self, seqs, device)

    monkeypatch.setattr(SetFitEmbedder, "_pooled_train", spy)
    est = make(tiny_dir, n_pairs="auto", epochs=1, verbose=1).fit(X, Y)
    lengths = np.array([len(x) + 2 for x in est._tokenize(X)])  # [CLS] and [SEP]
    cut = min(32, math.ceil(np.percentile(lengths, 95)))
    mean = np.minimum(lengths, cut).mean()
    assert est.train_max_length_ == cut
    word_pieces = 4000 * math.sqrt(len(X) / 800)
    assert est.n_pairs_ == min(3200, max(8, math.floor(word_pieces / (2 * mean))))
    assert est.history_[0]["pairs"] == est.n_pairs_
    assert max(seen) == cut - 2  # the training documents were cut, without special tokens
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert f"SetFitEmbedder: {est.n_pairs_} pairs x 1 epoch(s), documents cut to {cut}" in shown
    assert "n_pairs='auto' on the CPU" in shown


def test_a_training_length_the_window_cannot_hold_is_refused(tiny_dir):
    with pytest.raises(ValueError, match="train_max_length=40 exceeds the encoder's window of 32"):
        make(tiny_dir, train_max_length=40).fit(X, Y)
    with pytest.raises(ValueError, match="train_max_length"):
        make(tiny_dir, train_max_length=2).fit(X, Y)
    # the shortest length keeps [CLS], one word piece and [SEP]
    assert make(tiny_dir, train_max_length=3, n_pairs=8).fit(X, Y).train_max_length_ == 3


def test_progress_and_the_estimate_come_before_the_first_epoch_ends(tiny_dir, monkeypatch):
    from skembed.text.transformer import _finetune

    events = []

    class Recorded(_finetune.StepPlan):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.bar.write = lambda line: events.append(("line", line))

        def step_done(self, n_pairs):
            super().step_done(n_pairs)
            events.append(("pairs shown", self.bar.n))

    monkeypatch.setattr(_finetune, "StepPlan", Recorded)
    epoch_ends = lambda est, record: events.append(("epoch end", record["epoch"]))  # noqa: E731
    make(tiny_dir, n_pairs=96, epochs=2, verbose=1, callbacks=[epoch_ends]).fit(X, Y)
    first_end = events.index(("epoch end", 1))
    before = events[:first_end]
    shown = [n for kind, n in before if kind == "pairs shown"]
    assert shown == list(range(8, 97, 8))  # the bar advanced at every step of epoch 1
    estimate = [n for kind, n in before if kind == "line" and "about" in n]
    assert len(estimate) == 1 and "pairs/s (24 steps of 8 pairs in all)" in estimate[0]

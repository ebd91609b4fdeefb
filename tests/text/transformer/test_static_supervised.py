"""StaticEmbedder(supervised=True): training the distilled table on a target (``_static_supervised``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _helpers import build_tiny, text_data  # noqa: E402  (the BERT tests' tiny teacher)

from skembed.text.transformer._static import StaticEmbedder  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    """test_bert's random 2-layer BertModel (width 32) with a 3,000-token WordPiece vocabulary."""
    return build_tiny(3000)


def make(teacher, **params):
    params.setdefault("device", "cpu")
    params.setdefault("n_jobs", 1)
    params.setdefault("n_components", 8)
    return StaticEmbedder(model=teacher, **params)


def labelled(n=60):
    return text_data(n)


def test_supervised_is_reproducible_and_leaves_torch_rng_alone(tiny):
    X, y = labelled()
    state = torch.random.get_rng_state()
    a = make(tiny, supervised=True, random_state=3, epochs=3).fit(X, y)
    assert torch.equal(torch.random.get_rng_state(), state)
    b = make(tiny, supervised=True, random_state=3, epochs=3).fit(X, y)
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
    back = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(back.transform(X), a.transform(X))


def test_supervised_early_stopping_and_callbacks(tiny):
    X, y = labelled()
    seen = []
    est = make(
        tiny, supervised=True, random_state=0, epochs=50, callbacks=[lambda e, r: seen.append(r)]
    )
    est.fit(X, y)
    assert len(est.history_) == len(seen) <= 50
    assert {"epoch", "loss", "valid_loss", "seconds"} <= seen[0].keys()
    stopped = make(tiny, supervised=True, epochs=10, callbacks=[lambda e, r: r["epoch"] == 2])
    assert len(stopped.fit(X, y).history_) == 2


def test_supervised_regression_target(tiny):
    X, y = labelled()
    target = y * 2.0 + np.linspace(0, 0.5, len(y))
    est = make(tiny, supervised=True, random_state=0, learning_rate=1e-2).fit(X, target)
    assert est.target_type_ == "continuous" and est.classes_ is None
    assert est.history_[est.best_epoch_ - 1]["valid_loss"] < est.history_[0]["valid_loss"]


def test_supervised_bad_targets_and_interrupts(tiny):
    X, y = labelled()
    for bad, match in [
        (None, "learns from the labels"),
        (y[:-1], "one label per row"),
        (np.r_[y[:-1].astype(float), np.nan], "missing"),
        (np.zeros(len(X)), "only one class"),
    ]:
        est = make(tiny, supervised=True)
        with pytest.raises(ValueError, match=match):
            est.fit(X, bad)
        assert not hasattr(est, "wv_")

    def interrupt(estimator, record):
        raise KeyboardInterrupt

    est = make(tiny, supervised=True, random_state=0, epochs=2).fit(X, y)
    before = est.wv_.vectors.copy()
    est.set_params(callbacks=[interrupt])
    with pytest.raises(KeyboardInterrupt):
        est.fit(X[::-1], y[::-1])
    np.testing.assert_array_equal(est.wv_.vectors, before)
    assert len(est.history_) == 2


def test_supervised_cross_fitted_fit_transform(tiny):
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    from skembed.utils._seeding import seed_from_random_state

    X, y = labelled()
    est = make(tiny, supervised=True, random_state=0, epochs=3, cv=3)
    crossed = est.fit_transform(X, y)
    assert not np.allclose(crossed, est.transform(X))
    folds = StratifiedKFold(3, shuffle=True, random_state=seed_from_random_state(0))
    train, test = next(iter(folds.split(X, y)))
    inner = clone(est).set_params(cv=None).fit([X[i] for i in train], y[train])
    np.testing.assert_allclose(crossed[test], inner.transform([X[i] for i in test]), atol=1e-6)
    plain = make(tiny, cv=3)  # without supervision cv changes nothing
    np.testing.assert_array_equal(plain.fit_transform(X, y), plain.transform(X))


def test_cross_fitting_that_leaves_an_inner_fit_one_class_fails_first(tiny):
    X, y = labelled()
    y = np.ones(len(X), dtype=int)
    y[0] = 0  # class 0 has one document: the inner fit that holds it out sees class 1 only
    est = make(tiny, supervised=True, random_state=0, epochs=2, cv=3)
    with pytest.raises(ValueError, match=r"cv=3: an inner fit .* single class: only \[1\]"):
        est.fit_transform(X, y)
    assert not hasattr(est, "wv_")  # nothing was fitted
    y[1] = 0  # two documents of class 0: every inner fit sees both classes
    assert est.fit_transform(X, y).shape == (len(X), 8)


def test_interrupted_cross_fitting_leaves_the_estimator_as_it_was(tiny, monkeypatch):
    import skembed.utils._targets as targets

    X, y = labelled()
    est = make(tiny, supervised=True, random_state=0, epochs=2, cv=3).fit(X, y)
    before = est.wv_.vectors.copy()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(targets, "cross_fitted", interrupt)
    with pytest.raises(KeyboardInterrupt):  # after the new fit, during the cross-fitting
        est.fit_transform(X[::-1], y[::-1])
    np.testing.assert_array_equal(est.wv_.vectors, before)


def test_supervised_training_calls_the_train_hooks_and_can_restore_best_weights(tiny):
    from skembed.callbacks import Callback, EarlyStopping

    X, y = labelled()
    calls = []

    class Hooks(Callback):
        def on_train_begin(self, estimator):
            calls.append("begin")

        def on_epoch_end(self, estimator, record):
            calls.append(record["epoch"])

        def on_train_end(self, estimator):
            calls.append("end")

    stop = EarlyStopping(monitor="valid_loss", patience=1, restore_best_weights=True)
    est = make(tiny, supervised=True, random_state=0, epochs=4, callbacks=[Hooks(), stop])
    est.fit(X, y)
    n = len(est.history_)
    assert calls == ["begin", *range(1, n + 1), "end"]
    assert stop.best_epoch_ == est.best_epoch_
    assert not hasattr(est, "_head")  # the training module is not kept on the estimator


def test_y_changes_nothing_without_supervised(tiny):
    X, y = labelled()
    a = make(tiny).fit(X)
    b = make(tiny).fit(X, y)
    np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
    assert not hasattr(b, "history_")
    assert not make(tiny).__sklearn_tags__().target_tags.required
    assert make(tiny, supervised=True).__sklearn_tags__().target_tags.required


def test_supervised_training_separates_the_classes_and_keeps_the_mean(tiny):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    X, y = labelled(80)
    plain = make(tiny).fit(X, y)
    sup = make(tiny, supervised=True, random_state=0, learning_rate=1e-2).fit(X, y)
    assert sup.wv_.index_to_key == plain.wv_.index_to_key
    assert not np.allclose(sup.wv_.vectors, plain.wv_.vectors)
    # transform is still the mean of the (trained) token rows: no transformer, no head
    for doc in X[:3]:
        ids = [i for i in sup.tokenizer_.encode(doc, add_special_tokens=False).ids if i != 1]
        np.testing.assert_allclose(
            sup.transform([doc])[0], sup.wv_.vectors[ids].mean(0), rtol=1e-5, atol=1e-7
        )
    Xt, yt = labelled(200)  # other documents of the same two topics
    Xt, yt = Xt[80:], yt[80:]

    def gap(E, labels):
        E = E / np.linalg.norm(E, axis=1, keepdims=True)
        same = labels[:, None] == labels[None, :]
        S = E @ E.T
        return S[same].mean() - S[~same].mean()

    assert gap(sup.transform(Xt), yt) > gap(plain.transform(Xt), yt) + 0.1
    clf = LogisticRegression(max_iter=1000)
    acc = cross_val_score(clf, sup.transform(Xt), yt, cv=3).mean()
    assert acc >= 0.95, acc
    losses = [r["valid_loss"] for r in sup.history_]
    assert sup.best_epoch_ == int(np.argmin(losses)) + 1
    assert losses[sup.best_epoch_ - 1] < losses[0]
    assert sup.target_type_ == "binary" and sup.classes_.tolist() == [0, 1]

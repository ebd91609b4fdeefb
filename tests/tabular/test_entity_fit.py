"""Tests of ``skembed/tabular/_entity_fit.py`` (moved from ``tests/tabular/test_entity.py`` to the mirrored path)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pd = pytest.importorskip("pandas")
from skembed.tabular.entity import EntityEmbedder  # noqa: E402

FAST = dict(hidden_layer_sizes=(16,), epochs=3, random_state=0)
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


def test_fit_transform_embeds_each_row_with_a_network_not_trained_on_it():
    # 60 categories seen once each: every row's category is unseen by the network of its
    # fold, so fit_transform gives at most cv distinct embeddings (one unknown row per fold)
    # where the in-sample transform gives one per category
    rng = np.random.RandomState(0)
    X = np.array([f"id{i}" for i in range(60)], dtype=object).reshape(-1, 1)
    y = rng.randint(0, 2, 60)
    est = EntityEmbedder(min_frequency=1, cv=3, **FAST)
    out = est.fit_transform(X, y)
    assert len(np.unique(out, axis=0)) <= 3
    assert len(np.unique(est.transform(X), axis=0)) == 60
    # fit still trains the final network on all rows: transform equals fit().transform()
    again = EntityEmbedder(min_frequency=1, cv=3, **FAST).fit(X, y)
    np.testing.assert_array_equal(est.transform(X), again.transform(X))


def test_cross_fitting_removes_the_leak_of_memorised_categories():
    # y is independent of X; each id has 4 rows. In-sample embeddings memorise y;
    # the cross-fitted ones cannot.
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    rng = np.random.RandomState(0)
    ids = np.repeat(np.arange(150), 4)
    X = np.array([f"id{i}" for i in ids], dtype=object).reshape(-1, 1)
    y = rng.randint(0, 2, ids.size)
    est = EntityEmbedder(min_frequency=1, learning_rate=1e-2, **{**FAST, "epochs": 30})
    leaky = est.fit(X, y).transform(X)
    crossed = est.fit_transform(X, y)

    def train_auc(Z):
        return roc_auc_score(y, LogisticRegression().fit(Z, y).predict_proba(Z)[:, 1])

    assert train_auc(leaky) > 0.7
    assert train_auc(crossed) < 0.6


def test_fit_transform_too_few_rows_for_cv():
    X = np.array([["a"], ["b"]], dtype=object)
    with pytest.raises(ValueError, match="cv=5 folds but X has only 2 rows"):
        EntityEmbedder(**FAST).fit_transform(X, [0, 1])

"""Tests of ``skembed/model_selection/_report.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

pd = pytest.importorskip("pandas")

from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from skembed import model_selection as ms  # noqa: E402


def test_regression_uses_kfold_ridge_and_r2():
    rng = np.random.RandomState(0)
    n = 150
    size = rng.rand(n)
    docs = [
        ("huge " if s > 0.5 else "tiny ") + " ".join(rng.choice(list("abcdef"), 3)) for s in size
    ]
    y = 10 * (size > 0.5) + rng.randn(n)
    results = ms.compare_embedders(docs, y, {"tfidf": TfidfVectorizer()}, cv=3)
    assert results.attrs["task"] == "regression" and results.attrs["reference"] == 0.0
    assert (results["scoring"] == "r2").all()
    assert [p["reg__alpha"] for p in results["params"]] == list(ms.DOWNSTREAM_ALPHAS)
    for row in results.itertuples():
        ref = cross_val_score(
            make_pipeline(TfidfVectorizer(), Ridge(alpha=row.params["reg__alpha"])),
            docs,
            y,
            cv=KFold(3, shuffle=True, random_state=0),
            scoring="r2",
        )
        assert row.mean_test_score == pytest.approx(ref.mean(), abs=1e-9)
    assert ms.leaderboard(results)["mean_test_score"].iloc[0] > 0.9
    text = ms.format_leaderboard(results)
    assert "task: regression" in text and "reference: predicting the mean scores r2 0.0000" in text

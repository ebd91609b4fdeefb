"""Tests of ``skembed/model_selection/_report.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from skembed.model_selection import (
    compare_embedders,
    format_leaderboard,
    leaderboard,
)

pd = pytest.importorskip("pandas")

from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from skembed import model_selection as ms  # noqa: E402


def test_tabular_mode_on_penguins_with_cross_validated_reconstruction_error():
    from sklearn.decomposition import PCA

    from skembed.datasets import load_penguins
    from skembed.tabular._preprocess import TabularPreprocessor

    frame = load_penguins()
    X, y = frame.drop(columns="species"), frame["species"]
    results = compare_embedders(X, y, ["raw", "pca"], cv=3, n_components=2)
    by = leaderboard(results).set_index("embedder")
    assert by.loc["raw", "mean_test_score"] > 0.97
    assert by.loc["raw", "mean_reconstruction_error"] == 0.0
    assert by.loc["pca", "n_features_out"] == 2
    assert 0.7 < by.loc["pca", "mean_test_score"] < by.loc["raw", "mean_test_score"]
    # PCA's error: held-out MSE in the Scaler+OneHot space, averaged over the same folds
    errors = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        pre = TabularPreprocessor().fit(X.iloc[train])
        pca = PCA(2, random_state=0).fit(pre.transform(X.iloc[train]))
        P = pre.transform(X.iloc[test])
        errors.append(np.mean((pca.inverse_transform(pca.transform(P)) - P) ** 2))
    assert by.loc["pca", "mean_reconstruction_error"] == pytest.approx(np.mean(errors), rel=1e-5)
    assert "recon err" in format_leaderboard(results)


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

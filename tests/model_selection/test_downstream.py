"""Tests of ``skembed/model_selection/_downstream.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from skembed.model_selection import (
    DOWNSTREAM_CS,
    DOWNSTREAM_DESCRIPTION,
    compare_embedders,
    downstream_classifier,
    format_leaderboard,
    leaderboard,
)
from skembed.text.count._lsa import TfidfLSA

pd = pytest.importorskip("pandas")

from sklearn.linear_model import Ridge  # noqa: E402

from skembed import model_selection as ms  # noqa: E402
from skembed.model_selection._downstream import _ridge_path  # noqa: E402


@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    return texts[::8], labels[::8]  # 279 articles, every class


@pytest.mark.slow
def test_text_results_are_cv_results_with_the_shared_downstream(bbc):
    texts, labels = bbc
    lsa = TfidfLSA(random_state=0)
    results = compare_embedders(
        texts,
        labels,
        {"tfidf": TfidfVectorizer(sublinear_tf=True), "lsa": (lsa, {"n_components": [10, 30]})},
        cv=3,
    )
    Cs, n_c = list(DOWNSTREAM_CS), len(DOWNSTREAM_CS)
    assert results["embedder"].tolist() == ["tfidf"] * n_c + ["lsa"] * 2 * n_c
    assert results["params"].tolist() == [{"clf__C": C} for C in Cs] + [
        {"n_components": n, "clf__C": C} for n in (10, 30) for C in Cs
    ]
    assert results.attrs["downstream"] == DOWNSTREAM_DESCRIPTION
    assert (results["downstream"] == DOWNSTREAM_DESCRIPTION).all()
    assert results["n_features_out"].tolist()[n_c:] == [10] * n_c + [30] * n_c
    for col in ("mean_fit_time", "mean_embed_fit_time", "mean_score_time", "transform_rows_per_s"):
        assert (results[col] > 0).all(), col
    assert (results["mean_embed_fit_time"] < results["mean_fit_time"]).all()
    np.testing.assert_allclose(
        results["mean_fit_time"],
        results["mean_embed_fit_time"] + results["mean_downstream_fit_time"],
    )
    assert results.attrs["reference"] == pytest.approx(
        pd.Series(labels).value_counts().max() / len(labels)
    )
    splits = results[[f"split{k}_test_score" for k in range(3)]].to_numpy()
    np.testing.assert_allclose(results["mean_test_score"], splits.mean(axis=1))
    np.testing.assert_allclose(results["std_test_score"], splits.std(axis=1))
    ranks = results["mean_test_score"].rank(method="min", ascending=False)
    assert results["rank_test_score"].tolist() == ranks.astype(int).tolist()
    assert results["mean_test_score"].max() > 0.9
    # the same folds and downstream model, run by scikit-learn, give the same scores
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    for i, C in enumerate(Cs):
        ref = cross_val_score(
            make_pipeline(TfidfVectorizer(sublinear_tf=True), downstream_classifier(True, C)),
            texts,
            labels,
            cv=folds,
        )
        np.testing.assert_allclose(splits[i], ref)
    board = leaderboard(results)
    assert len(board) == 2 and board["mean_test_score"].is_monotonic_decreasing
    text = format_leaderboard(results, "BBC sample")
    ref = results.attrs["reference"]
    assert text.splitlines()[:3] == [
        "BBC sample",
        f"task: classification; downstream: {DOWNSTREAM_DESCRIPTION}; scoring: accuracy",
        f"reference: always predicting the majority class scores accuracy {ref:.4f}",
    ]
    assert text.splitlines()[3] == "folds: 3-fold CV"
    assert len(text.splitlines()) == 8


def test_ridge_path_equals_scikit_learn_ridge():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 8) * rng.rand(8) + rng.randn(8)
    y = X @ rng.randn(8) + 3.0 + 0.1 * rng.randn(60)
    for alpha, model in zip(
        ms.DOWNSTREAM_ALPHAS, _ridge_path(X, y, ms.DOWNSTREAM_ALPHAS), strict=True
    ):
        ref = Ridge(alpha=alpha).fit(X, y)
        np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-7)
        np.testing.assert_allclose(model.predict(X[:5]), ref.predict(X[:5]), rtol=1e-7)


def test_ridge_path_on_sparse_input_equals_scikit_learn_ridge():
    import scipy.sparse as sp

    rng = np.random.RandomState(1)
    X = sp.random(80, 30, density=0.2, random_state=rng, format="csr")
    y = X @ rng.randn(30) + 1.0 + 0.05 * rng.randn(80)
    for alpha, model in zip((0.1, 10.0), _ridge_path(X, y, (0.1, 10.0)), strict=True):
        ref = Ridge(alpha=alpha, solver="cholesky").fit(X.toarray(), y)
        np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(model.predict(X[:5]), ref.predict(X[:5].toarray()), rtol=1e-6)

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


def _board(scores, rates, sizes):
    frame = pd.DataFrame(
        {
            "embedder": [f"e{i}" for i in range(len(scores))],
            "mean_test_score": scores,
            "std_test_score": 0.0,
            "transform_rows_per_s": rates,
            "pipeline_size_mb": sizes,
            "scoring": "accuracy",
            "params": [{}] * len(scores),
        }
    )
    return frame


def test_pareto_front_by_hand():
    board = _board([0.9, 0.8, 0.7, 0.85, 0.8, np.nan], [10, 1000, 500, 5, 1000, 1e6], [1] * 6)
    # e0 best score; e1 fastest among the scored (e4 ties it on both: neither beats the other)
    assert ms.pareto_front(board).tolist() == [True, True, False, False, True, False]


def test_parse_budget_forms_and_refusals():
    assert ms.parse_budget("1000rows/s") == {"min_rows_per_s": 1000.0}
    assert ms.parse_budget("4ms,1.5MB") == {"min_rows_per_s": 250.0, "max_size_mb": 1.5}
    with pytest.raises(ValueError, match=r"'fast' is not understood.*rows/s, ms"):
        ms.parse_budget("fast")
    with pytest.raises(ValueError, match="positive number"):
        ms.parse_budget("0ms")


def test_best_within_budget_names_the_best_fitting_row_or_the_closest():
    results = _board([0.95, 0.9, 0.8], [20.0, 3800.0, 9000.0], [400.0, 2.0, 0.5])
    row, line = ms.best_within_budget(results, "1000rows/s")
    assert row["embedder"] == "e1" and line.startswith(
        "best within the budget (>= 1000 rows/s): e1"
    )
    row, line = ms.best_within_budget(results, "1000rows/s,1MB")
    assert row["embedder"] == "e2"
    row, line = ms.best_within_budget(results, "20000rows/s")
    # e2 is 20000/9000 = 2.2x too slow, the least of the three
    assert row is None and "no row meets the budget" in line and "closest: e2" in line
    assert "2.2x over" in line


def test_cost_columns_are_measured_per_row():
    docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 10
    labels = ["money", "money", "farm", "farm"] * 10
    results = ms.compare_embedders(docs, labels, {"tfidf": TfidfVectorizer()}, cv=2)
    row = ms.leaderboard(results).iloc[0]
    # the pickled fold pipeline: a TfidfVectorizer with 9 words plus a logistic regression
    assert 0.0005 < row["pipeline_size_mb"] < 0.05
    assert row["fit_peak_memory_mb"] >= 0 and bool(row["sparse_output"])
    text = ms.format_leaderboard(results)
    assert "peak MB" in text and "size MB" in text

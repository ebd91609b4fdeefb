"""Tests of ``skembed/model_selection/_compare.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import numpy as np
import pytest
from _helpers import mixed_table
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from skembed.model_selection import (
    DOWNSTREAM_CS,
    compare_embedders,
    usable_rows,
)
from skembed.text.count._lsa import TfidfLSA

pd = pytest.importorskip("pandas")

from skembed import model_selection as ms  # noqa: E402


@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    return texts[::8], labels[::8]  # 279 articles, every class


class Shrink(TransformerMixin, BaseEstimator):
    """Multiply features by ``factor``: the same embedding at another scale."""

    def __init__(self, factor=1e-3):
        self.factor = factor

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def transform(self, X):
        return np.asarray(X) * self.factor


@pytest.mark.slow
def test_downstream_is_fair_to_the_scale_of_an_embedding(bbc):
    texts, labels = bbc
    lsa = TfidfLSA(n_components=30, random_state=0)
    embedders = {"lsa": lsa, "lsa/1000": make_pipeline(clone(lsa), Shrink(1e-3))}
    results = compare_embedders(texts, labels, embedders, cv=3)
    by = results.groupby("embedder")["mean_test_score"]
    # (at C=1e-4 every class is nearly equally likely: float rounding picks the argmax)
    big_c = [p["clf__C"] >= 1e-3 for p in results["params"][: len(DOWNSTREAM_CS)]]
    np.testing.assert_allclose(
        by.get_group("lsa")[big_c], by.get_group("lsa/1000")[big_c], atol=1e-12
    )
    assert by.max()["lsa"] > 0.85
    # the old downstream model (fixed C on unscaled features) ranks the scale, not the embedding
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    old = LogisticRegression(C=10.0, max_iter=1000)
    small = cross_val_score(
        make_pipeline(clone(embedders["lsa/1000"]), old), texts, labels, cv=folds
    )
    assert small.mean() < by.max()["lsa/1000"] - 0.2


def test_missing_labels_are_dropped_with_a_count():
    docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    labels = ["money", "money", "farm", "farm"] * 3
    with pytest.warns(UserWarning, match="Dropping 2 rows with a missing label"):
        results = compare_embedders(
            docs + ["x", "y"], labels + [None, np.nan], {"tfidf": TfidfVectorizer()}, cv=2
        )
    assert results["mean_test_score"].tolist() == [1.0] * len(DOWNSTREAM_CS)
    keep, dropped = usable_rows(["a", " ", None, "b"], ["x", "y", "z", None], drop_empty_text=True)
    assert keep.tolist() == [True, False, False, False]
    assert dropped == {"missing label": 1, "empty text": 2}


def test_verbose_levels_print_per_embedder_and_per_candidate(capsys):
    docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    labels = ["money", "money", "farm", "farm"] * 3
    grid = {"tfidf": (TfidfVectorizer(), {"sublinear_tf": [False, True]})}
    # the plan, 2 candidates x values of C, and the embedder's line
    for verbose, n_lines in ((0, 0), (1, 2), (2, 2 * len(DOWNSTREAM_CS) + 2)):
        compare_embedders(docs, labels, grid, cv=2, verbose=verbose)
        assert len(capsys.readouterr().out.splitlines()) == n_lines


def test_same_random_state_same_results(bbc):
    texts, labels = bbc
    emb = {"lsa": TfidfLSA(n_components=10, random_state=0)}
    a = compare_embedders(texts, labels, emb, cv=2, random_state=3)
    b = compare_embedders(texts, labels, emb, cv=2, random_state=3)
    c = compare_embedders(texts, labels, emb, cv=2, random_state=4)
    cols = ["split0_test_score", "split1_test_score"]
    np.testing.assert_array_equal(a[cols], b[cols])
    assert not np.array_equal(a[cols], c[cols])


def test_wide_categorical_warns_with_the_fix():
    frame, label = mixed_table(60)
    frame["code"] = [f"id{i}" for i in range(60)]  # one word: not text
    with pytest.warns(
        UserWarning, match="'code' has 60 distinct values in 60 rows.*--text-column code"
    ):
        ms.compare_embedders(frame.drop(columns="review"), label, ["raw"], cv=2)


def test_failed_candidate_scores_nan_with_a_warning():
    docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    labels = ["money", "money", "farm", "farm"] * 3
    from skembed.text.count._lsa import TfidfLSA

    with pytest.warns(UserWarning, match=r"lsa \{'n_components': 50\} failed on fold 0"):
        results = ms.compare_embedders(
            docs, labels, {"lsa": (TfidfLSA(), {"n_components": [2, 50]})}, cv=2
        )
    by = results.groupby(results["params"].map(lambda p: p["n_components"]))["mean_test_score"]
    assert by.get_group(50).isna().all() and by.get_group(2).max() == 1.0
    assert ms.leaderboard(results)["params"].iloc[0]["n_components"] == 2


def test_the_cli_prepares_the_data_once(tmp_path, monkeypatch, capsys):
    """Task inference, data checks and role detection run once per ``skembed compare`` (issue 38)."""
    import skembed.model_selection as ms_pkg
    import skembed.model_selection._compare as compare_module
    from skembed.cli import main

    calls = []
    real = compare_module.detect_roles

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(compare_module, "detect_roles", counted)
    monkeypatch.setattr(ms_pkg, "detect_roles", counted)  # where the cli looked them up
    rng = np.random.RandomState(0)
    csv = tmp_path / "t.csv"
    pd = pytest.importorskip("pandas")
    pd.DataFrame(
        {"a": rng.normal(size=40), "b": rng.choice(["x", "y"], 40), "label": ["p", "q"] * 20}
    ).to_csv(csv, index=False)
    out = tmp_path / "out"
    argv = ["compare", "--csv", str(csv), "--label-column", "label", "--cv", "2"]
    assert main([*argv, "--embedders", "raw", "--output-dir", str(out), "--verbose", "0"]) == 0
    assert len(calls) == 1
    assert "raw" in capsys.readouterr().out

"""compare on mixed tables (text among other columns): the text and the other columns balanced."""

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import mixed_table
from sklearn.feature_extraction.text import TfidfVectorizer

from skembed.model_selection import (
    TEXT_WEIGHTS,
    compare_embedders,
    leaderboard,
    load_compare_data,
    load_pipeline,
    prepare_comparison,
    save_pipeline,
    table_embedder,
)
from skembed.model_selection._columns import prepared_columns
from skembed.model_selection._compare import _embedding_seconds
from skembed.model_selection._downstream import _block_scaler, _refit

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("text_weight", [0.5, 2.0])
def test_block_scaler_gives_the_text_its_weight_squared_times_the_other_variance(text_weight):
    # text block: 3 standardised columns (total variance 3); other block, as prepared (not
    # rescaled): [7, 1, 4, 0] (variance 7.5) and a constant -> the text's weight is
    # w * sqrt(7.5 / 3)
    X = np.array(
        [
            [0.0, 1.0, 10.0, 7.0, 5.0],
            [2.0, 3.0, 20.0, 1.0, 5.0],
            [4.0, 2.0, 10.0, 4.0, 5.0],
            [6.0, 6.0, 40.0, 0.0, 5.0],
        ]
    )
    blocks = [("text_a", np.arange(3)), ("other", np.arange(3, 5))]
    scaler = _block_scaler(X, blocks, text_weight)
    assert scaler.transformer_weights == pytest.approx(
        {"text_a": text_weight * np.sqrt(2.5), "other": 1.0}
    )
    out = scaler.fit_transform(X)
    assert np.var(out[:, :3], axis=0).sum() == pytest.approx(text_weight**2 * 7.5)
    np.testing.assert_array_equal(out[:, 3:], X[:, 3:])


def test_block_scaler_keeps_a_sparse_text_block_unscaled_but_weighted():
    # TF-IDF-like rows of norm 1: column variances 0.14 + 0.14; the other column [1, 2, 3, 4]
    # has variance 1.25 -> the text's weight is w * sqrt(1.25 / 0.28)
    text = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]])
    X = sp.csr_matrix(np.column_stack([text, [1.0, 2.0, 3.0, 4.0]]))
    scaler = _block_scaler(X, [("text_t", np.arange(2)), ("other", np.array([2]))], 2.0)
    weight = 2.0 * np.sqrt(1.25 / 0.28)
    assert scaler.transformer_weights["text_t"] == pytest.approx(weight)
    out = scaler.fit_transform(X)
    assert sp.issparse(out)
    np.testing.assert_allclose(out.toarray()[:, :2], weight * text)
    np.testing.assert_allclose(out.toarray()[:, 2], [1.0, 2.0, 3.0, 4.0])


def test_text_rows_search_the_text_weight_and_the_refit_scores_as_the_folds():
    """Each (text_weight, C) row's fold score is what the refitted pipeline scores there."""
    frame, label = mixed_table(120)
    prepared = prepare_comparison(frame, label, cv=3)
    results = compare_embedders(prepared, None, {"tfidf": TfidfVectorizer(), "none": None}, cv=3)
    tfidf = results[results["embedder"] == "tfidf"]
    weights = [p["text_weight"] for p in tfidf["params"]]
    assert sorted(set(weights)) == list(TEXT_WEIGHTS) and len(tfidf) == 7 * len(TEXT_WEIGHTS)
    assert all("text_weight" not in p for p in results.loc[results["embedder"] == "none", "params"])
    assert "text_weight in [0.0625, 0.125" in results.attrs["downstream"]
    from sklearn.model_selection import StratifiedKFold

    text, categorical, numeric = prepared_columns(prepared.roles)
    wrap = partial(table_embedder, text=text, categorical=categorical, numeric=numeric)
    X, y = prepared.X, prepared.y
    row = tfidf[[p == {"text_weight": 2.0, "clf__C": 1.0} for p in tfidf["params"]]].iloc[0]
    none = results[results["embedder"] == "none"].iloc[4]  # C=1: the other columns, as prepared
    folds = StratifiedKFold(3, shuffle=True, random_state=0).split(X, y)
    for k, (train, test) in enumerate(folds):
        pipe = _refit(TfidfVectorizer(), row["params"], X.iloc[train], y[train], wrap=wrap)
        assert pipe.score(X.iloc[test], y[test]) == pytest.approx(row[f"split{k}_test_score"])
        pipe = _refit(None, none["params"], X.iloc[train], y[train], wrap=wrap)
        assert pipe.named_steps["scale"] == "passthrough"
        assert pipe.score(X.iloc[test], y[test]) == pytest.approx(none[f"split{k}_test_score"])


def test_the_saved_best_table_pipeline_keeps_its_balanced_blocks(tmp_path):
    frame, label = mixed_table(90)
    results, best = compare_embedders(
        frame, label, {"tfidf": TfidfVectorizer()}, cv=3, return_best=True
    )
    pipe = best["tfidf"]
    weight = leaderboard(results)["params"].iloc[0]["text_weight"]
    scale = pipe.named_steps["scale"]
    Xt = pipe[:2].transform(frame).tocsc()  # the prepared table, embedded: sparse TF-IDF
    other = pipe.named_steps["embed"].output_indices_["other"]
    other_var = np.var(Xt[:, other].toarray(), axis=0).sum()
    text = Xt[:, : other.start]
    text_var = (
        np.asarray(text.multiply(text).mean(0)).ravel() - np.asarray(text.mean(0)).ravel() ** 2
    ).sum()
    assert scale.transformer_weights["text_review"] == pytest.approx(
        weight * np.sqrt(other_var / text_var)
    )
    path = tmp_path / "best.skops"
    save_pipeline(pipe, path)
    np.testing.assert_array_equal(load_pipeline(path).predict(frame), pipe.predict(frame))


@pytest.mark.filterwarnings("ignore:Embedder lsa:UserWarning")
@pytest.mark.parametrize(
    "dataset, embedders, margin",
    [
        ("loans", {"tfidf": TfidfVectorizer(), "none": None}, 0.002),  # -0.0196 before
        ("movies", ["lsa", "none"], 0.005),  # -0.0209 before
    ],
)
def test_text_rows_do_not_fall_below_the_other_columns_alone(dataset, embedders, margin):
    """Issue 41's goal on 1,500 rows of loans and movies, 3 folds (docs/compare.md)."""
    X, y, *_ = load_compare_data(dataset=dataset, limit=1500, random_state=0)
    board = leaderboard(compare_embedders(X, y, embedders, cv=3)).set_index("embedder")
    none = board.loc["none", "mean_test_score"]
    for name in board.index.drop("none"):
        assert board.loc[name, "mean_test_score"] >= none - margin, name
        assert board.loc[name, "mean_test_score"] >= board.loc[name, "text_only_score"] - 0.002


def test_the_embedding_line_says_which_fold_fits_failed():
    from skembed.model_selection._runner import FoldOutcome

    ok = FoldOutcome(embed_s=1.5, transform_s=0.5)
    failed = FoldOutcome(error="ValueError: too wide")
    assert _embedding_seconds([ok, ok, failed]) == "4.0 s embedding; 1 of 3 fold fits failed"
    assert _embedding_seconds([failed]).startswith("failed on every fold")

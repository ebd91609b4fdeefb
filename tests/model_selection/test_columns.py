"""Tests of ``skembed/model_selection/_columns.py`` (moved from ``tests/model_selection/test_compare_tables.py`` to the mirrored path)."""

import numpy as np
import pytest
from _helpers import mixed_table
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from skembed import model_selection as ms

pd = pytest.importorskip("pandas")


def test_roles_are_detected_and_overridden():
    frame, _ = mixed_table()
    assert ms.detect_roles(frame) == {
        "text": ["review"],
        "categorical": ["shop", "gift", "flag"],
        "numeric": ["count"],
        "datetime": ["sold"],
        "dropped": [],
    }
    roles = ms.detect_roles(
        frame, categorical_columns=["count"], numeric_columns=["flag"], drop_columns=["sold"]
    )
    assert roles["categorical"] == ["shop", "count", "gift"]
    assert (roles["numeric"], roles["datetime"], roles["dropped"]) == (["flag"], [], ["sold"])
    line = ms.format_roles(roles, width=2)
    assert line == (
        "text: review; categorical: shop, count (+1 more); numeric: flag; dropped: sold"
    )
    prepared = ms.prepare_frame(frame, ms.detect_roles(frame))
    assert "sold" not in prepared and prepared["sold_month"].between(1, 12).all()
    assert prepared["sold_year"].iloc[0] == 2024.0 and prepared["count"].dtype == np.float64


@pytest.mark.parametrize(
    "kwargs, frame_update, message",
    [
        ({"text_columns": ["nope"]}, {}, "'nope' is not a column of the table"),
        ({"text_columns": ["y"]}, {"y": 1}, "'y' is the label and cannot also be a text feature"),
        (
            {"text_columns": ["shop"], "drop_columns": ["shop"]},
            {},
            "named both as text and as dropped",
        ),
        (
            {},
            {"empty": np.nan},
            r"'empty' is missing in every row: drop it \(--drop-column empty\)",
        ),
        (
            {"text_columns": ["same"]},
            {"same": "one text"},
            "Text column 'same' has the same value in every row",
        ),
    ],
)
def test_bad_roles_name_the_problem_and_the_fix(kwargs, frame_update, message):
    frame, _ = mixed_table(30)
    frame = frame.assign(**frame_update)
    with pytest.raises(ValueError, match=message):
        ms.detect_roles(frame, label="y", **kwargs)


def test_mixed_table_rows_differ_only_by_the_text_embedding():
    frame, label = mixed_table()
    results = ms.compare_embedders(frame, label, ["tfidf", "none", "raw"], cv=3)
    board = ms.leaderboard(results).set_index("embedder")
    assert board.loc["tfidf", "mean_test_score"] > 0.8
    assert board.loc["none", "mean_test_score"] < 0.7  # the other columns are noise
    assert results.attrs["roles"]["text"] == ["review"]
    assert "(non-text columns)" in board.loc["raw", "description"]
    # the none row is the other columns through one ColumnTransformer: scikit-learn agrees
    roles = ms.detect_roles(frame)
    prepared = ms.prepare_frame(frame, roles)
    cat, num = (
        ["shop", "gift", "flag"],
        ["count"] + [f"sold_{p}" for p in ms._columns.DATETIME_PARTS],
    )
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    best = board.loc["none", "params"]["clf__C"]
    ref = cross_val_score(
        make_pipeline(
            ms.other_columns_transformer(cat, num), ms.downstream_classifier(False, best)
        ),
        prepared,
        label,
        cv=folds,
    )
    assert board.loc["none", "mean_test_score"] == pytest.approx(ref.mean())
    text = ms.format_leaderboard(results)
    assert text.splitlines()[0] == "columns: " + ms.format_roles(roles)


def test_two_text_columns_each_get_their_own_embedder():
    frame, label = mixed_table()
    frame["title"] = [
        f"title {w} {i % 7}" for i, w in enumerate(frame["review"].str.split().str[0])
    ]
    est = ms.table_embedder(TfidfVectorizer(), ["review", "title"], ["shop"], [])
    prepared = ms.prepare_frame(frame, ms.detect_roles(frame, drop_columns=["sold"]))
    Xt = est.fit_transform(prepared)
    fitted = {name: t for name, t, _ in est.transformers_}
    for column in ("review", "title"):  # each clone saw its own column only
        own = TfidfVectorizer().fit(prepared[column]).vocabulary_
        assert fitted[f"text_{column}"].vocabulary_ == own
    n_text = len(fitted["text_review"].vocabulary_) + len(fitted["text_title"].vocabulary_)
    assert Xt.shape == (120, n_text + 3)  # + one-hot of the 3 shops

"""compare on mixed tables (text among other columns) and on numeric targets."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from skembed import model_selection as ms
from skembed.model_selection._downstream import _ridge_path

pd = pytest.importorskip("pandas")

WORDS = {
    "good": "great lovely solid works perfect happy".split(),
    "bad": "broken awful poor refund useless angry".split(),
}


def mixed_table(n=120, seed=0):
    """A review table: the text decides the label, the shop adds a little, the rest is noise."""
    rng = np.random.RandomState(seed)
    label = np.where(rng.rand(n) < 0.5, "good", "bad")
    flip = rng.rand(n) < 0.1
    text = [
        " ".join(rng.choice(WORDS[("bad" if lab == "good" else "good") if f else lab], 4))
        + f" item {i}"
        for i, (lab, f) in enumerate(zip(label, flip, strict=True))
    ]
    frame = pd.DataFrame(
        {
            "review": text,
            "shop": rng.choice(["north", "south", "east"], n),
            "count": rng.poisson(3, n),
            "sold": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.randint(0, 300, n), "D"),
            "gift": rng.rand(n) < 0.3,
            "flag": rng.randint(0, 2, n),
        }
    )
    return frame, label


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


def test_task_is_inferred_from_the_target():
    assert ms.infer_task(np.linspace(0, 1, 50)) == "regression"
    assert ms.infer_task(np.arange(21)) == "regression"  # more than 20 whole numbers
    assert ms.infer_task(np.arange(20)) == "classification"
    assert ms.infer_task([1.0, 2.0, 1.0]) == "classification"
    assert ms.infer_task(["1.5", "2.5"]) == "classification"  # strings are labels
    with pytest.raises(ValueError, match="All 3 rows have the target value 2.5"):
        ms.check_regression_data([2.5, 2.5, 2.5], cv=2)
    with pytest.raises(ValueError, match="non-numeric value 'x'.*task='classification'"):
        ms.check_regression_data([1.0, "x"], cv=2)
    with pytest.raises(ValueError, match="use task='regression'"):
        ms.check_classification_data(np.arange(100) / 7, cv=3)


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


def test_html_page_is_self_contained():
    from skembed.model_selection._outputs import chart_png, leaderboard_html

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["tfidf", "none"], cv=2)
    png = chart_png(results, "t")
    page = leaderboard_html(results, "A <title>", "skembed compare --csv x.csv", png)
    assert page.startswith("<!DOCTYPE html>") and "A &lt;title&gt;" in page
    assert page.count("<tr>") == 3 and "data:image/png;base64," in page
    assert "text columns</dt><dd>review" in page and "skembed compare --csv x.csv" in page
    assert "majority class scores accuracy" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page


def test_a_long_chart_title_stays_inside_the_figure(monkeypatch):
    import matplotlib.pyplot as plt

    from skembed.model_selection._outputs import chart_png

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["none"], cv=2)
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to measure it
    title = (  # the loans chart's title was cut off at "5-fold C"; a CSV's name can be longer
        "skembed compare — customer_reviews_2026.csv: 10000 rows, regression on "
        "interest_rate, 5-fold CV"
    )
    assert chart_png(results, title).startswith(b"\x89PNG")
    fig = figures[0]
    box = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width
    assert fig.axes[0].get_title().replace("\n", " ") == title


def test_ridge_path_on_sparse_input_equals_scikit_learn_ridge():
    import scipy.sparse as sp

    rng = np.random.RandomState(1)
    X = sp.random(80, 30, density=0.2, random_state=rng, format="csr")
    y = X @ rng.randn(30) + 1.0 + 0.05 * rng.randn(80)
    for alpha, model in zip((0.1, 10.0), _ridge_path(X, y, (0.1, 10.0)), strict=True):
        ref = Ridge(alpha=alpha, solver="cholesky").fit(X.toarray(), y)
        np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(model.predict(X[:5]), ref.predict(X[:5].toarray()), rtol=1e-6)


def test_html_page_renders_in_headless_chromium(tmp_path):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "screenshot_report", __file__.rsplit("/tests/", 1)[0] + "/tools/screenshot_report.py"
    )
    tool = importlib.util.module_from_spec(spec)
    sys.modules["screenshot_report"] = tool
    spec.loader.exec_module(tool)
    if tool.find_browser() is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    from skembed.model_selection._outputs import write_outputs

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["tfidf", "none"], cv=2)
    paths, failures = write_outputs(
        results, str(tmp_path), title="render", command="skembed compare"
    )
    assert failures == [] and str(tmp_path / "leaderboard.html") in paths
    shot = tool.screenshot(tmp_path / "leaderboard.html", tmp_path / "shot.png")
    non_white, blue = tool.check_picture(shot)
    assert non_white > 0.02 and blue > 0.002  # text drawn, and the chart's bars

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from skembed.model_selection import (
    DOWNSTREAM_CS,
    DOWNSTREAM_DESCRIPTION,
    check_classification_data,
    compare_embedders,
    default_embedders,
    downstream_classifier,
    format_leaderboard,
    leaderboard,
    load_pipeline,
    save_pipeline,
    usable_rows,
)
from skembed.text.count._lsa import TfidfLSA

pd = pytest.importorskip("pandas")


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
    assert len(text.splitlines()) == 7


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


@pytest.mark.parametrize(
    "y, cv, message",
    [
        ([], 2, "no rows to compare"),
        (["a"] * 6, 2, "All 6 rows have the label 'a'"),
        (["a", "b"] * 5, 1, "cv=1: cross-validation needs at least 2 folds"),
        (
            ["a"] * 6 + ["b"] * 3,
            4,
            "Class 'b' has only 3 rows: cv=4 needs at least 4 rows in every class; use cv=3 or less",
        ),
        (["a"] * 6 + ["b"], 2, "Class 'b' has only 1 row: .*; add rows of that class"),
    ],
)
def test_unusable_labels_name_the_problem_and_the_fix(y, cv, message):
    with pytest.raises(ValueError, match=message):
        check_classification_data(y, cv)


def test_n_jobs_random_state_and_widths_reach_the_default_embedders():
    w2v, grid = default_embedders("text", ["word2vec"], n_jobs=2, random_state=7)["word2vec"]
    assert (w2v.n_jobs, w2v.random_state, grid) == (2, 7, {"vector_size": [50, 100]})
    assert default_embedders("text", ["word2vec"])["word2vec"][0].n_jobs is None
    pca = default_embedders("tabular", ["pca"], n_components=3, random_state=5)["pca"][0]
    assert (pca[-1].n_components, pca[-1].random_state) == (3, 5)
    with pytest.raises(ValueError, match="Unknown text embedder 'pca'"):
        default_embedders("text", ["pca"])


def test_verbose_levels_print_per_embedder_and_per_candidate(capsys):
    docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    labels = ["money", "money", "farm", "farm"] * 3
    grid = {"tfidf": (TfidfVectorizer(), {"sublinear_tf": [False, True]})}
    # 2 candidates x values of C, and the embedder's line
    for verbose, n_lines in ((0, 0), (1, 1), (2, 2 * len(DOWNSTREAM_CS) + 1)):
        compare_embedders(docs, labels, grid, cv=2, verbose=verbose)
        assert len(capsys.readouterr().out.splitlines()) == n_lines


def test_best_pipelines_round_trip_with_identical_outputs(bbc, tmp_path):
    texts, labels = bbc
    embedders = {
        "lsa": (TfidfLSA(random_state=0), {"n_components": [10, 20]}),
        "tfidf": TfidfVectorizer(sublinear_tf=True),
    }
    results, best = compare_embedders(texts, labels, embedders, cv=2, return_best=True)
    assert list(best) == leaderboard(results)["embedder"].tolist()
    lsa = best["lsa"]
    params = leaderboard(results).set_index("embedder").loc["lsa", "params"]
    assert (lsa["embed"].n_components, lsa["clf"].C) == (params["n_components"], params["clf__C"])
    new = ["Shares fell as the bank cut its forecast.", "The striker scored twice in the final."]
    for name, pipe in best.items():
        path = tmp_path / f"{name}.model"
        fmt = save_pipeline(pipe, path)
        back = load_pipeline(path, allow_pickle=fmt == "joblib")
        got, want = back[:-1].transform(new), pipe[:-1].transform(new)
        if hasattr(want, "toarray"):  # TF-IDF passes sparse and unscaled
            got, want = got.toarray(), want.toarray()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(back.predict_proba(texts), pipe.predict_proba(texts))
    # scikit-learn's own types need no pickle: skops, loaded without trusting anything by hand
    assert save_pipeline(best["tfidf"], tmp_path / "t.skops") == "skops"


def test_tfidf_lsa_pipeline_saves_with_skops(bbc, tmp_path):
    texts, labels = bbc
    pipe = make_pipeline(TfidfLSA(n_components=5, random_state=0), LogisticRegression()).fit(
        texts, labels
    )
    assert save_pipeline(pipe, tmp_path / "lsa.skops") == "skops"
    loaded = load_pipeline(tmp_path / "lsa.skops")
    np.testing.assert_array_equal(loaded.predict_proba(texts[:20]), pipe.predict_proba(texts[:20]))


def test_load_pipeline_refuses_pickles_and_foreign_types(tmp_path):
    from sklearn.preprocessing import FunctionTransformer

    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(["aa bb", "cc dd"], [0, 1])
    assert save_pipeline(pipe, tmp_path / "p.joblib", format="joblib") == "joblib"
    with pytest.raises(ValueError, match="pickle .* pass allow_pickle=True"):
        load_pipeline(tmp_path / "p.joblib")
    assert load_pipeline(tmp_path / "p.joblib", allow_pickle=True).predict(["aa"]).tolist() == [0]
    import skops.io as sio

    sio.dump(FunctionTransformer(_double), tmp_path / "f.skops")
    with pytest.raises(ValueError, match="test_model_selection._double"):
        load_pipeline(tmp_path / "f.skops")
    with pytest.raises(FileNotFoundError):
        load_pipeline(tmp_path / "missing.skops")


def _double(X):
    return X * 2


def test_same_random_state_same_results(bbc):
    texts, labels = bbc
    emb = {"lsa": TfidfLSA(n_components=10, random_state=0)}
    a = compare_embedders(texts, labels, emb, cv=2, random_state=3)
    b = compare_embedders(texts, labels, emb, cv=2, random_state=3)
    c = compare_embedders(texts, labels, emb, cv=2, random_state=4)
    cols = ["split0_test_score", "split1_test_score"]
    np.testing.assert_array_equal(a[cols], b[cols])
    assert not np.array_equal(a[cols], c[cols])


def test_label_trained_rows_run_only_when_named():
    from skembed.model_selection import EMBEDDERS

    assert not EMBEDDERS["setfit"].default and EMBEDDERS["setfit"].needs_y
    assert not EMBEDDERS["static_supervised"].default
    assert "setfit" not in default_embedders("text")
    named = default_embedders("text", ["setfit", "static_supervised"])
    assert type(named["setfit"][0]).__name__ == "SetFitEmbedder"
    assert named["static_supervised"][0].get_params()["supervised"] is True

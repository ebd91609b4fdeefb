"""The cross-validation runner: held-out reconstruction error, fold tasks that fail."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from skembed.model_selection import compare_embedders, format_leaderboard, leaderboard
from skembed.model_selection._runner import _fold_task, _reconstruction_error

pd = pytest.importorskip("pandas")


def test_reconstruction_error_is_zero_for_the_raw_features_and_nan_when_undefined():
    from sklearn.decomposition import PCA
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    from skembed.tabular import TabularPreprocessor

    X = pd.DataFrame({"a": [1.0, 2.0, 4.0, 7.0], "b": [0.5, -1.0, 3.0, 2.0]})
    assert _reconstruction_error(TabularPreprocessor().fit(X), X) == 0.0
    full = make_pipeline(TabularPreprocessor(), PCA(2)).fit(X)  # full rank: nothing is lost
    assert _reconstruction_error(full, X) == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(_reconstruction_error(TfidfVectorizer(), X))


def test_a_fold_whose_fit_raises_a_value_error_reports_it():
    class Refuses:
        def get_params(self, deep=True):
            return {}

        def set_params(self, **params):
            return self

        def fit_transform(self, X, y=None):
            raise ValueError("width above the vocabulary")

    X, y = np.zeros((4, 1)), np.array([0, 1, 0, 1])
    out = _fold_task(Refuses(), X, y, np.arange(2), np.arange(2, 4), None, "text", 1)
    assert out.failed and out.error == "ValueError: width above the vocabulary"
    assert out.per_value == {} and np.isnan(out.embed_s)


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


def test_ablation_text_alone_equals_the_text_column_compared_alone():
    """A mixed row's 'text alone' score reuses its fitted blocks and equals the plain text run."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = np.random.RandomState(0)
    n = 90
    label = np.where(rng.rand(n) < 0.5, "good", "bad")
    words = {"good": "great lovely solid works", "bad": "broken awful poor refund"}
    review = [
        " ".join(rng.choice(words[lab].split(), 3)) + f" item{i % 7}" for i, lab in enumerate(label)
    ]
    frame = pd.DataFrame({"review": review, "shop": rng.choice(["n", "s", "e"], n)})
    frame["count"] = rng.poisson(3, n)
    mixed = compare_embedders(frame, label, {"tfidf": TfidfVectorizer(), "none": None}, cv=3)
    alone = compare_embedders(review, label, {"tfidf": TfidfVectorizer()}, cv=3)
    board = leaderboard(mixed).set_index("embedder")
    assert board.loc["tfidf", "text_only_score"] == pytest.approx(
        leaderboard(alone)["mean_test_score"].iloc[0], abs=1e-12
    )
    assert np.isnan(board.loc["none", "text_only_score"])
    none = board.loc["none", "mean_test_score"]
    assert board.loc["tfidf", "delta_vs_none"] == pytest.approx(
        board.loc["tfidf", "mean_test_score"] - none
    )
    assert "text alone" in format_leaderboard(mixed)
    assert "text alone" not in format_leaderboard(alone)


def test_size_counts_the_weights_a_bert_row_loads_from_its_model_files():
    """A fitted BERT's file names its model's path, not the weights: the size column adds them."""
    pytest.importorskip("skops")
    from _helpers import minilm_dir
    from sklearn.pipeline import Pipeline

    from skembed.model_selection._persistence import saved_size_bytes
    from skembed.model_selection._runner import _size_mb
    from skembed.text import BertPooledEmbedder

    bert = BertPooledEmbedder(model=str(minilm_dir()), device="cpu").fit(["a b", "c d"])
    weights = sum(
        t.numel() * t.element_size() for t in (*bert.model_.parameters(), *bert.model_.buffers())
    )
    assert weights > 80 * 2**20  # all-MiniLM-L6-v2: 22.7 M float32 parameters

    def written(est):
        steps = [("embed", est), ("scale", "passthrough"), ("model", None)]
        return saved_size_bytes(Pipeline(steps))

    assert written(bert) < 2**20  # the path and the settings only
    assert _size_mb(bert, None, None) == pytest.approx((written(bert) + weights) / 2**20)
    # with its weights in the file, nothing is added: they are counted once
    stored = BertPooledEmbedder(model=str(minilm_dir()), device="cpu", store_weights=True)
    stored.fit(["a b", "c d"])
    assert _size_mb(stored, None, None) == pytest.approx(written(stored) / 2**20)
    assert _size_mb(stored, None, None) > 40  # compressed float32 weights


def test_size_column_is_the_bytes_save_best_writes(tmp_path):
    pytest.importorskip("skops")
    from sklearn.feature_extraction.text import TfidfVectorizer

    from skembed.model_selection import save_pipeline

    # every fold sees the whole vocabulary, so a fold's pipeline and the refitted one match
    docs = ["cheap loan bank money fund", "cat dog farm animal barn"] * 20
    labels = ["money", "farm"] * 20
    tfidf = {"tfidf": TfidfVectorizer()}
    results, best = compare_embedders(docs, labels, tfidf, cv=2, return_best=True)
    save_pipeline(best["tfidf"], tmp_path / "best.skops")
    written = (tmp_path / "best.skops").stat().st_size / (1024 * 1024)
    size = leaderboard(results)["pipeline_size_mb"].iloc[0]
    assert size == pytest.approx(written, rel=0.05)

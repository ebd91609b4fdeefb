"""Tests of ``skembed/model_selection/_compress.py``: ``compare --compress``."""

import numpy as np
import pytest

from skembed import TfidfLSA
from skembed import model_selection as ms

pd = pytest.importorskip("pandas")
WORDS = {
    "money": "bank loan cash credit debt fund interest price market stock".split(),
    "farm": "cow dog field grain harvest horse sheep tractor barn crop".split(),
}


def corpus(n=80, seed=0):
    rng = np.random.RandomState(seed)
    labels = np.array(["money", "farm"] * (n // 2))
    docs = [" ".join(rng.choice(WORDS[lab], 6)) for lab in labels]
    return docs, labels


def test_compress_scores_each_variant_on_the_same_folds():
    docs, labels = corpus()
    lsa = TfidfLSA(n_components=8, random_state=0)
    results = ms.compare_embedders(docs, labels, {"lsa": lsa}, cv=2, compress=True)
    table = pd.DataFrame.from_records(results.attrs["compression"])
    board = ms.leaderboard(results)
    width = int(board["n_features_out"].iloc[0])
    assert table["variant"].iloc[0] == "float32"
    # the uncompressed variant is the leaderboard's row: same folds, same downstream search
    assert table["mean_test_score"].iloc[0] == pytest.approx(board["mean_test_score"].iloc[0])
    by = table.set_index("variant")
    assert by.loc["int8", "bytes_per_row"] == width and by.loc["int8", "bytes_ratio"] == 4.0
    assert by.loc["binary", "bytes_per_row"] == -(-width // 8)
    assert by.loc["int8", "score_kept"] >= 0.99  # two well-separated topics
    assert (
        table["score_kept"] == table["mean_test_score"] / table["mean_test_score"].iloc[0]
    ).all()
    # the float32 reference has no step, so no rate (NaN, "-" in the text; never inf)
    rates = table["compress_rows_per_s"]
    assert (
        np.isnan(rates.iloc[0])
        and (rates.iloc[1:] > 0).all()
        and np.isfinite(rates).sum() == len(table) - 1
    )
    assert by.loc["binary, ITQ", "bytes_per_row"] == by.loc["binary", "bytes_per_row"]
    text = ms.format_compression(results)
    assert "compression of the best dense row (lsa)" in text and "int8" in text
    assert text.splitlines()[3].split()[-1] == "-"  # the float32 row's rate


def test_compress_says_why_it_does_nothing():
    docs, labels = corpus()
    results = ms.compare_embedders(docs, labels, ["tfidf"], cv=2, compress=True)
    assert results.attrs["compression"] is None
    assert "no row gives a dense embedding" in ms.format_compression(results)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    results = ms.compare_embedders(X, y, ["pca"], cv=2, compress=True)
    assert "rows are tabular embeddings" in ms.format_compression(results)


class WithConstantColumn:
    """LSA vectors with a constant column appended (an embedding a quantizer cannot range)."""

    def __init__(self, n_components=8):
        self.n_components = n_components

    def get_params(self, deep=True):
        return {"n_components": self.n_components}

    def set_params(self, **params):
        self.n_components = params.get("n_components", self.n_components)
        return self

    def fit(self, X, y=None):
        self.lsa_ = TfidfLSA(n_components=self.n_components, random_state=0).fit(X)
        return self

    def transform(self, X):
        Z = self.lsa_.transform(X)
        return np.hstack([Z, np.ones((Z.shape[0], 1), dtype=Z.dtype)])

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def test_a_variant_that_cannot_run_is_skipped_with_its_reason():
    docs, labels = corpus()
    results = ms.compare_embedders(docs, labels, {"lsa": WithConstantColumn()}, cv=2, compress=True)
    table = pd.DataFrame.from_records(results.attrs["compression"])
    assert table["variant"].iloc[0] == "float32" and len(table) >= 2
    note = results.attrs["compression_note"]
    assert note.startswith("int8 skipped: EmbeddingQuantizer.fit:") and "constant" in note
    assert "int8" not in table["variant"].tolist() and "binary" in table["variant"].tolist()
    assert ms.format_compression(results).endswith(note)  # said under the table

"""Tests of ``skembed/model_selection/_registry.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import pytest

from skembed.model_selection import (
    default_embedders,
)

pd = pytest.importorskip("pandas")


def test_n_jobs_random_state_and_widths_reach_the_default_embedders():
    w2v, grid = default_embedders("text", ["word2vec"], n_jobs=2, random_state=7)["word2vec"]
    assert (w2v.n_jobs, w2v.random_state, grid) == (2, 7, {"vector_size": [50, 100]})
    assert default_embedders("text", ["word2vec"])["word2vec"][0].n_jobs is None
    pca = default_embedders("tabular", ["pca"], n_components=3, random_state=5)["pca"][0]
    assert (pca[-1].n_components, pca[-1].random_state) == (3, 5)
    with pytest.raises(ValueError, match="Unknown text embedder 'pca'"):
        default_embedders("text", ["pca"])


def test_label_trained_rows_run_only_when_named():
    from skembed.model_selection import EMBEDDERS

    assert not EMBEDDERS["setfit"].default and EMBEDDERS["setfit"].needs_y
    assert not EMBEDDERS["static_supervised"].default
    assert "setfit" not in default_embedders("text")
    named = default_embedders("text", ["setfit", "static_supervised"])
    assert type(named["setfit"][0]).__name__ == "SetFitEmbedder"
    assert named["static_supervised"][0].get_params()["supervised"] is True


def test_a_row_on_another_model_is_named_by_the_model(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import shutil

    from _helpers import tiny_bert_dir

    from skembed.model_selection import compare_embedders, leaderboard, parse_embedder_name

    model = tmp_path / "tiny-encoder"
    shutil.copytree(tiny_bert_dir(), model)
    docs = ["cheap loan bank money"] * 6 + ["cat dog farm animal"] * 6
    labels = ["f"] * 6 + ["a"] * 6
    results = compare_embedders(docs, labels, ["tfidf", f"bert={model}/"], cv=2)
    board = leaderboard(results).set_index("embedder")
    assert sorted(board.index) == ["tfidf", "tiny-encoder"]
    row = board.loc["tiny-encoder"]
    assert row["description"] == f"{model}/ (the bert row's method)"
    assert row["mean_test_score"] > 0.9
    assert (parse_embedder_name("lsa").key, parse_embedder_name("lsa").model) == ("lsa", None)


def test_a_model_for_an_embedder_that_takes_none_is_refused():
    from skembed.model_selection import default_embedders

    with pytest.raises(ValueError, match=r"Embedder 'lsa' takes no model: 'lsa=x' names a model"):
        default_embedders("text", ["lsa=x"])

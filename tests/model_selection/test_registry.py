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

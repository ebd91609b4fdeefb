"""SetFit's training pairs (``_pairs.sample_pairs``): positives, negatives, graded targets."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _helpers import tiny_bert_dir  # noqa: E402

from skembed.text import SetFitEmbedder  # noqa: E402


@pytest.fixture(scope="module")
def tiny_dir():
    return tiny_bert_dir()


def make(tiny_dir, **params):
    params.setdefault("n_pairs", 48)
    params.setdefault("batch_size", 8)
    params.setdefault("max_length", 32)
    params.setdefault("device", "cpu")
    params.setdefault("n_jobs", 1)
    params.setdefault("random_state", 0)
    return SetFitEmbedder(model=tiny_dir, **params)


def test_pairs_follow_the_labels(tiny_dir):
    est = make(tiny_dir, loss="cosine", n_pairs=1001)
    y = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    est.target_type_ = "multiclass"
    left, right, target = est._sample_pairs(y, np.random.RandomState(0))
    assert len(left) == len(right) == 1001
    assert target[:501].tolist() == [1.0] * 501 and target[501:].tolist() == [0.0] * 500
    pos, neg = slice(0, 501), slice(501, None)
    assert (y[left[pos]] == y[right[pos]]).all() and (left[pos] != right[pos]).all()
    assert (y[left[neg]] != y[right[neg]]).all()
    counts = np.bincount(left, minlength=len(y))  # anchors cycle through every row
    assert counts.max() - counts.min() <= 1
    # a positive is any other row of the class, uniformly: both partners of row 3's class
    assert set(right[pos][left[pos] == 5]) == {6, 7, 8}


def test_in_batch_pairs_are_all_positive(tiny_dir):
    est = make(tiny_dir, loss="in_batch_negatives", n_pairs=50)
    est.target_type_ = "binary"
    y = np.array([0, 0, 1, 1, 1])
    left, right, target = est._sample_pairs(y, np.random.RandomState(0))
    assert (target == 1).all() and (y[left] == y[right]).all() and (left != right).all()


def test_regression_pairs_target_the_label_distance(tiny_dir):
    est = make(tiny_dir, n_pairs=200)
    est.target_type_ = "continuous"
    y = np.array([0.0, 1.0, 2.0, 4.0])
    left, right, target = est._sample_pairs(y, np.random.RandomState(0))
    assert (left != right).all()
    np.testing.assert_allclose(target, 1 - np.abs(y[left] - y[right]) / 4.0)

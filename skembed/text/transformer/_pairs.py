"""The training pairs of SetFit's contrastive fine-tuning, sampled from the labels."""

from __future__ import annotations

import numpy as np

__all__ = ["sample_pairs"]


def sample_pairs(y, rng, n_pairs, continuous, positives_only):
    """Rows and targets of ``n_pairs`` pairs: (left, right, target) int/float arrays.

    Anchors go through every row in a fresh random order, repeatedly. For
    class labels (``y`` holds codes ``0..n_classes-1``) half the pairs are
    positive (another row of the anchor's class, target 1) and half negative
    (a row of another class, target 0), or all positive with
    ``positives_only`` (in-batch negatives). For a continuous ``y`` the other
    row is any other row, with target ``1 - |y_i - y_j| / (max(y) - min(y))``.

    Parameters
    ----------
    y : numpy.ndarray of shape (n_rows,)
    rng : numpy.random.RandomState
    n_pairs : int
    continuous : bool
    positives_only : bool

    Returns
    -------
    left, right : numpy.ndarray of shape (n_pairs,), int64
    target : numpy.ndarray of shape (n_pairs,), float64
    """
    n, budget = len(y), n_pairs
    if continuous:
        left = _cycle(rng, n, budget)
        right = (left + rng.randint(1, n, budget)) % n  # any other row
        target = 1.0 - np.abs(y[left] - y[right]) / np.ptp(y)
        return left, right, target
    members = [np.flatnonzero(y == c) for c in range(int(y.max()) + 1)]
    n_pos = budget if positives_only else (budget + 1) // 2
    anchors = _cycle(rng, n, budget)
    left = anchors[:n_pos]
    right = np.empty(budget, np.int64)
    for c, rows in enumerate(members):  # a positive: another row of the anchor's class
        at = np.flatnonzero(y[left] == c)
        pick = rng.randint(0, len(rows) - 1, len(at))
        chosen = rows[pick]
        chosen[chosen == left[at]] = rows[-1]
        right[at] = chosen
    neg_left = anchors[n_pos:]
    for c in range(len(members)):  # a negative: a row of another class
        at = np.flatnonzero(y[neg_left] == c)
        others = np.flatnonzero(y != c)
        right[n_pos + at] = others[rng.randint(0, len(others), len(at))]
    target = np.zeros(budget)
    target[:n_pos] = 1.0
    return anchors, right, target


def _cycle(rng, n, size):
    """``size`` row indices that go through every row in a fresh random order, repeatedly."""
    reps = -(-size // n)
    return np.concatenate([rng.permutation(n) for _ in range(reps)])[:size]

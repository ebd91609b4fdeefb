"""The two ways InteractionEmbedder learns its vectors: implicit ALS and item2vec, and how
each gives a user unseen at fit time a vector from its items (fold-in)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..kernels.als import CsrLog, cg_half_step
from ..text import Word2VecTransformer
from ..utils._compute import limit_threads


class Factors(NamedTuple):
    """Learned vectors, float32: one row per user and one per item (``users . items`` scores
    a pair), and item2vec's input vectors of the items (None for ALS)."""

    users: np.ndarray
    items: np.ndarray
    item_inputs: np.ndarray | None = None


def _csr_log(matrix, confidence_scale):
    return CsrLog(
        matrix.indptr.astype(np.int64),
        matrix.indices.astype(np.int32),
        confidence_scale * matrix.data.astype(np.float64),
    )


def fit_als(matrix, config, rng, compute):
    """Alternate CG half-steps on users and items (``config``: the estimator; ``compute``:
    its resolved device, engine and threads)."""
    n_users, n_items = matrix.shape
    d = config.vector_size
    # implicit's start: uniform in [0, 0.01)
    users = (rng.random((n_users, d)) * 0.01).astype(np.float32)
    items = (rng.random((n_items, d)) * 0.01).astype(np.float32)
    if compute.engine == "torch":
        from ._als_torch import fit_als_torch

        with limit_threads(compute.n_threads):
            return Factors(*fit_als_torch(matrix, users, items, config, compute.device))
    by_user = _csr_log(matrix, config.confidence_scale)
    by_item = _csr_log(sp.csr_matrix(matrix.T), config.confidence_scale)
    reg, steps = float(config.regularization), int(config.cg_steps)
    with limit_threads(compute.n_threads, modules=("numba",)):
        for _ in range(config.epochs):
            cg_half_step(by_user, users, items, reg, steps)
            cg_half_step(by_item, items, users, reg, steps)
    return Factors(users, items)


def als_fold_in(items, columns, weights, regularization, confidence_scale):
    """The exact least-squares user vector for ``items[columns]`` with ``weights``, items fixed.

    Solves ``(Y^T Y + regularization I + Y_u^T diag(extra) Y_u) x = Y_u^T (1 + extra)`` with
    ``extra = confidence_scale * weights`` (the user step of ALS, solved to the end).
    """
    Y = items.astype(np.float64)
    rows, extra = Y[columns], confidence_scale * np.asarray(weights, dtype=np.float64)
    gram = Y.T @ Y + regularization * np.eye(Y.shape[1]) + (rows.T * extra) @ rows
    return np.linalg.solve(gram, rows.T @ (1.0 + extra)).astype(np.float32)


def mean_fold_in(item_inputs, columns, weights):
    """A user as the weighted mean of its items' input vectors (item2vec's users)."""
    weights = np.asarray(weights, dtype=np.float64)
    return (weights @ item_inputs[columns].astype(np.float64) / weights.sum()).astype(np.float32)


def fit_item2vec(baskets, matrix, config, seed):
    """Skip-gram over each user's items (``window``: None for the whole basket); users by
    mean fold-in."""
    names = np.array([str(i) for i in range(matrix.shape[1])], dtype=object)
    sentences = [names[basket].tolist() for basket in baskets if len(basket) > 1]
    if not sentences:
        raise ValueError(
            "item2vec learns from users with at least two items, and no user has two; use "
            "method='als'."
        )
    skipgram = Word2VecTransformer(
        config.vector_size,
        window=10**9 if config.window is None else config.window,
        min_count=1,
        negative=config.negative,
        # negatives shared by a centre's contexts add up their updates over the whole
        # basket (thousands of items for some users) and diverge: one draw per pair
        shared_negatives=False,
        sample=config.sample,
        alpha=config.alpha,
        min_alpha=min(config.min_alpha, config.alpha),
        epochs=config.epochs,
        lowercase=False,
        random_state=seed,
        n_jobs=config.n_jobs,
        verbose=config.verbose,
    ).fit(sentences)
    inputs = np.zeros((matrix.shape[1], config.vector_size), np.float32)
    outputs = np.zeros_like(inputs)
    columns = np.array([int(key) for key in skipgram.wv_.index_to_key], dtype=np.int64)
    inputs[columns], outputs[columns] = skipgram.wv_.vectors, skipgram.syn1neg_
    users = np.zeros((matrix.shape[0], config.vector_size), np.float32)
    for u in range(matrix.shape[0]):
        start, end = matrix.indptr[u], matrix.indptr[u + 1]
        users[u] = mean_fold_in(inputs, matrix.indices[start:end], matrix.data[start:end])
    # a user (mean input vector) . an item's output vector is skip-gram's score of the item
    # in the context of the user's items
    return Factors(users, outputs, inputs)

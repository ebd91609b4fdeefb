"""The downstream model every embedder is scored with."""

from __future__ import annotations

import time

#: regularisation strengths of the downstream logistic regression, searched with each embedder's grid
DOWNSTREAM_CS = (0.1, 1.0, 10.0)
#: documents a cache-free copy of a cached embedder (BERT) is fitted on / timed on


def downstream_classifier(sparse=False, C=1.0):
    """The classifier every embedder is scored with: a scaler, then a logistic regression.

    ``StandardScaler`` for dense embeddings, so that no embedding is ranked
    by the norm or the spread of its coordinates; sparse features (TF-IDF)
    pass unscaled: their rows are already L2-normalised, and per-column
    scaling would undo the IDF weighting (measured on BBC News, 5-fold,
    ``C`` chosen by an inner CV from the same values: 0.9744 with ``MaxAbsScaler``, 0.9757
    with ``StandardScaler(with_mean=False)``, 0.9793 unscaled). :func:`compare_embedders`
    searches ``C`` in :data:`DOWNSTREAM_CS` together with each embedder's
    own grid, which also absorbs any remaining difference of overall scale
    (scaling features by ``s`` is the same as multiplying ``C`` by ``s**2``).

    Parameters
    ----------
    sparse : bool, default=False
        Whether the embedding is a sparse matrix.
    C : float, default=1.0
        Inverse regularisation strength of the logistic regression.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Steps ``scale`` (a ``StandardScaler`` or ``"passthrough"``) and ``clf``; unfitted.

    Examples
    --------
    >>> from skembed.model_selection import downstream_classifier
    >>> downstream_classifier(C=10.0).named_steps["clf"].C
    10.0
    >>> downstream_classifier(sparse=True).named_steps["scale"]
    'passthrough'
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    scaler = "passthrough" if sparse else StandardScaler()
    return Pipeline([("scale", scaler), ("clf", LogisticRegression(C=C, max_iter=1000))])


#: the downstream model in words (leaderboard header, ``downstream`` column)
DOWNSTREAM_DESCRIPTION = (
    "StandardScaler (sparse TF-IDF unscaled) -> LogisticRegression, "
    f"C in {list(DOWNSTREAM_CS)} searched with each embedder's grid"
)


def _fit_downstream(Xt, y, C):
    """Fit :func:`downstream_classifier` on an embedding; (fitted pipeline, seconds)."""
    import scipy.sparse as sp

    t0 = time.perf_counter()
    down = downstream_classifier(sp.issparse(Xt), C).fit(Xt, y)
    return down, time.perf_counter() - t0


def _refit(embedder, params, X, y):
    """``Pipeline(embed, scale, clf)`` with ``params`` (``clf__C`` included) fitted on all rows."""
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline

    params = dict(params)
    C = params.pop("clf__C")
    est = clone(embedder).set_params(**params)
    down, _ = _fit_downstream(est.fit_transform(X, y), y, C)
    return Pipeline([("embed", est), *down.steps])

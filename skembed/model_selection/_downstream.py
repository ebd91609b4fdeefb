"""The downstream model every embedder is scored with, and its regularisation path."""

from __future__ import annotations

import time

import numpy as np

#: inverse regularisation strengths of the downstream logistic regression (classification),
#: a log grid wide enough for small data (strong) and long documents (weak); all fitted on
#: each fold's embedding, computed once
DOWNSTREAM_CS = (1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)
#: regularisation strengths of the downstream ridge regression (regression), one path per fold
DOWNSTREAM_ALPHAS = (0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5)
#: the downstream step's name and parameter per task
_STEP = {"classification": ("clf", "C"), "regression": ("reg", "alpha")}


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


def downstream_regressor(sparse=False, alpha=1.0):
    """The regressor every embedder is scored with on a numeric target: a scaler, then ridge.

    The same scaling as :func:`downstream_classifier`; ``alpha`` is searched
    in :data:`DOWNSTREAM_ALPHAS` with each embedder's grid.

    Parameters
    ----------
    sparse : bool, default=False
        Whether the embedding is a sparse matrix.
    alpha : float, default=1.0
        L2 penalty of the ridge regression.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Steps ``scale`` and ``reg``; unfitted.

    Examples
    --------
    >>> from skembed.model_selection import downstream_regressor
    >>> downstream_regressor(alpha=10.0).named_steps["reg"].alpha
    10.0
    """
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    scaler = "passthrough" if sparse else StandardScaler()
    return Pipeline([("scale", scaler), ("reg", Ridge(alpha=alpha))])


def downstream_values(task):
    """``(parameter key, values)`` searched downstream: ``("clf__C", DOWNSTREAM_CS)`` or ridge's."""
    step, param = _STEP[task]
    return f"{step}__{param}", DOWNSTREAM_CS if task == "classification" else DOWNSTREAM_ALPHAS


def downstream_description(task="classification"):
    """The downstream model in words (leaderboard header, ``downstream`` column).

    Parameters
    ----------
    task : {"classification", "regression"}, default="classification"
        The task whose downstream model is described.

    Returns
    -------
    str
        E.g. ``"StandardScaler (sparse TF-IDF unscaled) -> LogisticRegression, C in [...]"``.
    """
    if task == "regression":
        return (
            "StandardScaler (sparse TF-IDF unscaled) -> Ridge, "
            f"alpha in {list(DOWNSTREAM_ALPHAS)} searched with each embedder's grid"
        )
    return (
        "StandardScaler (sparse TF-IDF unscaled) -> LogisticRegression, "
        f"C in {list(DOWNSTREAM_CS)} searched with each embedder's grid"
    )


#: the downstream model of classification in words
DOWNSTREAM_DESCRIPTION = downstream_description("classification")


#: widest embedding whose ridge path goes through its d x d Gram matrix
_MAX_GRAM = 6000


def _ridge_path(Xs, y, alphas):
    """Fitted ``Ridge`` models for every alpha from one centred Gram matrix.

    Dense or sparse ``Xs`` (sparse is never densified, only its d x d Gram
    matrix): ``coef = (Xc^T Xc + alpha I)^-1 Xc^T yc``, one Cholesky solve
    per alpha (as ``Ridge(solver="cholesky")`` does, without recomputing the
    Gram matrix). At d = 2,000, seven Cholesky solves took 6.9 s against
    10.5 s for one eigendecomposition that would serve every alpha (one
    thread, 2-core machine at load average 10).
    """
    import scipy.linalg
    import scipy.sparse as sp
    from sklearn.linear_model import Ridge

    y = np.asarray(y, dtype=np.float64)
    y_mean = float(np.mean(y))
    if sp.issparse(Xs):  # X^T X - n mean mean^T: the centred Gram matrix without densifying X
        X = sp.csr_matrix(Xs, dtype=np.float64)
        x_mean = np.asarray(X.mean(axis=0)).ravel()
        gram = (X.T @ X).toarray() - X.shape[0] * np.outer(x_mean, x_mean)
        xty = X.T @ (y - y_mean)  # centring X is absorbed by centring y
    else:
        X = np.asarray(Xs, dtype=np.float64)
        x_mean = X.mean(axis=0)
        Xc = X - x_mean
        gram, xty = Xc.T @ Xc, Xc.T @ (y - y_mean)
    models = []
    diag = np.arange(gram.shape[0])
    for alpha in alphas:
        model = Ridge(alpha=alpha)
        system = gram.copy()
        system[diag, diag] += alpha
        model.coef_ = scipy.linalg.solve(system, xty, assume_a="pos", overwrite_a=True)
        model.intercept_ = y_mean - float(x_mean @ model.coef_)
        model.n_features_in_ = X.shape[1]
        model.solver_ = "cholesky-path"
        models.append(model)
    return models


def _downstream_path(Xt_tr, y_tr, task):
    """The downstream model fitted on one fold's embedding for every value searched.

    Returns ``(scaler, [(value, fitted model), ...], seconds)``: the scaler
    (``None`` for sparse input) and the test fold's scaling are computed
    once for all values; the logistic regressions are fitted one per ``C``
    from a cold start (a warm-started path was measured 1.5x faster on BBC
    News TF-IDF, 0.71 s against 1.08 s for 7 values, but ends within lbfgs'
    tolerance rather than at the fit scikit-learn's own grid search makes,
    which moved one document of a fold); the ridge models come from one
    centred Gram matrix (dense, up to 6,000 features; a Cholesky solve per
    alpha) or, for sparse input, scikit-learn's own iterative fit per alpha
    (on 4,000 film titles' TF-IDF, 5,721 columns, the seven fits took 0.4 s,
    where one 5,721 x 5,721 Gram matrix costs tens of seconds). Run
    single-threaded: on these small matrices BLAS threads only wait on each other.
    """
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    _, values = downstream_values(task)
    t0 = time.perf_counter()
    with threadpool_limits(1):
        scaler = None if sp.issparse(Xt_tr) else StandardScaler().fit(Xt_tr)
        Xs = Xt_tr if scaler is None else scaler.transform(Xt_tr)
        if task == "regression":
            if scaler is not None and Xs.shape[1] <= _MAX_GRAM:
                models = _ridge_path(Xs, y_tr, values)
            else:  # sparse (TF-IDF: thousands of columns) or too wide: scikit-learn's iterative fits
                models = [Ridge(alpha=a).fit(Xs, y_tr) for a in values]
        else:
            models = [LogisticRegression(C=C, max_iter=1000).fit(Xs, y_tr) for C in values]
    return scaler, list(zip(values, models, strict=True)), time.perf_counter() - t0


def _downstream_pipeline(scaler, model, task):
    from sklearn.pipeline import Pipeline

    step, _ = _STEP[task]
    return Pipeline([("scale", scaler if scaler is not None else "passthrough"), (step, model)])


def _refit(embedder, params, X, y, task="classification", wrap=None):
    """``Pipeline(embed, scale, clf|reg)`` with ``params`` fitted on all rows.

    ``params`` holds the embedder's parameters and the downstream value
    (``clf__C`` or ``reg__alpha``); ``wrap`` turns the embedder into its
    row of a mixed table (:func:`table_embedder`), with ``X`` the prepared table.
    """
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    from threadpoolctl import threadpool_limits

    key, _ = downstream_values(task)
    params = dict(params)
    value = params.pop(key)
    est = clone(embedder).set_params(**params) if embedder is not None else None
    est = wrap(est) if wrap is not None else est
    Xt = est.fit_transform(X, y)
    import scipy.sparse as sp

    make = downstream_regressor if task == "regression" else downstream_classifier
    down = make(sp.issparse(Xt), value)
    with threadpool_limits(1):
        down.fit(Xt, y)
    return Pipeline([("embed", est), *down.steps])

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
#: relative weights of a table's text embedding searched with ``C`` (or ``alpha``) on a mixed
#: table's text rows: each text block is scaled to ``TEXT_WEIGHTS[i]**2`` times the total
#: variance of the other columns (:func:`_block_scaler`). Measured on loans and movies (5
#: folds; docs/compare.md): the best weight was 1/16-1/4 where the text adds little and 2-8
#: on a table whose text carries the label (BBC News with two noise columns)
TEXT_WEIGHTS = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: the key of the text weight in a row's ``params``
TEXT_WEIGHT = "text_weight"


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


def downstream_description(task="classification", table=False):
    """The downstream model in words (leaderboard header, ``downstream`` column).

    Parameters
    ----------
    task : {"classification", "regression"}, default="classification"
        The task whose downstream model is described.
    table : bool, default=False
        Whether the rows embed text among other columns (a mixed table): then
        the other columns are not rescaled and the text is a balanced block,
        its weight searched in :data:`TEXT_WEIGHTS`.

    Returns
    -------
    str
        E.g. ``"StandardScaler (sparse TF-IDF unscaled) -> LogisticRegression, C in [...]"``.

    Examples
    --------
    >>> from skembed.model_selection import downstream_description
    >>> downstream_description("regression").split(" -> ")[1][:5]
    'Ridge'
    >>> "text_weight in [0.0625, 0.125" in downstream_description(table=True)
    True
    """
    if task == "regression":
        text = (
            "StandardScaler (sparse TF-IDF unscaled) -> Ridge, "
            f"alpha in {list(DOWNSTREAM_ALPHAS)} searched with each embedder's grid"
        )
    else:
        text = (
            "StandardScaler (sparse TF-IDF unscaled) -> LogisticRegression, "
            f"C in {list(DOWNSTREAM_CS)} searched with each embedder's grid"
        )
    if table:
        text += (
            "; on a table the other columns are not rescaled (numeric standardised, one-hot "
            "0/1) and each text block is scaled to text_weight**2 x their total variance, "
            f"text_weight in {list(TEXT_WEIGHTS)} searched too"
        )
    return text


#: the downstream model of classification in words
DOWNSTREAM_DESCRIPTION = downstream_description("classification")


#: widest embedding whose ridge path goes through its d x d Gram matrix
_MAX_GRAM = 6000


def _ridge_path(Xs, y, alphas):
    """Fitted ``Ridge`` models for every alpha from one centred Gram matrix.

    Dense or sparse ``Xs`` (sparse is never densified, only its d x d Gram
    matrix): ``coef = (Xc^T Xc + alpha I)^-1 Xc^T yc``, one Cholesky solve
    per alpha (as ``Ridge(solver="cholesky")`` does, without recomputing the
    Gram matrix): at d = 2,000, seven Cholesky solves took two thirds of the
    time of the one eigendecomposition that would serve every alpha.
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


def _downstream_path(Xt_tr, y_tr, task, scaled=False):
    """The downstream model fitted on one fold's embedding for every value searched.

    Returns ``(scaler, [(value, fitted model), ...], seconds)``: the scaler
    (``None`` for sparse input) and the test fold's scaling are computed
    once for all values; the logistic regressions are fitted one per ``C``
    from a cold start (a warm-started path was measured 1.5x faster on BBC
    News TF-IDF, 0.71 s against 1.08 s for 7 values, but ends within lbfgs'
    tolerance rather than at the fit scikit-learn's own grid search makes,
    which moved one document of a fold); ``scaled=True``: ``Xt_tr`` is scaled
    already (a table's balanced blocks), no scaler; the ridge models come from one
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
        scaler = None if sp.issparse(Xt_tr) or scaled else StandardScaler().fit(Xt_tr)
        Xs = Xt_tr if scaler is None else scaler.transform(Xt_tr)
        if task == "regression":
            if not sp.issparse(Xs) and Xs.shape[1] <= _MAX_GRAM:
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


def _table_blocks(fitted):
    """``[(name, column indices), ...]`` of a fitted mixed-table row, or None.

    The blocks of ``fitted.output_indices_`` (a :func:`table_embedder`
    ``ColumnTransformer``): every non-empty ``text_<column>`` block and the
    ``other`` block, in output order. None unless the ``other`` block has
    columns (text alone, a tabular row, plain text): the ``none`` row is
    ``[("other", ...)]`` alone.
    """
    blocks = getattr(fitted, "output_indices_", None)
    if not blocks or "other" not in blocks or blocks["other"].stop == blocks["other"].start:
        return None
    return [
        (name, np.arange(s.start, s.stop))
        for name, s in blocks.items()
        if (name == "other" or name.startswith("text_")) and s.stop > s.start
    ]


def _total_variance(B):
    """Sum of the column variances of a dense or sparse block."""
    import scipy.sparse as sp

    if sp.issparse(B):
        B = sp.csr_matrix(B, dtype=np.float64)
        mean_sq = np.asarray(B.multiply(B).mean(axis=0)).ravel()
        return float(np.sum(mean_sq - np.asarray(B.mean(axis=0)).ravel() ** 2))
    return float(np.var(np.asarray(B, dtype=np.float64), axis=0).sum())


def _block_scaler(Xt, blocks, text_weight):
    """The scaler of a mixed row's embedding with its blocks balanced; unfitted.

    A ``ColumnTransformer`` over the embedding's columns: the ``other``
    block as :func:`other_columns_transformer` made it (numeric columns
    standardised, one-hot columns 0/1: standardising a rare category's
    column would blow it up, measured on loans: R² 0.4053 as given against
    0.4019 standardised for the other columns alone), each dense text block
    standardised, a sparse text block (TF-IDF, rows of norm 1) unscaled, as
    in :func:`downstream_classifier`. Its ``transformer_weights`` then give
    each text block ``text_weight**2`` times the total variance of the other
    block (measured on ``Xt``, the training embedding): a block's width no
    longer sets its share, and the downstream model's penalty weighs the
    text against the other columns as ``text_weight`` says. The weights are
    plain numbers, so the scaler saves with skops. ``blocks`` without a text
    block (the ``none`` row) gives the other columns passed through.
    """
    import scipy.sparse as sp
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import StandardScaler

    sparse = sp.issparse(Xt)
    X = Xt.tocsc() if sparse else np.asarray(Xt)
    parts, variance = [], {}
    for name, cols in blocks:
        step = "passthrough" if sparse or name == "other" else StandardScaler()
        block = X[:, cols]
        scaled = block if step == "passthrough" else clone(step).fit_transform(block)
        variance[name] = _total_variance(scaled)
        parts.append((name, step, cols.tolist()))
    ref = variance["other"] if variance["other"] > 0 else 1.0
    weights = {
        name: 1.0
        if name == "other"
        else (float(text_weight * np.sqrt(ref / variance[name])) if variance[name] > 0 else 0.0)
        for name, _ in blocks
    }
    return ColumnTransformer(
        parts, transformer_weights=weights, sparse_threshold=1.0 if sparse else 0.0
    )


def _balanced_paths(Xt_tr, y_tr, task, blocks):
    """The downstream path of a mixed row for every :data:`TEXT_WEIGHTS` value.

    Returns ``([(text_weight, fitted block scaler, [(value, model), ...]), ...], seconds)``.
    """
    t0 = time.perf_counter()
    fits = []
    for weight in TEXT_WEIGHTS:
        scaler = _block_scaler(Xt_tr, blocks, weight)
        Xs = scaler.fit_transform(Xt_tr)
        _, path, _ = _downstream_path(Xs, y_tr, task, scaled=True)
        fits.append((weight, scaler, path))
    return fits, time.perf_counter() - t0


def _refit(embedder, params, X, y, task="classification", wrap=None):
    """``Pipeline(embed, scale, clf|reg)`` with ``params`` fitted on all rows.

    ``params`` holds the embedder's parameters and the downstream value
    (``clf__C`` or ``reg__alpha``), and on a mixed table's text row its
    ``text_weight`` (then ``scale`` is the balanced :func:`_block_scaler`);
    ``wrap`` turns the embedder into its row of a mixed table
    (:func:`table_embedder`), with ``X`` the prepared table.
    """
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    from threadpoolctl import threadpool_limits

    key, _ = downstream_values(task)
    params = dict(params)
    value = params.pop(key)
    weight = params.pop(TEXT_WEIGHT, None)
    est = clone(embedder).set_params(**params) if embedder is not None else None
    est = wrap(est) if wrap is not None else est
    Xt = est.fit_transform(X, y)
    import scipy.sparse as sp

    make = downstream_regressor if task == "regression" else downstream_classifier
    down = make(sp.issparse(Xt), value)
    blocks = _table_blocks(est)
    if weight is not None:
        down.set_params(scale=_block_scaler(Xt, blocks, weight))
    elif blocks is not None:  # the none row: the other columns as prepared, not rescaled
        down.set_params(scale="passthrough")
    with threadpool_limits(1):
        down.fit(Xt, y)
    return Pipeline([("embed", est), *down.steps])

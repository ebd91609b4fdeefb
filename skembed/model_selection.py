"""Which embedding works best for my labelled data? Compare embedders, keep the winner.

:func:`compare_embedders` cross-validates each embedder (text: TF-IDF, LSA,
PPMI, Word2Vec, FastText, GloVe, BERT; tables: raw features, PCA,
autoencoder, VAE; or any estimators you pass) over a small grid of its
hyperparameters, always followed by the same downstream classifier
(:func:`downstream_classifier`), and returns a :class:`pandas.DataFrame`
shaped like scikit-learn's ``cv_results_`` (one row per embedder and
candidate). With ``return_best=True`` it also returns each embedder's best
pipeline refitted on all the data; :func:`save_pipeline` writes one in a
format that loads without executing code (skops), :func:`load_pipeline`
reads it back. ``skembed compare`` is a command-line front end to these.

Why a scaler and a grid over ``C`` downstream: a linear model with a fixed
regularisation strength on unscaled features ranks embeddings partly by their
norm (small vectors are over-regularised), which is not what a leaderboard of
embeddings should measure. Standardising dense features and searching ``C``
(:data:`DOWNSTREAM_CS`) with each embedder's own grid gives every embedder the
same, fair classifier. The search costs about what one fixed-``C`` fit on
unscaled features cost before (standardised problems converge in fewer
iterations), and the embedding is computed once per fold for all values of
``C``. The measurements behind these choices are in ``docs/compare.md``.
"""

from __future__ import annotations

import importlib
import importlib.util
import numbers
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .base import limit_threads, resolve_n_jobs

__all__ = [
    "EMBEDDERS",
    "compare_embedders",
    "default_embedders",
    "downstream_classifier",
    "format_leaderboard",
    "leaderboard",
    "load_pipeline",
    "save_pipeline",
]

#: regularisation strengths of the downstream logistic regression, searched with each embedder's grid
DOWNSTREAM_CS = (0.1, 1.0, 10.0)
#: documents a cache-free copy of a cached embedder (BERT) is fitted on / timed on
_CACHE_FREE_FIT, _CACHE_FREE_TIMED = 50, 200


@dataclass(frozen=True)
class EmbedderSpec:
    """One default embedder of the comparison.

    Parameters
    ----------
    kind : {"text", "tabular"}
        The data it takes.
    estimator : str
        ``"module:Class"``; ``"module:Class|pca"`` builds
        ``make_pipeline(Class(), PCA())`` (tabular PCA on the preprocessed table).
    params : dict
        Fixed parameters.
    grid : dict
        Parameter grid searched by cross-validation (estimator parameter names).
    description : str
        One line for the leaderboard.
    requires : tuple of str
        Optional modules that must be importable for the embedder to be available.
    """

    kind: str
    estimator: str
    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    description: str = ""
    requires: tuple = ()


_PRE = "skembed.tabular._preprocess:TabularPreprocessor"

#: The default embedders of both modes (``skembed compare --embedders`` names).
EMBEDDERS = {
    "tfidf": EmbedderSpec(
        "text",
        "sklearn.feature_extraction.text:TfidfVectorizer",
        {"sublinear_tf": True},
        {},
        "TF-IDF baseline (sparse, no embedding)",
    ),
    "lsa": EmbedderSpec(
        "text",
        "skembed.text.lsa:TfidfLSA",
        {"sublinear_tf": True, "min_df": 2},
        {"n_components": [100, 300]},
        "TF-IDF + truncated SVD (LSA)",
    ),
    "ppmi": EmbedderSpec(
        "text",
        "skembed.text.ppmi:PPMIEmbedder",
        {"window": 5, "min_count": 2, "pooling": "tfidf"},
        {"n_components": [100, 300]},
        "PPMI + SVD word vectors, IDF-weighted mean",
    ),
    "word2vec": EmbedderSpec(
        "text",
        "skembed.text.word2vec:Word2VecTransformer",
        {"min_count": 2, "epochs": 5, "pooling": "tfidf"},
        {"vector_size": [50, 100]},
        "skip-gram word2vec, IDF-weighted mean",
    ),
    "fasttext": EmbedderSpec(
        "text",
        "skembed.text.fasttext:FastTextTransformer",
        {"min_count": 2, "epochs": 5, "bucket": 200_000, "pooling": "tfidf"},
        {"vector_size": [100]},
        "fastText skip-gram with char n-grams, IDF-weighted mean",
    ),
    "doc2vec": EmbedderSpec(
        "text",
        "skembed.text.doc2vec:Doc2VecTransformer",
        {"min_count": 2, "epochs": 10},
        {"vector_size": [100]},
        "paragraph vectors (PV-DBOW), inferred per document",
    ),
    "glove": EmbedderSpec(
        "text",
        "skembed.text.glove:GloVeTransformer",
        {"min_count": 2, "window": 10, "epochs": 15, "pooling": "tfidf"},
        {"vector_size": [50, 100]},
        "GloVe, IDF-weighted mean",
    ),
    "bert": EmbedderSpec(
        "text",
        "skembed.text.bert:BertPooledEmbedder",
        {"cache": "memory", "max_length": 256, "truncation": "truncate", "normalize": True},
        {"pooling": ["mean"]},
        "all-MiniLM-L6-v2, mean pooling (contextual)",
        requires=("torch", "transformers"),
    ),
    "static": EmbedderSpec(
        "text",
        "skembed.text.static:StaticEmbedder",
        {"normalize": True},
        {"sif_coefficient": [1e-4, 1e-3]},
        "all-MiniLM-L6-v2 distilled to static token vectors (model2vec method), mean",
        requires=("torch", "transformers"),
    ),
    "raw": EmbedderSpec("tabular", _PRE, {}, {}, "Scaler+OneHot of the raw columns (no embedding)"),
    "pca": EmbedderSpec("tabular", _PRE + "|pca", {}, {}, "PCA of the Scaler+OneHot columns"),
    "autoencoder": EmbedderSpec(
        "tabular",
        "skembed.tabular:AutoencoderEmbedder",
        {"epochs": 100},
        {"hidden_layer_sizes": [(32,), (64, 32)]},
        "autoencoder bottleneck codes",
        requires=("torch",),
    ),
    "entity": EmbedderSpec(
        "tabular",
        "skembed.tabular:EntityEmbedder",
        {"epochs": 20, "early_stopping": True},
        {"min_frequency": [1, 5]},
        "entity embeddings of the categorical columns, learned on y (cross-fitted)",
        requires=("torch", "pandas"),
    ),
    "vae": EmbedderSpec(
        "tabular",
        "skembed.tabular:VAEEmbedder",
        {"epochs": 100},
        {"beta": [0.5, 1.0]},
        "VAE posterior means",
        requires=("torch",),
    ),
}


def _is_available(spec):
    return all(importlib.util.find_spec(name) is not None for name in spec.requires)


def _build(spec, *, n_components, random_state, n_jobs, n_rows):
    """The unfitted estimator of ``spec`` with the comparison's shared settings applied."""
    from sklearn.pipeline import make_pipeline

    path, _, wrap = spec.estimator.partition("|")
    module, _, name = path.partition(":")
    est = getattr(importlib.import_module(module), name)(**spec.params)
    if wrap == "pca":
        from sklearn.decomposition import PCA

        est = make_pipeline(est, PCA())
    shared = {"random_state": random_state}
    if n_jobs is not None:
        shared["n_jobs"] = n_jobs
    if spec.kind == "tabular":
        shared["n_components"] = n_components
        # small tables: smaller batches, so that each epoch makes enough optimiser steps
        shared["batch_size"] = 32 if n_rows is not None and n_rows < 2000 else 256
    keys = est.get_params()
    est.set_params(
        **{k: shared[k.rsplit("__", 1)[-1]] for k in keys if k.rsplit("__", 1)[-1] in shared}
    )
    return est


def default_embedders(
    kind="text", names=None, *, n_components=2, random_state=0, n_jobs=None, n_rows=None
):
    """The default embedders of one mode, unfitted, with their parameter grids.

    Parameters
    ----------
    kind : {"text", "tabular"}, default="text"
    names : list of str or None, default=None
        Keys of :data:`EMBEDDERS`; ``None`` means every available one of ``kind``.
    n_components : int, default=2
        Output width of PCA, the autoencoder and the VAE (tabular only).
    random_state : int, default=0
        Set on every embedder that takes one.
    n_jobs : int or None, default=None
        Set on every embedder that takes ``n_jobs`` (threads of its fit and
        transform); ``None`` leaves each embedder's own default.
    n_rows : int or None, default=None
        Rows of the table: below 2,000 the autoencoder and VAE use
        ``batch_size=32`` (else 256) so that each epoch makes enough steps.

    Returns
    -------
    embedders : dict of str to (estimator, dict)
        ``name -> (unfitted estimator, parameter grid)``.

    Raises
    ------
    ValueError
        If a name is unknown, of the other kind, or needs a missing optional dependency.

    Examples
    --------
    >>> from skembed.model_selection import default_embedders
    >>> est, grid = default_embedders("text", ["lsa"])["lsa"]
    >>> type(est).__name__, grid
    ('TfidfLSA', {'n_components': [100, 300]})
    """
    if kind not in ("text", "tabular"):
        raise ValueError(f"kind must be 'text' or 'tabular', got {kind!r}.")
    of_kind = sorted(n for n, s in EMBEDDERS.items() if s.kind == kind)
    if names is None:
        names = [n for n in EMBEDDERS if EMBEDDERS[n].kind == kind and _is_available(EMBEDDERS[n])]
    out = {}
    for name in names:
        spec = EMBEDDERS.get(name)
        if spec is None or spec.kind != kind:
            raise ValueError(f"Unknown {kind} embedder {name!r}; choose from {of_kind}.")
        if not _is_available(spec):
            raise ValueError(
                f"Embedder {name!r} needs {' and '.join(spec.requires)}: "
                "pip install 'skembed[all]' (or drop it from the list)."
            )
        est = _build(
            spec, n_components=n_components, random_state=random_state, n_jobs=n_jobs, n_rows=n_rows
        )
        out[name] = (est, dict(spec.grid))
    return out


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


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _take(X, idx):
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    if hasattr(X, "shape"):
        return X[idx]
    return [X[i] for i in idx]


def _missing(values):
    try:
        import pandas as pd

        return np.asarray(pd.isna(values), dtype=bool)
    except ImportError:  # pragma: no cover - pandas comes with skembed[all]
        return np.array([v is None or (isinstance(v, float) and v != v) for v in values])


def usable_rows(X, y, *, drop_empty_text=False):
    """Which rows can be compared: a label, and (optionally) non-empty text.

    Parameters
    ----------
    X : list of str, array-like or pandas.DataFrame, n_rows long
    y : array-like of shape (n_rows,)
    drop_empty_text : bool, default=False
        Also drop documents that are missing or only whitespace (``X`` a list of str).

    Returns
    -------
    keep : numpy.ndarray of bool, shape (n_rows,)
    dropped : dict of str to int
        ``{"missing label": n, "empty text": m}`` (rows counted once, under
        the first reason that applies).

    Examples
    --------
    >>> from skembed.model_selection import usable_rows
    >>> keep, dropped = usable_rows(["a b", "  ", "c"], ["x", "y", None], drop_empty_text=True)
    >>> keep.tolist(), dropped
    ([True, False, False], {'missing label': 1, 'empty text': 1})
    """
    no_label = _missing(np.asarray(y, dtype=object))
    keep = ~no_label
    dropped = {"missing label": int(no_label.sum())}
    if drop_empty_text:
        empty = np.array([not (isinstance(d, str) and d.strip()) for d in X], dtype=bool) & keep
        keep &= ~empty
        dropped["empty text"] = int(empty.sum())
    return keep, dropped


def check_classification_data(y, cv):
    """Check that ``y`` can be cross-validated with ``cv`` stratified folds.

    Parameters
    ----------
    y : array-like of shape (n_rows,)
        Labels (no missing values).
    cv : int or cross-validation splitter
        Only an int is checked.

    Raises
    ------
    ValueError
        With one sentence naming the problem and the fix: no rows, a single
        class, ``cv < 2``, or a class with fewer rows than ``cv``.

    Examples
    --------
    >>> from skembed.model_selection import check_classification_data
    >>> check_classification_data(["a", "a", "b"], cv=2)
    Traceback (most recent call last):
    ...
    ValueError: Class 'b' has only 1 row: cv=2 needs at least 2 rows in every class; add rows of that class.
    """
    y = np.asarray(y, dtype=object)
    if len(y) == 0:
        raise ValueError(
            "There are no rows to compare: give labelled data with at least 2 classes."
        )
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(
                f"cv={cv}: cross-validation needs at least 2 folds: use cv >= 2 (5 is usual)."
            )
    elif not hasattr(cv, "split"):
        raise ValueError(f"cv must be an int >= 2 or a cross-validation splitter, got {cv!r}.")
    classes, counts = np.unique(y.astype(str), return_counts=True)
    if len(classes) < 2:
        raise ValueError(
            f"All {len(y)} rows have the label {str(classes[0])!r}: a classifier needs at least 2 classes; "
            "check the label column."
        )
    smallest = int(np.argmin(counts))
    name, n = str(classes[smallest]), int(counts[smallest])
    if not isinstance(cv, numbers.Integral):
        return
    if n < cv:
        fix = (
            f"use cv={n} or less, or add rows of that class" if n >= 2 else "add rows of that class"
        )
        raise ValueError(
            f"Class {name!r} has only {n} row{'s' * (n != 1)}: cv={cv} needs at least {cv} "
            f"rows in every class; {fix}."
        )


def _resolve_embedders(embedders, kind, **shared):
    """``embedders`` argument -> ``{name: (estimator, grid, description)}``."""
    if embedders is None or (
        isinstance(embedders, (list, tuple)) and all(isinstance(e, str) for e in embedders)
    ):
        chosen = default_embedders(kind, embedders, **shared)
        return {n: (est, grid, EMBEDDERS[n].description) for n, (est, grid) in chosen.items()}
    if isinstance(embedders, dict):
        out = {}
        for name, value in embedders.items():
            est, grid = value if isinstance(value, tuple) else (value, {})
            out[str(name)] = (est, dict(grid), type(est).__name__)
        return out
    raise ValueError(
        "embedders must be None, a list of names of EMBEDDERS, or a dict "
        f"name -> estimator or (estimator, param_grid); got {type(embedders).__name__}."
    )


def _reconstruction_error(embedder, X):
    """Mean squared reconstruction error of ``X`` in the Scaler+OneHot space (NaN if undefined)."""
    from sklearn.pipeline import Pipeline

    if hasattr(embedder, "reconstruction_error"):
        return float(embedder.reconstruction_error(X))
    if type(embedder).__name__ == "TabularPreprocessor":
        return 0.0  # the raw features are the reference space
    if not isinstance(embedder, Pipeline) or type(embedder[0]).__name__ != "TabularPreprocessor":
        return float("nan")
    last = embedder[-1]
    if len(embedder) != 2 or not hasattr(last, "inverse_transform"):
        return float("nan")
    Xp = np.asarray(embedder[0].transform(X), dtype=np.float64)
    return float(np.mean((last.inverse_transform(last.transform(Xp)) - Xp) ** 2))


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


def _cache_free_rate(embedder, X_train, X_test):
    """Rows/s of ``transform`` of a cache-free copy of ``embedder`` (BERT with ``cache=...``).

    With its embedding cache on, an embedder's ``transform`` would time cache
    lookups: the copy is fitted on a few training rows and timed on up to 200
    held-out rows.
    """
    from sklearn.base import clone

    copy = clone(embedder).set_params(cache=None)
    copy.fit(_take(X_train, np.arange(min(_CACHE_FREE_FIT, _n_rows(X_train)))))
    sample = _take(X_test, np.arange(min(_CACHE_FREE_TIMED, _n_rows(X_test))))
    t0 = time.perf_counter()
    copy.transform(sample)
    return _n_rows(sample) / max(time.perf_counter() - t0, 1e-9)


def _fold_task(est, X, y, train, test, scorer, kind, n_jobs):
    """Fit ``est`` on one training fold and score every downstream ``C`` on its test fold.

    Runs in this process or in a Dask worker (then limited to the worker's threads).
    """
    from sklearn.base import clone

    n_threads = n_jobs
    if "distributed" in sys.modules:  # inside a Dask worker: at most its threads
        from .dask import worker_threads

        n_threads = worker_threads(default=n_jobs)
        if n_jobs is not None and n_threads is not None:
            n_threads = min(resolve_n_jobs(n_jobs), n_threads)
    with limit_threads(n_threads), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
        X_tr, X_te, y_tr, y_te = _take(X, train), _take(X, test), y[train], y[test]
        fold_est = clone(est)
        t0 = time.perf_counter()
        Xt_tr = fold_est.fit_transform(X_tr, y_tr)
        embed_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        Xt_te = fold_est.transform(X_te)
        transform_s = time.perf_counter() - t0
        per_c = {}
        for C in DOWNSTREAM_CS:
            down, seconds = _fit_downstream(Xt_tr, y_tr, C)
            t0 = time.perf_counter()
            test_score = float(scorer(down, Xt_te, y_te))
            per_c[C] = {
                "test": test_score,
                "score": transform_s + time.perf_counter() - t0,
                "fit": embed_s + seconds,
            }
        recon = _reconstruction_error(fold_est, X_te) if kind == "tabular" else None
    return {
        "embed_s": embed_s,
        "transform_s": transform_s,
        "per_c": per_c,
        "recon": recon,
        "n_features_out": Xt_tr.shape[1],
    }


def _identity(value):
    return value


def _run_fold_tasks(tasks, X, y, folds, scorer, kind, n_jobs, scheduler):
    """Results of :func:`_fold_task` for each ``(name, estimator, params, fold)`` task, in order.

    ``scheduler=None`` runs them here one after another; otherwise they go to
    the Dask cluster as one task each (``X`` and ``y`` sent to each worker
    once). A failing task raises an error naming its candidate and fold.
    """
    if scheduler is None:
        with limit_threads(n_jobs):
            return [
                _fold_task(est, X, y, *folds[k], scorer, kind, n_jobs) for _, est, _, k in tasks
            ]
    from .dask import connect

    client = connect(scheduler)
    try:
        # the client's own API rather than joblib's dask backend: joblib runs the tasks in
        # this process when the cluster has a single thread in all. The data is one task
        # (sent once to each worker that needs it) rather than scattered: a task can be
        # recomputed when its worker dies, scattered data would be lost with it.
        X_ref = client.submit(_identity, X, pure=False)
        y_ref = client.submit(_identity, y, pure=False)
        futures = [
            client.submit(
                _fold_task, est, X_ref, y_ref, *folds[k], scorer, kind, n_jobs, pure=False
            )
            for _, est, _, k in tasks
        ]
        outcomes = []
        for (name, _, params, k), future in zip(tasks, futures, strict=True):
            try:
                outcomes.append(future.result())
            except Exception as exc:
                client.cancel(futures)
                raise RuntimeError(
                    f"Candidate {name} {params} (fold {k}) failed on the Dask cluster at "
                    f"{client.scheduler.address}: {type(exc).__name__}: {exc}"
                ) from exc
        return outcomes
    finally:
        if client is not scheduler:
            client.close()


def compare_embedders(
    X,
    y,
    embedders=None,
    *,
    cv=5,
    scoring="accuracy",
    n_jobs=None,
    random_state=0,
    n_components=2,
    verbose=0,
    return_best=False,
    scheduler=None,
):
    """Cross-validate embedders under one fair downstream classifier.

    For each embedder and each candidate of its parameter grid, and for each
    of ``cv`` stratified folds: fit the embedder on the training rows, then
    for each ``C`` in :data:`DOWNSTREAM_CS` fit :func:`downstream_classifier`
    (a scaler for dense embeddings, then a logistic regression) on their
    embedding and score the held-out rows. ``C`` is thus part of every
    embedder's grid (``clf__C`` in ``params``) and the embedding is computed
    once per fold for all of them. Every row uses the same folds and the same
    downstream model, so the scores differ only by the embedding.

    Parameters
    ----------
    X : list of str (text) or pandas.DataFrame / array of shape (n_rows, n_features) (tabular)
        The data, ``n_rows`` long.
    y : array-like of shape (n_rows,)
        Class labels. Rows with a missing label are dropped with a ``UserWarning``.
    embedders : None, list of str or dict, default=None
        ``None``: every available default embedder of the data's kind (text
        for a list of str, tabular for a DataFrame or 2-D array; see
        :data:`EMBEDDERS`); a list of names of :data:`EMBEDDERS`; or a dict
        ``name -> estimator`` or ``name -> (estimator, param_grid)`` with
        grid keys the estimator's own parameter names.
    cv : int or cross-validation splitter, default=5
        Stratified folds (shuffled with ``random_state``), or a splitter.
    scoring : str or callable, default="accuracy"
        A scikit-learn scorer name or callable ``scorer(estimator, X, y)``.
    n_jobs : int or None, default=None
        Threads each embedder may use: set on every default embedder that
        takes ``n_jobs``, and the limit of the native thread pools (BLAS,
        OpenMP, torch, numba) for the whole comparison. ``None`` leaves each
        embedder's default (see ``docs/glossary.md``). Candidates and folds
        run one after another in both modes, so threads are never oversubscribed.
    random_state : int, default=0
        Seeds the folds and every default embedder.
    n_components : int, default=2
        Output width of the tabular default embedders (PCA, autoencoder, VAE).
    verbose : int, default=0
        0: silent; 1: a line per embedder when it is done; 2: also a line per candidate.
    return_best : bool, default=False
        Also refit each embedder's best candidate (with the downstream
        classifier) on all rows and return the fitted pipelines.
    scheduler : str, distributed.Client or None, default=None
        ``None``: run here. An address (``"tcp://host:8786"``) or a client: send
        the candidates x folds to that Dask cluster (one task each; the
        data is sent to each worker once), each task limited to its
        worker's threads (and to ``n_jobs``, if given); the refit of
        ``return_best`` runs here. Scores are those of a local run with the
        same ``random_state`` and ``n_jobs`` (``pip install "skembed[dask]"``).

    Returns
    -------
    results : pandas.DataFrame
        One row per embedder and candidate, in that order, with the columns
        of scikit-learn's ``cv_results_`` — ``params`` (dict of the
        embedder's grid parameters and the downstream ``clf__C``), ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (over all
        rows, 1 = best), ``mean_fit_time``/``std_fit_time`` (seconds to fit
        the whole pipeline on one training fold), ``mean_score_time``
        (seconds to transform and predict one test fold) — and
        ``embedder``, ``description``, ``mean_embed_fit_time`` (seconds of
        ``mean_fit_time`` spent fitting the embedder),
        ``transform_rows_per_s`` (rows/s of the embedder's ``transform`` on
        held-out rows; for an embedder with an embedding cache, a cache-free
        copy on up to 200 rows), ``n_features_out`` (embedding width),
        ``mean_reconstruction_error`` (tabular embedders: held-out mean squared
        error in the Scaler+OneHot space, 0 for the raw features; NaN otherwise),
        ``scoring`` and ``downstream`` (the downstream model in words; also
        in ``results.attrs``).
    best_pipelines : dict of str to sklearn.pipeline.Pipeline
        Only with ``return_best=True``: ``embedder name -> Pipeline(embed,
        scale, clf)`` of its best candidate refitted on all rows, best
        embedder first.

    Raises
    ------
    ValueError
        If ``X`` and ``y`` differ in length, there are no rows, one class,
        ``cv < 2``, a class with fewer rows than ``cv``, or an unknown embedder.
    ConnectionError
        If no Dask scheduler answers at ``scheduler`` within 5 s.
    RuntimeError
        If a task fails on the cluster (a worker died more often than Dask's
        retries allow, or an estimator raised): the message names the candidate,
        the fold and the cause.

    See Also
    --------
    leaderboard : the best row of each embedder.
    format_leaderboard : the leaderboard as text.
    save_pipeline, load_pipeline : keep the winner.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import TfidfVectorizer
    >>> from skembed.model_selection import compare_embedders
    >>> docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    >>> labels = ["money", "money", "farm", "farm"] * 3
    >>> results = compare_embedders(docs, labels, {"tfidf": TfidfVectorizer()}, cv=2)
    >>> results[["embedder", "mean_test_score", "rank_test_score"]].to_dict("list")
    {'embedder': ['tfidf', 'tfidf', 'tfidf'], 'mean_test_score': [1.0, 1.0, 1.0], 'rank_test_score': [1, 1, 1]}
    >>> results["params"].tolist()
    [{'clf__C': 0.1}, {'clf__C': 1.0}, {'clf__C': 10.0}]
    """
    import pandas as pd
    from sklearn.base import clone
    from sklearn.metrics import get_scorer
    from sklearn.model_selection import ParameterGrid, StratifiedKFold

    if _n_rows(X) != len(y):
        raise ValueError(f"X has {_n_rows(X)} rows but y has {len(y)}.")
    keep, dropped = usable_rows(X, y)
    if not keep.all():
        warnings.warn(
            f"Dropping {dropped['missing label']} rows with a missing label.",
            UserWarning,
            stacklevel=2,
        )
        idx = np.flatnonzero(keep)
        X, y = _take(X, idx), np.asarray(y, dtype=object)[idx]
    y = np.asarray(y, dtype=object).astype(str)
    check_classification_data(y, cv)
    kind = "tabular" if hasattr(X, "iloc") or np.ndim(X) == 2 else "text"
    chosen = _resolve_embedders(
        embedders,
        kind,
        n_components=n_components,
        random_state=random_state,
        n_jobs=n_jobs,
        n_rows=len(y),
    )
    splitter = (
        StratifiedKFold(cv, shuffle=True, random_state=random_state)
        if isinstance(cv, numbers.Integral)
        else cv
    )
    folds = list(splitter.split(np.zeros((len(y), 1)), y))
    scorer = get_scorer(scoring) if isinstance(scoring, str) else scoring
    records, best_params = [], {}
    # every candidate x fold is one task: run here one after another, or on the Dask cluster
    tasks = [
        (name, clone(embedder).set_params(**params), params, k)
        for name, (embedder, grid, _) in chosen.items()
        for params in ParameterGrid(grid)
        for k in range(len(folds))
    ]
    started = time.perf_counter()
    outcomes = _run_fold_tasks(tasks, X, y, folds, scorer, kind, n_jobs, scheduler)
    with limit_threads(n_jobs), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
        by_candidate = {}
        for (name, est, params, _), out in zip(tasks, outcomes, strict=True):
            by_candidate.setdefault((name, id(params)), (name, est, params, []))[3].append(out)
        for name, (_, _, description) in chosen.items():
            first = len(records)
            for cand_name, est, params, fold_outs in by_candidate.values():
                if cand_name != name:
                    continue
                embed_s = [o["embed_s"] for o in fold_outs]
                transform_s = [o["transform_s"] for o in fold_outs]
                recon = [o["recon"] for o in fold_outs if o["recon"] is not None]
                if est.get_params().get("cache") is not None:
                    rate = _cache_free_rate(est, _take(X, folds[0][0]), _take(X, folds[0][1]))
                else:
                    rate = sum(len(test) for _, test in folds) / max(sum(transform_s), 1e-9)
                for C in DOWNSTREAM_CS:
                    acc = {
                        key: [o["per_c"][C][key] for o in fold_outs]
                        for key in ("test", "fit", "score")
                    }
                    rec = {
                        "embedder": name,
                        "description": description,
                        "params": {**params, "clf__C": C},
                    }
                    rec.update({f"split{k}_test_score": v for k, v in enumerate(acc["test"])})
                    rec.update(
                        mean_test_score=float(np.mean(acc["test"])),
                        std_test_score=float(np.std(acc["test"])),
                        mean_fit_time=float(np.mean(acc["fit"])),
                        std_fit_time=float(np.std(acc["fit"])),
                        mean_embed_fit_time=float(np.mean(embed_s)),
                        mean_score_time=float(np.mean(acc["score"])),
                        transform_rows_per_s=float(rate),
                        n_features_out=int(fold_outs[-1]["n_features_out"]),
                        mean_reconstruction_error=float(np.mean(recon)) if recon else float("nan"),
                    )
                    records.append(rec)
                    if verbose >= 2:
                        print(
                            f"    {name} {rec['params']}: "
                            f"{rec['mean_test_score']:.4f} ± {rec['std_test_score']:.4f}",
                            flush=True,
                        )
            own = records[first:]
            top = max(range(len(own)), key=lambda i: own[i]["mean_test_score"])  # first of ties
            best_params[name] = own[top]["params"]
            if verbose >= 1:
                seconds = sum(
                    o["embed_s"] + o["transform_s"]
                    for (n, *_), o in zip(tasks, outcomes, strict=True)
                    if n == name
                )
                print(
                    f"  {name:<12} {scoring if isinstance(scoring, str) else 'score'} "
                    f"{own[top]['mean_test_score']:.4f} ± {own[top]['std_test_score']:.4f}"
                    f"  ({seconds:.1f} s embedding)",
                    flush=True,
                )
        if verbose >= 1 and scheduler is not None:
            print(
                f"  ({len(tasks)} tasks on the cluster: {time.perf_counter() - started:.1f} s wall)"
            )
        results = pd.DataFrame.from_records(records)
        results["rank_test_score"] = (
            results["mean_test_score"].rank(method="min", ascending=False).astype(int)
        )
        results["scoring"] = scoring if isinstance(scoring, str) else repr(scoring)
        results["downstream"] = DOWNSTREAM_DESCRIPTION
        results.attrs["downstream"] = DOWNSTREAM_DESCRIPTION
        if not return_best:
            return results
        best = {}
        for name in leaderboard(results)["embedder"]:
            best[name] = _refit(chosen[name][0], best_params[name], X, y)
    return results, best


def leaderboard(results):
    """The best candidate of each embedder, best embedder first.

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`compare_embedders`.

    Returns
    -------
    board : pandas.DataFrame
        One row per embedder (its highest ``mean_test_score``; the first
        candidate among ties), sorted by ``mean_test_score`` descending, with
        a fresh index.
    """
    order = results.sort_values("mean_test_score", ascending=False, kind="stable")
    return order.drop_duplicates("embedder").reset_index(drop=True)


def format_leaderboard(results, title=""):
    """The leaderboard as a fixed-width text table (one line per embedder).

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`compare_embedders` (or :func:`leaderboard`).
    title : str, default=""
        First line.

    Returns
    -------
    text : str
        The title, a line naming the downstream model and scoring, a header
        and one line per embedder: rank, embedder, mean ± std score, width,
        embedder fit seconds (one training fold), transform rows/s, held-out
        reconstruction error (tabular only) and the best parameters.
    """
    import json

    board = leaderboard(results)
    recon = board["mean_reconstruction_error"].notna().any()
    width = max([10] + [len(n) + 2 for n in board["embedder"]])
    scoring = board["scoring"].iloc[0] if len(board) else "accuracy"
    head = (
        f"{'rank':<5}{'embedder':<{width}}{scoring + ' (mean ± std)':<24}{'dim':>7}"
        f"{'fit s':>8}{'rows/s':>10}" + (f"{'recon err':>11}" if recon else "") + "  best params"
    )
    lines = [title] if title else []
    lines += [f"downstream: {DOWNSTREAM_DESCRIPTION}; scoring: {scoring}", head, "-" * len(head)]
    for i, r in enumerate(board.itertuples(index=False), start=1):
        line = (
            f"{i:<5}{r.embedder:<{width}}{f'{r.mean_test_score:.4f} ± {r.std_test_score:.4f}':<24}"
            f"{r.n_features_out:>7}{r.mean_embed_fit_time:>8.2f}{r.transform_rows_per_s:>10.0f}"
        )
        if recon:
            err = r.mean_reconstruction_error
            line += f"{err:>11.4f}" if err == err else f"{'-':>11}"
        lines.append(line + f"  {json.dumps(r.params, default=str)}")
    return "\n".join(lines)


def _skembed_classes(type_names):
    """The names among ``type_names`` that are classes defined in skembed itself."""
    trusted = []
    for full in type_names:
        module, _, name = full.rpartition(".")
        if not (module == "skembed" or module.startswith("skembed.")):
            continue
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        if isinstance(obj, type) and obj.__module__ == module:
            trusted.append(full)
    return trusted


def _is_skops_file(path):
    import zipfile

    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return "schema.json" in archive.namelist()


def load_pipeline(path, *, allow_pickle=False):
    """Load a pipeline written by :func:`save_pipeline` (or ``skembed compare --save-best``).

    A skops file is loaded with skops, trusting scikit-learn's and numpy's
    types (skops' defaults) and the classes defined in skembed, nothing else:
    loading it executes no code from the file. A joblib file is a pickle,
    which can run arbitrary code while loading, so it is refused unless
    ``allow_pickle=True``.

    Parameters
    ----------
    path : str or os.PathLike
    allow_pickle : bool, default=False
        Load a joblib (pickle) file. Only for files from a source you trust.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Fitted; ``pipeline.transform``-less steps aside, ``pipeline[:-1].transform(texts)``
        gives the embedding (scaled) and ``pipeline.predict(texts)`` the labels.

    Raises
    ------
    ValueError
        If the file is a pickle and ``allow_pickle`` is False, or a skops file
        names types that are neither skops' defaults nor skembed classes
        (the message lists them).
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, os
    >>> from sklearn.feature_extraction.text import TfidfVectorizer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from skembed.model_selection import load_pipeline, save_pipeline
    >>> pipe = make_pipeline(TfidfVectorizer(), LogisticRegression())
    >>> pipe = pipe.fit(["cheap loan", "bank loan", "cat dog", "dog farm"], [0, 0, 1, 1])
    >>> path = os.path.join(tempfile.mkdtemp(), "best.skops")
    >>> save_pipeline(pipe, path)
    'skops'
    >>> load_pipeline(path).predict(["a loan from the bank"]).tolist()
    [0]
    """
    import os

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file: {path}")
    if _is_skops_file(path):
        import skops.io as sio

        untrusted = sio.get_untrusted_types(file=path)
        trusted = _skembed_classes(untrusted)
        others = sorted(set(untrusted) - set(trusted))
        if others:
            raise ValueError(
                f"{path} names types that are neither scikit-learn's, numpy's nor skembed's: "
                f"{others}. If you trust the file, load it with "
                "skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))."
            )
        return sio.load(path, trusted=trusted)
    if not allow_pickle:
        raise ValueError(
            f"{path} is a pickle (joblib) file, which can execute code when loaded: "
            "pass allow_pickle=True if you trust its source."
        )
    import joblib

    return joblib.load(path)


def save_pipeline(pipeline, path, *, format="auto"):
    """Write a fitted pipeline with skops (loads without executing code), else joblib.

    Parameters
    ----------
    pipeline : estimator
        Fitted, e.g. a pipeline returned by ``compare_embedders(..., return_best=True)``.
    path : str or os.PathLike
        Written atomically (a temporary file in the same directory, then renamed).
    format : {"auto", "skops", "joblib"}, default="auto"
        ``"auto"``: skops when the pipeline round-trips through it (it is
        written, then loaded back with :func:`load_pipeline`), joblib otherwise
        (e.g. an object skops cannot represent).

    Returns
    -------
    format : {"skops", "joblib"}
        The format written.

    Raises
    ------
    ValueError
        If ``format`` is unknown, or ``format="skops"`` and skops cannot write
        or read the pipeline back (the message gives skops' reason).

    Examples
    --------
    See :func:`load_pipeline`.
    """
    import os
    import tempfile

    if format not in ("auto", "skops", "joblib"):
        raise ValueError(f"format must be 'auto', 'skops' or 'joblib', got {format!r}.")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".skembed-", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        used = "joblib"
        if format != "joblib":
            try:
                import skops.io as sio

                sio.dump(pipeline, tmp)
                load_pipeline(tmp)
                used = "skops"
            except Exception as exc:  # skops cannot represent something in the pipeline
                if format == "skops":
                    raise ValueError(f"skops cannot save this pipeline: {exc}") from exc
        if used == "joblib":
            import joblib

            joblib.dump(pipeline, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return used

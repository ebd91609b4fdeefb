"""The cross-validation runner: one task per candidate x fold, here or on a Dask cluster."""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from ..utils._compute import limit_threads, resolve_n_jobs
from ._data import _n_rows, _take
from ._downstream import _downstream_path

_CACHE_FREE_FIT, _CACHE_FREE_TIMED = 50, 200


def _reconstruction_error(embedder, X):
    """Mean squared reconstruction error of ``X`` in the Scaler+OneHot space (NaN if undefined)."""
    from sklearn.pipeline import Pipeline

    from ..tabular import TabularPreprocessor

    if hasattr(embedder, "reconstruction_error"):
        return float(embedder.reconstruction_error(X))
    if isinstance(embedder, TabularPreprocessor):
        return 0.0  # the raw features are the reference space
    if not isinstance(embedder, Pipeline) or not isinstance(embedder[0], TabularPreprocessor):
        return float("nan")
    last = embedder[-1]
    if len(embedder) != 2 or not hasattr(last, "inverse_transform"):
        return float("nan")
    Xp = np.asarray(embedder[0].transform(X), dtype=np.float64)
    return float(np.mean((last.inverse_transform(last.transform(Xp)) - Xp) ** 2))


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


def _fold_task(est, X, y, train, test, scorer, kind, n_jobs, task="classification"):
    """Fit ``est`` on one training fold and score every downstream value on its test fold.

    The downstream models of all values (``C`` or ``alpha``) are one path
    fitted on the fold's embedding (:func:`_downstream_path`), single-threaded.
    Runs in this process or in a Dask worker (then limited to the worker's threads).
    """
    from sklearn.base import clone

    n_threads = n_jobs
    if "distributed" in sys.modules:  # inside a Dask worker: at most its threads
        from ..dask import worker_threads

        n_threads = worker_threads(default=n_jobs)
        if n_jobs is not None and n_threads is not None:
            n_threads = min(resolve_n_jobs(n_jobs), n_threads)
    with limit_threads(n_threads), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
        X_tr, X_te, y_tr, y_te = _take(X, train), _take(X, test), y[train], y[test]
        fold_est = clone(est)
        t0 = time.perf_counter()
        try:
            Xt_tr = fold_est.fit_transform(X_tr, y_tr)
        except ValueError as exc:  # e.g. a width above a short column's vocabulary
            return {"error": f"{type(exc).__name__}: {exc}"}
        embed_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        Xt_te = fold_est.transform(X_te)
        transform_s = time.perf_counter() - t0
        scaler, path, down_s = _downstream_path(Xt_tr, y_tr, task)
        Xs_te = Xt_te if scaler is None else scaler.transform(Xt_te)
        per_value = {}
        for value, model in path:
            t0 = time.perf_counter()
            test_score = float(scorer(model, Xs_te, y_te))
            per_value[value] = {
                "test": test_score,
                "score": transform_s + time.perf_counter() - t0,
                "fit": embed_s + down_s,
            }
        recon = _reconstruction_error(fold_est, X_te) if kind == "tabular" else None
    return {
        "embed_s": embed_s,
        "downstream_s": down_s,
        "transform_s": transform_s,
        "per_value": per_value,
        "recon": recon,
        "n_features_out": Xt_tr.shape[1],
    }


def _identity(value):
    return value


def _run_fold_tasks(tasks, X, y, folds, scorer, kind, n_jobs, scheduler, task="classification"):
    """Results of :func:`_fold_task` for each ``(name, estimator, params, fold)`` task, in order.

    ``scheduler=None`` runs them here one after another; otherwise they go to
    the Dask cluster as one task each (``X`` and ``y`` sent to each worker
    once). A failing task raises an error naming its candidate and fold.
    """
    if scheduler is None:
        with limit_threads(n_jobs):
            return [
                _fold_task(est, X, y, *folds[k], scorer, kind, n_jobs, task)
                for _, est, _, k in tasks
            ]
    from ..dask import connect

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
                _fold_task, est, X_ref, y_ref, *folds[k], scorer, kind, n_jobs, task, pure=False
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

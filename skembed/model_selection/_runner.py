"""The cross-validation runner: one task per candidate x fold, here or on a Dask cluster."""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from ..utils._compute import limit_threads, resolve_n_jobs
from ._data import _n_rows, _take
from ._downstream import (
    TEXT_WEIGHT,
    _balanced_paths,
    _downstream_path,
    _table_blocks,
    downstream_values,
)

_CACHE_FREE_FIT, _CACHE_FREE_TIMED = 50, 200
_MB = 1024 * 1024


def _rss_kb(field):
    """``VmRSS``/``VmHWM`` of this process in kB from ``/proc/self/status`` (Linux), or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _reset_peak():
    """Reset the process's peak RSS (``VmHWM``) and return the current RSS in kB, or None.

    Writing ``5`` to ``/proc/self/clear_refs`` (Linux >= 4.0) resets the
    high-water mark at no cost, so the peak of one fit is its own: unlike
    ``tracemalloc`` it sees torch's and numba's allocations and does not slow
    Python down.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    return _rss_kb("VmRSS")


def _peak_mb(baseline_kb):
    """Peak RSS above ``baseline_kb`` since :func:`_reset_peak`, in MB (NaN if unknown)."""
    peak = _rss_kb("VmHWM") if baseline_kb is not None else None
    return float("nan") if peak is None else max(peak - baseline_kb, 0) / 1024


class _ByteCounter:
    """A file-like sink that counts what ``pickle.dump`` writes into it."""

    def __init__(self):
        self.n = 0

    def write(self, data):
        size = memoryview(data).nbytes  # any layout: pickle hands over array buffers as they are
        self.n += size
        return size


def _pickled_bytes(obj):
    """Bytes of ``obj`` pickled (protocol 5, as joblib and skops store arrays), or None."""
    import pickle

    sink = _ByteCounter()
    try:
        pickle.dump(obj, sink, protocol=5)
    except Exception:  # an object that cannot be pickled has no size on disk to report
        return None
    return sink.n


def _fitted_parts(est):
    """``est`` and the fitted estimators inside it (a ColumnTransformer's, a Pipeline's)."""
    yield est
    for part in getattr(est, "transformers_", None) or ():
        if hasattr(part[1], "get_params"):
            yield from _fitted_parts(part[1])
    for part in getattr(est, "steps", None) or ():
        if hasattr(part[1], "get_params"):
            yield from _fitted_parts(part[1])


def _weights_outside_bytes(est):
    """Bytes of torch weights that ``est`` reloads from its model's files rather than its pickle.

    A fitted BERT row pickles its model's name or path, not the weights
    (unless ``store_weights=True``): for each fitted part with a torch
    ``model_`` whose own pickle is smaller than the model's parameters and
    buffers, those bytes are what the pipeline needs on disk besides its file.
    """
    total = 0
    for part in _fitted_parts(est):
        model = getattr(part, "__dict__", {}).get("model_")
        if model is None or not hasattr(model, "parameters") or not hasattr(model, "buffers"):
            continue
        tensors = [*model.parameters(), *model.buffers()]
        weights = sum(t.numel() * t.element_size() for t in tensors)
        pickled = _pickled_bytes(part)
        if pickled is not None and pickled < weights:
            total += weights
    return total


def _size_mb(est, *objects):
    """Size on disk of a fitted embedder and ``objects``, in MB (NaN if they cannot be pickled).

    Their pickle (protocol 5), plus the torch weights the embedder loads from
    its model's files rather than its pickle (:func:`_weights_outside_bytes`):
    a BERT row's size is the model it needs, not the few kilobytes that name it.
    """
    pickled = _pickled_bytes((est, *objects))
    if pickled is None:
        return float("nan")
    return (pickled + _weights_outside_bytes(est)) / _MB


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


def _fold_task(
    est, X, y, train, test, scorer, kind, n_jobs, task="classification", measure_size=False
):
    """Fit ``est`` on one training fold and score every downstream value on its test fold.

    The downstream models of all values (``C`` or ``alpha``) are one path
    fitted on the fold's embedding (:func:`_downstream_path`), single-threaded;
    on a mixed table's text row, one path per text weight on the balanced
    blocks (:func:`_balanced_paths`). ``per_value`` is keyed by the
    downstream parameters as ``((name, value), ...)`` pairs.
    Runs in this process or in a Dask worker (then limited to the worker's threads).
    Also measures the fit's peak memory (RSS above the start, Linux) and, with
    ``measure_size``, the fitted pipeline's pickled size.
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
        baseline = _reset_peak()
        t0 = time.perf_counter()
        try:
            Xt_tr = fold_est.fit_transform(X_tr, y_tr)
        except ValueError as exc:  # e.g. a width above a short column's vocabulary
            return {"error": f"{type(exc).__name__}: {exc}"}
        embed_s = time.perf_counter() - t0
        peak_mb = _peak_mb(baseline)
        t0 = time.perf_counter()
        Xt_te = fold_est.transform(X_te)
        transform_s = time.perf_counter() - t0
        blocks = _table_blocks(fold_est)
        if blocks is None or len(blocks) == 1:  # the none row's other columns: as prepared
            scaler, path, down_s = _downstream_path(Xt_tr, y_tr, task, scaled=blocks is not None)
            fits = [((), scaler, path)]
        else:  # a table's text row: the blocks balanced, the text's weight searched too
            fits, down_s = _balanced_paths(Xt_tr, y_tr, task, blocks)
            fits = [(((TEXT_WEIGHT, w),), scaler, path) for w, scaler, path in fits]
        key, _ = downstream_values(task)
        per_value = {}
        for extra, scaler, path in fits:
            t0 = time.perf_counter()
            Xs_te = Xt_te if scaler is None else scaler.transform(Xt_te)
            scale_s = time.perf_counter() - t0
            for value, model in path:
                t0 = time.perf_counter()
                test_score = float(scorer(model, Xs_te, y_te))
                per_value[(*extra, (key, value))] = {
                    "test": test_score,
                    "score": transform_s + scale_s + time.perf_counter() - t0,
                    "fit": embed_s + down_s,
                }
        recon = _reconstruction_error(fold_est, X_te) if kind == "tabular" else None
        text_only = _text_alone(blocks, Xt_tr, Xt_te, y_tr, y_te, scorer, task)
        _, scaler, path = fits[0]
        size_mb = _size_mb(fold_est, scaler, path[0][1]) if measure_size else float("nan")
    return {
        "text_only": text_only,
        "peak_mb": peak_mb,
        "size_mb": size_mb,
        "sparse": hasattr(Xt_tr, "tocsr"),
        "embed_s": embed_s,
        "downstream_s": down_s,
        "transform_s": transform_s,
        "per_value": per_value,
        "recon": recon,
        "n_features_out": Xt_tr.shape[1],
    }


def _text_alone(blocks, Xt_tr, Xt_te, y_tr, y_te, scorer, task):
    """Scores per downstream value of a mixed row's text columns alone, or None.

    The ablation reuses the fold's fitted blocks (:func:`_table_blocks` of
    the row): the text blocks' output columns are cut from the embeddings
    already computed and only the (plain) downstream path is fitted again.
    The other columns alone are the ``none`` row.
    """
    if blocks is None or len(blocks) == 1:
        return None
    cols = np.concatenate([c for name, c in blocks if name != "other"])
    sub_tr, sub_te = _columns(Xt_tr, cols), _columns(Xt_te, cols)
    scaler, path, _ = _downstream_path(sub_tr, y_tr, task)
    sub_te = sub_te if scaler is None else scaler.transform(sub_te)
    return {value: float(scorer(model, sub_te, y_te)) for value, model in path}


def _columns(X, cols):
    return X.tocsc()[:, cols].tocsr() if hasattr(X, "tocsc") else np.asarray(X)[:, cols]


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
                _fold_task(est, X, y, *folds[k], scorer, kind, n_jobs, task, k == 0)
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
                _fold_task,
                *(est, X_ref, y_ref, *folds[k], scorer, kind, n_jobs, task, k == 0),
                pure=False,
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

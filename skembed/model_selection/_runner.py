"""The cross-validation runner: one task per candidate x fold, here or on a Dask cluster."""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

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
_NAN = float("nan")


class FoldScores(NamedTuple):
    """One downstream value's scores on one fold.

    Parameters
    ----------
    test : float
        The held-out score.
    fit : float
        Seconds to fit the embedder and the downstream path on the training rows.
    score : float
        Seconds to embed, scale and score the held-out rows.
    """

    test: float
    fit: float
    score: float


#: the scores of a downstream value on a fold whose fit failed
NAN_SCORES = FoldScores(_NAN, _NAN, _NAN)


@dataclass(frozen=True)
class FoldOutcome:
    """What one candidate's fit on one training fold measured (:func:`_fold_task`).

    Parameters
    ----------
    per_value : dict
        ``FoldScores`` per downstream value, keyed by the downstream
        parameters as ``((name, value), ...)`` pairs; empty when the fit failed.
    embed_s, downstream_s, transform_s : float
        Seconds to fit the embedder, to fit the downstream path, to embed the
        held-out rows (NaN when the fit failed).
    n_features_out : int
        Width of the embedding (0 when the fit failed).
    sparse : bool
        Whether the embedding is a sparse matrix.
    peak_mb, size_mb : float
        The fit's peak memory and the fitted pipeline's pickled size, in MB
        (NaN when unknown or not measured).
    recon : float or None
        Held-out reconstruction error (tabular rows), else ``None``.
    text_only : dict or None
        A mixed row's text columns alone: test score per downstream value.
    error : str or None
        ``"ValueError: ..."`` when the embedder's fit raised one.
    """

    per_value: dict = field(default_factory=dict)
    embed_s: float = _NAN
    downstream_s: float = _NAN
    transform_s: float = _NAN
    n_features_out: int = 0
    sparse: bool = False
    peak_mb: float = _NAN
    size_mb: float = _NAN
    recon: float | None = None
    text_only: dict | None = None
    error: str | None = None

    @property
    def failed(self):
        """Whether the embedder's fit on this fold raised."""
        return self.error is not None


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


def _size_mb(est, scaler, model):
    """Size on disk of a fitted embedder with its downstream model, in MB (NaN if unknown).

    The bytes :func:`~skembed.model_selection.save_pipeline` writes for
    ``Pipeline(embed, scale, model)`` (measured by writing it, so the column
    is the size of the file ``--save-best`` writes), plus the torch weights
    the embedder loads from its model's files rather than its file
    (:func:`_weights_outside_bytes`): a BERT row's size is the model it
    needs, not the few kilobytes that name it.
    """
    from sklearn.pipeline import Pipeline

    from ._persistence import saved_size_bytes

    steps = [("embed", est), ("scale", "passthrough" if scaler is None else scaler)]
    try:
        written = saved_size_bytes(Pipeline([*steps, ("model", model)]))
    except Exception:  # a pipeline that cannot be written has no size on disk to report
        return float("nan")
    return (written + _weights_outside_bytes(est)) / _MB


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

    with limit_threads(_fold_threads(n_jobs)), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
        X_tr, X_te, y_tr, y_te = _take(X, train), _take(X, test), y[train], y[test]
        fold_est = clone(est)
        baseline = _reset_peak()
        t0 = time.perf_counter()
        try:
            Xt_tr = fold_est.fit_transform(X_tr, y_tr)
        except ValueError as exc:  # e.g. a width above a short column's vocabulary
            return FoldOutcome(error=f"{type(exc).__name__}: {exc}")
        embed_s = time.perf_counter() - t0
        peak_mb = _peak_mb(baseline)
        t0 = time.perf_counter()
        Xt_te = fold_est.transform(X_te)
        transform_s = time.perf_counter() - t0
        blocks = _table_blocks(fold_est)
        fits = _fit_downstream(Xt_tr, y_tr, task, blocks)
        per_value = _score_downstream(
            fits, Xt_te, y_te, scorer, task, fit_s=embed_s + fits.seconds, transform_s=transform_s
        )
        recon = _reconstruction_error(fold_est, X_te) if kind == "tabular" else None
        text_only = _text_alone(blocks, Xt_tr, Xt_te, y_tr, y_te, scorer, task)
        first = fits.paths[0]
        size_mb = (
            _size_mb(fold_est, first.scaler, first.path[0][1]) if measure_size else float("nan")
        )
    return FoldOutcome(
        per_value=per_value,
        embed_s=embed_s,
        downstream_s=fits.seconds,
        transform_s=transform_s,
        n_features_out=Xt_tr.shape[1],
        sparse=hasattr(Xt_tr, "tocsr"),
        peak_mb=peak_mb,
        size_mb=size_mb,
        recon=recon,
        text_only=text_only,
    )


def _fold_threads(n_jobs):
    """Threads of a fold task: ``n_jobs``, and inside a Dask worker at most its threads."""
    n_threads = n_jobs
    if "distributed" in sys.modules:  # inside a Dask worker: at most its threads
        from ..dask import worker_threads

        n_threads = worker_threads(default=n_jobs)
        if n_jobs is not None and n_threads is not None:
            n_threads = min(resolve_n_jobs(n_jobs), n_threads)
    return n_threads


class _DownstreamPath(NamedTuple):
    """A downstream path fitted on a fold's embedding."""

    #: downstream parameters besides the searched value: the text's weight, or none
    extra: tuple
    #: the scaler in front of the models, or None where the embedding is used as it is
    scaler: object
    #: ``(value, model)`` pairs, one per downstream value
    path: list


class _DownstreamFits(NamedTuple):
    """The downstream paths of a fold and the seconds it took to fit them."""

    paths: list
    seconds: float


def _fit_downstream(Xt_tr, y_tr, task, blocks):
    """The :class:`_DownstreamFits` on a fold's embedding: one path, or one per text weight."""
    if blocks is None or len(blocks) == 1:  # the none row's other columns: as prepared
        scaler, path, down_s = _downstream_path(Xt_tr, y_tr, task, scaled=blocks is not None)
        return _DownstreamFits([_DownstreamPath((), scaler, path)], down_s)
    # a table's text row: the blocks balanced, the text's weight searched too
    fits, down_s = _balanced_paths(Xt_tr, y_tr, task, blocks)
    paths = [_DownstreamPath(((TEXT_WEIGHT, w),), scaler, path) for w, scaler, path in fits]
    return _DownstreamFits(paths, down_s)


def _score_downstream(fits, Xt_te, y_te, scorer, task, *, fit_s, transform_s):
    """``FoldScores`` per downstream value of every path, on the held-out rows."""
    key, _ = downstream_values(task)
    per_value = {}
    for fitted in fits.paths:
        t0 = time.perf_counter()
        Xs_te = Xt_te if fitted.scaler is None else fitted.scaler.transform(Xt_te)
        scale_s = time.perf_counter() - t0
        for value, model in fitted.path:
            t0 = time.perf_counter()
            test_score = float(scorer(model, Xs_te, y_te))
            per_value[(*fitted.extra, (key, value))] = FoldScores(
                test=test_score,
                fit=fit_s,
                score=transform_s + scale_s + time.perf_counter() - t0,
            )
    return per_value


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


class FoldTask(NamedTuple):
    """One candidate of one row, fitted on one training fold.

    Parameters
    ----------
    name : str
        The row's (embedder's) name.
    estimator : estimator or None
        The candidate, unfitted (``None``: a table's ``none`` row without a wrap).
    params : dict
        The candidate's grid parameters.
    fold : int
        Index into the comparison's folds.
    """

    name: str
    estimator: object
    params: dict
    fold: int


@dataclass(frozen=True)
class FoldSetting:
    """What every fold task of a comparison shares: the data, folds and downstream scoring.

    Parameters
    ----------
    X : list of str, pandas.DataFrame or ndarray
        The prepared rows.
    y : ndarray of shape (n_rows,)
        Labels or targets.
    folds : list of (ndarray, ndarray)
        Training and test row indices of each fold.
    scorer : callable
        ``scorer(estimator, X, y)``.
    kind : {"text", "tabular", "mixed"}
        The data's shape.
    task : {"classification", "regression"}
        The task.
    n_jobs : int or None
        Threads of each embedder.
    description : str, default=""
        The folds in words (``"5-fold CV"``, ``"3 forward-chaining folds by 'day' ..."``).
    """

    X: object
    y: np.ndarray
    folds: list
    scorer: object
    kind: str
    task: str
    n_jobs: int | None
    description: str = ""

    def arguments(self, task, X=None, y=None):
        """The positional arguments of :func:`_fold_task` for ``task`` (``X``/``y`` overridable)."""
        train, test = self.folds[task.fold]
        X = self.X if X is None else X
        y = self.y if y is None else y
        return (task.estimator, X, y, train, test, self.scorer, self.kind, self.n_jobs, self.task)


def _run_fold_tasks(tasks, setting, scheduler=None):
    """Yield the :class:`FoldOutcome` of each :class:`FoldTask`, in order.

    ``scheduler=None`` runs them here one after another, each when its
    outcome is asked for; otherwise they all go to the Dask cluster at once,
    one task each (``X`` and ``y`` sent to each worker once), and their
    outcomes are yielded in order as they arrive. The first fold of each
    candidate also measures the fitted pipeline's size. A task failing on
    the cluster raises a ``RuntimeError`` naming its candidate and fold.
    """
    if scheduler is None:
        for task in tasks:
            with limit_threads(setting.n_jobs):  # not held while the caller uses the outcome
                outcome = _fold_task(*setting.arguments(task), task.fold == 0)
            yield outcome
        return
    yield from _run_on_cluster(tasks, setting, scheduler)


def _run_on_cluster(tasks, setting, scheduler):
    """:func:`_run_fold_tasks` on a Dask cluster."""
    from ..dask import connect

    client = connect(scheduler)
    try:
        # the client's own API rather than joblib's dask backend: joblib runs the tasks in
        # this process when the cluster has a single thread in all. The data is one task
        # (sent once to each worker that needs it) rather than scattered: a task can be
        # recomputed when its worker dies, scattered data would be lost with it.
        X_ref = client.submit(_identity, setting.X, pure=False)
        y_ref = client.submit(_identity, setting.y, pure=False)
        futures = [
            client.submit(
                _fold_task, *setting.arguments(task, X_ref, y_ref), task.fold == 0, pure=False
            )
            for task in tasks
        ]
        for task, future in zip(tasks, futures, strict=True):
            try:
                outcome = future.result()
            except Exception as exc:
                client.cancel(futures)
                raise RuntimeError(
                    f"Candidate {task.name} {task.params} (fold {task.fold}) failed on the Dask "
                    f"cluster at {client.scheduler.address}: {type(exc).__name__}: {exc}"
                ) from exc
            yield outcome
    finally:
        if client is not scheduler:
            client.close()

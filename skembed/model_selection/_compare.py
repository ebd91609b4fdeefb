"""``compare_embedders``: cross-validate embedders under one fair downstream model."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..exceptions import ComparisonInterrupted
from ..utils._compute import limit_threads
from ._columns import PrepareFrame, detect_roles, prepare_frame, warn_wide_categoricals
from ._compress import compress_best
from ._data import _n_rows, _take, check_classification_data, usable_rows
from ._downstream import _refit, downstream_description, downstream_values
from ._progress import CompareProgress
from ._registry import EMBEDDERS, _resolve_embedders, _resolve_table_rows
from ._report import leaderboard
from ._runner import NAN_SCORES, FoldSetting, FoldTask, _cache_free_rate, _run_fold_tasks
from ._split import SplitSpec, make_folds, split_column
from ._task import check_regression_data, infer_task


@dataclass(frozen=True)
class PreparedComparison:
    """Rows, target, task, data kind and column roles, checked once (:func:`prepare_comparison`).

    Parameters
    ----------
    X : list of str, pandas.DataFrame or ndarray
        The documents, the table with roles applied, or the numeric array.
    y : ndarray of shape (n_rows,)
        Labels as str (classification) or float targets (regression).
    task : {"classification", "regression"}
        The task.
    kind : {"text", "tabular", "mixed"}
        The shape of the data.
    roles : dict or None
        Column roles of a table (:func:`detect_roles`), else ``None``.
    columns : dict
        The roles forced by the caller (``text_columns`` ... ``drop_columns``).
    split : SplitSpec
        How the rows are cut into folds (shuffled, grouped or in time).
    notes : tuple of str
        What the preparation did to the data that the user should hear of
        (rows dropped, constant columns left out).
    """

    X: object
    y: np.ndarray
    task: str
    kind: str
    roles: dict | None
    columns: dict
    split: SplitSpec = SplitSpec()
    notes: tuple = ()


def prepare_comparison(
    X,
    y,
    *,
    task="auto",
    cv=5,
    label=None,
    text_columns=None,
    categorical_columns=None,
    numeric_columns=None,
    drop_columns=None,
    time_column=None,
    group_column=None,
):
    """Check a comparison's data once: rows, target, task, data kind, column roles and split.

    :func:`compare_embedders` takes the result in place of ``X`` (with
    ``y=None``) and skips these steps, so a caller that needs the task or the
    roles first (the ``skembed compare`` command prints them before the
    run) prepares once.

    Parameters
    ----------
    X : list of str, pandas.DataFrame or array of shape (n_rows, n_features)
        The data, as in :func:`compare_embedders`.
    y : array-like of shape (n_rows,)
        Class labels or a numeric target.
    task : {"auto", "classification", "regression"}, default="auto"
        As in :func:`compare_embedders`.
    cv : int or cross-validation splitter, default=5
        Folds; the classes and targets are checked against it.
    label : str or None, default=None
        The label column's name, only to refuse it as a feature.
    text_columns, categorical_columns, numeric_columns, drop_columns : list of str or None
        Roles forced on columns of a DataFrame ``X`` (:func:`detect_roles`).
    time_column, group_column : str or None, default=None
        A column of a DataFrame ``X`` to split by, as in :func:`compare_embedders`.

    Returns
    -------
    prepared : PreparedComparison
        ``X`` (documents, or the table with roles applied), ``y`` (str labels
        or float targets, rows with a missing label dropped with a
        ``UserWarning``), ``task``, ``kind`` (``"text"``, ``"tabular"`` or
        ``"mixed"``), ``roles`` (a table), the forced ``columns``, the
        ``split`` and the ``notes``.

    Raises
    ------
    ValueError
        As :func:`compare_embedders` for bad data.

    Examples
    --------
    >>> from skembed.model_selection import prepare_comparison
    >>> p = prepare_comparison(["a b", "c d", "a c", "b d"], [1.5, 2.0, 3.5, 4.25], cv=2)
    >>> p.task, p.kind, p.y.dtype.kind, p.split.kind
    ('regression', 'text', 'f', 'shuffle')
    """
    columns = dict(
        text_columns=text_columns,
        categorical_columns=categorical_columns,
        numeric_columns=numeric_columns,
        drop_columns=drop_columns,
    )
    if _n_rows(X) != len(y):
        raise ValueError(f"X has {_n_rows(X)} rows but y has {len(y)}.")
    notes = []
    split = SplitSpec()
    if time_column is not None or group_column is not None:
        taken = split_column(X, time_column=time_column, group_column=group_column)
        X, y, split = _keep_rows(taken.frame, y, taken.spec, taken.keep)
        notes += [taken.note] if taken.note else []
    X, y, split = _with_labels(X, y, split)
    task, y = _checked_target(y, task, cv)
    roles, kind = None, "tabular" if np.ndim(X) == 2 else "text"
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        X, roles, kind, dropped = _table(X, y, label, columns)
        notes += _constant_note(dropped)
    elif any(columns.values()):
        raise ValueError("Column roles need a pandas.DataFrame X with named columns.")
    return PreparedComparison(X, y, task, kind, roles, columns, split, tuple(notes))


def _keep_rows(X, y, split, keep):
    """``X``, ``y`` and the split of the rows where ``keep`` is true."""
    if keep.all():
        return X, y, split
    idx = np.flatnonzero(keep)
    return _take(X, idx), np.asarray(y, dtype=object)[idx], split.take(idx)


def _with_labels(X, y, split):
    """The rows that have a label (the others dropped with a ``UserWarning``)."""
    keep, dropped = usable_rows(X, y)
    if not keep.all():
        warnings.warn(
            f"Dropping {dropped['missing label']} rows with a missing label.",
            UserWarning,
            stacklevel=4,
        )
    return _keep_rows(X, y, split, keep)


def _checked_target(y, task, cv):
    """The task (inferred for ``"auto"``) and ``y`` checked for it against ``cv``."""
    if task not in ("auto", "classification", "regression"):
        raise ValueError(f"task must be 'auto', 'classification' or 'regression', got {task!r}.")
    task = infer_task(y) if task == "auto" else task
    if task == "regression":
        return task, check_regression_data(y, cv)
    y = np.asarray(y, dtype=object).astype(str)
    check_classification_data(y, cv)
    return task, y


def _table(X, y, label, columns):
    """A table's roles applied: ``(X, roles, kind, constant columns left out)``."""
    roles = detect_roles(X, label=label, **columns)
    forced = {c for role in ("categorical", "numeric") for c in columns[f"{role}_columns"] or ()}
    constant = [
        c
        for role in ("categorical", "numeric", "datetime")
        for c in roles[role]
        if c not in forced and X[c].nunique(dropna=True) < 2
    ]
    for role in ("categorical", "numeric", "datetime"):
        roles[role] = [c for c in roles[role] if c not in constant]
    roles["dropped"] = [c for c in X.columns if c in {*roles["dropped"], *constant}]
    X = prepare_frame(X, roles).reset_index(drop=True)
    warn_wide_categoricals(X, roles, len(y))
    kind = "mixed" if roles["text"] else "tabular"
    if kind == "mixed" and len(X.columns) == 1:  # one text column: the plain text mode
        X, kind = X.iloc[:, 0].tolist(), "text"
    return X, roles, kind, constant


def _constant_note(constant):
    if not constant:
        return []
    return [
        f"left out {len(constant)} constant column{'s' if len(constant) > 1 else ''} "
        f"({', '.join(map(str, constant))}): one value in every row tells no row apart"
    ]


class EmbedderRow(NamedTuple):
    """One row of the comparison: an embedder and the grid its candidates come from.

    Parameters
    ----------
    embedder : estimator or None
        The unfitted embedder (``None``: a table's ``none`` row).
    grid : dict
        Its parameter grid (the embedder's own parameter names).
    description : str
        One line for the leaderboard.
    wrap : callable or None
        Turns the embedder into its row of a mixed table (:func:`table_embedder`).
    """

    embedder: object
    grid: dict
    description: str
    wrap: object

    def candidate(self, params):
        """The unfitted estimator of the candidate ``params``, wrapped for a table."""
        from sklearn.base import clone

        est = clone(self.embedder).set_params(**params) if self.embedder is not None else None
        return self.wrap(est) if self.wrap is not None else est


def _rows(embedders, prepared, **shared):
    """``{name: EmbedderRow}``, the rows that support the prepared data's task.

    A mixed table always gets its ``none`` row (the other columns alone),
    named or not, so that every text row's ``delta_vs_none`` is filled.
    """
    kind, task = prepared.kind, prepared.task
    if kind == "mixed":
        rows = _resolve_table_rows(embedders, prepared.roles, **shared)
        if "none" not in rows and any(prepared.roles[r] for r in ("categorical", "numeric")):
            rows.update(_resolve_table_rows(["none"], prepared.roles, **shared))
    else:
        rows = {n: (*v, None) for n, v in _resolve_embedders(embedders, kind, **shared).items()}
    for name in list(rows):
        spec = EMBEDDERS.get(name)
        if spec is None or task in spec.tasks:
            continue
        if embedders is None:
            del rows[name]
        else:
            raise ValueError(f"Embedder {name!r} does not support {task}: drop it from the list.")
    return {name: EmbedderRow(*row) for name, row in rows.items()}


def _row_tasks(name, row, n_folds):
    """The fold tasks of one row: every candidate of its grid on every fold."""
    from sklearn.model_selection import ParameterGrid

    return [
        FoldTask(name, row.candidate(params), params, k)
        for params in ParameterGrid(row.grid)
        for k in range(n_folds)
    ]


def _warn_failed(tasks, outcomes):
    """Warn once per fold whose embedder fit raised: its scores are NaN."""
    for task, outcome in zip(tasks, outcomes, strict=True):
        if outcome.failed:
            warnings.warn(
                f"Embedder {task.name} {task.params} failed on fold {task.fold} "
                f"({outcome.error}): its scores are NaN.",
                UserWarning,
                stacklevel=4,
            )


def _by_candidate(tasks, outcomes):
    """``[(params, [outcome per fold])]`` of one row's tasks, in grid order."""
    grouped = {}
    for task, outcome in zip(tasks, outcomes, strict=True):
        grouped.setdefault(id(task.params), (task.params, []))[1].append(outcome)
    return list(grouped.values())


def _transform_rate(row, params, outcomes, setting, roles):
    """Held-out rows/s of a candidate's ``transform``, its embedding cache left out."""
    if any(o.failed for o in outcomes):
        return float("nan")
    if row.embedder is not None and row.embedder.get_params().get("cache") is not None:
        from sklearn.base import clone

        one = clone(row.embedder).set_params(**params)
        train, test = setting.folds[0]
        X_tr, X_te = _take(setting.X, train), _take(setting.X, test)
        if roles is not None:  # a mixed table: time the first text column
            X_tr, X_te = X_tr[roles["text"][0]].tolist(), X_te[roles["text"][0]].tolist()
        return _cache_free_rate(one, X_tr, X_te)
    seconds = sum(o.transform_s for o in outcomes)
    return sum(len(test) for _, test in setting.folds) / max(seconds, 1e-9)


def _text_only_score(outcomes):
    """A mixed row's best mean score of its text columns alone, or NaN."""
    alone = [o.text_only for o in outcomes]
    if not alone or any(a is None for a in alone):
        return float("nan")
    return max(float(np.mean([a[v] for a in alone])) for v in alone[0])


class CandidateCommon(NamedTuple):
    """What every record of one candidate shares: the downstream grid, its rate, text alone."""

    key: str
    values: list
    rate: float
    text_only: float


def _candidate_records(name, description, params, outcomes, common):
    """One record (a ``cv_results_`` row) per downstream value of one candidate."""
    # the downstream parameters of a fold that did not fail (a failed fold has none)
    downstream = next(
        (list(o.per_value) for o in outcomes if o.per_value),
        [((common.key, v),) for v in common.values],
    )
    recon = [o.recon for o in outcomes if o.recon is not None]
    records = []
    for value in downstream:
        scores = [o.per_value.get(value, NAN_SCORES) for o in outcomes]
        test = [s.test for s in scores]
        rec = {"embedder": name, "description": description, "params": {**params, **dict(value)}}
        rec.update({f"split{k}_test_score": v for k, v in enumerate(test)})
        rec.update(
            mean_test_score=float(np.mean(test)),
            std_test_score=float(np.std(test)),
            mean_fit_time=float(np.mean([s.fit for s in scores])),
            std_fit_time=float(np.std([s.fit for s in scores])),
            mean_embed_fit_time=float(np.mean([o.embed_s for o in outcomes])),
            mean_downstream_fit_time=float(np.mean([o.downstream_s for o in outcomes])),
            mean_score_time=float(np.mean([s.score for s in scores])),
            transform_rows_per_s=float(common.rate),
            n_features_out=int(outcomes[-1].n_features_out),
            mean_reconstruction_error=float(np.mean(recon)) if recon else float("nan"),
            fit_peak_memory_mb=float(np.max([o.peak_mb for o in outcomes])),
            pipeline_size_mb=float(outcomes[0].size_mb),
            sparse_output=bool(outcomes[-1].sparse),
            text_only_score=common.text_only,
        )
        records.append(rec)
    return records


def _row_records(name, row, tasks, outcomes, setting, roles):
    """The records of every candidate of one row, in grid order."""
    key, values = downstream_values(setting.task)
    records = []
    for params, folds in _by_candidate(tasks, outcomes):
        common = CandidateCommon(
            key=key,
            values=values,
            rate=_transform_rate(row, params, folds, setting, roles),
            text_only=_text_only_score(folds),
        )
        records += _candidate_records(name, row.description, params, folds, common)
    return records


def _best_record(records):
    """The record with the highest mean score (the first of ties; NaN scores last)."""
    scores = [-np.inf if np.isnan(r["mean_test_score"]) else r["mean_test_score"] for r in records]
    return records[int(np.argmax(scores))]


def _embedding_seconds(outcomes):
    """``"12.3 s embedding"`` of a row's fold fits that ran, saying which failed.

    A failed fold has no time (NaN): the sum is over the others, and the line
    says how many fold fits failed, or ``"failed on every fold"``.
    """
    ran = [o for o in outcomes if not o.failed]
    if not ran:
        return "failed on every fold: see the warnings above"
    seconds = sum(o.embed_s + o.transform_s for o in ran)
    failed = len(outcomes) - len(ran)
    return f"{seconds:.1f} s embedding" + (
        f"; {failed} of {len(outcomes)} fold fits failed" if failed else ""
    )


def _print_row(name, records, best, outcomes, scoring, progress):
    """The lines of a finished row: each candidate (``verbose >= 2``), then its best."""
    if progress.verbose >= 2:
        for rec in records:
            progress.say(
                f"    {name} {rec['params']}: "
                f"{rec['mean_test_score']:.4f} ± {rec['std_test_score']:.4f}"
            )
    progress.say(
        f"  {name:<12} {scoring if isinstance(scoring, str) else 'score'} "
        f"{best['mean_test_score']:.4f} ± {best['std_test_score']:.4f}"
        f"  ({_embedding_seconds(outcomes)})"
    )


def _reference(y, task):
    """Score of the trivial model: the majority-class rate, or R² 0 of predicting the mean."""
    if task == "regression":
        return 0.0
    _, counts = np.unique(y, return_counts=True)
    return float(counts.max() / counts.sum())


class RowResult(NamedTuple):
    """A finished row: its records and the parameters of its best one."""

    records: list
    best_params: dict


def _slow_note(name, row):
    """The registry's note on a row that is slow on the CPU, when it will run on the CPU."""
    spec = EMBEDDERS.get(name)
    if spec is None or not spec.slow_on_cpu or row.embedder is None:
        return None
    from ..utils._compute import resolve_device

    device = row.embedder.get_params().get("device", "cpu")
    try:
        on_cpu = resolve_device(device) == "cpu"
    except ValueError:  # the fit will say which device is missing
        return None
    return spec.slow_on_cpu if on_cpu else None


def _run_row(name, row, tasks, stream, progress):
    """The outcomes of one row's tasks, advancing the progress bar with each."""
    progress.start_row(name, len(tasks), _slow_note(name, row))
    outcomes = []
    while len(outcomes) < len(tasks):
        outcomes.append(next(stream))
        progress.fit_done(name, len(outcomes), len(tasks))
    return outcomes


def _cross_validate(rows, setting, scheduler, scoring, verbose, roles):
    """Run every row's fold tasks; ``({name: RowResult}, interrupted)`` in the rows' order.

    The rows' tasks are one stream (all sent at once to a cluster); each row's
    records are made, and its line printed, as soon as its folds are done.
    A ``KeyboardInterrupt`` stops the run: the rows finished before it are
    returned with ``interrupted=True``.
    """
    n_folds = len(setting.folds)
    tasks = {name: _row_tasks(name, row, n_folds) for name, row in rows.items()}
    n_tasks = sum(map(len, tasks.values()))
    started = time.perf_counter()
    progress = CompareProgress(n_tasks, verbose)
    progress.say(f"cross-validating {len(rows)} rows: {n_tasks} fits (candidates x folds)")
    stream = _run_fold_tasks([t for row in tasks.values() for t in row], setting, scheduler)
    results = {}
    try:
        for name, row in rows.items():
            outcomes = _run_row(name, row, tasks[name], stream, progress)
            _warn_failed(tasks[name], outcomes)
            with limit_threads(setting.n_jobs), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
                records = _row_records(name, row, tasks[name], outcomes, setting, roles)
            best = _best_record(records)
            results[name] = RowResult(records, best["params"])  # kept before it is shown
            _print_row(name, records, best, outcomes, scoring, progress)
    except KeyboardInterrupt:
        stream.close()  # a cluster's tasks are cancelled with its client
        return results, True
    finally:
        progress.close()
    if scheduler is not None:
        progress.say(
            f"  ({n_tasks} tasks on the cluster: {time.perf_counter() - started:.1f} s wall)"
        )
    return results, False


def _results_frame(rows_done, prepared, scoring):
    """The ``cv_results_``-style DataFrame of every record, ranked, with its ``attrs``."""
    import pandas as pd

    records = [rec for row in rows_done.values() for rec in row.records]
    results = pd.DataFrame.from_records(records)
    results["rank_test_score"] = (
        results["mean_test_score"].rank(method="min", ascending=False, na_option="bottom")
    ).astype(int)
    description = downstream_description(prepared.task, table=prepared.kind == "mixed")
    results["scoring"] = scoring if isinstance(scoring, str) else repr(scoring)
    results["task"] = prepared.task
    results["downstream"] = description
    none = results.loc[results["embedder"] == "none", "mean_test_score"]
    results["delta_vs_none"] = (
        results["mean_test_score"] - none.max() if len(none) else float("nan")
    )
    results.attrs.update(
        downstream=description,
        task=prepared.task,
        reference=_reference(prepared.y, prepared.task),
    )
    if prepared.roles is not None:
        results.attrs["roles"] = prepared.roles
    return results


def _refit_best(rows, best_params, results, prepared):
    """``{name: Pipeline}`` of each row's best candidate refitted on all rows, best first."""
    best = {}
    for name in leaderboard(results)["embedder"]:
        row = rows[name]
        pipeline = _refit(
            row.embedder, best_params[name], prepared.X, prepared.y, prepared.task, row.wrap
        )
        if prepared.roles is not None and prepared.kind != "text":
            from sklearn.pipeline import Pipeline

            # the pipeline takes the table as given; a class, not a function: skops can save it
            pipeline = Pipeline([("columns", PrepareFrame(prepared.roles)), *pipeline.steps])
        best[name] = pipeline
    return best


def compare_embedders(
    X,
    y,
    embedders=None,
    *,
    task="auto",
    cv=5,
    scoring=None,
    n_jobs=None,
    random_state=0,
    n_components=2,
    text_columns=None,
    categorical_columns=None,
    numeric_columns=None,
    drop_columns=None,
    verbose=0,
    return_best=False,
    scheduler=None,
    compress=False,
    time_column=None,
    group_column=None,
    device=None,
):
    """Cross-validate embedders under one fair downstream model.

    For each embedder and each candidate of its parameter grid, and for each
    of ``cv`` folds: fit the embedder on the training rows, then fit the
    downstream model (:func:`downstream_classifier` for a class label,
    :func:`downstream_regressor` for a numeric target) on their embedding for
    every value of its regularisation (``clf__C`` in :data:`DOWNSTREAM_CS`
    or ``reg__alpha`` in :data:`DOWNSTREAM_ALPHAS`, one warm-started path,
    single-threaded) and score the held-out rows. Every row uses the same
    folds and the same downstream model, so the scores differ only by the embedding.

    Three shapes of data: a list of documents (text embedders); a table
    without text (tabular embedders); a table with text columns among
    others (*mixed*: each row embeds every text column with one text
    embedder, through a clone per column, and treats the other columns the
    same way in every row, :func:`other_columns_transformer`; the ``none``
    row is the other columns alone, tabular embedders apply to the non-text
    columns). Column roles are detected (:func:`detect_roles`) unless named.
    On a mixed table the downstream model sees the other columns as
    prepared (numeric standardised, one-hot 0/1, not rescaled) and, in a
    text row, each text block scaled to ``text_weight**2`` times their total
    variance, ``text_weight`` in :data:`TEXT_WEIGHTS` searched with ``C``
    or ``alpha``, so a wide text block cannot crowd out the other columns.

    Parameters
    ----------
    X : list of str, pandas.DataFrame, array of shape (n_rows, n_features) or PreparedComparison
        The data, ``n_rows`` long; or the result of :func:`prepare_comparison`
        (then ``y``, ``task`` and the ``*_columns`` are taken from it).
    y : array-like of shape (n_rows,) or None
        Class labels or a numeric target. Rows with a missing value are
        dropped with a ``UserWarning``. ``None`` with a prepared ``X``.
    embedders : None, list of str or dict, default=None
        ``None``: every available default embedder of the data's kind (see
        :data:`EMBEDDERS`; for a mixed table the text embedders and
        ``"none"``); a list of names of :data:`EMBEDDERS` (and ``"none"``);
        or a dict ``name -> estimator`` or ``name -> (estimator, param_grid)``
        with grid keys the estimator's own parameter names (text embedders of
        a mixed table).
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: regression for floating-point targets and integers with
        more than 20 distinct values (:func:`infer_task`).
    cv : int or cross-validation splitter, default=5
        Folds (stratified for classification, plain ``KFold`` for
        regression; shuffled with ``random_state``), or a splitter. With
        ``time_column`` or ``group_column``, the number of folds of that split.
    scoring : str, callable or None, default=None
        A scikit-learn scorer name or callable ``scorer(estimator, X, y)``;
        ``None``: ``"accuracy"`` (classification) or ``"r2"`` (regression).
    n_jobs : int or None, default=None
        Threads each embedder may use: set on every default embedder that
        takes ``n_jobs``, and the limit of the native thread pools (BLAS,
        OpenMP, torch, numba) of the embedders. The downstream models are
        fitted single-threaded. ``None`` leaves each embedder's default.
    random_state : int, default=0
        Seeds the folds and every default embedder.
    n_components : int, default=2
        Output width of the tabular default embedders (PCA, autoencoder, VAE).
    text_columns, categorical_columns, numeric_columns, drop_columns : list of str or None
        Roles forced on columns of a DataFrame ``X`` (:func:`detect_roles`).
    verbose : int, default=0
        0: silent; 1: the plan, a progress bar over the fold fits (on a
        terminal or in a notebook), a line per embedder as soon as its folds
        are done, and an estimate for a row that will be slow; 2: also a line
        per candidate.
    return_best : bool, default=False
        Also refit each embedder's best candidate (with the downstream
        model) on all rows and return the fitted pipelines.
    scheduler : str, distributed.Client or None, default=None
        ``None``: run here. An address (``"tcp://host:8786"``) or a client: send
        the candidates x folds to that Dask cluster (one task each; the
        data is sent to each worker once), each task limited to its
        worker's threads (and to ``n_jobs``, if given); the refit of
        ``return_best`` runs here (``pip install "skembed[dask]"``).
    compress : bool, default=False
        Also score compressed variants of the best dense row on the same
        folds (PCA truncation to a half and a quarter of the width, int8, a
        quarter in int8, binary; :mod:`skembed.compression`):
        ``results.attrs["compression"]`` holds the table's records (score
        kept, bytes per row, speed; :func:`format_compression`), or ``None``
        and ``results.attrs["compression_note"]`` the reason (a tabular-only
        comparison, or no dense row).
    time_column : str or None, default=None
        A column of a DataFrame ``X`` holding each row's time (numbers, dates,
        or strings that parse as dates): forward-chaining folds as
        scikit-learn's ``TimeSeriesSplit`` (train on the past, score the next
        block of time), with rows of equal time always on one side of a cut,
        so every fold scores rows strictly later than its training rows. The
        column is not a feature; rows without a time are dropped (a note).
    group_column : str or None, default=None
        A column of a DataFrame ``X`` naming each row's group (a user, a
        patient, a document's source): no group is split across folds
        (``StratifiedGroupKFold`` for classes, ``GroupKFold`` for a target).
        The column is not a feature; rows without a group are dropped (a note).
        Not together with ``time_column``.
    device : str or None, default=None
        Set on every default embedder that takes a ``device`` (``"cpu"``,
        ``"cuda"``, ...); ``None`` leaves each embedder's default. A device
        this process does not have is refused before any work.

    Returns
    -------
    results : pandas.DataFrame
        One row per embedder, candidate and downstream value, with the
        columns of scikit-learn's ``cv_results_`` — ``params`` (the
        embedder's grid parameters, ``text_weight`` on a table's text rows,
        and ``clf__C`` or ``reg__alpha``),
        ``split<k>_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score`` (1 = best), ``mean_fit_time``/``std_fit_time``
        (seconds to fit the embedder and the downstream path on one
        training fold), ``mean_score_time`` — and ``embedder``,
        ``description``, ``mean_embed_fit_time`` and
        ``mean_downstream_fit_time`` (the two shares of ``mean_fit_time``),
        ``transform_rows_per_s`` (held-out rows, no embedding cache),
        ``n_features_out``, ``fit_peak_memory_mb`` (the largest rise of the
        process's resident memory during one fold's embedder fit; Linux, NaN
        elsewhere), ``pipeline_size_mb`` (the first fold's fitted embedder
        and downstream model, as many bytes as ``save_pipeline`` writes), ``sparse_output``,
        ``mean_reconstruction_error`` (tabular embedders; NaN otherwise),
        ``text_only_score`` (a mixed table's row on its text columns alone,
        from the same fitted blocks, its best downstream value; NaN
        otherwise), ``delta_vs_none`` (the score minus the ``none`` row's
        best, what the text adds; NaN without a ``none`` row),
        ``scoring``, ``task`` and ``downstream``. ``results.attrs`` holds
        ``downstream``, ``task``, ``reference`` (the majority-class rate, or
        0 for R²), ``cv`` (the folds in words), ``notes`` (rows or columns
        the preparation left out), ``interrupted`` (``False``, or how many
        rows had finished) and ``roles`` (a DataFrame ``X``).
    best_pipelines : dict of str to sklearn.pipeline.Pipeline
        Only with ``return_best=True``: ``embedder name -> Pipeline(embed,
        scale, clf|reg)`` of its best candidate refitted on all rows, best
        embedder first. For a DataFrame ``X`` the first step, ``columns``,
        applies the roles (:func:`prepare_frame`), so the pipelines take the
        table as given (a table of one text column: the documents).

    Raises
    ------
    ValueError
        If ``X`` and ``y`` differ in length, there are no rows, one class or
        one target value, ``cv < 2``, a class with fewer rows than ``cv``, an
        unknown embedder or column, a column missing in every row, a constant
        text column, or the label named as a feature.
        Also: a ``time_column`` of neither numbers nor dates, fewer distinct
        times than ``cv + 1``, a ``group_column`` with fewer groups than
        ``cv``, both split columns, a training fold with a single class, or a
        ``device`` this process does not have.
    ComparisonInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``) after at least one row finished:
        its ``results`` hold the finished rows. Before that, the
        ``KeyboardInterrupt`` itself.
    ConnectionError
        If no Dask scheduler answers at ``scheduler`` within 5 s.
    RuntimeError
        If a task fails on the cluster: the message names the candidate, the
        fold and the cause.

    See Also
    --------
    leaderboard : the best row of each embedder.
    format_leaderboard : the leaderboard as text.
    save_pipeline, load_pipeline : keep the winner.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import TfidfVectorizer
    >>> from skembed.model_selection import compare_embedders, leaderboard
    >>> docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    >>> labels = ["money", "money", "farm", "farm"] * 3
    >>> results = compare_embedders(docs, labels, {"tfidf": TfidfVectorizer()}, cv=2)
    >>> best = leaderboard(results).iloc[0]
    >>> str(best["embedder"]), float(best["mean_test_score"]), int(best["rank_test_score"])
    ('tfidf', 1.0, 1)
    >>> best["params"], results.attrs["reference"]
    ({'clf__C': 0.0001}, 0.5)
    """
    columns = dict(
        text_columns=text_columns,
        categorical_columns=categorical_columns,
        numeric_columns=numeric_columns,
        drop_columns=drop_columns,
        time_column=time_column,
        group_column=group_column,
    )
    prepared = _as_prepared(X, y, task, cv, columns)
    if device is not None:
        from ..utils._compute import resolve_device

        resolve_device(device)  # a missing device fails now, before any work
    scoring = scoring or ("r2" if prepared.task == "regression" else "accuracy")
    shared = dict(n_components=n_components, random_state=random_state, n_jobs=n_jobs)
    rows = _rows(embedders, prepared, n_rows=len(prepared.y), device=device, **shared)
    setting = _fold_setting(prepared, cv, scoring, n_jobs, random_state)
    roles = prepared.roles if prepared.kind == "mixed" else None
    rows_done, interrupted = _cross_validate(rows, setting, scheduler, scoring, verbose, roles)
    if not rows_done:
        raise KeyboardInterrupt
    best_params = {name: row.best_params for name, row in rows_done.items()}
    with limit_threads(n_jobs), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
        results = _results_frame(rows_done, prepared, scoring)
        results.attrs.update(cv=setting.description, notes=list(prepared.notes))
        results.attrs["interrupted"] = (
            interrupted and f"{len(rows_done)} of {len(rows)} rows finished"
        )
        if interrupted:
            raise ComparisonInterrupted(results)
        if compress:
            _add_compression(results, rows, best_params, setting, random_state)
        if not return_best:
            return results
        return results, _refit_best(rows, best_params, results, prepared)


def _as_prepared(X, y, task, cv, columns):
    """``X`` when it is a :class:`PreparedComparison`, else its preparation (notes warned)."""
    if isinstance(X, PreparedComparison):
        return X
    prepared = prepare_comparison(X, y, task=task, cv=cv, **columns)
    for note in prepared.notes:
        warnings.warn(note[0].upper() + note[1:] + ".", UserWarning, stacklevel=3)
    return prepared


def _fold_setting(prepared, cv, scoring, n_jobs, random_state):
    """The :class:`FoldSetting` of a comparison: its folds and scorer over the prepared data."""
    from sklearn.metrics import get_scorer

    folds, description = make_folds(prepared.split, cv, prepared.task, prepared.y, random_state)
    return FoldSetting(
        X=prepared.X,
        y=prepared.y,
        folds=folds,
        scorer=get_scorer(scoring) if isinstance(scoring, str) else scoring,
        kind=prepared.kind,
        task=prepared.task,
        n_jobs=n_jobs,
        description=description,
    )


def _add_compression(results, rows, best_params, setting, random_state):
    """Score the compressed variants of the best dense row into ``results.attrs``."""
    table, note = compress_best(rows, best_params, results, setting, random_state)
    records = None if table is None else table.to_dict("records")
    results.attrs.update(compression=records, compression_note=note)

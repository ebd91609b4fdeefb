"""``compare_embedders``: cross-validate embedders under one fair downstream model."""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..utils._compute import limit_threads
from ._columns import PrepareFrame, detect_roles, prepare_frame, warn_wide_categoricals
from ._compress import compress_best
from ._data import _n_rows, _take, check_classification_data, usable_rows
from ._downstream import _refit, downstream_description, downstream_values
from ._registry import EMBEDDERS, _resolve_embedders, _resolve_table_rows
from ._report import leaderboard
from ._runner import _cache_free_rate, _run_fold_tasks
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
    """

    X: object
    y: np.ndarray
    task: str
    kind: str
    roles: dict | None
    columns: dict


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
):
    """Check a comparison's data once: rows, target, task, data kind and column roles.

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

    Returns
    -------
    prepared : PreparedComparison
        ``X`` (documents, or the table with roles applied), ``y`` (str labels
        or float targets, rows with a missing label dropped with a
        ``UserWarning``), ``task``, ``kind`` (``"text"``, ``"tabular"`` or
        ``"mixed"``), ``roles`` (a table) and the forced ``columns``.

    Raises
    ------
    ValueError
        As :func:`compare_embedders` for bad data.

    Examples
    --------
    >>> from skembed.model_selection import prepare_comparison
    >>> p = prepare_comparison(["a b", "c d", "a c", "b d"], [1.5, 2.0, 3.5, 4.25], cv=2)
    >>> p.task, p.kind, p.y.dtype.kind
    ('regression', 'text', 'f')
    """
    columns = dict(
        text_columns=text_columns,
        categorical_columns=categorical_columns,
        numeric_columns=numeric_columns,
        drop_columns=drop_columns,
    )
    if _n_rows(X) != len(y):
        raise ValueError(f"X has {_n_rows(X)} rows but y has {len(y)}.")
    keep, dropped = usable_rows(X, y)
    if not keep.all():
        warnings.warn(
            f"Dropping {dropped['missing label']} rows with a missing label.",
            UserWarning,
            stacklevel=3,
        )
        idx = np.flatnonzero(keep)
        X, y = _take(X, idx), np.asarray(y, dtype=object)[idx]
    if task not in ("auto", "classification", "regression"):
        raise ValueError(f"task must be 'auto', 'classification' or 'regression', got {task!r}.")
    task = infer_task(y) if task == "auto" else task
    if task == "regression":
        y = check_regression_data(y, cv)
    else:
        y = np.asarray(y, dtype=object).astype(str)
        check_classification_data(y, cv)
    roles = None
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        roles = detect_roles(X, label=label, **columns)
        X = prepare_frame(X, roles).reset_index(drop=True)
        warn_wide_categoricals(X, roles, len(y))
        kind = "mixed" if roles["text"] else "tabular"
        if kind == "mixed" and len(X.columns) == 1:  # one text column: the plain text mode
            X, kind = X.iloc[:, 0].tolist(), "text"
    elif any(columns.values()):
        raise ValueError("Column roles need a pandas.DataFrame X with named columns.")
    else:
        kind = "tabular" if np.ndim(X) == 2 else "text"
    return PreparedComparison(X, y, task, kind, roles, columns)


def _rows(embedders, kind, roles, task, **shared):
    """``{name: (embedder, grid, description, wrap)}``, the rows that support ``task``."""
    if kind == "mixed":
        rows = _resolve_table_rows(embedders, roles, **shared)
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
    return rows


def _records(chosen, tasks, outcomes, X, folds, task, verbose, scoring, roles):
    """One record per candidate x downstream value; ``(records, best params per embedder)``."""
    from sklearn.base import clone

    records, best_params, by_candidate = [], {}, {}
    for (name, est, params, _), out in zip(tasks, outcomes, strict=True):
        by_candidate.setdefault((name, id(params)), (name, est, params, []))[3].append(out)
    key, values = downstream_values(task)
    for name, (embedder, _, description, _) in chosen.items():
        first = len(records)
        for cand_name, _est, params, fold_outs in by_candidate.values():
            if cand_name != name:
                continue
            embed_s = [o["embed_s"] for o in fold_outs]
            down_s = [o["downstream_s"] for o in fold_outs]
            transform_s = [o["transform_s"] for o in fold_outs]
            recon = [o["recon"] for o in fold_outs if o["recon"] is not None]
            if np.isnan(embed_s).any():
                rate = float("nan")
            elif embedder is not None and embedder.get_params().get("cache") is not None:
                one = clone(embedder).set_params(**params)
                X_tr, X_te = _take(X, folds[0][0]), _take(X, folds[0][1])
                if roles is not None:  # a mixed table: time the first text column
                    X_tr, X_te = X_tr[roles["text"][0]].tolist(), X_te[roles["text"][0]].tolist()
                rate = _cache_free_rate(one, X_tr, X_te)
            else:
                rate = sum(len(test) for _, test in folds) / max(sum(transform_s), 1e-9)
            alone = [o.get("text_only") for o in fold_outs]
            alone_by_value = (
                {v: float(np.mean([a[v] for a in alone])) for v in alone[0]}
                if alone and all(a is not None for a in alone)
                else {}
            )
            text_only = max(alone_by_value.values()) if alone_by_value else float("nan")
            # the downstream parameters of a fold that did not fail (a failed fold has none)
            downstream = next(
                (list(o["per_value"]) for o in fold_outs if o["per_value"]),
                [((key, v),) for v in values],
            )
            for value in downstream:
                acc = {
                    k: [o["per_value"].get(value, _NAN_SCORES)[k] for o in fold_outs]
                    for k in ("test", "fit", "score")
                }
                rec = {
                    "embedder": name,
                    "description": description,
                    "params": {**params, **dict(value)},
                }
                rec.update({f"split{k}_test_score": v for k, v in enumerate(acc["test"])})
                rec.update(
                    mean_test_score=float(np.mean(acc["test"])),
                    std_test_score=float(np.std(acc["test"])),
                    mean_fit_time=float(np.mean(acc["fit"])),
                    std_fit_time=float(np.std(acc["fit"])),
                    mean_embed_fit_time=float(np.mean(embed_s)),
                    mean_downstream_fit_time=float(np.mean(down_s)),
                    mean_score_time=float(np.mean(acc["score"])),
                    transform_rows_per_s=float(rate),
                    n_features_out=int(fold_outs[-1]["n_features_out"]),
                    mean_reconstruction_error=float(np.mean(recon)) if recon else float("nan"),
                    fit_peak_memory_mb=float(np.max([o["peak_mb"] for o in fold_outs])),
                    pipeline_size_mb=float(fold_outs[0]["size_mb"]),
                    sparse_output=bool(fold_outs[-1]["sparse"]),
                    text_only_score=text_only,
                )
                records.append(rec)
                if verbose >= 2:
                    print(
                        f"    {name} {rec['params']}: "
                        f"{rec['mean_test_score']:.4f} ± {rec['std_test_score']:.4f}",
                        flush=True,
                    )
        own = records[first:]
        scores = [
            r["mean_test_score"] if r["mean_test_score"] == r["mean_test_score"] else -np.inf
            for r in own
        ]
        top = int(np.argmax(scores))  # first of ties
        best_params[name] = own[top]["params"]
        if verbose >= 1:
            print(
                f"  {name:<12} {scoring if isinstance(scoring, str) else 'score'} "
                f"{own[top]['mean_test_score']:.4f} ± {own[top]['std_test_score']:.4f}"
                f"  ({_embedding_seconds(name, tasks, outcomes)})",
                flush=True,
            )
    return records, best_params


def _embedding_seconds(name, tasks, outcomes):
    """``"12.3 s embedding"`` of an embedder's fold fits that ran, saying which failed.

    A failed fold has no time (NaN): the sum is over the others, and the line
    says how many fold fits failed, or ``"failed on every fold"``.
    """
    mine = [o for (n, *_), o in zip(tasks, outcomes, strict=True) if n == name]
    ran = [o for o in mine if not o.get("failed")]
    if not ran:
        return "failed on every fold: see the warnings above"
    seconds = sum(o["embed_s"] + o["transform_s"] for o in ran)
    failed = len(mine) - len(ran)
    return f"{seconds:.1f} s embedding" + (
        f"; {failed} of {len(mine)} fold fits failed" if failed else ""
    )


#: the scores of a downstream value on a fold whose fit failed
_NAN_SCORES = dict(test=float("nan"), fit=float("nan"), score=float("nan"))


def _failed_as_nan(tasks, outcomes):
    """Fold outcomes with each failed fit (a ``ValueError``) warned about and scored NaN.

    A failed outcome has ``failed=True`` and no ``per_value``: the records
    take the downstream parameters from the candidate's other folds and
    score the failed ones NaN (:data:`_NAN_SCORES`).
    """
    nan = float("nan")
    out = []
    for (name, _, params, k), outcome in zip(tasks, outcomes, strict=True):
        if "error" in outcome:
            warnings.warn(
                f"Embedder {name} {params} failed on fold {k} ({outcome['error']}): "
                "its scores are NaN.",
                UserWarning,
                stacklevel=3,
            )
            outcome = dict(embed_s=nan, downstream_s=nan, transform_s=nan, recon=None)
            outcome.update(peak_mb=nan, size_mb=nan, sparse=False, text_only=None)
            outcome.update(n_features_out=0, per_value={}, failed=True)
        out.append(outcome)
    return out


def _reference(y, task):
    """Score of the trivial model: the majority-class rate, or R² 0 of predicting the mean."""
    if task == "regression":
        return 0.0
    _, counts = np.unique(y, return_counts=True)
    return float(counts.max() / counts.sum())


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
        regression; shuffled with ``random_state``), or a splitter.
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
        0: silent; 1: a line per embedder when it is done; 2: also a line per candidate.
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
        and downstream model, pickled), ``sparse_output``,
        ``mean_reconstruction_error`` (tabular embedders; NaN otherwise),
        ``text_only_score`` (a mixed table's row on its text columns alone,
        from the same fitted blocks, its best downstream value; NaN
        otherwise), ``delta_vs_none`` (the score minus the ``none`` row's
        best, what the text adds; NaN without a ``none`` row),
        ``scoring``, ``task`` and ``downstream``. ``results.attrs`` holds
        ``downstream``, ``task``, ``reference`` (the majority-class rate, or
        0 for R²) and ``roles`` (a DataFrame ``X``).
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
    import pandas as pd
    from sklearn.base import clone
    from sklearn.metrics import get_scorer
    from sklearn.model_selection import KFold, ParameterGrid, StratifiedKFold

    if not isinstance(X, PreparedComparison):
        X = prepare_comparison(
            X,
            y,
            task=task,
            cv=cv,
            text_columns=text_columns,
            categorical_columns=categorical_columns,
            numeric_columns=numeric_columns,
            drop_columns=drop_columns,
        )
    X, y, task, kind, roles = X.X, X.y, X.task, X.kind, X.roles
    scoring = scoring or ("r2" if task == "regression" else "accuracy")
    shared = dict(
        n_components=n_components, random_state=random_state, n_jobs=n_jobs, n_rows=len(y)
    )
    chosen = _rows(embedders, kind, roles, task, **shared)
    if isinstance(cv, numbers.Integral):
        split = StratifiedKFold if task == "classification" else KFold
        splitter = split(cv, shuffle=True, random_state=random_state)
    else:
        splitter = cv
    folds = list(splitter.split(np.zeros((len(y), 1)), y))
    scorer = get_scorer(scoring) if isinstance(scoring, str) else scoring

    def candidate(embedder, wrap, params):
        est = clone(embedder).set_params(**params) if embedder is not None else None
        return wrap(est) if wrap is not None else est

    # every candidate x fold is one task: run here one after another, or on the Dask cluster
    tasks = [
        (name, candidate(embedder, wrap, params), params, k)
        for name, (embedder, grid, _, wrap) in chosen.items()
        for params in ParameterGrid(grid)
        for k in range(len(folds))
    ]
    started = time.perf_counter()
    outcomes = _run_fold_tasks(tasks, X, y, folds, scorer, kind, n_jobs, scheduler, task)
    outcomes = _failed_as_nan(tasks, outcomes)
    with limit_threads(n_jobs), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories/words in CV folds
        records, best_params = _records(
            chosen,
            tasks,
            outcomes,
            X,
            folds,
            task,
            verbose,
            scoring,
            roles if kind == "mixed" else None,
        )
        if verbose >= 1 and scheduler is not None:
            print(
                f"  ({len(tasks)} tasks on the cluster: {time.perf_counter() - started:.1f} s wall)"
            )
        results = pd.DataFrame.from_records(records)
        results["rank_test_score"] = (
            results["mean_test_score"]
            .rank(method="min", ascending=False, na_option="bottom")
            .astype(int)
        )
        description = downstream_description(task, table=kind == "mixed")
        results["scoring"] = scoring if isinstance(scoring, str) else repr(scoring)
        results["task"] = task
        results["downstream"] = description
        none = results.loc[results["embedder"] == "none", "mean_test_score"]
        results["delta_vs_none"] = (
            results["mean_test_score"] - none.max() if len(none) else float("nan")
        )
        results.attrs.update(downstream=description, task=task, reference=_reference(y, task))
        if roles is not None:
            results.attrs["roles"] = roles
        if compress:
            table, note = compress_best(
                chosen, best_params, results, X, y, folds, scorer, task, kind, n_jobs, random_state
            )
            records = None if table is None else table.to_dict("records")
            results.attrs.update(compression=records, compression_note=note)
        if not return_best:
            return results
        best = {}
        for name in leaderboard(results)["embedder"]:
            embedder, _, _, wrap = chosen[name]
            best[name] = _refit(embedder, best_params[name], X, y, task, wrap)
            if roles is not None and kind != "text":  # the pipeline takes the table as given
                from sklearn.pipeline import Pipeline

                columns = PrepareFrame(roles)  # a class, not a function: skops can save it
                best[name] = Pipeline([("columns", columns), *best[name].steps])
    return results, best

"""``compare_embedders``: cross-validate embedders under one fair downstream model."""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np

from ..base import limit_threads
from ._data import _n_rows, _take, check_classification_data, usable_rows
from ._downstream import DOWNSTREAM_CS, DOWNSTREAM_DESCRIPTION, _refit
from ._registry import _resolve_embedders
from ._report import leaderboard
from ._runner import _cache_free_rate, _run_fold_tasks


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

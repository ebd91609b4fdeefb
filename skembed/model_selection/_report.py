"""The leaderboard: best row per embedder, as a table and as text."""

from __future__ import annotations

import math
import re

import numpy as np

from ._columns import format_roles
from ._downstream import DOWNSTREAM_DESCRIPTION


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
    board = order.drop_duplicates("embedder").reset_index(drop=True)
    board.attrs = dict(results.attrs)
    return board


def reference_line(results):
    """The trivial model's score in words, or ``""``: majority-class rate, or R² of the mean.

    Only for the default scorers (accuracy, r2), where the reference is known.
    """
    ref = results.attrs.get("reference")
    scoring = results["scoring"].iloc[0] if len(results) else ""
    if ref is None or scoring not in ("accuracy", "r2"):
        return ""
    if scoring == "r2":
        return f"reference: predicting the mean scores r2 {ref:.4f}"
    return f"reference: always predicting the majority class scores accuracy {ref:.4f}"


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
        The title; the column roles (tables); a line naming the task, the
        downstream model and scoring; the reference score (accuracy of the
        majority class, or R² 0 of predicting the mean); a header and one
        line per embedder: rank, embedder, mean ± std score, width, fit
        seconds (``mean_fit_time``: the embedder and the downstream path on
        one training fold), transform rows/s, the fit's peak memory and the
        fitted pipeline's size (MB), held-out reconstruction error (tabular
        only) and the best parameters.
    """
    import json

    board = leaderboard(results)
    recon = board["mean_reconstruction_error"].notna().any()
    ablation = "text_only_score" in board and board["text_only_score"].notna().any()
    width = max([10] + [len(n) + 2 for n in board["embedder"]])
    scoring = board["scoring"].iloc[0] if len(board) else "accuracy"
    task = results.attrs.get("task", "classification")
    downstream = results.attrs.get("downstream", DOWNSTREAM_DESCRIPTION)
    head = (
        f"{'rank':<5}{'embedder':<{width}}{scoring + ' (mean ± std)':<24}{'dim':>7}"
        f"{'fit s':>8}{'rows/s':>10}{'peak MB':>9}{'size MB':>9}"
        + (f"{'recon err':>11}" if recon else "")
        + (f"{'text alone':>11}{'vs none':>9}" if ablation else "")
        + "  best params"
    )
    lines = [title] if title else []
    if results.attrs.get("roles"):
        lines.append("columns: " + format_roles(results.attrs["roles"]))
    lines.append(f"task: {task}; downstream: {downstream}; scoring: {scoring}")
    if reference_line(results):
        lines.append(reference_line(results))
    if results.attrs.get("cv"):
        lines.append(f"folds: {results.attrs['cv']}")
    lines += [head, "-" * len(head)]
    if ablation:
        lines.insert(
            -2,
            "ablation: 'text alone' scores each row's text columns without the others (the "
            "same fitted blocks); 'vs none' is the row minus the 'none' row (other columns "
            "alone): what the text adds",
        )
    for i, r in enumerate(board.itertuples(index=False), start=1):
        line = (
            f"{i:<5}{r.embedder:<{width}}{f'{r.mean_test_score:.4f} ± {r.std_test_score:.4f}':<24}"
            f"{r.n_features_out:>7}{r.mean_fit_time:>8.2f}{r.transform_rows_per_s:>10.0f}"
            f"{_mb(getattr(r, 'fit_peak_memory_mb', None)):>9}"
            f"{_mb(getattr(r, 'pipeline_size_mb', None)):>9}"
        )
        if recon:
            err = r.mean_reconstruction_error
            line += f"{'-':>11}" if math.isnan(err) else f"{err:>11.4f}"
        if ablation:
            alone, delta = r.text_only_score, r.delta_vs_none
            line += f"{'-':>11}" if math.isnan(alone) else f"{alone:>11.4f}"
            line += f"{'-':>9}" if math.isnan(delta) else f"{delta:>+9.4f}"
        lines.append(line + f"  {json.dumps(r.params, default=str)}")
    return "\n".join(lines)


def _mb(value):
    """Megabytes for a fixed-width column: ``-`` when unknown, 2 decimals below 10."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def pareto_front(board):
    """Which rows no other row beats on both score and transform speed.

    Parameters
    ----------
    board : pandas.DataFrame
        :func:`leaderboard` (``mean_test_score`` and ``transform_rows_per_s``).

    Returns
    -------
    on_front : ndarray of shape (n_rows,), dtype bool
        ``True`` where no other row has a score and a speed at least as high,
        one of them strictly higher (rows with a NaN score or speed: ``False``).

    Examples
    --------
    >>> import pandas as pd
    >>> from skembed.model_selection import pareto_front
    >>> board = pd.DataFrame({"mean_test_score": [0.9, 0.8, 0.7, 0.85],
    ...                       "transform_rows_per_s": [10.0, 1000.0, 500.0, 5.0]})
    >>> pareto_front(board).tolist()
    [True, True, False, False]
    """
    score = board["mean_test_score"].to_numpy(dtype=float)
    speed = board["transform_rows_per_s"].to_numpy(dtype=float)
    ok = ~(np.isnan(score) | np.isnan(speed))
    on = np.zeros(len(board), dtype=bool)
    for i in np.flatnonzero(ok):
        at_least = ok & (score >= score[i]) & (speed >= speed[i])
        better = at_least & ((score > score[i]) | (speed > speed[i]))
        on[i] = not better.any()
    return on


_BUDGET = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(rows/s|ms|mb)\s*$", re.I)


def parse_budget(text):
    """Read a budget such as ``"1000rows/s"``, ``"2ms"``, ``"50MB"`` or ``"2ms,50MB"``.

    Parameters
    ----------
    text : str
        Comma-separated limits: ``<n>rows/s`` (transform at least ``n`` rows
        per second), ``<n>ms`` (at most ``n`` milliseconds per row, the
        same limit as ``1000/n`` rows/s) and ``<n>MB`` (the fitted
        pipeline at most ``n`` megabytes on disk).

    Returns
    -------
    budget : dict
        ``min_rows_per_s`` and/or ``max_size_mb``.

    Raises
    ------
    ValueError
        If a part is not one of the three forms, or a limit is not positive.

    Examples
    --------
    >>> from skembed.model_selection import parse_budget
    >>> parse_budget("2ms, 50MB")
    {'min_rows_per_s': 500.0, 'max_size_mb': 50.0}
    """
    budget = {}
    for part in str(text).split(","):
        match = _BUDGET.match(part)
        if match is None or float(match.group(1)) <= 0:
            raise ValueError(
                f"Budget part {part.strip()!r} is not understood: write a positive number "
                "followed by rows/s, ms (per row) or MB (on disk), e.g. '1000rows/s,50MB'."
            )
        value, unit = float(match.group(1)), match.group(2).lower()
        if unit == "mb":
            budget["max_size_mb"] = value
        else:
            rate = value if unit == "rows/s" else 1000.0 / value
            budget["min_rows_per_s"] = max(budget.get("min_rows_per_s", 0.0), rate)
    return budget


def best_within_budget(results, budget):
    """The best leaderboard row within ``budget``, or ``None`` and the row closest to it.

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`compare_embedders`.
    budget : str or dict
        A budget string (:func:`parse_budget`) or its dict.

    Returns
    -------
    best : pandas.Series or None
        The highest-scoring leaderboard row that meets every limit.
    message : str
        One line: the row chosen, or that none meets the budget and which row
        comes closest (the smallest factor by which a limit is missed).
    """
    budget = parse_budget(budget) if isinstance(budget, str) else dict(budget)
    board = leaderboard(results).dropna(subset=["mean_test_score"])
    need_rate = budget.get("min_rows_per_s", 0.0)
    max_mb = budget.get("max_size_mb", math.inf)
    rate = board["transform_rows_per_s"].to_numpy(dtype=float)
    size = board["pipeline_size_mb"].to_numpy(dtype=float)
    # how many times over the limit each row is (1 = within); NaN size counts as unknown (within)
    over = np.maximum(need_rate / np.where(rate > 0, rate, 1e-12), 1.0) * np.maximum(
        np.where(np.isnan(size), 0.0, size) / max_mb, 1.0
    )
    words = _budget_words(budget)
    fits = np.flatnonzero(over <= 1.0)
    if fits.size:
        row = board.iloc[fits[0]]
        return row, (
            f"best within the budget ({words}): {row['embedder']} "
            f"(score {row['mean_test_score']:.4f}, {rate[fits[0]]:.0f} rows/s, "
            f"{_mb(size[fits[0]])} MB)"
        )
    close = int(np.argmin(over))
    row = board.iloc[close]
    return None, (
        f"no row meets the budget ({words}); closest: {row['embedder']} "
        f"({rate[close]:.0f} rows/s, {_mb(size[close])} MB; {over[close]:.1f}x over; "
        f"score {row['mean_test_score']:.4f})"
    )


def _budget_words(budget):
    parts = []
    if "min_rows_per_s" in budget:
        parts.append(f">= {budget['min_rows_per_s']:.0f} rows/s")
    if "max_size_mb" in budget:
        parts.append(f"<= {budget['max_size_mb']:g} MB")
    return ", ".join(parts)

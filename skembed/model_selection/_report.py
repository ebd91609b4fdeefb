"""The leaderboard: best row per embedder, as a table and as text."""

from __future__ import annotations

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
        one training fold), transform rows/s, held-out reconstruction error
        (tabular only) and the best parameters.
    """
    import json

    board = leaderboard(results)
    recon = board["mean_reconstruction_error"].notna().any()
    width = max([10] + [len(n) + 2 for n in board["embedder"]])
    scoring = board["scoring"].iloc[0] if len(board) else "accuracy"
    task = results.attrs.get("task", "classification")
    downstream = results.attrs.get("downstream", DOWNSTREAM_DESCRIPTION)
    head = (
        f"{'rank':<5}{'embedder':<{width}}{scoring + ' (mean ± std)':<24}{'dim':>7}"
        f"{'fit s':>8}{'rows/s':>10}" + (f"{'recon err':>11}" if recon else "") + "  best params"
    )
    lines = [title] if title else []
    if results.attrs.get("roles"):
        lines.append("columns: " + format_roles(results.attrs["roles"]))
    lines.append(f"task: {task}; downstream: {downstream}; scoring: {scoring}")
    if reference_line(results):
        lines.append(reference_line(results))
    lines += [head, "-" * len(head)]
    for i, r in enumerate(board.itertuples(index=False), start=1):
        line = (
            f"{i:<5}{r.embedder:<{width}}{f'{r.mean_test_score:.4f} ± {r.std_test_score:.4f}':<24}"
            f"{r.n_features_out:>7}{r.mean_fit_time:>8.2f}{r.transform_rows_per_s:>10.0f}"
        )
        if recon:
            err = r.mean_reconstruction_error
            line += f"{err:>11.4f}" if err == err else f"{'-':>11}"
        lines.append(line + f"  {json.dumps(r.params, default=str)}")
    return "\n".join(lines)

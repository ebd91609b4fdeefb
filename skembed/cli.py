"""``skembed compare``: which embedding works best for my labelled data?

Cross-validates each chosen embedder, over a small grid of its
hyperparameters, followed by the same downstream classifier for every
embedder (a scaler, then a logistic regression choosing C by inner CV; see
``skembed.model_selection``), and prints a leaderboard (mean ± std score,
embedding width, fit time, transform throughput), written as CSV, JSON and
a bar chart PNG. ``--save-best PATH`` also writes the winning pipeline,
refitted on all the data.

Text mode (default data: BBC News, 2,225 articles, 5 classes)::

    skembed compare
    skembed compare --csv reviews.csv --text-column text --label-column label

Tabular mode (default data: Palmer penguins, predicting species)::

    skembed compare --dataset penguins
    skembed compare --csv table.csv --label-column target

On a Dask cluster (candidates x folds as tasks; pip install "skembed[dask]")::

    skembed compare --scheduler tcp://scheduler-host:8786

Bad input (an empty CSV, one class, --cv 1, --cv above the smallest class's
rows, an unknown column or embedder) ends with one line saying what is wrong
and how to fix it, and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from . import model_selection as ms
from .model_selection._data import _take


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


def _read_csv(path):
    import pandas as pd

    if not os.path.exists(path):
        raise UsageError(f"--csv: no such file: {path}")
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise UsageError(
            f"{path} is empty: give a CSV with a header row and labelled rows."
        ) from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not a readable CSV file ({exc}).") from None
    if len(frame) == 0:
        raise UsageError(f"{path} has a header but no rows: add labelled rows below the header.")
    return frame


def _column(frame, option, name, path):
    if name not in frame.columns:
        raise UsageError(
            f"{option} {name!r} is not a column of {path}; its columns are {list(frame.columns)}."
        )
    return frame[name]


def _subsample(X, y, limit, random_state):
    """A random subset of ``limit`` rows, in their original order (all rows if ``limit`` is None)."""
    if limit is None or limit >= len(y):
        return X, y
    idx = np.sort(np.random.RandomState(random_state).choice(len(y), size=limit, replace=False))
    return _take(X, idx), np.asarray(y)[idx]


def load_data(args):
    """The data the arguments name.

    Returns
    -------
    X : list of str or pandas.DataFrame
    y : numpy.ndarray of str
    kind : {"text", "tabular"}
    data_name : str
    dropped : dict of str to int
        Rows dropped, by reason (missing label, empty text).
    """
    tabular = args.dataset == "penguins" or (args.csv is not None and args.text_column is None)
    if args.csv:
        if not args.label_column:
            raise UsageError("--csv needs --label-column (and --text-column for text data).")
        frame = _read_csv(args.csv)
        labels = _column(frame, "--label-column", args.label_column, args.csv)
        if tabular:
            X = frame.drop(columns=[args.label_column])
        else:
            X = _column(frame, "--text-column", args.text_column, args.csv).tolist()
        data_name = os.path.basename(args.csv)
    elif tabular:
        from .datasets import load_penguins

        frame = load_penguins()
        labels = _column(frame, "--label-column", args.label_column or "species", "penguins")
        X = frame.drop(columns=[labels.name])
        data_name = "Palmer penguins"
    else:
        from .datasets import load_bbc_news

        X, labels = load_bbc_news()
        data_name = "BBC News"
    keep, dropped = ms.usable_rows(X, labels, drop_empty_text=not tabular)
    idx = np.flatnonzero(keep)
    X = _take(X, idx)
    if tabular:
        X = X.reset_index(drop=True)
    y = np.asarray(labels, dtype=object)[idx].astype(str)
    if len(y) == 0:
        raise UsageError(
            f"No usable rows in {data_name}: every row lacks a label"
            + (" or text" if not tabular else "")
            + "; check --label-column"
            + (" and --text-column." if not tabular else ".")
        )
    X, y = _subsample(X, y, args.limit, args.random_state)
    return X, y, "tabular" if tabular else "text", data_name, dropped


def write_outputs(results, output_dir, stem="leaderboard", title=""):
    """Write the leaderboard as CSV and JSON, every candidate as CSV, and a bar chart PNG.

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`skembed.model_selection.compare_embedders`.
    output_dir : str
        Created if needed.
    stem : str, default="leaderboard"
        ``<stem>.csv``/``.json``/``.png`` hold one row per embedder (its best
        candidate), ``<stem>_cv_results.csv`` every candidate.
    title : str, default=""
        Title of the chart.

    Returns
    -------
    paths : list of str
        Files written.
    """
    os.makedirs(output_dir, exist_ok=True)
    board = ms.leaderboard(results)
    board.insert(0, "rank", np.arange(1, len(board) + 1))
    board = board[[c for c in board.columns if not c.startswith("split")]]
    paths = []

    def as_json(v):
        return json.dumps(v, default=str) if isinstance(v, dict) else v

    for frame, name in ((board, f"{stem}.csv"), (results, f"{stem}_cv_results.csv")):
        path = os.path.join(output_dir, name)
        frame.assign(params=frame["params"].map(as_json)).to_csv(path, index=False)
        paths.append(path)
    path = os.path.join(output_dir, f"{stem}.json")
    records = json.loads(board.to_json(orient="records", default_handler=str))
    with open(path, "w") as fh:
        json.dump(records, fh, indent=2)
    paths.append(path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "matplotlib is not installed: no bar chart (pip install matplotlib).", file=sys.stderr
        )
        return paths
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(board) + 1.5))
    names = board["embedder"].tolist()[::-1]
    means = board["mean_test_score"].tolist()[::-1]
    stds = board["std_test_score"].tolist()[::-1]
    ax.barh(names, means, xerr=stds, color="tab:blue", alpha=0.8)
    lo = max(0.0, min(means) - 0.1) if means else 0.0
    ax.set_xlim(lo, 1.0)
    ax.set_xlabel(f"cross-validated {board['scoring'].iloc[0]} (downstream: scaler + LR, C by CV)")
    ax.set_title(title)
    for y, m in enumerate(means):  # inside the bar, clear of the error bar
        ax.text(lo + 0.003, y, f"{m:.3f}", va="center", fontsize=8, color="white")
    fig.tight_layout()
    path = os.path.join(output_dir, f"{stem}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    paths.append(path)
    return paths


def build_parser():
    parser = argparse.ArgumentParser(
        prog="skembed", description="scikit-learn embedding transformers"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser(
        "compare",
        help="cross-validate embedders + one fair downstream classifier on labelled data",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmp.add_argument("--csv", help="CSV file with the data (default: an embedded data set)")
    cmp.add_argument("--text-column", help="column of documents (text mode)")
    cmp.add_argument("--label-column", help="column of labels")
    cmp.add_argument(
        "--dataset",
        choices=["bbc", "penguins"],
        help="embedded data set when no --csv is given (default: bbc)",
    )
    cmp.add_argument(
        "--embedders",
        help="comma-separated embedders (default: all available; text: "
        + ",".join(n for n, s in ms.EMBEDDERS.items() if s.kind == "text")
        + "; tabular: "
        + ",".join(n for n, s in ms.EMBEDDERS.items() if s.kind == "tabular")
        + ")",
    )
    cmp.add_argument("--n-components", type=int, default=2, help="embedding width (tabular mode)")
    cmp.add_argument("--cv", type=int, default=5, help="cross-validation folds (default 5)")
    cmp.add_argument(
        "--scoring", default="accuracy", help="scikit-learn scorer name (default accuracy)"
    )
    cmp.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="threads each embedder may use (default: each embedder's own default)",
    )
    cmp.add_argument("--random-state", type=int, default=0)
    cmp.add_argument("--output-dir", default="compare-output", help="where CSV/JSON/PNG go")
    cmp.add_argument(
        "--limit", type=int, default=None, help="use only N randomly chosen rows (quick runs)"
    )
    cmp.add_argument(
        "--save-best",
        metavar="PATH",
        help="write the best pipeline, refitted on all rows, to PATH (skops, else joblib)",
    )
    cmp.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler (tcp://host:8786) to run candidates x folds on "
        "(pip install 'skembed[dask]'); default: here",
    )
    cmp.add_argument(
        "--verbose",
        type=int,
        default=1,
        help="0: leaderboard only; 1: a line per embedder (default); 2: also per candidate",
    )
    return parser


def _check_args(args):
    if args.cv < 2:
        raise UsageError(
            f"--cv {args.cv}: cross-validation needs at least 2 folds; use --cv 2 or more (5 is usual)."
        )
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: give a positive number of rows.")
    if args.n_components < 1:
        raise UsageError(f"--n-components {args.n_components}: give a positive width.")
    if args.n_jobs == 0:
        raise UsageError("--n-jobs 0: give a positive number of threads, or -1 for all cores.")


def run_compare(args):
    """Run ``skembed compare`` with parsed arguments; the results DataFrame."""
    from sklearn.metrics import get_scorer

    _check_args(args)
    try:
        get_scorer(args.scoring)
    except ValueError:
        raise UsageError(
            f"--scoring {args.scoring!r} is not a scikit-learn scorer; e.g. accuracy, f1_macro, balanced_accuracy."
        ) from None
    if args.scheduler:  # an unreachable scheduler fails now, within seconds, before any work
        try:
            from .dask import connect

            connect(args.scheduler).close()
        except (ConnectionError, ImportError, TypeError) as exc:
            raise UsageError(f"--scheduler: {exc}") from None
    X, y, kind, data_name, dropped = load_data(args)
    names = [e.strip() for e in args.embedders.split(",") if e.strip()] if args.embedders else None
    try:
        ms.check_classification_data(y, args.cv)
        ms.default_embedders(kind, names)  # unknown or unavailable names fail here, before any work
    except ValueError as exc:
        raise UsageError(str(exc).replace("cv=", "--cv ")) from None
    unit = "rows" if kind == "tabular" else "documents"
    title = f"skembed compare — {data_name}: {len(y)} {unit}, {len(set(y))} classes"
    title += f", n_components={args.n_components}" if kind == "tabular" else ""
    title += f", {args.cv}-fold CV"
    print(title, flush=True)
    if any(dropped.values()):
        reasons = ", ".join(f"{n} with {why}" for why, n in dropped.items() if n)
        print(f"dropped {sum(dropped.values())} rows: {reasons}", flush=True)
    out = ms.compare_embedders(
        X,
        y,
        names,
        cv=args.cv,
        scoring=args.scoring,
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        n_components=args.n_components,
        verbose=args.verbose,
        return_best=bool(args.save_best),
        scheduler=args.scheduler,
    )
    results, best = out if args.save_best else (out, None)
    print()
    print(ms.format_leaderboard(results, title))
    stem = "leaderboard_tabular" if kind == "tabular" else "leaderboard"
    paths = write_outputs(results, args.output_dir, stem=stem, title=title)
    print("\nwritten: " + ", ".join(paths))
    if best:
        name, pipeline = next(iter(best.items()))
        fmt = ms.save_pipeline(pipeline, args.save_best)
        load = f"load_pipeline({args.save_best!r}" + (
            ", allow_pickle=True)" if fmt == "joblib" else ")"
        )
        print(
            f"best pipeline ({name}, refitted on all {len(y)} {unit}) written to {args.save_best} "
            f"with {fmt}; load it with skembed.model_selection.{load}"
        )
    return results


def main(argv=None):
    """Entry point of the ``skembed`` console script.

    Returns
    -------
    status : int
        0; bad input ends the process with status 2 and one line on stderr.
    """
    args = build_parser().parse_args(argv)
    if args.command == "compare":
        try:
            run_compare(args)
        except UsageError as exc:
            print(f"skembed compare: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``skembed compare``: which embedding works best for my labelled data?

Runs each chosen embedder in ``Pipeline(embedder, LogisticRegression)``
under ``GridSearchCV`` over a small grid of embedding hyperparameters and
prints a leaderboard (cross-validated accuracy mean ± std, fit time,
transform throughput), written as CSV, JSON and a bar chart PNG.

Text mode (default data: BBC News, 2,225 articles, 5 classes)::

    skembed compare
    skembed compare --csv reviews.csv --text-column text --label-column label

Tabular mode (default data: Palmer penguins, predicting species)::

    skembed compare --dataset penguins
    skembed compare --csv table.csv --label-column target
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import sys
import time
import warnings

import numpy as np

# name -> (module, class, fixed params, param grid, description)
TEXT_EMBEDDERS = {
    "tfidf": (
        "sklearn.feature_extraction.text",
        "TfidfVectorizer",
        {"sublinear_tf": True},
        {},
        "TF-IDF baseline (sparse, no embedding)",
    ),
    "lsa": (
        "skembed.text.lsa",
        "TfidfLSA",
        {"sublinear_tf": True, "min_df": 2},
        {"n_components": [100, 300]},
        "TF-IDF + truncated SVD (LSA)",
    ),
    "ppmi": (
        "skembed.text.ppmi",
        "PPMIEmbedder",
        {"window": 5, "min_count": 2, "pooling": "tfidf"},
        {"n_components": [100, 300]},
        "PPMI + SVD word vectors, IDF-weighted mean",
    ),
    "word2vec": (
        "skembed.text.word2vec",
        "Word2VecTransformer",
        {"min_count": 2, "epochs": 5, "pooling": "tfidf"},
        {"vector_size": [50, 100]},
        "skip-gram word2vec, IDF-weighted mean",
    ),
    "fasttext": (
        "skembed.text.fasttext",
        "FastTextTransformer",
        {"min_count": 2, "epochs": 5, "bucket": 200_000, "pooling": "tfidf"},
        {"vector_size": [100]},
        "fastText skip-gram with char n-grams, IDF-weighted mean",
    ),
    "glove": (
        "skembed.text.glove",
        "GloVeTransformer",
        {"min_count": 2, "window": 10, "epochs": 15, "pooling": "tfidf"},
        {"vector_size": [50, 100]},
        "GloVe, IDF-weighted mean",
    ),
    "bert": (
        "skembed.text.bert",
        "BertPooledEmbedder",
        {"cache": "memory", "max_length": 256, "truncation": "truncate", "normalize": True},
        {"pooling": ["mean"]},
        "all-MiniLM-L6-v2, mean pooling (contextual)",
    ),
}

# short CLI names of the tabular comparison's embedders (skembed._compare_tabular)
TABULAR_ALIASES = {
    "raw": "Scaler+OneHot (raw)",
    "pca": "PCA",
    "autoencoder": "AutoencoderEmbedder",
    "vae": "VAEEmbedder",
}

DEFAULT_TEXT = ["tfidf", "lsa", "ppmi", "word2vec", "fasttext", "glove", "bert"]


def _available(name):
    module = TEXT_EMBEDDERS[name][0]
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        return False


def _make_text_embedder(name, random_state, n_jobs):
    module, cls_name, fixed, grid, _ = TEXT_EMBEDDERS[name]
    cls = getattr(importlib.import_module(module), cls_name)
    est = cls(**fixed)
    params = est.get_params()
    extra = {}
    if "random_state" in params:
        extra["random_state"] = random_state
    if "n_jobs" in params and n_jobs is not None:
        extra["n_jobs"] = n_jobs
    return est.set_params(**extra), grid


def compare_text(
    texts,
    labels,
    *,
    embedders=None,
    cv=5,
    n_jobs=None,
    random_state=0,
    verbose=True,
):
    """Cross-validate each text embedder with a downstream logistic regression.

    Parameters
    ----------
    texts : list of str, length n_documents
    labels : array-like of shape (n_documents,)
    embedders : list of str or None, default=None
        Keys of ``TEXT_EMBEDDERS``; ``None`` means every available one.
    cv : int, default=5
        Stratified folds.
    n_jobs : int or None, default=None
        Threads each embedder may use (``GridSearchCV`` itself runs candidates
        one after another so the embedders' own threads are not oversubscribed).
    random_state : int, default=0
    verbose : bool, default=True
        Print one line per embedder as it finishes.

    Returns
    -------
    rows : list of dict
        One per embedder: ``embedder``, ``description``, ``best_params``,
        ``cv_accuracy_mean``, ``cv_accuracy_std``, ``fit_time_s`` (mean fit
        time of the best candidate on one training fold, seconds),
        ``transform_docs_per_s`` (documents/s embedding all documents with
        the best candidate refitted on all of them; for an embedder with an
        embedding cache, a cache-free copy on 200 documents), sorted by accuracy.
    """
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import Pipeline

    names = embedders or [n for n in DEFAULT_TEXT if _available(n)]
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    rows = []
    for name in names:
        if name not in TEXT_EMBEDDERS:
            raise ValueError(f"Unknown embedder {name!r}; choose from {sorted(TEXT_EMBEDDERS)}.")
        est, grid = _make_text_embedder(name, random_state, n_jobs)
        pipe = Pipeline([("embed", est), ("clf", LogisticRegression(max_iter=1000, C=10.0))])
        param_grid = {f"embed__{k}": v for k, v in grid.items()} or {"clf__C": [10.0]}
        search = GridSearchCV(pipe, param_grid, cv=folds, n_jobs=1, refit=True, error_score="raise")
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            search.fit(texts, labels)
        total = time.perf_counter() - start
        best = search.best_index_
        embedder = search.best_estimator_.named_steps["embed"]
        sample = texts
        if embedder.get_params().get("cache") is not None:
            # an embedding cache would time lookups, not embedding: time a cache-free copy on a sample
            embedder = clone(embedder).set_params(cache=None).fit(texts[:50])
            sample = texts[: min(len(texts), 200)]
        t0 = time.perf_counter()
        embedder.transform(sample)
        docs_per_s = len(sample) / max(time.perf_counter() - t0, 1e-9)
        row = {
            "embedder": name,
            "description": TEXT_EMBEDDERS[name][4],
            "best_params": {k.removeprefix("embed__"): v for k, v in search.best_params_.items()},
            "cv_accuracy_mean": float(search.cv_results_["mean_test_score"][best]),
            "cv_accuracy_std": float(search.cv_results_["std_test_score"][best]),
            "fit_time_s": float(search.cv_results_["mean_fit_time"][best]),
            "transform_docs_per_s": float(docs_per_s),
            "search_time_s": float(total),
        }
        rows.append(row)
        if verbose:
            print(
                f"  {name:<10} accuracy {row['cv_accuracy_mean']:.4f} ± {row['cv_accuracy_std']:.4f}"
                f"  ({total:.1f} s)",
                flush=True,
            )
    rows.sort(key=lambda r: -r["cv_accuracy_mean"])
    return rows


def format_leaderboard(rows, title):
    """The leaderboard as a fixed-width text table (one line per embedder)."""
    extra = "reconstruction_error" in (rows[0] if rows else {})
    width = max([13] + [len(r["embedder"]) + 2 for r in rows])
    header = f"{'rank':<5}{'embedder':<{width}}{'accuracy (mean ± std)':<24}{'fit s':>8}{'rows/s' if extra else 'docs/s':>11}"
    header += f"{'recon err':>11}" if extra else ""
    header += "  best params"
    lines = [title, header, "-" * len(header)]
    for i, r in enumerate(rows, start=1):
        rate = r.get("transform_docs_per_s", r.get("transform_rows_per_s", float("nan")))
        line = (
            f"{i:<5}{r['embedder']:<{width}}{r['cv_accuracy_mean']:.4f} ± {r['cv_accuracy_std']:.4f}"
            f"{'':<9}{r['fit_time_s']:>8.2f}{rate:>11.0f}"
        )
        if extra:
            err = r.get("reconstruction_error")
            line += (
                f"{err:>11.4f}" if isinstance(err, (int, float)) and err == err else f"{'-':>11}"
            )
        line += f"  {json.dumps(r['best_params'], default=str)}"
        lines.append(line)
    return "\n".join(lines)


def write_outputs(rows, output_dir, stem="leaderboard", title=""):
    """Write ``rows`` as CSV and JSON, and a bar chart PNG when matplotlib is installed.

    Returns
    -------
    paths : list of str
        Files written.
    """
    os.makedirs(output_dir, exist_ok=True)
    paths = []
    csv_path = os.path.join(output_dir, f"{stem}.csv")
    keys = list(rows[0].keys()) if rows else []
    with open(csv_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {k: json.dumps(v, default=str) if isinstance(v, dict) else v for k, v in r.items()}
            )
    paths.append(csv_path)
    json_path = os.path.join(output_dir, f"{stem}.json")
    with open(json_path, "w") as fh:
        json.dump(rows, fh, indent=2, default=str)
    paths.append(json_path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "matplotlib is not installed: no bar chart (pip install matplotlib).", file=sys.stderr
        )
        return paths
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.5))
    names = [r["embedder"] for r in rows][::-1]
    means = [r["cv_accuracy_mean"] for r in rows][::-1]
    stds = [r["cv_accuracy_std"] for r in rows][::-1]
    ax.barh(names, means, xerr=stds, color="tab:blue", alpha=0.8)
    lo = max(0.0, min(means) - 0.1) if means else 0.0
    ax.set_xlim(lo, 1.0)
    ax.set_xlabel("cross-validated accuracy")
    ax.set_title(title)
    for y, m in enumerate(means):  # inside the bar, clear of the error bar
        ax.text(lo + 0.003, y, f"{m:.3f}", va="center", fontsize=8, color="white")
    fig.tight_layout()
    png_path = os.path.join(output_dir, f"{stem}.png")
    fig.savefig(png_path, dpi=120)
    plt.close(fig)
    paths.append(png_path)
    return paths


def _read_csv(path):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        raise SystemExit("--csv needs pandas: pip install pandas") from None
    if not os.path.exists(path):
        raise SystemExit(f"--csv: no such file: {path}")
    return pd.read_csv(path)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="skembed", description="scikit-learn embedding transformers"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser(
        "compare",
        help="cross-validate embedders + logistic regression on labelled data",
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
    cmp.add_argument("--embedders", help="comma-separated embedders (default: all available)")
    cmp.add_argument("--n-components", type=int, default=2, help="embedding width (tabular mode)")
    cmp.add_argument("--cv", type=int, default=5, help="cross-validation folds (default 5)")
    cmp.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="text: threads per embedder; tabular: parallel cross-validation workers",
    )
    cmp.add_argument("--random-state", type=int, default=0)
    cmp.add_argument("--output-dir", default="compare-output", help="where CSV/JSON/PNG go")
    cmp.add_argument(
        "--limit", type=int, default=None, help="use only the first N rows (quick runs)"
    )
    return parser


def _subsample(X, y, limit, random_state):
    if limit is None or limit >= len(y):
        return X, y
    rng = np.random.RandomState(random_state)
    idx = np.sort(rng.choice(len(y), size=limit, replace=False))
    if hasattr(X, "iloc"):
        return X.iloc[idx].reset_index(drop=True), np.asarray(y)[idx]
    return [X[i] for i in idx], np.asarray(y)[idx]


def run_compare(args):
    embedders = [e.strip() for e in args.embedders.split(",")] if args.embedders else None
    tabular = args.dataset == "penguins" or (args.csv is not None and args.text_column is None)
    if tabular:
        from ._compare_tabular import compare_tabular

        if args.csv:
            if not args.label_column:
                raise SystemExit("--csv needs --label-column (and --text-column for text data).")
            frame = _read_csv(args.csv)
            if args.label_column not in frame.columns:
                raise SystemExit(
                    f"--label-column {args.label_column!r} is not a column of {args.csv}"
                )
            data_name = os.path.basename(args.csv)
        else:
            from .datasets import load_penguins

            frame = load_penguins()
            args.label_column = args.label_column or "species"
            data_name = "Palmer penguins"
        frame = frame[frame[args.label_column].notna()].reset_index(drop=True)
        y = frame[args.label_column].astype(str).to_numpy()
        X = frame.drop(columns=[args.label_column])
        X, y = _subsample(X, y, args.limit, args.random_state)
        if embedders:
            unknown = [e for e in embedders if e not in TABULAR_ALIASES]
            if unknown:
                raise SystemExit(
                    f"Unknown tabular embedder {unknown[0]!r}; choose from {sorted(TABULAR_ALIASES)}."
                )
            embedders = [TABULAR_ALIASES[e] for e in embedders]
        title = f"skembed compare — {data_name}: {len(y)} rows, {len(set(y))} classes, n_components={args.n_components}, {args.cv}-fold CV"
        print(title, flush=True)
        rows = compare_tabular(
            X,
            y,
            n_components=args.n_components,
            cv=args.cv,
            n_jobs=args.n_jobs,
            random_state=args.random_state,
            embedders=embedders,
        )
        stem = "leaderboard_tabular"
    else:
        if args.csv:
            if not (args.text_column and args.label_column):
                raise SystemExit("--csv in text mode needs --text-column and --label-column.")
            frame = _read_csv(args.csv)
            for col in (args.text_column, args.label_column):
                if col not in frame.columns:
                    raise SystemExit(f"{col!r} is not a column of {args.csv}")
            frame = frame[frame[args.label_column].notna()]
            texts = frame[args.text_column].fillna("").astype(str).tolist()
            y = frame[args.label_column].astype(str).to_numpy()
            data_name = os.path.basename(args.csv)
        else:
            from .datasets import load_bbc_news

            texts, y = load_bbc_news()
            data_name = "BBC News"
        texts, y = _subsample(texts, y, args.limit, args.random_state)
        for name in embedders or []:
            if name not in TEXT_EMBEDDERS:
                raise SystemExit(
                    f"Unknown text embedder {name!r}; choose from {sorted(TEXT_EMBEDDERS)}."
                )
            if not _available(name):
                raise SystemExit(
                    f"Embedder {name!r} is not available (missing optional dependency)."
                )
        title = f"skembed compare — {data_name}: {len(y)} documents, {len(set(y))} classes, {args.cv}-fold CV"
        print(title, flush=True)
        rows = compare_text(
            texts,
            y,
            embedders=embedders,
            cv=args.cv,
            n_jobs=args.n_jobs,
            random_state=args.random_state,
        )
        stem = "leaderboard"
    print()
    print(format_leaderboard(rows, title))
    paths = write_outputs(rows, args.output_dir, stem=stem, title=title)
    print("\nwritten: " + ", ".join(paths))
    return rows


def main(argv=None):
    """Entry point of the ``skembed`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "compare":
        run_compare(args)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

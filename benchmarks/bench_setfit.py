"""Label-trained embeddings (SetFitEmbedder, supervised StaticEmbedder) against frozen ones.

One run, the downstream model of ``skembed compare`` (StandardScaler ->
LogisticRegression, C=1), the same stratified folds for every row; each
embedder is fitted with ``fit_transform(X_train, y_train)`` on the training
rows only (as in ``compare``) and embeds the held-out rows with
``transform``. Rows use fixed parameters (no inner grid search).

Prints, per row: mean accuracy over the folds run, each fold's accuracy, fit
seconds and transform documents/s (mean over folds); then optionally

* ``--curve 250,500,1000``: SetFitEmbedder's budget curve on the first fold:
  ``n_pairs`` -> accuracy -> fit minutes;
* ``--leakage``: held-out accuracy of a downstream model trained on plain
  ``fit_transform`` embeddings vs cross-fitted ones (``cv=3``).

Examples::

    python benchmarks/bench_setfit.py --dataset tweets --n 4000 --folds 5 --run-folds 1
    python benchmarks/bench_setfit.py --rows setfit --curve 250,500,1000 --run-folds 1
    python benchmarks/bench_setfit.py --rows none --leakage --n 1600
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

ROWS = ("tfidf", "lsa", "bert", "static", "static_sup", "setfit")


def make_row(name, args):
    if name == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(sublinear_tf=True)
    if name == "lsa":
        from skembed.text import TfidfLSA

        return TfidfLSA(sublinear_tf=True, min_df=2, n_components=300, random_state=0)
    common = {"device": "cpu", "n_jobs": args.threads}
    if name == "bert":
        from skembed.text import BertPooledEmbedder

        return BertPooledEmbedder(
            max_length=args.max_length, truncation="truncate", normalize=True, **common
        )
    if name in ("static", "static_sup"):
        from skembed.text import StaticEmbedder

        sup = name == "static_sup"
        extra = {}
        if sup and args.static_learning_rate:
            extra["learning_rate"] = args.static_learning_rate
        if sup and args.static_epochs:
            extra["epochs"] = args.static_epochs
        return StaticEmbedder(normalize=True, supervised=sup, random_state=0, **extra, **common)
    if name == "setfit":
        from skembed.text import SetFitEmbedder

        # the estimator's defaults unless an option sets a parameter
        options = {
            "n_pairs": args.n_pairs,
            "epochs": args.epochs,
            "loss": args.loss,
            "learning_rate": args.learning_rate,
            "batch_size": args.batch_size,
            "mixed_precision": args.mixed_precision,
        }
        extra = {k: v for k, v in options.items() if v is not None}
        return SetFitEmbedder(
            max_length=args.max_length,
            truncation="truncate",
            normalize=True,
            random_state=0,
            **extra,
            **common,
        )
    raise ValueError(name)


def load(args):
    from sklearn.model_selection import train_test_split

    if args.dataset == "tweets":
        from skembed.datasets import load_tweet_sentiment

        X, y = load_tweet_sentiment()
    else:
        from skembed.datasets import load_bbc_news

        X, y = load_bbc_news()[:2]
    X, y = list(X), np.asarray(y)
    if args.n and args.n < len(X):
        idx, _ = train_test_split(np.arange(len(X)), train_size=args.n, stratify=y, random_state=0)
        X, y = [X[i] for i in idx], y[idx]
    return X, y


def evaluate(est, X, y, train, test):
    from sklearn.base import clone

    from skembed.model_selection._downstream import downstream_classifier

    est = clone(est)
    Xtr, Xte = [X[i] for i in train], [X[i] for i in test]
    t0 = time.perf_counter()
    Etr = est.fit_transform(Xtr, y[train])
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    Ete = est.transform(Xte)
    tr_s = time.perf_counter() - t0
    sparse = hasattr(Etr, "toarray")
    clf = downstream_classifier(sparse=sparse).fit(Etr, y[train])
    tune_s = sum(r["seconds"] for r in getattr(est, "history_", []))
    return float(clf.score(Ete, y[test])), fit_s, len(test) / tr_s, tune_s


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", choices=("tweets", "bbc"), default="tweets")
    p.add_argument("--n", type=int, default=4000, help="stratified sample size (0: all)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--run-folds", type=int, default=None, help="run only the first k folds")
    p.add_argument("--rows", default=",".join(ROWS), help="comma-separated, or 'none'")
    # SetFitEmbedder's parameters (its defaults when not given)
    p.add_argument("--n-pairs", type=int, default=None)
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--loss", default=None)
    p.add_argument("--learning-rate", type=float, default=None)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--mixed-precision", default=None)
    p.add_argument("--max-length", type=int, default=256, help="BERT's and SetFit's")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--static-learning-rate", type=float, default=None, help="StaticEmbedder(supervised=True)'s"
    )
    p.add_argument(
        "--static-epochs", type=int, default=None, help="StaticEmbedder(supervised=True)'s"
    )
    p.add_argument(
        "--curve",
        default="",
        help="SetFit budgets on fold 1: n_pairs or n_pairsxepochs, comma-separated",
    )
    p.add_argument("--leakage", action="store_true")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sklearn.model_selection import StratifiedKFold

    X, y = load(args)
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=0).split(X, y))
    folds = folds[: args.run_folds or args.folds]
    print(
        f"{args.dataset}: {len(X)} documents, {len(set(y))} classes, {args.folds}-fold CV, "
        f"{len(folds)} fold(s) run, threads={args.threads}, load average {os.getloadavg()}"
    )
    rows = [] if args.rows == "none" else args.rows.split(",")
    print(
        f"{'row':<12}{'accuracy':>10}  {'folds':<40}{'fit_transform s':>16}{'docs/s':>10}"
        f"{'training s':>12}"
    )
    for name in rows:
        est = make_row(name, args)
        res = [evaluate(est, X, y, tr, te) for tr, te in folds]
        acc = [r[0] for r in res]
        print(
            f"{name:<12}{np.mean(acc):>10.4f}  {' '.join(f'{a:.4f}' for a in acc):<40}"
            f"{np.mean([r[1] for r in res]):>16.1f}{np.mean([r[2] for r in res]):>10.0f}"
            f"{np.mean([r[3] for r in res]):>12.1f}",
            flush=True,
        )
    if args.curve:
        tr, te = folds[0]
        print(f"SetFitEmbedder budget curve, fold 1 ({len(tr)} training rows)")
        print(
            f"{'n_pairs':>8}{'epochs':>8}{'accuracy':>10}{'fit_transform min':>19}{'training min':>14}"
        )
        for point in args.curve.split(","):
            budget, _, epochs = point.partition("x")
            est = make_row("setfit", args).set_params(n_pairs=int(budget))
            if epochs:
                est.set_params(epochs=int(epochs))
            acc, fit_s, _, tune_s = evaluate(est, X, y, tr, te)
            print(
                f"{int(budget):>8}{est.epochs:>8}{acc:>10.4f}{fit_s / 60:>19.2f}{tune_s / 60:>14.2f}",
                flush=True,
            )
    if args.leakage:
        tr, te = folds[0]
        print(
            f"leakage, fold 1 ({len(tr)} training rows, {len(te)} held out), n_pairs={args.n_pairs}"
        )
        for cv in (None, 3):
            est = make_row("setfit", args).set_params(cv=cv)
            acc, fit_s, _, _ = evaluate(est, X, y, tr, te)
            print(f"  cv={cv}: held-out accuracy {acc:.4f}, fit_transform {fit_s / 60:.2f} min")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()

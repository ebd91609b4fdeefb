"""Label-trained embeddings (SetFitEmbedder, supervised StaticEmbedder) against frozen ones.

One run, the downstream model of ``skembed compare`` (StandardScaler ->
LogisticRegression, C=1), the same stratified folds for every row; each
embedder is fitted with ``fit_transform(X_train, y_train)`` on the training
rows only (as in ``compare``) and embeds the held-out rows with
``transform``. Rows use fixed parameters (no inner grid search).

Prints, per row: mean accuracy over the folds run, each fold's accuracy, fit
seconds and transform documents/s (mean over folds); then optionally

* ``--tuning-sample``: the same size of sample, drawn from the rows outside
  the benchmark sample (disjoint from it), to choose settings on without
  touching the rows the figures are reported on;
* ``--curve 250,500,1000``: SetFitEmbedder's budget curve on the first fold:
  ``n_pairs`` -> accuracy -> fit minutes;
* ``--budgets auto,full,800x2``: SetFitEmbedder's budgets side by side on the
  first fold: ``auto`` (the defaults: ``n_pairs="auto"``,
  ``train_max_length="auto"``), ``full`` (3,200 pairs at the full length, the
  GPU budget), ``PAIRSxEPOCHS`` (at the full length); each with the pairs and
  training length it resolved to, accuracy, ``fit_transform`` minutes and
  their multiple of the frozen ``bert`` row's (run ``--rows bert`` with it);
* ``--leakage``: held-out accuracy of a downstream model trained on plain
  ``fit_transform`` embeddings vs cross-fitted ones (``--leakage-cv``, default
  ``none,3``: ``cv=None`` and ``cv=3``), on the folds ``--run-folds`` or
  ``--only-folds`` select; ``--leakage-detail`` runs the cross-fitting by hand
  and scores each inner encoder on its own (see ``leakage_detail``);
* ``--train-speed``: fine-tuning throughput (sequences/s through forward
  and backward, counted as two per pair although a document repeated in a
  step is embedded once; from ``history_``'s seconds) of ``mixed_precision="no"``
  and ``"bf16"``, with and without the CPU's length-sorted micro-batches,
  on fold 1's training rows (``--speed-pairs`` pairs, one epoch each);
* ``--int8-accuracy``: held-out accuracy on fold 1 of the tuned encoder served in float32
  (torch) and int8 (torch, onnx, openvino): one ``fit_transform`` per backend with the
  row's parameters and seed (the same tuned weights on the CPU), the downstream model
  trained and scored on that backend's vectors;
* ``--serving``: ``transform`` speed of the tuned encoder on each backend
  (torch, onnx, openvino; float32, and int8 with ``--serving-int8``) beside
  the frozen ``BertPooledEmbedder`` on the same backend, on fold 1's
  held-out rows, and the cosine of each backend's float32 vectors to the
  tuned torch vectors (the tuning is a short one, ``--serving-pairs``:
  speed does not depend on how long the encoder was tuned). Each ratio
  is the faster of two timings of each side, taken alternately.

Examples::

    python benchmarks/bench_setfit.py --dataset tweets --n 4000 --folds 5 --run-folds 1
    python benchmarks/bench_setfit.py --rows setfit --curve 250,500,1000 --run-folds 1
    python benchmarks/bench_setfit.py --dataset bbc-short --train-size 800 --rows bert \
        --budgets auto,full
    python benchmarks/bench_setfit.py --rows none --leakage --n 1600
    python benchmarks/bench_setfit.py --rows none --serving
    python benchmarks/bench_setfit.py --rows none --int8-accuracy
    python benchmarks/bench_setfit.py --rows none --train-speed
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
        if args.dataset == "bbc-short":
            X = cut_like_reviews(X)
    X, y = list(X), np.asarray(y)
    if args.n and args.n < len(X):
        idx, rest = train_test_split(
            np.arange(len(X)), train_size=args.n, stratify=y, random_state=0
        )
        if args.tuning_sample:
            # as many rows again, none of them in the benchmark sample: settings are chosen here
            idx, _ = train_test_split(rest, train_size=args.n, stratify=y[rest], random_state=1)
        X, y = [X[i] for i in idx], y[idx]
    elif args.tuning_sample:
        raise SystemExit("--tuning-sample needs --n smaller than the dataset")
    return X, y


def cut_like_reviews(texts):
    """BBC News articles cut to review-like lengths: each keeps its first ``k`` words, ``k``
    log-normal (median 90 words, about 117 word pieces of MiniLM; 90th percentile about 200),
    between 15 and 400, drawn with a fixed seed."""
    words = np.exp(np.random.RandomState(0).normal(np.log(90), 0.45, len(texts)))
    words = np.clip(np.round(words), 15, 400).astype(int)
    return [" ".join(t.split()[:k]) for t, k in zip(texts, words, strict=True)]


def budgets(args, X, y, train, test, bert_seconds):
    """SetFitEmbedder's budgets on one split: what each resolved to, accuracy and cost."""
    print(f"SetFitEmbedder budgets ({len(train)} training rows, {len(test)} held out)")
    print(
        f"{'budget':<10}{'n_pairs_':>9}{'epochs':>7}{'train_len':>10}{'accuracy':>10}"
        f"{'fit_transform min':>19}{'training min':>14}{'x bert':>8}"
    )
    for name in args.budgets.split(","):
        est = make_row("setfit", args)
        if name == "full":
            est.set_params(n_pairs=3200, train_max_length=None)
        elif name != "auto":
            pairs, _, epochs = name.partition("x")
            est.set_params(n_pairs=int(pairs), epochs=int(epochs or 2), train_max_length=None)
        acc, fit_s, _, tune_s, fitted = evaluate(est, X, y, train, test, keep=True)
        multiple = f"{fit_s / bert_seconds:>8.1f}" if bert_seconds else f"{'':>8}"
        print(
            f"{name:<10}{fitted.n_pairs_:>9}{fitted.epochs:>7}{fitted.train_max_length_:>10}"
            f"{acc:>10.4f}{fit_s / 60:>19.2f}{tune_s / 60:>14.2f}{multiple}",
            flush=True,
        )


def evaluate(est, X, y, train, test, keep=False):
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
    scores = (float(clf.score(Ete, y[test])), fit_s, len(test) / tr_s, tune_s)
    return (*scores, est) if keep else scores


def train_speed(args, X, y, train, test):
    import skembed.text.transformer._setfit as setfit_module

    Xtr = [X[i] for i in train]
    size = setfit_module._CPU_MICRO_BATCH
    print(
        f"fine-tuning throughput, fold 1's training rows, {args.speed_pairs} pairs x 1 epoch, "
        f"{args.threads} threads, max_length={args.max_length}"
    )
    print(f"{'mixed_precision':<17}{'micro-batches':<15}{'sequences/s':>12}{'ratio':>8}")
    base = None
    for chunked in (False, True):
        for precision in ("no", "bf16"):
            setfit_module._CPU_MICRO_BATCH = size if chunked else 1 << 30
            est = make_row("setfit", args).set_params(
                n_pairs=args.speed_pairs, epochs=1, mixed_precision=precision
            )
            try:
                est.fit(Xtr, y[train])
            finally:
                setfit_module._CPU_MICRO_BATCH = size
            rate = 2 * args.speed_pairs / est.history_[0]["seconds"]
            base = base or rate
            label = f"{size} sorted" if chunked else "whole batch"
            print(f"{precision:<17}{label:<15}{rate:>12.1f}{rate / base:>8.2f}", flush=True)


def serving(args, X, y, train, test):
    Xtr, Xte = [X[i] for i in train], [X[i] for i in test]
    short = {"n_pairs": args.serving_pairs, "epochs": 1}
    reference = make_row("setfit", args).set_params(**short).fit(Xtr, y[train])
    E_ref = reference.transform(Xte)
    print(
        f"serving, fold 1's {len(Xte)} held-out documents, max_length={args.max_length}, "
        f"batch {reference.batch_size}, {args.threads} threads (tuned on {args.serving_pairs} pairs)"
    )
    print(
        f"{'backend':<16}{'tuned docs/s':>14}{'frozen docs/s':>15}{'ratio':>8}"
        f"{'cos mean':>10}{'cos min':>9}"
    )
    variants = [("torch", None), ("onnx", None), ("openvino", None)]
    if args.serving_int8:
        variants += [("torch", "int8"), ("onnx", "int8"), ("openvino", "int8")]
    for backend, quantize in variants:
        params = {"backend": backend, "quantize": quantize}
        # the same seed tunes the same weights on the CPU whatever the backend; fit exports them
        tuned = make_row("setfit", args).set_params(**short, **params).fit(Xtr, y[train])
        frozen = make_row("bert", args).set_params(**params).fit(Xtr[:8])
        tuned.transform(Xte[:64]), frozen.transform(Xte[:64])  # warm both
        times = {"tuned": [], "frozen": []}
        for _ in range(2):  # alternate the two sides; keep each side's faster timing
            for key, est in (("tuned", tuned), ("frozen", frozen)):
                t0 = time.perf_counter()
                out = est.transform(Xte)
                times[key].append(time.perf_counter() - t0)
                if key == "tuned":
                    E = out
        cos = np.sum(E * E_ref, 1) / np.linalg.norm(E, axis=1) / np.linalg.norm(E_ref, axis=1)
        ra, rb = len(Xte) / min(times["tuned"]), len(Xte) / min(times["frozen"])
        name = f"{backend} {quantize or 'fp32'}"
        print(
            f"{name:<16}{ra:>14.1f}{rb:>15.1f}{ra / rb:>8.3f}{cos.mean():>10.6f}{cos.min():>9.6f}",
            flush=True,
        )


def int8_accuracy(args, X, y, train, test):
    print(f"int8 serving accuracy, fold 1 ({len(train)} training rows, {len(test)} held out)")
    print(f"{'backend':<16}{'accuracy':>10}{'fit_transform min':>19}{'docs/s':>9}")
    for backend, quantize in (("torch", None), ("torch", "int8"), ("onnx", "int8"),
                              ("openvino", "int8")):  # fmt: skip
        est = make_row("setfit", args).set_params(backend=backend, quantize=quantize)
        acc, fit_s, rate, _ = evaluate(est, X, y, train, test)
        name = f"{backend} {quantize or 'fp32'}"
        print(f"{name:<16}{acc:>10.4f}{fit_s / 60:>19.2f}{rate:>9.0f}", flush=True)


def leakage_detail(args, X, y, train, test, cv):
    """Why cross-fitting scores what it scores: each inner encoder on its own.

    Repeats ``cross_fitted``'s folds by hand (the same seeded split and inner
    parameters), keeping every encoder, and prints, per inner encoder: the
    accuracy of a downstream model trained on that encoder's out-of-fold rows
    and scored on the held-out rows embedded by the same encoder; the same
    with the held-out rows embedded by the full encoder (what ``cv`` does);
    the mean cosine between the two encoders' vectors of the held-out rows;
    and the plain encoder's accuracy with the same training rows.
    """
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    from skembed.model_selection._downstream import downstream_classifier
    from skembed.utils._seeding import seed_from_random_state

    est = make_row("setfit", args)
    Xtr, ytr = [X[i] for i in train], y[train]
    Xte, yte = [X[i] for i in test], y[test]
    t0 = time.perf_counter()
    full = clone(est).fit(Xtr, ytr)
    F_tr, F_te = full.transform(Xtr), full.transform(Xte)
    oof = np.empty_like(F_tr)
    seed = seed_from_random_state(est.random_state)
    split = StratifiedKFold(cv, shuffle=True, random_state=seed).split(Xtr, ytr)
    print(
        f"  cv={cv} by hand: {'inner':>5}{'own':>8}{'full':>8}{'cosine':>8}{'plain':>8}"
        "  (downstream model on the inner fold's out-of-fold rows; held out embedded by:"
        " the inner encoder / the full one; plain: the full encoder's vectors of the same rows)"
    )
    for k, (a, b) in enumerate(split):
        inner = clone(est).set_params(cv=None, callbacks=None, verbose=0, cache=None)
        inner.fit([Xtr[i] for i in a], ytr[a])
        oof[b] = inner.transform([Xtr[i] for i in b])
        I_te = inner.transform(Xte)
        clf = downstream_classifier(sparse=False).fit(oof[b], ytr[b])
        own, on_full = clf.score(I_te, yte), clf.score(F_te, yte)
        cos = float(np.mean(np.sum(I_te * F_te, axis=1)))  # both are normalised
        plain = downstream_classifier(sparse=False).fit(F_tr[b], ytr[b]).score(F_te, yte)
        print(f"  {'':>14}{k + 1:>5}{own:>8.4f}{on_full:>8.4f}{cos:>8.4f}{plain:>8.4f}", flush=True)
    mixed = downstream_classifier(sparse=False).fit(oof, ytr).score(F_te, yte)
    plain = downstream_classifier(sparse=False).fit(F_tr, ytr).score(F_te, yte)
    print(
        f"  all rows: cross-fitted {mixed:.4f}, plain {plain:.4f} "
        f"({(time.perf_counter() - t0) / 60:.1f} min)",
        flush=True,
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", choices=("tweets", "bbc", "bbc-short"), default="tweets")
    p.add_argument("--n", type=int, default=4000, help="stratified sample size (0: all)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument(
        "--train-size",
        type=int,
        default=None,
        help="one stratified split instead of folds: this many training rows, the rest held out",
    )
    p.add_argument("--run-folds", type=int, default=None, help="run only the first k folds")
    p.add_argument(
        "--only-folds", default=None, help="run only these folds, 1-based, comma-separated"
    )
    p.add_argument("--rows", default=",".join(ROWS), help="comma-separated, or 'none'")
    p.add_argument(
        "--tuning-sample",
        action="store_true",
        help="draw the --n rows from those outside the benchmark sample (for choosing settings)",
    )
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
    p.add_argument("--budgets", default="", help="auto, full or PAIRSxEPOCHS, comma-separated")
    p.add_argument("--leakage", action="store_true")
    p.add_argument(
        "--leakage-detail",
        action="store_true",
        help="with --leakage, run the int cv values by hand and score each inner encoder",
    )
    p.add_argument(
        "--leakage-cv",
        default="none,3",
        help="the cv values --leakage compares, comma-separated ('none': plain fit_transform)",
    )
    p.add_argument("--train-speed", action="store_true")
    p.add_argument("--speed-pairs", type=int, default=640)
    p.add_argument("--int8-accuracy", action="store_true")
    p.add_argument("--serving", action="store_true")
    p.add_argument("--serving-pairs", type=int, default=256)
    p.add_argument("--serving-int8", action="store_true")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sklearn.model_selection import StratifiedKFold

    X, y = load(args)
    if args.train_size:
        from sklearn.model_selection import train_test_split

        split = train_test_split(
            np.arange(len(X)), train_size=args.train_size, stratify=y, random_state=0
        )
        folds, args.folds = [tuple(split)], 1
    else:
        folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=0).split(X, y))
    folds = folds[: args.run_folds or args.folds]
    numbers = list(range(1, len(folds) + 1))
    if args.only_folds:
        numbers = [int(k) for k in args.only_folds.split(",")]
        folds = [folds[k - 1] for k in numbers]
    print(
        f"{args.dataset}{' (tuning sample)' if args.tuning_sample else ''}: "
        f"{len(X)} documents, {len(set(y))} classes, {args.folds}-fold CV, "
        f"{len(folds)} fold(s) run, threads={args.threads}, load average {os.getloadavg()}"
    )
    rows = [] if args.rows == "none" else args.rows.split(",")
    print(
        f"{'row':<12}{'accuracy':>10}  {'folds':<40}{'fit_transform s':>16}{'docs/s':>10}"
        f"{'training s':>12}"
    )
    bert_seconds = None
    for name in rows:
        est = make_row(name, args)
        res = [evaluate(est, X, y, tr, te) for tr, te in folds]
        if name == "bert":
            bert_seconds = res[0][1]
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
    if args.budgets:
        budgets(args, X, y, *folds[0], bert_seconds)
    if args.leakage:
        for number, (tr, te) in zip(numbers, folds, strict=True):
            print(
                f"leakage, fold {number} ({len(tr)} training rows, {len(te)} held out), "
                f"n_pairs={args.n_pairs}"
            )
            for cv in [None if c == "none" else int(c) for c in args.leakage_cv.split(",")]:
                if cv is not None and args.leakage_detail:
                    leakage_detail(args, X, y, tr, te, cv)
                    continue
                est = make_row("setfit", args).set_params(cv=cv)
                acc, fit_s, _, _ = evaluate(est, X, y, tr, te)
                print(
                    f"  cv={cv}: held-out accuracy {acc:.4f}, fit_transform {fit_s / 60:.2f} min",
                    flush=True,
                )
    if args.train_speed:
        train_speed(args, X, y, *folds[0])
    if args.int8_accuracy:
        int8_accuracy(args, X, y, *folds[0])
    if args.serving:
        serving(args, X, y, *folds[0])
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()

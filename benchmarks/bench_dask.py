"""skembed on a Dask LocalCluster vs in one process, measured side by side in one run.

1. A ``compare`` grid (Word2Vec x 2 sizes + LSA x 2 widths, x 3 downstream C, cv folds)
   on BBC News: wall time here (sequential tasks, as ``compare_embedders`` runs them)
   vs on a LocalCluster of ``--workers`` processes x 1 thread; the overhead is the
   cluster's wall time minus the ideal (sum of task compute / workers), as a % of the
   cluster's wall time.
2. The scheduler's per-task overhead: ``client.map`` of a no-op over 2,000 items.
3. Partition-wise transform (``skembed.dask.transform``) of BBC x k with a fitted
   Word2Vec (and BERT on a few hundred documents with ``--bert-docs``): documents/s vs
   ``transform`` in this process, and each worker's peak RSS after k=1 and after the
   largest k (flat = memory does not grow with the corpus).

    python benchmarks/bench_dask.py --docs 600 --repeats 1 5 --bert-docs 200

Prints one line per figure and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import pandas as pd


def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _noop(x):
    return x


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=600, help="BBC documents of the compare grid")
    parser.add_argument("--cv", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, nargs="+", default=[1, 5], help="BBC x k to embed")
    parser.add_argument("--partition-docs", type=int, default=1000, help="documents a partition")
    parser.add_argument("--bert-docs", type=int, default=0, help="also BERT on N documents")
    args = parser.parse_args()

    import dask.bag as db
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from skembed.dask import transform
    from skembed.datasets import load_bbc_news
    from skembed.model_selection import compare_embedders
    from skembed.text import TfidfLSA, Word2VecTransformer

    print(f"load average before: {open('/proc/loadavg').read().strip()}")
    X_all, y_all = load_bbc_news()
    idx = np.random.RandomState(0).choice(len(y_all), min(args.docs, len(y_all)), replace=False)
    X, y = [X_all[i] for i in idx], np.asarray(y_all)[idx]
    w2v = dict(min_count=2, epochs=5, n_jobs=1, random_state=0, pooling="tfidf")
    grid = {
        "word2vec": (Word2VecTransformer(**w2v), {"vector_size": [50, 100]}),
        "lsa": (TfidfLSA(random_state=0, min_df=2), {"n_components": [100, 300]}),
    }

    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    start_s = time.perf_counter() - t0
    print(f"LocalCluster({args.workers} processes x 1 thread) start: {start_s:.1f} s")

    # 1. compare grid (workers warmed first: imports, as a long-lived cluster has them)
    compare_embedders(X[:60], y[:60], grid, cv=2, n_jobs=1, scheduler=client)
    t0 = time.perf_counter()
    local = compare_embedders(X, y, grid, cv=args.cv, n_jobs=1)
    local_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    remote = compare_embedders(X, y, grid, cv=args.cv, n_jobs=1, scheduler=client)
    remote_s = time.perf_counter() - t0
    same = np.array_equal(local["mean_test_score"], remote["mean_test_score"])
    n_tasks = len(local) // 3 * args.cv
    task_s = local_s  # the same tasks one after another, 1 thread each
    ideal = task_s / args.workers
    print(
        f"compare grid ({args.docs} docs, {n_tasks} tasks, cv={args.cv}): here {local_s:.1f} s, "
        f"cluster {remote_s:.1f} s (speed-up {local_s / remote_s:.2f}x), task compute "
        f"{task_s:.1f} s, ideal {ideal:.1f} s, overhead {remote_s - ideal:.1f} s = "
        f"{100 * (remote_s - ideal) / remote_s:.0f}% of wall; scores equal: {same}"
    )

    # 2. scheduler per-task overhead
    client.gather(client.map(_noop, range(200)))
    t0 = time.perf_counter()
    client.gather(client.map(_noop, range(2000), pure=False))
    per_task_ms = (time.perf_counter() - t0) / 2000 * 1e3
    print(f"scheduler: {per_task_ms:.2f} ms per no-op task (2,000 tasks, {args.workers} workers)")

    # 3. partition-wise transform
    fitted = Word2VecTransformer(vector_size=100, **w2v).fit(X_all)
    models = [("word2vec", fitted, args.repeats)]
    if args.bert_docs:
        from skembed.text import BertPooledEmbedder

        bert = BertPooledEmbedder(max_length=32, device="cpu", n_jobs=1).fit(X_all[:2])
        models.append(("bert", bert, [1]))
    for name, est, repeats in models:
        for k in repeats:
            docs = (X_all * k) if name == "word2vec" else X_all[: args.bert_docs]
            series = pd.Series(docs, name="text")
            nparts = max(args.workers, len(docs) // args.partition_docs)
            t0 = time.perf_counter()
            here = est.transform(docs)
            here_s = time.perf_counter() - t0
            warm = dd.from_pandas(series.iloc[: 4 * args.workers], npartitions=args.workers)
            transform(est, warm).compute()  # first task of a worker loads the model: once
            t0 = time.perf_counter()
            got = transform(est, dd.from_pandas(series, npartitions=nparts)).compute()
            dist_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            bag = transform(est, db.from_sequence(docs, npartitions=nparts)).compute()
            bag_s = time.perf_counter() - t0
            diff = max(np.abs(got.to_numpy() - here).max(), np.abs(bag - here).max())
            rss = client.run(_peak_rss_mib)
            print(
                f"transform {name} x{k} ({len(docs)} docs, {nparts} partitions): here "
                f"{len(docs) / here_s:.0f} docs/s (1 thread), cluster frame "
                f"{len(docs) / dist_s:.0f} docs/s, bag {len(docs) / bag_s:.0f} docs/s; "
                f"max diff {diff:.1e}; worker peak RSS MiB "
                + ", ".join(f"{v:.0f}" for v in rss.values())
            )
            del here, got, bag
    client.close()
    cluster.close()
    print(f"load average after: {open('/proc/loadavg').read().strip()}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()

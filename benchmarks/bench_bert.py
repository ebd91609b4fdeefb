"""BertPooledEmbedder vs sentence-transformers on BBC News, side by side.

Prints, in one run (default model all-MiniLM-L6-v2 on the CPU):

1. documents/s of ``SentenceTransformer.encode`` and of ``BertPooledEmbedder``
   at each ``--max-lengths`` value, their ratio and the max-abs difference of
   the (unnormalised, mean-pooled) outputs; runs alternate and the best of
   ``--repeats`` is kept, so background load hits both sides alike;
2. ``quantize="int8"``: documents/s, speed-up over float32 and the cosine
   agreement with float32 on the same documents;
3. the wall time of a 5-fold ``GridSearchCV`` over ``LogisticRegression(C)``
   (3 values) with and without the embedding cache;
4. the peak RSS of embedding N documents in a fresh process, for two N, so
   growth with the corpus can be read off.

Shrink it with ``--n-docs``, ``--grid-docs``, ``--memory-docs``, ``--skip``.

Example::

    python benchmarks/bench_bert.py                       # the full run
    python benchmarks/bench_bert.py --n-docs 200 --grid-docs 300 --skip memory
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from _util import bbc_sample, best_of, minilm_dir, peak_rss_mb, run_script


def bench_speed(args, docs):
    import torch
    from sentence_transformers import SentenceTransformer

    from skembed.text.transformer._bert import BertPooledEmbedder
    from skembed.utils._compute import limit_threads

    st = SentenceTransformer(minilm_dir(), device="cpu")
    print(
        f"\n== throughput: {len(docs)} BBC News documents, batch {args.batch_size}, "
        f"{args.threads} threads =="
    )
    print(
        f"{'max_length':>10} {'truncated':>9} {'ST docs/s':>10} {'skembed docs/s':>15} "
        f"{'ratio':>6} {'max|diff|':>10}"
    )
    results = {}
    for L in args.max_lengths:
        st.max_seq_length = L
        est = BertPooledEmbedder(
            device="cpu",
            max_length=L,
            truncation="truncate",
            batch_size=args.batch_size,
            n_jobs=args.threads,
            normalize=True,  # the model's modules.json ends with a Normalize module
        ).fit(docs[:2])
        with limit_threads(args.threads):
            st.encode(docs[:32], batch_size=args.batch_size)  # warm-up
        est.transform(docs[:32])
        t_st, t_us = [], []
        for _ in range(args.repeats):
            with limit_threads(args.threads):
                t0 = time.perf_counter()
                ref = st.encode(docs, batch_size=args.batch_size, convert_to_numpy=True)
                t_st.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ours = est.transform(docs)
            t_us.append(time.perf_counter() - t0)
        n_trunc = est.count_truncated(docs)
        diff = float(np.abs(ours - ref).max())
        st_rate, us_rate = len(docs) / min(t_st), len(docs) / min(t_us)
        print(
            f"{L:>10} {n_trunc / len(docs):>9.0%} {st_rate:>10.1f} {us_rate:>15.1f} "
            f"{us_rate / st_rate:>5.2f}x {diff:>10.2e}"
        )
        results[L] = (us_rate, ours)
    del torch
    return results


def bench_int8(args, docs, speed):
    from skembed.text.transformer._bert import BertPooledEmbedder

    print(f"\n== int8 dynamic quantisation ({len(docs)} documents) ==")
    print(
        f"{'max_length':>10} {'fp32 docs/s':>12} {'int8 docs/s':>12} {'speed-up':>9} "
        f"{'cos min':>8} {'cos mean':>9}"
    )
    for L in args.max_lengths:
        est = BertPooledEmbedder(
            device="cpu",
            max_length=L,
            truncation="truncate",
            batch_size=args.batch_size,
            n_jobs=args.threads,
            quantize="int8",
            normalize=True,
        ).fit(docs[:2])
        est.transform(docs[:32])
        best, q = best_of(est.transform, args.repeats, docs)
        fp_rate, full = speed[L]
        rate = len(docs) / best
        cos = np.sum(q * full, 1) / np.linalg.norm(q, axis=1) / np.linalg.norm(full, axis=1)
        print(
            f"{L:>10} {fp_rate:>12.1f} {rate:>12.1f} {rate / fp_rate:>8.2f}x "
            f"{cos.min():>8.4f} {cos.mean():>9.4f}"
        )


def bench_grid(args):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline

    from skembed.text.transformer._bert import BertPooledEmbedder
    from skembed.text.transformer._cache import EmbeddingCache

    docs, y = bbc_sample(args.grid_docs)
    L = args.grid_max_length
    print(
        f"\n== 5-fold GridSearchCV over LogisticRegression(C in 0.1, 1, 10) on {len(docs)} "
        f"documents (max_length {L}, n_jobs=1) =="
    )
    rows = []
    for label, cache in (("with cache", EmbeddingCache()), ("without cache", None)):
        pipe = make_pipeline(
            BertPooledEmbedder(
                device="cpu",
                max_length=L,
                truncation="truncate",
                n_jobs=args.threads,
                batch_size=args.batch_size,
                cache=cache,
            ),
            LogisticRegression(max_iter=2000),
        )
        search = GridSearchCV(
            pipe,
            {"logisticregression__C": [0.1, 1.0, 10.0]},
            cv=StratifiedKFold(5, shuffle=True, random_state=0),
            n_jobs=1,
        )
        t0 = time.perf_counter()
        search.fit(docs, y)
        rows.append((label, time.perf_counter() - t0, search.best_score_))
    for label, t, score in rows:
        print(f"{label:>14}: {t:8.1f} s   best CV accuracy {score:.4f}")
    print(f"{'speed-up':>14}: {rows[1][1] / rows[0][1]:8.1f}x")


def memory_child(n, max_length, threads, batch_size):
    from skembed.text.transformer._bert import BertPooledEmbedder

    docs, _ = bbc_sample(n)
    est = BertPooledEmbedder(
        device="cpu",
        max_length=max_length,
        truncation="truncate",
        n_jobs=threads,
        batch_size=batch_size,
    ).fit(docs[:2])
    est.transform(docs[:batch_size])
    before = peak_rss_mb()
    out = est.transform(docs)
    after = peak_rss_mb()
    print(
        json.dumps(
            {"n": len(docs), "before_mb": before, "peak_mb": after, "output_mb": out.nbytes / 2**20}
        )
    )


def bench_memory(args):
    print(f"\n== peak RSS, fresh process per run (max_length {args.grid_max_length}) ==")
    print(f"{'documents':>10} {'RSS after warm-up':>18} {'peak RSS':>9} {'output':>8}")
    for n in args.memory_docs:
        cmd = [
            "--memory-child",
            str(n),
            "--grid-max-length",
            str(args.grid_max_length),
            "--threads",
            str(args.threads),
        ]
        r = run_script(__file__, cmd)
        print(
            f"{r['n']:>10} {r['before_mb']:>15.0f} MB {r['peak_mb']:>6.0f} MB "
            f"{r['output_mb']:>5.1f} MB"
        )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n-docs", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-lengths", type=int, nargs="+", default=[256, 128])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--grid-docs", type=int, default=2225)
    p.add_argument("--grid-max-length", type=int, default=128)
    p.add_argument("--memory-docs", type=int, nargs="+", default=[500, 2225])
    p.add_argument("--skip", nargs="*", default=[], choices=["speed", "int8", "grid", "memory"])
    p.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.memory_child is not None:
        memory_child(args.memory_child, args.grid_max_length, args.threads, args.batch_size)
        return
    import torch

    print(
        f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at start"
    )
    docs, _ = bbc_sample(args.n_docs)
    speed = None
    if "speed" not in args.skip or "int8" not in args.skip:
        speed = bench_speed(args, docs)
    if "int8" not in args.skip:
        bench_int8(args, docs, speed)
    if "grid" not in args.skip:
        bench_grid(args)
    if "memory" not in args.skip:
        bench_memory(args)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

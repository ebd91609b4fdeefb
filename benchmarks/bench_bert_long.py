"""Long documents: truncate, chunk and late chunking side by side on BBC News.

Most BBC News articles are longer than all-MiniLM-L6-v2's 256 word pieces. For each
``truncation`` mode this prints the documents embedded per second and the 5-fold accuracy of
a logistic regression on the vectors (the default model's own pipeline: mean pooling, unit
length), with the machine's load average.

    python benchmarks/bench_bert_long.py --n-docs 400

``truncate`` keeps the first 256 pieces; ``chunk`` embeds overlapping windows of 256 and
pools all of them; ``late_chunking`` (Günther et al. 2024) runs one pass of up to 512 pieces
(the model's positions), pools each span of 256 and averages the span vectors.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from _util import bbc_sample, loadavg

MODES = ("truncate", "chunk", "late_chunking")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-docs", type=int, default=400)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    from skembed.text import BertPooledEmbedder

    docs, labels = bbc_sample(args.n_docs)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {loadavg(3)} at start")  # fmt: skip
    est = BertPooledEmbedder(device="cpu", n_jobs=args.threads, truncation="truncate")
    n_long = est.fit(docs[:1]).count_truncated(docs)
    print(f"{args.n_docs} BBC News documents, {n_long} longer than {est.max_length_} pieces")
    print(f"{'truncation':>14} {'docs/s':>8} {'accuracy':>9}")
    for mode in MODES:
        est = BertPooledEmbedder(device="cpu", n_jobs=args.threads, truncation=mode).fit(docs[:1])
        start = time.perf_counter()
        X = est.transform(docs)
        rate = len(docs) / (time.perf_counter() - start)
        acc = cross_val_score(LogisticRegression(max_iter=2000), X, labels, cv=5).mean()
        print(f"{mode:>14} {rate:8.1f} {acc:9.4f}", flush=True)
    print(f"load average {loadavg(3)} at the end")


if __name__ == "__main__":
    main()

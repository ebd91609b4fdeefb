"""TfidfLSA vs a hand-built scikit-learn pipeline on BBC News, side by side.

    python benchmarks/bench_lsa.py [--repeats 5] [--n-components 100]

Prints the median fit_transform time of each, their ratio (goal: <= 1.05)
and the largest absolute difference of the outputs (goal: 0 with dtype float64).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline

from skembed import TfidfLSA
from skembed.datasets import load_bbc_news


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-components", type=int, default=100)
    args = parser.parse_args()
    texts, _ = load_bbc_news()
    params = {"sublinear_tf": True, "min_df": 2}
    k = args.n_components

    def ours():
        return TfidfLSA(
            n_components=k, random_state=0, dtype=np.float64, n_jobs=-1, **params
        ).fit_transform(texts)

    def ref():
        return make_pipeline(
            TfidfVectorizer(**params), TruncatedSVD(n_components=k, random_state=0)
        ).fit_transform(texts)

    ours(), ref()  # warm-up (imports, caches)
    t_ours, t_ref = [], []
    for _ in range(args.repeats):  # interleaved so machine load affects both alike
        t = time.perf_counter()
        a = ours()
        t_ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = ref()
        t_ref.append(time.perf_counter() - t)
    mo, mr = statistics.median(t_ours), statistics.median(t_ref)
    print(f"BBC News: {len(texts)} documents, n_components={k}, {args.repeats} interleaved repeats")
    print(f"{'':<28}{'median s':>10}{'min s':>10}")
    print(f"{'skembed TfidfLSA':<28}{mo:>10.3f}{min(t_ours):>10.3f}")
    print(f"{'sklearn Tfidf+TruncatedSVD':<28}{mr:>10.3f}{min(t_ref):>10.3f}")
    print(f"time ratio skembed/sklearn (median): {mo / mr:.3f}   (goal <= 1.05)")
    print(f"max |difference| of outputs: {np.max(np.abs(a - b)):.3g}")


if __name__ == "__main__":
    main()

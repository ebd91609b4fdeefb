"""PPMIEmbedder fit time and peak memory on BBC News, and its scaling with corpus size.

    python benchmarks/bench_ppmi.py [--scales 1,2,4] [--n-components 100]

Each run is a fresh process (so peak RSS is that run's own); the corpus is
BBC News repeated 1x, 2x, 4x. Prints tokenize+count, PPMI and SVD stage
times, total fit time, peak RSS and the ratio of each to the 1x run.
"""

from __future__ import annotations

import argparse

from _util import run_isolated

CHILD = """
import json, resource, time
import numpy as np
from skembed.datasets import load_bbc_news
from skembed.text._analyzer import build_analyzer, build_vocabulary, count_words, encode, tokenize
from skembed.text.count._cooccurrence import cooccurrence_matrix
from skembed.text.count._ppmi import PPMIEmbedder, ppmi_matrix
from sklearn.utils.extmath import randomized_svd
texts, _ = load_bbc_news()
texts = texts * {scale}
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
toks = tokenize(texts, build_analyzer())
words, counts = build_vocabulary(count_words(toks), 5)
ids, offsets, n_tokens = encode(toks, {{w: i for i, w in enumerate(words)}})
C = cooccurrence_matrix(ids, offsets, len(words), 5, weighting="uniform")
t_count = time.perf_counter() - t
rss_count = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
nnz = int(C.nnz)
t = time.perf_counter(); P = ppmi_matrix(C); t_ppmi = time.perf_counter() - t
t = time.perf_counter(); randomized_svd(P, {k}, n_iter=5, random_state=0); t_svd = time.perf_counter() - t
del toks, C, P
t = time.perf_counter()
PPMIEmbedder(n_components={k}, window=5, min_count=5, random_state=0, n_jobs=2).fit(texts)
t_fit = time.perf_counter() - t
print(json.dumps(dict(tokens=int(n_tokens), vocab=len(words), nnz=nnz,
      t_count=t_count, t_ppmi=t_ppmi, t_svd=t_svd, t_fit=t_fit, rss_data=rss0, rss_count=rss_count,
      rss_peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,2,4")
    parser.add_argument("--n-components", type=int, default=100)
    args = parser.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    rows = []
    for s in scales:
        r = run_isolated(CHILD.format(scale=s, k=args.n_components))
        rows.append((s, r))
    print(
        f"PPMIEmbedder on BBC News x scale (window 5, min_count 5, n_components {args.n_components}, 2 threads)"
    )
    hdr = f"{'scale':>5}{'tokens':>11}{'vocab':>8}{'pairs':>11}{'count s':>9}{'ppmi s':>8}{'svd s':>8}{'fit s':>8}{'fit/1x':>8}{'data MB':>9}{'peak MB':>9}{'count MB':>10}"
    print(hdr)
    base = rows[0][1]["t_fit"]
    for s, r in rows:
        print(
            f"{s:>5}{r['tokens']:>11,}{r['vocab']:>8}{r['nnz']:>11,}{r['t_count']:>9.2f}{r['t_ppmi']:>8.2f}{r['t_svd']:>8.2f}"
            f"{r['t_fit']:>8.2f}{r['t_fit'] / base:>8.2f}{r['rss_data']:>9.0f}{r['rss_peak']:>9.0f}"
            f"{r['rss_count'] - r['rss_data']:>10.0f}"
        )
    print(
        "count s = tokenize + vocabulary + encode + co-occurrence counting; 'data MB' = RSS after loading the"
        " texts; 'count MB' = peak growth during counting; fit s = PPMIEmbedder.fit end to end."
    )


if __name__ == "__main__":
    main()

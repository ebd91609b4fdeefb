"""Chunk preparation (vocabulary remap and subsampling) on 1 and more threads, side by side.

``prepare_chunk`` runs before every corpus chunk is trained, whatever the engine: on one
thread it is the serial part of a word2vec-family fit (Amdahl's bound of the thread
scaling, ``docs/benchmarks/word2vec.md``) and the host's share of a GPU epoch. This script captures
real chunks as a fit hands them over (BBC News: the whole corpus is one chunk; debdocs: its
first chunk of 2**20 raw tokens), then times ``prepare_chunk`` on each thread count (best of
``--repeats``) and checks that every count gives the same tokens as one thread.

Examples::

    python benchmarks/bench_prepare.py
    python benchmarks/bench_prepare.py --threads 1,2,4,16 --corpora bbc,debdocs
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _util import bbc_tokens, default_debdocs, loadavg, read_tokens  # noqa: E402
from bench_partition import _cpu  # noqa: E402


class _Captured(Exception):
    pass


def capture_chunk(docs):
    """The first ``prepare_chunk`` arguments of a default Word2Vec fit on ``docs``."""
    import skembed.kernels.word2vec as kw
    from skembed.text import Word2VecTransformer

    real, seen = kw.prepare_chunk, []

    def spy(*args):
        seen.append(args[:5])
        raise _Captured

    kw.prepare_chunk = spy
    try:
        Word2VecTransformer(random_state=0, epochs=1).fit(docs)
    except _Captured:
        pass
    finally:
        kw.prepare_chunk = real
    return seen[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated; the first is the base")
    parser.add_argument("--corpora", default="bbc,debdocs")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--debdocs", default=default_debdocs())
    args = parser.parse_args(argv)
    import numpy as np

    from skembed.kernels.word2vec import prepare_chunk

    threads = [int(t) for t in args.threads.split(",")]
    print(f"{_cpu()}; load average before: {loadavg(3)}")
    for corpus in args.corpora.split(","):
        if corpus == "bbc":
            docs = bbc_tokens(1)
        elif os.path.exists(args.debdocs):
            docs, _ = read_tokens(args.debdocs, 1 << 21)
        else:
            print(f"{corpus}: {args.debdocs} not found, skipped")
            continue
        raw_ids, raw_offsets, remap, keep, seed = capture_chunk(docs)
        base = prepare_chunk(raw_ids, raw_offsets, remap, keep, seed, 1)
        times = {}
        for n in threads:
            prepare_chunk(raw_ids, raw_offsets, remap, keep, seed, n)  # compiled, warm
            best = float("inf")
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                out = prepare_chunk(raw_ids, raw_offsets, remap, keep, seed, n)
                best = min(best, time.perf_counter() - t0)
            same = all(np.array_equal(a, b) for a, b in zip(out[:2], base[:2], strict=True))
            times[n] = (best, same and out[2] == base[2])
        print(
            f"\n{corpus}: one chunk of {raw_ids.size:,} raw tokens, {raw_offsets.size - 1:,} "
            f"documents, {base[0].size:,} kept (load average {loadavg(1)})"
        )
        print(f"{'threads':>7} {'ms':>7} {'M tokens/s':>10} {'speed-up':>8} same tokens")
        for n, (sec, same) in times.items():
            print(
                f"{n:>7} {sec * 1e3:>7.2f} {raw_ids.size / sec / 1e6:>10.1f} "
                f"{times[threads[0]][0] / sec:>8.2f} {'yes' if same else 'NO'}"
            )


if __name__ == "__main__":
    main()

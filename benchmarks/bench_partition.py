"""What the thread-count-independent partition costs: ``n_parts`` x ``n_jobs``, side by side.

Deterministic training of the word2vec family splits each corpus chunk into ``n_parts``
parts (default 2) that the ``n_jobs`` threads execute, so the vectors depend on
``n_parts`` and never on ``n_jobs`` (issue 21 item 5). This script fits BBC News (5 epochs,
default parameters but ``n_jobs``/``n_parts``; CBOW with gensim's ``alpha=0.05``) once per
``(n_jobs, n_parts)`` pair and prints, per architecture:

- training words/s (raw corpus words x epochs / training time, best of ``--repeats``) and
  its ratio to the default on the same threads and to the sequential kernel
  (``n_jobs=1, n_parts=1``);
- WordSim-353 and SimLex-999 Spearman (gensim's test files);
- a digest of the word vectors, and whether it equals the default's (``n_jobs=2,
  n_parts=2``): the same ``n_parts`` must give the same digest on any thread count.

The machine's CPU and load average are printed with the table.

Examples::

    python benchmarks/bench_partition.py
    python benchmarks/bench_partition.py --arch cbow --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _util import bbc_tokens, loadavg, word_scores  # noqa: E402

#: (n_jobs, n_parts) pairs; the first is the reference of the "same vectors" column
PAIRS = ((2, 2), (1, 2), (4, 2), (1, 1), (2, 1), (2, 4), (1, 4))


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return platform.processor() or "unknown CPU"
    model = next(
        (ln.split(":", 1)[1].strip() for ln in text.splitlines() if "model name" in ln), "?"
    )
    flags = next(
        (ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), []
    )
    has = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]
    return f"{model}, {os.cpu_count()} logical CPUs, {' '.join(has) or 'no AVX2'}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="sg,cbow", help="comma-separated: sg, cbow")
    parser.add_argument("--repeats", type=int, default=2, help="fits per pair (best is kept)")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args(argv)

    from skembed.text import Word2VecTransformer

    docs = bbc_tokens(1)
    n_tokens = sum(map(len, docs))
    Word2VecTransformer(min_count=1, epochs=1, n_jobs=2).fit(docs[:20])  # load the kernel
    print(f"BBC News, {n_tokens:,} tokens, {args.epochs} epochs; {_cpu()}")
    print(f"load average before: {loadavg(3)}")
    for arch in args.arch.split(","):
        sg = {"sg": 1, "cbow": 0}[arch]
        rows = {}
        for n_jobs, n_parts in PAIRS:
            speeds = []
            for _ in range(args.repeats):
                model = Word2VecTransformer(
                    sg=sg, alpha=0.025 if sg else 0.05, epochs=args.epochs, random_state=0,
                    n_jobs=n_jobs, n_parts=n_parts,
                ).fit(docs)  # fmt: skip
                speeds.append(n_tokens * args.epochs / model.train_time_)
            scores = word_scores(model.wv_)
            digest = hashlib.sha256(model.wv_.vectors.tobytes()).hexdigest()[:12]
            rows[n_jobs, n_parts] = (max(speeds), scores, digest)
        default = {n_jobs: rows[n_jobs, 2][0] for n_jobs, _ in PAIRS}
        sequential, reference = rows[1, 1][0], rows[PAIRS[0]][2]
        print(f"\n{arch}  (load average {loadavg(1)})")
        print(
            f"{'n_jobs':>6} {'n_parts':>7} {'M words/s':>9} {'/default':>8} {'/1 part 1 thr':>13} "
            f"{'WordSim':>7} {'SimLex':>7}  digest        same vectors as n_jobs=2, n_parts=2"
        )
        for (n_jobs, n_parts), (speed, scores, digest) in rows.items():
            same = "yes" if digest == reference else "no"
            print(
                f"{n_jobs:>6} {n_parts:>7} {speed / 1e6:>9.2f} {speed / default[n_jobs]:>8.2f} "
                f"{speed / sequential:>13.2f} {scores['wordsim']:>7.3f} {scores['simlex']:>7.3f}  "
                f"{digest}  {same}"
            )


if __name__ == "__main__":
    main()

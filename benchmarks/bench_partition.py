"""What the thread-count-independent partition costs: ``n_parts`` x ``n_jobs``, side by side.

Deterministic training of the word2vec family splits each corpus chunk into ``n_parts``
parts (default 2) that the ``n_jobs`` threads execute, so the vectors depend on
``n_parts`` and never on ``n_jobs`` (issue 21 item 5). This script fits BBC News (5 epochs,
default parameters but ``n_jobs``/``n_parts``; Word2Vec CBOW with gensim's ``alpha=0.05``,
FastText with 500k buckets, Doc2Vec with its defaults) once per ``(n_jobs, n_parts)`` pair
and prints, per model:

- training words/s (raw corpus words x epochs / training time, best of ``--repeats``) and
  its ratio to the default on the same threads and to the sequential kernel
  (``n_jobs=1, n_parts=1``);
- WordSim-353 and SimLex-999 Spearman of the word vectors (gensim's test files; Doc2Vec
  PV-DBOW trains none);
- a digest of the trained vectors (Doc2Vec: the document vectors), and whether it equals
  the default's (``n_jobs=2, n_parts=2``): the same ``n_parts`` must give the same digest
  on any thread count.

The machine's CPU and load average are printed with the table.

Examples::

    python benchmarks/bench_partition.py
    python benchmarks/bench_partition.py --models cbow --repeats 3
    python benchmarks/bench_partition.py --models fasttext,pv-dbow,pv-dm --pairs 2x2,1x2,1x1
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
#: the models: skip-gram and CBOW Word2Vec, FastText skip-gram, Doc2Vec PV-DBOW and PV-DM
MODELS = ("sg", "cbow", "fasttext", "pv-dbow", "pv-dm")


def make(model, **kw):
    """The estimator of ``model`` with the benchmark's settings and ``kw``."""
    from skembed.text import Doc2VecTransformer, FastTextTransformer, Word2VecTransformer

    if model in ("sg", "cbow"):
        sg = model == "sg"
        return Word2VecTransformer(sg=int(sg), alpha=0.025 if sg else 0.05, **kw)
    if model == "fasttext":
        return FastTextTransformer(bucket=500_000, **kw)
    return Doc2VecTransformer(dm=int(model == "pv-dm"), **kw)


def trained_vectors(model, est):
    """The vectors the digest is taken of: the document vectors of Doc2Vec, else the words'."""
    return est.dv_.vectors if model.startswith("pv-") else est.wv_.vectors


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
    parser.add_argument("--models", default="sg,cbow", help=f"comma-separated: {', '.join(MODELS)}")
    parser.add_argument(
        "--pairs",
        default=",".join(f"{j}x{p}" for j, p in PAIRS),
        help="n_jobs x n_parts pairs, comma-separated; the first is the reference",
    )
    parser.add_argument("--repeats", type=int, default=2, help="fits per pair (best is kept)")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args(argv)
    pairs = [tuple(int(v) for v in pair.split("x")) for pair in args.pairs.split(",")]

    from skembed.text import Word2VecTransformer

    docs = bbc_tokens(1)
    n_tokens = sum(map(len, docs))
    Word2VecTransformer(min_count=1, epochs=1, n_jobs=2).fit(docs[:20])  # numba's first use
    print(f"BBC News, {n_tokens:,} tokens, {args.epochs} epochs; {_cpu()}")
    print(f"load average before: {loadavg(3)}")
    for model in args.models.split(","):
        for n_parts in sorted({p for _, p in pairs} | {1, 2}):  # load (or compile) its kernels:
            # one part is the unbuffered variant, more are the buffered one
            make(model, min_count=1, epochs=1, n_jobs=2, n_parts=n_parts).fit(docs[:20])
        rows = {}
        for n_jobs, n_parts in pairs:
            speeds = []
            for _ in range(args.repeats):
                est = make(
                    model, epochs=args.epochs, random_state=0, n_jobs=n_jobs, n_parts=n_parts
                ).fit(docs)
                speeds.append(n_tokens * args.epochs / est.train_time_)
            words = est.wv_ if model != "pv-dbow" else None
            scores = word_scores(words) if words is not None else None
            digest = hashlib.sha256(trained_vectors(model, est).tobytes()).hexdigest()[:12]
            rows[n_jobs, n_parts] = (max(speeds), scores, digest)
        default = {n_jobs: rows[n_jobs, 2][0] for n_jobs, n_parts in pairs if (n_jobs, 2) in rows}
        sequential = rows[1, 1][0] if (1, 1) in rows else None
        reference = rows[pairs[0]][2]
        print(f"\n{model}  (load average {loadavg(1)})")
        print(
            f"{'n_jobs':>6} {'n_parts':>7} {'M words/s':>9} {'/default':>8} {'/1 part 1 thr':>13} "
            f"{'WordSim':>7} {'SimLex':>7}  digest        same vectors as n_jobs={pairs[0][0]}, "
            f"n_parts={pairs[0][1]}"
        )
        for (n_jobs, n_parts), (speed, scores, digest) in rows.items():
            same = "yes" if digest == reference else "no"
            vs_default = f"{speed / default[n_jobs]:>8.2f}" if n_jobs in default else f"{'-':>8}"
            vs_seq = f"{speed / sequential:>13.2f}" if sequential else f"{'-':>13}"
            quality = (
                f"{scores['wordsim']:>7.3f} {scores['simlex']:>7.3f}"
                if scores
                else f"{'-':>7} {'-':>7}"
            )
            print(
                f"{n_jobs:>6} {n_parts:>7} {speed / 1e6:>9.2f} {vs_default} {vs_seq} {quality}  "
                f"{digest}  {same}"
            )


if __name__ == "__main__":
    main()

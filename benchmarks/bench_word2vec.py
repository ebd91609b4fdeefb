"""Word2VecTransformer vs gensim Word2Vec: throughput, peak memory and quality, side by side.

Every training run happens in its own subprocess (so peak RSS is per run) with
the same corpus and hyperparameters (vector_size 100, window 5, negative 5,
min_count 5, sample 1e-3, 5 epochs, 2 threads by default). Printed per run:
fit time (vocabulary + training), words/s (raw corpus words x epochs / fit
time, and / training time only), the skembed/gensim ratio, peak RSS and what
the fit added to the RSS of the process after its imports (``+fit MB``: the
imports differ, numba/llvmlite's ~65 MB is skembed's alone; both workers import
scikit-learn, which with 1.9 imports pandas, pyarrow and scipy.stats),
WordSim-353 and SimLex-999 Spearman, Google analogy accuracy (3CosAdd, over
questions whose words are in the vocabulary), via :mod:`skembed.evaluation`.
skembed's first (compiling) run is timed separately with an empty numba cache.

Each worker first fits a 1,000-token corpus with the same tool (``--no-warmup`` to skip), so
one-time costs of a process's first fit stay outside the timing and the ``+fit MB`` base: for
skembed, numba initialising its typing and target contexts (~0.33 s, whatever the kernel) and
loading the cached kernel (~54 MB); the warm-up seconds of both tools are printed. A grid
search or any process that fits more than once pays them once.

Corpora: BBC News (~0.88M tokens, in memory), BBC News x4 (synthetic
repetition, in memory), and the 11.4M-token debdocs corpus streamed from
disk (skembed ``LineCorpus``, gensim ``LineSentence``) with its prefixes.

Examples::

    python benchmarks/bench_word2vec.py                      # everything
    python benchmarks/bench_word2vec.py --corpora bbc --arch sg --epochs 1   # quick
    python benchmarks/bench_word2vec.py --corpora bbc --no-cold --no-eval --repeat 7
        # 7 interleaved rounds per architecture, median ratio and range
    python benchmarks/bench_word2vec.py --corpora debdocs --prefix-tokens 1000000,4000000 \
        --debdocs /path/to/debdocs-11m.txt.gz
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
from _util import (
    bbc_tokens,
    default_debdocs,
    dumps,
    loadavg,
    peak_rss_mb,
    rss_mb,
    run_script,
    word_scores,
    write_prefix,
)


# ----------------------------------------------------------------------------- worker side
def _load_corpus(spec):
    """(corpus object for the tool, raw token count)."""
    kind = spec["kind"]
    if kind == "file":
        return spec["path"], spec["n_tokens"]
    docs = bbc_tokens(spec.get("repeat", 1))
    return docs, sum(map(len, docs))


def worker(args):
    spec = json.loads(args.worker)
    corpus, n_tokens = _load_corpus(spec)
    p = spec["params"]
    alpha = 0.025 if p["sg"] else 0.05
    out = {"n_tokens": n_tokens}
    if spec["tool"].startswith("skembed"):
        import skembed.kernels.word2vec  # noqa: F401  (import numba outside the timing, as gensim)
        from skembed.text import LineCorpus
        from skembed.text.word2vec._word2vec import Word2VecTransformer

        data = LineCorpus(corpus) if isinstance(corpus, str) else corpus
        if spec.get("warmup", True):
            t0 = time.perf_counter()
            Word2VecTransformer(
                vector_size=p["vector_size"], min_count=1, sg=p["sg"], epochs=1,
                n_jobs=p["threads"], random_state=0,
                lock_free=spec["tool"] == "skembed-lockfree",
                shared_negatives=spec["tool"] != "skembed-noshare",
            ).fit(_WARMUP)  # fmt: skip
            out["warmup_time"] = time.perf_counter() - t0
        model = Word2VecTransformer(
            vector_size=p["vector_size"],
            window=p["window"],
            min_count=p["min_count"],
            sg=p["sg"],
            negative=p["negative"],
            sample=p["sample"],
            epochs=p["epochs"],
            alpha=alpha,
            n_jobs=p["threads"],
            random_state=spec.get("seed", 0),
            lock_free=spec["tool"] == "skembed-lockfree",
            shared_negatives=spec["tool"] != "skembed-noshare",
        )
        out["base_rss_mb"] = rss_mb()
        t0 = time.perf_counter()
        model.fit(data)
        out["fit_time"] = time.perf_counter() - t0
        out["train_time"] = model.train_time_
        kv = model.wv_
    else:
        from gensim.models import Word2Vec
        from gensim.models.word2vec import LineSentence

        from skembed import KeyedVectors

        data = LineSentence(corpus) if isinstance(corpus, str) else corpus
        if spec.get("warmup", True):
            t0 = time.perf_counter()
            Word2Vec(
                _WARMUP, vector_size=p["vector_size"], min_count=1, sg=p["sg"], epochs=1,
                workers=p["threads"], seed=0,
            )  # fmt: skip
            out["warmup_time"] = time.perf_counter() - t0
        model = Word2Vec(
            vector_size=p["vector_size"],
            window=p["window"],
            min_count=p["min_count"],
            sg=p["sg"],
            negative=p["negative"],
            sample=p["sample"],
            epochs=p["epochs"],
            alpha=alpha,
            workers=p["threads"],
            seed=spec.get("seed", 0),
        )
        out["base_rss_mb"] = rss_mb()
        t0 = time.perf_counter()
        model.build_vocab(data)
        t1 = time.perf_counter()
        model.train(data, total_examples=model.corpus_count, epochs=p["epochs"])
        t2 = time.perf_counter()
        out["fit_time"] = t2 - t0
        out["train_time"] = t2 - t1
        kv = KeyedVectors(model.wv.vectors, model.wv.index_to_key)
    out["n_words"] = len(kv)
    out["peak_rss_mb"] = peak_rss_mb()
    if spec.get("evaluate", True):
        scores = word_scores(kv, analogy=True)
        out.update({key: scores[key] for key in ("wordsim", "simlex", "analogy")})
    print(dumps(out))


#: the warm-up fit's corpus (1,000 tokens): a first fit in a process pays one-time costs that
#: are not training (numba initialises its typing and target contexts, ~0.33 s, and loads the
#: cached kernel), so each worker fits this first, for both tools, outside the timing
_WARMUP = [[f"w{(i * 7 + j) % 50}" for j in range(20)] for i in range(50)]


# ----------------------------------------------------------------------------- driver side
def run(spec, env=None):
    return run_script(__file__, ["--worker", json.dumps(spec)], env=env)


def fmt(x, spec=".3f"):
    return "   n/a" if x is None or x != x else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument(
        "--corpora",
        default="bbc,bbc4,debdocs",
        help="comma list of bbc, bbc4 (x4 repetition), debdocs",
    )
    ap.add_argument("--arch", default="sg,cbow", help="comma list of sg, cbow")
    ap.add_argument(
        "--debdocs",
        default=default_debdocs(),
        help="path of debdocs-11m.txt.gz (env SKEMBED_DEBDOCS); skipped if missing",
    )
    ap.add_argument(
        "--prefix-tokens",
        default="1000000,4000000",
        help="debdocs prefixes (tokens) for the scaling curve; '' for none",
    )
    ap.add_argument(
        "--full-debdocs",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the whole debdocs corpus",
    )
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--tools",
        default="gensim,skembed",
        help="run order (gensim, skembed, skembed-lockfree = lock_free=True, "
        "skembed-noshare = shared_negatives=False); ratios vs gensim",
    )
    ap.add_argument("--seed", type=int, default=0, help="random_state / gensim seed")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of every tool per corpus and architecture, interleaved (gensim, skembed, "
        "gensim, skembed, ...); with 2 or more the median of the rounds' ratios is printed "
        "with their range (this VM's speed drifts by a third between minutes)",
    )
    ap.add_argument("--no-eval", action="store_true", help="skip the quality evaluation")
    ap.add_argument("--no-cold", action="store_true", help="skip the compiling (cold) run")
    ap.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit a 1,000-token corpus in each worker before the timed fit (both tools): "
        "one-time initialisation outside the timing; its seconds are printed",
    )
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")

    params = dict(
        vector_size=100,
        window=5,
        min_count=5,
        negative=5,
        sample=1e-3,
        epochs=args.epochs,
        threads=args.threads,
    )
    tools = args.tools.split(",")
    archs = [a for a in args.arch.split(",") if a]
    corpora = []
    tmpdir = tempfile.mkdtemp(prefix="bench-w2v-")
    for name in args.corpora.split(","):
        if name == "bbc":
            corpora.append(("BBC News", {"kind": "bbc"}))
        elif name == "bbc4":
            corpora.append(("BBC News x4", {"kind": "bbc", "repeat": 4}))
        elif name == "debdocs":
            if not os.path.exists(args.debdocs):
                print(f"# debdocs corpus not found at {args.debdocs}: skipped")
                continue
            for n in [int(x) for x in args.prefix_tokens.split(",") if x]:
                path, total = write_prefix(args.debdocs, n, tmpdir)
                corpora.append(
                    (
                        f"debdocs {total / 1e6:.1f}M",
                        {"kind": "file", "path": path, "n_tokens": total},
                    )
                )
            if args.full_debdocs:
                path, total = write_prefix(args.debdocs, 0, tmpdir)
                corpora.append(
                    (
                        f"debdocs {total / 1e6:.1f}M",
                        {"kind": "file", "path": path, "n_tokens": total},
                    )
                )
    print(f"# {params}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    if "skembed" in tools and not args.no_cold and corpora:
        env = {"NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="numba-cold-")}
        spec = {
            "tool": "skembed",
            "params": dict(params, sg=1),
            "evaluate": False,
            "warmup": False,
            **corpora[0][1],
        }
        cold = run(spec, env=env)
        warm = run(spec)
        print(
            f"# first (compiling) skembed fit on {corpora[0][0]}: {cold['fit_time']:.1f} s "
            f"(with a warm numba cache: {warm['fit_time']:.1f} s; compile cost "
            f"{cold['fit_time'] - warm['fit_time']:.1f} s)"
        )
    header = (
        f"{'corpus':<16} {'arch':<5} {'tool':<8} {'fit s':>7} {'train s':>8} "
        f"{'Mwords/s':>9} {'train Mw/s':>10} {'ratio':>6} {'RSS MB':>7} {'+fit MB':>7} "
        f"{'WS353':>6} {'SL999':>6} {'analogy':>7}"
    )
    print(header)
    print("-" * len(header))
    for cname, cspec in corpora:
        for arch in archs:
            ratios = {}  # tool -> per-round (fit words/s ratio, train words/s ratio)
            for _ in range(args.repeat):
                _one_round(args, params, tools, cname, cspec, arch, ratios)
            if args.repeat > 1:
                for tool, rs in ratios.items():
                    fit_r = np.array([r[0] for r in rs])
                    train_r = np.array([r[1] for r in rs])
                    print(
                        f"{'':<16} {arch:<5} {tool:<8} median of {len(rs)} rounds: fit words/s "
                        f"x{np.median(fit_r):.2f} (x{fit_r.min():.2f}-x{fit_r.max():.2f}), "
                        f"train words/s x{np.median(train_r):.2f} "
                        f"(x{train_r.min():.2f}-x{train_r.max():.2f})",
                        flush=True,
                    )


def _one_round(args, params, tools, cname, cspec, arch, ratios):
    """Fit every tool once on one corpus and architecture, print the rows and the ratios."""
    res = {}
    for tool in tools:
        spec = {
            "tool": tool,
            "params": dict(params, sg=int(arch == "sg")),
            "evaluate": not args.no_eval,
            "warmup": args.warmup,
            "seed": args.seed,
            **cspec,
        }
        res[tool] = r = run(spec)
        words = r["n_tokens"] * args.epochs
        r["wps"] = words / r["fit_time"]
        r["train_wps"] = words / r["train_time"]
        ratio = (r["wps"] / res["gensim"]["wps"]) if tool != "gensim" and "gensim" in res else None
        print(
            f"{cname:<16} {arch:<5} {tool:<8} {r['fit_time']:7.1f} "
            f"{r['train_time']:8.1f} {r['wps'] / 1e6:9.3f} {r['train_wps'] / 1e6:10.3f} "
            f"{fmt(ratio, '6.2f') if ratio else '':>6} {r['peak_rss_mb']:7.0f} "
            f"{r['peak_rss_mb'] - r['base_rss_mb']:7.0f} "
            f"{fmt(r.get('wordsim')):>6} {fmt(r.get('simlex')):>6} "
            f"{fmt(r.get('analogy')):>7}",
            flush=True,
        )
    for tool in [t for t in res if t.startswith("skembed") and "gensim" in res]:
        s, g = res[tool], res["gensim"]
        fit_ratio, train_ratio = s["wps"] / g["wps"], s["train_wps"] / g["train_wps"]
        ratios.setdefault(tool, []).append((fit_ratio, train_ratio))
        print(
            f"{'':<16} {arch:<5} {tool:<8} fit words/s x{fit_ratio:.2f}, "
            f"train words/s x{train_ratio:.2f}, RSS "
            f"x{s['peak_rss_mb'] / g['peak_rss_mb']:.2f} (added by the fit: "
            f"x{(s['peak_rss_mb'] - s['base_rss_mb']) / (g['peak_rss_mb'] - g['base_rss_mb']):.2f})",
            flush=True,
        )
    if args.warmup:
        print(
            "# warm-up fit before each timed fit (not counted): "
            + ", ".join(f"{t} {r['warmup_time']:.2f} s" for t, r in res.items()),
            flush=True,
        )
    print(f"# load average {loadavg()}", flush=True)


if __name__ == "__main__":
    main()

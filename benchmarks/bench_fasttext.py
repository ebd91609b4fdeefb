"""skembed FastTextTransformer vs gensim FastText, side by side in one run.

Same corpus and hyperparameters for both (skip-gram, vector_size 100,
window 5, negative 5, min_count 5, sample 1e-3, 5 epochs, min_n 3, max_n 6,
same bucket, 2 threads). Each training runs in a fresh process, so its peak
RSS is its own. Printed per corpus: training time, throughput (corpus
tokens x epochs / wall-clock second), CPU seconds, peak RSS, WordSim-353 and
SimLex-999 Spearman, Google-analogy accuracy (3CosAdd, restrict_vocab=30000)
and the skembed / gensim ratios; plus the time of a first run that has to
compile the numba kernels (empty numba cache).

Examples
--------
python benchmarks/bench_fasttext.py                       # BBC News only
python benchmarks/bench_fasttext.py --debdocs ../shared/data/debdocs-11m.txt.gz --max-tokens 4000000
python benchmarks/bench_fasttext.py --corpora bbc --epochs 1 --bucket 100000   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _util import (  # noqa: E402
    bbc_tokens,
    default_debdocs,
    peak_rss_mb,
    read_tokens,
    run_isolated,
    word_scores,
)

TINY = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs"] * 20


def _load_corpus(name, path, max_tokens):
    """Token lists of a corpus (the same lists go to both tools)."""
    if name == "bbc":
        return bbc_tokens()
    if name == "tiny":
        return [t.split() for t in TINY]
    return read_tokens(path, max_tokens, max_document_length=10_000)[0]


def child(spec):
    """Train one tool on one corpus and print a JSON line of figures (runs in a subprocess)."""
    import time

    docs = _load_corpus(spec["corpus"], spec.get("path"), spec.get("max_tokens"))
    n_tokens = sum(len(d) for d in docs)
    p = spec["params"]
    cpu0, t0 = time.process_time(), time.perf_counter()
    if spec["tool"].startswith("skembed"):
        from skembed.text.word2vec._fasttext import FastTextTransformer

        est = FastTextTransformer(
            vector_size=p["vector_size"],
            sg=1,
            window=p["window"],
            negative=p["negative"],
            min_count=p["min_count"],
            sample=p["sample"],
            epochs=p["epochs"],
            min_n=3,
            max_n=6,
            bucket=p["bucket"],
            alpha=0.025,
            random_state=0,
            n_jobs=p["threads"],
            lock_free=spec["tool"] == "skembed-lockfree",
        ).fit(docs)
        wv = est.wv_
    else:
        from gensim.models import FastText

        model = FastText(
            docs,
            vector_size=p["vector_size"],
            sg=1,
            window=p["window"],
            negative=p["negative"],
            min_count=p["min_count"],
            sample=p["sample"],
            epochs=p["epochs"],
            min_n=3,
            max_n=6,
            bucket=p["bucket"],
            alpha=0.025,
            seed=0,
            workers=p["threads"],
        )
        wv = model.wv
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    out = {
        "tool": spec["tool"],
        "n_tokens": n_tokens,
        "n_words": len(wv.index_to_key),
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "words_per_s": n_tokens * p["epochs"] / elapsed,
        "peak_rss_mb": peak_rss_mb(),
    }
    if spec["corpus"] != "tiny":
        scores = word_scores(wv, analogy=True, restrict_vocab=30000)
        out.update({key: scores[key] for key in ("wordsim", "simlex", "analogy")})
    print(json.dumps(out))


def _run(spec, env=None):
    code = (
        f"import json, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
        f"import bench_fasttext; bench_fasttext.child(json.loads({json.dumps(spec)!r}))"
    )
    return run_isolated(code, env=env)


def main(argv=None):
    default_deb = default_debdocs()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--corpora",
        default=None,
        help="comma list of bbc,debdocs (default: bbc, plus debdocs when its file exists)",
    )
    ap.add_argument(
        "--debdocs", default=default_deb, help="path of debdocs-11m.txt.gz (env SKEMBED_DEBDOCS)"
    )
    ap.add_argument("--max-tokens", type=int, default=0, help="debdocs prefix (0: all)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--bucket", type=int, default=500_000)
    ap.add_argument("--vector-size", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--tools",
        default="skembed,gensim",
        help="comma list of skembed, skembed-lockfree (lock_free=True), gensim",
    )
    ap.add_argument("--skip-compile", action="store_true", help="skip the cold-cache run")
    args = ap.parse_args(argv)
    corpora = (
        args.corpora.split(",")
        if args.corpora
        else (["bbc", "debdocs"] if os.path.exists(args.debdocs) else ["bbc"])
    )
    params = dict(
        vector_size=args.vector_size,
        window=5,
        negative=5,
        min_count=5,
        sample=1e-3,
        epochs=args.epochs,
        bucket=args.bucket,
        threads=args.threads,
    )
    print(
        f"FastText skip-gram, params {params}, min_n=3 max_n=6; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    if not args.skip_compile:
        with tempfile.TemporaryDirectory() as cache:
            r = _run(
                {"tool": "skembed", "corpus": "tiny", "params": {**params, "epochs": 1}},
                env={"NUMBA_CACHE_DIR": cache},
            )
        print(
            f"first skembed run with an empty numba cache (compiles the kernels): "
            f"{r['seconds']:.1f} s on a 180-token corpus"
        )
    header = (
        f"{'corpus':<10}{'tool':<17}{'tokens':>10}{'words':>8}{'train s':>9}{'words/s':>10}"
        f"{'CPU s':>8}{'RSS MB':>8}{'WS353':>7}{'SL999':>7}{'analogy':>8}"
    )
    for corpus in corpora:
        label = corpus
        spec = {"corpus": corpus, "params": params}
        if corpus == "debdocs":
            spec.update(path=args.debdocs, max_tokens=args.max_tokens)
            if args.max_tokens:
                label = f"deb{args.max_tokens / 1e6:g}M"
        results = {}
        print(header)
        for tool in args.tools.split(","):
            r = results[tool] = _run({**spec, "tool": tool})
            print(
                f"{label:<10}{tool:<17}{r['n_tokens']:>10}{r['n_words']:>8}{r['seconds']:>9.1f}"
                f"{r['words_per_s']:>10.0f}{r['cpu_seconds']:>8.1f}{r['peak_rss_mb']:>8.0f}"
                f"{r['wordsim']:>7.3f}{r['simlex']:>7.3f}{r['analogy']:>8.3f}",
                flush=True,
            )
        for tool in [t for t in results if t.startswith("skembed") and "gensim" in results]:
            a, b = results[tool], results["gensim"]
            print(
                f"{label:<10}{tool + ' ratio':<17} throughput x{a['words_per_s'] / b['words_per_s']:.2f}"
                f" (CPU-time x{b['cpu_seconds'] / a['cpu_seconds']:.2f}), peak RSS "
                f"x{a['peak_rss_mb'] / b['peak_rss_mb']:.2f}, WordSim {a['wordsim'] - b['wordsim']:+.3f}, "
                f"SimLex {a['simlex'] - b['simlex']:+.3f}, analogy {a['analogy'] - b['analogy']:+.3f}"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

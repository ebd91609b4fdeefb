"""skembed GloVe vs gensim skip-gram Word2Vec: time, peak memory and word-similarity quality.

Runs, in one session and on the same token streams:

* skembed ``GloVeTransformer`` (vector_size 100, window 10, x_max 100, weighting_exponent 0.75,
  15 epochs, min_count 5, 2 threads; counting included), and
* gensim ``Word2Vec`` skip-gram (vector_size 100, window 5, negative 5,
  min_count 5, 5 epochs, 2 workers),

on BBC News (0.88M tokens), BBC News repeated x4, and the 11.4M-token
debdocs corpus, and prints times, the GloVe/gensim time ratio (goal <= 3.5),
peak RSS per stage and WordSim-353 / SimLex-999 Spearman next to the Stanford
GloVe C tools' figures measured on this machine class (from issue 3).

Each measurement runs in a fresh subprocess, so peak RSS (``VmHWM`` of
``/proc/self/status``) belongs to that run alone. For GloVe the counting
stage (vocabulary, id encoding, co-occurrence matrix) and the training stage
(records, shuffling, AdaGrad epochs) are the estimator's own ``_count`` and
``_train`` steps, the two halves of ``fit``; the high-water mark is reset
between them (``/proc/self/clear_refs``), so the training peak is the peak
reached during training (it includes what is still alive from counting:
the vocabulary and the corpus data the benchmark holds).

BBC News is tokenized once with the estimator's analyzer and the same token
lists are given to both tools (tokenization time excluded from both); the
debdocs corpus is streamed from the .gz file by both tools (``LineCorpus`` /
gensim ``LineSentence``), so reading and splitting is included in both.

Usage::

    python benchmarks/bench_glove.py                      # BBC, BBC x4, debdocs
    python benchmarks/bench_glove.py --repeats 1 --no-debdocs --epochs 3   # quick
    python benchmarks/bench_glove.py --debdocs PATH --debdocs-lines 100000
"""

from __future__ import annotations

import argparse
import json
import os
import time

from _util import bbc_tokens, default_debdocs, run_script, word_scores

DEFAULT_DEBDOCS = default_debdocs()

# Stanford GloVe C tools on this 2-core machine class (issue 3)
C_TOOLS = {
    "bbc": {"time": 47.7, "gensim": 10.8, "ws353": 0.156, "simlex": 0.074, "rss_mb": 352},
    "debdocs": {"time": 277.0, "gensim": 134.0, "ws353": 0.329, "simlex": 0.153, "rss_mb": 1180},
}


# ----------------------------------------------------------------------------- worker side
def _status(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0  # MB
    return float("nan")


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _load(corpus, repeat, lines):
    if corpus == "bbc":
        return bbc_tokens(repeat)
    from skembed.text import LineCorpus

    return LineCorpus(corpus, limit=lines)


def _evaluate(kv):
    scores = word_scores(kv)
    return {
        "ws353": scores["wordsim"],
        "simlex": scores["simlex"],
        "ws_oov": scores["wordsim_oov"],
        "sl_oov": scores["simlex_oov"],
    }


def worker_glove(args):
    from skembed.text.count._glove import GloVeTransformer

    docs = _load(args.corpus, args.repeat, args.lines)
    base_rss = _status("VmRSS")
    est = GloVeTransformer(
        vector_size=100,
        window=10,
        x_max=100.0,
        weighting_exponent=0.75,
        epochs=args.epochs,
        min_count=5,
        n_jobs=args.threads,
        random_state=0,
        engine=args.engine,
    )
    est._validate_params()
    documents = est._check_documents(docs, allow_iterable=True)
    est._check_params()  # device, engine, threads: what fit checks before counting
    _reset_peak()
    t0 = time.perf_counter()
    counted = est._count(documents, est._analyzer())
    t_count = time.perf_counter() - t0
    nnz = counted["X"].nnz
    n_words = len(counted["index_to_key"])
    count_peak = _status("VmHWM")
    reset = _reset_peak()
    t0 = time.perf_counter()
    kv = est._train(counted)
    t_train = time.perf_counter() - t0
    train_peak = _status("VmHWM")
    out = {
        "tool": f"skembed GloVe ({est.engine_})",
        "count_s": t_count,
        "train_s": t_train,
        "total_s": t_count + t_train,
        "count_peak_mb": count_peak,
        "train_peak_mb": train_peak if reset else float("nan"),
        "base_rss_mb": base_rss,
        "vocab": n_words,
        "nnz": nnz,
        "loss": est.loss_history_[-1],
    }
    out.update(_evaluate(kv))
    return out


def worker_gensim(args):
    from gensim.models import Word2Vec
    from gensim.models.word2vec import LineSentence

    from skembed.keyedvectors import KeyedVectors

    if args.corpus == "bbc":
        sentences = _load("bbc", args.repeat, None)
    else:
        sentences = LineSentence(args.corpus, limit=args.lines)
    base_rss = _status("VmRSS")
    _reset_peak()
    t0 = time.perf_counter()
    model = Word2Vec(
        sentences,
        sg=1,
        vector_size=100,
        window=5,
        negative=5,
        min_count=5,
        epochs=args.w2v_epochs,
        workers=args.threads,
        seed=0,
    )
    elapsed = time.perf_counter() - t0
    kv = KeyedVectors(model.wv.vectors, model.wv.index_to_key)
    out = {
        "tool": "gensim Word2Vec sg",
        "total_s": elapsed,
        "peak_mb": _status("VmHWM"),
        "base_rss_mb": base_rss,
        "vocab": len(kv),
    }
    out.update(_evaluate(kv))
    return out


# ----------------------------------------------------------------------------- driver side
def run_worker(kind, corpus, repeat, args):
    cmd = [
        "--worker",
        kind,
        "--corpus",
        corpus,
        "--repeat",
        str(repeat),
        "--epochs",
        str(args.epochs),
        "--w2v-epochs",
        str(args.w2v_epochs),
        "--threads",
        str(args.threads),
        "--engine",
        args.engine,
    ]
    if args.lines is not None:
        cmd += ["--lines", str(args.lines)]
    return run_script(__file__, cmd)


def fmt(x, spec=".1f"):
    return "n/a" if x is None or x != x else format(x, spec)


def report(name, glove, w2v, ref):
    ratio = glove["total_s"] / w2v["total_s"]
    print(f"\n=== {name} ===")
    print(f"vocabulary: GloVe {glove['vocab']} words, {glove['nnz']:,} non-zero co-occurrences")
    head = f"{'tool':34s} {'total s':>8s} {'count s':>8s} {'train s':>8s} "
    head += f"{'peak MB (count/train)':>22s} {'WS353':>6s} {'SL999':>6s}"
    print(head)
    peaks = f"{fmt(glove['count_peak_mb'], '.0f')}/{fmt(glove['train_peak_mb'], '.0f')}"
    print(
        f"{glove['tool']:34s} {glove['total_s']:8.1f} {glove['count_s']:8.1f} "
        f"{glove['train_s']:8.1f} {peaks:>22s} {glove['ws353']:6.3f} {glove['simlex']:6.3f}"
    )
    print(
        f"{w2v['tool']:34s} {w2v['total_s']:8.1f} {'':>8s} {'':>8s} "
        f"{fmt(w2v['peak_mb'], '.0f'):>22s} {w2v['ws353']:6.3f} {w2v['simlex']:6.3f}"
    )
    if ref is not None:
        cratio = ref["time"] / ref["gensim"]
        print(
            f"{'Stanford GloVe C (issue 3)':34s} {ref['time']:8.1f} {'':>8s} {'':>8s} "
            f"{ref['rss_mb']:>22.0f} {ref['ws353']:6.3f} {ref['simlex']:6.3f}"
            f"   (gensim sg then: {ref['gensim']:.1f} s, ratio {cratio:.1f})"
        )
    verdict = "OK" if ratio <= 3.5 else "ABOVE GOAL"
    print(f"time ratio GloVe / gensim sg: {ratio:.2f}  (goal <= 3.5: {verdict})")
    print(f"OOV ratio of the test pairs: WS353 {glove['ws_oov']:.2f}, SimLex {glove['sl_oov']:.2f}")
    print(
        f"RSS before the measured stages (interpreter, libraries, corpus held by the benchmark): "
        f"GloVe {glove['base_rss_mb']:.0f} MB, gensim {w2v['base_rss_mb']:.0f} MB"
    )
    return ratio


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--repeats", default="1,4", help="BBC News repetitions, comma separated")
    p.add_argument("--epochs", type=int, default=15, help="GloVe epochs (15 as the C tools run)")
    p.add_argument("--w2v-epochs", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--engine", default="auto", choices=["auto", "numba", "torch"])
    p.add_argument("--debdocs", default=DEFAULT_DEBDOCS, help="path of debdocs-11m.txt.gz")
    p.add_argument("--no-debdocs", action="store_true")
    p.add_argument("--no-bbc", action="store_true")
    p.add_argument("--lines", type=int, default=None, help="read only this many debdocs lines")
    p.add_argument("--worker", choices=["glove", "gensim"], help=argparse.SUPPRESS)
    p.add_argument("--corpus", help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        out = worker_glove(args) if args.worker == "glove" else worker_gensim(args)
        print(json.dumps(out))
        return

    print(
        f"GloVe: vector_size 100, window 10, x_max 100, weighting_exponent 0.75, {args.epochs} epochs, "
        f"min_count 5, {args.threads} threads, engine={args.engine}\n"
        f"gensim Word2Vec skip-gram: vector_size 100, window 5, negative 5, min_count 5, "
        f"{args.w2v_epochs} epochs, {args.threads} workers\n"
        f"machine: {os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.2f}"
    )
    if not args.no_bbc:
        for repeat in [int(r) for r in args.repeats.split(",") if r]:
            glove = run_worker("glove", "bbc", repeat, args)
            w2v = run_worker("gensim", "bbc", repeat, args)
            ref = C_TOOLS["bbc"] if repeat == 1 and args.epochs == 15 else None
            report(f"BBC News x{repeat}", glove, w2v, ref)
    if not args.no_debdocs:
        if not os.path.exists(args.debdocs):
            print(f"\n(debdocs corpus not found at {args.debdocs}; skipped)")
        else:
            glove = run_worker("glove", args.debdocs, 1, args)
            w2v = run_worker("gensim", args.debdocs, 1, args)
            full = args.lines is None and args.epochs == 15
            name = "debdocs-11m" + ("" if args.lines is None else f" (first {args.lines} lines)")
            report(name, glove, w2v, C_TOOLS["debdocs"] if full else None)
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

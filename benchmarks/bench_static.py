"""StaticEmbedder vs BertPooledEmbedder vs model2vec on BBC News, side by side, in one run.

Prints one table:

(a) transform documents/s: StaticEmbedder on all documents (best of
    ``--repeats``), model2vec's ``StaticModel.encode`` on the same, and
    BertPooledEmbedder (``max_length`` 256, batch 32) on ``--bert-docs``
    documents; ratios to BERT;
(b) fit seconds: StaticEmbedder's distillation of all-MiniLM-L6-v2
    (``vocabulary="model"``, ``n_components=256``, model load included, cold
    caches; ``backend="torch"`` and ``"onnx"``) vs model2vec's ``distill`` of
    the same directory (``pca_dims=256``), imports warmed, best of
    ``--fit-repeats`` alternating runs;
(c) BBC News 5-fold accuracy with ``compare_embedders``' downstream model
    (StandardScaler -> LogisticRegression, C searched) for BERT, StaticEmbedder
    with ``vocabulary`` "model" / "corpus" / "both" (fitted on the training
    folds only, inside the pipeline) and model2vec's distilled model (read by
    ``StaticEmbedder.from_pretrained``, i.e. model2vec's own ``encode``);
    every row ``normalize=True``.

All with ``--threads`` threads (torch, BLAS). Example::

    python benchmarks/bench_static.py               # the full run (~10 min on 2 cores)
    python benchmarks/bench_static.py --skip accuracy
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from _util import best_of, loadavg, minilm_dir


def bench_fit(args, workdir):
    """Distillation seconds: ours (torch, and onnx when installed) and model2vec's ``distill``.

    Imports, the weight files' page cache and the onnx export are warmed first, so no side pays
    for them; each is timed ``--fit-repeats`` times, alternating, and the best is kept.
    """
    import importlib.util

    import torch
    from model2vec.distill import distill
    from transformers import AutoModel

    from skembed.text import static as static_mod
    from skembed.text.transformer import _loading as _hf
    from skembed.text.transformer._static import StaticEmbedder

    torch.set_num_threads(args.threads)
    AutoModel.from_pretrained(minilm_dir())  # warm: imports and the page cache of the weights
    backends = ["torch"] + (["onnx"] if importlib.util.find_spec("onnxruntime") else [])
    common = {"device": "cpu", "n_jobs": args.threads, "n_components": 256, "normalize": True}
    if "onnx" in backends:  # the one-off export (cached on disk) is not part of a fit's time
        t = time.perf_counter()
        StaticEmbedder(backend="onnx", **common).fit(["warm"])
        print(f"    onnx export of MiniLM (once, cached): {time.perf_counter() - t:.1f} s")
    rows = {f"ours ({b})": np.inf for b in backends} | {"model2vec": np.inf}
    ours = m2v = None
    for _ in range(args.fit_repeats):
        for b in backends:  # cold weight cache and teacher-row cache, model load included
            _hf.clear_model_cache()
            static_mod.clear_teacher_cache()
            t = time.perf_counter()
            est = StaticEmbedder(backend=b, **common).fit(["warm"])
            rows[f"ours ({b})"] = min(rows[f"ours ({b})"], time.perf_counter() - t)
            ours = est if b == "torch" else ours
        t = time.perf_counter()
        m2v = distill(minilm_dir(), pca_dims=256, device="cpu")
        rows["model2vec"] = min(rows["model2vec"], time.perf_counter() - t)
    m2v_dir = os.path.join(workdir, "m2v")
    m2v.save_pretrained(m2v_dir)
    diff = float(np.abs(m2v.embedding.astype(np.float32) - ours.wv_.vectors).max())
    return rows, m2v_dir, ours, diff


def bench_transform(args, docs, ours, m2v_dir):
    from model2vec import StaticModel

    from skembed.text.transformer._bert import BertPooledEmbedder

    out = {}
    best, _ = best_of(ours.transform, args.repeats, docs)
    out["static"] = len(docs) / best
    m2v = StaticModel.from_pretrained(m2v_dir)
    best, _ = best_of(m2v.encode, args.repeats, docs, use_multiprocessing=False)
    out["model2vec"] = len(docs) / best
    bert = BertPooledEmbedder(
        device="cpu", max_length=256, truncation="truncate", batch_size=32, n_jobs=args.threads
    ).fit(docs[:2])
    sub = docs[: args.bert_docs]
    t = time.perf_counter()
    bert.transform(sub)
    out["bert"] = len(sub) / (time.perf_counter() - t)
    return out


def bench_accuracy(args, docs, labels, m2v_dir):
    from skembed.model_selection import compare_embedders
    from skembed.text.transformer._bert import BertPooledEmbedder
    from skembed.text.transformer._static import StaticEmbedder

    common = {"device": "cpu", "n_components": 256, "normalize": True, "n_jobs": args.threads}
    embedders = {
        "bert": (
            BertPooledEmbedder(
                device="cpu",
                cache="memory",
                max_length=256,
                truncation="truncate",
                normalize=True,
                n_jobs=args.threads,
            ),
            {},
        ),
        "static (model)": (StaticEmbedder(vocabulary="model", **common), {}),
        "static (corpus)": (StaticEmbedder(vocabulary="corpus", **common), {}),
        "static (corpus, min_count=1)": (
            StaticEmbedder(vocabulary="corpus", min_count=1, **common),
            {},
        ),
        "static (corpus, sif 1e-3)": (
            StaticEmbedder(vocabulary="corpus", sif_coefficient=1e-3, **common),
            {},
        ),
        "static (both)": (StaticEmbedder(vocabulary="both", **common), {}),
        "model2vec": (StaticEmbedder.from_pretrained(m2v_dir), {}),
    }
    res = compare_embedders(
        docs, labels, embedders, cv=5, n_jobs=args.threads, random_state=0, verbose=1
    )
    best = res.sort_values("mean_test_score", ascending=False).groupby("embedder").head(1)
    return {
        r.embedder: (r.mean_test_score, r.std_test_score, r.mean_embed_fit_time)
        for r in best.itertuples()
    }


def corpus_effect(docs):
    from skembed.text.transformer._static import StaticEmbedder

    out = {}
    for vocab in ("model", "corpus", "both"):
        est = StaticEmbedder(vocabulary=vocab, device="cpu", normalize=True).fit(docs)
        out[vocab] = (len(est.wv_), est.n_corpus_words_, est.oov_rate_)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bert-docs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fit-repeats", type=int, default=2)
    parser.add_argument("--skip", nargs="*", default=[], choices=["accuracy"])
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))

    from skembed.datasets import load_bbc_news

    docs, labels = load_bbc_news()
    print(f"BBC News: {len(docs)} documents; {args.threads} threads; loadavg {loadavg(3)}")
    with tempfile.TemporaryDirectory() as workdir:
        fit, m2v_dir, ours, diff = bench_fit(args, workdir)
        print(f"(b) fit done, loadavg {loadavg(3)}; max |ours - model2vec(float16)| = {diff:.2g}")
        speed = bench_transform(args, docs, ours, m2v_dir)
        print(f"(a) transform done, loadavg {loadavg(3)}")
        vocab = corpus_effect(docs)
        acc = {} if "accuracy" in args.skip else bench_accuracy(args, docs, labels, m2v_dir)
        print(f"(c) accuracy done, loadavg {loadavg(3)}")

    print("\n== StaticEmbedder vs BertPooledEmbedder vs model2vec (BBC News) ==")
    print(f"(a) transform docs/s        {'docs/s':>10} {'x BERT':>8}")
    for name in ("static", "model2vec", "bert"):
        print(f"    {name:<24}{speed[name]:>10.1f} {speed[name] / speed['bert']:>8.1f}")
    print(f"(b) fit seconds (MiniLM, 256 comps){'s':>4} {'x m2v':>8}")
    for name in fit:
        print(f"    {name:<30}{fit[name]:>6.1f} {fit[name] / fit['model2vec']:>8.2f}")
    print("    vocabulary  rows  corpus-words  train-oov (fit on all 2225 docs)")
    for name, (rows, n_words, oov) in vocab.items():
        print(f"    {name:<10}{rows:>7}{n_words:>12}{oov:>11.4f}")
    if acc:
        print(f"(c) 5-fold accuracy {'mean':>20} {'std':>7} {'- BERT':>8} {'embed fit s':>12}")
        for name, (mean, std, fit_s) in acc.items():
            print(
                f"    {name:<30}{mean:>8.4f} {std:>7.4f} {mean - acc['bert'][0]:>+8.4f} "
                f"{fit_s:>12.2f}"
            )
    print(f"loadavg at the end: {loadavg(3)}")


if __name__ == "__main__":
    main()

"""BertPooledEmbedder backends (torch / onnx / openvino, float32 / int8) beside sentence-transformers.

Prints one side-by-side table per ``max_length`` (default model
all-MiniLM-L6-v2, CPU, batch 32, 2 threads, 1,000 BBC News documents spread
over every class): documents/s, the ratio to sentence-transformers' own
torch float32 path (``SentenceTransformer.encode``), and the cosine of each
document's vector to skembed's float32 torch vector (mean and worst
document). Each row's ratio is to sentence-transformers re-timed on every
8th document just before and just after that row (the faster of the two),
so load from other processes hits both sides alike. Exports are built (or found in the export cache) in ``fit``,
before the clock starts. sentence-transformers' ``backend="onnx"`` needs
``optimum``, which pins an older transformers, so it is not run here.

``--accuracy`` adds BBC News 5-fold accuracy under ``compare``'s downstream
model (:func:`skembed.model_selection.compare_embedders`, memory embedding
cache) for every skembed row, on ``--accuracy-docs`` documents.

Example::

    python benchmarks/bench_bert_backends.py                    # ~7 min on 2 quiet cores
    python benchmarks/bench_bert_backends.py --n-docs 200 --max-length 128
    python benchmarks/bench_bert_backends.py --accuracy
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from _util import bbc_sample, loadavg, minilm_dir  # the same documents and model as bench_bert

VARIANTS = (
    ("torch fp32", "torch", None),
    ("torch int8", "torch", "int8"),
    ("onnx fp32", "onnx", None),
    ("onnx int8", "onnx", "int8"),
    ("openvino fp32", "openvino", None),
    ("openvino int8", "openvino", "int8"),
)


def _cosine(a, b):
    return np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def _estimator(args, L, backend, quantize, **extra):
    from skembed.text.transformer._bert import BertPooledEmbedder

    return BertPooledEmbedder(
        device="cpu",
        max_length=L,
        truncation="truncate",
        batch_size=args.batch_size,
        n_jobs=args.threads,
        normalize=True,
        backend=backend,
        quantize=quantize,
        **extra,
    )


def _cpu_line():
    """The CPU model and its vector / int8 extensions: int8 speed depends on them."""
    import platform

    from skembed.text.transformer import _export as _export

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    flags = _export.cpu_flags() or frozenset()
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8", "asimddp")
    have = [f for f in wanted if f in flags] or ["flags unknown"]
    advice = _export.int8_advice("openvino", flags)
    note = "openvino int8 likely slower than fp32 here" if advice else "int8 dot products present"
    return f"CPU: {model}, {os.cpu_count()} cores; {' '.join(have)} ({note})"


def bench_speed(args, docs):
    from sentence_transformers import SentenceTransformer

    from skembed.utils._compute import limit_threads

    st = SentenceTransformer(minilm_dir(), device="cpu")
    probe = docs[:: args.probe_every]
    print(
        f"== {len(docs)} BBC News documents, batch {args.batch_size}, {args.threads} threads; "
        "cosine to skembed torch fp32 =="
    )
    print(_cpu_line())
    print(
        f"'vs ST': ratio to sentence-transformers timed on every {args.probe_every}th document "
        "just before and after the row, the faster of the two (load hits both sides alike)"
    )

    def run_st(texts):
        with limit_threads(args.threads):
            t0 = time.perf_counter()
            out = st.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)
            return out, len(texts) / (time.perf_counter() - t0)

    for L in args.max_length:
        st.max_seq_length = L
        print(f"\nmax_length={L}")
        print(
            f"{'':22} {'docs/s':>8} {'ST docs/s':>9} {'vs ST':>6} {'cos mean':>9} "
            f"{'cos worst':>9} {'fit s':>6} {'load':>5}"
        )
        run_st(docs[:32])  # warm-up
        st_out, st_rate = run_st(docs)
        print(f"{'sentence-transformers':22} {st_rate:>8.1f} {st_rate:>9.1f} {1:>5.2f}x")
        ref = None
        for name, backend, quantize in VARIANTS:
            if backend not in args.backends:
                continue
            t0 = time.perf_counter()
            est = _estimator(args, L, backend, quantize).fit(docs)
            fit_s = time.perf_counter() - t0
            est.transform(docs[:32])  # warm-up
            _, before = run_st(probe)
            t0 = time.perf_counter()
            out = est.transform(docs)
            rate = len(docs) / (time.perf_counter() - t0)
            st_near = max(before, run_st(probe)[1])  # the faster of the two: conservative
            if ref is None:
                ref = out if (backend, quantize) == ("torch", None) else st_out
            cos = _cosine(out, ref)
            print(
                f"{'skembed ' + name:22} {rate:>8.1f} {st_near:>9.1f} {rate / st_near:>5.2f}x "
                f"{cos.mean():>9.5f} {cos.min():>9.5f} {fit_s:>6.1f} {loadavg():>5}",
                flush=True,
            )


def bench_accuracy(args):
    from skembed.model_selection import compare_embedders

    docs, labels = bbc_sample(args.accuracy_docs)
    L = args.max_length[-1]
    embedders = {
        f"skembed {name}": _estimator(args, L, backend, quantize, cache="memory")
        for name, backend, quantize in VARIANTS
        if backend in args.backends
    }
    print(f"\n== BBC News 5-fold accuracy, {len(docs)} documents, max_length={L} ==")
    t0 = time.perf_counter()
    res = compare_embedders(docs, labels, embedders, cv=5, n_jobs=args.threads, random_state=0)
    best = res.sort_values("mean_test_score", ascending=False).groupby("embedder").head(1)
    scores = {r.embedder: (r.mean_test_score, r.std_test_score) for r in best.itertuples()}
    ref = scores.get("skembed torch fp32", (np.nan,))[0]
    print(f"{'':22} {'accuracy':>9} {'std':>6} {'vs torch fp32':>14}")
    for name in embedders:
        mean, std = scores[name]
        print(f"{name:22} {mean:>9.4f} {std:>6.4f} {mean - ref:>+14.4f}")
    print(f"({time.perf_counter() - t0:.0f} s, load {loadavg()})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-docs", type=int, default=1000)
    parser.add_argument("--max-length", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--probe-every", type=int, default=8, help="ST re-timed on every k-th doc per row"
    )
    parser.add_argument(
        "--backends", nargs="+", default=["torch", "onnx", "openvino"], help="skembed rows to run"
    )
    parser.add_argument("--accuracy", action="store_true", help="add BBC 5-fold accuracy")
    parser.add_argument("--accuracy-docs", type=int, default=1000)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    docs, _ = bbc_sample(args.n_docs)
    bench_speed(args, docs)
    if args.accuracy:
        bench_accuracy(args)


if __name__ == "__main__":
    main()

"""skembed on a CUDA GPU: word vectors, GloVe, BERT and the tabular embedders, side by side.

Sections (``--sections``, comma list; default all):

``w2v``
    ``Word2VecTransformer`` / ``FastTextTransformer`` with ``engine="torch-batched"``
    (device-resident word2vec, :func:`skembed.nn.sgns.train_sgns_chunk`) on
    debdocs (11.4M tokens; vector_size 100, window 5, negative 5, min_count 5,
    sample 1e-3, 5 epochs, the estimators' default ``alpha``): skip-gram, CBOW and
    FastText skip-gram (2M buckets, n-grams 3-6). Prints training words/s (raw corpus words x epochs / training
    seconds, chunk preparation and host-to-device copies included) and
    WordSim-353 / SimLex-999 Spearman. The CPU engine's figures on the
    same corpus are in ``docs/benchmarks/word2vec.md``.
``glove``
    GloVe's torch engine on CUDA vs the numba engine on the CPU, on the same
    co-occurrence matrix of debdocs (window 10): seconds per epoch, the ratio,
    and WordSim-353 / SimLex-999 after the same number of epochs.
``bert``
    :class:`skembed.text.BertPooledEmbedder` in float16/bfloat16 vs
    sentence-transformers' ``encode`` (float16) on the same 1,000 BBC News
    documents and the same model directory, at max_length 256 and 128: docs/s,
    the ratio, and the worst cosine to the float32 output.
``tabular``
    AutoencoderEmbedder / VAEEmbedder epoch time on CUDA vs a hand-written
    torch loop over the same module, loss, optimiser and batch size.

Without CUDA the script prints a message and exits with status 0 (``--allow-cpu``
runs the sections on the CPU, for development only).

Examples::

    python benchmarks/bench_gpu.py --sections w2v,glove --debdocs ../shared/data/debdocs-11m.txt.gz \
        --wordsim wordsim353.tsv --simlex simlex999.txt
    python benchmarks/bench_gpu.py --sections bert,tabular --model /path/to/all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from _util import default_debdocs, read_tokens

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

SECTIONS = ("w2v", "glove", "bert", "tabular")


def _sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


# ----------------------------------------------------------------------------- corpus
def load_corpus(path, max_tokens=None):
    """Documents (space-joined str) of a one-paragraph-per-line gzip corpus, and the token count."""
    docs, n = read_tokens(path, max_tokens, skip_empty=True)
    return [" ".join(d) for d in docs], n


def evaluate(kv, args):
    from skembed.evaluation import word_similarity

    out = {}
    for name, path in (("wordsim", args.wordsim), ("simlex", args.simlex)):
        out[name] = word_similarity(kv, path)["spearman"] if path else float("nan")
    return out


# ----------------------------------------------------------------------------- word2vec
def train_w2v(docs, device, *, arch, epochs, seed, batch_words):
    """Fit the estimator of ``arch`` (``sg``, ``cbow``, ``ft``) with ``engine="torch-batched"``.

    The estimators do the encoding, FastText's subword rows, the learning-rate decay and the
    seeds (the library's code, not a copy of it). Returns (KeyedVectors, train seconds,
    final mean loss).
    """
    from skembed import FastTextTransformer, Word2VecTransformer

    cls, extra = (
        (FastTextTransformer, {"bucket": 2_000_000}) if arch == "ft" else (Word2VecTransformer, {})
    )
    est = cls(
        device=device, engine="torch-batched", sg=int(arch != "cbow"), vector_size=100,
        window=5, negative=5, min_count=5, sample=1e-3, epochs=epochs, batch_size=batch_words,
        random_state=seed, **extra,
    ).fit(docs)  # fmt: skip
    return est.wv_, est.train_time_, est.history_[-1]["loss"]


def section_w2v(args, device):
    print(
        f"\n== word2vec: debdocs first {args.prefix_tokens or 'all'} tokens, {args.epochs} epochs =="
    )
    t0 = time.perf_counter()
    docs, n = load_corpus(args.debdocs, args.prefix_tokens)
    print(f"corpus: {n} tokens, {len(docs)} documents; loaded in {time.perf_counter() - t0:.1f} s")
    print(f"{'run':<34} {'train_s':>8} {'words/s':>10} {'WS-353':>7} {'SimLex':>7} {'loss':>8}")
    from skembed.exceptions import TrainingDivergedError

    rows = []
    for arch in args.arch.split(","):
        for bw in [None if b == "auto" else int(b) for b in args.batch_words.split(",")]:
            name = f"{arch} batch {bw or 'auto'}"
            try:
                kv, secs, loss = train_w2v(
                    docs, device, arch=arch, epochs=args.epochs, seed=args.seed, batch_words=bw
                )
            except TrainingDivergedError as exc:  # report and go on with the next run
                print(f"{name:<34} diverged ({exc})", flush=True)
                continue
            q = evaluate(kv, args)
            wps = n * args.epochs / secs
            rows.append((name, secs, wps, q, loss))
            print(
                f"{name:<34} {secs:>8.2f} {wps / 1e6:>9.2f}M {q['wordsim']:>7.3f} "
                f"{q['simlex']:>7.3f} {loss:>8.4f}",
                flush=True,
            )
    return rows


# ----------------------------------------------------------------------------- GloVe
def section_glove(args, device):
    from skembed.text import GloVeTransformer

    print(f"\n== GloVe: debdocs first {args.prefix_tokens or 'all'} tokens, window 10 ==")
    t0 = time.perf_counter()
    docs, n = load_corpus(args.debdocs, args.prefix_tokens)
    # the estimator counts (its own encoding and weighting); one epoch, then the matrix is reused
    counter = GloVeTransformer(window=10, min_count=5, epochs=1, keep_cooccurrence=True).fit(docs)
    del docs
    X, words = counter.cooccurrence_, list(counter.wv_.index_to_key)
    print(
        f"co-occurrence matrix: {X.shape[0]} words, {X.nnz} non-zeros; "
        f"counted (and one epoch) in {time.perf_counter() - t0:.1f} s"
    )
    print(
        f"{'engine':<36} {'epochs':>6} {'s/epoch':>8} {'x numba':>8} {'WS-353':>7} "
        f"{'SimLex':>7} {'loss':>8}"
    )
    numba_epoch = None
    runs = [("numba", "cpu", None)] + [
        ("torch", device, int(b)) for b in args.glove_batch.split(",")
    ]
    for engine, dev, bs in runs:
        kw = dict(vector_size=100, epochs=args.glove_epochs, random_state=0, engine=engine)
        kw["device"] = dev
        if bs:
            kw["batch_size"] = bs
        est = GloVeTransformer(**kw).fit_cooccurrence(X, words)
        secs = [r["seconds"] for r in est.history_]
        # the first torch epoch includes CUDA warm-up: the median is the steady state
        per_epoch = float(np.median(secs))
        if engine == "numba":
            numba_epoch = per_epoch
        q = evaluate(est.wv_, args)
        name = f"{engine} {dev}" + (f" batch {bs}" if bs else f" ({os.cpu_count()} threads)")
        print(
            f"{name:<36} {len(secs):>6} {per_epoch:>8.3f} {numba_epoch / per_epoch:>8.1f} "
            f"{q['wordsim']:>7.3f} {q['simlex']:>7.3f} {est.history_[-1]['loss']:>8.4f}",
            flush=True,
        )


# ----------------------------------------------------------------------------- BERT
def _cosines(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(1)


def _best_of(fn, repeats, device):
    best, out = np.inf, None
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        out = fn()
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return best, out


def section_bert(args, device):
    import torch
    from sentence_transformers import SentenceTransformer

    from skembed.datasets import load_bbc_news
    from skembed.text import BertPooledEmbedder

    texts = list(load_bbc_news()[0][: args.n_docs])
    print(
        f"\n== BERT: {len(texts)} BBC News documents, model {args.model}, best of {args.repeats} =="
    )
    print(f"{'embedder':<44} {'max_len':>7} {'docs/s':>8} {'vs ST fp16':>10} {'min cos fp32':>12}")
    for max_length in [int(m) for m in args.max_length.split(",")]:
        st = SentenceTransformer(args.model, device=device)
        st.max_seq_length = max_length
        st.half()
        st.encode(texts[:64], batch_size=32)  # warm-up
        st_s, st_out = _best_of(
            lambda st=st: st.encode(texts, batch_size=32, convert_to_numpy=True),
            args.repeats,
            device,
        )
        del st
        torch.cuda.empty_cache() if device.startswith("cuda") else None
        ref = BertPooledEmbedder(
            model=args.model, max_length=max_length, truncation="truncate", device=device,
            torch_dtype="float32", batch_size=32,
        ).fit(texts[:2])  # fmt: skip
        ref_out = ref.transform(texts)
        st_cos = _cosines(np.asarray(st_out, np.float32), ref_out).min()
        print(
            f"{'sentence-transformers encode fp16 b32':<44} {max_length:>7} "
            f"{len(texts) / st_s:>8.0f} {1.0:>10.2f} {st_cos:>12.5f}",
            flush=True,
        )
        # float16 is refused on the CPU (the --allow-cpu development path)
        dtypes = ("float16", "bfloat16") if device.startswith("cuda") else ("bfloat16",)
        for torch_dtype in dtypes:
            for bs in [int(b) for b in args.bert_batch.split(",")]:
                est = BertPooledEmbedder(
                    model=args.model, max_length=max_length, truncation="truncate",
                    device=device, torch_dtype=torch_dtype, batch_size=bs,
                ).fit(texts[:2])  # fmt: skip
                est.transform(texts[:64])  # warm-up
                secs, out = _best_of(lambda est=est: est.transform(texts), args.repeats, device)
                cos = _cosines(out, ref_out).min()
                name = f"BertPooledEmbedder {torch_dtype} b{bs}"
                print(
                    f"{name:<44} {max_length:>7} {len(texts) / secs:>8.0f} "
                    f"{st_s / secs:>10.2f} {cos:>12.5f}",
                    flush=True,
                )
        t_ref, _ = _best_of(lambda ref=ref: ref.transform(texts), 1, device)
        print(
            f"{'BertPooledEmbedder float32 b32':<44} {max_length:>7} {len(texts) / t_ref:>8.0f} "
            f"{st_s / t_ref:>10.2f} {1.0:>12.5f}",
            flush=True,
        )


# ----------------------------------------------------------------------------- tabular
def _synthetic_table(n_rows, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n_rows, 4))
    cols = {f"x{k}": z @ rng.normal(size=4) + 0.1 * rng.normal(size=n_rows) for k in range(12)}
    for k, levels in enumerate((4, 8, 16)):
        cols[f"c{k}"] = pd.Categorical((np.abs(z[:, k]) * levels / 3).astype(int) % levels)
    return pd.DataFrame(cols)


def _hand_epochs(est, Xt, epochs, batch_size, device):
    """A minimal torch loop over the estimator's own module kind, loss and optimiser."""
    import torch

    from skembed.nn.autoencoder import build_module, mixed_reconstruction_loss

    model = build_module(est.model_.kind, dict(est.model_.config)).to(device)
    numeric_index, groups = est._loss_layout()
    opt = torch.optim.AdamW(model.parameters(), lr=est.learning_rate, weight_decay=0.0)
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.from_numpy(Xt).to(device)
    n = x.shape[0]
    vae = est.model_.kind == "vae"
    times = []
    for _ in range(epochs):
        _sync(device)
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(n, generator=gen, device=device)
        xs = x.index_select(0, perm)
        total = torch.zeros((), device=device)
        for start in range(0, n, batch_size):
            xb = xs[start : start + batch_size]
            if vae:
                mu, log_var = model.encode_distribution(xb)
                z = model.reparameterize(mu, log_var, gen)
                rows = mixed_reconstruction_loss(model.decode(z), xb, numeric_index, groups)
                rows = rows + est.beta * model.kl_divergence(mu, log_var)
            else:
                rows = mixed_reconstruction_loss(model(xb), xb, numeric_index, groups)
            loss = rows.mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach() * xb.shape[0]
        float(total)  # the estimator reads its loss once per epoch too
        times.append(time.perf_counter() - t0)
    return times


def section_tabular(args, device):
    from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

    X = _synthetic_table(args.tabular_rows)
    print(
        f"\n== tabular: {len(X)} synthetic rows (12 numeric, 3 categorical), "
        f"{args.tabular_epochs} epochs, median s/epoch =="
    )
    print(f"{'estimator':<14} {'batch':>6} {'est s/ep':>9} {'hand s/ep':>9} {'overhead':>9}")
    for cls in (AutoencoderEmbedder, VAEEmbedder):
        for bs in [int(b) for b in args.tabular_batch.split(",")]:
            epochs_key = "epochs" if "epochs" in cls().get_params() else "max_epochs"
            est = cls(
                n_components=4, batch_size=bs, device=device, random_state=0,
                **{epochs_key: args.tabular_epochs},
            ).fit(X)  # fmt: skip
            est_s = [r.get("seconds", r.get("duration_s")) for r in est.history_][1:]
            Xt = est.preprocessor_.transform(X).astype(np.float32)
            hand_s = _hand_epochs(est, Xt, args.tabular_epochs, bs, device)[1:]
            e, h = float(np.median(est_s)), float(np.median(hand_s))
            print(
                f"{cls.__name__:<14} {bs:>6} {e:>9.4f} {h:>9.4f} {100 * (e / h - 1):>+8.1f}%",
                flush=True,
            )


# ----------------------------------------------------------------------------- main
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--allow-cpu", action="store_true", help="run on the CPU without CUDA")
    parser.add_argument(
        "--debdocs",
        default=default_debdocs(),
    )
    parser.add_argument("--prefix-tokens", type=int, default=0, help="0: the whole corpus")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--arch", default="sg,cbow,ft", help="comma list of sg, cbow, ft")
    parser.add_argument(
        "--batch-words", default="auto", help="comma list of batch sizes ('auto': the default)"
    )
    parser.add_argument("--wordsim", default=None)
    parser.add_argument("--simlex", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--glove-epochs", type=int, default=15)
    parser.add_argument("--glove-batch", default="16384,262144", help="torch engine batch sizes")
    parser.add_argument("--model", default=None, help="model directory for the bert section")
    parser.add_argument("--n-docs", type=int, default=1000)
    parser.add_argument("--max-length", default="256,128")
    parser.add_argument("--bert-batch", default="32,128")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tabular-rows", type=int, default=200_000)
    parser.add_argument("--tabular-epochs", type=int, default=4)
    parser.add_argument("--tabular-batch", default="256,4096")
    args = parser.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("bench_gpu: torch is not installed; nothing to measure.")
        return 0
    device = args.device
    if not torch.cuda.is_available():
        if not args.allow_cpu:
            print("bench_gpu: no CUDA device in this process; skipped (use --allow-cpu to try).")
            return 0
        device = "cpu"
    if device.startswith("cuda"):
        print(
            f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
            f"CUDA {torch.version.cuda}"
        )
    else:
        print(f"device: cpu, torch {torch.__version__}")
    if args.wordsim is None or args.simlex is None:
        try:
            from gensim.test.utils import datapath

            args.wordsim = args.wordsim or datapath("wordsim353.tsv")
            args.simlex = args.simlex or datapath("simlex999.txt")
        except ImportError:
            pass
    sections = [s for s in args.sections.split(",") if s]
    for s in sections:
        if s not in SECTIONS:
            parser.error(f"unknown section {s!r}; choose from {SECTIONS}")
    if "bert" in sections and args.model is None:
        from skembed.text.transformer._loading import DEFAULT_MODEL

        args.model = DEFAULT_MODEL
    runners = {
        "w2v": section_w2v,
        "glove": section_glove,
        "bert": section_bert,
        "tabular": section_tabular,
    }
    for s in sections:
        t0 = time.perf_counter()
        runners[s](args, device)
        print(f"[section {s}: {time.perf_counter() - t0:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

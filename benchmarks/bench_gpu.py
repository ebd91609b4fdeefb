"""skembed on a CUDA GPU: word vectors, GloVe, BERT and the tabular embedders, side by side.

Sections (``--sections``, comma list; default all):

``w2v``
    :func:`skembed.nn.sgns.train_sgns_chunk` (device-resident word2vec) on
    debdocs (11.4M tokens; vector_size 100, window 5, negative 5, min_count 5,
    sample 1e-3, 5 epochs): skip-gram, CBOW and fastText-style subword
    skip-gram (2M buckets, n-grams 3-6). Prints training words/s (raw corpus words x epochs / training
    seconds, chunk preparation and host-to-device copies included) and
    WordSim-353 / SimLex-999 Spearman. The CPU engine's figures on the
    same corpus are in ``docs/word2vec.md``.
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
from collections import Counter

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
    """Documents (lists of str) of a one-paragraph-per-line gzip corpus, and the token count."""
    return read_tokens(path, max_tokens, skip_empty=True)


class Encoded:
    """A corpus as int32 ids in chunks, with the vocabulary of words counted >= min_count."""

    def __init__(self, docs, min_count=5, chunk_tokens=2_000_000):
        counts = Counter(t for d in docs for t in d)
        words = [w for w, c in counts.most_common()]
        index = {w: i for i, w in enumerate(words)}
        all_counts = np.array([counts[w] for w in words], dtype=np.int64)
        n_keep = int((all_counts >= min_count).sum())
        self.index_to_key = words[:n_keep]
        self.counts = all_counts[:n_keep]
        self.remap = np.where(np.arange(len(words)) < n_keep, np.arange(len(words)), -1).astype(
            np.int32
        )
        self.n_tokens = int(all_counts.sum())
        self.chunks = []
        ids, offs = [], [0]
        for d in docs:
            ids.extend(index[t] for t in d)
            offs.append(len(ids))
            if len(ids) >= chunk_tokens:
                self.chunks.append((np.array(ids, np.int32), np.array(offs, np.int64)))
                ids, offs = [], [0]
        if ids:
            self.chunks.append((np.array(ids, np.int32), np.array(offs, np.int64)))


def evaluate(kv, args):
    from skembed.evaluation import word_similarity

    out = {}
    for name, path in (("wordsim", args.wordsim), ("simlex", args.simlex)):
        out[name] = word_similarity(kv, path)["spearman"] if path else float("nan")
    return out


# ----------------------------------------------------------------------------- word2vec
def train_w2v(
    enc, device, *, sg, subword, epochs, seed, batch_words, update_cap=64.0, vector_size=100
):
    """Train on ``enc``; returns (KeyedVectors, train seconds, final mean loss)."""
    import torch

    from skembed.kernels import sampling as _sampling
    from skembed.kernels.word2vec import prepare_chunk
    from skembed.keyedvectors import KeyedVectors

    n_words = len(enc.index_to_key)
    rng = np.random.default_rng(seed)
    bags = None
    n_rows = n_words
    if subword:
        from skembed.kernels.fasttext import vocabulary_ngram_hashes

        bucket = 2_000_000
        indptr, indices = vocabulary_ngram_hashes(enc.index_to_key, 3, 6, bucket)
        # each word's own row first, then its n-gram buckets (offset by n_words)
        lens = np.diff(indptr) + 1
        sub_indptr = np.zeros(n_words + 1, np.int64)
        np.cumsum(lens, out=sub_indptr[1:])
        sub_indices = np.empty(sub_indptr[-1], np.int64)
        sub_indices[sub_indptr[:-1]] = np.arange(n_words)
        mask = np.ones(sub_indptr[-1], bool)
        mask[sub_indptr[:-1]] = False
        sub_indices[mask] = indices + n_words
        n_rows = n_words + bucket
    syn0 = ((rng.random((n_rows, vector_size), dtype=np.float32) - 0.5) / vector_size).astype(
        np.float32
    )
    if subword:
        syn0[n_words:] = 0.0  # fastText/gensim initialise buckets like words; zeros are fine too
    syn1neg = np.zeros((n_words, vector_size), np.float32)
    prob, alias = _sampling.alias_table(_sampling.noise_distribution(enc.counts, 0.75))
    keep = _sampling.keep_probabilities(enc.counts, 1e-3)
    alpha = 0.025 if sg else 0.05
    min_alpha = 0.0001
    total = enc.n_tokens * epochs
    done = 0
    losses = []
    from skembed.nn.sgns import SubwordBags, device_tables, train_sgns_chunk

    dev = torch.device(device)
    t0 = time.perf_counter()
    syn0_t = torch.from_numpy(syn0).to(dev)
    syn1_t = torch.from_numpy(syn1neg).to(dev)
    prob_t, alias_t = device_tables(prob, alias, dev)
    if subword:
        bags = SubwordBags(sub_indptr, sub_indices, dev)
    for epoch in range(epochs):
        loss = torch.zeros((), dtype=torch.float64, device=dev)
        nex = torch.zeros((), dtype=torch.float64, device=dev)
        for c, (raw, offs) in enumerate(enc.chunks):
            a0 = alpha - (alpha - min_alpha) * done / total
            done += raw.size
            a1 = alpha - (alpha - min_alpha) * done / total
            s = seed * 1_000_003 + epoch * 1009 + c
            ids, o, _ = prepare_chunk(raw, offs, enc.remap, keep, s)
            ids_t = torch.from_numpy(ids).pin_memory() if dev.type == "cuda" else ids
            lc, nc = train_sgns_chunk(
                syn0_t, syn1_t, ids_t, o, neg_prob=prob_t, neg_alias=alias_t, window=5,
                negative=5, alpha_start=a0, alpha_end=a1, seed=s, sg=sg, subwords=bags,
                batch_words=batch_words, update_cap=update_cap,
            )  # fmt: skip
            loss += lc
            nex += nc
        losses.append(float(loss / nex.clamp(min=1)))  # one sync per epoch
    out = syn0_t[:n_words]
    if subword:
        # the word's vector is the mean of its bag (word row + n-grams), as fastText's
        out = torch.zeros(n_words, vector_size, device=dev).index_add_(
            0,
            torch.repeat_interleave(torch.arange(n_words, device=dev), bags.lengths),
            syn0_t[bags.indices],
        ) / bags.lengths[:, None].to(torch.float32)
    vectors = out.cpu().numpy()
    seconds = time.perf_counter() - t0
    return KeyedVectors(vectors, enc.index_to_key, enc.counts), seconds, losses


def section_w2v(args, device):
    print(
        f"\n== word2vec: debdocs first {args.prefix_tokens or 'all'} tokens, {args.epochs} epochs =="
    )
    t0 = time.perf_counter()
    docs, n = load_corpus(args.debdocs, args.prefix_tokens)
    enc = Encoded(docs, min_count=5)
    del docs
    print(
        f"corpus: {n} tokens, {len(enc.index_to_key)} words (min_count 5), "
        f"{len(enc.chunks)} chunks; loaded in {time.perf_counter() - t0:.1f} s"
    )
    print(f"{'run':<34} {'train_s':>8} {'words/s':>10} {'WS-353':>7} {'SimLex':>7} {'loss':>8}")
    runs = []
    caps = [None if c == "none" else float(c) for c in args.update_cap.split(",")]
    for arch in args.arch.split(","):
        sg = arch in ("sg", "ft")
        subword = arch == "ft"
        for bw in [None if b == "auto" else int(b) for b in args.batch_words.split(",")]:
            for cap in caps:
                runs.append(
                    (
                        f"{arch} batch {bw or 'auto'} cap {cap if cap is None else int(cap)}",
                        dict(sg=sg, subword=subword, batch_words=bw, update_cap=cap),
                    )
                )
    rows = []
    for name, kw in runs:
        try:
            kv, secs, losses = train_w2v(enc, device, epochs=args.epochs, seed=args.seed, **kw)
        except ValueError as exc:  # NaN vectors: report and go on with the next run
            print(f"{name:<34} diverged ({exc})", flush=True)
            continue
        q = evaluate(kv, args)
        wps = enc.n_tokens * args.epochs / secs
        rows.append((name, secs, wps, q, losses[-1]))
        print(
            f"{name:<34} {secs:>8.2f} {wps / 1e6:>9.2f}M {q['wordsim']:>7.3f} {q['simlex']:>7.3f} "
            f"{losses[-1]:>8.4f}",
            flush=True,
        )
    return rows


# ----------------------------------------------------------------------------- GloVe
def section_glove(args, device):
    from skembed.kernels.word2vec import prepare_chunk
    from skembed.text import GloVeTransformer
    from skembed.text.count._cooccurrence import cooccurrence_matrix

    print(f"\n== GloVe: debdocs first {args.prefix_tokens or 'all'} tokens, window 10 ==")
    t0 = time.perf_counter()
    docs, n = load_corpus(args.debdocs, args.prefix_tokens)
    enc = Encoded(docs, min_count=5)
    del docs
    keep = np.ones(len(enc.index_to_key), np.float32)
    parts = [prepare_chunk(raw, offs, enc.remap, keep, 0)[:2] for raw, offs in enc.chunks]
    ids = np.concatenate([p[0] for p in parts])
    offsets = [np.zeros(1, np.int64)]
    base = 0
    for p_ids, p_offs in parts:
        offsets.append(p_offs[1:] + base)
        base += p_ids.size
    offsets = np.concatenate(offsets)
    X = cooccurrence_matrix(ids, offsets, len(enc.index_to_key), 10, dtype=np.float32)
    print(
        f"co-occurrence matrix: {X.shape[0]} words, {X.nnz} non-zeros; "
        f"counted in {time.perf_counter() - t0:.1f} s"
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
        est = GloVeTransformer(**kw).fit_cooccurrence(X, enc.index_to_key, enc.counts)
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
    parser.add_argument("--update-cap", default="64", help="comma list of caps ('none': off)")
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

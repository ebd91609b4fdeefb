"""Issue 39 on a lent GPU machine: the word2vec family's defaults on CUDA and the numba engine's
thread scaling (1-16 threads, deterministic and lock-free), one JSON line each.

    python benchmarks/bench_gpu_defaults.py gpu --texts bbc.json [--tweets tweets.json] \
        [--debdocs debdocs-11m.txt.gz --wordsim wordsim353.tsv --simlex simlex999.txt] \
        [--budget 330]
    python benchmarks/bench_gpu_defaults.py cpu [--texts bbc.json] [--epochs 1] [--budget 110] \
        [--order skembed,gensim] [--modes det-2parts,det-16parts,lock-free] [--sg 1] \
        [--threads 16,1] [--gensim-threads 16] [--lines debdocs-11m.txt.gz]

``--device cpu`` runs the ``gpu`` steps on the CPU with ``engine="torch-batched"`` (a smoke test).

``--texts`` / ``--tweets`` read BBC News / the tweets from JSON lists (the device machine has no
data packages: write them with ``json.dump(list(load_bbc_news()[0]), f)`` and
``json.dump(list(load_tweet_sentiment()[0]), f)``); without ``--texts`` the loader is used.
``gpu`` fits ``Word2VecTransformer`` (skip-gram, CBOW), ``FastTextTransformer`` (skip-gram) and
``Doc2VecTransformer`` (PV-DBOW; with ``--labels bbc_labels.json`` its document vectors'
5-fold accuracy on BBC News, and the numba engine's beside it) with ``device="cuda"`` and otherwise default parameters on BBC News, BBC x4 and the tweets, then
on debdocs (streamed with ``LineCorpus``) with WordSim-353 / SimLex-999, and two skip-gram
variants there with ``--variants``: the curvature bound off and a batch of 32,768. Steps
that would start after ``--budget`` seconds are skipped (and say so); ``--only a,b`` runs
only the steps named. Words/s count whitespace
tokens times epochs for the in-memory corpora and the estimator's ``words_per_second_`` on
debdocs.

``cpu`` times the numba engine on BBC x4 (token lists of the default analyzer; ``--lines``: a
whitespace-tokenized gzipped file instead, one document per line) at 1 to 16
threads: deterministic with the default 2 parts and with 16, and lock-free, skip-gram and
CBOW; then gensim's ``Word2Vec`` with 1, 4 and 16 workers on the same lists when gensim
imports (carry its wheel to the GPU machine). Training words/s = raw tokens x epochs /
training seconds; a small fit of each configuration compiles and warms up outside the timing.
"""

# ruff: noqa: E402  (skembed is imported after the corpus is read and the environment logged)
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.getcwd())
START = time.perf_counter()
out = os.environ.get("OUT", "/tmp")
log = open(os.path.join(out, "results.jsonl"), "a")


def rec(**kw):
    kw["t"] = time.strftime("%H:%M:%S")
    kw["load"] = os.getloadavg()[0]
    print(json.dumps(kw), flush=True)
    log.write(json.dumps(kw) + "\n")
    log.flush()


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def load_json(path):
    """A JSON file, gzipped or not."""
    import gzip

    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


if arg("--texts"):
    texts = load_json(arg("--texts"))
else:
    from skembed.datasets import load_bbc_news

    texts = list(load_bbc_news()[0])
x4 = texts * 4
n_tokens = sum(len(t.split()) for t in x4)
budget = float(arg("--budget", 1e9))
import numba
import torch

rec(
    step="env",
    torch=torch.__version__,
    cuda=torch.cuda.is_available(),
    gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    cpus=os.cpu_count(),
    numba=numba.__version__,
    tokens_x4=n_tokens,
)
from skembed import Doc2VecTransformer, FastTextTransformer, LineCorpus, Word2VecTransformer
from skembed.evaluation import word_similarity
from skembed.exceptions import TrainingDivergedError
from skembed.nn import sgns

# --device cpu: a smoke test of this script through the same engine (engine="torch-batched")
DEV = (
    {"device": "cuda"}
    if arg("--device", "cuda") == "cuda"
    else {"device": "cpu", "engine": "torch-batched"}
)
KW = sgns.train_sgns_chunk.__wrapped__.__kwdefaults__
DEFAULTS = dict(KW)


def doc_accuracy(vectors):
    """5-fold accuracy of a logistic regression on BBC News's document vectors."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    labels = json.load(open(arg("--labels")))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    model = LogisticRegression(max_iter=2000)
    return round(float(cross_val_score(model, vectors, labels, cv=folds).mean()), 4)


def fit(name, label, make, corpus, *, words=None, variant=None):
    if arg("--only") and name not in arg("--only").split(","):
        return
    if time.perf_counter() - START > budget:
        rec(step=name, corpus=label, skipped=f"past the {budget:.0f} s budget")
        return
    KW.update(DEFAULTS)
    KW.update(variant or {})
    t0 = time.perf_counter()
    try:
        est = make().fit(corpus)
        secs = time.perf_counter() - t0
        row = dict(
            step=name,
            corpus=label,
            ok=True,
            fit_s=round(secs, 1),
            engine=est.engine_,
            batch=est.batch_size,
            variant=variant,
            losses=[round(h["loss"], 4) for h in est.history_],
        )
        if words is not None:
            row["words_per_s_fit"] = round(words * est.epochs / secs)
        row["words_per_s_train"] = round(est.words_per_second_)
        if label == "bbc" and arg("--labels") and hasattr(est, "dv_"):
            row["dv_accuracy"] = doc_accuracy(est.dv_.vectors)
        if arg("--wordsim") and label == "debdocs" and getattr(est, "wv_", None) is not None:
            row["wordsim"] = round(word_similarity(est.wv_, arg("--wordsim"))["spearman"], 4)
            row["simlex"] = round(word_similarity(est.wv_, arg("--simlex"))["spearman"], 4)
        rec(**row)
    except TrainingDivergedError as e:
        rec(
            step=name,
            corpus=label,
            ok=False,
            variant=variant,
            seconds=round(time.perf_counter() - t0, 1),
            error=str(e)[:300],
        )
    except Exception:
        rec(step=name, corpus=label, ok=False, variant=variant, error=traceback.format_exc()[-600:])


MAKERS = [
    ("w2v-sg", lambda: Word2VecTransformer(**DEV, sg=1, random_state=0)),
    ("w2v-cbow", lambda: Word2VecTransformer(**DEV, sg=0, random_state=0)),
    ("fasttext-sg", lambda: FastTextTransformer(**DEV, sg=1, random_state=0)),
    ("doc2vec-dbow", lambda: Doc2VecTransformer(**DEV, random_state=0)),
]
mode = sys.argv[1]
if mode == "gpu":
    corpora = [("bbc", texts), ("bbc_x4", x4)]
    if arg("--tweets"):
        corpora.append(("tweets", load_json(arg("--tweets"))))
    for label, corpus in corpora:
        words = sum(len(t.split()) for t in corpus)
        for name, make in MAKERS:
            fit(name, label, make, corpus, words=words)
        if label == "bbc":  # the CPU engine's document vectors, the quality reference
            fit("doc2vec-dbow-numba", label, lambda: Doc2VecTransformer(random_state=0), corpus)
    if arg("--debdocs"):
        deb = LineCorpus(arg("--debdocs"))
        for name, make in MAKERS:
            fit(name, "debdocs", make, deb)
    if arg("--debdocs") and "--variants" in sys.argv:
        sg = MAKERS[0][1]
        fit("w2v-sg", "debdocs", sg, deb, variant={"curvature_bound": None})
        fit(
            "w2v-sg-bs32768",
            "debdocs",
            lambda: Word2VecTransformer(**DEV, sg=1, batch_size=32768, random_state=0),
            deb,
        )
else:
    # BBC x4 as token lists of the default analyzer (tokenizing is outside every timing); the
    # numba engine at 1-16 threads, deterministic (the default 2 parts, and 16 parts) and
    # lock-free, and gensim 4.4 with 1 and 16 workers on the same lists when it imports.
    # Training words/s (raw tokens x epochs / train_time_) and the whole fit's seconds.
    from skembed.text._analyzer import build_analyzer

    analyzer = build_analyzer()
    if arg("--lines"):  # a whitespace-tokenized corpus, one document per line (debdocs)
        import gzip

        with gzip.open(arg("--lines"), "rt") as f:
            tokens = [line.split() for line in f]
    else:
        tokens = [analyzer(t) for t in texts] * 4
    n_raw = sum(map(len, tokens))
    epochs = int(arg("--epochs", 1))
    runs = [
        # (label, sg, lock_free, n_parts, thread counts)
        ("det-2parts", 1, False, 2, (1, 2, 4, 16)),
        ("det-16parts", 1, False, 16, (1, 2, 4, 8, 16)),
        ("lock-free", 1, True, None, (1, 2, 4, 8, 16)),
        ("det-2parts", 0, False, 2, (1, 2, 16)),
        ("det-16parts", 0, False, 16, (1, 4, 16)),
        ("lock-free", 0, True, None, (1, 4, 16)),
    ]

    def skembed_runs():
        for label, sg, lock_free, n_parts, threads in runs:
            for n in threads:
                if time.perf_counter() - START > budget:
                    rec(step="cpu-scaling", mode=label, sg=sg, n_jobs=n, skipped="budget")
                    continue
                kw = dict(sg=sg, lock_free=lock_free, random_state=0)
                if n_parts is not None:
                    kw["n_parts"] = n_parts
                Word2VecTransformer(epochs=1, n_jobs=n, **kw).fit(tokens[:200])  # compile, warm
                t0 = time.perf_counter()
                est = Word2VecTransformer(epochs=epochs, n_jobs=n, **kw).fit(tokens)
                secs = time.perf_counter() - t0
                rec(
                    step="cpu-scaling", tool="skembed", mode=label, sg=sg, n_jobs=n,
                    fit_s=round(secs, 2), train_s=round(est.train_time_, 2),
                    words_per_s=round(n_raw * epochs / est.train_time_),
                )  # fmt: skip

    def gensim_runs():
        try:
            from gensim.models import Word2Vec
        except ImportError:
            rec(step="gensim", skipped="gensim does not import")
        else:
            import gensim

            for sg in (1, 0) if not arg("--sg") else (int(arg("--sg")),):
                for n in [int(t) for t in arg("--gensim-threads", "1,4,16").split(",")]:
                    if time.perf_counter() - START > budget:
                        rec(step="cpu-scaling", tool="gensim", sg=sg, n_jobs=n, skipped="budget")
                        continue
                    Word2Vec(tokens[:200], min_count=1, sg=sg, epochs=1, workers=n, seed=0)
                    t0 = time.perf_counter()
                    model = Word2Vec(
                        sg=sg, workers=n, seed=0, epochs=epochs
                    )  # both tools' defaults
                    model.build_vocab(tokens)
                    t1 = time.perf_counter()
                    model.train(tokens, total_examples=model.corpus_count, epochs=epochs)
                    secs = time.perf_counter() - t1
                    rec(
                        step="cpu-scaling", tool="gensim " + gensim.__version__, sg=sg, n_jobs=n,
                        fit_s=round(time.perf_counter() - t0, 2), train_s=round(secs, 2),
                        words_per_s=round(n_raw * epochs / secs),
                    )  # fmt: skip

    if arg("--sg"):  # only skip-gram (1) or CBOW (0)
        runs = [r for r in runs if r[1] == int(arg("--sg"))]
    if arg("--modes"):
        runs = [r for r in runs if r[0] in arg("--modes").split(",")]
    if arg("--threads"):  # e.g. 16,1: these thread counts, in this order
        runs = [r[:4] + (tuple(int(t) for t in arg("--threads").split(",")),) for r in runs]
    for part in arg("--order", "skembed,gensim").split(","):
        {"skembed": skembed_runs, "gensim": gensim_runs}[part]()

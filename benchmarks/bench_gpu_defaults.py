"""Issue 39 on a lent GPU machine: the word2vec family's defaults on CUDA and the numba engine's
thread scaling (1-16 threads, deterministic and lock-free), one JSON line each.

    python benchmarks/bench_gpu_defaults.py gpu --texts bbc.json [--tweets tweets.json] \
        [--debdocs debdocs-11m.txt.gz --wordsim wordsim353.tsv --simlex simlex999.txt] \
        [--budget 330]
    python benchmarks/bench_gpu_defaults.py cpu [--texts bbc.json]

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


if arg("--texts"):
    texts = json.load(open(arg("--texts")))
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
        corpora.append(("tweets", json.load(open(arg("--tweets")))))
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
    for lock_free in (False, True):
        for sg in (1, 0):
            for n in (1, 2, 4, 8, 16):
                est = Word2VecTransformer(
                    sg=sg, epochs=1, n_jobs=n, lock_free=lock_free, random_state=0
                )
                if n == 1:
                    est.fit(texts[:200])  # compile outside the timing
                t0 = time.perf_counter()
                est.fit(x4)
                secs = time.perf_counter() - t0
                rec(
                    step="cpu-scaling",
                    sg=sg,
                    lock_free=lock_free,
                    n_jobs=n,
                    seconds=round(secs, 2),
                    words_per_s=round(n_tokens / secs),
                )

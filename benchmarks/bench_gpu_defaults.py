"""Issue 39 on a lent GPU machine: the word2vec family's defaults on CUDA (BBC News and BBC x4) and
the numba engine's thread scaling (1-16 threads, deterministic and lock-free), one JSON line each.

    python benchmarks/bench_gpu_defaults.py gpu [--texts bbc.json]
    python benchmarks/bench_gpu_defaults.py cpu [--texts bbc.json]

``--texts`` reads BBC News from a JSON list (the device machine has no data packages: write it
with ``json.dump(list(skembed.datasets.load_bbc_news()[0]), f)``); without it the loader is used.
Words/s count whitespace tokens (times epochs), an approximation of the trained tokens.
"""
# ruff: noqa: E402  (skembed is imported after the corpus is read and the environment logged)
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.getcwd())
out = os.environ.get("OUT", "/tmp")
log = open(os.path.join(out, "results.jsonl"), "a")
def rec(**kw):
    kw["t"] = time.strftime("%H:%M:%S")
    kw["load"] = os.getloadavg()[0]
    print(json.dumps(kw), flush=True)
    log.write(json.dumps(kw) + "\n")
    log.flush()
if "--texts" in sys.argv:
    texts = json.load(open(sys.argv[sys.argv.index("--texts") + 1]))
else:
    from skembed.datasets import load_bbc_news

    texts = list(load_bbc_news()[0])
x4 = texts * 4
n_tokens = sum(len(t.split()) for t in x4)
import numba
import torch

rec(step="env", torch=torch.__version__, cuda=torch.cuda.is_available(),
    gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, cpus=os.cpu_count(),
    numba=numba.__version__, tokens_x4=n_tokens)
from skembed import FastTextTransformer, Word2VecTransformer
from skembed.exceptions import TrainingDivergedError

mode = sys.argv[1]
if mode == "gpu":
    for name, make in [
        ("w2v-sg", lambda: Word2VecTransformer(device="cuda", sg=1, random_state=0)),
        ("w2v-cbow", lambda: Word2VecTransformer(device="cuda", sg=0, random_state=0)),
        ("fasttext-sg", lambda: FastTextTransformer(device="cuda", sg=1, random_state=0)),
        ("w2v-sg-bs2048", lambda: Word2VecTransformer(device="cuda", sg=1, batch_size=2048, random_state=0)),
    ]:
        for label, corpus in (("bbc", texts), ("bbc_x4", x4)):
            t0 = time.perf_counter()
            try:
                est = make().fit(corpus)
                secs = time.perf_counter() - t0
                words = sum(len(t.split()) for t in corpus) * est.epochs
                rec(step=name, corpus=label, ok=True, seconds=round(secs, 1), engine=est.engine_,
                    words_per_s=round(words / secs), losses=[round(h["loss"], 4) for h in est.history_])
            except TrainingDivergedError as e:
                rec(step=name, corpus=label, ok=False, seconds=round(time.perf_counter() - t0, 1), error=str(e)[:300])
            except Exception:
                rec(step=name, corpus=label, ok=False, error=traceback.format_exc()[-600:])
else:
    for lock_free in (False, True):
        for sg in (1, 0):
            for n in (1, 2, 4, 8, 16):
                est = Word2VecTransformer(sg=sg, epochs=1, n_jobs=n, lock_free=lock_free, random_state=0)
                if n == 1:
                    est.fit(texts[:200])  # compile outside the timing
                t0 = time.perf_counter()
                est.fit(x4)
                secs = time.perf_counter() - t0
                rec(step="cpu-scaling", sg=sg, lock_free=lock_free, n_jobs=n, seconds=round(secs, 2),
                    words_per_s=round(n_tokens / secs))

"""Word2Vec/FastText estimators on CUDA through the shared trainer (debdocs, 5 epochs).

Run on a CUDA machine from the repository root, with debdocs and the similarity files
copied to ``.gpu/data/`` (see docs/gpu.md)::

    PYTHONPATH=. python benchmarks/bench_gpu_estimators.py

Exits 0 with a message without CUDA.
"""

import sys
import time

import torch

if not torch.cuda.is_available():
    print("no CUDA device: nothing to measure")
    sys.exit(0)
from skembed import FastTextTransformer, LineCorpus, Word2VecTransformer  # noqa: E402
from skembed.evaluation import word_similarity  # noqa: E402

print(torch.cuda.get_device_name(0), torch.__version__, flush=True)
corpus = LineCorpus(".gpu/data/debdocs-11m.txt.gz")
ws, sl = ".gpu/data/wordsim353.tsv", ".gpu/data/simlex999.txt"
runs = [
    ("Word2Vec sg", Word2VecTransformer, dict(sg=1)),
    ("Word2Vec cbow", Word2VecTransformer, dict(sg=0, alpha=0.05)),
    ("FastText sg", FastTextTransformer, dict(sg=1, bucket=2_000_000)),
]
for name, cls, kw in runs:
    est = cls(
        device="cuda",
        vector_size=100,
        window=5,
        negative=5,
        min_count=5,
        epochs=5,
        random_state=0,
        **kw,
    )
    t0 = time.perf_counter()
    est.fit(corpus)
    wall = time.perf_counter() - t0
    a = word_similarity(est.wv_, ws)["spearman"]
    b = word_similarity(est.wv_, sl)["spearman"]
    print(
        f"{name}: engine={est.engine_} train {est.train_time_:.2f}s fit {wall:.2f}s "
        f"{est.words_per_second_ / 1e6:.2f}M words/s WS353 {a:.3f} SimLex {b:.3f}",
        flush=True,
    )

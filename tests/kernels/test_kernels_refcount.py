"""The word2vec-family kernels do no reference counting per token (issue 21).

numba emits ``NRT_incref``/``NRT_decref`` (a call and an atomic add each)
around row views and around array arguments of helpers whose body branches
around array code, and cannot always prune them; in the hot loop they used
to cost 6 to 1,260 increfs per token. ``NUMBA_DEBUG_NRT=1`` makes every incref
print a line, so a training run in a subprocess counts them: the count must
not grow with the number of tokens trained.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import sys
import numpy as np
from skembed.text.word2vec._training import kernel_config
from skembed.kernels.scheduler import Documents, Weights, train_doc2vec_chunk, train_word2vec_chunk
from skembed.kernels.fasttext import vocabulary_ngram_hashes


def run(case, n_parts, sync):
    sg, shared, hs, sub, d2v = (int(a) for a in case.split(","))
    n_words, dim = 60, 8
    rng = np.random.default_rng(0)
    rows, n_rows = (None, None), n_words
    if sub:
        indptr, indices = vocabulary_ngram_hashes([f"w{i}" for i in range(n_words)], 2, 3, 50)
        rows, n_rows = (indptr, indices.astype(np.int32)), 50
    cfg = kernel_config(
        rng.integers(1, 100, n_words), sg=sg, hs=hs, negative=3, window=4,
        shared_negatives=shared, ns_exponent=0.75, input_rows=rows, sync_tokens=sync,
    )
    for n in (400, 4000):
        ids = rng.integers(0, n_words, n).astype(np.int32)
        offsets = np.array([0, n // 4, n // 2, n], np.int64)
        syn0 = rng.random((n_rows + 3, dim), dtype=np.float32) - 0.5
        syn1neg = np.zeros((n_words, dim), np.float32)
        syn1 = np.zeros((n_words - 1 if hs else 0, dim), np.float32)
        for rep in range(2):  # the first call compiles (or loads) the kernel
            print("@@START" if rep else "@@WARM", flush=True)
            if d2v:
                docs = Documents(np.arange(3) + n_rows, d2v == 2, False)
                train_doc2vec_chunk(
                    Weights(syn0, syn1neg, syn1), ids, offsets, docs, cfg, 0.025, 0.0001, 7,
                    n_parts,
                )
            else:
                train_word2vec_chunk(
                    syn0, syn1neg, syn1, ids, offsets, cfg, 0.025, 0.0001, 7, n_parts
                )
            print("@@END" if rep else "@@WARMED", flush=True)


for case in sys.argv[3:]:
    run(case, int(sys.argv[1]), int(sys.argv[2]))
"""

CASES = {
    "skipgram-shared": (1, 1, 0, 0, 0),
    "skipgram-pairs-hs": (1, 0, 1, 0, 0),
    "cbow": (0, 0, 0, 0, 0),
    "cbow-shared": (0, 1, 0, 0, 0),
    "fasttext-skipgram": (1, 1, 0, 1, 0),
    "fasttext-cbow": (0, 0, 0, 1, 0),
    "pv-dbow": (1, 0, 0, 0, 1),
    "pv-dbow-shared": (1, 1, 0, 0, 1),
    "pv-dm": (0, 0, 0, 0, 2),
}


def _increfs(n_parts, sync):
    """Increfs of each case's second call on 400 and on 4,000 tokens, as {case: [n, n]}."""
    env = dict(os.environ, NUMBA_DEBUG_NRT="1", PYTHONPATH=str(ROOT))
    argv = [str(n_parts), str(sync)] + [",".join(map(str, CASES[c])) for c in CASES]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    counts, inside = [], False
    for line in out.splitlines():
        if line == "@@START":
            inside, n = True, 0
        elif line == "@@END":
            inside = False
            counts.append(n)
        elif inside and "NRT_Incref" in line:
            n += 1
    assert len(counts) == 2 * len(CASES), out[-2000:]
    return {c: counts[2 * i : 2 * i + 2] for i, c in enumerate(CASES)}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sequential", "deterministic", "lock-free"])
def test_increfs_do_not_grow_with_tokens(mode):
    n_parts, sync = {"sequential": (1, 0), "deterministic": (2, 8192), "lock-free": (2, 0)}[mode]
    counts = _increfs(n_parts, sync)
    # 400 vs 4,000 tokens: the old kernels did 6 to 1,260 increfs per token; what is
    # left is per call (argument unpacking, allocations), the same for both sizes
    grown = {c: (a, b) for c, (a, b) in counts.items() if b != a or a > 200}
    assert not grown, grown

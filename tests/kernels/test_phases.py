"""The deterministic mode's partition: a fixed number of parts, whatever the thread count.

Parts once followed ``n_jobs``, and ``n_jobs=None`` means every core, so a user's default
fit on an 8-core laptop trained 8 parts: CBOW on BBC News then lost its similarity
structure (4 parts: WordSim-353 -0.09) or raised "training diverged" (8 parts). Then
at most 4 parts trained, with shorter phases above 2, and the vectors still depended on
``n_jobs``. Now the estimators' ``n_parts`` (default 2) sets the parts and the threads
execute them (:func:`training_partition`). ``n_jobs`` is not capped by the machine's
cores, so these tests run 1 to 8 threads on any machine.
"""

import hashlib

import numpy as np
import pytest

from skembed.kernels._phases import (
    DEFAULT_PARTS,
    MAX_DETERMINISTIC_PARTS,
    training_partition,
)


def test_partition_rule_values():
    # deterministic: the parts are n_parts whatever the thread count
    for n_threads in (1, 2, 3, 64):
        assert training_partition(n_threads, 8192) == (DEFAULT_PARTS, 8192)
        assert training_partition(n_threads, 8192, 1) == (1, 8192)
    assert DEFAULT_PARTS == 2
    assert training_partition(1, 65536, 2) == (2, 65536)
    # above two parts the phases shrink as (2 / parts) ** 2 from at most 8,192 tokens
    assert training_partition(1, 8192, 3) == (3, 8192 * 4 // 9)
    assert training_partition(16, 8192, 4) == (4, 2048)
    assert training_partition(2, 65536, 4) == (4, 2048)
    # above four parts, half of that: 8 parts 256 tokens, 16 parts 64
    assert training_partition(2, 8192, 8) == (8, 256)
    assert training_partition(16, 65536, 16) == (16, 64)
    assert training_partition(2, 8192, 5) == (5, 8192 * 2 // 25)
    # lock-free training: one slice per thread, n_parts ignored
    assert training_partition(16, 0) == (16, 0)
    assert training_partition(3, 0, 1) == (3, 0)
    assert MAX_DETERMINISTIC_PARTS == 16
    for bad in (0, 17):
        with pytest.raises(ValueError, match=f"n_parts={bad}: .* 1 to 16 parts"):
            training_partition(2, 8192, bad)


def _digest(model):
    return hashlib.sha256(np.ascontiguousarray(model.wv_.vectors).tobytes()).hexdigest()


@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news
    from skembed.text._analyzer import build_analyzer

    texts, _ = load_bbc_news()
    analyzer = build_analyzer()
    return [analyzer(text) for text in texts]


@pytest.mark.slow
@pytest.mark.parametrize("sg", [0, 1])
def test_four_parts_keep_quality_on_any_thread_count(bbc, sg):
    """Four parts train as well as one (eight diverged at four parts' phase length), with 4
    threads or 8 alike."""
    from gensim.test.utils import datapath

    from skembed.evaluation import word_similarity
    from skembed.text import Word2VecTransformer

    params = dict(sg=sg, alpha=0.025 if sg else 0.05, vector_size=100, epochs=5, random_state=0)
    scores, digests = {}, {}
    for n_parts, n_jobs in ((1, 1), (4, 4), (4, 8)):
        model = Word2VecTransformer(n_jobs=n_jobs, n_parts=n_parts, **params).fit(bbc)
        score = word_similarity(model.wv_, datapath("wordsim353.tsv"))["spearman"]
        scores[n_parts, n_jobs], digests[n_parts, n_jobs] = score, _digest(model)
    assert digests[4, 4] == digests[4, 8]  # the same four parts, on 4 or 8 threads
    assert scores[4, 8] >= scores[1, 1] - 0.05, scores
    assert scores[1, 1] > 0.15, scores  # the corpus teaches similarity at all


@pytest.mark.slow
@pytest.mark.parametrize("family", ["word2vec-cbow", "fasttext"])
def test_sixteen_parts_train_as_well_as_two(bbc, family):
    """16 parts with 64-token phases keep the similarity structure of 2 parts, and give the
    same bits on 2 threads and 3. FastText diverged with 8 parts when the phases shrank as
    ``(2 / n_parts) ** 2`` only (512 tokens); measured here: CBOW WordSim-353 0.389 with
    16 parts vs 0.321 with 2, FastText 0.358 vs 0.271 (seed 0)."""
    from gensim.test.utils import datapath

    from skembed.evaluation import word_similarity
    from skembed.text import FastTextTransformer, Word2VecTransformer

    if family == "fasttext":
        cls, params = FastTextTransformer, dict(sg=1, alpha=0.025)
    else:
        cls, params = Word2VecTransformer, dict(sg=0, alpha=0.05)
    params.update(vector_size=100, epochs=5, random_state=0)
    scores, digests = {}, {}
    for n_parts, n_jobs in ((2, 2), (16, 2), (16, 3)):
        model = cls(n_jobs=n_jobs, n_parts=n_parts, **params).fit(bbc)
        score = word_similarity(model.wv_, datapath("wordsim353.tsv"))["spearman"]
        scores[n_parts, n_jobs], digests[n_parts, n_jobs] = score, _digest(model)
    assert digests[16, 2] == digests[16, 3]
    assert scores[16, 2] >= scores[2, 2] - 0.03, scores
    assert scores[2, 2] > 0.2, scores


def test_no_two_parts_share_a_cache_line():
    """Every per-part scratch and workspace block ends with PART_PAD unused entries of at
    least 128 bytes, so no two threads write the same cache line (or its prefetch pair):
    the parts' slot counters once shared a line, written at every row access."""
    from skembed.kernels._core import PART_PAD
    from skembed.kernels._phases import _scratch, _workspaces

    n_parts, dim = 3, 4
    scratch = _scratch(n_parts, 10, 5, dim, 1)
    w = _workspaces(
        n_parts, np.array([50, 40, 30]), np.array([20, 20, 20]), dim, np.zeros(3, np.int64)
    )
    for a in (*scratch, *w.syn0, *w.syn1neg, *w.syn1, w.count):
        unused = PART_PAD * int(np.prod(a.shape[2:], dtype=np.int64)) * a.itemsize
        assert a.shape[0] == n_parts and a.shape[1] >= PART_PAD
        assert unused >= 128
    # the slot counters: PART_PAD int64 per part (count[m] for m < 3), one line each
    assert w.count.shape == (n_parts, PART_PAD) and w.count.strides[0] >= 128

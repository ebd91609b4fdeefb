"""The deterministic mode's partition: more than two parts that add their changes diverge.

``n_jobs=None`` means every core, so a user's default fit on an 8-core laptop trained
8 parts; before :func:`deterministic_partition`, CBOW on BBC News then lost its
similarity structure (4 parts: WordSim-353 -0.09) or raised "training diverged"
(8 parts). ``n_jobs`` is not capped by the machine's cores, so these tests train 4 and
8 parts on any machine.
"""

import hashlib

import numpy as np
import pytest

from skembed.kernels._phases import MAX_DETERMINISTIC_PARTS, deterministic_partition


def test_partition_rule_values():
    # up to two threads and lock-free training: unchanged
    assert deterministic_partition(1, 8192) == (1, 8192)
    assert deterministic_partition(2, 8192) == (2, 8192)
    assert deterministic_partition(2, 65536) == (2, 65536)
    assert deterministic_partition(16, 0) == (16, 0)
    # more: at most 4 parts, phases shrink as (2 / parts) ** 2 from at most 8,192 tokens
    assert deterministic_partition(3, 8192) == (3, 8192 * 4 // 9)
    assert deterministic_partition(4, 8192) == (4, 2048)
    assert deterministic_partition(64, 65536) == (MAX_DETERMINISTIC_PARTS, 2048)
    assert MAX_DETERMINISTIC_PARTS == 4


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
def test_many_threads_keep_quality(bbc, sg):
    """n_jobs=8 trains as well as one thread (it diverged before), and as n_jobs=4."""
    from gensim.test.utils import datapath

    from skembed.evaluation import word_similarity
    from skembed.text import Word2VecTransformer

    params = dict(sg=sg, alpha=0.025 if sg else 0.05, vector_size=100, epochs=5, random_state=0)
    scores, digests = {}, {}
    for n_jobs in (1, 4, 8):
        model = Word2VecTransformer(n_jobs=n_jobs, **params).fit(bbc)
        scores[n_jobs] = word_similarity(model.wv_, datapath("wordsim353.tsv"))["spearman"]
        digests[n_jobs] = _digest(model)
    assert digests[4] == digests[8]  # both train four parts
    assert scores[8] >= scores[1] - 0.05, scores
    assert scores[1] > 0.15, scores  # the corpus teaches similarity at all


def test_no_two_parts_share_a_cache_line():
    """Every per-part scratch and workspace block ends with PART_PAD unused entries of at
    least 128 bytes, so no two threads write the same cache line (or its prefetch pair):
    the parts' slot counters once shared a line, written at every row access."""
    from skembed.kernels._core import PART_PAD
    from skembed.kernels._phases import _scratch, _workspaces

    n_parts, dim = 3, 4
    scratch = _scratch(n_parts, 10, 5, dim, 1)
    w = _workspaces(n_parts, np.array([50, 40, 30]), np.array([20, 20, 20]), dim)
    for a in (*scratch, *w):
        unused = PART_PAD * int(np.prod(a.shape[2:], dtype=np.int64)) * a.itemsize
        assert a.shape[0] == n_parts and a.shape[1] >= PART_PAD
        assert unused >= 128
    # the slot counters: PART_PAD int64 per part (count[m] for m < 3), one line each
    assert w[9].shape == (n_parts, PART_PAD) and w[9].strides[0] >= 128

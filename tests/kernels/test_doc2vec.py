"""Paragraph-vector kernel pieces (``skembed.kernels.doc2vec``) on hand-checkable inputs."""

import numpy as np

from skembed.kernels.doc2vec import DBOW_BATCH, document_seed


def _mix64(x):  # splitmix64's finaliser in Python integers
    m = 2**64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) % m
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) % m
    return x ^ (x >> 31)


def test_document_seed_by_hand():
    g, m = 0x9E3779B97F4A7C15, 2**64
    for ids, seed in (([], 0), ([3, 1, 4], 7), ([1, 3, 4], 7)):
        h = _mix64((seed + g) % m)
        for i in ids:
            h = _mix64(h ^ ((i + g) % m))
        expected = _mix64(h ^ len(ids))
        assert int(document_seed(np.array(ids, np.int32), seed)) == expected
    # order matters: the same words in another order give another seed
    a = document_seed(np.array([3, 1, 4], np.int32), 7)
    assert a != document_seed(np.array([1, 3, 4], np.int32), 7)
    assert DBOW_BATCH == 4

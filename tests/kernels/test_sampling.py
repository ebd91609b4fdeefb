"""Noise, subsampling, Huffman and sigmoid tables of the word2vec family, on hand-checkable inputs
(moved from test_word2vec.py: the mirrored path of skembed/kernels/sampling.py)."""

import numpy as np
import pytest

from skembed.kernels import sampling as S


def test_huffman_tree_code_lengths_and_prefix_free():
    counts = np.array([5, 3, 1, 1])
    codes, points, lengths = S.huffman_tree(counts)
    # merges 1+1, 2+3, 5+5: optimal lengths 1, 2, 3, 3
    assert lengths.tolist() == [1, 2, 3, 3]
    words = ["".join(map(str, codes[w, : lengths[w]])) for w in range(4)]
    for a in words:
        assert sum(b.startswith(a) for b in words) == 1
    assert (points[:, 0][lengths > 0] == 2).all()  # root = n - 2, first on every path
    c, p, n = S.huffman_tree([7])
    assert n.tolist() == [0]


def test_huffman_tree_of_counts_near_2_to_the_62():
    # the counts (and their sums) pass int64's range: the same tree as their small copies
    big = S.huffman_tree(np.array([5, 3, 1, 1], dtype=np.int64) * 2**60)
    small = S.huffman_tree(np.array([5, 3, 1, 1]))
    for got, want in zip(big, small, strict=True):
        np.testing.assert_array_equal(got, want)
    assert S.huffman_tree([2**62, 2**62 - 1, 2**62 - 2])[2].tolist() == [1, 2, 2]


def test_alias_table_encodes_the_distribution_exactly():
    probs = S.noise_distribution([10, 5, 3, 1, 1], 0.75)
    np.testing.assert_allclose(
        probs, np.array([10, 5, 3, 1, 1]) ** 0.75 / (np.array([10, 5, 3, 1, 1]) ** 0.75).sum()
    )
    prob, alias = S.alias_table(probs)
    n = len(probs)
    implied = prob.astype(np.float64) / n
    np.add.at(implied, alias, (1.0 - prob.astype(np.float64)) / n)
    np.testing.assert_allclose(implied, probs, atol=1e-6)
    table = S.cumulative_table([10, 5, 3, 1, 1])
    assert table[-1] == 2**31 - 1 and (np.diff(table.astype(np.int64)) > 0).all()


def test_keep_probabilities_word2vec_formula():
    counts = np.array([1000, 100, 10, 1])
    keep = S.keep_probabilities(counts, sample=1e-2)
    t = 1e-2 * counts.sum()  # 11.11
    expected = np.minimum((np.sqrt(counts / t) + 1) * t / counts, 1.0)
    np.testing.assert_allclose(keep, expected, rtol=1e-6)
    assert keep[-1] == 1.0 and keep[0] < 0.2
    assert (S.keep_probabilities(counts, sample=0) == 1).all()


def test_lcg_and_sigmoid_tables():
    assert S.lcg_next(1) == 25214903917 + 11
    assert S.lcg_next(2**64 - 1) == (-25214903917 + 11) % 2**64
    sig, logsig = S.sigmoid_tables()
    assert sig[500] == pytest.approx(0.5) and sig[0] == pytest.approx(1 / (1 + np.exp(6)))
    np.testing.assert_allclose(logsig, np.log(sig.astype(np.float64)), rtol=2e-5, atol=1e-7)

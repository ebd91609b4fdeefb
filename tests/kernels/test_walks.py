"""The walk kernel: exact transition probabilities on a hand-checkable graph, dead ends,
and the same walks on any number of threads."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from skembed.graph._input import check_graph
from skembed.kernels.walks import WalkConfig, random_walks

# a triangle 0-1-2 with a pendant node 3 on node 1; edge 1-3 weighs 2
EDGES = np.array([[0, 1, 1], [1, 2, 1], [0, 2, 1], [1, 3, 2]])


def _second_steps(p, q, n=200_000):
    graph = check_graph(EDGES).csr
    walks = random_walks(graph, WalkConfig(3, 1 / p, 1 / q), np.zeros(n, np.int32), 7)
    third = walks[walks[:, 1] == 1, 2]
    return np.bincount(third, minlength=4) / len(third)


@pytest.mark.parametrize("p, q", [(0.5, 2.0), (1.0, 1.0), (4.0, 0.25)])
def test_second_order_step_has_node2vec_probabilities(p, q):
    # from 1, having come from 0: back to 0 weighs 1/p, to 2 (a neighbour of 0) 1, to 3
    # (not a neighbour of 0) 2 * 1/q
    expected = np.array([1 / p, 0.0, 1.0, 2 / q])
    np.testing.assert_allclose(_second_steps(p, q), expected / expected.sum(), atol=0.006)


def test_first_step_is_drawn_by_weight():
    graph = check_graph(EDGES).csr
    walks = random_walks(graph, WalkConfig(2, 1.0, 1.0), np.ones(100_000, np.int32), 3)
    # node 1's edges: to 0 (1), 2 (1), 3 (2)
    share = np.bincount(walks[:, 1], minlength=4) / len(walks)
    np.testing.assert_allclose(share, [0.25, 0.0, 0.25, 0.5], atol=0.006)


def test_a_walk_ends_at_a_node_without_out_edges():
    graph = check_graph(np.array([[0, 1], [1, 2]]), directed=True).csr
    walks = random_walks(graph, WalkConfig(5, 1.0, 1.0), np.array([0, 2], np.int32), 0)
    np.testing.assert_array_equal(walks, [[0, 1, 2, -1, -1], [2, -1, -1, -1, -1]])


def test_same_walks_on_every_thread_count_of_the_pool():
    """1 and 2 threads on a 2-core machine; tests/graph/test_node2vec.py runs 4 in a subprocess."""
    rng = np.random.default_rng(0)
    edges = rng.integers(0, 300, (2000, 2))
    graph = check_graph(edges[edges[:, 0] != edges[:, 1]]).csr
    starts = np.repeat(np.arange(300, dtype=np.int32), 4)
    runs = []
    for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
        numba.set_num_threads(threads)
        runs.append(random_walks(graph, WalkConfig(20, 2.0, 0.5), starts, 11))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for run in runs[1:]:
        np.testing.assert_array_equal(runs[0], run)
    assert not np.array_equal(runs[0], random_walks(graph, WalkConfig(20, 2.0, 0.5), starts, 12))


def test_warm_up_compiles_the_signature_node2vec_fits_use():
    # a fit after the warm-up adds no signature: the warm-up's argument types are the fit's
    from skembed.graph import Node2VecTransformer
    from skembed.kernels.walks import warm_up

    np.testing.assert_array_equal(warm_up(), [[0, 1, 0], [1, 0, 1]])  # two nodes, back and forth
    compiled = list(random_walks.signatures)
    ring = np.array([[i, (i + 1) % 6] for i in range(6)])
    Node2VecTransformer(4, walk_length=5, walks_per_node=1, epochs=1, n_jobs=1).fit(ring)
    weighted = np.column_stack([ring, np.full(6, 2, np.int32)])  # integer weights
    Node2VecTransformer(4, walk_length=5, walks_per_node=1, epochs=1, n_jobs=1).fit(weighted)
    assert list(random_walks.signatures) == compiled

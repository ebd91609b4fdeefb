"""Compiled random walks over a graph: node2vec's second-order biased walks (DeepWalk's when
``p = q = 1``).

Plain functions over numpy arrays, compiled with numba; no scikit-learn, no torch. The graph
is a CSR adjacency (:class:`CsrGraph`): the out-neighbours of node ``v`` are
``indices[indptr[v]:indptr[v + 1]]``, sorted, with positive weights and their running sums
``cumulative`` (so a first-order step is one binary search).

A second-order step from ``current`` (reached from ``previous``) to a neighbour ``x`` has
probability proportional to ``w(current, x) * bias(x)``, with ``bias = 1/p`` when
``x == previous``, ``1`` when ``x`` is a neighbour of ``previous`` and ``1/q`` otherwise
(Grover & Leskovec 2016). It is drawn by rejection: ``x`` is drawn by weight, then kept with
probability ``bias(x) / max(1/p, 1, 1/q)`` (the sampler of KnightKing, Yang et al. 2019, and of
fastnode2vec), which gives exactly that distribution with memory linear in the edges, where
node2vec's precomputed alias tables take one table per edge (the sum of squared degrees).

Each walk draws from its own generator (SplitMix64, Steele et al. 2014), seeded from the fit's
seed and the walk's index, so the walks are the same on any number of threads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from . import launch_threads

launch_threads()  # numba's pool, its idle threads spinning briefly (see launch_threads)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53: 53 random bits to a float in [0, 1)


class CsrGraph(NamedTuple):
    """A graph as a CSR adjacency with sorted neighbours and running sums of the weights.

    ``indptr`` int64 (n_nodes + 1,), ``indices`` int32 (n_edges,), ``cumulative`` float64
    (n_edges,): within each node's row, the running sum of its out-edge weights.
    """

    indptr: np.ndarray
    indices: np.ndarray
    cumulative: np.ndarray


class WalkConfig(NamedTuple):
    """What a walk is: ``walk_length`` nodes (the start included), biases ``1/p`` and ``1/q``."""

    walk_length: int
    inverse_p: float
    inverse_q: float


@njit(cache=True, nogil=True, inline="always")
def _splitmix(state):
    """The next state of SplitMix64 and its output."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return state, z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _uniform(state):
    """The next state and a float in ``[0, 1)``."""
    state, z = _splitmix(state)
    return state, float(z >> np.uint64(11)) * _TO_UNIT


@njit(cache=True, nogil=True)
def walk_seed(seed, walk):
    """The generator state of walk number ``walk`` of a fit seeded with ``seed``."""
    _, z = _splitmix(np.uint64(seed) ^ (np.uint64(walk) * _MIX2))
    return z


@njit(cache=True, nogil=True, inline="always")
def _draw_neighbour(indptr, cumulative, node, u):
    """Position in ``indices`` of the neighbour of ``node`` drawn by weight (``u`` in [0, 1))."""
    lo, hi = indptr[node], indptr[node + 1] - 1
    target = u * cumulative[hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if cumulative[mid] <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, inline="always")
def _is_neighbour(indptr, indices, node, other):
    """Whether ``other`` is an out-neighbour of ``node`` (binary search of the sorted row)."""
    lo, hi = indptr[node], indptr[node + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < other:
            lo = mid + 1
        else:
            hi = mid
    return lo < indptr[node + 1] and indices[lo] == other


@njit(cache=True, nogil=True, inline="always")
def _walk_once(graph, config, walks, row, start, state):
    """Write one walk from ``start`` into ``walks[row]`` (``-1`` after a node without edges)."""
    indptr, indices, cumulative = graph.indptr, graph.indices, graph.cumulative
    top = max(config.inverse_p, 1.0, config.inverse_q)
    first_order = config.inverse_p == 1.0 and config.inverse_q == 1.0
    walks[row, 0] = start
    previous, current = -1, start
    for step in range(1, config.walk_length):
        if indptr[current] == indptr[current + 1]:
            break
        while True:
            state, u = _uniform(state)
            candidate = indices[_draw_neighbour(indptr, cumulative, current, u)]
            if previous < 0 or first_order:
                break
            if candidate == previous:
                bias = config.inverse_p
            elif _is_neighbour(indptr, indices, previous, candidate):
                bias = 1.0
            else:
                bias = config.inverse_q
            state, u = _uniform(state)
            if u * top < bias:
                break
        walks[row, step] = candidate
        previous, current = current, candidate


@njit(cache=True, nogil=True, parallel=True)
def random_walks(graph, config, starts, seed):
    """One walk from each start node, in parallel; the same walks on any number of threads.

    Parameters
    ----------
    graph : CsrGraph
    config : WalkConfig
    starts : numpy.ndarray of shape (n_walks,), int32
        The start node of each walk.
    seed : int
        The fit's seed; walk ``k`` draws from :func:`walk_seed` ``(seed, k)``.

    Returns
    -------
    walks : numpy.ndarray of shape (n_walks, walk_length), int32
        Node indices; a walk that reaches a node without out-edges ends there, the rest of
        its row ``-1``.
    """
    walks = np.full((starts.shape[0], config.walk_length), -1, np.int32)
    for k in prange(starts.shape[0]):
        _walk_once(graph, config, walks, k, starts[k], walk_seed(seed, k))
    return walks


def warm_up():
    """Compile (or load from numba's disk cache) :func:`random_walks` ahead of a first fit.

    Called with the argument types ``Node2VecTransformer`` passes (a :class:`CsrGraph` of
    int64 / int32 / float64 arrays, a :class:`WalkConfig` of an int and two floats, int32
    starts, an int seed), so its fits find the machine code ready;
    ``skembed.text.word2vec.warm_up`` calls it.

    Returns
    -------
    walks : numpy.ndarray of shape (2, 3), int32
        The walks of a two-node graph (each one alternates between the nodes).
    """
    graph = CsrGraph(np.array([0, 1, 2], np.int64), np.array([1, 0], np.int32), np.ones(2))
    return random_walks(graph, WalkConfig(3, 1.0, 1.0), np.array([0, 1], np.int32), 0)

"""Graph input: an edge list or a sparse adjacency → node ids and a CSR graph for the walks.

The one check of graph input (:func:`check_graph`) and of the node ids given to ``transform``
(:func:`check_node_query`); the walk-memory estimate and its refusal (:func:`check_walk_memory`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..kernels.walks import CsrGraph
from ..utils._ids import as_table, check_columns, check_ids, check_weights, id_column

#: bytes a walk token takes while it trains: its int32 in the walks, a list and a tuple
#: reference in the documents handed to Word2VecTransformer, and its int32 in the encoded corpus
BYTES_PER_WALK_TOKEN = 24
#: the share of the available memory the walks may take
MEMORY_SHARE = 0.8


class Graph(NamedTuple):
    """A checked graph: ``nodes`` (the ids, sorted), the CSR adjacency and its isolated nodes."""

    nodes: np.ndarray
    csr: CsrGraph
    isolated: np.ndarray


class NodeQuery(NamedTuple):
    """What ``transform`` was asked for: node ids (one column) or edges (two)."""

    sources: list
    targets: list | None


def _edge_columns(X):
    """``(sources, targets, weights or None)`` of an edge-list array or DataFrame."""
    if hasattr(X, "columns"):
        check_columns(X, ("source", "target"), ("weight",), "An edge-list DataFrame")
        weight = X["weight"].to_numpy() if "weight" in X.columns else None
        return X["source"].to_numpy(), X["target"].to_numpy(), weight
    array = as_table(X)
    if array.ndim != 2 or array.shape[1] not in (2, 3):
        raise ValueError(
            f"An edge list is an array of shape (n_edges, 2) or (n_edges, 3) (source, target"
            f"[, weight]); got shape {array.shape}. A scipy sparse adjacency matrix works too."
        )
    columns = [array[:, k] for k in range(array.shape[1])]  # object ids keep their types
    return columns[0], columns[1], columns[2] if array.shape[1] == 3 else None


def _weights(values, n):
    return check_weights(values, n, what="edge", fix="Drop those edges (a zero weight is no edge).")


def _edges_to_indices(X):
    """``(nodes, sources, targets, weights)`` of an edge list, ids mapped to ``0..n-1``."""
    sources, targets, weights = _edge_columns(X)
    if len(sources) == 0:
        raise ValueError("The edge list is empty; a graph needs at least one edge.")
    source_ids, source_kinds = check_ids(sources, "The source column")
    target_ids, target_kinds = check_ids(targets, "The target column")
    kinds = source_kinds | target_kinds
    if len(kinds) > 1:
        raise TypeError(
            "The edge list mixes node ids of types int and str (as 1 and '1', which would be "
            "two nodes); convert all ids to one type, e.g. str."
        )
    nodes, inverse = np.unique(np.array(source_ids + target_ids), return_inverse=True)
    n = len(source_ids)
    return nodes, inverse[:n], inverse[n:], _weights(weights, n)


def _adjacency_to_indices(X):
    if X.shape[0] != X.shape[1]:
        raise ValueError(f"A sparse adjacency matrix must be square; got shape {X.shape}.")
    coo = sp.coo_matrix(X)
    return np.arange(X.shape[0]), coo.row, coo.col, _weights(coo.data, coo.nnz)


def _csr(n_nodes, sources, targets, weights):
    matrix = sp.csr_matrix((weights, (sources, targets)), shape=(n_nodes, n_nodes))
    matrix.sum_duplicates()
    matrix.sort_indices()
    cumulative = np.cumsum(matrix.data)
    row_start = np.concatenate([[0.0], cumulative])[matrix.indptr[:-1]]
    cumulative -= np.repeat(row_start, np.diff(matrix.indptr))
    return CsrGraph(matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32), cumulative)


def check_graph(X, *, directed=False):
    """Check a graph and build its CSR adjacency.

    Parameters
    ----------
    X : array-like of shape (n_edges, 2) or (n_edges, 3), DataFrame or scipy sparse matrix
        Edges ``(source, target[, weight])`` with int or str node ids (one type), a DataFrame
        with columns ``source``, ``target`` and optionally ``weight``, or a square adjacency
        matrix whose entry ``(i, j)`` is the weight of edge ``i → j`` (nodes ``0..n-1``).
    directed : bool, default=False
        False: every edge is walked both ways (an edge listed both ways counts twice).

    Returns
    -------
    graph : Graph
        Duplicate edges summed.

    Raises
    ------
    ValueError
        An empty edge list, a NaN id, a weight that is NaN, infinite, 0 or negative, a
        self-loop, fewer than two nodes, a non-square adjacency; each message names the fix.
    TypeError
        Ids of mixed types (int and str) or of another type.

    Examples
    --------
    >>> graph = check_graph([["a", "b"], ["b", "c"]])
    >>> graph.nodes.tolist(), graph.csr.indices.tolist()
    (['a', 'b', 'c'], [1, 0, 2, 1])
    """
    if sp.issparse(X):
        nodes, sources, targets, weights = _adjacency_to_indices(X)
    else:
        nodes, sources, targets, weights = _edges_to_indices(X)
    loops = sources == targets
    if loops.any():
        raise ValueError(
            f"The graph has {int(loops.sum())} self-loops (first: node {nodes[sources[loops][0]]!r}"
            "); a walk's step to itself carries no context. Drop them (X[X[:, 0] != X[:, 1]], "
            "or A.setdiag(0); A.eliminate_zeros() for a sparse matrix)."
        )
    if len(nodes) < 2:
        raise ValueError(f"The graph has {len(nodes)} node; node2vec needs at least two.")
    if not directed:
        sources, targets = np.concatenate([sources, targets]), np.concatenate([targets, sources])
        weights = np.concatenate([weights, weights])
    csr = _csr(len(nodes), sources, targets, weights)
    touched = np.zeros(len(nodes), bool)
    touched[sources] = touched[targets] = True
    return Graph(nodes, csr, np.flatnonzero(~touched))


def available_memory():
    """Bytes of memory available to a new allocation (``MemAvailable`` of Linux; else None)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_walk_memory(n_walks, walk_length):
    """Refuse walks that would not fit in memory, before any is generated.

    Parameters
    ----------
    n_walks, walk_length : int
        Number of walks (nodes times ``walks_per_node``) and their length.

    Raises
    ------
    MemoryError
        When ``n_walks * walk_length * BYTES_PER_WALK_TOKEN`` exceeds ``MEMORY_SHARE`` of
        :func:`available_memory`; the message gives both and names ``walks_per_node`` and
        ``walk_length``.
    """
    needed = n_walks * walk_length * BYTES_PER_WALK_TOKEN
    available = available_memory()
    if available is not None and needed > MEMORY_SHARE * available:
        raise MemoryError(
            f"The walks would need about {needed / 2**30:.1f} GiB ({n_walks:,} walks of "
            f"{walk_length} nodes, {BYTES_PER_WALK_TOKEN} bytes each), more than "
            f"{MEMORY_SHARE:.0%} of the {available / 2**30:.1f} GiB available; lower "
            "walks_per_node or walk_length."
        )


def check_node_query(X):
    """Node ids (a 1-D array or one column) or edges (two or three columns) of ``transform``.

    Returns
    -------
    query : NodeQuery
        ``targets`` is None for node ids; a sparse matrix asks for its rows' nodes ``0..n-1``.

    Examples
    --------
    >>> check_node_query([3, 1]), check_node_query([[1, 2]]).targets
    (NodeQuery(sources=[3, 1], targets=None), [2])
    """
    if sp.issparse(X):
        return NodeQuery(list(range(X.shape[0])), None)
    if hasattr(X, "columns"):
        if {"source", "target"} <= set(X.columns):
            sources, targets, _ = _edge_columns(X)
            return NodeQuery(check_ids(sources, "source")[0], check_ids(targets, "target")[0])
    ids = id_column(X)
    if ids is not None:
        return NodeQuery(ids, None)
    sources, targets, _ = _edge_columns(as_table(X))
    return NodeQuery(check_ids(sources, "source")[0], check_ids(targets, "target")[0])

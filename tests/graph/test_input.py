"""Graph input: CSR built by hand-checkable rules, queries of transform, memory estimate."""

from __future__ import annotations

import numpy as np
import pytest

from skembed.graph import _input


def test_duplicates_are_summed_and_undirected_edges_walk_both_ways():
    graph = _input.check_graph(np.array([[2, 0, 1.0], [0, 2, 0.5], [0, 1, 3.0], [0, 1, 1.0]]))
    csr = graph.csr
    np.testing.assert_array_equal(csr.indptr, [0, 2, 3, 4])
    np.testing.assert_array_equal(csr.indices, [1, 2, 0, 0])
    # row 0: to 1 weighs 3 + 1, to 2 weighs 1 + 0.5 (listed both ways: counted twice)
    np.testing.assert_allclose(csr.cumulative, [4.0, 5.5, 4.0, 1.5])
    assert graph.isolated.size == 0


def test_directed_graph_keeps_one_way_and_float_ids_become_ints():
    graph = _input.check_graph(np.array([[0.0, 1.0], [1.0, 2.0]]), directed=True)
    assert graph.nodes.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(graph.csr.indptr, [0, 1, 2, 2])


def test_nan_and_fractional_ids_are_refused():
    with pytest.raises(ValueError, match="missing \\(None or NaN\\) id in row 1"):
        _input.check_graph(np.array([[0.0, 1.0], [np.nan, 2.0]]))
    with pytest.raises(ValueError, match="non-integer float ids"):
        _input.check_graph(np.array([[0.5, 1.0]]))


def test_node_query_of_ids_edges_and_frames():
    pd = pytest.importorskip("pandas")
    assert _input.check_node_query(np.array([[1], [2]])) == _input.NodeQuery([1, 2], None)
    frame = pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [2.0]})
    assert _input.check_node_query(frame) == _input.NodeQuery(["a"], ["b"])
    assert _input.check_node_query([["a", "b", 3.0]]) == _input.NodeQuery(["a"], ["b"])


def test_memory_estimate_passes_small_walks(monkeypatch):
    monkeypatch.setattr(_input, "available_memory", lambda: 10**9)
    _input.check_walk_memory(1000, 80)  # 1.9 MB
    with pytest.raises(MemoryError, match="about 1.8 GiB"):
        _input.check_walk_memory(10**6, 80)

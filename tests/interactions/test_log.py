"""Interaction logs: duplicates summed, baskets in time order, one clear error per bad log."""

from __future__ import annotations

import numpy as np
import pytest

from skembed.interactions._log import baskets, check_log, check_query, log_matrix


def test_duplicate_pairs_are_summed_and_ids_sorted():
    log = check_log([["b", "x", 1.0], ["a", "y", 2.0], ["b", "x", 0.5], ["a", "x", 1.0]])
    index = log_matrix(log)
    assert index.users.tolist() == ["a", "b"] and index.items.tolist() == ["x", "y"]
    np.testing.assert_array_equal(index.matrix.toarray(), [[1.0, 2.0], [1.5, 0.0]])


def test_baskets_follow_time_then_row_order():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"user": [1, 2, 1, 1, 2], "item": [10, 11, 12, 13, 10], "time": [5, 1, 3, 9, 0]}
    )
    log = check_log(frame)
    index = log_matrix(log)
    got = [index.items[basket].tolist() for basket in baskets(log, index)]
    assert got == [[12, 10, 13], [10, 11]]
    untimed = check_log(frame[["user", "item"]])
    got = [index.items[b].tolist() for b in baskets(untimed, log_matrix(untimed))]
    assert got == [[10, 12, 13], [11, 10]]


@pytest.mark.parametrize(
    "log, error, match",
    [
        ([[1, "a", np.nan], [2, "b", 1.0]], ValueError, "finite and > 0; row 0 has weight nan"),
        ([[1, "a", -1.0], [2, "b", 1.0]], ValueError, "finite and > 0"),
        ([[None, "a"], [2, "b"]], ValueError, "user column has a missing .* row 0"),
        ([[1, "a"], ["u", "b"]], TypeError, "user column mixes ids of types int and str"),
        (np.zeros((0, 2)), ValueError, "empty"),
        (np.array([[1, 2, 3, 4, 5]]), ValueError, "shape \\(n, 2\\), \\(n, 3\\) or \\(n, 4\\)"),
    ],
    ids=["nan-weight", "negative-weight", "missing-user", "mixed-ids", "empty", "five-columns"],
)
def test_bad_logs(log, error, match):
    with pytest.raises(error, match=match):
        check_log(log)


def test_missing_times_are_refused():
    pd = pytest.importorskip("pandas")
    times = pd.to_datetime(["2020-01-01", None])
    with pytest.raises(ValueError, match="time column has 1 missing values \\(first: row 1\\)"):
        check_log(pd.DataFrame({"user": [1, 2], "item": [3, 4], "time": times}))
    with pytest.raises(ValueError, match="time column has 1 missing"):
        check_log(np.array([[1, 3, 1.0, 5.0], [2, 4, 1.0, np.nan]]))


def test_one_item_is_refused():
    with pytest.raises(ValueError, match="1 distinct item; item vectors need at least two"):
        log_matrix(check_log([[1, "a"], [2, "a"]]))


def test_frame_without_user_column_names_the_columns():
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="missing \\['user'\\]"):
        check_log(pd.DataFrame({"customer": [1], "item": [2]}))


def test_query_of_ids_and_of_a_log():
    assert check_query(np.array([[3], [4]])).ids == [3, 4]
    query = check_query([["u", "a"], ["v", "b"]])
    assert query.ids is None and query.log.users == ["u", "v"]

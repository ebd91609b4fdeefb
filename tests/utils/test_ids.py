"""check_ids: the one check of node, user and item id columns."""

from __future__ import annotations

import numpy as np
import pytest

from skembed.utils._ids import check_ids


def test_ints_strs_and_integral_floats():
    assert check_ids(np.array([2, 1]), "X") == ([2, 1], {int})
    assert check_ids(np.array(["b", "a"], dtype=object), "X") == (["b", "a"], {str})
    assert check_ids(np.array([1.0, 5.0]), "X") == ([1, 5], {int})


@pytest.mark.parametrize(
    "values, error, match",
    [
        (np.array([1, "a"], dtype=object), TypeError, "The user column mixes ids"),
        (np.array([1.0, np.nan]), ValueError, "missing \\(None or NaN\\) id in row 1"),
        (np.array(["a", None], dtype=object), ValueError, "id in row 1"),
        (np.array([1.5]), ValueError, "non-integer float ids"),
        (np.array([b"a"], dtype=object), TypeError, "ids of type \\['bytes'\\]"),
    ],
)
def test_bad_ids(values, error, match):
    with pytest.raises(error, match=match):
        check_ids(values, "The user column")


def test_weights_default_to_one_and_must_be_positive():
    from skembed.utils._ids import check_weights

    assert check_weights(None, 3, what="row", fix="").tolist() == [1.0, 1.0, 1.0]
    assert check_weights([2, 0.5], 2, what="row", fix="").tolist() == [2.0, 0.5]
    with pytest.raises(ValueError, match="row 1 has weight 0.0 \\(2 such rows\\). Fill them."):
        check_weights([1.0, 0.0, -2.0], 3, what="row", fix="Fill them.")
    with pytest.raises(ValueError, match="Weights must be numbers"):
        check_weights(["x"], 1, what="row", fix="")


def test_missing_frame_columns_are_named():
    pd = pytest.importorskip("pandas")
    from skembed.utils._ids import check_columns

    frame = pd.DataFrame({"customer": [1], "item": [2]})
    check_columns(frame, ("item",), (), "A log")
    with pytest.raises(ValueError, match="needs columns 'user' and 'item' .* missing \\['user'\\]"):
        check_columns(frame, ("user", "item"), ("weight",), "A log")

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

"""Tests of ``skembed/model_selection/_data.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import pytest

from skembed.model_selection import (
    check_classification_data,
)

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize(
    "y, cv, message",
    [
        ([], 2, "no rows to compare"),
        (["a"] * 6, 2, "All 6 rows have the label 'a'"),
        (["a", "b"] * 5, 1, "cv=1: cross-validation needs at least 2 folds"),
        (
            ["a"] * 6 + ["b"] * 3,
            4,
            "Class 'b' has only 3 rows: cv=4 needs at least 4 rows in every class; use cv=3 or less",
        ),
        (["a"] * 6 + ["b"], 2, "Class 'b' has only 1 row: .*; add rows of that class"),
    ],
)
def test_unusable_labels_name_the_problem_and_the_fix(y, cv, message):
    with pytest.raises(ValueError, match=message):
        check_classification_data(y, cv)

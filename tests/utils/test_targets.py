"""The one check of ``y`` for label-trained estimators, and the class sizes cross-fitting needs."""

import numpy as np
import pytest

from skembed.utils._targets import check_target


def test_check_target_codes_classes_and_names_missing_labels():
    y, kind, classes = check_target(["b", "c", "b", "a"], 4, target_type="auto", estimator="E")
    assert (
        y.tolist() == [1, 2, 1, 0] and kind == "multiclass" and classes.tolist() == ["a", "b", "c"]
    )
    with pytest.raises(
        ValueError, match=r"y has 1 missing label\(s\) .* at position 2 .* fitting E"
    ):
        check_target(["a", "b", None, "a"], 4, target_type="auto", estimator="E")
    with pytest.raises(ValueError, match=r"y has shape \(3,\) but X has 4 rows"):
        check_target([0, 1, 0], 4, target_type="auto", estimator="E")
    with pytest.raises(ValueError, match="E requires y to be passed"):
        check_target(None, 4, target_type="auto", estimator="E")


def test_cross_fit_class_sizes_by_hand():
    from skembed.utils._targets import check_cross_fit_classes

    # 3 per class: each inner fit of cv=3 keeps 2, of cv=2 only 1 (3 - ceil(3 / 2))
    check_cross_fit_classes(np.array([0, 0, 0, 1, 1, 1]), 3, min_per_class=2, estimator="E")
    with pytest.raises(ValueError, match=r"class\(es\) \['a', 'b'\].*at least 4 documents per"):
        check_cross_fit_classes(
            np.array([0, 0, 0, 1, 1, 1]), 2, min_per_class=2, estimator="E", classes=["a", "b"]
        )

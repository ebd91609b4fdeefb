"""Tests of ``skembed/model_selection/_task.py`` (moved from ``tests/model_selection/test_compare_tables.py`` to the mirrored path)."""

import numpy as np
import pytest

from skembed import model_selection as ms

pd = pytest.importorskip("pandas")


def test_task_is_inferred_from_the_target():
    assert ms.infer_task(np.linspace(0, 1, 50)) == "regression"
    assert ms.infer_task(np.arange(21)) == "regression"  # more than 20 whole numbers
    assert ms.infer_task(np.arange(20)) == "classification"
    assert ms.infer_task([1.0, 2.0, 1.0]) == "classification"
    assert ms.infer_task(["1.5", "2.5"]) == "classification"  # strings are labels
    with pytest.raises(ValueError, match="All 3 rows have the target value 2.5"):
        ms.check_regression_data([2.5, 2.5, 2.5], cv=2)
    with pytest.raises(ValueError, match="non-numeric value 'x'.*task='classification'"):
        ms.check_regression_data([1.0, "x"], cv=2)
    with pytest.raises(ValueError, match="use task='regression'"):
        ms.check_classification_data(np.arange(100) / 7, cv=3)

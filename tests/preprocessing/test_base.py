"""Tests of ``skembed/preprocessing/_base.py`` (moved from ``tests/preprocessing/test_preprocessing.py`` to the mirrored path)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skembed.preprocessing import LabelEmbedder, OneHotEmbedder, ScalerEmbedder


def _expected_failed_checks(estimator):
    return {}


@parametrize_with_checks(
    [
        OneHotEmbedder(),
        OneHotEmbedder(sparse_output=True, handle_unknown="error"),
        LabelEmbedder(),
        ScalerEmbedder(),
        ScalerEmbedder(method="minmax"),
        ScalerEmbedder(method="robust"),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_bad_parameters_raise_clear_errors():
    with pytest.raises(ValueError, match="method"):
        ScalerEmbedder(method="zscore").fit([[1.0], [2.0]])
    with pytest.raises(ValueError, match="handle_unknown"):
        OneHotEmbedder(handle_unknown="zeros").fit([["a"]])
    with pytest.raises(ValueError, match="features"):
        ScalerEmbedder().fit([[1.0, 2.0], [2.0, 3.0]]).transform([[1.0]])

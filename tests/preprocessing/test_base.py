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


def test_a_one_hot_layout_from_a_file_is_rebuilt_and_its_drops_checked(tmp_path):
    # scikit-learn densifies a CSR matrix of the stored widths: widths cut to 0 made it
    # write past the array (a corrupted heap); they are derived, so rebuilt on load
    import numpy as np
    import pytest

    sio = pytest.importorskip("skops.io")
    from skembed.model_selection import load_pipeline
    from skembed.preprocessing import OneHotEmbedder

    X = [["red", "S"], ["blue", "M"], ["red", "M"], ["green", "L"]]
    genuine = OneHotEmbedder().fit(X)
    crafted = OneHotEmbedder().fit(X)
    crafted.encoder_._n_features_outs = [0, 0]
    sio.dump(crafted, tmp_path / "widths.skops")
    loaded = load_pipeline(tmp_path / "widths.skops")
    np.testing.assert_array_equal(loaded.transform(X), genuine.transform(X))
    dropped = OneHotEmbedder(drop="first").fit(X)
    dropped.encoder_.drop_idx_ = np.array([7, 0], dtype=object)
    sio.dump(dropped, tmp_path / "drop.skops")
    with pytest.raises(ValueError, match=r"encoder_ drop_idx_\[0\] is 7, not one of its 3"):
        load_pipeline(tmp_path / "drop.skops")


def _reloaded(est, attr, edit):
    """``est`` rebuilt from its state after ``edit(inner)`` changed its stored ``attr``."""
    import copy

    state = copy.deepcopy(est.__getstate__())
    edit(state[attr])
    back = type(est).__new__(type(est))
    back.__setstate__(state)
    return back


def test_a_stored_scaler_that_gives_infinite_output_is_refused_naming_it():
    import numpy as np

    X = np.array([[0.0, 1.0], [2.0, 3.0], [np.nan, 5.0]])
    est = ScalerEmbedder().fit(X)
    back = _reloaded(est, "scaler_", lambda s: s.mean_.__setitem__(0, np.inf))
    with pytest.raises(ValueError, match=r"stored scaler_ gives NaN or infinite output \(row 0"):
        back.transform(X)
    # a missing input value stays missing: NaN where the input is NaN is the scaler's output
    np.testing.assert_array_equal(np.isnan(est.transform(X)), np.isnan(X))


def test_a_stored_encoder_that_scikit_learn_cannot_read_is_refused_naming_it():
    import numpy as np

    X = np.array([["a", "x"], ["b", "y"]], dtype=object)
    for est in (OneHotEmbedder().fit(X), LabelEmbedder().fit(X)):
        back = _reloaded(est, "encoder_", lambda e: e.categories_.__setitem__(0, "x"))
        # scikit-learn's own AttributeError on the stored categories, re-raised naming encoder_
        with pytest.raises(ValueError, match=r"no attribute 'dtype' \[.*\.encoder_"):
            back.transform(X)

"""Tests of ``skembed/preprocessing/_scaler.py`` (moved from ``tests/preprocessing/test_preprocessing.py`` to the mirrored path)."""

import numpy as np
import pandas as pd
import pytest

from skembed.preprocessing import OneHotEmbedder, ScalerEmbedder

NUMS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


@pytest.fixture(scope="module")
def penguins():
    from palmerpenguins import load_penguins

    return load_penguins()


@pytest.mark.parametrize(
    "method, ref_name",
    [("standard", "StandardScaler"), ("minmax", "MinMaxScaler"), ("robust", "RobustScaler")],
)
def test_scaler_equals_sklearn(penguins, method, ref_name):
    import sklearn.preprocessing as skp

    X = penguins[NUMS]
    ours = ScalerEmbedder(method=method).fit(X)
    ref = getattr(skp, ref_name)().fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), equal_nan=True)
    assert type(ours.scaler_).__name__ == ref_name
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)), X, equal_nan=True)


def test_scaler_formulas_by_hand():
    X = np.array([[1.0], [2.0], [3.0], [10.0]])
    np.testing.assert_allclose(
        ScalerEmbedder().fit_transform(X).ravel(), (X.ravel() - 4.0) / np.sqrt(12.5)
    )
    np.testing.assert_allclose(
        ScalerEmbedder(method="minmax", feature_range=(-1, 1)).fit_transform(X).ravel(),
        [-1.0, -1 + 2 / 9, -1 + 4 / 9, 1.0],
    )
    # median 2.5, IQR = q75 - q25 = 4.75 - 1.75 = 3
    np.testing.assert_allclose(
        ScalerEmbedder(method="robust").fit_transform(X).ravel(), (X.ravel() - 2.5) / 3.0
    )
    # constant column -> 0, never NaN
    assert (ScalerEmbedder().fit_transform(np.ones((3, 1))) == 0).all()


def test_scaler_method_grid_searchable_and_pandas_output(penguins):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    data = penguins.dropna()
    pipe = make_pipeline(ScalerEmbedder(), LogisticRegression(max_iter=500))
    search = GridSearchCV(
        pipe, {"scalerembedder__method": ["standard", "minmax", "robust"]}, cv=3
    ).fit(data[NUMS], data["species"])
    assert len(search.cv_results_["params"]) == 3
    assert search.best_score_ > 0.95
    out = ScalerEmbedder().set_output(transform="pandas").fit_transform(data[NUMS])
    assert isinstance(out, pd.DataFrame) and list(out.columns) == NUMS
    out = OneHotEmbedder().set_output(transform="pandas").fit_transform(data[["island"]])
    assert list(out.columns) == ["island_Biscoe", "island_Dream", "island_Torgersen"]


@pytest.mark.parametrize("method", ["standard", "minmax", "robust"])
def test_finite_input_gives_finite_output_however_large(method):
    """A constant 1e200 column and one 1e308 in 60 rows became NaN (issue 40)."""
    import warnings

    rng = np.random.RandomState(0)
    constant = np.full((7, 1), 1e200)
    X = rng.rand(60, 2)
    X[5, 0] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        out = ScalerEmbedder(method=method).fit_transform(constant)
        est = ScalerEmbedder(method=method).fit(X)
        Z = est.transform(X)
    np.testing.assert_allclose(out, 0.0, atol=1e-15)  # a constant column maps to 0 (rounding)
    assert np.isfinite(Z).all() and est.input_exponent_.tolist() == [1024, 0]
    # the untouched column is scaled exactly as scikit-learn scales it
    np.testing.assert_allclose(
        Z[:, 1], est._make_inner().fit_transform(X[:, 1:]).ravel(), rtol=1e-12
    )
    # the huge column: the outlier is the largest value, the rest share one value up to 1e-300
    assert Z[5, 0] == Z[:, 0].max() and np.ptp(np.delete(Z[:, 0], 5)) < 1e-300
    # scaling by a power of two is undone exactly for the outlier
    assert est.inverse_transform(Z)[5, 0] == pytest.approx(1e308, rel=1e-12)

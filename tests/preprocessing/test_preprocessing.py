"""Tests of the preprocessing wrappers: scikit-learn's checks and equality with sklearn."""

import numpy as np
import pandas as pd
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


@pytest.fixture(scope="module")
def penguins():
    from palmerpenguins import load_penguins

    return load_penguins()


CATS = ["species", "island", "sex"]
NUMS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def test_onehot_equals_sklearn_on_penguins(penguins):
    from sklearn.preprocessing import OneHotEncoder

    X = penguins[CATS]
    ours = OneHotEmbedder(handle_unknown="error").fit(X)
    ref = OneHotEncoder(sparse_output=False, handle_unknown="error").fit(X)
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
    np.testing.assert_array_equal(ours.get_feature_names_out(), ref.get_feature_names_out())
    assert list(ours.feature_names_in_) == CATS and ours.n_features_in_ == 3
    # 3 species + 3 islands + 2 sexes + missing sex
    assert ours.transform(X).shape == (344, 9)
    np.testing.assert_array_equal(ours.transform(X).sum(axis=1), 3.0)
    back = ours.inverse_transform(ours.transform(X))
    assert (back[:, 0] == X["species"].to_numpy()).all()


def test_onehot_unknown_category_is_zero_block_with_warning():
    X = np.array([["a", "x"], ["b", "y"], ["a", "y"]], dtype=object)
    enc = OneHotEmbedder().fit(X)
    with pytest.warns(UserWarning, match="nknown categor"):
        out = enc.transform(np.array([["c", "x"]], dtype=object))
    np.testing.assert_array_equal(out, [[0.0, 0.0, 1.0, 0.0]])
    assert enc.inverse_transform(out)[0, 0] is None
    with pytest.raises(ValueError, match="unknown categor"):
        OneHotEmbedder(handle_unknown="error").fit(X).transform([["c", "x"]])


def test_onehot_min_frequency_max_categories_sparse():
    import scipy.sparse as sp

    X = np.array([["a"]] * 5 + [["b"]] * 3 + [["c"]] * 1 + [["d"]] * 1, dtype=object)
    enc = OneHotEmbedder(min_frequency=2).fit(X)
    np.testing.assert_array_equal(
        enc.get_feature_names_out(), ["x0_a", "x0_b", "x0_infrequent_sklearn"]
    )
    assert enc.transform([["d"]]).tolist() == [[0.0, 0.0, 1.0]]
    assert OneHotEmbedder(max_categories=2).fit(X).transform(X).shape == (10, 2)
    out = OneHotEmbedder(sparse_output=True).fit_transform(X)
    assert sp.issparse(out) and out.shape == (10, 4)


def test_label_codes_and_unknown_code(penguins):
    from sklearn.preprocessing import OrdinalEncoder

    X = penguins[CATS]
    ours = LabelEmbedder().fit(X)
    ref = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1).fit(X)
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
    # sorted categories: Adelie=0, Chinstrap=1, Gentoo=2; missing sex -> NaN
    codes = ours.transform(X)
    assert codes[0, 0] == 0.0 and set(np.unique(codes[:, 0])) == {0.0, 1.0, 2.0}
    assert np.isnan(codes[penguins["sex"].isna().to_numpy(), 2]).all()
    new = pd.DataFrame({"species": ["Emperor"], "island": ["Dream"], "sex": ["male"]})
    np.testing.assert_array_equal(ours.transform(new), [[-1.0, 1.0, 1.0]])
    assert ours.inverse_transform([[-1.0, 1.0, 1.0]])[0, 0] is None
    with pytest.raises(ValueError, match="unknown categor"):
        LabelEmbedder(handle_unknown="error").fit(X).transform(new)


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


def test_bad_parameters_raise_clear_errors():
    with pytest.raises(ValueError, match="method"):
        ScalerEmbedder(method="zscore").fit([[1.0], [2.0]])
    with pytest.raises(ValueError, match="handle_unknown"):
        OneHotEmbedder(handle_unknown="zeros").fit([["a"]])
    with pytest.raises(ValueError, match="features"):
        ScalerEmbedder().fit([[1.0, 2.0], [2.0, 3.0]]).transform([[1.0]])

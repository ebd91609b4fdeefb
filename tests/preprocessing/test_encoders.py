"""Tests of ``skembed/preprocessing/_encoders.py`` (moved from ``tests/preprocessing/test_preprocessing.py`` to the mirrored path)."""

import numpy as np
import pandas as pd
import pytest

from skembed.preprocessing import LabelEmbedder, OneHotEmbedder

CATS = ["species", "island", "sex"]


@pytest.fixture(scope="module")
def penguins():
    from palmerpenguins import load_penguins

    return load_penguins()


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

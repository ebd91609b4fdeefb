"""Tests of ``skembed/tabular/_preprocess.py`` (moved from ``tests/tabular/test_tabular.py`` to the mirrored path)."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skembed.tabular import AutoencoderEmbedder, TabularPreprocessor

NUMS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


@pytest.fixture(scope="module")
def penguins():
    from skembed.datasets import load_penguins

    return load_penguins()


@pytest.fixture(scope="module")
def penguins_split(penguins):
    from sklearn.model_selection import train_test_split

    return train_test_split(penguins, test_size=0.25, random_state=0, stratify=penguins["species"])


@pytest.fixture(scope="module")
def fitted_ae(penguins_split):
    train, _ = penguins_split
    return AutoencoderEmbedder(n_components=2, epochs=150, batch_size=32, random_state=0).fit(train)


def pd_none_column(n):
    return np.array([None] * n, dtype=object)


def test_auto_preprocessor_round_trip_is_exact(penguins):
    import pandas as pd

    from skembed.tabular._preprocess import TabularPreprocessor

    pre = TabularPreprocessor().fit(penguins)
    Xt = pre.transform(penguins)
    # 5 scaled numerics, 4 unscaled 0/1 missing indicators, 3 + 3 + 3 one-hot columns
    assert Xt.shape == (344, 18) and Xt.dtype == np.float32
    assert set(np.unique(Xt[:, 5:])) == {0.0, 1.0}
    np.testing.assert_allclose(Xt[:, :5].mean(axis=0), 0, atol=1e-5)
    back = pre.inverse_transform(Xt)
    pd.testing.assert_frame_equal(back, penguins, check_exact=False, rtol=1e-5, check_dtype=False)
    assert back["year"].dtype == penguins["year"].dtype


def test_missing_values_all_missing_constant_columns(penguins):
    df = penguins.copy()
    df["all_missing_num"] = np.nan
    df["all_missing_cat"] = pd_none_column(len(df))
    df["constant"] = 1.0
    ae = AutoencoderEmbedder(epochs=3, random_state=0).fit(df)
    assert np.isfinite(ae.transform(df)).all()
    back = ae.inverse_transform(ae.transform(df.iloc[:5]))
    assert back["all_missing_num"].isna().all()
    assert back["all_missing_cat"].isna().all()
    np.testing.assert_array_equal(back["constant"], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        AutoencoderEmbedder(epochs=2, preprocessor=None).fit(penguins[NUMS])
    from sklearn.preprocessing import StandardScaler

    with pytest.raises(ValueError, match=r"preprocessor=StandardScaler\(\) returned nan in row"):
        AutoencoderEmbedder(epochs=2, preprocessor=StandardScaler()).fit(penguins[NUMS])


def test_unseen_categories_warn_and_encode(fitted_ae, penguins):
    row = penguins.iloc[[0]].copy()
    row["island"] = "Atlantis"
    with pytest.warns(UserWarning, match="nknown categor"):
        codes = fitted_ae.transform(row)
    assert np.isfinite(codes).all()


def test_missing_in_transform_only_column_is_imputed(penguins):
    data = penguins.dropna()
    ae = AutoencoderEmbedder(epochs=2, random_state=0).fit(data)
    row = penguins.iloc[[3]]  # all four measurements and sex missing; no NaN seen in fit
    with pytest.warns(UserWarning, match="unknown categories"):
        assert np.isfinite(ae.transform(row)).all()


def test_custom_preprocessor_and_inverse(penguins):
    from sklearn.preprocessing import Normalizer, StandardScaler

    data = penguins[NUMS].dropna()
    ae = AutoencoderEmbedder(epochs=30, preprocessor=StandardScaler(), random_state=0)
    back = ae.fit(data).inverse_transform(ae.transform(data))
    assert back.shape == data.shape and abs(back[:, 3].mean() - data.iloc[:, 3].mean()) < 300
    no_inverse = Normalizer()
    ae = AutoencoderEmbedder(epochs=2, preprocessor=no_inverse).fit(data)
    with pytest.raises(ValueError, match="inverse_transform"):
        ae.inverse_transform(ae.transform(data))


def test_inverse_transform_gives_labels_back(fitted_ae, penguins_split):
    _, test = penguins_split
    back = fitted_ae.inverse_transform(fitted_ae.transform(test))
    assert list(back.columns) == list(test.columns)
    assert set(back["species"]) <= {"Adelie", "Chinstrap", "Gentoo"}
    assert back["body_mass_g"].dtype == np.float64
    # 2-D codes keep the species (held-out rows)
    assert (back["species"].to_numpy() == test["species"].to_numpy()).mean() > 0.9
    ok = test["flipper_length_mm"].notna().to_numpy()
    corr = np.corrcoef(
        back["flipper_length_mm"].to_numpy()[ok], test["flipper_length_mm"].to_numpy()[ok]
    )[0, 1]
    assert corr > 0.9


@parametrize_with_checks([TabularPreprocessor()])
def test_sklearn_compatible(estimator, check):
    # no expected failure: NaN is a missing value (allow_nan), strings are categories
    # (string, categorical tags), and the output dtype is the dtype parameter (preserves none)
    check(estimator)


def test_bad_tables_get_scikit_learns_messages():
    import scipy.sparse as sp

    X = np.array([[1.0, 2.0], [3.0, np.nan], [5.0, 6.0]])
    pre = TabularPreprocessor().fit(X)
    assert pre.n_features_in_ == 2
    with pytest.raises(
        ValueError, match="X has 3 features, but TabularPreprocessor is expecting 2"
    ):
        pre.transform(np.ones((2, 3)))
    with pytest.raises(ValueError, match="Reshape your data"):
        TabularPreprocessor().fit(X[:, 0])
    with pytest.raises(TypeError, match="[Ss]parse"):
        TabularPreprocessor().fit(sp.csr_matrix(np.nan_to_num(X)))
    with pytest.raises(ValueError, match="0 sample"):
        TabularPreprocessor().fit(X[:0])
    with pytest.raises(ValueError, match="infinity"):
        TabularPreprocessor().fit(np.where(np.isnan(X), np.inf, X))
    mixed = np.array([[1.0, "a"], [np.inf, "b"]], dtype=object)
    with pytest.raises(ValueError, match="holds infinity"):
        TabularPreprocessor().fit(mixed)


def test_a_stored_column_transformer_that_fails_is_refused_naming_it():
    import copy

    import pandas as pd

    X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "c": ["a", "b", "a", "b"]})
    est = TabularPreprocessor().fit(X)
    state = copy.deepcopy(est.__getstate__())
    name, step, columns = state["column_transformer_"].transformers_[0]
    state["column_transformer_"].transformers_[0] = (name, "not a transformer", columns)
    back = TabularPreprocessor.__new__(TabularPreprocessor)
    back.__setstate__(state)
    # scikit-learn's AttributeError on the stored step, re-raised as a ValueError naming it
    with pytest.raises(ValueError, match=r"TabularPreprocessor\.column_transformer_"):
        back.transform(X)

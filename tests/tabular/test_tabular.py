"""Tests of AutoencoderEmbedder and VAEEmbedder."""

import numpy as np
import pytest

from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

TINY = dict(n_components=2, hidden_layer_sizes=(4,), epochs=2, batch_size=64, random_state=0)


def _expected_failed_checks(estimator):
    return {}


# ----------------------------------------------------------------------------- real data fixtures
NUMS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
CATS = ["species", "island", "sex"]


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


@pytest.fixture(scope="module")
def fitted_vae(penguins_split):
    train, _ = penguins_split
    return VAEEmbedder(n_components=2, epochs=150, batch_size=32, random_state=0).fit(train)


# ----------------------------------------------------------------------------- behaviour
def test_import_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, skembed.tabular; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dataframe_input_attributes_and_output(fitted_ae, penguins):
    ae = fitted_ae
    assert list(ae.feature_names_in_) == list(penguins.columns) and ae.n_features_in_ == 8
    codes = ae.transform(penguins)
    assert codes.shape == (344, 2) and codes.dtype == np.float32 and np.isfinite(codes).all()
    np.testing.assert_array_equal(
        ae.get_feature_names_out(), ["autoencoderembedder0", "autoencoderembedder1"]
    )
    pre = ae.preprocessor_
    # 5 numerics (year included) + one missing indicator per numeric column with NaNs ...
    assert len(pre.numeric_index_) == 5 + sum(penguins[NUMS].isna().any())
    # ... + one-hot groups: 3 species, 3 islands, 3 sexes (female, male, missing)
    assert [stop - start for start, stop in pre.categorical_groups_] == [3, 3, 3]
    assert pre.numeric_columns_ == NUMS + ["year"]


def pd_none_column(n):
    return np.array([None] * n, dtype=object)


class Boom(Exception):
    pass


def _explode_at(epoch):
    def callback(est, record):
        if record["epoch"] == epoch:
            raise Boom

    return callback

"""Tests of ``skembed/tabular/autoencoder.py`` (moved from ``tests/tabular/test_tabular.py`` to the mirrored path)."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

TINY = dict(n_components=2, hidden_layer_sizes=(4,), epochs=2, batch_size=64, random_state=0)
NUMS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def _expected_failed_checks(estimator):
    return {}


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


@parametrize_with_checks(
    [AutoencoderEmbedder(**TINY), VAEEmbedder(**TINY)],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@parametrize_with_checks(
    [AutoencoderEmbedder(**TINY, preprocessor=None), VAEEmbedder(**TINY, preprocessor=None)],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_without_preprocessor(estimator, check):
    check(estimator)


def test_score_is_minus_mean_reconstruction_loss_by_hand():
    X = np.random.RandomState(0).normal(size=(60, 5))
    ae = AutoencoderEmbedder(
        n_components=2, hidden_layer_sizes=(8,), epochs=5, preprocessor=None, random_state=0
    ).fit(X)
    recon = ae.inverse_transform(ae.transform(X))
    expected = -np.mean(0.5 * ((recon - X) ** 2).sum(axis=1))
    assert ae.score(X) == pytest.approx(expected, rel=1e-5)
    assert ae.reconstruction_error(X) == pytest.approx(np.mean((recon - X) ** 2), rel=1e-5)


def test_grid_search_selects_on_score(penguins):
    from sklearn.model_selection import GridSearchCV

    data = penguins[NUMS].dropna()
    search = GridSearchCV(
        AutoencoderEmbedder(epochs=60, hidden_layer_sizes=(16,), random_state=0),
        {"n_components": [1, 3]},
        cv=2,
    ).fit(data)
    assert search.best_params_ == {"n_components": 3}
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_ae_beats_pca_reconstruction_and_codes_separate_species(fitted_ae, penguins_split):
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression

    train, test = penguins_split
    pre = fitted_ae.preprocessor_
    pca = PCA(2).fit(pre.transform(train))
    Xte = pre.transform(test)
    pca_err = float(np.mean((pca.inverse_transform(pca.transform(Xte)) - Xte) ** 2))
    ae_err = fitted_ae.reconstruction_error(test)
    assert ae_err < 0.7 * pca_err, (ae_err, pca_err)
    # downstream: the species is predictable from the 2-D codes of held-out rows
    clf = LogisticRegression(max_iter=1000).fit(fitted_ae.transform(train), train["species"])
    assert clf.score(fitted_ae.transform(test), test["species"]) > 0.9


def test_nan_loss_is_a_clear_error_pointing_to_learning_rate(penguins):
    from skembed.exceptions import TrainingDivergedError

    with pytest.raises(TrainingDivergedError, match=r"Lower learning_rate \(currently 1e\+30\)"):
        AutoencoderEmbedder(learning_rate=1e30, epochs=5, random_state=0).fit(penguins)
    est = AutoencoderEmbedder(learning_rate=1e30, epochs=5, random_state=0)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(penguins)
    assert not hasattr(est, "model_")


def test_single_row_and_batch_norm(penguins):
    one = penguins.dropna().iloc[[0]]
    ae = AutoencoderEmbedder(epochs=2, random_state=0).fit(one)
    assert ae.transform(one).shape == (1, 2)
    with pytest.raises(ValueError, match="batch_norm"):
        AutoencoderEmbedder(epochs=2, batch_norm=True).fit(one)
    with pytest.warns(UserWarning, match="early_stopping"):
        AutoencoderEmbedder(epochs=2, early_stopping=True).fit(one)
    # 2 rows with batch norm work; a trailing 1-row batch is skipped
    bn = AutoencoderEmbedder(epochs=2, batch_norm=True, batch_size=4, random_state=0)
    assert np.isfinite(bn.fit(penguins.iloc[:9]).transform(penguins.iloc[:9])).all()


def test_bad_parameters_and_codes():
    X = np.random.RandomState(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        AutoencoderEmbedder(hidden_layer_sizes=(0,)).fit(X)
    with pytest.raises(ValueError, match="beta"):
        VAEEmbedder(beta=0).fit(X)
    ae = AutoencoderEmbedder(epochs=1).fit(X)
    with pytest.raises(ValueError, match="shape"):
        ae.inverse_transform(np.zeros((2, 5)))

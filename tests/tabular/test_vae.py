"""Tests of ``skembed/tabular/vae.py`` (moved from ``tests/tabular/test_tabular.py`` to the mirrored path)."""

import numpy as np
import pytest

from skembed.tabular import VAEEmbedder

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
def fitted_vae(penguins_split):
    train, _ = penguins_split
    return VAEEmbedder(n_components=2, epochs=150, batch_size=32, random_state=0).fit(train)


def test_vae_sample_transform_modes_and_score(fitted_vae, penguins_split):
    train, test = penguins_split
    vae = fitted_vae
    rows = vae.sample(200, random_state=0)
    assert list(rows.columns) == list(train.columns) and len(rows) == 200
    assert set(rows["species"]) <= {"Adelie", "Chinstrap", "Gentoo"}
    assert rows["species"].nunique() == 3
    assert rows["body_mass_g"].between(2000, 7500).mean() > 0.95
    assert rows["body_mass_g"].mean() == pytest.approx(train["body_mass_g"].mean(), rel=0.1)
    again = vae.sample(200, random_state=0)
    assert rows.equals(again)
    mean = vae.transform(test)
    drawn = vae.set_params(transform_mode="sample").transform(test)
    vae.set_params(transform_mode="mean")
    assert not np.allclose(mean, drawn) and np.isfinite(drawn).all()
    # posterior spread: draws scatter around the means with about unit-or-less scale
    assert 0 < np.abs(drawn - mean).mean() < 2.0
    untrained = VAEEmbedder(n_components=2, epochs=1, random_state=0).fit(train)
    assert vae.score(test) > untrained.score(test)


def test_vae_sample_transform_is_seeded_and_stores_nothing(penguins):
    data = penguins[NUMS].dropna()
    vae = VAEEmbedder(n_components=2, epochs=3, transform_mode="sample", random_state=0).fit(data)
    before = dict(vars(vae))
    a, b = vae.transform(data), vae.transform(data)
    np.testing.assert_array_equal(a, b)
    assert vars(vae) == before
    import torch

    with torch.no_grad():
        x = torch.from_numpy(vae._preprocess(data))
        mu, log_var = (t.numpy() for t in vae.model_.encode_distribution(x))
    np.testing.assert_allclose(vae.set_params(transform_mode="mean").transform(data), mu, atol=1e-6)
    eps = (a - mu) / np.exp(0.5 * log_var)  # draws are mu + sigma * eps, eps ~ N(0, 1)
    assert abs(eps.mean()) < 0.15 and 0.85 < eps.std() < 1.15

"""Tests of AutoencoderEmbedder and VAEEmbedder."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

TINY = dict(n_components=2, hidden_layer_sizes=(4,), epochs=2, batch_size=64, random_state=0)


def _expected_failed_checks(estimator):
    return {}


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


@pytest.mark.parametrize("cls", [AutoencoderEmbedder, VAEEmbedder])
def test_reproducible_and_global_rng_untouched(cls, penguins):
    import torch

    state = torch.random.get_rng_state()
    a = cls(n_components=2, epochs=3, dropout=0.1, random_state=1).fit(penguins)
    assert torch.equal(state, torch.random.get_rng_state())
    b = cls(n_components=2, epochs=3, dropout=0.1, random_state=1).fit(penguins)
    c = cls(n_components=2, epochs=3, dropout=0.1, random_state=2).fit(penguins)
    np.testing.assert_array_equal(a.transform(penguins), b.transform(penguins))
    assert not np.allclose(a.transform(penguins), c.transform(penguins))
    assert [h["loss"] for h in a.history_] == [h["loss"] for h in b.history_]


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


def test_early_stopping_restores_best_and_callbacks_stop(penguins):
    data = penguins[NUMS].dropna().to_numpy()
    ae = AutoencoderEmbedder(
        n_components=1,
        hidden_layer_sizes=(32,),
        learning_rate=0.01,
        epochs=400,
        early_stopping=True,
        patience=5,
        validation_fraction=0.2,
        random_state=0,
    ).fit(data)
    valid = [h["valid_loss"] for h in ae.history_]
    assert ae.n_epochs_ < 400
    assert ae.best_epoch_ == int(np.argmin(valid)) + 1
    assert ae.n_epochs_ - ae.best_epoch_ == 5
    seen = []

    def stop_at_three(est, record):
        seen.append(record["epoch"])
        return record["epoch"] == 3

    ae = AutoencoderEmbedder(epochs=50, callbacks=[stop_at_three], random_state=0).fit(data)
    assert seen == [1, 2, 3] and ae.n_epochs_ == 3
    assert set(ae.history_[0]) == {"epoch", "loss", "valid_loss", "seconds"}
    assert ae.history_[0]["valid_loss"] is None and ae.history_[0]["seconds"] > 0


def test_warm_start_continues_training(penguins):
    data = penguins[NUMS].dropna()
    ae = AutoencoderEmbedder(epochs=5, warm_start=True, random_state=0).fit(data)
    model, first = ae.model_, ae.history_[-1]["loss"]
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    codes = ae.transform(data)
    ae.fit(data)
    assert ae.n_epochs_ == 10
    assert [h["epoch"] for h in ae.history_] == list(range(1, 11))
    assert ae.history_[-1]["loss"] < first
    # the continued network starts from the previous weights (a copy is trained)
    fresh = AutoencoderEmbedder(epochs=5, random_state=0).fit(data)
    np.testing.assert_array_equal(fresh.transform(data), codes)
    assert all((model.state_dict()[k] == v).all() for k, v in weights.items())


def test_nan_loss_is_a_clear_error_pointing_to_learning_rate(penguins):
    from skembed.exceptions import TrainingDivergedError

    with pytest.raises(TrainingDivergedError, match=r"Lower learning_rate \(currently 1e\+30\)"):
        AutoencoderEmbedder(learning_rate=1e30, epochs=5, random_state=0).fit(penguins)
    est = AutoencoderEmbedder(learning_rate=1e30, epochs=5, random_state=0)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(penguins)
    assert not hasattr(est, "model_")


def test_unseen_categories_warn_and_encode(fitted_ae, penguins):
    row = penguins.iloc[[0]].copy()
    row["island"] = "Atlantis"
    with pytest.warns(UserWarning, match="nknown categor"):
        codes = fitted_ae.transform(row)
    assert np.isfinite(codes).all()


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

    with pytest.raises(ValueError, match="NaN or infinity after preprocessing"):
        AutoencoderEmbedder(epochs=2, preprocessor=StandardScaler()).fit(penguins[NUMS])


def pd_none_column(n):
    return np.array([None] * n, dtype=object)


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


def test_pickle_weights_only_and_missing_device_fallback(fitted_ae, penguins, monkeypatch):
    import pickle

    import skembed.utils._compute

    # the weights are stored as plain numeric arrays: loading needs no torch unpickler at all
    state = fitted_ae.__getstate__()
    weights = state["_packed_model_"]["state_dict"]
    assert all(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in weights.values())
    assert set(weights) == set(fitted_ae.model_.state_dict())
    blob = pickle.dumps(fitted_ae)
    restored = pickle.loads(blob)
    np.testing.assert_array_equal(restored.transform(penguins), fitted_ae.transform(penguins))
    # simulate: trained on CUDA, unpickled where CUDA is absent
    fitted_ae.device_ = "cuda:0"
    try:
        blob = pickle.dumps(fitted_ae)
    finally:
        fitted_ae.device_ = "cpu"
    monkeypatch.setattr(skembed.utils._compute, "available_devices", lambda: ["cpu"])
    with pytest.warns(UserWarning, match="not available here"):
        moved = pickle.loads(blob)
    assert moved.device_ == "cpu"
    assert next(moved.model_.parameters()).device.type == "cpu"
    np.testing.assert_array_equal(moved.transform(penguins), fitted_ae.transform(penguins))


def test_verbose_progress_bar_and_epoch_lines(penguins, capsys):
    AutoencoderEmbedder(epochs=2, verbose=True, random_state=0).fit(penguins)
    err = capsys.readouterr().err
    assert "AutoencoderEmbedder" in err and "epoch 1:" not in err
    AutoencoderEmbedder(epochs=2, verbose=2, random_state=0).fit(penguins)
    out = capsys.readouterr()
    lines = [ln for ln in (out.out + out.err).splitlines() if ln.startswith("epoch ")]
    assert [ln.split(":")[0] for ln in lines] == ["epoch 1", "epoch 2"]
    assert "loss=" in lines[0] and lines[0].endswith(" s")
    AutoencoderEmbedder(epochs=2, verbose=0, random_state=0).fit(penguins)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


class Boom(Exception):
    pass


def _explode_at(epoch):
    def callback(est, record):
        if record["epoch"] == epoch:
            raise Boom

    return callback


@pytest.mark.parametrize("cls", [AutoencoderEmbedder, VAEEmbedder])
def test_failed_fit_leaves_estimator_unfitted_or_as_before(cls, penguins):
    from sklearn.exceptions import NotFittedError

    data = penguins[NUMS].dropna()
    est = cls(n_components=2, epochs=4, callbacks=[_explode_at(2)], random_state=0)
    with pytest.raises(Boom):
        est.fit(data)
    with pytest.raises(NotFittedError):
        est.transform(data)
    assert not [k for k in vars(est) if k.endswith("_")]
    # warm start: a failed second fit leaves the first one exactly as it was
    est.set_params(callbacks=None, warm_start=True).fit(data)
    codes = est.transform(data)
    params = est.get_params(deep=False)
    before = {k: v for k, v in vars(est).items() if k not in params}
    history = [dict(r) for r in est.history_]
    weights = {k: v.clone() for k, v in est.model_.state_dict().items()}
    est.set_params(callbacks=[_explode_at(6)])  # epochs 5, 6 of the continued run
    with pytest.raises(Boom):
        est.fit(data)
    assert vars(est).keys() - params.keys() == before.keys()
    for key, value in before.items():
        assert vars(est)[key] is value, key
    assert est.history_ == history and est.n_epochs_ == 4
    assert all((est.model_.state_dict()[k] == v).all() for k, v in weights.items())
    np.testing.assert_array_equal(est.transform(data), codes)
    # and divergence during a warm start too
    est.set_params(callbacks=None, learning_rate=1e30)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(data)
    np.testing.assert_array_equal(est.transform(data), codes)


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


def test_bad_parameters_and_codes():
    X = np.random.RandomState(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        AutoencoderEmbedder(hidden_layer_sizes=(0,)).fit(X)
    with pytest.raises(ValueError, match="beta"):
        VAEEmbedder(beta=0).fit(X)
    ae = AutoencoderEmbedder(epochs=1).fit(X)
    with pytest.raises(ValueError, match="shape"):
        ae.inverse_transform(np.zeros((2, 5)))


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


def test_missing_in_transform_only_column_is_imputed(penguins):
    data = penguins.dropna()
    ae = AutoencoderEmbedder(epochs=2, random_state=0).fit(data)
    row = penguins.iloc[[3]]  # all four measurements and sex missing; no NaN seen in fit
    with pytest.warns(UserWarning, match="unknown categories"):
        assert np.isfinite(ae.transform(row)).all()


@pytest.mark.parametrize("n_jobs", [None, 1, 2])
def test_n_jobs_none_means_the_library_wide_default(n_jobs, monkeypatch):
    import torch

    from skembed.utils._compute import resolve_n_jobs

    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # what joblib sets in GridSearchCV workers
    seen = []
    X = np.random.RandomState(0).normal(size=(50, 3))
    AutoencoderEmbedder(
        epochs=1, n_jobs=n_jobs, callbacks=[lambda est, rec: seen.append(torch.get_num_threads())]
    ).fit(X)
    assert seen == [resolve_n_jobs(n_jobs)] and resolve_n_jobs(None) == min(2, resolve_n_jobs(-1))

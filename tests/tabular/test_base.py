"""Tests of ``skembed/tabular/_base.py`` (moved from ``tests/tabular/test_tabular.py`` to the mirrored path)."""

import numpy as np
import pytest

from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

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


@pytest.mark.parametrize("cls", [AutoencoderEmbedder, VAEEmbedder])
def test_a_huge_value_is_named_with_its_column(cls):
    """1e308 read "contains NaN or infinity ... (preprocessor='auto' does not impute). Use
    preprocessor='auto'" (issue 40): name the value and the column, or train."""
    import pandas as pd

    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"size": rng.rand(60), "price": rng.rand(60)})
    frame.loc[5, "price"] = 1e308
    with pytest.raises(ValueError) as info:
        cls(n_components=2, epochs=1, preprocessor=None, random_state=0).fit(frame)
    message = str(info.value)
    assert "column 'price' holds 1e+308 in row 5, beyond the float32 range" in message
    assert "NaN" not in message and "impute" not in message
    # preprocessor='auto' standardises the column (finitely): it trains
    Z = cls(n_components=2, epochs=1, random_state=0).fit_transform(frame)
    assert Z.shape == (60, 2) and np.isfinite(Z).all()

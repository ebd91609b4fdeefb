"""Stored transformer weights: a pickle that carries them as plain data, and their digest."""

from __future__ import annotations

import pickle
import pickletools
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from _helpers import BERT_DOCS as DOCS  # noqa: E402
from _helpers import build_tiny, save_tiny  # noqa: E402

from skembed.text.transformer import _loading as _hf  # noqa: E402
from skembed.text.transformer._bert import BertPooledEmbedder  # noqa: E402
from skembed.text.transformer._weights import weights_digest  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    return build_tiny()


@pytest.fixture(scope="module")
def tiny_dir(tiny, tmp_path_factory):
    """The tiny model saved as a local model directory."""
    return save_tiny(tiny, tmp_path_factory.mktemp("tiny_bert"))


def test_weights_digest_changes_with_any_weight_and_only_then():
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    assert weights_digest(a) == weights_digest(b) and len(weights_digest(a)) == 32
    with torch.no_grad():
        b.bias[1] += 1e-3
    assert weights_digest(a) != weights_digest(b)


def test_pickle_with_weights_is_self_contained(tiny, tiny_dir, tmp_path):
    path = tmp_path / "model"
    shutil.copytree(tiny_dir, path)
    est = BertPooledEmbedder(
        model=str(path), device="cpu", truncation="truncate", store_weights=True, n_jobs=1
    ).fit(DOCS)
    ref = est.transform(DOCS)
    blob = pickle.dumps(est)
    assert len(blob) > 3_900_000
    # numpy arrays and bytes only: unpickling runs no torch code
    globals_ = {arg for op, arg, _ in pickletools.genops(blob) if op.name == "SHORT_BINUNICODE"}
    assert "torch_dtype" in globals_  # (a parameter name, not a module)
    # (the string "torch" itself is the backend parameter's value; torch objects need torch.*)
    assert not any(str(g).startswith("torch.") for g in globals_)
    shutil.rmtree(path)
    _hf.clear_model_cache()
    again = pickle.loads(blob)
    np.testing.assert_allclose(again.transform(DOCS), ref, atol=1e-6, rtol=0)
    twice = pickle.loads(pickle.dumps(again))  # still self-contained
    np.testing.assert_allclose(twice.transform(DOCS), ref, atol=1e-6, rtol=0)


def _stored_state(tiny_dir, tmp_path):
    path = tmp_path / "model"
    shutil.copytree(tiny_dir, path)
    est = BertPooledEmbedder(
        model=str(path), device="cpu", truncation="truncate", store_weights=True, n_jobs=1
    ).fit(DOCS)
    return est, est.__getstate__()


def test_stored_weights_that_overflow_or_a_config_that_fails_are_refused_on_load(
    tiny_dir, tmp_path
):
    from skembed.text.transformer._weights import StoredWeightsError

    est, state = _stored_state(tiny_dir, tmp_path)
    # finite weights of 1e38 pass every shape and finiteness check, then overflow to inf in
    # the forward pass: the load runs the model once and refuses them
    big = {**state, "_stored_weights": dict(state["_stored_weights"])}
    big["_stored_weights"]["weights"] = {
        k: np.full_like(v, 1e38) if v.dtype.kind == "f" else v
        for k, v in state["_stored_weights"]["weights"].items()
    }
    with pytest.raises(StoredWeightsError, match=r"_stored_weights"):
        BertPooledEmbedder.__new__(BertPooledEmbedder).__setstate__(big)
    bad = {**state, "_stored_weights": dict(state["_stored_weights"])}
    bad["_stored_weights"]["config"] = {
        **state["_stored_weights"]["config"],
        "layer_norm_eps": -1.0,
    }
    with pytest.raises(StoredWeightsError, match=r"_stored_weights"):
        BertPooledEmbedder.__new__(BertPooledEmbedder).__setstate__(bad)


def test_non_finite_vectors_from_the_model_are_refused_not_returned(tiny, monkeypatch):
    est = BertPooledEmbedder(model=tiny, device="cpu", truncation="truncate", n_jobs=1).fit(DOCS)
    monkeypatch.setattr(est, "_embed", lambda ids: np.full((len(ids), 32), np.inf, np.float32))
    with pytest.raises(ValueError, match=r"NaN or infinite vectors for 2 distinct document"):
        est.transform(DOCS[:2])

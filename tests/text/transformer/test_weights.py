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

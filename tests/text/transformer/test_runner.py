"""Sessions of exported encoders: one per process, never pickled, safe from several threads."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _helpers import BERT_DOCS, build_tiny, save_tiny  # noqa: E402
from sklearn.base import clone  # noqa: E402

from skembed.text.transformer import _runner as _runner  # noqa: E402
from skembed.text.transformer._bert import BertPooledEmbedder  # noqa: E402

DOCS = [*BERT_DOCS, ""]  # test_bert's documents and an empty one


@pytest.fixture(scope="session")
def export_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("exports")


@pytest.fixture(autouse=True)
def _cache_dir(export_cache, monkeypatch):
    """Every test exports into one session-wide temporary cache (not ~/.cache)."""
    monkeypatch.setenv("SKEMBED_CACHE_DIR", str(export_cache))


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    """test_bert's tiny random BertModel (2 layers, width 32) saved as a model directory."""
    return save_tiny(build_tiny(), tmp_path_factory.mktemp("tiny_bert_backends"))


def make(model, **params):
    params.setdefault("device", "cpu")
    params.setdefault("truncation", "truncate")
    params.setdefault("n_jobs", 1)
    params.setdefault("handle_unknown", "model")
    return BertPooledEmbedder(model=str(model), **params)


def test_clone_reuses_the_session_and_pickle_reloads_it(tiny_dir):
    pytest.importorskip("onnxruntime")
    est = make(tiny_dir, backend="onnx").fit(DOCS)
    ref = est.transform(DOCS)
    twin = clone(est).fit(DOCS)
    assert twin._runner is est._runner  # one session per process
    blob = pickle.dumps(est)
    assert b"InferenceSession" not in blob and len(blob) < 200_000
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(est._runner)
    _runner.clear_runner_cache()
    again = pickle.loads(blob)
    assert again._runner is not None and again._runner is not est._runner
    np.testing.assert_allclose(again.transform(DOCS), ref, atol=1e-6, rtol=0)


def test_sessions_run_from_several_threads(tiny_dir):
    pytest.importorskip("openvino")
    est = make(tiny_dir, backend="openvino").fit(DOCS)
    ref = est.transform(DOCS)
    results = [None] * 3

    def work(i):
        results[i] = est.transform(DOCS)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, ref)

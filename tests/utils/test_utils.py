import os
import subprocess
import sys

import numpy as np
import pytest

from skembed.utils._compute import available_devices, limit_threads, resolve_device, resolve_n_jobs
from skembed.utils._seeding import seed_from_random_state
from skembed.utils._validation import check_documents


def test_resolve_device_cpu_and_auto():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("CPU") == "cpu"
    auto = resolve_device("auto")
    assert auto in available_devices()
    if not any(d.startswith("cuda") for d in available_devices()):
        assert auto in ("cpu", "mps")


def test_resolve_device_accepts_torch_device():
    torch = pytest.importorskip("torch")
    assert resolve_device(torch.device("cpu")) == "cpu"


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "tpu"])
def test_resolve_device_unknown(bad):
    with pytest.raises(ValueError, match="not"):
        resolve_device(bad)


def test_resolve_device_unavailable_names_available():
    if any(d.startswith("cuda") for d in available_devices()):
        pytest.skip("needs a machine without CUDA")
    with pytest.raises(ValueError, match=r"available devices: \['cpu'"):
        resolve_device("cuda:0")


def test_resolve_n_jobs(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    n_cpu = len(os.sched_getaffinity(0))
    assert resolve_n_jobs(None) == n_cpu
    assert resolve_n_jobs(-1) == n_cpu
    assert resolve_n_jobs(1) == 1
    assert resolve_n_jobs(-n_cpu - 5) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert resolve_n_jobs(None) == 1
    with pytest.raises(ValueError, match="n_jobs=0"):
        resolve_n_jobs(0)


def test_limit_threads_restores_torch_threads():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with limit_threads(1) as n:
        assert n == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_seed_from_random_state_is_deterministic():
    assert seed_from_random_state(0) == seed_from_random_state(0)
    assert seed_from_random_state(0) != seed_from_random_state(1)
    assert 0 <= seed_from_random_state(np.random.RandomState(3)) < 2**31


def test_check_documents_kinds():
    pd = pytest.importorskip("pandas")
    assert check_documents(["a b", ("x", "y")]) == ["a b", ("x", "y")]
    assert check_documents(np.array(["a", "b"], dtype=object)) == ["a", "b"]
    assert check_documents(pd.Series(["a", None]), handle_missing="empty") == ["a", ""]
    assert check_documents(pd.DataFrame({"t": ["a", "b"]})) == ["a", "b"]
    with pytest.raises(TypeError, match="2 columns"):
        check_documents(pd.DataFrame({"t": ["a"], "u": ["b"]}))
    with pytest.raises(TypeError, match="string object received"):
        check_documents("a document")
    with pytest.raises(TypeError, match="one-shot"):
        check_documents(iter(["a"]))
    with pytest.raises(TypeError, match="iterable of documents"):
        check_documents(3)


def test_importing_skembed_and_classical_estimators_do_not_import_torch():
    code = (
        "import sys, skembed\n"
        "from skembed import TfidfLSA, PPMIEmbedder\n"
        "docs = ['the cat sat on the mat', 'the dog sat on the log', 'cats and dogs']\n"
        "TfidfLSA(2, random_state=0).fit_transform(docs)\n"
        "PPMIEmbedder(2, window=2, random_state=0).fit_transform(docs)\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_limit_threads_imports_requested_modules_first():
    # a lazily imported torch must still be limited inside the block
    code = (
        "import sys\n"
        "from skembed.utils._compute import limit_threads\n"
        "assert 'torch' not in sys.modules\n"
        "with limit_threads(1, modules=('torch',)):\n"
        "    import torch\n"
        "    assert torch.get_num_threads() == 1, torch.get_num_threads()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ["Word2VecTransformer", "TfidfLSA", "AutoencoderEmbedder"])
def test_device_parameter_is_checked_before_fit_works(name):
    from sklearn.utils._param_validation import InvalidParameterError

    import skembed

    est = getattr(skembed, name)(device=3)
    with pytest.raises(InvalidParameterError, match=r"'device' parameter .* must be a device name"):
        est.fit(["a b c", "b c d"] if name != "AutoencoderEmbedder" else np.ones((4, 2)))


# ----------------------------------------------------------------------------- discovery
def test_all_estimators_finds_every_public_estimator_once():
    from sklearn.base import BaseEstimator

    import skembed
    from skembed.utils.discovery import all_estimators

    found = all_estimators()
    names = [name for name, _ in found]
    assert names == sorted(names) and len(set(names)) == len(names)
    public = {
        name
        for name in skembed.__all__
        if isinstance(getattr(skembed, name), type)
        and issubclass(getattr(skembed, name), BaseEstimator)
    }
    assert set(names) == public
    for name, cls in found:
        assert cls is getattr(skembed, name)
        assert not name.startswith(("_", "Base"))


def test_all_estimators_type_filter():
    from sklearn.base import TransformerMixin

    from skembed.utils.discovery import all_estimators

    transformers = all_estimators(type_filter="transformer")
    assert transformers and all(issubclass(cls, TransformerMixin) for _, cls in transformers)
    assert all_estimators(type_filter=["classifier", "regressor", "cluster"]) == []
    assert all_estimators(type_filter=["transformer"]) == transformers
    with pytest.raises(ValueError, match="type_filter must be None or one or more of"):
        all_estimators(type_filter="embedder")


def test_all_estimators_does_not_import_torch():
    code = (
        "import sys\n"
        "from skembed.utils.discovery import all_estimators\n"
        "assert len(all_estimators()) >= 15\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

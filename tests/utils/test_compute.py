"""Tests of ``skembed/utils/_compute.py`` (moved from ``tests/utils/test_utils.py`` to the mirrored path)."""

import os
import subprocess
import sys

import pytest

from skembed.utils._compute import available_devices, limit_threads, resolve_device, resolve_n_jobs


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

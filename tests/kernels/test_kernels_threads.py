"""numba's thread pool starts with a short libgomp spin count (skembed.kernels.launch_threads)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from skembed.kernels import SPIN_COUNT

_SCRIPT = """
import os
import numba
import skembed.kernels.scheduler  # starts the pool
print("LAYER", numba.threading_layer())
print("ENV", os.environ.get("OMP_WAIT_POLICY"))
"""


def _run(extra_env):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(extra_env, OMP_DISPLAY_ENV="VERBOSE")
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    layer = next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("LAYER"))
    if layer != "omp":
        pytest.skip(f"numba's threading layer is {layer!r}, not OpenMP: no wait policy to set")
    # every libgomp loaded in the process prints its settings (VERBOSE: with the spin count,
    # 300000 when nothing is set)
    spins = {
        line.split("=")[1].strip().strip("'")
        for line in text.splitlines()
        if line.strip().startswith("GOMP_SPINCOUNT =")
    }
    env_after = next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("ENV"))
    return spins, env_after


def test_pool_spins_briefly_when_idle_and_the_environment_is_restored():
    spins, env_after = _run({})
    assert str(SPIN_COUNT) in spins  # numba's libgomp
    assert env_after == "None"  # nobody else (torch's libgomp, children) sees the variable


@pytest.mark.parametrize(
    "user, spin", [({"OMP_WAIT_POLICY": "ACTIVE"}, None), ({"GOMP_SPINCOUNT": "1000"}, "1000")]
)
def test_a_users_choice_is_left_alone(user, spin):
    spins, env_after = _run(user)
    assert str(SPIN_COUNT) not in spins
    if spin is not None:
        assert spin in spins
    assert env_after == user.get("OMP_WAIT_POLICY", "None")

"""Tests of ``skembed/utils/_seeding.py`` (moved from ``tests/utils/test_utils.py`` to the mirrored path)."""

import numpy as np

from skembed.utils._seeding import seed_from_random_state


def test_seed_from_random_state_is_deterministic():
    assert seed_from_random_state(0) == seed_from_random_state(0)
    assert seed_from_random_state(0) != seed_from_random_state(1)
    assert 0 <= seed_from_random_state(np.random.RandomState(3)) < 2**31

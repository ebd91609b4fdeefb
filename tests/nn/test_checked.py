"""build_checked: stored weights are compared with the configuration before any allocation."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skembed.nn.checked import build_checked, check_config_bounds  # noqa: E402


def _linear(config):
    return lambda: torch.nn.Linear(config["n_in"], config["n_out"])


def test_matching_weights_give_the_module_in_eval_mode_with_those_weights():
    weights = {"weight": np.arange(6, dtype=np.float32).reshape(3, 2), "bias": np.zeros(3)}
    config = {"n_in": 2, "n_out": 3}
    module = build_checked(_linear(config), weights, "Thing", config)
    assert not module.training
    np.testing.assert_array_equal(module.weight.detach().numpy(), weights["weight"])
    assert module.bias.dtype == torch.float32  # float64 bias cast to the module's dtype


def test_a_config_larger_than_the_stored_weights_is_refused_before_building():
    weights = {"weight": np.zeros((3, 2), np.float32), "bias": np.zeros(3, np.float32)}
    with pytest.raises(ValueError, match=r"Thing: .*declares n_out=10,000,000, more than the 9"):
        check_config_bounds({"n_in": 2, "n_out": 10_000_000}, weights, "Thing")
    with pytest.raises(ValueError, match=r"declares layers of 3 entries, more than the 2 stored"):
        check_config_bounds({"layers": [1, 1, 1]}, weights, "Thing")


def test_shape_and_name_mismatches_name_the_weight():
    config = {"n_in": 2, "n_out": 3}
    bad = {"weight": np.zeros((3, 1), np.float32), "bias": np.zeros(3, np.float32)}
    with pytest.raises(ValueError, match=r"'weight' has shape \(3, 1\) .* declares \(3, 2\)"):
        build_checked(_linear(config), bad, "Thing", config)
    with pytest.raises(ValueError, match=r"missing \['bias'\], unexpected \['b'\]"):
        build_checked(_linear(config), {"weight": bad["weight"], "b": bad["bias"]}, "Thing")
    with pytest.raises(ValueError, match="not a numeric array"):
        build_checked(_linear(config), {"weight": "x", "bias": bad["bias"]}, "Thing")

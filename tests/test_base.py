"""TorchStateMixin: a fitted module pickles as plain arrays and comes back with its weights."""

from __future__ import annotations

import pickle
import pickletools

import numpy as np
import pytest
from sklearn.base import BaseEstimator

torch = pytest.importorskip("torch")

from skembed.base import TorchStateMixin  # noqa: E402


class Net(torch.nn.Linear):
    kind = "net"

    def __init__(self, n_in, n_out):
        super().__init__(n_in, n_out)
        self.config = {"n_in": n_in, "n_out": n_out}


class Holder(TorchStateMixin, BaseEstimator):
    _transient_attributes = ("_cache",)

    def _module_classes(self):
        return {"net": Net}


def test_pickle_round_trip_stores_numpy_weights_and_drops_transients():
    est = Holder()
    est.model_, est._cache, est.n_ = Net(3, 2), object(), 7
    blob = pickle.dumps(est)
    names = {arg for op, arg, _ in pickletools.genops(blob) if op.name == "SHORT_BINUNICODE"}
    assert not any(str(n).startswith("torch") for n in names)  # no torch object in the file
    back = pickle.loads(blob)
    assert back.n_ == 7 and not hasattr(back, "_cache") and not back.model_.training
    for name, value in est.model_.state_dict().items():
        np.testing.assert_array_equal(back.model_.state_dict()[name].numpy(), value.numpy())


def test_snapshot_and_restore_bring_back_the_best_weights():
    est = Holder()
    est.model_ = Net(2, 1)
    snapshot = est._snapshot_weights()
    before = est.model_.weight.detach().clone()
    with torch.no_grad():
        est.model_.weight.add_(1.0)
    est._restore_weights(snapshot)
    assert torch.equal(est.model_.weight, before)


def test_an_unknown_stored_kind_is_refused():
    state = {"_packed_model_": {"kind": "other", "config": {}, "state_dict": {}}}
    with pytest.raises(ValueError, match=r"Holder: the stored model \(_packed_model_\) is damaged"):
        Holder().__setstate__(state)

"""Tests of ``skembed/utils/_training.py`` (moved from ``tests/test_callbacks.py`` to the mirrored path)."""

import pytest

from skembed.callbacks import Callback
from skembed.exceptions import TrainingDivergedError
from skembed.utils._training import run_epochs


class _Est:
    """A stand-in estimator whose 'weights' are one float, set by each epoch."""

    learning_rate = 0.5

    def __init__(self):
        self.history_ = []
        self.weight = None

    def _snapshot_weights(self):
        return self.weight

    def _restore_weights(self, snapshot):
        self.weight = snapshot


def _steps(est, losses):
    it = iter(losses)

    def step(epoch):
        est.weight = f"weights of epoch {epoch}"
        return {"loss": next(it)}

    return step


class _Log(Callback):
    def __init__(self):
        self.calls = []

    def on_train_begin(self, estimator):
        self.calls.append("begin")

    def on_epoch_end(self, estimator, record):
        self.calls.append(record["epoch"])

    def on_train_end(self, estimator):
        self.calls.append("end")


def test_records_continue_numbering_and_hooks_run_in_order():
    est = _Est()
    est.history_ = [{"epoch": 1, "loss": 9.0, "seconds": 0.0}]  # a previous (warm-start) fit
    log = _Log()
    seen = []
    records = run_epochs(
        est,
        _steps(est, [4.0, 3.0]),
        n_epochs=2,
        callbacks=[log],
        before_callbacks=lambda r: seen.append((r["epoch"], len(est.history_))),
    )
    assert [r["epoch"] for r in records] == [2, 3]
    assert [r["loss"] for r in est.history_] == [9.0, 4.0, 3.0]
    assert all(r["seconds"] >= 0.0 for r in records)
    assert log.calls == ["begin", 2, 3, "end"]
    # the record is in history_ before the hook and the callbacks run
    assert seen == [(2, 2), (3, 3)]


def test_callback_returning_true_stops_after_that_epoch():
    est = _Est()
    records = run_epochs(
        est, _steps(est, [5.0, 4.0, 3.0]), n_epochs=3, callbacks=[lambda e, r: r["epoch"] == 2]
    )
    assert [r["epoch"] for r in records] == [1, 2]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_loss_names_the_parameter(bad):
    est = _Est()
    with pytest.raises(TrainingDivergedError, match=r"epoch 2\. Lower alpha \(currently 0\.5\)"):
        est.alpha = 0.5
        run_epochs(est, _steps(est, [1.0, bad]), n_epochs=3, diverged_parameter="alpha")
    assert len(est.history_) == 1

"""The one training loop (run_epochs) and the callback protocol."""

import numpy as np
import pytest

from skembed.callbacks import Callback, EarlyStopping
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


def test_early_stopping_resets_at_each_fit():
    stop = EarlyStopping(patience=2)
    first, second = _Est(), _Est()
    run_epochs(first, _steps(first, [1.0, 2.0, 2.0, 2.0]), n_epochs=4, early_stopping=stop)
    assert len(first.history_) == 3 and stop.best_epoch_ == 1
    # a second fit with the same instance: without the reset, the first fit's best (1.0)
    # and bad-epoch count would stop it after one epoch
    run_epochs(second, _steps(second, [5.0, 4.0, 3.0, 3.5]), n_epochs=4, early_stopping=stop)
    assert [r["loss"] for r in second.history_] == [5.0, 4.0, 3.0, 3.5]
    assert stop.best_epoch_ == 3 and stop.best_score_ == 3.0


def test_restore_best_weights_puts_back_the_best_epoch():
    est = _Est()
    stop = EarlyStopping(patience=2, restore_best_weights=True)
    run_epochs(est, _steps(est, [3.0, 1.0, 2.0, 2.5, 0.5]), n_epochs=5, early_stopping=stop)
    assert [r["epoch"] for r in est.history_] == [1, 2, 3, 4]
    assert est.weight == "weights of epoch 2"
    assert stop._best_weights is None  # no copy kept alive after training


def test_without_restore_the_last_weights_stay():
    est = _Est()
    run_epochs(
        est, _steps(est, [3.0, 1.0, 2.0, 2.5]), n_epochs=4, early_stopping=EarlyStopping(patience=2)
    )
    assert est.weight == "weights of epoch 4"


def test_restore_best_weights_needs_an_estimator_that_copies_weights():
    class NoCopy:
        history_ = []

    with pytest.raises(TypeError, match="restore_best_weights=False"):
        run_epochs(
            NoCopy(),
            lambda e: {"loss": 1.0},
            n_epochs=1,
            early_stopping=EarlyStopping(restore_best_weights=True),
        )


def test_monitor_missing_from_records_is_an_error():
    est = _Est()
    with pytest.raises(ValueError, match=r"monitors 'valid_loss'.*\['epoch', 'loss', 'seconds'\]"):
        run_epochs(
            est, _steps(est, [1.0]), n_epochs=1, callbacks=[EarlyStopping(monitor="valid_loss")]
        )


def test_valid_loss_none_is_not_counted():
    stop = EarlyStopping(monitor="valid_loss", patience=1)
    records = [{"epoch": e, "loss": 1.0, "seconds": 0.0, "valid_loss": None} for e in (1, 2, 3)]
    assert [stop(None, r) for r in records] == [False, False, False]
    assert stop.best_epoch_ is None and np.isinf(stop.best_score_)


def test_relative_tolerance():
    # 1.0 -> 0.99995 is a relative improvement of 5e-5 < tol=1e-4: not an improvement
    stop = EarlyStopping(patience=1, tol=1e-4)
    r = [{"epoch": 1, "loss": 1.0}, {"epoch": 2, "loss": 0.99995}]
    assert [stop(None, x) for x in r] == [False, True]
    stop = EarlyStopping(patience=1, tol=1e-4)
    r = [{"epoch": 1, "loss": 1.0}, {"epoch": 2, "loss": 0.9998}]
    assert [stop(None, x) for x in r] == [False, False]

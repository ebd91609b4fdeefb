"""The one training loop (run_epochs) and the callback protocol."""

import numpy as np
import pytest
from _helpers import StandInEstimator, epoch_steps

from skembed.callbacks import EarlyStopping
from skembed.utils._training import run_epochs


def test_early_stopping_resets_at_each_fit():
    stop = EarlyStopping(patience=2)
    first, second = StandInEstimator(), StandInEstimator()
    run_epochs(first, epoch_steps(first, [1.0, 2.0, 2.0, 2.0]), n_epochs=4, early_stopping=stop)
    assert len(first.history_) == 3 and stop.best_epoch_ == 1
    # a second fit with the same instance: without the reset, the first fit's best (1.0)
    # and bad-epoch count would stop it after one epoch
    run_epochs(second, epoch_steps(second, [5.0, 4.0, 3.0, 3.5]), n_epochs=4, early_stopping=stop)
    assert [r["loss"] for r in second.history_] == [5.0, 4.0, 3.0, 3.5]
    assert stop.best_epoch_ == 3 and stop.best_score_ == 3.0


def test_restore_best_weights_puts_back_the_best_epoch():
    est = StandInEstimator()
    stop = EarlyStopping(patience=2, restore_best_weights=True)
    run_epochs(est, epoch_steps(est, [3.0, 1.0, 2.0, 2.5, 0.5]), n_epochs=5, early_stopping=stop)
    assert [r["epoch"] for r in est.history_] == [1, 2, 3, 4]
    assert est.weight == "weights of epoch 2"
    assert stop._best_weights is None  # no copy kept alive after training


def test_without_restore_the_last_weights_stay():
    est = StandInEstimator()
    run_epochs(
        est,
        epoch_steps(est, [3.0, 1.0, 2.0, 2.5]),
        n_epochs=4,
        early_stopping=EarlyStopping(patience=2),
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
    est = StandInEstimator()
    with pytest.raises(ValueError, match=r"monitors 'valid_loss'.*\['epoch', 'loss', 'seconds'\]"):
        run_epochs(
            est,
            epoch_steps(est, [1.0]),
            n_epochs=1,
            callbacks=[EarlyStopping(monitor="valid_loss")],
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

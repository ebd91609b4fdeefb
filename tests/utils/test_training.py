"""Tests of ``skembed/utils/_training.py`` (moved from ``tests/test_callbacks.py`` to the mirrored path)."""

import pytest
from _helpers import LogCallback, StandInEstimator, epoch_steps

from skembed.exceptions import TrainingDivergedError
from skembed.utils._training import run_epochs


def test_records_continue_numbering_and_hooks_run_in_order():
    est = StandInEstimator()
    est.history_ = [{"epoch": 1, "loss": 9.0, "seconds": 0.0}]  # a previous (warm-start) fit
    log = LogCallback()
    seen = []
    records = run_epochs(
        est,
        epoch_steps(est, [4.0, 3.0]),
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
    est = StandInEstimator()
    records = run_epochs(
        est, epoch_steps(est, [5.0, 4.0, 3.0]), n_epochs=3, callbacks=[lambda e, r: r["epoch"] == 2]
    )
    assert [r["epoch"] for r in records] == [1, 2]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_loss_names_the_parameter(bad):
    est = StandInEstimator()
    with pytest.raises(TrainingDivergedError, match=r"epoch 2\. Lower alpha \(currently 0\.5\)"):
        est.alpha = 0.5
        run_epochs(est, epoch_steps(est, [1.0, bad]), n_epochs=3, diverged_parameter="alpha")
    assert len(est.history_) == 1

"""restore_on_failure: a failed block gives the estimator back its attributes of before."""

import pytest

from skembed.utils._state import restore_on_failure


class Est:
    pass


def test_a_failed_block_restores_and_a_successful_one_keeps():
    est = Est()
    est.coef_, est.n_ = [1.0], 1
    with pytest.raises(KeyboardInterrupt):
        with restore_on_failure(est):
            est.coef_ = [2.0]
            est.extra_ = True
            del est.n_
            raise KeyboardInterrupt
    assert vars(est) == {"coef_": [1.0], "n_": 1}
    with restore_on_failure(est):
        est.coef_ = [3.0]
    assert est.coef_ == [3.0]

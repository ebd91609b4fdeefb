"""skembed's exceptions: the divergence error names the estimator, the epoch and the fix."""

import pytest

from skembed.exceptions import EmbeddingCacheWarning, TrainingDivergedError, diverged


def test_diverged_names_the_estimator_class_and_appends_the_hint():
    class GloVeLike:
        pass

    err = diverged(
        GloVeLike(), epoch=2, loss=float("inf"), parameter="alpha", value=0.5, hint="Or x."
    )
    assert str(err) == (
        "GloVeLike training diverged: the loss is inf at epoch 2. Lower alpha (currently 0.5), "
        "e.g. by a factor of 10. Or x."
    )
    # caught as a bad value (GridSearchCV's error_score) and as a floating-point failure
    for kind in (ValueError, FloatingPointError, TrainingDivergedError):
        with pytest.raises(kind):
            raise err


def test_cache_warning_is_a_user_warning():
    assert issubclass(EmbeddingCacheWarning, UserWarning)

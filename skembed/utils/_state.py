"""Estimator state across a fit that fails."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def restore_on_failure(estimator):
    """Give the estimator back its attributes of before the block if the block raises.

    ``fit`` runs in this block, so a fit that fails (an exception in
    training, a raising callback, ``KeyboardInterrupt``) leaves a fresh
    estimator unfitted and a fitted one exactly as it was. The snapshot is
    shallow: training must build new objects (or copies) rather than change
    the estimator's fitted objects in place.

    Parameters
    ----------
    estimator : object

    Examples
    --------
    >>> class Est:
    ...     pass
    >>> est = Est()
    >>> try:
    ...     with restore_on_failure(est):
    ...         est.coef_ = 1.0
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> hasattr(est, "coef_")
    False
    """
    saved = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(saved)
        raise

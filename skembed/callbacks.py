"""One callback protocol and one history record for every trained estimator.

Modelled on skorch (``skorch/callbacks/base.py``, ``net.history``): after each
epoch a trained estimator appends a record to its ``history_`` list and calls
each of its ``callbacks`` with ``(estimator, record)``. A callback is either a
callable or an object with an ``on_epoch_end(estimator, record)`` method;
returning ``True`` stops training after that epoch (early stopping is just a
callback). ``estimator.history_`` and the estimator's learned attributes are
up to date when a callback runs.

A record is a ``dict`` with at least

``epoch`` : int
    1-based number of the epoch just finished (continues across
    ``warm_start`` fits).
``loss`` : float
    Mean training loss of the epoch (the estimator's docstring says which loss).
``seconds`` : float
    Wall-clock duration of the epoch, in seconds.

and, where the estimator has them, ``valid_loss`` (float or None),
``learning_rate`` (float, at the end of the epoch), ``words`` (int, raw tokens
processed) and ``words_per_second`` (float).
"""

from __future__ import annotations

import time

__all__ = ["Callback", "EarlyStopping", "make_record", "run_callbacks"]


class Callback:
    """Base class of object callbacks (any callable works as well).

    Subclass it and override :meth:`on_epoch_end`.

    Examples
    --------
    >>> from skembed.callbacks import Callback, run_callbacks
    >>> class StopAt(Callback):
    ...     def __init__(self, epoch):
    ...         self.epoch = epoch
    ...     def on_epoch_end(self, estimator, record):
    ...         return record["epoch"] >= self.epoch
    >>> run_callbacks([StopAt(2)], None, {"epoch": 2, "loss": 0.1, "seconds": 0.5})
    True
    """

    def on_epoch_end(self, estimator, record):  # pragma: no cover - interface
        """Called after every epoch; return ``True`` to stop training.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.
        record : dict
            The epoch's history record (see the module docstring).

        Returns
        -------
        stop : bool or None
        """
        return None

    def __call__(self, estimator, record):
        return self.on_epoch_end(estimator, record)


class EarlyStopping(Callback):
    """Stop when the monitored loss has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : {"loss", "valid_loss"}, default="loss"
        Record key to watch (lower is better).
    patience : int, default=3
        Epochs without an improvement of at least ``tol`` (relative) before stopping.
    tol : float, default=1e-4
        Relative improvement that counts.

    Examples
    --------
    >>> from skembed.callbacks import EarlyStopping
    >>> stop = EarlyStopping(patience=1)
    >>> [stop(None, {"epoch": e, "loss": l, "seconds": 0.0}) for e, l in enumerate([3., 2., 2.], 1)]
    [False, False, True]
    """

    def __init__(self, monitor="loss", patience=3, tol=1e-4):
        self.monitor = monitor
        self.patience = patience
        self.tol = tol
        self._best = float("inf")
        self._bad = 0

    def on_epoch_end(self, estimator, record):
        value = record.get(self.monitor)
        if value is None:
            return False
        if value < self._best - self.tol * abs(self._best if self._best != float("inf") else 0):
            self._best, self._bad = value, 0
        else:
            self._bad += 1
        return self._bad >= self.patience


def make_record(epoch, loss, started, **extra):
    """Build one history record.

    Parameters
    ----------
    epoch : int
        1-based epoch number.
    loss : float
        Mean training loss of the epoch.
    started : float
        ``time.perf_counter()`` at the start of the epoch.
    **extra
        Further keys (``valid_loss``, ``learning_rate``, ``words``, ...).

    Returns
    -------
    record : dict
        ``{"epoch", "loss", "seconds", **extra}``.

    Examples
    --------
    >>> import time
    >>> r = make_record(1, 0.5, time.perf_counter(), words=10)
    >>> sorted(r)
    ['epoch', 'loss', 'seconds', 'words']
    """
    record = {"epoch": int(epoch), "loss": float(loss), "seconds": time.perf_counter() - started}
    record.update(extra)
    return record


def run_callbacks(callbacks, estimator, record):
    """Call every callback with ``(estimator, record)``; return whether any asked to stop.

    Parameters
    ----------
    callbacks : list of callable or Callback, or None
    estimator : estimator
    record : dict

    Returns
    -------
    stop : bool
        ``True`` if at least one callback returned a true value. Every
        callback is called, even after one asked to stop.

    Raises
    ------
    TypeError
        If a callback is neither callable nor has ``on_epoch_end``.
    """
    stop = False
    for cb in callbacks or ():
        fn = getattr(cb, "on_epoch_end", None) or cb
        if not callable(fn):
            raise TypeError(
                f"callbacks must be callables or objects with on_epoch_end(estimator, record); "
                f"got {cb!r}."
            )
        stop = bool(fn(estimator, record)) or stop
    return stop

"""One callback protocol and one history record for every trained estimator.

Modelled on skorch (``skorch/callbacks/base.py``, ``net.history``): after each
epoch a trained estimator appends a record to its ``history_`` list and calls
each of its ``callbacks`` with ``(estimator, record)``. A callback is either a
callable or an object with an ``on_epoch_end(estimator, record)`` method;
returning ``True`` stops training after that epoch (early stopping is just a
callback). Objects may also define ``on_train_begin(estimator)`` and
``on_train_end(estimator)``, called once per ``fit`` around the epochs.
``estimator.history_`` and the estimator's learned attributes are up to date
when a callback runs. Every trained estimator runs its epochs through one
loop, :func:`skembed.utils._training.run_epochs`.

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

# make_record, run_callbacks and call_hook serve the training loop (skembed.utils._training)
__all__ = ["Callback", "EarlyStopping"]


class Callback:
    """Base class of object callbacks (any callable works as well).

    Subclass it and override :meth:`on_epoch_end` (and, if needed,
    :meth:`on_train_begin` / :meth:`on_train_end`).

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

    def on_train_begin(self, estimator):
        """Called once at the start of training, before the first epoch.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.
        """

    def on_train_end(self, estimator):
        """Called once after the last epoch of a training that ended normally.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.
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
            ``True`` stops training after this epoch; ``False`` or ``None`` goes on.
        """
        return None

    def __call__(self, estimator, record):
        """Call :meth:`on_epoch_end`: a callback is called as ``cb(estimator, record)``.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.
        record : dict
            The epoch's history record.

        Returns
        -------
        stop : bool or None
            What :meth:`on_epoch_end` returns.
        """
        return self.on_epoch_end(estimator, record)


class EarlyStopping(Callback):
    """Stop when the monitored loss has not improved for ``patience`` epochs.

    Its counters reset at the start of every ``fit`` (``on_train_begin``), so
    one instance serves a grid search or repeated fits.

    Parameters
    ----------
    monitor : {"loss", "valid_loss"}, default="loss"
        Record key to watch (lower is better). An epoch whose record has the
        key set to ``None`` (no validation data) is not counted.
    patience : int, default=3
        Epochs without an improvement of at least ``tol`` (relative) before stopping.
    tol : float, default=1e-4
        Relative improvement that counts.
    restore_best_weights : bool, default=False
        At the end of training, put back the weights of the best epoch
        (Keras' and skorch's name). Needs an estimator that can copy its
        weights (``_snapshot_weights``/``_restore_weights``): the torch-trained
        tabular estimators, ``EntityEmbedder``, ``StaticEmbedder(supervised=True)``
        and ``SetFitEmbedder``.

    Attributes
    ----------
    best_epoch_ : int or None
        Epoch number of the best monitored value seen in the current fit.
    best_score_ : float
        That value (``inf`` before any epoch).

    Raises
    ------
    ValueError
        At the first epoch, if the records have no ``monitor`` key (the
        message lists the keys they have).
    TypeError
        At the start of training, if ``restore_best_weights=True`` and the
        estimator cannot copy its weights.

    Examples
    --------
    >>> from skembed.callbacks import EarlyStopping
    >>> stop = EarlyStopping(patience=1)
    >>> [stop(None, {"epoch": e, "loss": l, "seconds": 0.0}) for e, l in enumerate([3., 2., 2.], 1)]
    [False, False, True]
    >>> stop.best_epoch_
    2
    >>> stop.on_train_begin(None)
    >>> stop.best_epoch_ is None
    True
    """

    def __init__(self, monitor="loss", patience=3, tol=1e-4, restore_best_weights=False):
        self.monitor = monitor
        self.patience = patience
        self.tol = tol
        self.restore_best_weights = restore_best_weights
        self._reset()

    def _reset(self):
        self.best_score_ = float("inf")
        self.best_epoch_ = None
        self._bad = 0
        self._best_weights = None

    def on_train_begin(self, estimator):
        """Forget the previous fit's best score, so each fit stops on its own history.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.

        Raises
        ------
        TypeError
            If ``restore_best_weights=True`` and the estimator cannot copy its weights.
        """
        self._reset()
        if self.restore_best_weights and not (
            hasattr(estimator, "_snapshot_weights") and hasattr(estimator, "_restore_weights")
        ):
            raise TypeError(
                f"EarlyStopping(restore_best_weights=True) cannot restore the weights of "
                f"{type(estimator).__name__}, which cannot copy them; use "
                "restore_best_weights=False with this estimator."
            )

    def on_epoch_end(self, estimator, record):
        """Update the best score and count the epochs without improvement.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.
        record : dict
            The epoch's history record; ``record[monitor]`` is compared with the best so far.

        Returns
        -------
        stop : bool
            ``True`` once ``patience`` epochs in a row did not improve on the best by ``tol``.

        Raises
        ------
        ValueError
            If the records have no ``monitor`` key (the message lists the keys they have).
        """
        if self.monitor not in record:
            raise ValueError(
                f"EarlyStopping monitors {self.monitor!r}, but the history records have only "
                f"{sorted(record)}; pick one of those as monitor."
            )
        value = record[self.monitor]
        if value is None:
            return False
        best = self.best_score_
        if value < best - self.tol * abs(best if best != float("inf") else 0):
            self.best_score_, self.best_epoch_, self._bad = value, record["epoch"], 0
            if self.restore_best_weights:
                self._best_weights = estimator._snapshot_weights()
        else:
            self._bad += 1
        return self._bad >= self.patience

    def on_train_end(self, estimator):
        """Put the best epoch's weights back, if ``restore_best_weights=True``.

        Parameters
        ----------
        estimator : estimator
            The estimator being fitted.
        """
        if self.restore_best_weights and self._best_weights is not None:
            estimator._restore_weights(self._best_weights)
        self._best_weights = None  # do not keep a copy of the weights alive


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


def call_hook(callbacks, hook, estimator):
    """Call ``hook`` (``"on_train_begin"`` or ``"on_train_end"``) on every callback that has it.

    Plain callables have no such hooks and are skipped.

    Parameters
    ----------
    callbacks : list of callable or Callback, or None
    hook : {"on_train_begin", "on_train_end"}
    estimator : estimator
    """
    for cb in callbacks or ():
        fn = getattr(cb, hook, None)
        if fn is not None:
            fn(estimator)


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

"""The one training loop of every trained estimator (skorch's ``fit_loop``).

An estimator supplies the epoch step (one pass over its data, returning the
epoch's losses); the loop does everything around it, in this order, after
each epoch: divergence check → history record → ``history_`` → progress →
callbacks (early stopping is one of them) → stop → best weights.

:class:`EpochLoop` is the loop; it is iterated by the caller, so the epoch
step runs in the caller's own frame (a trainer reads from its ``for`` to its
hot loop without leaving its file). :func:`run_epochs` is the loop for an
epoch step given as a function.
"""

from __future__ import annotations

import math
import time

from ..callbacks import call_hook, make_record, run_callbacks
from ..exceptions import diverged
from ._progress import progress, report_epoch

__all__ = ["EpochLoop", "run_epochs"]

#: what an epoch's output is until the caller hands it over
_NOT_ENDED = object()


def run_epochs(
    estimator,
    epoch_step,
    *,
    n_epochs,
    callbacks=None,
    early_stopping=None,
    verbose=0,
    desc=None,
    diverged_parameter="learning_rate",
    diverged_hint="",
    before_callbacks=None,
):
    """Run ``n_epochs`` epochs of ``epoch_step`` with history, progress and callbacks.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted. Its ``history_`` (a list) must be set
        by the caller before the call (an empty list, or the previous fits'
        records for ``warm_start``); epoch numbers continue from its length.
    epoch_step : callable
        ``epoch_step(epoch) -> dict``: trains one epoch (``epoch`` is the
        1-based number the record gets) and returns ``{"loss": float, ...}``
        with any further record keys (``valid_loss``, ``learning_rate``,
        ``words``, ``words_per_second``). It may raise
        :class:`~skembed.exceptions.TrainingDivergedError` itself (for a
        finer-grained check, such as per chunk).
    n_epochs : int
        Epochs to run in this call (fewer if a callback stops training).
    callbacks : list of callable or Callback, or None, default=None
        The estimator's ``callbacks`` parameter (:mod:`skembed.callbacks`).
    early_stopping : EarlyStopping or None, default=None
        The estimator's own early stopping, built from its parameters; it
        runs after the user's callbacks and, with
        ``restore_best_weights=True``, puts the best epoch's weights back at
        the end of training.
    verbose : int, default=0
        0: silent; 1: a progress bar over the epochs; 2: also one line per
        epoch (:func:`skembed.utils._progress.report_epoch`).
    desc : str or None, default=None
        Progress bar label (default: the estimator's class name).
    diverged_parameter : str, default="learning_rate"
        Parameter named in the divergence error (``"alpha"`` for the
        word2vec family); its current value is read from the estimator.
    diverged_hint : str, default=""
        Extra advice appended to the divergence error.
    before_callbacks : callable or None, default=None
        ``before_callbacks(record)``, called after the record is appended to
        ``history_`` and before the callbacks run: publish the current
        weights (``wv_``) or switch a module to eval mode there, so that
        callbacks see an up-to-date estimator.

    Returns
    -------
    records : list of dict
        The history records of the epochs run in this call (also appended
        to ``estimator.history_``), each ``{"epoch", "loss", "seconds",
        ...}`` with ``seconds`` the epoch's wall-clock time in seconds.

    Raises
    ------
    TrainingDivergedError
        If an epoch's loss is NaN or infinite; the message names
        ``diverged_parameter`` and its value.
    TypeError
        If a callback is neither callable nor has ``on_epoch_end``.

    Notes
    -----
    Callbacks' ``on_train_begin(estimator)`` runs before the first epoch
    and ``on_train_end(estimator)`` after the last one, when training ends
    normally (including a stop asked by a callback); after an exception the
    estimator is restored by :func:`skembed.utils._state.restore_on_failure`
    and ``on_train_end`` is not called.

    Examples
    --------
    >>> from skembed.callbacks import EarlyStopping
    >>> class Est:
    ...     history_ = []
    ...     learning_rate = 0.1
    >>> est = Est()
    >>> losses = iter([3.0, 2.0, 2.5, 2.4, 2.6])
    >>> records = run_epochs(est, lambda epoch: {"loss": next(losses)}, n_epochs=5,
    ...                      early_stopping=EarlyStopping(patience=2))
    >>> [r["epoch"] for r in records], [r["loss"] for r in est.history_]
    ([1, 2, 3, 4], [3.0, 2.0, 2.5, 2.4])
    """
    loop = EpochLoop(
        estimator,
        n_epochs=n_epochs,
        callbacks=callbacks,
        early_stopping=early_stopping,
        verbose=verbose,
        desc=desc,
        diverged_parameter=diverged_parameter,
        diverged_hint=diverged_hint,
        before_callbacks=before_callbacks,
    )
    for epoch in loop:
        loop.end_epoch(epoch_step(epoch))
    return loop.records


class EpochLoop:
    """The training loop as an iterator: ``for epoch in loop: loop.end_epoch(step(epoch))``.

    Iterating yields the 1-based number of each epoch to train; after
    training it, the caller hands the epoch's output to :meth:`end_epoch`,
    and the next step of the iteration does everything around the epoch
    (see the module docstring). The parameters and their meaning are
    :func:`run_epochs`'s (which is this loop around a function).

    Parameters
    ----------
    estimator : estimator
        Its ``history_`` (a list) must be set before iterating.
    n_epochs : int
    callbacks : list of callable or Callback, or None, default=None
    early_stopping : EarlyStopping or None, default=None
    verbose : int, default=0
    desc : str or None, default=None
    diverged_parameter : str, default="learning_rate"
    diverged_hint : str, default=""
    before_callbacks : callable or None, default=None

    Attributes
    ----------
    records : list of dict
        The history records of the epochs run so far by this loop.

    Raises
    ------
    TrainingDivergedError
        While iterating, if an epoch's loss is NaN or infinite.
    RuntimeError
        While iterating, if an epoch ended without :meth:`end_epoch`.

    Examples
    --------
    >>> class Est:
    ...     history_ = []
    >>> est = Est()
    >>> loop = EpochLoop(est, n_epochs=2)
    >>> for epoch in loop:
    ...     loop.end_epoch({"loss": 1.0 / epoch})
    >>> [(r["epoch"], r["loss"]) for r in est.history_]
    [(1, 1.0), (2, 0.5)]
    """

    def __init__(
        self,
        estimator,
        *,
        n_epochs,
        callbacks=None,
        early_stopping=None,
        verbose=0,
        desc=None,
        diverged_parameter="learning_rate",
        diverged_hint="",
        before_callbacks=None,
    ):
        self.estimator = estimator
        self.n_epochs = n_epochs
        self.hooks = list(callbacks or ())
        if early_stopping is not None:
            self.hooks.append(early_stopping)
        self.verbose = verbose
        self.desc = desc or type(estimator).__name__
        self.diverged_parameter = diverged_parameter
        self.diverged_hint = diverged_hint
        self.before_callbacks = before_callbacks
        self.records = []
        self._out = _NOT_ENDED

    def end_epoch(self, out):
        """Hand over the epoch's output: ``{"loss": float, ...}`` (see :func:`run_epochs`)."""
        self._out = out

    def __iter__(self):
        estimator, hooks = self.estimator, self.hooks
        history = estimator.history_
        first = len(history)
        call_hook(hooks, "on_train_begin", estimator)
        bar = progress(total=self.n_epochs, verbose=self.verbose, desc=self.desc, unit="epoch")
        try:
            for epoch in range(first + 1, first + self.n_epochs + 1):
                started = time.perf_counter()
                self._out = _NOT_ENDED
                yield epoch
                if self._record(history, epoch, started, bar):
                    break
        finally:
            bar.close()
        call_hook(hooks, "on_train_end", estimator)

    def _record(self, history, epoch, started, bar):
        """Everything after an epoch, in the module docstring's order; True to stop."""
        if self._out is _NOT_ENDED:
            raise RuntimeError(f"epoch {epoch} ended without EpochLoop.end_epoch")
        estimator, out = self.estimator, dict(self._out)
        loss = float(out.pop("loss"))
        if not math.isfinite(loss):
            raise diverged(
                estimator,
                epoch=epoch,
                loss=loss,
                parameter=self.diverged_parameter,
                value=getattr(estimator, self.diverged_parameter, None),
                hint=self.diverged_hint,
            )
        record = make_record(epoch, loss, started, **out)
        history.append(record)
        self.records.append(record)
        report_epoch(bar, record, self.verbose)
        if self.before_callbacks is not None:
            self.before_callbacks(record)
        return bool(self.hooks) and bool(run_callbacks(self.hooks, estimator, record))

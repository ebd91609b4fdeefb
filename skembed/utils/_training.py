"""The one training loop of every trained estimator (skorch's ``fit_loop``).

An estimator supplies the epoch step (one pass over its data, returning the
epoch's losses); :func:`run_epochs` does everything around it, in this order,
after each epoch: divergence check → history record → ``history_`` →
progress → callbacks (early stopping is one of them) → stop → best weights.
"""

from __future__ import annotations

import math
import time

from ..callbacks import call_hook, make_record, run_callbacks
from ..exceptions import diverged
from ._progress import progress, report_epoch

__all__ = ["run_epochs"]


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
    history = estimator.history_
    first = len(history)
    hooks = list(callbacks or ())
    if early_stopping is not None:
        hooks.append(early_stopping)
    call_hook(hooks, "on_train_begin", estimator)
    records = []
    bar = progress(
        total=n_epochs, verbose=verbose, desc=desc or type(estimator).__name__, unit="epoch"
    )
    try:
        for epoch in range(first + 1, first + n_epochs + 1):
            started = time.perf_counter()
            out = dict(epoch_step(epoch))
            loss = float(out.pop("loss"))
            if not math.isfinite(loss):
                raise diverged(
                    estimator,
                    epoch=epoch,
                    loss=loss,
                    parameter=diverged_parameter,
                    value=getattr(estimator, diverged_parameter, None),
                    hint=diverged_hint,
                )
            record = make_record(epoch, loss, started, **out)
            history.append(record)
            records.append(record)
            report_epoch(bar, record, verbose)
            if before_callbacks is not None:
                before_callbacks(record)
            if hooks and run_callbacks(hooks, estimator, record):
                break
    finally:
        bar.close()
    call_hook(hooks, "on_train_end", estimator)
    return records

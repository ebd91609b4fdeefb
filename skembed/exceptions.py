"""The exceptions skembed raises beyond Python's and scikit-learn's own.

One module, so that every trained estimator raises the same class for the
same fault and users can catch it in one place.
"""

from __future__ import annotations

__all__ = ["ComparisonInterrupted", "EmbeddingCacheWarning", "TrainingDivergedError"]


class ComparisonInterrupted(KeyboardInterrupt):
    """A comparison was interrupted (Ctrl-C) after some of its rows had finished.

    A subclass of ``KeyboardInterrupt``, so a script that does not catch it
    stops as on any Ctrl-C; one that does finds the finished rows in
    ``results``.

    Parameters
    ----------
    results : pandas.DataFrame
        What :func:`skembed.model_selection.compare_embedders` returns, for
        the rows that finished; ``results.attrs["interrupted"]`` says how many.

    Examples
    --------
    >>> from skembed.exceptions import ComparisonInterrupted
    >>> issubclass(ComparisonInterrupted, KeyboardInterrupt)
    True
    """

    def __init__(self, results):
        super().__init__(results.attrs.get("interrupted", "interrupted"))
        self.results = results


class EmbeddingCacheWarning(UserWarning):
    """An embedding cache entry was damaged or could not be written.

    The embeddings are still returned (recomputed where an entry was
    damaged); the message names the file or directory.
    """


class TrainingDivergedError(ValueError, FloatingPointError):
    """The training loss (or the trained parameters) became NaN or infinite.

    A subclass of ``ValueError`` (a bad parameter value is the usual cause, so
    scikit-learn's ``GridSearchCV(error_score=...)`` treats it like any other
    failed fit) and of ``FloatingPointError``. The message names the
    parameter to lower.

    Examples
    --------
    >>> from skembed.exceptions import TrainingDivergedError, diverged
    >>> err = diverged("GloVeTransformer", epoch=3, loss=float("nan"),
    ...                parameter="learning_rate", value=5.0)
    >>> isinstance(err, ValueError) and isinstance(err, TrainingDivergedError)
    True
    >>> print(err)
    GloVeTransformer training diverged: the loss is nan at epoch 3. Lower learning_rate (currently 5.0), e.g. by a factor of 10.
    """


def diverged(estimator, *, epoch, loss, parameter, value, hint=""):
    """Build the :class:`TrainingDivergedError` for a NaN/infinite loss.

    Parameters
    ----------
    estimator : str or object
        The estimator (or its class name) that diverged.
    epoch : int
        1-based epoch in which the loss stopped being finite.
    loss : float
        The non-finite loss value.
    parameter : str
        The learning-rate parameter to lower (``"alpha"``, ``"learning_rate"``).
    value : float
        Its current value.
    hint : str, default=""
        Extra advice appended to the message.

    Returns
    -------
    error : TrainingDivergedError
        To be raised by the caller.
    """
    name = estimator if isinstance(estimator, str) else type(estimator).__name__
    msg = (
        f"{name} training diverged: the loss is {loss} at epoch {epoch}. Lower {parameter} "
        f"(currently {value}), e.g. by a factor of 10."
    )
    if hint:
        msg += " " + hint
    return TrainingDivergedError(msg)

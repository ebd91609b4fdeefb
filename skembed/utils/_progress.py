"""Progress bars and per-epoch reporting (tqdm)."""

from __future__ import annotations


# --------------------------------------------------------------------------- progress
def progress(iterable=None, *, verbose=False, **kwargs):
    """Wrap ``iterable`` in a tqdm progress bar when ``verbose`` is true.

    Parameters
    ----------
    iterable : iterable or None
        What to iterate; ``None`` for a manually updated bar.
    verbose : bool or int, default=False
        No output at all when false.
    **kwargs
        Passed to ``tqdm.tqdm`` (``total``, ``desc``, ``unit``, ...).

    Returns
    -------
    bar : tqdm.tqdm
        A disabled bar (no output) when ``verbose`` is false.
    """
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not verbose, leave=False, **kwargs)


def report_epoch(bar, record, verbose):
    """Show an epoch's history record on a progress bar (and as a line at ``verbose >= 2``).

    Parameters
    ----------
    bar : tqdm.tqdm
        The epoch bar made by :func:`progress` (advanced by one).
    record : dict
        The epoch's record (:func:`skembed.callbacks.make_record`).
    verbose : int
        0: nothing is shown; 1: the bar's postfix shows the losses; 2: also
        one line per epoch (``epoch 3: loss=0.1234 valid_loss=... 1.20 s``).
    """
    shown = {k: f"{v:.4g}" for k, v in record.items() if k.endswith("loss") and v is not None}
    if verbose:
        bar.set_postfix(shown)
    bar.update(1)
    if verbose >= 2:
        items = " ".join(f"{k}={v}" for k, v in shown.items())
        bar.write(f"epoch {record['epoch']}: {items} {record['seconds']:.2f} s")

"""The process-level caches, and :func:`clear_caches`, which empties them all.

Some objects are worth keeping for the life of the process: the loaded
Hugging Face models and tokenizers (``clone()`` and every fold of a grid
search share one copy of the weights), the compiled sessions of exported
models, the hashes of model files, the ``cache="memory"`` embedding store and
the rows read from directory stores, and the teacher outputs of
``StaticEmbedder``. Each module that owns such a cache registers the function
that empties it here when it is imported (a module never imported holds
nothing), so this module imports nothing of the estimators and the arrows
between packages keep pointing down.
"""

from __future__ import annotations

import threading

__all__ = ["clear_caches", "register_cache"]

_CLEARERS: list = []
_LOCK = threading.Lock()


def register_cache(clear):
    """Register ``clear()``, which empties one process-level cache; returns it (a decorator).

    Parameters
    ----------
    clear : callable
        Called with no argument by :func:`clear_caches`. Registering the same
        function twice keeps one entry.

    Returns
    -------
    clear : callable
        The same function.
    """
    with _LOCK:
        if clear not in _CLEARERS:
            _CLEARERS.append(clear)
    return clear


def clear_caches():
    """Empty every process-level cache of skembed, to free memory.

    Drops the loaded transformer models and tokenizers, the sessions of
    exported models (ONNX Runtime, OpenVINO), the hashes of model files, the
    rows of the in-memory embedding store (``cache="memory"``) and those read
    from directory stores, and ``StaticEmbedder``'s teacher outputs. Files
    on disk (exports, embedding-cache entries) are kept, and fitted
    estimators keep working: an estimator that needs a dropped model loads it
    again.

    Examples
    --------
    >>> from skembed.utils._caches import clear_caches
    >>> clear_caches()
    """
    with _LOCK:
        clearers = list(_CLEARERS)
    for clear in clearers:
        clear()

"""The estimator contract shared by every skembed estimator.

Device resolution, thread limits, progress bars, seeding and the checks of
text input live here, so that each estimator is a thin conductor over them.
Nothing in this module imports torch at import time: torch is imported only
when a device other than ``"cpu"`` has to be resolved or a torch seed made.
"""

from __future__ import annotations

import contextlib
import importlib.util
import numbers
import os
import sys
from collections.abc import Iterable, Iterator
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

#: Parameter rules shared by every estimator that computes with a choice of
#: device, engine, threads and seed (merge into ``_parameter_constraints``;
#: an estimator narrows ``engine`` with its own ``StrOptions``).
#: ``device`` accepts ``torch.device`` objects too, so :func:`resolve_device`
#: validates it in ``fit``, before any expensive work.
COMPUTE_PARAMETER_CONSTRAINTS = {
    "device": "no_validation",
    "n_jobs": [Integral, None],
    "random_state": ["random_state"],
}

__all__ = [
    "COMPUTE_PARAMETER_CONSTRAINTS",
    "available_devices",
    "check_documents",
    "limit_threads",
    "progress",
    "report_epoch",
    "resolve_device",
    "resolve_engine",
    "resolve_n_jobs",
    "restore_on_failure",
    "seed_from_random_state",
    "torch_generator",
]


# --------------------------------------------------------------------------- devices
def _torch_installed() -> bool:
    return "torch" in sys.modules or importlib.util.find_spec("torch") is not None


def available_devices() -> list[str]:
    """List the compute devices usable in this process.

    Returns
    -------
    devices : list of str
        Always starts with ``"cpu"``; then ``"cuda:0"``, ``"cuda:1"``, ... for
        each visible CUDA device and ``"mps"`` when Apple's Metal backend is
        available. Only ``"cpu"`` when torch is not installed.
    """
    devices = ["cpu"]
    if not _torch_installed():
        return devices
    import torch

    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append("mps")
    return devices


def resolve_device(device) -> str:
    """Turn a ``device`` parameter into a canonical device string.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device
        ``"auto"`` picks the first CUDA device, then MPS, then the CPU.
        ``"cuda"`` means ``"cuda:0"``.

    Returns
    -------
    device : str
        ``"cpu"``, ``"cuda:N"`` or ``"mps"``. A string (not a ``torch.device``)
        so that fitted estimators pickle and compare without torch.

    Raises
    ------
    ValueError
        If the device is not recognised or not available in this process; the
        message lists the available devices.

    Notes
    -----
    ``"cpu"`` never imports torch, so classical estimators stay torch-free.
    The parameter itself is never modified; estimators store the result in
    ``device_``.
    """
    name = str(device).strip().lower() if device is not None else "auto"
    if name == "cpu":
        return "cpu"
    available = available_devices()
    if name == "auto":
        for prefix in ("cuda", "mps"):
            for dev in available:
                if dev.startswith(prefix):
                    return dev
        return "cpu"
    if name == "cuda":
        name = "cuda:0"
    if name.startswith("cuda:"):
        index = name[5:]
        if not index.isdigit():
            raise ValueError(
                f"device={device!r} is not a valid CUDA device; use 'cuda' or 'cuda:N' "
                "with N a device index."
            )
    elif name != "mps":
        raise ValueError(
            f"device={device!r} is not recognised; use 'auto', 'cpu', 'cuda', 'cuda:N', "
            "'mps' or a torch.device."
        )
    if name not in available:
        hint = "" if _torch_installed() else " (torch is not installed: pip install torch)"
        raise ValueError(
            f"device={device!r} is not available in this process{hint}; available devices: "
            f"{available}. Use device='auto' to pick the best available one."
        )
    return name


def resolve_engine(engine, device_, *, cpu_engine, name="engine"):
    """Choose the implementation that computes, from ``engine`` and the resolved device.

    Call it in ``fit`` right after :func:`resolve_device` and before any
    expensive work, so a bad combination fails at once.

    Parameters
    ----------
    engine : str
        The estimator's ``engine`` parameter: ``"auto"``, ``"torch"`` or the
        name of its CPU engine (``"numba"``, ``"sklearn"``).
    device_ : str
        The resolved device (output of :func:`resolve_device`).
    cpu_engine : str
        The estimator's CPU-only engine (``"numba"`` or ``"sklearn"``).
    name : str, default="engine"
        Parameter name used in the error message.

    Returns
    -------
    engine_ : str
        ``cpu_engine`` or ``"torch"``. ``"auto"`` gives ``cpu_engine`` on the
        CPU and ``"torch"`` on any other device.

    Raises
    ------
    ValueError
        If the CPU engine is asked for on a non-CPU device, or ``engine`` is
        not one of the three values.

    Examples
    --------
    >>> resolve_engine("auto", "cpu", cpu_engine="numba")
    'numba'
    >>> resolve_engine("auto", "cuda:0", cpu_engine="numba")
    'torch'
    >>> resolve_engine("numba", "cuda:0", cpu_engine="numba")
    Traceback (most recent call last):
    ...
    ValueError: engine='numba' runs on the CPU only, but the device resolved to 'cuda:0'; use engine='auto' or 'torch' for a torch device.
    """
    if engine == "auto":
        return cpu_engine if device_ == "cpu" else "torch"
    if engine == "torch":
        return "torch"
    if engine == cpu_engine:
        if device_ != "cpu":
            raise ValueError(
                f"{name}={engine!r} runs on the CPU only, but the device resolved to {device_!r}; "
                f"use {name}='auto' or 'torch' for a torch device."
            )
        return cpu_engine
    raise ValueError(f"{name} must be 'auto', 'torch' or {cpu_engine!r}, got {engine!r}.")


# --------------------------------------------------------------------------- threads
def resolve_n_jobs(n_jobs) -> int:
    """Number of threads a computation may use.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` means the ``OMP_NUM_THREADS`` environment variable if set
        (joblib sets it in the worker processes of ``GridSearchCV(n_jobs=k)``,
        so nested estimators do not oversubscribe), else every usable core.
        ``-1`` means every usable core, ``-2`` all but one, and so on.

    Returns
    -------
    n_threads : int
        At least 1.

    Raises
    ------
    ValueError
        If ``n_jobs == 0``.
    """
    n_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    n_cpus = max(int(n_cpus or 1), 1)
    if n_jobs is None:
        env = os.environ.get("OMP_NUM_THREADS", "")
        if env.isdigit() and int(env) > 0:
            return min(int(env), n_cpus)
        return n_cpus
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool):
        raise ValueError(f"n_jobs must be an int or None, got {n_jobs!r}.")
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not valid; use None, a positive int or -1 for all cores.")
    if n_jobs < 0:
        return max(n_cpus + 1 + int(n_jobs), 1)
    return int(n_jobs)


@contextlib.contextmanager
def limit_threads(n_jobs, *, modules=()):
    """Limit native thread pools to ``n_jobs`` threads for the ``with`` block.

    BLAS/OpenMP pools are limited with threadpoolctl; torch's intra-op pool
    and numba's pool are set for the block and restored afterwards (when the
    module is imported, or named in ``modules``), so no global state of the
    process changes once the block exits.

    Parameters
    ----------
    n_jobs : int or None
        See :func:`resolve_n_jobs`.
    modules : tuple of {"torch", "numba"}, default=()
        Import these first, so that their pools are limited even when the
        block is the first code to use them (estimators import them lazily).

    Yields
    ------
    n_threads : int
        The resolved number of threads.
    """
    from threadpoolctl import threadpool_limits

    n = resolve_n_jobs(n_jobs)
    for name in modules:
        importlib.import_module(name)
    torch = sys.modules.get("torch")
    numba = sys.modules.get("numba")
    old_torch = torch.get_num_threads() if torch is not None else None
    old_numba = None
    if numba is not None:
        try:
            old_numba = numba.get_num_threads()
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        except Exception:  # pragma: no cover - numba without a threading layer
            old_numba = None
    try:
        if torch is not None and old_torch != n:
            torch.set_num_threads(n)
        with threadpool_limits(limits=n):
            yield n
    finally:
        if torch is not None and old_torch is not None and torch.get_num_threads() != old_torch:
            torch.set_num_threads(old_torch)
        if old_numba is not None:
            numba.set_num_threads(old_numba)


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


# --------------------------------------------------------------------------- seeding
def seed_from_random_state(random_state) -> int:
    """Draw a 31-bit integer seed from a ``random_state`` parameter.

    Parameters
    ----------
    random_state : int, numpy.random.RandomState or None
        As in scikit-learn; turned into a generator with ``check_random_state``.

    Returns
    -------
    seed : int
        In ``[0, 2**31 - 1)``; deterministic for an int ``random_state``.
    """
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def torch_generator(seed: int, device: str = "cpu"):
    """A ``torch.Generator`` on ``device`` seeded with ``seed`` (global torch RNG untouched)."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen


# --------------------------------------------------------------------------- text input
def _is_missing(doc) -> bool:
    if doc is None:
        return True
    if isinstance(doc, float) and doc != doc:  # NaN
        return True
    try:
        import pandas as pd  # noqa: PLC0415

        return doc is pd.NA or doc is pd.NaT
    except ImportError:  # pragma: no cover
        return False


def check_documents(X, *, handle_missing="error", allow_iterable=False, name="X"):
    """Validate a collection of text documents.

    Parameters
    ----------
    X : list, tuple, numpy.ndarray or pandas.Series of documents
        Each document is a ``str`` (tokenized later by the estimator's
        analyzer) or a list/tuple of ``str`` tokens (taken as pre-tokenized).
        A 1-column DataFrame or ``(n, 1)`` array is accepted and flattened.
    handle_missing : {"error", "empty"}, default="error"
        What to do with a ``None``/NaN document: raise, or treat it as an
        empty document.
    allow_iterable : bool, default=False
        Accept any re-iterable corpus object (such as
        :class:`skembed.text.LineCorpus`) without materialising it; a one-shot
        iterator or generator is still refused. A ``dask.bag`` or dask Series is
        then wrapped in :class:`skembed.text.corpus.DaskCorpus` (one partition in
        memory at a time).
    name : str, default="X"
        Name used in error messages.

    Returns
    -------
    documents : list or re-iterable
        A list of documents (``str`` or tuple of ``str``) with missing
        documents replaced by ``""``; or the re-iterable object itself when
        ``allow_iterable`` and ``X`` is not a sequence.

    Raises
    ------
    TypeError
        If ``X`` is a single string, a one-shot iterator, not iterable, a dask
        collection that cannot be streamed (any, without ``allow_iterable``; a
        dask DataFrame always), or a document is neither a string nor a sequence of strings (the message
        names the row).
    ValueError
        If ``X`` is empty, or a document is missing and
        ``handle_missing="error"`` (the message names the row and the fix).
    """
    if isinstance(X, (str, bytes)):
        raise TypeError(
            f"Iterable over raw text documents expected, string object received for {name}. "
            "Wrap a single document in a list: [document]."
        )
    if hasattr(X, "__dask_graph__"):  # a dask collection: never materialise it silently
        if allow_iterable and type(X).__name__ in ("Bag", "Series"):
            from .text.corpus import DaskCorpus

            return DaskCorpus(X)  # bag / Series: streamed one partition at a time
        raise TypeError(
            f"{name} is a dask {type(X).__name__}, which this estimator cannot stream. "
            "Supported inputs: a list, numpy array or pandas Series of documents; "
            "fit of Word2Vec, FastText, Doc2Vec and GloVe also takes a re-iterable corpus "
            "(skembed.LineCorpus, or a dask.bag / dask Series of documents). To embed a dask "
            "collection with a fitted estimator, use skembed.dask.transform(estimator, collection)."
        )
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # DataFrame
        if X.shape[1] != 1:
            raise TypeError(
                f"{name} is a DataFrame with {X.shape[1]} columns; text estimators take one "
                "column of documents. Select it (df['text']) or use a ColumnTransformer."
            )
        X = X.iloc[:, 0]
    if hasattr(X, "iloc"):  # Series
        X = X.tolist()
    elif isinstance(X, np.ndarray):
        if X.ndim == 2 and X.shape[1] == 1:
            X = X[:, 0]
        if X.ndim != 1:
            raise TypeError(
                f"{name} must be a 1-D collection of documents, got an array of shape {X.shape}."
            )
        X = X.tolist()
    elif not isinstance(X, (list, tuple)):
        if not isinstance(X, Iterable):
            raise TypeError(
                f"{name} must be an iterable of documents (list, numpy array, pandas Series), "
                f"got {type(X).__name__}."
            )
        if isinstance(X, Iterator):
            raise TypeError(
                f"{name} is a one-shot iterator ({type(X).__name__}); training iterates the corpus "
                "several times. Pass a list, or a re-iterable corpus such as "
                "skembed.text.LineCorpus(path)."
            )
        if allow_iterable:
            return X
        X = list(X)
    if len(X) == 0:
        raise ValueError(f"{name} is empty: at least one document is required.")
    docs = []
    for i, doc in enumerate(X):
        if isinstance(doc, str):
            docs.append(doc)
        elif isinstance(doc, (list, tuple, np.ndarray)):
            toks = tuple(doc.tolist() if isinstance(doc, np.ndarray) else doc)
            for tok in toks:
                if not isinstance(tok, str):
                    raise TypeError(
                        f"Document {i} of {name} is pre-tokenized but contains a token of type "
                        f"{type(tok).__name__} ({tok!r}); tokens must be strings."
                    )
            docs.append(toks)
        elif _is_missing(doc):
            if handle_missing == "empty":
                docs.append("")
            else:
                raise ValueError(
                    f"Document {i} of {name} is missing ({doc!r}). Drop or fill missing documents, "
                    "or set handle_missing='empty' to treat them as empty documents."
                )
        else:
            raise TypeError(
                f"Document {i} of {name} has type {type(doc).__name__} ({doc!r}); each document "
                "must be a string or a list of string tokens."
            )
    return docs

"""Compute choices: devices, engines and thread counts.

Nothing here imports torch at import time: torch is imported only when a
device other than ``"cpu"`` has to be resolved.
"""

from __future__ import annotations

import contextlib
import importlib.util
import numbers
import os
import sys
import warnings
from numbers import Integral
from typing import NamedTuple

from sklearn.utils._param_validation import Interval, Options


class DeviceConstraint(Options):
    """Parameter rule of ``device``: a device name or a ``torch.device``.

    Checks the type and the name's form in ``_validate_params`` (so
    ``device=3`` or ``device="gpu"`` fail before ``fit`` does any work, with
    scikit-learn's ``InvalidParameterError``); whether the device exists in
    this process is checked by :func:`resolve_device`. Never imports torch:
    a ``torch.device`` is recognised by its type's module.

    (A subclass of scikit-learn's ``Options``, the kind of rule its
    ``make_constraint`` accepts; the membership test is replaced.)

    Examples
    --------
    >>> c = DeviceConstraint()
    >>> [c.is_satisfied_by(v) for v in ("cpu", "cuda:1", "AUTO", "gpu", 3, None)]
    [True, True, True, False, False, False]
    """

    def __init__(self):
        super().__init__(str, {"auto", "cpu", "cuda", "mps"})

    def is_satisfied_by(self, val):
        return parse_device(val) is not None

    def __str__(self):
        return "a device name ('auto', 'cpu', 'cuda', 'cuda:N', 'mps') or a torch.device"


#: Parameter rules shared by every estimator that computes with a choice of
#: device, engine, threads and seed (merge into ``_parameter_constraints``;
#: an estimator narrows ``engine`` with its own ``StrOptions``). Whether the
#: device is available is checked by :func:`resolve_device` in ``fit``,
#: before any expensive work.
#: The part of it for estimators that compute on the CPU only (no ``device``).
#: the most threads ``n_jobs`` may ask for (far above any machine's cores)
MAX_N_JOBS = 4096
THREAD_PARAMETER_CONSTRAINTS = {
    # bounded: a thread pool of 10**12 (a stored value) overflows torch's and numba's setters
    "n_jobs": [Interval(Integral, None, MAX_N_JOBS, closed="right"), None],
    "random_state": ["random_state"],
}
COMPUTE_PARAMETER_CONSTRAINTS = {"device": [DeviceConstraint()], **THREAD_PARAMETER_CONSTRAINTS}


# --------------------------------------------------------------------------- devices
def parse_device(value):
    """The canonical name of a ``device`` parameter, or None if it names no device.

    The one parse of a ``device`` value: :class:`DeviceConstraint` (the parameter rule) and
    :func:`resolve_device` (availability) both call it. Never imports torch: a
    ``torch.device`` is recognised by its type's module.

    Parameters
    ----------
    value : object
        A device name (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"``; case and
        surrounding spaces ignored) or a ``torch.device``.

    Returns
    -------
    name : str or None
        ``"auto"``, ``"cpu"``, ``"cuda:N"`` (``"cuda"`` is ``"cuda:0"``) or ``"mps"``; None for
        anything else.

    Examples
    --------
    >>> [parse_device(v) for v in ("CPU ", "cuda", "cuda:1", "auto", "gpu", "cuda:x", 3)]
    ['cpu', 'cuda:0', 'cuda:1', 'auto', None, None, None]
    """
    if type(value).__module__ == "torch" and type(value).__name__ == "device":
        value = str(value)
    if not isinstance(value, str):
        return None
    name = value.strip().lower()
    if name == "cuda":
        return "cuda:0"
    if name in ("auto", "cpu", "mps") or (name.startswith("cuda:") and name[5:].isdigit()):
        return name
    return None


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
    name = parse_device("auto" if device is None else device)
    if name is None:
        raise ValueError(
            f"device={device!r} is not recognised; use 'auto', 'cpu', 'cuda', 'cuda:N', "
            "'mps' or a torch.device."
        )
    if name == "cpu":
        return "cpu"
    available = available_devices()
    if name == "auto":
        for prefix in ("cuda", "mps"):
            for dev in available:
                if dev.startswith(prefix):
                    return dev
        return "cpu"
    if name not in available:
        hint = "" if _torch_installed() else " (torch is not installed: pip install torch)"
        raise ValueError(
            f"device={device!r} is not available in this process{hint}; available devices: "
            f"{available}. Use device='auto' to pick the best available one."
        )
    return name


def resolve_engine(engine, device_, *, cpu_engine, torch_engines=("torch",), name="engine"):
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
    torch_engines : tuple of str, default=("torch",)
        The estimator's torch engines (any device); ``"auto"`` picks the first
        on a non-CPU device.
    name : str, default="engine"
        Parameter name used in the error message.

    Returns
    -------
    engine_ : str
        ``cpu_engine`` or one of ``torch_engines``. ``"auto"`` gives
        ``cpu_engine`` on the CPU and ``torch_engines[0]`` on any other device.

    Raises
    ------
    ValueError
        If the CPU engine is asked for on a non-CPU device, or ``engine`` is
        not ``"auto"``, ``cpu_engine`` or one of ``torch_engines``.

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
        return cpu_engine if device_ == "cpu" else torch_engines[0]
    if engine in torch_engines:
        return engine
    if engine == cpu_engine:
        if device_ != "cpu":
            raise ValueError(
                f"{name}={engine!r} runs on the CPU only, but the device resolved to {device_!r}; "
                f"use {name}='auto' or 'torch' for a torch device."
            )
        return cpu_engine
    allowed = ", ".join(repr(e) for e in ("auto", cpu_engine, *torch_engines))
    raise ValueError(f"{name} must be one of {allowed}; got {engine!r}.")


class Compute(NamedTuple):
    """What a fit computes with: the resolved device, engine and thread count."""

    device: str
    engine: str | None
    n_threads: int


def resolve_compute(
    estimator, *, device=None, cpu_engine=None, torch_engines=("torch",), engine_param="engine"
):
    """Resolve an estimator's compute parameters at once, before any expensive work.

    The one place where ``device``, ``engine`` and ``n_jobs`` become ``device_``,
    ``engine_`` and a thread count (:func:`resolve_device`, :func:`resolve_engine`,
    :func:`resolve_n_jobs`, in that order, so a bad combination fails at once).

    Parameters
    ----------
    estimator : estimator
        Reads its ``device`` (``"cpu"`` when it has none), its engine parameter and ``n_jobs``.
    device : str, optional
        A device to resolve instead of ``estimator.device`` (e.g. ``"cpu"`` where a backend
        turns ``"auto"`` into the CPU).
    cpu_engine : str, optional
        The estimator's CPU engine (``"numba"``, ``"sklearn"``); None: no engine parameter.
    torch_engines : tuple of str, default=("torch",)
        The estimator's torch engines.
    engine_param : str, default="engine"
        The name of the estimator's engine parameter.

    Returns
    -------
    compute : Compute
        ``(device, engine, n_threads)``; ``engine`` is None without ``cpu_engine``.

    Raises
    ------
    ValueError
        As :func:`resolve_device`, :func:`resolve_engine` and :func:`resolve_n_jobs`.

    Examples
    --------
    >>> from skembed import TfidfLSA
    >>> resolve_compute(TfidfLSA(device="cpu", n_jobs=1), cpu_engine="sklearn")
    Compute(device='cpu', engine='sklearn', n_threads=1)
    """
    device = resolve_device(getattr(estimator, "device", "cpu") if device is None else device)
    engine = None
    if cpu_engine is not None:
        engine = resolve_engine(
            getattr(estimator, engine_param),
            device,
            cpu_engine=cpu_engine,
            torch_engines=torch_engines,
            name=engine_param,
        )
    return Compute(device, engine, resolve_n_jobs(getattr(estimator, "n_jobs", None)))


def device_after_unpickling(estimator, device):
    """The device an unpickled estimator loads its model on: one CPU fallback for all.

    Parameters
    ----------
    estimator : estimator
        Its ``device_`` is set to the result.
    device : str
        The device it was fitted on (its stored ``device_``).

    Returns
    -------
    device : str
        ``device`` when it is available in this process, else ``"cpu"`` with one
        ``UserWarning`` naming the device it was fitted on.

    Warns
    -----
    UserWarning
        When the fitted device is not available (or not a device name) here.
    """
    try:
        resolved = resolve_device(device)
    except ValueError:
        warnings.warn(
            f"{type(estimator).__name__} was fitted on device {device!r}, which is not available "
            "here; the model was moved to 'cpu' (device_ is now 'cpu').",
            UserWarning,
            stacklevel=3,
        )
        resolved = "cpu"
    estimator.device_ = resolved
    return resolved


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
            from ..kernels import launch_threads

            launch_threads()  # before numba's first pool use: a short spin when idle
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

"""Seeds for numpy, numba kernels and torch generators, drawn from ``random_state``."""

from __future__ import annotations

import contextlib

from sklearn.utils import check_random_state


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


#: the multiplier of :func:`mix_seed` (a prime) and its modulus (a 63-bit Mersenne number)
_SEED_PRIME, _SEED_MODULUS = 1_000_003, 2**63 - 1


def mix_seed(seed: int, offset: int) -> int:
    """Derive a seed from a fit's ``seed`` and an ``offset`` (an epoch, a chunk, a part).

    The one seed-mixing formula of the library: ``(seed * 1_000_003 + offset) mod (2**63 - 1)``,
    so derived seeds are distinct for distinct offsets below 1,000,003 and reproducible.

    Parameters
    ----------
    seed : int
        The fit's seed (:func:`seed_from_random_state`).
    offset : int
        What the derived seed is for; callers combine their indices into it.

    Returns
    -------
    seed : int
        In ``[0, 2**63 - 1)``.

    Examples
    --------
    >>> mix_seed(1, 0), mix_seed(1, 5), mix_seed(2, 0)
    (1000003, 1000008, 2000006)
    """
    return int((int(seed) * _SEED_PRIME + int(offset)) % _SEED_MODULUS)


def torch_generator(seed: int, device: str = "cpu"):
    """A ``torch.Generator`` on ``device`` seeded with ``seed`` (global torch RNG untouched)."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen


@contextlib.contextmanager
def forked_torch_rng(seed: int, device="cpu"):
    """Fork torch's global RNG (CPU and the CUDA ``device``), seed it, restore it on exit.

    Weight initialisation and dropout draw from the global RNG; forking keeps
    ``random_state`` from touching the caller's RNG state, and the caller's
    state from changing the fit.

    Parameters
    ----------
    seed : int
    device : str or torch.device, default="cpu"
        A CUDA device's generator is forked too (the current one for a bare ``"cuda"``).
    """
    import torch

    device = torch.device(device)
    devices = []
    if device.type == "cuda":
        devices = [device.index if device.index is not None else torch.cuda.current_device()]
    with torch.random.fork_rng(devices=devices, device_type="cuda"):
        torch.manual_seed(int(seed))
        yield

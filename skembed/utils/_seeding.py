"""Seeds for numpy, numba kernels and torch generators, drawn from ``random_state``."""

from __future__ import annotations

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


def torch_generator(seed: int, device: str = "cpu"):
    """A ``torch.Generator`` on ``device`` seeded with ``seed`` (global torch RNG untouched)."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen

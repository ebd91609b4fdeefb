"""Rebuild a module from stored (possibly hostile) state without trusting its sizes.

A pickle or skops file gives an estimator a configuration and a ``state_dict``.
The configuration decides how much memory the module allocates, so it is
built first on torch's ``meta`` device (no storage), its expected parameter
names, shapes and dtypes are compared with the stored arrays, and only then is
the real module allocated: a configuration that declares a table larger than
the weights the file actually carries is refused before any allocation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["build_checked", "check_config_bounds"]


def _numbers(value, path="config", depth=0):
    """``(path, kind, number)`` for every int in a config (lists and dicts followed, bools
    skipped; ``kind`` is "value") and every list length (``kind`` "length")."""
    if depth > 4 or isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path, "value", value
    elif isinstance(value, (list, tuple)):
        yield path, "length", len(value)
        for i, v in enumerate(value[:10_000]):
            yield from _numbers(v, f"{path}[{i}]", depth + 1)
    elif isinstance(value, dict):
        for k, v in list(value.items())[:10_000]:
            yield from _numbers(v, str(k) if depth == 0 else f"{path}.{k}", depth + 1)


def check_config_bounds(config, weights, what, counts=()):
    """Refuse a config whose numbers could not describe the stored weights, before building.

    Building even on the ``meta`` device costs Python objects per layer, so a
    config declaring a million layers or a list of a million widths is
    refused first: no int in it may exceed the number of stored elements,
    and no list (nor the ``counts`` keys, e.g. ``num_hidden_layers``) may be
    longer than the number of stored arrays.

    Raises
    ------
    ValueError
        Naming the offending number.
    """
    n_elements = sum(int(np.prod(getattr(v, "shape", ()) or (1,))) for v in weights.values())
    n_arrays = len(weights)
    for path, kind, number in _numbers(config):
        limit = n_arrays if kind == "length" else n_elements
        if number > max(limit, 1):
            declared = f"{path} of {number:,} entries" if kind == "length" else f"{path}={number:,}"
            backing = f"{limit:,} stored {'arrays' if kind == 'length' else 'weights'}"
            raise ValueError(
                f"{what}: the stored configuration declares {declared}, more than the "
                f"{backing} could back; the file is damaged or crafted."
            )
    for key in counts:
        number = config.get(key)
        if isinstance(number, int) and number > n_arrays:
            raise ValueError(
                f"{what}: the stored configuration declares {key}={number:,} but only "
                f"{n_arrays} weight arrays are stored; the file is damaged or crafted."
            )


def _as_tensor(value, name, what):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise ValueError(
                f"{what}: stored weight {name!r} holds NaN or infinite values; the file is "
                "damaged or crafted."
            )
        native = value.dtype.newbyteorder("=")  # torch reads native byte order only
        return torch.from_numpy(np.ascontiguousarray(value, dtype=native))
    kind = getattr(value, "dtype", type(value).__name__)
    raise ValueError(
        f"{what}: stored weight {name!r} is {kind}, not a numeric array; the file is damaged "
        "or was not written by skembed."
    )


def build_checked(factory, weights, what, config=None):
    """``factory()`` loaded with ``weights``, refused before allocation if they do not fit.

    Parameters
    ----------
    factory : callable
        Returns the module, e.g. ``lambda: EntityEmbeddingNet(**config)``.
    weights : mapping of str to torch.Tensor or numpy.ndarray
        The stored ``state_dict``.
    what : str
        Names the owner in error messages (e.g. ``"EntityEmbedder"``).
    config : dict or None, default=None
        The stored configuration ``factory`` builds from; checked with
        :func:`check_config_bounds` first when given.

    Returns
    -------
    module : torch.nn.Module
        On the CPU, weights loaded, in eval mode.

    Raises
    ------
    ValueError
        If the configuration is invalid, or the stored weights are not a
        mapping of names to numeric arrays whose names, shapes and dtypes
        match the module the configuration declares.
    """
    import torch

    if not isinstance(weights, dict) or not all(isinstance(k, str) for k in weights):
        raise ValueError(f"{what}: stored weights are not a mapping of names to arrays.")
    if config is not None:
        check_config_bounds(config, weights, what)
    try:
        with torch.device("meta"):
            meta = factory()
    except Exception as exc:  # noqa: BLE001 - any failure is a bad stored configuration
        raise ValueError(f"{what}: the stored model configuration is invalid ({exc}).") from None
    expected = meta.state_dict()
    if set(expected) != set(weights):
        missing = sorted(set(expected) - set(weights))[:5]
        extra = sorted(set(weights) - set(expected))[:5]
        raise ValueError(
            f"{what}: stored weights do not match the stored configuration "
            f"(missing {missing}, unexpected {extra}); the file is damaged or crafted."
        )
    tensors = {}
    for name, ref in expected.items():
        t = _as_tensor(weights[name], name, what)
        if tuple(t.shape) != tuple(ref.shape):
            raise ValueError(
                f"{what}: stored weight {name!r} has shape {tuple(t.shape)} but the stored "
                f"configuration declares {tuple(ref.shape)}; the file is damaged or crafted."
            )
        if t.dtype != ref.dtype and (t.is_floating_point() != ref.is_floating_point()):
            raise ValueError(
                f"{what}: stored weight {name!r} has dtype {t.dtype}, expected {ref.dtype}."
            )
        tensors[name] = t.to(ref.dtype)
    module = factory()  # the sizes are now those of arrays the file really holds
    module.load_state_dict(tensors)
    return module.eval()

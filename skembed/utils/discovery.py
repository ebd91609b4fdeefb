"""Find the public estimators of skembed (scikit-learn's ``all_estimators`` pattern)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

__all__ = ["all_estimators"]

# Subpackages that hold no estimator by design: ``nn`` is torch modules only and
# ``kernels`` numba only (neither may import scikit-learn; tests/test_architecture.py
# checks it), and importing them would import torch or numba. ``tests`` as scikit-learn.
_SKIPPED_PACKAGES = frozenset({"nn", "kernels", "tests"})

_TYPE_MIXINS = {
    "classifier": "ClassifierMixin",
    "regressor": "RegressorMixin",
    "transformer": "TransformerMixin",
    "cluster": "ClusterMixin",
}


def _public_modules(package):
    """Yield ``package``'s public modules and subpackages, depth first, imported."""
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        last = info.name.rsplit(".", 1)[1]
        if last.startswith("_") or last in _SKIPPED_PACKAGES:
            continue
        module = importlib.import_module(info.name)
        yield module
        if info.ispkg:
            yield from _public_modules(module)


def _is_concrete_estimator(name, cls, base_estimator):
    return (
        issubclass(cls, base_estimator)
        and cls.__module__.split(".")[0] == "skembed"
        and not name.startswith(("_", "Base"))
        and not inspect.isabstract(cls)
    )


def all_estimators(type_filter=None):
    """Return every public estimator class of skembed.

    The public modules of the package are imported (modules whose name
    starts with ``_`` are not, nor ``skembed.nn`` and ``skembed.kernels``,
    which hold no estimator), and every class found in them is kept if it
    subclasses scikit-learn's ``BaseEstimator``, is defined in skembed, and
    is neither private nor a base class (its name starts with ``_`` or
    ``Base``, or it is abstract). An estimator defined in a private module
    is found through the public module that re-exports it. Calling this
    function does not import torch.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "cluster"} or \
list of such str, default=None
        Keep only the estimators of these types (those inheriting from
        scikit-learn's ``ClassifierMixin``, ``RegressorMixin``,
        ``TransformerMixin`` or ``ClusterMixin``). ``None`` keeps all.

    Returns
    -------
    estimators : list of tuple of (str, type)
        ``(name, class)`` pairs sorted by name, one per estimator class.

    Raises
    ------
    ValueError
        If ``type_filter`` names an unknown type.

    See Also
    --------
    sklearn.utils.discovery.all_estimators : the scikit-learn function this follows.

    Examples
    --------
    >>> from skembed.utils.discovery import all_estimators
    >>> estimators = dict(all_estimators())
    >>> {"Word2VecTransformer", "EntityEmbedder", "OneHotEmbedder"} <= estimators.keys()
    True
    >>> estimators["TfidfLSA"].__module__
    'skembed.text.count._lsa'
    >>> any(name.startswith(("_", "Base")) for name in estimators)
    False
    >>> all_estimators(type_filter="classifier")
    []
    """
    import sklearn.base
    from sklearn.base import BaseEstimator

    if type_filter is None:
        mixins = None
    else:
        kinds = [type_filter] if isinstance(type_filter, str) else list(type_filter)
        unknown = [kind for kind in kinds if kind not in _TYPE_MIXINS]
        if unknown:
            raise ValueError(
                f"type_filter must be None or one or more of {sorted(_TYPE_MIXINS)}; "
                f"got {unknown!r}."
            )
        mixins = tuple(getattr(sklearn.base, _TYPE_MIXINS[kind]) for kind in kinds)

    import skembed

    found = {}
    for module in _public_modules(skembed):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if _is_concrete_estimator(name, cls, BaseEstimator):
                found[cls] = (name, cls)
    estimators = sorted(found.values(), key=lambda pair: (pair[0], pair[1].__module__))
    if mixins is not None:
        estimators = [(name, cls) for name, cls in estimators if issubclass(cls, mixins)]
    return estimators

"""What skembed exports: every public module's ``__all__`` names public, existing objects."""

import importlib
import pkgutil

import pytest

import skembed


def _public_modules():
    names = ["skembed"]
    for info in pkgutil.walk_packages(skembed.__path__, "skembed."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _public_modules())
def test_all_lists_existing_public_names(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", [])
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    for item in exported:
        assert not item.startswith("_") or item == "__version__", f"{name} exports {item}"
        assert hasattr(module, item), f"{name}.__all__ lists {item!r}, which it does not define"


def test_every_public_loader_is_exported():
    from skembed import datasets

    loaders = {n for n in dir(datasets) if n.startswith("load_")}
    assert loaders <= set(datasets.__all__)
    assert {"load_loans", "load_movies", "load_tweet_sentiment"} <= loaders

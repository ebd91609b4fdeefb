"""Tests of ``skembed/utils/discovery.py`` (moved from ``tests/utils/test_utils.py`` to the mirrored path)."""

import subprocess
import sys

import pytest


def test_all_estimators_finds_every_public_estimator_once():
    from sklearn.base import BaseEstimator

    import skembed
    from skembed.utils.discovery import all_estimators

    found = all_estimators()
    names = [name for name, _ in found]
    assert names == sorted(names) and len(set(names)) == len(names)
    public = {
        name
        for name in skembed.__all__
        if isinstance(getattr(skembed, name), type)
        and issubclass(getattr(skembed, name), BaseEstimator)
    }
    assert set(names) == public
    for name, cls in found:
        assert cls is getattr(skembed, name)
        assert not name.startswith(("_", "Base"))


def test_all_estimators_type_filter():
    from sklearn.base import TransformerMixin

    from skembed.utils.discovery import all_estimators

    transformers = all_estimators(type_filter="transformer")
    assert transformers and all(issubclass(cls, TransformerMixin) for _, cls in transformers)
    assert all_estimators(type_filter=["classifier", "regressor", "cluster"]) == []
    assert all_estimators(type_filter=["transformer"]) == transformers
    with pytest.raises(ValueError, match="type_filter must be None or one or more of"):
        all_estimators(type_filter="embedder")


def test_all_estimators_does_not_import_torch():
    code = (
        "import sys\n"
        "from skembed.utils.discovery import all_estimators\n"
        "assert len(all_estimators()) >= 15\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

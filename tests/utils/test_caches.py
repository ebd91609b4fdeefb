"""register_cache / clear_caches: every registered process-level cache is emptied once."""

import pytest

from skembed.utils import _caches


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(_caches, "_CLEARERS", list(_caches._CLEARERS))


def test_a_cache_registered_twice_is_cleared_once(registry):
    store = {"key": "value"}
    calls = []

    def clear():
        calls.append(1)
        store.clear()

    assert _caches.register_cache(clear) is clear  # usable as a decorator
    _caches.register_cache(clear)
    _caches.clear_caches()
    assert store == {} and calls == [1]

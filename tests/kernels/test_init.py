"""numba's on-disk cache of the kernels is dropped when any kernel source changes."""

from __future__ import annotations

from skembed.kernels import _STAMP, _drop_stale_cache


def _tree(tmp_path):
    (tmp_path / "_core.py").write_text("X = 1\n")
    (tmp_path / "word2vec.py").write_text("Y = 2\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("word2vec.train_part-10.py311.nbi", "word2vec.train_part-10.py311.1.nbc"):
        (cache / name).write_bytes(b"machine code")
    (cache / "word2vec.cpython-311.pyc").write_bytes(b"bytecode")
    return cache


def test_first_run_and_unchanged_sources_keep_nothing_stale(tmp_path):
    cache = _tree(tmp_path)
    assert _drop_stale_cache(tmp_path) == 2  # no stamp yet: the cache's origin is unknown
    assert (cache / _STAMP).is_file()
    (cache / "scheduler.run_phases-5.py311.nbi").write_bytes(b"new machine code")
    assert _drop_stale_cache(tmp_path) == 0
    assert (cache / "scheduler.run_phases-5.py311.nbi").exists()


def test_an_edit_of_another_kernel_file_drops_every_cached_kernel(tmp_path):
    cache = _tree(tmp_path)
    _drop_stale_cache(tmp_path)
    (cache / "scheduler.run_phases-5.py311.nbi").write_bytes(b"compiled against _core X = 1")
    (tmp_path / "_core.py").write_text("X = 3\n")  # an inlined helper changes
    assert _drop_stale_cache(tmp_path) == 1
    assert not list(cache.glob("*.nb[ic]"))
    assert (cache / "word2vec.cpython-311.pyc").exists()  # Python's own cache is left alone
    assert _drop_stale_cache(tmp_path) == 0


def test_an_unwritable_folder_is_left_alone(tmp_path):
    missing = tmp_path / "not-there"
    assert _drop_stale_cache(missing) == 0
    assert not missing.exists()

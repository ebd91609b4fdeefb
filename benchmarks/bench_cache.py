"""The embedding cache's storage: skembed's entry files vs diskcache (SQLite), side by side.

Both stores hold the same rows (``--n-entries`` keys, 384-dim float32 vectors as
all-MiniLM-L6-v2 gives) in a fresh directory and are timed in one run:

1. write throughput (rows/s) for ``--n-entries`` rows put in batches of
   ``--batch-sizes`` rows (a transform writes its misses as one batch), one
   process, then ``--processes`` processes writing their share at once;
2. the first lookup of a fresh store (a new process joining a filled cache:
   the entry files are read and checked once), in seconds;
3. hit latency and miss latency per key (µs) for lookups of 100 keys at a time
   once the store is open;
4. the size on disk (MB).

diskcache (``pip install diskcache``) stores each row as its raw bytes under the
key ``namespace/key``, batch writes inside one ``transact()``; it is skipped
with a note when it is not installed. Each figure is the best of
``--repeats`` runs; the load average is printed beside the table.

Example::

    python benchmarks/bench_cache.py                        # 10^5 entries
    python benchmarks/bench_cache.py --n-entries 20000 --batch-sizes 1000
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from skembed.text.transformer._cache import EmbeddingCache, text_hash  # noqa: E402

NS = "bench"


class FileStore:
    """skembed's store, as BertPooledEmbedder uses it."""

    name = "skembed files"

    def __init__(self, directory):
        self.store = EmbeddingCache(directory)

    def put(self, keys, vectors):
        self.store.put_many(NS, keys, vectors)

    def get(self, keys):
        return self.store.get_many(NS, keys)

    def close(self):
        pass


class DiskCacheStore:
    """diskcache.Cache (SQLite, WAL), one row per key as raw float32 bytes."""

    name = "diskcache"

    def __init__(self, directory):
        import diskcache

        self.cache = diskcache.Cache(str(directory))

    def put(self, keys, vectors):
        with self.cache.transact():
            for k, v in zip(keys, vectors, strict=True):
                self.cache.set(f"{NS}/{k}", v.tobytes())

    def get(self, keys):
        out = []
        for k in keys:
            b = self.cache.get(f"{NS}/{k}")
            out.append(None if b is None else np.frombuffer(b, np.float32))
        return out

    def close(self):
        self.cache.close()


STORES = {"files": FileStore, "diskcache": DiskCacheStore}


def make_rows(n, width, seed=0):
    keys = [text_hash(f"document {seed}-{i}") for i in range(n)]
    rng = np.random.default_rng(seed)
    return keys, rng.standard_normal((n, width), dtype=np.float32)


def write_all(kind, directory, keys, vectors, batch):
    store = STORES[kind](directory)
    t0 = time.perf_counter()
    for i in range(0, len(keys), batch):
        store.put(keys[i : i + batch], vectors[i : i + batch])
    seconds = time.perf_counter() - t0
    store.close()
    return seconds


def _concurrent_writer(args):
    kind, directory, n, width, batch, seed, barrier = args
    keys, vectors = make_rows(n, width, seed)
    store = STORES[kind](directory)
    barrier.wait()  # all processes write at once, after their start-up
    t0 = time.time()
    for i in range(0, n, batch):
        store.put(keys[i : i + batch], vectors[i : i + batch])
    t1 = time.time()
    store.close()
    return t0, t1


def concurrent_write(kind, directory, n, width, batch, processes):
    ctx = multiprocessing.get_context("spawn")
    per = n // processes
    with ctx.Manager() as manager, ctx.Pool(processes) as pool:
        barrier = manager.Barrier(processes)
        spans = pool.map(
            _concurrent_writer,
            [(kind, str(directory), per, width, batch, 100 + p, barrier) for p in range(processes)],
            chunksize=1,
        )
    return max(t1 for _, t1 in spans) - min(t0 for t0, _ in spans), per * processes


def lookups(kind, directory, keys, vectors, rng):
    store = STORES[kind](directory)
    probe = [keys[i] for i in rng.choice(len(keys), 100, replace=False)]
    t0 = time.perf_counter()
    found = store.get(probe)  # a fresh store: the first lookup
    first = time.perf_counter() - t0
    assert all(f is not None for f in found)
    hit, miss = [], []
    for r in range(20):
        probe_idx = rng.choice(len(keys), 100, replace=False)
        t0 = time.perf_counter()
        found = store.get([keys[i] for i in probe_idx])
        hit.append((time.perf_counter() - t0) / 100)
        np.testing.assert_array_equal(np.stack(found), vectors[probe_idx])
        absent = [text_hash(f"absent {r}-{i}") for i in range(100)]
        t0 = time.perf_counter()
        found = store.get(absent)
        miss.append((time.perf_counter() - t0) / 100)
        assert all(f is None for f in found)
    store.close()
    return first, min(hit), min(miss)


def du_mb(directory):
    return sum(p.stat().st_size for p in __import__("pathlib").Path(directory).rglob("*")) / 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-entries", type=int, default=100_000)
    parser.add_argument("--width", type=int, default=384)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1000, 32])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dir", default=None, help="where to write (default: a temporary dir)")
    args = parser.parse_args(argv)

    kinds = ["files"]
    try:
        import diskcache

        kinds.append("diskcache")
        print(f"diskcache {diskcache.__version__}, SQLite {__import__('sqlite3').sqlite_version}")
    except ImportError:
        print("diskcache is not installed: only skembed's files are measured")
    keys, vectors = make_rows(args.n_entries, args.width)
    print(
        f"{args.n_entries} entries x {args.width} float32 "
        f"({vectors.nbytes / 1e6:.0f} MB of vectors); load average before: "
        f"{open('/proc/loadavg').read().split()[:3]}"
    )
    root = tempfile.mkdtemp(prefix="bench_cache_", dir=args.dir)
    rows = []
    try:
        for batch in args.batch_sizes:
            for kind in kinds:
                best = {}
                for rep in range(args.repeats):
                    d = os.path.join(root, f"{kind}-{batch}-{rep}")
                    w = write_all(kind, d, keys, vectors, batch)
                    first, hit, miss = lookups(kind, d, keys, vectors, np.random.default_rng(rep))
                    dc = os.path.join(root, f"{kind}-{batch}-{rep}-conc")
                    wc, nc = concurrent_write(
                        kind, dc, args.n_entries, args.width, batch, args.processes
                    )
                    size = du_mb(d)
                    res = {
                        "write": args.n_entries / w,
                        "write_conc": nc / wc,
                        "first": first,
                        "hit": hit * 1e6,
                        "miss": miss * 1e6,
                        "mb": size,
                    }
                    for k, v in res.items():
                        better = max if k.startswith("write") else min
                        best[k] = v if k not in best else better(best[k], v)
                    shutil.rmtree(d, ignore_errors=True)
                    shutil.rmtree(dc, ignore_errors=True)
                rows.append((kind, batch, best))
                print(f"  done: {kind}, batch {batch}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print()
    print(
        f"{'store':<14} {'batch':>6} {'write rows/s':>13} "
        f"{f'{args.processes} procs rows/s':>16} {'first lookup s':>15} "
        f"{'hit µs/key':>11} {'miss µs/key':>12} {'disk MB':>8}"
    )
    for kind, batch, r in rows:
        print(
            f"{STORES[kind].name:<14} {batch:>6} {r['write']:>13,.0f} {r['write_conc']:>16,.0f} "
            f"{r['first']:>15.3f} {r['hit']:>11.2f} {r['miss']:>12.2f} {r['mb']:>8.1f}"
        )
    by = {(k, b): r for k, b, r in rows}
    if "diskcache" in kinds:
        print(
            "\nratios files / diskcache (> 1: files better for write; < 1: files better for time)"
        )
        for batch in args.batch_sizes:
            f, d = by[("files", batch)], by[("diskcache", batch)]
            print(
                f"  batch {batch}: write x{f['write'] / d['write']:.2f}, "
                f"{args.processes}-process write x{f['write_conc'] / d['write_conc']:.2f}, "
                f"first lookup x{f['first'] / d['first']:.2f}, hit x{f['hit'] / d['hit']:.3f}, "
                f"miss x{f['miss'] / d['miss']:.3f}"
            )
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()

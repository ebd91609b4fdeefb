"""A cache of document embeddings keyed by (model, pooling parameters, text hash).

Used by :class:`skembed.text.BertPooledEmbedder` through its ``cache``
parameter so that a grid search over a downstream classifier embeds each
document once across all folds and candidates:

- ``cache="memory"``: one in-memory store shared by the whole process (it
  survives ``clone()``, which every fold of ``GridSearchCV`` does);
- ``cache=<directory>``: entry files in that directory, shared by any number
  of processes at once (``GridSearchCV(n_jobs=k)`` workers, Dask workers on a
  shared file system) and across sessions;
- ``cache=EmbeddingCache(...)``: an explicit store (copies of the estimator
  share it: ``copy.deepcopy`` returns the same store).

On-disk layout
--------------
``<directory>/<namespace>/<digest>.npy``: one file per batch of new rows, a
standard ``.npy`` file (readable with ``numpy.load``) holding a 1-d structured
array with fields ``key`` (UTF-8 bytes) and ``vector`` (float, shape
``(width,)``). ``<digest>`` is the BLAKE2b-128 hex digest of the file's bytes:

- *No partial entry is ever read.* A writer writes ``.skembed-<name>.<random>.tmp``
  (a name readers never list) and renames it into place with ``os.replace``, which is
  atomic on POSIX file systems, NFS included (``utils._files.write_atomically``: a
  SIGTERM during the write removes the temporary file, and the next write into the
  directory removes those of killed processes). Entry files are never modified
  after that, so no lock is needed: readers and writers never wait.
- *Damage is detected.* A reader checks the digest of the bytes against the
  name (truncation, bit flips, an empty file) and the row count in the header
  against the file size, the fields and the width; a damaged file is skipped
  with one :class:`EmbeddingCacheWarning` naming it, moved aside to
  ``.<name>.damaged`` when the directory is writable (so other processes do not
  trip on it), and its rows are computed again and written to a new entry.
- *A failed write loses nothing.* A read-only directory or a full disk gives
  one warning per store and kind of error; the rows stay in memory and the
  caller gets its embeddings.

Two processes that compute the same rows at once both write an entry; a
reader keeps the first row it meets for a key, and rows of one key are equal
up to the non-determinism of the model itself.

Why files and not an SQLite-backed store such as ``diskcache``
(``benchmarks/bench_cache.py``): for 10^5 rows of 384 float32 the files write
4x faster (6x with 4 processes) and hit 8x faster, at the price of reading and
checking a namespace's entries once per process (about 1 s for 10^5 rows).
More decisive: a cache directory on a network file system (the shared
directory of Dask workers) needs no locks, only the atomic rename NFS
provides, whereas SQLite's WAL mode does not work over a network file system
and its locking there is unreliable; and a read-only, pre-filled cache can be
read, whereas ``diskcache.Cache`` writes when it opens ("attempt to write a
readonly database").

What a directory store trusts (as ssh does with its keys): it reads the entries
of a directory only when the directory and the namespace's directory belong to
the user running the process (or root) and no one else can write them (no
group or other write bit), because anyone who can write there can plant an
entry that replaces a cached vector. Otherwise it warns once and reads
nothing there (``chmod go-w``, or use a private directory). It creates its
directories with mode 0700. It reads regular files only: a FIFO, device or
symbolic link named like an entry is skipped (opened with ``O_NOFOLLOW`` and
``O_NONBLOCK`` and checked with ``fstat``), so nothing there can make
``transform`` hang or read elsewhere.

A process holds the rows of the namespaces it has looked up in memory (4 bytes
per dimension per row). An NFS client may list a new entry only after its
attribute cache expires; until then its rows are computed again, never wrong.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
import threading
import warnings
from pathlib import Path

import numpy as np

from ...exceptions import EmbeddingCacheWarning
from ...utils._caches import register_cache
from ...utils._files import write_atomically

__all__ = ["EmbeddingCache", "EmbeddingCacheWarning", "get_cache", "text_hash"]

_DIGEST_SIZE = 16
_ENTRY_NAME = re.compile(rf"[0-9a-f]{{{2 * _DIGEST_SIZE}}}\.npy")


def text_hash(text: str) -> str:
    """BLAKE2b-128 hex digest of the UTF-8 bytes of ``text``.

    Parameters
    ----------
    text : str
        Any string; lone surrogates are encoded with ``surrogatepass``.

    Returns
    -------
    digest : str
        32 lowercase hex characters.

    Examples
    --------
    >>> text_hash("hello")
    '46fb7408d4f285228f4af516ea25851b'
    """
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST_SIZE
    ).hexdigest()


def _digest(data) -> str:
    return hashlib.blake2b(data, digest_size=_DIGEST_SIZE).hexdigest()


def encode_entry(keys, vectors) -> bytes:
    """The bytes of one entry file: a ``.npy`` structured array (key, vector).

    Parameters
    ----------
    keys : list of str, length n
        No key may contain the NUL character.
    vectors : numpy.ndarray of shape (n, width)
        Any float dtype; stored little-endian.

    Returns
    -------
    data : bytes
    """
    encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
    if any(b"\x00" in k for k in encoded):
        raise ValueError("Embedding cache keys must not contain the NUL character.")
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.dtype.kind != "f":
        raise ValueError(
            f"Embedding cache rows must be a 2-d float array; got shape {vectors.shape} "
            f"and dtype {vectors.dtype}."
        )
    dtype = np.dtype(
        [
            ("key", f"S{max(map(len, encoded), default=1) or 1}"),
            ("vector", vectors.dtype.newbyteorder("<"), (vectors.shape[1],)),
        ]
    )
    table = np.empty(len(encoded), dtype)
    table["key"] = encoded
    table["vector"] = vectors
    buf = io.BytesIO()
    np.lib.format.write_array(buf, table, allow_pickle=False)
    return buf.getvalue()


class DamagedEntry(ValueError):
    """An entry file failed a check; the message says which."""


def decode_entry(data: bytes, name: str):
    """Check and read the bytes of an entry file named ``name``.

    Parameters
    ----------
    data : bytes
        The whole file.
    name : str
        Its file name, ``<digest>.npy``.

    Returns
    -------
    keys : list of str, length n
    vectors : numpy.ndarray of shape (n, width)
        A read-only view of ``data``.

    Raises
    ------
    DamagedEntry
        Empty file, digest mismatch (truncated or altered bytes), not a
        ``.npy`` structured array of (key, vector), or a header whose row
        count disagrees with the file size.
    """
    if not data:
        raise DamagedEntry("empty file")
    if _digest(data) != name[: 2 * _DIGEST_SIZE]:
        raise DamagedEntry(f"checksum mismatch ({len(data)} bytes; truncated or altered)")
    fp = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(fp)
        read_header = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }.get(version)
        if read_header is None:
            raise ValueError(f"unsupported .npy version {version}")
        shape, fortran_order, dtype = read_header(fp)
    except ValueError as exc:
        raise DamagedEntry(f"not a .npy file ({exc})") from None
    fields = dtype.fields or {}
    if (
        dtype.names != ("key", "vector")
        or fields["key"][0].kind != "S"
        or fields["vector"][0].subdtype is None
        or fields["vector"][0].subdtype[0].kind != "f"
        or len(fields["vector"][0].shape) != 1
        or len(shape) != 1
        or fortran_order
    ):
        raise DamagedEntry(f"not an entry table (dtype {dtype}, shape {shape})")
    n_rows, offset = shape[0], fp.tell()
    if len(data) - offset != n_rows * dtype.itemsize:
        raise DamagedEntry(
            f"inconsistent lengths: the header announces {n_rows} rows of {dtype.itemsize} "
            f"bytes, the file holds {len(data) - offset} bytes of rows"
        )
    table = np.frombuffer(data, dtype, count=n_rows, offset=offset)
    try:
        keys = [k.decode("utf-8", "surrogatepass") for k in table["key"].tolist()]
    except UnicodeDecodeError as exc:
        raise DamagedEntry(f"a key is not UTF-8 ({exc})") from None
    return keys, table["vector"]


class EmbeddingCache:
    """In-memory or on-disk store of embedding rows, safe for concurrent processes.

    Parameters
    ----------
    directory : str, os.PathLike or None, default=None
        ``None`` keeps the rows in memory only; a directory (created if
        needed) also writes every batch of new rows as an entry file
        ``<namespace>/<digest>.npy`` and reads the entries of other processes
        when a key is not found in memory. Any number of processes may read
        and write one directory at once (see the module's notes).

    Attributes
    ----------
    hits, misses : int
        Number of rows found / not found since creation.
    damaged : list of pathlib.Path
        Entry files found damaged (and skipped) by this store.

    Notes
    -----
    A *namespace* is a digest of the model identity and every parameter that
    changes the vectors (pooling, layers, max_length, truncation, ...), so
    rows of different configurations never mix. Rows are keyed by
    :func:`text_hash` of the document. All rows of one namespace must have one
    width; an entry of another width is treated as damaged.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     EmbeddingCache(tmp).put_many("ns", ["a", "b"], np.eye(2, dtype=np.float32))
    ...     other = EmbeddingCache(tmp)  # e.g. another process
    ...     found = other.get_many("ns", ["b", "c"])
    >>> found[0].tolist(), found[1], other.hits, other.misses
    ([0.0, 1.0], None, 1, 1)
    """

    def __init__(self, directory=None):
        self.directory = None if directory is None else Path(os.fspath(directory)).expanduser()
        self._rows: dict[str, dict[str, np.ndarray]] = {}
        self._widths: dict[str, int] = {}
        self._seen: dict[str, set] = {}
        self._write_errors: set = set()
        self._lock = threading.RLock()
        self.hits = 0
        self.misses = 0
        self.damaged: list[Path] = []

    def __repr__(self):
        where = "memory" if self.directory is None else str(self.directory)
        return f"EmbeddingCache({where!r})"

    def __deepcopy__(self, memo):
        # a handle to a shared store: clone()/deepcopy must share it, not copy it
        return self

    def __reduce__(self):
        # Pickled without its rows. A directory store unpickles to the one store of that
        # directory in the receiving process (joblib/Dask workers: the rows read from disk
        # serve every task there); a memory store unpickles empty.
        if self.directory is None:
            return (EmbeddingCache, ())
        return (get_cache, (str(self.directory),))

    def __len__(self):
        return sum(len(rows) for rows in self._rows.values())

    def clear(self):
        """Forget every row held in memory (entry files on disk are kept)."""
        with self._lock:
            self._rows.clear()
            self._widths.clear()
            self._seen.clear()

    # ------------------------------------------------------------------ reading
    def _untrusted(self, folder):
        """Why ``folder`` may not be read (others can write it), or ``None``."""
        try:
            st = os.stat(folder, follow_symlinks=False)
        except OSError:
            return None  # missing: nothing to read
        if not stat.S_ISDIR(st.st_mode):
            return "it is not a directory (a symbolic link?)"
        if hasattr(os, "geteuid") and st.st_uid not in (os.geteuid(), 0):
            return f"it belongs to user id {st.st_uid}, not to this process's user"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"others can write it (mode {stat.S_IMODE(st.st_mode):o})"
        return None

    def _load_entries(self, namespace):
        ns_dir = self.directory / namespace
        for folder in (self.directory, ns_dir):
            reason = self._untrusted(folder)
            if reason is not None:
                if ("untrusted", str(folder)) not in self._write_errors:
                    self._write_errors.add(("untrusted", str(folder)))
                    self._warn(
                        f"The embedding cache directory {folder} is not read: {reason}, so "
                        "an entry planted there could replace a cached vector. Use a "
                        "directory only you can write (chmod go-w), or cache='memory'.",
                        stacklevel=4,
                    )
                return
        try:
            names = sorted(
                e.name
                for e in os.scandir(ns_dir)
                if _ENTRY_NAME.fullmatch(e.name) and e.is_file(follow_symlinks=False)
            )
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            self._warn(
                f"Cannot list the embedding cache directory {ns_dir} ({exc}); its entries are "
                "not read.",
                stacklevel=4,
            )
            return
        seen = self._seen.setdefault(namespace, set())
        rows = self._rows.setdefault(namespace, {})
        for name in names:
            if name in seen:
                continue
            seen.add(name)  # read once per process, damaged or not
            path = ns_dir / name
            try:
                keys, vectors = decode_entry(_read_regular(path), name)
                width = self._widths.setdefault(namespace, vectors.shape[1])
                if vectors.shape[1] != width:
                    raise DamagedEntry(
                        f"rows of width {vectors.shape[1]} where this namespace has {width}"
                    )
            except FileNotFoundError:  # moved aside as damaged by another process
                continue
            except (OSError, DamagedEntry) as exc:
                self._skip_damaged(path, exc)
                continue
            for key, vec in zip(keys, vectors, strict=True):
                rows.setdefault(key, vec)

    def _skip_damaged(self, path, exc):
        self.damaged.append(path)
        where = ""
        if isinstance(exc, DamagedEntry):  # set it aside so that other readers do not trip on it
            aside = path.with_name(f".{path.name}.damaged")
            try:
                os.replace(path, aside)
                where = f"; moved to {aside.name}"
            except OSError:
                pass
        state = "damaged" if isinstance(exc, DamagedEntry) else "unreadable"
        self._warn(
            f"Skipped {state} embedding cache entry {path} ({exc}){where}. Its rows are "
            "computed again and stored in a new entry.",
            stacklevel=5,
        )

    def get_many(self, namespace, keys):
        """Look rows up.

        Parameters
        ----------
        namespace : str
        keys : list of str

        Returns
        -------
        found : list of numpy.ndarray or None
            The stored row of each key (read-only), ``None`` where absent.
        """
        with self._lock:
            rows = self._rows.setdefault(namespace, {})
            if self.directory is not None and any(k not in rows for k in keys):
                self._load_entries(namespace)
            found = [rows.get(k) for k in keys]
            n_hit = sum(v is not None for v in found)
            self.hits += n_hit
            self.misses += len(keys) - n_hit
        return found

    # ------------------------------------------------------------------ writing
    def put_many(self, namespace, keys, vectors):
        """Store rows (in memory, and in a new entry file for a directory store).

        A write that fails (read-only directory, full disk, ...) gives an
        :class:`EmbeddingCacheWarning` (once per store and kind of error); the
        rows are kept in memory all the same.

        Parameters
        ----------
        namespace : str
        keys : list of str, length n
        vectors : numpy.ndarray of shape (n, width), float
        """
        if not len(keys):
            return
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise ValueError(
                f"put_many needs one row per key: {len(keys)} keys, rows of shape {vectors.shape}."
            )
        with self._lock:
            rows = self._rows.setdefault(namespace, {})
            for key, vec in zip(keys, vectors, strict=True):
                rows[key] = vec
            self._widths.setdefault(namespace, vectors.shape[1])
            if self.directory is not None:
                self._write_entry(namespace, encode_entry(keys, vectors))

    def _write_entry(self, namespace, data):
        ns_dir = self.directory / namespace
        name = f"{_digest(data)}.npy"
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            ns_dir.mkdir(mode=0o700, exist_ok=True)
            # renamed into place: readers see all of it or nothing, and a fault (SIGTERM
            # included) leaves no partial entry or temporary file behind
            write_atomically(ns_dir / name, lambda tmp: Path(tmp).write_bytes(data))
        except OSError as exc:
            kind = (type(exc), exc.errno)
            if kind not in self._write_errors:
                self._write_errors.add(kind)
                reason = os.strerror(exc.errno) if exc.errno else str(exc)
                self._warn(
                    f"Cannot write to the embedding cache directory {ns_dir} "
                    f"({type(exc).__name__}: {reason}); the embeddings are returned but not "
                    "stored on disk"
                    + (" (the disk is full)" if exc.errno == errno.ENOSPC else "")
                    + ". Use a writable directory, or cache='memory'.",
                    stacklevel=4,
                )
            return
        self._seen.setdefault(namespace, set()).add(name)

    @staticmethod
    def _warn(message, stacklevel):
        # stacklevel counts frames from this one: callers pass the level of the
        # function that called get_many/put_many
        warnings.warn(message, EmbeddingCacheWarning, stacklevel=stacklevel)


def _read_regular(path):
    """The bytes of ``path`` if it is a regular file (not a FIFO, device or link)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DamagedEntry("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


_MEMORY = EmbeddingCache()
_DIRECTORIES: dict = {}
_DIR_LOCK = threading.Lock()


def get_cache(cache):
    """Turn a ``cache`` parameter into an :class:`EmbeddingCache` (or ``None``).

    Parameters
    ----------
    cache : None, "memory", str, os.PathLike or EmbeddingCache
        ``"memory"`` is the process-wide in-memory store; a path is a directory
        store (one object per directory in this process).

    Returns
    -------
    store : EmbeddingCache or None

    Raises
    ------
    NotADirectoryError
        When the path exists and is not a directory.
    TypeError
        For any other value.

    Examples
    --------
    >>> get_cache("memory") is get_cache("memory")
    True
    >>> get_cache(None) is None
    True
    """
    if cache is None:
        return None
    if isinstance(cache, EmbeddingCache):
        return cache
    if isinstance(cache, str) and cache == "memory":
        return _MEMORY
    if isinstance(cache, (str, os.PathLike)):
        path = Path(os.fspath(cache)).expanduser().resolve()
        if path.exists() and not path.is_dir():
            raise NotADirectoryError(f"cache={cache!r} exists and is not a directory.")
        with _DIR_LOCK:
            return _DIRECTORIES.setdefault(str(path), EmbeddingCache(path))
    raise TypeError(
        f"cache must be None, 'memory', a directory path or an EmbeddingCache; got "
        f"{type(cache).__name__}."
    )


@register_cache
def clear_stores():
    """Forget the rows that the process-wide stores hold in memory: the ``"memory"`` store and
    every directory store (their entry files on disk are kept)."""
    _MEMORY.clear()
    with _DIR_LOCK:
        stores = list(_DIRECTORIES.values())
    for store in stores:
        store.clear()

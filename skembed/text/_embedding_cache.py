"""A cache of document embeddings keyed by (model, pooling parameters, text hash).

Used by :class:`skembed.text.BertPooledEmbedder` through its ``cache``
parameter so that a grid search over a downstream classifier embeds each
document once across all folds and candidates:

- ``cache="memory"``: one in-memory store shared by the whole process (it
  survives ``clone()``, which every fold of ``GridSearchCV`` does);
- ``cache=<directory>``: ``.npz`` shard files in that directory, shared by
  processes (e.g. ``GridSearchCV(n_jobs=k)`` workers) and across sessions;
- ``cache=EmbeddingCache(...)``: an explicit store (copies of the estimator
  share it: ``copy.deepcopy`` returns the same store).

Only numpy is used here; shards are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from pathlib import Path

import numpy as np

__all__ = ["EmbeddingCache", "get_cache", "text_hash"]


def text_hash(text: str) -> str:
    """BLAKE2b-128 hex digest of the UTF-8 bytes of ``text``."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class EmbeddingCache:
    """In-memory or on-disk store of embedding rows.

    Parameters
    ----------
    directory : str, os.PathLike or None, default=None
        ``None`` keeps the rows in memory only; a directory (created if
        needed) also writes every batch of new rows as a shard file
        ``<namespace>/<uuid>.npz`` (keys and a float32/float64 matrix) and reads
        the shards of other processes when a key is not found in memory.

    Attributes
    ----------
    hits, misses : int
        Number of rows found / not found since creation.

    Notes
    -----
    A *namespace* is a digest of the model identity and every parameter that
    changes the vectors (pooling, layers, max_length, truncation, ...), so
    rows of different configurations never mix. Rows are keyed by
    :func:`text_hash` of the document.
    """

    def __init__(self, directory=None):
        self.directory = None if directory is None else Path(os.fspath(directory)).expanduser()
        self._rows: dict[str, dict[str, np.ndarray]] = {}
        self._seen_shards: dict[str, set] = {}
        self._lock = threading.RLock()
        self.hits = 0
        self.misses = 0

    def __repr__(self):
        where = "memory" if self.directory is None else str(self.directory)
        return f"EmbeddingCache({where!r})"

    def __deepcopy__(self, memo):
        # a handle to a shared store: clone()/deepcopy must share it, not copy it
        return self

    def __getstate__(self):
        return {"directory": self.directory}

    def __setstate__(self, state):
        self.__init__(state["directory"])

    def __len__(self):
        return sum(len(rows) for rows in self._rows.values())

    def clear(self):
        """Forget every row held in memory (shard files on disk are kept)."""
        with self._lock:
            self._rows.clear()
            self._seen_shards.clear()

    def _ns_dir(self, namespace):
        return self.directory / namespace

    def _load_shards(self, namespace):
        if self.directory is None:
            return
        ns_dir = self._ns_dir(namespace)
        if not ns_dir.is_dir():
            return
        seen = self._seen_shards.setdefault(namespace, set())
        rows = self._rows.setdefault(namespace, {})
        for shard in sorted(ns_dir.glob("*.npz")):
            if shard.name in seen:
                continue
            try:
                with np.load(shard, allow_pickle=False) as data:
                    keys, vectors = data["keys"], data["vectors"]
            except (OSError, ValueError, KeyError):  # partially written or foreign file
                continue
            for key, vec in zip(keys.tolist(), vectors, strict=True):
                rows.setdefault(key, vec)
            seen.add(shard.name)

    def get_many(self, namespace, keys):
        """Look rows up.

        Parameters
        ----------
        namespace : str
        keys : list of str

        Returns
        -------
        found : list of numpy.ndarray or None
            The stored row of each key, ``None`` where absent.
        """
        with self._lock:
            rows = self._rows.setdefault(namespace, {})
            if self.directory is not None and any(k not in rows for k in keys):
                self._load_shards(namespace)
            found = [rows.get(k) for k in keys]
        n_hit = sum(v is not None for v in found)
        self.hits += n_hit
        self.misses += len(keys) - n_hit
        return found

    def put_many(self, namespace, keys, vectors):
        """Store rows.

        Parameters
        ----------
        namespace : str
        keys : list of str, length n
        vectors : numpy.ndarray of shape (n, width)
        """
        if not len(keys):
            return
        vectors = np.asarray(vectors)
        with self._lock:
            rows = self._rows.setdefault(namespace, {})
            for key, vec in zip(keys, vectors, strict=True):
                rows[key] = vec
            if self.directory is not None:
                ns_dir = self._ns_dir(namespace)
                ns_dir.mkdir(parents=True, exist_ok=True)
                name = f"{uuid.uuid4().hex}.npz"
                tmp = ns_dir / f".{name}.tmp.npz"
                np.savez(tmp, keys=np.asarray(keys), vectors=vectors)
                os.replace(tmp, ns_dir / name)
                self._seen_shards.setdefault(namespace, set()).add(name)


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
    TypeError
        For any other value.
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

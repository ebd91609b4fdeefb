"""Compiled CPU kernels (numba only; no scikit-learn, no torch).

- :mod:`skembed.kernels.word2vec`: skip-gram / CBOW training of Word2Vec and FastText;
- :mod:`skembed.kernels.doc2vec`: paragraph vectors (training parts and inference);
- :mod:`skembed.kernels._scheduler`: the word2vec family's one phase loop;
- :mod:`skembed.kernels.fasttext`: fastText's character n-grams and hashes;
- :mod:`skembed.kernels._sampling`: noise, subsampling, Huffman and sigmoid tables;
- :mod:`skembed.kernels.glove`: GloVe's AdaGrad epochs.

Importing this package does not import numba; its modules do. It does drop numba's
on-disk cache of these kernels when their source changed (:func:`_drop_stale_cache`).
:func:`launch_threads` starts numba's thread pool with libgomp's passive wait policy.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

#: environment variables by which a user chooses libgomp's wait policy (then left alone)
_WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
_LAUNCH_LOCK = threading.Lock()
_launched = False


def launch_threads():
    """Start numba's thread pool, its OpenMP threads sleeping when idle (``PASSIVE``).

    The deterministic training of the word2vec family ends every phase at a barrier (one
    parallel region per phase). libgomp's threads spin there before they sleep; on a
    machine where another process shares the cores, a spinning thread takes the CPU from
    its descheduled sibling, which the barrier waits for. Measured with
    ``python benchmarks/bench_word2vec.py --corpora bbc --arch cbow --no-cold --no-eval``
    (BBC News, 2 threads, 2-core AMD EPYC, a second CPU-bound process running, load
    1.6-2.2), CBOW's ratio to gensim's words/s was x0.83 / x0.86 with spinning threads and
    x1.41 / x1.21 with ``OMP_WAIT_POLICY=PASSIVE``; on the quiet machine the two were
    within the run-to-run noise (skip-gram x1.80 / x1.82 vs x1.80 / x1.84).

    So the first call sets ``OMP_WAIT_POLICY=PASSIVE`` while numba loads its OpenMP
    runtime (libgomp reads it once, when it is loaded) and removes it again, so that no
    other library (torch's own libgomp, child processes) sees it. Nothing is changed
    when the user set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``, when numba's threading
    layer is not OpenMP, or when the pool was already started. Idempotent and thread-safe.

    Returns
    -------
    passive : bool
        True if this call started the pool with the passive policy set.
    """
    global _launched
    with _LAUNCH_LOCK:
        if _launched:
            return False
        from numba.np.ufunc import parallel

        ours = not any(name in os.environ for name in _WAIT_VARIABLES)
        if ours:
            os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        try:
            parallel._launch_threads()
        finally:
            if ours:
                os.environ.pop("OMP_WAIT_POLICY", None)
        _launched = True
        return ours


_STAMP = "skembed-kernels-source.sha256"


def _drop_stale_cache(here=None):
    """Delete numba's cached machine code of ``kernels/`` if any kernel source changed.

    numba checks a cached function against its *own* file's time stamp and size only; a
    kernel that inlines helpers of another file (the phase loop of ``_scheduler.py`` calls
    the train parts of ``word2vec.py``; every train part inlines ``_core.py``) would load
    stale machine code after an edit of that other file. So a hash of every ``*.py`` here
    is kept next to the cache (``__pycache__/skembed-kernels-source.sha256``), and when it
    differs every ``*.nbi``/``*.nbc`` there is deleted: the next call compiles afresh.
    Costs one read of the sources (~100 kB) per process. Where the folder is not writable
    (numba then caches elsewhere, and the sources of an installed release do not change),
    nothing is done.

    Parameters
    ----------
    here : pathlib.Path, optional
        The kernels folder (tests pass a copy); default: this package's folder.

    Returns
    -------
    n_deleted : int
        Cache files deleted (0 when the stamp matched or nothing could be written).
    """
    here = Path(__file__).parent if here is None else Path(here)
    cache = here / "__pycache__"
    try:
        digest = hashlib.sha256()
        for path in sorted(here.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        digest = digest.hexdigest()
        stamp = cache / _STAMP
        if stamp.is_file() and stamp.read_text() == digest:
            return 0
        n_deleted = 0
        for pattern in ("*.nbi", "*.nbc"):
            for path in cache.glob(pattern):
                path.unlink(missing_ok=True)
                n_deleted += 1
        cache.mkdir(exist_ok=True)
        tmp = cache / f"{_STAMP}.{hashlib.sha256(digest.encode()).hexdigest()[:8]}.tmp"
        tmp.write_text(digest)
        tmp.replace(stamp)
        return n_deleted
    except OSError:
        return 0


_drop_stale_cache()

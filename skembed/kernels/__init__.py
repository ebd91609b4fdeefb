"""Compiled CPU kernels (numba only; no scikit-learn, no torch).

- :mod:`skembed.kernels.word2vec`: skip-gram / CBOW training of Word2Vec and FastText;
- :mod:`skembed.kernels.doc2vec`: paragraph vectors (training parts and inference);
- :mod:`skembed.kernels.scheduler`: the word2vec family's one phase loop and its entry points
  (``train_word2vec_chunk``, ``train_doc2vec_chunk``, ``training_partition``);
- :mod:`skembed.kernels.fasttext`: fastText's character n-grams and hashes;
- :mod:`skembed.kernels.sampling`: noise, subsampling, Huffman and sigmoid tables;
- :mod:`skembed.kernels.glove`: GloVe's AdaGrad epochs.

Importing this package does not import numba; its modules do. It does drop numba's
on-disk cache of these kernels when their source changed (:func:`_drop_stale_cache`).
:func:`launch_threads` starts numba's thread pool with a short libgomp spin before sleeping.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from ..utils._files import write_atomically

#: environment variables by which a user chooses libgomp's wait policy (then left alone)
_WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
#: libgomp's spins before an idle thread sleeps, set while numba loads it (:func:`launch_threads`)
SPIN_COUNT = 10_000
#: most parts the deterministic word2vec-family training splits a chunk into (the estimators'
#: ``n_parts`` range; :func:`skembed.kernels._phases.training_partition` says why)
MAX_DETERMINISTIC_PARTS = 16
#: the estimators' default ``n_parts``: the most parts that train stably at full phase length
DEFAULT_PARTS = 2
_LAUNCH_LOCK = threading.Lock()
_launched = False


def launch_threads():
    """Start numba's thread pool with libgomp's threads spinning at most :data:`SPIN_COUNT`
    times before they sleep (``GOMP_SPINCOUNT``; libgomp's default is 300,000).

    The deterministic training of the word2vec family runs on Python threads with its own
    barrier (:mod:`skembed.kernels._sync`); the pool serves GloVe and Doc2Vec's inference. libgomp's idle threads spin at a region's end before they sleep; where
    another process shares the cores, a spinning thread takes the CPU from its descheduled
    sibling, which the barrier then waits for. Measured with ``python benchmarks/bench_word2vec.py --corpora bbc --no-cold
    --no-eval --tools gensim,skembed`` (BBC News, 2 threads, 2-core AMD EPYC, a second
    CPU-bound process running, load 1.5-2.7), training words/s of skembed, two runs each:

    ==================  ===============  ===============  ===============
    libgomp setting     CBOW             skip-gram        torch MLP, quiet
    ==================  ===============  ===============  ===============
    default (300,000)   1.02M / 1.15M    0.54M / 0.55M    302k-312k rows/s
    spin count 30,000   1.21M / 1.34M    0.61M / 0.64M    299k-312k
    spin count 10,000   1.39M / 1.52M    0.65M / 0.68M    295k-311k
    spin count 3,000    (not run)        (not run)        249k-275k
    ``PASSIVE`` (0)     1.47M / 1.45M    (not run)        **114k-115k**
    ==================  ===============  ===============  ===============

    The last column is why the spin count is not 0: numba and torch load the same
    ``libgomp.so.1`` (the first one loaded serves both), and a small torch training loop
    (an autoencoder's 40-128-16-128-40 MLP, batches of 256, 2 threads) ran 2.7x slower with
    sleeping threads. With 10,000 it and MiniLM inference (49.9-51.3 vs 51.7 docs/s) were
    unchanged within the noise, and on the quiet machine skembed's own throughput too.

    So the first call sets ``GOMP_SPINCOUNT`` while numba loads its OpenMP runtime (libgomp
    reads it once, when it is loaded) and removes it again, so that child processes do not
    inherit it. Nothing is changed when the user set ``OMP_WAIT_POLICY`` or
    ``GOMP_SPINCOUNT``, when libgomp was already loaded (by torch, imported first: then its
    setting stays), when numba's threading layer is not OpenMP, or when the pool was already
    started. Idempotent and thread-safe.

    Returns
    -------
    set_here : bool
        True if this call started the pool with ``GOMP_SPINCOUNT`` set.
    """
    global _launched
    with _LAUNCH_LOCK:
        if _launched:
            return False
        try:  # numba's own entry point (what its first parallel call runs)
            from numba.np.ufunc.parallel import _launch_threads
        except ImportError:  # pragma: no cover - another numba layout: any pool query starts it
            from numba import get_num_threads as _launch_threads

        ours = not any(name in os.environ for name in _WAIT_VARIABLES)
        if ours:
            os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
        try:
            _launch_threads()
        finally:
            if ours:
                os.environ.pop("GOMP_SPINCOUNT", None)
        _launched = True
        return ours


_STAMP = "skembed-kernels-source.sha256"


def _drop_stale_cache(here=None):
    """Delete numba's cached machine code of ``kernels/`` if any kernel source changed.

    numba checks a cached function against its *own* file's time stamp and size only; a
    kernel that inlines helpers of another file (the phase loop of ``scheduler.py`` calls
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
        write_atomically(stamp, lambda tmp: Path(tmp).write_text(digest))
        return n_deleted
    except OSError:
        return 0


_drop_stale_cache()

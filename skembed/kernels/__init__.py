"""Compiled CPU kernels (numba only; no scikit-learn, no torch).

- :mod:`skembed.kernels.word2vec`: skip-gram / CBOW training of Word2Vec and FastText;
- :mod:`skembed.kernels.doc2vec`: paragraph vectors (training parts and inference);
- :mod:`skembed.kernels._scheduler`: the word2vec family's one phase loop;
- :mod:`skembed.kernels.fasttext`: fastText's character n-grams and hashes;
- :mod:`skembed.kernels._sampling`: noise, subsampling, Huffman and sigmoid tables;
- :mod:`skembed.kernels.glove`: GloVe's AdaGrad epochs.

Importing this package does not import numba; its modules do. It does drop numba's
on-disk cache of these kernels when their source changed (:func:`_drop_stale_cache`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

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

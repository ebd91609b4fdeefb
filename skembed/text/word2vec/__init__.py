"""The word2vec family: skip-gram/CBOW word vectors, fastText subwords, paragraph vectors.

- :class:`Word2VecTransformer` (``_word2vec``), :class:`FastTextTransformer` (``_fasttext``,
  with Facebook's file formats in ``_fasttext_io``), :class:`Doc2VecTransformer` (``_doc2vec``);
- ``_family``: the family's base (parameters, vocabulary, weights, kernel config);
- ``_training``: the trainer: corpus encoding, kernel tables, the one place engines are built,
  the epoch step and the numba engines that call the kernels;
- ``_engines``: the torch engines (torch, torch-batched, Doc2Vec's batched PV-DBOW);
- :func:`warm_up`: compile the common configurations' kernels, and those of the estimators
  that train on this family (node2vec's walks, implicit ALS), so that ``tools/setup.sh``,
  which runs it, leaves every default first fit only loading machine code.
"""

from ._doc2vec import Doc2VecTransformer
from ._fasttext import FastTextKeyedVectors, FastTextTransformer
from ._word2vec import Word2VecTransformer

__all__ = [
    "Doc2VecTransformer",
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "Word2VecTransformer",
]


#: (estimator, parameters) whose kernels :func:`warm_up` compiles: every estimator's defaults
#: and CBOW (the deterministic mode; ``lock_free=True`` and ``hs=1`` compile on first use)
WARM_UP = (
    ("Word2VecTransformer", {}),
    ("Word2VecTransformer", {"sg": 0}),
    ("FastTextTransformer", {}),
    ("Doc2VecTransformer", {}),
    ("Doc2VecTransformer", {"dm": 1}),
)


#: (name, kernel module) whose ``warm_up()`` :func:`warm_up` calls after the fits of
#: :data:`WARM_UP`: kernels of other estimators, compiled for the argument types those pass
#: (their packages sit above this one, so they are reached through ``skembed.kernels``)
WARM_UP_KERNELS = (
    ("Node2VecTransformer's walks", "walks"),
    ("InteractionEmbedder's ALS", "als"),
)


def warm_up(verbose=1):
    """Compile (or load from numba's disk cache) the kernels of the common configurations.

    ``tools/setup.sh`` runs it once after installing, so that a user's first fit loads
    machine code instead of compiling it (a few seconds per configuration; ``docs/install.md``
    gives the measured times). Besides the fits of :data:`WARM_UP` it compiles the kernels
    of :data:`WARM_UP_KERNELS`: ``Node2VecTransformer``'s random walks (its skip-gram is
    Word2Vec's default configuration) and ``InteractionEmbedder``'s ALS half-step.
    numba's cache is kept beside the installed kernels (``skembed/kernels/__pycache__``,
    or numba's user cache directory where that is not writable) and is checked against
    the sources (``skembed.kernels._drop_stale_cache``); with a warm cache this takes
    about a second per configuration.

    Parameters
    ----------
    verbose : int, default=1
        Print one line per configuration with its seconds.

    Returns
    -------
    seconds : list of float
        Wall seconds of each fit of :data:`WARM_UP`, then of each kernel of
        :data:`WARM_UP_KERNELS`, in order.
    """
    import time

    classes = {
        c.__name__: c for c in (Word2VecTransformer, FastTextTransformer, Doc2VecTransformer)
    }
    import numpy as np

    from ...kernels import als, walks
    from ...kernels.word2vec import prepare_chunk

    docs = [f"w{i % 7} w{i % 5} w{i % 3} w{i % 11} w{i % 2}" for i in range(40)]
    # a chunk of two pieces: chunks of 2 * 65,536 raw tokens and more are prepared on threads,
    # which count each piece's subsampling draws first (40 documents never get there)
    n = 1 << 17
    prepare_chunk(
        np.zeros(n, np.int32),
        np.array([0, n // 2, n]),
        np.zeros(1, np.int32),
        np.full(1, 0.5, np.float32),
        0,
        2,
    )
    seconds = []
    for name, params in WARM_UP:
        t0 = time.perf_counter()
        classes[name](min_count=1, epochs=1, vector_size=8, random_state=0, **params).fit(docs)
        seconds.append(time.perf_counter() - t0)
        if verbose:
            print(f"skembed warm-up: {name}({params}) {seconds[-1]:.1f} s", flush=True)
    for name, module in WARM_UP_KERNELS:
        t0 = time.perf_counter()
        {"walks": walks, "als": als}[module].warm_up()
        seconds.append(time.perf_counter() - t0)
        if verbose:
            print(f"skembed warm-up: {name} {seconds[-1]:.1f} s", flush=True)
    return seconds

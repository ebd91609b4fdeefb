"""Run skembed on a Dask cluster: searches, ``compare`` and partition-wise embedding.

``pip install "skembed[dask]"`` brings the engine (``dask``, ``distributed``,
``dask-ml``); the rest of skembed never imports dask. Three ways out of one
machine, all on an existing ``distributed`` scheduler:

* **Grid searches.** ``with joblib.parallel_backend("dask"):
  GridSearchCV(pipeline, grid, n_jobs=-1).fit(X, y)`` sends candidates x folds
  to the workers; :func:`skembed.model_selection.compare_embedders` takes
  ``scheduler=ADDRESS`` (``skembed compare --scheduler ADDRESS``) and submits
  one task per candidate x fold, each limited to its worker's threads
  (:func:`worker_threads`). (joblib runs everything in the calling process
  when the cluster has a single thread in all.)
  Worker processes started by a nanny have ``OMP_NUM_THREADS=1``, which is
  what ``n_jobs=None`` resolves to there, so estimators do not oversubscribe.
* **Embedding a large corpus.** :func:`transform` embeds a dask Series or
  ``dask.bag`` of documents partition by partition with a fitted estimator
  sent once to every worker (scattered). dask-ml's ``ParallelPostFit`` works
  too: ``ParallelPostFit(fitted).transform(ddf["text"])``; it pickles the
  estimator into the graph, which is cheap for skembed estimators (BERT
  pickles carry no weights unless ``store_weights=True``; each worker process
  loads them once, see ``skembed.text._hf.model_load_count``).
* **Training data from distributed storage.** ``fit`` of Word2Vec, FastText,
  Doc2Vec and GloVe takes a ``dask.bag`` or dask Series and streams it one
  partition at a time (:class:`skembed.text.corpus.DaskCorpus`). Training
  stays on one machine (see ``docs/scaling.md``).
"""

from __future__ import annotations

import numpy as np

from .text.corpus import DaskCorpus

__all__ = ["DaskCorpus", "connect", "transform", "worker_threads"]

#: seconds :func:`connect` waits for a scheduler before giving up
CONNECT_TIMEOUT = 5.0


def _require_distributed():
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - the dask extra is installed in CI
        raise ImportError(
            "Running on a Dask cluster needs dask and distributed: pip install 'skembed[dask]'."
        ) from exc
    return distributed


def connect(scheduler, *, timeout=CONNECT_TIMEOUT):
    """A ``distributed.Client`` for ``scheduler``, or a clear error within ``timeout``.

    Parameters
    ----------
    scheduler : str or distributed.Client
        A scheduler address (``"tcp://10.0.0.5:8786"``) or a client, returned as is.
    timeout : float, default=5.0
        Seconds to wait for the scheduler.

    Returns
    -------
    client : distributed.Client
        Connected; the caller closes it (unless it passed a client).

    Raises
    ------
    ConnectionError
        If no Dask scheduler answers at ``scheduler`` within ``timeout``
        seconds of wall time, whatever the reason: nothing listens, the
        address is malformed or does not resolve, the server accepts and
        never answers, or it speaks another protocol (the message names the
        address, the reason and how to start a scheduler).
    ImportError
        If ``distributed`` is not installed.

    Examples
    --------
    >>> from skembed.dask import connect
    >>> connect("tcp://127.0.0.1:9", timeout=1)
    Traceback (most recent call last):
    ...
    ConnectionError: No Dask scheduler answered at 'tcp://127.0.0.1:9' within 1 s: ...
    """
    distributed = _require_distributed()
    if isinstance(scheduler, distributed.Client):
        return scheduler
    if not isinstance(scheduler, str) or not scheduler:
        raise TypeError(
            f"scheduler must be an address such as 'tcp://host:8786' or a distributed.Client, "
            f"got {scheduler!r}."
        )
    import time

    def failed(reason):
        return ConnectionError(
            f"No Dask scheduler answered at {scheduler!r} within {timeout:g} s: start one "
            "(`dask scheduler` and `dask worker ADDRESS`, or distributed.LocalCluster()) "
            f"or check the address ({reason})."
        )

    start = time.monotonic()
    reason = _probe(scheduler, timeout)
    if reason is not None:
        raise failed(reason) from None
    left = max(timeout - (time.monotonic() - start), 1.0)
    try:
        return _bounded(
            lambda: distributed.Client(scheduler, timeout=left, set_as_default=False), left + 1.0
        )
    except (OSError, TimeoutError, ValueError, MemoryError) as exc:
        raise failed(type(exc).__name__) from None


def _bounded(call, seconds):
    """``call()`` in a helper thread, or ``TimeoutError`` after ``seconds`` of wall time."""
    import threading

    box = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="skembed-dask-connect")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _probe(address, timeout):
    """``None`` if a Dask scheduler answers an identity request at ``address`` within
    ``timeout`` seconds of wall time, else the reason (a few words).

    The whole exchange (connection, distributed's handshake, one request) runs under one
    deadline in its own event loop: a socket that accepts and never answers, or a server
    speaking another protocol (HTTP bytes read as frame lengths made distributed try to
    allocate exabytes), ends as a reason, not a hang or a ``MemoryError``.
    """
    import asyncio

    from distributed.comm import connect as comm_connect

    async def identity():
        comm = await comm_connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(identity(), timeout)

    try:
        reply = _bounded(lambda: asyncio.run(bounded()), timeout + 1.0)
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except MemoryError:
        return "the server does not speak Dask's protocol"
    except Exception as exc:  # noqa: BLE001 - every failure is reported the same way
        return f"{type(exc).__name__}: {exc}"[:200]
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        return "the server at that address is not a Dask scheduler"
    return None


def worker_threads(default=None):
    """Threads of the Dask worker running the calling task, else ``default``.

    Parameters
    ----------
    default : int or None, default=None
        Returned outside a Dask worker.

    Returns
    -------
    n_threads : int or None
        The worker's thread count, or ``None`` outside a Dask worker.

    Examples
    --------
    >>> from skembed.dask import worker_threads
    >>> worker_threads(default=3)  # not inside a Dask worker
    3
    """
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return default
    state = getattr(worker, "state", worker)
    return int(getattr(state, "nthreads", None) or getattr(worker, "nthreads", 1))


def _collection_kind(collection):
    """``"Series"``, ``"DataFrame"``, ``"Bag"``, ... for a dask collection, else ``None``."""
    if not hasattr(collection, "__dask_graph__"):
        return None
    return type(collection).__name__


def _output_dtype(estimator):
    return np.dtype(getattr(estimator, "dtype", None) or np.float32)


def _embed_partition(estimator, docs, dtype, cache=None):
    if cache is not None and getattr(estimator, "cache", cache) != cache:
        # a pickled estimator drops its cache directory (a file does not choose where a process
        # writes); the user's own call to transform does choose it, so the worker's copy gets it
        estimator.set_params(cache=cache)
    docs = docs.tolist() if hasattr(docs, "tolist") else list(docs)
    n_threads = worker_threads()
    from .utils._compute import limit_threads

    with limit_threads(n_threads):
        out = estimator.transform(docs) if docs else None
    if out is None:
        return np.zeros((0, len(estimator.get_feature_names_out())), dtype=dtype)
    if hasattr(out, "toarray"):
        out = out.toarray()
    return np.asarray(out, dtype=dtype)


def _embed_frame(docs, estimator, columns, dtype, cache=None):
    import pandas as pd

    try:
        values = _embed_partition(estimator, docs, dtype, cache)
    except (ValueError, TypeError) as exc:
        missing = docs.index[docs.isna().to_numpy()]
        if len(missing) == 0:
            raise
        # the estimator counts rows within this partition; the user knows the Series' index
        raise type(exc)(
            f"{type(estimator).__name__}: the Series has missing documents (None/NaN) at index "
            f"{missing[:5].tolist()}{' ...' if len(missing) > 5 else ''}; drop or fill them "
            "(series.dropna() or series.fillna('')) before embedding, or set "
            f"handle_missing='empty' where the estimator has it. (Within the partition: {exc})"
        ) from None
    return pd.DataFrame(values, index=docs.index, columns=columns)


def transform(estimator, collection, *, client=None, output=None):
    """Embed a dask collection of documents partition by partition with a fitted estimator.

    The estimator is scattered to every worker once (``client.scatter(...,
    broadcast=True)``) and each task references it, so it is not pickled into
    every task; each partition is transformed in the worker with the native
    thread pools limited to the worker's threads. Nothing is computed until
    you ask (``.compute()``, ``.to_parquet(...)``).

    Parameters
    ----------
    estimator : fitted skembed (or scikit-learn) transformer
        Its ``get_feature_names_out()`` gives the column names and count.
    collection : dask.dataframe.Series or dask.bag.Bag
        One document per row / element.
    client : distributed.Client or None, default=None
        Where to scatter the estimator; ``None``: the current client, or no
        scatter when there is none (the estimator is then embedded in the graph).
    output : {"frame", "array"} or None, default=None
        ``"frame"``: a dask DataFrame (the Series' index, columns from
        ``get_feature_names_out``); ``"array"``: a dask array of shape
        ``(n_documents, n_features_out)``. ``None``: ``"frame"`` for a Series,
        ``"array"`` for a bag (a bag has no index).

    Returns
    -------
    embedding : dask.dataframe.DataFrame or dask.array.Array
        Its dtype is the estimator's ``dtype`` (float32 by default); a bag gives
        chunks of unknown length (``compute_chunk_sizes()`` finds them).

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``estimator`` is not fitted.
    TypeError
        If ``collection`` is not a dask Series or bag, ``output="frame"`` with a
        bag, or ``client`` is an address (connect with :func:`connect` first)
        or anything but a ``distributed.Client``.
    ValueError
        At compute time, if the Series holds missing documents and the
        estimator refuses them: the message gives their labels in the
        Series' index (not row numbers within a partition).

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> from skembed.text import TfidfLSA
    >>> from skembed.dask import transform
    >>> docs = pd.Series(["cheap loan bank", "bank money loan", "cat dog farm", "farm dog"] * 5)
    >>> lsa = TfidfLSA(n_components=2, random_state=0).fit(docs)
    >>> emb = transform(lsa, dd.from_pandas(docs, npartitions=2))
    >>> emb.dtypes.unique().tolist(), emb.compute().shape
    ([dtype('float32')], (20, 2))
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    columns = [str(c) for c in estimator.get_feature_names_out()]
    dtype = _output_dtype(estimator)
    kind = _collection_kind(collection)
    is_series = kind == "Series"
    is_bag = kind == "Bag"
    if not (is_series or is_bag):
        raise TypeError(
            f"transform takes a dask Series (ddf['text']) or a dask.bag of documents, got "
            f"{type(collection).__name__}; for in-memory data call estimator.transform(X)."
        )
    output = output or ("frame" if is_series else "array")
    if output not in ("frame", "array"):
        raise ValueError(f"output must be 'frame' or 'array', got {output!r}.")
    if is_bag and output == "frame":
        raise TypeError("output='frame' needs a dask Series (a bag has no index): use 'array'.")
    if isinstance(client, str):
        raise TypeError(
            f"client must be a distributed.Client or None, got the address {client!r}: "
            "connect first (client = skembed.dask.connect(address)) and pass the client, which "
            "then also runs .compute() when made the default (with client.as_current(): ...)."
        )
    if client is not None and not hasattr(client, "scatter"):
        raise TypeError(
            f"client must be a distributed.Client or None, got {type(client).__name__}."
        )
    if client is None:
        try:
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):
            client = None
    # the estimator's cache directory travels as an argument of the user's call, not as state
    cache = getattr(estimator, "cache", None)
    cache = cache if isinstance(cache, str) and cache != "memory" else None
    ref = client.scatter(estimator, broadcast=True, hash=False) if client is not None else estimator
    if is_series:
        import pandas as pd

        meta = pd.DataFrame({c: np.zeros(0, dtype=dtype) for c in columns})
        frame = collection.map_partitions(_embed_frame, ref, columns, dtype, cache, meta=meta)
        return frame if output == "frame" else frame.to_dask_array(lengths=True)
    import dask
    import dask.array as da

    embed = dask.delayed(_embed_partition, pure=True)
    parts = [
        da.from_delayed(embed(ref, part, dtype, cache), shape=(np.nan, len(columns)), dtype=dtype)
        for part in collection.to_delayed()
    ]
    return da.concatenate(parts, axis=0)

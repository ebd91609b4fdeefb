"""Keeping the winner: save and load fitted pipelines (skops without code execution, or joblib)."""

from __future__ import annotations

import importlib


def _skembed_classes(type_names):
    """The names among ``type_names`` that are classes defined in skembed itself."""
    trusted = []
    for full in type_names:
        module, _, name = full.rpartition(".")
        if not (module == "skembed" or module.startswith("skembed.")):
            continue
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        if isinstance(obj, type) and obj.__module__ == module:
            trusted.append(full)
    return trusted


def _is_skops_file(path):
    import zipfile

    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return "schema.json" in archive.namelist()


def load_pipeline(path, *, allow_pickle=False):
    """Load a pipeline written by :func:`save_pipeline` (or ``skembed compare --save-best``).

    A skops file is loaded with skops, trusting scikit-learn's and numpy's
    types (skops' defaults) and the classes defined in skembed, nothing else:
    loading it executes no code from the file. A joblib file is a pickle,
    which can run arbitrary code while loading, so it is refused unless
    ``allow_pickle=True``.

    Parameters
    ----------
    path : str or os.PathLike
    allow_pickle : bool, default=False
        Load a joblib (pickle) file. Only for files from a source you trust.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Fitted; ``pipeline.transform``-less steps aside, ``pipeline[:-1].transform(texts)``
        gives the embedding (scaled) and ``pipeline.predict(texts)`` the labels.

    Raises
    ------
    ValueError
        If the file is a pickle and ``allow_pickle`` is False, or a skops file
        names types that are neither skops' defaults nor skembed classes
        (the message lists them).
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, os
    >>> from sklearn.feature_extraction.text import TfidfVectorizer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from skembed.model_selection import load_pipeline, save_pipeline
    >>> pipe = make_pipeline(TfidfVectorizer(), LogisticRegression())
    >>> pipe = pipe.fit(["cheap loan", "bank loan", "cat dog", "dog farm"], [0, 0, 1, 1])
    >>> path = os.path.join(tempfile.mkdtemp(), "best.skops")
    >>> save_pipeline(pipe, path)
    'skops'
    >>> load_pipeline(path).predict(["a loan from the bank"]).tolist()
    [0]
    """
    import os

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file: {path}")
    if _is_skops_file(path):
        import skops.io as sio

        untrusted = sio.get_untrusted_types(file=path)
        trusted = _skembed_classes(untrusted)
        others = sorted(set(untrusted) - set(trusted))
        if others:
            raise ValueError(
                f"{path} names types that are neither scikit-learn's, numpy's nor skembed's: "
                f"{others}. If you trust the file, load it with "
                "skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))."
            )
        return sio.load(path, trusted=trusted)
    if not allow_pickle:
        raise ValueError(
            f"{path} is a pickle (joblib) file, which can execute code when loaded: "
            "pass allow_pickle=True if you trust its source."
        )
    import joblib

    return joblib.load(path)


def save_pipeline(pipeline, path, *, format="auto"):
    """Write a fitted pipeline with skops (loads without executing code), else joblib.

    Parameters
    ----------
    pipeline : estimator
        Fitted, e.g. a pipeline returned by ``compare_embedders(..., return_best=True)``.
    path : str or os.PathLike
        Written atomically (a temporary file in the same directory, then renamed).
    format : {"auto", "skops", "joblib"}, default="auto"
        ``"auto"``: skops when the pipeline round-trips through it (it is
        written, then loaded back with :func:`load_pipeline`), joblib otherwise
        (e.g. an object skops cannot represent).

    Returns
    -------
    format : {"skops", "joblib"}
        The format written.

    Raises
    ------
    ValueError
        If ``format`` is unknown, or ``format="skops"`` and skops cannot write
        or read the pipeline back (the message gives skops' reason).

    Examples
    --------
    See :func:`load_pipeline`.
    """
    import os
    import tempfile

    if format not in ("auto", "skops", "joblib"):
        raise ValueError(f"format must be 'auto', 'skops' or 'joblib', got {format!r}.")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".skembed-", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        used = "joblib"
        if format != "joblib":
            try:
                import skops.io as sio

                sio.dump(pipeline, tmp)
                load_pipeline(tmp)
                used = "skops"
            except Exception as exc:  # skops cannot represent something in the pipeline
                if format == "skops":
                    raise ValueError(f"skops cannot save this pipeline: {exc}") from exc
        if used == "joblib":
            import joblib

            joblib.dump(pipeline, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return used

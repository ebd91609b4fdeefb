"""Keeping the winner: save and load fitted pipelines (skops without code execution, or joblib)."""

from __future__ import annotations

import importlib

#: numpy types skops 0.16 does not trust by default although loading them runs no code:
#: a dtype is read back as the dtype of an empty ``.npy`` array (scikit-learn's SimpleImputer
#: stores two)
_NUMPY_TRUSTED = ("numpy.dtype",)


def _values_that_are_callables(path):
    """Names of skembed classes or functions the file stores *as values* (not instances).

    A class or function stored as a value can be called by whoever holds it (a
    crafted ``_Tokenizer.tokenizer = skembed.text.corpus.LineCorpus`` opens the
    file named by each document), so only instances of skembed classes are trusted.
    """
    import json
    import zipfile

    with zipfile.ZipFile(path) as archive:
        schema = json.loads(archive.read("schema.json"))
    found, stack = set(), [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        module = node.get("__module__")
        if (
            isinstance(module, str)
            and module.split(".")[0] == "skembed"
            and node.get("__loader__") in ("TypeNode", "FunctionNode", "MethodNode")
        ):
            found.add(f"{module}.{node.get('__class__')}")
        stack.extend(node.values())
    return sorted(found)


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


#: how a joblib file starts: a pickle (protocol 2 and later), or joblib's compressors
#: (zlib, gzip, bz2, xz/lzma, lz4)
_PICKLE_MAGICS = (
    b"\x80",
    b"x",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ",
    b"\x5d\x00\x00",
    b"\x04\x22\x4d\x18",
)
_ZIP_MAGIC = b"PK\x03\x04"
#: a skops member that inflates to more than this and more than ``_MAX_RATIO`` times its
#: stored size is refused before it is read (a "zip bomb": skops would hold it all in memory);
#: save_pipeline deflates every member: float weights by ~1.1x, a vocabulary's JSON by ~10x
_BOMB_BYTES = 64 * 2**20
_MAX_RATIO = 100


def _file_kind(path):
    """``"skops"``, ``"pickle"``, or a ``ValueError`` naming what the file really is."""
    import os
    import zipfile

    if os.path.isdir(path):
        raise ValueError(f"{path} is a directory, not a saved pipeline file.")
    with open(path, "rb") as f:
        head = f.read(8)
    if not head:
        raise ValueError(f"{path} is empty: not a saved pipeline (the write did not finish?).")
    if head.startswith(_ZIP_MAGIC) or zipfile.is_zipfile(path):
        return "skops"
    if head.startswith(_PICKLE_MAGICS):
        return "pickle"
    raise ValueError(
        f"{path} is neither a skops file nor a joblib pickle (it starts with {head!r}); "
        "give a file written by save_pipeline or `skembed compare --save-best`."
    )


def _check_skops_archive(path):
    """Refuse a damaged skops file with one error naming the problem, before skops reads it.

    Checks the zip directory (a truncated file has none), that no member
    inflates to far more than it stores (a zip bomb), every member's CRC,
    that ``schema.json`` is a JSON object, and that every ``.npy`` member holds
    as many bytes as its header's shape and dtype declare (so no array is
    allocated for a shape the file does not back with data).
    """
    import json
    import zipfile
    import zlib

    import numpy as np

    def damaged(problem):
        return ValueError(
            f"{path} is a damaged skops file: {problem}. Save the pipeline again "
            "(save_pipeline or `skembed compare --save-best`)."
        )

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise damaged(f"its zip directory is unreadable, the file is truncated? ({exc})") from None
    with archive:
        for info in archive.infolist():
            if info.file_size > _BOMB_BYTES and info.file_size > _MAX_RATIO * max(
                info.compress_size, 1
            ):
                raise damaged(
                    f"member {info.filename!r} declares {info.file_size:,} bytes stored in "
                    f"{info.compress_size:,} (over {_MAX_RATIO}x: refused before inflating it)"
                )
        try:
            bad = archive.testzip()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error) as exc:
            raise damaged(f"a member cannot be read ({exc})") from None
        if bad is not None:
            raise damaged(f"member {bad!r} fails its CRC check")
        names = archive.namelist()
        if "schema.json" not in names:
            raise damaged("it has no schema.json")
        try:
            schema = json.loads(archive.read("schema.json"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise damaged(f"schema.json is not valid JSON ({exc})") from None
        if not isinstance(schema, dict) or "__class__" not in schema:
            raise damaged("schema.json does not describe an object")
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            with archive.open(info) as member:
                try:
                    version = np.lib.format.read_magic(member)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                    else:
                        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                    header = member.tell() if member.seekable() else None
                except (ValueError, OSError) as exc:
                    raise damaged(f"{info.filename} is not a numpy array file ({exc})") from None
            declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if dtype.hasobject:
                continue  # skops refuses object arrays without pickle anyway
            if header is not None and declared != info.file_size - header:
                raise damaged(
                    f"{info.filename} declares shape {shape} ({declared:,} bytes of {dtype}) "
                    f"but holds {info.file_size - header:,}"
                )


def load_pipeline(path, *, allow_pickle=False):
    """Load a pipeline written by :func:`save_pipeline` (or ``skembed compare --save-best``).

    A skops file is loaded with skops, trusting scikit-learn's and numpy's
    types (skops' defaults, plus ``numpy.dtype``) and *instances* of the
    classes defined in skembed, nothing else: a skembed class or function
    stored as a value (something the pipeline could call) is refused, and
    every skembed object checks the state the file gives it against its
    declared schema (:mod:`skembed.utils._schema`). Loading executes no code
    from the file, never downloads, and never chooses where the process
    writes (see ``docs/loading.md``). A joblib file is a pickle,
    which can run arbitrary code while loading, so it is refused unless
    ``allow_pickle=True``.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.skops`` file, or a joblib file (with ``allow_pickle=True``).
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
        If the file is a pickle and ``allow_pickle`` is False; a skops file
        names types that are neither skops' defaults nor skembed classes
        (the message lists them); the file is a damaged skops file (truncated,
        a CRC error, a ``schema.json`` that is not JSON, an array whose
        header declares more data than the file holds), a directory, empty,
        or neither skops nor joblib; or a skembed object's stored state is
        malformed (a file name with a directory part, shapes or dtypes that
        do not match the stored configuration). ``allow_pickle=True`` is
        suggested only for a file that is a joblib pickle.
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
    if _file_kind(path) == "skops":
        import skops.io as sio

        _check_skops_archive(path)

        callables = _values_that_are_callables(path)
        if callables:
            raise ValueError(
                f"{path} stores skembed classes or functions as values: {callables}. "
                "load_pipeline trusts instances of skembed classes only (whose state each "
                "checks), never a class or function that the pipeline could call; the file "
                "was crafted or written by code other than skembed's."
            )
        untrusted = sio.get_untrusted_types(file=path)
        trusted = _skembed_classes(untrusted) + [t for t in untrusted if t in _NUMPY_TRUSTED]
        others = sorted(set(untrusted) - set(trusted))
        if others:
            raise _UntrustedTypes(
                f"{path} names types outside skops' default trusted types (scikit-learn's, "
                "numpy's and Python's own) that are not instances of skembed classes either: "
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


class _UntrustedTypes(ValueError):
    """A skops file naming types ``load_pipeline`` does not trust (a user's own function)."""


def save_pipeline(pipeline, path, *, format="auto"):
    """Write a fitted pipeline with skops (loads without executing code), else joblib.

    Parameters
    ----------
    pipeline : estimator
        Fitted, e.g. a pipeline returned by ``compare_embedders(..., return_best=True)``.
    path : str or os.PathLike
        Written atomically (a temporary file in the same directory, then
        renamed), with the permissions the umask gives a new file. Its size
        is what :func:`saved_size_bytes` measures.
    format : {"auto", "skops", "joblib"}, default="auto"
        ``"auto"``: skops (its arrays and ``schema.json`` deflate-compressed)
        when it can represent every type in the pipeline: it is written, then
        loaded back with :func:`load_pipeline`. Where skops cannot represent
        a type (``skops.io.dump`` fails on it, or the file names a type that
        :func:`load_pipeline` does not trust, such as your own function in a
        ``FunctionTransformer``), joblib (zlib-compressed), with a warning
        naming the reason. Any other failure raises.

    Returns
    -------
    format : {"skops", "joblib"}
        The format written.

    Raises
    ------
    ValueError
        If ``format`` is unknown, ``format="skops"`` and skops cannot represent
        the pipeline (the message gives skops' reason), or the skops file
        written does not load back for another reason (a fitted state that
        fails its own checks).
    OSError
        If the file cannot be written (a full disk, no permission): never
        answered by writing the other format.

    Warns
    -----
    UserWarning
        When ``format="auto"`` falls back to joblib, naming what skops cannot represent.

    Examples
    --------
    See :func:`load_pipeline`.
    """
    import os

    from ..utils._files import write_atomically

    if format not in ("auto", "skops", "joblib"):
        raise ValueError(f"format must be 'auto', 'skops' or 'joblib', got {format!r}.")
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    used = []
    write_atomically(path, lambda tmp: used.append(_write(pipeline, tmp, format)))
    return used[0]


def _write(pipeline, tmp, format):
    """Write ``pipeline`` to ``tmp``; the format used."""
    import warnings

    import joblib

    if format != "joblib":
        reason = _write_skops(pipeline, tmp)
        if reason is None:
            return "skops"
        if format == "skops":
            raise ValueError(f"skops cannot save this pipeline: {reason}")
        warnings.warn(
            f"save_pipeline: skops cannot represent this pipeline ({reason}); writing it "
            "with joblib, a pickle: load it with load_pipeline(path, allow_pickle=True).",
            UserWarning,
            stacklevel=4,
        )
    joblib.dump(pipeline, tmp, compress=3)
    return "joblib"


def _write_skops(pipeline, tmp):
    """Write with skops and read it back: ``None``, or why skops cannot represent a type."""
    import zipfile

    import skops.io as sio

    try:
        sio.dump(pipeline, tmp, compression=zipfile.ZIP_DEFLATED)
    except OSError:
        raise  # a full disk or a permission: joblib would meet the same disk
    except Exception as exc:  # skops has no node for a type in the pipeline
        return f"{type(exc).__name__}: {exc}"
    try:
        load_pipeline(tmp)
    except _UntrustedTypes as exc:
        return str(exc)
    except ValueError as exc:
        raise ValueError(
            f"save_pipeline: the pipeline written with skops does not load back: {exc}"
        ) from exc
    return None


def saved_size_bytes(pipeline, format="auto"):
    """Bytes :func:`save_pipeline` writes for ``pipeline``, measured by writing it.

    ``skembed compare``'s "size MB" column and ``--budget`` should read this,
    so that the figure is the size of the file ``--save-best`` writes.

    Parameters
    ----------
    pipeline : estimator
        Fitted.
    format : {"auto", "skops", "joblib"}, default="auto"
        As :func:`save_pipeline`.

    Returns
    -------
    n_bytes : int
        The size of the file written (to a temporary directory, then removed).

    Examples
    --------
    >>> from sklearn.feature_extraction.text import TfidfVectorizer
    >>> vec = TfidfVectorizer().fit(["cheap loan", "bank loan", "cat dog"])
    >>> 0 < saved_size_bytes(vec) < 20_000
    True
    """
    import os
    import tempfile
    import warnings

    with tempfile.TemporaryDirectory(prefix="skembed-size-") as folder:
        path = os.path.join(folder, "pipeline")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the format is the caller's concern here
            save_pipeline(pipeline, path, format=format)
        return os.path.getsize(path)

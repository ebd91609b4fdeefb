"""Declared state schemas: what a fitted object's attributes must be before any kernel reads them.

A pickle or skops file is not trusted, yet the compiled kernels index their
arrays without bounds checks: a vocabulary id past the end of a table, an
output table cut to one row or a count array shorter than the vocabulary
reads (or writes) process memory. So every estimator declares, as data, what
its fitted state must be (``_state_schema``: attribute -> rule), and one
function, :func:`check_state`, checks it when state arrives
(``__setstate__``, which pickle and skops loading both call).

Rules share *dimension symbols*: an upper-case name (``"V"``, ``"D"``) is
bound by the first attribute that gives it a value and must then agree
everywhere else; a lower-case name refers to an integer attribute or
parameter of the object (``"vector_size"``); ``"V-1"`` is one less than
``V``. An id array or mapping whose values must index a table says so with
``below=`` a symbol (ids are then checked to be in ``[0, symbol)``).

A key with a dot (``"vectorizer_.vocabulary_"``) names an attribute of a
nested object: a derived copy that a nested scikit-learn object reads instead
of the canonical table, declared :class:`Same` as the attribute it copies.
A key without a trailing underscore is a hyperparameter: it is checked even on
an unfitted object, and a fitted table can be checked against it (a width, a
mode that needs a table). Hyperparameters as a whole pass the class's
``_parameter_constraints`` on load, as in ``fit`` (:func:`check_params`).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "Array",
    "Ids",
    "Instance",
    "Number",
    "Same",
    "Vectors",
    "check_ids",
    "check_params",
    "check_state",
    "is_packed_keys",
    "pack_keys",
    "pack_vocabulary",
    "unpack_keys",
    "unpack_vocabulary",
    "refuse_state",
    "transform_with_stored",
    "CheckedStateMixin",
]

_KINDS = {"f": "float", "i": "integer", "u": "unsigned integer", "b": "boolean"}


class _Rule:
    """``optional``: ``True`` (may be ``None`` or absent), ``False``, or the name of a
    parameter: required (not ``None``) when that parameter is truthy, optional otherwise.
    ``only_when``: parameter names; the attribute is required when one of them is truthy
    and must be ``None`` (or absent) when none is (a mode that reads the table)."""

    optional = False

    def __init__(self, *, optional=False, only_when=()):
        self.optional, self.only_when = optional, tuple(only_when)


class Array(_Rule):
    """A numpy array: ``kind`` (numpy dtype kinds, e.g. ``"f"`` or ``"iu"``), one symbol or
    int (or ``None``: any) per axis, ``finite`` values, integer values in ``[low, below)``."""

    def __init__(self, kind, dims, *, finite=False, low=None, below=None, optional=False):
        super().__init__(optional=optional)
        self.kind, self.dims, self.finite, self.low, self.below = kind, dims, finite, low, below


class Ids(_Rule):
    """A ``dict`` of ``str`` to distinct ints in ``[0, below)`` (a vocabulary); binds ``size``
    to its length (``below`` defaults to ``size``: the ids are then a permutation of rows)."""

    def __init__(self, size, *, below=None, optional=False):
        super().__init__(optional=optional)
        self.size, self.below = size, below if below is not None else size


class Vectors(_Rule):
    """A :class:`~skembed.KeyedVectors` (or subclass ``cls``) whose table has ``rows`` x ``dim``."""

    def __init__(self, rows=None, dim=None, *, cls=None, optional=False, only_when=()):
        super().__init__(optional=optional, only_when=only_when)
        self.rows, self.dim, self.cls = rows, dim, cls


class Instance(_Rule):
    """An instance of one of ``types`` (classes, or ``"module.Name"`` strings); ``rows``: a
    symbol its size must bind or equal, or with ``at_most`` not exceed (``get_vocab_size()``
    of a tokenizer, else ``len``); a tokenizer's largest id must also be below ``rows``.
    A nested scikit-learn estimator's hyperparameters pass its own constraints; ``ndim``: the
    axes an array of any dtype (ids of any type) must have."""

    def __init__(self, *types, rows=None, at_most=False, ndim=None, optional=False):
        super().__init__(optional=optional)
        self.types, self.rows, self.at_most, self.ndim = types, rows, at_most, ndim


class Number(_Rule):
    """A real (``integral=False``) or integral scalar, at least ``low`` and below ``below``;
    an integral one may bind (or must equal) the dimension symbol ``size``."""

    def __init__(self, *, integral=True, low=None, below=None, size=None, optional=False):
        super().__init__(optional=optional)
        self.integral, self.low, self.below, self.size = integral, low, below, size


class Same(_Rule):
    """A derived copy that must equal the canonical attribute ``of`` (a dict or an array):
    what a nested object reads instead of the table the schema checks."""

    def __init__(self, of, *, optional=False):
        super().__init__(optional=optional)
        self.of = of


def refuse_state(owner, attr, problem):
    """The ``ValueError`` for stored state that fails a check, naming the attribute and the fix.

    Parameters
    ----------
    owner : str
        The estimator's class name.
    attr : str
        The stored attribute (``"embeddings_[0]"`` for an entry of a list).
    problem : str
        What is wrong with it, as a predicate (``"holds NaN values"``).

    Returns
    -------
    ValueError
        To be raised by the caller.
    """
    return ValueError(
        f"{owner}: stored {attr} {problem}. The file is damaged or was crafted: refit the "
        "estimator, or save it again from a trusted copy."
    )


class _Dims:
    """The symbol table of one check: who bound each symbol and to what."""

    def __init__(self, obj, owner):
        self.obj, self.owner, self.value, self.origin = obj, owner, {}, {}

    def resolve(self, sym):
        """The value a dimension must have, or ``None`` when it is still free."""
        if sym is None or isinstance(sym, int):
            return sym
        base, _, minus = sym.partition("-")
        offset = -int(minus) if minus else 0
        if base[0].isupper():
            value = self.value.get(base)
        else:
            value = getattr(self.obj, base, None)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise refuse_state(self.owner, base, f"is {value!r}, not an integer")
        return None if value is None else int(value) + offset

    def bind(self, sym, actual, attr, what):
        expected = self.resolve(sym)
        if isinstance(sym, int):
            if sym != actual:
                raise refuse_state(self.owner, attr, f"has {what} {actual}, not {sym}")
            return
        if expected is None:
            base, _, minus = sym.partition("-")
            self.value[base] = actual + (int(minus) if minus else 0)
            self.origin[base] = attr
        elif expected != actual:
            base = sym.partition("-")[0]
            source = self.origin.get(base, base)
            raise refuse_state(
                self.owner, attr, f"has {what} {actual} where {source} implies {expected}"
            )


def _type_name(t):
    return t if isinstance(t, str) else f"{t.__module__}.{t.__qualname__}"


def _is_instance(value, types):
    names = {_type_name(t) for t in types}
    return any(_type_name(k) in names for k in type(value).__mro__)


def _check_ints(owner, attr, values, low, below, dims):
    if values.size == 0:
        return
    low = 0 if low is None else low
    bound = dims.resolve(below) if below is not None else None
    lo, hi = int(values.min()), int(values.max())
    if lo < low:
        raise refuse_state(owner, attr, f"holds {lo}, below {low}")
    if bound is not None and hi >= bound:
        if below[0].islower():  # another attribute or parameter: name it
            raise refuse_state(owner, attr, f"holds id {hi}, not below {below}={bound}")
        raise refuse_state(owner, attr, f"holds id {hi}, past the {bound} rows of the table")


def _check_array(owner, attr, value, rule, dims):
    if not isinstance(value, np.ndarray):
        raise refuse_state(owner, attr, f"is a {type(value).__name__}, not a numpy array")
    if not set(rule.kind) <= set(_KINDS):  # an exact dtype name: what a kernel was built for
        if value.dtype != np.dtype(rule.kind):
            raise refuse_state(owner, attr, f"has dtype {value.dtype}, not {rule.kind}")
    elif value.dtype.kind not in rule.kind or value.dtype.hasobject:
        kinds = " or ".join(_KINDS[k] for k in rule.kind)
        raise refuse_state(owner, attr, f"has dtype {value.dtype}, not a {kinds} array")
    if value.ndim != len(rule.dims):
        raise refuse_state(owner, attr, f"has {value.ndim} dimensions, not {len(rule.dims)}")
    for axis, (sym, actual) in enumerate(zip(rule.dims, value.shape, strict=True)):
        if sym is not None:
            dims.bind(sym, actual, attr, f"shape {value.shape}: axis {axis} of")
    # a float table with a lower bound (counts, weights) is read as numbers: finite too
    if (rule.finite or rule.low is not None) and value.dtype.kind == "f":
        if not np.isfinite(value).all():
            raise refuse_state(owner, attr, "holds NaN or infinite values")
        if rule.low is not None and value.size and float(value.min()) < rule.low:
            raise refuse_state(owner, attr, f"holds {float(value.min())!r}, below {rule.low}")
    if value.dtype.kind in "iu" and (rule.low is not None or rule.below is not None):
        _check_ints(owner, attr, value, rule.low, rule.below, dims)


def _check_ids(owner, attr, value, rule, dims):
    if not isinstance(value, dict):
        raise refuse_state(owner, attr, f"is a {type(value).__name__}, not a dict of words to ids")
    ids = list(value.values())
    if not all(isinstance(k, str) for k in value) or not all(
        isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in ids
    ):
        raise refuse_state(owner, attr, "is not a mapping of strings to integer ids")
    dims.bind(rule.size, len(value), attr, "words:")
    array = np.fromiter((int(i) for i in ids), dtype=np.int64, count=len(ids))
    _check_ints(owner, attr, array, 0, rule.below, dims)
    if np.unique(array).size != array.size:
        raise refuse_state(owner, attr, "maps two words to one id")


def _check_vectors(owner, attr, value, rule, dims):
    cls = rule.cls or "skembed.keyedvectors.KeyedVectors"  # by name: no import circle
    if not _is_instance(value, (cls,)):
        raise refuse_state(owner, attr, f"is a {type(value).__name__}, not a {_type_name(cls)}")
    check_state(value)  # its own schema (already run by its __setstate__; cheap to repeat)
    rows, dim = value.vectors.shape
    if rule.rows is not None:
        dims.bind(rule.rows, rows, attr, "a table of")
    if rule.dim is not None:
        dims.bind(rule.dim, dim, attr, "vectors of width")


def _check_number(owner, attr, value, rule, dims):
    kind = numbers.Integral if rule.integral else numbers.Real
    if not isinstance(value, kind) or isinstance(value, bool):
        raise refuse_state(
            owner, attr, f"is {value!r}, not {'an integer' if rule.integral else 'a number'}"
        )
    if not rule.integral and not np.isfinite(value):
        raise refuse_state(owner, attr, f"is {value!r}, not finite")

    def named(bound):  # "min_n=3" for a bound that is another attribute
        value = dims.resolve(bound)
        return f"{bound}={value}" if isinstance(bound, str) else f"{value}"

    if rule.low is not None and value < dims.resolve(rule.low):
        raise refuse_state(owner, attr, f"is {value!r}, below {named(rule.low)}")
    if rule.below is not None and value >= dims.resolve(rule.below):
        raise refuse_state(owner, attr, f"is {value!r}, not below {named(rule.below)}")
    if rule.size is not None:
        dims.bind(rule.size, int(value), attr, "value")


def state_schema(obj):
    """The merged ``_state_schema`` of ``obj``'s class and its bases (subclasses win)."""
    schema = {}  # the class's own rules first: its attributes bind the dimensions
    for klass in type(obj).__mro__:
        for attr, rule in klass.__dict__.get("_state_schema", {}).items():
            schema.setdefault(attr, rule)
    return schema


def _lookup(obj, path):
    """The value at a dotted attribute path: ``_MISSING`` where the last step is absent,
    ``_NO_PARENT`` where an earlier step is ``None`` (an optional nested object)."""
    *parents, last = path.split(".")
    value = obj
    for step in parents:
        value = vars(value).get(step) if hasattr(value, "__dict__") else None
        if value is None:
            return _NO_PARENT
    return vars(value).get(last, _MISSING) if hasattr(value, "__dict__") else _MISSING


_MISSING, _NO_PARENT = object(), object()


def _is_parameter(attr):
    """A hyperparameter (``vector_size``), as opposed to fitted state (``wv_``, ``_n_features_out``)."""
    return not attr.endswith("_") and not attr.startswith("_") and "." not in attr


def _required(obj, rule):
    """``True``, ``False`` (may be ``None``/absent) or ``"absent"`` (must be) for this object."""
    if rule.only_when:
        return any(getattr(obj, p, False) for p in rule.only_when) or "absent"
    optional = rule.optional
    if isinstance(optional, str):
        optional = not getattr(obj, optional, False)
    return not optional


def _check_instance(owner, attr, value, rule, dims):
    if not _is_instance(value, rule.types):
        names = ", ".join(_type_name(t).rpartition(".")[2] for t in rule.types)
        raise refuse_state(owner, attr, f"is a {type(value).__name__}, not a {names}")
    if hasattr(value, "_validate_params") and hasattr(value, "get_params"):
        check_params(value, owner=f"{owner}: stored {attr}")
    if rule.ndim is not None and getattr(value, "ndim", rule.ndim) != rule.ndim:
        raise refuse_state(owner, attr, f"has {value.ndim} axes, not {rule.ndim}")
    if rule.rows is None:
        return
    size = getattr(value, "get_vocab_size", None)
    size = size(with_added_tokens=True) if size is not None else len(value)
    bound = dims.resolve(rule.rows) if rule.at_most else None
    if bound is None:
        dims.bind(rule.rows, int(size), attr, "a size of")
        bound = dims.resolve(rule.rows)
    elif size > bound:
        raise refuse_state(owner, attr, f"has {size} entries, past the {bound} rows")
    if hasattr(value, "get_vocab"):  # the ids it gives index the table, not just its size
        ids = value.get_vocab(with_added_tokens=True).values()
        top = max(ids, default=-1)
        if top >= bound:
            raise refuse_state(owner, attr, f"maps a token to id {top}, past the {bound} rows")


def _check_same(owner, attr, value, rule, dims):
    canonical = _lookup(dims.obj, rule.of)
    if isinstance(canonical, np.ndarray) or isinstance(value, np.ndarray):
        equal = (
            isinstance(value, np.ndarray)
            and isinstance(canonical, np.ndarray)
            and value.shape == canonical.shape
            and bool(np.array_equal(value, canonical))
        )
    else:
        equal = type(value) is type(canonical) and value == canonical
    if not equal:
        raise refuse_state(owner, attr, f"differs from {rule.of}, the table it copies")


_CHECKS = {
    Array: _check_array,
    Ids: _check_ids,
    Vectors: _check_vectors,
    Number: _check_number,
    Instance: _check_instance,
    Same: _check_same,
}


def check_state(obj, schema=None):
    """Check ``obj``'s attributes against its declared schema; raise naming the first bad one.

    Parameters
    ----------
    obj : object
        A fitted estimator or vector table whose state came from a file (or from ``fit``).
    schema : dict or None, default=None
        Attribute -> rule; ``None``: the ``_state_schema`` declared along ``type(obj)``'s MRO.

    Raises
    ------
    ValueError
        Naming the attribute and what is wrong with it (type, dtype, shape that
        disagrees with another attribute or a hyperparameter, an id past the
        end of its table, a non-finite value, a derived copy that differs from
        its table, a table the stored mode needs that is missing). An unfitted
        object (no fitted attribute of the schema set) has only its
        hyperparameter rules checked.
    """
    schema = state_schema(obj) if schema is None else schema
    owner = type(obj).__name__
    state = vars(obj)
    fitted = any(k in state for k in schema if not _is_parameter(k) and "." not in k)
    dims = _Dims(obj, owner)
    for attr, rule in schema.items():
        if not fitted and not _is_parameter(attr):
            continue
        required = _required(obj, rule)
        value = _lookup(obj, attr)
        if value is _NO_PARENT:  # a nested object on the path is None
            if rule.optional:
                continue
            raise refuse_state(owner, attr, "is missing (an object on its path is None)")
        if "." in attr:  # a nested object that is present has all its declared attributes
            required = True
        if required == "absent":
            if value is not _MISSING and value is not None:
                modes = ", ".join(f"{p}={getattr(obj, p, None)!r}" for p in rule.only_when)
                raise refuse_state(owner, attr, f"is set although {modes} does not use it")
            continue
        if value is _MISSING or value is None:
            if not required:
                continue
            modes = rule.only_when or ([rule.optional] if isinstance(rule.optional, str) else [])
            if modes:
                modes = ", ".join(f"{p}={getattr(obj, p, None)!r}" for p in modes)
                raise refuse_state(owner, attr, f"is missing, but {modes} needs it")
            raise refuse_state(owner, attr, "is missing" if value is _MISSING else "is None")
        _CHECKS[type(rule)](owner, attr, value, rule, dims)


def check_ids(ids, rows, owner, attr):
    """Refuse ids outside ``[0, rows)`` before a kernel or a sparse product indexes a table.

    The last line of defence behind :func:`check_state`: one vectorised check
    per call where stored ids (a vocabulary's, a tokenizer's) meet a table,
    so that a derived copy the schema does not know of cannot read past it.

    Parameters
    ----------
    ids : numpy.ndarray of int
        The ids about to index the table (any shape).
    rows : int
        The number of rows of the table.
    owner, attr : str
        The estimator's class name and the attribute the ids came from (for the message).

    Raises
    ------
    ValueError
        Naming ``attr`` when an id is negative or not below ``rows``.

    Examples
    --------
    >>> import numpy as np
    >>> check_ids(np.array([0, 2]), 3, "Model", "vocabulary_")
    >>> check_ids(np.array([0, 3]), 3, "Model", "vocabulary_")
    Traceback (most recent call last):
    ...
    ValueError: Model: stored vocabulary_ gives id 3, past the 3 rows of the table. ...
    """
    ids = np.asarray(ids)
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= rows):
        bad = int(ids.max()) if int(ids.max()) >= rows else int(ids.min())
        raise refuse_state(owner, attr, f"gives id {bad}, past the {rows} rows of the table")


def transform_with_stored(inner, X, owner, attr, *, passes_missing=False):
    """``inner.transform(X)`` for a stored scikit-learn object, failing with its name.

    A nested scikit-learn object's fitted attributes (an encoder's
    ``categories_``, a scaler's ``mean_``, a column transformer's steps) come
    from the file like the rest of the state, but scikit-learn reads them at
    ``transform`` with its own errors: a ``TypeError`` or ``IndexError`` deep
    in its code, or infinite output from a stored ``inf``. Every error of the
    call is re-raised as a ``ValueError`` that keeps scikit-learn's message and
    names the stored attribute, and output that is not finite where the input
    is present is refused.

    Parameters
    ----------
    inner : scikit-learn transformer
        The fitted object, as stored.
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        The input, checked by the caller or by ``inner`` itself.
    owner, attr : str
        The estimator's class name and the attribute ``inner`` is stored under.
    passes_missing : bool, default=False
        Whether ``inner`` passes a missing input value through to the same
        place of its output (a scaler, an ordinal encoder): NaN is then allowed
        where the input is missing. ``False``: every output value must be finite.

    Returns
    -------
    numpy.ndarray or scipy.sparse matrix
        ``inner.transform(X)``.

    Raises
    ------
    ValueError
        Naming ``attr`` when the call raises (scikit-learn's message kept; an
        error other than its ``ValueError`` is said to come from damaged
        state), or when an output value is NaN or infinite where the input is
        present.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import StandardScaler
    >>> scaler = StandardScaler().fit(np.array([[0.0], [2.0]]))
    >>> transform_with_stored(scaler, np.array([[1.0]]), "Model", "scaler_")
    array([[0.]])
    >>> scaler.mean_ = np.array([np.inf])
    >>> transform_with_stored(scaler, np.array([[1.0]]), "Model", "scaler_")
    Traceback (most recent call last):
    ...
    ValueError: Model: stored scaler_ gives NaN or infinite output (row 0, column 0). ...
    """
    name = type(inner).__name__
    try:
        out = inner.transform(X)
    except ValueError as exc:  # scikit-learn's refusal of the input (or of its own state)
        raise ValueError(f"{exc} (raised by {owner}.{attr}, a {name})") from exc
    except Exception as exc:  # a fitted object does not raise these on valid input
        raise ValueError(
            f"{exc} [{owner}.{attr}, the stored {name}, raised {type(exc).__name__} on this "
            "input: where the input has fit's columns and types, the stored state is damaged "
            "or was edited; refit, or load it from a trusted copy]"
        ) from exc
    values = out.data if hasattr(out, "tocsr") else np.asarray(out)
    if values.dtype.kind in "fc" and not np.isfinite(values).all():
        bad = ~np.isfinite(values)
        if passes_missing and not hasattr(out, "tocsr") and np.shape(X) == bad.shape:
            import pandas as pd

            bad &= ~pd.isna(pd.DataFrame(X)).to_numpy()
        if bad.any():
            where = np.argwhere(bad)[0] if values.ndim == 2 else (-1, -1)
            raise refuse_state(
                owner, attr, f"gives NaN or infinite output (row {where[0]}, column {where[1]})"
            )
    return out


def pack_keys(keys):
    """A list of strings as two arrays, for a file: UTF-8 bytes and each key's end offset.

    skops writes a list or dict entry by entry into its ``schema.json``
    (about 100 bytes of JSON per word, parsed back one node at a time); two
    arrays are two compressed ``.npy`` members. Keys that are not all ``str``
    (graph node ids) are returned as they are.

    Parameters
    ----------
    keys : list
        The keys in table-row order.

    Returns
    -------
    dict or list
        ``{"utf8": uint8 array of shape (n_bytes,), "ends": int64 array of
        shape (n_keys,)}``, or ``keys`` unchanged if one is not a ``str``.

    Examples
    --------
    >>> packed = pack_keys(["a", "bé"])
    >>> packed["utf8"].tobytes(), packed["ends"].tolist()
    (b'ab\xc3\xa9', [1, 4])
    >>> unpack_keys(packed, "Model", "index_to_key")
    ['a', 'bé']
    """
    if not isinstance(keys, (list, tuple)) or not all(isinstance(k, str) for k in keys):
        return keys  # graph node ids, or already packed
    encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    return {"utf8": np.frombuffer(b"".join(encoded), np.uint8).copy(), "ends": ends}


def is_packed_keys(value):
    """Whether ``value`` has the form :func:`pack_keys` writes (to be unpacked on load)."""
    return isinstance(value, dict) and set(value) == {"utf8", "ends"}


def unpack_keys(packed, owner, attr):
    """The keys :func:`pack_keys` packed, checked first: a file is not trusted.

    Parameters
    ----------
    packed : dict
        ``{"utf8": ..., "ends": ...}`` as stored.
    owner, attr : str
        The estimator's class name and the attribute (for the message).

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        Naming ``attr`` when the arrays are not 1-D integer arrays, the
        offsets decrease or pass the bytes, or the bytes are not UTF-8.
    """
    utf8, ends = packed["utf8"], packed["ends"]
    for name, a in (("utf8", utf8), ("ends", ends)):
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu":
            raise refuse_state(owner, f"{attr}.{name}", "is not a 1-D integer array")
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    last = int(ends[-1]) if ends.size else 0
    if np.any(ends < starts) or last != utf8.size:
        raise refuse_state(owner, f"{attr}.ends", f"does not cut the {utf8.size} bytes in order")
    if utf8.size and (int(utf8.min()) < 0 or int(utf8.max()) > 255):
        raise refuse_state(owner, f"{attr}.utf8", "holds values that are not bytes")
    data = utf8.astype(np.uint8).tobytes()
    try:
        return [
            data[a:b].decode("utf-8", "surrogatepass")
            for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
        ]
    except UnicodeDecodeError as exc:
        raise refuse_state(owner, f"{attr}.utf8", f"is not UTF-8 ({exc.reason})") from None


def pack_vocabulary(vocabulary):
    """A ``{word: id}`` dict with ids ``0..n-1`` as :func:`pack_keys` arrays, else unchanged.

    Parameters
    ----------
    vocabulary : object
        A fitted ``vocabulary_`` (or anything else, returned as it is).

    Returns
    -------
    dict
        The packed words in id order, or ``vocabulary`` itself when it is not
        a dict of ``str`` keys whose ids are exactly ``0..n-1``.
    """
    if not isinstance(vocabulary, dict) or not all(isinstance(k, str) for k in vocabulary):
        return vocabulary
    ids = list(vocabulary.values())
    if not all(isinstance(i, (int, np.integer)) for i in ids) or sorted(ids) != list(
        range(len(ids))
    ):
        return vocabulary
    return pack_keys(sorted(vocabulary, key=vocabulary.get))


def unpack_vocabulary(packed, owner, attr):
    """The ``{word: id}`` dict that :func:`pack_vocabulary` packed, each word once.

    Parameters
    ----------
    packed : dict
        ``{"utf8": ..., "ends": ...}`` as stored.
    owner, attr : str
        The estimator's class name and the attribute (for the message).

    Returns
    -------
    dict of str to int

    Raises
    ------
    ValueError
        Naming ``attr`` as :func:`unpack_keys` does, or when a word is stored twice.
    """
    words = unpack_keys(packed, owner, attr)
    vocabulary = {w: i for i, w in enumerate(words)}
    if len(vocabulary) != len(words):
        raise refuse_state(owner, attr, "holds a word twice")
    return vocabulary


def _refuse_bool(obj, params):
    """Booleans where an integer range is declared: ``True`` is not a width or a count."""
    from sklearn.utils._param_validation import Interval, InvalidParameterError

    for name, constraints in obj._parameter_constraints.items():
        value = params.get(name)
        if not isinstance(value, (bool, np.bool_)):
            continue
        if any(c == "boolean" or c is bool for c in constraints):
            continue
        if any(isinstance(c, Interval) and c.type is numbers.Integral for c in constraints):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(obj).__name__} must be an integer, got "
                f"{value!r}: a boolean is not a count or a size; pass {int(value)} if you "
                "mean it."
            )


def check_params(obj, owner=None, params=None):
    """Check ``obj``'s hyperparameters against its ``_parameter_constraints``, as ``fit`` does.

    Run on load so that a value read from a file meets the same rules as one
    given to ``__init__`` (booleans are refused where an integer is declared).

    Parameters
    ----------
    obj : estimator
        With ``get_params`` and ``_parameter_constraints``.
    owner : str or None, default=None
        How to name ``obj`` in the message; ``None``: its class name.
    params : dict or None, default=None
        The values to check; ``None``: ``obj.get_params(deep=False)``.

    Raises
    ------
    ValueError
        Naming the parameter and the rule it breaks.
    """
    from sklearn.utils._param_validation import validate_parameter_constraints

    if not hasattr(obj, "_parameter_constraints"):
        return
    try:
        params = obj.get_params(deep=False) if params is None else params
        validate_parameter_constraints(
            obj._parameter_constraints, params, caller_name=type(obj).__name__
        )
        _refuse_bool(obj, params)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"{owner or type(obj).__name__}: a stored hyperparameter breaks its rule: {exc} "
            "The file is damaged or was crafted: refit the estimator, or save it again "
            "from a trusted copy."
        ) from None


class CheckedStateMixin:
    """Check the declared ``_state_schema`` whenever state arrives (pickle, skops)."""

    #: attribute -> rule (see this module); merged along the MRO
    _state_schema = {}
    #: attributes holding a ``tokenizers.Tokenizer``: stored as its JSON text (skops cannot
    #: hold the Rust object) and parsed back on load
    _tokenizer_attributes = ()
    #: ``{word: id}`` dicts stored as two arrays (:func:`pack_vocabulary`): skops writes a
    #: dict entry by entry into its JSON, about 100 bytes and one parsed node per word
    _vocabulary_attributes = ()

    def _validate_params(self):
        """scikit-learn's parameter check, with booleans refused where an integer is declared."""
        super()._validate_params()
        _refuse_bool(self, self.get_params(deep=False))

    def __getstate__(self):
        state = dict(super().__getstate__())
        for attr in self._tokenizer_attributes:
            tok = state.get(attr)
            if tok is not None and hasattr(tok, "to_str"):
                state[attr] = {"tokenizer_json": tok.to_str()}
        for attr in self._vocabulary_attributes:
            if attr in state:
                state[attr] = pack_vocabulary(state[attr])
        return state

    def __setstate__(self, state):
        for attr in self._vocabulary_attributes:
            if is_packed_keys(state.get(attr)):
                state[attr] = unpack_vocabulary(state[attr], type(self).__name__, attr)
        for attr in self._tokenizer_attributes:
            packed = state.get(attr)
            if isinstance(packed, dict):
                text = packed.get("tokenizer_json")
                if set(packed) != {"tokenizer_json"} or not isinstance(text, str):
                    raise refuse_state(type(self).__name__, attr, "is not a tokenizer's JSON text")
                from tokenizers import Tokenizer

                try:
                    state[attr] = Tokenizer.from_str(text)
                    state[attr].encode("a")  # a model the parser accepts may still not run
                except Exception as exc:  # the parser's own error, named
                    raise refuse_state(
                        type(self).__name__, attr, f"does not parse ({exc})"
                    ) from None
        if hasattr(self, "_get_param_names"):  # before a parent's __setstate__ uses them
            names = [k for k in self._get_param_names() if k in state]
            check_params(self, params={k: state[k] for k in names})
        parent = super()
        if hasattr(parent, "__setstate__"):
            parent.__setstate__(state)
        else:  # pragma: no cover - object.__setstate__ does not exist before Python 3.11
            self.__dict__.update(state)
        check_state(self)

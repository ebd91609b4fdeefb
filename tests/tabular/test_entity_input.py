"""Tests of ``skembed/tabular/_entity_input.py`` (moved from ``tests/tabular/test_entity.py`` to the mirrored path)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pd = pytest.importorskip("pandas")
from skembed.tabular.entity import EntityEmbedder, embedding_width  # noqa: E402

FAST = dict(hidden_layer_sizes=(16,), epochs=3, random_state=0)
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


def grouped(n_per=40, seed=0):
    """8 cities, y = 1 for the first four; a noise column ``size``; a numeric column."""
    rng = np.random.RandomState(seed)
    cities = np.array([f"city{i}" for i in range(8)])
    city = np.repeat(cities, n_per)
    rng.shuffle(city)
    y = np.isin(city, cities[:4]).astype(int)
    X = pd.DataFrame(
        {
            "city": city,
            "size": rng.choice(["S", "M", "L"], size=city.size),
            "weight": rng.normal(size=city.size),
        }
    )
    return X, y


def _city_frame():
    return pd.DataFrame({"city": list("abcab" * 4)})


def test_width_rule_by_hand():
    assert [embedding_width(c) for c in (1, 2, 3, 4, 10, 11, 99, 100, 101, 10**5)] == [
        1, 1, 2, 2, 5, 6, 50, 50, 50, 50,
    ]  # fmt: skip
    rng = np.random.RandomState(0)
    X = pd.DataFrame(
        {
            "a": rng.choice(list("abc"), 300),  # 3 values -> 2
            "b": rng.choice([f"v{i}" for i in range(10)], 300),  # 10 -> 5
            "c": np.arange(300).astype(str),  # 300 -> 50 (all infrequent, still counted)
        }
    )
    y = rng.randint(0, 2, 300)
    est = EntityEmbedder(epochs=1, random_state=0).fit(X, y)
    assert est.embedding_dims_ == [2, 5, 50]
    assert [t.shape for t in est.embeddings_] == [(4, 2), (11, 5), (1, 50)]
    assert est.transform(X).shape == (300, 57)
    est = EntityEmbedder(embedding_dims=3, epochs=1, random_state=0).fit(X, y)
    assert est.embedding_dims_ == [3, 3, 3]
    est = EntityEmbedder(embedding_dims={"b": 7}, epochs=1, random_state=0).fit(X, y)
    assert est.embedding_dims_ == [2, 7, 50]
    with pytest.raises(ValueError, match="not an embedded column"):
        EntityEmbedder(embedding_dims={"zz": 7}, epochs=1).fit(X, y)


def test_unknown_infrequent_and_missing_categories():
    city = np.array(["a"] * 20 + ["b"] * 20 + [None] * 10 + ["r1", "r2", "r3"], dtype=object)
    y = np.array([0] * 20 + [1] * 20 + [0] * 10 + [1] * 3)
    X = city.reshape(-1, 1)
    est = EntityEmbedder(min_frequency=5, **FAST).fit(X, y)
    cats = est.categories_[0]
    assert len(cats) == 3 and pd.isna(cats).sum() == 1  # a, b and missing; r1..r3 infrequent
    assert sorted(est.infrequent_categories_[0]) == ["r1", "r2", "r3"]
    table = est.embeddings_[0]
    nan_row = table[int(np.flatnonzero(pd.isna(cats))[0]) + 1]
    new = np.array([["r1"], ["never-seen"], [np.nan], [None], [pd.NA]], dtype=object)
    out = est.transform(new)
    np.testing.assert_array_equal(out[0], table[0])  # infrequent -> unknown row
    np.testing.assert_array_equal(out[1], table[0])  # unseen -> unknown row
    for row in out[2:]:  # NaN, None and pd.NA are the one missing category
        np.testing.assert_array_equal(row, nan_row)
    assert not np.array_equal(nan_row, table[0])
    strict = EntityEmbedder(min_frequency=5, handle_unknown="error", **FAST).fit(X, y)
    strict.transform(new[[0, 2]])  # infrequent but seen in fit is not unknown
    with pytest.raises(ValueError, match=r"unknown categories \['never-seen'\] in column 'x0'"):
        strict.transform(new)


def test_column_selection_feature_names_and_remainder():
    X, y = grouped()
    est = EntityEmbedder(**FAST).fit(X, y)  # from_dtype: city and size
    np.testing.assert_array_equal(est.categorical_features_, [0, 1])
    assert list(est.get_feature_names_out()) == [
        "city_emb0", "city_emb1", "city_emb2", "city_emb3", "size_emb0", "size_emb1", "weight",
    ]  # fmt: skip
    out = est.transform(X)
    w = X["weight"].to_numpy()
    np.testing.assert_allclose(out[:, -1], (w - w.mean()) / w.std(), rtol=1e-5, atol=1e-6)
    est.set_params(remainder="passthrough").fit(X, y)
    np.testing.assert_allclose(est.transform(X)[:, -1], w, rtol=1e-6)
    assert est.set_params(remainder="drop").fit(X, y).transform(X).shape == (len(X), 6)
    two = X[["city", "weight"]]
    for spec in (["city"], [0], [True, False]):
        est = EntityEmbedder(categorical_features=spec, remainder="drop", **FAST).fit(two, y)
        assert list(est.get_feature_names_out()) == [f"city_emb{i}" for i in range(4)]
    est.set_output(transform="pandas")
    frame = est.transform(two)
    assert list(frame.columns) == [f"city_emb{i}" for i in range(4)]
    numeric = np.random.RandomState(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="found no categorical column"):
        EntityEmbedder(**FAST).fit(numeric, np.arange(20) % 2)
    with pytest.raises(ValueError, match="do not all convert to float"):
        EntityEmbedder(categorical_features=["city"], **FAST).fit(X.astype(object), y)


def test_missing_numeric_values_sit_at_the_mean():
    X, y = grouped()
    X.loc[:4, "weight"] = np.nan
    out = EntityEmbedder(**FAST).fit(X, y).transform(X)
    np.testing.assert_array_equal(out[:5, -1], 0.0)
    assert np.isfinite(out).all()


def test_single_class_target_is_refused():
    # was fitted silently with classes_ == [0]: a net trained to predict a constant
    with pytest.raises(ValueError, match="only one class.*at least 2 classes"):
        EntityEmbedder(epochs=1).fit(_city_frame(), [0] * 20)


@pytest.mark.parametrize("missing", [None, pd.NA, np.nan], ids=["None", "pd.NA", "nan"])
def test_missing_labels_are_named(missing):
    y = pd.Series(["x", "y", "x", "y", "x"] * 4, dtype=object)
    y[7] = missing
    # was numpy's "'<' not supported between str and NoneType" / pandas' "boolean value of NA"
    with pytest.raises(ValueError, match="1 missing label.*position 7"):
        EntityEmbedder(epochs=1).fit(_city_frame(), y)
    with pytest.raises(ValueError, match="missing label"):
        EntityEmbedder(epochs=1).fit(_city_frame(), pd.array(y.tolist(), dtype="string"))

"""Tests of ``skembed/compression/_quantize.py``: sentence-transformers' semantics, refusals."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skembed import EmbeddingQuantizer


def embeddings(n=50, d=16, seed=0):
    return np.random.RandomState(seed).normal(size=(n, d))


@pytest.mark.parametrize("precision", ["int8", "uint8", "binary", "ubinary"])
def test_equals_sentence_transformers_quantize_embeddings(precision):
    st = pytest.importorskip("sentence_transformers.quantization")
    X = embeddings()
    ours = EmbeddingQuantizer(precision).fit(X).transform(X)
    theirs = st.quantize_embeddings(X, precision=precision, calibration_embeddings=X)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)
    new = embeddings(seed=1) * 0.5  # inside the calibrated range mostly; clipped where not
    inside = np.all((new >= X.min(0)) & (new <= X.max(0)), axis=1)
    ours = EmbeddingQuantizer(precision).fit(X).transform(new)
    theirs = st.quantize_embeddings(new, precision=precision, calibration_embeddings=X)
    np.testing.assert_array_equal(ours[inside], theirs[inside])


def test_int8_codes_by_hand():
    X = np.array([[0.0, 10.0], [2.0, 20.0], [1.0, 15.0]])
    q = EmbeddingQuantizer("int8").fit(X)
    np.testing.assert_array_equal(q.ranges_, [[0.0, 10.0], [2.0, 20.0]])
    # floor((x - lo) / ((hi - lo) / 255)) - 128: 1.0 -> floor(127.5) - 128 = -1; the maximum
    # gives 254.99998 in float32 (as in sentence-transformers), so 254 - 128 = 126
    np.testing.assert_array_equal(q.transform(X), [[-128, -128], [126, 126], [-1, -1]])
    # outside the calibrated range: clipped to the end codes (no wrap-around)
    np.testing.assert_array_equal(q.transform([[-5.0, 99.0]]), [[-128, 127]])
    assert q.bytes_per_row_ == 2


def test_binary_packs_eight_dimensions_per_byte():
    X = np.array([[1.0, -1, 1, -1, 1, -1, 1, -1, 1], [-1.0, 1, -1, 1, -1, 1, -1, 1, -1]])
    q = EmbeddingQuantizer("ubinary").fit(X)
    np.testing.assert_array_equal(q.transform(X), [[0b10101010, 0b10000000], [0b01010101, 0]])
    assert q.bytes_per_row_ == 2 and len(q.get_feature_names_out()) == 2
    signed = EmbeddingQuantizer("binary").fit(X).transform(X)
    np.testing.assert_array_equal(signed, [[170 - 128, 0], [85 - 128, -128]])
    bits = EmbeddingQuantizer("binary", pack=False).fit(X).transform(X)
    np.testing.assert_array_equal(bits, X > 0)


def test_constant_column_is_refused_for_eight_bits_with_the_reason():
    X = embeddings()
    X[:, 3] = 0.25
    with pytest.raises(ValueError, match=r"column\(s\) \[3\] are constant.*precision='binary'"):
        EmbeddingQuantizer("int8").fit(X)
    assert EmbeddingQuantizer("binary").fit(X).bytes_per_row_ == 2


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_are_refused_naming_column_and_row(bad):
    X = embeddings()
    X[7, 5] = bad
    with pytest.raises(ValueError, match=rf"column 5 holds {bad} at row 7 \(1 NaN or inf"):
        EmbeddingQuantizer().fit(X)
    q = EmbeddingQuantizer().fit(embeddings())
    with pytest.raises(ValueError, match="transform: column 5"):
        q.transform(X)


def test_quality_int8_keeps_cosine_similarities():
    """Cosine similarities of centred int8 codes correlate >= 0.98 with those of the floats.

    Random normal rows have small cosines (about ±0.12), the hardest case for 255 levels;
    measured 0.986 here.
    """
    X = embeddings(300, 64)
    codes = EmbeddingQuantizer("int8").fit(X).transform(X).astype(np.float64)

    def cosines(Z):
        Z = Z - Z.mean(0)
        Z = Z / np.linalg.norm(Z, axis=1, keepdims=True)
        return (Z @ Z.T)[np.triu_indices(len(Z), 1)]

    assert np.corrcoef(cosines(X), cosines(codes))[0, 1] >= 0.98


def test_pickle_keeps_the_calibration():
    q = EmbeddingQuantizer("uint8").fit(embeddings())
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(q)).ranges_, q.ranges_)


@parametrize_with_checks(
    [EmbeddingQuantizer(), EmbeddingQuantizer("ubinary")],
    expected_failed_checks=lambda est: (
        {
            "check_fit2d_1sample": "one row makes every column constant: refused with the reason",
        }
        if est.precision == "int8"
        else {}
    ),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)

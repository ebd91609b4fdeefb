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
    [
        EmbeddingQuantizer(),
        EmbeddingQuantizer("ubinary"),
        EmbeddingQuantizer("ubinary", rotation="itq", n_iter=5, random_state=0),
    ],
    expected_failed_checks=lambda est: (
        {
            "check_fit2d_1sample": "one row makes every column constant: refused with the reason",
        }
        if est.precision == "int8"
        else {"check_fit2d_1sample": "ITQ learns from the spread of the rows: one is refused"}
        if est.rotation == "itq"
        else {}
    ),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_itq_rotation_is_orthogonal_and_lowers_the_quantization_loss():
    # anisotropic rows (the variance of an SVD embedding sits in its first coordinates)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 8)) * np.array([8.0, 4, 2, 1, 0.5, 0.25, 0.1, 0.05]) + 3.0
    q = EmbeddingQuantizer("ubinary", pack=False, rotation="itq", n_iter=50, random_state=0)
    q.fit(X)
    np.testing.assert_allclose(q.mean_, X.mean(axis=0))
    np.testing.assert_allclose(q.rotation_ @ q.rotation_.T, np.eye(8), atol=1e-12)
    V = (X - X.mean(axis=0)) @ q.rotation_
    B = 2.0 * q.transform(X) - 1.0  # the codes as +-1
    np.testing.assert_array_equal(B, np.where(V > 0, 1.0, -1.0))

    def loss(R):  # ITQ's objective, ||B - V R||^2 with B = sign(V R)
        VR = (X - X.mean(axis=0)) @ R
        return float(((np.where(VR >= 0, 1.0, -1.0) - VR) ** 2).sum())

    # measured: ITQ 19,185; the identity 25,757; the best of 50 random rotations 19,653
    randoms = [loss(np.linalg.qr(rng.normal(size=(8, 8)))[0]) for _ in range(50)]
    assert loss(q.rotation_) < 0.8 * loss(np.eye(8))
    assert loss(q.rotation_) < min(randoms)
    # packed as usual: 8 dimensions in one byte, the same bits
    packed = EmbeddingQuantizer("ubinary", rotation="itq", random_state=0).fit(X).transform(X)
    np.testing.assert_array_equal(np.unpackbits(packed, axis=1), q.transform(X))
    assert EmbeddingQuantizer("binary", rotation="itq").fit(X).bytes_per_row_ == 1


def test_itq_is_refused_for_eight_bits_and_for_one_row():
    with pytest.raises(ValueError, match=r"rotation='itq' is for the binary precisions"):
        EmbeddingQuantizer("int8", rotation="itq").fit(embeddings())
    with pytest.raises(ValueError, match=r"fit got 1 row"):
        EmbeddingQuantizer("binary", rotation="itq").fit(embeddings(n=1))


def test_quality_itq_bits_keep_more_of_an_lsa_embedding_than_raw_signs():
    # 600 BBC News articles, 3 folds: LSA (100 dims) scored by a logistic regression on its
    # float32 coordinates, on its raw signs, and on ITQ bits (measured: 0.958, 0.875, 0.950)
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from skembed import TfidfLSA
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    pick = np.random.default_rng(0).permutation(len(texts))[:600]
    texts, y = [texts[i] for i in pick], np.asarray(labels)[pick]
    scores = {"float": [], "sign": [], "itq": []}
    for tr, te in StratifiedKFold(3, shuffle=True, random_state=0).split(texts, y):
        lsa = TfidfLSA(random_state=0).fit([texts[i] for i in tr])
        A, B = lsa.transform([texts[i] for i in tr]), lsa.transform([texts[i] for i in te])
        for name, step in (
            ("float", None),
            ("sign", EmbeddingQuantizer("binary", pack=False)),
            ("itq", EmbeddingQuantizer("binary", pack=False, rotation="itq", random_state=0)),
        ):
            a, b = (A, B) if step is None else (step.fit(A).transform(A), step.transform(B))
            model = LogisticRegression(C=10.0, max_iter=2000).fit(a, y[tr])
            scores[name].append(model.score(b, y[te]))
    mean = {k: float(np.mean(v)) for k, v in scores.items()}
    assert mean["float"] > 0.93
    assert mean["itq"] >= 0.97 * mean["float"]
    assert mean["sign"] < mean["itq"] - 0.03


def _crafted(tmp_path, quantizer, **state):
    skops = pytest.importorskip("skops.io")
    from skembed.model_selection import load_pipeline

    for attr, value in state.items():
        setattr(quantizer, attr, value)
    path = tmp_path / "q.skops"
    skops.dump(quantizer, path)
    return lambda: load_pipeline(path)


def test_a_loaded_quantizer_is_cross_checked_against_its_precision_and_width(tmp_path):
    from skembed import EmbeddingQuantizer

    X = np.random.default_rng(0).normal(size=(20, 10))
    int8 = EmbeddingQuantizer("int8").fit(X)
    ranges = int8.ranges_.copy()
    ranges[1, 3] = ranges[0, 3]  # equal ends: a step of 0 divides by zero
    with pytest.raises(ValueError, match="ranges_ has an empty range in column 3"):
        _crafted(tmp_path, EmbeddingQuantizer("int8").fit(X), ranges_=ranges)()
    with pytest.raises(ValueError, match="ranges_ is missing, but precision='int8'"):
        _crafted(tmp_path, EmbeddingQuantizer("binary").fit(X), precision="int8")()
    with pytest.raises(ValueError, match="ranges_ is set although precision='ubinary'"):
        _crafted(tmp_path, EmbeddingQuantizer("int8").fit(X), precision="ubinary")()
    with pytest.raises(ValueError, match="bytes_per_row_ is 3, but precision='binary' .* 2"):
        _crafted(tmp_path, EmbeddingQuantizer("binary").fit(X), bytes_per_row_=3)()
    loaded = _crafted(tmp_path, EmbeddingQuantizer("int8").fit(X))()
    np.testing.assert_array_equal(loaded.transform(X), int8.transform(X))

import numpy as np
import pytest

from skembed.text._pooling import (
    count_matrix,
    first_principal_component,
    pool,
    sif_weights,
    smooth_idf,
)

# three words with 2-d vectors; documents [0, 0, 1], [2], []
VECTORS = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 4.0]])
COUNTS = count_matrix(np.array([0, 0, 1, 2]), np.array([0, 3, 4, 4]), 3)


def test_count_matrix():
    np.testing.assert_array_equal(COUNTS.toarray(), [[2, 1, 0], [0, 0, 1], [0, 0, 0]])


def test_mean_sum_max():
    np.testing.assert_allclose(pool(COUNTS, VECTORS, "mean"), [[2 / 3, 2 / 3], [-1, 4], [0, 0]])
    np.testing.assert_allclose(pool(COUNTS, VECTORS, "sum"), [[2, 2], [-1, 4], [0, 0]])
    np.testing.assert_allclose(pool(COUNTS, VECTORS, "max"), [[1, 2], [-1, 4], [0, 0]])


def test_tfidf_pooling_is_idf_weighted_token_mean():
    idf = smooth_idf(COUNTS)
    # n = 3 documents; df = [1, 1, 1] -> idf = ln(4/2) + 1 for every word
    np.testing.assert_allclose(idf, np.log(2) + 1)
    idf = np.array([1.0, 3.0, 1.0])
    expected = (2 * 1.0 * VECTORS[0] + 1 * 3.0 * VECTORS[1]) / (2 * 1.0 + 3.0)
    np.testing.assert_allclose(pool(COUNTS, VECTORS, "tfidf", idf=idf)[0], expected)


def test_sif_weights_and_component_removal():
    w = sif_weights(np.array([8, 1, 1]), a=0.1)
    np.testing.assert_allclose(w, 0.1 / (0.1 + np.array([0.8, 0.1, 0.1])))
    comp = np.array([0.0, 1.0])
    out = pool(COUNTS, VECTORS, "sif", sif_weight=w, sif_component=comp)
    avg = (2 * w[0] * VECTORS[0] + w[1] * VECTORS[1]) / (2 * w[0] + w[1])
    np.testing.assert_allclose(out[0], [avg[0], 0.0])  # projection on the component removed
    np.testing.assert_allclose(out[2], 0.0)


def test_first_principal_component():
    X = np.array([[3.0, 0.0], [-3.0, 0.1], [2.9, -0.1]])
    comp = first_principal_component(X)
    assert abs(comp[0]) == pytest.approx(1.0, abs=1e-2)
    assert comp[np.argmax(np.abs(comp))] > 0


def test_unknown_method():
    with pytest.raises(ValueError, match="not one of"):
        pool(COUNTS, VECTORS, "median")
    with pytest.raises(ValueError, match="IDF"):
        pool(COUNTS, VECTORS, "tfidf")

"""KeyedVectors on gensim's own ``test_keyedvectors.py``: its files, values and round trips.

The expected neighbours and similarities are gensim's, recorded in its test on its
``euclidean_vectors.bin``; the round trips write gensim's random 20 x 100 vectors in each
format and read them back exactly; the binary-reader cases (``limit``, words preceded by
newlines) are gensim's ``LoadWord2VecFormatTest``.
"""

import numpy as np
import pytest

from skembed import KeyedVectors

#: gensim's recorded five nearest words of "war" in euclidean_vectors.bin
WAR_NEIGHBOURS = ["conflict", "administration", "terrorism", "call", "israel"]


@pytest.fixture(scope="module")
def euclidean(gensim_datapath):
    return KeyedVectors.load_word2vec_format(gensim_datapath("euclidean_vectors.bin"), binary=True)


def test_most_similar_and_similarity_match_gensims_recorded_values(euclidean):
    assert [w for w, _ in euclidean.most_similar("war", topn=5)] == WAR_NEIGHBOURS
    by_vector = [w for w, _ in euclidean.similar_by_vector(euclidean["war"], topn=5)]
    assert by_vector == ["war", *WAR_NEIGHBOURS[:4]]
    assert euclidean.similarity("war", "war") == pytest.approx(1.0, abs=1e-6)
    assert euclidean.similarity("war", "conflict") == pytest.approx(0.93305397, abs=1e-6)
    assert len(euclidean.most_similar("war", topn=10)) == 10
    restricted = {w for w, _ in euclidean.most_similar("war", topn=5, restrict_vocab=5)}
    assert restricted == set(euclidean.index_to_key[:5])  # "war" is not among them


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "binary, header", [(False, True), (True, True), (False, False)], ids=["text", "bin", "noheader"]
)
def test_save_reload_is_exact(tmp_path, seed, binary, header):
    """gensim's test_save_reload / test_no_header: 20 keys, 100 dimensions of
    ``pseudorandom_weak_vector`` values, read back equal."""
    rng = np.random.default_rng(seed)
    vectors = ((rng.random((20, 100)) - 0.5) / 100).astype(np.float32)
    keys = [str(i) for i in range(20)]
    path = tmp_path / "kv"
    KeyedVectors(vectors, keys).save_word2vec_format(path, binary=binary, write_header=header)
    reloaded = KeyedVectors.load_word2vec_format(path, binary=binary, no_header=not header)
    assert reloaded.index_to_key == keys
    assert np.array_equal(reloaded.vectors, vectors)


def _write_gensim_binary(path, vectors_by_word):
    """gensim's ``save_dict_to_word2vec_formated_file``: no newline after each vector."""
    with open(path, "wb") as f:
        f.write(f"{len(vectors_by_word)} 3\n".encode("ascii"))
        for word, vector in vectors_by_word.items():
            f.write(word.encode() + b" " + np.asarray(vector, np.float32).tobytes())


@pytest.mark.parametrize(
    "vectors_by_word",
    [
        {"abc": [1, 2, 3], "cde": [4, 5, 6], "def": [7, 8, 9]},
        {"abc": [1, 2, 3], "cdefg": [4, 5, 6], "d": [7, 8, 9]},
        {"\nabc": [1, 2, 3], "cdefdg": [4, 5, 6], "\n\ndef": [7, 8, 9]},
    ],
    ids=["basic", "lengths", "space-stripping"],
)
@pytest.mark.parametrize("limit", [None, 1, 2])
def test_binary_reader_cases_of_gensim(tmp_path, vectors_by_word, limit):
    path = tmp_path / "w2v.bin"
    _write_gensim_binary(path, vectors_by_word)
    kv = KeyedVectors.load_word2vec_format(path, binary=True, limit=limit)
    kept = list(vectors_by_word)[:limit]
    assert kv.index_to_key == [w.lstrip() for w in kept]
    np.testing.assert_array_equal(kv.vectors, np.array([vectors_by_word[w] for w in kept]))

import numpy as np
import pytest

from skembed import KeyedVectors

WORDS = ["king", "queen", "man", "woman", "apple"]
VECS = np.array(
    [[1.0, 1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.1], [0.0, -1.0, 0.1], [0.0, 0.0, 1.0]],
    dtype=np.float32,
)


@pytest.fixture
def kv():
    return KeyedVectors(VECS, WORDS, counts=[5, 4, 3, 2, 1])


def test_lookup_and_contains(kv):
    np.testing.assert_array_equal(kv["queen"], VECS[1])
    np.testing.assert_array_equal(kv[["man", "king"]], VECS[[2, 0]])
    assert "apple" in kv and "pear" not in kv
    assert len(kv) == 5 and kv.vector_size == 3
    with pytest.raises(KeyError, match="'pear' is not in the vocabulary"):
        kv["pear"]


def test_similarity_and_norms(kv):
    assert kv.similarity("king", "queen") == pytest.approx(0.0, abs=1e-7)
    np.testing.assert_allclose(kv.norms, np.linalg.norm(VECS, axis=1), rtol=1e-6)


def test_most_similar_3cosadd(kv):
    # king - man + woman: unit(king) - unit(man) + unit(woman) is closest to queen
    best, _ = kv.most_similar(positive=["king", "woman"], negative=["man"], topn=1)[0]
    assert best == "queen"
    result = kv.most_similar("king", topn=2)
    assert [w for w, _ in result][0] != "king"
    sims = kv.most_similar("king", topn=None)
    assert sims.shape == (5,)


def test_constructor_errors():
    with pytest.raises(ValueError, match="3 rows but 2 keys"):
        KeyedVectors(np.zeros((3, 2)), ["a", "b"])
    with pytest.raises(ValueError, match="duplicate"):
        KeyedVectors(np.zeros((2, 2)), ["a", "a"])
    with pytest.raises(ValueError, match="NaN"):
        KeyedVectors(np.array([[np.nan, 0.0]]), ["a"])


@pytest.mark.parametrize("binary", [False, True])
def test_round_trip_and_gensim_interop(kv, tmp_path, binary):
    gensim_kv = pytest.importorskip("gensim.models.keyedvectors")
    path = tmp_path / ("v.bin" if binary else "v.txt")
    kv.save_word2vec_format(path, binary=binary)
    back = KeyedVectors.load_word2vec_format(path, binary=binary)
    assert back.index_to_key == WORDS
    np.testing.assert_array_equal(back.vectors, VECS)
    theirs = gensim_kv.KeyedVectors.load_word2vec_format(str(path), binary=binary)
    assert theirs.index_to_key == WORDS
    np.testing.assert_allclose(theirs.vectors, VECS, rtol=0, atol=0)
    # and the other way round
    path2 = tmp_path / ("g.bin" if binary else "g.txt")
    theirs.save_word2vec_format(str(path2), binary=binary)
    np.testing.assert_array_equal(
        KeyedVectors.load_word2vec_format(path2, binary=binary).vectors, VECS
    )


def test_reads_gensim_test_files(gensim_datapath):
    gensim_kv = pytest.importorskip("gensim.models.keyedvectors")
    for name, binary, no_header in [
        ("word2vec_pre_kv_c", False, False),
        ("euclidean_vectors.bin", True, False),
        ("toy-model.vec", False, False),
        ("test_glove.txt", False, True),
    ]:
        path = gensim_datapath(name)
        ours = KeyedVectors.load_word2vec_format(path, binary=binary, no_header=no_header)
        theirs = gensim_kv.KeyedVectors.load_word2vec_format(
            path, binary=binary, no_header=no_header
        )
        assert ours.index_to_key == theirs.index_to_key
        np.testing.assert_allclose(ours.vectors, theirs.vectors, rtol=0, atol=1e-7)


def test_corrupt_files_are_clear_errors(kv, tmp_path):
    path = tmp_path / "v.bin"
    kv.save_word2vec_format(path, binary=True)
    data = path.read_bytes()
    (tmp_path / "trunc.bin").write_bytes(data[:-7])
    with pytest.raises(ValueError, match="trunc.bin: byte offset \\d+: file ends"):
        KeyedVectors.load_word2vec_format(tmp_path / "trunc.bin", binary=True)
    (tmp_path / "huge.bin").write_bytes(b"999999999 300\n" + data[6:])
    with pytest.raises(ValueError, match="byte offset 0: header announces"):
        KeyedVectors.load_word2vec_format(tmp_path / "huge.bin", binary=True)
    (tmp_path / "bad.txt").write_text("2 3\nking 1 2 3\nqueen 1 2\n")
    with pytest.raises(ValueError, match="bad.txt: line 3 has 2 values, expected 3"):
        KeyedVectors.load_word2vec_format(tmp_path / "bad.txt")
    (tmp_path / "short.txt").write_text("3 1\nking 1\n")
    with pytest.raises(ValueError, match="announces 3 vectors but the file holds 1"):
        KeyedVectors.load_word2vec_format(tmp_path / "short.txt")

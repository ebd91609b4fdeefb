"""The word2vec text and binary format reader: positions in errors, undecodable words."""

import numpy as np
import pytest

from skembed import KeyedVectors


@pytest.mark.parametrize("binary", [False, True])
def test_duplicate_word_names_file_position_and_word(tmp_path, binary):
    path = tmp_path / ("dup.bin" if binary else "dup.txt")
    vecs = np.arange(6, dtype=np.float32).reshape(3, 2)
    rows = [("king", vecs[0]), ("queen", vecs[1]), ("king", vecs[2])]
    with open(path, "wb") as fh:
        fh.write(b"3 2\n")
        for word, vec in rows:
            if binary:
                fh.write(word.encode() + b" " + vec.astype("<f4").tobytes() + b"\n")
            else:
                fh.write(f"{word} {vec[0]} {vec[1]}\n".encode())
    # the third entry starts at line 4; in binary after the header and two entries
    offset = len(b"3 2\n") + len(b"king ") + 9 + len(b"queen ") + 9
    where = f"byte offset {offset}" if binary else "line 4"
    with pytest.raises(ValueError, match=rf"dup\.(bin|txt): {where}: duplicate word 'king'"):
        KeyedVectors.load_word2vec_format(path, binary=binary)


@pytest.mark.parametrize("binary", [False, True])
def test_invalid_utf8_loads_with_unicode_errors(tmp_path, binary):
    path = tmp_path / ("bad.bin" if binary else "bad.txt")
    words = [b"caf\xc3", b"ok"]  # a word cut inside a UTF-8 sequence, as in truncated vocabularies
    with open(path, "wb") as fh:
        fh.write(b"2 2\n")
        for i, word in enumerate(words):
            vec = np.array([i, i + 1], dtype="<f4")
            line = vec.tobytes() if binary else f"{vec[0]} {vec[1]}".encode()
            fh.write(word + b" " + line + b"\n")
    with pytest.raises(
        ValueError, match=r"bad\.(bin|txt): (line 2|byte offset 4): .*unicode_errors"
    ):
        KeyedVectors.load_word2vec_format(path, binary=binary)
    kv = KeyedVectors.load_word2vec_format(path, binary=binary, unicode_errors="ignore")
    assert kv.index_to_key == ["caf", "ok"]
    np.testing.assert_array_equal(kv["ok"], [1.0, 2.0])
    kv = KeyedVectors.load_word2vec_format(path, binary=binary, unicode_errors="replace")
    assert kv.index_to_key == ["caf\ufffd", "ok"]


def test_read_text_without_header_and_with_a_limit(tmp_path):
    from skembed._word2vec_format import read_text

    path = tmp_path / "glove.txt"
    path.write_text("the 1 2\ncat 3 4.5\nsat 0 -1\n")
    vectors, words = read_text(path, no_header=True, limit=2)
    assert words == ["the", "cat"] and vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors, [[1, 2], [3, 4.5]])
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ValueError, match=r"empty\.txt: no vectors found"):
        read_text(tmp_path / "empty.txt", no_header=True)

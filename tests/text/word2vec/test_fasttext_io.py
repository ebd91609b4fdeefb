"""The Facebook fastText .bin reader: truncated, corrupt and supervised files get clear errors."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from skembed.text.word2vec._fasttext_io import load_facebook_vectors

pytest.importorskip("gensim")
from gensim.test.utils import datapath  # noqa: E402


def _bin_bytes():
    with open(datapath("lee_fasttext_new.bin"), "rb") as fh:
        return fh.read()


@pytest.mark.parametrize("cut", [5, 40, 80, 1000, 30_000, 150_000, -3])
def test_truncated_bin_raises_clear_error(tmp_path, cut):
    data = _bin_bytes()
    path = tmp_path / "truncated.bin"
    path.write_bytes(data[:cut])
    with pytest.raises(ValueError, match=r"truncated\.bin: byte offset \d+"):
        load_facebook_vectors(path)


def test_garbage_header_raises_without_huge_allocation(tmp_path):
    data = bytearray(_bin_bytes())
    path = tmp_path / "corrupt.bin"
    # new format: 8-byte signature + 12 int32 + float64 = 64 bytes, then dictionary sizes
    corrupt = bytearray(data)
    corrupt[64:76] = struct.pack("<3i", 2**31 - 1, 2**31 - 1, 0)
    path.write_bytes(bytes(corrupt))
    with pytest.raises(ValueError, match=r"corrupt\.bin: byte offset 64: dictionary"):
        load_facebook_vectors(path)
    # implausible vector size
    corrupt = bytearray(data)
    corrupt[8:12] = struct.pack("<i", -7)
    path.write_bytes(bytes(corrupt))
    with pytest.raises(ValueError, match=r"corrupt\.bin: byte offset 0: implausible header"):
        load_facebook_vectors(path)
    # random bytes
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(ValueError, match=r"corrupt\.bin: byte offset"):
        load_facebook_vectors(path)


def test_supervised_model_refused(tmp_path):
    data = bytearray(_bin_bytes())
    data[72:76] = struct.pack("<i", 3)  # nlabels
    path = tmp_path / "sup.bin"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="supervised"):
        load_facebook_vectors(path)

"""Chunk preparation (``skembed.kernels._prepare``): remap, subsampling with word2vec.c's LCG,
and the same tokens on any number of threads (the LCG jumped ahead to each piece)."""

import numpy as np
import pytest

from skembed.kernels import _prepare
from skembed.kernels._core import _seed_state
from skembed.kernels._prepare import lcg_jump, prepare_chunk

M64 = 2**64


def by_hand(raw_ids, raw_offsets, remap, keep_prob, seed):
    """The sequential loop in Python integers: one LCG step per known token whose keep
    probability is below 1, dropped when that probability is below 24 bits of the state."""
    state = int(_seed_state(seed, 0))
    ids, offsets, n_known = [], [0], 0
    for d in range(len(raw_offsets) - 1):
        for p in range(raw_offsets[d], raw_offsets[d + 1]):
            w = int(remap[raw_ids[p]])
            if w < 0:
                continue
            n_known += 1
            kp = keep_prob[w]
            if kp < 1.0:
                state = (state * 25214903917 + 11) % M64
                if kp < np.float32((state >> 16) & 0xFFFFFF) * np.float32(1.0 / 16777216.0):
                    continue
            ids.append(w)
        offsets.append(len(ids))
    return ids, offsets, n_known


def test_lcg_jump_is_the_lcg_stepped_n_times():
    x, states = 5, {0: 5}
    for n in range(1, 1001):
        x = (x * 25214903917 + 11) % M64
        states[n] = x
    for n in (0, 1, 2, 3, 64, 999, 1000):
        assert lcg_jump(5, n) == states[n]
    assert lcg_jump(lcg_jump(7, 123), 456) == lcg_jump(7, 579)
    assert lcg_jump(M64 - 1, 1) == ((M64 - 1) * 25214903917 + 11) % M64


def test_prepare_chunk_remaps_drops_and_subsamples():
    raw = np.array([0, 1, 2, 3, 0, 2], np.int32)
    offsets = np.array([0, 3, 6], np.int64)
    remap = np.array([1, -1, 0, 2], np.int32)
    ids, offs, n_known = prepare_chunk(raw, offsets, remap, np.ones(3, np.float32), 0)
    assert ids.tolist() == [1, 0, 2, 1, 0] and offs.tolist() == [0, 2, 5] and n_known == 5
    keep = np.array([1.0, 0.5, 1.0], np.float32)
    many = np.tile(raw, 5000)
    ids, offs, _ = prepare_chunk(many, np.array([0, many.size]), remap, keep, 1)
    frac = (ids == 1).sum() / 10000  # word 1 occurs 10000 times before subsampling
    assert abs(frac - 0.5) < 0.03
    assert (ids == 0).sum() == 10000  # keep probability 1: never dropped
    again, _, _ = prepare_chunk(many, np.array([0, many.size]), remap, keep, 1)
    np.testing.assert_array_equal(ids, again)


def _corpus(seed=0, n_docs=300):
    rng = np.random.default_rng(seed)
    remap = rng.integers(-1, 400, 600).astype(np.int32)  # about 1 in 400 ids unknown
    remap[rng.random(600) < 0.2] = -1
    keep = rng.random(400).astype(np.float32)
    keep[rng.random(400) < 0.5] = 1.0  # half the words are never subsampled
    lengths = rng.integers(0, 60, n_docs)
    lengths[[3, 4, 5]] = 0  # empty documents, one of them a likely piece boundary
    lengths[7] = 2000  # a long document stays in one piece
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    raw = rng.integers(0, 600, offsets[-1]).astype(np.int32)
    return raw, offsets, remap, keep


@pytest.mark.parametrize("n_threads", [1, 2, 3, 5, 16])
def test_every_thread_count_gives_the_sequential_tokens(monkeypatch, n_threads):
    # pieces of at least 64 raw tokens, so that the 300 documents split on every count
    monkeypatch.setattr(_prepare, "MIN_PIECE_TOKENS", 64)
    raw, offsets, remap, keep = _corpus()
    ids, offs, n_known = prepare_chunk(raw, offsets, remap, keep, 1234, n_threads)
    want_ids, want_offs, want_known = by_hand(raw, offsets, remap, keep, 1234)
    assert ids.dtype == np.int32 and offs.dtype == np.int64
    assert ids.tolist() == want_ids and offs.tolist() == want_offs and n_known == want_known
    assert 0 < ids.size < n_known  # some tokens were subsampled away


def test_a_chunk_below_two_pieces_and_an_empty_vocabulary():
    raw, offsets, remap, keep = _corpus(1, 40)
    # below 2 * MIN_PIECE_TOKENS raw tokens: one piece, whatever n_threads
    assert raw.size < 2 * _prepare.MIN_PIECE_TOKENS
    ids, offs, _ = prepare_chunk(raw, offsets, remap, keep, 7, 8)
    assert (ids.tolist(), offs.tolist()) == by_hand(raw, offsets, remap, keep, 7)[:2]
    none = np.full(remap.size, -1, np.int32)
    ids, offs, n_known = prepare_chunk(raw, offsets, none, np.zeros(0, np.float32), 7, 2)
    assert ids.size == 0 and n_known == 0 and not offs.any() and offs.size == offsets.size

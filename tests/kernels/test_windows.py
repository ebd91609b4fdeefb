"""The torch engine's examples (``skembed/kernels/windows.py``): skip-gram pairs and CBOW
windows with word2vec's dynamic window, on hand-checkable inputs."""

import numpy as np

from skembed.kernels.windows import cbow_windows, skipgram_pairs


def test_pairs_and_windows_respect_documents():
    ids = np.array([5, 6, 7, 8], np.int32)
    offsets = np.array([0, 2, 4], np.int64)
    inputs, targets = skipgram_pairs(ids, offsets, 1, 0)
    assert sorted(zip(inputs.tolist(), targets.tolist(), strict=True)) == [
        (5, 6),
        (6, 5),
        (7, 8),
        (8, 7),
    ]
    ctx, tgt = cbow_windows(np.array([1, 2, 3], np.int32), np.array([0, 3]), 1, 0)
    assert tgt.tolist() == [1, 2, 3]
    assert ctx.tolist() == [[2, -1], [1, 3], [2, -1]]


def test_torch_engine_pairs_and_windows_do_not_scale_with_window():
    ids = np.arange(30, dtype=np.int32)
    offsets = np.array([0, 10, 30], np.int64)
    inputs, targets = skipgram_pairs(ids, offsets, 10**12, 3)
    # every other token of the document is a context of every centre
    assert inputs.shape == targets.shape == (10 * 9 + 20 * 19,)
    ref_i, ref_t = skipgram_pairs(ids, offsets, 5, 3)
    assert ref_i.shape[0] < inputs.shape[0]
    contexts, centres = cbow_windows(ids, offsets, 10**12, 3)
    assert contexts.shape == (30, 19)
    assert (contexts >= 0).sum() == 10 * 9 + 20 * 19
    assert cbow_windows(ids, offsets, 2, 3)[0].shape == (30, 4)

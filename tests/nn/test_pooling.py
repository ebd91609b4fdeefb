"""Transformer token pooling: masked statistics, windows merged, layers combined."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from skembed.nn.pooling import (  # noqa: E402
    combine_layers,
    finalize_pool,
    pool,
    pool_mask,
    pool_stats,
)

TOKENS = torch.tensor([[[1.0, 2.0], [3.0, 0.0], [9.0, 9.0]], [[4.0, -1.0], [0.0, 5.0], [2.0, 2.0]]])
MASK = torch.tensor([[1, 1, 0], [1, 1, 1]])


def test_pool_modes_ignore_padding_by_hand():
    assert pool(TOKENS, MASK, "cls").tolist() == [[1, 2], [4, -1]]
    assert pool(TOKENS, MASK, "mean").tolist() == [[2, 1], [2, 2]]
    assert pool(TOKENS, MASK, "max").tolist() == [[3, 2], [4, 5]]
    got = pool(TOKENS, MASK, "mean_sqrt_len")
    assert torch.allclose(got, torch.tensor([[4, 2], [6, 6]]) / torch.tensor([[2.0], [3.0]]).sqrt())
    with pytest.raises(ValueError, match="pooling must be one of"):
        pool(TOKENS, MASK, "median")


def test_stats_of_two_windows_merge_to_the_mean_of_the_whole():
    a, na = pool_stats(TOKENS[:, :1], MASK[:, :1], "mean")
    b, nb = pool_stats(TOKENS[:, 1:], MASK[:, 1:], "mean")
    assert torch.equal(finalize_pool(a + b, na + nb, "mean"), pool(TOKENS, MASK, "mean"))


def test_combine_layers():
    h = [torch.full((1, 1, 2), float(v)) for v in (1, 2, 6)]
    assert combine_layers(h, [-1, -2]).tolist() == [[[4.0, 4.0]]]
    assert combine_layers(h, [0, 2], "sum").tolist() == [[[7.0, 7.0]]]
    assert combine_layers(h, [0, 1], "concat").tolist() == [[[1.0, 1.0, 2.0, 2.0]]]
    assert combine_layers(h, [1]) is h[1]
    with pytest.raises(ValueError, match="combine must be one of"):
        combine_layers(h, [0, 1], "max")


def test_lasttoken_and_weightedmean_by_hand_on_either_padding_side():
    assert pool(TOKENS, MASK, "lasttoken").tolist() == [[3, 0], [2, 2]]
    # the k-th real token weighs k: (1*[1,2] + 2*[3,0]) / 3 and (1*[4,-1] + 2*[0,5] + 3*[2,2]) / 6
    expected = torch.tensor([[7 / 3, 2 / 3], [10 / 6, 15 / 6]])
    assert torch.allclose(pool(TOKENS, MASK, "weightedmean"), expected)
    # the same rows padded on the left (a decoder's batch) pool to the same vectors
    left = torch.stack([TOKENS[0, [2, 0, 1]], TOKENS[1]])
    left_mask = torch.tensor([[0, 1, 1], [1, 1, 1]])
    for mode in ("cls", "lasttoken", "weightedmean", "mean", "max"):
        assert torch.allclose(pool(left, left_mask, mode), pool(TOKENS, MASK, mode)), mode


def test_skipped_prefix_is_left_out_of_every_mode():
    """``n_skip`` leaves a prompt out of the pool (sentence-transformers' include_prompt=False),
    counted from each row's first real token."""
    mask = pool_mask(MASK, 1)
    assert mask.tolist() == [[False, True, False], [False, True, True]]
    stat, count = pool_stats(TOKENS, MASK, "mean", n_skip=1)
    assert finalize_pool(stat, count, "mean").tolist() == [[3, 0], [1, 3.5]]
    assert pool_stats(TOKENS, MASK, "cls", n_skip=1)[0].tolist() == [[3, 0], [0, 5]]
    left_mask = torch.tensor([[0, 1, 1], [1, 1, 1]])
    assert pool_mask(left_mask, 1).tolist() == [[False, False, True], [False, True, True]]

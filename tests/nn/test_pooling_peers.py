"""sentence-transformers' own pooling tests (``tests/models/test_pooling.py``) as oracles.

Each test keeps the peer's inputs, expected values and tolerances; ``Pooling``'s modes map to
:func:`skembed.nn.pooling.pool` and its ``include_prompt=False`` to ``pool_mask``'s ``n_skip``.
"""

import pytest

torch = pytest.importorskip("torch")

from skembed.nn.pooling import POOLING_MODES, pool, pool_mask  # noqa: E402


@pytest.mark.parametrize("mode", POOLING_MODES)
def test_every_mode_pools_mixed_padding_to_one_vector_per_row(mode):
    torch.manual_seed(0)
    tokens = torch.randn(3, 5, 8)
    attention_mask = torch.tensor([[1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    out = pool(tokens, attention_mask, mode)
    assert out.shape == (3, 8) and torch.isfinite(out).all()


def test_cls_is_the_first_token():
    torch.manual_seed(0)
    tokens = torch.randn(2, 3, 4)
    assert torch.allclose(pool(tokens, torch.ones(2, 3, dtype=torch.int64), "cls"), tokens[:, 0])


def test_max_respects_the_attention_mask():
    tokens = torch.tensor([[[1.0], [3.0], [5.0], [10.0]]])
    out = pool(tokens, torch.tensor([[1, 1, 1, 0]]), "max")
    assert out.shape == (1, 1) and torch.allclose(out, torch.tensor([[5.0]]))


def test_mean_and_mean_sqrt_len():
    tokens = torch.tensor([[[1.0], [3.0], [5.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert torch.allclose(pool(tokens, mask, "mean"), torch.tensor([[2.0]]), atol=1e-6)
    expected = (1.0 + 3.0) / (2.0**0.5)
    assert torch.allclose(
        pool(tokens, mask, "mean_sqrt_len"), torch.tensor([[expected]]), atol=1e-6
    )


def test_weightedmean_respects_the_attention_mask():
    # weights 1, 2, 3 by position; the third token is padding: (1*1 + 3*2) / (1 + 2)
    tokens = torch.tensor([[[1.0], [3.0], [10.0]]])
    out = pool(tokens, torch.tensor([[1, 1, 0]]), "weightedmean")
    assert torch.allclose(out, torch.tensor([[7.0 / 3.0]]), atol=1e-6)


def test_lasttoken_finds_the_last_attended_token():
    tokens = torch.tensor([[[0.0], [1.0], [2.0], [3.0]], [[5.0], [6.0], [7.0], [8.0]]])
    out = pool(tokens, torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]), "lasttoken")
    assert torch.allclose(out, torch.tensor([[2.0], [6.0]]), atol=1e-6)


def test_lasttoken_of_all_padding_is_a_zero_vector():
    out = pool(torch.ones(1, 4, 2), torch.zeros(1, 4, dtype=torch.int64), "lasttoken")
    assert out.shape == (1, 2) and torch.all(out == 0)


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_prompt_tokens_are_left_out_after_any_padding(padding_side):
    row = [1, 1, 1, 0, 0] if padding_side == "right" else [0, 0, 1, 1, 1]
    attention_mask = torch.tensor([row, row])
    keep = pool_mask(attention_mask, n_skip=2)
    pad = attention_mask.int().argmax(dim=1)  # leading padding (0 on the right side)
    for i in range(2):
        assert not keep[i, : pad[i] + 2].any()  # the padding and the 2 prompt tokens
        assert not keep[i, attention_mask[i] == 0].any()  # padding never turns on
    assert keep.sum().item() == 2  # one real token after the prompt in each row

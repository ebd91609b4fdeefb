"""Word2VecNet: the batched SGD step of word2vec's output layer and its input bags, by hand."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from skembed.nn.word2vec import Word2VecNet  # noqa: E402


def test_hidden_is_the_mean_of_each_bag():
    net = Word2VecNet(torch.tensor([[1.0, 0.0], [3.0, 2.0], [5.0, 4.0]]))
    rows, offsets, sizes = torch.tensor([0, 1, 2]), torch.tensor([0, 2]), torch.tensor([2, 1])
    assert net.hidden(rows, offsets, sizes).tolist() == [[2.0, 1.0], [5.0, 4.0]]
    one = torch.tensor([2, 0])
    assert net.hidden(one, torch.arange(2), torch.ones(2, dtype=torch.long)).tolist() == [
        [5.0, 4.0],
        [1.0, 0.0],
    ]


def test_output_step_follows_the_word2vec_update():
    syn0 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    out = torch.zeros(2, 2)
    net = Word2VecNet(syn0.clone(), syn1neg=out)
    l1 = net.hidden(torch.tensor([0]), torch.tensor([0]), torch.tensor([1]))
    idx, labels = torch.tensor([[0, 1]]), torch.tensor([[1.0, 0.0]])
    loss, grad_in = net.output_step(l1, net.syn1neg, idx, labels, torch.ones(1, 2), 0.1)
    # f = 0 for both rows: loss 2 log 2, g = (1 - 1/2) * 0.1 and (0 - 1/2) * 0.1
    assert float(loss) == pytest.approx(2 * math.log(2))
    assert net.syn1neg.flatten().tolist() == pytest.approx([0.05, 0.0, -0.05, 0.0])
    assert grad_in.tolist() == [[0.0, 0.0]]  # the output rows before the step were zero
    net.apply_input(torch.tensor([0, 1]), torch.tensor([2]), torch.tensor([[0.5, -0.5]]))
    assert net.syn0.tolist() == [[1.5, -0.5], [0.5, 0.5]]  # every row of the bag gets it in full

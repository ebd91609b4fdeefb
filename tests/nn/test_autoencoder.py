"""The tabular autoencoders' torch pieces: the mixed reconstruction loss and its decoding."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from skembed.nn.autoencoder import (  # noqa: E402
    Autoencoder,
    build_module,
    decoded_to_expected,
    mixed_reconstruction_loss,
    mlp,
)


def test_mixed_reconstruction_loss_by_hand():
    # one numeric column (0) and one categorical group [1, 3)
    x_hat = torch.tensor([[2.0, 0.0, math.log(3.0)]])
    x = torch.tensor([[1.0, 0.0, 1.0]])
    loss = mixed_reconstruction_loss(x_hat, x, torch.tensor([0]), [(1, 3)])
    # 0.5 * (2 - 1)^2 + cross-entropy of softmax([0, log 3]) = [1/4, 3/4] on class 1
    assert loss.shape == (1,)
    assert float(loss[0]) == pytest.approx(0.5 - math.log(0.75), rel=1e-6)
    # without groups every column is numeric
    plain = mixed_reconstruction_loss(x_hat, x, None, [])
    assert float(plain[0]) == pytest.approx(0.5 * (1.0 + (math.log(3.0) - 1.0) ** 2), rel=1e-6)


def test_decoded_to_expected_turns_group_logits_into_probabilities():
    x_hat = torch.tensor([[5.0, 0.0, math.log(3.0)]])
    out = decoded_to_expected(x_hat, [(1, 3)])
    assert out[0].tolist() == pytest.approx([5.0, 0.25, 0.75])
    assert x_hat[0, 1] == 0.0  # the input is left unchanged
    assert decoded_to_expected(x_hat, []) is x_hat


def test_mlp_stacks_linear_norm_activation_dropout_blocks():
    net = mlp([4, 3, 2], activation="tanh", dropout=0.1, batch_norm=True)
    kinds = [type(m).__name__ for m in net]
    assert kinds == ["Linear", "BatchNorm1d", "Tanh", "Dropout"] * 2
    assert (net[0].in_features, net[0].out_features, net[4].out_features) == (4, 3, 2)


def test_build_module_rebuilds_from_the_stored_config():
    model = Autoencoder(5, 2, hidden_layer_sizes=(4,))
    again = build_module("autoencoder", model.config)
    assert type(again) is Autoencoder and again.config == model.config
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes == {k: tuple(v.shape) for k, v in again.state_dict().items()}

"""Autoencoder and variational autoencoder modules for tabular rows (torch only, no sklearn).

The estimators in :mod:`skembed.tabular` build these modules in ``fit``; the
modules know nothing of preprocessing, devices or training loops. Each
module keeps the plain-Python ``config`` dict it was built from, so that it
can be rebuilt and its ``state_dict`` reloaded with
``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["Autoencoder", "VariationalAutoencoder", "build_module", "mixed_reconstruction_loss"]

ACTIVATIONS = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "tanh": nn.Tanh,
    "elu": nn.ELU,
    "silu": nn.SiLU,
    "leaky_relu": nn.LeakyReLU,
}


def mlp(sizes, activation="relu", dropout=0.0, batch_norm=False):
    """A stack of ``Linear -> [BatchNorm1d] -> activation -> [Dropout]`` blocks.

    Parameters
    ----------
    sizes : sequence of int
        ``(n_in, h1, ..., hk)``; one block per consecutive pair.
    activation : str, default="relu"
        Key of :data:`ACTIVATIONS`.
    dropout : float, default=0.0
        Dropout probability after each activation.
    batch_norm : bool, default=False
        Batch normalisation before each activation.

    Returns
    -------
    module : torch.nn.Sequential
    """
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        layers.append(nn.Linear(n_in, n_out))
        if batch_norm:
            layers.append(nn.BatchNorm1d(n_out))
        layers.append(ACTIVATIONS[activation]())
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


class Autoencoder(nn.Module):
    """Deterministic autoencoder: ``x -> encoder -> code (n_components) -> decoder -> x_hat``.

    Parameters
    ----------
    n_inputs : int
        Width of the (preprocessed) input rows.
    n_components : int
        Width of the code (linear bottleneck, no activation).
    hidden_layer_sizes : tuple of int
        Encoder hidden widths; the decoder mirrors them.
    activation : str, default="relu"
    dropout : float, default=0.0
    batch_norm : bool, default=False

    Notes
    -----
    The decoder outputs raw values: numeric columns are predicted directly,
    categorical groups as logits (see :func:`mixed_reconstruction_loss`).
    """

    kind = "autoencoder"

    def __init__(
        self,
        n_inputs,
        n_components,
        hidden_layer_sizes=(64,),
        activation="relu",
        dropout=0.0,
        batch_norm=False,
    ):
        super().__init__()
        hidden = [int(h) for h in hidden_layer_sizes]
        self.config = dict(
            n_inputs=int(n_inputs),
            n_components=int(n_components),
            hidden_layer_sizes=tuple(hidden),
            activation=str(activation),
            dropout=float(dropout),
            batch_norm=bool(batch_norm),
        )
        self.encoder_body = mlp([n_inputs, *hidden], activation, dropout, batch_norm)
        self.encoder_head = self._head(hidden[-1] if hidden else n_inputs, n_components)
        self.decoder = nn.Sequential(
            mlp([n_components, *hidden[::-1]], activation, dropout, batch_norm),
            nn.Linear(hidden[0] if hidden else n_components, n_inputs),
        )

    def _head(self, n_in, n_components):
        return nn.Linear(n_in, n_components)

    def encode(self, x):
        """Codes of a batch: ``(batch, n_inputs) -> (batch, n_components)``."""
        return self.encoder_head(self.encoder_body(x))

    def decode(self, z):
        """Reconstructions (numeric values and categorical logits) of codes."""
        return self.decoder(z)

    def forward(self, x):
        return self.decode(self.encode(x))


class VariationalAutoencoder(Autoencoder):
    """Variational autoencoder (Kingma & Welling, 2014) with a diagonal Gaussian posterior.

    The encoder outputs ``(mu, log_var)`` of ``q(z | x)``; training draws
    ``z = mu + exp(log_var / 2) * eps`` (reparameterisation trick) and
    minimises ``reconstruction + beta * KL(q(z | x) || N(0, I))``.

    Parameters
    ----------
    Same as :class:`Autoencoder`.

    References
    ----------
    Kingma & Welling (2014), "Auto-Encoding Variational Bayes", ICLR.
    """

    kind = "vae"

    def _head(self, n_in, n_components):
        return nn.Linear(n_in, 2 * n_components)

    def encode_distribution(self, x):
        """``(mu, log_var)``, each ``(batch, n_components)``; ``log_var`` clamped to [-30, 20]."""
        h = self.encoder_head(self.encoder_body(x))
        mu, log_var = h.chunk(2, dim=1)
        return mu, log_var.clamp(-30.0, 20.0)

    def encode(self, x):
        """Posterior means ``mu`` of a batch."""
        return self.encode_distribution(x)[0]

    def reparameterize(self, mu, log_var, generator=None):
        """Draw ``z = mu + sigma * eps`` with ``eps ~ N(0, I)`` from ``generator``."""
        eps = torch.randn(mu.shape, generator=generator, device=mu.device, dtype=mu.dtype)
        return mu + torch.exp(0.5 * log_var) * eps

    @staticmethod
    def kl_divergence(mu, log_var):
        """Per-row ``KL(N(mu, diag(exp(log_var))) || N(0, I))``, shape ``(batch,)``."""
        return 0.5 * (mu.pow(2) + log_var.exp() - 1.0 - log_var).sum(dim=1)

    def forward(self, x, generator=None):
        mu, log_var = self.encode_distribution(x)
        z = self.reparameterize(mu, log_var, generator) if self.training else mu
        return self.decode(z), mu, log_var


MODULES = {"autoencoder": Autoencoder, "vae": VariationalAutoencoder}


def build_module(kind, config):
    """Rebuild a module from its ``kind`` and plain-Python ``config`` dict."""
    return MODULES[kind](**config)


def mixed_reconstruction_loss(x_hat, x, numeric_index, categorical_groups):
    """Per-row negative log-likelihood of mixed numeric / one-hot columns.

    Parameters
    ----------
    x_hat : torch.Tensor of shape (batch, n_inputs)
        Decoder output: values for numeric columns, logits for categorical groups.
    x : torch.Tensor of shape (batch, n_inputs)
        Preprocessed input rows (scaled numerics, one-hot groups).
    numeric_index : torch.LongTensor of shape (n_numeric,) or None
        Columns with a Gaussian (squared-error) loss; ``None`` means all columns.
    categorical_groups : list of (int, int)
        ``[start, stop)`` column ranges of one-hot groups, each with a
        softmax cross-entropy loss (soft targets, so an all-zero row for an
        unknown category contributes zero).

    Returns
    -------
    loss : torch.Tensor of shape (batch,)
        ``0.5 * sum_numeric (x_hat - x)^2 + sum_groups CE(softmax(x_hat_g), x_g)``:
        the negative log-likelihood under a unit-variance Gaussian per
        numeric column and a categorical distribution per group, up to the
        constant ``0.5 * n_numeric * log(2 pi)``.
    """
    if not categorical_groups:
        return 0.5 * (x_hat - x).pow(2).sum(dim=1)
    loss = x.new_zeros(x.shape[0])
    if numeric_index is not None and numeric_index.numel():
        diff = x_hat.index_select(1, numeric_index) - x.index_select(1, numeric_index)
        loss = loss + 0.5 * diff.pow(2).sum(dim=1)
    for start, stop in categorical_groups:
        logp = F.log_softmax(x_hat[:, start:stop], dim=1)
        loss = loss - (x[:, start:stop] * logp).sum(dim=1)
    return loss


def decoded_to_expected(x_hat, categorical_groups):
    """Decoder output with each categorical group's logits turned into probabilities."""
    if not categorical_groups:
        return x_hat
    out = x_hat.clone()
    for start, stop in categorical_groups:
        out[:, start:stop] = torch.softmax(x_hat[:, start:stop], dim=1)
    return out

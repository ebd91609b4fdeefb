"""EntityEmbedder's training: the epoch step, the fold networks and their alignment.

The final network trains through the estimator (history, callbacks, early
stopping); the ``cv`` fold networks of ``fit_transform`` train here for a
fixed number of epochs with no history, and their tables are rotated onto
the final network's (weighted orthogonal Procrustes) before embedding the
rows they never saw.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..exceptions import diverged
from ..utils._seeding import forked_torch_rng, torch_generator
from ._base import INFERENCE_BATCH

__all__ = [
    "EntityEpochStep",
    "FitSeeds",
    "TrainingArrays",
    "code_counts",
    "cross_fit",
    "embedding_tables",
    "procrustes",
]


class TrainingArrays(NamedTuple):
    """The rows a fit trains on, as numpy arrays."""

    #: ``(n_samples, n_embedded)`` int64 category codes (0: unknown or infrequent)
    codes: np.ndarray
    #: ``(n_samples, n_numeric)`` float64 numeric columns as given (missing values NaN)
    numeric: np.ndarray
    #: the numeric columns standardised, float32 (missing values 0)
    z: np.ndarray
    #: float32 class codes, or the standardised continuous target
    target: np.ndarray

    def tensors(self, device, rows=None):
        """``(codes, z, target)`` of ``rows`` (default: all) as torch tensors on ``device``."""
        import torch

        arrays = (
            (self.codes, self.z, self.target)
            if rows is None
            else (self.codes[rows], self.z[rows], self.target[rows])
        )
        return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in arrays)


class FitSeeds(NamedTuple):
    """What a fit draws from ``random_state``, in the order it draws it."""

    #: the weight initialisation (the final network and every fold network)
    init: int
    #: the final network's shuffling (fold ``f`` shuffles with ``shuffle + 1 + f``)
    shuffle: int
    #: ``(train_rows, valid_rows)`` of early stopping, or None
    split: tuple | None
    #: the folds of the cross fitting
    fold: int


class EntityEpochStep:
    """One epoch of AdamW over in-memory ``(codes, numeric, target)`` tensors.

    ``step(epoch)`` shuffles with its own seeded generator, trains one pass
    in batches of ``est.batch_size`` and returns ``{"loss", "valid_loss"}``
    (mean training loss; mean validation loss in eval mode, or None).
    """

    def __init__(self, est, model, train, valid, seed):
        import torch

        self.est, self.model, self.train, self.valid = est, model, train, valid
        self.gen = torch_generator(seed, str(train[0].device))
        self.optimizer = torch.optim.AdamW(
            model.parameters(), lr=est.learning_rate, weight_decay=est.weight_decay
        )

    def __call__(self, epoch):
        import torch

        from ..nn.entity import supervised_loss

        model, kind = self.model, self.est.target_type_
        codes, numeric, target = self.train
        n, device = codes.shape[0], codes.device
        bs = int(min(self.est.batch_size, n))
        model.train()
        perm = torch.randperm(n, generator=self.gen, device=device)
        c, x, y = codes[perm], numeric[perm], target[perm]
        total = torch.zeros((), device=device)
        optimizer = self.optimizer
        for start in range(0, n, bs):
            stop = start + bs
            loss = supervised_loss(model(c[start:stop], x[start:stop]), y[start:stop], kind)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach() * min(bs, n - start)
        loss = float(total) / n
        valid_loss = None
        if self.valid is not None and np.isfinite(loss):
            model.eval()
            valid = self.valid
            vsum = torch.zeros((), device=device)
            with torch.inference_mode():
                for s in range(0, valid[0].shape[0], INFERENCE_BATCH):
                    vb = [t[s : s + INFERENCE_BATCH] for t in valid]
                    vsum += supervised_loss(model(vb[0], vb[1]), vb[2], kind) * vb[0].shape[0]
            valid_loss = float(vsum) / valid[0].shape[0]
        model.eval()  # callbacks may transform with the current weights
        return {"loss": loss, "valid_loss": valid_loss}


def procrustes(source, target, weights):
    """Rotate (and shift) ``source`` rows onto ``target`` rows: weighted orthogonal Procrustes.

    Returns ``(source - mu_s) @ R + mu_t`` with ``R`` orthogonal minimising
    ``sum_i w_i * ||(s_i - mu_s) R - (t_i - mu_t)||^2`` (weighted means ``mu``).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.sum() <= 0:
        return source.copy()
    w = w / w.sum()
    mu_s = w @ source.astype(np.float64)
    mu_t = w @ target.astype(np.float64)
    s, t = source - mu_s, target - mu_t
    u, _, vt = np.linalg.svd(s.T @ (w[:, None] * t))
    return ((s @ (u @ vt)) + mu_t).astype(source.dtype)


def code_counts(codes, categories):
    """Per embedded column, training rows per code (row 0: infrequent rows)."""
    return [
        np.bincount(codes[:, k], minlength=len(categories[k]) + 1) for k in range(codes.shape[1])
    ]


def embedding_tables(model, counts):
    """Numpy copies of the tables; an untrained unknown row becomes the weighted mean row."""
    tables = []
    for table, count in zip(model.embeddings, counts, strict=True):
        weight = table.weight.detach().float().cpu().numpy().copy()
        if count[0] == 0 and count[1:].sum() > 0:
            weight[0] = (count[1:] / count[1:].sum()) @ weight[1:]
        tables.append(weight)
    return tables


def cross_fit(
    est, folds, codes, numeric, tensors, config, tables, *, init_seed, shuffle_seed, epochs
):
    """Out-of-fold embeddings: each fold by a network trained ``epochs`` on the other folds.

    ``folds`` yields ``(train_rows, test_rows)``; ``tensors(rows)`` gives the
    training triple on the device; ``tables`` are the final network's, onto
    which each fold network's tables are rotated (on the categories both saw).
    """
    from ..nn.entity import EntityEmbeddingNet

    n_samples = codes.shape[0]
    parts = []
    for f, (tr, te) in enumerate(folds):
        counts = code_counts(codes[tr], est.categories_)
        fold_codes = codes[te].copy()
        for k in range(codes.shape[1]):
            # categories the fold network never saw are unknown to it
            fold_codes[:, k][counts[k][fold_codes[:, k]] == 0] = 0
        with forked_torch_rng(init_seed, est.device_):
            net = EntityEmbeddingNet(**config).to(est.device_)
            step = EntityEpochStep(est, net, tensors(tr), None, shuffle_seed + 1 + f)
            for epoch in range(1, epochs + 1):
                loss = step(epoch)["loss"]
                if not np.isfinite(loss):
                    raise diverged(
                        est,
                        epoch=epoch,
                        loss=loss,
                        parameter="learning_rate",
                        value=est.learning_rate,
                    )
        fold_tables = [
            procrustes(t, ref, w)
            for t, ref, w in zip(embedding_tables(net, counts), tables, counts, strict=True)
        ]
        parts.append((te, est._assemble(fold_codes, numeric[te], fold_tables)))
    out = np.empty((n_samples, parts[0][1].shape[1]), dtype=est.dtype)
    for te, block in parts:
        out[te] = block
    return out

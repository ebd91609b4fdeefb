"""StaticEmbedder(supervised=True): the token table trained with a linear head on ``y``.

model2vec's supervised recipe (``StaticModelForClassification``): the mean of
a document's token vectors, weighted by a learned scalar per token and
normalised as the embedder's output is, feeds a linear layer trained on the
labels (cross entropy) or a standardised continuous target (squared error);
the table's gradient is sparse, so it gets lazy Adam. The weights are folded
into the rows at the end, so ``transform``'s plain mean serves the result. A stratified validation split stops
training when its loss stops improving, and the best epoch's table is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...callbacks import EarlyStopping
from ...exceptions import diverged
from ...keyedvectors import KeyedVectors
from ...utils._compute import limit_threads
from ...utils._seeding import forked_torch_rng, seed_from_random_state
from ...utils._training import run_epochs
from ._model2vec_io import encode

__all__ = ["train_on_target"]


def train_on_target(est, state, texts, y, kind, classes):
    """Train ``state["wv_"]``'s table with a linear head on ``y``; return the new state entries.

    ``est`` is the fitted StaticEmbedder (its parameters: ``max_length``,
    ``random_state``, ``validation_fraction``, ``learning_rate``, ``epochs``,
    ``patience``, ``callbacks``, ``n_jobs``, ``verbose``); during training
    ``est._head`` holds the module, for its ``_snapshot_weights``.
    """
    import torch

    from ...nn.static import MeanBagLinear

    wv = state["wv_"]
    ids, indptr = encode(
        state["tokenizer_"],
        state["unk_id_"],
        texts,
        est.max_length,
        state["median_token_length_"],
    )
    seed = seed_from_random_state(est.random_state)
    rng = np.random.RandomState(seed)
    regression = kind == "continuous"
    split = _split(est, y, len(texts), regression, classes, rng, seed)
    target = _target(y, split.train, regression)
    batch = min(max(len(split.train) // 30, 16), 256)  # model2vec's rule for its batch size
    with limit_threads(est.n_jobs), forked_torch_rng(seed, "cpu"):
        model = MeanBagLinear(
            torch.from_numpy(wv.vectors), 1 if regression else len(classes), est.normalize
        )
        epoch_step = _HeadEpochs(
            est=est,
            model=model,
            optimizers=_optimizers(model, est.learning_rate),
            bags=_Bags(ids, indptr),
            split=split,
            target=target,
            regression=regression,
            batch=batch,
            rng=rng,
        )
        _run(est, model, epoch_step)
    return _trained_state(wv, model, est.history_, kind, classes)


class _Split(NamedTuple):
    """The documents (row numbers) trained on and those whose loss stops the training."""

    train: np.ndarray
    valid: np.ndarray


class _Bags(NamedTuple):
    """The documents' token ids, flat, and where each document starts in them."""

    ids: np.ndarray
    indptr: np.ndarray


def _split(est, y, n, regression, classes, rng, seed):
    """Training and validation rows of ``n`` documents: stratified by class where every class
    allows it."""
    rows = rng.permutation(n)
    n_valid = int(round(est.validation_fraction * n))
    if n_valid < 1 or n - n_valid < 1:
        raise ValueError(
            f"validation_fraction={est.validation_fraction} of {n} documents leaves an empty "
            "training or validation split; give more documents or change validation_fraction."
        )
    if not regression and np.bincount(y).min() >= 2 and n_valid >= len(classes):
        from sklearn.model_selection import train_test_split

        train, valid = train_test_split(
            np.arange(n), test_size=n_valid, stratify=y, random_state=seed
        )
        return _Split(train, valid)
    return _Split(rows[n_valid:], rows[:n_valid])


def _target(y, train, regression):
    """``y`` as a tensor: class numbers, or the target standardised on the training rows."""
    import torch

    if regression:
        mean, scale = float(y[train].mean()), float(y[train].std()) or 1.0
        return torch.from_numpy(((y - mean) / scale).astype(np.float32))
    return torch.from_numpy(y)


def _optimizers(model, learning_rate):
    """Lazy Adam on the table, whose gradient is sparse (the rows of a batch's tokens); Adam on
    the token weights and the head."""
    import torch

    return [
        torch.optim.SparseAdam([model.table], lr=learning_rate),
        torch.optim.Adam([model.weights, *model.head.parameters()], lr=learning_rate),
    ]


@dataclass
class _HeadEpochs:
    """The epoch step of the supervised head: called with the epoch number, it trains one pass
    over the training rows in a random order and returns their mean loss and the validation
    loss."""

    est: object
    model: object
    optimizers: list
    bags: _Bags
    split: _Split
    target: object
    regression: bool
    batch: int
    rng: np.random.RandomState

    def __call__(self, epoch):
        import torch

        self.model.train()
        train = self.split.train
        order = train[self.rng.permutation(len(train))]
        losses = []
        for b in range(0, len(order), self.batch):
            r = order[b : b + self.batch]
            losses.append(self._step(r, epoch) * len(r))
        self.model.eval()
        with torch.no_grad():
            valid_loss = float(self._loss(self.split.valid))
        return {"loss": sum(losses) / len(train), "valid_loss": valid_loss}

    def _loss(self, rows):
        """The loss of the documents ``rows`` (under the model's current train or eval mode)."""
        import torch

        from ...nn.static import bag_batch

        out = self.model(*bag_batch(self.bags.ids, self.bags.indptr, rows, "cpu"))
        rows = torch.from_numpy(rows)
        if self.regression:
            return torch.nn.functional.mse_loss(out[:, 0], self.target[rows])
        return torch.nn.functional.cross_entropy(out, self.target[rows])

    def _step(self, rows, epoch):
        """One optimiser step on the batch ``rows``; its loss."""
        loss = self._loss(rows)
        value = float(loss.detach())
        if not np.isfinite(value):  # before the step: the table stays finite
            raise diverged(
                self.est,
                epoch=epoch,
                loss=value,
                parameter="learning_rate",
                value=self.est.learning_rate,
            )
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        for opt in self.optimizers:
            opt.step()
        return value


def _run(est, model, epoch_step):
    """``epoch_step`` through the one training loop, keeping the best epoch's table."""
    # the best epoch's table is kept: early stopping on the validation loss restores it
    stopping = EarlyStopping(
        monitor="valid_loss", patience=est.patience, tol=1e-4, restore_best_weights=True
    )
    est.history_ = []
    est._head = model
    try:
        run_epochs(
            est,
            epoch_step,
            n_epochs=est.epochs,
            callbacks=est.callbacks,
            early_stopping=stopping,
            verbose=est.verbose,
            desc="training",
        )
    finally:
        del est._head


def _trained_state(wv, model, history, kind, classes):
    """The state entries of the trained table: the weights folded into its rows."""
    table = model.folded_table().numpy().astype(np.float32)
    trained = KeyedVectors(table, list(wv.index_to_key))
    trained.counts = wv.counts
    return {
        "wv_": trained,
        "history_": history,
        "target_type_": kind,
        "classes_": classes,
        "best_epoch_": int(np.argmin([r["valid_loss"] for r in history]) + 1),
    }

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

    from ...nn.static import MeanBagLinear, bag_batch

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
    n = len(texts)
    regression = kind == "continuous"
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
    else:
        valid, train = rows[:n_valid], rows[n_valid:]
    if regression:
        mean, scale = float(y[train].mean()), float(y[train].std()) or 1.0
        target = torch.from_numpy(((y - mean) / scale).astype(np.float32))
    else:
        target = torch.from_numpy(y)
    batch = min(max(len(train) // 30, 16), 256)  # model2vec's rule for its batch size
    with limit_threads(est.n_jobs), forked_torch_rng(seed, "cpu"):
        model = MeanBagLinear(
            torch.from_numpy(wv.vectors), 1 if regression else len(classes), est.normalize
        )
        # the table's gradient is sparse (the rows of a batch's tokens): lazy Adam on it
        optimizers = [
            torch.optim.SparseAdam([model.table], lr=est.learning_rate),
            torch.optim.Adam([model.weights, *model.head.parameters()], lr=est.learning_rate),
        ]

        def loss_of(out, rows):
            if regression:
                return torch.nn.functional.mse_loss(out[:, 0], target[rows])
            return torch.nn.functional.cross_entropy(out, target[rows])

        def epoch_step(epoch):
            model.train()
            order = train[rng.permutation(len(train))]
            losses = []
            for b in range(0, len(order), batch):
                r = order[b : b + batch]
                loss = loss_of(model(*bag_batch(ids, indptr, r, "cpu")), torch.from_numpy(r))
                value = float(loss.detach())
                if not np.isfinite(value):  # before the step: the table stays finite
                    raise diverged(
                        est,
                        epoch=epoch,
                        loss=value,
                        parameter="learning_rate",
                        value=est.learning_rate,
                    )
                for opt in optimizers:
                    opt.zero_grad(set_to_none=True)
                loss.backward()
                for opt in optimizers:
                    opt.step()
                losses.append(value * len(r))
            model.eval()
            with torch.no_grad():
                out = model(*bag_batch(ids, indptr, valid, "cpu"))
                valid_loss = float(loss_of(out, torch.from_numpy(valid)))
            return {"loss": sum(losses) / len(train), "valid_loss": valid_loss}

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
    history = est.history_
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

"""SetFitEmbedder's training pieces: the learning-rate schedule, the mixed-precision choice, and
the sentence-transformers directory that ``save_pretrained`` writes (Tunstall et al. 2022, SetFit;
Reimers & Gurevych 2019, the directory layout of sentence-transformers)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ...exceptions import diverged
from ...utils._compute import limit_threads
from ...utils._training import run_epochs

#: losses of positive pairs only, scored against the batch's other classes
CLASS_LOSSES = ("in_batch_negatives", "supervised_contrastive")


def resolve_mixed_precision(mixed_precision, device):
    """``"bf16"`` or ``"no"``: the ``mixed_precision`` parameter on ``device``.

    ``"auto"`` is ``"bf16"`` on a CUDA device that supports bfloat16 and on a
    CPU with AVX-512 BF16 or AMX tiles (torch's own CPU feature checks),
    ``"no"`` elsewhere.
    """
    if mixed_precision != "auto":
        return mixed_precision
    import torch

    kind = torch.device(device).type
    if kind == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "no"
    if kind == "cpu":
        checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
        native = any(getattr(torch.cpu, name, lambda: False)() for name in checks)
        return "bf16" if native else "no"
    return "no"


def warmup_then_decay(step, warmup, total):
    """Learning-rate multiplier at optimiser ``step``: linear warm-up, then linear decay.

    ``(step + 1) / warmup`` for the first ``warmup`` steps, then
    ``(total - step) / (total - warmup)`` down to 0 at ``step = total``; a
    training of a single step (``total == warmup``) decays straight to 0
    after it instead of dividing by zero.
    """
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def save_sentence_transformers(tuned, path, *, pooling, normalize, max_seq_length):
    """Write a tuned encoder as a sentence-transformers directory.

    Parameters
    ----------
    tuned : LoadedEncoder
        The encoder and its tokenizer (``tuned.model``, ``tuned.tokenizer``, ``tuned.hidden_size``).
    path : str or os.PathLike
        Directory, created if needed: the transformers files, ``modules.json``,
        ``sentence_bert_config.json``, ``1_Pooling/config.json`` (and ``2_Normalize``).
    pooling : {"mean", "cls", "max", "mean_sqrt_len"}
        The pooling mode written to ``1_Pooling/config.json``.
    normalize : bool
        Add sentence-transformers' ``Normalize`` module.
    max_seq_length : int
        Tokens per document, written to ``sentence_bert_config.json``.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tuned.model.save_pretrained(path)
    tuned.tokenizer.save_pretrained(path)
    width = int(tuned.hidden_size)
    modes = {
        "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean",
        "pooling_mode_max_tokens": pooling == "max",
        "pooling_mode_mean_sqrt_len_tokens": pooling == "mean_sqrt_len",
    }
    (path / "1_Pooling").mkdir(exist_ok=True)
    (path / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": width, **modes}, indent=2)
    )
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    if normalize:
        (path / "2_Normalize").mkdir(exist_ok=True)
        modules.append(
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            }
        )
    (path / "modules.json").write_text(json.dumps(modules, indent=2))
    (path / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False}, indent=2)
    )


def train_on_pairs(self, model, ids, y, pairs, rng, device):
    """Fine-tune ``model`` on the sampled pairs through the one training loop (``run_epochs``).

    ``self`` is the :class:`SetFitEmbedder` being fitted (its ``loss_``, ``batch_size``,
    ``epochs``, ``learning_rate``, callbacks and ``_pooled_train``). AdamW with a linear
    warm-up over the first 10% of the steps, then a linear decay (:func:`warmup_then_decay`);
    gradients clipped at norm 1. A non-finite loss raises ``TrainingDivergedError`` naming
    ``learning_rate``, before the step, so the weights stay finite.
    """
    import torch

    from ...nn.contrastive import (
        cosine_similarity_loss,
        in_batch_negatives_loss,
        supervised_contrastive_loss,
    )

    left, right, target = pairs
    labels = y[left] if self.loss_ in CLASS_LOSSES else None
    class_loss = (
        supervised_contrastive_loss
        if self.loss_ == "supervised_contrastive"
        else in_batch_negatives_loss
    )
    n_steps_epoch = -(-len(left) // self.batch_size)
    total = n_steps_epoch * self.epochs
    warmup = max(1, int(0.1 * total))
    optimizer = torch.optim.AdamW(model.parameters(), lr=self.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: warmup_then_decay(s, warmup, total)
    )
    model.train()

    def epoch_step(epoch):
        order = rng.permutation(len(left))
        losses = []
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            rows = np.concatenate([left[idx], right[idx]])
            unique, inverse = np.unique(rows, return_inverse=True)
            pooled = self._pooled_train([ids[i] for i in unique], device)
            inverse = torch.from_numpy(inverse.astype(np.int64)).to(device)
            u, v = pooled[inverse[: len(idx)]], pooled[inverse[len(idx) :]]
            if labels is None:
                t = torch.from_numpy(target[idx]).to(device=device, dtype=u.dtype)
                loss = cosine_similarity_loss(u, v, t)
            else:
                lab = torch.from_numpy(labels[idx]).to(device)
                loss = class_loss(u, v, lab)
            value = float(loss.detach())
            if not np.isfinite(value):  # before the step: the weights stay finite
                raise diverged(
                    self,
                    epoch=epoch,
                    loss=value,
                    parameter="learning_rate",
                    value=self.learning_rate,
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            losses.append(value)
        lr = float(schedule.get_last_lr()[0])
        return {"loss": float(np.mean(losses)), "learning_rate": lr, "pairs": len(left)}

    with limit_threads(self.n_jobs):
        run_epochs(
            self,
            epoch_step,
            n_epochs=self.epochs,
            callbacks=self.callbacks,
            verbose=self.verbose,
            desc="fine-tuning",
        )

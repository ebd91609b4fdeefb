"""SetFitEmbedder's training pieces: the learning-rate schedule, the mixed-precision choice, and
the sentence-transformers directory that ``save_pretrained`` writes (Tunstall et al. 2022, SetFit;
Reimers & Gurevych 2019, the directory layout of sentence-transformers)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...exceptions import diverged
from ...utils._compute import limit_threads
from ...utils._progress import progress
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


#: optimiser steps timed before ``max_time`` shrinks the plan and the estimate line is printed
PROBE_STEPS = 3


class StepPlan:
    """The optimiser steps of one fine-tuning: how many, how many done, and at what rate.

    The plan starts at every pair of every epoch. After :data:`PROBE_STEPS`
    steps the measured rate gives an estimate of the whole (one line at
    ``verbose >= 1``) and, with ``max_time``, the steps that fit in it:
    the plan shrinks (fewer pairs of the last epochs, or fewer epochs) and
    the learning-rate schedule decays to zero at its new end.

    Parameters
    ----------
    n_steps_epoch : int
        Optimiser steps (batches of pairs) per epoch.
    epochs : int
        Epochs asked for.
    batch_size : int
        Pairs per step.
    max_time : float or None
        Seconds the fine-tuning may take; ``None``: no limit.
    verbose : int
        0: silent; 1 or more: a bar over the steps (pairs/s, time remaining)
        and the estimate line.
    name : str
        The estimator's name in the estimate line.
    opening : str or None, default=None
        A line written before the first step at ``verbose >= 1`` (the budget).
    """

    def __init__(self, n_steps_epoch, epochs, batch_size, max_time, verbose, name, opening=None):
        self.n_steps_epoch, self.batch_size = n_steps_epoch, batch_size
        self.total = n_steps_epoch * epochs
        self.warmup = max(1, int(0.1 * self.total))
        self.max_time, self.verbose, self.name = max_time, verbose, name
        self.done = 0
        self._created = time.perf_counter()
        self._after_first = None
        self.bar = progress(
            total=self.total * batch_size, verbose=verbose, desc="fine-tuning", unit="pair"
        )
        if opening and verbose >= 1:
            self.bar.write(opening)

    def learning_rate_factor(self, step):
        """The schedule's factor at ``step`` (:func:`warmup_then_decay` over the current plan)."""
        return warmup_then_decay(step, self.warmup, self.total)

    @property
    def finished(self):
        """Whether every planned step is done."""
        return self.done >= self.total

    def step_done(self, n_pairs):
        """One step of ``n_pairs`` pairs is done: advance; after the probe, estimate and fit."""
        now = time.perf_counter()
        self.done += 1
        self.bar.update(n_pairs)
        if self.done == 1:  # the first step warms the model up: the rate is timed after it
            self._after_first = now
            self._check_one_step_fits(now - self._created)
        elif self.done == 1 + PROBE_STEPS:
            self._measured(now)
        elif self.max_time is not None and now - self._created > self.max_time:
            self.total = self.done  # the time is up, whatever the estimate said

    def _check_one_step_fits(self, seconds):
        if self.max_time is not None and seconds > self.max_time:
            raise ValueError(
                f"max_time={self.max_time:g} s is shorter than one training step on this "
                f"machine (the first took {seconds:.1f} s for {self.batch_size} pairs): use "
                f"max_time >= {math.ceil(seconds * (1 + PROBE_STEPS))} or a smaller batch_size."
            )

    def _measured(self, now):
        per_step = (now - self._after_first) / PROBE_STEPS
        if self.max_time is not None:
            fit = self.done + int((self.max_time - (now - self._created)) / per_step)
            if fit < self.total:
                self.total = max(fit, self.done)
                self.warmup = max(1, min(self.warmup, int(0.1 * self.total)))
                self.bar.total = self.total * self.batch_size
                self.bar.refresh()
        if self.verbose >= 1:
            self.bar.write(
                f"{self.name}: about {_duration(per_step * (self.total - self.done))} more on "
                f"this machine at {self.batch_size / per_step:.0f} pairs/s ({self.total} steps "
                f"of {self.batch_size} pairs in all)"
            )

    def close(self):
        """Remove the bar."""
        self.bar.close()


def _duration(seconds):
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def train_on_pairs(self, model, ids, y, pairs, rng, device, opening=None):
    """Fine-tune ``model`` on the sampled pairs through the one training loop (``run_epochs``).

    ``self`` is the :class:`SetFitEmbedder` being fitted (its ``loss_``, ``batch_size``,
    ``epochs``, ``learning_rate``, ``max_time``, callbacks and ``_pooled_train``). AdamW with a
    linear warm-up over the first 10% of the steps, then a linear decay
    (:func:`warmup_then_decay`) to the end of the :class:`StepPlan` (shrunk to ``max_time``
    once the rate is measured); gradients clipped at norm 1. At ``verbose=1`` the line
    ``opening`` (the budget) comes first, a bar over the pairs shows the rate and the time
    remaining, and a line gives the estimate of the whole. A non-finite loss raises
    ``TrainingDivergedError`` naming ``learning_rate``, before the step, so the weights stay
    finite.
    """
    import torch

    left, right, target = pairs
    sampled = _Pairs(left, right, target, y[left] if self.loss_ in CLASS_LOSSES else None)
    plan = _step_plan(self, len(left), opening)
    optimizer = torch.optim.AdamW(model.parameters(), lr=self.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, plan.learning_rate_factor)
    model.train()

    def epoch_step(epoch):
        order = rng.permutation(len(left))
        losses = []
        for b in range(0, len(order), self.batch_size):
            if plan.finished:  # max_time shrank the plan
                break
            idx = order[b : b + self.batch_size]
            loss = _batch_loss(self, ids, sampled, idx, device)
            value = float(loss.detach())
            if not np.isfinite(value):  # before the step: the weights stay finite
                raise diverged(
                    self,
                    epoch=epoch,
                    loss=value,
                    parameter="learning_rate",
                    value=self.learning_rate,
                )
            _optimizer_step(model, optimizer, schedule, loss)
            losses.append(value)
            plan.step_done(len(idx))
        lr = float(schedule.get_last_lr()[0])
        n_pairs = min(len(left), len(losses) * self.batch_size)
        return {"loss": float(np.mean(losses)), "learning_rate": lr, "pairs": n_pairs}

    def stop_when_planned(estimator, record):  # max_time may end training before the epochs
        return plan.finished

    try:
        with limit_threads(self.n_jobs):
            run_epochs(
                self,
                epoch_step,
                n_epochs=self.epochs,
                callbacks=[*(self.callbacks or ()), stop_when_planned],
                verbose=self.verbose if self.verbose >= 2 else 0,  # 1: the step bar instead
                desc="fine-tuning",
            )
    finally:
        plan.close()


class _Pairs(NamedTuple):
    """The sampled pairs: the rows of their two sides and what each pair is scored against."""

    left: np.ndarray
    right: np.ndarray
    #: the cosine loss's target of each pair
    target: np.ndarray
    #: the class of each pair's rows for a class loss (:data:`CLASS_LOSSES`), else None
    labels: np.ndarray | None


def _step_plan(self, n_pairs, opening):
    """The :class:`StepPlan` of ``n_pairs`` pairs per epoch with the estimator's parameters."""
    return StepPlan(
        -(-n_pairs // self.batch_size),
        self.epochs,
        self.batch_size,
        getattr(self, "max_time", None),
        self.verbose,
        type(self).__name__,
        opening,
    )


def _batch_loss(self, ids, sampled, idx, device):
    """The loss of the pairs ``idx``: each distinct document of the batch is encoded once."""
    import torch

    from ...nn.contrastive import (
        cosine_similarity_loss,
        in_batch_negatives_loss,
        supervised_contrastive_loss,
    )

    rows = np.concatenate([sampled.left[idx], sampled.right[idx]])
    unique, inverse = np.unique(rows, return_inverse=True)
    pooled = self._pooled_train([ids[i] for i in unique], device)
    inverse = torch.from_numpy(inverse.astype(np.int64)).to(device)
    u, v = pooled[inverse[: len(idx)]], pooled[inverse[len(idx) :]]
    if sampled.labels is None:
        t = torch.from_numpy(sampled.target[idx]).to(device=device, dtype=u.dtype)
        return cosine_similarity_loss(u, v, t)
    class_loss = (
        supervised_contrastive_loss
        if self.loss_ == "supervised_contrastive"
        else in_batch_negatives_loss
    )
    return class_loss(u, v, torch.from_numpy(sampled.labels[idx]).to(device))


def _optimizer_step(model, optimizer, schedule, loss):
    """Back-propagate ``loss``, clip the gradients at norm 1, step and advance the schedule."""
    import torch

    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()

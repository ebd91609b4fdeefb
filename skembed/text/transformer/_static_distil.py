"""StaticEmbedder's distillation: the teacher's pooled output per vocabulary entry, PCA and
SIF weights (model2vec's ``distill``), with the teacher outputs kept for later fits."""

from __future__ import annotations

import json
import os
import threading

import numpy as np

from ...keyedvectors import KeyedVectors
from ...utils._caches import register_cache
from ...utils._compute import limit_threads, resolve_n_jobs
from ...utils._progress import progress
from ._export import input_names
from ._loading import load_encoder, resolve_model, special_ids
from ._model2vec_io import (
    UNUSED_TOKEN,
    distillation_tokenizer,
    median_token_length,
    unk_token_id,
)
from ._runner import load_runner

__all__ = ["clear_teacher_cache", "distil", "pca_scores", "zipf_sif_weights"]

#: teacher outputs of the last teacher used, keyed by token-id sequence (see _teacher_vectors)
_ROW_CACHE: dict = {}
_CACHE_LOCK = threading.Lock()


@register_cache
def clear_teacher_cache():
    """Drop the teacher outputs that ``fit`` keeps for later fits (clones, CV folds).

    The cache holds one float32 row of the teacher's width per vocabulary
    entry of the last teacher used (about 45 MB for all-MiniLM-L6-v2's
    vocabulary).
    """
    with _CACHE_LOCK:
        _ROW_CACHE.clear()


def zipf_sif_weights(n_tokens, sif_coefficient):
    """SIF weights ``a / (a + p)`` of frequencies estimated by Zipf's law from the rank.

    The token of row ``i`` (0-based) gets ``p_i = (1 / (i + 2)) / sum_j 1 / (j + 2)``
    (model2vec's estimate: a vocabulary ordered by frequency, ranks from 2).

    Parameters
    ----------
    n_tokens : int
        Vocabulary size.
    sif_coefficient : float or None
        The ``a`` of the weights; None gives ones.

    Returns
    -------
    weights : numpy.ndarray of shape (n_tokens,), float64

    References
    ----------
    Arora, Liang & Ma (2017). A simple but tough-to-beat baseline for sentence
    embeddings. ICLR.

    Examples
    --------
    >>> zipf_sif_weights(2, 1.0).round(4)  # p = (1/2, 1/3) / (5/6) = (0.6, 0.4)
    array([0.625 , 0.7143])
    """
    if sif_coefficient is None:
        return np.ones(n_tokens)
    inv_rank = 1.0 / np.arange(2, n_tokens + 2)
    p = inv_rank / inv_rank.sum()
    return sif_coefficient / (sif_coefficient + p)


def pca_scores(X, n_components):
    """Centred PCA scores (not whitened), each component's sign set by its largest score.

    model2vec's ``_pca_fit_transform``: eigenvectors of the covariance matrix,
    computed here in float64.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_samples, n_features)
    n_components : int

    Returns
    -------
    scores : numpy.ndarray of shape (n_samples, n_components), float64
    explained_variance_ratio : numpy.ndarray of shape (n_components,)
    """
    X = np.asarray(X, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    cov = (Xc.T @ Xc) / (len(X) - 1)
    eigvals, eigvecs = np.linalg.eigh(cov)
    eigvals = np.clip(eigvals[::-1], 0, None)
    components = eigvecs[:, ::-1][:, :n_components].T
    scores = Xc @ components.T
    rows = np.argmax(np.abs(scores), axis=0)
    scores *= np.sign(scores[rows, np.arange(scores.shape[1])])
    total = eigvals.sum()
    ratio = eigvals[:n_components] / total if total > 0 else np.zeros(n_components)
    return scores, ratio


def distil(est, texts, device):
    """The fitted state of a distillation: ``wv_``, ``tokenizer_`` and the diagnostics."""
    source = resolve_model(est.model)
    encoder = load_encoder(source, device=device)
    # a given (model, tokenizer) pair: exactly the tokenizer object the user passed
    tokenizer = source.objects[1] if source.kind == "object" else encoder.tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"The teacher's tokenizer ({type(tokenizer).__name__}) is not a fast tokenizer; "
            "StaticEmbedder tokenizes with the `tokenizers` library. Give a model directory "
            "with a tokenizer.json, or pass (model, AutoTokenizer.from_pretrained(path, "
            "use_fast=True))."
        )
    hidden = int(encoder.hidden_size)
    if est.n_components is not None and est.n_components > hidden:
        raise ValueError(
            f"n_components={est.n_components} exceeds the teacher's hidden size {hidden}; "
            f"choose n_components <= {hidden}, or None for no PCA."
        )
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    keep_special = {tokenizer.unk_token, tokenizer.pad_token} - {None}
    corpus_only = est.vocabulary == "corpus"

    def keep(token, special):
        if corpus_only:
            return token in keep_special
        return not UNUSED_TOKEN.fullmatch(token) and (not special or token in keep_special)

    words, counts = [], np.zeros(0, dtype=np.int64)
    if est.vocabulary != "model":
        words, counts = _corpus_words(est, texts, tokenizer.backend_tokenizer, spec, keep)
    static_tok, kept_ids = distillation_tokenizer(spec, keep, words)
    prefix, suffix = special_ids(tokenizer)
    sequences = [[*prefix, i, *suffix] for i in kept_ids]
    if words:
        sequences += tokenizer(words, add_special_tokens=True)["input_ids"]
    vectors = _teacher_vectors(est, encoder, sequences, device)
    n_tokens = len(vectors)
    ratio = None
    if est.n_components is not None:
        if est.n_components >= n_tokens:
            raise ValueError(
                f"n_components={est.n_components} is not below the vocabulary size "
                f"{n_tokens}; lower n_components (or min_count), or use None for no PCA."
            )
        vectors, ratio = pca_scores(vectors, est.n_components)
    vectors = vectors * zipf_sif_weights(n_tokens, est.sif_coefficient)[:, None]
    keys = [tok for tok, _ in sorted(static_tok.get_vocab().items(), key=lambda kv: kv[1])]
    wv = KeyedVectors(vectors.astype(np.float32), keys)
    wv.counts = np.concatenate([np.zeros(n_tokens - len(counts), dtype=np.int64), counts])
    teacher = est.model if isinstance(est.model, (str, os.PathLike)) else "object"
    return {
        "wv_": wv,
        "tokenizer_": static_tok,
        "unk_id_": unk_token_id(static_tok),
        "explained_variance_ratio_": ratio,
        "n_corpus_words_": len(words),
        "teacher_": os.fspath(teacher),
        "median_token_length_": median_token_length(keys),
    }


def _corpus_words(est, texts, backend, spec, keep):
    """Corpus words (normalised, pre-tokenized) by decreasing count, that need a row."""
    normalizer, pre_tokenizer = backend.normalizer, backend.pre_tokenizer
    counts = {}
    for text in texts:
        if normalizer is not None:
            text = normalizer.normalize_str(text)
        pieces = pre_tokenizer.pre_tokenize_str(text) if pre_tokenizer else [(text, None)]
        for word, _ in pieces:
            counts[word] = counts.get(word, 0) + 1
    items = [(w, c) for w, c in counts.items() if c >= est.min_count]
    items.sort(key=lambda wc: -wc[1])  # stable: ties keep first-occurrence order
    vocab = spec["model"].get("vocab")
    if isinstance(vocab, dict):  # words the kept vocabulary already has need no row
        special = {a["content"] for a in spec.get("added_tokens") or [] if a.get("special")}
        items = [(w, c) for w, c in items if not (w in vocab and keep(w, w in special))]
    if est.max_vocab_size is not None:
        items = items[: est.max_vocab_size]
    if not items and est.vocabulary == "corpus":
        raise ValueError(
            f"No corpus word occurs min_count={est.min_count} times in the training "
            "documents; lower min_count or use vocabulary='model'."
        )
    return [w for w, _ in items], np.array([c for _, c in items], dtype=np.int64)


def _teacher_vectors(est, encoder, sequences, device):
    """Pooled teacher outputs, one row per sequence (sorted by length, batched).

    Rows already computed by an earlier fit with the same teacher, pooling
    and device (clones, CV folds, a grid over ``n_components``) come from a
    process-level cache; only the new sequences run through the teacher.
    """
    key = (encoder.source.key, est.pooling, device, est.backend)
    with _CACHE_LOCK:
        if _ROW_CACHE.get("key") != key:
            _ROW_CACHE.clear()
            _ROW_CACHE.update(key=key, rows={})
        rows = _ROW_CACHE["rows"]
        tuples = [tuple(s) for s in sequences]
        missing = list(dict.fromkeys(t for t in tuples if t not in rows))
        if missing:
            computed = _run_teacher(est, encoder, missing, device)
            rows.update(zip(missing, computed, strict=True))
        return np.stack([rows[t] for t in tuples]) if tuples else np.zeros((0, 1))


def _run_teacher(est, encoder, sequences, device):
    import torch

    model = _teacher_runner(est, encoder)
    pad_id = getattr(encoder.tokenizer, "pad_token_id", None) or 0
    lengths = np.array([len(s) for s in sequences])
    order = np.argsort(lengths, kind="stable")
    out = np.empty((len(sequences), encoder.hidden_size), dtype=np.float32)
    starts = range(0, len(order), est.batch_size)
    bar = progress(total=len(starts), verbose=est.verbose, desc="distilling", unit="batch")
    with limit_threads(est.n_jobs), torch.inference_mode():
        for start in starts:
            idx = order[start : start + est.batch_size]
            width = int(lengths[idx].max())
            ids = np.full((len(idx), width), pad_id, dtype=np.int64)
            mask = np.arange(width)[None, :] < lengths[idx][:, None]
            for row, i in enumerate(idx):
                ids[row, : lengths[i]] = sequences[i]
            mask_t = torch.from_numpy(mask.astype(np.int64)).to(device)
            hidden = model(torch.from_numpy(ids).to(device), mask_t).float()
            if est.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                m = mask_t.to(hidden.dtype)[:, :, None]
                pooled = (hidden * m).sum(1) / m.sum(1).clamp_min(1.0)
            out[idx] = pooled.cpu().numpy()
            bar.update(1)
    bar.close()
    return np.nan_to_num(out)


def _teacher_runner(est, encoder):
    """``run(input_ids, attention_mask) -> last hidden states`` on ``backend``."""
    import torch

    if est.backend == "torch":

        def run(ids, mask):
            # a batch of one length needs no mask: the same numbers, a faster attention
            full = bool(mask.all())
            out = encoder.model(input_ids=ids, attention_mask=None if full else mask)
            return out.last_hidden_state

        return run

    names = input_names(encoder.tokenizer)
    runner = load_runner(
        encoder,
        est.backend,
        quantize=None,
        layers=[int(encoder.n_hidden_states) - 1],
        layer_combine="mean",
        input_names=names,
        n_threads=resolve_n_jobs(est.n_jobs),
    )

    def run(ids, mask):
        inputs = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            inputs["token_type_ids"] = torch.zeros_like(ids)
        return runner(inputs)

    return run

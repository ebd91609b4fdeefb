"""model2vec's on-disk format and the ``tokenizer.json`` surgery of static distillation.

A model2vec directory holds ``model.safetensors`` (the token vectors under
the tensor name ``"embeddings"``; optionally ``"weights"``, per-token
multipliers, and ``"mapping"``, token id -> row, written by model2vec's
vocabulary quantization), ``tokenizer.json`` (a ``tokenizers`` tokenizer
whose ids index the rows) and ``config.json`` (``model_type="model2vec"``,
``normalize``, ``hidden_dim``, ``max_length``, ...). Only ``tokenizers``,
``safetensors`` and numpy are needed here; torch never is.

The tokenizer functions edit a copy of the teacher's ``tokenizer.json`` as
model2vec does (its ``clean_and_create_vocabulary``): unused and special
tokens leave the vocabulary (the unknown and padding tokens stay), ids are
renumbered in the teacher's order, the post-processor (``[CLS] ... [SEP]``)
is dropped, and whole corpus words can be added to a WordPiece vocabulary so
that greedy longest-match picks them before their pieces.
"""

from __future__ import annotations

import json
import os
import re
from itertools import chain
from pathlib import Path

import numpy as np

__all__ = [
    "UNUSED_TOKEN",
    "distillation_tokenizer",
    "is_model2vec_dir",
    "load_model2vec",
    "plain_tokenizer",
    "save_model2vec",
    "unk_token_id",
]

#: BERT's placeholder tokens, removed from the vocabulary (model2vec's ``token_remove_pattern``)
UNUSED_TOKEN = re.compile(r"\[unused\d+\]")
_FILES = ("model.safetensors", "tokenizer.json", "config.json")


def is_model2vec_dir(path):
    """Whether ``path`` is a directory in model2vec's format (not a transformers model).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    bool
        True when the directory holds model2vec's three files and its
        ``config.json`` says ``model_type="model2vec"`` or its safetensors file
        has an ``"embeddings"`` tensor.
    """
    try:
        path = Path(os.fspath(path)).expanduser()
    except TypeError:
        return False
    if not path.is_dir() or not all((path / f).is_file() for f in _FILES):
        return False
    try:
        config = json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(config, dict):
        return False
    if config.get("model_type") == "model2vec":
        return True
    from safetensors import safe_open

    try:
        with safe_open(path / "model.safetensors", framework="numpy") as f:
            return "embeddings" in f.keys()
    except Exception:  # noqa: BLE001 - a damaged file is reported by load_model2vec
        return False


def _read_config(path):
    file = path / "config.json"
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{file} is not valid JSON ({exc}); the model is damaged.") from None
    if not isinstance(config, dict):
        raise ValueError(
            f"{file} holds a JSON {type(config).__name__}, not an object of model2vec settings; "
            "the model is damaged."
        )
    return config


def _read_tensors(path):
    """The ``embeddings``, ``weights`` and ``mapping`` tensors, each checked before use."""
    from safetensors import safe_open

    file = path / "model.safetensors"
    try:
        with safe_open(file, framework="numpy") as f:
            keys = set(f.keys())
            if "embeddings" not in keys:
                raise ValueError(
                    f"{file} has no 'embeddings' tensor (found {sorted(keys)}); "
                    "it is not a model2vec model."
                )
            tensors = {
                k: f.get_tensor(k) for k in ("embeddings", "weights", "mapping") if k in keys
            }
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - safetensors' own errors name no path
        raise ValueError(
            f"{file} cannot be read as a safetensors file, it is truncated or damaged "
            f"({type(exc).__name__}: {exc})."
        ) from None
    vectors = tensors["embeddings"]
    if vectors.ndim != 2 or vectors.dtype.kind not in "fiu":
        raise ValueError(
            f"{file}: 'embeddings' must be a 2-D numeric table, got shape {vectors.shape} of "
            f"{vectors.dtype}."
        )
    if vectors.shape[1] == 0 or vectors.shape[0] == 0:
        raise ValueError(
            f"{file}: 'embeddings' has shape {vectors.shape}; a model2vec table needs at least "
            "one row and one column (a zero-width table would embed every text as ())."
        )
    mapping = tensors.get("mapping")
    if mapping is not None:
        if mapping.ndim != 1 or mapping.dtype.kind not in "iu":
            raise ValueError(f"{file}: 'mapping' must be 1-D integers, got {mapping.dtype}.")
        if mapping.size and (mapping.min() < 0 or mapping.max() >= len(vectors)):
            raise ValueError(
                f"{file}: 'mapping' points to rows {int(mapping.min())}..{int(mapping.max())} "
                f"but 'embeddings' has {len(vectors)} rows."
            )
    n_rows = len(vectors) if mapping is None else len(mapping)
    weights = tensors.get("weights")
    if weights is not None and (weights.ndim != 1 or len(weights) != n_rows):
        raise ValueError(
            f"{file}: 'weights' has shape {weights.shape} but there are {n_rows} tokens "
            "(one weight per token)."
        )
    if weights is not None and weights.dtype.kind not in "fiu":
        raise ValueError(f"{file}: 'weights' must be numeric, got {weights.dtype}.")
    return vectors, weights, mapping


def plain_tokenizer(tokenizer):
    """A copy of a ``tokenizers.Tokenizer`` that neither pads nor truncates.

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer

    Returns
    -------
    tokenizers.Tokenizer
    """
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer.to_str())
    tok.no_padding()
    tok.no_truncation()
    return tok


def unk_token_id(tokenizer):
    """The id of the unknown token (model2vec drops it when it embeds), or None.

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer

    Returns
    -------
    int or None
    """
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    return json.loads(tokenizer.to_str())["model"].get("unk_id")


def load_model2vec(path):
    """Read a model2vec directory.

    Parameters
    ----------
    path : str or os.PathLike
        A directory written by model2vec's ``StaticModel.save_pretrained`` or
        by :meth:`skembed.text.StaticEmbedder.save_pretrained`.

    Returns
    -------
    vectors : numpy.ndarray of shape (vocabulary_size, hidden_dim), float32
        One row per token id (model2vec's ``weights`` and ``mapping`` tensors,
        when present, are folded in: row ``i`` is ``embeddings[mapping[i]] *
        weights[i]``, which is what model2vec's ``encode`` averages).
    tokenizer : tokenizers.Tokenizer
        Padding and truncation disabled.
    config : dict
        The parsed ``config.json``.

    Raises
    ------
    FileNotFoundError
        If a file of the format is missing (the message names it).
    ValueError
        Naming the file and the problem, if ``config.json`` is not a JSON
        object, ``model.safetensors`` is truncated or damaged, has no
        ``embeddings`` table or a table with no rows or columns, a
        ``mapping`` pointing outside the table or ``weights`` of another
        length than the vocabulary, ``tokenizer.json`` is not a tokenizer, or
        the vectors and the tokenizer disagree on the vocabulary size.
    """
    from tokenizers import Tokenizer

    path = Path(os.fspath(path)).expanduser()
    for name in _FILES:
        if not (path / name).is_file():
            raise FileNotFoundError(
                f"{path} has no {name!r}: a model2vec directory holds model.safetensors, "
                "tokenizer.json and config.json (as written by StaticModel.save_pretrained or "
                "StaticEmbedder.save_pretrained)."
            )
    config = _read_config(path)
    vectors, weights, mapping = _read_tensors(path)
    vectors = vectors.astype(np.float32)
    if mapping is not None:
        vectors = vectors[np.asarray(mapping, dtype=np.int64)]
    if weights is not None:
        vectors = vectors * np.asarray(weights, dtype=np.float32)[:, None]
    try:
        tokenizer = plain_tokenizer(Tokenizer.from_file(str(path / "tokenizer.json")))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception
        raise ValueError(
            f"{path / 'tokenizer.json'} is not a tokenizers tokenizer file ({exc}); "
            "the model is damaged."
        ) from None
    n_tokens = tokenizer.get_vocab_size(with_added_tokens=True)
    if n_tokens != len(vectors):
        raise ValueError(
            f"{path}: the tokenizer has {n_tokens} tokens but model.safetensors has "
            f"{len(vectors)} vectors; the directory is inconsistent."
        )
    return np.ascontiguousarray(vectors, dtype=np.float32), tokenizer, config


def save_model2vec(path, vectors, tokenizer, config):
    """Write a model2vec directory (``model.safetensors``, ``tokenizer.json``, ``config.json``).

    Parameters
    ----------
    path : str or os.PathLike
        Created if needed; existing files of the format are replaced.
    vectors : numpy.ndarray of shape (vocabulary_size, hidden_dim)
        Saved as float32 under model2vec's tensor name ``"embeddings"``.
    tokenizer : tokenizers.Tokenizer
    config : dict
        model2vec's keys; ``embedding_dtype`` is set here.
    """
    from safetensors.numpy import save_file

    path = Path(os.fspath(path)).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    save_file({"embeddings": vectors}, str(path / "model.safetensors"))
    tokenizer.save(str(path / "tokenizer.json"), pretty=False)
    config = {**config, "embedding_dtype": "float32"}
    (path / "config.json").write_text(json.dumps(config, indent=4))
    # sentence-transformers' module list, as model2vec writes it
    modules = [
        {"idx": 0, "name": "0", "path": ".", "type": "sentence_transformers.models.StaticEmbedding"}
    ]
    if config.get("normalize"):
        modules.append(
            {
                "idx": 1,
                "name": "1",
                "path": "1_Normalize",
                "type": "sentence_transformers.models.Normalize",
            }
        )
    (path / "modules.json").write_text(json.dumps(modules, indent=4))


def distillation_tokenizer(spec, keep, words=()):
    """Edit a teacher's ``tokenizer.json`` into the static model's tokenizer.

    Parameters
    ----------
    spec : dict
        The teacher's parsed ``tokenizer.json`` (``json.loads(tok.to_str())``).
    keep : callable (token: str, special: bool) -> bool
        Which of the teacher's tokens stay (called in id order).
    words : sequence of str
        Whole words to append to the vocabulary (WordPiece only), in the
        order their rows will have; words already kept are skipped by the
        caller.

    Returns
    -------
    tokenizer : tokenizers.Tokenizer
        New ids ``0..n-1``: the kept tokens in the teacher's order, then
        ``words``; no post-processor, padding or truncation.
    kept_ids : list of int
        The teacher's id of each kept token (row ``i < len(kept_ids)``).

    Raises
    ------
    ValueError
        If ``words`` are given for a tokenizer that is not WordPiece.
    """
    from tokenizers import Tokenizer

    spec = json.loads(json.dumps(spec))  # deep copy
    model = spec["model"]
    special = {a["content"] for a in spec.get("added_tokens") or [] if a.get("special")}
    if model["type"] in ("WordPiece", "BPE", "WordLevel"):
        ordered = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    elif model["type"] == "Unigram":
        ordered = [(piece, i) for i, (piece, _) in enumerate(model["vocab"])]
    else:  # pragma: no cover - every tokenizers model type is listed above
        raise ValueError(f"Unsupported tokenizer model type {model['type']!r}.")
    if words and model["type"] != "WordPiece":
        raise ValueError(
            f"vocabulary='corpus' or 'both' adds whole words to a WordPiece vocabulary; this "
            f"teacher's tokenizer is {model['type']}. Use vocabulary='model' with it."
        )
    kept = [(tok, i) for tok, i in ordered if keep(tok, tok in special)]
    if model["type"] == "Unigram":
        # a Unigram vocabulary is a list of (piece, score); its unk_id moves with the renumbering
        old_to_new = {i: n for n, (_, i) in enumerate(kept)}
        model["vocab"] = [model["vocab"][i] for _, i in kept]
        if model.get("unk_id") is not None:
            model["unk_id"] = old_to_new.get(model["unk_id"])
    else:
        new_vocab = {tok: n for n, (tok, _) in enumerate(kept)}
        for word in words:
            new_vocab[word] = len(new_vocab)
        model["vocab"] = new_vocab
    new_ids = (
        {tok: n for n, (tok, _) in enumerate(kept)}
        if model["type"] == "Unigram"
        else model["vocab"]
    )
    spec["added_tokens"] = [
        {**a, "id": new_ids[a["content"]]}
        for a in spec.get("added_tokens") or []
        if a["content"] in new_ids
    ]
    spec["post_processor"] = None
    spec["padding"] = None
    spec["truncation"] = None
    return Tokenizer.from_str(json.dumps(spec)), [i for _, i in kept]


def median_token_length(tokens):
    """Median token length in characters: model2vec cuts a text at ``max_length`` times it."""
    return int(np.median([len(t) for t in tokens]))


def encode_raw(tokenizer, texts):
    encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
    ids = np.fromiter(
        chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=int(lengths.sum())
    )
    return ids, lengths


def encode(tokenizer, unk_id, texts, max_length, median_token_length):
    """Ids of the known tokens of each text and the CSR row pointer (model2vec's truncation)."""
    if max_length is not None:
        n_chars = max_length * median_token_length
        texts = [t[:n_chars] for t in texts]
    ids, lengths = encode_raw(tokenizer, texts)
    doc = np.repeat(np.arange(len(texts)), lengths)
    keep = np.ones(len(ids), dtype=bool)
    if max_length is not None:
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        keep &= (np.arange(len(ids)) - starts) < max_length
    if unk_id is not None:
        keep &= ids != unk_id
    ids, doc = ids[keep], doc[keep]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(doc, minlength=len(texts)))])
    return ids, indptr


def oov_rate(tokenizer, unk_id, texts):
    ids, _ = encode_raw(tokenizer, texts)
    if not len(ids) or unk_id is None:
        return 0.0
    return float(np.mean(ids == unk_id))

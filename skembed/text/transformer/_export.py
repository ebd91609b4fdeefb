"""Exported inference backends (ONNX Runtime, OpenVINO) for BertPooledEmbedder.

The encoder is exported offline from the already loaded torch model with
torch's own exporter (``torch.onnx.export``, the TorchScript-based path with
eager attention: it is the graph onnxruntime's transformer optimizer fuses
fully, into ``EmbedLayerNormalization``, ``Attention``, ``BiasGelu`` and
``SkipLayerNormalization``; the dynamo exporter's graph fuses no attention and
runs slower). The exported graph returns the token vectors of the selected
hidden states already combined per ``layer_combine``, so pooling, chunking,
truncation and the embedding cache stay in :mod:`skembed.text.transformer._bert` and behave
the same on every backend.

- ``"onnx"``: the export fused by ``onnxruntime.transformers.optimizer``;
  ``quantize="int8"``: ``onnxruntime.quantization.quantize_dynamic`` of the
  fused graph (``MatMul`` and ``Attention``, per-channel int8 weights, uint8
  activations quantised per batch; no calibration).
- ``"openvino"``: the (unfused) ONNX export converted by
  ``openvino.convert_model`` (OpenVINO fuses it itself) and saved as IR with
  float32 weights, compiled with ``INFERENCE_PRECISION_HINT="f32"`` (this CPU
  would otherwise default to bfloat16); ``quantize="int8"``:
  ``nncf.quantize(..., model_type=nncf.ModelType.TRANSFORMER)`` calibrated on
  a sample of the ``fit`` documents (the sample's hash enters the cache key).

Exports live in ``$SKEMBED_CACHE_DIR/exports`` (else
``~/.cache/skembed/exports``), one directory per hash of the model's files (or
the loaded objects' fingerprint) and every export setting. A directory is
built under a temporary name and renamed into place (atomic; a process that
loses the race uses the winner's), and its ``manifest.json`` (the sha256 of
every file) is written last and verified on load: a corrupt or half-written
export is removed, rebuilt and never loaded. A builder holds an exclusive
``flock`` on its temporary directory; one left by a killed process (unlocked,
untouched for ``STALE_EXPORT_SECONDS``) is removed by the next export. Sessions are compiled and cached
in-process by :mod:`.runner`.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.metadata
import io
import json
import os
import shutil
import threading
import time
import uuid
import warnings
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

from ...utils._caches import register_cache

__all__ = ["BACKENDS", "check_backend", "export_root", "input_names", "resolve_backend_device"]

BACKENDS = ("torch", "onnx", "openvino")
#: bump when the layout or the recipe of an export changes (old exports are then ignored)
EXPORT_VERSION = 2
OPSET = 17
#: what each backend imports (the last ``openvino`` entry only for ``quantize="int8"``)
#: (torch's exporter itself needs ``onnx``; onnxscript is not needed by the TorchScript path)
_PACKAGES = {"onnx": ("onnxruntime", "onnx"), "openvino": ("openvino", "onnx", "nncf")}
_FILE_HASHES: dict = {}
#: a temporary export directory (``exports/.tmp-*``) untouched this long, and not locked by a
#: live builder, was left by a killed process and is removed by the next export
STALE_EXPORT_SECONDS = 3600.0
_LOCK_NAME = ".building.lock"
_LOCK = threading.RLock()


#: CPU flags (Linux ``/proc/cpuinfo`` names) of the int8 dot-product instructions that make
#: int8 inference pay: x86 VNNI (AVX-512 or AVX) and AMX, ARM's dot product and int8 matmul
INT8_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm"})


def cpu_flags():
    """The CPU's instruction-set flags as ``/proc/cpuinfo`` names them, or None where unknown.

    Returns
    -------
    flags : frozenset of str or None
        ``None`` off Linux (no ``/proc/cpuinfo``), where skembed does not guess.
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        return None
    return None


def int8_advice(backend, flags=None):
    """A warning text when ``quantize="int8"`` on ``backend`` is likely slower than float32.

    OpenVINO's static int8 graph needs int8 dot-product instructions (VNNI, AMX,
    ARM dot product) to beat float32: on an AMD EPYC with AVX2 only it ran at
    0.83x sentence-transformers' float32 speed where its float32 graph ran at
    1.33x (onnx int8 1.73x, torch int8 1.18x on that CPU).

    Parameters
    ----------
    backend : {"torch", "onnx", "openvino"}
    flags : frozenset of str or None, default=None
        The CPU's flags; ``None`` reads them (:func:`cpu_flags`).

    Returns
    -------
    message : str or None
        ``None`` when int8 should pay, the backend is not openvino, or the
        CPU's flags cannot be read.
    """
    if backend != "openvino":
        return None
    flags = cpu_flags() if flags is None else flags
    if not flags or flags & INT8_FLAGS:
        return None
    return (
        "quantize='int8' with backend='openvino' is likely slower than float32 on this CPU: "
        "it lacks int8 dot-product instructions (VNNI, AMX or ARM dot product); on an AVX2-only "
        "AMD EPYC it ran at 0.62x its own float32 speed. Use backend='onnx' with "
        "quantize='int8' (faster there), or backend='openvino' in float32."
    )


def resolve_backend_device(backend, device, torch_dtype, quantize=None):
    """The device an estimator's ``fit`` runs ``backend`` on, after :func:`check_backend`.

    ``device="auto"`` means the CPU for the exported backends (they run on the CPU only).

    Parameters
    ----------
    backend : {"torch", "onnx", "openvino"}
    device : str or torch.device
        The estimator's ``device`` parameter.
    torch_dtype : str
    quantize : {None, "int8"}

    Returns
    -------
    device : str
        As :func:`skembed.utils._compute.resolve_device` gives it.

    Raises
    ------
    ImportError, ValueError
        As :func:`check_backend`, and for an unavailable device.
    """
    from ...utils._compute import parse_device, resolve_device

    name = parse_device(device)  # the one parse; None: resolve_device names the problem
    if backend != "torch" and name == "auto":
        name = "cpu"
    if name is not None:  # the backend's rule first: onnx on "cuda" is wrong on any machine
        check_backend(backend, "cpu" if name == "cpu" else str(device), torch_dtype, quantize)
    return resolve_device(device if name is None else name)


def input_names(tokenizer, decoder=False):
    """The encoder inputs an export takes, in its order.

    Parameters
    ----------
    tokenizer : transformers tokenizer
    decoder : bool, default=False
        A decoder's batches are padded on the left, so its positions count
        from each row's first real token: they are an input of the export
        (a graph counting from column 0 would shift every padded row).

    Returns
    -------
    names : tuple of str
        ``input_ids``, ``attention_mask``, then ``token_type_ids`` where the
        tokenizer makes them and ``position_ids`` for a decoder.
    """
    names = ("input_ids", "attention_mask")
    if "token_type_ids" in getattr(tokenizer, "model_input_names", ()):
        names += ("token_type_ids",)
    if decoder:
        names += ("position_ids",)
    return names


def check_backend(backend, device, torch_dtype, quantize=None):
    """Refuse a backend whose packages are missing or that cannot run the settings.

    Parameters
    ----------
    backend : {"torch", "onnx", "openvino"}
    device : str
        The resolved device.
    torch_dtype : str
    quantize : {None, "int8"}
        ``"openvino"`` with ``"int8"`` also needs ``nncf``.

    Raises
    ------
    ImportError
        A package of the backend is not installed (the message names the
        extra to install).
    ValueError
        ``device`` other than the CPU, or ``torch_dtype`` other than float32,
        with ``"onnx"`` or ``"openvino"``.
    """
    if backend == "torch":
        return
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    modules = _PACKAGES[backend]
    if backend == "openvino" and quantize != "int8":
        modules = modules[:-1]
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(
                f"backend={backend!r} needs the {module!r} package, which is not installed: "
                f'pip install "skembed[{backend}]" (or use backend="torch"). ({exc})'
            ) from exc
    if device != "cpu":
        raise ValueError(
            f"backend={backend!r} runs on the CPU only; got device={device!r}. Use device='cpu' "
            "(or 'auto', which means the CPU for this backend), or backend='torch' on an "
            "accelerator."
        )
    if str(torch_dtype).replace("torch.", "") != "float32":
        raise ValueError(
            f"backend={backend!r} computes in float32 (quantize='int8' for a faster lower "
            f"precision); got torch_dtype={torch_dtype!r}. Use torch_dtype='float32'."
        )


def export_root():
    """Directory holding the exports: ``$SKEMBED_CACHE_DIR/exports``, else ``~/.cache/skembed/exports``.

    Returns
    -------
    path : pathlib.Path
    """
    base = os.environ.get("SKEMBED_CACHE_DIR")
    root = Path(base) if base else Path.home() / ".cache" / "skembed"
    return root / "exports"


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _model_identity(encoder):
    """Hash of a model directory's files (memoised on size and mtime), else of the weights."""
    source = encoder.source
    if source.kind == "hub":  # the revision loaded is not in the key: fingerprint the weights
        from ._loading import _fingerprint

        return "hub:" + _fingerprint(encoder.model, encoder.tokenizer)
    if source.kind != "dir":
        return source.key
    files = sorted(p for p in Path(source.location).iterdir() if p.is_file())
    stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    with _LOCK:
        hit = _FILE_HASHES.get(source.location)
        if hit is None or hit[0] != stamp:
            h = hashlib.sha256()
            for p in files:
                h.update(p.name.encode() + b"\0" + _sha256(p).encode())
            hit = (stamp, h.hexdigest())
            _FILE_HASHES[source.location] = hit
        return hit[1]


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def export_settings(encoder, backend, quantize, layers, layer_combine, calibration, inputs):
    """Everything an export depends on (its cache key is the hash of this dict)."""
    packages = ("torch", "transformers", *_PACKAGES[backend])
    return {
        "version": EXPORT_VERSION,
        "model": _model_identity(encoder),
        "backend": backend,
        "inputs": list(inputs),
        "quantize": quantize,
        "layers": list(layers),
        "layer_combine": layer_combine if len(layers) > 1 else None,
        "opset": OPSET,
        "calibration": calibration,
        "packages": {p: _version(p) for p in packages},
    }


def calibration_hash(texts, *settings):
    """Hash of the calibration texts and the settings that cut them into inputs (a cache key)."""
    h = hashlib.sha256(json.dumps(settings).encode())
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()[:24]


# ---------------------------------------------------------------------- cache directory
def _verify(path):
    """True when ``path`` holds a complete export whose files match its manifest."""
    manifest = path / "manifest.json"
    try:
        files = json.loads(manifest.read_text())["files"]
        return bool(files) and all(_sha256(path / name) == digest for name, digest in files.items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _lock(path, blocking):
    """An open file holding an exclusive ``flock`` on ``path``, or None if another holds it
    (always a file where ``fcntl`` is missing: the age bound alone then decides)."""
    handle = open(path, "a+b")  # noqa: SIM115 - the lock lives as long as the handle
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return handle
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        handle.close()
        return None
    return handle


def _remove_stale_temporaries(root, max_age=None):
    """Remove ``root/.tmp-*`` directories left by killed builders (older than ``max_age``
    seconds and not locked by a live builder); returns their names."""
    max_age = STALE_EXPORT_SECONDS if max_age is None else max_age
    removed = []
    now = time.time()
    for tmp in root.glob(".tmp-*"):
        try:
            if not tmp.is_dir() or now - tmp.stat().st_mtime < max_age:
                continue
            lock_file = tmp / _LOCK_NAME
            handle = _lock(lock_file, blocking=False) if lock_file.exists() else None
            if lock_file.exists() and handle is None:
                continue  # a builder is still writing it
        except OSError:
            continue
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp.name)
        finally:
            if handle is not None:
                handle.close()
    return removed


def _cached_export(settings, build):
    """The directory of a verified export, building it (write, manifest, rename) if needed."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:32]
    root = export_root()
    final = root / f"{settings['backend']}-{digest}"
    if final.exists():
        if _verify(final):
            return final
        warnings.warn(
            f"The cached {settings['backend']} export {final} is corrupt or incomplete; removing "
            "and rebuilding it.",
            UserWarning,
            stacklevel=4,
        )
        shutil.rmtree(final, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(root)
    tmp = root / f".tmp-{digest}-{uuid.uuid4().hex}"
    tmp.mkdir()
    lock = _lock(tmp / _LOCK_NAME, blocking=True)  # released if this process is killed
    try:
        build(tmp)
        lock.close()
        (tmp / _LOCK_NAME).unlink()
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        manifest = {"files": files, "settings": settings}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
        try:
            os.replace(tmp, final)
        except OSError:  # another process renamed its export into place first: use that one
            if not _verify(final):
                raise
    finally:
        lock.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return final


# ---------------------------------------------------------------------- export
def _tokens_module(model, layers, layer_combine, input_names):
    """torch module: positional inputs -> combined token vectors of the selected hidden states."""
    import torch

    from ...nn.pooling import combine_layers

    class Tokens(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            inputs = dict(zip(input_names, args, strict=True))
            last = list(layers) == [model.config.num_hidden_layers]
            out = self.model(**inputs, output_hidden_states=not last, return_dict=True)
            if last:
                return out.last_hidden_state
            return combine_layers(out.hidden_states, layers, layer_combine)

    return Tokens().eval()


def _example(input_names, vocab_size, length=6):
    """A padded batch of two sequences (numpy int64), the export's example and check input.

    With ``position_ids`` among the inputs the batch is padded on the left, as
    :meth:`~skembed.text.transformer._encoder.EncoderMixin._inputs` pads a
    decoder's, and the positions count from each row's first real token.
    """
    rng = np.random.default_rng(length)
    ids = rng.integers(1, vocab_size, size=(2, length), dtype=np.int64)
    mask = np.ones_like(ids)
    if "position_ids" in input_names:
        mask[1, : length // 3] = 0
    else:
        mask[1, length - length // 3 :] = 0
    ids *= mask
    positions = (np.cumsum(mask, axis=1) - 1).clip(min=0)
    values = {"input_ids": ids, "attention_mask": mask, "position_ids": positions}
    return {n: values.get(n, np.zeros_like(ids)) for n in input_names}


#: the longest check batch: two rows of it cost seconds on a CPU even for a 7B model, where a
#: window of 32,768 positions (Qwen2's configs, which set it and switch it off) would not
MAX_CHECK_LENGTH = 1024


def _check_lengths(config):
    """Sequence lengths the export is checked at: the example's, and one past any attention
    window up to ``MAX_CHECK_LENGTH``, so that a mask or a shape the tracer fixed at the
    example's length shows."""
    window = getattr(config, "sliding_window", None) or 0
    limit = getattr(config, "max_position_embeddings", None) or 512
    return 6, int(min(max(24, window + 8), limit, MAX_CHECK_LENGTH))


def _check_against_torch(run, encoder, layers, layer_combine, input_names, backend):
    """Refuse an export whose float32 output differs from torch's on the real tokens."""
    import torch

    config = encoder.model.config
    module = _tokens_module(encoder.model, layers, layer_combine, input_names)
    for length in _check_lengths(config):
        feed = _example(input_names, config.vocab_size, length)
        with torch.inference_mode():
            want = module(*(torch.from_numpy(feed[n]) for n in input_names)).float().numpy()
        got = np.asarray(run(feed), np.float32)
        real = feed["attention_mask"].astype(bool)
        err = float(np.abs(got[real] - want[real]).max()) if got.shape == want.shape else np.inf
        scale = max(float(np.abs(want[real]).max()), 1.0)
        if not err <= 1e-3 * scale:
            raise ValueError(
                f"the {backend} export's output differs from torch's at length {length} (max "
                f"|diff| {err:.3g}, shape {got.shape} vs {want.shape}): this architecture is "
                "not supported by the export"
            )


@contextmanager
def _broadcast_masks():
    """While tracing, build transformers' attention masks by broadcasting, not ``torch.vmap``.

    transformers builds a mask with ``torch.vmap`` wherever a model adds its own
    mask function (Gemma3's bidirectional attention and its window), and the
    TorchScript tracer cannot record vmap (``RuntimeError: unordered_map::at``).
    Those functions compare indices, so transformers' other route, which calls
    them on broadcast index grids, gives the same mask with operations the
    tracer records (``use_vmap=False`` below). A mask function that is not
    index-based would give another mask there, and the check against torch
    (which builds its masks unpatched) refuses that export. Without that
    helper (another transformers) nothing is changed and such a model fails
    to export by name. The export runs under the export lock; a torch model of
    another thread meanwhile builds its index-based masks by the other route.
    """
    try:
        from transformers import masking_utils
    except ImportError:  # pragma: no cover - transformers is needed to load any model
        masking_utils = None
    original = getattr(masking_utils, "sdpa_mask", None)
    if original is None:
        yield
        return

    def sdpa_mask(*args, **kwargs):
        return original(*args, **{**kwargs, "use_vmap": False})

    masking_utils.sdpa_mask = sdpa_mask
    try:
        yield
    finally:
        masking_utils.sdpa_mask = original


def _export_onnx(model, layers, layer_combine, input_names, path):
    """``torch.onnx.export`` (TorchScript path, eager attention) with dynamic batch and sequence."""
    import torch

    model = copy.deepcopy(model).float().cpu()
    if hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation("eager")  # the pattern onnxruntime's fusions know
        except (ValueError, AttributeError, TypeError):
            pass
    module = _tokens_module(model, layers, layer_combine, input_names)
    feed = _example(input_names, model.config.vocab_size)
    example = tuple(torch.from_numpy(feed[n]) for n in input_names)
    axes = {n: {0: "batch", 1: "sequence"} for n in (*input_names, "tokens")}
    with (
        warnings.catch_warnings(),
        torch.inference_mode(False),
        torch.no_grad(),
        _broadcast_masks(),
    ):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            example,
            str(path),
            input_names=list(input_names),
            output_names=["tokens"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _build_onnx(encoder, layers, layer_combine, input_names, quantize, out):
    import logging

    from onnxruntime.transformers.optimizer import optimize_model

    config = encoder.model.config
    raw = out / "raw.onnx"
    _export_onnx(encoder.model, layers, layer_combine, input_names, raw)
    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = optimize_model(
            str(raw),
            model_type="bert",
            num_heads=int(config.num_attention_heads),
            hidden_size=int(config.hidden_size),
            opt_level=0,
        )
    raw.unlink()
    fused.save_model_to_file(str(out / "fused.onnx"))
    import onnxruntime as ort

    session = ort.InferenceSession(str(out / "fused.onnx"), providers=["CPUExecutionProvider"])
    run = lambda feed: session.run(None, feed)[0]  # noqa: E731
    _check_against_torch(run, encoder, layers, layer_combine, input_names, "onnx")
    if quantize != "int8":
        (out / "fused.onnx").rename(out / "model.onnx")
        return
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer's advice to pre-process goes to the root logger
    try:
        quantize_dynamic(
            str(out / "fused.onnx"),
            str(out / "model.onnx"),
            op_types_to_quantize=["MatMul", "Attention"],
            per_channel=True,
            reduce_range=False,
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
    finally:
        root.setLevel(level)
    (out / "fused.onnx").unlink()


def _build_openvino(encoder, layers, layer_combine, input_names, quantize, calibration, out):
    import logging

    import openvino as ov

    raw = out / "raw.onnx"
    _export_onnx(encoder.model, layers, layer_combine, input_names, raw)
    model = ov.convert_model(str(raw))
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    run = lambda feed: compiled(feed)[compiled.outputs[0]]  # noqa: E731
    _check_against_torch(run, encoder, layers, layer_combine, input_names, "openvino")
    if quantize == "int8":
        import nncf

        feeds = calibration(input_names)
        nncf.set_log_level(logging.ERROR)  # no notices from a library call, and no progress
        sink = io.StringIO()  # bars (nncf draws them with rich on stdout, unconditionally)
        with warnings.catch_warnings(), redirect_stdout(sink), redirect_stderr(sink):
            warnings.simplefilter("ignore")
            model = nncf.quantize(
                model,
                nncf.Dataset(feeds),
                model_type=nncf.ModelType.TRANSFORMER,
                subset_size=len(feeds),
            )
    ov.save_model(model, str(out / "model.xml"), compress_to_fp16=False)
    raw.unlink()


@register_cache
def clear_file_hashes():
    """Forget the sha256 of model files computed in this process (they are computed again)."""
    with _LOCK:
        _FILE_HASHES.clear()

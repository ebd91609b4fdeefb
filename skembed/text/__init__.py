"""Text embedders: documents → dense vectors. Torch is imported only by the estimators that need it, in ``fit``."""

from .bert import BertPooledEmbedder
from .corpus import DaskCorpus, LineCorpus
from .doc2vec import Doc2VecTransformer
from .fasttext import FastTextKeyedVectors, FastTextTransformer
from .glove import GloVeTransformer
from .lsa import TfidfLSA
from .ppmi import PPMIEmbedder
from .setfit import SetFitEmbedder
from .static import StaticEmbedder
from .word2vec import Word2VecTransformer

__all__ = [
    "BertPooledEmbedder",
    "DaskCorpus",
    "Doc2VecTransformer",
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "GloVeTransformer",
    "LineCorpus",
    "PPMIEmbedder",
    "SetFitEmbedder",
    "StaticEmbedder",
    "TfidfLSA",
    "Word2VecTransformer",
]

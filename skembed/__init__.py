"""skembed: scikit-learn-compatible embedding transformers."""

from .keyedvectors import KeyedVectors
from .text import LineCorpus, PPMIEmbedder, TfidfLSA

__version__ = "0.1.0"

__all__ = ["KeyedVectors", "LineCorpus", "PPMIEmbedder", "TfidfLSA", "__version__"]

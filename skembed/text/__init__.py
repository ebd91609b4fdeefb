"""Text embedders: document → dense vector."""

from ._analyzer import LineCorpus
from .lsa import TfidfLSA
from .ppmi import PPMIEmbedder

__all__ = ["LineCorpus", "PPMIEmbedder", "TfidfLSA"]

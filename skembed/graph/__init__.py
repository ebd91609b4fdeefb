"""Graph embedders: node vectors from random walks (:class:`Node2VecTransformer`)."""

from .node2vec import Node2VecTransformer

__all__ = ["Node2VecTransformer"]

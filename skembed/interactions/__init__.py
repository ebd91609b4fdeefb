"""Embeddings of behaviour: user and item vectors from interaction logs
(:class:`InteractionEmbedder`: implicit ALS, item2vec)."""

from .embedder import InteractionEmbedder

__all__ = ["InteractionEmbedder"]

"""Neural embedders for tabular data: AutoencoderEmbedder, VAEEmbedder and EntityEmbedder.

Shared with :mod:`skembed.model_selection`: :class:`TabularPreprocessor` (mixed columns → one
numeric matrix, ``preprocessor="auto"``), :func:`categories_as_str` and its pipeline step
:class:`CategoriesAsStr`.

Importing this package does not import torch; torch is imported in ``fit``.
"""

from ._preprocess import CategoriesAsStr, TabularPreprocessor, categories_as_str
from .autoencoder import AutoencoderEmbedder
from .entity import EntityEmbedder
from .vae import VAEEmbedder

__all__ = [
    "AutoencoderEmbedder",
    "CategoriesAsStr",
    "EntityEmbedder",
    "TabularPreprocessor",
    "VAEEmbedder",
    "categories_as_str",
]

"""Neural embedders for tabular data: AutoencoderEmbedder, VAEEmbedder and EntityEmbedder.

Importing this package does not import torch; torch is imported in ``fit``.
"""

from .autoencoder import AutoencoderEmbedder
from .entity import EntityEmbedder
from .vae import VAEEmbedder

__all__ = ["AutoencoderEmbedder", "EntityEmbedder", "VAEEmbedder"]

"""Neural embedders for tabular data: AutoencoderEmbedder and VAEEmbedder.

Importing this package does not import torch; torch is imported in ``fit``.
"""

from ..exceptions import TrainingDivergedError  # also importable from here, as before
from .autoencoder import AutoencoderEmbedder
from .vae import VAEEmbedder

__all__ = ["AutoencoderEmbedder", "TrainingDivergedError", "VAEEmbedder"]

"""Make dense embeddings small: keep fewer dimensions, store fewer bits per dimension.

Steps that slot after any dense embedder in a :class:`~sklearn.pipeline.Pipeline`:
:class:`EmbeddingTruncator` (Matryoshka truncation, or PCA for models not
trained for it) and :class:`EmbeddingQuantizer` (int8/uint8 with ranges
calibrated in ``fit``, or one bit per dimension). ``skembed compare --compress``
measures what each keeps of the score on the user's own data.
"""

from ._quantize import EmbeddingQuantizer
from ._truncate import EmbeddingTruncator

__all__ = ["EmbeddingQuantizer", "EmbeddingTruncator"]

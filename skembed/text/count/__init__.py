"""Count-based text embeddings: word/document counts, then a factorization.

- :class:`TfidfLSA` (``_lsa``): TF-IDF → truncated SVD of the document-term matrix;
- :class:`PPMIEmbedder` (``_ppmi``): window co-occurrence → PPMI → SVD word vectors, pooled;
- :class:`GloVeTransformer` (``_glove``): weighted least squares on log co-occurrences.

Shared here: ``_cooccurrence`` (sparse word-context counts) and ``_svd`` (truncated SVD with torch).
"""

from ._glove import GloVeTransformer
from ._lsa import TfidfLSA
from ._ppmi import PPMIEmbedder

__all__ = ["GloVeTransformer", "PPMIEmbedder", "TfidfLSA"]

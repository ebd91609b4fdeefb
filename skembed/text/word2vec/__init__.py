"""The word2vec family: skip-gram/CBOW word vectors, fastText subwords, paragraph vectors.

- :class:`Word2VecTransformer` (``_word2vec``), :class:`FastTextTransformer` (``_fasttext``,
  with Facebook's file formats in ``_fasttext_io``), :class:`Doc2VecTransformer` (``_doc2vec``);
- ``_family``: the family's base (parameters, vocabulary, weights, the one place engines are built);
- ``_training``: corpus encoding, kernel tables and the epoch step;
- ``_engines``: the engines that train a chunk (numba, torch, torch-batched, Doc2Vec's).
"""

from ._doc2vec import Doc2VecTransformer
from ._fasttext import FastTextKeyedVectors, FastTextTransformer
from ._word2vec import Word2VecTransformer

__all__ = [
    "Doc2VecTransformer",
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "Word2VecTransformer",
]

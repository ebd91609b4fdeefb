"""Text embedders: documents → dense vectors. Torch is imported only by the estimators that need it, in ``fit``.

One subpackage per family, its public names re-exported here and at :mod:`skembed`:

- :mod:`skembed.text.count`: count-based embeddings (TF-IDF + LSA, PPMI + SVD, GloVe);
- :mod:`skembed.text.word2vec._word2vec`: the word2vec family (Word2Vec, FastText, Doc2Vec);
- :mod:`skembed.text.transformer`: transformer models (pooled BERT, SetFit, static embeddings).

The modules shared by the families stay here: ``_base`` (the text-estimator bases),
``_analyzer`` (tokenizing, vocabularies), ``_pooling`` (word → document vectors) and
:mod:`skembed.text.corpus` (corpora streamed from disk or a cluster).
"""

from .corpus import DaskCorpus, LineCorpus
from .count import GloVeTransformer, PPMIEmbedder, TfidfLSA
from .transformer import BertPooledEmbedder, SetFitEmbedder, StaticEmbedder
from .word2vec import (
    Doc2VecTransformer,
    FastTextKeyedVectors,
    FastTextTransformer,
    Word2VecTransformer,
)

__all__ = [
    "BertPooledEmbedder",
    "DaskCorpus",
    "Doc2VecTransformer",
    "FastTextKeyedVectors",
    "FastTextTransformer",
    "GloVeTransformer",
    "LineCorpus",
    "PPMIEmbedder",
    "SetFitEmbedder",
    "StaticEmbedder",
    "TfidfLSA",
    "Word2VecTransformer",
]

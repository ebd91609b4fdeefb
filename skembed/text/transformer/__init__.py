"""Transformer-model embedders and their models' plumbing.

- :class:`BertPooledEmbedder` (``_bert``): pooled hidden states of a Hugging Face encoder;
- :class:`SetFitEmbedder` (``_setfit``): the encoder fine-tuned contrastively on label pairs;
- :class:`StaticEmbedder` (``_static``, with ``_static_distil`` and ``_static_supervised``):
  a transformer distilled into static token vectors;
- the shared plumbing: ``_loading`` (resolving and loading encoders, offline first),
  ``_encoder`` (batching, truncation, pooling, pickling), ``_export``/``_runner``/``_calibration``
  (ONNX Runtime / OpenVINO backends and int8), ``_cache`` (the document-embedding cache),
  ``_weights`` (models as plain data for pickles and skops files), ``_pairs`` (SetFit's pairs),
  ``_model2vec_io`` (model2vec's file format).
"""

from ._bert import BertPooledEmbedder
from ._setfit import SetFitEmbedder
from ._static import StaticEmbedder

__all__ = ["BertPooledEmbedder", "SetFitEmbedder", "StaticEmbedder"]

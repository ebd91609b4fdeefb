"""Tabular preprocessing wrappers over scikit-learn's encoders and scalers.

They delegate all computation to scikit-learn (``OneHotEncoder``,
``OrdinalEncoder``, ``StandardScaler``/``MinMaxScaler``/``RobustScaler``) and
are the building blocks of the ``preprocessor="auto"`` of the tabular
embedders.
"""

from ._encoders import LabelEmbedder, OneHotEmbedder
from ._scaler import ScalerEmbedder

__all__ = ["LabelEmbedder", "OneHotEmbedder", "ScalerEmbedder"]

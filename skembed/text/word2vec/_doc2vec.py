"""Doc2VecTransformer: paragraph vectors (PV-DBOW / PV-DM) with deterministic inference.

The estimator is built on the word2vec family's base
(:class:`~skembed.text.word2vec._family.Word2VecFamilyMixin`, shared with
Word2Vec and FastText: parameter rules, vocabulary, weight initialisation,
output layers, the engine and the epoch loop of
:mod:`skembed.text.word2vec._training`) and changes three steps: the input
matrix holds the document rows after the word rows, the numba engine is
:class:`skembed.text.word2vec._training.Doc2VecEngine`, and the trainer hands it the
row of each chunk's documents. The compiled kernels are in
:mod:`skembed.kernels.doc2vec` and reuse the word2vec kernel's output layer.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...exceptions import diverged
from ...keyedvectors import KeyedVectors
from ...utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, limit_threads, resolve_compute
from ...utils._schema import Array, Ids, Number, Vectors, check_ids
from ...utils._seeding import seed_from_random_state
from ...utils._state import restore_on_failure
from .._analyzer import DEFAULT_TOKEN_PATTERN, encode, iter_tokens
from .._base import TEXT_PARAMETER_CONSTRAINTS, TextEmbedderMixin
from ._engines import KERNEL_LOCK, DbowEngine
from ._family import FAMILY_PARAMETER_CONSTRAINTS, Word2VecFamilyMixin
from ._training import MAX_WINDOW, Doc2VecEngine, effective_window, train
from ._training import SYNC_TOKENS as WORD_SYNC_TOKENS  # the shortest phase of PV-DM

#: the most passes inference may make over a document (``infer_epochs``, else ``epochs``)
MAX_INFER_EPOCHS = 10_000

__all__ = ["Doc2VecTransformer"]

#: tokens per thread and phase of the deterministic parallel scheme (``KernelConfig.sync_tokens``).
#: Longer than Word2Vec's: a phase ends at a barrier (BBC News, 2 threads, load 12: 8,192 tokens
#: ran at 0.16M words/s, 65,536 at 0.39M), and the shared output layer's staler deltas cost
#: nothing measurable in accuracy (docs/doc2vec.md).
SYNC_TOKENS = 65_536
#: phases per part and epoch at least, where word vectors train (PV-DM, ``dbow_words=1``): with
#: an epoch in one phase, the merge moved the word vectors by the other part's whole epoch away
#: from those each document vector was fitted to, and inferred vectors of training documents
#: ranked below others (docs/doc2vec.md); BBC News has more than 4 phases of 65,536 tokens.
MIN_WORD_PHASES = 4


class Doc2VecTransformer(
    Word2VecFamilyMixin,
    TextEmbedderMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Paragraph vectors (Doc2Vec): a learned vector per document, inferred for new ones.

    Learns a vector for every training document jointly with a word2vec-style
    output layer (Le & Mikolov 2014), either by PV-DBOW (``dm=0``: the
    document vector alone predicts each of its words) or by PV-DM (``dm=1``:
    the mean of the document vector and the context word vectors predicts the
    centre word). ``transform`` *infers* a vector for each document by
    training only that document's vector against the frozen model, so it
    embeds documents never seen in ``fit`` the same way as training ones.
    Parameter names follow gensim's ``Doc2Vec``; gensim's default architecture
    is PV-DM (``dm=1``), skembed's is PV-DBOW (``dm=0``), the faster one and
    the stronger on document classification (Lau & Baldwin 2016).

    Inference is deterministic: a document's randomness (initial vector,
    subsampling, windows, negatives) is seeded from ``random_state`` and a
    hash of its word ids, so the same document gets the same vector in any
    batch, order, thread count or process (gensim's ``infer_vector`` gives a
    different vector on each call).

    Parameters
    ----------
    vector_size : int, default=100
        Dimension of the document (and word) vectors.
    dm : {0, 1}, default=0
        0: PV-DBOW; 1: PV-DM (mean of the context word vectors and the
        document vector, gensim's ``dm_mean=1``). gensim's default is 1.
    dbow_words : {0, 1}, default=0
        PV-DBOW only: also train word vectors by skip-gram, interleaved with
        the document examples (slower by about ``window`` times; often better
        document vectors on small corpora).
    window : int, default=5
        Maximum distance between the centre word and a context word (PV-DM,
        and the skip-gram of ``dbow_words=1``); the effective window of each
        centre is drawn uniformly in ``1..window``. At most ``2**31 - 1``; a
        window longer than the longest document is clipped to it (``window_``).
    min_count : int, default=5
        Ignore words with a lower corpus count.
    max_vocab_size : int or None, default=None
        Keep only the most frequent words (after ``min_count``).
    hs : {0, 1}, default=0
        1 for hierarchical softmax over a Huffman tree.
    negative : int, default=5
        Negative samples per positive example (0 disables negative sampling;
        then ``hs`` must be 1).
    shared_negatives : bool, default=True
        Pure PV-DBOW (``dm=0``, ``dbow_words=0``) with negative sampling and
        ``hs=0``: the document vector predicts 4 consecutive words of its
        document (``DBOW_BATCH``) against one draw of ``negative`` noise words,
        all scored from the same parameters (a noise word's gradient counts once
        for each word of the batch it differs from; Ji et al. 2016's shared
        negatives, as Word2Vec's ``shared_negatives``). Measured on BBC News
        (2 threads, 10 epochs, load 0.7-1.1): 6.4M against 3.6M words/s
        (gensim 2.4M), 5-fold accuracy 0.966 against 0.961 (gensim 0.960);
        a batch of 8 ran at 9.8M words/s with 0.961, of 2 at 4.2M with 0.962.
        On 4,000 tweets (20 epochs) 0.619 against 0.614. ``False`` gives
        gensim's per-word draws; other modes ignore it.
    ns_exponent : float, default=0.75
        Noise distribution ``P(w) ∝ count(w) ** ns_exponent``.
    sample : float, default=1e-3
        Subsampling threshold of frequent words (word2vec.c's formula); 0
        disables subsampling.
    alpha : float, default=0.025
        Initial learning rate of training (gensim's default).
    min_alpha : float, default=1e-4
        Final learning rate of training and of inference (at most ``alpha``
        and ``infer_alpha``); training decays linearly over all tokens.
    epochs : int, default=10
        Passes over the corpus (gensim's Doc2Vec default).
    infer_epochs : int or None, default=None
        Passes over each document in ``transform``; ``None``: ``epochs``
        (gensim's ``infer_vector`` default). Both are at most 10,000 here:
        inference runs at every ``transform``, so a stored value cannot stall it.
    infer_alpha : float or None, default=None
        Learning rate of the first inference pass, decayed linearly per pass
        to ``min_alpha``; ``None``: ``alpha``.
    lowercase : bool, default=True
        Lowercase ``str`` documents before tokenizing.
    token_pattern : str, default=``r"(?u)\\b\\w\\w+\\b"``
        Regular expression of a token (scikit-learn's: words of two or more characters).
    tokenizer : callable or None, default=None
        Tokenization of ``str`` documents (scikit-learn's analyzer); lists of
        tokens are taken as pre-tokenized.
    handle_missing : {"error", "empty"}, default="error"
        What a missing document (``None`` or NaN) becomes, in ``fit`` and in
        ``transform``: ``"error"`` raises a ``ValueError`` naming the row;
        ``"empty"`` takes it as an empty document, which gives no training
        example and is embedded as ``handle_unknown`` says.
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output of ``transform`` for documents without any known word.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial vectors, windows, negatives and subsampling of
        ``fit``, and (through ``infer_seed_``) of inference.
    n_jobs : int or None, default=None
        Threads (``None``: ``OMP_NUM_THREADS`` or all cores). ``fit`` trains
        ``n_parts`` parts on them and is bit-reproducible for a given
        ``random_state`` and ``n_parts``, whatever ``n_jobs``; ``transform``
        does not depend on ``n_jobs`` either.
    n_parts : int, default=2
        Parts of each chunk trained in parallel and merged in a fixed order,
        1 to 16 (above 2 with shorter phases: more parts that add their
        updates at each merge diverge); the
        vectors depend on it, not on ``n_jobs``: ``n_jobs`` above ``n_parts``
        leaves threads idle, below it a thread trains several parts in turn
        (see :class:`~skembed.text.word2vec._word2vec.Word2VecTransformer` and
        ``docs/word2vec.md``).
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where ``fit`` trains. ``transform`` (inference) runs the numba
        kernel on the CPU whatever the device: it trains one small vector per
        document, which a GPU would not speed up.
    engine : {"auto", "numba", "torch-batched"}, default="auto"
        What trains. ``"numba"``: the compiled multi-threaded CPU kernel
        (requires ``device="cpu"``), every architecture; ``"torch-batched"``:
        pure PV-DBOW with negative sampling (``dm=0``, ``dbow_words=0``,
        ``hs=0``) in batches of tokens on any torch device, the CPU included
        (:func:`skembed.nn.dbow.train_dbow_chunk`); ``"auto"``: numba on the
        CPU, ``"torch-batched"`` on any other device.
    batch_size : int or None, default=None
        Tokens per step of ``engine="torch-batched"`` (ignored by numba);
        ``None``: :func:`skembed.nn.sgns.default_batch_words` of the corpus
        (2,048 to 32,768, about 256 steps per epoch). Each step applies the
        summed, bounded updates of its tokens read from the same parameters.
    callbacks : list of callable or Callback, or None, default=None
        Each is called as ``callback(estimator, record)`` after every epoch
        (:mod:`skembed.callbacks`; ``dv_``, ``wv_`` and ``history_`` are then
        up to date); training stops after the epoch if one returns ``True``.
    verbose : int, default=0
        0: silent; 1: a progress bar over the chunks of each epoch; 2: also a
        line per epoch.
    dtype : numpy dtype, default=numpy.float32
        Output dtype of ``transform``.

    Attributes
    ----------
    window_ : int
        The window trained with: ``window`` clipped to the longest training
        document (split every 10,000 tokens); a larger window would reach no
        further, and clipping bounds the memory whatever ``window`` is.
    dv_ : KeyedVectors
        Trained document vectors, float32 of shape (n_rows, vector_size):
        one row per training document with keys ``0 .. n_documents - 1``, or
        one row per distinct tag (first-seen order) when ``fit`` got ``tags``.
    wv_ : KeyedVectors or None
        Word vectors with counts, trained when ``dm=1`` or ``dbow_words=1``;
        ``None`` for pure PV-DBOW (its word vectors are never trained).
    vocabulary_ : dict of str to int
        Word -> row of ``syn1neg_``/``word_counts_``.
    word_counts_ : numpy.ndarray of shape (n_words,), int64
        Training-corpus count of each vocabulary word.
    syn1neg_ : numpy.ndarray of shape (n_words, vector_size), float32, or None
        Output vectors of negative sampling (``None`` if ``negative=0``).
    syn1_ : numpy.ndarray of shape (n_words - 1, vector_size), float32, or None
        Inner-node vectors of hierarchical softmax (``None`` if ``hs=0``).
    oov_rate_ : float
        Fraction of the training corpus's tokens outside the vocabulary
        (dropped by ``min_count``/``max_vocab_size``); :meth:`oov_rate`
        computes it for any documents.
    infer_seed_ : int
        Seed of inference, drawn from ``random_state`` in ``fit``.
    history_ : list of dict
        One record per epoch (:func:`skembed.callbacks.make_record`):
        ``epoch``, ``loss`` (mean ``-log sigmoid`` loss per example),
        ``seconds``, ``learning_rate``, ``words`` (raw tokens) and
        ``words_per_second``.
    n_words_trained_ : int
        Raw corpus tokens times epochs run (gensim's convention for words/s).
    train_time_ : float
        Seconds spent in the training loop (encoding excluded).
    words_per_second_ : float
        ``n_words_trained_ / train_time_``.
    device_ : str
        The device ``fit`` trained on.
    engine_ : str
        The engine that trained: ``"numba"`` or ``"torch-batched"``.

    Raises
    ------
    ValueError
        In ``fit``, before any training: ``min_alpha`` above ``alpha`` or
        ``infer_alpha``; ``negative=0`` with ``hs=0``; ``tags`` of the wrong
        length; empty corpus or empty vocabulary after ``min_count``;
        ``engine="torch-batched"`` (or a non-CPU device) with ``dm=1``,
        ``dbow_words=1`` or ``hs=1``; ``engine="numba"`` with a non-CPU device;
        an unavailable device.
    skembed.exceptions.TrainingDivergedError
        A non-finite loss in ``fit`` (lower ``alpha``) or in ``transform``
        (lower ``infer_alpha``). A ``ValueError``.
    TypeError
        If ``X`` is a single string or a one-shot generator.

    See Also
    --------
    skembed.text.Word2VecTransformer : word vectors pooled per document.

    Notes
    -----
    PV-DBOW maximises, for each document ``d`` and each of its kept words
    ``w`` with ``k`` noise words ``n_i``, ``log σ(u_w · D_d) + Σ_i log σ(-u_{n_i}
    · D_d)``; PV-DM replaces ``D_d`` by the mean of ``D_d`` and the input
    vectors of ``w``'s context words. Inference maximises the same objective
    over a new ``D_d`` alone, for ``infer_epochs`` passes.

    ``fit_transform(X)`` returns the *inferred* vectors of the training
    documents, so that it equals ``fit(X).transform(X)`` (scikit-learn's
    rule); the vectors learned during training are in ``dv_``.

    Multi-threaded training is deterministic, with Word2Vec's scheme: each
    thread trains its slice of the corpus on private copies of the rows it
    touches for a phase of 65,536 tokens (PV-DM and ``dbow_words=1``: at least 4
    phases per epoch, down to 8,192 tokens), then the changes are added to the
    shared rows in thread order (see :mod:`skembed.kernels.word2vec`). Documents longer
    than 10,000 tokens are split into pieces that share the document vector.

    A ``fit`` that fails (an exception in training, a raising callback,
    ``KeyboardInterrupt``) leaves the estimator as it was before that ``fit``.

    References
    ----------
    Le & Mikolov (2014), "Distributed Representations of Sentences and
    Documents", ICML.
    Lau & Baldwin (2016), "An Empirical Evaluation of doc2vec with Practical
    Insights into Document Embedding Generation", RepL4NLP.
    Mikolov, Sutskever, Chen, Corrado & Dean (2013), "Distributed
    Representations of Words and Phrases and their Compositionality", NIPS.

    Examples
    --------
    >>> from skembed.text.word2vec._doc2vec import Doc2VecTransformer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> d2v = Doc2VecTransformer(vector_size=8, min_count=1, epochs=5, random_state=0)
    >>> X = d2v.fit_transform(docs)
    >>> X.shape, d2v.dv_.vectors.shape
    ((40, 8), (40, 8))
    >>> bool((d2v.transform(docs[:2]) == X[:2]).all())
    True
    """

    _parameter_constraints: dict = {
        **TEXT_PARAMETER_CONSTRAINTS,
        **FAMILY_PARAMETER_CONSTRAINTS,
        **COMPUTE_PARAMETER_CONSTRAINTS,
        "engine": [StrOptions({"auto", "numba", "torch-batched"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "dm": [Interval(Integral, 0, 1, closed="both")],
        "dbow_words": [Interval(Integral, 0, 1, closed="both")],
        "shared_negatives": ["boolean"],
        # inference runs at every transform: its passes are bounded (a file cannot hang it)
        "infer_epochs": [Interval(Integral, 1, MAX_INFER_EPOCHS, closed="both"), None],
        "infer_alpha": [Interval(Real, 0, None, closed="neither"), None],
    }
    _decaying_rates = ("alpha", "infer_alpha")
    #: fitted state checked on load (utils._schema): the kernels index every table by word id
    _state_schema = {
        "vocabulary_": Ids("V"),
        "word_counts_": Array("iu", ("V",), low=0),
        "dv_": Vectors(None, "D"),
        "wv_": Vectors("V", "D", only_when=("dm", "dbow_words")),
        "window_": Number(low=1, below=MAX_WINDOW + 1),
        "infer_seed_": Number(low=0),
        "_n_features_out": Number(size="D"),
    }
    _numba_engine = Doc2VecEngine
    _batched_engine = DbowEngine

    def __init__(
        self,
        vector_size=100,
        *,
        dm=0,
        dbow_words=0,
        window=5,
        min_count=5,
        max_vocab_size=None,
        hs=0,
        negative=5,
        shared_negatives=True,
        ns_exponent=0.75,
        sample=1e-3,
        alpha=0.025,
        min_alpha=1e-4,
        epochs=10,
        infer_epochs=None,
        infer_alpha=None,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        handle_missing="error",
        handle_unknown="zeros",
        random_state=None,
        n_jobs=None,
        n_parts=2,
        device="cpu",
        engine="auto",
        batch_size=None,
        callbacks=None,
        verbose=0,
        dtype=np.float32,
    ):
        self.vector_size = vector_size
        self.dm = dm
        self.dbow_words = dbow_words
        self.window = window
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.hs = hs
        self.negative = negative
        self.shared_negatives = shared_negatives
        self.ns_exponent = ns_exponent
        self.sample = sample
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.epochs = epochs
        self.infer_epochs = infer_epochs
        self.infer_alpha = infer_alpha
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.n_parts = n_parts
        self.device = device
        self.engine = engine
        self.batch_size = batch_size
        self.callbacks = callbacks
        self.verbose = verbose
        self.dtype = dtype

    # ------------------------------------------------------- what Doc2Vec changes in the family
    def _engine_options(self):
        """The architecture of :class:`~skembed.text.word2vec._training.Doc2VecEngine` (``dm``, ``dbow_words``)."""
        return {"dm": self.dm, "dbow_words": self.dbow_words}

    def _check_params(self):
        """The family's checks, then the device and engine (before the corpus is read)."""
        super()._check_params()
        self.device_, self.engine_, _ = resolve_compute(
            self, cpu_engine="numba", torch_engines=("torch-batched",)
        )
        if self.engine_ == "torch-batched" and (self.dm or self.dbow_words or self.hs):
            raise ValueError(
                f"engine='torch-batched' (device={self.device!r}) trains pure PV-DBOW with "
                f"negative sampling, but dm={self.dm}, dbow_words={self.dbow_words}, "
                f"hs={self.hs}; set dm=0, dbow_words=0, hs=0, or train on the CPU "
                "(device='cpu', engine='numba'), which runs every architecture."
            )

    def _trains_words(self):
        return bool(self.dm or self.dbow_words)

    def _tag_rows(self, tags, n_documents):
        """``(keys, doc_rows)``: the ``dv_`` keys and the row of each document."""
        if tags is None:
            return list(range(n_documents)), np.arange(n_documents, dtype=np.int64)
        if len(tags) != n_documents:
            raise ValueError(
                f"tags has {len(tags)} entries but X has {n_documents} documents; give one "
                "tag per document (documents sharing a tag share a vector)."
            )
        index = {}
        rows = np.fromiter((index.setdefault(t, len(index)) for t in tags), np.int64, len(tags))
        return list(index), rows

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, tags=None):
        """Learn document vectors (and the model that infers them) from ``X``.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Raw documents (tokenized by the analyzer) or pre-tokenized ones; a
            re-iterable corpus (e.g. :class:`~skembed.text.LineCorpus`) is
            encoded once and kept in a temporary file.
        y : None
            Ignored.
        tags : sequence of hashable of length n_documents or None, default=None
            Key of each document's vector in ``dv_`` (``None``: its row
            position). Documents with the same tag share one vector.

        Returns
        -------
        self : Doc2VecTransformer
            The fitted estimator.

        Raises
        ------
        ValueError
            Bad parameters or ``tags``, an empty corpus or vocabulary (checked
            before training); :class:`~skembed.exceptions.TrainingDivergedError`
            if the loss stops being finite.
        """
        self._check_params()
        documents = self._check_documents(X, allow_iterable=True)
        if tags is not None and hasattr(documents, "__len__"):
            self._tag_rows(tags, len(documents))
        with restore_on_failure(self):
            self._fit(documents, tags)
        return self

    def _fit(self, documents, tags):
        seed = seed_from_random_state(self.random_state)
        rng = np.random.default_rng(seed)
        corpus = self._encode(documents, self._analyzer())
        try:
            keys, doc_rows = self._tag_rows(tags, corpus.n_documents)
            index_to_key, counts, remap = self._vocabulary(corpus)
            n_words = len(index_to_key)
            # word rows, then document rows: one input matrix (see kernels/doc2vec.py)
            syn0 = self._init_input_matrix(n_words + len(keys), rng)
            self.window_ = effective_window(self.window, corpus.max_length)
            self.vocabulary_ = {w: i for i, w in enumerate(index_to_key)}
            self.word_counts_ = counts
            n_raw = int(corpus.counts.sum())
            self.oov_rate_ = float(1.0 - int(counts.sum()) / n_raw) if n_raw else 0.0
            self.infer_seed_ = int(rng.integers(0, 2**63 - 1))

            def publish(syn0, syn1neg, syn1):
                self._set_weights(syn0.copy(), syn1neg.copy(), syn1.copy(), keys)

            trained = train(
                self,
                corpus,
                remap,
                counts,
                (syn0, *self._output_layers(n_words)),
                self._config(counts),
                seed=seed,
                history=[],
                publish=publish,
                doc_rows=doc_rows + n_words,
            )
        finally:
            corpus.close()
        self._set_weights(trained.syn0, trained.syn1neg, trained.syn1, keys)

    def _config(self, counts):
        return self._kernel_config(
            counts,
            self.window_,
            sg=True,
            shared_negatives=self.shared_negatives,
            sync_tokens=self._phase_tokens(counts),
        )

    def _phase_tokens(self, counts):
        """Tokens per part and phase: :data:`SYNC_TOKENS`, shorter (down to Word2Vec's) where
        word vectors train and an epoch is shorter than :data:`MIN_WORD_PHASES` phases."""
        if not self._trains_words():
            return SYNC_TOKENS
        per_phase = int(counts.sum()) // (self.n_parts * MIN_WORD_PHASES)
        return min(SYNC_TOKENS, max(WORD_SYNC_TOKENS, per_phase))

    def _set_weights(self, syn0, syn1neg, syn1, keys):
        index_to_key = list(self.vocabulary_)
        n_words = len(index_to_key)
        self.dv_ = KeyedVectors(syn0[n_words:], keys)
        self.wv_ = (
            KeyedVectors(syn0[:n_words], index_to_key, counts=self.word_counts_)
            if self._trains_words()
            else None
        )
        self.syn1neg_ = syn1neg if self.negative > 0 else None
        self.syn1_ = syn1 if self.hs else None
        self._n_features_out = self.vector_size

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """Infer a vector for each document against the frozen model.

        Only the document's vector is trained (``infer_epochs`` passes,
        learning rate from ``infer_alpha`` to ``min_alpha``); the word
        vectors and output layers are not changed. The result of a document
        depends only on the fitted model and its words.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size), ``dtype``
            ``dtype`` (float32 by default). Documents without any known word
            get zeros, NaN or an error per ``handle_unknown``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            If ``handle_unknown="error"`` and a document has no known word.
        skembed.exceptions.TrainingDivergedError
            If inference meets a non-finite value (lower ``infer_alpha``).
        """
        from ...kernels.doc2vec import Inference, infer_documents
        from ...kernels.sampling import keep_probabilities
        from ...kernels.scheduler import Weights

        check_is_fitted(self, "dv_")
        documents = self._check_documents(X, allow_iterable=True)
        ids, offsets, _ = encode(iter_tokens(documents, self._analyzer()), self.vocabulary_)
        check_ids(ids, len(self.word_counts_), "Doc2VecTransformer", "vocabulary_")
        empty_model = np.zeros((0, self.vector_size), np.float32)
        syn0 = self.wv_.vectors if self.wv_ is not None else empty_model
        alpha = self.alpha if self.infer_alpha is None else self.infer_alpha
        with limit_threads(self.n_jobs, modules=("numba",)) as n_threads, KERNEL_LOCK:
            out, bad = infer_documents(
                Weights(
                    syn0,
                    self.syn1neg_ if self.syn1neg_ is not None else empty_model,
                    self.syn1_ if self.syn1_ is not None else empty_model,
                ),
                ids,
                offsets,
                self._config(self.word_counts_),
                Inference(
                    keep_probabilities(self.word_counts_, self.sample),
                    bool(self.dm),
                    int(self.infer_epochs or self.epochs),
                    float(alpha),
                    float(self.min_alpha),
                    self.infer_seed_,
                ),
                n_threads,
            )
        if bad.any():
            raise diverged(self, epoch=0, loss=float("nan"), parameter="infer_alpha", value=alpha)
        out = self._apply_handle_unknown(out, np.diff(offsets) == 0)
        return out.astype(self.dtype, copy=False)

    def fit_transform(self, X, y=None, tags=None):
        """Fit on ``X``, then infer the vectors of ``X`` (equal to ``fit(X).transform(X)``).

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents: strings (tokenized by the analyzer) or lists of tokens.
        y : None
            Ignored.
        tags : sequence of hashable or None, default=None
            See :meth:`fit`.

        Returns
        -------
        X_new : numpy.ndarray of shape (n_documents, vector_size)
            The inferred vectors; the trained ones are in ``dv_``.
        """
        return self.fit(X, y, tags=tags).transform(X)

"""Word2VecTransformer: skip-gram / CBOW word vectors trained on the user's corpus.

The estimator is built on the word2vec family's base
(:class:`~skembed.text.word2vec._family.Word2VecFamilyMixin`, shared with
Doc2Vec: parameter rules, vocabulary, weights) and its trainer
(:func:`skembed.text.word2vec._training.train`: engine, epoch loop), and adds
what word vectors pooled per document need: ``warm_start``, the torch
engines, ``wv_`` and pooling (:class:`~skembed.text._base.BaseWordEmbedder`).
:class:`FastTextTransformer <skembed.text.word2vec._fasttext.FastTextTransformer>`
extends it and overrides only what subwords change (the input rows of a word,
how the ``KeyedVectors`` are built, out-of-vocabulary vectors in
``transform``).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ...keyedvectors import KeyedVectors
from ...utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, resolve_compute
from ...utils._seeding import seed_from_random_state
from ...utils._state import restore_on_failure
from .._analyzer import DEFAULT_TOKEN_PATTERN
from .._base import BaseWordEmbedder, LearnedWords
from ._family import FAMILY_PARAMETER_CONSTRAINTS, Word2VecFamilyMixin
from ._training import SYNC_TOKENS, effective_window, train

__all__ = ["Word2VecTransformer"]


class Word2VecTransformer(Word2VecFamilyMixin, BaseWordEmbedder):
    """Word2vec word vectors (skip-gram or CBOW) trained on the corpus, pooled per document.

    Trains word vectors with the word2vec algorithms of Mikolov et al. (2013)
    -- skip-gram or CBOW, negative sampling and/or hierarchical softmax,
    frequent-word subsampling, dynamic window, linearly decaying learning
    rate -- and exposes them as ``wv_``; ``transform`` pools the vectors of
    each document's words (``pooling``). Parameter names follow gensim's
    ``Word2Vec``; the default architecture differs (``sg=1``, skip-gram,
    where gensim's default is CBOW).

    On ``device="cpu"`` training runs in a compiled multi-threaded numba
    kernel; on a torch device (or with ``engine="torch"`` or
    ``"torch-batched"``) in torch code (``engine`` names the engine).

    Parameters
    ----------
    vector_size : int, default=100
        Dimension of the word (and document) vectors.
    window : int, default=5
        Maximum distance between the centre word and a context word; the
        effective window of each centre is drawn uniformly in ``1..window``.
        At most ``2**31 - 1``; a window longer than the longest document
        (split every 10,000 tokens) is clipped to it before training, so
        memory stays bounded and ``window=10**9`` trains as that length.
    min_count : int, default=5
        Ignore words with a lower corpus count.
    max_vocab_size : int or None, default=None
        Keep only the most frequent words (after ``min_count``).
    sg : {0, 1}, default=1
        1 for skip-gram, 0 for CBOW (mean of the context vectors). gensim's
        default is 0 (CBOW).
    hs : {0, 1}, default=0
        1 for hierarchical softmax over a Huffman tree.
    negative : int, default=5
        Negative samples per positive example (0 disables negative sampling;
        then ``hs`` must be 1).
    shared_negatives : bool, default=True
        Negative sampling without hierarchical softmax (``hs=0``), numba
        engine: share one draw of negatives among several examples, scored
        from the same parameters before any row is updated (Ji et al. 2016).
        Skip-gram (``sg=1``) draws them once per centre word for all its
        context words, so each output row is read once per window instead of
        once per pair (measured 1.5x the words/s of per-pair negatives on BBC
        News, same loss and WordSim-353). CBOW (``sg=0``) draws them once per
        2 consecutive centre words (``CBOW_BATCH``; each keeps its own window
        and learning rate; measured 1.20x the words/s on BBC News, and on the
        11.4M-token debdocs corpus WordSim-353, SimLex-999 and analogy within
        0.01 of gensim's; a batch of 4 was faster but lost 0.027 analogy
        accuracy, see ``docs/benchmarks/word2vec.md``). ``False`` gives word2vec.c's
        per-example negatives and updates.
    ns_exponent : float, default=0.75
        Noise distribution ``P(w) ∝ count(w) ** ns_exponent``.
    sample : float, default=1e-3
        Subsampling threshold: a word of frequency ``f`` is kept with
        probability ``min(1, (sqrt(f / sample) + 1) * sample / f)`` (word2vec.c);
        0 disables subsampling.
    alpha : float, default=0.025
        Initial learning rate (gensim's default; use 0.05 for CBOW, as word2vec.c).
    min_alpha : float, default=1e-4
        Final learning rate (at most ``alpha``); the rate decays linearly over
        all epochs.
    epochs : int, default=5
        Passes over the corpus.
    pooling : {"mean", "sum", "max", "tfidf", "sif"}, default="mean"
        Word vectors → document vector (see :func:`skembed.text._pooling.pool`).
    sif_coefficient : float, default=1e-3
        The ``a`` of SIF weights ``a / (a + p(w))``.
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
        Output for documents without any known word.
    random_state : int, RandomState instance or None, default=None
        Seeds the vector initialisation, the window sizes, the negatives and
        the subsampling.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where training runs.
    engine : {"auto", "numba", "torch", "torch-batched"}, default="auto"
        What trains (:mod:`skembed.text.word2vec._engines`). ``"numba"``: the compiled
        multi-threaded CPU kernel (requires ``device="cpu"``); ``"torch"``: the
        exact per-pair torch engine, every output layer; ``"torch-batched"``:
        the batched shared-negatives trainer of :mod:`skembed.nn.sgns`
        (negative sampling only, ``hs=0``; the GPU trainer). Both torch engines
        run on any device, the CPU included. ``"auto"``: numba on the CPU; on
        any other device ``"torch-batched"``, or ``"torch"`` with ``hs=1``.
    n_jobs : int or None, default=None
        Training threads (``None``: ``OMP_NUM_THREADS`` or all cores). The
        deterministic default trains ``n_parts`` parts on them, so at most
        ``n_parts`` threads work and the vectors do not depend on ``n_jobs``;
        ``lock_free=True`` uses them all.
    n_parts : int, default=2
        Deterministic training (numba engine, ``lock_free=False``) splits
        each corpus chunk into ``n_parts`` parts, trained in parallel and
        merged in a fixed order at fixed points (1 to 16; above 2 the phases
        between merges shorten, as more parts that add their updates
        diverge; up to 16 threads then work, at a cost: BBC News, 2 threads,
        16 parts train at 0.5-0.8x the words/s of 2 for Word2Vec, 0.45x
        for FastText; ``benchmarks/bench_partition.py``). The vectors
        depend on the data, ``random_state`` and
        ``n_parts``, not on ``n_jobs`` (any thread count gives bit-identical
        vectors; tested with 1 to 5), so a grid search on a laptop reproduces
        on a server and a CV worker with one thread gives the vectors of a
        two-thread run. The threads execute the parts: ``n_jobs`` above
        ``n_parts`` leaves threads idle (the fit says so: a line at
        ``verbose >= 1``, else an INFO log record; on the 16 cores of a Xeon,
        BBC News x4, skip-gram trained at 0.76M words/s with 2 parts and
        1.7-2.4M with ``n_parts=16``, faster than 2 parts from 4 threads on
        and than gensim's 16 workers, 1.6M; ``docs/benchmarks/word2vec.md``), below it a thread trains several
        parts in turn, which costs speed (one thread, BBC News, 2-core AMD
        EPYC, quiet, two runs: ``n_parts=2`` trains CBOW at 0.71-0.77x and
        skip-gram at 0.84-0.87x the words/s of ``n_parts=1``, plain sequential SGD with
        other vectors; ``benchmarks/bench_partition.py``). Ignored by
        ``lock_free=True`` (one slice per thread) and the torch engines. See
        ``docs/benchmarks/word2vec.md``.
    lock_free : bool, default=False
        With the numba engine and ``n_jobs > 1``: ``False`` (default) trains
        deterministically -- the same ``random_state`` and ``n_parts`` give
        bit-identical vectors, whatever ``n_jobs`` -- with parts that merge
        their updates in a fixed order every 8,192 centre words; ``True`` uses lock-free
        (Hogwild) threads as word2vec.c and gensim do, whose vectors vary
        slightly from run to run. Lock-free is faster on 2 threads (about
        1.3-2x the deterministic words/s: every phase waits for the slower
        thread, and each thread copies the rows it touches) with the same
        WordSim-353 and SimLex-999 within run-to-run noise; the measurements
        are in ``docs/benchmarks/word2vec.md``.
    batch_size : int or None, default=None
        Examples per step of the torch engines; ignored by the numba engine.
        ``engine_="torch-batched"`` (measured 13.4M words/s skip-gram and
        20.6M CBOW through the estimator on one H200, ``docs/benchmarks/gpu.md``): an
        example is a centre word, and ``None`` grows the batch with the
        corpus (:func:`skembed.nn.sgns.default_batch_words`: the largest power
        of two from 2,048 up to 32,768 for skip-gram or 65,536 for CBOW that
        leaves an epoch 256 steps). A batch's windows read the same
        parameters; frequent rows' summed updates are bounded (the update cap
        and, for skip-gram, the curvature bound of :mod:`skembed.nn.sgns`),
        and a fit that still diverges raises ``TrainingDivergedError`` naming
        ``batch_size``. ``engine_="torch"``, the exact per-pair
        engine whose small steps follow the numba kernel: an example is a
        (word, context) pair, ``None`` means 4,096 (CBOW: 512 windows).
    callbacks : list of callable or Callback, or None, default=None
        Each is called as ``callback(estimator, record)`` after every epoch
        (:mod:`skembed.callbacks`; ``wv_`` and ``history_`` are then up to
        date); training stops after the epoch if one returns ``True``.
    warm_start : bool, default=False
        If fitted already, continue training the existing vectors (and the
        output layers ``syn1neg_``/``syn1_``) on the new data with the
        existing vocabulary: words not in ``vocabulary_`` are ignored, the
        learning rate restarts at ``alpha`` and ``history_`` continues.
    verbose : int, default=0
        0: silent; 1: a progress bar over the epochs (with the loss); 2: also
        a line per epoch.
    dtype : numpy dtype, default=numpy.float32
        Output dtype of ``transform``.

    Attributes
    ----------
    wv_ : KeyedVectors
        Word vectors, shape (n_words, vector_size), float32, with counts.
    vocabulary_ : dict of str to int
    syn1neg_ : numpy.ndarray of shape (n_words, vector_size), float32, or None
        Output vectors of negative sampling (``None`` if ``negative=0``), kept
        for ``warm_start``.
    syn1_ : numpy.ndarray of shape (n_words - 1, vector_size), float32, or None
        Inner-node vectors of hierarchical softmax (``None`` if ``hs=0``).
    history_ : list of dict
        One record per epoch (:func:`skembed.callbacks.make_record`):
        ``epoch`` (1-based, continuing across ``warm_start`` fits), ``loss``
        (mean training loss per example: ``-log sigmoid`` summed over the
        positive and negative/HS outputs of an example), ``seconds``,
        ``learning_rate`` (at the end of the epoch), ``words`` (raw tokens)
        and ``words_per_second``.
    loss_history_ : list of float
        Read-only view ``[r["loss"] for r in history_]`` (kept from earlier
        versions).
    n_words_trained_ : int
        Raw corpus tokens times epochs run in the last fit (gensim's
        convention for words/s).
    words_per_second_ : float
        ``n_words_trained_`` divided by the training time (encoding excluded).
    train_time_ : float
        Seconds spent in the training loop of the last fit.
    device_ : str
    engine_ : str
        The engine that trained: ``"numba"``, ``"torch"`` or ``"torch-batched"``.
    idf_, sif_component_ : numpy.ndarray or None
        Pooling statistics (``pooling="tfidf"``/``"sif"``).
    oov_rate_ : float
        Fraction of the training tokens outside the vocabulary (dropped by
        ``min_count``/``max_vocab_size``); :meth:`oov_rate` computes it for
        any documents.

    Raises
    ------
    ValueError
        In ``fit``, before any training: empty corpus or empty vocabulary
        after ``min_count`` (use a lower ``min_count``); ``negative=0`` with
        ``hs=0``; ``min_alpha > alpha``; ``engine="numba"`` with a non-CPU
        device.
    skembed.exceptions.TrainingDivergedError
        A non-finite loss (``alpha`` is too high: training stops instead of
        returning NaN vectors). A ``ValueError``.
    TypeError
        If ``X`` is a single string or a one-shot generator (training passes
        over the corpus once per epoch: use a list or
        :class:`~skembed.text.LineCorpus`).

    Notes
    -----
    Skip-gram with negative sampling maximises, for each (context ``c``,
    centre ``w``) pair in a window and ``k`` noise words ``n_i ~ P``,
    ``log σ(u_w · v_c) + Σ_i log σ(-u_{n_i} · v_c)`` by SGD, where ``v`` are
    the input vectors (``wv_``) and ``u`` the output vectors. CBOW replaces
    ``v_c`` by the mean of the window's input vectors.

    The corpus is read once and kept as int32 ids (4 bytes per token) in
    chunks of about one million tokens; a re-iterable corpus that is not a
    list (e.g. :class:`~skembed.text.LineCorpus`) is spilled to a temporary
    file, so memory stays at the vocabulary, the vectors and one chunk.
    Documents longer than 10,000 tokens are split (as gensim does).

    A ``fit`` that fails (an exception in training, a raising callback,
    ``KeyboardInterrupt``) leaves the estimator as it was before that
    ``fit``: unfitted, or with ``warm_start=True`` its previous state.

    Determinism: with an int ``random_state`` the numba engine is
    bit-reproducible for a given ``n_parts``, whatever ``n_jobs`` (unless
    ``lock_free=True``); the
    torch engine on CPU is reproducible for a fixed thread count.

    The first fit in a new environment compiles the numba kernel (about 10 s
    per variant: Word2Vec is one variant, FastText another); the compiled
    code is cached on disk, later processes load it in under 1 s.

    References
    ----------
    Mikolov, Chen, Corrado & Dean (2013), "Efficient Estimation of Word
    Representations in Vector Space", ICLR workshop.
    Mikolov, Sutskever, Chen, Corrado & Dean (2013), "Distributed
    Representations of Words and Phrases and their Compositionality", NIPS.
    Recht, Re, Wright & Niu (2011), "Hogwild!", NIPS.
    Ji, Shin, Sundaram, Das, Park, Dubey & Yang (2016), "Parallelizing
    Word2Vec in Shared and Distributed Memory", arXiv:1604.04661.

    Examples
    --------
    >>> from skembed.text.word2vec._word2vec import Word2VecTransformer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> w2v = Word2VecTransformer(vector_size=8, min_count=1, random_state=0, n_jobs=1)
    >>> w2v.fit_transform(docs).shape
    (40, 8)
    >>> [r["epoch"] for r in w2v.history_]
    [1, 2, 3, 4, 5]
    """

    _parameter_constraints: dict = {
        **BaseWordEmbedder._parameter_constraints,
        **COMPUTE_PARAMETER_CONSTRAINTS,
        **FAMILY_PARAMETER_CONSTRAINTS,
        "sg": [Interval(Integral, 0, 1, closed="both")],
        "shared_negatives": ["boolean"],
        "engine": [StrOptions({"auto", "numba", "torch", "torch-batched"})],
        "lock_free": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        vector_size=100,
        *,
        window=5,
        min_count=5,
        max_vocab_size=None,
        sg=1,
        hs=0,
        negative=5,
        shared_negatives=True,
        ns_exponent=0.75,
        sample=1e-3,
        alpha=0.025,
        min_alpha=1e-4,
        epochs=5,
        pooling="mean",
        sif_coefficient=1e-3,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        handle_missing="error",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        engine="auto",
        n_jobs=None,
        n_parts=2,
        lock_free=False,
        batch_size=None,
        callbacks=None,
        warm_start=False,
        verbose=0,
        dtype=np.float32,
    ):
        self.vector_size = vector_size
        self.window = window
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.sg = sg
        self.hs = hs
        self.negative = negative
        self.shared_negatives = shared_negatives
        self.ns_exponent = ns_exponent
        self.sample = sample
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.epochs = epochs
        self.pooling = pooling
        self.sif_coefficient = sif_coefficient
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.handle_missing = handle_missing
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.engine = engine
        self.n_jobs = n_jobs
        self.n_parts = n_parts
        self.lock_free = lock_free
        self.batch_size = batch_size
        self.callbacks = callbacks
        self.warm_start = warm_start
        self.verbose = verbose
        self.dtype = dtype

    @property
    def loss_history_(self):
        """Mean training loss of each epoch, ``[r["loss"] for r in history_]`` (read-only)."""
        return [r["loss"] for r in self.history_]

    # ------------------------------------------------------- what subwords override
    def _warm_input_matrix(self):
        """Input matrix of the fitted model (a copy: training must not touch ``wv_``)."""
        return self.wv_.vectors.copy()

    def _input_rows(self, index_to_key, warm):
        """CSR ``(indptr, indices)`` of each word's input rows; ``(None, None)``: row ``w``."""
        return None, None

    def _keyed_vectors(self, syn0, index_to_key, counts, warm):
        """The fitted ``wv_`` from the trained input matrix."""
        return KeyedVectors(syn0, index_to_key, counts=counts)

    # ------------------------------------------------------------------ fit
    def _warm(self):
        return bool(self.warm_start) and hasattr(self, "wv_")

    def _check_params(self):
        """Cross-parameter and engine checks, before the corpus is read."""
        super()._check_params()
        self.device_, self.engine_, _ = resolve_compute(
            self, cpu_engine="numba", torch_engines=("torch", "torch-batched")
        )
        if self.engine == "auto" and self.engine_ == "torch" and not self.hs:
            self.engine_ = "torch-batched"  # the GPU trainer
        if self.engine_ == "torch-batched" and self.hs:
            raise ValueError(
                "engine='torch-batched' trains negative sampling only, but hs=1; use "
                "engine='torch' (any device) or 'numba' (CPU) for hierarchical softmax."
            )
        if self._warm():
            if self.wv_.vector_size != self.vector_size:
                raise ValueError(
                    f"warm_start=True but vector_size changed ({self.wv_.vector_size} -> "
                    f"{self.vector_size}); refit with warm_start=False."
                )
            if (self.negative > 0 and self.syn1neg_ is None) or (self.hs and self.syn1_ is None):
                raise ValueError(
                    "warm_start=True needs the output matrix of the same objective (hs/negative) "
                    "as the fitted model; set negative/hs as in the first fit or fit from scratch."
                )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn word vectors from the documents in ``X``.

        Reads top to bottom to the trainer: the parameters and the engine
        (:meth:`_check_params`), the documents, the word vectors
        (:meth:`_fit_word_vectors`, which calls
        :func:`skembed.text.word2vec._training.train`), then the pooling
        weights.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Raw documents (tokenized by the analyzer) or pre-tokenized ones; a
            re-iterable corpus (e.g. :class:`~skembed.text.LineCorpus`) is
            encoded once and kept in a temporary file.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        TypeError
            If ``X`` is a single string or holds non-text documents.
        ValueError
            If ``X`` is empty, a document is missing (see ``handle_missing``)
            or the vocabulary is empty after ``min_count``.
        """
        with restore_on_failure(self):
            self._check_params()
            documents = self._check_documents(X, allow_iterable=True)
            analyzer = self._analyzer()
            self._set_learned(documents, analyzer, self._fit_word_vectors(documents, analyzer))
        return self

    def _fit_word_vectors(self, documents, analyzer):
        """Encode, pick the vocabulary, initialise the weights and train them.

        Returns
        -------
        learned : LearnedWords
            ``wv_``, the training documents' counts (with tf-idf or SIF
            pooling) and the fraction of training tokens outside the vocabulary.
        """
        seed = seed_from_random_state(self.random_state)
        warm = self._warm()
        corpus = self._encode(documents, analyzer)
        try:
            index_to_key, counts, remap = self._vocabulary(corpus)
            doc_counts, n_known = corpus.document_counts(
                remap, len(index_to_key), matrix=self.pooling in ("tfidf", "sif")
            )
            if n_known == 0:
                raise ValueError(
                    "warm_start=True: no token of X is in the fitted vocabulary; there is "
                    "nothing to train on."
                )
            if warm:
                syn0 = self._warm_input_matrix()
            else:
                syn0 = self._init_input_matrix(len(index_to_key), np.random.default_rng(seed))
            config = self._kernel_config(
                counts,
                effective_window(self.window, corpus.max_length),
                sg=self.sg,
                shared_negatives=self.shared_negatives,
                sync_tokens=0 if self.lock_free else SYNC_TOKENS,
                input_rows=self._input_rows(index_to_key, warm),
            )

            def publish(syn0, syn1neg, syn1):
                self.wv_ = self._keyed_vectors(syn0, index_to_key, counts, warm)
                self.vocabulary_ = self.wv_.key_to_index

            trained = train(
                self,
                corpus,
                remap,
                counts,
                (syn0, *self._output_layers(len(index_to_key))),
                config,
                seed=seed,
                history=list(self.history_) if warm else [],
                publish=publish,
            )
        finally:
            corpus.close()
        oov = 1.0 - n_known / corpus.n_tokens if corpus.n_tokens else 0.0
        wv = self._keyed_vectors(trained.syn0, index_to_key, counts, warm)
        return LearnedWords(wv, doc_counts, float(oov))

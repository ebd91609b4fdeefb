"""The engines that train a chunk of the word2vec family, in one place.

Every engine implements the interface described in
:mod:`skembed.text.word2vec._training` (``train_chunk`` and ``weights``);
the estimator's ``engine`` parameter names them (``engine_`` records which
one trained):

=================  =========================================================
``engine_``        class
=================  =========================================================
``"numba"``        :class:`NumbaEngine`: the compiled multi-threaded CPU
                   kernel (:mod:`skembed.kernels.word2vec`); Doc2Vec's
                   :class:`Doc2VecEngine` extends it
``"torch"``        :class:`TorchEngine`: exact per-pair torch SGD on any
                   device, every output layer (hierarchical softmax too)
``"torch-batched"``  :class:`SgnsEngine`: blocks of centre words per step on
                   any device, negative sampling only (the GPU trainer)
=================  =========================================================

``engine`` (what trains, in ``fit``) and ``backend`` (the runtime that runs
a fitted transformer model in ``transform``: torch, onnx, openvino) are two
glossary terms; see ``docs/glossary.md``.
"""

from __future__ import annotations

import threading

import numpy as np

from ...utils._seeding import mix_seed

__all__ = [
    "KERNEL_LOCK",
    "Doc2VecEngine",
    "NumbaEngine",
    "SgnsEngine",
    "TorchEngine",
    "bag_rows",
]

#: fits running in several Python threads take turns per chunk. Doc2Vec's inference
#: (``infer_documents``, numba ``parallel=True``) needs it: numba's workqueue threading layer
#: (used when neither OpenMP nor TBB is available) must not run two parallel kernels at once.
#: The training chunks no longer use numba's pool (each starts Python threads of its own,
#: ``kernels/scheduler.py``); for them the lock only keeps concurrent fits from
#: oversubscribing the cores with their threads at the same time.
KERNEL_LOCK = threading.Lock()


class NumbaEngine:
    """The compiled multi-threaded CPU engine (:func:`skembed.kernels.scheduler.train_word2vec_chunk`).

    Trains the numpy matrices in place; see the module docstring for the
    interface.

    Parameters
    ----------
    syn0, syn1neg, syn1 : numpy.ndarray, float32
        Weight matrices (updated in place).
    config : KernelConfig
    n_threads : int
        Threads available. Lock-free training splits each chunk into this many
        slices.
    n_parts : int
        Parts of each chunk in deterministic training, whatever ``n_threads``
        (the threads execute them), with shorter phases above 2 parts
        (:func:`skembed.kernels.scheduler.training_partition`): the result
        depends on them, not on the thread count or timing.
    """

    def __init__(self, syn0, syn1neg, syn1, config, n_threads, n_parts):
        from ...kernels.scheduler import training_partition

        self.syn0, self.syn1neg, self.syn1 = syn0, syn1neg, syn1
        self.n_parts, sync_tokens = training_partition(n_threads, config.sync_tokens, n_parts)
        self.config = config._replace(sync_tokens=sync_tokens)

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed):
        from ...kernels.scheduler import train_word2vec_chunk as train_chunk

        with KERNEL_LOCK:
            stats = train_chunk(
                *self.weights(),
                ids,
                offsets,
                self.config,
                float(alpha_start),
                float(alpha_end),
                int(seed),
                self.n_parts,
            )
        return self._chunk_result(stats)

    @staticmethod
    def _chunk_result(stats):
        """``(loss, n_examples)`` from the kernel's per-slice ``(loss, examples, diverged)``."""
        if stats[:, 2].any():
            return float("nan"), 0.0
        return float(stats[:, 0].sum()), float(stats[:, 1].sum())

    def weights(self):
        return self.syn0, self.syn1neg, self.syn1


def bag_rows(words, indptr, indices):
    """Concatenated input rows of ``words`` (a CSR gather), with bag offsets and sizes.

    Parameters
    ----------
    words : numpy.ndarray of shape (n,), int64
    indptr : numpy.ndarray of shape (n_words + 1,), int64
    indices : numpy.ndarray, int32 or int64

    Returns
    -------
    rows : numpy.ndarray, int64
    offsets, sizes : numpy.ndarray of shape (n,), int64
    """
    starts = indptr[words]
    sizes = indptr[words + 1] - starts
    offsets = np.zeros(len(words), dtype=np.int64)
    np.cumsum(sizes[:-1], out=offsets[1:])
    pos = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(offsets - starts, sizes)
    return indices[pos].astype(np.int64), offsets, sizes


class TorchEngine:
    """Batched torch SGD on any torch device (the CPU included); see the module docstring.

    Batches come from the numba helpers ``skipgram_pairs``/``cbow_windows``;
    each example's input is the mean of a bag of input rows (one row in
    skip-gram Word2Vec, the context rows in CBOW, plus the n-gram rows of
    each word in FastText) and every row of the bag receives the full
    gradient, as in the numba kernel. Negatives are drawn from the same
    alias table with a torch generator seeded once per fit.

    Parameters
    ----------
    syn0, syn1neg, syn1 : numpy.ndarray, float32
        Initial weights (copied to ``device``).
    config : KernelConfig
    device : str
        Resolved torch device.
    batch_size : int
        Skip-gram pairs per step; CBOW windows per step are ``batch_size // 8``.
    seed : int
    """

    def __init__(self, syn0, syn1neg, syn1, config, device, batch_size, seed):
        import torch

        from ...nn.word2vec import Word2VecNet
        from ...utils._seeding import torch_generator

        self.torch = torch
        self.dev = dev = torch.device(device)
        c = self.config = config
        self.net = Word2VecNet(
            torch.from_numpy(syn0).to(dev),
            torch.from_numpy(syn1neg).to(dev) if c.negative > 0 else None,
            torch.from_numpy(syn1).to(dev) if c.hs else None,
        )
        self._empty = np.zeros((0, syn0.shape[1]), np.float32)
        self.gen = torch_generator(seed, device)
        self.neg_prob = torch.from_numpy(c.neg_prob).to(dev)
        self.neg_alias = torch.from_numpy(c.neg_alias.astype(np.int64)).to(dev)
        self.codes = torch.from_numpy(c.codes.astype(np.float32)).to(dev)
        self.points = torch.from_numpy(c.points.astype(np.int64)).to(dev)
        self.lengths = torch.from_numpy(c.code_lengths.astype(np.int64)).to(dev)
        n_words = len(c.neg_prob)
        if c.sub_indptr.shape[0] == 0:
            self.indptr = np.arange(n_words + 1, dtype=np.int64)
            self.indices = np.arange(n_words, dtype=np.int64)
        else:
            self.indptr, self.indices = c.sub_indptr, c.sub_indices
        # a CBOW example updates up to 2 * window input rows: fewer examples per step keep
        # the summed updates of frequent words stable (measured: 4096 diverges at alpha=0.05)
        self.batch_size = int(batch_size) if c.sg else max(1, int(batch_size) // 8)

    def _bags(self, inputs):
        if inputs.ndim == 1:
            return bag_rows(inputs.astype(np.int64), self.indptr, self.indices)
        valid = inputs >= 0
        rows, _, sizes = bag_rows(inputs[valid].astype(np.int64), self.indptr, self.indices)
        example = np.repeat(np.arange(len(inputs)), valid.sum(axis=1))
        ex_sizes = np.bincount(example, weights=sizes, minlength=len(inputs)).astype(np.int64)
        ex_offsets = np.zeros(len(inputs), dtype=np.int64)
        np.cumsum(ex_sizes[:-1], out=ex_offsets[1:])
        return rows, ex_offsets, ex_sizes

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed):
        from ...kernels.word2vec import cbow_windows, skipgram_pairs

        torch, dev, c, net = self.torch, self.dev, self.config, self.net
        pairs = skipgram_pairs if c.sg else cbow_windows
        inputs_np, targets_np = pairs(ids, offsets, c.window, seed)
        if c.sg and c.sub_indptr.shape[0] > 0:
            # FastText skip-gram: the centre word's bag predicts the context word
            inputs_np, targets_np = targets_np, inputs_np
        n = targets_np.shape[0]
        if n == 0:
            return 0.0, 0.0
        targets_all = torch.from_numpy(targets_np.astype(np.int64)).to(dev)
        k, bs = c.negative, self.batch_size
        loss = torch.zeros((), device=dev)
        for start in range(0, n, bs):
            stop = min(start + bs, n)
            lr = alpha_start + (alpha_end - alpha_start) * start / n
            rows, bag_off, sizes = (
                torch.from_numpy(a).to(dev) for a in self._bags(inputs_np[start:stop])
            )
            targets = targets_all[start:stop]
            b = stop - start
            h = net.hidden(rows, bag_off, sizes)
            grad_h = torch.zeros_like(h)
            if c.hs:
                idx = self.points[targets]
                lab = 1.0 - self.codes[targets]
                width = torch.arange(idx.shape[1], device=dev)[None, :]
                mask = (width < self.lengths[targets][:, None]).float()
                ls, g = net.output_step(h, net.syn1, idx, lab, mask, lr)
                loss += ls
                grad_h += g
            if k > 0:
                t = torch.randint(0, len(self.neg_prob), (b, k), device=dev, generator=self.gen)
                u = torch.rand((b, k), device=dev, generator=self.gen)
                t = torch.where(u < self.neg_prob[t], t, self.neg_alias[t])
                idx = torch.cat([targets[:, None], t], dim=1)
                lab = torch.zeros((b, k + 1), device=dev)
                lab[:, 0] = 1.0
                mask = torch.ones((b, k + 1), device=dev)
                mask[:, 1:] = (t != targets[:, None]).float()
                ls, g = net.output_step(h, net.syn1neg, idx, lab, mask, lr)
                loss += ls
                grad_h += g
            net.apply_input(rows, sizes, grad_h)
        return float(loss), float(n)

    def weights(self):
        net = self.net

        def out(p):
            return self._empty if p is None else np.ascontiguousarray(p.detach().cpu().numpy())

        return out(net.syn0), out(net.syn1neg), out(net.syn1)


class Doc2VecEngine(NumbaEngine):
    """Paragraph-vector engine of the word2vec trainer (numba, deterministic threads).

    The engine interface of :mod:`skembed.text.word2vec._training` around
    :func:`skembed.kernels.scheduler.train_doc2vec_chunk`, with the documents' rows as
    part of each chunk: ``train_chunk(ids, offsets, alpha_start, alpha_end,
    seed, doc_rows)`` (:func:`~skembed.text.word2vec._training.train_epochs`
    passes ``doc_rows`` when the estimator gives its documents' rows).

    Parameters
    ----------
    syn0 : numpy.ndarray of shape (n_words + n_rows, vector_size), float32
        Word input vectors, then the document (tag) vectors; trained in place.
    syn1neg, syn1 : numpy.ndarray, float32
        Output layers, trained in place.
    config : KernelConfig
    n_threads : int
        Threads available (:class:`NumbaEngine`).
    n_parts : int
        Parts of each chunk (:class:`NumbaEngine`); the result depends on
        them, not on the thread count or timing.
    dm, dbow_words : bool
    """

    def __init__(self, syn0, syn1neg, syn1, config, n_threads, n_parts, *, dm, dbow_words):
        super().__init__(syn0, syn1neg, syn1, config, n_threads, n_parts)
        self.dm, self.dbow_words = bool(dm), bool(dbow_words)

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed, doc_rows):
        """Train one chunk; ``doc_rows`` (int64, ``n_docs``): the ``syn0`` row of each piece."""
        from ...kernels.scheduler import Documents, Weights
        from ...kernels.scheduler import train_doc2vec_chunk as train_chunk

        with KERNEL_LOCK:
            stats = train_chunk(
                Weights(*self.weights()),
                ids,
                offsets,
                Documents(doc_rows, self.dm, self.dbow_words),
                config=self.config,
                alpha_start=float(alpha_start),
                alpha_end=float(alpha_end),
                seed=int(seed),
                n_parts=self.n_parts,
            )
        return self._chunk_result(stats)


class SgnsEngine:
    """The word2vec trainer's engine interface over :func:`train_sgns_chunk`.

    ``engine="torch-batched"`` of ``Word2VecTransformer``/``FastTextTransformer``
    (the same code path on the CPU and on CUDA; ``engine="auto"`` picks it on
    a GPU when the output layer is negative sampling alone, ``hs=0``); the
    exact per-pair :class:`TorchEngine` (``engine="torch"``) serves
    hierarchical softmax.

    Parameters
    ----------
    syn0 : numpy.ndarray of shape (n_rows, dim), float32
        Initial input vectors (words, then n-gram buckets with subwords).
    syn1neg : numpy.ndarray of shape (n_words, dim), float32
        Initial output vectors.
    syn1 : numpy.ndarray, float32
        Hierarchical-softmax matrix (unused; returned unchanged by :meth:`weights`).
    config : skembed.kernels.word2vec.KernelConfig
        ``sg``, ``window``, ``negative``, the alias table and the subword CSR.
    device : str
        Resolved torch device.
    batch_words : int
        Centre words per step (the estimator's ``batch_size``, or
        :func:`~skembed.nn.sgns.default_batch_words` of the corpus).
    seed : int
        Seeds each chunk's generator together with the chunk seed.
    """

    def __init__(self, syn0, syn1neg, syn1, config, device, batch_words, seed):
        import torch

        from ...nn.sgns import SubwordBags, device_tables

        dev = torch.device(device)
        self.syn0 = torch.from_numpy(syn0).to(dev)
        self.syn1neg = torch.from_numpy(syn1neg).to(dev)
        self._syn1 = syn1
        self.config = config
        self.batch_words = batch_words
        self.seed = int(seed)
        self.prob, self.alias = device_tables(config.neg_prob, config.neg_alias, dev)
        self.subwords = (
            SubwordBags(config.sub_indptr, config.sub_indices, dev)
            if config.sub_indptr.shape[0]
            else None
        )

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed):
        """Train one chunk; returns (summed loss, number of examples) as floats (one sync)."""
        from ...nn.sgns import train_sgns_chunk

        c = self.config
        loss, n = train_sgns_chunk(
            self.syn0,
            self.syn1neg,
            ids,
            offsets,
            neg_prob=self.prob,
            neg_alias=self.alias,
            window=int(c.window),
            negative=int(c.negative),
            alpha_start=float(alpha_start),
            alpha_end=float(alpha_end),
            seed=mix_seed(self.seed, seed),
            sg=bool(c.sg),
            subwords=self.subwords,
            batch_words=self.batch_words,
        )
        return float(loss), float(n)

    def divergence_advice(self, alpha):
        """``(parameter, value, hint)`` for a diverged fit: the batch is what to lower first.

        A step applies the summed updates of ``batch_size`` centre words read from the same
        parameters; a frequent word's rows then move by many updates at once.
        """
        batch = int(self.batch_words)
        hint = (
            f"batch_size={batch} centre words per step update a frequent word's rows many "
            f"times at once; a quarter (batch_size={max(1, batch // 4)}) makes each step "
            f"read fresher vectors. Or lower alpha (currently {alpha}), or use engine='numba'."
        )
        return "batch_size", batch, hint

    def weights(self):
        """(syn0, syn1neg, syn1) as numpy arrays on the host."""
        return (
            self.syn0.detach().cpu().numpy(),
            self.syn1neg.detach().cpu().numpy(),
            self._syn1,
        )


class DbowEngine(SgnsEngine):
    """PV-DBOW's batched torch engine: :class:`SgnsEngine` over :func:`~skembed.nn.dbow.train_dbow_chunk`.

    ``engine="torch-batched"`` of ``Doc2VecTransformer`` (pure PV-DBOW with
    negative sampling: ``dm=0``, ``dbow_words=0``, ``hs=0``), the same code
    on the CPU and on CUDA. ``train_chunk`` takes the chunk's document rows
    as :class:`Doc2VecEngine`'s does; the parameters are :class:`SgnsEngine`'s
    (``syn0`` holds the word rows, then the document rows).
    """

    def train_chunk(self, ids, offsets, alpha_start, alpha_end, seed, doc_rows):
        """Train one chunk; returns (summed loss, number of examples) as floats (one sync)."""
        from ...nn.dbow import train_dbow_chunk

        loss, n = train_dbow_chunk(
            self.syn0,
            self.syn1neg,
            ids,
            offsets,
            doc_rows,
            neg_prob=self.prob,
            neg_alias=self.alias,
            negative=int(self.config.negative),
            alpha_start=float(alpha_start),
            alpha_end=float(alpha_end),
            seed=mix_seed(self.seed, seed),
            batch_words=self.batch_words,
        )
        return float(loss), float(n)

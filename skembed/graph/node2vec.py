"""Node2VecTransformer: node vectors from biased random walks trained with skip-gram."""

from __future__ import annotations

import warnings
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

from ..kernels.walks import WalkConfig, random_walks
from ..keyedvectors import KeyedVectors
from ..text import Word2VecTransformer
from ..utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, limit_threads, resolve_compute
from ..utils._schema import Array, CheckedStateMixin, Instance, Number, Vectors
from ..utils._seeding import mix_seed, seed_from_random_state
from ._input import check_graph, check_node_query, check_walk_memory

__all__ = ["Node2VecTransformer"]

#: how a pair of node vectors becomes an edge vector (Grover & Leskovec 2016, table 1)
EDGE_OPERATORS = {
    "hadamard": lambda a, b: a * b,
    "average": lambda a, b: (a + b) / 2,
    "l1": lambda a, b: np.abs(a - b),
    "l2": lambda a, b: (a - b) ** 2,
}


class Node2VecTransformer(
    CheckedStateMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Node vectors from node2vec's biased random walks, trained with skip-gram.

    ``fit`` takes a graph, walks ``walks_per_node`` times from every node (second-order walks
    biased by ``p`` and ``q``; DeepWalk's uniform walks when ``p = q = 1``) and trains the walks
    as sentences with :class:`~skembed.Word2VecTransformer` (skip-gram, negative sampling).
    ``transform`` maps node ids to their vectors, or edges to edge vectors.

    Parameters
    ----------
    vector_size : int, default=128
        Dimension of the node vectors (the paper's ``d``).
    walk_length : int, default=80
        Nodes per walk, the start node included (the paper's ``l``).
    walks_per_node : int, default=10
        Walks started from every node (the paper's ``r``).
    p : float, default=1.0
        Return parameter: a step back to the previous node is weighted ``1/p``.
    q : float, default=1.0
        In-out parameter: a step to a node not adjacent to the previous node is weighted
        ``1/q``; ``q < 1`` explores outward (communities), ``q > 1`` stays local (roles).
    directed : bool, default=False
        Walk edges only from source to target; False walks every edge both ways.
    window : int, default=10
        Skip-gram context size around each node of a walk (the paper's ``k``).
    negative : int, default=5
        Negative samples per positive pair.
    sample : float, default=0.0
        Subsampling threshold of frequent nodes, as word2vec's (0: none, as the paper).
    alpha : float, default=0.025
        Initial learning rate, decayed linearly to ``min_alpha``.
    min_alpha : float, default=1e-4
        Final learning rate of the linear decay.
    epochs : int, default=5
        Passes of skip-gram over the walks (the paper trains one; small graphs need more).
    edge_operator : {"hadamard", "average", "l1", "l2"}, default="hadamard"
        How ``transform`` makes an edge's vector from its two nodes' vectors ``a``, ``b``:
        ``a * b``, ``(a + b) / 2``, ``|a - b|`` or ``(a - b) ** 2``.
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output for a node id not in the fitted graph.
    random_state : int, RandomState instance or None, default=None
        Seeds the walks (each walk from the seed and its index) and the skip-gram training.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where skip-gram trains (the walks run on the CPU).
    engine : {"auto", "numba", "torch", "torch-batched"}, default="auto"
        The skip-gram engine (as :class:`~skembed.Word2VecTransformer`).
    n_jobs : int or None, default=None
        Threads of the walks and of training; the vectors do not depend on it.
    verbose : int, default=0
        0: silent; 1: a progress bar over the training epochs.

    Attributes
    ----------
    nodes_ : numpy.ndarray of shape (n_nodes,)
        The node ids, sorted (``0..n-1`` for a sparse adjacency).
    vectors_ : numpy.ndarray of shape (n_nodes, vector_size), float32
        The vector of ``nodes_[i]`` in row ``i``; zeros for an isolated node.
    wv_ : KeyedVectors
        The vectors keyed by ``str(node id)``, for similarity queries.
    n_walks_ : int
    device_, engine_ : str
        Where and with what skip-gram trained.

    Raises
    ------
    ValueError
        Bad graphs (:func:`skembed.graph._input.check_graph`): self-loops, weights that are not
        finite and positive, one node; ``p`` or ``q`` not > 0; an unknown id in ``transform``
        with ``handle_unknown="error"``.
    TypeError
        Node ids of mixed types.
    MemoryError
        Walks that would not fit in memory (the message names ``walks_per_node`` and
        ``walk_length``), refused before any is generated.

    Notes
    -----
    A walk at ``v`` coming from ``t`` steps to a neighbour ``x`` with probability
    proportional to ``w(v, x) * bias``, ``bias = 1/p`` if ``x = t``, 1 if ``x`` is a neighbour
    of ``t``, ``1/q`` otherwise; drawn by rejection (:mod:`skembed.kernels.walks`) in compiled
    code, one generator per walk, so the walks -- and, with skip-gram's deterministic
    parts, the vectors -- are the same for the same ``random_state`` on any ``n_jobs``.
    Isolated nodes get zero vectors (with a warning).

    References
    ----------
    Grover & Leskovec (2016), "node2vec: Scalable Feature Learning for Networks", KDD.
    Perozzi, Al-Rfou & Skiena (2014), "DeepWalk: Online Learning of Social Representations", KDD.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed import Node2VecTransformer
    >>> ring = np.array([[i, (i + 1) % 10] for i in range(10)])
    >>> n2v = Node2VecTransformer(vector_size=8, walk_length=10, random_state=0, n_jobs=1)
    >>> n2v.fit(ring).transform([0, 5]).shape
    (2, 8)
    >>> n2v.transform(ring).shape  # edges: the Hadamard product of their nodes' vectors
    (10, 8)
    """

    _parameter_constraints: dict = {
        **COMPUTE_PARAMETER_CONSTRAINTS,
        "vector_size": [Interval(Integral, 1, None, closed="left")],
        "walk_length": [Interval(Integral, 2, None, closed="left")],
        "walks_per_node": [Interval(Integral, 1, None, closed="left")],
        "p": [Interval(Real, 0, None, closed="neither")],
        "q": [Interval(Real, 0, None, closed="neither")],
        "directed": ["boolean"],
        "window": [Interval(Integral, 1, None, closed="left")],
        "negative": [Interval(Integral, 1, None, closed="left")],
        "sample": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "min_alpha": [Interval(Real, 0, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "edge_operator": [StrOptions(set(EDGE_OPERATORS))],
        "handle_unknown": [StrOptions({"zeros", "nan", "error"})],
        "random_state": ["random_state"],
        "engine": [StrOptions({"auto", "numba", "torch", "torch-batched"})],
        "verbose": ["verbose"],
    }

    _state_schema = {
        "nodes_": Instance(np.ndarray, rows="N", ndim=1),
        "vectors_": Array("f", ("N", "D"), finite=True),
        "wv_": Vectors("N", "D"),
        "n_walks_": Number(low=0),
        "device_": Instance(str),
        "engine_": Instance(str),
        "_n_features_out": Number(size="D"),
    }

    def __init__(
        self,
        vector_size=128,
        *,
        walk_length=80,
        walks_per_node=10,
        p=1.0,
        q=1.0,
        directed=False,
        window=10,
        negative=5,
        sample=0.0,
        alpha=0.025,
        min_alpha=1e-4,
        epochs=5,
        edge_operator="hadamard",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        engine="auto",
        n_jobs=None,
        verbose=0,
    ):
        self.vector_size = vector_size
        self.walk_length = walk_length
        self.walks_per_node = walks_per_node
        self.p = p
        self.q = q
        self.directed = directed
        self.window = window
        self.negative = negative
        self.sample = sample
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.epochs = epochs
        self.edge_operator = edge_operator
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.engine = engine
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # node ids may be strings
        tags.input_tags.sparse = True  # an adjacency matrix
        return tags

    # ------------------------------------------------------------------ fit
    def _walks(self, graph, seed):
        """The walks as sentences of node-index tokens, in a seeded order of start nodes."""
        n_nodes = len(graph.nodes)
        check_walk_memory(n_nodes * self.walks_per_node, self.walk_length)
        order = np.random.default_rng(mix_seed(seed, 1))
        starts = np.concatenate([order.permutation(n_nodes) for _ in range(self.walks_per_node)])
        starts = starts.astype(np.int32)
        config = WalkConfig(int(self.walk_length), 1.0 / float(self.p), 1.0 / float(self.q))
        with limit_threads(self.n_jobs, modules=("numba",)):
            walks = random_walks(graph.csr, config, starts, mix_seed(seed, 2))
        names = np.array([str(i) for i in range(n_nodes)], dtype=object)
        lengths = (walks >= 0).sum(axis=1)
        return [names[row[:n]].tolist() for row, n in zip(walks, lengths, strict=True) if n > 1]

    def _skipgram(self, seed):
        return Word2VecTransformer(
            self.vector_size,
            window=self.window,
            min_count=1,
            sg=1,
            negative=self.negative,
            sample=self.sample,
            alpha=self.alpha,
            min_alpha=min(self.min_alpha, self.alpha),
            epochs=self.epochs,
            lowercase=False,
            random_state=mix_seed(seed, 3) % (2**31 - 1),
            device=self.device,
            engine=self.engine,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Walk the graph ``X`` and train the node vectors.

        Parameters
        ----------
        X : array-like of shape (n_edges, 2) or (n_edges, 3), DataFrame or sparse matrix
            Edges ``(source, target[, weight])``, a DataFrame with columns ``source``,
            ``target`` (and ``weight``), or a square adjacency matrix.
        y : None
            Ignored.

        Returns
        -------
        self : Node2VecTransformer
            The fitted estimator.
        """
        resolve_compute(self, cpu_engine="numba", torch_engines=("torch", "torch-batched"))
        graph = check_graph(X, directed=self.directed)
        seed = seed_from_random_state(self.random_state)
        walks = self._walks(graph, seed)
        skipgram = self._skipgram(seed).fit(walks)
        vectors = np.zeros((len(graph.nodes), self.vector_size), np.float32)
        rows = np.array([int(key) for key in skipgram.wv_.index_to_key], dtype=np.int64)
        vectors[rows] = skipgram.wv_.vectors
        if len(graph.isolated):
            warnings.warn(
                f"{len(graph.isolated)} nodes have no edge (first: {graph.nodes[graph.isolated[0]]!r}"
                "); no walk visits them and their vectors are zeros. Drop them or connect them.",
                UserWarning,
                stacklevel=2,
            )
        self.nodes_ = graph.nodes
        self.vectors_ = vectors
        self.wv_ = KeyedVectors(vectors, [str(node) for node in graph.nodes.tolist()])
        self.n_walks_ = len(walks)
        self.device_, self.engine_ = skipgram.device_, skipgram.engine_
        self._n_features_out = self.vector_size
        return self

    # ------------------------------------------------------------ transform
    def _lookup(self, ids):
        """Rows of ``vectors_`` of ``ids``; -1 for an id not in the graph."""
        index = {node: row for row, node in enumerate(self.nodes_.tolist())}
        rows = np.fromiter((index.get(node, -1) for node in ids), np.int64, len(ids))
        if self.handle_unknown == "error" and (rows < 0).any():
            unknown = [ids[i] for i in np.flatnonzero(rows < 0)[:5]]
            raise ValueError(
                f"{int((rows < 0).sum())} node ids were not in the fitted graph, e.g. {unknown}; "
                "use handle_unknown='zeros' or 'nan' to embed them anyway."
            )
        return rows

    def _node_vectors(self, ids):
        rows = self._lookup(ids)
        out = self.vectors_[np.maximum(rows, 0)].copy()
        out[rows < 0] = np.nan if self.handle_unknown == "nan" else 0.0
        return out

    def transform(self, X):
        """Vectors of nodes, or of edges.

        Parameters
        ----------
        X : array-like of shape (n,) or (n, 1), or of shape (n, 2|3), DataFrame, sparse matrix
            Node ids; or edges (a third column, the weight, is ignored), each embedded by
            ``edge_operator``; or a square sparse matrix, for the vectors of nodes
            ``0..n-1``.

        Returns
        -------
        vectors : numpy.ndarray of shape (n, vector_size), float32
            Unknown nodes per ``handle_unknown``.
        """
        check_is_fitted(self, "vectors_")
        query = check_node_query(X)
        sources = self._node_vectors(query.sources)
        if query.targets is None:
            return sources
        return EDGE_OPERATORS[self.edge_operator](sources, self._node_vectors(query.targets))

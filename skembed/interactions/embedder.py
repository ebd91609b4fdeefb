"""InteractionEmbedder: user and item vectors from an interaction log (implicit ALS, item2vec)."""

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

from ..utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, resolve_compute
from ..utils._schema import Array, CheckedStateMixin, Instance, Number
from ..utils._seeding import mix_seed, seed_from_random_state
from ._factorize import als_fold_in, fit_als, fit_item2vec, mean_fold_in
from ._log import baskets, check_log, check_query, log_matrix

__all__ = ["InteractionEmbedder"]


class InteractionEmbedder(
    CheckedStateMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """User and item vectors from an interaction log: implicit ALS or item2vec.

    ``fit`` takes who interacted with what -- rows ``(user, item[, weight][, time])`` -- and
    learns a vector per user and per item, so that ``user . item`` scores how likely the user
    is to interact with the item. ``transform`` gives vectors of user ids (or item ids, with
    ``embed="items"``) for a downstream model; given a log, it gives each row's user vector,
    and a user unseen at fit time gets one from its items in that log (fold-in).

    Parameters
    ----------
    method : {"als", "item2vec"}, default="als"
        ``"als"``: implicit-feedback matrix factorisation (Hu, Koren & Volinsky 2008) by
        alternating least squares with conjugate gradient, as implicit's
        ``AlternatingLeastSquares``. ``"item2vec"`` (Barkan & Koenigstein 2016): skip-gram
        over each user's items, ordered by time when the log has times (context: ``window``);
        a user is the weighted mean of its items' input vectors.
    vector_size : int, default=64
        Dimension of the user and item vectors (implicit's ``factors``).
    epochs : int, default=15
        ALS iterations (a user half-step then an item half-step; implicit's ``iterations``), or
        skip-gram passes over the baskets.
    regularization : float, default=0.01
        ALS: the L2 penalty of every user and item vector (implicit's ``regularization``).
    confidence_scale : float, default=1.0
        ALS: an observed pair of weight ``w`` has confidence ``1 + confidence_scale * w``
        (Hu et al.'s ``alpha``; implicit's confidence is ``alpha * w``, so implicit's ``alpha``
        on 0/1 data is ``confidence_scale = alpha - 1`` here).
    cg_steps : int, default=3
        ALS: conjugate-gradient steps per vector and half-step (implicit's ``cg_steps``).
    window : int or None, default=50
        For item2vec, the most items before and after an item (in time order) that are its
        context; None: the whole basket, the paper's set-as-window. Measured on MovieLens
        (baskets of up to ~2,000 films, ``benchmarks/bench_interactions.py``): the whole basket
        trains poorly (recall@10 0.007 after one epoch; the updates of thousands of contexts
        add up in skip-gram's deterministic blocks), a window of 50 gives 0.104.
    negative : int, default=5
        For item2vec, negative samples per positive pair.
    sample : float, default=0.0
        For item2vec, word2vec's subsampling threshold of frequent items (0: none).
    alpha : float, default=0.025
        For item2vec, the initial learning rate, decayed linearly to ``min_alpha``.
    min_alpha : float, default=1e-4
        For item2vec, the final learning rate of the linear decay.
    embed : {"users", "items"}, default="users"
        What ``transform`` returns: user vectors or item vectors.
    handle_unknown : {"zeros", "nan", "error"}, default="zeros"
        Output for an id not seen at fit time (and a new user without a known item).
    random_state : int, RandomState instance or None, default=None
        Seeds the initial vectors (ALS) or skip-gram (item2vec).
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Where ALS runs.
    engine : {"auto", "numba", "torch"}, default="auto"
        What runs ALS: ``"numba"``, the compiled CPU kernel (:mod:`skembed.kernels.als`), or
        ``"torch"``, the same conjugate-gradient steps for all vectors at once on any torch
        device (``"auto"``: numba on the CPU, torch elsewhere). item2vec runs on numba.
    n_jobs : int or None, default=None
        Threads; with the numba engine the vectors do not depend on it (the torch engine's
        scatter-adds are not bit-reproducible on a GPU).
    verbose : int, default=0
        0: silent; 1: progress bars of the training.

    Attributes
    ----------
    users_, items_ : numpy.ndarray
        The user and item ids seen in ``fit``, sorted.
    user_vectors_ : numpy.ndarray of shape (n_users, vector_size), float32
    item_vectors_ : numpy.ndarray of shape (n_items, vector_size), float32
        ``user_vectors_ @ item_vectors_.T`` scores every (user, item) pair. item2vec: the
        items' output (context) vectors, a user being the weighted mean of its items' input
        vectors.
    device_, engine_ : str
        Where and with what the vectors were learned.
    item_input_vectors_ : numpy.ndarray of shape (n_items, vector_size), float32, or None
        item2vec's input vectors of the items (its item embedding, for item similarity); None
        for ALS.

    Raises
    ------
    ValueError
        In ``fit``: a log that is empty, has a missing id or time, a weight that is NaN,
        infinite or not > 0, or fewer than two distinct items; ``transform``: an unknown id
        with ``handle_unknown="error"``.
    TypeError
        Ids of mixed types (int and str).

    Notes
    -----
    Duplicate (user, item) rows are summed into one weight for ALS; item2vec sees each row
    (a repeated purchase twice in the basket). ALS minimises
    ``sum_{u,i} c_ui (p_ui - x_u . y_i)^2 + regularization (|x|^2 + |y|^2)`` over all pairs,
    ``p_ui = 1`` for observed pairs and ``c_ui = 1 + confidence_scale * w_ui`` (1 for the
    unobserved); :mod:`skembed.kernels.als` solves each vector's least-squares problem by a
    few conjugate-gradient steps. Each vector is solved by one thread, so the vectors are the
    same on any number of threads. The fold-in of a new user solves its least-squares problem
    exactly with the item vectors fixed.

    References
    ----------
    Hu, Koren & Volinsky (2008), "Collaborative Filtering for Implicit Feedback Datasets",
    ICDM. Takács, Pilászy & Tikk (2011), "Applications of the conjugate gradient method for
    implicit feedback collaborative filtering", RecSys. Barkan & Koenigstein (2016),
    "Item2Vec: Neural Item Embedding for Collaborative Filtering", MLSP.

    Examples
    --------
    >>> from skembed import InteractionEmbedder
    >>> log = [["ann", "tea"], ["ann", "cake"], ["bob", "tea"], ["bob", "jam"], ["cy", "jam"]]
    >>> emb = InteractionEmbedder(vector_size=4, random_state=0, n_jobs=1).fit(log)
    >>> emb.transform(["ann", "bob"]).shape
    (2, 4)
    >>> emb.transform([["dee", "cake"]]).shape  # a new user, folded in from its items
    (1, 4)
    """

    _parameter_constraints: dict = {
        **COMPUTE_PARAMETER_CONSTRAINTS,
        "engine": [StrOptions({"auto", "numba", "torch"})],
        "method": [StrOptions({"als", "item2vec"})],
        "vector_size": [Interval(Integral, 1, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "regularization": [Interval(Real, 0, None, closed="left")],
        "confidence_scale": [Interval(Real, 0, None, closed="left")],
        "cg_steps": [Interval(Integral, 1, None, closed="left")],
        "window": [Interval(Integral, 1, None, closed="left"), None],
        "negative": [Interval(Integral, 1, None, closed="left")],
        "sample": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "min_alpha": [Interval(Real, 0, None, closed="left")],
        "embed": [StrOptions({"users", "items"})],
        "handle_unknown": [StrOptions({"zeros", "nan", "error"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    _state_schema = {
        "users_": Instance(np.ndarray, rows="U", ndim=1),
        "items_": Instance(np.ndarray, rows="I", ndim=1),
        "user_vectors_": Array("f", ("U", "D"), finite=True),
        "item_vectors_": Array("f", ("I", "D"), finite=True),
        "item_input_vectors_": Array("f", ("I", "D"), finite=True, optional=True),
        "device_": Instance(str),
        "engine_": Instance(str),
        "_n_features_out": Number(size="D"),
    }

    def __init__(
        self,
        method="als",
        *,
        vector_size=64,
        epochs=15,
        regularization=0.01,
        confidence_scale=1.0,
        cg_steps=3,
        window=50,
        negative=5,
        sample=0.0,
        alpha=0.025,
        min_alpha=1e-4,
        embed="users",
        handle_unknown="zeros",
        random_state=None,
        device="cpu",
        engine="auto",
        n_jobs=None,
        verbose=0,
    ):
        self.method = method
        self.vector_size = vector_size
        self.epochs = epochs
        self.regularization = regularization
        self.confidence_scale = confidence_scale
        self.cg_steps = cg_steps
        self.window = window
        self.negative = negative
        self.sample = sample
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.embed = embed
        self.handle_unknown = handle_unknown
        self.random_state = random_state
        self.device = device
        self.engine = engine
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # user and item ids may be strings
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn user and item vectors from the interaction log ``X``.

        Parameters
        ----------
        X : array-like of shape (n, 2), (n, 3) or (n, 4), or DataFrame
            Rows ``(user, item[, weight][, time])``, or a DataFrame with columns ``user``,
            ``item`` and optionally ``weight`` (> 0, default 1) and ``time``.
        y : None
            Ignored.

        Returns
        -------
        self : InteractionEmbedder
            The fitted estimator.
        """
        compute = resolve_compute(self, cpu_engine="numba")
        if self.method == "item2vec" and compute.engine != "numba":
            raise ValueError(
                f"method='item2vec' trains on the CPU's numba engine; engine={self.engine!r} "
                f"with device={self.device!r} asks for torch. Use method='als' on a torch device."
            )
        log = check_log(X)
        index = log_matrix(log)
        seed = seed_from_random_state(self.random_state)
        if self.method == "als":
            factors = fit_als(index.matrix, self, np.random.default_rng(seed), compute)
        else:
            factors = fit_item2vec(
                baskets(log, index), index.matrix, self, mix_seed(seed, 1) % (2**31 - 1)
            )
        self.users_, self.items_ = index.users, index.items
        self.user_vectors_, self.item_vectors_ = factors.users, factors.items
        self.item_input_vectors_ = factors.item_inputs
        self.device_, self.engine_ = compute.device, compute.engine
        self._n_features_out = self.vector_size
        return self

    # ------------------------------------------------------------ transform
    def _rows(self, known, ids):
        """Rows of ``known`` (sorted ids) of ``ids``; -1 for an id not among them."""
        index = {key: row for row, key in enumerate(known.tolist())}
        return np.fromiter((index.get(key, -1) for key in ids), np.int64, len(ids))

    def _fold_in(self, log):
        """Vectors of the users of ``log`` unseen at fit time, from their known items."""
        columns = self._rows(self.items_, log.items)
        seen = set(self.users_.tolist())
        new = {}
        for user, column, weight in zip(log.users, columns, log.weights, strict=True):
            if column >= 0 and user not in seen:
                new.setdefault(user, ([], []))
                new[user][0].append(column)
                new[user][1].append(weight)
        vectors = {}
        for user, (cols, weights) in new.items():
            if self.method == "als":
                vectors[user] = als_fold_in(
                    self.item_vectors_, cols, weights, self.regularization, self.confidence_scale
                )
            else:
                vectors[user] = mean_fold_in(self.item_input_vectors_, cols, weights)
        return vectors

    def _lookup(self, known, vectors, ids, extra=None):
        rows = self._rows(known, ids)
        out = vectors[np.maximum(rows, 0)].copy()
        unknown = rows < 0
        for k in np.flatnonzero(unknown) if extra else ():
            if ids[k] in extra:
                out[k], unknown[k] = extra[ids[k]], False
        if self.handle_unknown == "error" and unknown.any():
            examples = [ids[k] for k in np.flatnonzero(unknown)[:5]]
            raise ValueError(
                f"{int(unknown.sum())} ids were not seen in fit (and have no known item to fold "
                f"in from), e.g. {examples}; use handle_unknown='zeros' or 'nan'."
            )
        out[unknown] = np.nan if self.handle_unknown == "nan" else 0.0
        return out

    def transform(self, X):
        """Vectors of user (or item) ids, or of each row's user (or item) of a log.

        Parameters
        ----------
        X : array-like of shape (n,) or (n, 1); or a log of shape (n, 2..4) or DataFrame
            Ids of users (``embed="users"``) or items (``embed="items"``); or a log, whose
            rows' users seen in ``fit`` get their fitted vectors and whose other users are
            folded in from their rows' items (items unseen in ``fit`` are ignored).

        Returns
        -------
        vectors : numpy.ndarray of shape (n, vector_size), float32
            One vector per queried user (or item); unknown ids per ``handle_unknown``.
        """
        check_is_fitted(self, "item_vectors_")
        query = check_query(X)
        if self.embed == "items":
            ids = query.ids if query.log is None else query.log.items
            return self._lookup(self.items_, self.item_vectors_, ids)
        if query.log is None:
            return self._lookup(self.users_, self.user_vectors_, query.ids)
        extra = self._fold_in(query.log)
        return self._lookup(self.users_, self.user_vectors_, query.log.users, extra)

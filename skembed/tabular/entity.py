"""EntityEmbedder: supervised embeddings of categorical columns (Guo & Berkhahn 2016)."""

from __future__ import annotations

import functools
from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

from ..utils._compute import limit_threads, resolve_compute
from ..utils._schema import Array, Instance, refuse_state
from ..utils._seeding import seed_from_random_state
from ..utils._state import restore_on_failure
from ._base import TABULAR_PARAMETER_CONSTRAINTS, BaseNeuralTabularEmbedder
from ._entity_fit import (
    EntityEpochStep,
    FitSeeds,
    TrainingArrays,
    code_counts,
    cross_fit,
    embedding_tables,
)
from ._entity_input import EntityInputMixin, embedding_width
from ._preprocess import _is_dataframe

__all__ = ["EntityEmbedder", "embedding_width"]

#: autoencoder parameters EntityEmbedder does not have
_NOT_SHARED = ("n_components", "batch_norm", "preprocessor", "warm_start")


class EntityEmbedder(EntityInputMixin, BaseNeuralTabularEmbedder):
    """Supervised entity embeddings of categorical columns (Guo & Berkhahn 2016).

    Each categorical column gets its own ``torch.nn.Embedding`` table; the
    looked-up rows, concatenated with the standardised numeric columns, feed
    a small MLP trained (AdamW) to predict ``y``. Categories that behave
    alike with respect to the target end up close together, so a column
    with thousands of values becomes a few dense features that linear
    models and trees can use. ``transform`` returns each row's embedding
    rows concatenated (and, optionally, its scaled numeric columns).

    **fit_transform cross-fits** (exactly as scikit-learn's ``TargetEncoder``):
    embeddings learned on ``y`` and fed to a model trained on the same rows
    leak the target (a category seen in few rows is embedded where its rows'
    targets are). ``fit_transform(X, y)`` therefore splits the rows into
    ``cv`` folds and embeds each fold with a network trained on the other
    folds, aligned to the final network's embedding space (weighted
    orthogonal Procrustes per column, on the categories both saw); ``fit``
    still trains the final network on all rows, and ``transform`` uses it.
    So ``fit_transform(X, y)`` does **not** equal ``fit(X, y).transform(X)``,
    by design: use ``fit_transform`` on the rows a downstream model is
    trained on (a ``Pipeline`` does), ``transform`` on new rows.
    ``fit_transform`` costs ``cv + 1`` trainings.

    Parameters
    ----------
    categorical_features : "from_dtype", "all" or array-like, default="from_dtype"
        Which columns are embedded. ``"from_dtype"``: DataFrame columns of
        object, category, string or bool dtype, and columns of object
        arrays whose values are not all numbers (scikit-learn's
        ``HistGradientBoosting`` spelling). ``"all"``: every column (as
        ``TargetEncoder`` does). Else column positions (int), names (str,
        with a DataFrame) or a boolean mask of length ``n_features_in_``.
        The other columns are numeric: standardised, fed to the network
        and output per ``remainder``.
    embedding_dims : "auto", int or dict, default="auto"
        Width of each column's table. ``"auto"``: ``min(50, (c + 1) // 2)``
        with ``c`` the column's number of distinct values in ``fit`` (see
        :func:`embedding_width`). An int: that width for every column. A
        dict ``{column name or position: width}``; columns it omits get
        the ``"auto"`` width.
    min_frequency : int or float, default=5
        Categories seen in fewer than ``min_frequency`` training rows (a
        float: fewer than ``min_frequency * n_samples``) are infrequent:
        they all share the column's "unknown" row, which they train, and
        which categories unseen in ``fit`` get at ``transform``
        (scikit-learn's ``OneHotEncoder`` meaning). Without infrequent
        categories the unknown row is the frequency-weighted mean of the
        column's rows. Missing values (None, NaN, pd.NA) are one category
        of their own.
    handle_unknown : {"infrequent", "error"}, default="infrequent"
        What a category unseen in ``fit`` becomes at ``transform``: the
        unknown row (``"infrequent"``), or a ``ValueError`` naming the
        column (``"error"``).
    target_type : {"auto", "binary", "multiclass", "continuous"}, default="auto"
        Kind of ``y`` (``TargetEncoder``'s names). ``"auto"`` infers it
        with ``sklearn.utils.multiclass.type_of_target``. Binary and
        multiclass targets train with cross-entropy, continuous ones with
        squared error on the standardised target.
    cv : int, default=5
        Folds of the cross fitting in ``fit_transform`` (stratified for
        classification, shuffled with ``random_state``). At least 2.
    remainder : {"scale", "passthrough", "drop"}, default="scale"
        Numeric columns in ``transform``'s output: standardised (as fed to
        the network, missing values at the column mean 0), as given
        (float), or left out.
    hidden_layer_sizes : tuple of int, default=(64, 32)
        Hidden widths of the MLP between the embeddings and the output.
    activation : {"relu", "gelu", "tanh", "elu", "silu", "leaky_relu"}, default="relu"
        Nonlinearity after each hidden layer, torch's module of that name
        with its defaults (``"leaky_relu"``: slope 0.01; ``"elu"``: alpha 1).
    dropout : float in [0, 1), default=0.0
        Dropout on the concatenated embeddings and after each hidden layer.
    learning_rate : float, default=1e-3
        AdamW step size. Lower it if training diverges.
    batch_size : int, default=256
        Rows per gradient step.
    epochs : int, default=10
        Passes over the training rows (an upper bound with
        ``early_stopping`` or a stopping callback).
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows, stop when the
        validation loss has not improved by ``tol`` (relative) for
        ``patience`` epochs, and restore the best weights. The networks of
        the cross fitting then train for the final network's best number
        of epochs, on all rows of their folds.
    validation_fraction : float in (0, 1), default=0.1
        Share of the rows held out for early stopping.
    patience : int, default=3
        Epochs without improvement before early stopping ends training.
    tol : float, default=1e-4
        Relative improvement that resets the patience counter.
    weight_decay : float, default=0.0
        AdamW's decoupled weight decay.
    dtype : numpy dtype, default=numpy.float32
        Dtype of ``transform``'s output.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, shuffling, dropout, the validation
        split and the folds; the same int and ``n_jobs`` give identical output.
    device : {"cpu", "cuda", "cuda:N", "mps", "auto"} or torch.device, default="cpu"
        Where the network trains (resolved in ``fit`` into ``device_``).
        The fitted network is kept on the CPU: ``transform`` only looks up
        table rows.
    verbose : int, default=0
        0 silent; 1 a progress bar over epochs; 2 also a line per epoch.
    callbacks : list of callable or None, default=None
        Called after every epoch of the final network as
        ``cb(estimator, record)`` (see :mod:`skembed.callbacks`); ``True``
        stops training. The cross-fitting networks call none.
    n_jobs : int or None, default=1
        Threads for torch during ``fit`` (:func:`skembed.utils._compute.resolve_n_jobs`;
        ``None``: ``OMP_NUM_THREADS`` or every core). One by default: the
        per-batch matrices of a small network are too small for intra-op
        parallelism to pay off.

    Attributes
    ----------
    categorical_features_ : numpy.ndarray of int
        Positions of the embedded columns.
    numeric_features_ : numpy.ndarray of int
        Positions of the numeric columns.
    categories_ : list of numpy.ndarray (object)
        Per embedded column, the frequent categories, in order of first
        appearance; category ``categories_[j][i]`` has row ``i + 1`` of
        ``embeddings_[j]``.
    infrequent_categories_ : list of numpy.ndarray (object)
        Per embedded column, the categories that share row 0.
    embeddings_ : list of numpy.ndarray of shape (len(categories_[j]) + 1, width_j), float32
        The learned tables; row 0 is the unknown/infrequent row.
    embedding_dims_ : list of int
        Width of each table.
    numeric_mean_, numeric_scale_ : numpy.ndarray of shape (n_numeric,), float64
        Standardisation of the numeric columns.
    target_type_ : str
        ``"binary"``, ``"multiclass"`` or ``"continuous"``.
    classes_ : numpy.ndarray
        Class labels (classification targets only).
    model_ : skembed.nn.entity.EntityEmbeddingNet
        The final trained network, on the CPU, in eval mode.
    history_ : list of dict
        One :func:`skembed.callbacks.make_record` record per epoch of the
        final network: ``epoch``, ``loss`` (mean training loss: cross-entropy,
        or half the squared error of the standardised target), ``seconds``,
        ``valid_loss`` (None without early stopping).
    n_epochs_ : int
        Epochs the final network ran.
    best_epoch_ : int
        Epoch with the lowest monitored loss (restored with early stopping).
    device_ : str
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str
        Only when ``X`` had string column names.

    Raises
    ------
    TrainingDivergedError
        (a ``ValueError``) from ``fit`` when the loss becomes NaN or
        infinite; lower ``learning_rate``.

    See Also
    --------
    sklearn.preprocessing.TargetEncoder : one number per category and class; cross-fits the same way.
    skembed.preprocessing.OneHotEmbedder : unsupervised, one column per category.

    Notes
    -----
    Training minimises the mean of ``loss(f(concat_j E_j[code_j], z), y)``
    over the rows, with ``E_j`` the tables, ``z`` the standardised numeric
    columns and ``f`` the MLP. Memory grows with the tables
    (``sum_j (c_j + 1) * width_j`` floats, four copies for AdamW) and with
    the rows (one int64 per embedded column), never with one-hot width: a
    column of 10^5 categories costs 10^5 x 50 floats. Values are matched
    by equality (``1``, ``1.0`` and ``True`` are one category). Requires
    pandas and torch.

    References
    ----------
    Guo, C. & Berkhahn, F. (2016). "Entity Embeddings of Categorical
    Variables". arXiv:1604.06737.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed.tabular.entity import EntityEmbedder
    >>> rng = np.random.RandomState(0)
    >>> city = rng.choice(["paris", "rome", "oslo", "lima"], size=200)
    >>> y = np.isin(city, ["paris", "rome"]).astype(int)
    >>> emb = EntityEmbedder(epochs=3, random_state=0).fit(city.reshape(-1, 1).astype(object), y)
    >>> emb.get_feature_names_out()
    array(['x0_emb0', 'x0_emb1'], dtype=object)
    >>> emb.transform(np.array([["rome"], ["tokyo"]], dtype=object)).shape
    (2, 2)
    """

    _module_on_cpu = True  # transform only looks up table rows

    def _module_classes(self):
        from ..nn.entity import EntityEmbeddingNet

        return {EntityEmbeddingNet.kind: EntityEmbeddingNet}

    #: fitted state checked on load (utils._schema)
    _state_schema = {
        "categorical_features_": Array("i", ("C",), low=0, below="n_features_in_"),
        "numeric_features_": Array("i", ("N",), low=0, below="n_features_in_"),
        "numeric_mean_": Array("f", ("N",), finite=True),
        "numeric_scale_": Array("f", ("N",), finite=True),
        "categories_": Instance(list, rows="C"),
        "embedding_dims_": Instance(list, rows="C"),
        "embeddings_": Instance(list, rows="C"),
    }
    _parameter_constraints: dict = {
        # the training and compute parameters mean what they mean for the autoencoders
        **{k: v for k, v in TABULAR_PARAMETER_CONSTRAINTS.items() if k not in _NOT_SHARED},
        "categorical_features": [StrOptions({"from_dtype", "all"}), "array-like"],
        "embedding_dims": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left"), dict],
        "min_frequency": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
        ],
        "handle_unknown": [StrOptions({"infrequent", "error"})],
        "target_type": [StrOptions({"auto", "binary", "multiclass", "continuous"})],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "remainder": [StrOptions({"scale", "passthrough", "drop"})],
        "dtype": [type, StrOptions({"float16", "float32", "float64"}), np.dtype],
    }

    def __init__(
        self,
        *,
        categorical_features="from_dtype",
        embedding_dims="auto",
        min_frequency=5,
        handle_unknown="infrequent",
        target_type="auto",
        cv=5,
        remainder="scale",
        hidden_layer_sizes=(64, 32),
        activation="relu",
        dropout=0.0,
        learning_rate=1e-3,
        batch_size=256,
        epochs=10,
        early_stopping=False,
        validation_fraction=0.1,
        patience=3,
        tol=1e-4,
        weight_decay=0.0,
        dtype=np.float32,
        random_state=None,
        device="cpu",
        verbose=0,
        callbacks=None,
        n_jobs=1,
    ):
        self.categorical_features = categorical_features
        self.embedding_dims = embedding_dims
        self.min_frequency = min_frequency
        self.handle_unknown = handle_unknown
        self.target_type = target_type
        self.cv = cv
        self.remainder = remainder
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.dropout = dropout
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.epochs = epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.tol = tol
        self.weight_decay = weight_decay
        self.dtype = dtype
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.callbacks = callbacks
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ tags
    def __setstate__(self, state):
        super().__setstate__(state)  # the declared schema first: one entry per embedded column
        if "embeddings_" in state:
            _check_column_tables(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = [np.dtype(self.dtype).name]
        return tags

    # ------------------------------------------------------------------ input
    def _check_X(self, X, reset):
        if _is_dataframe(X):
            return self._check_frame(X, reset)
        return validate_data(self, X, reset=reset, dtype=None, ensure_all_finite="allow-nan")

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the categories, train the network on ``y`` and keep its embedding tables.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Categorical columns (any hashable values; missing values are a
            category) and numeric columns.
        y : array-like of shape (n_samples,)
            Target: class labels or real values (see ``target_type``).

        Returns
        -------
        self : EntityEmbedder
            The fitted estimator.

        Raises
        ------
        TrainingDivergedError
            (a ``ValueError``) if the loss becomes NaN or infinite; lower ``learning_rate``.
        ValueError
            If ``X`` is empty, has no categorical column, a numeric column
            that is not numeric or has infinity, or ``y`` is missing, of an
            unsupported type, holds missing labels (None, NaN, ``pd.NA``; the
            message gives the first position) or a single class.
        """
        self._fit(X, y, crossfit=False)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y):
        """Fit on all rows, and embed each row with a network not trained on it.

        The rows are split into ``cv`` folds (stratified for classification);
        each fold is embedded by a network trained on the other folds,
        aligned to the final network's embedding space. The result is
        therefore **not** ``fit(X, y).transform(X)`` (by design, as
        ``sklearn.preprocessing.TargetEncoder.fit_transform``): those
        in-sample embeddings would leak ``y`` into a model trained on them.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            The table, as for :meth:`fit`.
        y : array-like of shape (n_samples,)
            Target: class labels or real values (see ``target_type``).

        Returns
        -------
        X_embedded : numpy.ndarray of shape (n_samples, n_features_out), ``dtype``
            Out-of-fold embeddings, in the layout of :meth:`transform`.

        Raises
        ------
        TrainingDivergedError, ValueError
            As :meth:`fit`; also if a fold would be empty (fewer rows than ``cv``).
        """
        return self._fit(X, y, crossfit=True)

    def _fit(self, X, y, crossfit):
        # The final network trains through the shared loop (BaseNeuralTabularEmbedder._run_epochs);
        # the cv fold networks of the cross fitting run the same epoch step for a fixed
        # number of epochs, without history or callbacks (_entity_fit.cross_fit).
        # a failed fit (divergence, a raising callback, KeyboardInterrupt) leaves the
        # estimator exactly as it was
        with restore_on_failure(self):
            return self._fit_unsafe(X, y, crossfit)

    def _fit_unsafe(self, X, y, crossfit):
        # ---- every check before any expensive work
        device = resolve_compute(self).device
        hidden = self._hidden_sizes()
        np.dtype(self.dtype)
        for key in ("categorical_features_", "categories_", "model_", "history_"):
            self.__dict__.pop(key, None)
        arrays = self._check_fit_data(X, y, crossfit)
        config = self._network_config(arrays, hidden)
        seeds = self._draw_seeds(arrays.codes.shape[0])
        self.device_ = device
        with limit_threads(self.n_jobs, modules=("torch",)):
            tables = self._train_final_network(arrays, config, seeds)
            out = self._cross_fit(arrays, config, tables, seeds) if crossfit else None
        self.model_.cpu().eval()
        self.embeddings_ = tables
        kept = 0 if self.remainder == "drop" else self.numeric_features_.size
        self._n_features_out = sum(self.embedding_dims_) + kept
        if out is None:
            return self
        return out

    def _check_fit_data(self, X, y, crossfit):
        """Check ``X`` and ``y``, learn the columns and categories; the :class:`TrainingArrays`."""
        X = self._check_X(X, reset=True)
        n_samples = X.shape[0]
        kind, classes, target = self._check_target(y, n_samples)
        if crossfit and n_samples < self.cv:
            raise ValueError(
                f"fit_transform cross-fits with cv={self.cv} folds but X has only {n_samples} "
                "rows; lower cv or use fit(X, y).transform(X)."
            )
        self.categorical_features_, self.numeric_features_ = self._select_columns(X)
        codes, cards = self._group_categories(X, n_samples)
        widths = self._widths(cards)
        numeric = self._numeric(X)
        scaled = self._standardise(numeric)
        self.numeric_mean_, self.numeric_scale_ = scaled.mean, scaled.scale
        self.target_type_ = kind
        self.embedding_dims_ = list(widths)
        if classes is not None:
            self.classes_ = classes
        else:
            self.__dict__.pop("classes_", None)
        return TrainingArrays(codes, numeric, scaled.z, target)

    def _network_config(self, arrays, hidden):
        """Keyword arguments of the final network and of every fold network."""
        return dict(
            cardinalities=[len(c) + 1 for c in self.categories_],
            embedding_dims=list(self.embedding_dims_),
            n_numeric=arrays.z.shape[1],
            n_outputs=len(self.classes_) if self.target_type_ == "multiclass" else 1,
            hidden_layer_sizes=hidden,
            activation=self.activation,
            dropout=float(self.dropout),
        )

    def _draw_seeds(self, n_samples):
        """The :class:`FitSeeds` drawn from ``random_state``.

        The final network's draws come first, so fit and fit_transform agree.
        """
        rng = check_random_state(self.random_state)
        init_seed = seed_from_random_state(rng)
        shuffle_seed = seed_from_random_state(rng)
        split = self._validation_split(rng, n_samples)
        fold_seed = seed_from_random_state(rng)
        return FitSeeds(init_seed, shuffle_seed, split, fold_seed)

    def _train_final_network(self, arrays, config, seeds):
        """Train ``model_`` through the shared loop; its embedding tables."""
        from ..nn.entity import EntityEmbeddingNet

        split = seeds.split
        train_rows = None if split is None else split[0]
        train = arrays.tensors(self.device_, train_rows)
        valid = None if split is None else arrays.tensors(self.device_, split[1])
        codes = arrays.codes if train_rows is None else arrays.codes[train_rows]
        counts = code_counts(codes, self.categories_)
        with self._rng_fork(seeds.init):
            self.model_ = EntityEmbeddingNet(**config).to(self.device_)
            self.history_ = []
            step = EntityEpochStep(self, self.model_, train, valid, seeds.shuffle)
            self._run_epochs(
                step,
                validated=valid is not None,
                # callbacks see the current tables
                before_callbacks=self._publish_tables(counts) if self.callbacks else None,
            )
        return embedding_tables(self.model_, counts)

    def _cross_fit(self, arrays, config, tables, seeds):
        """Out-of-fold embeddings: each fold embedded by a network that never saw it."""
        splitter = (
            KFold(self.cv, shuffle=True, random_state=seeds.fold)
            if self.target_type_ == "continuous"
            else StratifiedKFold(self.cv, shuffle=True, random_state=seeds.fold)
        )
        fold_epochs = self.best_epoch_ if seeds.split is not None else len(self.history_)
        return cross_fit(
            self,
            splitter.split(arrays.codes, arrays.target),
            arrays.codes,
            arrays.numeric,
            functools.partial(arrays.tensors, self.device_),
            config,
            tables,
            init_seed=seeds.init,
            shuffle_seed=seeds.shuffle,
            epochs=max(fold_epochs, 1),
        )

    def _publish_tables(self, counts):
        def publish(record):
            self.embeddings_ = embedding_tables(self.model_, counts)

        return publish

    def _assemble(self, codes, numeric, tables):
        blocks = [tables[k][codes[:, k]] for k in range(codes.shape[1])]
        if self.remainder == "scale":
            blocks.append(np.nan_to_num((numeric - self.numeric_mean_) / self.numeric_scale_))
        elif self.remainder == "passthrough":
            blocks.append(numeric)
        return np.concatenate(blocks, axis=1).astype(self.dtype, copy=False)

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """Embed rows with the final network's tables.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            The columns seen in ``fit``.

        Returns
        -------
        X_embedded : numpy.ndarray of shape (n_samples, n_features_out), ``dtype``
            Per embedded column (in input order) its table row, then the
            numeric columns per ``remainder``. Unknown and infrequent
            categories get row 0.

        Raises
        ------
        ValueError
            With ``handle_unknown="error"``, if a column holds a category not
            seen in ``fit``; if the columns differ from ``fit``'s.
        """
        check_is_fitted(self, "embeddings_")
        X = self._check_X(X, reset=False)
        return self._assemble(self._codes(X), self._numeric(X), self.embeddings_)

    def get_feature_names_out(self, input_features=None):
        """Output names: ``<column>_emb<k>`` per embedded column, then the numeric columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input column names; default ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        names : numpy.ndarray of str (object)
            One name per output column, in the order of :meth:`transform`'s columns.
        """
        check_is_fitted(self, "embeddings_")
        names = _check_feature_names_in(self, input_features)
        out = [
            f"{names[j]}_emb{i}"
            for j, width in zip(self.categorical_features_, self.embedding_dims_, strict=True)
            for i in range(width)
        ]
        if self.remainder != "drop":
            out += [str(names[j]) for j in self.numeric_features_]
        return np.asarray(out, dtype=object)


def _check_column_tables(est):
    """Refuse stored per-column tables that ``transform`` would index past or read as NaN.

    Column ``k``'s categories are a 1-D array of distinct values (category
    ``i`` has row ``i + 1``), and its table has one row more (row 0: unknown and
    infrequent categories) and ``embedding_dims_[k]`` finite columns.
    """
    import pandas as pd

    owner = type(est).__name__
    infrequent = getattr(
        est, "infrequent_categories_", [np.empty(0, object)] * len(est.categories_)
    )
    if not isinstance(infrequent, list) or len(infrequent) != len(est.categories_):
        raise refuse_state(owner, "infrequent_categories_", "is not a list, one entry per column")
    columns = zip(est.categories_, infrequent, est.embedding_dims_, est.embeddings_, strict=False)
    for k, (cats, rare, width, table) in enumerate(columns):
        for attr, value in (("categories_", cats), ("infrequent_categories_", rare)):
            if not isinstance(value, np.ndarray) or value.ndim != 1:
                raise refuse_state(owner, f"{attr}[{k}]", "is not a 1-D array of categories")
        if not pd.Index(cats).is_unique:
            raise refuse_state(owner, f"categories_[{k}]", "holds a category twice")
        if not isinstance(width, Integral) or isinstance(width, bool) or width < 1:
            raise refuse_state(owner, f"embedding_dims_[{k}]", f"is {width!r}, not a width >= 1")
        shape = (len(cats) + 1, int(width))
        if not isinstance(table, np.ndarray) or table.dtype.kind != "f" or table.shape != shape:
            got = getattr(table, "shape", type(table).__name__)
            raise refuse_state(
                owner,
                f"embeddings_[{k}]",
                f"is {got}, not a float table of {shape} (len(categories_[{k}]) + 1 rows, "
                f"embedding_dims_[{k}] columns)",
            )
        if not np.isfinite(table).all():
            raise refuse_state(owner, f"embeddings_[{k}]", "holds NaN or infinite values")

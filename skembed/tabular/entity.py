"""EntityEmbedder: supervised embeddings of categorical columns (Guo & Berkhahn 2016)."""

from __future__ import annotations

import contextlib
import time
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ..callbacks import make_record, run_callbacks
from ..exceptions import diverged
from ..utils._compute import limit_threads, resolve_device
from ..utils._progress import progress, report_epoch
from ..utils._seeding import torch_generator
from ..utils._state import restore_on_failure
from ._base import TABULAR_PARAMETER_CONSTRAINTS
from ._preprocess import _is_dataframe, column_kinds

__all__ = ["EntityEmbedder", "embedding_width"]

#: rows per forward pass when computing the validation loss
_INFERENCE_BATCH = 8192
#: autoencoder parameters EntityEmbedder does not have
_NOT_SHARED = ("n_components", "batch_norm", "preprocessor", "warm_start")
#: widest table the "auto" rule gives (Guo & Berkhahn's tables are at most this wide)
MAX_AUTO_WIDTH = 50


def embedding_width(cardinality):
    """Width the ``embedding_dims="auto"`` rule gives a column: ``min(50, (cardinality + 1) // 2)``.

    Parameters
    ----------
    cardinality : int
        Number of distinct values of the column in ``fit`` (missing values
        count as one value, infrequent ones are counted).

    Returns
    -------
    width : int
        At least 1.

    Examples
    --------
    >>> [embedding_width(c) for c in (1, 2, 3, 10, 99, 100, 4000)]
    [1, 1, 2, 5, 50, 50, 50]
    """
    return int(max(1, min(MAX_AUTO_WIDTH, (int(cardinality) + 1) // 2)))


def _missing_to_nan(values):
    """Object array with every None/NaN/pd.NA/NaT replaced by ``float('nan')`` (one category)."""
    import pandas as pd

    values = np.asarray(values, dtype=object)
    mask = np.asarray(pd.isna(values), dtype=bool)
    if mask.any():
        values = values.copy()
        values[mask] = np.nan
    return values


@contextlib.contextmanager
def _seeded_torch(seed, device):
    """Fork the global torch RNG (weight init, dropout), seed it, restore it afterwards."""
    import torch

    devices = [int(device.split(":")[1])] if device.startswith("cuda") else []
    with torch.random.fork_rng(devices=devices, device_type="cuda"):
        torch.manual_seed(int(seed))
        yield


def _train_network(model, train, valid, *, est, seed, epochs, history, on_epoch=None):
    """AdamW over in-memory tensors; return ``best_epoch``. Small on purpose, see ``fit``.

    ``train``/``valid`` are ``(codes, numeric, target)`` tensor triples on the
    model's device (``valid`` may be None). Every epoch appends a
    :func:`~skembed.callbacks.make_record` record to ``history`` and calls
    ``on_epoch(record, best_epoch)``; a true return stops. With ``est.early_stopping`` and
    ``valid``, training also stops after ``est.patience`` epochs without a
    relative improvement of ``est.tol`` and the best weights are restored.
    """
    import torch

    from ..nn.entity import supervised_loss

    codes, numeric, target = train
    n = codes.shape[0]
    device = codes.device
    gen = torch_generator(seed, str(device))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=est.learning_rate, weight_decay=est.weight_decay
    )
    bs = int(min(est.batch_size, n))
    kind = est.target_type_
    best, best_epoch, best_state, bad = np.inf, 0, None, 0
    first = len(history) + 1
    bar = progress(total=epochs, verbose=est.verbose, desc=type(est).__name__, unit="epoch")
    for epoch in range(first, first + epochs):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(n, generator=gen, device=device)
        c, x, y = codes[perm], numeric[perm], target[perm]
        total = torch.zeros((), device=device)
        for start in range(0, n, bs):
            stop = start + bs
            loss = supervised_loss(model(c[start:stop], x[start:stop]), y[start:stop], kind)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach() * min(bs, n - start)
        loss = float(total) / n
        if not np.isfinite(loss):
            bar.close()
            raise diverged(
                est, epoch=epoch, loss=loss, parameter="learning_rate", value=est.learning_rate
            )
        valid_loss = None
        if valid is not None:
            model.eval()
            vsum = torch.zeros((), device=device)
            with torch.inference_mode():
                for s in range(0, valid[0].shape[0], _INFERENCE_BATCH):
                    vb = [t[s : s + _INFERENCE_BATCH] for t in valid]
                    vsum += supervised_loss(model(vb[0], vb[1]), vb[2], kind) * vb[0].shape[0]
            valid_loss = float(vsum) / valid[0].shape[0]
        record = make_record(epoch, loss, t0, valid_loss=valid_loss)
        history.append(record)
        monitored = loss if valid_loss is None else valid_loss
        if monitored < best - est.tol * abs(best if np.isfinite(best) else 0.0):
            best, best_epoch, bad = monitored, epoch, 0
            if est.early_stopping and valid is not None:
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            bad += 1
        report_epoch(bar, record, est.verbose)
        model.eval()  # callbacks may transform with the current weights
        stop = bool(on_epoch(record, best_epoch)) if on_epoch is not None else False
        if stop or (est.early_stopping and valid is not None and bad >= est.patience):
            break
    bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return best_epoch


def _procrustes(source, target, weights):
    """Rotate (and shift) ``source`` rows onto ``target`` rows: weighted orthogonal Procrustes.

    Returns ``(source - mu_s) @ R + mu_t`` with ``R`` orthogonal minimising
    ``sum_i w_i * ||(s_i - mu_s) R - (t_i - mu_t)||^2`` (weighted means ``mu``).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.sum() <= 0:
        return source.copy()
    w = w / w.sum()
    mu_s = w @ source.astype(np.float64)
    mu_t = w @ target.astype(np.float64)
    s, t = source - mu_s, target - mu_t
    u, _, vt = np.linalg.svd(s.T @ (w[:, None] * t))
    return ((s @ (u @ vt)) + mu_t).astype(source.dtype)


class EntityEmbedder(TransformerMixin, BaseEstimator):
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
    patience : int, default=3
    tol : float, default=1e-4
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
        "dtype": "no_validation",
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
            validate_data(self, X, reset=reset, skip_check_array=True)
            for axis, what in ((0, "sample"), (1, "feature")):
                if X.shape[axis] == 0:
                    raise ValueError(
                        f"Found array with 0 {what}(s) (shape={X.shape}) while a minimum of 1 "
                        f"is required by {type(self).__name__}."
                    )
            return X
        return validate_data(self, X, reset=reset, dtype=None, ensure_all_finite="allow-nan")

    @staticmethod
    def _column(X, j):
        return X.iloc[:, j].to_numpy() if _is_dataframe(X) else np.asarray(X)[:, j]

    def _select_columns(self, X):
        n = X.shape[1]
        spec = self.categorical_features
        if isinstance(spec, str) and spec == "all":
            cat = np.arange(n)
        elif isinstance(spec, str):
            kinds = column_kinds(X)[1]
            if _is_dataframe(X):
                names = list(X.columns)
                kinds = [names.index(c) for c in kinds]
            cat = np.asarray(kinds, dtype=int)
        else:
            spec = np.asarray(spec)
            if spec.dtype.kind == "b":
                if spec.shape != (n,):
                    raise ValueError(
                        f"categorical_features as a boolean mask must have {n} entries (one "
                        f"per column), got shape {spec.shape}."
                    )
                cat = np.flatnonzero(spec)
            elif spec.dtype.kind in "iu":
                if spec.size and (spec.min() < -n or spec.max() >= n):
                    raise ValueError(
                        f"categorical_features has positions outside [0, {n}): {spec.tolist()}."
                    )
                cat = np.unique(spec % n)
            elif spec.dtype.kind in "UO":
                names = getattr(self, "feature_names_in_", None)
                if names is None:
                    raise ValueError(
                        "categorical_features holds column names but X has no column names; "
                        "pass positions or a boolean mask, or fit on a DataFrame."
                    )
                missing = [s for s in spec.tolist() if s not in set(names)]
                if missing:
                    raise ValueError(
                        f"categorical_features names columns not in X: {missing}. Columns "
                        f"are {list(names)}."
                    )
                cat = np.unique([list(names).index(s) for s in spec.tolist()])
            else:
                raise ValueError(
                    "categorical_features must be 'from_dtype', 'all', or an array of column "
                    f"positions, names or a boolean mask; got {self.categorical_features!r}."
                )
        if cat.size == 0:
            raise ValueError(
                f"{type(self).__name__} found no categorical column in X (categorical_features="
                f"{self.categorical_features!r} selects object, category, string and bool "
                "columns). Pass categorical_features=[...] naming the columns to embed, or 'all'."
            )
        return cat.astype(np.intp), np.setdiff1d(np.arange(n), cat).astype(np.intp)

    def _widths(self, cards):
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        spec = self.embedding_dims
        widths = [embedding_width(c) for c in cards]
        if isinstance(spec, Integral):
            return [int(spec)] * len(cards)
        if isinstance(spec, dict):
            positions = list(self.categorical_features_)
            for key, width in spec.items():
                j = names.index(key) if names is not None and key in names else key
                if not isinstance(j, Integral) or int(j) not in positions:
                    raise ValueError(
                        f"embedding_dims has key {key!r}, which is not an embedded column; "
                        f"the embedded columns are {self._cat_names()}."
                    )
                if not isinstance(width, Integral) or width < 1:
                    raise ValueError(
                        f"embedding_dims[{key!r}] must be a positive int, got {width!r}."
                    )
                widths[positions.index(int(j))] = int(width)
        return widths

    def _input_names(self):
        return _check_feature_names_in(self, None)

    def _cat_names(self):
        names = self._input_names()
        return [str(names[j]) for j in self.categorical_features_]

    def _numeric(self, X):
        """Numeric columns as float64 ``(n_samples, n_numeric)``; infinity is an error."""
        cols = self.numeric_features_
        if cols.size == 0:
            return np.zeros((X.shape[0], 0))
        try:
            if _is_dataframe(X):
                values = X.iloc[:, cols].to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                values = np.asarray(X)[:, cols].astype(np.float64)
        except (TypeError, ValueError) as exc:
            names = self._input_names()
            raise ValueError(
                f"The columns {[str(names[j]) for j in cols]} are treated as numeric but do not "
                f"all convert to float ({exc}); list the categorical ones in "
                "categorical_features."
            ) from exc
        if np.isinf(values).any():
            raise ValueError(
                "Input contains infinity in a numeric column; replace it or treat the column "
                "as categorical (categorical_features)."
            )
        return values

    def _codes(self, X):
        """Row codes ``(n_samples, n_embedded)`` int64: 0 unknown/infrequent, i + 1 category i."""
        import pandas as pd

        out = np.empty((X.shape[0], len(self.categorical_features_)), dtype=np.int64)
        for k, j in enumerate(self.categorical_features_):
            values = _missing_to_nan(self._column(X, j))
            idx = pd.Index(self.categories_[k]).get_indexer(values)
            if self.handle_unknown == "error" and (idx < 0).any():
                seen = pd.Index(self.infrequent_categories_[k]).get_indexer(values[idx < 0])
                if (seen < 0).any():
                    unknown = pd.unique(values[idx < 0][seen < 0])[:5].tolist()
                    raise ValueError(
                        f"Found unknown categories {unknown} in column {self._cat_names()[k]!r} "
                        "during transform; set handle_unknown='infrequent' to embed them with "
                        "the unknown row."
                    )
            out[:, k] = idx + 1
        return out

    # ------------------------------------------------------------------ target
    def _check_target(self, y, n_samples):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        y = column_or_1d(y, warn=True)
        if y.dtype == object:
            import pandas as pd

            missing = np.flatnonzero(pd.isna(y))
            if missing.size:
                raise ValueError(
                    f"y has {missing.size} missing label(s) (None, NaN or pd.NA), the first at "
                    f"position {missing[0]}; drop those rows or fill them before fitting "
                    f"{type(self).__name__}."
                )
        check_consistent_length(np.empty(n_samples), y)
        kind = self.target_type
        if kind == "auto":
            kind = type_of_target(y, input_name="y")
            if kind not in ("binary", "multiclass", "continuous"):
                raise ValueError(
                    f"Unknown label type: target of type {kind!r}; {type(self).__name__} "
                    "supports 'binary', 'multiclass' and 'continuous' targets (set target_type)."
                )
        if kind == "continuous":
            try:
                target = np.asarray(y, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"target_type='continuous' but y is not numeric: {exc}") from exc
            if not np.isfinite(target).all():
                raise ValueError("Input y contains NaN or infinity.")
            std = target.std()
            target = (target - target.mean()) / (std if std > 0 else 1.0)
            return kind, None, target.astype(np.float32)
        if np.asarray(y).dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity.")
        classes, target = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                f"y has only one class ({classes[0]!r}): {type(self).__name__} learns its "
                "embeddings by predicting y, which needs at least 2 classes. Fit on data with "
                "several classes, or give a continuous target with target_type='continuous'."
            )
        if kind == "binary" and classes.size > 2:
            raise ValueError(
                f"target_type='binary' but y has {classes.size} classes; use 'multiclass'."
            )
        return kind, classes, target.astype(np.float32)

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
        y : array-like of shape (n_samples,)

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
        # Why not BaseTabularEmbedder's loop: the cross fitting trains cv + 1
        # networks on (categorical codes, numerics, target) triples, the fold
        # networks without callbacks or history, while the base trains one
        # autoencoder on X alone and writes its state on self.
        # a failed fit (divergence, a raising callback, KeyboardInterrupt) leaves the
        # estimator exactly as it was
        with restore_on_failure(self):
            return self._fit_unsafe(X, y, crossfit)

    def _fit_unsafe(self, X, y, crossfit):
        import pandas as pd

        # ---- every check before any expensive work
        device = resolve_device(self.device)
        hidden = tuple(int(h) for h in self.hidden_layer_sizes)
        if any(h < 1 for h in hidden):
            raise ValueError(
                f"hidden_layer_sizes must hold positive ints, got {self.hidden_layer_sizes!r}."
            )
        np.dtype(self.dtype)
        for key in ("categorical_features_", "categories_", "model_", "history_"):
            self.__dict__.pop(key, None)
        X = self._check_X(X, reset=True)
        n_samples = X.shape[0]
        kind, classes, target = self._check_target(y, n_samples)
        if crossfit and n_samples < self.cv:
            raise ValueError(
                f"fit_transform cross-fits with cv={self.cv} folds but X has only {n_samples} "
                "rows; lower cv or use fit(X, y).transform(X)."
            )
        cat, num = self._select_columns(X)
        self.categorical_features_, self.numeric_features_ = cat, num

        # ---- categories
        threshold = (
            self.min_frequency
            if isinstance(self.min_frequency, Integral)
            else self.min_frequency * n_samples
        )
        categories, infrequent, cards = [], [], []
        codes = np.empty((n_samples, cat.size), dtype=np.int64)
        for k, j in enumerate(cat):
            raw, uniques = pd.factorize(_missing_to_nan(self._column(X, j)), use_na_sentinel=False)
            counts = np.bincount(raw, minlength=len(uniques))
            frequent = counts >= threshold
            new_code = np.zeros(len(uniques), dtype=np.int64)
            new_code[frequent] = np.arange(1, frequent.sum() + 1)
            codes[:, k] = new_code[raw]
            uniques = np.asarray(uniques, dtype=object)
            categories.append(uniques[frequent])
            infrequent.append(uniques[~frequent])
            cards.append(len(uniques))
        self.categories_, self.infrequent_categories_ = categories, infrequent
        widths = self._widths(cards)

        numeric = self._numeric(X)
        mean = np.nanmean(numeric, axis=0) if numeric.shape[1] else np.zeros(0)
        scale = np.nanstd(numeric, axis=0) if numeric.shape[1] else np.zeros(0)
        mean = np.where(np.isfinite(mean), mean, 0.0)
        scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
        self.numeric_mean_, self.numeric_scale_ = mean, scale
        z = np.nan_to_num((numeric - mean) / scale, nan=0.0).astype(np.float32)

        self.target_type_ = kind
        self.embedding_dims_ = list(widths)
        if classes is not None:
            self.classes_ = classes
        else:
            self.__dict__.pop("classes_", None)
        n_outputs = len(classes) if kind == "multiclass" else 1
        config = dict(
            cardinalities=[len(c) + 1 for c in categories],
            embedding_dims=widths,
            n_numeric=z.shape[1],
            n_outputs=n_outputs,
            hidden_layer_sizes=hidden,
            activation=self.activation,
            dropout=float(self.dropout),
        )

        # ---- seeds: the final network's draws come first, so fit and fit_transform agree
        rng = check_random_state(self.random_state)
        init_seed, shuffle_seed = (int(s) for s in rng.randint(0, 2**31 - 1, size=2))
        valid_idx = None
        if self.early_stopping:
            n_valid = int(np.ceil(self.validation_fraction * n_samples))
            if n_samples - n_valid < 1:
                warnings.warn(
                    f"early_stopping needs at least 2 rows; training on all {n_samples} rows "
                    "without validation.",
                    UserWarning,
                    stacklevel=3,
                )
            else:
                perm = rng.permutation(n_samples)
                valid_idx = np.sort(perm[:n_valid])
        fold_seed = int(rng.randint(0, 2**31 - 1))

        import torch

        self.device_ = device

        def tensors(rows):
            c = codes if rows is None else codes[rows]
            x = z if rows is None else z[rows]
            t = target if rows is None else target[rows]
            return (
                torch.from_numpy(np.ascontiguousarray(c)).to(device),
                torch.from_numpy(np.ascontiguousarray(x)).to(device),
                torch.from_numpy(np.ascontiguousarray(t)).to(device),
            )

        def run_callbacks_on(record, best_epoch):
            self.embeddings_ = self._tables(model, codes_train_counts)
            self.n_epochs_, self.best_epoch_ = len(history), best_epoch
            return run_callbacks(self.callbacks, self, record)

        with limit_threads(self.n_jobs, modules=("torch",)):
            from ..nn.entity import EntityEmbeddingNet

            # ---- the final network
            if valid_idx is not None:
                train_rows = np.setdiff1d(np.arange(n_samples), valid_idx)
                train, valid = tensors(train_rows), tensors(valid_idx)
            else:
                train_rows, train, valid = None, tensors(None), None
            codes_train_counts = self._counts(codes if train_rows is None else codes[train_rows])
            with _seeded_torch(init_seed, device):
                model = EntityEmbeddingNet(**config).to(device)
                history = []
                self.model_, self.history_ = model, history
                best_epoch = _train_network(
                    model,
                    train,
                    valid,
                    est=self,
                    seed=shuffle_seed,
                    epochs=self.epochs,
                    history=history,
                    on_epoch=run_callbacks_on if self.callbacks else None,
                )
            tables = self._tables(model, codes_train_counts)
            del train, valid

            # ---- cross fitting: each fold embedded by a network that never saw it
            out = None
            if crossfit:
                fold_epochs = best_epoch if valid_idx is not None else len(history)
                splitter = (
                    KFold(self.cv, shuffle=True, random_state=fold_seed)
                    if kind == "continuous"
                    else StratifiedKFold(self.cv, shuffle=True, random_state=fold_seed)
                )
                parts = []
                for f, (tr, te) in enumerate(splitter.split(codes, target)):
                    counts = self._counts(codes[tr])
                    fold_codes = codes[te].copy()
                    for k in range(cat.size):
                        # categories the fold network never saw are unknown to it
                        fold_codes[:, k][counts[k][fold_codes[:, k]] == 0] = 0
                    with _seeded_torch(init_seed, device):
                        net = EntityEmbeddingNet(**config).to(device)
                        _train_network(
                            net,
                            tensors(tr),
                            None,
                            est=self,
                            seed=shuffle_seed + 1 + f,
                            epochs=max(fold_epochs, 1),
                            history=[],
                        )
                    fold_tables = [
                        _procrustes(t, ref, w)
                        for t, ref, w in zip(self._tables(net, counts), tables, counts, strict=True)
                    ]
                    parts.append((te, self._assemble(fold_codes, numeric[te], fold_tables)))
                out = np.empty((n_samples, parts[0][1].shape[1]), dtype=self.dtype)
                for te, block in parts:
                    out[te] = block

        model.cpu().eval()
        self.model_ = model
        self.embeddings_ = tables
        self.history_ = history
        self.n_epochs_ = len(history)
        self.best_epoch_ = best_epoch
        self._n_features_out = sum(widths) + (0 if self.remainder == "drop" else num.size)
        if out is None:
            return self
        return out

    def _counts(self, codes):
        """Per embedded column, training rows per code (row 0: infrequent rows)."""
        return [
            np.bincount(codes[:, k], minlength=len(self.categories_[k]) + 1)
            for k in range(codes.shape[1])
        ]

    def _tables(self, model, counts):
        """Numpy copies of the tables; an untrained unknown row becomes the weighted mean row."""
        tables = []
        for table, count in zip(model.embeddings, counts, strict=True):
            weight = table.weight.detach().float().cpu().numpy().copy()
            if count[0] == 0 and count[1:].sum() > 0:
                weight[0] = (count[1:] / count[1:].sum()) @ weight[1:]
            tables.append(weight)
        return tables

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

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = dict(super().__getstate__())
        model = state.pop("model_", None)
        if model is not None:
            state["_packed_model_"] = {
                "config": dict(model.config),
                "state_dict": {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()},
            }
        return state

    def __setstate__(self, state):
        packed = state.pop("_packed_model_", None)
        super().__setstate__(state)
        if packed is None:
            return
        from ..nn._checked import build_checked
        from ..nn.entity import EntityEmbeddingNet

        if not isinstance(packed, dict) or not isinstance(packed.get("config"), dict):
            raise ValueError(
                "EntityEmbedder: the stored model is damaged or was not written by skembed."
            )
        config = packed["config"]
        self.model_ = build_checked(
            lambda: EntityEmbeddingNet(**config),
            packed.get("state_dict"),
            "EntityEmbedder",
            config,
        )

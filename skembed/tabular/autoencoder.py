"""AutoencoderEmbedder: deterministic neural codes of tabular rows."""

from __future__ import annotations

from ._base import BaseTabularEmbedder


class AutoencoderEmbedder(BaseTabularEmbedder):
    """Autoencoder embedding of tabular rows (numeric arrays or mixed-type DataFrames).

    An encoder MLP compresses each preprocessed row into an
    ``n_components``-wide code; a mirrored decoder reconstructs the row from
    it. The network is trained with AdamW on the mixed reconstruction loss;
    ``transform`` returns the codes.

    Parameters
    ----------
    n_components : int, default=2
        Width of the code (the embedding).
    hidden_layer_sizes : tuple of int, default=(64, 32)
        Encoder hidden widths; the decoder mirrors them. ``()`` gives a linear
        autoencoder (the PCA subspace).
    activation : {"relu", "gelu", "tanh", "elu", "silu", "leaky_relu"}, default="relu"
        Nonlinearity after each hidden layer, torch's module of that name
        with its defaults (``"leaky_relu"``: slope 0.01; ``"elu"``: alpha 1).
    dropout : float in [0, 1), default=0.0
        Dropout after each hidden activation (training only).
    batch_norm : bool, default=False
        Batch normalisation before each hidden activation. With it, a
        trailing batch of a single row is skipped in that epoch.
    learning_rate : float, default=1e-3
        AdamW step size. Lower it if training diverges.
    batch_size : int, default=256
        Rows per gradient step.
    epochs : int, default=100
        Passes over the training rows (per ``fit`` call, also with
        ``warm_start``); an upper bound with ``early_stopping`` or a stopping
        callback.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows, stop when the
        validation loss has not improved by ``tol`` (relative) for
        ``patience`` epochs, and restore the best weights.
    validation_fraction : float in (0, 1), default=0.1
        Share of the rows held out for early stopping.
    patience : int, default=10
        Epochs without improvement before early stopping ends training.
    tol : float, default=1e-4
        Relative improvement that resets the patience counter.
    weight_decay : float, default=0.0
        AdamW decoupled weight decay.
    preprocessor : "auto", transformer or None, default="auto"
        ``"auto"`` builds in ``fit`` a ``ColumnTransformer`` of
        :class:`~skembed.preprocessing.ScalerEmbedder` (numeric columns,
        median imputation plus a missing-indicator column) and
        :class:`~skembed.preprocessing.OneHotEmbedder` (object, category,
        string and bool columns; missing values as their own category;
        categories unseen in ``fit`` become an all-zero block with a
        ``UserWarning``). Any scikit-learn transformer may be given instead
        (cloned and fitted; all its output columns get the squared-error
        loss), or ``None`` for numeric input used as is (NaN is then an error).
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, shuffling, dropout and the validation
        split; the same int gives identical codes on the CPU.
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default="cpu"
        Resolved in ``fit`` into ``device_``.
    verbose : int, default=0
        0: silent; 1: a progress bar over epochs with the train/validation
        loss; 2: also one line per epoch.
    warm_start : bool, default=False
        Continue training the fitted network (and keep the fitted
        preprocessor) on the next ``fit`` call, appending to ``history_``.
        The optimiser state is rebuilt. A warm-start ``fit`` that fails
        leaves the previous fit untouched.
    callbacks : list of callable or None, default=None
        Each is called after every epoch as ``callback(estimator, record)``
        (:mod:`skembed.callbacks`) with ``record`` the new ``history_`` entry
        and ``model_`` holding the epoch's weights; returning ``True`` stops
        training.
    n_jobs : int or None, default=1
        Threads for torch/BLAS during ``fit``/``transform``. ``None``:
        ``OMP_NUM_THREADS`` if set, else every core (the library-wide
        meaning, :func:`skembed.utils._compute.resolve_n_jobs`). One by default: the
        per-batch matrices of tabular networks are too small for intra-op
        parallelism to pay off (it was 100x slower on a loaded 2-core
        machine); raise it for wide networks and large batches.

    Attributes
    ----------
    model_ : skembed.nn.autoencoder.Autoencoder
        The trained torch module (in eval mode, on ``device_``).
    preprocessor_ : TabularPreprocessor, transformer or None
        The fitted preprocessor.
    history_ : list of dict
        One record per epoch (:func:`skembed.callbacks.make_record`):
        ``epoch`` (1-based, continued by ``warm_start``), ``loss`` (mean
        training loss per row), ``seconds`` and ``valid_loss`` (None without
        early stopping).
    n_epochs_ : int
        Epochs run in total.
    best_epoch_ : int
        Epoch with the lowest monitored loss (validation loss with early
        stopping, else training loss); its weights are restored with early stopping.
    device_ : str
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str
        Only when ``X`` had string column names.

    Raises
    ------
    skembed.exceptions.TrainingDivergedError
        A ``ValueError`` raised by ``fit`` when the loss becomes NaN/inf; the
        message points to ``learning_rate``. The estimator is then left as it
        was before that ``fit``.

    See Also
    --------
    VAEEmbedder : probabilistic codes; can generate rows.
    sklearn.decomposition.PCA : the linear baseline.

    Notes
    -----
    Per-row loss on the preprocessed row ``x`` and decoder output ``x_hat``::

        L(x) = 0.5 * sum_{j numeric} (x_hat_j - x_j)^2
               + sum_{groups g} -sum_{c in g} x_c * log softmax(x_hat_g)_c

    (a unit-variance Gaussian per numeric column and a categorical
    distribution per one-hot group). ``score`` returns ``-mean(L)``.

    References
    ----------
    Hinton & Salakhutdinov (2006), "Reducing the Dimensionality of Data with
    Neural Networks", Science 313(5786).

    Examples
    --------
    >>> import numpy as np
    >>> from skembed.tabular import AutoencoderEmbedder
    >>> X = np.random.RandomState(0).normal(size=(100, 5))
    >>> ae = AutoencoderEmbedder(n_components=2, epochs=5, random_state=0).fit(X)
    >>> ae.transform(X).shape
    (100, 2)
    >>> ae.inverse_transform(ae.transform(X[:3])).shape
    (3, 5)
    """

    _module_kind = "autoencoder"

    def __init__(
        self,
        n_components=2,
        *,
        hidden_layer_sizes=(64, 32),
        activation="relu",
        dropout=0.0,
        batch_norm=False,
        learning_rate=1e-3,
        batch_size=256,
        epochs=100,
        early_stopping=False,
        validation_fraction=0.1,
        patience=10,
        tol=1e-4,
        weight_decay=0.0,
        preprocessor="auto",
        random_state=None,
        device="cpu",
        verbose=0,
        warm_start=False,
        callbacks=None,
        n_jobs=1,
    ):
        self.n_components = n_components
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.dropout = dropout
        self.batch_norm = batch_norm
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.epochs = epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.tol = tol
        self.weight_decay = weight_decay
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.n_jobs = n_jobs

    def _row_losses(self, model, x, gen):
        from ..nn.autoencoder import mixed_reconstruction_loss

        numeric_index, groups = self._loss_layout()
        return mixed_reconstruction_loss(model(x), x, numeric_index, groups)

    def _train_loss(self, model, x, gen):
        return self._row_losses(model, x, gen).mean()

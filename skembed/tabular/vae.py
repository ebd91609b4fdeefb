"""VAEEmbedder: variational autoencoder codes of tabular rows, and row generation."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._compute import limit_threads
from ..utils._seeding import seed_from_random_state, torch_generator
from ._base import TABULAR_PARAMETER_CONSTRAINTS, BaseTabularEmbedder


class VAEEmbedder(BaseTabularEmbedder):
    """Variational autoencoder embedding of tabular rows (Kingma & Welling, 2014).

    The encoder maps each preprocessed row to a diagonal Gaussian
    ``q(z | x) = N(mu, diag(sigma^2))`` over an ``n_components``-wide latent
    space; training draws ``z = mu + sigma * eps`` (reparameterisation trick)
    and minimises the negative β-ELBO. ``transform`` returns the posterior
    means ``mu`` (or draws), ``sample`` generates new rows from the prior.

    Parameters
    ----------
    n_components : int, default=2
        Latent width (the embedding).
    beta : float > 0, default=1.0
        Weight of the KL term (β-VAE; Higgins et al. 2017). ``beta=1`` is the
        plain ELBO; larger values give smoother, more disentangled but less
        precise codes.
    transform_mode : {"mean", "sample"}, default="mean"
        ``transform`` returns the posterior mean, or one draw ``mu + sigma *
        eps`` per row (seeded from ``random_state``, so repeated calls agree).
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
    model_ : skembed.nn.autoencoder.VariationalAutoencoder
    preprocessor_, history_, n_epochs_, best_epoch_, device_, n_features_in_, feature_names_in_
        As in :class:`~skembed.tabular.AutoencoderEmbedder`.

    Raises
    ------
    skembed.exceptions.TrainingDivergedError
        A ``ValueError`` raised by ``fit`` when the loss becomes NaN/inf
        (the estimator is then left as it was before that ``fit``).

    See Also
    --------
    AutoencoderEmbedder : deterministic codes, usually lower reconstruction error.

    Notes
    -----
    Per-row training loss (negative β-ELBO, one posterior draw)::

        L(x) = R(x, decoder(z)) + beta * KL(q(z|x) || N(0, I)),
        KL = 0.5 * sum_k (mu_k^2 + sigma_k^2 - 1 - log sigma_k^2)

    with ``R`` the mixed reconstruction loss of :class:`AutoencoderEmbedder`
    (Gaussian negative log-likelihood up to a constant on numeric columns,
    cross-entropy per categorical group). ``score`` returns ``-mean(L)`` with
    a fixed-seed draw (deterministic), the ELBO up to the Gaussian constant
    when ``beta=1``.

    References
    ----------
    Kingma & Welling (2014), "Auto-Encoding Variational Bayes", ICLR.
    Higgins et al. (2017), "beta-VAE: Learning Basic Visual Concepts with a
    Constrained Variational Framework", ICLR.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed.tabular import VAEEmbedder
    >>> X = np.random.RandomState(0).normal(size=(100, 5))
    >>> vae = VAEEmbedder(n_components=2, epochs=5, random_state=0).fit(X)
    >>> vae.transform(X).shape
    (100, 2)
    >>> vae.sample(3, random_state=0).shape
    (3, 5)
    """

    _module_kind = "vae"
    _parameter_constraints: dict = {
        **TABULAR_PARAMETER_CONSTRAINTS,
        "beta": [Interval(Real, 0, None, closed="neither")],
        "transform_mode": [StrOptions({"mean", "sample"})],
    }

    def __init__(
        self,
        n_components=2,
        *,
        beta=1.0,
        transform_mode="mean",
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
        self.beta = beta
        self.transform_mode = transform_mode
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

    def _elbo_terms(self, model, x, gen):
        from ..nn.autoencoder import mixed_reconstruction_loss

        numeric_index, groups = self._loss_layout()
        mu, log_var = model.encode_distribution(x)
        z = model.reparameterize(mu, log_var, gen)
        recon = mixed_reconstruction_loss(model.decode(z), x, numeric_index, groups)
        return recon + self.beta * model.kl_divergence(mu, log_var)

    def _row_losses(self, model, x, gen):
        return self._elbo_terms(model, x, gen)

    def _train_loss(self, model, x, gen):
        return self._elbo_terms(model, x, gen).mean()

    def transform(self, X):
        """Posterior means (or draws, ``transform_mode="sample"``) of the rows.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen in ``fit``.

        Returns
        -------
        codes : numpy.ndarray of shape (n_samples, n_components), float32
            With ``transform_mode="sample"`` the draws are seeded from
            ``random_state``, so repeated calls on the same rows agree.
        """
        if self.transform_mode != "sample":
            return super().transform(X)
        Xt = self._check_fitted_input(X)
        gen = torch_generator(seed_from_random_state(self.random_state), self.device_)

        def draw(xb):
            mu, log_var = self.model_.encode_distribution(xb)
            return self.model_.reparameterize(mu, log_var, gen)

        with limit_threads(self.n_jobs):
            return self._batched_rows(draw, Xt)

    def sample(self, n_samples=1, random_state=None):
        """Generate new rows: ``z ~ N(0, I)``, decoded to the original column space.

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows.
        random_state : int, RandomState instance or None, default=None
            Seeds the latent draws and the categorical draws.

        Returns
        -------
        X_new : pandas.DataFrame or numpy.ndarray of shape (n_samples, ``n_features_in_``)
            Numeric columns are the decoder's means (unscaled); each
            categorical column is drawn from the decoder's softmax. Same
            container as :meth:`inverse_transform`.
        """
        import torch

        check_is_fitted(self, "model_")
        if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}.")
        rng = check_random_state(seed_from_random_state(random_state))
        gen = torch_generator(seed_from_random_state(rng), "cpu")
        z = torch.randn((int(n_samples), self.n_components), generator=gen).numpy()
        with limit_threads(self.n_jobs):
            decoded = self._decode_codes(z)
        return self._to_original(decoded, categorical="sample", random_state=rng)

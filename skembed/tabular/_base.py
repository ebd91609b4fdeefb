"""Shared bases of the neural tabular embedders: input checks, epoch steps, pickling.

:class:`BaseNeuralTabularEmbedder` holds what the autoencoder, the VAE and
``EntityEmbedder`` share (DataFrame and ``hidden_layer_sizes`` checks, the
``early_stopping`` validation split, the seeded torch-RNG fork, training
through :func:`skembed.utils._training.run_epochs` with early stopping that
restores the best weights, and :class:`skembed.base.TorchStateMixin`
pickling). :class:`BaseTabularEmbedder` adds the autoencoders' preprocessing,
epoch step and inference. The epoch step batches in-memory tensors (one
permutation per epoch and contiguous slices of the permuted matrix, no
DataLoader, no per-row Python objects) and keeps the loss on the device,
synchronising once per epoch. A failed ``fit`` leaves the estimator as it
was (a warm start trains a copy of the network). All randomness comes from
``random_state``: a local ``torch.Generator`` for shuffling and sampling, and
a forked, seeded global RNG (restored afterwards) for weight initialisation
and dropout."""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
    clone,
)
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import TorchStateMixin
from ..callbacks import EarlyStopping
from ..utils._compute import COMPUTE_PARAMETER_CONSTRAINTS, limit_threads, resolve_compute
from ..utils._schema import CheckedStateMixin, Instance, Number
from ..utils._seeding import forked_torch_rng, seed_from_random_state, torch_generator
from ..utils._state import restore_on_failure
from ..utils._training import run_epochs
from ._preprocess import TabularPreprocessor, _is_dataframe, nonfinite_message

#: rows per forward pass at inference (transform, score, validation loss)
INFERENCE_BATCH = 8192

TABULAR_PARAMETER_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "hidden_layer_sizes": [tuple, list],
    "activation": [StrOptions({"relu", "gelu", "tanh", "elu", "silu", "leaky_relu"})],
    "dropout": [Interval(Real, 0, 1, closed="left")],
    "batch_norm": ["boolean"],
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "epochs": [Interval(Integral, 1, None, closed="left")],
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "patience": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "weight_decay": [Interval(Real, 0, None, closed="left")],
    "preprocessor": [StrOptions({"auto"}), HasMethods(["fit", "transform"]), None],
    **COMPUTE_PARAMETER_CONSTRAINTS,
    "verbose": ["verbose"],
    "warm_start": ["boolean"],
    "callbacks": [list, tuple, None],
}

__all__ = ["BaseTabularEmbedder", "BaseNeuralTabularEmbedder"]


def _best_epoch(records, tol, default):
    """Epoch of the lowest ``valid_loss`` (``loss`` where none), by EarlyStopping's rule.

    An epoch counts as better when it improves on the best so far by ``tol``
    (relative); ``default`` when no record does.
    """
    best, best_epoch = np.inf, default
    for record in records:
        value = record["loss"] if record.get("valid_loss") is None else record["valid_loss"]
        if value < best - tol * abs(best if np.isfinite(best) else 0.0):
            best, best_epoch = value, record["epoch"]
    return best_epoch


class BaseNeuralTabularEmbedder(
    CheckedStateMixin, TorchStateMixin, TransformerMixin, BaseEstimator
):
    """What every torch-trained tabular estimator shares (not public).

    The DataFrame input check, the ``hidden_layer_sizes`` check, the
    validation split of ``early_stopping``, the seeded fork of torch's global
    RNG and the pickling of ``model_`` (:class:`skembed.base.TorchStateMixin`).
    :class:`BaseTabularEmbedder` (autoencoder, VAE) and
    :class:`~skembed.tabular.EntityEmbedder` derive from it.
    """

    #: fitted state checked on load (utils._schema); ``model_`` is rebuilt and checked by
    #: TorchStateMixin against its stored configuration
    _state_schema = {
        "n_features_in_": Number(low=1),
        "model_": Instance("torch.nn.modules.module.Module"),
        "preprocessor_": Instance(TabularPreprocessor, optional=True),
        "history_": Instance(list),
        "_n_features_out": Number(low=1),
    }

    def _check_frame(self, X, reset):
        """Check a DataFrame's columns (names, count) and refuse an empty one; return it."""
        validate_data(self, X, reset=reset, skip_check_array=True)
        for axis, what in ((0, "sample"), (1, "feature")):
            if X.shape[axis] == 0:
                raise ValueError(
                    f"Found array with 0 {what}(s) (shape={X.shape}) while a minimum of 1 "
                    f"is required by {type(self).__name__}."
                )
        return X

    def _hidden_sizes(self):
        """``hidden_layer_sizes`` as a tuple of positive ints (else a ValueError)."""
        hidden = tuple(int(h) for h in self.hidden_layer_sizes)
        if any(h < 1 for h in hidden):
            raise ValueError(
                f"hidden_layer_sizes must hold positive ints, got {self.hidden_layer_sizes!r}."
            )
        return hidden

    def _validation_split(self, rng, n_samples):
        """``(train_rows, valid_rows)`` sorted, drawn from ``rng``, or None.

        None without ``early_stopping``, and (with a warning) when the
        ``validation_fraction`` leaves no training row.
        """
        if not self.early_stopping:
            return None
        n_valid = int(np.ceil(self.validation_fraction * n_samples))
        if n_samples - n_valid < 1 or n_valid < 1:
            warnings.warn(
                f"early_stopping needs at least 2 rows; training on all {n_samples} rows "
                "without validation.",
                UserWarning,
                stacklevel=4,
            )
            return None
        perm = rng.permutation(n_samples)
        return np.sort(perm[n_valid:]), np.sort(perm[:n_valid])

    def _run_epochs(self, epoch_step, *, validated, before_callbacks=None, diverged_hint=""):
        """Train ``model_`` for ``epochs`` epochs of ``epoch_step`` through :func:`run_epochs`.

        With ``early_stopping`` and validation rows (``validated``), training
        stops after ``patience`` epochs without a relative improvement of
        ``tol`` of ``valid_loss`` and the best weights are restored. Sets
        ``n_epochs_`` (before the callbacks of each epoch, which see the
        module in eval mode) and ``best_epoch_``.
        """
        model = self.model_
        stopper = None
        if self.early_stopping and validated:
            stopper = EarlyStopping(
                monitor="valid_loss",
                patience=self.patience,
                tol=self.tol,
                restore_best_weights=True,
            )

        def publish(record):
            self.n_epochs_ = len(self.history_)
            model.eval()  # callbacks may transform with the current weights
            if before_callbacks is not None:
                before_callbacks(record)

        first = len(self.history_)
        records = run_epochs(
            self,
            epoch_step,
            n_epochs=self.epochs,
            callbacks=self.callbacks,
            early_stopping=stopper,
            verbose=self.verbose,
            diverged_hint=diverged_hint,
            before_callbacks=publish,
        )
        model.eval()
        self.n_epochs_ = len(self.history_)
        if stopper is not None and stopper.best_epoch_ is not None:
            self.best_epoch_ = stopper.best_epoch_
        else:
            self.best_epoch_ = _best_epoch(records, self.tol, default=first)

    def _rng_fork(self, seed):
        """Context: torch's global RNG (weight init, dropout) forked and seeded for ``device_``."""
        return forked_torch_rng(seed, self.device_)


class BaseTabularEmbedder(ClassNamePrefixFeaturesOutMixin, BaseNeuralTabularEmbedder):
    """Base of :class:`AutoencoderEmbedder` and :class:`VAEEmbedder` (not public).

    Subclasses set ``_module_kind`` and implement ``_train_loss(model, x, gen)``
    (a scalar tensor, the mean loss of a batch) and
    ``_row_losses(model, x, gen)`` (per-row loss in eval mode, for
    validation and ``score``).
    """

    _module_kind = "autoencoder"
    _parameter_constraints: dict = dict(TABULAR_PARAMETER_CONSTRAINTS)
    _transient_attributes = ("_layout_cache",)

    def _module_classes(self):
        from ..nn.autoencoder import MODULES

        return MODULES

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        auto = isinstance(self.preprocessor, str)
        tags.input_tags.allow_nan = auto
        # the "auto" preprocessor one-hot encodes string/categorical columns
        tags.input_tags.string = auto
        tags.input_tags.categorical = auto
        tags.transformer_tags.preserves_dtype = ["float32"]
        tags.non_deterministic = False
        return tags

    # ------------------------------------------------------------------ input
    def _validate_input(self, X, reset):
        if _is_dataframe(X):
            return self._check_frame(X, reset)
        if self.preprocessor is None:
            return validate_data(self, X, reset=reset, dtype=[np.float32, np.float64])
        finite = "allow-nan" if isinstance(self.preprocessor, str) else False
        return validate_data(self, X, reset=reset, dtype=None, ensure_all_finite=finite)

    def _preprocess(self, X, fit=False):
        """Preprocessed rows as a C-contiguous float32 numpy array (checked finite).

        With ``fit=True`` the preprocessor is fitted on ``X`` in the same pass.
        """
        if self.preprocessor_ is None:
            Xt = X
        elif fit:
            Xt = self.preprocessor_.fit_transform(X)
        else:
            Xt = self.preprocessor_.transform(X)
        if hasattr(Xt, "toarray"):
            Xt = Xt.toarray()
        try:
            Xt = np.ascontiguousarray(Xt, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"The preprocessed input of {type(self).__name__} is not numeric ({exc}). "
                "Use preprocessor='auto' for DataFrames with categorical columns."
            ) from exc
        if Xt.ndim != 2:
            raise ValueError(f"The preprocessor returned an array of shape {Xt.shape}; 2-D needed.")
        if not np.isfinite(Xt).all():
            raise ValueError(nonfinite_message(self, X, Xt))
        return Xt

    def _layout(self):
        pre = self.preprocessor_
        if isinstance(pre, TabularPreprocessor):
            return pre.numeric_index_, pre.categorical_groups_
        return None, []

    # ------------------------------------------------------------------ torch helpers
    def _tensor(self, Xt):
        import torch

        return torch.from_numpy(Xt).to(self.device_)

    def _loss_layout(self):
        """``(numeric_index tensor or None, categorical groups)`` on ``device_``.

        Cached by ``fit`` for its batches; computed afresh (not stored) otherwise,
        so that scoring or transforming never writes to the estimator.
        """
        cache = self.__dict__.get("_layout_cache")
        if cache is not None and cache[0] == self.device_ and cache[1] is self.preprocessor_:
            return cache[2]
        import torch

        numeric_index, groups = self._layout()
        if numeric_index is not None:
            numeric_index = torch.as_tensor(numeric_index, dtype=torch.long, device=self.device_)
        return numeric_index, groups

    def _build_module(self, n_inputs):
        from ..nn.autoencoder import build_module

        hidden = self._hidden_sizes()
        config = dict(
            n_inputs=int(n_inputs),
            n_components=int(self.n_components),
            hidden_layer_sizes=hidden,
            activation=self.activation,
            dropout=float(self.dropout),
            batch_norm=bool(self.batch_norm),
        )
        return build_module(self._module_kind, config)

    def _batched_rows(self, fn, Xt):
        """Apply ``fn`` to inference batches of ``Xt``; concatenate results on the CPU."""
        import torch

        outs = []
        with torch.inference_mode():
            for start in range(0, Xt.shape[0], INFERENCE_BATCH):
                xb = self._tensor(Xt[start : start + INFERENCE_BATCH])
                outs.append(fn(xb).float().cpu().numpy())
        return np.concatenate(outs, axis=0)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the preprocessor and train the network on ``X``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Mixed numeric/categorical columns (DataFrame, or object array)
            with ``preprocessor="auto"``; numeric for ``preprocessor=None``.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        skembed.exceptions.TrainingDivergedError
            (a ``ValueError``) if the loss becomes NaN or infinite; lower
            ``learning_rate``.
        ValueError
            If ``X`` is empty, or has NaN that the preprocessor does not impute.

        Notes
        -----
        A ``fit`` that raises (divergence, a raising callback, an interrupt)
        leaves a fresh estimator unfitted and a ``warm_start`` one exactly as
        it was before the call.
        """
        with restore_on_failure(self):
            self._fit(X)
        return self

    def _fit(self, X):
        warm = self.warm_start and hasattr(self, "model_")
        X = self._validate_input(X, reset=not warm)
        if not warm:
            self.device_ = resolve_compute(self).device
            if self.preprocessor is None:
                self.preprocessor_ = None
            elif isinstance(self.preprocessor, str):
                self.preprocessor_ = TabularPreprocessor()
            else:
                self.preprocessor_ = clone(self.preprocessor)
        Xt = self._preprocess(X, fit=not warm)
        n_samples, n_inputs = Xt.shape
        if warm and self.model_.config["n_inputs"] != n_inputs:
            raise ValueError(
                f"warm_start=True but the preprocessed input has {n_inputs} columns, not "
                f"{self.model_.config['n_inputs']}; set warm_start=False to refit."
            )

        rng = check_random_state(self.random_state)
        seed = seed_from_random_state(rng)  # first draw; the split draws from rng next
        split = self._validation_split(rng, n_samples)
        if split is not None:
            X_train, X_valid = Xt[split[0]], Xt[split[1]]
        else:
            X_train, X_valid = Xt, None
        if self.batch_norm and X_train.shape[0] < 2:
            raise ValueError(
                "batch_norm=True needs at least 2 training rows (batch statistics of one row "
                "are undefined); set batch_norm=False."
            )

        with limit_threads(self.n_jobs, modules=("torch",)), self._rng_fork(seed):
            if warm:  # train copies: a failed fit must leave the fitted ones untouched
                self.model_ = copy.deepcopy(self.model_)
                self.history_ = list(self.history_)
            else:
                self.model_ = self._build_module(n_inputs).to(self.device_)
                self.history_ = []
                self._seed_ = seed
            self._layout_cache = (self.device_, self.preprocessor_, self._loss_layout())
            self._train(X_train, X_valid, seed)
        self._n_features_out = int(self.n_components)

    def _train(self, X_train, X_valid, seed):
        import torch

        model = self.model_
        device = self.device_
        gen = torch_generator(seed, device)
        x_train = self._tensor(X_train)
        x_valid = None if X_valid is None else self._tensor(X_valid)
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay
        )
        n = x_train.shape[0]
        bs = int(min(self.batch_size, n))
        # with batch norm, a trailing batch of one row is merged away (dropped this epoch)
        stop = n - 1 if (self.batch_norm and n % bs == 1 and n > 1) else n

        def epoch_step(epoch):
            model.train()
            perm = torch.randperm(n, generator=gen, device=device)
            xs = x_train.index_select(0, perm)
            total = torch.zeros((), device=device)
            for start in range(0, stop, bs):
                xb = xs[start : start + bs]
                loss = self._train_loss(model, xb, gen)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += loss.detach() * xb.shape[0]
            train_loss = float(total) / stop
            valid_loss = None
            if x_valid is not None and np.isfinite(train_loss):
                valid_loss = float(self._mean_row_loss(x_valid))
            return {"loss": train_loss, "valid_loss": valid_loss}

        self._run_epochs(
            epoch_step,
            validated=x_valid is not None,
            diverged_hint="Check the input scale too (preprocessor='auto' standardises numeric "
            "columns).",
        )

    def _mean_row_loss(self, x):
        import torch

        model = self.model_
        was_training = model.training
        model.eval()
        total = torch.zeros((), device=x.device)
        gen = torch_generator(self._seed_, self.device_)
        with torch.inference_mode():
            for start in range(0, x.shape[0], INFERENCE_BATCH):
                total += self._row_losses(model, x[start : start + INFERENCE_BATCH], gen).sum()
        model.train(was_training)
        return float(total) / x.shape[0]

    # ------------------------------------------------------------------ inference
    def _check_fitted_input(self, X):
        check_is_fitted(self, "model_")
        X = self._validate_input(X, reset=False)
        return self._preprocess(X)

    def _encode(self, xb):
        return self.model_.encode(xb)

    def transform(self, X):
        """Embed rows.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Same columns as in ``fit``.

        Returns
        -------
        codes : numpy.ndarray of shape (n_samples, n_components), float32
            The encoder's code of each row (the VAE: its posterior mean).
        """
        Xt = self._check_fitted_input(X)
        with limit_threads(self.n_jobs):
            return self._batched_rows(self._encode, Xt)

    def _decode_codes(self, Z):
        check_is_fitted(self, "model_")
        Z = np.ascontiguousarray(np.asarray(Z, dtype=np.float32))
        if Z.ndim != 2 or Z.shape[1] != self.n_components:
            raise ValueError(
                f"Codes must have shape (n_samples, {self.n_components}), got {Z.shape}."
            )
        with limit_threads(self.n_jobs):
            return self._batched_rows(self.model_.decode, Z)

    def _to_original(self, decoded, categorical="argmax", random_state=None):
        pre = self.preprocessor_
        if pre is None:
            return decoded.astype(np.float64)
        if isinstance(pre, TabularPreprocessor):
            return pre.inverse_transform(
                decoded, categorical=categorical, random_state=random_state
            )
        if not hasattr(pre, "inverse_transform"):
            raise ValueError(
                f"The preprocessor {type(pre).__name__} has no inverse_transform, so "
                "reconstructions cannot be mapped back to the original columns; use "
                "preprocessor='auto' or None, or decode_preprocessed()."
            )
        return pre.inverse_transform(decoded)

    def inverse_transform(self, X):
        """Decode codes back to rows in the original column space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes, as returned by ``transform``.

        Returns
        -------
        X_original : pandas.DataFrame or numpy.ndarray of shape (n_samples, ``n_features_in_``)
            With ``preprocessor="auto"``: the original columns (a DataFrame
            with the fitted column names if fitted on one), numerics
            unscaled, categories back as labels (the most probable one).
            With ``preprocessor=None``: float64 array. A custom
            preprocessor's own ``inverse_transform`` is used.
        """
        return self._to_original(self._decode_codes(X))

    def decode_preprocessed(self, X):
        """Decoder output in the preprocessed space (categorical groups as probabilities).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes, e.g. from :meth:`transform`.

        Returns
        -------
        X_pre : numpy.ndarray of shape (n_samples, n_preprocessed_features), float32
            Numeric columns scaled, each categorical group as probabilities.
        """
        import torch

        from ..nn.autoencoder import decoded_to_expected

        decoded = self._decode_codes(X)
        groups = self._layout()[1]
        return decoded_to_expected(torch.from_numpy(decoded), groups).numpy()

    def reconstruction_error(self, X):
        """Mean squared error of the reconstruction, in the preprocessed space.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen in ``fit``.

        Returns
        -------
        mse : float
            ``mean((x_pre - x_hat)^2)`` over rows and preprocessed columns,
            with each categorical group's prediction taken as softmax
            probabilities against the one-hot truth (the same quantity as
            ``PCA`` reconstruction error on the preprocessed matrix). The VAE
            decodes its posterior means.
        """
        Xt = self._check_fitted_input(X)
        codes = self._batched_rows(self._encode, Xt)
        return float(np.mean((self.decode_preprocessed(codes) - Xt) ** 2))

    def score(self, X, y=None):
        """Mean per-row log-likelihood-style score of ``X`` (higher is better).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen in ``fit``.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Minus the mean per-row reconstruction loss (autoencoder), or the
            mean evidence lower bound (VAE); see the class Notes. Suitable
            for ``GridSearchCV(scoring=None)``.
        """
        Xt = self._check_fitted_input(X)
        with limit_threads(self.n_jobs):
            return -self._mean_row_loss(self._tensor(Xt))

"""Tabular leaderboard: raw features, PCA, autoencoder and VAE codes at equal width.

Used by ``skembed compare --csv PATH --label-column L`` (and its default
penguins mode). Each embedder is grid-searched inside a pipeline
``embedder -> StandardScaler -> LogisticRegression`` with cross-validated
accuracy; the best configuration is then timed and its reconstruction error
measured on held-out rows.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

__all__ = ["compare_tabular", "default_tabular_embedders", "format_leaderboard"]


def default_tabular_embedders(n_components=2, random_state=0, n_rows=None):
    """The embedders of the tabular comparison with their small parameter grids.

    Parameters
    ----------
    n_components : int, default=2
        Embedding width of PCA, the autoencoder and the VAE.
    random_state : int, default=0
    n_rows : int or None, default=None
        Rows of the table; below 2,000 rows the neural embedders use
        ``batch_size=32`` (else 256) so that each epoch makes enough steps.

    Returns
    -------
    embedders : dict of str to (estimator, dict)
        ``name -> (unfitted estimator or pipeline, param grid)``; grid keys
        are the estimator's own parameter names.
    """
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline

    from .tabular import AutoencoderEmbedder, VAEEmbedder
    from .tabular._preprocess import TabularPreprocessor

    batch_size = 32 if n_rows is not None and n_rows < 2000 else 256
    nn_params = dict(
        n_components=n_components,
        max_epochs=100,
        batch_size=batch_size,
        random_state=random_state,
    )
    return {
        "Scaler+OneHot (raw)": (make_pipeline(TabularPreprocessor()), {}),
        "PCA": (
            make_pipeline(TabularPreprocessor(), PCA(n_components, random_state=random_state)),
            {},
        ),
        "AutoencoderEmbedder": (
            AutoencoderEmbedder(**nn_params),
            {"hidden_layer_sizes": [(32,), (64, 32)]},
        ),
        "VAEEmbedder": (VAEEmbedder(**nn_params), {"beta": [0.5, 1.0]}),
    }


def _reconstruction_error(est, X):
    """Mean squared reconstruction error in the preprocessed space (0 for raw features)."""
    if hasattr(est, "reconstruction_error"):
        return float(est.reconstruction_error(X))
    steps = getattr(est, "steps", None)
    if steps is None:
        return float("nan")
    if len(steps) == 1:
        return 0.0
    last = steps[-1][1]
    if not hasattr(last, "inverse_transform"):
        return float("nan")
    Xp = np.asarray(est[:-1].transform(X), dtype=np.float64)
    return float(np.mean((last.inverse_transform(last.transform(Xp)) - Xp) ** 2))


def compare_tabular(
    X, y, *, n_components=2, cv=5, n_jobs=None, random_state=0, embedders=None, verbose=False
):
    """Compare tabular embedders on a labelled table.

    Parameters
    ----------
    X : pandas.DataFrame of shape (n_samples, n_features)
        Mixed numeric/categorical columns (the label column excluded).
    y : array-like of shape (n_samples,)
        Class labels; rows with a missing label are dropped with a warning.
    n_components : int, default=2
        Common embedding width of PCA, the autoencoder and the VAE.
    cv : int, default=5
        Stratified cross-validation folds for the downstream accuracy.
    n_jobs : int or None, default=None
        Parallel ``GridSearchCV`` workers.
    random_state : int, default=0
        Seeds the embedders and the held-out split.
    embedders : None, list of str or dict, default=None
        ``None``: all of :func:`default_tabular_embedders`; a list of their
        names: a subset; a dict ``name -> (estimator, param_grid)``: custom.
    verbose : bool, default=False
        Print each row as it is computed.

    Returns
    -------
    rows : list of dict
        One per embedder, best CV accuracy first, with keys ``embedder``,
        ``n_components`` (output width), ``best_params``,
        ``cv_accuracy_mean``, ``cv_accuracy_std`` (of the best grid point,
        pipeline ``embedder -> StandardScaler -> LogisticRegression``),
        ``fit_time_s`` (refit of the best pipeline on all rows),
        ``transform_rows_per_s`` (embedder only, all rows), and
        ``reconstruction_error`` (mean squared error in the
        Scaler+OneHot space on a 20 % stratified held-out split, the
        embedder fitted on the other 80 %; 0 for the raw features).

    Raises
    ------
    ValueError
        If ``X`` and ``y`` lengths differ, an embedder name is unknown, or a
        class has fewer than ``cv`` rows.
    """
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    y = np.asarray(y, dtype=object)
    if len(y) != len(X):
        raise ValueError(f"X has {len(X)} rows but y has {len(y)}.")
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in y])
    if missing.any():
        warnings.warn(
            f"Dropping {int(missing.sum())} rows with a missing label.", UserWarning, stacklevel=2
        )
        X = X.iloc[~missing] if hasattr(X, "iloc") else np.asarray(X)[~missing]
        y = y[~missing]
    y = y.astype(str)
    defaults = default_tabular_embedders(n_components, random_state, n_rows=len(X))
    if embedders is None:
        chosen = defaults
    elif isinstance(embedders, dict):
        chosen = embedders
    else:
        unknown = [name for name in embedders if name not in defaults]
        if unknown:
            raise ValueError(f"Unknown embedders {unknown}; choose from {list(defaults)}.")
        chosen = {name: defaults[name] for name in embedders}
    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    X_tr, X_te, y_tr, _ = train_test_split(
        X, y, test_size=0.2, random_state=random_state, stratify=y
    )
    rows = []
    for name, (embedder, grid) in chosen.items():
        pipe = Pipeline(
            [
                ("embedder", clone(embedder)),
                ("scale", StandardScaler()),
                ("clf", LogisticRegression(max_iter=2000)),
            ]
        )
        param_grid = {f"embedder__{k}": v for k, v in grid.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # unseen categories in CV folds
            search = GridSearchCV(pipe, param_grid or {}, cv=folds, n_jobs=n_jobs, refit=True)
            search.fit(X, y)
            best = search.best_index_
            fitted = search.best_estimator_.named_steps["embedder"]
            t0 = time.perf_counter()
            codes = fitted.transform(X)
            transform_s = time.perf_counter() - t0
            held = clone(fitted).fit(X_tr, y_tr)
            recon = _reconstruction_error(held, X_te)
        best_params = {k.removeprefix("embedder__"): v for k, v in search.best_params_.items()}
        row = {
            "embedder": name,
            "n_components": int(np.shape(codes)[1]),
            "best_params": best_params,
            "cv_accuracy_mean": float(search.cv_results_["mean_test_score"][best]),
            "cv_accuracy_std": float(search.cv_results_["std_test_score"][best]),
            "fit_time_s": float(search.refit_time_),
            "transform_rows_per_s": float(len(X) / max(transform_s, 1e-9)),
            "reconstruction_error": recon,
        }
        if verbose:
            print(format_leaderboard([row], header=not rows))
        rows.append(row)
    rows.sort(key=lambda r: -r["cv_accuracy_mean"])
    return rows


def format_leaderboard(rows, header=True):
    """Format :func:`compare_tabular` rows as a fixed-width text table.

    Parameters
    ----------
    rows : list of dict
    header : bool, default=True

    Returns
    -------
    text : str
    """
    lines = []
    if header:
        lines.append(
            f"{'embedder':<22} {'dim':>4} {'cv_acc':>14} {'fit_s':>7} {'rows/s':>10} "
            f"{'recon_mse':>9}  best_params"
        )
    for r in rows:
        acc = f"{r['cv_accuracy_mean']:.3f}±{r['cv_accuracy_std']:.3f}"
        lines.append(
            f"{r['embedder']:<22} {r['n_components']:>4} {acc:>14} {r['fit_time_s']:>7.2f} "
            f"{r['transform_rows_per_s']:>10.0f} {r['reconstruction_error']:>9.4f}  "
            f"{r['best_params']}"
        )
    return "\n".join(lines)

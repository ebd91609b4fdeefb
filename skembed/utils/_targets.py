"""The one check of the target ``y`` of the estimators that learn from labels, and cross-fitting."""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from ._state import restore_on_failure
from ._validation import missing_mask

__all__ = ["check_cross_fit_classes", "check_target", "cross_fitted", "fit_cross_fitted"]


def check_target(y, n_samples, *, target_type, estimator, min_per_class=1, constant_ok=False):
    """Validate the ``y`` of an estimator that learns from labels: the one check of ``y``.

    Used by every label-trained estimator (``SetFitEmbedder``, supervised
    ``StaticEmbedder``, ``EntityEmbedder``); its messages keep scikit-learn's phrases
    ("requires y to be passed", "Unknown label type") that its estimator checks look for.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1), or None
    n_samples : int
        Number of rows (documents) of ``X``.
    target_type : {"auto", "binary", "multiclass", "continuous"}
        ``"auto"`` infers it with scikit-learn's ``type_of_target``.
    estimator : str
        Name used in the messages.
    min_per_class : int, default=1
        Fewest rows a class may have (2 where a positive pair is needed).
    constant_ok : bool, default=False
        Whether a constant continuous target is accepted.

    Returns
    -------
    y : numpy.ndarray of shape (n_samples,)
        Class codes (int64, ``0..n_classes-1``) or the float64 target.
    kind : str
        ``"binary"``, ``"multiclass"`` or ``"continuous"``.
    classes : numpy.ndarray or None
        The sorted classes (None for a continuous target).

    Raises
    ------
    ValueError
        ``y`` is None, not one label per row, has missing labels (None, NaN, ``pd.NA``), an
        infinite value, a single class, more than two classes with ``target_type="binary"``,
        a class with fewer than ``min_per_class`` rows, a constant continuous value (unless
        ``constant_ok``), or is of another type (multilabel, ...).

    Examples
    --------
    >>> check_target(["b", "a", "b"], 3, target_type="auto", estimator="E")
    (array([1, 0, 1]), 'binary', array(['a', 'b'], dtype='<U1'))
    """
    if y is None:
        raise ValueError(
            f"{estimator} requires y to be passed, but the target y is None: it learns from "
            "the labels; call fit(X, y) with one label per row (or turn label training off)."
        )
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)  # scikit-learn's DataConversionWarning
    if y.ndim != 1 or len(y) != n_samples:
        raise ValueError(
            f"y has shape {np.shape(y)} but X has {n_samples} rows; give one label per row "
            "(a 1d array of n_samples labels)."
        )
    missing = np.flatnonzero(missing_mask(y))
    if len(missing):
        raise ValueError(
            f"y has {len(missing)} missing label(s) (None, NaN or pd.NA), the first at position "
            f"{missing[0]} (rows {missing[:10].tolist()}); drop those rows or fill their labels "
            f"before fitting {estimator}."
        )
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        raise ValueError(
            f"y holds infinite values (first at position {np.flatnonzero(~np.isfinite(y))[0]}); "
            f"{estimator} needs finite targets."
        )
    kind = target_type
    if kind == "auto":
        kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass", "continuous"):
        raise ValueError(
            f"Unknown label type: target of type {kind!r}; {estimator} supports 'binary', "
            "'multiclass' and 'continuous' targets (set target_type)."
        )
    if kind == "continuous":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"target_type='continuous' but y is not numeric: {exc}") from exc
        if np.ptp(y) == 0 and not constant_ok:
            raise ValueError("y is constant; a continuous target needs at least two values.")
        return y, kind, None
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if len(classes) < 2:
        raise ValueError(
            f"y has only one class ({classes[0]!r}): {estimator} learns from the labels, which "
            "needs at least 2 classes. Fit on data with several classes, or give a continuous "
            "target with target_type='continuous'."
        )
    if kind == "binary" and len(classes) > 2:
        raise ValueError(
            f"target_type='binary' but y has {len(classes)} classes; use 'multiclass'."
        )
    if counts.min() < min_per_class:
        few = classes[counts < min_per_class].tolist()
        raise ValueError(
            f"class(es) {few[:10]} have fewer than {min_per_class} rows, so no positive pair; "
            f"give each class at least {min_per_class} rows or drop those rows."
        )
    return codes.astype(np.int64), kind, classes


def check_cross_fit_classes(y, cv, *, min_per_class, estimator, classes=None):
    """Refuse a ``cv`` whose inner fits would get a ``y`` that ``fit`` refuses.

    ``StratifiedKFold(cv)`` holds out ``ceil(n_c / cv)`` or fewer of a class's
    ``n_c`` documents per fold, so each inner fit sees at least
    ``n_c - ceil(n_c / cv)`` of them (none of a one-document class in the fold
    that holds it out). Checked before any fit, so that a cross-fitted
    ``fit_transform`` fails at once and names ``cv``, instead of failing in an
    inner fit with an error about data the user did not pass.

    Parameters
    ----------
    y : numpy.ndarray of shape (n_documents,)
        Class codes, as :func:`check_target` returns them.
    cv : int
        Number of folds, at least 2.
    min_per_class : int
        Fewest documents a class present in an inner fit may have there (the
        ``min_per_class`` of the estimator's :func:`check_target`).
    estimator : str
        Name used in the message.
    classes : numpy.ndarray or None, default=None
        The labels behind the codes, named in the message (the codes where None).

    Raises
    ------
    ValueError
        Some inner fit could see a class with fewer than ``min_per_class``
        documents, or a single class (fewer than two classes have two or
        more documents); the message names the classes, the smallest count
        that works and the fixes (more documents, a lower ``cv`` or ``cv=None``).
    """
    counts = np.bincount(np.asarray(y))
    seen = counts - -(-counts // cv)  # n_c - ceil(n_c / cv)
    labels = np.arange(len(counts)) if classes is None else np.asarray(classes)
    short = np.flatnonzero((seen > 0) & (seen < min_per_class))
    if len(short):
        need = 1
        while need - -(-need // cv) < min_per_class:
            need += 1
        raise ValueError(
            f"cv={cv}: the inner fits of the cross-fitted fit_transform would see fewer than "
            f"{min_per_class} documents of class(es) {labels[short].tolist()} (class sizes "
            f"{counts[short].tolist()}); {estimator} needs at least {need} documents per class "
            f"with cv={cv}. Give those classes more documents, lower cv, or set cv=None."
        )
    if np.count_nonzero(seen > 0) < 2:
        raise ValueError(
            f"cv={cv}: an inner fit of the cross-fitted fit_transform could see a single class: "
            f"only {labels[seen > 0].tolist()} has two or more documents (class sizes "
            f"{counts.tolist()}). Give a second class at least two documents, or set cv=None."
        )


def fit_cross_fitted(estimator, documents, y, *, min_per_class):
    """``fit(documents, y)``, then :func:`cross_fitted`: a cross-fitted ``fit_transform``.

    The class sizes are checked first (:func:`check_cross_fit_classes`), and a
    failure or interruption of the fit or of the cross-fitting leaves
    ``estimator`` as it was, as a failed ``fit`` does.

    Parameters
    ----------
    estimator : estimator
        Has ``cv`` (an int), ``target_type`` and ``fit``.
    documents : list of str or of list of str
    y : array-like of shape (n_documents,)
    min_per_class : int
        The ``min_per_class`` of the estimator's :func:`check_target`.

    Returns
    -------
    X_new : numpy.ndarray of shape (n_documents, n_features_out)

    Raises
    ------
    ValueError
        The errors of :func:`check_target` and :func:`check_cross_fit_classes`.
    """
    name = type(estimator).__name__
    codes, kind, classes = check_target(
        y,
        len(documents),
        target_type=estimator.target_type,
        estimator=name,
        min_per_class=min_per_class,
    )
    if kind != "continuous":
        check_cross_fit_classes(
            codes, estimator.cv, min_per_class=min_per_class, estimator=name, classes=classes
        )
    with restore_on_failure(estimator):
        estimator.fit(documents, y)
        return cross_fitted(estimator, documents, np.asarray(y))


def cross_fitted(estimator, documents, y):
    """Embeddings of ``documents``, each fold by a clone of ``estimator`` fitted on the others.

    As scikit-learn's ``TargetEncoder.fit_transform``: ``estimator.cv`` folds
    (stratified for classes, plain ``KFold`` for a continuous target, shuffled
    with a seed drawn from ``estimator.random_state``), each embedded by
    ``clone(estimator)`` (``cv=None``, no cache, no callbacks) fitted on the
    other folds.

    Parameters
    ----------
    estimator : estimator
        Fitted on all of ``documents``: its ``cv``, ``random_state``,
        ``target_type_``, ``dtype`` and ``_n_features_out`` are read.
    documents : list of str or of list of str
    y : numpy.ndarray of shape (n_documents,)

    Returns
    -------
    X_new : numpy.ndarray of shape (n_documents, estimator._n_features_out), dtype ``estimator.dtype``
    """
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold

    from ._seeding import seed_from_random_state

    cv, seed = estimator.cv, seed_from_random_state(estimator.random_state)
    if estimator.target_type_ == "continuous":
        folds = KFold(cv, shuffle=True, random_state=seed).split(documents)
    else:
        folds = StratifiedKFold(cv, shuffle=True, random_state=seed).split(documents, y)
    out = np.empty((len(documents), estimator._n_features_out), dtype=estimator.dtype)
    for train, test in folds:
        inner = clone(estimator).set_params(cv=None, callbacks=None, verbose=0)
        if "cache" in inner.get_params():
            inner.set_params(cache=None)
        inner.fit([documents[i] for i in train], y[train])
        out[test] = inner.transform([documents[i] for i in test])
    return out

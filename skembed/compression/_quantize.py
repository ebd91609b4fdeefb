"""EmbeddingQuantizer: 8 bits (calibrated ranges) or 1 bit per dimension of a dense embedding."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from ..utils._schema import Array, CheckedStateMixin, Number

_EIGHT_BIT = ("int8", "uint8")


def _itq_rotation(V, n_iter, rng):
    """The orthogonal ``(d, d)`` rotation of iterative quantization (ITQ).

    Alternates ``B = sign(V R)`` and the orthogonal Procrustes solution
    ``R = argmin ||B - V R||_F`` (``U W^T`` from the SVD of ``V^T B``), from a
    random orthogonal start (Gong, Lazebnik, Gordo and Perronnin, 2013).
    ``V`` is the centred float64 ``(n_rows, d)`` calibration matrix.
    """
    d = V.shape[1]
    R, _ = np.linalg.qr(rng.standard_normal((d, d)))
    for _ in range(n_iter):
        B = np.where(V @ R >= 0, 1.0, -1.0)
        U, _, Wt = np.linalg.svd(V.T @ B)
        R = U @ Wt
    return R


def _check_finite(X, where):
    """Refuse NaN or inf, naming the first column and row that hold one."""
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"{where}: column {col} holds {X[row, col]} at row {row} ({int(bad.sum())} "
            "NaN or inf values in all). A quantizer maps a finite range onto codes: "
            "impute or drop these rows first."
        )


class EmbeddingQuantizer(
    CheckedStateMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Store a dense embedding in 8 bits or 1 bit per dimension.

    The semantics of sentence-transformers' ``quantize_embeddings`` (Shakir,
    Aarsen and Lee, 2024, "Binary and Scalar Embedding Quantization"), as an
    estimator whose ``fit`` is the calibration:

    - ``"int8"``/``"uint8"``: ``fit`` records each dimension's range
      ``[lo, hi]`` on the training embeddings (``ranges_``); ``transform``
      maps ``x`` to ``floor((x - lo) / ((hi - lo) / 255))`` clipped to
      ``[0, 255]`` (minus 128 for int8), with the ranges in float32 as
      sentence-transformers (6.x) computes them.
    - ``"binary"``/``"ubinary"``: one bit per dimension, ``x > 0``, packed
      eight to a byte (``numpy.packbits`` along each row; ``"binary"``
      stores each byte minus 128 as int8, ``"ubinary"`` as uint8).

    With ``rotation="itq"`` (binary precisions), ``fit`` also learns iterative
    quantization (Gong and Lazebnik, 2011): the bits are those of
    ``(x - mean_) @ rotation_``, with ``rotation_`` the orthogonal matrix that
    minimises the distance between the centred calibration rows and their
    signs. An embedding whose variance sits in a few coordinates (LSA, PCA,
    any SVD) loses the magnitudes of those coordinates to the sign; the
    rotation spreads the variance over all of them, so each bit carries a
    share. The bytes per row are unchanged; the rotation is one stored
    ``(n_features, n_features)`` matrix and one product per row.

    Parameters
    ----------
    precision : {"int8", "uint8", "binary", "ubinary"}, default="int8"
        Bits and signedness of the codes.
    pack : bool, default=True
        Binary precisions only: ``True`` packs eight bits to a byte (the
        stored form, ``ceil(n_features / 8)`` bytes per row); ``False``
        returns one 0/1 value per dimension (uint8), for a downstream model
        that reads the bits.
    rotation : {None, "itq"}, default=None
        Binary precisions only: ``None`` keeps the signs of the raw
        coordinates (sentence-transformers' semantics); ``"itq"`` centres on
        the calibration mean and learns the ITQ rotation first.
    n_iter : int, default=50
        ITQ's alternations (``rotation="itq"``); each costs one
        ``(n_rows, n_features) x (n_features, n_features)`` product and one
        ``n_features``-square SVD.
    random_state : int, RandomState instance or None, default=None
        Seeds ITQ's random orthogonal start (``rotation="itq"``); an int gives
        the same codes on every run.

    Attributes
    ----------
    ranges_ : ndarray of shape (2, n_features), dtype float32, or None
        Per dimension, the minimum and maximum seen in ``fit`` (8-bit precisions).
    mean_ : ndarray of shape (n_features,), dtype float64, or None
        The calibration rows' mean (``rotation="itq"``).
    rotation_ : ndarray of shape (n_features, n_features), dtype float64, or None
        ITQ's orthogonal rotation (``rotation="itq"``).
    bytes_per_row_ : int
        Bytes one row takes when stored: ``n_features`` (8-bit) or
        ``ceil(n_features / 8)`` (binary), against ``4 * n_features`` as float32.
    n_features_in_ : int
        Width of the embedding seen in ``fit``.

    See Also
    --------
    EmbeddingTruncator : keep fewer dimensions first.

    References
    ----------
    .. [1] A. Shakir, T. Aarsen and S. Lee, "Binary and Scalar Embedding Quantization
       for Significantly Faster & Cheaper Retrieval", Hugging Face blog, 2024;
       ``sentence_transformers.quantization.quantize_embeddings``.
    .. [2] Y. Gong and S. Lazebnik, "Iterative Quantization: A Procrustean Approach
       to Learning Binary Codes", CVPR 2011; Y. Gong, S. Lazebnik, A. Gordo and
       F. Perronnin, IEEE TPAMI 35(12), 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from skembed import EmbeddingQuantizer
    >>> X = np.array([[0.0, -255.0], [255.0, 255.0], [100.0, 0.0]])
    >>> EmbeddingQuantizer("uint8").fit_transform(X)
    array([[  0,   0],
           [255, 255],
           [100, 127]], dtype=uint8)
    >>> EmbeddingQuantizer("ubinary", pack=False).fit_transform(X)
    array([[0, 0],
           [1, 1],
           [1, 0]], dtype=uint8)
    >>> EmbeddingQuantizer("ubinary").fit(X).bytes_per_row_
    1

    ITQ: the rows are centred on their mean and turned by an orthogonal
    rotation before the signs are taken; still one bit per dimension.

    >>> q = EmbeddingQuantizer("ubinary", pack=False, rotation="itq", random_state=0).fit(X)
    >>> q.mean_.round(2)
    array([118.33,   0.  ])
    >>> bool(np.allclose(q.rotation_ @ q.rotation_.T, np.eye(2)))
    True
    >>> q.transform(X)
    array([[1, 0],
           [0, 1],
           [1, 1]], dtype=uint8)
    """

    _state_schema = {
        "ranges_": Array("f", (2, "D"), finite=True, optional=True),
        "mean_": Array("f", ("D",), finite=True, optional="rotation"),
        "rotation_": Array("f", ("D", "D"), finite=True, optional="rotation"),
        "bytes_per_row_": Number(low=1),
        "n_features_in_": Number(low=1, size="D"),
    }
    _parameter_constraints: dict = {
        "precision": [StrOptions({"int8", "uint8", "binary", "ubinary"})],
        "pack": ["boolean"],
        "rotation": [None, StrOptions({"itq"})],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, precision="int8", *, pack=True, rotation=None, n_iter=50, random_state=None):
        self.precision = precision
        self.pack = pack
        self.rotation = rotation
        self.n_iter = n_iter
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Calibrate: record each dimension's range (8-bit precisions).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Dense, finite embeddings (the calibration rows).
        y : None
            Ignored.

        Returns
        -------
        self : EmbeddingQuantizer
            The calibrated quantizer.

        Raises
        ------
        ValueError
            If ``X`` holds NaN or inf (the column and row are named), or, for
            int8/uint8, a dimension is constant on the calibration rows (its
            range is empty, so no code step exists), or if ``rotation="itq"``
            is asked of an 8-bit precision or with fewer than two rows.
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_all_finite=False)
        _check_finite(X, "EmbeddingQuantizer.fit")
        d = X.shape[1]
        self.ranges_ = self.mean_ = self.rotation_ = None
        if self.rotation is not None and self.precision in _EIGHT_BIT:
            raise ValueError(
                f"EmbeddingQuantizer: rotation={self.rotation!r} is for the binary precisions "
                f"(it chooses what each bit splits); precision={self.precision!r} keeps every "
                "coordinate's range. Use rotation=None, or precision='binary'/'ubinary'."
            )
        if self.rotation == "itq":
            if X.shape[0] < 2:
                raise ValueError(
                    f"EmbeddingQuantizer: rotation='itq' learns from the spread of the "
                    f"calibration rows; fit got {X.shape[0]} row. Calibrate on more rows."
                )
            X64 = np.asarray(X, dtype=np.float64)
            self.mean_ = X64.mean(axis=0)
            self.rotation_ = _itq_rotation(
                X64 - self.mean_, self.n_iter, check_random_state(self.random_state)
            )
        if self.precision in _EIGHT_BIT:
            lo, hi = X.min(axis=0), X.max(axis=0)
            constant = np.flatnonzero(hi == lo)
            if constant.size:
                raise ValueError(
                    f"EmbeddingQuantizer.fit: column(s) {constant[:10].tolist()} are constant "
                    f"on the {X.shape[0]} calibration rows ({constant.size} in all), so "
                    f"{self.precision} has no range to divide. Calibrate on more varied rows, "
                    "drop the constant dimensions, or use precision='binary'."
                )
            self.ranges_ = np.vstack([lo, hi]).astype(np.float32)
            self.bytes_per_row_ = d
        else:
            self.bytes_per_row_ = -(-d // 8)
        return self

    def transform(self, X):
        """The codes.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Dense, finite embeddings of the width seen in ``fit``.

        Returns
        -------
        codes : ndarray of shape (n_rows, n_features) or (n_rows, ceil(n_features / 8)), dtype int8 or uint8
            The codes: int8 (``"int8"``, ``"binary"`` packed) or uint8; the
            second shape for packed binary precisions.

        Raises
        ------
        ValueError
            If ``X`` holds NaN or inf.
        """
        check_is_fitted(self, "bytes_per_row_")
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], ensure_all_finite=False, reset=False
        )
        _check_finite(X, "EmbeddingQuantizer.transform")
        if self.precision in _EIGHT_BIT:
            starts = self.ranges_[0]
            steps = (self.ranges_[1] - self.ranges_[0]) / 255
            codes = np.clip(np.floor((X - starts) / steps), 0.0, 255.0)
            if self.precision == "int8":
                return (codes - 128).astype(np.int8)
            return codes.astype(np.uint8)
        if self.rotation_ is not None:
            X = (np.asarray(X, dtype=np.float64) - self.mean_) @ self.rotation_
        bits = X > 0
        if not self.pack:
            return bits.astype(np.uint8)
        packed = np.packbits(bits, axis=1)
        return (
            (packed.astype(np.int16) - 128).astype(np.int8)
            if self.precision == "binary"
            else packed
        )

    def __setstate__(self, state):
        super().__setstate__(state)  # the declared schema first: dtypes, shapes, finiteness
        if "bytes_per_row_" in vars(self):
            _check_calibration(self)

    @property
    def _n_features_out(self):
        if self.precision in _EIGHT_BIT or not self.pack:
            return self.n_features_in_
        return self.bytes_per_row_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags


def _check_calibration(q):
    """Cross-check a loaded quantizer: its tables against its precision and width."""

    def refuse(attr, problem):
        return ValueError(
            f"EmbeddingQuantizer: stored {attr} {problem}. The file is damaged or was "
            "crafted: calibrate again (fit), or save it again from a trusted copy."
        )

    eight_bit = q.precision in _EIGHT_BIT
    if eight_bit and q.ranges_ is None:
        raise refuse("ranges_", f"is missing, but precision={q.precision!r} needs it")
    if not eight_bit and q.ranges_ is not None:
        raise refuse("ranges_", f"is set although precision={q.precision!r} does not use it")
    if eight_bit and not (q.ranges_[1] > q.ranges_[0]).all():
        column = int(np.flatnonzero(~(q.ranges_[1] > q.ranges_[0]))[0])
        raise refuse(
            "ranges_",
            f"has an empty range in column {column} (its ends are equal or reversed): no code step",
        )
    expected = q.n_features_in_ if eight_bit else -(-q.n_features_in_ // 8)
    if q.bytes_per_row_ != expected:
        raise refuse(
            "bytes_per_row_",
            f"is {q.bytes_per_row_!r}, but precision={q.precision!r} over "
            f"n_features_in_={q.n_features_in_} stores {expected}",
        )

"""Compiled implicit-feedback alternating least squares with conjugate gradient.

Plain functions over numpy arrays, compiled with numba; no scikit-learn, no torch. One
half-step of ALS (Hu, Koren & Volinsky 2008) updates every row ``x_u`` of ``X`` with ``Y``
fixed, towards the minimiser of

    sum_i c_ui (p_ui - x_u . y_i)^2 + regularization * |x_u|^2,

``p_ui = 1`` for the items of row ``u`` (0 elsewhere), ``c_ui = 1 + extra_ui`` (``extra_ui`` is
the confidence above 1 of an observed pair, 0 elsewhere), i.e. the solution of
``(Y^T Y + regularization I + Y^T diag(extra_u) Y) x_u = Y^T (1 + extra_u)``. As implicit's
CPU solver (Frederickson, ``implicit/cpu/_als.pyx``, after Takács, Pilászy & Tikk 2011), a few
conjugate-gradient steps start from the current ``x_u`` instead of solving exactly, and
``Y^T Y`` is computed once per half-step, so a row costs ``O(n_u d + d^2)`` per step.

Rows are independent: each is computed by one thread in a fixed order, so the result does not
depend on the number of threads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from . import launch_threads

launch_threads()  # numba's pool, its idle threads spinning briefly (see launch_threads)

# fast-math lets the dot products vectorise; without "nnan"/"ninf", so a diverging fit still
# shows NaN (and the same code runs on every thread, so the result still does not depend on
# the thread count)
_FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}

#: rows of Y summed by one thread into one partial Gram matrix (fixed, so the sum is too)
GRAM_BLOCK = 512
#: blocks of rows of a half-step, each a task of the thread pool with one scratch array
ROW_BLOCKS = 256
#: squared residual norm below which conjugate gradient stops (implicit's 1e-20)
CG_TOLERANCE = 1e-20


class CsrLog(NamedTuple):
    """Observed pairs as CSR: row ``u``'s columns ``indices[indptr[u]:indptr[u + 1]]``
    (int64 / int32) with their confidence above 1, ``extra`` (float64)."""

    indptr: np.ndarray
    indices: np.ndarray
    extra: np.ndarray


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def regularized_gram(Y, regularization):
    """``Y^T Y + regularization * I`` in float64.

    Rows are summed in fixed blocks of :data:`GRAM_BLOCK` (in parallel, each row-major so the
    inner loop is contiguous), then the blocks in order: the same sum on any thread count.

    Parameters
    ----------
    Y : numpy.ndarray of shape (n, d), float32
    regularization : float

    Returns
    -------
    gram : numpy.ndarray of shape (d, d), float64
    """
    n, d = Y.shape
    n_blocks = (n + GRAM_BLOCK - 1) // GRAM_BLOCK
    partial = np.zeros((n_blocks, d, d))
    for block in prange(n_blocks):
        for i in range(block * GRAM_BLOCK, min(n, (block + 1) * GRAM_BLOCK)):
            for a in range(d):
                ya = float(Y[i, a])
                for b in range(d):
                    partial[block, a, b] += ya * Y[i, b]
    gram = np.zeros((d, d))
    for block in range(n_blocks):
        for a in range(d):
            for b in range(d):
                gram[a, b] += partial[block, a, b]
    for a in range(d):
        gram[a, a] += regularization
    return gram


#: rows of the work array of a row's conjugate gradient
_X, _R, _P, _AP = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def _apply(log, Y, gram, u, work, source, target):
    """``work[target] = (gram + Y^T diag(extra_u) Y) work[source]`` for row ``u``."""
    d = Y.shape[1]
    for a in range(d):
        total = np.float32(0.0)
        for b in range(d):
            total += gram[a, b] * work[source, b]
        work[target, a] = total
    for k in range(log.indptr[u], log.indptr[u + 1]):
        i = log.indices[k]
        dot = np.float32(0.0)
        for a in range(d):
            dot += Y[i, a] * work[source, a]
        weight = np.float32(log.extra[k]) * dot
        for a in range(d):
            work[target, a] += weight * Y[i, a]


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def _cg_row(log, X, Y, gram, u, cg_steps, work):
    """A few conjugate-gradient steps on row ``u`` of ``X``, from its current value
    (``work``: a (4, d) float32 scratch array for x, the residual, the direction and A p)."""
    d = Y.shape[1]
    for a in range(d):
        work[_X, a] = X[u, a]
    _apply(log, Y, gram, u, work, _X, _AP)
    for a in range(d):
        work[_R, a] = -work[_AP, a]
    for k in range(log.indptr[u], log.indptr[u + 1]):
        i = log.indices[k]
        confidence = np.float32(1.0 + log.extra[k])
        for a in range(d):
            work[_R, a] += confidence * Y[i, a]
    rs_old = np.float32(0.0)
    for a in range(d):
        work[_P, a] = work[_R, a]
        rs_old += work[_R, a] * work[_R, a]
    for _ in range(cg_steps):
        if rs_old < CG_TOLERANCE:
            break
        _apply(log, Y, gram, u, work, _P, _AP)
        curvature = np.float32(0.0)
        for a in range(d):
            curvature += work[_P, a] * work[_AP, a]
        step = rs_old / curvature
        rs_new = np.float32(0.0)
        for a in range(d):
            work[_X, a] += step * work[_P, a]
            work[_R, a] -= step * work[_AP, a]
            rs_new += work[_R, a] * work[_R, a]
        for a in range(d):
            work[_P, a] = work[_R, a] + (rs_new / rs_old) * work[_P, a]
        rs_old = rs_new
    for a in range(d):
        X[u, a] = work[_X, a]


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def cg_half_step(log, X, Y, regularization, cg_steps):
    """Update every row of ``X`` in place with ``Y`` fixed (one ALS half-step).

    Rows go in :data:`ROW_BLOCKS` fixed blocks, each with one scratch array; every row is
    computed by one thread from its own data, so the result does not depend on the threads.
    The CG steps compute in float32, as implicit's do (the Gram matrix is summed in float64,
    then rounded): on MovieLens a half-step took 0.70x the CPU time of float64 steps, and the
    recall@10 and the equality with implicit's factors held (``docs/interactions.md``).

    Parameters
    ----------
    log : CsrLog
        Rows of ``X`` by columns of ``Y`` (users by items for the user step; its transpose
        for the item step).
    X : numpy.ndarray of shape (n_rows, d), float32
        Updated in place.
    Y : numpy.ndarray of shape (n_columns, d), float32
    regularization : float
    cg_steps : int
        Conjugate-gradient steps per row (implicit's default: 3).
    """
    gram = regularized_gram(Y, regularization).astype(np.float32)
    n = X.shape[0]
    n_blocks = min(n, ROW_BLOCKS)
    for block in prange(n_blocks):
        work = np.empty((4, Y.shape[1]), np.float32)
        for u in range(block * n // n_blocks, (block + 1) * n // n_blocks):
            _cg_row(log, X, Y, gram, u, cg_steps, work)


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def implicit_loss(log, X, Y, regularization):
    """The objective of the module docstring summed over all rows, divided by the sum of
    the confidences of the observed pairs and the unobserved pairs (implicit's loss).

    Returns
    -------
    loss : float
    """
    gram = regularized_gram(Y, 0.0)
    d = Y.shape[1]
    totals = np.zeros(X.shape[0])
    for u in prange(X.shape[0]):
        # unobserved pairs contribute x^T Y^T Y x; observed ones replace their term
        total = 0.0
        for a in range(d):
            for b in range(d):
                total += X[u, a] * gram[a, b] * X[u, b]
        for k in range(log.indptr[u], log.indptr[u + 1]):
            i = log.indices[k]
            score = 0.0
            for a in range(d):
                score += X[u, a] * Y[i, a]
            c = 1.0 + log.extra[k]
            total += c * (1.0 - score) ** 2 - score * score
        totals[u] = total
    norms = 0.0
    for u in range(X.shape[0]):
        for a in range(d):
            norms += X[u, a] * X[u, a]
    for i in range(Y.shape[0]):
        for a in range(d):
            norms += Y[i, a] * Y[i, a]
    weight = float(X.shape[0] * Y.shape[0])
    for k in range(log.extra.shape[0]):
        weight += log.extra[k]
    total = 0.0
    for u in range(X.shape[0]):
        total += totals[u]
    return (total + regularization * norms) / weight


def warm_up():
    """Compile (or load from numba's disk cache) :func:`cg_half_step` ahead of a first fit.

    Called with the argument types ``InteractionEmbedder(method="als")`` passes (a
    :class:`CsrLog` of int64 / int32 / float64 arrays, float32 factor matrices, a float
    regularization and an int step count), so its fits find the machine code ready;
    ``skembed.text.word2vec.warm_up`` calls it.

    Returns
    -------
    users : numpy.ndarray of shape (2, 2), float32
        The user factors after one half-step on a two-by-two log with one observed pair per user.
    """
    log = CsrLog(np.array([0, 1, 2], np.int64), np.array([0, 1], np.int32), np.ones(2))
    users = np.zeros((2, 2), np.float32)
    cg_half_step(log, users, np.eye(2, dtype=np.float32), 0.1, 3)
    return users

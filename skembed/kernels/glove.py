"""Compiled GloVe kernels: in-place shuffling of the non-zeros and lock-free AdaGrad epochs.

Plain functions over numpy arrays, compiled with numba; no scikit-learn, no
torch. They mirror ``glove.c`` of the Stanford GloVe tools (Pennington,
Socher & Manning 2014): the co-occurrence records are shuffled once, then
each epoch every thread walks its own contiguous slice of the shuffled
records and updates the shared parameters without locks (Hogwild!, Recht et
al. 2011), as the C tool does with pthreads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# fast-math without "nnan"/"ninf", so that a diverging run still yields a NaN/inf loss
_FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}


@njit(cache=True, nogil=True)
def shuffle_records(rows, cols, vals, seed):
    """Shuffle three parallel arrays in place with the same permutation (Fisher–Yates).

    Parameters
    ----------
    rows, cols : numpy.ndarray of shape (nnz,), int32
        Word and context ids of the non-zero co-occurrences.
    vals : numpy.ndarray of shape (nnz,), float32
        Their co-occurrence counts ``X_ij``.
    seed : int
        Seed of numba's generator; the permutation is a function of it.
    """
    np.random.seed(seed)  # noqa: NPY002 - numba's generator, seeded inside the kernel
    for k in range(rows.shape[0] - 1, 0, -1):
        m = np.random.randint(0, k + 1)  # noqa: NPY002
        rows[k], rows[m] = rows[m], rows[k]
        cols[k], cols[m] = cols[m], cols[k]
        vals[k], vals[m] = vals[m], vals[k]


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def glove_epoch(
    rows,
    cols,
    vals,
    W,
    C,
    bw,
    bc,
    gW,
    gC,
    gbw,
    gbc,
    x_max,
    alpha,
    learning_rate,
    grad_clip,
    n_threads,
):
    """One AdaGrad epoch of GloVe over the (shuffled) non-zero co-occurrences, in place.

    For each record ``(i, j, X_ij)``::

        diff  = w_i . c_j + bw_i + bc_j - log X_ij
        fdiff = f(X_ij) * diff,     f(x) = (x / x_max)**alpha if x < x_max else 1
        cost += 0.5 * fdiff * diff
        g_w   = clip(fdiff * c_j, -grad_clip, grad_clip) * learning_rate   (per component)
        g_c   = clip(fdiff * w_i, -grad_clip, grad_clip) * learning_rate
        w_i  -= g_w / sqrt(gW_i);   gW_i += g_w**2      (likewise c_j, gC_j)
        g_b   = fdiff * learning_rate
        bw_i -= g_b / sqrt(gbw_i);  gbw_i += g_b**2     (likewise bc_j, gbc_j)

    which is the update of ``glove.c`` (AdaGrad with squared-gradient sums
    initialised to 1 by the caller; gradient components clipped at
    ``grad_clip``, 100 in the C tool).

    Parameters
    ----------
    rows, cols : numpy.ndarray of shape (nnz,), int32
        Word and context ids of the records.
    vals : numpy.ndarray of shape (nnz,), float32
        ``X_ij > 0``.
    W, C : numpy.ndarray of shape (n_words, vector_size), float32
        Word and context vectors, updated in place.
    bw, bc : numpy.ndarray of shape (n_words,), float32
        Word and context biases, updated in place.
    gW, gC, gbw, gbc : numpy.ndarray, float32
        AdaGrad squared-gradient sums, same shapes as ``W, C, bw, bc``.
    x_max, alpha, learning_rate, grad_clip : float
        See above.
    n_threads : int
        Number of contiguous slices of the records processed in parallel
        (lock-free); 1 gives a deterministic sequential epoch.

    Returns
    -------
    costs : numpy.ndarray of shape (n_threads,), float64
        Sum of ``0.5 * f(X_ij) * diff**2`` over each slice (before its update).
    """
    n = rows.shape[0]
    dim = W.shape[1]
    lr = np.float32(learning_rate)
    clip = np.float32(grad_clip)
    costs = np.zeros(n_threads, dtype=np.float64)
    for t in prange(n_threads):
        lo = (n * t) // n_threads
        hi = (n * (t + 1)) // n_threads
        cost = 0.0
        for k in range(lo, hi):
            i = rows[k]
            j = cols[k]
            x = np.float64(vals[k])
            dot = np.float32(0.0)
            for b in range(dim):
                dot += W[i, b] * C[j, b]
            diff = np.float64(dot) + np.float64(bw[i]) + np.float64(bc[j]) - np.log(x)
            if x < x_max:
                fdiff = (x / x_max) ** alpha * diff
            else:
                fdiff = diff
            cost += 0.5 * fdiff * diff
            fd = np.float32(fdiff)
            for b in range(dim):
                g1 = fd * C[j, b]
                g2 = fd * W[i, b]
                g1 = (clip if g1 > clip else (-clip if g1 < -clip else g1)) * lr
                g2 = (clip if g2 > clip else (-clip if g2 < -clip else g2)) * lr
                W[i, b] -= g1 / np.sqrt(gW[i, b])
                C[j, b] -= g2 / np.sqrt(gC[j, b])
                gW[i, b] += g1 * g1
                gC[j, b] += g2 * g2
            gb = fd * lr
            bw[i] -= gb / np.sqrt(gbw[i])
            bc[j] -= gb / np.sqrt(gbc[j])
            gbw[i] += gb * gb
            gbc[j] += gb * gb
        costs[t] = cost
    return costs

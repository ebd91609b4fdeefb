"""Compiled GloVe kernels: shuffling and blocking of the non-zeros, and AdaGrad epochs.

Plain functions over numpy arrays, compiled with numba; no scikit-learn, no
torch. The update is that of ``glove.c`` of the Stanford GloVe tools
(Pennington, Socher & Manning 2014). How the records are spread over threads
is a *schedule*, given by the caller. :class:`~skembed.text.GloVeTransformer`
uses the blocked schedule of DSGD (Gemulla et al. 2011): words are split into
``T`` blocks (``id % T``) and the records into ``T x T`` cells by (row block,
column block). An epoch runs ``T`` rounds; in round ``r`` thread ``t`` trains
cell ``(t, (t + r) % T)``, so no two threads ever touch the same row of
``W``/``b`` or of ``C``/``b~`` at the same time. Each cell is trained
sequentially in a fixed order and rounds are separated by a barrier: the
result does not depend on thread timing, so a fixed seed and ``T`` give
bit-identical vectors. (``glove.c`` instead lets ``T`` threads update shared
rows without locks, Hogwild!; measured on BBC News, the blocked schedule is
as fast, see ``docs/glove.md``.)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from . import launch_threads

launch_threads()  # numba's pool, its idle threads spinning briefly (see launch_threads)

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


@njit(cache=True, nogil=True)
def block_records(rows, cols, vals, n_blocks):
    """Group the records in place by cell ``(rows % T) * T + cols % T`` (American flag sort).

    The permutation is deterministic (a function of the input order), so
    records stay in shuffled order as far as a fixed in-place sort allows; no
    memory beyond ``T * T`` counters is used.

    Parameters
    ----------
    rows, cols : numpy.ndarray of shape (nnz,), int32
    vals : numpy.ndarray of shape (nnz,), float32
        Permuted in place together.
    n_blocks : int
        ``T``, the number of word blocks.

    Returns
    -------
    offsets : numpy.ndarray of shape (T * T + 1,), int64
        Records of cell ``c`` are ``offsets[c]:offsets[c + 1]``.
    """
    T = n_blocks
    n_cells = T * T
    counts = np.zeros(n_cells, np.int64)
    for k in range(rows.shape[0]):
        counts[(rows[k] % T) * T + cols[k] % T] += 1
    offsets = np.zeros(n_cells + 1, np.int64)
    for c in range(n_cells):
        offsets[c + 1] = offsets[c] + counts[c]
    nxt = offsets[:-1].copy()
    for c in range(n_cells):
        end = offsets[c + 1]
        while nxt[c] < end:
            k = nxt[c]
            d = (rows[k] % T) * T + cols[k] % T
            if d == c:
                nxt[c] += 1
            else:
                m = nxt[d]
                rows[k], rows[m] = rows[m], rows[k]
                cols[k], cols[m] = cols[m], cols[k]
                vals[k], vals[m] = vals[m], vals[k]
                nxt[d] += 1
    return offsets


def blocked_schedule(n_blocks):
    """Rounds of cells trained in parallel under the blocked scheme.

    Parameters
    ----------
    n_blocks : int

    Returns
    -------
    schedule : numpy.ndarray of shape (T, T), int64
        ``schedule[r, t] = t * T + (t + r) % T``: in each round the cells
        share no row block and no column block.

    Examples
    --------
    >>> blocked_schedule(2).tolist()
    [[0, 3], [1, 2]]
    """
    t = np.arange(n_blocks)
    return np.stack([t * n_blocks + (t + r) % n_blocks for r in range(n_blocks)]).astype(np.int64)


class Records(NamedTuple):
    """The non-zero co-occurrences, grouped into cells.

    Attributes
    ----------
    rows, cols : numpy.ndarray of shape (nnz,), int32
        Word and context ids of the records.
    vals : numpy.ndarray of shape (nnz,), float32
        Their co-occurrence counts ``X_ij > 0``.
    offsets : numpy.ndarray of shape (n_cells + 1,), int64
        Records of cell ``c`` are ``offsets[c]:offsets[c + 1]``, trained in that order
        (see :func:`block_records`).
    """

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    offsets: np.ndarray


class GloveWeights(NamedTuple):
    """GloVe's parameters, or their AdaGrad squared-gradient sums (same shapes), updated in place.

    Attributes
    ----------
    W, C : numpy.ndarray of shape (n_words, vector_size), float32
        Word and context vectors.
    bw, bc : numpy.ndarray of shape (n_words,), float32
        Word and context biases.
    """

    W: np.ndarray
    C: np.ndarray
    bw: np.ndarray
    bc: np.ndarray


class GloveSettings(NamedTuple):
    """The scalars of the update (see :func:`glove_epoch`).

    Attributes
    ----------
    x_max : float
        Counts at or above it weigh 1.
    weighting_exponent : float
        Exponent of the weighting function below ``x_max``.
    learning_rate : float
    grad_clip : float
        Each gradient component is clipped to ``[-grad_clip, grad_clip]``.
    """

    x_max: float
    weighting_exponent: float
    learning_rate: float
    grad_clip: float


@njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _train_span(lo, hi, records, weights, sums, x_max, exponent, lr, clip):
    """Sequential AdaGrad updates over records ``lo:hi``; returns their summed cost.

    ``weights`` and ``sums`` are :class:`GloveWeights` (parameters, squared-gradient sums).
    The arrays the loop writes are bound to locals first: numba's dead-code elimination
    once dropped a write through a named tuple's field in inlined code.
    """
    rows, cols, vals = records.rows, records.cols, records.vals
    W, C, bw, bc = weights.W, weights.C, weights.bw, weights.bc
    gW, gC, gbw, gbc = sums.W, sums.C, sums.bw, sums.bc
    dim = W.shape[1]
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
            fdiff = (x / x_max) ** exponent * diff
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
    return cost


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def glove_epoch(records, schedule, weights, sums, settings):
    """One AdaGrad epoch of GloVe over the non-zero co-occurrences, in place.

    For each record ``(i, j, X_ij)``::

        diff  = w_i . c_j + bw_i + bc_j - log X_ij
        fdiff = f(X_ij) * diff,  f(x) = (x / x_max)**weighting_exponent if x < x_max else 1
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
    records : Records
        The records and their cells' offsets (:func:`block_records`).
    schedule : numpy.ndarray of shape (n_rounds, n_parallel), int64
        Cells trained in parallel in each round, rounds one after the other
        (see :func:`blocked_schedule`).
    weights : GloveWeights
        ``W, C`` (float32, (n_words, vector_size)) and ``bw, bc`` (float32, (n_words,)),
        updated in place.
    sums : GloveWeights
        AdaGrad squared-gradient sums ``gW, gC, gbw, gbc``, same shapes and dtypes,
        updated in place.
    settings : GloveSettings
        ``x_max``, ``weighting_exponent``, ``learning_rate``, ``grad_clip`` (see above).

    Returns
    -------
    costs : numpy.ndarray of shape (n_cells,), float64
        Sum of ``0.5 * f(X_ij) * diff**2`` over each cell's records (each
        computed before that record's update); sum it in order for a
        deterministic total.
    """
    x_max = settings.x_max
    exponent = settings.weighting_exponent
    lr = np.float32(settings.learning_rate)
    clip = np.float32(settings.grad_clip)
    offsets = records.offsets
    costs = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    n_par = schedule.shape[1]
    for r in range(schedule.shape[0]):
        for t in prange(n_par):
            c = schedule[r, t]
            costs[c] = _train_span(
                offsets[c], offsets[c + 1], records, weights, sums, x_max, exponent, lr, clip
            )
    return costs

"""Word vectors → document vectors (mean, sum, max, tfidf, sif).

Pooling is a sparse matrix product: a ``(n_documents, n_words)`` weight
matrix built from the documents' word counts times the ``(n_words,
vector_size)`` vector matrix, so no per-token Python runs on the hot path.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..utils._schema import check_ids

POOLING_OPTIONS = ("mean", "sum", "max", "tfidf", "sif")


def count_matrix(ids, offsets, n_words):
    """Document × word count matrix from encoded documents.

    Parameters
    ----------
    ids : numpy.ndarray of shape (n_tokens,), int
        Word ids of the known tokens, documents one after another.
    offsets : numpy.ndarray of shape (n_documents + 1,), int64
        Document boundaries in ``ids``.
    n_words : int

    Returns
    -------
    counts : scipy.sparse.csr_matrix of shape (n_documents, n_words), dtype float64
    """
    n_docs = len(offsets) - 1
    check_ids(ids, n_words, "count_matrix", "vocabulary")  # csr_matrix trusts its indices
    data = np.ones(len(ids), dtype=np.float64)
    counts = sp.csr_matrix(
        (data, np.asarray(ids, dtype=np.int64), np.asarray(offsets)), shape=(n_docs, n_words)
    )
    counts.sum_duplicates()
    return counts


def smooth_idf(counts):
    """IDF as scikit-learn's ``TfidfTransformer(smooth_idf=True)``: ``ln((1+n)/(1+df)) + 1``.

    Parameters
    ----------
    counts : scipy.sparse matrix of shape (n_documents, n_words)

    Returns
    -------
    idf : numpy.ndarray of shape (n_words,), dtype float64
    """
    n_docs = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    return np.log((1.0 + n_docs) / (1.0 + df)) + 1.0


def sif_weights(word_counts, a=1e-3):
    """Smooth inverse frequency weights ``a / (a + p(w))`` (Arora, Liang & Ma 2017).

    Parameters
    ----------
    word_counts : numpy.ndarray of shape (n_words,)
        Corpus counts; ``p(w)`` is the count over the total.
    a : float, default=1e-3

    Returns
    -------
    weights : numpy.ndarray of shape (n_words,), dtype float64
    """
    p = np.asarray(word_counts, dtype=np.float64)
    p = p / max(p.sum(), 1.0)
    return a / (a + p)


def _weighted_average(counts, vectors, word_weights):
    weights = counts if word_weights is None else counts.multiply(word_weights[None, :]).tocsr()
    total = np.asarray(weights.sum(axis=1)).ravel()
    pooled = weights @ vectors.astype(np.float64, copy=False)
    nonzero = total > 0
    pooled[nonzero] /= total[nonzero, None]
    return pooled


def _max_pool(counts, vectors, chunk_rows=4096):
    n_docs = counts.shape[0]
    out = np.zeros((n_docs, vectors.shape[1]), dtype=np.float64)
    indptr, indices = counts.indptr, counts.indices
    for start in range(0, n_docs, chunk_rows):
        stop = min(start + chunk_rows, n_docs)
        lo, hi = indptr[start], indptr[stop]
        if hi == lo:
            continue
        rows = vectors[indices[lo:hi]]
        lengths = np.diff(indptr[start : stop + 1])
        nonempty = np.flatnonzero(lengths)
        starts = (indptr[start:stop] - lo)[nonempty]
        out[start + nonempty] = np.maximum.reduceat(rows, starts, axis=0)
    return out


def first_principal_component(doc_vectors, sample_weight=None):
    """Unit first right-singular vector of the (uncentred) document matrix, as in SIF.

    Parameters
    ----------
    doc_vectors : numpy.ndarray of shape (n_documents, vector_size)

    Returns
    -------
    component : numpy.ndarray of shape (vector_size,), dtype float64
        Zero vector if ``doc_vectors`` is all zeros.
    """
    X = np.asarray(doc_vectors, dtype=np.float64)
    if not np.any(X):
        return np.zeros(X.shape[1])
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    comp = vt[0]
    # fix the sign so results are deterministic
    return comp if comp[np.argmax(np.abs(comp))] >= 0 else -comp


def pool(counts, vectors, method="mean", *, idf=None, sif_weight=None, sif_component=None):
    """Pool word vectors into document vectors.

    Parameters
    ----------
    counts : scipy.sparse.csr_matrix of shape (n_documents, n_words)
        Known-word counts per document (see :func:`count_matrix`).
    vectors : numpy.ndarray of shape (n_words, vector_size)
    method : {"mean", "sum", "max", "tfidf", "sif"}, default="mean"
        ``"mean"``: average of the document's token vectors; ``"sum"``: their
        sum; ``"max"``: element-wise maximum; ``"tfidf"``: average weighted by
        each word's IDF (per token, so term frequency enters too);
        ``"sif"``: average weighted by ``a / (a + p(w))`` with the projection
        on ``sif_component`` removed (Arora, Liang & Ma 2017, "A Simple but
        Tough-to-Beat Baseline for Sentence Embeddings").
    idf : numpy.ndarray of shape (n_words,), optional
        Required for ``"tfidf"``.
    sif_weight : numpy.ndarray of shape (n_words,), optional
        Required for ``"sif"``.
    sif_component : numpy.ndarray of shape (vector_size,), optional
        Unit vector removed by ``"sif"`` (fitted on the training documents);
        nothing removed when ``None``.

    Returns
    -------
    pooled : numpy.ndarray of shape (n_documents, vector_size), dtype float64
        Rows of documents without known words are zero.

    Raises
    ------
    ValueError
        If ``method`` is unknown or its weights are missing.
    """
    if method == "mean":
        return _weighted_average(counts, vectors, None)
    if method == "sum":
        return counts @ vectors.astype(np.float64, copy=False)
    if method == "max":
        return _max_pool(counts, vectors)
    if method == "tfidf":
        if idf is None:
            raise ValueError(
                "pooling='tfidf' needs the IDF weights fitted on the training documents."
            )
        return _weighted_average(counts, vectors, idf)
    if method == "sif":
        if sif_weight is None:
            raise ValueError(
                "pooling='sif' needs the SIF word weights fitted on the training documents."
            )
        pooled = _weighted_average(counts, vectors, sif_weight)
        if sif_component is not None:
            nonempty = np.asarray(counts.sum(axis=1)).ravel() > 0
            pooled[nonempty] -= np.outer(pooled[nonempty] @ sif_component, sif_component)
        return pooled
    raise ValueError(f"pooling={method!r} is not one of {POOLING_OPTIONS}.")

"""``compare --compress``: what the best dense row keeps when truncated and quantized."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..utils._compute import limit_threads
from ._data import _take
from ._downstream import TEXT_WEIGHT, _downstream_path, downstream_values
from ._report import leaderboard


def compression_variants(width, random_state=0):
    """``[(name, step or None, stored bytes per row)]`` for an embedding ``width`` wide.

    The uncompressed float32 reference; PCA truncation to a half and a
    quarter of the width; int8 (ranges calibrated on each training fold);
    a quarter of the width in int8; one bit per dimension, of the raw
    coordinates and after ITQ's centring and rotation learned on the training
    fold (the bits are scored unpacked, stored packed: ``ceil(width / 8)``
    bytes).
    """
    from sklearn.pipeline import make_pipeline

    from ..compression import EmbeddingQuantizer, EmbeddingTruncator

    out = [("float32", None, 4 * width)]
    for frac, label in ((2, "half"), (4, "quarter")):
        k = max(1, width // frac)
        if k < width:
            trunc = EmbeddingTruncator(k, random_state=random_state)
            out.append((f"pca {label} ({k} dims) float32", trunc, 4 * k))
    out.append(("int8", EmbeddingQuantizer("int8"), width))
    k = max(1, width // 4)
    if k < width:
        step = make_pipeline(
            EmbeddingTruncator(k, random_state=random_state), EmbeddingQuantizer("int8")
        )
        out.append((f"pca quarter ({k} dims) int8", step, k))
    out.append(("binary", EmbeddingQuantizer("binary", pack=False), -(-width // 8)))
    # an SVD embedding (LSA) keeps its variance in a few coordinates, whose magnitudes the
    # signs lose; ITQ centres and rotates so that every bit carries a share (one shared
    # mean and rotation, no bytes per row)
    itq = EmbeddingQuantizer("binary", pack=False, rotation="itq", random_state=random_state)
    out.append(("binary, ITQ", itq, -(-width // 8)))
    return out


def compression_target(results, kind):
    """``(embedder name, None)`` of the best dense row, or ``(None, reason)`` when none applies."""
    board = leaderboard(results).dropna(subset=["mean_test_score"])
    if kind == "tabular":
        return None, (
            "--compress does nothing here: the rows are tabular embeddings "
            f"({int(board['n_features_out'].max())} dims at most), already small; "
            "compression is for wide text embeddings."
        )
    dense = board[(~board["sparse_output"]) & (board["embedder"] != "none")]
    if dense.empty:
        return None, (
            "--compress does nothing here: no row gives a dense embedding (sparse TF-IDF stores "
            "only its non-zeros and the 'none' row embeds no text); add a dense row such as "
            "lsa, word2vec or bert."
        )
    return str(dense.iloc[0]["embedder"]), None


def compress_best(rows, best_params, results, setting, random_state=0):
    """Score each compression variant of the best dense row on the comparison's folds.

    Each fold fits the row's embedder once (its best parameters), then each
    variant on the fold's training embedding, and the downstream path on the
    result; the variant's score is that of its best downstream value.

    Parameters
    ----------
    rows : dict of str to EmbedderRow
        The comparison's rows (embedder and table wrap of each).
    best_params : dict of str to dict
        Each row's best parameters (its downstream value included).
    results : pandas.DataFrame
        The comparison's results, to find the best dense row.
    setting : FoldSetting
        The data, folds, scorer, kind, task and threads of the comparison.
    random_state : int, default=0
        Seeds the PCA and quantisation variants.

    Returns
    -------
    table : pandas.DataFrame or None
        One row per variant: ``variant``, ``n_dims``, ``bytes_per_row``,
        ``bytes_ratio`` (float32 bytes / variant bytes), ``mean_test_score``,
        ``score_kept`` (its score / the float32 score), ``compress_rows_per_s``
        (the variant's own transform on held-out rows; NaN for float32, which
        has no step); ``None`` with a reason.
    reason : str or None
    """
    import pandas as pd
    from sklearn.base import clone

    X, y, folds, scorer, task = setting.X, setting.y, setting.folds, setting.scorer, setting.task
    name, reason = compression_target(results, setting.kind)
    if name is None:
        return None, reason
    embedder, wrap = rows[name].embedder, rows[name].wrap
    key, values = downstream_values(task)
    params = {k: v for k, v in best_params[name].items() if k not in (key, TEXT_WEIGHT)}
    scores, rates, variants = {}, {}, None
    with limit_threads(setting.n_jobs), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for train, test in folds:
            est = clone(embedder).set_params(**params)
            est = wrap(est) if wrap is not None else est
            Xt_tr = np.asarray(est.fit_transform(_take(X, train), y[train]), dtype=np.float32)
            Xt_te = np.asarray(est.transform(_take(X, test)), dtype=np.float32)
            variants = variants or compression_variants(Xt_tr.shape[1], random_state)
            for vname, step, _ in variants:
                if step is None:
                    Z_tr, Z_te, seconds = Xt_tr, Xt_te, 0.0
                else:
                    step = clone(step)
                    Z_tr = step.fit_transform(Xt_tr)
                    t0 = time.perf_counter()
                    Z_te = step.transform(Xt_te)
                    seconds = time.perf_counter() - t0
                scaler, path, _ = _downstream_path(Z_tr.astype(np.float64), y[train], task)
                Zs = scaler.transform(Z_te.astype(np.float64))
                per_value = [float(scorer(model, Zs, y[test])) for _, model in path]
                scores.setdefault(vname, []).append(per_value)
                rates.setdefault(vname, []).append((len(test), seconds, Z_tr.shape[1]))
    rows = []
    for vname, _, nbytes in variants:
        mean = np.mean(scores[vname], axis=0)  # per downstream value, over folds
        n, s = sum(r[0] for r in rates[vname]), sum(r[1] for r in rates[vname])
        rows.append(
            dict(
                embedder=name,
                variant=vname,
                n_dims=int(rates[vname][0][2]),
                bytes_per_row=int(nbytes),
                mean_test_score=float(mean.max()),
                # the float32 reference has no step of its own: no rate (NaN, empty in the CSV)
                compress_rows_per_s=float(n / s) if s > 0 else float("nan"),
            )
        )
    table = pd.DataFrame(rows)
    ref_score, ref_bytes = table.loc[0, "mean_test_score"], table.loc[0, "bytes_per_row"]
    table["score_kept"] = table["mean_test_score"] / ref_score
    table["bytes_ratio"] = ref_bytes / table["bytes_per_row"]
    return table, None


def format_compression(results):
    """The compression table of :func:`compare_embedders` (``compress=True``) as text.

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`compare_embedders` with ``compress=True``.

    Returns
    -------
    text : str
        One line per variant (dims, stored bytes per row, how many times
        fewer than float32, score, share of the float32 score kept, the
        variant's own transform rows/s), or the reason there is no table.
    """
    import pandas as pd

    records = results.attrs.get("compression")
    if not records:
        return results.attrs.get("compression_note") or ""
    table = pd.DataFrame.from_records(records)
    name = table["embedder"].iloc[0]
    head = (
        f"{'variant':<30}{'dims':>6}{'bytes/row':>11}{'x fewer':>9}"
        f"{'score':>9}{'kept':>9}{'rows/s':>12}"
    )
    lines = [f"compression of the best dense row ({name}), same folds:", head, "-" * len(head)]
    for r in table.itertuples(index=False):
        rate = "-" if np.isnan(r.compress_rows_per_s) else f"{r.compress_rows_per_s:.0f}"
        lines.append(
            f"{r.variant:<30}{r.n_dims:>6}{r.bytes_per_row:>11}{r.bytes_ratio:>9.1f}"
            f"{r.mean_test_score:>9.4f}{r.score_kept:>8.1%}{rate:>12}"
        )
    return "\n".join(lines)

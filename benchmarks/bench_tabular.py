"""Tabular embedders on ggplot2's diamonds: quality vs PCA, overhead vs a bare torch loop, scaling.

Prints, in one run:

1. reconstruction error on held-out rows, AutoencoderEmbedder / VAEEmbedder
   vs PCA at equal ``n_components`` (same Scaler+OneHot preprocessing; MSE
   in that space), and downstream held-out R^2 of log(price) (price is not
   an input) from the codes, with a ridge regression (linear) and a
   histogram gradient boosting regressor (non-linear);
2. training throughput (rows/s) of ``AutoencoderEmbedder.fit`` vs a
   hand-written minimal torch loop for the same network, loss, optimiser,
   batch size and thread count (goal: overhead <= 10 %);
3. time per epoch at 1x, 4x, 16x the diamonds rows.

Usage::

    python benchmarks/bench_tabular.py                    # full run
    python benchmarks/bench_tabular.py --fraction 0.1 --epochs 3 --scales 1,2 --repeats 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _util import reference_loop


def load(fraction, seed=0):
    from skembed.datasets import load_diamonds

    df = load_diamonds()
    if fraction < 1:
        df = df.sample(frac=fraction, random_state=seed).reset_index(drop=True)
    return df


def quality(df, n_components, epochs, seed):
    from sklearn.decomposition import PCA
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import train_test_split

    from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

    X = df.drop(columns=["price"])
    target = np.log(df["price"].to_numpy())
    X_tr, X_te, t_tr, t_te = train_test_split(X, target, test_size=0.2, random_state=seed)
    print(
        f"\n== 1. quality: diamonds, {len(X_tr)} train / {len(X_te)} held-out rows, "
        f"n_components={n_components}, {epochs} epochs =="
    )
    results = {}
    ae = AutoencoderEmbedder(n_components=n_components, epochs=epochs, random_state=seed)
    t0 = time.perf_counter()
    ae.fit(X_tr)
    ae_fit = time.perf_counter() - t0
    pre = ae.preprocessor_
    P_tr, P_te = pre.transform(X_tr), pre.transform(X_te)
    t0 = time.perf_counter()
    pca = PCA(n_components, random_state=seed).fit(P_tr)
    pca_fit = time.perf_counter() - t0
    pca_err = float(np.mean((pca.inverse_transform(pca.transform(P_te)) - P_te) ** 2))
    results["PCA"] = (pca_err, pca.transform(P_tr), pca.transform(P_te), pca_fit)
    results["AutoencoderEmbedder"] = (
        ae.reconstruction_error(X_te),
        ae.transform(X_tr),
        ae.transform(X_te),
        ae_fit,
    )
    vae = VAEEmbedder(n_components=n_components, epochs=epochs, random_state=seed)
    t0 = time.perf_counter()
    vae.fit(X_tr)
    vae_fit = time.perf_counter() - t0
    results["VAEEmbedder"] = (
        vae.reconstruction_error(X_te),
        vae.transform(X_tr),
        vae.transform(X_te),
        vae_fit,
    )
    from sklearn.ensemble import HistGradientBoostingRegressor

    print(
        f"{'embedder':<22} {'heldout_mse':>11} {'vs_PCA':>7} {'R2_ridge':>9} {'R2_hgb':>7} "
        f"{'fit_s':>7}"
    )
    for name, (err, c_tr, c_te, fit_s) in results.items():
        r2 = RidgeCV().fit(c_tr, t_tr).score(c_te, t_te)
        hgb = HistGradientBoostingRegressor(random_state=seed).fit(c_tr, t_tr)
        r2_hgb = hgb.score(c_te, t_te)
        print(
            f"{name:<22} {err:>11.5f} {err / pca_err:>7.3f} {r2:>9.4f} {r2_hgb:>7.4f} {fit_s:>7.2f}"
        )
    verdict = "BEATS" if results["AutoencoderEmbedder"][0] < pca_err else "does NOT beat"
    print(
        f"-> the autoencoder {verdict} PCA on held-out reconstruction error "
        f"(ratio {results['AutoencoderEmbedder'][0] / pca_err:.3f})"
    )


def hand_loop(Xt, config, numeric_index, groups, epochs, batch_size, lr, seed):
    """The same module and loss in the benchmarks' reference loop; returns seconds per epoch."""
    import torch

    from skembed.nn.autoencoder import Autoencoder, mixed_reconstruction_loss

    torch.manual_seed(seed)
    model = Autoencoder(**config)

    def loss_of(model, xb):
        return mixed_reconstruction_loss(model(xb), xb, numeric_index, groups).mean()

    return reference_loop(
        model, loss_of, torch.from_numpy(Xt), epochs=epochs, batch_size=batch_size, lr=lr, seed=seed
    )


def throughput(df, epochs, repeats, batch_size, seed):
    import torch

    from skembed.tabular import AutoencoderEmbedder

    X = df.drop(columns=["price"])
    print(
        f"\n== 2. training throughput: {len(X)} rows, batch_size={batch_size}, "
        f"{epochs} epochs x {repeats} repeats, 1 thread each =="
    )
    est_epoch, est_fit, hand = [], [], []
    numeric_index = groups = Xt = config = None
    for _ in range(repeats):
        ae = AutoencoderEmbedder(
            n_components=4, epochs=epochs, batch_size=batch_size, random_state=seed, n_jobs=1
        )
        t0 = time.perf_counter()
        ae.fit(X)
        est_fit.append(time.perf_counter() - t0)
        est_epoch += [h["seconds"] for h in ae.history_]
        if Xt is None:
            Xt = ae.preprocessor_.transform(X)
            config = dict(ae.model_.config)
            numeric_index = torch.as_tensor(ae.preprocessor_.numeric_index_, dtype=torch.long)
            groups = ae.preprocessor_.categorical_groups_
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            hand += hand_loop(Xt, config, numeric_index, groups, epochs, batch_size, 1e-3, seed)
        finally:
            torch.set_num_threads(old)
    n = len(X)
    est_rate = n / np.median(est_epoch)
    est_fit_rate = n * epochs / np.median(est_fit)
    hand_rate = n / np.median(hand)
    print(f"{'loop':<38} {'rows/s':>10} {'s/epoch':>8}")
    print(f"{'hand-written torch loop':<38} {hand_rate:>10.0f} {np.median(hand):>8.3f}")
    print(
        f"{'AutoencoderEmbedder (epoch, history_)':<38} {est_rate:>10.0f} "
        f"{np.median(est_epoch):>8.3f}"
    )
    print(
        f"{'AutoencoderEmbedder (whole fit)':<38} {est_fit_rate:>10.0f} "
        f"{np.median(est_fit) / epochs:>8.3f}"
    )
    print(
        f"-> per-epoch overhead vs hand loop: {100 * (hand_rate / est_rate - 1):+.1f} % "
        f"(whole fit incl. preprocessing and setup: {100 * (hand_rate / est_fit_rate - 1):+.1f} %); "
        "goal <= 10 %"
    )


def scaling(df, factors, epochs, batch_size, seed):
    import pandas as pd

    from skembed.tabular import AutoencoderEmbedder

    X = df.drop(columns=["price"])
    print(f"\n== 3. scaling: time per epoch ({epochs} epochs, batch_size={batch_size}) ==")
    print(f"{'rows':>10} {'factor':>6} {'s/epoch':>8} {'rows/s':>10} {'preprocess+setup_s':>18}")
    base = None
    for f in factors:
        big = pd.concat([X] * f, ignore_index=True)
        ae = AutoencoderEmbedder(
            n_components=4, epochs=epochs, batch_size=batch_size, random_state=seed
        )
        t0 = time.perf_counter()
        ae.fit(big)
        total = time.perf_counter() - t0
        per_epoch = float(np.median([h["seconds"] for h in ae.history_]))
        base = base or per_epoch
        print(
            f"{len(big):>10} {f:>5}x {per_epoch:>8.3f} {len(big) / per_epoch:>10.0f} "
            f"{total - sum(h['seconds'] for h in ae.history_):>18.2f}"
            f"   (x{per_epoch / base:.1f} of 1x)"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fraction", type=float, default=1.0, help="fraction of diamonds rows")
    parser.add_argument("--epochs", type=int, default=30, help="epochs of the quality run")
    parser.add_argument("--n-components", type=int, default=4)
    parser.add_argument("--throughput-epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--scales", default="1,4,16", help="row multipliers for the scaling run")
    parser.add_argument("--scaling-epochs", type=int, default=2)
    parser.add_argument(
        "--skip", default="", help="comma list of parts to skip: quality,throughput,scaling"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    print(f"torch {torch.__version__}, threads per fit: 1 (n_jobs=1), device cpu")
    df = load(args.fraction, args.seed)
    skip = set(filter(None, args.skip.split(",")))
    if "quality" not in skip:
        quality(df, args.n_components, args.epochs, args.seed)
    if "throughput" not in skip:
        throughput(df, args.throughput_epochs, args.repeats, args.batch_size, args.seed)
    if "scaling" not in skip:
        factors = [int(f) for f in args.scales.split(",")]
        scaling(df, factors, args.scaling_epochs, args.batch_size, args.seed)


if __name__ == "__main__":
    main()

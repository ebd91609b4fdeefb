"""
====================================================
Autoencoder and VAE codes of the Palmer penguins
====================================================

:class:`~skembed.AutoencoderEmbedder` and :class:`~skembed.VAEEmbedder` learn 2-D codes of
the penguins table (species left out of the inputs; numeric and categorical columns with
missing values go through ``preprocessor="auto"``). We compare their held-out reconstruction
error and how well the species can be read from the codes with PCA's, draw the three maps
coloured by species, and sample a few synthetic penguins from the VAE.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skembed.datasets import load_penguins
from skembed.tabular import AutoencoderEmbedder, VAEEmbedder

df = load_penguins()
X, species = df.drop(columns="species"), df["species"]
X_tr, X_te, s_tr, s_te = train_test_split(
    X, species, test_size=0.25, random_state=0, stratify=species
)
common = dict(
    n_components=2, epochs=150, early_stopping=True, patience=20, batch_size=32, random_state=0
)
ae = AutoencoderEmbedder(**common).fit(X_tr)
vae = VAEEmbedder(**common).fit(X_tr)
pre = ae.preprocessor_
pca = PCA(2).fit(pre.transform(X_tr))
P_te = pre.transform(X_te)
pca_err = float(np.mean((pca.inverse_transform(pca.transform(P_te)) - P_te) ** 2))

codes = {
    "PCA": (pca.transform(pre.transform(X_tr)), pca.transform(P_te), pca_err),
    "AutoencoderEmbedder": (ae.transform(X_tr), ae.transform(X_te), ae.reconstruction_error(X_te)),
    "VAEEmbedder": (vae.transform(X_tr), vae.transform(X_te), vae.reconstruction_error(X_te)),
}
print(f"{'embedder':<22} {'heldout_recon_mse':>17} {'species_acc_from_2d':>20}")
for name, (c_tr, c_te, err) in codes.items():
    acc = LogisticRegression(max_iter=1000).fit(c_tr, s_tr).score(c_te, s_te)
    print(f"{name:<22} {err:>17.4f} {acc:>20.3f}")
print(
    f"autoencoder: {ae.n_epochs_} epochs, best {ae.best_epoch_}; "
    f"VAE: {vae.n_epochs_} epochs, best {vae.best_epoch_}"
)

# %%
# Three synthetic penguins from the VAE
# -------------------------------------
print(vae.sample(3, random_state=0).to_string())

# %%
# The three maps and the training curves
# --------------------------------------
fig, axes = plt.subplots(1, 4, figsize=(20, 4.6))
colours = {"Adelie": "tab:orange", "Chinstrap": "tab:purple", "Gentoo": "tab:cyan"}
for ax, (name, est) in zip(
    axes[:3], [("PCA", None), ("AutoencoderEmbedder", ae), ("VAEEmbedder", vae)], strict=True
):
    z = pca.transform(pre.transform(X)) if est is None else est.transform(X)
    for label, colour in colours.items():
        mask = (species == label).to_numpy()
        ax.scatter(z[mask, 0], z[mask, 1], s=10, c=colour, label=label, alpha=0.8)
    ax.set_title(f"{name} (held-out recon MSE {codes[name][2]:.3f})")
    ax.set_xlabel("code 0")
    ax.set_ylabel("code 1")
axes[0].legend()
for est, name, style in [(ae, "AE", "-"), (vae, "VAE", "--")]:
    epochs = [h["epoch"] for h in est.history_]
    axes[3].plot(epochs, [h["loss"] for h in est.history_], style, label=f"{name} train")
    axes[3].plot(epochs, [h["valid_loss"] for h in est.history_], style, label=f"{name} valid")
axes[3].set_yscale("log")
axes[3].set_xlabel("epoch")
axes[3].set_ylabel("loss per row")
axes[3].set_title("training curves")
axes[3].legend()
fig.tight_layout()

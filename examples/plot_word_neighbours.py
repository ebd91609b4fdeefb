"""
===========================================
Word neighbours and analogies from BBC News
===========================================

Word-level embedders expose their vectors as ``wv_``, a
:class:`~skembed.keyedvectors.KeyedVectors`: nearest neighbours, similarities, analogies and
the word2vec/GloVe file formats. Here :class:`~skembed.PPMIEmbedder` (PPMI + SVD, seconds to
fit) learns word vectors from the 2,225 BBC News articles; we list neighbours, score
WordSim-353 and a few analogies, and draw a 2-D map of some words.
"""

# %%
# Fit the word vectors
# --------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA

from skembed import PPMIEmbedder
from skembed.datasets import load_bbc_news

texts, labels = load_bbc_news()
model = PPMIEmbedder(n_components=100, window=5, min_count=5, random_state=0).fit(texts)
kv = model.wv_
print(f"{len(kv.index_to_key)} words, {kv.vector_size} dimensions")

# %%
# Nearest neighbours
# ------------------
for word in ["labour", "film", "software", "bank", "chelsea"]:
    neighbours = ", ".join(w for w, _ in kv.most_similar(word, topn=6))
    print(f"{word:>10}: {neighbours}")

# %%
# Analogies (3CosAdd) and WordSim-353
# -----------------------------------
# ``most_similar(positive=[b, c], negative=[a])`` answers *a is to b as c is to ?*.
for a, b, c in [("england", "london", "france"), ("man", "king", "woman"), ("good", "best", "bad")]:
    answer = kv.most_similar(positive=[b, c], negative=[a], topn=1)[0][0]
    print(f"{a} : {b} :: {c} : {answer}")

from gensim.test.utils import datapath  # noqa: E402

from skembed.evaluation import word_similarity  # noqa: E402

res = word_similarity(kv, datapath("wordsim353.tsv"))
print(
    f"WordSim-353 Spearman {res['spearman']:.3f} on {res['n_pairs']} pairs "
    f"(OOV {res['oov_ratio']:.0%})"
)

# %%
# A map of words
# --------------
# Four topics' words, projected to 2-D with PCA: words of one topic sit together.
groups = {
    "politics": ["labour", "tory", "election", "minister", "blair", "party", "vote"],
    "sport": ["chelsea", "arsenal", "match", "cup", "coach", "striker", "season"],
    "tech": ["software", "phone", "mobile", "broadband", "computer", "users", "internet"],
    "business": ["bank", "shares", "profit", "economy", "dollar", "market", "oil"],
}
words = [w for ws in groups.values() for w in ws if w in kv.key_to_index]
xy = PCA(2, random_state=0).fit_transform(np.stack([kv[w] for w in words]))
fig, ax = plt.subplots(figsize=(7, 6))
for (topic, ws), colour in zip(groups.items(), plt.cm.tab10.colors, strict=False):
    idx = [words.index(w) for w in ws if w in words]
    ax.scatter(xy[idx, 0], xy[idx, 1], color=colour, label=topic)
    for i in idx:
        ax.annotate(words[i], xy[i], xytext=(3, 3), textcoords="offset points", fontsize=9)
ax.legend()
ax.set_title("PPMI + SVD word vectors of BBC News, first two principal components")
fig.tight_layout()

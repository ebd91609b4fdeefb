"""Nearest neighbours and WordSim-353 of PPMI + SVD word vectors trained on BBC News.

    python examples/word_neighbours_ppmi.py
"""

from skembed import PPMIEmbedder
from skembed.datasets import load_bbc_news
from skembed.evaluation import word_similarity

texts, _ = load_bbc_news()
model = PPMIEmbedder(n_components=100, window=5, min_count=5, random_state=0).fit(texts)
for word in ["labour", "film", "software", "bank"]:
    neighbours = ", ".join(w for w, _ in model.wv_.most_similar(word, topn=6))
    print(f"{word:>10}: {neighbours}")
try:
    from gensim.test.utils import datapath

    res = word_similarity(model.wv_, datapath("wordsim353.tsv"))
    print(f"WordSim-353 Spearman {res['spearman']:.3f} on {res['n_pairs']} pairs (OOV {res['oov_ratio']:.0%})")
except ImportError:
    print("install gensim for the WordSim-353 file")

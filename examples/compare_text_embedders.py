"""Which embedding works best for BBC News topic classification? (a small, fast version of
``skembed compare``: TF-IDF, LSA and PPMI, 3-fold CV on half of the articles).

    python examples/compare_text_embedders.py
"""

from skembed.datasets import load_bbc_news
from skembed.model_selection import compare_embedders, format_leaderboard

texts, labels = load_bbc_news()
texts, labels = texts[::2], labels[::2]
results = compare_embedders(texts, labels, ["tfidf", "lsa", "ppmi"], cv=3, random_state=0)
print(format_leaderboard(results, f"BBC News, {len(texts)} articles, 3-fold CV"))

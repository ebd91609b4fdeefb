"""
================================================
Save the winner, load it with ``load_pipeline``
================================================

``skembed compare --save-best best.skops`` writes the best pipeline refitted on all the data;
:func:`~skembed.model_selection.save_pipeline` does the same from Python. The file is written
with skops, which loads without executing code from the file, and
:func:`~skembed.model_selection.load_pipeline` trusts only scikit-learn's, numpy's and
skembed's own types. Here we keep the best of two embedders on 1,000 BBC News articles, save
it, load it back and classify articles it has never seen.
"""

# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn.metrics import ConfusionMatrixDisplay

from skembed.datasets import load_bbc_news
from skembed.model_selection import compare_embedders, load_pipeline, save_pipeline

texts, labels = load_bbc_news()
train_texts, train_labels = texts[::2][:1000], labels[::2][:1000]
test_texts, test_labels = texts[1::2], labels[1::2]
results, pipelines = compare_embedders(
    train_texts, train_labels, ["tfidf", "lsa"], cv=3, return_best=True
)
winner = results.sort_values("mean_test_score", ascending=False).iloc[0]["embedder"]
best = pipelines[winner]
print("best:", winner, best)

path = Path(tempfile.mkdtemp()) / "best.skops"
fmt = save_pipeline(best, path)
print(f"written as {fmt}: {path.name}, {path.stat().st_size / 1e6:.1f} MB")

# %%
# Load it back and predict
# ------------------------
pipe = load_pipeline(path)
new = ["Shares fell as the bank cut its forecast.", "The striker scored twice in the final."]
print(pipe.predict(new))
print("embedding of the new documents:", pipe["embed"].transform(new).shape)

# %%
# On the 1,112 held-out articles
# ------------------------------
fig, ax = plt.subplots(figsize=(6, 5))
ConfusionMatrixDisplay.from_estimator(pipe, test_texts, test_labels, ax=ax, colorbar=False)
ax.set_title(f"loaded pipeline, accuracy {pipe.score(test_texts, test_labels):.3f}")
fig.tight_layout()

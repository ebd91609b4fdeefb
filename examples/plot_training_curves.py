"""
===================================================
Training curves from ``history_`` and callbacks
===================================================

Every trained estimator keeps ``history_``, one record per epoch (``epoch``, ``loss``,
``seconds``, and ``valid_loss`` where a validation split is held out), and calls its
``callbacks`` after each epoch. Here a callback records the learning rate and a quality
figure of Word2Vec as it trains on BBC News, and
:class:`~skembed.callbacks.EarlyStopping` stops an autoencoder on the diamonds when its
validation loss stalls.
"""

# %%
# A callback that measures the vectors after each epoch
# -----------------------------------------------------
# A callback is any callable ``cb(estimator, record)``; returning ``True`` stops training.
import matplotlib.pyplot as plt
from gensim.test.utils import datapath

from skembed import AutoencoderEmbedder, Word2VecTransformer
from skembed.callbacks import EarlyStopping
from skembed.datasets import load_bbc_news, load_diamonds
from skembed.evaluation import word_similarity

texts, _ = load_bbc_news()
wordsim = []


def score_wordsim(estimator, record):
    """Record WordSim-353's Spearman correlation of the current vectors."""
    wordsim.append(word_similarity(estimator.wv_, datapath("wordsim353.tsv"))["spearman"])
    return False


w2v = Word2VecTransformer(
    vector_size=100, epochs=6, random_state=0, n_jobs=2, callbacks=[score_wordsim]
).fit(texts)
for record, rho in zip(w2v.history_, wordsim, strict=True):
    print(f"epoch {record['epoch']}: loss {record['loss']:.4f}, WordSim-353 {rho:.3f}")

# %%
# Early stopping on a validation split
# ------------------------------------
diamonds = load_diamonds().sample(5_000, random_state=0).drop(columns="price")
stopper = EarlyStopping(monitor="valid_loss", patience=4, restore_best_weights=True)
ae = AutoencoderEmbedder(
    n_components=3,
    epochs=200,
    early_stopping=True,
    validation_fraction=0.2,
    patience=1000,  # the built-in patience is out of the way: the callback decides
    random_state=0,
    callbacks=[stopper],
).fit(diamonds)
print(f"autoencoder stopped after {len(ae.history_)} of 200 epochs")

# %%
# The curves
# ----------
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
epochs = [r["epoch"] for r in w2v.history_]
axes[0].plot(epochs, [r["loss"] for r in w2v.history_], "o-", label="training loss")
axes[0].set_xlabel("epoch")
axes[0].set_ylabel("loss")
twin = axes[0].twinx()
twin.plot(epochs, wordsim, "s--", color="tab:red", label="WordSim-353 (callback)")
twin.set_ylabel("Spearman", color="tab:red")
axes[0].set_title("Word2VecTransformer on BBC News")
epochs = [r["epoch"] for r in ae.history_]
axes[1].plot(epochs, [r["loss"] for r in ae.history_], label="training")
axes[1].plot(epochs, [r["valid_loss"] for r in ae.history_], label="validation")
axes[1].set_yscale("log")
axes[1].set_xlabel("epoch")
axes[1].set_title("AutoencoderEmbedder on diamonds, EarlyStopping(patience=4)")
axes[1].legend()
fig.tight_layout()

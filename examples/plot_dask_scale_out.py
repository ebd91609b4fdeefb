"""
==============================================
Scaling out with Dask (a LocalCluster)
==============================================

:mod:`skembed.dask` runs skembed on a Dask cluster: grid searches and
:func:`~skembed.model_selection.compare_embedders` send candidates x folds to the workers,
and :func:`skembed.dask.transform` embeds a large corpus partition by partition with a
fitted estimator sent once to every worker. Here the "cluster" is a
``distributed.LocalCluster`` of two single-thread workers in this process (a gallery script
cannot start worker processes); on a real cluster only the scheduler's address changes.
"""

# %%
import time

import dask.dataframe as dd
import matplotlib.pyplot as plt
import pandas as pd
from distributed import Client, LocalCluster

from skembed import TfidfLSA
from skembed.dask import transform
from skembed.datasets import load_bbc_news

texts, labels = load_bbc_news()
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
client = Client(cluster)
print(client)

# %%
# Embedding a corpus partition by partition
# -----------------------------------------
lsa = TfidfLSA(n_components=100, random_state=0).fit(texts)
docs = dd.from_pandas(pd.Series(texts), npartitions=8)
start = time.perf_counter()
embedded = transform(lsa, docs, client=client).compute()
dask_s = time.perf_counter() - start
start = time.perf_counter()
local = lsa.transform(texts)
local_s = time.perf_counter() - start
print(f"{embedded.shape} on the cluster in {dask_s:.2f} s, in this process in {local_s:.2f} s")
print("same vectors:", bool(abs(embedded.to_numpy() - local).max() < 1e-5))

# %%
# ``compare_embedders`` on the cluster
# ------------------------------------
# ``scheduler=`` takes an address or a client; each candidate x fold is one task.
from skembed.model_selection import compare_embedders  # noqa: E402

results = compare_embedders(
    texts[::6], labels[::6], ["tfidf", "lsa", "ppmi"], cv=3, scheduler=client
)
board = results.groupby("embedder")["mean_test_score"].max().sort_values()
fig, ax = plt.subplots(figsize=(6, 3))
board.plot.barh(ax=ax, color="tab:blue")
ax.set_xlim(0.8, 1.0)
ax.set_xlabel("3-fold accuracy (best setting)")
ax.set_title(f"compare_embedders on a 2-worker LocalCluster, {len(texts[::6])} articles")
fig.tight_layout()

client.close()
cluster.close()

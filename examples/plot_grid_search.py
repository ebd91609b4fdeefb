"""
=========================================================
Grid search over embedding parameters in a Pipeline
=========================================================

Every embedder is a scikit-learn estimator, so its parameters are searched like any other
step's. Here :class:`~sklearn.model_selection.GridSearchCV` tries the number of LSA
components and the TF-IDF vocabulary cut-off of :class:`~skembed.TfidfLSA` together with the
classifier's ``C``, on 557 BBC News articles, and we draw the cross-validated accuracy of
each setting.
"""

# %%
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skembed import TfidfLSA
from skembed.datasets import load_bbc_news

texts, labels = load_bbc_news()
texts, labels = texts[::4], labels[::4]
pipe = make_pipeline(TfidfLSA(random_state=0), StandardScaler(), LogisticRegression(max_iter=2000))
grid = {
    "tfidflsa__n_components": [5, 20, 80],
    "tfidflsa__min_df": [1, 5],
    "logisticregression__C": [0.1, 10.0],
}
search = GridSearchCV(pipe, grid, cv=StratifiedKFold(3, shuffle=True, random_state=0))
search.fit(texts, labels)
print("best:", search.best_params_, f"accuracy {search.best_score_:.4f}")

# %%
# Accuracy against the number of components
# -----------------------------------------
res = pd.DataFrame(search.cv_results_)
fig, ax = plt.subplots(figsize=(7, 4.5))
for (min_df, C), part in res.groupby(["param_tfidflsa__min_df", "param_logisticregression__C"]):
    part = part.sort_values("param_tfidflsa__n_components")
    ax.errorbar(
        part["param_tfidflsa__n_components"].astype(int),
        part["mean_test_score"],
        yerr=part["std_test_score"],
        marker="o",
        capsize=3,
        label=f"min_df={min_df}, C={C}",
    )
ax.set_xscale("log")
ax.set_xlabel("TfidfLSA n_components")
ax.set_ylabel("3-fold accuracy")
ax.set_title(f"GridSearchCV on {len(texts)} BBC News articles")
ax.legend()
fig.tight_layout()

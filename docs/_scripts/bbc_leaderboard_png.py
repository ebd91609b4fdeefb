"""Draw docs/_static/bbc_leaderboard.png, the README's picture, from the BBC News leaderboard of
docs/benchmarks/leaderboards.md (`bash tools/compare.sh`, 5-fold CV, 2026-11-25). Run from the root:
`.venv/bin/python docs/_scripts/bbc_leaderboard_png.py`."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [
    ("tfidf", 0.9816, 0.0026),
    ("lsa", 0.9784, 0.0034),
    ("ppmi", 0.9739, 0.0058),
    ("bert", 0.9739, 0.0048),
    ("static", 0.9721, 0.0044),
    ("doc2vec", 0.9694, 0.0066),
    ("fasttext", 0.9672, 0.0023),
    ("word2vec", 0.9667, 0.0026),
    ("glove", 0.9303, 0.0113),
]
rows = rows[::-1]
fig, ax = plt.subplots(figsize=(6.4, 3.2), dpi=100)
ax.barh(
    [r[0] for r in rows],
    [r[1] for r in rows],
    xerr=[r[2] for r in rows],
    color="#4c72b0",
    capsize=2,
)
ax.set_xlim(0.90, 1.0)
for i, r in enumerate(rows):
    ax.text(r[1] + r[2] + 0.002, i, f"{r[1]:.4f}", va="center", fontsize=8)
ax.set_xlabel("accuracy, 5-fold CV (mean ± std)")
ax.set_title("skembed compare on BBC News (2,225 articles, 5 topics)", fontsize=10)
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
fig.savefig("docs/_static/bbc_leaderboard.png")

"""
=====================================================
Which embedding for BBC News? The compare leaderboard
=====================================================

``skembed compare`` cross-validates each embedder with the same downstream model (a scaler
and a logistic regression whose ``C`` is searched) and ranks them. Here it runs on a
stratified sample of 600 of the 2,225 BBC News articles with 3 folds and four fast
embedders, so that it takes about a minute; ``bash tools/compare.sh`` runs the full version
(all nine default embedders, 5 folds, all articles; its leaderboard is in
:doc:`/benchmarks/leaderboards`).
"""

# %%
# The command line
# ----------------
# The command writes a CSV, a JSON, a bar chart and a self-contained HTML page. We call its
# entry point from Python, exactly as ``skembed compare ...`` would run in a shell.
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from skembed.cli import main

out = Path(tempfile.mkdtemp())
status = main(
    [
        "compare",
        "--dataset", "bbc",
        "--limit", "600",
        "--embedders", "tfidf,lsa,ppmi,word2vec",
        "--cv", "3",
        "--output-dir", str(out),
    ]
)  # fmt: skip
assert status in (0, None), status
print(sorted(p.name for p in out.iterdir()))

# %%
# The bar chart it wrote
# ----------------------
image = plt.imread(out / "leaderboard.png")
fig, ax = plt.subplots(figsize=(8, 8 * image.shape[0] / image.shape[1]))
ax.imshow(image)
ax.axis("off")
fig.tight_layout()

# %%
# The HTML report
# ---------------
# ``leaderboard.html`` holds the table, the chart, the detected roles of the columns, the
# downstream model and the command, in one file that opens without a network. It is shown
# here in a frame.
import html  # noqa: E402


class HTMLReport:
    """Show an HTML file inline (sphinx-gallery renders ``_repr_html_``)."""

    def __init__(self, path):
        self.page = Path(path).read_text()

    def _repr_html_(self):
        return (
            f'<iframe srcdoc="{html.escape(self.page)}" '
            'style="width:100%;height:620px;border:1px solid #ccc"></iframe>'
        )


HTMLReport(out / "leaderboard.html")

# %%
# The same from Python
# --------------------
# :func:`~skembed.model_selection.compare_embedders` returns a ``cv_results_``-shaped
# DataFrame; :func:`~skembed.model_selection.format_leaderboard` prints it as the command does.
from skembed.datasets import load_bbc_news  # noqa: E402
from skembed.model_selection import compare_embedders, format_leaderboard  # noqa: E402

texts, labels = load_bbc_news()
texts, labels = texts[::8], labels[::8]
results = compare_embedders(texts, labels, ["tfidf", "lsa"], cv=3, random_state=0)
print(format_leaderboard(results, f"BBC News, {len(texts)} articles, 3-fold CV"))

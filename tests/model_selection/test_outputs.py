"""Tests of ``skembed/model_selection/_outputs.py`` (moved from ``tests/model_selection/test_compare_tables.py`` to the mirrored path)."""

import numpy as np
import pytest
from _helpers import mixed_table

from skembed import model_selection as ms

pd = pytest.importorskip("pandas")


def test_html_page_is_self_contained():
    from skembed.model_selection._outputs import chart_png, leaderboard_html

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["tfidf", "none"], cv=2)
    png = chart_png(results, "t")
    page = leaderboard_html(results, "A <title>", "skembed compare --csv x.csv", png)
    assert page.startswith("<!DOCTYPE html>") and "A &lt;title&gt;" in page
    assert page.count("<tr>") == 3 and "data:image/png;base64," in page
    assert "text columns</dt><dd>review" in page and "skembed compare --csv x.csv" in page
    assert "majority class scores accuracy" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page


def test_a_long_chart_title_stays_inside_the_figure(monkeypatch):
    import matplotlib.pyplot as plt

    from skembed.model_selection._outputs import chart_png

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["none"], cv=2)
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to measure it
    title = (  # the loans chart's title was cut off at "5-fold C"; a CSV's name can be longer
        "skembed compare — customer_reviews_2026.csv: 10000 rows, regression on "
        "interest_rate, 5-fold CV"
    )
    assert chart_png(results, title).startswith(b"\x89PNG")
    fig = figures[0]
    box = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width
    assert fig.axes[0].get_title().replace("\n", " ") == title


def test_html_page_renders_in_headless_chromium(tmp_path):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "screenshot_report", __file__.rsplit("/tests/", 1)[0] + "/tools/screenshot_report.py"
    )
    tool = importlib.util.module_from_spec(spec)
    sys.modules["screenshot_report"] = tool
    spec.loader.exec_module(tool)
    if tool.find_browser() is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    from skembed.model_selection._outputs import write_outputs

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["tfidf", "none"], cv=2)
    paths, failures = write_outputs(
        results, str(tmp_path), title="render", command="skembed compare"
    )
    assert failures == [] and str(tmp_path / "leaderboard.html") in paths
    shot = tool.screenshot(tmp_path / "leaderboard.html", tmp_path / "shot.png")
    non_white, blue = tool.check_picture(shot)
    assert non_white > 0.02 and blue > 0.002  # text drawn, and the chart's bars


def test_user_text_with_dollar_signs_is_drawn_verbatim(tmp_path):
    """A CSV named ``data$\\foo$.csv`` or a column ``price $_x^_$`` is not mathtext (issue 40)."""
    from matplotlib.figure import Figure
    from sklearn.feature_extraction.text import TfidfVectorizer

    from skembed.model_selection._outputs import chart_png

    frame, label = mixed_table(60)
    frame = frame.rename(columns={"count": "price $_x^_$"})
    results = ms.compare_embedders(frame, label, {"tf$_i^_$df": TfidfVectorizer()}, cv=2)
    drawn = []
    original = Figure.savefig

    def keep(fig, *args, **kwargs):
        drawn.extend(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")))
        return original(fig, *args, **kwargs)

    Figure.savefig = keep
    try:
        png = chart_png(results, "skembed compare — data$\\foo$.csv: price $_x^_$")
    finally:
        Figure.savefig = original
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "skembed compare — data$\\foo$.csv: price $_x^_$" in drawn
    assert "tf$_i^_$df" in drawn
    paths, failures = ms.write_outputs(results, str(tmp_path), title="data$\\foo$.csv")
    assert failures == [] and any(p.endswith(".png") for p in paths)


def test_pareto_chart_marks_the_front_and_is_written():
    from matplotlib.figure import Figure

    from skembed.model_selection._outputs import pareto_png

    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["tfidf", "none"], cv=2)
    kept = []
    original = Figure.savefig

    def keep(fig, *args, **kwargs):
        kept.append(fig)
        return original(fig, *args, **kwargs)

    Figure.savefig = keep
    try:
        png = pareto_png(results, "t")
    finally:
        Figure.savefig = original
    assert png.startswith(b"\x89PNG")
    ax = kept[0].axes[0]
    assert ax.get_xscale() == "log" and "rows per second" in ax.get_xlabel()
    ticks = [t.get_text() for t in ax.get_xticklabels(minor=True) + ax.get_xticklabels()]
    assert ticks and not any("$" in t for t in ticks)  # plain numbers, not raw TeX
    board = ms.leaderboard(results)
    front = ms.pareto_front(board)
    labels = {t.get_text(): t.get_fontweight() for t in ax.texts}
    for name, on in zip(board["embedder"], front, strict=True):
        assert labels[name] == ("bold" if on else "normal")


def test_html_report_shows_the_pareto_chart_in_headless_chromium(tmp_path):
    """The page carries the Pareto chart and Chromium draws it (its orange front points)."""
    import importlib.util
    import sys

    import matplotlib.image as mpimg

    spec = importlib.util.spec_from_file_location(
        "screenshot_report", __file__.rsplit("/tests/", 1)[0] + "/tools/screenshot_report.py"
    )
    tool = importlib.util.module_from_spec(spec)
    sys.modules["screenshot_report"] = tool
    spec.loader.exec_module(tool)
    if tool.find_browser() is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    frame, label = mixed_table(60)
    results = ms.compare_embedders(frame, label, ["tfidf", "none"], cv=2)
    paths, failures = ms.write_outputs(results, str(tmp_path), title="pareto")
    assert failures == [] and str(tmp_path / "leaderboard_pareto.png") in paths
    page = (tmp_path / "leaderboard.html").read_text()
    assert 'id="pareto" alt="Pareto chart: score against transform speed"' in page
    shot = tool.screenshot(tmp_path / "leaderboard.html", tmp_path / "shot.png", height=2400)
    img = mpimg.imread(shot)[..., :3]
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    # tab:orange pixels: the legend's front marker and at least one front point are always
    # drawn (about 190 pixels when one point dominates the other, more when the step line
    # joins two); a page whose image did not render has none.
    orange = int(np.sum((r > 0.9) & (g > 0.35) & (g < 0.65) & (b < 0.25)))
    assert orange > 80, orange


def test_a_leaderboard_whose_rows_all_failed_still_writes_its_files(tmp_path):
    from skembed import TfidfLSA
    from skembed.model_selection import compare_embedders
    from skembed.model_selection._outputs import pareto_png, write_outputs

    docs = ["cheap loan bank", "bank money loan", "cat dog farm", "farm animal dog"] * 3
    labels = ["money", "money", "farm", "farm"] * 3
    too_wide = {"lsa": TfidfLSA(n_components=50)}  # wider than the vocabulary: every fold fails
    with pytest.warns(UserWarning, match="failed on fold"):
        results = compare_embedders(docs, labels, too_wide, cv=2)
    assert pareto_png(results) is None  # nothing to place on a log axis
    paths, failures = write_outputs(results, tmp_path)
    assert failures == [] and any(p.endswith("leaderboard.html") for p in paths)

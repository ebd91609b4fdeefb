"""The files of a comparison: leaderboard CSV/JSON, every candidate's CSV, a chart, an HTML page."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import textwrap
from typing import NamedTuple

import numpy as np

from ..utils._files import write_atomically
from ._columns import ROLES
from ._report import leaderboard, pareto_front, reference_line


def _board(results):
    board = leaderboard(results)
    board.insert(0, "rank", np.arange(1, len(board) + 1))
    board["pareto"] = pareto_front(board)
    return board[[c for c in board.columns if not c.startswith("split")]]


def chart_png(results, title=""):
    """The leaderboard as a horizontal bar chart (PNG bytes), or ``None`` without matplotlib.

    Bars: mean ± std score per embedder; a dashed line marks the reference
    score (majority-class rate, or R² 0 of predicting the mean).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    # user text (a CSV's name, a column's, an embedder's) is drawn verbatim: with mathtext on,
    # a name such as ``data$\\foo$.csv`` is parsed as mathematics and savefig raises
    with plt.rc_context({"text.parse_math": False, "text.usetex": False}):
        return _bar_chart(plt, results, title)


def pareto_png(results, title=""):
    """Score against transform speed (log axis), the Pareto front marked (PNG bytes), or ``None``.

    One point per embedder (its best candidate): held-out rows per second
    without cache on a log x axis, the cross-validated score on the y axis;
    the rows no other row beats on both (:func:`pareto_front`) are joined by
    a step line and labelled in bold. ``None`` without matplotlib, or when no
    row has both a score and a speed (every fold fit failed): there is
    nothing to place on a log axis.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    board = leaderboard(results).dropna(subset=["mean_test_score", "transform_rows_per_s"])
    if not (board["transform_rows_per_s"] > 0).any():
        return None
    with plt.rc_context({"text.parse_math": False, "text.usetex": False}):
        return _pareto_chart(plt, results, title)


def _pareto_chart(plt, results, title):
    board = leaderboard(results).dropna(subset=["mean_test_score", "transform_rows_per_s"])
    board = board[board["transform_rows_per_s"] > 0].reset_index(drop=True)
    front = pareto_front(board)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    speed = board["transform_rows_per_s"].to_numpy(dtype=float)
    score = board["mean_test_score"].to_numpy(dtype=float)
    ax.scatter(speed[~front], score[~front], color="tab:gray", label="dominated")
    ax.scatter(speed[front], score[front], color="tab:orange", zorder=3, label="Pareto front")
    order = np.argsort(speed[front])
    ax.step(speed[front][order], score[front][order], where="post", color="tab:orange", lw=1)
    for name, x, y, on in zip(board["embedder"], speed, score, front, strict=True):
        ax.annotate(
            str(name),
            (x, y),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=8,
            fontweight="bold" if on else "normal",
        )
    ax.set_xscale("log")
    # plain numbers: with mathtext off (user text), the default log labels would show raw TeX
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    narrow = len(speed) and speed.max() / max(speed.min(), 1e-12) < 10
    ax.xaxis.set_minor_formatter(plain if narrow else NullFormatter())
    scoring = board["scoring"].iloc[0] if len(board) else ""
    ax.set_xlabel("transform speed: held-out rows per second, no cache (log scale)")
    ax.set_ylabel(f"cross-validated {scoring}")
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    return buf.getvalue()


def _axis_start(values, task):
    """Where the score axis starts: 0.1 below the lowest score, at most 0 for R² (which can be
    negative: a row worse than predicting the mean must show its bar), at least 0 otherwise.

    Examples
    --------
    >>> _axis_start([0.9, 0.95], "classification"), _axis_start([-0.3, 0.2], "regression")
    (0.8, -0.4)
    """
    if not values:
        return 0.0
    lo = round(min(values) - 0.1, 6)
    return min(lo, 0.0) if task == "regression" else max(lo, 0.0)


def _bar_chart(plt, results, title):
    board = leaderboard(results).dropna(subset=["mean_test_score"])
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(board) + 1.8))
    names = board["embedder"].tolist()[::-1]
    means = board["mean_test_score"].tolist()[::-1]
    stds = board["std_test_score"].tolist()[::-1]
    ax.barh(names, means, xerr=stds, color="tab:blue", alpha=0.8)
    ref = results.attrs.get("reference") if reference_line(results) else None
    values = means + ([ref] if ref is not None else [])
    lo = _axis_start(values, results.attrs.get("task"))
    ax.set_xlim(lo, 1.0)
    if ref is not None:
        label = (
            "predicting the mean" if results.attrs.get("task") == "regression" else "majority class"
        )
        ax.axvline(ref, color="tab:red", linestyle="--", linewidth=1, label=f"{label}: {ref:.3f}")
        ax.legend(loc="lower right", fontsize=8)
    scoring = board["scoring"].iloc[0] if len(board) else ""
    model = "ridge" if results.attrs.get("task") == "regression" else "LR"
    ax.set_xlabel(f"cross-validated {scoring} (downstream: scaler + {model}, searched)")
    # wrapped: a data set's long description ran past the 7-inch figure and was cut off
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=10)
    for y, m in enumerate(means):  # inside the bar, clear of the error bar
        ax.text(lo + 0.003, y, f"{m:.3f}", va="center", fontsize=8, color="white")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    return buf.getvalue()


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;font-size:.9em}th,td{padding:.3em .7em;border-bottom:1px solid #ddd}
th{text-align:left;background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{background:#f3f3f3;padding:.1em .3em}dt{font-weight:bold}img{max-width:100%}"""


def leaderboard_html(results, title="", command=None, png=None, pareto=None):
    """The leaderboard as one self-contained HTML page (no external file or script).

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`compare_embedders`.
    title : str, default=""
        The chart's and the HTML page's title.
    command : str or None, default=None
        The command that produced it, shown verbatim.
    png : bytes or None, default=None
        The chart (:func:`chart_png`), inlined as a ``data:`` URI.
    pareto : bytes or None, default=None
        The score-against-speed chart (:func:`pareto_png`), inlined the same way.

    Returns
    -------
    page : str
        The table (rank, embedder, score, width, fit seconds and their
        embedder/downstream shares, rows/s, peak memory and size in MB, the
        reconstruction error of tabular rows, a mixed table's "text alone"
        and "vs none", a mark on the Pareto front, best parameters): every
        column the console's leaderboard shows. Then the two charts, the
        reference score, the column roles, the task and downstream model, the
        folds, the notes, whether the run was interrupted, and the command.
    """
    esc = html.escape
    board = _board(results)
    cols = _html_columns(board)
    head = "".join(f"<th>{esc(col.label)}</th>" for col in cols)
    head += "<th>best params</th><th>description</th>"
    rows = "".join(_html_row(r, cols) for r in board.to_dict("records"))
    dl = "".join(
        f"<dt>{esc(k)}</dt><dd>{f'<code>{esc(v)}</code>' if k == 'command' else esc(str(v))}</dd>"
        for k, v in _html_facts(results, command)
    )
    chart = _html_charts(png, pareto)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title or 'skembed compare')}</title><style>{_CSS}</style></head><body>"
        f"<h1>{esc(title or 'skembed compare')}</h1>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        f"{chart}{_compression_html(results)}<dl>{dl}</dl></body></html>\n"
    )


class _Column(NamedTuple):
    """A column of the HTML leaderboard."""

    #: the results' column
    key: str
    #: its header
    label: str
    #: the format of a cell; ``"{}"`` for text (not right-aligned unless rank or dim)
    fmt: str


def _html_columns(board):
    """The HTML leaderboard's columns: the console's, in its order."""
    scoring = board["scoring"].iloc[0] if len(board) else ""
    cols = [
        _Column("rank", "rank", "{}"),
        _Column("embedder", "embedder", "{}"),
        _Column("mean_test_score", f"{scoring} mean", "{:.4f}"),
        _Column("std_test_score", "± std", "{:.4f}"),
        _Column("n_features_out", "dim", "{}"),
        _Column("mean_fit_time", "fit s", "{:.2f}"),
        _Column("mean_embed_fit_time", "embedder s", "{:.2f}"),
        _Column("mean_downstream_fit_time", "downstream s", "{:.2f}"),
        _Column("transform_rows_per_s", "rows/s", "{:.0f}"),
        _Column("fit_peak_memory_mb", "peak MB", "{:.1f}"),
        _Column("pipeline_size_mb", "size MB", "{:.2f}"),
        _Column("pareto", "Pareto", "{}"),
    ]
    if board["mean_reconstruction_error"].notna().any():
        cols.insert(-1, _Column("mean_reconstruction_error", "recon err", "{:.4f}"))
    if "text_only_score" in board and board["text_only_score"].notna().any():
        cols[-1:-1] = [
            _Column("text_only_score", "text alone", "{:.4f}"),
            _Column("delta_vs_none", "vs none", "{:+.4f}"),
        ]
    return cols


def _html_row(r, cols):
    """One leaderboard row (a record of the board) as an HTML table row."""
    esc = html.escape
    cells = []
    for col in cols:
        value = r.get(col.key)
        text = "-" if value is None or value != value else col.fmt.format(value)
        text = ("yes" if value else "") if col.key == "pareto" else text
        numeric = col.fmt != "{}" or col.key in ("rank", "n_features_out")
        cls = ' class="num"' if numeric else ""
        cells.append(f"<td{cls}>{esc(text)}</td>")
    cells.append(f"<td><code>{esc(json.dumps(r['params'], default=str))}</code></td>")
    cells.append(f"<td>{esc(str(r.get('description', '')))}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def _html_facts(results, command):
    """``(name, value)`` pairs of the page's list: the task, the run and the columns' roles."""
    facts = [("task", results.attrs.get("task", "classification"))]
    facts.append(("downstream model", results.attrs.get("downstream", "")))
    if results.attrs.get("cv"):
        facts.append(("folds", results.attrs["cv"]))
    facts += [("note", note) for note in results.attrs.get("notes") or ()]
    if results.attrs.get("interrupted"):
        facts.append(("interrupted", f"{results.attrs['interrupted']} (Ctrl-C)"))
    if reference_line(results):
        facts.append(("reference", reference_line(results).removeprefix("reference: ")))
    roles = results.attrs.get("roles")
    if roles:
        for role in (*ROLES, "dropped"):
            if roles.get(role):
                facts.append((f"{role} columns", ", ".join(map(str, roles[role]))))
    if command:
        facts.append(("command", command))
    return facts


def _html_charts(png, pareto):
    """The two charts inlined as ``data:`` URIs; ``""`` for each not given."""
    chart = ""
    if png:
        data = base64.b64encode(png).decode("ascii")
        chart = f'<p><img alt="leaderboard chart" src="data:image/png;base64,{data}"></p>'
    if pareto:
        data = base64.b64encode(pareto).decode("ascii")
        chart += (
            '<p><img id="pareto" alt="Pareto chart: score against transform speed" '
            f'src="data:image/png;base64,{data}"></p>'
        )
    return chart


def _no_value(value):
    """A table cell with nothing to show: NaN (the float32 reference's step rate)."""
    return isinstance(value, float) and value != value


def _compression_html(results):
    """The ``--compress`` table as an HTML section, or its reason, or ``""``."""
    esc = html.escape
    records = results.attrs.get("compression")
    if not records:
        note = results.attrs.get("compression_note")
        return f"<h2>Compression</h2><p>{esc(note)}</p>" if note else ""
    cols = [
        ("variant", "variant", "{}"),
        ("n_dims", "dims", "{}"),
        ("bytes_per_row", "bytes/row", "{}"),
        ("bytes_ratio", "x fewer bytes", "{:.1f}"),
        ("mean_test_score", "score", "{:.4f}"),
        ("score_kept", "score kept", "{:.1%}"),
        ("compress_rows_per_s", "rows/s (step)", "{:.0f}"),
    ]
    head = "".join(f"<th>{esc(label)}</th>" for _, label, _ in cols)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc("-" if _no_value(r[k]) else fmt.format(r[k]))}</td>'
            for k, _, fmt in cols
        )
        + "</tr>"
        for r in records
    )
    name = esc(str(records[0]["embedder"]))
    return (
        f"<h2>Compression of the best dense row ({name})</h2>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def write_outputs(results, output_dir, stem="leaderboard", title="", command=None):
    """Write the leaderboard as CSV, JSON, a bar chart PNG and an HTML page, and every candidate.

    Each file is written on its own: one that cannot be written is reported
    and the others are still written.

    Parameters
    ----------
    results : pandas.DataFrame
        Returned by :func:`compare_embedders`.
    output_dir : str
        Created if needed.
    stem : str, default="leaderboard"
        ``<stem>.csv``/``.json``/``.png``/``.html`` hold one row per embedder
        (its best candidate), ``<stem>_pareto.png`` the score against the
        transform speed, ``<stem>_cv_results.csv`` every candidate.
    title : str, default=""
        The chart's and the HTML page's title.
    command : str or None, default=None
        Shown on the HTML page.

    Returns
    -------
    paths : list of str
        Files written.
    failures : list of str
        One line per file that could not be written (and why); ``matplotlib``
        missing means no PNG (and a page without chart), said here too.
    """
    board = _board(results)
    paths, failures = [], []

    def as_json(v):
        return json.dumps(v, default=str) if isinstance(v, dict) else v

    def write(name, action):
        path = os.path.join(output_dir, name)
        try:
            write_atomically(path, action)
        except OSError as exc:
            failures.append(f"could not write {path}: {exc.strerror or exc}")
        else:
            paths.append(path)

    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        return [], [f"could not create {output_dir}: {exc.strerror or exc}"]
    for frame, name in ((board, f"{stem}.csv"), (results, f"{stem}_cv_results.csv")):
        write(
            name,
            lambda p, f=frame: f.assign(params=f["params"].map(as_json)).to_csv(p, index=False),
        )
    if results.attrs.get("compression"):
        import pandas as pd

        table = pd.DataFrame.from_records(results.attrs["compression"])
        write(f"{stem}_compression.csv", lambda p: table.to_csv(p, index=False))
    records = json.loads(board.to_json(orient="records", default_handler=str))

    def dump_json(path):
        with open(path, "w") as fh:
            json.dump(records, fh, indent=2)

    write(f"{stem}.json", dump_json)
    png = chart_png(results, title)
    if png is None:
        failures.append("matplotlib is not installed: no bar chart (pip install matplotlib).")
    else:

        def dump_png(path):
            with open(path, "wb") as fh:
                fh.write(png)

        write(f"{stem}.png", dump_png)
    pareto = pareto_png(results, title)
    if pareto is not None:

        def dump_pareto(path):
            with open(path, "wb") as fh:
                fh.write(pareto)

        write(f"{stem}_pareto.png", dump_pareto)
    page = leaderboard_html(results, title, command, png, pareto)

    def dump_html(path):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(page)

    write(f"{stem}.html", dump_html)
    return paths, failures

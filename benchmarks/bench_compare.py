"""The goals of ``skembed compare`` on the new shapes of data, measured end to end.

Scenarios (``--scenario``, repeatable; default: loans and movies):

- ``loans``: Lending Club loans, ``interest_rate`` (regression), every available text
  embedder on ``emp_title`` plus the ``none`` row. Goal: the best text row's R² ≥ the
  ``none`` row's R² (the text helps or is neutral).
- ``movies``: IMDb movies, ``rating`` (regression), ``title`` text, the CLI's default
  ``--limit``. Goal: a row for every available text embedder, whole run ≤ 600 s on 2 cores.
- ``tweets``: 4,000 tweets (``--limit 4000``), every text embedder, 5 folds: the wall time,
  and each row's downstream share of ``mean_fit_time``.
- ``bbc``, ``penguins``: the leaderboards that must not change (``--embedders`` to shrink).

``--compress`` adds the compression table of the best dense row (``compare --compress``).
``--overhead N`` runs the scenario N times each way, interleaved: as shipped, and with the
issue-41 extras patched out (the pickled size of fold 0, the peak-memory reset/read, the
text-alone ablation): the ratio of the wall times is what the extras cost.

Prints each leaderboard, the wall time, the load average before and after (the machine is
shared: figures taken under load say so) and one ``goal`` line per scenario.

Usage::

    python benchmarks/bench_compare.py --scenario loans --scenario movies
    python benchmarks/bench_compare.py --scenario bbc --embedders tfidf,lsa
    python benchmarks/bench_compare.py --scenario bbc --embedders tfidf,lsa --cv 3 --overhead 2
    python benchmarks/bench_compare.py --scenario tweets --embedders lsa --cv 3 --compress
"""

from __future__ import annotations

import argparse
import os
import time

from skembed import model_selection as ms
from skembed.model_selection._inputs import load_compare_data

SCENARIOS = {
    "loans": {"dataset": "loans"},
    "movies": {"dataset": "movies"},
    "tweets": {"dataset": "tweets", "limit": 4000},
    "bbc": {"dataset": "bbc"},
    "penguins": {"dataset": "penguins"},
}


def run(name, embedders=None, cv=5, limit=None, n_jobs=None, compress=False):
    spec = SCENARIOS[name]
    limit = limit if limit is not None else spec.get("limit", "default")
    X, y, data_name, _, notes = load_compare_data(dataset=spec["dataset"], limit=limit)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    results = ms.compare_embedders(
        X, y, embedders, cv=cv, n_jobs=n_jobs, verbose=1, compress=compress
    )
    wall = time.perf_counter() - t0
    load_after = os.getloadavg()
    title = f"{name}: {data_name}, {len(y)} rows, {cv}-fold CV"
    print(ms.format_leaderboard(results, title))
    if compress:
        print(ms.format_compression(results))
    for note in notes:
        print("note:", note)
    print(
        f"wall {wall:.1f} s; load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        f"(1 min) on {os.cpu_count()} cores"
    )
    board = ms.leaderboard(results)
    share = board["mean_downstream_fit_time"] / board["mean_fit_time"]
    print(
        "downstream share of fit s: "
        + ", ".join(f"{e} {s:.0%}" for e, s in zip(board["embedder"], share, strict=True))
    )
    scores = dict(zip(board["embedder"], board["mean_test_score"], strict=True))
    text_rows = {
        e: s
        for e, s in scores.items()
        if ms.EMBEDDERS.get(e, None) is not None and ms.EMBEDDERS[e].kind == "text"
    }
    if name == "loans" and "none" in scores and text_rows:
        best = max(text_rows, key=text_rows.get)
        verdict = "met" if text_rows[best] >= scores["none"] else "MISSED"
        print(
            f"goal (best text row R² ≥ none): {best} {text_rows[best]:.4f} vs none "
            f"{scores['none']:.4f} -> {verdict}"
        )
    if name == "movies":
        available = [
            n for n, s in ms.EMBEDDERS.items() if s.kind == "text" and ms._registry._is_available(s)
        ]
        missing = [n for n in available if n not in scores] if embedders is None else []
        verdict = "met" if wall <= 600 and not missing else "MISSED"
        print(f"goal (every text embedder, ≤ 600 s): {wall:.0f} s, missing {missing} -> {verdict}")
    return results, wall


def overhead(name, embedders, cv, limit, n_jobs, rounds):
    """Wall time with and without the cost columns and the ablation, interleaved."""
    import contextlib
    from unittest import mock

    from skembed.model_selection import _runner

    spec = SCENARIOS[name]
    limit = limit if limit is not None else spec.get("limit", "default")
    X, y, *_ = load_compare_data(dataset=spec["dataset"], limit=limit)
    off = [
        mock.patch.object(_runner, "_size_mb", lambda *a: float("nan")),
        mock.patch.object(_runner, "_reset_peak", lambda: None),
        mock.patch.object(_runner, "_text_alone", lambda *a: None),
    ]
    times = {"with": [], "without": []}
    for _ in range(rounds):
        for mode in ("without", "with"):
            with contextlib.ExitStack() as stack:
                if mode == "without":
                    for patch in off:
                        stack.enter_context(patch)
                t0 = time.perf_counter()
                ms.compare_embedders(X, y, embedders, cv=cv, n_jobs=n_jobs)
                times[mode].append(time.perf_counter() - t0)
    w, wo = min(times["with"]), min(times["without"])
    print(
        f"overhead {name} ({len(y)} rows, {cv}-fold, rows {embedders or 'default'}): "
        f"with extras {w:.1f} s, without {wo:.1f} s (best of {rounds}) -> x{w / wo:.3f}; "
        f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument("--embedders", help="comma-separated names (default: all available)")
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--compress", action="store_true")
    parser.add_argument("--overhead", type=int, default=0, metavar="ROUNDS")
    args = parser.parse_args(argv)
    names = args.embedders.split(",") if args.embedders else None
    for name in args.scenario or ["loans", "movies"]:
        if args.overhead:
            overhead(name, names, args.cv, args.limit, args.n_jobs, args.overhead)
        else:
            run(name, names, args.cv, args.limit, args.n_jobs, args.compress)
        print()


if __name__ == "__main__":
    main()

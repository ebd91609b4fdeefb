"""``skembed compare``: which embedding works best for my labelled data?

Cross-validates each chosen embedder, over a small grid of its
hyperparameters, followed by the same downstream model for every embedder
(a scaler, then a logistic regression for a class label or a ridge
regression for a numeric target, its regularisation searched over a wide
range; see ``skembed.model_selection``), and prints a leaderboard (mean ±
std score, embedding width, fit time, transform throughput), written as
CSV, JSON, a bar chart PNG and an HTML page. ``--save-best PATH`` also
writes the winning pipeline, refitted on all the data.

Text (default data: BBC News, 2,225 articles, 5 classes)::

    skembed compare
    skembed compare --csv reviews.csv --text-column text --label-column label

Tables, text among other columns or none (roles detected, or named with
--text-column/--categorical-column/--numeric-column/--drop-column)::

    skembed compare --dataset loans           # interest rate (regression), job-title text
    skembed compare --dataset movies          # IMDb rating (regression), film titles
    skembed compare --dataset penguins        # species, no text
    skembed compare --csv table.csv --label-column target [--task regression]

Folds that follow the data: forward-chaining in time (train on the past, score
the next block), or whole groups (a user, a source) per fold::

    skembed compare --csv posts.csv --label-column label --time-column posted_at
    skembed compare --csv visits.csv --label-column outcome --group-column patient

Progress: the plan, a bar over the fits (on a terminal), and each embedder's
line as soon as its folds are done. Ctrl-C ends with the leaderboard of the
rows that finished, their files written, and exit status 130.

On a Dask cluster (candidates x folds as tasks; pip install "skembed[dask]")::

    skembed compare --scheduler tcp://scheduler-host:8786

Bad input (an empty CSV, a repeated header name, one class or one target
value, --cv 1, --cv above the smallest class's rows, an unknown column or
embedder, an unwritable --output-dir or --save-best, an unreachable
--scheduler) ends with one line saying what is wrong and how to fix it, and
exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import sys
import tempfile
from typing import TYPE_CHECKING, NamedTuple

from . import model_selection as ms
from .exceptions import ComparisonInterrupted
from .model_selection import (
    DATASETS,
    load_compare_data,
    write_outputs,
)

if TYPE_CHECKING:
    import pandas as pd


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


#: control characters other than newline and tab (C0, DEL, C1): terminal escapes start with one
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_control(text):
    r"""``text`` with each control character but newline and tab written as a Python escape.

    Examples
    --------
    >>> print(escape_control("price\x1b[2J\x1b]0;owned\x07 (EUR)"))
    price\x1b[2J\x1b]0;owned\x07 (EUR)
    """
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class _Escaped:
    """A text stream that writes everything through :func:`escape_control`.

    ``raw_stream`` is the stream itself, for the progress bar: it writes only
    its own text and needs its carriage returns.
    """

    def __init__(self, stream):
        self._stream = stream
        self.raw_stream = stream

    def write(self, text):
        return self._stream.write(escape_control(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _cli_words(message):
    """A library message in the command line's words (``cv=3`` -> ``--cv 3``, ...)."""
    return (
        message.replace("cv=", "--cv ")
        .replace("device=", "--device ")
        .replace("time column", "--time-column")
        .replace("group column", "--group-column")
        .replace("task='regression'", "--task regression")
        .replace("task='classification'", "--task classification")
    )


def _writable_dir(option, directory, shown=None):
    """Raise :class:`UsageError` unless ``directory`` exists writable or can be created.

    ``shown`` is the path the user gave (a file inside ``directory``), if not ``directory``.
    """
    path = os.path.abspath(directory)
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        if shown is None and existing == path:
            raise UsageError(f"{option} {directory} is a file: choose a directory path.")
        raise UsageError(
            f"{option} {shown or directory} is inside {existing}, which is a file: "
            "choose a path in a directory."
        )
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise UsageError(
            f"{option} {directory}: cannot write in {existing} ({exc.strerror}); choose a "
            "writable directory."
        ) from None


def _check_outputs(args):
    """Check the output paths before any work."""
    _writable_dir("--output-dir", args.output_dir)
    if args.save_best:
        if os.path.isdir(args.save_best):
            raise UsageError(
                f"--save-best {args.save_best} is a directory: give a file path, e.g. "
                f"{os.path.join(args.save_best, 'best.skops')}."
            )
        folder = os.path.dirname(os.path.abspath(args.save_best))
        _writable_dir("--save-best", folder, shown=args.save_best)
    _outputs_are_not_inputs(args)
    if args.save_best and os.path.basename(args.save_best).startswith("leaderboard"):
        folder = os.path.dirname(os.path.abspath(args.save_best))
        if os.path.isdir(args.output_dir) and _same_file(folder, args.output_dir):
            raise UsageError(
                f"--save-best {args.save_best} is a name the report files of this run take in "
                f"--output-dir {args.output_dir}: choose another, e.g. best.skops."
            )


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _outputs_are_not_inputs(args):
    """Refuse an output path that is the input; say which existing file --save-best replaces.

    ``--save-best`` naming the input CSV silently replaced the user's data with a pickle.
    """
    if not args.csv or not os.path.exists(args.csv):
        return
    if args.save_best and _same_file(args.save_best, args.csv):
        raise UsageError(
            f"--save-best {args.save_best} is the input --csv {args.csv}: writing the pipeline "
            "there would destroy the data; choose another path, e.g. best.skops."
        )
    name = os.path.basename(args.csv)
    if name.startswith("leaderboard") and _same_file(
        os.path.dirname(os.path.abspath(args.csv)), args.output_dir
    ):
        raise UsageError(
            f"--csv {args.csv} is in --output-dir {args.output_dir} under a name the leaderboard "
            "files take, so the run would replace it: choose another --output-dir."
        )
    if args.save_best and os.path.exists(args.save_best):
        print(f"note: --save-best {args.save_best} exists; the best pipeline will replace it.")


_ADDRESS = re.compile(r"^([a-z][a-z0-9+]*://)?[^\s:/]+:\d+/?$|^[a-z][a-z0-9+]*://[^\s]+$")


def _check_scheduler(address):
    if not _ADDRESS.match(address):
        raise UsageError(
            f"--scheduler {address!r} is not a scheduler address: give one like tcp://host:8786."
        )
    try:
        from .dask import connect

        connect(address).close()
    except (ConnectionError, OSError, ValueError, ImportError, TypeError) as exc:
        raise UsageError(f"--scheduler: {exc}") from None


def build_parser():
    """The ``skembed`` argument parser, with its ``compare`` subcommand.

    Returns
    -------
    parser : argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="skembed", description="scikit-learn embedding transformers"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser(
        "compare",
        help="cross-validate embedders + one fair downstream model on labelled data",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # --help lists the options in the order they are added: these calls keep that order
    _add_data_arguments(cmp)
    _add_embedder_arguments(cmp)
    _add_fold_arguments(cmp)
    _add_fit_arguments(cmp)
    _add_run_arguments(cmp)
    return parser


def _add_data_arguments(cmp):
    """The data: its source, the label, the columns' roles, the task."""
    cmp.add_argument("--csv", help="CSV file with the data (default: an embedded data set)")
    cmp.add_argument("--label-column", help="column of labels or of the numeric target")
    roles = "(repeatable; default: detected)"
    cmp.add_argument("--text-column", action="append", default=[], help=f"text column {roles}")
    cmp.add_argument(
        "--categorical-column", action="append", default=[], help=f"categorical column {roles}"
    )
    cmp.add_argument(
        "--numeric-column", action="append", default=[], help=f"numeric column {roles}"
    )
    cmp.add_argument("--drop-column", action="append", default=[], help="column to leave out")
    cmp.add_argument(
        "--dataset",
        choices=list(DATASETS),
        help="embedded data set when no --csv is given (default: bbc); "
        + "; ".join(f"{n}: --limit {d.limit} by default" for n, d in DATASETS.items() if d.limit),
    )
    cmp.add_argument(
        "--task",
        choices=["auto", "classification", "regression"],
        default="auto",
        help="auto (default): regression for a float target or integers with over 20 values",
    )


def _add_embedder_arguments(cmp):
    """Which embedders run, and the width of the tabular ones."""
    cmp.add_argument(
        "--embedders",
        help="comma-separated embedders (default: all available; text: "
        + ",".join(n for n, s in ms.EMBEDDERS.items() if s.kind == "text")
        + "; tabular: "
        + ",".join(n for n, s in ms.EMBEDDERS.items() if s.kind == "tabular")
        + "; none: a table's non-text columns alone; bert=PATH, static=PATH or setfit=PATH: "
        "that row on another model, a local directory or a hub name, repeatable)",
    )
    cmp.add_argument("--n-components", type=int, default=2, help="embedding width (tabular mode)")


def _add_fold_arguments(cmp):
    """The folds: how many, and whether they follow time or groups."""
    cmp.add_argument("--cv", type=int, default=5, help="cross-validation folds (default 5)")
    cmp.add_argument(
        "--time-column",
        help="column of each row's time (numbers or dates): forward-chaining folds that train "
        "on the past and score the next block; not a feature",
    )
    cmp.add_argument(
        "--group-column",
        help="column of each row's group: no group is split across folds; not a feature",
    )


def _add_fit_arguments(cmp):
    """How each fit runs and is scored: device, scorer, threads, seed."""
    cmp.add_argument(
        "--device",
        help="device of every embedder that takes one: cpu, cuda, cuda:N, mps "
        "(default: each embedder's own, the GPU when there is one)",
    )
    cmp.add_argument(
        "--scoring",
        default=None,
        help="scikit-learn scorer name (default accuracy; r2 for regression)",
    )
    cmp.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="threads each embedder may use (default: each embedder's own default)",
    )
    cmp.add_argument("--random-state", type=int, default=0)


def _add_run_arguments(cmp):
    """The run as a whole: its files, its size, where it runs, what it reports."""
    cmp.add_argument("--output-dir", default="compare-output", help="where the files go")
    cmp.add_argument(
        "--limit",
        type=int,
        default=None,
        help="use only N randomly chosen rows (quick runs; tweets and movies have a default)",
    )
    cmp.add_argument(
        "--save-best",
        metavar="PATH",
        help="write the best pipeline, refitted on all rows, to PATH (skops, else joblib)",
    )
    cmp.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler (tcp://host:8786) to run candidates x folds on "
        "(pip install 'skembed[dask]'); default: here",
    )
    cmp.add_argument(
        "--budget",
        metavar="LIMITS",
        help="name the best row within limits, e.g. '1000rows/s', '2ms' (per row), '50MB' "
        "(fitted pipeline on disk), or '2ms,50MB'",
    )
    cmp.add_argument(
        "--compress",
        action="store_true",
        help="also score the best dense row truncated (PCA) and quantized (int8, binary): "
        "score kept, bytes per row, speed",
    )
    cmp.add_argument(
        "--verbose",
        type=int,
        default=1,
        help="0: leaderboard only; 1: a line per embedder (default); 2: also per candidate",
    )


def _check_args(args):
    if args.cv < 2:
        raise UsageError(
            f"--cv {args.cv}: cross-validation needs at least 2 folds; use --cv 2 or more (5 is usual)."
        )
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: give a positive number of rows.")
    if args.n_components < 1:
        raise UsageError(f"--n-components {args.n_components}: give a positive width.")
    if args.n_jobs == 0:
        raise UsageError("--n-jobs 0: give a positive number of threads, or -1 for all cores.")
    if args.csv and args.dataset:
        raise UsageError("--csv and --dataset name two data sources: give one.")
    if args.time_column and args.group_column:
        raise UsageError(
            "--time-column and --group-column together: give one (forward-chaining folds "
            "already keep the rows of one time together)."
        )
    if args.device is not None:
        from .utils._compute import resolve_device

        try:
            resolve_device(args.device)
        except ValueError as exc:
            raise UsageError(_cli_words(str(exc))) from None
    if args.budget is not None:
        try:
            ms.parse_budget(args.budget)
        except ValueError as exc:
            raise UsageError(f"--budget: {exc}") from None


def _check_scoring(scoring, task):
    from sklearn.metrics import get_scorer

    if scoring is None:
        return
    try:
        get_scorer(scoring)
    except ValueError:
        example = "r2, neg_mean_absolute_error" if task == "regression" else "accuracy, f1_macro"
        raise UsageError(
            f"--scoring {scoring!r} is not a scikit-learn scorer; e.g. {example}."
        ) from None


def _prepare(args):
    """Load and check everything before any work; (X, y, task, roles, title, notes)."""
    try:
        X, y, data_name, dropped, notes = load_compare_data(
            csv_path=args.csv,
            dataset=args.dataset,
            label=args.label_column,
            text_columns=args.text_column,
            limit=args.limit if args.limit is not None else "default",
            random_state=args.random_state,
        )
        if not hasattr(X, "columns") and (
            args.categorical_column or args.numeric_column or args.drop_column
        ):
            raise ValueError("--categorical-column/--numeric-column/--drop-column need a table.")
        columns = {}
        if not hasattr(X, "columns") and (args.time_column or args.group_column):
            raise ValueError(
                "--time-column/--group-column need a table: give a --csv with that column."
            )
        if hasattr(X, "columns"):  # documents already come as a list of str
            columns = dict(
                label=args.label_column,
                text_columns=args.text_column or None,
                categorical_columns=args.categorical_column or None,
                numeric_columns=args.numeric_column or None,
                drop_columns=args.drop_column or None,
                time_column=args.time_column,
                group_column=args.group_column,
            )
        # the one preparation (task, data checks, roles): compare_embedders reuses it
        prepared = ms.prepare_comparison(X, y, task=args.task, cv=args.cv, **columns)
        task, y, kind = prepared.task, prepared.y, prepared.kind
        names = (
            [e.strip() for e in args.embedders.split(",") if e.strip()] if args.embedders else None
        )
        if names:  # unknown or unavailable names fail here, before any work
            by_kind = {"text": [], "tabular": []}
            for name in names:
                if name != "none":
                    spec = ms.EMBEDDERS.get(ms.parse_embedder_name(name).key)
                    by_kind[spec.kind if spec and kind == "mixed" else kind].append(name)
            for k, group in by_kind.items():
                if group:
                    ms.default_embedders(k, group)
    except ValueError as exc:
        raise UsageError(_cli_words(str(exc))) from None
    _check_scoring(args.scoring, task)
    unit = "documents" if kind == "text" else "rows"
    what = (
        f"{len(set(y.tolist()))} classes"
        if task == "classification"
        else f"regression on {args.label_column or DATASETS[args.dataset].label}"
    )
    title = f"skembed compare — {data_name}: {len(y)} {unit}, {what}"
    title += f", n_components={args.n_components}" if kind == "tabular" else ""
    title += ", " + _folds_words(prepared.split, args.cv)
    if any(dropped.values()):
        reasons = ", ".join(f"{n} with {why}" for why, n in dropped.items() if n)
        notes.insert(0, f"dropped {sum(dropped.values())} rows: {reasons}")
    notes += list(prepared.notes)
    return prepared, names, title, notes


def _folds_words(split, cv):
    """The folds in the title's words."""
    if split.kind == "time":
        return f"{cv} forward-chaining folds by {split.column!r}"
    if split.kind == "group":
        return f"{cv}-fold CV grouped by {split.column!r}"
    return f"{cv}-fold CV"


class _Outcome(NamedTuple):
    """What the comparison gave: its rows, the refitted best pipeline, an interruption."""

    results: pd.DataFrame
    #: ``{name: pipeline}`` of the best row when --save-best asked for it and the run finished
    best: dict | None
    #: the interruption's words when Ctrl-C ended the run, else None
    interrupted: str | None


def run_compare(args, argv=None):
    """Run ``skembed compare`` with parsed arguments; the results DataFrame."""
    _check_before_work(args)
    prepared, names, title, notes = _prepare(args)
    _print_plan(title, notes, prepared.roles)
    outcome = _compare(args, prepared, names)
    _print_leaderboard(args, outcome.results, title)
    failures = _write_report_files(args, outcome.results, title, prepared.roles, argv)
    if outcome.best:
        failures += _save_best(args, outcome.best, prepared)
    if outcome.interrupted is not None:
        skipped = " (--save-best skipped)" if args.save_best else ""
        print(
            f"interrupted: {outcome.interrupted}; the leaderboard and files above hold them"
            f"{skipped}"
        )
        raise SystemExit(130)
    if failures:
        raise UsageError("; ".join(failures) + " (the leaderboard above is complete)")
    return outcome.results


def _check_before_work(args):
    """Check the arguments, the output paths and the scheduler."""
    _check_args(args)
    _check_outputs(args)
    if args.scheduler:  # an unreachable scheduler fails now, within seconds, before any work
        _check_scheduler(args.scheduler)


def _print_plan(title, notes, roles):
    """The title, the notes on the data and the columns' roles, before the first fit."""
    print(title, flush=True)
    for note in notes:
        print(note, flush=True)
    if roles is not None:
        print("columns: " + ms.format_roles(roles), flush=True)


def _compare(args, prepared, names):
    """Cross-validate the embedders; a Ctrl-C keeps the rows that finished."""
    try:
        out = ms.compare_embedders(
            prepared,
            None,
            names,
            cv=args.cv,
            scoring=args.scoring,
            n_jobs=args.n_jobs,
            random_state=args.random_state,
            n_components=args.n_components,
            verbose=args.verbose,
            return_best=bool(args.save_best),
            scheduler=args.scheduler,
            compress=args.compress,
            device=args.device,
        )
    except (ValueError, ConnectionError) as exc:
        raise UsageError(_cli_words(str(exc))) from None
    except ComparisonInterrupted as exc:  # Ctrl-C: the finished rows are kept
        return _Outcome(exc.results, None, exc.results.attrs["interrupted"])
    if args.save_best:
        results, best = out
        return _Outcome(results, best, None)
    return _Outcome(out, None, None)


def _print_leaderboard(args, results, title):
    """The leaderboard, the best row within --budget, the --compress table."""
    print()
    print(ms.format_leaderboard(results, title))
    if args.budget is not None:
        print(ms.best_within_budget(results, args.budget)[1])
    if args.compress:
        print("\n" + ms.format_compression(results))


def _write_report_files(args, results, title, roles, argv):
    """Write the leaderboard files; the failures to report at the end."""
    stem = "leaderboard_tabular" if roles is not None and not roles["text"] else "leaderboard"
    command = "skembed " + " ".join(map(shlex.quote, argv if argv is not None else sys.argv[1:]))
    there = set(os.listdir(args.output_dir)) if os.path.isdir(args.output_dir) else set()
    paths, failures = write_outputs(
        results, args.output_dir, stem=stem, title=title, command=command
    )
    print("\nwritten: " + ", ".join(paths))
    replaced = [p for p in paths if os.path.basename(p) in there]
    if replaced:  # never replace a file this run did not create without saying so
        print("replaced the files that were there: " + ", ".join(replaced))
    return failures


def _save_best(args, best, prepared):
    """Write the best pipeline to --save-best; the failure to report, if any, in a list."""
    name, pipeline = next(iter(best.items()))
    try:
        fmt = ms.save_pipeline(pipeline, args.save_best)
    except (OSError, ValueError) as exc:  # ValueError: the written file did not load back
        return [f"could not write {args.save_best}: {getattr(exc, 'strerror', None) or exc}"]
    load = f"load_pipeline({args.save_best!r}" + (
        ", allow_pickle=True)" if fmt == "joblib" else ")"
    )
    unit = "documents" if prepared.roles is None else "rows"
    print(
        f"best pipeline ({name}, refitted on all {len(prepared.y)} {unit}) written to "
        f"{args.save_best} with {fmt}; load it with skembed.model_selection.{load}"
    )
    return []


def main(argv=None):
    """Entry point of the ``skembed`` console script.

    Returns
    -------
    status : int
        0; bad input ends the process with status 2 and one line on stderr,
        Ctrl-C with status 130 (after the leaderboard of the finished rows).
    """
    args = build_parser().parse_args(argv)
    if args.command == "compare":
        # names come from the user's file: a column '\x1b[2J' cleared the terminal
        with (
            contextlib.redirect_stdout(_Escaped(sys.stdout)),
            contextlib.redirect_stderr(_Escaped(sys.stderr)),
        ):
            try:
                run_compare(args, argv)
            except UsageError as exc:
                print(f"skembed compare: error: {exc}", file=sys.stderr)
                raise SystemExit(2) from None
            except KeyboardInterrupt:  # before any row finished: nothing to show
                print("skembed compare: interrupted before any row finished", file=sys.stderr)
                raise SystemExit(130) from None
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

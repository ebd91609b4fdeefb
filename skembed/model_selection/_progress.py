"""What a comparison shows while it runs: a bar over its fits, a line per row, estimates."""

from __future__ import annotations

import sys
import time

#: a row whose remaining fits are projected to take longer than this gets an estimate line (s)
ESTIMATE_AFTER_S = 60.0


def _interactive(stream):
    """Whether ``stream`` is a terminal, or the process is a notebook kernel."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


def _minutes(seconds):
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


class CompareProgress:
    """The progress of :func:`compare_embedders`: a bar, lines, and estimates of slow rows.

    At ``verbose >= 1``: one line with the plan, a tqdm bar over the fold
    fits (elapsed and remaining time; on a terminal or in a notebook only,
    so logs get no bar), each row's line as soon as its folds are done,
    a note before a row known to be slow on this machine, and after a row's
    first fit an estimate of the rest when it is over
    :data:`ESTIMATE_AFTER_S`. ``verbose=0`` shows nothing.

    Parameters
    ----------
    n_fits : int
        The fold fits of the whole comparison (candidates x folds of every row).
    verbose : int
        0: silent; 1 or more: as above.
    """

    def __init__(self, n_fits, verbose):
        self.verbose = verbose
        self.bar = None
        self._row_started = None
        if verbose < 1:
            return
        # a stream that escapes control characters offers the raw one: the bar needs its \r
        stream = getattr(sys.stderr, "raw_stream", sys.stderr)
        if _interactive(stream):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=n_fits, unit="fit", desc="compare", file=stream, leave=False)

    def say(self, line):
        """Print ``line`` above the bar (nothing at ``verbose=0``)."""
        if self.verbose < 1:
            return
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
            sys.stdout.flush()
        else:
            print(line, flush=True)

    def start_row(self, name, n_fits, slow_note=None):
        """A row starts: its name on the bar, and ``slow_note`` when it is slow here."""
        self._row_started = time.perf_counter()
        if slow_note:
            self.say(f"  {name}: {slow_note}")
        if self.bar is not None:
            self.bar.set_postfix_str(f"{name} ({n_fits} fits)")

    def fit_done(self, name, done, n_fits):
        """One of the row's ``n_fits`` fits is done (``done`` so far): advance, estimate."""
        if self.bar is not None:
            self.bar.update(1)
        if done != 1 or n_fits == 1 or self._row_started is None:
            return
        took = time.perf_counter() - self._row_started
        rest = took * (n_fits - 1)
        if rest > ESTIMATE_AFTER_S:
            self.say(
                f"  {name}: its first fit took {_minutes(took)}; about {_minutes(rest)} more "
                f"for its other {n_fits - 1} (Ctrl-C ends with the rows done so far)"
            )

    def close(self):
        """Remove the bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

"""compare shows its work: the plan, a bar on a terminal, rows as they finish, Ctrl-C."""

import os
import pty
import select
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import TfidfVectorizer

from skembed.exceptions import ComparisonInterrupted
from skembed.model_selection import compare_embedders, leaderboard
from skembed.model_selection._progress import CompareProgress

pd = pytest.importorskip("pandas")

DOCS = ["cheap loan bank money"] * 10 + ["cat dog farm animal"] * 10
LABELS = ["f"] * 10 + ["a"] * 10


class Stamped:
    """A stdout that keeps each written line with the time it was written."""

    def __init__(self):
        self.lines = []

    def write(self, text):
        for line in text.splitlines():
            if line.strip():
                self.lines.append((time.perf_counter(), line))
        return len(text)

    def flush(self):
        pass


class SlowTfidf(TransformerMixin, BaseEstimator):
    """TF-IDF whose fit records when it started and then fails or sleeps, as asked."""

    started = []

    def __init__(self, interrupt=False):
        self.interrupt = interrupt

    def fit(self, X, y=None):
        SlowTfidf.started.append(time.perf_counter())
        if self.interrupt:
            raise KeyboardInterrupt
        self.tfidf_ = TfidfVectorizer().fit(X)
        return self

    def transform(self, X):
        return self.tfidf_.transform(X)


def test_each_row_is_printed_as_soon_as_its_folds_are_done(monkeypatch):
    out = Stamped()
    monkeypatch.setattr(sys, "stdout", out)
    SlowTfidf.started.clear()
    embedders = {"first": TfidfVectorizer(), "second": SlowTfidf()}
    compare_embedders(DOCS, LABELS, embedders, cv=2, verbose=1)
    texts = [line for _, line in out.lines]
    assert texts[0] == "cross-validating 2 rows: 4 fits (candidates x folds)"
    first = next(t for t, line in out.lines if line.startswith("  first "))
    assert first < SlowTfidf.started[0]  # the first row's line came before the second row ran


def test_verbose_zero_prints_nothing(capsys):
    compare_embedders(DOCS, LABELS, {"tfidf": TfidfVectorizer()}, cv=2, verbose=0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_ctrl_c_keeps_the_rows_that_finished():
    embedders = {"first": TfidfVectorizer(), "second": SlowTfidf(interrupt=True)}
    with pytest.raises(ComparisonInterrupted) as info:
        compare_embedders(DOCS, LABELS, embedders, cv=2)
    results = info.value.results
    assert leaderboard(results)["embedder"].tolist() == ["first"]
    assert results.attrs["interrupted"] == "1 of 2 rows finished"
    assert isinstance(info.value, KeyboardInterrupt)


def test_ctrl_c_before_any_row_finished_is_a_plain_keyboard_interrupt():
    with pytest.raises(KeyboardInterrupt) as info:
        compare_embedders(DOCS, LABELS, {"only": SlowTfidf(interrupt=True)}, cv=2)
    assert not isinstance(info.value, ComparisonInterrupted)


def test_an_estimate_follows_a_slow_first_fit(monkeypatch, capsys):
    clock = iter([0.0, 80.0])
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    progress = CompareProgress(n_fits=5, verbose=1)
    progress.start_row("setfit", 5, slow_note="fine-tunes a transformer on every fold")
    progress.fit_done("setfit", 1, 5)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "  setfit: fine-tunes a transformer on every fold",
        "  setfit: its first fit took 80 s; about 5 min more for its other 4 "
        "(Ctrl-C ends with the rows done so far)",
    ]


def _terminal_sigint():
    """Ctrl-C as at a terminal: the default action, unblocked (a pytest worker may ignore or
    block SIGINT, and a child inherits both, so Python would install no KeyboardInterrupt)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _read_until(fd, needle, deadline, seen):
    """Read the pseudo-terminal into ``seen`` until ``needle`` appears or time runs out."""
    while needle not in seen[0] and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen[0] += os.read(fd, 65536).decode("utf-8", "replace")
            except OSError:  # the child closed the terminal
                break
    return needle in seen[0]


@pytest.mark.slow
def test_compare_in_a_terminal_shows_a_bar_and_rows_and_ends_on_ctrl_c(tmp_path):
    path = tmp_path / "docs.csv"
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(400)]
    docs = [" ".join(rng.choice(words, 30)) for _ in range(600)]
    pd.DataFrame({"text": docs, "label": ["a", "b"] * 300}).to_csv(path, index=False)
    out_dir = tmp_path / "out"
    argv = [sys.executable, "-m", "skembed.cli", "compare", "--csv", str(path)]
    argv += ["--label-column", "label", "--embedders", "tfidf,lsa,ppmi", "--cv", "3"]
    argv += ["--output-dir", str(out_dir)]
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": os.getcwd()}
    child = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=_terminal_sigint
    )
    os.close(slave)
    seen = [""]
    try:
        assert _read_until(master, "skembed compare", time.monotonic() + 120, seen), seen[0]
        header_at = time.monotonic()
        assert _read_until(master, "cross-validating 3 rows", header_at + 5, seen), seen[0]
        assert _read_until(master, "fit/s", header_at + 60, seen) or "s/fit" in seen[0]
        assert _read_until(master, "  tfidf ", time.monotonic() + 120, seen), seen[0]
        assert child.poll() is None, "the row's line came only at the end"
        child.send_signal(signal.SIGINT)
        assert _read_until(master, "interrupted:", time.monotonic() + 120, seen), seen[0]
        assert child.wait(timeout=60) == 130
    finally:
        if child.poll() is None:
            child.kill()
        os.close(master)
    text = seen[0]
    assert "compare:" in text and "| " in text  # tqdm's bar: its label and its frame
    assert "rank embedder" in text and "1    tfidf" in text
    assert "Traceback" not in text
    assert (out_dir / "leaderboard.csv").is_file()
    board = pd.read_csv(out_dir / "leaderboard.csv")
    assert "tfidf" in board["embedder"].tolist() and len(board) < 3

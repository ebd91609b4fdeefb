"""Saves through a temporary file: faults keep the previous file and leave no debris."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from skembed.utils._files import STALE_S, remove_stale_temporaries, write_atomically

ROOT = Path(__file__).resolve().parents[2]

# The child saves into ``folder`` with a writer that writes half a file, says so through
# ``ready`` and then waits for ever: the parent's SIGTERM is the only way out.
SLOW_WRITER = """
import sys, time
from pathlib import Path
folder = Path(sys.argv[1])

def slow(path, *args):
    with open(path, "wb") as fh:
        fh.write(b"half a new file")
        fh.flush()
        (folder / "ready").write_text(str(path))
        while True:
            time.sleep(0.05)
"""

CHILDREN = {
    "write_atomically": SLOW_WRITER
    + """
from skembed.utils._files import write_atomically
write_atomically(folder / "target.bin", slow)
""",
    "save_word2vec_format": SLOW_WRITER
    + """
import numpy as np
from skembed import KeyedVectors
import skembed._word2vec_format as fmt
fmt._write_to = slow
KeyedVectors(np.eye(2, dtype=np.float32), ["a", "b"]).save_word2vec_format(folder / "target.bin")
""",
}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
@pytest.mark.parametrize("child", sorted(CHILDREN))
def test_sigterm_during_a_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, child):
    target = tmp_path / "target.bin"
    target.write_bytes(b"what was saved before")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILDREN[child]), str(tmp_path)],
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # imports on a loaded machine
        while not (tmp_path / "ready").exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the child never started writing"
            time.sleep(0.05)
        tmp = Path((tmp_path / "ready").read_text())
        assert tmp.name.startswith(".skembed-target.bin.") and tmp.exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == -signal.SIGTERM  # still dies of the signal
    finally:
        proc.kill() if proc.poll() is None else None
        proc.stderr.close()
    assert target.read_bytes() == b"what was saved before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ready", "target.bin"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")

    def fails(path):
        Path(path).write_text("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, fails)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]
    write_atomically(target, lambda path: Path(path).write_text("new"))
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_the_sigterm_handler_is_set_only_while_writing_and_only_over_the_default(tmp_path):
    seen = []
    write_atomically(tmp_path / "a", lambda p: seen.append(signal.getsignal(signal.SIGTERM)))
    assert callable(seen[0]) and seen[0] not in (signal.SIG_DFL, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        write_atomically(tmp_path / "b", lambda p: seen.append(signal.getsignal(signal.SIGTERM)))
        assert seen[1] is mine and signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
    # off the main thread no handler can be set: the write goes on without one
    thread = threading.Thread(
        target=write_atomically,
        args=(tmp_path / "c", lambda p: seen.append(signal.getsignal(signal.SIGTERM))),
    )
    thread.start()
    thread.join()
    assert seen[2] is signal.SIG_DFL and (tmp_path / "c").exists()


def test_a_save_removes_only_old_temporaries_of_its_own_naming(tmp_path):
    old = time.time() - STALE_S - 60
    names = {
        ".skembed-x.bin.abc.tmp": old,  # ours, stale: removed
        ".skembed-y.bin.def.tmp": time.time(),  # ours, a live writer's: kept
        ".other-x.tmp": old,  # not our prefix
        "skembed-x.tmp": old,  # not hidden: not ours
        ".skembed-z.bin": old,  # not our suffix
    }
    for name, mtime in names.items():
        (tmp_path / name).write_text("x")
        os.utime(tmp_path / name, (mtime, mtime))
    write_atomically(tmp_path / "target", lambda p: Path(p).write_text("new"))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(set(names) - {".skembed-x.bin.abc.tmp"} | {"target"})
    # the age is measured from ``now``: everything of ours older than the margin goes
    removed = remove_stale_temporaries(tmp_path, now=time.time() + STALE_S + 1)
    assert [Path(p).name for p in removed] == [".skembed-y.bin.def.tmp"]


def test_save_word2vec_format_replaces_a_link_instead_of_writing_through_it(tmp_path):
    from skembed import KeyedVectors

    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not vectors")
    (tmp_path / "v.txt").symlink_to(elsewhere)
    kv = KeyedVectors(np.eye(2, dtype=np.float32), ["a", "b"])
    kv.save_word2vec_format(tmp_path / "v.txt")
    assert elsewhere.read_text() == "not vectors"
    assert not (tmp_path / "v.txt").is_symlink()
    assert KeyedVectors.load_word2vec_format(tmp_path / "v.txt").index_to_key == ["a", "b"]

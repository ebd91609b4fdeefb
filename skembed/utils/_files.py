"""Saving a file so that a fault loses nothing already saved and leaves no debris.

:func:`write_atomically` writes through a temporary file beside the target (named
``.skembed-<name>.<random>.tmp``) and renames it into place, so a reader sees the old file
or the new one, never half of either. The faults that end a write, and what cleans up:

- an exception (``KeyboardInterrupt`` included, SIGINT's default): the ``except`` clause;
- SIGTERM whose disposition is the default (the process would die without running any
  Python): a handler installed for the duration of the write, on the main thread only
  (Python runs signal handlers there), removes the temporary file, restores the default
  and delivers the signal again, so the process still dies of SIGTERM (exit status -15 to
  its parent) and at once. Where the application set a handler of its own, it is left
  alone: a Python handler that raises comes back through the ``except`` clause, and one
  that does not raise means the process goes on, and so does the write;
- SIGKILL, a power cut, a crash of the interpreter: nothing in the process runs, so the
  next save into the same directory removes temporary files of this naming older than
  :data:`STALE_S` (only ours: the ``.skembed-`` prefix and ``.tmp`` suffix).
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["PREFIX", "STALE_S", "SUFFIX", "remove_stale_temporaries", "write_atomically"]

PREFIX = ".skembed-"
SUFFIX = ".tmp"
# A live writer touches its temporary file with every write, so its modification time is
# seconds old; an hour is a wide margin for a writer stalled on a slow network file system,
# and still clears the debris of a killed process on the next day's save.
STALE_S = 3600.0


def remove_stale_temporaries(folder, *, older_than=STALE_S, now=None):
    """Remove the temporary files of interrupted saves from ``folder``.

    Only files named ``.skembed-*.tmp`` (what :func:`write_atomically` creates) whose
    modification time is more than ``older_than`` seconds ago are removed; a file that
    cannot be removed (another user's, already gone) is skipped.

    Parameters
    ----------
    folder : str or os.PathLike
        The directory to clean.
    older_than : float, default=STALE_S
        Minimum age in seconds of a file to remove.
    now : float, optional
        The current time (``time.time()`` when omitted); tests pass one.

    Returns
    -------
    removed : list of str
        Paths of the files removed.
    """
    now = time.time() if now is None else now
    removed = []
    try:
        candidates = list(Path(folder).glob(f"{PREFIX}*{SUFFIX}"))
    except OSError:
        return removed
    for path in candidates:
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink() and now - path.stat().st_mtime > older_than:
                path.unlink()
                removed.append(str(path))
    return removed


@contextlib.contextmanager
def _removed_on_sigterm(tmp):
    """While inside, a SIGTERM with the default disposition removes ``tmp`` before dying."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; the stale sweep covers the rest
        return
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            yield
            return
    except (AttributeError, ValueError):  # no SIGTERM here (not POSIX)
        yield
        return

    def on_sigterm(signum, frame):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # the default action: the process ends as it would have

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def write_atomically(path, action):
    """Write a file through a temporary file in its directory, then ``os.replace`` it.

    A reader never sees half a file, a fault during the write leaves the previous file as it
    was and no temporary file behind (module docstring: exceptions, SIGTERM, and the stale
    files of killed processes, removed by the next save into the directory), and a symbolic
    link named ``path`` is replaced, never written through.

    Parameters
    ----------
    path : str or os.PathLike
        The file to (re)place.
    action : callable
        ``action(tmp_path)`` writes the content to the temporary path (a ``str``).

    Raises
    ------
    OSError
        The directory cannot be written (the temporary file is removed).
    """
    folder = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(folder)
    fd, tmp = tempfile.mkstemp(
        dir=folder, prefix=f"{PREFIX}{os.path.basename(path)}.", suffix=SUFFIX
    )
    os.close(fd)
    try:
        with _removed_on_sigterm(tmp):
            action(tmp)
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # mkstemp's 0600 would make the file private
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

"""How many files a reader crosses from ``Word2VecTransformer.fit`` to the skip-gram update.

The walk is measured, not drawn: the compiled skip-gram entry of the phase scheduler is
wrapped so that its first call records the Python stack, from the test's ``fit`` call down to
the call into compiled code. Every frame in a file of the package counts (none is skipped),
then the file of the compiled train part that the entry runs (``train_part_shared``, where the
update is computed and written). ``docs/architecture.md`` ("From fit to the hot loop") draws
the same walk.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import skembed
import skembed.kernels.scheduler as scheduler
import skembed.kernels.word2vec as kernels_word2vec
from skembed import Word2VecTransformer

PACKAGE = Path(skembed.__file__).resolve().parent
DOCS = [f"w{i % 7} w{i % 5} w{i % 3} the cat sat on a mat" for i in range(50)]

#: files from ``fit`` to the skip-gram update: the estimator, its trainer, the phase scheduler,
#: its thread launcher and the compiled train part
MAX_FILES = 5


def _package_file(filename):
    """``filename`` relative to the package, or ``None`` outside it."""
    path = Path(filename).resolve()
    return path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else None


def _files_to_the_update(monkeypatch):
    """The package files on the stack at the compiled skip-gram call, then the train part's."""
    key = (True, scheduler.SHARED_SKIPGRAM)
    compiled = scheduler.ENTRIES[key]
    stacks = []

    def recording(job, first, *args):
        if first == 0:  # thread 0 is the calling thread: its stack reaches back to fit
            stacks.append([frame.filename for frame in inspect.stack()[1:]])
        return compiled(job, first, *args)

    monkeypatch.setitem(scheduler.ENTRIES, key, recording)
    Word2VecTransformer(vector_size=8, min_count=1, epochs=1, random_state=0).fit(DOCS)
    assert stacks, "the default Word2Vec fit did not reach the compiled skip-gram entry"
    files = []
    for filename in reversed(stacks[0]):  # outermost first: fit, then down
        name = _package_file(filename)
        if name is not None and name not in files:
            files.append(name)
    train_part = inspect.getsourcefile(kernels_word2vec.train_part_shared.py_func)
    files.append(_package_file(train_part))
    return files


def test_the_skipgram_update_is_few_files_from_fit(monkeypatch):
    files = _files_to_the_update(monkeypatch)
    assert files[0] == "text/word2vec/_word2vec.py", files  # fit is the estimator's own
    assert files[-1] == "kernels/word2vec.py", files
    assert len(files) <= MAX_FILES, (
        f"{len(files)} files from Word2VecTransformer.fit to the skip-gram update "
        f"(at most {MAX_FILES}): {' -> '.join(files)}"
    )
    print(" -> ".join(files))

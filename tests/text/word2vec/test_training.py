"""A huge ``window`` costs no memory and trains as the longest document (issue 23).

``Word2VecTransformer(window=10**7)`` on 50 short documents used to peak at
2.9 GB and ``10**9`` never returned: the skip-gram kernel allocated two
``(2 * window, dim)`` buffers per thread and the torch engine's CBOW windows
``n_tokens x 2 * window``. The estimators now clip ``window`` to the longest
document before anything is allocated.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skembed.text.word2vec._doc2vec import Doc2VecTransformer
from skembed.text.word2vec._fasttext import FastTextTransformer
from skembed.text.word2vec._word2vec import Word2VecTransformer

ROOT = Path(__file__).resolve().parents[3]
DOCS = [f"w{i % 7} w{i % 5} w{i % 3} the cat sat on a mat" for i in range(50)]  # 10 tokens
LONGEST = 10

MAKERS = {
    "skipgram": lambda w, nj: Word2VecTransformer(window=w, n_jobs=nj, min_count=1),
    "skipgram-pairs-hs": lambda w, nj: Word2VecTransformer(
        window=w, n_jobs=nj, min_count=1, shared_negatives=False, hs=1
    ),
    "cbow": lambda w, nj: Word2VecTransformer(window=w, n_jobs=nj, min_count=1, sg=0),
    "fasttext": lambda w, nj: FastTextTransformer(window=w, n_jobs=nj, min_count=1, bucket=500),
    "pv-dm": lambda w, nj: Doc2VecTransformer(window=w, n_jobs=nj, min_count=1, dm=1),
}


def _fit(case, window, n_jobs=2):
    est = MAKERS[case](window, n_jobs).set_params(vector_size=8, epochs=2, random_state=0)
    return est.fit(DOCS)


@pytest.mark.parametrize("case", sorted(MAKERS))
def test_huge_window_trains_as_the_longest_document(case):
    huge, longest = _fit(case, 10**9), _fit(case, LONGEST)
    np.testing.assert_array_equal(huge.transform(DOCS[:5]), longest.transform(DOCS[:5]))
    if case == "pv-dm":
        assert huge.window_ == longest.window_ <= LONGEST
        np.testing.assert_array_equal(huge.dv_.vectors, longest.dv_.vectors)
    else:
        np.testing.assert_array_equal(huge.wv_.vectors, longest.wv_.vectors)
    # a shorter window is not clipped: it trains differently
    shorter = _fit(case, 2)
    assert not np.array_equal(shorter.transform(DOCS[:5]), longest.transform(DOCS[:5]))


@pytest.mark.parametrize("cls", [Word2VecTransformer, Doc2VecTransformer])
def test_window_is_bounded(cls):
    with pytest.raises(ValueError, match="window"):
        cls(window=2**31, min_count=1).fit(DOCS)


PEAK = r"""
import resource
from skembed.text.word2vec._doc2vec import Doc2VecTransformer
from skembed.text.word2vec._fasttext import FastTextTransformer
from skembed.text.word2vec._word2vec import Word2VecTransformer

docs = [f"w{i % 7} w{i % 5} w{i % 3} the cat sat on a mat" for i in range(50)]
kw = dict(vector_size=8, epochs=2, random_state=0, min_count=1, n_jobs=2)
makers = [
    lambda w: Word2VecTransformer(window=w, **kw),
    lambda w: FastTextTransformer(window=w, bucket=500, **kw),
    lambda w: Doc2VecTransformer(window=w, dm=1, **kw),
]
for make in makers:
    make(10).fit(docs)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for make in makers:
    make(10**7).fit(docs)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""


@pytest.mark.slow
def test_huge_window_peak_memory():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", PEAK],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    # MiB over the peak of the same fits with window=10 (the old kernels: about 2,900)
    assert int(out.split()[-1]) < 100, out


def test_compile_notifier_prints_at_verbose_and_logs_otherwise(capsys, caplog):
    import logging
    from types import SimpleNamespace

    from skembed.text.word2vec._training import compile_notifier

    loud = compile_notifier(SimpleNamespace(verbose=1))
    loud("start")
    loud("start")  # a second kernel of the same fit: announced once
    loud(12.34)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("SimpleNamespace: compiling the numba training kernel")
    assert err[1] == "SimpleNamespace: training kernel compiled in 12.3 s"
    quiet = compile_notifier(SimpleNamespace(verbose=0))
    with caplog.at_level(logging.INFO, logger="skembed.text.word2vec._training"):
        quiet("start")
        quiet(2.0)
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]
    assert "compiling the numba training kernel" in caplog.records[0].getMessage()
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_warm_up_fits_every_listed_configuration():
    import subprocess
    import sys

    from skembed.text.word2vec import WARM_UP, WARM_UP_KERNELS, warm_up

    seconds = warm_up(verbose=0)
    assert len(WARM_UP) == 5 and len(WARM_UP_KERNELS) == 2
    assert len(seconds) == len(WARM_UP) + len(WARM_UP_KERNELS)
    assert all(s > 0 for s in seconds)
    # also the draw count of chunks prepared on threads (the tiny warm-up corpus never splits),
    # in a fresh process: here another test may have compiled it already
    code = (
        "from skembed.text.word2vec import warm_up; warm_up(verbose=0); "
        "from skembed.kernels._prepare import _count_draws as f; print(len(f.signatures))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "1"


@pytest.mark.parametrize("chunk_loss", [float("nan"), 5e6])
def test_a_finite_exploding_loss_is_divergence_too(monkeypatch, chunk_loss):
    """A chunk whose mean loss per example passes MAX_EXAMPLE_LOSS stops the fit (issue 39: the
    GPU defaults gave 1e8-3e12 per example, finite, and the fit "succeeded")."""
    from skembed.exceptions import TrainingDivergedError
    from skembed.text.word2vec import _training
    from skembed.text.word2vec._training import MAX_EXAMPLE_LOSS

    real = _training.NumbaEngine.train_chunk

    def exploding(self, *args):
        _, n = real(self, *args)
        return chunk_loss * max(n, 1.0) / 1000, n  # 5e3 nats per example, or NaN

    monkeypatch.setattr(_training.NumbaEngine, "train_chunk", exploding)
    assert 5e3 > MAX_EXAMPLE_LOSS
    with pytest.raises(
        TrainingDivergedError, match="diverged: the loss is (nan|5000.0) at epoch 1"
    ):
        Word2VecTransformer(vector_size=8, min_count=1, epochs=2, n_jobs=1).fit(DOCS)
    healthy = Word2VecTransformer(vector_size=8, min_count=1, epochs=2, n_jobs=1, random_state=0)
    monkeypatch.setattr(_training.NumbaEngine, "train_chunk", real)
    assert all(r["loss"] < 10 for r in healthy.fit(DOCS).history_)

"""The phase scheduler's entry points: one compiled loop per train part, and the compile notice.

A first fit with an empty numba cache once compiled all four Word2Vec train parts (or both
Doc2Vec ones) into every specialization of ``run_phases`` (99 s / 84 s / 43 s for the
first Word2Vec / FastText / Doc2Vec fit on 200 tiny documents, issue 39); each variant now
has its own entry point (``scheduler.ENTRIES``), so a configuration compiles only the part
it runs.
"""

import numpy as np
import pytest
from numba import njit

from skembed.kernels import scheduler
from skembed.kernels.scheduler import (
    ENTRIES,
    PER_EXAMPLE,
    SHARED_BAG,
    SHARED_CBOW,
    SHARED_DBOW,
    SHARED_SKIPGRAM,
    compile_notice,
)
from skembed.text.word2vec import Doc2VecTransformer, Word2VecTransformer

DOCS = [f"w{i % 7} w{i % 5} w{i % 3} w{i % 11} w{i % 2}" for i in range(40)]


def _variants_compiled():
    """``(doc is None, variant)`` of every entry point compiled (or loaded) in this process."""
    return {key for key, entry in ENTRIES.items() if entry.signatures}


def test_each_variant_has_its_own_entry_point_and_train_part():
    from skembed.kernels import doc2vec, word2vec

    assert (PER_EXAMPLE, SHARED_SKIPGRAM, SHARED_BAG, SHARED_CBOW, SHARED_DBOW) == (0, 1, 2, 3, 4)
    assert len(set(ENTRIES.values())) == len(ENTRIES) == 6
    parts = {
        (True, SHARED_SKIPGRAM): word2vec.train_part_shared,
        (True, SHARED_BAG): word2vec.train_part_bag,
        (True, SHARED_CBOW): word2vec.train_part_cbow_shared,
        (True, PER_EXAMPLE): word2vec.train_part,
        (False, SHARED_DBOW): doc2vec.train_part_dbow_shared,
        (False, PER_EXAMPLE): doc2vec.train_part,
    }
    for key, part in parts.items():
        # the entry calls the loop with its train part, whose signature every part shares
        assert part.__name__ in ENTRIES[key].py_func.__code__.co_names
        names = part.py_func.__code__.co_varnames[:7]
        assert names == ("weights", "chunk", "c", "span", "state", "ws", "tmp")
    # the loop is inlined by numba, never compiled on its own
    assert scheduler._run_chunk.targetoptions.get("inline") == "always"


def test_each_configuration_compiles_its_own_train_part():
    Word2VecTransformer(min_count=1, epochs=1, vector_size=8, random_state=0).fit(DOCS)
    assert (True, SHARED_SKIPGRAM) in _variants_compiled()
    Word2VecTransformer(min_count=1, epochs=1, vector_size=8, sg=0, random_state=0).fit(DOCS)
    assert (True, SHARED_CBOW) in _variants_compiled()
    Doc2VecTransformer(min_count=1, epochs=1, vector_size=8, random_state=0).fit(DOCS)
    assert (False, SHARED_DBOW) in _variants_compiled()


def test_compile_notice_reports_a_compilation_once_with_its_seconds():
    @njit  # a new function: its first call compiles
    def add_one(x):
        return x + 1

    seen = []
    with compile_notice(seen.append):
        assert add_one(1) == 2
        assert add_one(2) == 3  # compiled already: no second notice
    assert seen[0] == "start"
    assert len(seen) == 2 and isinstance(seen[1], float) and 0.0 < seen[1] < 60.0
    # outside the context nothing is reported
    seen.clear()
    assert add_one(np.float64(1.5)) == 2.5
    assert seen == []


def test_the_entry_points_train_parts_and_helpers_run_without_reference_counting():
    """The phase loop's entry points, every train part and every helper of ``_core`` are
    compiled without numba's runtime (``_nrt=False``, set on each: numba's cache does not
    record an inherited flag). With reference counting, every array view in their loops took an atomic increment
    and decrement (``NRT_incref``), and PV-DBOW trained at half speed (BBC News)."""
    from skembed.kernels import _core, doc2vec, word2vec

    parts = [
        word2vec.train_part, word2vec.train_part_shared, word2vec.train_part_cbow_shared,
        word2vec.train_part_bag, doc2vec.train_part, doc2vec.train_part_dbow_shared,
    ]  # fmt: skip
    helpers = [getattr(_core, n) for n in dir(_core) if hasattr(getattr(_core, n), "py_func")]
    helpers = [h for h in helpers if h.targetoptions.get("forceinline")]
    assert len(helpers) > 20
    for dispatcher in (*ENTRIES.values(), *parts, *helpers):
        assert dispatcher.targetoptions.get("_nrt") is False, dispatcher


_LITERALS = r"""
from numba import types
from skembed.kernels import _core
from skembed.text.word2vec import Doc2VecTransformer, FastTextTransformer, Word2VecTransformer
docs = [f"w{i % 7} w{i % 5} w{i % 3} w{i % 11} w{i % 2}" for i in range(40)]
for cls, kw in ((Word2VecTransformer, {}), (Word2VecTransformer, {"sg": 0}),
                (FastTextTransformer, {"sg": 1}), (Doc2VecTransformer, {})):
    cls(min_count=1, epochs=1, vector_size=8, random_state=0, **kw).fit(docs)
for name in ("_add_rows", "_block_scores", "_slot", "_centre", "_in_slot", "_neg_slot",
             "_seed_state", "_score_shared_noise"):
    sigs = getattr(_core, name).signatures
    literal = any(isinstance(a, types.Literal) for sig in sigs for a in sig)
    print(name, len(sigs), literal)
"""


@pytest.mark.slow
def test_helpers_compile_once_whatever_constant_they_are_given(tmp_path):
    """Each helper is its own compiled function (LLVM-inlined, ``forceinline``); a literal
    ``0`` argument would type as ``Literal[int](0)``, an int32 row where another caller passes
    an int64 one as another type, and either compiles the helper once more. In a
    new process with an empty numba cache, so that the helpers are compiled, not loaded
    (a loaded caller registers no signature of its callees)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-c", _LITERALS], env=env, cwd=root, capture_output=True, text=True,
        timeout=600, check=True,
    ).stdout.split()  # fmt: skip
    rows = {out[i]: (int(out[i + 1]), out[i + 2]) for i in range(0, len(out), 3)}
    assert set(rows) == {
        "_add_rows", "_block_scores", "_slot", "_centre", "_in_slot", "_neg_slot", "_seed_state",
        "_score_shared_noise",
    }  # fmt: skip
    for name, (n_signatures, literal) in rows.items():
        assert n_signatures >= 1 and literal == "False", (name, n_signatures, literal)
    # the row helpers take int64 rows from every family member: one compilation each
    # (Doc2Vec's int32 ids and int64 document rows had compiled them once more, and its
    # int32 batch of words the shared noise of FastText's bag)
    for name in ("_in_slot", "_neg_slot", "_seed_state", "_score_shared_noise"):
        assert rows[name][0] == 1, (name, rows[name])


def test_two_threads_agree_when_a_chunk_ends_and_never_hang():
    """Every thread decides whether another phase follows from ``pos`` where no thread
    writes it. Read at the top of the loop instead, a thread that was late there could see
    the last tokens already done by the other, leave, and leave the other waiting at the
    barrier forever (a CI run hung so). Many tiny fits, whose parts are empty or one phase
    long, on two threads, watched by a timeout so a hang fails the test instead."""
    import threading

    from skembed.kernels.scheduler import train_word2vec_chunk
    from skembed.text.word2vec._training import kernel_config

    rng = np.random.default_rng(0)
    n_words, dim = 20, 4
    cfg = kernel_config(
        rng.integers(1, 50, n_words), sg=1, hs=0, negative=2, window=2, shared_negatives=True,
        ns_exponent=0.75, input_rows=(None, None), sync_tokens=3,
    )  # fmt: skip
    done = []

    def many_chunks():
        import numba

        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        for i in range(400):
            n_tok = int(rng.integers(1, 12))
            ids = rng.integers(0, n_words, n_tok).astype(np.int32)
            cut = int(rng.integers(0, n_tok + 1))
            offsets = np.array(sorted({0, cut, n_tok}), dtype=np.int64)
            syn0 = rng.standard_normal((n_words, dim)).astype(np.float32) * 0.1
            syn1neg, syn1 = np.zeros_like(syn0), np.zeros((0, dim), np.float32)
            train_word2vec_chunk(syn0, syn1neg, syn1, ids, offsets, cfg, 0.025, 0.02, i, 2)
        done.append(True)

    worker = threading.Thread(target=many_chunks, daemon=True)
    worker.start()
    worker.join(timeout=240)
    assert done, "two threads training tiny chunks did not finish within 240 s: a hang"

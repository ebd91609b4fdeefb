"""The phase scheduler's entry points: one compiled loop per train part, and the compile notice.

A first fit with an empty numba cache once compiled all four Word2Vec train parts (or both
Doc2Vec ones) into every specialization of ``run_phases`` (99 s / 84 s / 43 s for the
first Word2Vec / FastText / Doc2Vec fit on 200 tiny documents, issue 39); the variant is now
part of the argument types, so a configuration compiles only the part it runs.
"""

import numpy as np
from numba import njit, types

from skembed.kernels import scheduler
from skembed.kernels.scheduler import (
    PER_EXAMPLE,
    SHARED_CBOW,
    SHARED_DBOW,
    SHARED_SKIPGRAM,
    compile_notice,
    run_phases,
)
from skembed.text.word2vec import Doc2VecTransformer, Word2VecTransformer

DOCS = [f"w{i % 7} w{i % 5} w{i % 3} w{i % 11} w{i % 2}" for i in range(40)]


def _variants_compiled():
    """The train part (the marker tuple's length) of every compiled ``run_phases``."""
    return {len(sig[8]) for sig in run_phases.signatures}


def test_variant_codes_are_distinct_lengths():
    codes = (PER_EXAMPLE, scheduler.SHARED_SKIPGRAM, scheduler.SHARED_BAG, SHARED_CBOW)
    assert codes == (0, 1, 2, 3)
    assert SHARED_DBOW == 4  # Doc2Vec's shared part: its own code, its own machine code


def test_each_configuration_compiles_its_own_train_part():
    Word2VecTransformer(min_count=1, epochs=1, vector_size=8, random_state=0).fit(DOCS)
    assert SHARED_SKIPGRAM in _variants_compiled()
    Word2VecTransformer(min_count=1, epochs=1, vector_size=8, sg=0, random_state=0).fit(DOCS)
    assert SHARED_CBOW in _variants_compiled()
    Doc2VecTransformer(min_count=1, epochs=1, vector_size=8, random_state=0).fit(DOCS)
    assert SHARED_DBOW in _variants_compiled()
    # the marker is a tuple of zeros whose length is the variant
    sig = next(s for s in run_phases.signatures if len(s[8]) == SHARED_CBOW)
    assert isinstance(sig[8], types.BaseTuple) and len(sig[8]) == 3


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

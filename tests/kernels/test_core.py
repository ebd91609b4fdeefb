"""The kernels' shared pieces (``skembed.kernels._core``): chunk preparation, the LCG seeds,
the sigmoid table index and the score-first block helpers, on hand-checkable inputs."""

import numpy as np
import pytest
from numba import njit

from skembed.kernels import sampling as S
from skembed.kernels._core import (
    _block_scores,
    _input_gradient,
    _output_gradient,
    _seed_state,
    _table_index,
)


def test_seed_state_is_the_lcg_of_a_mixed_seed_per_part():
    def by_hand(seed, part):  # the formula, in Python integers modulo 2**64
        m = 2**64
        x = (seed * 0x9E3779B97F4A7C15 + (part + 1) * 0xBF58476D1CE4E5B9) % m
        x ^= x >> 31
        for _ in range(4):
            x = (x * 25214903917 + 11) % m
        return x

    for seed, part in ((0, 0), (1, 0), (7, 1), (2**40 + 3, 3)):
        assert int(_seed_state(seed, part)) == by_hand(seed, part)
    states = {int(_seed_state(s, t)) for s in (0, 1, 2) for t in (0, 1, 2, 3)}
    assert len(states) == 12  # distinct per part and per seed


def test_table_index_matches_word2vec_c():
    # word2vec.c: (int)((f + MAX_EXP) * (EXP_TABLE_SIZE / MAX_EXP / 2))
    for f in (-5.999, -1.0, 0.0, 0.003, 2.5, 5.99):
        expected = int((np.float32(f) + np.float32(6.0)) * np.float32(1000 / 6.0 / 2.0))
        assert _table_index(np.float32(f)) == expected
    assert _table_index(np.float32(0.0)) == 500 and S.EXP_TABLE_SIZE == 1000
    # outside (-6, 6) and NaN: index 0 (the caller clips such scores itself)
    for f in (-6.0, 6.0, 100.0, np.nan):
        assert _table_index(np.float32(f)) == 0


@njit
def _scores_and_gradients(W1, outs, L, n, sc, g, err, outg, dim):
    """The three helpers as the kernels call them: from compiled code (they have no CPython
    wrapper, ``_core._INNER``)."""
    n_out = outs.shape[0]
    for j in range(n_out):
        _block_scores(W1, outs[j], L, n, sc, j, dim)
    for i in range(n):
        _input_gradient(err, i, W1, outs, g, np.int64(1), n_out, dim)
    for j in range(n_out):
        _output_gradient(outg, j, L, g, n, dim)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_block_scores_and_gradients_equal_numpy(n):
    # the score-first helpers of the shared-negative kernels: blocks of 4, 2 and 1 rows
    rng = np.random.default_rng(n)
    dim, n_out = 21, 5
    L = rng.standard_normal((n, dim)).astype(np.float32)
    W1 = rng.standard_normal((9, dim)).astype(np.float32)
    outs = np.array([3, 0, 8, 3, 5], dtype=np.int64)  # a row may repeat
    sc = np.zeros((n_out, n), np.float32)
    g = rng.standard_normal((n_out, n)).astype(np.float32)
    err = rng.standard_normal((n, dim)).astype(np.float32)
    expected = err.copy()
    for i in range(n):
        expected[i] += g[1:, i] @ W1[outs[1:]]  # output rows 1..4 (two pairs), as CBOW's noise
    outg = np.full((n_out, dim), 99.0, np.float32)  # overwritten, not added to
    _scores_and_gradients(W1, outs, L, n, sc, g, err, outg, dim)
    np.testing.assert_allclose(sc, W1[outs] @ L.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(err, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outg, g @ L, rtol=1e-5, atol=1e-5)


def _without_wrapper(obj):
    from numba.core.registry import CPUDispatcher

    return isinstance(obj, CPUDispatcher) and bool(obj.targetoptions.get("no_cpython_wrapper"))


def test_helpers_without_a_cpython_wrapper_are_called_from_compiled_code_only():
    """A function compiled without its CPython wrapper crashes the interpreter when Python
    calls it (numba gives it no entry point). No plain Python function of the package calls
    one: only functions compiled themselves (``njit``, ``overload``) do."""
    import ast
    import importlib
    from pathlib import Path

    import skembed
    from skembed.kernels import _core, _phases, _prepare, word2vec

    assert _without_wrapper(word2vec.train_part_shared) and _without_wrapper(_core._block_scores)
    assert _without_wrapper(_phases._merge_matrix) and _without_wrapper(_core._part_start)
    python = (_core._seed_state, _core._table_index, _prepare._prepare_into, _prepare._count_draws)
    for python_calls in python:
        assert not _without_wrapper(python_calls)
    compiled = ("njit", "jit", "overload", "intrinsic")
    root = Path(skembed.__file__).parent
    offenders, checked = [], 0
    for path in root.rglob("*.py"):
        name = ".".join(("skembed", *path.relative_to(root).with_suffix("").parts))
        module = importlib.import_module(name.removesuffix(".__init__"))
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or any(
                word in ast.unparse(d) for d in function.decorator_list for word in compiled
            ):
                continue
            for call in ast.walk(function):
                if not isinstance(call, ast.Call):
                    continue
                f = call.func  # ``helper(...)`` or ``module.helper(...)``, resolved in the module
                if isinstance(f, ast.Name):
                    target = vars(module).get(f.id)
                elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                    target = getattr(vars(module).get(f.value.id), f.attr, None)
                else:
                    continue
                checked += 1
                if _without_wrapper(target):
                    offenders.append(f"{path.name}:{call.lineno} {function.name}")
    assert checked > 1000 and not offenders, offenders


_FIRST_CALLER = """
import hashlib, sys
import numpy as np
from skembed import Word2VecTransformer
from skembed.datasets import load_bbc_news
if sys.argv[1] == "python-first":  # as a test does: the helper compiled from Python
    from skembed.kernels._core import _table_index
    _table_index(np.float32(0.5))
docs = list(load_bbc_news()[0])[:300]
est = Word2VecTransformer(epochs=1, n_jobs=1, random_state=0).fit(docs)
print(hashlib.sha256(est.wv_.vectors.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_vectors_do_not_depend_on_which_caller_compiled_a_helper_first(tmp_path):
    """numba compiles a helper that names no ``fastmath`` with its first caller's, and caches
    that machine code for all: ``_table_index`` compiled from Python first (no fast-math) gave
    every later fit other vectors, in that process and from the disk cache. Each helper that
    computes with floats now names its own (``_core._INNER``'s comment)."""
    import os
    import subprocess
    import sys

    digests = []
    for order in ("kernel-first", "python-first"):
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / order))
        run = subprocess.run(
            [sys.executable, "-c", _FIRST_CALLER, order],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        digests.append(run.stdout.split()[-1])
    assert digests[0] == digests[1]

"""The compiled threads' barrier and its atomics (``skembed.kernels._sync``)."""

import threading

import numpy as np
from numba import njit

from skembed.kernels._sync import (
    ABORT,
    GENERATION,
    atomic_add,
    atomic_load,
    atomic_store,
    barrier,
    new_barrier,
)


@njit(nogil=True)
def _add_load_store(a):
    old = atomic_add(a, 1, 5)
    seen = atomic_load(a, 1)
    atomic_store(a, 2, 7)
    return old, seen


def test_atomics_read_and_write_one_element():
    a = np.array([0, 3, 0], dtype=np.int64)
    assert _add_load_store(a) == (3, 8)
    assert a.tolist() == [0, 8, 7]


@njit(nogil=True)
def _phases(sync, k, n_threads, board, seen, n_phases):
    """Phase p: thread k writes board[k] = p; after a barrier it reads every slot, which must
    all say p (a thread ahead would have written p + 1 before the others read)."""
    for p in range(n_phases):
        board[k] = p
        if barrier(sync, n_threads):
            return
        for q in range(n_threads):
            seen[k, p] += board[q] == p
        if barrier(sync, n_threads):
            return


def test_barrier_holds_every_thread_until_all_arrive():
    n_threads, n_phases = 3, 300
    sync, board = new_barrier(), np.full(n_threads, -1, dtype=np.int64)
    seen = np.zeros((n_threads, n_phases), dtype=np.int64)
    args = (n_threads, board, seen, n_phases)
    threads = [threading.Thread(target=_phases, args=(sync, k, *args)) for k in range(1, 3)]
    for t in threads:
        t.start()
    _phases(sync, 0, *args)
    for t in threads:
        t.join()
    assert (seen == n_threads).all()  # every thread saw every thread's write of each phase
    assert sync[GENERATION] == 2 * n_phases and sync[0] == 0


def test_one_thread_never_waits():
    sync = new_barrier()
    for _ in range(3):
        assert not barrier(sync, 1)
    assert sync[GENERATION] == 3


def test_an_abort_releases_the_waiting_threads():
    """A thread that failed sets the abort flag: the others return True instead of hanging."""
    sync = new_barrier()
    result = []
    waiter = threading.Thread(target=lambda: result.append(barrier(sync, 2)))
    waiter.start()
    sync[ABORT] = 1
    waiter.join(timeout=30)
    assert not waiter.is_alive() and result == [True]


def test_barrier_array_keeps_its_counters_on_separate_cache_lines():
    sync = new_barrier()
    assert sync.dtype == np.int64 and sync.shape == (24,)
    assert GENERATION * 8 >= 64 and (ABORT - GENERATION) * 8 >= 64

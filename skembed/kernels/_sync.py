"""A barrier for compiled threads: atomics as numba intrinsics, and a spin-then-yield wait.

The word2vec family's phase loop (:func:`skembed.kernels.scheduler.run_phases`) runs on
Python threads, each in one compiled function that releases the GIL for a whole corpus
chunk; its phases end at :func:`barrier`, where numba's ``prange`` ended them at a parallel
region's join. Handing each phase to the threads from Python instead cost about 100 us per
phase (waking a pool thread, the GIL), 8-33% of the training speed on BBC News with 2
threads, where this barrier costs a few microseconds.

numba has no atomics on the CPU, so :func:`atomic_add`, :func:`atomic_load` and
:func:`atomic_store` emit LLVM's sequentially consistent ``atomicrmw``, ``load atomic`` and
``store atomic`` on an element of an int64 array; these also order the plain reads and
writes of the phase around them (C11's happens-before), so what one thread wrote before the
barrier is what the others read after it. A waiting thread polls :data:`SPINS` times, then
calls the operating system's yield (``sched_yield``; ``SwitchToThread`` on Windows), so on a
machine shared with other processes it gives its core to the thread it waits for rather
than spinning against it (the wait policy libgomp's ``GOMP_SPINCOUNT`` sets for ``prange``).
"""

from __future__ import annotations

import sys
import threading

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: polls of the barrier's generation before a waiting thread starts yielding its core
SPINS = 4000
#: the operating system's "run another thread" call (no argument, an int result)
_YIELD = "SwitchToThread" if sys.platform == "win32" else "sched_yield"
#: the barrier's array: arrival count at index 0, generation at :data:`GENERATION` (its own
#: cache line), then the :data:`ABORT` flag
GENERATION = 8
ABORT = 16


def _on_element(array, returns, n_values, op):
    """``(signature, codegen)`` of an intrinsic on ``array[index]`` of an int64 array.

    ``op(builder, pointer, args)`` emits the access (its value is returned, or none);
    ``n_values`` int64 arguments follow the index. ``None`` (no match) for other arrays.
    """
    if not (isinstance(array, types.Array) and array.dtype == types.int64):
        return None
    sig = returns(array, types.intp, *([types.int64] * n_values))

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [args[1]])
        value = op(builder, ptr, args)
        return context.get_dummy_value() if value is None else value

    return sig, codegen


@intrinsic
def atomic_add(typingctx, array, index, value):
    """``array[index] += value`` as one atomic step; returns the old value (int64)."""
    return _on_element(
        array, types.int64, 1, lambda b, ptr, args: b.atomic_rmw("add", ptr, args[2], "seq_cst")
    )


@intrinsic
def atomic_load(typingctx, array, index):
    """``array[index]`` read atomically (sequentially consistent), int64."""
    return _on_element(array, types.int64, 0, lambda b, ptr, args: b.load_atomic(ptr, "seq_cst", 8))


def _store(builder, ptr, args):
    builder.store_atomic(args[2], ptr, "seq_cst", 8)


@intrinsic
def atomic_store(typingctx, array, index, value):
    """``array[index] = value`` written atomically (sequentially consistent)."""
    return _on_element(array, types.none, 1, _store)


@intrinsic
def yield_core(typingctx):
    """Let the operating system run another thread on this core (``sched_yield``)."""
    sig = types.none()

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        builder.call(cgutils.get_or_insert_function(builder.module, fnty, _YIELD), [])
        return context.get_dummy_value()

    return sig, codegen


def on_threads(work, n, on_error=None):
    """Run ``work(j)`` for ``j`` in ``range(n)`` at once: ``j = 0`` on the calling thread, the
    others on ``n - 1`` started threads (the kernels' compiled calls release the GIL).

    An exception in one ``work`` is kept and ``on_error()`` called at once (so the other
    threads stop waiting for it, e.g. at a barrier); after all threads end, the first error
    is raised (one that is not a ``threading.BrokenBarrierError`` caused by it, if any).

    Parameters
    ----------
    work : callable
        ``work(j)``, ``j`` an int.
    n : int
        Threads, the calling one included (``>= 1``).
    on_error : callable or None, default=None
        Called with no argument when a ``work`` raises.

    Examples
    --------
    >>> from skembed.kernels._sync import on_threads
    >>> seen = []
    >>> on_threads(seen.append, 3)
    >>> sorted(seen)
    [0, 1, 2]
    """
    errors = []

    def run(j):
        try:
            work(j)
        except BaseException as exc:
            errors.append(exc)
            if on_error is not None:
                on_error()

    threads = [threading.Thread(target=run, args=(j,), daemon=True) for j in range(1, n)]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise next(
            (e for e in errors if not isinstance(e, threading.BrokenBarrierError)), errors[0]
        )


def new_barrier():
    """The int64 array a group of threads shares as one :func:`barrier` (zeros).

    Returns
    -------
    numpy.ndarray of shape (24,), int64
        Arrival count, generation and abort flag, each on its own 64-byte cache line.
    """
    return np.zeros(ABORT + 8, dtype=np.int64)


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def barrier(sync, n_threads):
    """Wait until all ``n_threads`` threads sharing ``sync`` have called this; reusable.

    The last thread to arrive resets the count and advances the generation; the others
    wait for the generation to change (:data:`SPINS` polls, then yielding the core).

    Parameters
    ----------
    sync : numpy.ndarray of shape (24,), int64
        From :func:`new_barrier`, shared by the threads.
    n_threads : int

    Returns
    -------
    aborted : bool
        True when some thread set the abort flag (``sync[ABORT]``): it stopped taking part,
        so the caller must stop too rather than wait for it again.
    """
    generation = atomic_load(sync, GENERATION)
    if atomic_add(sync, 0, 1) == n_threads - 1:
        atomic_store(sync, 0, 0)
        atomic_add(sync, GENERATION, 1)
    else:
        polls = 0
        while atomic_load(sync, GENERATION) == generation:
            if atomic_load(sync, ABORT) != 0:
                return True
            polls += 1
            if polls > SPINS:
                yield_core()
    return atomic_load(sync, ABORT) != 0

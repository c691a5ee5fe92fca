"""Thread control for the BLAS behind numpy.

cellsafe's matrix products are small or memory-bound (margin sums, p x p factorizations,
blocks of a few thousand rows): a threaded BLAS spends more on synchronization than it gains
there, and on a busy machine it can be tens of times slower than one thread.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from typing import Any, Callable, TypeVar

__all__ = ["one_blas_thread_from_start", "single_thread_blas", "on_one_blas_thread"]

F = TypeVar("F", bound=Callable[..., Any])


def single_thread_blas(enabled: bool = True) -> Any:
    """A context manager running BLAS on one thread inside its block.

    A no-op when ``enabled`` is False or threadpoolctl is not installed.
    """
    if not enabled:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency, but stay usable without it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


# The variables the BLAS libraries numpy is built with read when they start (OpenBLAS, its pthreads and
# OpenMP builds, MKL).
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread_from_start() -> bool:
    """Start numpy's BLAS with one thread, for a command that does no linear algebra.

    OpenBLAS starts a worker thread per core when numpy is imported, and each worker busy-waits
    before it sleeps: about 0.06 CPU-seconds per process on two cores, a quarter of the cell key
    method's whole run on 5e6 records, for threads that never get work.  Only before numpy's first
    import, and only when the user has not chosen a thread count (any of the variables set is
    left as it is).  True when it took effect.
    """
    if "numpy" in sys.modules or any(v in os.environ for v in _THREAD_VARIABLES):
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True


def on_one_blas_thread(func: F) -> F:
    """Decorate ``func`` to run with BLAS on one thread (:func:`single_thread_blas`).

    For work made of many small products in sequence (the eliminations and programs of cell
    suppression): measured at load 2 on two cores, a threaded BLAS took 14.3 CPU seconds where one
    thread took 2.2 for the same suppression.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with single_thread_blas():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

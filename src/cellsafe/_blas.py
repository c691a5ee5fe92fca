"""Thread control for the BLAS behind numpy.

cellsafe's matrix products are small or memory-bound (margin sums, p x p factorizations,
blocks of a few thousand rows): a threaded BLAS spends more on synchronization than it gains
there, and on a busy machine it can be tens of times slower than one thread.
"""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["single_thread_blas"]


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

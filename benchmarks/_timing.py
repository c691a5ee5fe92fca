"""Wall-clock timing shared by the benchmarks (``time.perf_counter``)."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_time(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The best wall time of ``repeat`` calls of ``fn``, and the last call's result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """One call of ``fn(*args, **kwargs)``: its result and its wall time."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0

"""Bounded work: a run whose work grows past what the machine does in minutes says so before it is under way.

Long loops and large fits report their size here: :func:`check` with an estimate made before the
work (a multinomial logit's fit from its records, categories and design columns), :func:`projected`
from the first units of a loop (a frontier's settings, linear programs).  What happens then is the
caller's choice, set once with :func:`work_limit` (the command line sets ten minutes unless
``--allow-long``): beyond the limit, :class:`~cellsafe.exceptions.WorkTooLongError` says how long
and how to make it smaller; past a minute, one notice says how long it will take.  Without a limit
(the library's default) nothing is refused and nothing is said.

The limit is process-wide (not per thread): fits run in worker threads see it too.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Callable, Iterator

from .exceptions import WorkTooLongError

__all__ = ["work_limit", "check", "projected", "duration", "multinomial_work", "available_memory"]

NOTICE_SECONDS = 60.0
"""Work estimated beyond this is announced (when an announcer is set)."""

_state: dict[str, object] = {"limit": None, "announce": None, "said": set()}


@contextlib.contextmanager
def work_limit(seconds: float | None, announce: Callable[[str], None] | None = None) -> Iterator[None]:
    """Refuse work estimated beyond ``seconds`` (None: no limit) and announce work beyond a minute.

    Examples
    --------
    >>> with work_limit(600):
    ...     try:
    ...         check("a frontier of 1,000,000 settings", 20_000.0, "use a smaller grid")
    ...     except Exception as exc:
    ...         print(str(exc)[:62])
    a frontier of 1,000,000 settings: about 5 h 33 min on this mac
    """
    saved = dict(_state)
    _state.update(limit=seconds, announce=announce, said=set())
    try:
        yield
    finally:
        _state.clear()
        _state.update(saved)


def duration(seconds: float) -> str:
    """``seconds`` in words: '45 s', '12 min', '3 h 20 min', '4 days'."""
    if seconds != seconds or seconds == float("inf"):
        return "longer than anyone will wait"
    s = max(0.0, float(seconds))
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 3 * 86400:
        h, m = divmod(int(s // 60), 60)
        return f"{h} h {m} min"
    return f"{s / 86400:,.0f} days"


def available_memory() -> float | None:
    """Bytes of memory available to a new allocation (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check(what: str, seconds: float, fix: str, memory: float | None = None) -> None:
    """Judge work of about ``seconds`` (and ``memory`` bytes) before it starts, against the limit in force.

    Refused (:class:`WorkTooLongError`) beyond the limit, or when it needs more memory than is
    available; announced once past a minute.
    """
    limit = _state["limit"]
    if limit is None and _state["announce"] is None:
        return
    avail = available_memory() if memory is not None else None
    mem = f" and {memory / 2**30:,.1f} GB of memory" if memory is not None and memory >= 2**28 else ""
    too_big = memory is not None and avail is not None and memory > 0.8 * avail
    if limit is not None and (seconds > float(limit) or too_big):  # type: ignore[arg-type]
        more = f" ({avail / 2**30:,.1f} GB available)" if too_big and avail is not None else ""
        raise WorkTooLongError(
            f"{what}: about {duration(seconds)} on this machine{mem}{more}; {fix}, or allow a long run "
            "(--allow-long; in Python, outside cellsafe._work.work_limit)."
        )
    said: set = _state["said"]  # type: ignore[assignment]
    announce = _state["announce"]
    if announce is not None and seconds >= NOTICE_SECONDS and what not in said:
        said.add(what)
        announce(f"{what}: about {duration(seconds)} on this machine{mem}; nothing is written before it completes.")  # type: ignore[operator]


def projected(what: str, done: int, total: int, started: float, fix: str, *, after: float = 1.0) -> None:
    """Judge a loop of ``total`` units from its first ``done`` (begun at ``time.perf_counter()`` value ``started``).

    Checked once ``after`` seconds have passed or two units are done, whichever comes later, then
    at every call (cheap): the estimate is the mean time per unit so far times the units left.
    """
    if (_state["limit"] is None and _state["announce"] is None) or done < 1 or done >= total:
        return
    elapsed = time.perf_counter() - started
    if done < 2 and elapsed < after:
        return
    check(what, elapsed / done * total, fix)


def multinomial_work(n: int, k: int, p: int, iterations: int = 100) -> tuple[float, float]:
    """Seconds and bytes of a multinomial logit's fit: ``n`` records, ``k`` categories, ``p`` design columns.

    Each iteration of its optimizer evaluates an n x k matrix of linear predictors (n x p times
    p x k), its softmax, and the gradient (p x n times n x k); one evaluation is timed here on a
    slice of the rows (at most 32 MB) and scaled to ``n`` rows and ``iterations`` iterations (such
    fits take a hundred or more).  Memory: five n x k arrays of doubles.
    """
    import numpy as np

    n, k, p = int(n), int(k), max(int(p), 1)
    rows = max(1, min(n, (4 << 20) // max(k, 1)))
    gen = np.random.default_rng(0)
    x = gen.standard_normal((rows, p))
    b = gen.standard_normal((p, k)) * 0.01
    start = time.perf_counter()
    eta = x @ b
    eta -= eta.max(axis=1, keepdims=True)
    prob = np.exp(eta)
    prob /= prob.sum(axis=1, keepdims=True)
    _ = x.T @ prob
    per_row = (time.perf_counter() - start) / rows
    return per_row * n * iterations, 5.0 * 8.0 * n * k

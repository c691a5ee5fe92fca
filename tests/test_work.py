"""Bounded work (cellsafe._work): refused past the caller's limit, announced past a minute, silent without a limit."""

from __future__ import annotations

import time

import pytest

from cellsafe._work import check, duration, multinomial_work, projected, work_limit
from cellsafe.exceptions import WorkTooLongError


def test_no_limit_no_word():
    check("anything", 1e9, "never mind")  # the library's default: nothing refused, nothing said


def test_refused_past_the_limit_with_the_estimate_and_the_fix():
    with work_limit(600):
        check("short", 599, "fine")
        with pytest.raises(WorkTooLongError, match=r"^big: about 2 h 46 min on this machine; shrink it, or allow a long run"):
            check("big", 10_000, "shrink it")
    check("big", 10_000, "shrink it")  # the limit ends with its block


def test_announced_once_past_a_minute():
    said = []
    with work_limit(None, announce=said.append):
        check("a run", 120, "x")
        check("a run", 130, "x")
        check("a quick run", 5, "x")
    assert said == ["a run: about 2 min on this machine; nothing is written before it completes."]


def test_memory_beyond_what_is_available_is_refused(monkeypatch):
    import cellsafe._work as work

    monkeypatch.setattr(work, "available_memory", lambda: 8 * 2**30)
    with work_limit(600), pytest.raises(WorkTooLongError, match=r"and 40.0 GB of memory \(8.0 GB available\)"):
        check("a fit", 1.0, "use cart", memory=40 * 2**30)


def test_projected_from_the_first_units():
    with work_limit(600):
        started = time.perf_counter() - 1.0  # one unit took a second
        projected("a loop", 1, 100, started, "fewer units")  # judged: 100 s, within the limit
        with pytest.raises(WorkTooLongError, match="a loop: about"):
            projected("a loop", 2, 10_000, started - 1.0, "fewer units")


def test_multinomial_work_grows_with_records_and_categories():
    s1, m1 = multinomial_work(1_000, 100, 5)
    s2, m2 = multinomial_work(100_000, 10_000, 5)
    assert m2 == 10_000 * m1 and s2 > 10 * s1 > 0


@pytest.mark.parametrize("seconds,text", [(45, "45 s"), (600, "10 min"), (12_000, "3 h 20 min"), (10**6, "12 days")])
def test_duration(seconds, text):
    assert duration(seconds) == text

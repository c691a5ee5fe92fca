"""The budget log on disk: lock, one critical section per release, schema, hash chain, concurrency."""

from __future__ import annotations

import json
import multiprocessing as mp

import pytest

from cellsafe.dp import BudgetExceededError, PrivacyAccountant
from cellsafe.exceptions import DataError, InvalidArgumentError


def _log(tmp_path, *spends):
    log = tmp_path / "budget.json"
    acc = PrivacyAccountant(epsilon=1.0, log=log)
    acc.save(log)
    for e in spends:
        acc.spend(e, label=f"release {e}", mechanism="geometric")
    return log


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["releases"][0].update(epsilon=-10), "finite non-negative number"),
        (lambda d: d["releases"][0].update(epsilon="0.1"), "must be a number"),
        (lambda d: d["releases"][0].update(epsilon=float("nan")), "finite"),
        (lambda d: d["releases"][0].update(epsilon=0.01), "was edited: release 1"),
        (lambda d: d["releases"].pop(0), "was edited: release 1"),
        (lambda d: d["releases"].reverse(), "was edited: release 1"),
        (lambda d: d["budget"].update(epsilon=100.0), "was edited: release 1"),
        (lambda d: d["budget"].update(epsilon=0), "positive"),
        (lambda d: d["releases"][1].update(mechanism="national"), "unknown mechanism 'national'"),
        (lambda d: d["releases"][1].update(extra=1), "unknown field"),
        (lambda d: d["releases"][1].update(partition="region"), "part needs its partition"),
        (lambda d: d.update(format="cellsafe-privacy-budget/9"), "format"),
    ],
)
def test_an_edited_or_malformed_log_is_refused(tmp_path, edit, message):
    log = _log(tmp_path, 0.1, 0.2)
    data = json.loads(log.read_text())
    edit(data)
    log.write_text(json.dumps(data))
    with pytest.raises(DataError, match=message):
        PrivacyAccountant.load(log)


def test_log_round_trip_keeps_the_chain(tmp_path):
    log = _log(tmp_path, 0.1, 0.2)
    acc = PrivacyAccountant.load(log)
    acc.spend(0.3, label="third", partition="region", part="N")
    data = json.loads(log.read_text())
    assert data["format"] == "cellsafe-privacy-budget/2"
    assert len({r["sha256"] for r in data["releases"]}) == 3
    assert PrivacyAccountant.load(log).spent()[0] == pytest.approx(0.6)


def test_an_unknown_mechanism_is_refused_when_spending():
    with pytest.raises(InvalidArgumentError, match="known mechanism"):
        PrivacyAccountant(1.0).spend(0.1, mechanism="national")


def test_a_failed_release_rolls_its_reservation_back(tmp_path):
    log = _log(tmp_path, 0.5)
    acc = PrivacyAccountant.load(log)
    with pytest.raises(RuntimeError):
        with acc.reserve(0.4, label="fails", mechanism="geometric"):
            assert len(json.loads(log.read_text())["releases"]) == 2  # reserved on disk while it runs
            raise RuntimeError("the release failed")
    assert [r["label"] for r in json.loads(log.read_text())["releases"]] == ["release 0.5"]
    with acc.reserve(0.5, label="fits"):
        pass
    with pytest.raises(BudgetExceededError):
        with acc.reserve(0.1, label="too much"):
            raise AssertionError("the body of a refused release never runs")


def test_a_stale_accountant_sees_what_others_spent(tmp_path):
    log = _log(tmp_path)
    a = PrivacyAccountant.load(log)
    b = PrivacyAccountant.load(log)
    a.spend(0.7, label="first")
    with pytest.raises(BudgetExceededError):
        b.spend(0.7, label="second")  # b re-reads the log under the lock
    assert len(json.loads(log.read_text())["releases"]) == 1


def _release(log, barrier, results):
    barrier.wait()  # every process starts together
    try:
        with PrivacyAccountant.load(log).reserve(0.1, label="concurrent", mechanism="geometric"):
            pass
        results.put("ok")
    except BudgetExceededError:
        results.put("refused")


def test_twenty_concurrent_releases_against_a_budget_of_one(tmp_path):
    log = _log(tmp_path)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(20)
    results = ctx.Queue()
    procs = [ctx.Process(target=_release, args=(log, barrier, results)) for _ in range(20)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert outcomes.count("ok") == 10 and outcomes.count("refused") == 10
    data = json.loads(log.read_text())
    assert len(data["releases"]) == 10
    assert PrivacyAccountant.load(log).spent()[0] == pytest.approx(1.0)

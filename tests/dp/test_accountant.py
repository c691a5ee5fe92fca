"""Privacy budget accounting: sequential and parallel composition, refusal, audit log."""

from __future__ import annotations

import json

import pytest

from cellsafe.dp import BudgetExceededError, PrivacyAccountant
from cellsafe.exceptions import CellsafeError, DataError, InvalidArgumentError


def test_sequential_composition_course_example():
    # 002 section 7.7.1: three analyses on the same data costing 1, 0.5, 0.5 -> 2
    acc = PrivacyAccountant(epsilon=2.0)
    for e in (1.0, 0.5, 0.5):
        acc.spend(e, label="analysis")
    assert acc.budget().epsilon_spent == pytest.approx(2.0)


def test_parallel_composition_course_example():
    # 002 section 7.7.3: the same three analyses on disjoint states -> max = 1
    acc = PrivacyAccountant(epsilon=1.0)
    for state, e in (("A", 1.0), ("B", 0.5), ("C", 0.5)):
        acc.spend(e, label="analysis", partition="state", part=state)
    assert acc.budget().epsilon_spent == pytest.approx(1.0)
    # a second release on state B fits (B reaches 1.0), one more on A does not
    acc.spend(0.5, partition="state", part="B")
    with pytest.raises(BudgetExceededError, match="beyond the budget"):
        acc.spend(0.1, partition="state", part="A")


def test_mixed_composition():
    acc = PrivacyAccountant(epsilon=3.0, delta=1e-5)
    acc.spend(1.0, label="national total")
    acc.spend(0.7, partition="region", part="N")
    acc.spend(0.9, partition="region", part="S")
    acc.spend(0.4, 1e-6, partition="age", part="young")
    e, d = acc.spent()
    assert e == pytest.approx(1.0 + 0.9 + 0.4)
    assert d == pytest.approx(1e-6)


def test_refuses_overrun_and_keeps_state():
    acc = PrivacyAccountant(epsilon=1.0, delta=1e-6)
    acc.spend(0.8)
    with pytest.raises(BudgetExceededError) as err:
        acc.spend(0.3, label="too much")
    assert isinstance(err.value, CellsafeError)
    assert "too much" in str(err.value)
    assert len(acc.releases) == 1
    with pytest.raises(BudgetExceededError):
        acc.spend(0.1, delta=1e-5)
    assert acc.can_spend(0.2)
    acc.spend(0.2)
    assert acc.budget().epsilon_remaining == pytest.approx(0.0)


def test_audit_log_round_trip(tmp_path):
    log = tmp_path / "budget.json"
    acc = PrivacyAccountant(epsilon=2.0, log=log)
    acc.spend(0.5, label="table A", mechanism="poisson-gamma")
    acc.spend(1.0, label="table B", partition="sex", part="F")
    data = json.loads(log.read_text())
    assert data["budget"]["epsilon"] == 2.0
    assert [r["label"] for r in data["releases"]] == ["table A", "table B"]
    assert data["spent"]["epsilon"] == pytest.approx(1.5)
    again = PrivacyAccountant.load(log)
    assert again.spent() == acc.spent()
    again.spend(0.5, label="table C")
    assert len(json.loads(log.read_text())["releases"]) == 3
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(BudgetExceededError):
        again.spend(0.1)


def test_bad_input(tmp_path):
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        PrivacyAccountant(epsilon=0)
    acc = PrivacyAccountant(epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="partition"):
        acc.spend(0.1, partition="state")
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        acc.spend(-0.1)
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(DataError, match="not a cellsafe privacy budget log"):
        PrivacyAccountant.load(bad)
    with pytest.raises(DataError, match="no privacy budget log"):
        PrivacyAccountant.load(tmp_path / "missing.json")

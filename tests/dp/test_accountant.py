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
    # 002 section 7.7.3: the same three analyses on disjoint states -> max = 1 (records added or removed)
    acc = PrivacyAccountant(epsilon=1.0, relation="add-remove")
    for state, e in (("A", 1.0), ("B", 0.5), ("C", 0.5)):
        acc.spend(e, label="analysis", partition="state", part=state)
    assert acc.budget().epsilon_spent == pytest.approx(1.0)
    # a second release on state B fits (B reaches 1.0), one more on A does not
    acc.spend(0.5, partition="state", part="B")
    with pytest.raises(BudgetExceededError, match="beyond the budget"):
        acc.spend(0.1, partition="state", part="A")


def test_mixed_composition():
    acc = PrivacyAccountant(epsilon=3.0, delta=1e-5, relation="add-remove")
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
    acc.spend(1.0, label="table B", partition="sex", part="F", public_parts=True)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines[0]["budget"]["epsilon"] == 2.0 and lines[0]["relation"] == "replace-one"
    assert [r["label"] for r in lines[1:]] == ["table A", "table B"]
    assert acc.to_dict()["spent"]["epsilon"] == pytest.approx(1.5)
    again = PrivacyAccountant.load(log)
    assert again.spent() == acc.spent()
    again.spend(0.5, label="table C")
    assert len(log.read_text().splitlines()) == 4
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
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
    with pytest.raises(DataError, match="format None"):
        PrivacyAccountant.load(bad)
    with pytest.raises(DataError, match="no privacy budget log"):
        PrivacyAccountant.load(tmp_path / "missing.json")


# ---------------------------------------------------------------------- one neighbour relation per ledger
def test_the_ledger_refuses_a_loss_stated_under_another_relation():
    from cellsafe.dp import PrivacyLoss

    acc = PrivacyAccountant(epsilon=5.0, relation="replace-one")
    with pytest.raises(InvalidArgumentError, match="one ledger holds one relation"):
        acc.spend(PrivacyLoss.pure(1.0, "add-remove"))
    acc.spend(PrivacyLoss.pure(2.0, "replace-one"), label="fits")
    assert acc.releases[0].relation == "replace-one"
    with pytest.raises(InvalidArgumentError, match="neighbour relation"):
        PrivacyAccountant(epsilon=1.0, relation="one record moves")


def test_parts_under_replace_one_compose_in_parallel_only_when_their_sizes_are_public():
    # a record that moves from N to S changes both part releases: in full, unless no record may change part
    acc = PrivacyAccountant(epsilon=1.0)
    acc.spend(0.5, partition="region", part="N")
    acc.spend(0.5, partition="region", part="S")
    assert acc.spent()[0] == pytest.approx(1.0)
    assert [r.composition for r in acc.releases] == ["sequential", "sequential"]
    with pytest.raises(BudgetExceededError):
        acc.spend(0.1, partition="region", part="W")
    public = PrivacyAccountant(epsilon=1.0)
    for part in "NSW":
        public.spend(1.0, partition="region", part=part, public_parts=True)
    assert public.spent()[0] == pytest.approx(1.0)
    assert {r.composition for r in public.releases} == {"parallel"}


# ---------------------------------------------------------------------- zCDP accounting (issue 24 item 2)
def test_zcdp_ledger_composes_rho_of_discrete_gaussian_releases():
    from cellsafe.dp import cdp_epsilon, cdp_rho
    from cellsafe.mechanisms import DiscreteGaussianNoise

    acc = PrivacyAccountant(epsilon=1.0, delta=1e-9, accounting="zcdp", relation="add-remove")
    mech = DiscreteGaussianNoise(sigma=20.0)
    loss = mech.privacy_loss("add-remove")
    assert loss.rho == pytest.approx(1 / 800)
    k = 0
    while acc.can_spend(loss):
        acc.spend(loss, label=f"table {k}", mechanism="discrete-gaussian")
        k += 1
    assert k == int(cdp_rho(1.0, 1e-9) * 800)  # 11 releases of 1/800 within rho 0.014973
    summary = acc.budget()
    assert summary.rho_spent == pytest.approx(k / 800, rel=1e-12)
    assert summary.epsilon_spent == pytest.approx(cdp_epsilon(k / 800, 1e-9), rel=1e-12)
    assert summary.epsilon_spent <= 1.0


def test_zcdp_ledger_refuses_unsound_mixing():
    from cellsafe.dp import PrivacyLoss

    acc = PrivacyAccountant(epsilon=2.0, delta=1e-6, accounting="zcdp")
    with pytest.raises(InvalidArgumentError, match="unsound"):
        acc.spend(0.5, delta=1e-7)  # (epsilon, delta)-DP has no rho
    acc.spend(PrivacyLoss.pure(0.1, "replace-one"))  # pure epsilon is epsilon^2/2-zCDP
    assert acc.spent_rho() == pytest.approx(0.005)
    approx = PrivacyAccountant(epsilon=2.0, delta=1e-6)
    with pytest.raises(InvalidArgumentError, match="needs its delta"):
        approx.spend(PrivacyLoss.zcdp(0.01, "replace-one"))
    approx.spend(PrivacyLoss.zcdp(0.01, "replace-one", delta=1e-7))
    assert approx.spent()[1] == pytest.approx(1e-7)
    with pytest.raises(InvalidArgumentError, match="positive delta"):
        PrivacyAccountant(epsilon=1.0, accounting="zcdp")

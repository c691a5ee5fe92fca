"""The budget ledger on disk, attacked as an operator with write access would (issue 26 item 1).

Each attack edits the files with plain file operations (never through the accountant) and checks
that the next release is refused with the line at fault and that nothing is charged to the
edited log.
"""

from __future__ import annotations

import json
import multiprocessing as mp

import pytest

from cellsafe.dp import BudgetExceededError, PrivacyAccountant
from cellsafe.dp import _ledger
from cellsafe.exceptions import DataError, InvalidArgumentError


def _log(tmp_path, *spends, **kw):
    log = tmp_path / "budget.jsonl"
    acc = PrivacyAccountant.create(log, 1.0, **kw)
    for e in spends:
        acc.spend(e, label=f"release {e}", mechanism="geometric")
    return log


def _lines(log):
    return [json.loads(x) for x in log.read_text().splitlines()]


def _write(log, lines):
    log.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))


def _rechain(lines):
    """What an operator who knows the format does: recompute every hash after an edit."""
    lines[0]["sha256"] = _ledger.header_hash(lines[0])
    prev = lines[0]["sha256"]
    for n, e in enumerate(lines[1:], start=1):
        e["entry"] = n
        e["sha256"] = prev = _ledger.entry_hash(prev, e)
    return lines


def _refused_and_unchanged(log, match):
    before = log.read_bytes()
    with pytest.raises(DataError, match=match):
        PrivacyAccountant.load(log).spend(0.1, label="after the attack")
    assert log.read_bytes() == before  # nothing charged to the edited log


# ---------------------------------------------------------------------- edits the chain catches
@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda ls: ls[1].update(epsilon=-10), "line 2: epsilon must be a finite non-negative"),
        (lambda ls: ls[1].update(epsilon="0.1"), "line 2: epsilon must be a number"),
        (lambda ls: ls[1].update(epsilon=0.01), "line 2 .entry 1, 'release 0.1'. does not match the hash chain"),
        (lambda ls: ls.pop(1), "line 2 is entry 2, not 1"),
        (lambda ls: ls.insert(1, ls.pop(2)), "line 2 is entry 2, not 1"),
        (lambda ls: ls[0]["budget"].update(epsilon=100.0), "line 1 .the budget and relation. does not match"),
        (lambda ls: ls[0]["budget"].update(epsilon=0), "line 1: the epsilon budget must be a finite positive"),
        (lambda ls: ls[0].update(relation="add-remove"), "line 1 .the budget and relation. does not match"),
        (lambda ls: ls[2].update(mechanism="national"), "line 3 names an unknown mechanism 'national'"),
        (lambda ls: ls[2].update(extra=1), r"line 3 has unknown field\(s\) \['extra'\]"),
        (lambda ls: ls[2].update(partition="region"), "line 3: a part needs its partition"),
        (lambda ls: ls[2].update(relation="add-remove"), "line 3 is stated under 'add-remove'"),
        (lambda ls: ls[0].update(format="cellsafe-privacy-budget/9"), "line 1: format 'cellsafe-privacy-budget/9'"),
        (lambda ls: ls[0].update(format="cellsafe-privacy-budget/2"), "line 1 says format .*downgrade"),
    ],
)
def test_an_edited_log_is_refused_with_the_line_at_fault(tmp_path, edit, message):
    log = _log(tmp_path, 0.1, 0.2)
    lines = _lines(log)
    edit(lines)
    _write(log, lines)
    _refused_and_unchanged(log, message)


@pytest.mark.parametrize(
    "edit",
    [
        lambda ls: ls[2].update(epsilon=0.01),  # the second release said to cost almost nothing
        lambda ls: ls.insert(1, ls.pop(2)),  # the releases reordered
    ],
    ids=["edited", "reordered"],
)
def test_an_edit_with_the_chain_recomputed_is_caught_by_the_anchor(tmp_path, edit):
    log = _log(tmp_path, 0.4, 0.3)
    lines = _lines(log)
    edit(lines)
    _write(log, _rechain(lines))
    _refused_and_unchanged(log, "line 3 does not end the chain recorded in .*budget.jsonl.lock")


# ---------------------------------------------------------------------- the attacks of issue 26
def test_truncating_the_last_release_is_refused(tmp_path):
    # the attack of the issue: drop the last 0.4, then spend another 0.4 (1.2 on a budget of 1)
    log = _log(tmp_path, 0.4, 0.4)
    lines = _lines(log)
    _write(log, lines[:-1])  # the rest still chains: only the anchor shows the cut
    _refused_and_unchanged(log, "was truncated: it has 1 entries, its anchor .* records 2.*line 3 onwards")
    assert len(_lines(log)) == 2


def test_removing_the_anchor_with_the_last_release_is_refused(tmp_path):
    log = _log(tmp_path, 0.4, 0.4)
    _write(log, _lines(log)[:-1])
    _ledger.lock_path(log).unlink()
    _refused_and_unchanged(log, "has 1 entries but no anchor")


@pytest.mark.parametrize("old", ["cellsafe-privacy-budget/2", "cellsafe-privacy-budget/1"])
def test_a_format_downgrade_is_refused(tmp_path, old):
    # the attack of the issue: rewrite the log in the old format (no chain) with a release's epsilon lowered
    log = _log(tmp_path, 0.4, 0.4)
    downgraded = {
        "format": old,
        "budget": {"epsilon": 1.0, "delta": 0.0},
        "releases": [{"label": "release 0.4", "epsilon": 0.4}, {"label": "release 0.4", "epsilon": 0.05}],
    }
    log.write_text(json.dumps(downgraded, indent=2))
    _refused_and_unchanged(log, "older format .*this version reads 'cellsafe-privacy-budget/3' only")
    with pytest.raises(DataError, match="already upgraded, and an older format in its place is a downgrade"):
        PrivacyAccountant.upgrade(log, "replace-one")


def test_older_readers_cannot_read_a_format_3_log(tmp_path):
    # format-2 readers parse the whole file as one JSON document with 'budget' and 'releases'
    log = _log(tmp_path, 0.1)
    with pytest.raises(ValueError):
        json.loads(log.read_text())
    empty = tmp_path / "empty.jsonl"
    PrivacyAccountant.create(empty, 1.0)
    assert "releases" not in json.loads(empty.read_text())


def test_a_log_replaced_by_another_ledger_is_refused(tmp_path):
    log = _log(tmp_path, 0.5, 0.4)
    other = tmp_path / "other.jsonl"
    PrivacyAccountant.create(other, 1.0)
    log.write_bytes(other.read_bytes())  # a fresh ledger copied over the spent one
    _refused_and_unchanged(log, "is ledger .*, but .* anchors ledger .*: the log was replaced")


def test_a_removed_log_is_never_recreated_in_its_place(tmp_path):
    log = _log(tmp_path, 0.5)
    acc = PrivacyAccountant.load(log)
    log.unlink()
    with pytest.raises(DataError, match="the log was removed or moved"):
        acc.spend(0.1)
    assert not log.exists()
    with pytest.raises(DataError, match="the log was removed"):
        PrivacyAccountant.create(log, 1.0)


# ---------------------------------------------------------------------- upgrade, re-anchor, check both ways
def test_a_format_2_log_is_upgraded_once(tmp_path):
    log = tmp_path / "old.json"
    import hashlib

    def canon(x):
        return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    budget = {"epsilon": 1.0, "delta": 0.0}
    prev = hashlib.sha256(canon({"budget": budget})).hexdigest()
    releases = []
    for r in ({"label": "a", "epsilon": 0.3, "delta": 0.0, "partition": "region", "part": "N", "mechanism": None,
               "time": ""},
              {"label": "b", "epsilon": 0.3, "delta": 0.0, "partition": "region", "part": "S", "mechanism": None,
               "time": ""}):
        prev = hashlib.sha256(prev.encode() + canon(r)).hexdigest()
        releases.append({**r, "sha256": prev})
    log.write_text(json.dumps({"format": "cellsafe-privacy-budget/2", "budget": budget, "releases": releases}))
    with pytest.raises(DataError, match="--upgrade"):
        PrivacyAccountant.load(log)
    acc = PrivacyAccountant.upgrade(log, "replace-one")
    # under replace-one the parts of the old log are charged in full: a record could move between them
    assert acc.spent()[0] == pytest.approx(0.6)
    assert (tmp_path / "old.json.format2").exists()
    assert PrivacyAccountant.load(log).spent()[0] == pytest.approx(0.6)
    with pytest.raises(DataError, match="already"):
        PrivacyAccountant.upgrade(log, "replace-one")


def test_anchors_are_checked_both_ways(tmp_path):
    log = _log(tmp_path, 0.2)
    acc = PrivacyAccountant.load(log)
    with acc.reserve(0.3, label="second", mechanism="geometric") as rel:
        anchor = rel.anchor
    assert anchor == {"ledger": acc.ledger, "release": 2, "head": acc.head}
    assert acc.check_anchor(anchor).label == "second"
    with pytest.raises(DataError, match="not to this ledger"):
        acc.check_anchor({**anchor, "ledger": "0" * 32})
    with pytest.raises(DataError, match="truncated or replaced"):
        acc.check_anchor({**anchor, "release": 5})
    with pytest.raises(DataError, match="chain differs"):
        acc.check_anchor({**anchor, "head": "0" * 64})
    # a lost lock file is restored from the latest release's anchor, and only from it
    _ledger.lock_path(log).unlink()
    with pytest.raises(DataError, match="no anchor"):
        PrivacyAccountant.load(log)
    with pytest.raises(DataError, match="anchor from the latest release"):
        PrivacyAccountant.anchor_from(log, {"ledger": acc.ledger, "release": 1, "head": acc._hashes[1]})
    assert PrivacyAccountant.anchor_from(log, anchor).spent()[0] == pytest.approx(0.5)


def test_log_round_trip_keeps_the_chain(tmp_path):
    log = _log(tmp_path, 0.1, 0.2)
    acc = PrivacyAccountant.load(log)
    acc.spend(0.3, label="third", partition="region", part="N", public_parts=True)
    lines = _lines(log)
    assert lines[0]["format"] == "cellsafe-privacy-budget/3"
    assert len({x["sha256"] for x in lines}) == 4
    assert lines[3]["composition"] == "parallel"
    assert PrivacyAccountant.load(log).spent()[0] == pytest.approx(0.6)
    assert _ledger.read_anchor(log) == {"format": "cellsafe-privacy-budget/3", "ledger": lines[0]["ledger"],
                                        "entries": 3, "head": lines[3]["sha256"]}


def test_an_unknown_mechanism_is_refused_when_spending():
    with pytest.raises(InvalidArgumentError, match="known mechanism"):
        PrivacyAccountant(1.0).spend(0.1, mechanism="national")


def test_a_failed_release_is_withdrawn_by_appending(tmp_path):
    log = _log(tmp_path, 0.5)
    acc = PrivacyAccountant.load(log)
    with pytest.raises(RuntimeError):
        with acc.reserve(0.4, label="fails", mechanism="geometric"):
            assert len(_lines(log)) == 3  # reserved and anchored on disk while it runs
            raise RuntimeError("the release failed")
    lines = _lines(log)
    assert [x["kind"] for x in lines[1:]] == ["release", "release", "withdrawal"]
    assert lines[3]["withdraws"] == 2
    assert acc.spent()[0] == pytest.approx(0.5)
    with acc.reserve(0.5, label="fits"):
        pass
    with pytest.raises(BudgetExceededError):
        with acc.reserve(0.1, label="too much"):
            raise AssertionError("the body of a refused release never runs")
    assert PrivacyAccountant.load(log).spent()[0] == pytest.approx(1.0)


def test_a_stale_accountant_sees_what_others_spent(tmp_path):
    log = _log(tmp_path)
    a = PrivacyAccountant.load(log)
    b = PrivacyAccountant.load(log)
    a.spend(0.7, label="first")
    with pytest.raises(BudgetExceededError):
        b.spend(0.7, label="second")  # b re-reads the log under the lock
    assert len(_lines(log)) == 2


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
    assert len(_lines(log)) == 11
    acc = PrivacyAccountant.load(log)
    assert acc.spent()[0] == pytest.approx(1.0)
    assert _ledger.read_anchor(log)["entries"] == 10


# ---------------------------------------------------------------------- a zCDP ledger on disk (issue 24 item 2)
def test_a_zcdp_ledger_on_disk_composes_rho_and_states_the_authors_epsilon(tmp_path, capsys):
    from cellsafe.cli.main import main
    from cellsafe.dp import PrivacyLoss
    from cellsafe.mechanisms import DiscreteGaussianNoise

    log = tmp_path / "z.jsonl"
    PrivacyAccountant.create(log, 2.0, 1e-9, relation="add-remove", accounting="zcdp")
    one = DiscreteGaussianNoise(sigma=10.0).privacy_loss("add-remove")  # rho 1/200
    for k in range(10):  # each release through a fresh load, as ten runs would
        PrivacyAccountant.load(log).spend(one, label=f"table {k}", mechanism="discrete-gaussian")
    acc = PrivacyAccountant.load(log)
    summary = acc.budget()
    assert summary.rho_spent == pytest.approx(10 / 200, rel=1e-12)
    # rho 0.05 at delta 1e-9 is epsilon 1.8816602910618363 by the authors' cdp2adp.py (tests/reference/zcdp)
    assert summary.epsilon_spent == pytest.approx(1.8816602910618363, rel=1e-9)
    assert summary.delta_spent == 1e-9
    capsys.readouterr()
    assert main(["budget", str(log), "--json"]) == 0
    spent = json.loads(capsys.readouterr().out)["spent"]
    assert spent["rho"] == pytest.approx(0.05, rel=1e-12) and spent["epsilon"] == pytest.approx(1.8816602910618363)
    # mixing that would be unsound is refused by the loaded ledger too, and nothing is written
    before = log.read_bytes()
    with pytest.raises(InvalidArgumentError, match="unsound"):
        acc.spend(PrivacyLoss(0.1, 1e-10, relation="add-remove"), label="approximate DP")
    with pytest.raises(InvalidArgumentError, match="one ledger holds one relation"):
        acc.spend(DiscreteGaussianNoise(sigma=10.0).privacy_loss("replace-one"))
    assert log.read_bytes() == before


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda ls: ls[0].update(accounting="approximate"), "line 1: a rho budget belongs to zCDP accounting only"),
        (lambda ls: (ls[0].update(accounting="approximate"), ls[0]["budget"].pop("rho")),
         "line 1 .the budget and relation. does not match"),
        (lambda ls: ls[0]["budget"].update(rho=1.0), "line 1 .the budget and relation. does not match"),
        (lambda ls: ls[1].update(rho=0.0001), "line 2 .entry 1, 'table 0'. does not match the hash chain"),
    ],
)
def test_an_edited_zcdp_ledger_is_refused_with_the_line_at_fault(tmp_path, edit, message):
    from cellsafe.mechanisms import DiscreteGaussianNoise

    log = tmp_path / "z.jsonl"
    acc = PrivacyAccountant.create(log, 1.0, 1e-9, relation="add-remove", accounting="zcdp")
    for k in range(2):
        acc.spend(DiscreteGaussianNoise(sigma=20.0).privacy_loss("add-remove"), label=f"table {k}",
                  mechanism="discrete-gaussian")
    lines = _lines(log)
    edit(lines)
    _write(log, lines)
    _refused_and_unchanged(log, message)

"""Linked tables and earlier releases (issue: published tables that cannot be undone, item 5).

The constructed example: records with region (x, y, z), activity (u, v, w) and size (p, q).  An
office first published counts by region x size (``freq<=2``), then publishes counts and turnover by
region x activity.  Protected on its own, region x size withholds the totals of regions y and z to
protect (z, p) = 2; protected on their own, the region x activity tables publish those totals.  A
reader of both takes z's total (12) from the new table and (z, q) = 10 from the old one: (z, p) = 2
exactly.  Protected as one system with the earlier release's cells fixed, the new tables withhold
what the old one withheld, and the reader learns nothing within the rule.
The same happens with two new count tables (region x activity and region x size) protected one by one.

The attacker here is written independently of the library: scipy's ``linprog`` over the inner cells
(the crossing of all three variables), with one equation per cell any release shows.
"""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from cellsafe.exceptions import DataError
from cellsafe.mechanisms import CellSuppression, EarlierRelease, LinkedTable, protect_linked, read_earlier_release
from cellsafe.metrics import audit_linked
from cellsafe.table import CountTable

NAMES = ("region", "activity", "size")
CATEGORIES = {"region": ["x", "y", "z"], "activity": ["u", "v", "w"], "size": ["p", "q"]}
COUNTS = [[[12, 3], [0, 2], [6, 0]], [[2, 0], [3, 0], [5, 0]], [[0, 9], [0, 1], [2, 0]]]
RULES = ["freq<=2"]


def _records():
    rng = np.random.default_rng(5)
    rows = []
    for (i, a), (j, b), (k, c) in itertools.product(*(enumerate(CATEGORIES[n]) for n in NAMES)):
        for _ in range(COUNTS[i][j][k]):
            rows.append({"region": a, "activity": b, "size": c, "turnover": float(rng.integers(10, 1000))})
    return pd.DataFrame(rows)


def _earlier(records):
    """The release published first: counts by region x size, protected on its own."""
    table = CountTable.from_microdata(records, list(NAMES))
    [old] = CellSuppression("region*size", rules=RULES).sample(table)
    frame = old.to_frame()[list(NAMES) + ["count"]].copy()
    frame["count"] = old.released
    return old, EarlierRelease(frame, "region*size", name="counts by size")


def _attack(frames, records, measure):
    """Each withheld cell's interval from every shown cell of ``frames`` (LPs over the inner cells, >= 0)."""
    inner = list(itertools.product(*(CATEGORIES[n] for n in NAMES)))
    truth = records.groupby(list(NAMES))[measure].sum() if measure != "count" else records.groupby(list(NAMES)).size()
    y = np.array([float(truth.get(cell, 0.0)) for cell in inner])

    def column(row):
        return np.array([all(row[n] in ("Total", cell[i]) for i, n in enumerate(NAMES)) for cell in inner], dtype=float)

    rows, shown, withheld = [], [], []
    for frame in frames:
        for _, row in frame.iterrows():
            (shown if not np.isnan(row[measure]) else withheld).append((column(row), row))
    A = np.array([c for c, _ in shown])
    b = np.array([float(r[measure]) for _, r in shown])
    for c, row in withheld:
        lo = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
        hi = linprog(-c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
        assert lo.status == 0 and hi.status == 0
        rows.append({**{n: row[n] for n in NAMES}, "value": float(c @ y), "lower": lo.fun, "upper": -hi.fun})
    return pd.DataFrame(rows).drop_duplicates(subset=list(NAMES))


def _frame(rel, measure):
    out = rel.publication.cells()
    out[measure] = rel.released
    return out


TABLES = [LinkedTable("counts", "region*activity"), LinkedTable("turnover", "region*activity", value="turnover")]


def _linked_and_apart(records):
    """The earlier release, the new tables protected with it as one system, and the new tables protected one by one."""
    old, earlier = _earlier(records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linked = protect_linked(CellSuppression("region", rules=RULES), records, TABLES, variables=list(NAMES),
                                earlier=[earlier])
        table = CountTable.from_microdata(records, list(NAMES))
        [alone] = CellSuppression("region*activity", rules=RULES).sample(table)
        turnover = CellSuppression("region*activity", rules=RULES).suppress_magnitude(
            records, variables=list(NAMES), value="turnover")
    return old, earlier, linked, alone, turnover


def test_linked_with_an_earlier_release_passes_and_one_by_one_fails():
    records = _records()
    old, earlier, linked, alone, turnover = _linked_and_apart(records)
    audit = audit_linked(linked)
    assert audit.passed, audit.problems()
    # what the earlier release withheld stays withheld: the totals of y and z
    counts = linked.tables["counts"].to_frame()
    margins = counts[(counts.activity == "Total") & (counts["size"] == "Total")].set_index("region")["suppression"]
    assert margins["y"] != "" and margins["z"] != ""
    # one pattern for counts and turnover
    assert np.array_equal(np.isnan(linked.tables["counts"].released), np.isnan(linked.tables["turnover"].released))
    # the independent attacker over old and new releases: no withheld count exact, no primary within the rule
    att = _attack([_frame(old, "count"), _frame(linked.tables["counts"], "count")], records, "count")
    assert (att.upper - att.lower > 0.5).all()
    primary = att.value.between(1, 2)
    assert (att.upper[primary] >= 3 - 1e-6).all()
    att = _attack([_frame(linked.tables["turnover"], "turnover")], records, "turnover")
    assert (att.upper - att.lower > 1e-6).all()

    # each table protected on its own: the reader of all of them recovers (z, p) = 2
    one_by_one = audit_linked(linked, {"counts": alone, "turnover": turnover})
    assert not one_by_one.passed
    assert any(p.startswith("count:") for p in one_by_one.problems())
    att = _attack([_frame(old, "count"), _frame(alone, "count")], records, "count").set_index(list(NAMES))
    zp = att.loc[("z", "Total", "p")]
    assert zp.value == 2 and zp.lower == pytest.approx(2) and zp.upper == pytest.approx(2)


def test_counts_and_sums_of_different_formulas_are_one_system_per_measure():
    records = _records()
    tables = [LinkedTable("by activity", "region*activity"), LinkedTable("by size", "region*size"),
              LinkedTable("turnover", "activity*size", value="turnover")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linked = protect_linked(CellSuppression("region", rules=RULES), records, tables, variables=list(NAMES))
    assert set(linked.systems) == {"count", "turnover"}
    assert audit_linked(linked).passed
    # a cell both count tables publish has one status: the region totals
    a, b = (linked.tables[n].to_frame() for n in ("by activity", "by size"))
    ma = a[(a.activity == "Total") & (a["size"] == "Total")].set_index("region").suppression
    mb = b[(b.activity == "Total") & (b["size"] == "Total")].set_index("region").suppression
    assert (ma == mb).all()
    # protected one by one, region x size withholds the totals region x activity shows: (z, p) = 2 is recovered
    table = CountTable.from_microdata(records, list(NAMES))
    alone = {n: CellSuppression(f, rules=RULES).sample(table)[0] for n, f in (("by activity", "region*activity"),
                                                                               ("by size", "region*size"))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        turnover = CellSuppression("activity*size", rules=RULES).suppress_magnitude(records, variables=list(NAMES),
                                                                                   value="turnover")
    assert not audit_linked(linked, {**alone, "turnover": turnover}).passed
    att = _attack([_frame(r, "count") for r in alone.values()], records, "count").set_index(list(NAMES))
    assert att.loc[("z", "Total", "p")].upper == pytest.approx(2)


def test_an_earlier_release_of_other_records_or_another_listing_is_refused():
    records = _records()
    _, earlier = _earlier(records)
    frame = earlier.frame.copy()
    frame.loc[frame["count"].notna().idxmax(), "count"] += 1
    with pytest.raises(DataError, match="same records"):
        protect_linked(CellSuppression("region", rules=RULES), records, TABLES[:1], variables=list(NAMES),
                       earlier=[EarlierRelease(frame, "region*size")])
    with pytest.raises(Exception, match="listing of the earlier one"):
        protect_linked(CellSuppression("region", rules=RULES, list="nonzero"), records, TABLES[:1],
                       variables=list(NAMES), earlier=[earlier])


def test_read_earlier_release_checks_the_manifest(tmp_path):
    records = _records()
    _, earlier = _earlier(records)
    path = tmp_path / "old.csv"
    earlier.frame.to_csv(path, index=False)
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest = {"mechanism": {"class": "CellSuppression", "parameters": {"publication": "region*size", "list": "frame"}},
                "outputs": [{"file": "old.csv", "sha256": digest}]}
    (tmp_path / "old.csv.manifest.json").write_text(json.dumps(manifest))
    got = read_earlier_release(path)
    assert got.formula == "region*size" and got.list == "frame" and len(got.frame) == len(earlier.frame)
    path.write_text(path.read_text().replace("Total", "Total", 1) + "\n")
    with pytest.raises(DataError, match="sha256"):
        read_earlier_release(path)


def _as_earlier(rel, measure, formula, name):
    """A release as its file would be read back (EarlierRelease: the cells, NaN where withheld)."""
    frame = rel.publication.cells()[list(NAMES)].copy()
    frame[measure] = rel.released
    return EarlierRelease(frame, formula, value=None if measure == "count" else measure, name=name)


def test_the_files_read_back_pass_or_fail_the_joint_audit_as_the_linked_release_does():
    # audit_releases sees only the files, the records and the rules: the linked release passes, the tables protected
    # one by one fail (the reader of all of them recovers (z, p) = 2), as audit_linked says
    from cellsafe.metrics import audit_releases

    records = _records()
    _, earlier, linked, alone, turnover = _linked_and_apart(records)
    files = [earlier, _as_earlier(linked.tables["counts"], "count", "region*activity", "counts"),
             _as_earlier(linked.tables["turnover"], "turnover", "region*activity", "turnover")]
    joint = audit_releases(files, records, rules=RULES, variables=list(NAMES))
    assert joint.passed, joint.problems()
    expected = audit_linked(linked)
    for m in ("count", "turnover"):
        got, want = joint.audits[m].to_frame(), expected.audits[m].to_frame()
        assert len(got) == len(want)
        np.testing.assert_allclose(np.sort(got["lower"]), np.sort(want["lower"]))
        np.testing.assert_allclose(np.sort(got["upper"]), np.sort(want["upper"]))
    apart = [earlier, _as_earlier(alone, "count", "region*activity", "counts"),
             _as_earlier(turnover, "turnover", "region*activity", "turnover")]
    one_by_one = audit_releases(apart, records, rules=RULES, variables=list(NAMES))
    assert not one_by_one.passed
    cells = one_by_one.audits["count"].to_frame().set_index(list(NAMES))
    zp = cells.loc[("z", "Total", "p")]
    assert zp["lower"] == pytest.approx(2) and zp["upper"] == pytest.approx(2)  # the attacker's (z, p) = 2 exactly
    # a file whose shown value is not the records' is refused, not audited
    bad = files[1].frame.copy()
    bad.loc[bad["count"].notna().idxmax(), "count"] += 1
    with pytest.raises(DataError, match="same records"):
        audit_releases([earlier, EarlierRelease(bad, "region*activity", name="counts")], records, rules=RULES,
                       variables=list(NAMES))

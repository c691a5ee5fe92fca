"""A worked three-level geography (municipality < district < region < total): suppression passes the audit,
small count rounding is additive through every level, the cell key method's release restores to additive values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe import CountTable, Hierarchy, Variable
from cellsafe.exceptions import DataError
from cellsafe.fitting import expected_inner, restore_additivity
from cellsafe.metrics import audit_suppression
from cellsafe.published import Publication

GEO = pd.DataFrame({
    "region": ["R1"] * 4 + ["R2"] * 3,
    "district": ["D11", "D11", "D12", "D12", "D21", "D21", "D22"],
    "municipality": ["m1", "m2", "m3", "m4", "m5", "m6", "m7"],
})
COUNTS = np.array([[5, 1, 7], [8, 6, 2], [1, 9, 4], [12, 3, 10], [2, 2, 6], [7, 5, 0], [9, 11, 3]])


def _table() -> tuple[CountTable, Hierarchy]:
    vs = [Variable("geo", GEO["municipality"]), Variable("age", ["young", "middle", "old"])]
    return CountTable.from_dense(COUNTS, vs), Hierarchy.from_levels(GEO, ["region", "district", "municipality"])


def test_published_cells_carry_aggregate_codes():
    table, h = _table()
    pub = Publication.from_formula(table, "region*age + district + geo", hierarchies={"geo": h})
    z = pub.frame(pub.aggregate(table)).set_index(["geo", "age"])["count"]
    assert z["R1", "Total"] == COUNTS[:4].sum() and z["R2", "old"] == COUNTS[4:, 2].sum()
    assert z["D12", "Total"] == COUNTS[2:4].sum() and z["m7", "Total"] == COUNTS[6].sum()
    assert z["Total", "Total"] == COUNTS.sum()
    assert pub.n_published == 1 + 2 + 3 + 4 + 7 + 6


def test_suppression_passes_audit_through_all_levels():
    table, h = _table()
    pub = Publication.from_formula(table, "region*age + district*age + geo*age", hierarchies={"geo": h})
    [res] = cellsafe.mechanisms.CellSuppression(pub, rules=["freq<=2"]).sample(table)
    assert (res.suppression == "primary").sum() == 5  # the inner 1, 2, 1, 2, 2 (the 0 is not suppressed)
    audit = audit_suppression(res)
    assert audit.passed and np.all(audit.upper - audit.lower >= 1)


def test_rounding_additive_through_every_level():
    table, h = _table()
    pub = Publication.from_formula(table, "region*age + district*age + geo", hierarchies={"geo": h})
    [res] = cellsafe.SmallCountRounding(pub, base=3).sample(table, rng=4)
    pub = res.publication  # the frame: every combination of categories
    assert_array_equal(res.released, pub.aggregate(res.inner_released))
    assert not np.any((res.released > 0) & (res.released < 3))
    assert pub.additivity_error(res.released) < 1e-9


def test_cell_key_method_then_restoration_and_expected_inner():
    table, h = _table()
    pub = Publication.from_formula(table, "region*age + district*age", hierarchies={"geo": h}, zeros=True)
    [res] = cellsafe.CellKeyMethod(cellsafe.PTable.generate(D=3, V=1.5), pub).sample(table, rng=2)
    restored = restore_additivity(pub.X, res.released)
    assert pub.additivity_error(restored.fitted) < 1e-8
    fit = expected_inner(pub, restored.fitted)
    assert fit.converged and fit.max_margin_error < 1e-6


# ---- 001's risk and utility on a hierarchical publication -------------------------------------------------------
# Independent reference: the same publication written flat, with region and district as columns of the records (a
# functional dependency of the municipality).  The two publications have the same published cells under other
# labels, so restoration, IPF and the risk must give the same numbers.
DISCLOSIVE = COUNTS.copy()
DISCLOSIVE[6] = [0, 11, 0]  # m7: every record in one age group (an exact disclosure of age given the municipality)


def _flat_and_hierarchical():
    vs = [Variable("geo", GEO["municipality"]), Variable("age", ["young", "middle", "old"])]
    hier_table = CountTable.from_dense(DISCLOSIVE, vs)
    h = Hierarchy.from_levels(GEO, ["region", "district", "municipality"])
    hier = Publication.from_formula(hier_table, "region*age + district*age + geo", hierarchies={"geo": h})
    rows = [
        {**GEO.iloc[i].to_dict(), "age": a, "n": int(DISCLOSIVE[i, j])}
        for i in range(len(GEO)) for j, a in enumerate(["young", "middle", "old"])
    ]
    flat_table = CountTable.from_frame(pd.DataFrame(rows), ["region", "district", "municipality", "age"], count="n")
    flat = Publication.from_formula(flat_table, "region*age + district*age + municipality")
    return hier_table, hier, flat_table, flat


def _geo_code(frame: pd.DataFrame) -> pd.Series:
    """The hierarchical label of a flat published cell: its finest geography that is not 'Total'."""
    code = frame["region"].copy()
    for level in ("district", "municipality"):
        code = code.where(frame[level] == "Total", frame[level])
    return code


def test_risk_and_utility_of_a_hierarchical_publication_equal_the_flat_ones():
    from cellsafe.metrics import compare_published

    hier_table, hier, flat_table, flat = _flat_and_hierarchical()
    assert hier.n_published == flat.n_published == 33  # 35 less the two empty district:age cells of D22
    # a non-additive release: +1 on every cell whose count is 1 mod 3, -1 where 2 mod 3 (deterministic)
    original = hier.aggregate(hier_table).astype(float)
    released = original + np.where(original % 3 == 1, 1.0, np.where(original % 3 == 2, -1.0, 0.0))
    fh = hier.frame(released)
    ff = flat.frame(flat.aggregate(flat_table).astype(float))
    ff["geo"] = _geo_code(ff)
    ff = ff.merge(fh, on=["geo", "age"], suffixes=("_orig", ""), validate="one_to_one")
    assert len(ff) == 33
    a = compare_published(hier_table, released, "age", ["geo"], publication=hier)
    b = compare_published(flat_table, flat.align(ff), "age", ["municipality"], publication=flat)
    assert not a.additive and not b.additive
    np.testing.assert_allclose(a.hellinger_published, b.hellinger_published, rtol=1e-12)
    np.testing.assert_allclose(a.hellinger_restored, b.hellinger_restored, rtol=1e-9)
    assert (a.risk.a, a.risk.b, a.risk.c) == (b.risk.a, b.risk.b, b.risk.c)
    assert a.risk.a == 1  # m7 in the original
    # the expected inner tables agree cell by cell
    def cells(fitted, geo):
        f = fitted.to_frame()
        return {(str(g), str(x)): float(c) for g, x, c in zip(f[geo], f["age"], f["count"])}

    ea, eb = cells(a.expected_inner, "geo"), cells(b.expected_inner, "municipality")
    assert ea.keys() == eb.keys()
    np.testing.assert_allclose([ea[k] for k in ea], [eb[k] for k in ea], rtol=1e-6, atol=1e-9)


def test_released_frame_of_a_hierarchical_publication_aligns_back():
    table, h = _table()
    pub = Publication.from_formula(table, "region*age + district*age + geo", hierarchies={"geo": h})
    [res] = cellsafe.CellKeyMethod(cellsafe.PTable.generate(D=3, V=1.5), pub).sample(table, rng=3)
    frame = res.to_frame().sample(frac=1.0, random_state=0)  # any row order
    assert_array_equal(pub.align(frame), res.released)


def test_two_hierarchies_on_one_variable_with_overlapping_groups():
    """A geography with administrative levels and a second, non-nested grouping (m5 is in both zones)."""
    table, h = _table()
    zones = Hierarchy.from_groups(
        {"coast": ["m1", "m5", "m7"], "inland": ["m2", "m3", "m4", "m5", "m6"]}, list(GEO["municipality"]), level="zone"
    )
    pub = Publication.from_formula(table, "region*age + zone*age", hierarchies={"geo": [h, zones]})
    z = pub.frame(pub.aggregate(table)).set_index(["geo", "age"])["count"]
    assert z["coast", "young"] == COUNTS[[0, 4, 6], 0].sum() and z["inland", "Total"] == COUNTS[1:6].sum()
    [rounded] = cellsafe.SmallCountRounding(pub, base=3).sample(table, rng=1)
    assert pub.additivity_error(rounded.released) < 1e-9
    [suppressed] = cellsafe.mechanisms.CellSuppression(pub, rules=["freq<=14"]).sample(table)
    assert (suppressed.suppression == "primary").sum() > 0
    assert audit_suppression(suppressed).passed


def test_align_refuses_a_value_that_is_not_a_number():
    table, h = _table()
    pub = Publication.from_formula(table, "region*age", hierarchies={"geo": h})
    frame = pub.frame(pub.aggregate(table)).astype({"count": object})
    frame.loc[1, "count"] = ""  # withheld
    assert np.isnan(pub.align(frame)[1])
    for text in ("seven", "NA"):
        frame.loc[2, "count"] = text
        with pytest.raises(DataError, match=f"row 2 of the published table has 'count' = '{text}', which is not a number"):
            pub.align(frame)


# ---------------------------------------------------------------------- a variable with a hierarchy brings its levels
def test_naming_the_variable_publishes_every_level_of_its_hierarchy():
    """tau-Argus's meaning: 'age*geo' with a hierarchy of geo is age crossed with the regions, the districts and the
    municipalities (and each of them alone); naming a level still picks that level alone."""
    table, h = _table()
    pub = Publication.from_formula(table, "age*geo", hierarchies={"geo": h}, zeros=True)
    assert {frozenset(c) for c in pub.crossings} == {
        frozenset(c) for c in [(), ("age",), ("region",), ("district",), ("geo",), ("age", "region"),
                               ("age", "district"), ("age", "geo")]
    }
    assert pub.n_published == (1 + 2 + 4 + 7) * (1 + 3)
    written = Publication.from_formula(table, "(region + district + geo)*age", hierarchies={"geo": h}, zeros=True)
    got = pub.frame(pub.aggregate(table)).set_index(["geo", "age"])["count"].sort_index()
    want = written.frame(written.aggregate(table)).set_index(["geo", "age"])["count"].sort_index()
    assert got.equals(want)
    only = Publication.from_formula(table, "region*age", hierarchies={"geo": h})
    assert {frozenset(c) for c in only.crossings} == {frozenset(c) for c in [(), ("region",), ("age",), ("region", "age")]}


def test_a_removed_level_is_not_brought_back_and_powers_expand():
    table, h = _table()
    pub = Publication.from_formula(table, "geo*age - district - district:age", hierarchies={"geo": h})
    assert not any("district" in c for c in pub.crossings)
    assert ("region", "age") in pub.crossings and ("geo", "age") in pub.crossings
    power = Publication.from_formula(table, "(geo + age)^2", hierarchies={"geo": h}, zeros=True)
    assert power.n_published == (1 + 2 + 4 + 7) * (1 + 3)


def test_an_aggregate_coded_like_the_total_label_is_refused():
    table, _ = _table()
    h = Hierarchy.from_groups({"Total": ["m1", "m2"]}, list(GEO["municipality"]), level="part")
    with pytest.raises(cellsafe.exceptions.InvalidArgumentError, match="aggregate coded 'Total'"):
        Publication.from_formula(table, "part*age", hierarchies={"geo": h})

"""A worked three-level geography (municipality < district < region < total): suppression passes the audit,
small count rounding is additive through every level, the cell key method's release restores to additive values."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe import CountTable, Hierarchy, Variable
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

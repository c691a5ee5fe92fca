"""Cell suppression against GaussSuppression (committed fixtures), the p% and (n, k) rules by hand, the audit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from cellsafe import CountTable, Hierarchy
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import CellSuppression
from cellsafe.metrics import audit_suppression
from cellsafe.published import Publication, magnitude_table

REF = Path(__file__).resolve().parents[1] / "reference" / "suppression"
#: The Gaussian elimination alone: GaussSuppression's pattern (singletonMethod "none"); the default
#: adds singleton protection and the frequency rule's intervals on top (only further cells).
GAUSS = dict(intervals=False, singletons=False)


def _compare(ours: pd.DataFrame, theirs: pd.DataFrame, keys: list[str], freq: str) -> None:
    m = ours.merge(theirs, on=keys, how="outer", indicator=True)
    assert (m["_merge"] == "both").all(), "the published cells differ from GaussSuppression's"
    assert_array_equal(m["original"].to_numpy(float), m[freq].to_numpy(float))
    assert_array_equal((m["suppression"] == "primary").to_numpy(), m["primary"].to_numpy(bool))
    assert_array_equal((m["suppression"] != "").to_numpy(), m["suppressed"].to_numpy(bool))


def test_mun_accidents_same_pattern_as_gauss_suppression():
    """SuppressSmallCounts(mun_accidents, maxN = 3, dimVar = 1:2): 13 cells suppressed, the same ones."""
    data = pd.read_csv(REF / "mun_accidents.csv")
    table = CountTable.from_frame(data, ["mun", "inj"], "freq")
    pub = Publication.from_formula(table, "mun*inj", zeros=True)
    [res] = CellSuppression(pub, rules=["freq<=3"], **GAUSS).sample(table)
    ref = pd.read_csv(REF / "mun_accidents_maxn3.csv")
    _compare(res.to_frame(details=True), ref, ["mun", "inj"], "freq")
    assert res.n_suppressed == 13
    assert audit_suppression(res, required=0.0, singletons=False).passed
    [full] = CellSuppression(pub, rules=["freq<=3"]).sample(table)
    assert np.all(np.isnan(full.released) >= np.isnan(res.released)) and audit_suppression(full).passed


def _d2() -> tuple[CountTable, Hierarchy]:
    d = pd.read_csv(REF / "d2.csv", dtype=str)
    d["f"] = d["f"].astype(int)
    g = d.groupby(["region", "main_income"], as_index=False)["f"].sum()
    table = CountTable.from_frame(g, ["region", "main_income"], "f")
    geo = d[["region", "county", "k_group"]].drop_duplicates()
    h = Hierarchy.combine(Hierarchy.from_levels(geo, ["county", "region"]), Hierarchy.from_levels(geo, ["k_group", "region"]))
    return table, h


def test_d2_formula_with_two_hierarchies_same_pattern_as_gauss_suppression():
    """formula = ~main_income * k_group + region + county - k_group, maxN = 3 (the package's example)."""
    table, h = _d2()
    pub = Publication.from_formula(table, "main_income*k_group + region + county - k_group", zeros=True, hierarchies={"region": h})
    [res] = CellSuppression(pub, rules=["freq<=3"], **GAUSS).sample(table)
    ref = pd.read_csv(REF / "d2_formula_maxn3.csv", dtype={"region": str})
    _compare(res.to_frame(details=True), ref, ["main_income", "region"], "f")
    assert res.n_suppressed == 8
    assert audit_suppression(res, required=0.0, singletons=False).passed
    [full] = CellSuppression(pub, rules=["freq<=3"]).sample(table)
    assert np.all(np.isnan(full.released) >= np.isnan(res.released)) and audit_suppression(full).passed


def test_d2_geography_levels_same_pattern_as_gauss_suppression():
    """dimVar = c('region', 'county', 'k_group'): one geography with two overlapping sets of aggregates, maxN = 2."""
    table, h = _d2()
    t1 = table.margin(["region"])
    pub = Publication.from_formula(t1, "region + county + k_group", zeros=True, hierarchies={"region": h})
    [res] = CellSuppression(pub, rules=["freq<=2"], **GAUSS).sample(t1)
    ref = pd.read_csv(REF / "d2_dimvar_maxn2.csv", dtype={"region": str})
    ours = res.to_frame(details=True)
    # GaussSuppression writes the grand total as 'Total', the geography codes in one column
    _compare(ours, ref, ["region"], "f")


# ---------------------------------------------------------------------- magnitude rules by hand
RECORDS = pd.DataFrame(
    {
        "sector": ["a", "a", "a", "b", "b", "b", "c", "d", "d", "d"],
        "firm": ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f8", "f9"],
        "turnover": [50.0, 30.0, 20.0, 80.0, 15.0, 5.0, 40.0, 30.0, 30.0, 40.0],
    }
)


def test_p_percent_rule_by_hand():
    """p = 15: a cell is sensitive when total - x1 - x2 < 0.15 x1.

    a: 100 - 50 - 30 = 20  >= 0.15 * 50 = 7.5   safe
    b: 100 - 80 - 15 = 5   <  0.15 * 80 = 12    sensitive
    c:  40 - 40 -  0 = 0   <  0.15 * 40 = 6     sensitive (a single contributor)
    d: firm f8's two records are one holding of 60: 100 - 60 - 40 = 0 < 9   sensitive
       (as separate records, x1 = 40, x2 = 30: 100 - 70 = 30 >= 6, safe)
    Total: 340 - 80 - 60 = 200 >= 12   safe
    """
    mt = magnitude_table(RECORDS, ["sector"], "turnover", "sector", contributor="firm")
    frame = mt.to_frame().set_index("sector")
    assert frame.loc["d", "turnover"] == 100.0 and frame.loc["d", "n_contributors"] == 2
    res = CellSuppression(mt.publication, rules=["p%=15"]).suppress_magnitude(mt)
    status = dict(zip(res.to_frame()["sector"], res.suppression))
    assert {k for k, v in status.items() if v == "primary"} == {"b", "c", "d"}
    by_record = magnitude_table(RECORDS, ["sector"], "turnover", "sector")  # every record its own contributor
    res2 = CellSuppression(by_record.publication, rules=["p%=15"]).suppress_magnitude(by_record)
    assert {k for k, v in zip(res2.to_frame()["sector"], res2.suppression) if v == "primary"} == {"b", "c"}


def test_nk_rule_by_hand():
    """(1, 75): the largest contribution exceeds 75% of the cell: b (80 > 75), c (40 > 30); a (50 <= 75), d (60 <= 75)."""
    mt = magnitude_table(RECORDS, ["sector"], "turnover", "sector", contributor="firm")
    res = CellSuppression(mt.publication, rules=["nk(1,75)"]).suppress_magnitude(mt)
    assert {k for k, v in zip(res.to_frame()["sector"], res.suppression) if v == "primary"} == {"b", "c"}
    # (2, 90): two largest above 90%: b (95), c (40), d (100); a (80) is safe
    res = CellSuppression(mt.publication, rules=["nk(2,90)"]).suppress_magnitude(mt)
    assert {k for k, v in zip(res.to_frame()["sector"], res.suppression) if v == "primary"} == {"b", "c", "d"}


def test_deterministic_and_frame_columns():
    table, h = _d2()
    mech = CellSuppression("region*main_income", rules=["freq<=3"])
    a, b = mech.sample(table, m=2)
    assert_array_equal(a.suppression, b.suppression)
    frame = a.to_frame()
    assert list(frame.columns) == ["region", "main_income", "count", "suppression"]
    assert set(frame["suppression"]) <= {"", "primary", "secondary"}
    assert np.isnan(frame["count"][frame["suppression"] != ""]).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rules": "freq<=3"}, "non-empty list"),
        ({"rules": ["freq=3"]}, "cannot read suppression rule"),
        ({"rules": ["p%=150"]}, "percentage"),
        ({"priority": "size"}, "'priority' parameter"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        CellSuppression("a*b", **kwargs)


def test_magnitude_rule_on_frequency_table_refused():
    table, _ = _d2()
    with pytest.raises(InvalidArgumentError, match="needs a magnitude table"):
        CellSuppression("region", rules=["p%=10"]).sample(table)


# ---------------------------------------------------------------------- the elimination against exact arithmetic
def _exact_secondary(X, primary, order):
    """The greedy rule in rational arithmetic (a slow, independent reference for small X).

    An echelon basis of the published columns (pivot -> vector of Fractions); the primaries are kept
    reduced modulo it; a candidate is refused when some reduced primary is a multiple of its reduced
    column (then, and only then, adding it puts that primary in the published span).
    """
    from fractions import Fraction

    dense = np.asarray(X.todense(), dtype=np.int64)
    def col(j: int) -> list:
        return [Fraction(int(v)) for v in dense[:, j]]

    basis: dict[int, list] = {}

    def reduce(v):
        v = list(v)
        for r, b in sorted(basis.items()):
            if v[r] != 0:
                f = v[r] / b[r]
                v = [a - f * c for a, c in zip(v, b)]
        return v

    def pivot(v):
        return next((i for i, a in enumerate(v) if a != 0), None)

    reduced = {p: col(p) for p in np.flatnonzero(primary) if dense[:, p].any()}
    secondary = np.zeros(dense.shape[1], dtype=bool)
    for j in order:
        v = reduce(col(j))
        r = pivot(v)
        if r is None:
            continue
        updated, refused = {}, False
        for p, w in reduced.items():
            f = w[r] / v[r]
            w2 = [a - f * c for a, c in zip(w, v)]
            if pivot(w2) is None:
                refused = True
                break
            updated[p] = w2
        if refused:
            secondary[j] = True
            continue
        # keep the echelon form: earlier basis vectors lose their entry in the new pivot row
        for q, b in basis.items():
            if b[r] != 0:
                f = b[r] / v[r]
                basis[q] = [a - f * c for a, c in zip(b, v)]
        basis[r] = v
        reduced = updated
    return secondary


@pytest.mark.parametrize(
    "sizes, n_records, seed",
    [((4, 3, 5), 60, 1), ((5, 4, 3, 6), 300, 2), ((3, 3, 4, 2, 5), 400, 3), ((6, 2, 5), 25, 4), ((4, 4, 4, 4), 700, 5)],
)
def test_elimination_matches_exact_rational_greedy(sizes, n_records, seed):
    """Random hypercubes, all 2-way margins, freq<=2: the pattern of the floating-point projection
    (on X, or on its sketch when there are more inner than published cells) is the one exact
    rational elimination gives for the same candidate order."""
    from cellsafe.mechanisms._gauss import candidate_order, gauss_secondary
    from cellsafe.published import publication_for

    rng = np.random.default_rng(seed)
    names = [f"v{i}" for i in range(len(sizes))]
    w = [rng.gamma(1.0, 1.0, k) for k in sizes]
    df = pd.DataFrame({nm: rng.choice(k, n_records, p=wi / wi.sum()).astype(str) for nm, k, wi in zip(names, sizes, w)})
    table = CountTable.from_frame(df, names)
    pub = publication_for(table, "(" + "+".join(names) + ")^2")
    z = pub.aggregate(table)
    primary = (z >= 1) & (z <= 2)
    order = candidate_order(pub.X, z)
    order = order[~primary[order]]
    ours, exposed = gauss_secondary(pub.X, primary, order)
    assert not exposed.any()
    assert_array_equal(ours, _exact_secondary(pub.X, primary, order))
    assert ours.any()
    if sizes == (4, 4, 4, 4):
        assert pub.X.shape[0] > pub.X.shape[1]  # the sketch is used


def test_audit_intervals_agree_with_independent_linear_programs():
    """The audit's intervals (one shared model, settled bounds) equal two dense programs per cell, also for
    cells published by mistake (a primary and its complement withheld alone is computable)."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(7)
    df = pd.DataFrame({v: rng.choice(k, 150).astype(str) for v, k in zip("abc", (4, 5, 3))})
    table = CountTable.from_frame(df, list("abc"))
    [res] = CellSuppression("(a+b+c)^2", rules=["freq<=2"]).sample(table)
    assert (res.suppression == "secondary").any()

    def by_hand(rel):
        D = np.asarray(rel.publication.X.todense(), dtype=float)
        shown = ~np.isnan(rel.released)
        out = []
        for j in np.flatnonzero(~shown):
            lo = linprog(D[:, j], A_eq=D[:, shown].T, b_eq=rel.released[shown], bounds=(0, None), method="highs")
            hi = linprog(-D[:, j], A_eq=D[:, shown].T, b_eq=rel.released[shown], bounds=(0, None), method="highs")
            out.append((lo.fun, -hi.fun))
        return np.array(out)

    audit = audit_suppression(res)
    assert audit.passed and audit.exact
    np.testing.assert_allclose(np.c_[audit.lower, audit.upper], by_hand(res), atol=1e-7)
    # withhold the primaries only: some are computable from their margins, and the audit says so
    import dataclasses

    broken = res.released.copy()
    broken[res.suppression == "secondary"] = res.original[res.suppression == "secondary"]
    bad = dataclasses.replace(res, released=broken)
    audit = audit_suppression(bad)
    assert not audit.passed
    np.testing.assert_allclose(np.c_[audit.lower, audit.upper], by_hand(bad), atol=1e-7)

"""Cell suppression keeps its promise on magnitude tables: protection levels, singletons, forced and hidden cells.

The checks are independent of the code under test where it matters: intervals by a linear program
written here (scipy's linprog on the dense matrix), computability by the rank of dense matrices.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from scipy.optimize import linprog

from cellsafe import CountTable, Hierarchy, Variable
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import CellSuppression, parse_rule, primary_cells
from cellsafe.metrics import audit_suppression
from cellsafe.published import magnitude_table


def _required(mt, rules):
    """The protection the rules ask of each primary, computed here from the rules' formulas."""
    need = np.zeros(mt.values.shape[0])
    for r in map(parse_rule, rules):
        if r.kind == "p":
            x1, x2 = mt.top[:, 0], mt.top[:, 1]
            flagged = (mt.values > 0) & (mt.values - x1 - x2 < r.threshold / 100 * x1)
            need = np.where(flagged, np.maximum(need, r.threshold / 100 * x1 - (mt.values - x1 - x2)), need)
        elif r.kind == "nk":
            s = mt.top[:, : r.n].sum(axis=1)
            flagged = (mt.values > 0) & (s > r.threshold / 100 * mt.values)
            need = np.where(flagged, np.maximum(need, 100 / r.threshold * s - mt.values), need)
    return need


def _intervals_by_hand(X, values, withheld):
    """min and max of each withheld cell over y >= 0 meeting the published cells: dense linprog."""
    D = np.asarray(X.todense(), dtype=float)
    shown = ~withheld
    out = []
    for j in np.flatnonzero(withheld):
        lo = linprog(D[:, j], A_eq=D[:, shown].T, b_eq=values[shown], bounds=(0, None), method="highs")
        hi = linprog(-D[:, j], A_eq=D[:, shown].T, b_eq=values[shown], bounds=(0, None), method="highs")
        out.append((j, lo.fun, np.inf if hi.status == 3 else -hi.fun))  # status 3: unbounded
    return out


def _listed(res, mt):
    """The magnitude table on the cells the release lists (its frame, by default)."""
    from cellsafe.mechanisms import frame_magnitude

    return mt if res.publication.n_published == mt.values.shape[0] else frame_magnitude(mt)[0]


def _assert_protected(res, mt, rules, singletons=True):
    """Every primary's interval gives the protection its rules ask (lower side: down to 0 at most)."""
    mt = _listed(res, mt)
    need = _required(mt, rules)
    withheld = np.isnan(res.released)
    for j, lo, hi in _intervals_by_hand(res.publication.X, mt.values, withheld):
        if res.suppression[j] != "primary":
            continue
        v, r = mt.values[j], need[j]
        slack = 1e-6 * max(1.0, v)
        assert hi - v >= r - slack, f"cell {j}: upper {hi} < {v} + {r}"
        assert v - lo >= min(r, v) - slack, f"cell {j}: lower {lo} > {v} - {r}"
        assert hi - lo > slack
    assert audit_suppression(res, required=need).passed
    if singletons:
        _assert_protected_from_singletons(res, mt, need)


def _assert_protected_from_singletons(res, mt, need):
    """The same widths against each contributor alone in a withheld cell, who knows its own cells apart from p."""
    D = np.asarray(res.publication.X.todense(), dtype=float)
    withheld = np.isnan(res.released)
    sole = np.where(mt.n_contributors == 1, mt.largest, -1)
    for c in np.unique(sole[withheld & (sole >= 0)]):
        for p in np.flatnonzero((res.suppression == "primary") & (need > 0) & (sole != c)):
            # c's cells that share an inner cell with p hold c's own contribution, which the rule allows for
            rows = ~withheld | ((sole == c) & (D.T @ D[:, p] == 0))
            v, r = mt.values[p], need[p]
            lo = linprog(D[:, p], A_eq=D[:, rows].T, b_eq=mt.values[rows], bounds=(0, None), method="highs")
            hi = linprog(-D[:, p], A_eq=D[:, rows].T, b_eq=mt.values[rows], bounds=(0, None), method="highs")
            upper = np.inf if hi.status == 3 else -hi.fun
            slack = 1e-6 * max(1.0, v)
            assert upper - v >= r - slack and v - lo.fun >= min(r, v) - slack, f"contributor {c} narrows cell {p}"


def _in_span(D, basis_cols, target):
    """Whether column ``target`` of D is a linear combination of ``basis_cols`` (ranks of dense matrices)."""
    B = D[:, basis_cols]
    rank = np.linalg.matrix_rank(B) if B.size else 0
    return np.linalg.matrix_rank(np.column_stack([B, target])) == rank


def _assert_no_singleton_reveals(res, mt):
    """No contributor alone in a withheld cell computes another's primary; no pair of one contributor's primaries sums to a published combination."""
    mt = _listed(res, mt)
    D = np.asarray(res.publication.X.todense(), dtype=float)
    withheld = np.isnan(res.released)
    sole = np.where(mt.n_contributors == 1, mt.largest, -1)
    primary = res.suppression == "primary"
    for c in np.unique(sole[withheld & (sole >= 0)]):
        known = np.flatnonzero(~withheld | (sole == c))
        for p in np.flatnonzero(primary & (sole != c)):
            assert not _in_span(D, known, D[:, p]), f"contributor {c} computes primary cell {p}"
    shown = np.flatnonzero(~withheld)
    for c in np.unique(sole[primary & (sole >= 0)]):
        mine = np.flatnonzero(primary & (sole == c))
        for i in range(len(mine)):
            for j in range(i + 1, len(mine)):
                union = ((D[:, mine[i]] + D[:, mine[j]]) > 0).astype(float)
                assert not _in_span(D, shown, union), f"the sum of cells {mine[i]} and {mine[j]} of contributor {c} is published"


# ---------------------------------------------------------------------- the example that failed before
def _random_magnitude_records(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 120
    df = pd.DataFrame(
        {
            "sector": rng.choice(list("ABCDE"), n),
            "region": rng.choice(["N", "S", "E", "W"], n),
            "firm": rng.integers(0, 150, n).astype(str),
            "turnover": np.round(rng.lognormal(3, 1.2, n), 1),
        }
    )
    df.loc[len(df)] = ["A", "N", "big1", 5000.0]  # one dominant enterprise in (A, N) and one in (C, E)
    df.loc[len(df)] = ["C", "E", "big2", 3000.0]
    return df


def test_random_magnitude_example_now_passes_the_audit_with_required_widths():
    """Linear independence alone left (A, N), (A, Total) and (C, E) short of their p% protection; the
    protection levels withhold further cells until each reaches it."""
    rules = ["p%=15", "freq<=2"]
    mt = magnitude_table(_random_magnitude_records(3), ["sector", "region"], "turnover", "sector*region", contributor="firm")
    need = _required(mt, rules)
    before = CellSuppression(mt.publication, rules=rules, priority="value", intervals=False, singletons=False).suppress_magnitude(mt)
    short = audit_suppression(before, required=need)
    assert not short.passed and short.n_unsafe == 3
    res = CellSuppression(mt.publication, rules=rules, priority="value").suppress_magnitude(mt)
    assert_array_equal(res.suppression == "primary", before.suppression == "primary")
    assert np.all(np.isnan(res.released) >= np.isnan(before.released))  # only further cells withheld
    _assert_protected(res, mt, rules)
    _assert_no_singleton_reveals(res, mt)


def test_magnitude_suppression_audit():
    """Without protection levels (Gaussian elimination alone) no suppressed cell is computable exactly,
    but the audit finds p% primaries short of their protection (the example above, before)."""
    mt = magnitude_table(_random_magnitude_records(3), ["sector", "region"], "turnover", "sector*region", contributor="firm")
    rule = parse_rule("p%=15")
    mech = CellSuppression(mt.publication, rules=[rule, "freq<=2"], priority="value", intervals=False, singletons=False)
    res = mech.suppress_magnitude(mt)
    assert (res.suppression == "primary").any() and (res.suppression == "secondary").any()
    assert audit_suppression(res, required=0.0, singletons=False).passed
    need = np.where(res.suppression == "primary", rule.protection(mt.values, mt.top), 0.0)
    audit = audit_suppression(res, required=need, singletons=False)
    frame = audit.to_frame()
    unsafe = frame[~frame["safe"]]
    assert len(unsafe) and (unsafe["suppression"] == "primary").all()
    assert ((unsafe["upper"] < unsafe["upper_target"]) | (unsafe["lower"] > unsafe["lower_target"])).all()
    assert not audit_suppression(res).passed  # the rules the release was made with: the same cells short


def test_primary_cells_and_required_protection_by_hand():
    """p = 15 on three cells (x1, x2, total): (80, 15, 100): 100 - 95 = 5 < 12, required 12 - 5 = 7;
    (50, 30, 100): 20 >= 7.5, safe; (40, 0, 40): 0 < 6, required 6 (a single contributor).
    nk(1, 75) on the same: 80 > 75, required 100/75 * 80 - 100 = 6.67; 40 > 30, required 53.33 - 40 = 13.33."""
    values = np.array([100.0, 100.0, 40.0])
    top = np.array([[80.0, 15.0], [50.0, 30.0], [40.0, 0.0]])
    prim, req = primary_cells(["p%=15"], np.array([3, 3, 1]), values, top)
    assert_array_equal(prim, [True, False, True])
    np.testing.assert_allclose(req, [7.0, 0.0, 6.0])
    prim, req = primary_cells(["p%=15", "nk(1,75)"], np.array([3, 3, 1]), values, top)
    np.testing.assert_allclose(req, [7.0, 0.0, 40 / 3])


# ---------------------------------------------------------------------- a three-level geography
GEO = pd.DataFrame({
    "region": ["R1"] * 4 + ["R2"] * 3,
    "district": ["D11", "D11", "D12", "D12", "D21", "D21", "D22"],
    "municipality": ["m1", "m2", "m3", "m4", "m5", "m6", "m7"],
})


def _geo_records() -> pd.DataFrame:
    """Firms in seven municipalities and two sectors; a few dominate their cells, some are alone in theirs."""
    rng = np.random.default_rng(11)
    rows = []
    for m in GEO["municipality"]:
        for sector in ("retail", "industry"):
            k = int(rng.integers(1, 6))
            for f in range(k):
                rows.append({"geo": m, "sector": sector, "firm": f"{m}-{sector}-{f}", "turnover": float(rng.integers(5, 60))})
    rows.append({"geo": "m2", "sector": "industry", "firm": "steelworks", "turnover": 900.0})
    rows.append({"geo": "m6", "sector": "retail", "firm": "hypermarket", "turnover": 400.0})
    rows.append({"geo": "m7", "sector": "retail", "firm": "hypermarket", "turnover": 350.0})  # one holding, two municipalities
    return pd.DataFrame(rows)


def test_three_level_geography_magnitude_table_passes_the_audit():
    h = Hierarchy.from_levels(GEO, ["region", "district", "municipality"])
    rules = ["p%=10", "nk(1,80)", "freq<=2"]
    mt = magnitude_table(_geo_records(), ["geo", "sector"], "turnover", "region*sector + district*sector + geo*sector",
                         contributor="firm", hierarchies={"geo": h})
    res = CellSuppression(mt.publication, rules=rules, priority="value").suppress_magnitude(mt)
    frame = res.to_frame()
    assert {"R1", "D12", "m7"} <= set(frame["geo"])
    assert (res.suppression == "primary").sum() >= 5 and (res.suppression == "secondary").any()
    _assert_protected(res, mt, rules)
    _assert_no_singleton_reveals(res, mt)


# ---------------------------------------------------------------------- random small magnitude tables
@st.composite
def _small_magnitude(draw):
    n_a, n_b = draw(st.integers(2, 4)), draw(st.integers(2, 3))
    n = draw(st.integers(4, 30))
    n_firms = draw(st.integers(2, 15))
    a = draw(st.lists(st.integers(0, n_a - 1), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(0, n_b - 1), min_size=n, max_size=n))
    firm = draw(st.lists(st.integers(0, n_firms - 1), min_size=n, max_size=n))
    value = draw(st.lists(st.integers(1, 1000), min_size=n, max_size=n))
    rule = draw(st.sampled_from(["p%=15", "p%=30", "nk(1,70)", "nk(2,85)"]))
    df = pd.DataFrame({"a": [f"a{i}" for i in a], "b": [f"b{i}" for i in b], "firm": firm, "v": np.asarray(value, float)})
    return df, [rule, "freq<=1"]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_small_magnitude())
def test_random_small_magnitude_tables_keep_the_promise(case):
    df, rules = case
    mt = magnitude_table(df, ["a", "b"], "v", "a*b", contributor="firm")
    res = CellSuppression(mt.publication, rules=rules, priority="value").suppress_magnitude(mt)
    _assert_protected(res, mt, rules)
    _assert_no_singleton_reveals(res, mt)


# ---------------------------------------------------------------------- singletons by hand
def _one_way(records):
    df = pd.DataFrame(records, columns=["sector", "firm", "turnover"])
    return magnitude_table(df, ["sector"], "turnover", "sector", contributor="firm")


def test_singleton_partner_recovers_a_primary_without_the_option():
    """Sectors a (firm f1 alone, 100), b (500), c (400), d (firm f2 alone, 30), and the total 1030.

    Both single-firm sectors are p% primaries; without singleton protection they protect each other,
    a + d = 1030 - 500 - 400 = 130, and f2, knowing its own d = 30, computes a = 100.  With it, c
    (the smaller of b and c) is withheld as well: f2 then knows only a + c = 500.
    """
    many = [("b", f"g{i}", 100.0) for i in range(5)] + [("c", f"h{i}", 100.0) for i in range(4)]
    mt = _one_way([("a", "f1", 100.0), ("d", "f2", 30.0), *many])
    cells = list(mt.publication.cells()["sector"])
    without = CellSuppression(mt.publication, rules=["p%=15"], singletons=False).suppress_magnitude(mt)
    assert {cells[i] for i in np.flatnonzero(without.suppression != "")} == {"a", "d"}
    D = np.asarray(mt.publication.X.todense(), dtype=float)
    a, d = cells.index("a"), cells.index("d")
    published = np.flatnonzero(~np.isnan(without.released))
    assert _in_span(D, np.r_[published, d], D[:, a])  # f2 recovers a
    with_ = CellSuppression(mt.publication, rules=["p%=15"]).suppress_magnitude(mt)
    assert dict(zip(cells, with_.suppression)) == {"Total": "", "a": "primary", "b": "", "c": "secondary", "d": "primary"}
    published = np.flatnonzero(~np.isnan(with_.released))
    assert not _in_span(D, np.r_[published, d], D[:, a])
    _assert_no_singleton_reveals(with_, mt)


def test_two_primaries_of_one_firm_do_not_publish_its_sum():
    """Firm f1 is alone in a (100) and in d (30): withholding just a and d publishes a + d = 130, f1's
    turnover in the two sectors, to everyone; the pair is protected as one more primary, so c is withheld."""
    many = [("b", f"g{i}", 100.0) for i in range(5)] + [("c", f"h{i}", 100.0) for i in range(4)]
    mt = _one_way([("a", "f1", 100.0), ("d", "f1", 30.0), *many])
    cells = list(mt.publication.cells()["sector"])
    without = CellSuppression(mt.publication, rules=["p%=15"], singletons=False).suppress_magnitude(mt)
    assert {cells[i] for i in np.flatnonzero(without.suppression != "")} == {"a", "d"}
    with_ = CellSuppression(mt.publication, rules=["p%=15"]).suppress_magnitude(mt)
    assert {cells[i] for i in np.flatnonzero(with_.suppression != "")} == {"a", "c", "d"}
    _assert_no_singleton_reveals(with_, mt)


# ---------------------------------------------------------------------- forced and hidden cells
def _freq_table():
    vs = [Variable("a", ["x", "y", "z"]), Variable("b", ["u", "v"])]
    return CountTable.from_dense(np.array([[1, 9], [7, 8], [6, 5]]), vs)


def test_forced_cells_are_published_and_hidden_cells_withheld():
    t = _freq_table()
    [plain] = CellSuppression("a*b", rules=["freq<=2"]).sample(t)
    frame = plain.to_frame()
    assert set(map(tuple, frame.loc[frame["suppression"] == "secondary", ["a", "b"]].values)) == {("x", "v"), ("z", "u"), ("z", "v")}
    [res] = CellSuppression("a*b", rules=["freq<=2"], forced=[{"a": "z", "b": "u"}]).sample(t)
    f = res.to_frame()
    row = (f["a"] == "z") & (f["b"] == "u")
    assert f.loc[row, "suppression"].item() == "" and f.loc[row, "count"].item() == 6
    assert audit_suppression(res).passed
    [res] = CellSuppression("a*b", rules=["freq<=2"], hidden=[{"a": "y"}]).sample(t)
    f = res.to_frame()
    assert f.loc[(f["a"] == "y") & (f["b"] == "Total"), "suppression"].item() == "secondary"
    audit = audit_suppression(res).to_frame()
    # the hidden cell itself needs no protection (its parts are published); the primary does
    assert audit.loc[audit["suppression"] == "primary", "safe"].all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"forced": [{"a": "x", "b": "u"}]}, "forced cell"),
        ({"forced": [{"c": "x"}]}, "not a variable"),
        ({"hidden": np.array([1, 99])}, "positions in 0..11"),
        ({"hidden": np.zeros(3, dtype=bool)}, "one entry per published cell"),
    ],
)
def test_bad_forced_or_hidden(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        CellSuppression("a*b", rules=["freq<=2"], **kwargs).sample(_freq_table())


def test_forced_cells_that_hold_a_primary_warn():
    """Forcing every other cell of the primary's row and column leaves it computable: a warning, not a silent leak."""
    from cellsafe.exceptions import CellsafeWarning

    forced = [{"a": "x", "b": "v"}, {"a": "x"}]
    with pytest.warns(CellsafeWarning, match="cannot be fully protected"):
        CellSuppression("a*b", rules=["freq<=2"], forced=forced).sample(_freq_table())


def test_frequency_table_default_unchanged_and_audit_with_zero_widths():
    """Frequency tables keep the Gaussian pattern by default; intervals=True on them only asks positive widths."""
    t = _freq_table()
    [a] = CellSuppression("a*b", rules=["freq<=2"]).sample(t)
    [b] = CellSuppression("a*b", rules=["freq<=2"], intervals=True).sample(t)
    assert_array_equal(a.suppression, b.suppression)
    assert audit_suppression(b).passed
    broken = dataclasses.replace(a, released=np.where(a.suppression == "primary", np.nan, a.original.astype(float)))
    assert not audit_suppression(broken).passed


def test_frequency_table_singletons():
    """Counts a = 1, b = 2, c = 50, d = 60 and the total, freq <= 2: a and b protect each other (a + b = 3),
    but the one person in a knows a = 1 and so b = 2.  With singleton protection (the default), c is withheld too."""
    t = CountTable.from_dense(np.array([1, 2, 50, 60]), [Variable("s", ["a", "b", "c", "d"])])
    [plain] = CellSuppression("s", rules=["freq<=2"], singletons=False, intervals=False).sample(t)
    [safe] = CellSuppression("s", rules=["freq<=2"], intervals=False).sample(t)
    cells = list(plain.publication.cells()["s"])
    assert {cells[i] for i in np.flatnonzero(plain.suppression != "")} == {"a", "b"}
    assert {cells[i] for i in np.flatnonzero(safe.suppression != "")} == {"a", "b", "c"}
    D = np.asarray(safe.publication.X.todense(), dtype=float)
    a, b = cells.index("a"), cells.index("b")
    assert _in_span(D, np.r_[np.flatnonzero(~np.isnan(plain.released)), a], D[:, b])
    assert not _in_span(D, np.r_[np.flatnonzero(~np.isnan(safe.released)), a], D[:, b])


def test_virtual_primaries_pairs_and_many():
    """Every pair of one contributor's primary singletons, or for more than 12 the consecutive pairs and the union."""
    import scipy.sparse as sp

    from cellsafe.mechanisms._singleton import virtual_primaries

    X = sp.csr_matrix(np.eye(16))
    V, owner = virtual_primaries(X, np.ones(16, dtype=bool), np.r_[np.zeros(3, dtype=int), np.ones(13, dtype=int)])
    sizes = np.asarray(V.sum(axis=0)).ravel()
    assert (owner == 0).sum() == 3 and (owner == 1).sum() == 12 + 1  # 3 pairs; 12 consecutive pairs and the union
    assert sorted(sizes[owner == 1].tolist()) == [2.0] * 12 + [13.0]


def test_protection_levels_draw_a_progress_bar_only_when_asked(capsys):
    import scipy.sparse as sp

    from cellsafe.mechanisms import protect_intervals

    inner = np.eye(4)
    margins = np.array([[1, 0, 1, 0, 1], [1, 0, 0, 1, 1], [0, 1, 1, 0, 1], [0, 1, 0, 1, 1]])
    X = sp.csr_matrix(np.hstack([inner, margins]))
    values = X.T @ np.array([50.0, 10.0, 40.0, 60.0])
    done = np.zeros(9, dtype=bool)
    done[:4] = True
    required = np.r_[30.0, np.zeros(8)]
    quiet, _, _ = protect_intervals(X, values, done, required, np.array([0]))
    assert capsys.readouterr().err == ""
    shown, _, _ = protect_intervals(X, values, done, required, np.array([0]), progress=True)
    assert "protection levels" in capsys.readouterr().err
    np.testing.assert_array_equal(quiet, shown)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixtures_of_solutions_give_the_verdicts_of_the_programs(seed, monkeypatch):
    """Singleton protection's questions settled by mixtures of solutions found (_Questions.mixed) get the
    answers their own programs give, on all 2-way margins of four variables with many counts of 1."""
    from cellsafe.mechanisms import _intervals, _sole_intervals

    rng = np.random.default_rng(seed)
    sizes = (6, 2, 5, 4)  # 300 records, categories of gamma(0.5) weights: many counts of 1
    idx = [rng.choice(k, 300, p=(w := rng.gamma(0.5, 1.0, k)) / w.sum()) for k in sizes]
    counts = np.zeros(sizes, dtype=np.int64)
    np.add.at(counts, tuple(idx), 1)
    t = CountTable.from_dense(counts, [Variable(f"v{i}", [f"{i}{j}" for j in range(k)]) for i, k in enumerate(sizes)])
    runs: list[tuple[list, list]] = []
    settled = []
    plain = _sole_intervals.singleton_shortfalls
    mixed = _sole_intervals._Questions.mixed

    def counted(self, cells, known):
        out = mixed(self, cells, known)
        settled.extend(out.tolist())
        return out

    def both(*args, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(_sole_intervals._Questions, "mixed", lambda self, cells, known: np.zeros(len(cells), dtype=bool))
            alone = list(plain(*args, **kwargs))
        with monkeypatch.context() as m:
            m.setattr(_sole_intervals._Questions, "mixed", counted)
            shared = list(plain(*args, **kwargs))
        runs.append(([(p, c, m.tolist(), s) for p, c, m, s in alone], [(p, c, m.tolist(), s) for p, c, m, s in shared]))
        yield from iter(shared)

    monkeypatch.setattr(_intervals, "singleton_shortfalls", both)
    CellSuppression("(v0+v1+v2+v3)^2", rules=["freq<=2"]).sample(t)
    assert runs
    for alone, shared in runs:
        assert alone == shared
    assert any(settled)

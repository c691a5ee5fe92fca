"""Suppression against an attacker who reads the whole file (issue: published tables that cannot be undone).

The attacker here is written independently of the code under test: scipy's ``linprog`` over the
inner cells of the publication's frame, with what the listing reveals (a listing of non-empty
cells: every listed cell at least 1) and, for a person alone in a cell, that cell's value.  It
never calls the library's audit or interval code.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from cellsafe.mechanisms import CellSuppression
from cellsafe.metrics import audit_suppression
from cellsafe.published import PublishedTable

from _flights_like import FORMULA, flights_like

FIXTURES = Path(__file__).resolve().parents[1] / "reference" / "suppression" / "attacks"


def _fixtures():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_attack_fixtures", FIXTURES / "make_attack_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Attacker:
    """Linear programs over the frame's inner cells y >= 0 meeting every published cell.

    ``floor``: listed withheld cells hold at least 1 (a listing of non-empty cells).  ``known``:
    further cells whose values the attacker knows (a person alone in them).  Inner cells under a
    published 0 are 0 and left out (non-negativity), which only makes the programs smaller.
    """

    def __init__(self, X, released, original, *, floor=False, known=()):
        D = sp.csc_matrix(X, dtype=float)
        shown = ~np.isnan(released)
        values = np.where(shown, released, original)
        eq = shown.copy()
        eq[list(known)] = True
        dead = np.asarray(D[:, np.flatnonzero(eq & (values == 0))].sum(axis=1)).ravel() > 0
        self.D = D[np.flatnonzero(~dead)]
        rows = np.flatnonzero(eq & (values > 0))
        self.A_eq, self.b_eq = self.D[:, rows].T.tocsr(), values[rows]
        low = np.flatnonzero(~eq) if floor else np.zeros(0, dtype=int)
        self.A_ub = -self.D[:, low].T.tocsr() if low.size else None
        self.b_ub = -np.ones(low.size) if low.size else None

    def bound(self, column, upper):
        c = np.asarray(column, dtype=float).ravel() * (-1.0 if upper else 1.0)
        res = linprog(c, A_ub=self.A_ub, b_ub=self.b_ub, A_eq=self.A_eq, b_eq=self.b_eq, bounds=(0, None), method="highs")
        assert res.status in (0, 3)
        return np.inf if res.status == 3 else (-res.fun if upper else res.fun)

    def interval(self, column):
        return self.bound(column, False), self.bound(column, True)

    def cell(self, j):
        return self.interval(self.D[:, j].toarray())

    def union(self, cells):
        return self.interval(np.asarray(self.D[:, list(cells)].sum(axis=1)) > 0)


def _old(name, res, table):
    return PublishedTable.from_frame(pd.read_csv(FIXTURES / name), res.publication, table)


# ---------------------------------------------------------------------- UserSupport #307
def test_us307_sum_of_primaries_is_outside_the_rule_and_the_old_pattern_fails():
    """A = 15, B = 5, C = 3, total 23, freq<=10: B + C = 8 must not be derivable; A is withheld too."""
    table = _fixtures().US307
    [res] = CellSuppression("g", rules=["freq<=10"]).sample(table)
    cells = res.publication.cells()["g"].tolist()
    assert {cells[i] for i in np.flatnonzero(res.suppression != "")} == {"A", "B", "C"}
    attacker = Attacker(res.publication.X, res.released, res.original)
    b, c = cells.index("B"), cells.index("C")
    for j in (b, c):
        lo, hi = attacker.cell(j)
        assert hi >= 11 and lo < res.original[j]  # the attacker cannot tell B or C holds at most 10
    lo, hi = attacker.union([b, c])
    assert hi - lo > 0 and hi >= 11  # B + C is neither derivable nor known to be within the rule
    assert audit_suppression(res).passed
    old = audit_suppression(_old("us307_old.csv", res, table), rules=["freq<=10"])
    assert not old.passed
    assert old.sums["cells"].tolist() == [(b, c)] and old.sums["value"].tolist() == [8.0]
    assert Attacker(res.publication.X, old.release.released, res.original).union([b, c]) == pytest.approx((8.0, 8.0))


# ---------------------------------------------------------------------- two singletons in one column
def test_two_singletons_each_persons_cell_keeps_its_interval_and_the_old_pattern_fails():
    """3 x 2 table, cells (x, u) = (y, u) = 1, freq<=3: the person alone in one cell knows it is 1;
    the other's cell must still have an upper bound of at least 4 and a positive width for them."""
    table = _fixtures().TWO_SINGLETONS
    [res] = CellSuppression("row*col", rules=["freq<=3"]).sample(table)
    f = res.publication.cells()
    xu = int(np.flatnonzero((f["row"] == "x") & (f["col"] == "u"))[0])
    yu = int(np.flatnonzero((f["row"] == "y") & (f["col"] == "u"))[0])
    assert res.n_suppressed == 6
    for me, other in ((xu, yu), (yu, xu)):
        lo, hi = Attacker(res.publication.X, res.released, res.original, known=[me]).cell(other)
        assert hi >= 4 and hi - lo >= 3, (me, other, lo, hi)
    lo, hi = Attacker(res.publication.X, res.released, res.original).union([xu, yu])
    assert hi - lo > 0 and hi >= 4
    assert audit_suppression(res).passed
    old = audit_suppression(_old("two_singletons_old.csv", res, table), rules=["freq<=3"], inner=res.inner_original)
    assert not old.passed
    assert set(old.singletons["cell"]) == {xu, yu} and old.sums["value"].tolist() == [2.0]
    lo, hi = Attacker(res.publication.X, old.release.released, res.original, known=[xu]).cell(yu)
    assert lo == pytest.approx(1.0) and hi == pytest.approx(1.0)  # the old pattern gives the other person away


# ---------------------------------------------------------------------- a flights-like publication
@pytest.fixture(scope="module")
def flights():
    table, hierarchies = flights_like()
    from cellsafe.published import Publication

    pub = Publication.from_formula(table, FORMULA, hierarchies=hierarchies)
    return table, pub


def _assert_nothing_recovered(res, *, floor):
    X = res.publication.X
    attacker = Attacker(X, res.released, res.original, floor=floor)
    withheld = np.flatnonzero(np.isnan(res.released))
    primary = np.flatnonzero(res.suppression == "primary")
    uppers = {}
    for j in withheld:
        column = attacker.D[:, j].toarray()
        hi = attacker.bound(column, True)
        if hi <= res.original[j] + 1e-6:  # not above the value: then the lower bound must be below it
            assert attacker.bound(column, False) < res.original[j] - 1e-6, f"withheld cell {j} recovered exactly"
        uppers[j] = hi
    # a sum of primaries within the rule would bound each of its terms within the rule (the others
    # are non-negative): no primary's upper bound is within it, so no such sum exists
    assert all(uppers[p] >= 4 - 1e-6 for p in primary)
    # and directly, the pairs of primaries that share a published cell (B + C of #307)
    D = sp.csc_matrix(X)
    shown = ~np.isnan(res.released)
    share = (D[:, primary].T @ D[:, np.flatnonzero(shown)]) @ (D[:, np.flatnonzero(shown)].T @ D[:, primary])
    pairs = [(a, b) for a, b in itertools.combinations(range(primary.size), 2) if share[a, b] > 0]
    pairs = [(primary[a], primary[b]) for a, b in pairs if res.original[primary[a]] + res.original[primary[b]] <= 3]
    for a, b in pairs[:40]:  # an upper bound above the rule, and so above the sum: not derivable either
        assert attacker.bound(np.asarray(attacker.D[:, [a, b]].sum(axis=1)) > 0, True) >= 4 - 1e-6
    return len(withheld)


@pytest.mark.slow
def test_flights_like_publication_recovers_nothing(flights):
    """Every cell of the frame listed (the default): no withheld cell exact, no sum of primaries within the rule."""
    table, pub = flights
    [res] = CellSuppression(pub, rules=["freq<=3"]).sample(table)
    pub = res.publication  # the frame: every combination is an inner cell, every cell of every crossing listed
    assert pub.n_inner == 16 * 105 * 12
    assert pub.n_published == sum(np.prod([len(pub.term_labels(t)[1]) for t in c]) for c in pub.crossings)
    assert _assert_nothing_recovered(res, floor=False) >= 30
    assert audit_suppression(res).passed


@pytest.mark.slow
def test_flights_like_listing_non_empty_cells_recovers_nothing(flights):
    """Non-empty cells listed: every listed withheld cell is at least 1, and still nothing is recovered."""
    table, pub = flights
    [res] = CellSuppression(pub, rules=["freq<=3"], list="nonzero").sample(table)
    assert _assert_nothing_recovered(res, floor=True) >= 30
    assert audit_suppression(res).passed
    # the old pattern of that listing gives cells away once the listing's floor is used
    [old] = CellSuppression(pub, rules=["freq<=3"], list="nonzero", intervals=False, singletons=False).sample(table)
    attacker = Attacker(old.publication.X, old.released, old.original, floor=True)
    exact = [j for j in np.flatnonzero(np.isnan(old.released)) if np.diff(attacker.cell(j))[0] < 1e-6]
    assert exact
    assert not audit_suppression(old, rules=["freq<=3"]).passed


def test_listing_is_the_frame_and_protect_zeros_protects_empty_cells():
    """The frame lists empty cells (the listing no longer depends on the data); --protect-zeros makes them primary."""
    table = _fixtures().TWO_SINGLETONS
    t = table.with_counts(table.index[table.counts != 7], table.counts[table.counts != 7])  # (z, v) empty
    [res] = CellSuppression("row*col", rules=["freq<=3"]).sample(t)
    assert res.publication.n_published == 12
    f = res.to_frame()
    zv = (f["row"] == "z") & (f["col"] == "v")
    assert f.loc[zv, "count"].tolist() == [0.0] and f.loc[zv, "suppression"].tolist() == [""]
    [nz] = CellSuppression("row*col", rules=["freq<=3"], list="nonzero").sample(t)
    assert nz.publication.n_published == 11
    [pz] = CellSuppression("row*col", rules=["freq<=3"], protect_zeros=True).sample(t)
    assert pz.to_frame().loc[zv, "suppression"].tolist() == ["primary"]
    audit = audit_suppression(pz)
    assert audit.passed
    lo, hi = Attacker(pz.publication.X, pz.released, pz.original).cell(int(np.flatnonzero(zv)[0]))
    assert hi > 0  # the attacker cannot tell the empty cell is empty


def test_audit_fails_a_file_that_shows_what_it_marks_withheld():
    table = _fixtures().US307
    [res] = CellSuppression("g", rules=["freq<=10"]).sample(table)
    shown = dataclasses.replace(res, released=res.original.astype(float))
    audit = audit_suppression(shown)
    assert not audit.passed
    assert audit.shown_withheld.size == 3 and audit.sensitive_published.size == 2


# ---------------------------------------------------------------------- protection programs past their limits
def _margins_of_four(seed: int):
    """All 2-way margins of four variables from 300 records with many counts of 1 (gamma(0.5) category weights)."""
    from cellsafe import CountTable, Variable

    rng = np.random.default_rng(seed)
    sizes = (6, 2, 5, 4)
    idx = [rng.choice(k, 300, p=(w := rng.gamma(0.5, 1.0, k)) / w.sum()) for k in sizes]
    counts = np.zeros(sizes, dtype=np.int64)
    np.add.at(counts, tuple(idx), 1)
    return CountTable.from_dense(counts, [Variable(f"v{i}", [f"{i}{j}" for j in range(k)]) for i, k in enumerate(sizes)])


@pytest.mark.parametrize("limit", ["none", "warm", "every"])
@pytest.mark.parametrize("restricted", [False, True], ids=["whole", "restricted"])
def test_protection_programs_stopped_at_their_limits_still_protect(limit, restricted, monkeypatch):
    """Protection programs stopped at their iteration limit from the last basis are solved from scratch; stopped
    there too, they are answered by construction (more cells withheld).  Shortfalls asked again on the grown
    pattern skip their programs.  Either way no primary's upper bound stays within the rule, against the outside
    reader and against each person alone in withheld cells."""
    from cellsafe.mechanisms import _intervals, _sole_intervals
    from cellsafe.mechanisms._singleton import sole_contributors_of_counts

    if limit != "none":
        monkeypatch.setattr(_intervals, "WARM_ITERATIONS", 0)
    if limit == "every":
        monkeypatch.setattr(_intervals, "COLD_ITERATIONS", 0)
    if restricted:  # the programs move the inner cells of withheld cells and their neighbourhoods only
        monkeypatch.setattr(_intervals, "WHOLE_SYSTEM_ROWS", 0)
    asked, built, met = [], [], []
    ask, construct, again = _intervals._Program.ask, _intervals._Program._by_construction, _sole_intervals._Questions.again

    def counted_ask(self, *args, **kwargs):
        asked.append(args)
        return ask(self, *args, **kwargs)

    def counted(self, *args):
        out = construct(self, *args)
        built.append(out is not None)
        return out

    def counted_again(self, *args):
        out = again(self, *args)
        met.append(out == [])
        return out

    monkeypatch.setattr(_intervals._Program, "ask", counted_ask)
    monkeypatch.setattr(_intervals._Program, "_by_construction", counted)
    monkeypatch.setattr(_sole_intervals._Questions, "again", counted_again)
    [res] = CellSuppression("(v0+v1+v2+v3)^2", rules=["freq<=2"]).sample(_margins_of_four(2))
    assert asked and (built != []) is (limit == "every") and all(built)
    assert limit != "none" or any(met)  # requirements found met on the grown pattern: no program
    X = res.publication.X
    primary = np.flatnonzero(res.suppression == "primary")
    withheld = np.isnan(res.released)
    outsider = Attacker(X, res.released, res.original)
    assert all(outsider.cell(p)[1] >= 3 - 1e-6 for p in primary)
    sole = sole_contributors_of_counts(X, res.inner_original)
    people = np.unique(sole[withheld & (sole >= 0)])
    assert people.size >= 5
    for c in people:
        mine = np.flatnonzero(withheld & (sole == c))
        reader = Attacker(X, res.released, res.original, known=mine)
        for p in primary[sole[primary] != c]:
            assert reader.cell(p)[1] >= 3 - 1e-6, f"person {c} bounds primary {p} within the rule"


def test_protection_program_answered_by_construction():
    """Inner cell (0, 0) = 50 of a 2 x 2 table with margins must reach 80: with no solver left, it is moved there
    itself and every published cell through it is withheld (row 0, column 0, the total); the scipy attacker agrees."""
    import scipy.sparse as sp

    from cellsafe.mechanisms import _intervals

    margins = np.array([[1, 0, 1, 0, 1], [1, 0, 0, 1, 1], [0, 1, 1, 0, 1], [0, 1, 0, 1, 1]])
    X = sp.csc_matrix(np.hstack([np.eye(4), margins]))
    truth = np.array([50.0, 10.0, 40.0, 60.0])
    values = X.T @ truth
    withheld = np.r_[np.ones(4, dtype=bool), np.zeros(5, dtype=bool)]
    program = _intervals._Program(X, values, withheld, np.ones(9, dtype=bool), values, np.zeros(9), truth=truth)
    assert program._by_construction(0, True, 80.0, np.zeros(0, dtype=np.int64)).tolist() == [4, 6, 8]
    assert program._by_construction(0, False, 5.0, np.zeros(0, dtype=np.int64)).tolist() == [4, 6, 8]
    assert program._by_construction(0, False, -1.0, np.zeros(0, dtype=np.int64)) is None  # below 0: no inner cell can
    assert program._by_construction(0, True, 80.0, np.array([6])) is None  # column 0 known: inner cell 0 cannot move
    program.allowed = np.r_[np.ones(8, dtype=bool), False]  # the total may not be withheld
    assert program._by_construction(0, True, 80.0, np.zeros(0, dtype=np.int64)) is None
    released = np.where(np.isin(np.arange(9), [0, 1, 2, 3, 4, 6, 8]), np.nan, values)
    assert Attacker(X, released, values).cell(0)[1] >= 80 - 1e-6

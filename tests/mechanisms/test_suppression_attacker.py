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

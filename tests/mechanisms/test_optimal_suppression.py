"""Optimal secondary suppression (secondary='optimal'): the least costly protecting pattern, checked against a brute
force over patterns in order of cost with independent linear programs (scipy's linprog, not the module's HiGHS
model); never costlier than the Gaussian pattern; the Gaussian pattern with a note when the time limit runs out."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from cellsafe import CountTable, Hierarchy, Variable
from cellsafe.exceptions import CellsafeWarning
from cellsafe.mechanisms import CellSuppression
from cellsafe.metrics import audit_suppression
from cellsafe.published import Publication

pytest.importorskip("highspy")


def _upper(X: sp.csc_matrix, z: np.ndarray, withheld: np.ndarray, p: int, known=(), floor: float = 0.0) -> float:
    """The attacker's largest value of cell p: max x_p^T y over y >= 0 with the published cells' equations and each
    withheld cell at least ``floor`` (1 for a listing of the non-empty cells, which says so; 0 for the frame);
    ``known``: withheld cells the attacker knows all the same (a person alone in them)."""
    shown = np.flatnonzero(~withheld | np.isin(np.arange(z.size), known))
    hid = np.setdiff1d(np.flatnonzero(withheld), shown)
    ub = dict(A_ub=-X[:, hid].T.toarray(), b_ub=-np.full(hid.size, floor)) if floor > 0 else {}
    res = linprog(-X[:, p].toarray().ravel(), A_eq=X[:, shown].T.toarray(), b_eq=z[shown], bounds=(0, None),
                  method="highs", **ub)
    return np.inf if res.status == 3 else -res.fun


def _protects(X, z, withheld, primary, T, floor=0.0) -> bool:
    return all(_upper(X, z, withheld, p, floor=floor) >= T + 1 - 1e-7 for p in np.flatnonzero(primary))


def _singleton_disclosures(X, z, withheld, primary, T, sole):
    """(person, primary) pairs where the one person of some count-1 cells, knowing them, bounds another's primary by T."""
    return [(c, p) for c in np.unique(sole[sole >= 0]) for p in np.flatnonzero(primary & (sole != c))
            if _upper(X, z, withheld, p, np.flatnonzero(sole == c)) < T + 1 - 1e-7]


def _brute_force(X, z, primary, T, cost, sole=None, floor=0.0):
    """The cheapest pattern (primaries plus any others) protecting every primary, trying patterns in order of cost
    (against each person alone in count-1 cells too, with ``sole``)."""
    others = np.flatnonzero(~primary)
    options = []
    for k in range(others.size + 1):
        for combo in itertools.combinations(others, k):
            options.append((float(cost[list(combo)].sum()), combo))
    options.sort(key=lambda t: t[0])
    for c, combo in options:
        w = primary.copy()
        w[list(combo)] = True
        if _protects(X, z, w, primary, T, floor) and (sole is None or not _singleton_disclosures(X, z, w, primary, T, sole)):
            return c, w
    raise AssertionError("no pattern protects")


def _table(rng: np.random.Generator, shape=(3, 3), low=1, high=12) -> CountTable:
    vs = [Variable("a", [f"a{i}" for i in range(shape[0])]), Variable("b", [f"b{j}" for j in range(shape[1])])]
    return CountTable.from_dense(rng.integers(low, high, size=shape), vs)


@pytest.mark.parametrize("listing", ["frame", "nonzero"])
@pytest.mark.parametrize("seed", range(6))
def test_the_least_costly_pattern_against_a_brute_force(seed, listing):
    """The least cost by a brute force, against the reader the listing makes: withheld cells at least 1 when the file
    lists the non-empty cells only."""
    rng = np.random.default_rng(seed)
    t = _table(rng, (3, 3) if seed % 2 else (2, 4))
    pub = Publication.from_formula(t, "a*b", zeros=True)
    z = pub.aggregate(t).astype(float)
    primary = (z >= 1) & (z <= 3)
    if not primary.any():
        pytest.skip("no primary")
    [gauss] = CellSuppression(pub, rules=["freq<=3"], list=listing).sample(t)
    # the brute force models no contributor alone in a withheld cell: neither does this optimum
    [opt] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal", singletons=False, list=listing).sample(t)
    X = sp.csc_matrix(pub.X)
    w = opt.suppression != ""
    floor = 1.0 if listing == "nonzero" else 0.0
    assert opt.note == ""
    assert _protects(X, z, w, primary, 3, floor)
    best, _ = _brute_force(X, z, primary, 3, z, floor=floor)
    assert z[w & ~primary].sum() == pytest.approx(best)
    g = gauss.suppression != ""
    if _protects(X, z, g, primary, 3, floor):  # the Gaussian pattern is the start: never cheaper than the optimum
        assert z[w & ~primary].sum() <= z[g & ~primary].sum()
    assert audit_suppression(opt, singletons=False).passed
    [safe] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal", list=listing).sample(t)  # singletons too
    assert audit_suppression(safe).passed


def test_cost_by_the_number_of_cells():
    rng = np.random.default_rng(11)
    t = _table(rng, (3, 4), 1, 30)
    pub = Publication.from_formula(t, "a*b", zeros=True)
    z = pub.aggregate(t).astype(float)
    primary = (z >= 1) & (z <= 3)
    [by_cells] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal", cost="cells").sample(t)
    [by_value] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal").sample(t)
    cells = lambda r: int(((r.suppression != "") & ~primary).sum())  # noqa: E731
    value = lambda r: float(z[(r.suppression != "") & ~primary].sum())  # noqa: E731
    assert cells(by_cells) <= cells(by_value) and value(by_value) <= value(by_cells)
    assert _protects(sp.csc_matrix(pub.X), z, by_cells.suppression != "", primary, 3)


def test_the_gaussian_pattern_with_a_note_when_the_time_runs_out():
    rng = np.random.default_rng(3)
    t = _table(rng, (6, 6), 1, 8)
    pub = Publication.from_formula(t, "a*b", zeros=True)
    [gauss] = CellSuppression(pub, rules=["freq<=3"]).sample(t)
    with pytest.warns(CellsafeWarning, match="time limit of 1e-06 s ran out.*the Gaussian pattern is returned"):
        [opt] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal", time_limit=1e-6).sample(t)
    assert (opt.suppression == gauss.suppression).all()
    assert "Gaussian pattern is returned" in opt.note


def test_a_hierarchical_table_and_a_magnitude_table():
    rng = np.random.default_rng(5)
    geo = pd.DataFrame({"region": ["N", "N", "N", "S", "S"], "district": ["n1", "n2", "n3", "s1", "s2"]})
    h = Hierarchy.from_levels(geo, ["region", "district"])
    vs = [Variable("district", list(geo["district"])), Variable("age", ["y", "m", "o"])]
    t = CountTable.from_dense(rng.integers(0, 9, size=(5, 3)), vs)
    pub = Publication.from_formula(t, "district*age", hierarchies={"district": h})
    [gauss] = CellSuppression(pub, rules=["freq<=2"]).sample(t)
    [opt] = CellSuppression(pub, rules=["freq<=2"], secondary="optimal").sample(t)
    pub = opt.publication  # the frame the release lists
    z = opt.original.astype(float)
    primary = opt.suppression == "primary"
    assert _protects(sp.csc_matrix(pub.X), z, opt.suppression != "", primary, 2)
    if _protects(sp.csc_matrix(pub.X), z, gauss.suppression != "", primary, 2):
        assert z[(opt.suppression == "secondary")].sum() <= z[(gauss.suppression == "secondary")].sum()
    records = pd.DataFrame({"sector": list("aaabbbccdd"), "region": list("xyxyxyxyxy"),
                            "firm": [f"f{i}" for i in range(10)],
                            "turnover": [50.0, 30, 20, 80, 15, 5, 40, 3, 30, 40]})
    from cellsafe.mechanisms._primary import primary_cells
    from cellsafe.published import magnitude_table

    mt = magnitude_table(records, ["sector", "region"], "turnover", "sector*region", contributor="firm")
    _, required = primary_cells(["p%=15"], mt.n_contributors, mt.values, mt.top)
    gauss = CellSuppression("sector*region", rules=["p%=15"], singletons=False).suppress_magnitude(mt)
    mech = CellSuppression("sector*region", rules=["p%=15"], secondary="optimal", singletons=False)
    res = mech.suppress_magnitude(mt)
    assert mech.optimal_.optimal
    assert audit_suppression(res, required=required).passed
    secondary = lambda r: float(r.original[r.suppression == "secondary"].sum())  # noqa: E731
    assert secondary(res) <= secondary(gauss) + 1e-9


@pytest.mark.parametrize("seed", [0, 5, 6])
def test_singletons_a_person_alone_in_withheld_cells_recovers_no_other_primary(seed):
    """With singletons (the person of a count of 1 knows that cell), no person's own cells and the published ones bound
    another's primary within the rule, at the least cost a brute force finds; without the guard some do."""
    from cellsafe.mechanisms._singleton import sole_contributors_of_counts

    rng = np.random.default_rng(seed)
    vals = rng.integers(1, 12, size=(4, 3))
    vals[rng.random((4, 3)) < 0.3] = 1
    t = CountTable.from_dense(vals, [Variable("a", [f"a{i}" for i in range(4)]), Variable("b", [f"b{j}" for j in range(3)])])
    pub = Publication.from_formula(t, "a*b", zeros=True)
    X, z = sp.csc_matrix(pub.X), pub.aggregate(t).astype(float)
    sole = sole_contributors_of_counts(X, pub.inner_counts(t))
    primary = (z >= 1) & (z <= 3)
    [guarded] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal", singletons=True).sample(t)
    [plain] = CellSuppression(pub, rules=["freq<=3"], secondary="optimal", singletons=False).sample(t)
    w = guarded.suppression != ""
    assert guarded.note == "" and _protects(X, z, w, primary, 3)
    assert _singleton_disclosures(X, z, w, primary, 3, sole) == []
    assert _singleton_disclosures(X, z, plain.suppression != "", primary, 3, sole)
    best, _ = _brute_force(X, z, primary, 3, z, sole)
    assert z[w & ~primary].sum() == pytest.approx(best)

"""CellKeyMagnitude and MagnitudePTable: against R's cellKey and ptable, by hand, consistency, noise distribution."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from cellsafe import CountTable, Variable
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms import CellKeyMagnitude, MagnitudePTable, flex_multiplier, make_mechanism, mechanism_spec

REF = Path(__file__).resolve().parents[1] / "reference" / "cellkey_magnitude"


@pytest.fixture(scope="module")
def r_ptable():
    return MagnitudePTable.read(REF / "nums_ptable.csv")


@pytest.fixture(scope="module")
def generated():
    return MagnitudePTable.generate(D=10, V=3, step=2, icat=(1, 5, 10))


@pytest.fixture(scope="module")
def records():
    return pd.read_csv(REF / "records.csv")


@pytest.fixture(scope="module")
def r_cells():
    return pd.read_csv(REF / "cells.csv", keep_default_na=False)


def _toy_ptable() -> MagnitudePTable:
    """Rows 1 and 5: noise -1, 0, 1 and -2, 0, 2 with probabilities 1/4, 1/2, 1/4."""
    return MagnitudePTable([1, 1, 1, 5, 5, 5], [-1, 0, 1, -2, 0, 2], [0.25, 0.5, 0.25] * 2)


# ---------------------------------------------------------------------- references
def test_generated_ptable_matches_r_ptable(r_ptable, generated):
    """create_num_ptable(D = 10, V = 3, step = 2, icat = c(1, 5, 10)) of the R package ptable."""
    mine = generated.to_frame()
    ref = r_ptable.to_frame()
    assert_array_equal(mine["i"], ref["i"])
    assert_array_equal(mine["v"], ref["v"])
    assert_allclose(mine["p"], ref["p"], atol=2e-6)  # R rounds to 8 digits; the solvers agree to ~5e-7
    mean, var = r_ptable.row_moments()
    assert_allclose(mean, 0.0, atol=1e-7)
    assert_allclose(var[1:], 3.0, atol=1e-6)  # V binds in rows 5 and 10; row 1 cannot reach it


@pytest.mark.parametrize(
    "setting, params",
    [
        ("A", dict(fp=400, top_k=3, p_small=0.3, p_large=0.05, q=3, flex_weights=(1, 0.5, 0.2))),
        ("B", dict(fp=1000, top_k=1, p_small=0.25, p_large=0.05, q=2, mu_c=2, same_key=False, use_zero_rkeys=True)),
    ],
)
def test_releases_match_cellkey(setting, params, r_ptable, records, r_cells):
    """Released sums of every published cell against cellKey 1.0.2's .perturb_cell_flex (make_fixtures.R)."""
    mech = CellKeyMagnitude(r_ptable, "sector*region", **params)
    cells = mech.perturb(records, variables=["sector", "region"], value="turnover").publication.cells()
    ref = cells.merge(r_cells, on=["sector", "region"], how="left")
    assert len(ref) == len(r_cells) == 12
    sensitive = ref["sensitive_B"].astype(str).eq("TRUE").to_numpy()
    res = mech.perturb(records, variables=["sector", "region"], value="turnover", record_key="rkey", sensitive=sensitive)
    assert_allclose(res.original, ref["cv"], rtol=1e-12)
    keys = ref["ck_nz"] if setting == "A" else ref["ck"]
    assert_allclose(res.cell_keys, keys, atol=1e-12)
    assert_allclose(res.released, ref[f"released_{setting}"], rtol=1e-10)
    assert res.measure == "turnover" and res.to_frame().columns[-1] == "turnover"
    assert np.sum(res.released != res.original) >= 10  # the reference is not trivially "unchanged"


def test_hand_computation():
    """One contributor per cell, top_k = 1, with the toy ptable (rows 1 and 5).

    Cell 1: x = 100, fp = 1000 so the share is p_small = 0.2 and d = 20; a = 100 / 20 = 5, row 5
    exactly; key 0.1 < 1/4 selects v = -2: released 100 + 20 * (-2) = 60.
    Cell 2: x = 100, p_small = 0.3 (a second mechanism): d = 30, a = 10/3 lies between rows 1 and 5,
    lambda = (10/3 - 1) / 4 = 7/12; key 0.9 selects v = 1 in row 1 and v = 2 in row 5, so
    v = 5/12 * 1 + 7/12 * 2 = 19/12 and released = 100 + 30 * 19/12 = 147.5.
    Cell 3: x = 8 with a contribution 40 (a cell whose sum is smaller than its noise magnitude is not
    possible from records, but the kernel must hold): d = 0.2 * 40 = 8 > ... = x, so d = x = 8, a = 1,
    key 0.1 selects v = -1: released 8 - 8 = 0, never below 0.
    Cell 4: x = 5000, contribution 5000 above fp = 1000 with q = 3, p = (0.2, 0.05):
    m = 0.05 + (0.2 * 5000 - 0.05 * 1000) / 1000 * (2000 / 6000)^3 = 0.05 + 0.95 / 27, d = 5000 m,
    a = 1 / m = 11.5 is beyond the last row (5): row 5; key 0.8 selects v = 2.
    """
    pt = _toy_ptable()
    mech = CellKeyMagnitude(pt, fp=1000, p_small=0.2, p_large=0.05, q=3)
    m4 = 0.05 + 0.95 / 27
    out = mech.perturbed(np.array([100.0, 8.0, 5000.0]), np.array([[100.0], [40.0], [5000.0]]), np.array([[0.1], [0.1], [0.8]]))
    assert_allclose(out, [60.0, 0.0, 5000 + 5000 * m4 * 2])
    assert_allclose(flex_multiplier(5000.0, 1000, 0.2, 0.05, 3), m4)
    mech3 = CellKeyMagnitude(pt, fp=1000, p_small=0.3)
    assert_allclose(mech3.perturbed(np.array([100.0]), np.array([[100.0]]), np.array([[0.9]])), [147.5])


def test_second_component_and_extra_protection():
    """top_k = 2, both contributions below fp: x = 150 = 100 + 50, p_small = 0.2.

    Component 1: d = 20, a = 150 / 20 = 7.5 > 5, row 5; key 0.8 -> v = 2: x = 150 + 40 = 190.
    Component 2: d = 0.2 * 50 = 10 (the flex weights only weight contributions above fp, as cellKey), a = 19,
    row 5; key 0.8 * 10 mod 1 = 0 -> key 0 gives no noise: 190.  With mu_c = 1 on a sensitive cell the
    first step is 20 * (1 + 2) = 60 and the second 10 * (1 + 0) = 10: 150 + 70 = 220.
    """
    pt = _toy_ptable()
    mech = CellKeyMagnitude(pt, fp=1000, p_small=0.2, top_k=2, flex_weights=(1, 0.5), mu_c=1)
    keys = mech.component_keys(np.array([int(0.8 * 2**53)], dtype=np.uint64))
    assert_allclose(keys, [[0.8, 0.0]], atol=1e-14)
    top = np.array([[100.0, 50.0]])
    assert_allclose(mech.perturbed(np.array([150.0]), top, np.array([[0.8, 0.0]])), [190.0])
    assert_allclose(mech.perturbed(np.array([150.0]), top, np.array([[0.8, 0.0]]), np.array([True])), [220.0])
    # key 0.75 (exactly a bound: intervals are [lb, ub)) and its derived key 0.5: v = 2, then v = 0
    assert_allclose(mech.perturbed(np.array([150.0]), top, np.array([[0.75, 0.5]])), [190.0])


def test_component_keys_shift_decimal_digits():
    mech = CellKeyMagnitude(_toy_ptable(), fp=10, top_k=3, flex_weights=(1, 1, 1))
    fixed = np.floor(np.array([0.12345678, 0.5, 0.0]) * 2**53).astype(np.uint64)
    keys = mech.component_keys(fixed)
    assert_allclose(keys[0], [0.12345678, 0.2345678, 0.345678], atol=1e-12)
    assert_array_equal(keys[2], 0.0)
    other = CellKeyMagnitude(_toy_ptable(), fp=10, same_key=False).component_keys(fixed)
    assert_allclose(other[:2, 0], [0.2345678, 0.0], atol=1e-12)


# ---------------------------------------------------------------------- consistency
def test_same_cell_same_noise_in_every_publication(r_ptable, records):
    kw = dict(fp=400, top_k=3, p_small=0.3, flex_weights=(1, 0.5, 0.2))
    full = CellKeyMagnitude(r_ptable, "sector*region", **kw).perturb(records, variables=["sector", "region"], value="turnover", record_key="rkey")
    margins = CellKeyMagnitude(r_ptable, "sector + region", **kw).perturb(records, variables=["sector", "region"], value="turnover", record_key="rkey")
    a = full.to_frame(details=True)
    b = margins.to_frame(details=True)
    both = a.merge(b, on=["sector", "region"], suffixes=("_full", "_margins"))
    assert len(both) == len(b) == 6  # the total, 3 sectors, 2 regions
    assert_array_equal(both["turnover_full"], both["turnover_margins"])
    assert_array_equal(both["cell_key_full"], both["cell_key_margins"])
    # the same records in another order: the same keys exactly, the same release up to the rounding of the sums
    shuffled = records.sample(frac=1.0, random_state=3).reset_index(drop=True)
    again = CellKeyMagnitude(r_ptable, "sector*region", **kw).perturb(shuffled, variables=["sector", "region"], value="turnover", record_key="rkey")
    assert_array_equal(again.cell_keys, full.cell_keys)
    assert_allclose(again.released, full.released, rtol=1e-14)
    # drawn keys: the same rng gives the same release, another rng another one
    mech = CellKeyMagnitude(r_ptable, "sector*region", **kw)
    r1 = mech.perturb(records, variables=["sector", "region"], value="turnover", rng=7)
    r2 = mech.perturb(records, variables=["sector", "region"], value="turnover", rng=7)
    r3 = mech.perturb(records, variables=["sector", "region"], value="turnover", rng=8)
    assert_array_equal(r1.released, r2.released)
    assert not np.array_equal(r1.released, r3.released)


def test_holdings_are_one_contribution(r_ptable):
    """Two records of firm 1 (60 + 50) outweigh firm 2 (100): the noise follows the holding's 110."""
    df = pd.DataFrame({"s": ["a", "a", "a"], "firm": [1, 1, 2], "v": [60.0, 50.0, 100.0], "rk": [0.3, 0.2, 0.6]})
    mech = CellKeyMagnitude(_toy_ptable(), "s", fp=1000, p_small=0.2)
    res = mech.perturb(df, variables=["s"], value="v", contributor="firm", record_key="rk")
    # key 0.1 (0.3 + 0.2 + 0.6 mod 1); d = 0.2 * 110 = 22, a = 210 / 22 > 5: row 5, v = -2
    assert_allclose(res.cell_keys, [0.1, 0.1], atol=1e-12)
    assert_allclose(res.released, [210 - 44.0, 210 - 44.0])


def test_released_values_are_never_negative(r_ptable):
    rng = np.random.default_rng(1)
    n = 3000
    df = pd.DataFrame({"g": rng.integers(0, 400, n).astype(str), "v": np.round(rng.lognormal(3, 2, n), 2)})
    res = CellKeyMagnitude(r_ptable, "g", fp=50, top_k=2, p_small=1.0, flex_weights=(1, 0.8)).perturb(df, variables=["g"], value="v", rng=2)
    assert np.all(res.released >= 0)
    # with p_small = 1 a one-contributor cell below fp sits in row 1, whose smallest noise (-1) is the whole cell
    assert np.any(res.released == 0)


# ---------------------------------------------------------------------- the noise distribution
def test_noise_follows_the_ptable_row(generated):
    """4000 cells of value 100, one contributor each, fresh keys: d = 20, a = 5 (row 5 exactly), so
    (released - 100) / 20 follows row 5's noise distribution; chi-square at a fixed seed."""
    pt = generated
    n = 4000
    table = CountTable([Variable("i", range(n))], np.arange(n), np.full(n, 100))
    [res] = CellKeyMagnitude(pt, fp=1000, p_small=0.2).sample(table, rng=20261122)
    v = (res.released - 100.0) / 20.0
    frame = pt.to_frame()
    row = frame[frame["i"] == 5]
    grid = row["v"].to_numpy()
    idx = np.searchsorted(grid, v)
    assert_allclose(grid[idx], v, atol=1e-9)  # every released value is on the row's grid
    observed = np.bincount(idx, minlength=grid.size).astype(float)
    expected = row["p"].to_numpy() * n
    keep = expected >= 5
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    assert stats.chi2.sf(chi2, obs.size - 1) > 1e-4
    assert abs(v.mean()) < 5 * np.sqrt(3.0 / n)  # zero-mean noise, within 5 standard errors


# ---------------------------------------------------------------------- protocol and bad input
def test_spec_round_trip():
    mech = make_mechanism("ckm-magnitude:D=4,V=1,fp=1000,top_k=1,p_small=0.2")
    assert isinstance(mech, CellKeyMagnitude) and mech.ptable.rows.tolist() == [1.0, 4.0]
    assert make_mechanism(mechanism_spec(mech)) == mech


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(ptable="x", fp=1), "must be a MagnitudePTable"),
        (dict(fp=0), "'fp' parameter"),
        (dict(fp=1, top_k=7), "'top_k' parameter"),
        (dict(fp=1, p_small=0.05, p_large=0.2), "'p_large' parameter .* at most p_small"),
        (dict(fp=1, q=0.5), "'q' parameter"),
        (dict(fp=1, top_k=2, flex_weights=(1,)), "'flex_weights' parameter .* 2 non-increasing"),
        (dict(fp=1, top_k=2, flex_weights=(0.5, 0.2)), "the first 1"),
        (dict(fp=1, top_k=2, flex_weights=(1, 1.5)), "'flex_weights' parameter"),
        (dict(fp=1, mu_c=-1), "'mu_c' parameter"),
        (dict(fp=1, same_key="yes"), "'same_key' parameter"),
    ],
)
def test_bad_parameters(kwargs, match):
    kwargs.setdefault("ptable", _toy_ptable())
    with pytest.raises(InvalidArgumentError, match=match):
        CellKeyMagnitude(**kwargs)


@pytest.mark.parametrize(
    "frame, kwargs, match",
    [
        (dict(v=[1.0, -2.0]), dict(value="v"), "negative"),
        (dict(v=["a", "b"]), dict(value="v"), "non-numeric"),
        (dict(v=[1.0, 2.0]), dict(value="w"), "unknown column 'w'"),
        (dict(v=[1.0, 2.0], rk=[0.1, 1.5]), dict(value="v", record_key="rk"), "out-of-range key"),
        (dict(v=[1.0, 2.0], rk=[1, 2]), dict(value="v", record_key="rk"), "uniform numbers in \\[0, 1\\)"),
        (dict(v=[1.0, 2.0]), dict(value="v", sensitive=[True]), "one flag per published cell"),
    ],
)
def test_bad_records(frame, kwargs, match):
    df = pd.DataFrame({"s": ["a", "b"], **frame})
    with pytest.raises(DataError, match=match):
        CellKeyMagnitude(_toy_ptable(), "s", fp=10).perturb(df, variables=["s"], **kwargs)


def test_ptable_errors(tmp_path):
    with pytest.raises(InvalidArgumentError, match="must hold 1 and D=10"):
        MagnitudePTable.generate(D=10, V=3, icat=(2, 10))
    with pytest.raises(InvalidArgumentError, match="D \\* step below 50"):
        MagnitudePTable.generate(D=30, V=3, step=2)
    with pytest.raises(DataError, match="sums to"):
        MagnitudePTable([1, 1], [0, 1], [0.5, 0.2])
    path = tmp_path / "p.csv"
    pd.DataFrame({"i": [1, 1], "v": [0, 1], "p": [0.5, 0.5], "type": ["even", "even"]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="only one table for all cells"):
        MagnitudePTable.read(path)
    assert MagnitudePTable.read(REF / "nums_ptable.csv").to_frame().shape == (95, 7)


def test_use_zero_rkeys_gives_the_count_tables_cell_keys(r_ptable, records):
    """With use_zero_rkeys every record's key counts: the key of the frequency table's cell key method."""
    from cellsafe.mechanisms import CellKeyMethod, PTable

    counts = CellKeyMethod(PTable.generate(D=3, V=1.5), "sector*region").perturb(records, variables=["sector", "region"], record_key="rkey")
    mags = CellKeyMagnitude(r_ptable, "sector*region", fp=400, use_zero_rkeys=True).perturb(
        records, variables=["sector", "region"], value="turnover", record_key="rkey"
    )
    a = counts.to_frame(details=True).merge(mags.to_frame(details=True), on=["sector", "region"])
    assert len(a) == 12
    assert_allclose(a["cell_key_x"], a["cell_key_y"], atol=1e-15)


def test_hierarchical_publication(r_ptable):
    """Regions N and S under one aggregate 'all' (a hierarchy level): the aggregate is the region total."""
    from cellsafe import Hierarchy

    df = pd.DataFrame({"region": ["N", "S", "S", "N"], "v": [10.0, 20.0, 30.0, 40.0], "rk": [0.1, 0.2, 0.3, 0.35]})
    h = Hierarchy.from_parent_child(pd.DataFrame({"code": ["all", "N", "S"], "parent": ["", "all", "all"]}), level_names=["top"])
    res = CellKeyMagnitude(r_ptable, "top + region", fp=100).perturb(df, variables=["region"], value="v", record_key="rk", hierarchies={"region": h})
    frame = res.to_frame(details=True)
    top = frame[frame["region"] == "all"]
    assert len(top) == 1 and float(top["original"].iloc[0]) == 100.0
    assert_allclose(float(top["cell_key"].iloc[0]), 0.95, atol=1e-12)


def test_sensitive_cells_from_primary_rules(r_ptable, records, r_cells):
    """Setting B's sensitive cells (at most 3 contributors) are those of the rule 'freq<=3'."""
    mech = CellKeyMagnitude(r_ptable, "sector*region", fp=1000, p_small=0.25, q=2, mu_c=2, same_key=False, use_zero_rkeys=True)
    res = mech.perturb(records, variables=["sector", "region"], value="turnover", record_key="rkey", sensitive="freq<=3")
    ref = res.publication.cells().merge(r_cells, on=["sector", "region"], how="left")
    assert_allclose(res.released, ref["released_B"], rtol=1e-10)
    # a p% rule: a cell whose remainder after its two largest contributions is below 15% of the largest
    plain = mech.with_params(mu_c=0.0).perturb(records, variables=["sector", "region"], value="turnover", record_key="rkey")
    flagged = mech.perturb(records, variables=["sector", "region"], value="turnover", record_key="rkey", sensitive=["p%=15"])
    x = plain.original
    cells = res.publication.cells()
    for i in range(len(cells)):
        m = np.ones(len(records), bool)
        for var in ("sector", "region"):
            if cells[var].iloc[i] != "Total":
                m &= (records[var] == cells[var].iloc[i]).to_numpy()
        v = np.sort(records["turnover"].to_numpy()[m])[::-1]
        is_sensitive = x[i] - v[0] - (v[1] if v.size > 1 else 0.0) < 0.15 * v[0]
        assert (flagged.released[i] != plain.released[i]) == is_sensitive
    assert np.sum(flagged.released != plain.released) == 2  # the rule flags some cells, not all

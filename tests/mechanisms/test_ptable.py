"""PTable: generation (max entropy, D = 5, V = 3, js = 2 as in 001), both file layouts, transitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import brentq

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms.ptable import PTable

ONS = Path(__file__).resolve().parents[1] / "reference" / "ons_ptable" / "ptable_10_5_rule.csv"


@pytest.fixture(scope="module")
def pt():
    return PTable.generate(D=5, V=3, js=2)


def test_generate_d5_v3_js2_properties(pt):
    T = pt.transition_matrix()
    i = np.arange(T.shape[0])
    j = np.arange(T.shape[1])
    assert pt.ncat == 8 and T.shape[0] == 9
    assert_allclose(T.sum(axis=1), 1.0, atol=1e-12)
    v = j[None, :] - i[:, None]
    assert_allclose((T * v).sum(axis=1), 0.0, atol=1e-7)  # zero mean
    var = (T * v**2).sum(axis=1)
    assert var[0] == 0
    assert_allclose(var[1:], 3.0, atol=1e-6)  # V = 3 is reachable in every row here
    assert np.all(T[:, 1:3] == 0)  # no released 1 or 2
    assert pt.max_deviation == 5
    assert np.all(T[np.abs(v) > 5] == 0)
    assert T[0, 0] == 1.0
    # non-decreasing up to "no change" (row 4: released 0, 3, 4)
    for r in range(3, 9):
        left = T[r, [c for c in range(0, r + 1) if T[r, c] > 0]]
        assert np.all(np.diff(left) >= -1e-9)


def test_symmetric_row_is_discretized_gaussian(pt):
    """Row ncat: p(v) proportional to exp(-b v^2) on -5..5 with variance 3 (the unconstrained max-entropy form)."""
    v = np.arange(-5, 6)

    def var(b):
        w = np.exp(-b * v**2)
        return (w * v**2).sum() / w.sum() - 3.0

    b = brentq(var, 1e-6, 5.0)
    w = np.exp(-b * v**2)
    assert_allclose(pt.transition_matrix()[8, 3:14], w / w.sum(), atol=2e-6)


def test_transition_pmf_sf_and_large_counts(pt):
    T = pt.transition_matrix()
    k = np.arange(T.shape[1])
    assert_allclose(pt.transition_pmf(k[None, :], np.arange(9)[:, None]), T)
    # counts above ncat reuse the last row's noise
    assert_allclose(pt.transition_pmf(np.arange(95, 106), 100), T[8, 3:14])
    assert_allclose(pt.transition_sf(k, 4), T[4, ::-1].cumsum()[::-1][1:].tolist() + [0.0])
    assert_allclose(pt.transition_sf(101, 100), T[8, 10:].sum())


def test_uniform_key_lookup_follows_intervals(pt):
    df = pt.to_frame("sdc")
    row = df[df.i == 4]
    mid = ((row.p_int_lb + row.p_int_ub) / 2).to_numpy()
    assert_array_equal(pt.released(np.full(mid.size, 4), mid), row.j.to_numpy())
    # all released values of a large count stay within D
    u = np.random.default_rng(0).random(2000)
    rel = pt.released(np.full(2000, 500), u)
    assert np.abs(rel - 500).max() <= 5


def test_sdc_roundtrip(tmp_path, pt):
    path = tmp_path / "pt.csv"
    pt.write(path)
    back = PTable.read(path)
    assert list(back.to_frame().columns) == ["i", "j", "p", "v", "p_int_lb", "p_int_ub"]
    assert_allclose(back.transition_matrix(), pt.transition_matrix(), atol=1e-12)


def test_ons_10_5_rule():
    ons = PTable.read(ONS)
    assert ons.layout == "ons" and ons.ncat == 750 and ons.n_keys == 256 and ons.cycle == 250
    rng = np.random.default_rng(5)
    n = np.r_[np.arange(0, 3000), rng.integers(0, 10**6, 2000)]
    keys = rng.integers(0, 256, n.size)
    rel = ons.released(n, keys)
    assert np.all(rel[n < 10] == 0)
    assert np.all(rel[n >= 10] >= 10)
    assert np.all(rel % 5 == 0)
    assert np.all(np.abs(rel - n)[n >= 10] <= 2)  # rounding to the nearest multiple of 5
    # rows 501..750 are reused as ((n - 1) mod 250) + 501
    assert_array_equal(ons.row_of([750, 751, 1000, 1001, 1251]), [750, 501, 750, 501, 501])
    # written in the ONS layout, the file is the same table
    frame = ons.to_frame("ons")
    assert frame.shape == (750 * 256, 3)


def test_ons_roundtrip(tmp_path):
    ons = PTable.read(ONS)
    ons.write(tmp_path / "o.csv", layout="ons")
    back = PTable.read(tmp_path / "o.csv")
    assert_allclose(back.transition_matrix(), ons.transition_matrix())


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"D": 0, "V": 3}, InvalidArgumentError, "'D' parameter"),
        ({"D": 5, "V": -1}, InvalidArgumentError, "'V' parameter"),
        ({"D": 5, "V": 3, "js": -1}, InvalidArgumentError, "'js' parameter"),
        ({"D": 5, "V": 3, "js": 1.5}, InvalidArgumentError, "'js' parameter"),
    ],
)
def test_generate_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        PTable.generate(**kwargs)


def test_bad_tables(tmp_path):
    with pytest.raises(DataError, match="sums to"):
        PTable([[1.0, 0.0], [0.5, 0.4]])
    with pytest.raises(DataError, match="row 0"):
        PTable([[0.5, 0.5], [0.5, 0.5]])
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="unknown ptable layout"):
        PTable.read(p)


def test_matches_independent_r_solution(pt):
    """Each row against NLopt's SLSQP in R (tests/reference/ptable/make_fixtures.R)."""
    import pandas as pd

    ref = pd.read_csv(Path(__file__).resolve().parents[1] / "reference" / "ptable" / "ptable_D5_V3_js2.csv")
    T = pt.transition_matrix()
    assert_allclose(T[ref.i, ref.j], ref.p, atol=1e-6)
    assert (T > 0).sum() == len(ref)


@pytest.mark.parametrize("params", [dict(D=5, V=3), dict(D=3, V=1.5, js=1), dict(D=4, V=2, ncat=8)])
def test_transition_moments_from_the_rows_equal_the_sums_over_the_support(params):
    from cellsafe.mechanisms import CellKeyMethod
    from cellsafe.mechanisms._base import CellwiseMechanism

    mech = CellKeyMethod(PTable.generate(**params))
    j = np.array([0, 1, 2, 3, 4, 5, 6, 7, 9, 13, 100, 2_001])
    assert_allclose(mech.transition_mean(j), CellwiseMechanism.transition_mean(mech, j), rtol=0, atol=1e-9)
    assert_allclose(mech.transition_var(j), CellwiseMechanism.transition_var(mech, j), rtol=0, atol=1e-7)

"""Empirical table metrics: exact small cases, and agreement with the a priori values on esc_like."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from cellsafe import CountTable, Variable, apriori
from cellsafe.distributions import NBI, Poisson
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms.saturated import SaturatedSynthesizer
from cellsafe.metrics import hellinger_distance, table_metrics, tau

V = [Variable("a", tuple(range(4))), Variable("b", ("x", "y"))]


def _dense(t: CountTable) -> np.ndarray:
    return t.dense().reshape(-1).astype(float)


def test_small_table_by_hand():
    f = CountTable(V, [0, 1, 2, 5], [1, 1, 2, 10])
    g1 = CountTable(V, [0, 2, 3, 5], [1, 2, 1, 11])
    g2 = CountTable(V, [1, 5, 7], [2, 9, 1])
    r = table_metrics(f, [g1, g2], k=[0, 1, 2], p=[5, 10, 50])
    F = _dense(f)
    for i, g in enumerate([g1, g2], start=1):
        G = _dense(g)
        row = r.per_implicate.loc[i]
        assert row["squared_error"] == np.sum((G - F) ** 2)
        assert row["hellinger_distance"] == pytest.approx(hellinger_distance(F, G))
        assert row["hellinger_utility"] == pytest.approx(1 - hellinger_distance(F, G) / math.sqrt(F.sum()))
        for k in (0, 1, 2):
            both = np.sum((F == k) & (G == k))
            assert row[f"tau1({k})"] == np.mean(G == k)
            assert row[f"tau2({k})"] == np.mean(F == k)
            assert row[f"tau3({k})"] == both / np.sum(F == k)
            if np.sum(G == k):
                assert row[f"tau4({k})"] == both / np.sum(G == k)
            else:
                assert np.isnan(row[f"tau4({k})"])
        for p in (5, 10, 50):
            ok = np.where(F > 0, np.abs(G - F) <= p / 100 * F, G == 0)
            assert row[f"within_all({p:g})"] == ok.mean()
            assert row[f"within_nonzero({p:g})"] == ok[F > 0].mean()
    mean_g = (_dense(g1) + _dense(g2)) / 2
    assert r.squared_error_of_mean == pytest.approx(np.sum((mean_g - F) ** 2))
    assert r.m == 2 and r.n_cells == 8
    assert r.tau.at[1, "tau1"] == pytest.approx((np.mean(_dense(g1) == 1) + np.mean(_dense(g2) == 1)) / 2)
    assert r.sd("squared_error") == pytest.approx(np.std(r.per_implicate["squared_error"], ddof=1))
    d = r.to_dict()
    assert set(d["tau"]["1"]) == {"tau1", "tau2", "tau3", "tau4"}
    assert {"squared_error", "total", "hellinger_utility", "within_p"} <= set(d)


def test_trimmed_mean_pct_diff():
    v = [Variable("a", tuple(range(10)))]
    f = CountTable(v, np.arange(10), np.full(10, 10))
    g = CountTable(v, np.arange(10), [1, 9, 10, 10, 10, 10, 10, 11, 12, 100])
    r = table_metrics(f, g, trim=0.1)
    pct = np.array([-90, -10, 0, 0, 0, 0, 0, 10, 20, 900], dtype=float)
    assert r.trimmed_mean_pct_diff == pytest.approx(np.mean(np.sort(pct)[1:-1]))


def test_structural_zeros_and_identity():
    f = CountTable(V, [0, 1, 5], [3, 1, 2], structural_zeros=[7])
    r = table_metrics(f, f)
    assert r.n_cells == 7
    assert r.squared_error == 0 and r.hellinger_utility == 1.0
    assert r.tau.at[0, "tau3"] == 1.0 and r.tau.at[1, "tau4"] == 1.0
    assert_allclose(r.within["all"], 1.0)
    assert math.isnan(r.sd("squared_error"))
    assert tau(f, f, k=[1]).at[1, "tau3"] == 1.0


def test_bad_input():
    f = CountTable(V, [0], [1])
    other = CountTable([Variable("a", tuple(range(4))), Variable("c", ("x", "y"))], [0], [1])
    with pytest.raises(DataError, match="same variables|original's variables"):
        table_metrics(f, other)
    with pytest.raises(InvalidArgumentError, match="non-empty"):
        table_metrics(f, [])
    with pytest.raises(InvalidArgumentError, match="counts >= 0"):
        table_metrics(f, f, k=[-1])
    with pytest.raises(InvalidArgumentError, match="counts >= 0"):
        table_metrics(f, f, k=[float("inf")])
    with pytest.raises(InvalidArgumentError, match="percentages"):
        table_metrics(f, f, p=[-1])
    with pytest.raises(InvalidArgumentError, match="unknown metric"):
        table_metrics(f, f).mean("tau5(1)")


# ---------------------------------------------------------------------- against the a priori values
@pytest.fixture(scope="module")
def esc():
    from cellsafe.datasets import esc_like

    return esc_like()


def _se_tau(cs: apriori.CellSizes, mech, k: int, m: int) -> tuple[float, float, float]:
    """Standard errors of the mean over m implicates of tau1(k), tau3(k), tau4(k)."""
    p = mech.transition_pmf(k, cs.values)
    w = cs.cells
    n = cs.n_cells
    is_k = cs.values == k
    var_count = float(w @ (p * (1 - p)))
    se1 = math.sqrt(var_count / m) / n
    wk = float(w[is_k].sum())
    pk = float(p[is_k].sum()) if is_k.any() else 0.0
    se3 = math.sqrt(pk * (1 - pk) / (wk * m)) if wk else math.nan
    a = wk * pk  # E #(f = k and released k)
    c = float(w[~is_k] @ p[~is_k])  # E #(f != k and released k)
    var_a = wk * pk * (1 - pk)
    var_c = float(w[~is_k] @ (p[~is_k] * (1 - p[~is_k])))
    se4 = math.sqrt((c**2 * var_a + a**2 * var_c) / (a + c) ** 4 / m)
    return se1, se3, se4


@pytest.mark.slow
@pytest.mark.parametrize(
    "mech",
    [SaturatedSynthesizer(NBI(1.0), alpha=0.02), SaturatedSynthesizer(Poisson())],
    ids=["nbi1-alpha0.02", "poisson"],
)
def test_empirical_agrees_with_apriori(esc, mech):
    m = 3
    released = mech.sample(esc, m=m, rng=20261122)
    emp = table_metrics(esc, released, k=[0, 1, 2, 3], p=[1, 10, 50])
    cs = apriori.cell_sizes(esc)
    a = apriori.assess(cs, mech, k=[0, 1, 2, 3], p=[1, 10, 50])
    for k in range(4):
        se1, se3, se4 = _se_tau(cs, mech, k, m)
        assert abs(emp.tau.at[k, "tau1"] - a.tau.at[k, "tau1"]) < 3 * se1, k
        assert emp.tau.at[k, "tau2"] == pytest.approx(a.tau.at[k, "tau2"], rel=1e-12)
        if 0 < a.tau.at[k, "tau3"] < 1:
            assert abs(emp.tau.at[k, "tau3"] - a.tau.at[k, "tau3"]) < 3 * se3, k
        else:
            assert emp.tau.at[k, "tau3"] == a.tau.at[k, "tau3"]
        assert abs(emp.tau.at[k, "tau4"] - a.tau.at[k, "tau4"]) < 3 * se4, k
    # squared error: Var of sum (K - j)^2 from the exact fourth moments
    e2, e4 = apriori._row_sums(
        mech, cs.values, 1e-12, (lambda k, j: (k - j) ** 2, lambda k, j: (k - j) ** 4)
    )
    se_loss = math.sqrt(float(cs.cells @ (e4 - e2**2)) / m)
    assert abs(emp.squared_error - a.squared_error.per_implicate) < 3 * se_loss
    # Hellinger distance: sd of HD ~ sd(HD^2) / (2 HD)
    se_h = a.hellinger.sd_distance_squared / (2 * a.hellinger.distance) / math.sqrt(m)
    assert abs(emp.hellinger_distance - a.hellinger.distance) < 3 * se_h
    # synthetic total
    assert abs(emp.mean("total") - a.total_distribution.expected) < 3 * a.total_distribution.sd / math.sqrt(m)
    # within p%: a sum of independent indicators per cell
    for p in (1.0, 10.0, 50.0):
        lo, hi = apriori._within_bounds(cs.values, p)
        q = mech.transition_sf(lo - 1, cs.values) - mech.transition_sf(hi, cs.values)
        se_all = math.sqrt(float(cs.cells @ (q * (1 - q))) / m) / cs.n_cells
        assert abs(emp.within.at[p, "all"] - a.within.at[p, "all"]) < 3 * se_all

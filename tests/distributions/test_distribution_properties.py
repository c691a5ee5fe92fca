"""Published values, invariants, moments and tails of the count distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.distributions import GAF, NBI, PIG, CountDistribution, Poisson, make_distribution

FAMILIES = [
    Poisson(),
    NBI(sigma=0.5),
    NBI(sigma=10.0),
    PIG(sigma=0.5),
    PIG(sigma=10.0),
    GAF(sigma=1.0, nu=0.0),
    GAF(sigma=0.5, nu=-0.5),
    GAF(sigma=2.0, nu=1.0),
]


# ---------------------------------------------------------------- published values (methods.md s. 2)
def test_published_pmf_values() -> None:
    # 003 Table 4 / methods.md: tau3(1) = P(1 | 1) for alpha = 0.
    assert round(PIG(sigma=10.0).pmf(1, 1.0), 5) == 0.15251
    assert NBI(sigma=1.0).pmf(1, 1.0) == pytest.approx(0.25, rel=1e-14)
    assert Poisson().pmf(1, 1.0) == pytest.approx(math.exp(-1.0), rel=1e-15)
    assert round(Poisson().pmf(1, 1.0), 5) == 0.36788


def test_pig_closed_forms_at_zero_and_one() -> None:
    sigma, mu = 10.0, 1.0
    p0 = math.exp((1.0 - math.sqrt(1.0 + 2.0 * sigma * mu)) / sigma)
    assert PIG(sigma).pmf(0, mu) == pytest.approx(p0, rel=1e-14)
    assert PIG(sigma).pmf(1, mu) == pytest.approx(p0 * mu / math.sqrt(1.0 + 2.0 * sigma * mu), rel=1e-14)


@pytest.mark.parametrize("sigma", [1e-4, 0.05, 1.0, 10.0, 100.0])
@pytest.mark.parametrize("mu", [1e-3, 0.7, 25.0, 300.0])
def test_pig_three_term_recursion(sigma: float, mu: float) -> None:
    # P(y) = A (1 - 3/(2y)) P(y-1) + B P(y-2) / (y (y-1)), A = 2 sigma mu/(1+2 sigma mu), B = mu^2/(1+2 sigma mu)
    y = np.arange(2, 400)
    d = PIG(sigma)
    lp = d.logpmf(np.arange(0, 400), mu)
    a = 2 * sigma * mu / (1 + 2 * sigma * mu)
    b = mu * mu / (1 + 2 * sigma * mu)
    # divide through by P(y) to stay in range: 1 = A (1 - 3/(2y)) r1 + B r2 / (y (y-1))
    r1 = np.exp(lp[y - 1] - lp[y])
    r2 = np.exp(lp[y - 2] - lp[y])
    ok = np.isfinite(lp[y]) & (lp[y] > -600)
    assert_allclose((a * (1 - 1.5 / y) * r1 + b * r2 / (y * (y - 1)))[ok], 1.0, rtol=1e-9)


def test_pig_large_counts_use_asymptotic_bessel_consistently() -> None:
    # Orders where K_{y-1/2} overflows: the recursion still holds across the switch.
    d, mu = PIG(100.0), 0.01
    y = np.arange(2, 3000)
    lp = d.logpmf(np.arange(0, 3000), mu)
    a = 2 * 100 * mu / (1 + 2 * 100 * mu)
    b = mu * mu / (1 + 2 * 100 * mu)
    lhs = a * (1 - 1.5 / y) * np.exp(lp[y - 1] - lp[y]) + b * np.exp(lp[y - 2] - lp[y]) / (y * (y - 1))
    assert np.all(np.isfinite(lp))
    assert_allclose(lhs, 1.0, rtol=1e-9)


# ---------------------------------------------------------------- invariants
@pytest.mark.parametrize("dist", FAMILIES, ids=repr)
@pytest.mark.parametrize("mu", [1e-3, 0.3, 4.0, 60.0])
def test_sums_to_one_and_moments(dist: CountDistribution, mu: float) -> None:
    top = dist.upper_quantile(mu, tol=1e-18)
    k = np.arange(0, top + 1)
    p = dist.pmf(k, mu)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    mean = np.sum(k * p)
    assert mean == pytest.approx(dist.mean(mu), rel=1e-9, abs=1e-12)
    var = np.sum((k - mean) ** 2 * p)
    assert var == pytest.approx(dist.var(mu), rel=1e-8, abs=1e-12)
    if not isinstance(dist, GAF):
        assert dist.mean(mu) == mu
        s = dist.params().get("sigma", 0.0)
        assert dist.var(mu) == pytest.approx(mu + s * mu * mu, rel=1e-15)


@pytest.mark.parametrize("dist", FAMILIES, ids=repr)
def test_cdf_plus_sf_is_one_and_cdf_is_cumulative_pmf(dist: CountDistribution) -> None:
    mu = 3.5
    k = np.arange(0, 80)
    cdf = dist.cdf(k, mu)
    sf = dist.sf(k, mu)
    assert_allclose(cdf + sf, 1.0, rtol=1e-14)
    assert_allclose(cdf, np.cumsum(dist.pmf(k, mu)), rtol=1e-12)
    assert np.all(np.diff(cdf) >= 0)


@pytest.mark.parametrize("dist", FAMILIES, ids=repr)
def test_sf_in_far_tail_equals_sum_of_pmf(dist: CountDistribution) -> None:
    mu = 2.0
    top = dist.upper_quantile(mu, tol=1e-200)
    for k0 in [top // 4, top // 2, (3 * top) // 4]:
        tail = dist.pmf(np.arange(k0 + 1, 4 * top + 50), mu)[::-1].sum()
        assert dist.sf(k0, mu) == pytest.approx(tail, rel=1e-11)


@pytest.mark.parametrize("dist", FAMILIES, ids=repr)
def test_point_mass_at_zero_and_non_integer_counts(dist: CountDistribution) -> None:
    assert dist.pmf(0, 0.0) == 1.0
    assert dist.pmf(3, 0.0) == 0.0
    assert dist.logpmf(3, 0.0) == -np.inf
    assert dist.cdf(0, 0.0) == 1.0 and dist.sf(0, 0.0) == 0.0
    assert dist.pmf(1.5, 2.0) == 0.0 and dist.logpmf(1.5, 2.0) == -np.inf
    assert dist.pmf(-1, 2.0) == 0.0
    assert dist.cdf(-1, 2.0) == 0.0 and dist.sf(-1, 2.0) == 1.0
    assert dist.cdf(2.7, 2.0) == dist.cdf(2, 2.0)
    assert dist.sf(np.inf, 2.0) == 0.0 and dist.cdf(np.inf, 2.0) == 1.0
    assert dist.mean(0.0) == 0.0 and dist.var(0.0) == 0.0
    assert dist.upper_quantile(0.0) == 0


@pytest.mark.parametrize("dist", FAMILIES, ids=repr)
def test_broadcasting_and_scalar_returns(dist: CountDistribution) -> None:
    k = np.arange(5)[:, None]
    mu = np.array([0.0, 0.5, 2.0])
    out = dist.pmf(k, mu)
    assert out.shape == (5, 3)
    for i in range(5):
        for j in range(3):
            assert out[i, j] == dist.pmf(i, float(mu[j]))
    assert isinstance(dist.pmf(1, 2.0), float)
    assert isinstance(dist.logpmf(1, 2.0), float)
    assert isinstance(dist.cdf(1, 2.0), float)
    assert isinstance(dist.sf(1, 2.0), float)
    assert isinstance(dist.mean(2.0), float) and isinstance(dist.var(2.0), float)
    assert isinstance(dist.upper_quantile(2.0), int)
    assert dist.mean([1.0, 2.0]).shape == (2,)
    assert dist.pmf([[1]], [2.0]).shape == (1, 1)


# ---------------------------------------------------------------- upper_quantile
@pytest.mark.parametrize("dist", FAMILIES, ids=repr)
@pytest.mark.parametrize("tol", [1e-6, 1e-12])
def test_upper_quantile_is_the_smallest_count_with_small_tail(dist: CountDistribution, tol: float) -> None:
    mu = np.array([1e-3, 0.5, 1.0, 7.0, 50.0, 400.0])
    q = dist.upper_quantile(mu, tol=tol)
    assert q.dtype == np.int64
    assert np.all(dist.sf(q, mu) <= tol)
    above = q > 0
    assert np.all(dist.sf(q[above] - 1, mu[above]) > tol)


# ---------------------------------------------------------------- extreme parameters
@pytest.mark.parametrize(
    "dist",
    [NBI(1e-4), NBI(100.0), PIG(1e-4), PIG(100.0), GAF(1e-4, 0.0), GAF(1e-4, 1.0), GAF(100.0, -0.5), GAF(100.0, 0.0)],
    ids=repr,
)
@pytest.mark.parametrize("mu", [1e-3, 1e6])
def test_extreme_parameters_are_finite_normalized_with_right_moments(dist: CountDistribution, mu: float) -> None:
    sigma = dist.params()["sigma"]
    if isinstance(dist, GAF):
        approx_var = sigma**2 * mu ** dist.params()["nu"] + 1.0 / 12.0
    else:
        approx_var = mu + sigma * mu * mu
    top = dist.upper_quantile(mu, tol=1e-14)
    lo = 0 if mu < 1 else max(0, int(mu - 40.0 * math.sqrt(approx_var)))
    assert dist.cdf(top, mu) + dist.sf(top, mu) == pytest.approx(1.0, rel=1e-14)
    if top - lo > 2_000_000:
        # Tails reaching ~1e9 (PIG and NBI with sigma mu = 1e8, GAF with shape ~1e-12):
        # moments from the closed forms, checked against the continuous ones.
        assert dist.mean(mu) == pytest.approx(mu, rel=1e-6)
        # the discretized GAF adds between 0 and 1/12 to the gamma's variance
        assert abs(dist.var(mu) - approx_var) <= 1.0 / 12.0 + 1e-6 * approx_var
        assert np.isfinite(dist.logpmf(top, mu)) and dist.sf(top, mu) <= 1e-14
        return
    k = np.arange(lo, top + 1)
    lp = dist.logpmf(k, mu)
    assert np.all(np.isfinite(lp[: min(10, k.size)]))
    p = np.exp(lp)
    below = dist.cdf(lo - 1, mu) if lo > 0 else 0.0
    assert below < 1e-14
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    mean = np.sum(k * p)
    assert mean == pytest.approx(dist.mean(mu), rel=1e-8, abs=1e-12)
    var = np.sum((k - mean) ** 2 * p)
    assert var == pytest.approx(dist.var(mu), rel=1e-6, abs=1e-12)


def test_gaf_moments_are_close_to_the_continuous_ones() -> None:
    # 000 section 3.2: the discretized GAF has mean about mu and variance about sigma^2 mu^nu + 1/12.
    d = GAF(sigma=1.0, nu=0.0)
    assert d.mean(10.0) == pytest.approx(10.0, abs=1e-6)
    assert d.var(10.0) == pytest.approx(1.0 + 1.0 / 12.0, rel=1e-4)
    # far from it for small mu, where most of the gamma mass rounds to 0
    assert d.mean(0.3) < 0.3
    # negligible rounding error: exact continuous values
    big = GAF(sigma=3.0, nu=0.0)
    assert big.mean(1000.0) == 1000.0
    assert big.var(1000.0) == 9.0 + 1.0 / 12.0


def test_make_distribution() -> None:
    assert make_distribution("Poisson") == Poisson()
    assert make_distribution("NBI", sigma=0.5) == NBI(0.5)
    assert make_distribution("pig", sigma=2) == PIG(2)
    assert make_distribution("GAF", sigma=1.0) == GAF(1.0, 0.0)
    assert make_distribution("gaf", sigma=1.0, nu=-0.5) == GAF(1.0, -0.5)
    assert make_distribution("nbi", sigma=0.5).name == "nbi"
    assert GAF(1.0, -0.5).params() == {"sigma": 1.0, "nu": -0.5}
    assert Poisson().params() == {}


def test_values_are_hashable_and_immutable() -> None:
    d = NBI(0.5)
    assert hash(d) == hash(NBI(0.5))
    with pytest.raises(AttributeError):
        d.sigma = 1.0  # type: ignore[misc]
    assert repr(GAF(1.0, -0.5)) == "GAF(sigma=1.0, nu=-0.5)"
    assert_array_equal(Poisson().sample([0.0, 0.0]), [0, 0])


@pytest.mark.parametrize(("sigma", "mu"), [(100.0, 150.0), (10.0, 1500.0)])
def test_pig_long_tails_by_mixing_integral_agree_with_summation(sigma: float, mu: float) -> None:
    # 2 sigma mu > 2e4: cdf and sf come from E_g[P(k + 1, mu g)] instead of summing ~1e6 terms.
    d = PIG(sigma)
    k = np.array([0.0, 3.0, mu, 10 * mu, 60 * mu])
    m = np.full(k.shape, mu)
    assert d._long_tail(m).all()
    cdf_sum, sf_sum = d._cdf_sf_by_summation(k, m)
    assert_allclose(d.sf(k, m), sf_sum, rtol=1e-10)
    assert_allclose(d.cdf(k, m), cdf_sum, rtol=1e-10)

"""Hellinger rows from fractional moments (Laplace transform) against sums over counts of independent pmfs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from cellsafe import apriori
from cellsafe.apriori._fractional import MAX_CANCELLATION, fractional_moments, hellinger_rows
from cellsafe.apriori._rows import _moments
from cellsafe.distributions import GAF, NBI, PIG, Poisson
from cellsafe.mechanisms import SaturatedSynthesizer


def _scipy_pmf(dist, k, mu):
    if isinstance(dist, Poisson):
        return stats.poisson.pmf(k, mu)
    n = 1.0 / dist.sigma
    return stats.nbinom.pmf(k, n, n / (n + mu))


def _pig_pmf_by_mixing(k, mu, sigma):
    """P(k) = int Poisson(k; mu g) IG(g; mean 1, shape 1/sigma) dg, by adaptive quadrature (no Bessel function)."""
    ig = stats.invgauss(mu=sigma, scale=1.0 / sigma)  # mean 1, shape 1/sigma

    def one(kk):
        f = lambda g: stats.poisson.pmf(kk, mu * g) * ig.pdf(g)  # noqa: E731
        peak = max(kk / mu, 1e-3)
        return (
            integrate.quad(f, 0.0, peak, epsabs=0.0, epsrel=1e-12, limit=400)[0]
            + integrate.quad(f, peak, np.inf, epsabs=0.0, epsrel=1e-12, limit=400)[0]
        )

    return np.array([one(kk) for kk in k])


def _moments_by_sums(p, k):
    return (p * np.sqrt(k)).sum(), (p * k * np.sqrt(k)).sum(), p.sum()


@pytest.mark.parametrize("dist", [Poisson(), NBI(1.0), NBI(0.1), NBI(5.0), NBI(0.01)])
@pytest.mark.parametrize("mu", [0.01, 0.7, 3.0, 40.0, 900.0])
def test_fractional_moments_equal_sums_of_scipys_pmf(dist, mu):
    mean, var = np.array([mu]), np.asarray(dist.var(mu), dtype=float).reshape(1)
    k = np.arange(
        int(mu + 60.0 * math.sqrt(var[0]) + 200.0) * (25 if getattr(dist, "sigma", 0) >= 5 else 1), dtype=float
    )
    half_ref, three_ref, mass = _moments_by_sums(_scipy_pmf(dist, k, mu), k)
    assert mass == pytest.approx(1.0, abs=1e-12)
    mech_mu = SaturatedSynthesizer(dist)
    mech_mu._mu = lambda j: np.full(np.shape(j), mu)  # the row's mean is mu whatever j
    half, three = fractional_moments(mech_mu, np.array([1]), mean, var + mean**2)
    assert half[0] == pytest.approx(half_ref, rel=1e-12)
    assert three[0] == pytest.approx(three_ref, rel=1e-12)


@pytest.mark.parametrize("sigma, mu", [(1.0, 3.0), (4.0, 0.5)])
def test_pig_fractional_moments_equal_the_mixture_integrated(sigma, mu):
    dist = PIG(sigma)
    k = np.arange(0.0, 400.0 if sigma < 4 else 2000.0)
    some = k[:120:6]
    np.testing.assert_allclose(dist.pmf(some, mu), _pig_pmf_by_mixing(some, mu, sigma), rtol=1e-8, atol=1e-300)
    p_all = dist.pmf(k, mu)  # beyond the first counts the pmf checked above continues
    half_ref, three_ref, mass = _moments_by_sums(p_all, k)
    assert mass == pytest.approx(1.0, abs=1e-11)
    mech = SaturatedSynthesizer(dist)
    mech._mu = lambda j: np.full(np.shape(j), mu)
    var = float(dist.var(mu))
    half, three = fractional_moments(mech, np.array([1]), np.array([mu]), np.array([var + mu * mu]))
    assert half[0] == pytest.approx(half_ref, rel=1e-10)
    assert three[0] == pytest.approx(three_ref, rel=1e-10)


def _rows_by_sums(dist, j):
    """E[D | j], E[D^2 | j], D = (sqrt K - sqrt j)^2, by the pmf summed out to 80 standard deviations."""
    e1, e2 = [], []
    for jj in j.tolist():
        sd = math.sqrt(float(dist.var(float(jj))))
        k = np.arange(0.0, math.ceil(jj + 80.0 * sd + 300.0))
        p = dist.pmf(k, float(jj))
        d = np.square(np.sqrt(k) - math.sqrt(jj))
        e1.append((p * d).sum())
        e2.append((p * d * d).sum())
    return np.array(e1), np.array(e2)


@pytest.mark.parametrize("dist", [Poisson(), NBI(1.0), NBI(0.1), PIG(1.0), PIG(0.1)])
def test_hellinger_rows_equal_sums_over_counts(dist):
    j = np.array([0, 1, 2, 5, 17, 60, 333, 2500])
    mech = SaturatedSynthesizer(dist, alpha=0.5)
    e1, e2, ok = hellinger_rows(mech, j, _moments(mech, j))
    assert not ok[0]  # the random zeros are left to the sums over counts
    r1, r2 = _rows_by_sums(dist, j[ok])
    np.testing.assert_allclose(e1[ok], r1, rtol=1e-10)
    np.testing.assert_allclose(e2[ok], r2, rtol=1e-9)


def test_rows_that_would_cancel_are_left_to_the_sums():
    # Poisson far from zero: (sqrt k - sqrt j)^4 has mean 3/16 against terms of size j^2
    j = np.array([3, 40_000])
    mech = SaturatedSynthesizer(Poisson())
    ok = hellinger_rows(mech, j, _moments(mech, j))[2]
    assert ok.tolist() == [True, False]
    assert MAX_CANCELLATION * 3e-14 <= 1e-9
    assert not hellinger_rows(SaturatedSynthesizer(GAF(0.5, -0.25)), j, _moments(mech, j))[2].any()


@pytest.mark.parametrize("dist", [NBI(1.0), PIG(1.0), NBI(0.1), Poisson()])
def test_expected_hellinger_equals_term_by_term(dist):
    rng = np.random.default_rng(5)
    values = np.unique(rng.integers(1, 3000, 40))
    cells = rng.integers(1, 30, values.size).astype(float)
    mech = SaturatedSynthesizer(dist, alpha=0.02)
    fast = apriori.expected_hellinger({0: 20_000.0, **dict(zip(values.tolist(), cells.tolist()))}, mech)
    # sums over counts, the random zeros (mean alpha) included
    r1, r2 = _rows_by_sums(dist, values)
    k = np.arange(0.0, 60.0)
    pz = dist.pmf(k, 0.02)
    z1, z2 = (pz * k).sum(), (pz * k * k).sum()
    mean_s = 0.5 * (r1 @ cells + 20_000.0 * z1)
    var_s = 0.25 * (np.maximum(r2 - r1**2, 0.0) @ cells + 20_000.0 * (z2 - z1**2))
    assert fast.distance_squared == pytest.approx(mean_s, rel=1e-11)
    assert fast.sd_distance_squared == pytest.approx(math.sqrt(var_s), rel=1e-9)


@pytest.mark.parametrize("sigma", [0.01, 0.1, 1.0, 5.0])
def test_pig_cdf_by_gamma_mixture_equals_the_summed_pmf(sigma):
    dist = PIG(sigma)
    mu = np.array([150.0, 937.0, 4000.0])
    k = np.concatenate([np.floor(m * np.array([0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 1.5])) for m in mu])
    means = np.repeat(mu, 7)
    got = dist.cdf_by_gamma_mixture(k, means)
    ok = ~np.isnan(got)
    assert np.array_equal(ok, (k + 1 >= 100) & (sigma * (k + 1) >= 1))
    # the reference: the pmf summed from 0 (PIG.pmf, itself checked against the mixture integrated above)
    ref = np.array([dist.pmf(np.arange(kk + 1), m).sum() for kk, m in zip(k[ok], means[ok])])
    np.testing.assert_allclose(got[ok], ref, rtol=0, atol=1e-11)


@pytest.mark.parametrize("dist", [PIG(1.0), PIG(0.1), PIG(5.0)])
def test_pig_within_equals_the_window_sums(dist, monkeypatch):
    rng = np.random.default_rng(6)
    sizes = {0: 20_000.0, **{int(v): float(c) for v, c in zip(rng.integers(1, 3000, 60), rng.integers(1, 30, 60))}}
    mech = SaturatedSynthesizer(dist, alpha=0.02)
    fast = apriori.expected_within(sizes, mech)
    monkeypatch.setattr("cellsafe.apriori._utility._mixture_cdf", lambda m: None)
    exact = apriori.expected_within(sizes, mech)
    np.testing.assert_allclose(fast.to_numpy(), exact.to_numpy(), rtol=0, atol=1e-12)

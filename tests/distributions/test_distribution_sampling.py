"""Samplers at fixed seeds: frequencies against the pmf, moments within standard errors."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy import stats

from cellsafe.distributions import GAF, NBI, PIG, CountDistribution, Poisson

N_DRAWS = 40_000
CASES = [
    (Poisson(), 0.3),
    (Poisson(), 12.0),
    (NBI(0.1), 3.0),
    (NBI(2.0), 8.0),
    (PIG(0.5), 1.0),
    (PIG(10.0), 5.0),
    (PIG(1e-3), 30.0),
    (GAF(1.0, 0.0), 10.0),
    (GAF(0.5, -0.5), 2.0),
    (GAF(2.0, 1.0), 0.7),
    (GAF(0.05, 0.0), 4.0),
    (GAF(0.3, 0.0), 4.0),
]
IDS = [f"{d!r}-mu={mu}" for d, mu in CASES]


def _central_moments(dist: CountDistribution, mu: float) -> tuple[float, float, float]:
    top = dist.upper_quantile(mu, tol=1e-16)
    k = np.arange(0, top + 1)
    p = dist.pmf(k, mu)
    mean = float(np.sum(k * p))
    var = float(np.sum((k - mean) ** 2 * p))
    m4 = float(np.sum((k - mean) ** 4 * p))
    return mean, var, m4


@pytest.mark.parametrize(("dist", "mu"), CASES, ids=IDS)
def test_frequencies_match_pmf(dist: CountDistribution, mu: float) -> None:
    draws = dist.sample(np.full(N_DRAWS, mu), rng=20240611)
    assert draws.dtype == np.int64 and draws.shape == (N_DRAWS,)
    assert draws.min() >= 0
    # bins 0..K with expected count >= 5 each, and one bin for k > K
    top = dist.upper_quantile(mu, tol=1e-9)
    k = np.arange(0, top + 1)
    expected = N_DRAWS * dist.pmf(k, mu)
    keep = np.flatnonzero(expected >= 5.0)
    cut = int(keep.max())
    observed = np.bincount(np.minimum(draws, cut + 1), minlength=cut + 2)[: cut + 2]
    exp_bins = np.append(expected[: cut + 1], N_DRAWS * dist.sf(cut, mu))
    # pool small bins below the cut into their neighbour
    small = exp_bins < 5.0
    if small.any():
        groups = np.cumsum(~small) - 1
        groups[groups < 0] = 0
        observed = np.bincount(groups, weights=observed)
        exp_bins = np.bincount(groups, weights=exp_bins)
    exp_bins *= observed.sum() / exp_bins.sum()
    if observed.size < 2:  # (nearly) a point mass: every draw in the one bin
        assert observed[0] == N_DRAWS
        return
    result = stats.chisquare(observed, exp_bins)
    assert result.pvalue > 1e-4, (observed, exp_bins)


@pytest.mark.parametrize(("dist", "mu"), CASES, ids=IDS)
def test_sample_mean_and_variance_within_five_standard_errors(dist: CountDistribution, mu: float) -> None:
    draws = dist.sample(np.full(N_DRAWS, mu), rng=7).astype(np.float64)
    mean, var, m4 = _central_moments(dist, mu)
    assert mean == pytest.approx(dist.mean(mu), rel=1e-8, abs=1e-12)
    se_mean = np.sqrt(var / N_DRAWS)
    assert abs(draws.mean() - mean) < 5.0 * se_mean
    se_var = np.sqrt((m4 - var**2) / N_DRAWS)
    assert abs(draws.var(ddof=1) - var) < 5.0 * se_var


@pytest.mark.parametrize(("dist", "mu"), CASES[::3], ids=IDS[::3])
def test_sampling_is_reproducible_and_respects_zero_means(dist: CountDistribution, mu: float) -> None:
    mus = np.array([[0.0, mu, 2 * mu], [mu, 0.0, 0.5]])
    a = dist.sample(mus, rng=3)
    b = dist.sample(mus, rng=np.random.SeedSequence(3))
    c = dist.sample(mus, rng=np.random.default_rng(np.random.SeedSequence(3)))
    assert a.shape == mus.shape and a.dtype == np.int64
    assert_array_equal(a, b)
    assert_array_equal(a, c)
    assert a[0, 0] == 0 and a[1, 1] == 0
    many = dist.sample(np.full(2000, mu), rng=1)
    assert not np.array_equal(many, dist.sample(np.full(2000, mu), rng=2))
    scalar = dist.sample(mu, rng=5)
    assert scalar.shape == () and scalar.dtype == np.int64


def test_gaf_sample_is_rounded_gamma() -> None:
    d = GAF(1.5, -0.25)
    mu = np.full(1000, 3.3)
    s, theta = d.shape_scale(mu)
    w = np.random.Generator(np.random.PCG64(np.random.SeedSequence(11))).gamma(s, theta)
    assert_array_equal(d.sample(mu, rng=11), np.floor(w + 0.5).astype(np.int64))

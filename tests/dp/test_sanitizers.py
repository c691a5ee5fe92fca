"""Sanitizers: calibrations against their defining formulas, draws against their distributions."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from cellsafe.dp import (
    discrete_gaussian_mechanism,
    discrete_gaussian_sigma,
    gaussian_mechanism,
    gaussian_sigma,
    geometric_mechanism,
    laplace_mechanism,
    sanitize,
)
from cellsafe.distributions import DiscreteGaussian, DiscreteLaplace, NoiseOverflowError
from cellsafe.dp._sanitizers import _discrete_delta
from cellsafe.exceptions import InvalidArgumentError

N = 40_000
REF = Path(__file__).resolve().parents[1] / "reference" / "dp"


def _gof_discrete(draws, pmf):
    """Chi-square p-value on the bins of expected count >= 5 (fixed by the pmf), the rest pooled."""
    k = np.arange(-10_000, 10_001)
    expected = pmf(k) * draws.size
    k_in = k[expected >= 5]
    obs = np.array([(draws == v).sum() for v in k_in], dtype=float)
    exp = expected[expected >= 5]
    obs = np.r_[obs, draws.size - obs.sum()]
    exp = np.r_[exp, draws.size - exp.sum()]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def test_geometric_noise_is_the_discrete_laplace():
    # the geometric mechanism's noise, at the published pmf (1 - q) / (1 + q) q^|k|, q = exp(-epsilon / Delta)
    x = geometric_mechanism(np.zeros(N, dtype=np.int64), epsilon=0.5, rng=123)
    q = math.exp(-0.5)
    assert _gof_discrete(x, lambda k: (1 - q) / (1 + q) * q ** np.abs(k)) > 1e-3


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 10.0])
def test_discrete_gaussian_distribution(sigma):
    draws = DiscreteGaussian(sigma).sample(N, rng=7)
    assert _gof_discrete(draws, DiscreteGaussian(sigma).pmf) > 1e-3


def test_laplace_distribution():
    x = laplace_mechanism(np.zeros(N), epsilon=0.5, sensitivity=2.0, rng=1)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 1e-3


def test_gaussian_distribution():
    sigma = gaussian_sigma(0.5, 1e-5, 1.0, "classical")
    x = gaussian_mechanism(np.zeros(N), 0.5, 1e-5, 1.0, calibration="classical", rng=2)
    assert stats.kstest(x, stats.norm(scale=sigma).cdf).pvalue > 1e-3


def test_geometric_mechanism_distribution():
    x = geometric_mechanism(np.full(N, 10), epsilon=1.0, sensitivity=2, rng=5) - 10
    assert _gof_discrete(x, DiscreteLaplace(2.0).pmf) > 1e-3


def test_secure_rng_draws_from_os():
    a = laplace_mechanism(np.zeros(1000), 1.0, rng="secure")
    b = laplace_mechanism(np.zeros(1000), 1.0, rng="secure")
    assert not np.array_equal(a, b)
    g = geometric_mechanism(np.zeros(5000, dtype=np.int64), 1.0, rng="secure")
    # variance of the two-sided geometric with q = e^-1: 2q / (1 - q)^2
    q = math.exp(-1)
    var = 2 * q / (1 - q) ** 2
    assert abs(g.var() - var) < 5 * var * math.sqrt(2 / 5000) * 3
    d = discrete_gaussian_mechanism(np.zeros(10, dtype=np.int64), 1.0, 1e-6, rng="secure")
    assert d.dtype == np.int64


def test_same_seed_same_noise():
    assert np.array_equal(laplace_mechanism([1.0, 2.0], 1.0, rng=4), laplace_mechanism([1.0, 2.0], 1.0, rng=4))
    assert np.array_equal(sanitize([3, 4], 1.0, rng=4), sanitize([3, 4], 1.0, rng=4))


# ---------------------------------------------------------------------- calibrations
def test_classical_gaussian_sigma_formula():
    # 002 section 7.6.3: sigma = Delta_2 sqrt(2 log(1.25 / delta)) / epsilon
    assert gaussian_sigma(0.1, 1e-7, 1.0, "classical") == pytest.approx(math.sqrt(2 * math.log(1.25e7)) / 0.1)
    with pytest.raises(InvalidArgumentError, match="analytic"):
        gaussian_sigma(2.0, 1e-5, calibration="classical")


@pytest.mark.parametrize("eps,delta,sens", [(0.1, 1e-7, 1.0), (0.5, 1e-5, 2.0), (1.0, 1e-6, 1.0), (4.0, 1e-9, 3.0)])
def test_analytic_gaussian_meets_balle_wang_condition(eps, delta, sens):
    s = gaussian_sigma(eps, delta, sens, "analytic")

    def profile(sig):
        return special.ndtr(sens / (2 * sig) - eps * sig / sens) - math.exp(eps) * special.ndtr(
            -sens / (2 * sig) - eps * sig / sens
        )

    assert profile(s) == pytest.approx(delta, rel=1e-6)
    assert profile(s * 0.999) > delta
    if eps < 1:
        assert s < gaussian_sigma(eps, delta, sens, "classical")


def test_analytic_gaussian_matches_r_fixture():
    ref = pd.read_csv(REF / "analytic_gaussian.csv")
    for row in ref.itertuples():
        assert gaussian_sigma(row.eps, row.delta, row.sens) == pytest.approx(row.sigma, rel=1e-8)


@pytest.mark.parametrize("eps,delta,sens", [(0.5, 1e-5, 1), (1.0, 1e-6, 2), (2.0, 1e-3, 1)])
def test_discrete_gaussian_sigma_meets_profile(eps, delta, sens):
    s = discrete_gaussian_sigma(eps, delta, sens)
    assert _discrete_delta(s, eps, sens) <= delta
    assert _discrete_delta(s * 0.99, eps, sens) > delta
    # close to the continuous analytic calibration
    assert s == pytest.approx(gaussian_sigma(eps, delta, sens), rel=0.05)


def test_discrete_gaussian_vector_calibration_is_conservative():
    s_vec = discrete_gaussian_sigma(1.0, 1e-6, math.sqrt(2), dimension=5)
    assert s_vec > gaussian_sigma(1.0, 1e-6, math.sqrt(2))


# ---------------------------------------------------------------------- defaults and bad input
def test_sanitize_defaults():
    assert sanitize(np.array([5, 6]), 1.0, rng=1).dtype == np.int64
    assert sanitize(np.array([5, 6]), 1.0, delta=1e-6, rng=1).dtype == np.int64
    assert sanitize(np.array([5.5, 6.0]), 1.0, rng=1).dtype == np.float64
    assert sanitize(np.array([5.5, 6.0]), 1.0, delta=1e-6, rng=1).dtype == np.float64
    # counts held as floats (a NaN elsewhere made the column float) never get floating-point noise by default
    for counts in (np.array([5.0, 6.0]), pd.Series([5, 6, None]).to_numpy(dtype=float)):
        with pytest.raises(InvalidArgumentError, match="whole numbers held as floats"):
            sanitize(counts, 1.0, rng=1)
    assert sanitize(np.array([5.0, 6.0]), 1.0, mechanism="laplace", rng=1).dtype == np.float64  # sums, said so
    assert np.ndim(geometric_mechanism(7, 1.0, rng=1)) == 0


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: laplace_mechanism([1.0], 0.0), "epsilon"),
        (lambda: laplace_mechanism([1.0], 1.0, sensitivity=-1), "sensitivity"),
        (lambda: geometric_mechanism([1.5], 1.0), "integer"),
        (lambda: geometric_mechanism([1], 1.0, sensitivity=1.5), "sensitivity"),
        (lambda: gaussian_mechanism([1.0], 1.0, 0.0), "delta"),
        (lambda: gaussian_sigma(1.0, 1e-5, calibration="fancy"), "calibration"),
        (lambda: sanitize([1], 1.0, mechanism="geometric", delta=1e-5), "pure"),
        (lambda: sanitize([1.0], 1.0, mechanism="gaussian"), "delta > 0"),
        (lambda: sanitize([1], 1.0, mechanism="exponential"), "mechanism"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(InvalidArgumentError, match=match):
        call()


# ---------------------------------------------------------------------- exact noise at every epsilon
def test_laplace_refuses_counts():
    for call in (
        lambda: laplace_mechanism(np.array([5, 17, 0]), 1.0),
        lambda: sanitize(np.array([5, 17, 0]), 1.0, mechanism="laplace"),
    ):
        with pytest.raises(InvalidArgumentError, match="geometric"):
            call()


@pytest.mark.parametrize("epsilon", [1e-30, 1e-19])
def test_tiny_epsilon_is_a_clear_error_never_the_input(epsilon):
    # the audit's case: floating-point inversion returned [5 17 0] at 1e-30 and wrapped at 1e-19
    with pytest.raises(NoiseOverflowError, match="64-bit"):
        sanitize(np.array([5, 17, 0]), epsilon=epsilon, rng=1)


@pytest.mark.parametrize("epsilon", [1e-30, 1e-19])
def test_discrete_gaussian_vector_at_tiny_epsilon_is_calibrated_on_delta(epsilon):
    # by Canonne-Kamath-Steinke, rho-zCDP gives (epsilon ~ 0, delta) for rho ~ delta^2: finite noise
    # (Bun-Steinke's epsilon >= 2 sqrt(rho log(1/delta)) asked for sigma beyond 64 bits here)
    from cellsafe.dp import cdp_delta

    sigma = discrete_gaussian_sigma(epsilon, 1e-6, 1, dimension=3)
    assert sigma < 2.0**50
    assert cdp_delta(1 / (2 * sigma**2), epsilon) <= 1e-6
    out = discrete_gaussian_mechanism(np.array([5, 17, 0]), epsilon, 1e-6, rng=1)
    assert out.dtype == np.int64


@pytest.mark.slow
def test_discrete_gaussian_at_tiny_epsilon_single_count_is_real_noise():
    # one count: the exact profile needs sigma ~ 0.4 / delta whatever epsilon (delta dominates)
    sigma = discrete_gaussian_sigma(1e-30, 1e-3)
    assert 350 < sigma < 450
    out = np.array([discrete_gaussian_mechanism(5, 1e-30, 1e-3, rng=i) for i in range(300)])
    assert 0.8 * sigma < out.std() < 1.2 * sigma


@pytest.mark.parametrize("epsilon", [1e-10, 1e-3, 1.0])
def test_geometric_mechanism_variance_at_every_epsilon(epsilon):
    # 5% is 11 standard errors of the sample variance at n = 200,000 (kurtosis of the noise <= 6)
    n = 200_000
    x = geometric_mechanism(np.full(n, 5), epsilon, rng=11) - 5
    var = DiscreteLaplace.for_epsilon(epsilon).var()
    assert var == pytest.approx(2 * math.exp(-epsilon) / math.expm1(-epsilon) ** 2, rel=1e-8)
    assert abs(x.var() / var - 1) < 0.05


def test_geometric_mechanism_at_epsilon_50():
    # the variance 2 e^-50 / (1 - e^-50)^2 = 3.9e-22 cannot be estimated by sampling: no draw in a
    # million is non-zero (probability 3.9e-16); with sensitivity 50 the noise has scale 1
    assert not geometric_mechanism(np.full(1_000_000, 5), 50.0, rng=12).tolist().count(6)
    x = geometric_mechanism(np.full(200_000, 5), 50.0, sensitivity=50, rng=13) - 5
    assert abs(x.var() / DiscreteLaplace(1.0).var() - 1) < 0.05


def test_discrete_delta_matches_r_fixture():
    ref = pd.read_csv(REF / "discrete_gaussian_delta.csv")
    for row in ref.itertuples():
        assert _discrete_delta(row.sigma, row.eps, int(row.sens)) == pytest.approx(row.delta, rel=1e-9)


def test_noisy_values_never_wrap():
    with pytest.raises(NoiseOverflowError, match="64-bit"):
        geometric_mechanism(np.array([2**63 - 1, 2**63 - 1]), 1e-3, rng=1)

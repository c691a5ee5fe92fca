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
from cellsafe.dp._sanitizers import (
    _discrete_delta,
    discrete_gaussian_pmf,
    sample_discrete_gaussian,
    sample_two_sided_geometric,
    two_sided_geometric_pmf,
)
from cellsafe.exceptions import InvalidArgumentError

N = 40_000
REF = Path(__file__).resolve().parents[1] / "reference" / "dp"


def _gof_discrete(draws, pmf):
    """Chi-square p-value with the tails pooled into the end bins (expected counts >= 5)."""
    lo, hi = int(draws.min()), int(draws.max())
    k = np.arange(lo, hi + 1)
    expected = pmf(k) * draws.size
    keep = expected >= 5
    k_in = k[keep]
    obs = np.array([(draws == v).sum() for v in k_in], dtype=float)
    exp = expected[keep]
    rest_obs = draws.size - obs.sum()
    rest_exp = draws.size - exp.sum()
    obs = np.r_[obs, rest_obs]
    exp = np.r_[exp, rest_exp]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("scale", [0.4, 1.0, 3.7])
def test_two_sided_geometric_distribution(scale):
    draws = sample_two_sided_geometric(scale, size=N, rng=123)
    assert draws.dtype == np.int64
    assert _gof_discrete(draws, lambda k: two_sided_geometric_pmf(k, scale)) > 1e-3


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 10.0])
def test_discrete_gaussian_distribution(sigma):
    draws = sample_discrete_gaussian(sigma, size=N, rng=7)
    assert _gof_discrete(draws, lambda k: discrete_gaussian_pmf(k, sigma)) > 1e-3


def test_discrete_gaussian_pmf_normalized():
    k = np.arange(-200, 201)
    assert discrete_gaussian_pmf(k, 3.0).sum() == pytest.approx(1.0, abs=1e-12)


def test_laplace_distribution():
    x = laplace_mechanism(np.zeros(N), epsilon=0.5, sensitivity=2.0, rng=1)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 1e-3


def test_gaussian_distribution():
    sigma = gaussian_sigma(0.5, 1e-5, 1.0, "classical")
    x = gaussian_mechanism(np.zeros(N), 0.5, 1e-5, 1.0, calibration="classical", rng=2)
    assert stats.kstest(x, stats.norm(scale=sigma).cdf).pvalue > 1e-3


def test_geometric_mechanism_distribution():
    x = geometric_mechanism(np.full(N, 10), epsilon=1.0, sensitivity=2, rng=5) - 10
    assert _gof_discrete(x, lambda k: two_sided_geometric_pmf(k, 2.0)) > 1e-3


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
    assert sanitize(np.array([5.0, 6.0]), 1.0, rng=1).dtype == np.float64
    assert sanitize(np.array([5.0, 6.0]), 1.0, delta=1e-6, rng=1).dtype == np.float64
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

"""Discrete Laplace and discrete Gaussian: exact samplers against exact pmfs, probabilities against R."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cellsafe.distributions import DiscreteGaussian, DiscreteLaplace, NoiseOverflowError
from cellsafe.distributions import _exact
from cellsafe.exceptions import InvalidArgumentError

REF = Path(__file__).resolve().parents[1] / "reference" / "dp"
N = 100_000


def chi2_pvalue(draws: np.ndarray, pmf, support: np.ndarray) -> float:
    """Chi-square p-value on the bins of ``support`` with expected count >= 5, the rest pooled."""
    expected = np.asarray(pmf(support), dtype=float) * draws.size
    bins = support[expected >= 5]
    lo = int(bins.min())
    counts = np.bincount(np.clip(draws - lo, 0, None), minlength=int(bins.max()) - lo + 1)
    obs = counts[bins - lo].astype(float)
    # draws below lo were clipped into bin lo: count them again exactly
    obs[0] = np.sum(draws == lo)
    exp = expected[expected >= 5]
    rest_obs, rest_exp = draws.size - obs.sum(), draws.size - exp.sum()
    if rest_exp >= 5:
        obs, exp = np.r_[obs, rest_obs], np.r_[exp, rest_exp]
    else:  # too little mass outside the bins for a bin of its own: merge it into the last bin
        obs[-1] += rest_obs
        exp[-1] += rest_exp
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


# ---------------------------------------------------------------------- probabilities against R
def test_discrete_gaussian_matches_r_direct_sums():
    ref = pd.read_csv(REF / "discrete_gaussian.csv")
    for row in ref.itertuples():
        d = DiscreteGaussian(row.sigma)
        assert d._log_norm() == pytest.approx(row.log_z, rel=1e-12, abs=1e-14)
        assert d.var() == pytest.approx(row.var, rel=1e-12)
        assert d.sf(row.x) == pytest.approx(row.sf, rel=1e-9)
        assert d.cdf(-row.x - 1) == pytest.approx(row.sf, rel=1e-9)  # symmetry


def test_discrete_laplace_matches_r_direct_sums():
    ref = pd.read_csv(REF / "discrete_laplace.csv")
    for row in ref.itertuples():
        d = DiscreteLaplace(row.scale)
        assert -d._log_norm() == pytest.approx(row.log_z, rel=1e-12)
        assert d.var() == pytest.approx(row.var, rel=1e-12)
        assert d.sf(row.x) == pytest.approx(row.sf, rel=1e-10)


@pytest.mark.parametrize("dist", [DiscreteLaplace(0.4), DiscreteLaplace(7.0), DiscreteGaussian(0.3), DiscreteGaussian(3.0)])
def test_pmf_sums_to_one_and_tails_agree(dist):
    x = np.arange(-3000, 3001)
    p = dist.pmf(x)
    assert p.sum() == pytest.approx(1.0, abs=1e-14)
    for at in (-5, -1, 0, 2, 9):
        assert dist.sf(at) == pytest.approx(p[x > at].sum(), rel=1e-12, abs=1e-300)
        assert dist.cdf(at) == pytest.approx(p[x <= at].sum(), rel=1e-12, abs=1e-300)
    assert dist.pmf(0.5) == 0.0 and dist.logpmf(0.5) == -math.inf
    assert np.exp(dist.logpmf(3)) == pytest.approx(dist.pmf(3), rel=1e-14)


def test_tails_are_direct_not_one_minus_cdf():
    d = DiscreteLaplace(1.0)
    q = math.exp(-1.0)
    assert d.sf(200) == pytest.approx(q**201 / (1 + q), rel=1e-12)  # 1 - cdf would give 0
    g = DiscreteGaussian(150.0)
    assert 0 < g.sf(2000) < 1e-30
    assert g.cdf(-2001) == g.sf(2000)


def test_discrete_gaussian_theta_and_direct_series_agree():
    # sigma in [1, 100) has two routes to the normalizer and the variance: compare them
    for sigma in (1.0, 3.3, 40.0):
        d = DiscreteGaussian(sigma)
        x, g = d._direct_grid()
        assert math.log(1 + 2 * g[1:].sum()) == pytest.approx(d._log_norm(), rel=1e-13)
        assert 2 * (x**2 * g).sum() / (1 + 2 * g[1:].sum()) == pytest.approx(d.var(), rel=1e-13)


def test_discrete_gaussian_variance_is_sigma2_for_large_sigma_and_less_below_one():
    assert DiscreteGaussian(10.0).var() == pytest.approx(100.0, rel=1e-15)
    assert DiscreteGaussian(0.5).var() < 0.25


# ---------------------------------------------------------------------- exact rational parameters
def test_exact_rationals():
    assert DiscreteLaplace(0.1).exact_scale == Fraction(0.1)
    assert DiscreteLaplace(3.7).exact_scale == Fraction(3.7)
    assert DiscreteGaussian(2.5).exact_sigma2 == Fraction(25, 4)
    s = DiscreteGaussian(0.3)  # 0.3^2 as a dyadic rational needs 108 bits: rounded up
    assert s.exact_sigma2 >= Fraction(0.3) ** 2
    assert float(s.exact_sigma2 / Fraction(0.3) ** 2 - 1) < 1e-15
    big = DiscreteGaussian(1e9 + 0.1)
    assert big.exact_sigma2 >= Fraction(1e9 + 0.1) ** 2
    assert float(big.exact_sigma2 / Fraction(1e9 + 0.1) ** 2 - 1) < 1e-15


@pytest.mark.parametrize("epsilon", [1e-16, 1e-10, 1e-3, 0.1, 1.0, 50.0])
def test_for_epsilon_never_exceeds_epsilon(epsilon):
    d = DiscreteLaplace.for_epsilon(epsilon)
    guaranteed = 1 / d.exact_scale
    assert guaranteed <= Fraction(epsilon)
    assert float(1 - guaranteed / Fraction(epsilon)) < (1e-9 if epsilon >= 1e-10 else 1e-2)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: DiscreteLaplace(0.0), "scale"),
        (lambda: DiscreteLaplace(-1.0), "scale"),
        (lambda: DiscreteLaplace(float("nan")), "scale"),
        (lambda: DiscreteLaplace(True), "scale"),
        (lambda: DiscreteLaplace("2"), "scale"),
        (lambda: DiscreteLaplace(1e17), "64-bit"),
        (lambda: DiscreteLaplace.for_epsilon(1e-30), "64-bit"),
        (lambda: DiscreteLaplace.for_epsilon(0.0), "epsilon"),
        (lambda: DiscreteLaplace.for_epsilon(1.0, sensitivity=0), "sensitivity"),
        (lambda: DiscreteGaussian(0.0), "sigma"),
        (lambda: DiscreteGaussian(math.inf), "sigma"),
        (lambda: DiscreteGaussian(1e16), "64-bit"),
        (lambda: DiscreteGaussian(1.0).sample(-1), "size"),
        (lambda: DiscreteGaussian(1.0).pmf("a"), "numeric"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises(InvalidArgumentError, match=match):
        make()


def test_noise_overflow_error_is_an_invalid_argument():
    assert issubclass(NoiseOverflowError, InvalidArgumentError)


# ---------------------------------------------------------------------- samplers against pmfs
@pytest.mark.parametrize("scale", [0.4, 1.0, 3.7, 50.0])
def test_discrete_laplace_sampler(scale):
    d = DiscreteLaplace(scale)
    draws = d.sample(N, rng=20)
    assert draws.dtype == np.int64 and draws.shape == (N,)
    assert chi2_pvalue(draws, d.pmf, np.arange(-2000, 2001)) > 1e-3


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 10.0, 150.0, 1000.3])
def test_discrete_gaussian_sampler(sigma):
    # 0.3 and 1000.3 (sigma^2 with a long denominator) take the three-term acceptance, the others one fraction
    d = DiscreteGaussian(sigma)
    draws = d.sample(N, rng=21)
    assert chi2_pvalue(draws, d.pmf, np.arange(-8000, 8001)) > 1e-3


@pytest.mark.parametrize("dist", [DiscreteLaplace(0.4), DiscreteLaplace(6.0), DiscreteGaussian(0.6), DiscreteGaussian(0.9),
                                  DiscreteGaussian(1.0), DiscreteGaussian(12.0)])
def test_positive_samplers_are_the_conditional_law(dist):
    draws = dist.sample_positive(N, rng=22)
    assert draws.min() >= 1
    p_pos = dist.sf(0)
    assert chi2_pvalue(draws, lambda k: np.where(k >= 1, dist.pmf(k) / p_pos, 0.0), np.arange(0, 2000)) > 1e-3


def test_positive_discrete_gaussian_small_sigma():
    # sigma = 0.3: P(2 | >= 1) = exp(-3 / 0.18) / (1 + ...) = 5.8e-8, so 100,000 draws hold at most a few 2s
    x = DiscreteGaussian(0.3).sample_positive(N, rng=22)
    assert x.min() == 1 and x.max() <= 2 and np.sum(x == 2) <= 3


@pytest.mark.parametrize("epsilon", [1e-10, 1e-3, 1.0])
def test_discrete_laplace_variance_at_every_epsilon(epsilon):
    # kurtosis <= 6: the SE of the sample variance is <= var sqrt(5 / n) = 0.5% at n = 200,000, and 5% is 10 SE
    d = DiscreteLaplace.for_epsilon(epsilon)
    x = d.sample(200_000, rng=23)
    assert abs(x.var() / d.var() - 1) < 0.05
    assert abs(x.mean()) < 5 * math.sqrt(d.var() / x.size)


@pytest.mark.parametrize("sigma", [0.5, 3.0, 1e3, 4e5, 1e9, 1e14])
def test_discrete_gaussian_variance_at_every_scale(sigma):
    # kurtosis <= 3 here: SE of the sample variance <= var sqrt(2 / n) = 0.45% at n = 100,000
    d = DiscreteGaussian(sigma)
    x = d.sample(N, rng=24)
    assert abs(x.var() / d.var() - 1) < 0.05


def test_same_seed_same_draws_and_secure_source():
    d = DiscreteGaussian(4.0)
    assert np.array_equal(d.sample(1000, rng=5), d.sample(1000, rng=5))
    assert not np.array_equal(d.sample(1000, rng="secure"), d.sample(1000, rng="secure"))
    x = DiscreteLaplace(2.0).sample(N, rng="secure")
    assert chi2_pvalue(x, DiscreteLaplace(2.0).pmf, np.arange(-200, 201)) > 1e-4
    assert isinstance(DiscreteLaplace(2.0).sample(rng=1), int)
    assert DiscreteGaussian(2.0).sample((3, 4), rng=1).shape == (3, 4)


# ---------------------------------------------------------------------- integer kernels
def test_bernoulli_exp1_thresholds_are_exact():
    # P(K > k) = 1/k! for the stopping time of Algorithm 1 at gamma = 1, as counts of {0, ..., 20! - 1}
    f20 = math.factorial(20)
    for k in range(2, 21):
        assert _exact._K_THRESHOLDS[20 - k] * math.factorial(k) == f20


@pytest.mark.parametrize("num,den", [(0, 7), (1, 3), (5, 8), (8, 8), (2**61 - 5, 2**61)])
def test_bernoulli_exp_fraction(num, den):
    n = 200_000
    x = _exact.bernoulli_exp_fraction([(num, den)], n, np.random.default_rng(3))
    p = math.exp(-num / den)
    assert abs(x.mean() - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_bernoulli_exp_integer_and_products():
    gen = np.random.default_rng(4)
    f = np.repeat(np.arange(4), 100_000)
    x = _exact.bernoulli_exp_integer(f, gen)
    for k in range(4):
        p = math.exp(-k)
        assert abs(x[f == k].mean() - p) <= 5 * math.sqrt(p * (1 - p) / 100_000) + 1e-12
    y = _exact.bernoulli_exp_fraction([(3, 4), (2, 3)], 200_000, gen)  # exp(-1/2)
    assert abs(y.mean() - math.exp(-0.5)) <= 5 * math.sqrt(0.24 / 200_000)


def test_muldivmod_against_python_integers():
    gen = np.random.default_rng(6)
    x = gen.integers(0, 2**62, size=2000)
    y = gen.integers(0, 2**40, size=2000)
    m = gen.integers(1, 2**62, size=2000)
    q, r = _exact._muldivmod(x, y, m)
    for a, b, c, qq, rr in zip(x.tolist(), y.tolist(), m.tolist(), q.tolist(), r.tolist()):
        true_q, true_r = divmod(a * b, c)
        assert qq == min(true_q, 2**62)
        if true_q < 2**62:
            assert rr == true_r


@pytest.mark.parametrize("x", [Fraction(1, 3), Fraction(10**30, 7), Fraction(1, 10**30), Fraction(2**70 + 1, 2**69)])
def test_rational_bounds(x):
    lo = _exact.rational_at_most(x)
    assert lo <= x and lo.numerator <= 2**62 and lo.denominator <= 2**62
    if x < 2**62:
        hi = _exact.rational_at_least(x)
        assert hi >= x and hi.numerator <= 2**62 and hi.denominator <= 2**62
        assert float(hi / x - 1) < 1e-15 or x < Fraction(1, 2**40)


def test_a_draw_beyond_64_bits_is_an_error_not_a_wrap():
    with pytest.raises(NoiseOverflowError, match="64-bit"):
        _exact._floor_div_affine(np.array([0]), np.array([2**40]), 1, 2**30 + 7)


def test_secure_integers_are_uniform_in_range():
    src = _exact.SecureIntegers()
    x = src.integers(0, 6, size=60_000, dtype=np.int64)
    assert x.min() >= 0 and x.max() <= 5
    assert stats.chisquare(np.bincount(x, minlength=6)).pvalue > 1e-6
    big = src.integers(0, np.array([2**62, 3, 1]), size=3, dtype=np.int64)
    assert big[1] < 3 and big[2] == 0


@pytest.mark.parametrize("dist", [DiscreteLaplace(0.7), DiscreteGaussian(0.8), DiscreteGaussian(3.0), DiscreteGaussian(300.0)])
def test_log_tails_continue_where_tails_underflow(dist):
    x = np.arange(0, 40_000)
    with np.errstate(divide="ignore"):
        direct = np.log(dist.sf(x))
    log_sf = dist.logsf(x)
    ok = np.isfinite(direct) & (direct > -700)
    assert log_sf[ok] == pytest.approx(direct[ok], rel=1e-11)
    assert np.all(np.isfinite(log_sf)) and np.all(np.diff(log_sf) < 0)
    assert dist.logcdf(-x - 1) == pytest.approx(log_sf, rel=1e-12)


def test_exact_samplers_hold_bounded_temporaries():
    """Rejection rounds of at most 2**16 proposals: memory beyond the output stays flat in the number of draws
    (the discrete Gaussian held about 300 bytes per draw)."""
    import tracemalloc

    from cellsafe.distributions import DiscreteGaussian

    d = DiscreteGaussian(1.0)
    tracemalloc.start()
    x = d.sample(600_000, rng=3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < x.nbytes + 30 * 2**20
    assert abs(float(x.var()) - 1.0) < 0.02  # about 5 standard errors at 600,000 draws

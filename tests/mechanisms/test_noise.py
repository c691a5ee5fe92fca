"""GeometricNoise and DiscreteGaussianNoise: exact transition probabilities, privacy by enumeration, sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

import cellsafe
from cellsafe import CountTable, Variable
from cellsafe.distributions import DiscreteLaplace, NoiseOverflowError
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms import DiscreteGaussianNoise, GeometricNoise, make_mechanism

MECHANISMS = [GeometricNoise(0.7), GeometricNoise(2.0, sensitivity=3), DiscreteGaussianNoise(0.6), DiscreteGaussianNoise(2.5)]
J = [0, 1, 5, 40]


def _released_counts(mechanism, j: int, n_cells: int, rng: int) -> np.ndarray:
    """Released values of ``n_cells`` cells of original count j (j = 0: random zeros), via sample()."""
    var = [Variable("cell", [str(i) for i in range(n_cells)], public=True)]
    if j > 0:
        table = CountTable(var, np.arange(n_cells), np.full(n_cells, j))
    else:  # one non-zero cell, the rest random zeros
        table = CountTable(var, [0], [1])
    [out] = mechanism.sample(table, rng=rng)
    dense = np.zeros(n_cells, dtype=np.int64)
    dense[out.index] = out.counts
    return dense if j > 0 else dense[1:]


# ---------------------------------------------------------------------- transition probabilities
@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
@pytest.mark.parametrize("j", J)
def test_transition_pmf_sums_to_one_and_matches_sf(mechanism, j):
    k = np.arange(0, 2000)
    p = mechanism.transition_pmf(k, j)
    assert p.sum() == pytest.approx(1.0, abs=1e-13)
    for at in (0, 1, j, j + 3):
        assert mechanism.transition_sf(at, j) == pytest.approx(p[k > at].sum(), rel=1e-12, abs=1e-300)
    assert mechanism.transition_sf(-1, j) == 1.0
    assert mechanism.transition_pmf(-1, j) == 0.0
    with pytest.raises(InvalidArgumentError, match="integer counts. Got 1.5"):
        mechanism.transition_pmf(1.5, j)
    # clamping at 0 is part of P(k | j): P(0 | j) = P(N <= -j)
    assert mechanism.transition_pmf(0, j) == pytest.approx(mechanism.noise.cdf(-j), rel=1e-14)


def test_geometric_closed_forms():
    mech = GeometricNoise(0.8)
    q = math.exp(-0.8)
    j = np.arange(0, 12)
    assert mech.transition_pmf(0, j) == pytest.approx(q**j / (1 + q), rel=1e-13)
    assert mech.transition_pmf(j + 2, j) == pytest.approx((1 - q) / (1 + q) * q**2, rel=1e-13)
    k = np.arange(0, 400)
    p = mech.transition_pmf(k[None, :], j[:, None])
    mean = p @ k
    assert mech.transition_mean(j) == pytest.approx(mean, rel=1e-12)
    assert mech.transition_var(j) == pytest.approx(p @ k.astype(float) ** 2 - mean**2, rel=1e-11)
    # far from 0 the clamp is invisible: mean j, variance 2q / (1 - q)^2
    assert mech.transition_var(200)[0] == pytest.approx(2 * q / (1 - q) ** 2, rel=1e-12)


def test_geometric_moments_at_tiny_epsilon_do_not_cancel():
    mech = GeometricNoise(1e-6)
    # E = j + q / (1 - q^2) ~ j + 1 / (2 epsilon); Var ~ var(N) (1 - 1/2 ... ) stays positive and finite
    assert mech.transition_mean(0)[0] == pytest.approx(0.5e6, rel=1e-5)
    assert 0 < mech.transition_var(0)[0] < DiscreteLaplace.for_epsilon(1e-6).var()


def test_discrete_gaussian_moments_by_summation():
    mech = DiscreteGaussianNoise(1.5)
    assert mech.transition_mean(60)[0] == pytest.approx(60.0, abs=1e-9)
    assert mech.transition_var(60)[0] == pytest.approx(mech.noise.var(), rel=1e-9)


# ---------------------------------------------------------------------- privacy by exact enumeration
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 1e-3])
@pytest.mark.parametrize("sensitivity", [1, 2])
def test_geometric_privacy_loss_equals_epsilon(epsilon, sensitivity):
    mech = GeometricNoise(epsilon, sensitivity=sensitivity)
    j = np.arange(0, 51)
    k = np.arange(0, 400)
    logp = mech.transition_logpmf(k[None, :], j[:, None])
    # neighbouring data change one count by at most the sensitivity
    loss = np.abs(logp[sensitivity:] - logp[:-sensitivity]).max()
    assert loss == pytest.approx(epsilon, rel=1e-9)
    assert mech.guaranteed_epsilon <= epsilon


def test_geometric_guaranteed_epsilon_is_exact_or_reported():
    assert GeometricNoise(0.5).guaranteed_epsilon == 0.5
    tiny = GeometricNoise(1e-10)
    assert 1e-10 * (1 - 1e-9) < tiny.guaranteed_epsilon <= 1e-10
    with pytest.raises(NoiseOverflowError, match="64-bit"):
        GeometricNoise(1e-30)


@pytest.mark.parametrize("sigma", [0.8, 2.0, 5.0])
@pytest.mark.parametrize("alpha", [2, 4, 10])
def test_discrete_gaussian_renyi_divergence_is_alpha_rho(sigma, alpha):
    # zCDP statement: D_alpha(P(.|j) || P(.|j+1)) <= alpha / (2 sigma^2), with equality where the clamp is invisible
    mech = DiscreteGaussianNoise(sigma)
    j = np.arange(0, 51)
    k = np.arange(0, 200)
    logp = mech.transition_logpmf(k[None, :], j[:, None])
    bound = mech.renyi_divergence(alpha)
    assert bound == pytest.approx(alpha / (2 * sigma**2), rel=1e-15)
    for a, b in ((logp[:-1], logp[1:]), (logp[1:], logp[:-1])):
        div = special.logsumexp(alpha * a + (1 - alpha) * b, axis=1) / (alpha - 1)
        assert div.max() <= bound * (1 + 1e-9)
        assert div[-1] == pytest.approx(bound, rel=1e-9)


# ---------------------------------------------------------------------- sampling
@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
@pytest.mark.parametrize("j", J)
def test_sampler_agrees_with_transition_pmf(mechanism, j):
    n = 60_000
    x = _released_counts(mechanism, j, n, rng=31 + j)
    k = np.arange(0, int(x.max()) + 1)
    expected = mechanism.transition_pmf(k, j) * x.size
    obs = np.bincount(x, minlength=k.size).astype(float)
    keep = expected >= 5
    o = np.r_[obs[keep], obs[~keep].sum()]
    e = np.r_[expected[keep], x.size - expected[keep].sum()]
    if e[-1] < 5:
        o, e = np.r_[o[:-2], o[-2:].sum()], np.r_[e[:-2], e[-2:].sum()]
    assert stats.chisquare(o, e * o.sum() / e.sum()).pvalue > 1e-3


def test_random_zeros_get_noise():
    x = _released_counts(GeometricNoise(1.0), 0, 50_000, rng=5)
    p_pos = 1 / (1 + math.e)  # P(N >= 1) = q / (1 + q), q = e^-1
    assert abs((x > 0).mean() - p_pos) < 5 * math.sqrt(p_pos * (1 - p_pos) / x.size)


def test_same_seed_same_table_and_protocol():
    t = cellsafe.datasets.esc_like()
    small = cellsafe.Domain(list(t.variables)).adopt(t.with_counts(t.index[:5000], t.counts[:5000]))
    mech = GeometricNoise(1.0)
    a = mech.sample(small, rng=3)[0]
    b = mech.sample(small, rng=3)[0]
    assert np.array_equal(a.index, b.index) and np.array_equal(a.counts, b.counts)
    assert mech.get_params() == {"epsilon": 1.0, "sensitivity": 1}
    assert mech.with_params(epsilon=0.5) == GeometricNoise(0.5)
    assert make_mechanism("geometric:epsilon=0.5,sensitivity=2") == GeometricNoise(0.5, sensitivity=2)
    assert make_mechanism("discrete-gaussian:sigma=3") == DiscreteGaussianNoise(3)
    assert set(mech.tunable_params()) == {"epsilon"}
    assert cellsafe.GeometricNoise is GeometricNoise and cellsafe.DiscreteGaussianNoise is DiscreteGaussianNoise


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: GeometricNoise(0.0), "epsilon"),
        (lambda: GeometricNoise(-1.0), "epsilon"),
        (lambda: GeometricNoise(1.0, sensitivity=0), "sensitivity"),
        (lambda: GeometricNoise(1.0, sensitivity=1.5), "sensitivity"),
        (lambda: DiscreteGaussianNoise(0.0), "sigma"),
        (lambda: DiscreteGaussianNoise(1e20), "sigma"),
    ],
)
def test_bad_parameters(make, match):
    with pytest.raises(InvalidArgumentError, match=match):
        make()


def test_fractional_tables_are_refused():
    t = CountTable([Variable("a", ["x", "y"], public=True)], [0, 1], [1.5, 2.0])
    with pytest.raises(DataError, match="fractional"):
        GeometricNoise(1.0).sample(t, rng=1)

"""The cryptographic source of rng="secure": laws of its draws at a fixed key, keyed streams, no fallback."""

import numpy as np
import pytest
from scipy import stats

from cellsafe import CountTable, Variable
from cellsafe._random import as_generator, as_seed_sequence, is_secure, stream
from cellsafe._secure import SecureGenerator, SecureSeed
from cellsafe.distributions import DiscreteLaplace
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import GeometricNoise, MultinomialDirichletSynthesizer

KEY = bytes(range(32))  # a known key: reproducible tests (never for a release)


def gen(*path):
    return SecureSeed(KEY).generator(*path)


def test_secure_roots_and_streams_are_never_numpy_generators():
    root = as_seed_sequence("secure")
    assert isinstance(root, SecureSeed) and is_secure(root) and is_secure("secure")
    assert isinstance(stream(root, 1, 2), SecureGenerator)
    assert isinstance(as_generator("secure"), SecureGenerator)
    assert "secret" in repr(root)
    with pytest.raises(InvalidArgumentError, match="secret"):
        _ = root.entropy  # cannot be rebuilt as a (non-cryptographic) SeedSequence
    with pytest.raises(InvalidArgumentError, match="does not offer 'vonmises'"):
        as_generator("secure").vonmises(0, 1)


def test_same_key_and_path_same_stream_however_it_is_read():
    a = gen(3, 1).bytes(100_000)
    g = gen(3, 1)
    b = g.bytes(10) + g.bytes(70_000) + g.bytes(29_990)
    assert a == b
    assert gen(3, 2).bytes(64) != a[:64] and SecureSeed().generator(3, 1).bytes(64) != a[:64]
    # the two paths (3, 1) and (31,) must not collide
    assert gen(31).bytes(64) != gen(3, 1).bytes(64)


def test_integers_uniform_and_exact_bounds():
    x = gen(1).integers(0, 6, size=60_000)
    assert x.min() == 0 and x.max() == 5
    assert stats.chisquare(np.bincount(x, minlength=6)).pvalue > 1e-4
    y = gen(2).integers(-3, 4, size=70_000)
    assert stats.chisquare(np.bincount(y + 3, minlength=7)).pvalue > 1e-4
    big = gen(3).integers(0, np.array([2**62, 3, 1]), size=3)
    assert big[1] < 3 and big[2] == 0
    assert gen(4).integers(5, 6) == 5


@pytest.mark.parametrize("shape", [0.05, 0.3, 1.0, 7.5, 1e4])
def test_standard_gamma_against_its_cdf(shape):
    x = gen(5, int(shape * 100)).standard_gamma(np.full(50_000, shape))
    assert stats.kstest(x, stats.gamma(shape).cdf).pvalue > 1e-4


def test_normal_uniform_binomial_poisson_laws():
    g = gen(6)
    assert stats.kstest(g.standard_normal(50_000), stats.norm.cdf).pvalue > 1e-4
    u = g.random(50_000)
    assert u.min() > 0 and u.max() < 1 and stats.kstest(u, "uniform").pvalue > 1e-4
    b = g.binomial(np.full(40_000, 12), 0.3)
    expected = stats.binom(12, 0.3).pmf(np.arange(13)) * b.size
    assert stats.chisquare(np.bincount(b, minlength=13)[:10], expected[:10] * 1.0 / expected[:10].sum() * (b <= 9).sum()).pvalue > 1e-4
    assert g.binomial(5, 0.0) == 0 and g.binomial(5, 1.0) == 5 and g.binomial(0, 0.5) == 0
    p = g.poisson(3.0, 40_000)
    k = np.arange(12)
    obs = np.bincount(np.minimum(p, 11), minlength=12)
    exp = np.r_[stats.poisson(3.0).pmf(k[:-1]), stats.poisson(3.0).sf(10)] * p.size
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def test_multinomial_and_choice():
    g = gen(7)
    pv = np.array([0.1, 0.0, 0.6, 0.3])
    z = g.multinomial(100_000, pv)
    assert z.sum() == 100_000 and z[1] == 0
    assert stats.chisquare(z[pv > 0], pv[pv > 0] * 100_000).pvalue > 1e-4
    c = g.choice(10, 10, replace=False)
    assert sorted(c.tolist()) == list(range(10))
    firsts = np.array([g.choice(5, 2, replace=False)[0] for _ in range(5_000)])
    assert stats.chisquare(np.bincount(firsts, minlength=5)).pvalue > 1e-4


def test_exact_noise_from_the_secure_source_follows_its_pmf():
    d = DiscreteLaplace(2.0)
    x = d.sample(50_000, rng=SecureSeed(KEY).generator(8))
    k = np.arange(-15, 16)
    obs = np.array([(x == v).sum() for v in k])
    assert stats.chisquare(obs, d.pmf(k) / d.pmf(k).sum() * obs.sum()).pvalue > 1e-4


def test_fixed_total_synthesizer_from_the_secure_source_has_its_exact_law():
    # two passes read each block's weights twice: they must agree within the run (else the law breaks)
    t = CountTable([Variable("a", ("x", "y", "z"), public=True)], [0, 2], [2, 1])
    s = MultinomialDirichletSynthesizer(alpha=1.0)
    draws = s.sample(t, m=2_000, rng=SecureSeed(KEY))
    dense = np.array([d.dense() for d in draws]).astype(int)
    assert np.all(dense.sum(axis=1) == 3)
    outs, counts = np.unique(dense, axis=0, return_counts=True)
    expected = np.exp(s.log_pmf(outs, t)) * dense.shape[0]
    assert expected.sum() == pytest.approx(dense.shape[0], rel=1e-9)
    assert stats.chisquare(counts, expected).pvalue > 1e-4
    again = s.sample(t, m=3, rng=SecureSeed(KEY))
    assert all(a.equals(b) for a, b in zip(again, draws[:3]))


def test_cellwise_noise_with_the_secure_source():
    t = CountTable([Variable("a", tuple(range(50)), public=True)], np.arange(50), np.full(50, 10))
    [r] = GeometricNoise(epsilon=1.0).sample(t, rng="secure")
    assert r.n_cells == 50 and r.total > 0

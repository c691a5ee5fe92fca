"""zCDP conversion (Canonne, Kamath and Steinke 2020, in cellsafe._privacy) as MST and AIM use it, and the exact exponential mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cellsafe.dp import cdp_delta as zcdp_delta
from cellsafe.dp import cdp_epsilon as zcdp_epsilon
from cellsafe.dp import cdp_rho as zcdp_rho
from cellsafe.mechanisms._zcdp import SCORE_STEPS, exponential_mechanism, exponential_rate


def test_conversion_published_values():
    # issue 23 / MST's and AIM's cdp2adp: rho 0.014973 at epsilon 1, delta 1e-9 (Bun-Steinke: 0.01178)
    assert round(zcdp_rho(1.0, 1e-9), 6) == 0.014973
    bun_steinke = (math.sqrt(math.log(1e9) + 1.0) - math.sqrt(math.log(1e9))) ** 2
    assert round(bun_steinke, 5) == 0.01178
    assert zcdp_rho(1.0, 1e-9) / bun_steinke == pytest.approx(1.271, abs=1e-3)


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-9), (1.0, 1e-9), (3.0, 1e-9), (1.0, 1e-5), (10.0, 1e-6)])
def test_conversion_round_trips_and_is_tighter_than_bun_steinke(eps, delta):
    rho = zcdp_rho(eps, delta)
    assert zcdp_delta(rho, eps) <= delta
    assert zcdp_delta(rho * (1 + 1e-6), eps) > delta
    assert zcdp_epsilon(rho, delta) == pytest.approx(eps, rel=1e-9)
    assert zcdp_epsilon(rho, delta) <= rho + 2 * math.sqrt(rho * math.log(1 / delta))


def test_delta_is_the_infimum_over_alpha():
    rho, eps = 0.02, 1.0
    grid = np.linspace(1.001, 200.0, 200_000)
    log_d = (grid - 1) * (grid * rho - eps) + grid * np.log1p(-1 / grid) - np.log(grid - 1)
    assert zcdp_delta(rho, eps) == pytest.approx(float(np.exp(log_d.min())), rel=1e-6)


def test_exponential_mechanism_frequencies():
    q = np.array([0.0, 1.0, 2.5, 4.0, 4.2])
    eps, sens = 1.3, 1.0
    gen = np.random.default_rng(20261126)
    draws = np.array([exponential_mechanism(q, eps, sens, gen) for _ in range(20_000)])
    rate = float(exponential_rate(eps)) * SCORE_STEPS  # per unit of quality
    w = np.exp(rate * np.floor(q * SCORE_STEPS) / SCORE_STEPS)
    expected = w / w.sum() * draws.size
    observed = np.bincount(draws, minlength=q.size)
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert stats.chi2.sf(chi2, q.size - 1) > 1e-4
    assert rate <= eps / 2 and rate == pytest.approx(eps / 2, rel=1e-12)


def test_exponential_mechanism_secure_and_degenerate():
    assert exponential_mechanism([3.0], 1.0, 1.0, np.random.default_rng(0)) == 0
    from cellsafe._random import as_generator

    assert exponential_mechanism([0.0, 50.0, 0.0], 5.0, 1.0, as_generator("secure")) == 1
    with pytest.raises(ValueError, match="finite"):
        exponential_mechanism([np.nan, 1.0], 1.0, 1.0, np.random.default_rng(0))

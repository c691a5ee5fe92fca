"""Zero-concentrated differential privacy for the marginal synthesizers: conversion and selection.

- :func:`zcdp_delta`, :func:`zcdp_rho`, :func:`zcdp_epsilon`: rho-zCDP implies (epsilon, delta)-DP
  with delta = inf over alpha > 1 of exp((alpha - 1)(alpha rho - epsilon)) (1 - 1/alpha)^alpha / (alpha - 1)
  (Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for Differential Privacy",
  Proposition 12 and Corollary 13), the conversion MST and AIM use.  The infimum is at the root
  of (2 alpha - 1) rho - epsilon + log(1 - 1/alpha), which increases in alpha.
- :func:`exponential_mechanism`: one candidate drawn with probability proportional to
  exp(epsilon q / (2 Delta)), exactly: the qualities are put on an integer grid of 2**20 steps
  per unit of sensitivity (rounding down, so the grid's scores have sensitivity exactly 2**20
  steps), the rate epsilon / (2 * 2**20) is a rational no larger than the exact one, and a
  uniformly proposed candidate is accepted with probability exp(-rate (Q_max - Q_i)) by the
  exact Bernoulli factories of :mod:`cellsafe.distributions` (rejection sampling gives the
  exponential mechanism's law exactly).  It is epsilon-DP, hence epsilon^2 / 8-zCDP (Cesar and
  Rogers 2021, bounded range), which is how MST and AIM charge it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_real
from ..distributions import bernoulli_exp_fraction, bernoulli_exp_integer, rational_at_most
from ..exceptions import InvalidArgumentError

__all__ = ["zcdp_delta", "zcdp_rho", "zcdp_epsilon", "exponential_mechanism", "SCORE_STEPS"]

#: Grid steps per unit of sensitivity of the exponential mechanism's scores.
SCORE_STEPS = 2**20


def _log_delta_at(alpha: float, rho: float, epsilon: float) -> float:
    return (alpha - 1.0) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The delta of (epsilon, delta)-DP implied by rho-zCDP (Canonne, Kamath and Steinke 2020).

    Examples
    --------
    >>> round(zcdp_delta(0.5, 3.0), 6)
    0.005143
    """
    rho = check_real(rho, "rho", "zcdp_delta", low=0.0, high_open=True)
    epsilon = check_real(epsilon, "epsilon", "zcdp_delta", low=0.0, high_open=True)
    if rho == 0.0:
        return 0.0
    lo, hi = 1.0 + 1e-12, max((epsilon + 1.0) / (2.0 * rho), 1.0) + 2.0

    def slope(a: float) -> float:
        return (2.0 * a - 1.0) * rho - epsilon + math.log1p(-1.0 / a)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    alpha = 0.5 * (lo + hi)
    return min(math.exp(min(_log_delta_at(alpha, rho, epsilon), 0.0)), 1.0)


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP implies (epsilon, delta)-DP (bisection on :func:`zcdp_delta`).

    Examples
    --------
    >>> round(zcdp_rho(1.0, 1e-9), 5)      # 0.01178 by Bun and Steinke's conversion
    0.01497
    """
    epsilon = check_real(epsilon, "epsilon", "zcdp_rho", low=0.0, low_open=True, high_open=True)
    delta = check_real(delta, "delta", "zcdp_rho", low=0.0, high=1.0, low_open=True, high_open=True)
    lo, hi = 0.0, epsilon + 1.0
    while zcdp_delta(hi, epsilon) <= delta:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if zcdp_delta(mid, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    Examples
    --------
    >>> round(zcdp_epsilon(zcdp_rho(1.0, 1e-9), 1e-9), 9)
    1.0
    """
    rho = check_real(rho, "rho", "zcdp_epsilon", low=0.0, high_open=True)
    delta = check_real(delta, "delta", "zcdp_epsilon", low=0.0, high=1.0, low_open=True, high_open=True)
    if rho == 0.0:
        return 0.0
    lo, hi = 0.0, rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)) + 1.0  # Bun-Steinke's epsilon is an upper bound
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if zcdp_delta(rho, mid) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-15 * hi:
            break
    return hi


def exponential_rate(epsilon: float) -> Fraction:
    """The acceptance rate per grid step, epsilon / (2 * SCORE_STEPS), as a rational never above it."""
    return rational_at_most(Fraction(float(epsilon)) / (2 * SCORE_STEPS))


def exponential_mechanism(qualities: Any, epsilon: float, sensitivity: float, gen: Any) -> int:
    """The index of one candidate, drawn with probability proportional to exp(epsilon q / (2 sensitivity)).

    Parameters
    ----------
    qualities : array_like of float
        Scores; changing one record moves each by at most ``sensitivity``.
    epsilon : float
        The mechanism's epsilon (it is epsilon-DP and epsilon^2 / 8-zCDP).
    sensitivity : float
        The largest change of any score between neighbouring data sets (> 0).
    gen : numpy Generator or the secure generator
        Only its uniform integers are used.
    """
    q = np.asarray(qualities, dtype=np.float64)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise InvalidArgumentError("the exponential mechanism needs a non-empty vector of finite qualities.")
    check_real(epsilon, "epsilon", "exponential_mechanism", low=0.0, low_open=True, high_open=True)
    check_real(sensitivity, "sensitivity", "exponential_mechanism", low=0.0, low_open=True, high_open=True)
    if q.size == 1:
        return 0
    grid = np.floor((q - q.max()) * (SCORE_STEPS / float(sensitivity)))  # <= 0, integers as floats
    steps = [int(-g) for g in grid]
    rate = exponential_rate(epsilon)
    num, den = rate.numerator, rate.denominator
    n = q.size
    batch = max(8, min(4096, 2 * n))
    while True:
        cand = np.asarray(gen.integers(0, n, size=batch, dtype=np.int64))
        # gamma = num * steps / den, split into an integer part and a proper fraction
        whole = np.empty(batch, dtype=np.int64)
        part = np.empty(batch, dtype=np.int64)
        for j, c in enumerate(cand.tolist()):
            f, r = divmod(num * steps[c], den)
            whole[j] = min(f, 2**62)
            part[j] = r
        ok = bernoulli_exp_integer(whole, gen) & bernoulli_exp_fraction([(part, den)], batch, gen)
        hit = np.flatnonzero(ok)
        if hit.size:
            return int(cand[hit[0]])

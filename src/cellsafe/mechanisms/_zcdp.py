"""Zero-concentrated differential privacy for the marginal synthesizers: the private selection.

The conversion between rho-zCDP and (epsilon, delta)-DP (Canonne, Kamath and Steinke 2020, the one
MST and AIM use) lives in :mod:`cellsafe._privacy` (``cdp_rho``, ``cdp_epsilon``, ``cdp_delta``).

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

from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_real
from ..distributions import bernoulli_exp_fraction, bernoulli_exp_integer, rational_at_most
from ..exceptions import InvalidArgumentError

__all__ = ["exponential_mechanism", "exponential_rate", "SCORE_STEPS"]

#: Grid steps per unit of sensitivity of the exponential mechanism's scores.
SCORE_STEPS = 2**20


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

"""The Hellinger rows E[(sqrt K - sqrt j)^2 | j] and E[(sqrt K - sqrt j)^4 | j] from fractional moments.

Expanding the powers, both rows need only E K, E K^2 (the mechanism's mean and variance) and the
fractional moments E K^(1/2), E K^(3/2).  For x >= 0,

    sqrt(x) = (4 pi)^(-1/2) int_0^inf (1 - exp(-t x)) t^(-3/2) dt,

so E K^(1/2) and E K^(3/2) = E[K sqrt K] are single integrals of the gaps 1 - E exp(-t K) and
E K - E[K exp(-t K)], closed forms for families whose probability generating function is one
(:meth:`~cellsafe.distributions.CountDistribution.laplace_gaps`: Poisson, NBI, PIG).  The cost
is a fixed number of evaluations per distinct count, whatever the width of its row: no
truncation, no sum over counts.
"""

from __future__ import annotations

import math

import numpy as np

from ..mechanisms import CellwiseMechanism
from ._rows import Moments

# Gauss-Legendre nodes in u = log t over [log t_left, log t_right]; beyond, the gaps' leading
# terms are integrated exactly (a relative error below 1e-13 against term-by-term sums, tests).
_NODES = 128
# t_left = _LEFT E K / E K^2: there 1 - E exp(-tK) = t E K - t^2 E K^2 / 2 + O(t^3).
_LEFT = 1e-8
# t_right: there E exp(-tK) = P(0) + O(exp(-t)) and E[K exp(-tK)] = O(exp(-t)).
_RIGHT = 40.0
# Rows whose two moments cancel by more than this factor take the sums over counts instead
# (close to Poisson and far from zero).  The relative error is about 3e-14 times the factor (tests).
MAX_CANCELLATION = 1e4
_MAX_SPREAD_RATIO = 30.0

_X, _W = np.polynomial.legendre.leggauss(_NODES)


def _has_pgf(mech: CellwiseMechanism) -> bool:
    dist = getattr(mech, "distribution", None)
    return bool(getattr(dist, "closed_form_pgf", False)) and hasattr(mech, "_mu")


def fractional_moments(
    mech: CellwiseMechanism, j: np.ndarray, mean: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """E K^(1/2) and E K^(3/2) given each original count j > 0 (``mean`` = E K, ``second`` = E K^2).

    Examples
    --------
    >>> from cellsafe.distributions import NBI
    >>> from cellsafe.mechanisms import SaturatedSynthesizer
    >>> half, three_halves = fractional_moments(
    ...     SaturatedSynthesizer(NBI(1.0)), np.array([4]), np.array([4.0]), np.array([36.0]))
    >>> round(float(half[0]), 10), round(float(three_halves[0]), 10)
    (1.6411068452, 11.2978483943)
    """
    mu = mech._mu(j)[:, None]
    mean = mean[:, None]
    second = second[:, None]
    p0 = np.asarray(mech.distribution.pmf(0.0, mu), dtype=np.float64)
    log_left = np.log(_LEFT * mean / second)
    log_right = math.log(_RIGHT)
    half_width = 0.5 * (log_right - log_left)
    u = (log_right + log_left) * 0.5 + half_width * _X[None, :]
    weight = half_width * _W[None, :] * np.exp(-0.5 * u)
    with np.errstate(all="ignore"):
        g1, g2 = mech.distribution.laplace_gaps(np.exp(u), np.broadcast_to(mu, u.shape))
    left = np.exp(0.5 * log_left)
    right = math.exp(-0.5 * log_right)
    # int_{-inf}^{u_left} (mean e^u - second e^(2u)/2) e^(-u/2) du and int_{u_right}^{inf} (1 - P(0)) e^(-u/2) du
    tail1 = 2.0 * mean * left - second * left**3 / 3.0 + 2.0 * (1.0 - p0) * right
    tail2 = 2.0 * second * left + 2.0 * mean * right
    scale = 0.5 / math.sqrt(math.pi)
    half = scale * ((g1 * weight).sum(axis=1) + tail1[:, 0])
    three_halves = scale * ((g2 * weight).sum(axis=1) + tail2[:, 0])
    return half, three_halves


def hellinger_rows(
    mech: CellwiseMechanism, j: np.ndarray, moments: Moments
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E[(sqrt K - sqrt j)^2 | j], E[(sqrt K - sqrt j)^4 | j] and whether each row is accurate.

    A row is accurate where the terms of the expansion cancel by less than
    :data:`MAX_CANCELLATION`; the others (mechanisms without a closed-form pgf, random zeros
    of 000's zeros-to-ones, near-Poisson rows far from zero) are left to the sums over counts.
    """
    e1 = np.zeros(j.shape)
    e2 = np.zeros(j.shape)
    ok = np.zeros(j.shape, dtype=bool)
    if not _has_pgf(mech):
        return e1, e2, ok
    mean_all, var_all = moments
    # E[(sqrt K - sqrt j)^4] is about 3 (Var K / 4 E K)^2 against terms of about 16 j^2: where j E K / Var K
    # exceeds 30 the cancellation is beyond MAX_CANCELLATION anyway, so those rows are not integrated
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = np.flatnonzero((j > 0) & (j * mean_all <= _MAX_SPREAD_RATIO * var_all))
    if not rows.size:
        return e1, e2, ok
    jj = j[rows].astype(np.float64)
    mean = mean_all[rows]
    second = var_all[rows] + mean * mean
    half, three_halves = fractional_moments(mech, j[rows], mean, second)
    rj = np.sqrt(jj)
    # (sqrt k - sqrt j)^2 = k - 2 sqrt(j k) + j; ^4 = k^2 - 4 sqrt(j) k^(3/2) + 6 j k - 4 j^(3/2) sqrt(k) + j^2
    a1 = mean + jj
    b1 = 2.0 * rj * half
    a2 = second + 6.0 * jj * mean + jj * jj
    b2 = 4.0 * rj * three_halves + 4.0 * jj * rj * half
    r1, r2 = a1 - b1, a2 - b2
    with np.errstate(divide="ignore", invalid="ignore"):
        good = (a1 + b1 <= MAX_CANCELLATION * r1) & (a2 + b2 <= MAX_CANCELLATION * r2) & (r1 > 0) & (r2 > 0)
    e1[rows], e2[rows], ok[rows] = r1, r2, good
    return e1, e2, ok

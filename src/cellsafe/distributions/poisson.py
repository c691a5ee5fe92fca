"""The Poisson distribution PO(mu) (gamlss.dist's ``PO``): mean and variance ``mu``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from ._special import special

from .._catalog import declared
from .._params import Param
from .._registry import register
from ._base import CountDistribution

__all__ = ["Poisson"]


@register("distribution", "poisson")
@dataclass(frozen=True)
class Poisson(CountDistribution):
    """Poisson counts with mean ``mu``: P(k) = exp(-mu) mu^k / k!.

    Notes
    -----
    The (sigma, alpha)-synthesis of document 003 (section 2) with no overdispersion;
    variance ``mu``.  ``cdf`` and ``sf`` use the regularized incomplete gamma function
    (``scipy.special.pdtr`` and ``pdtrc``), so far tails keep full relative precision.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> round(Poisson().pmf(1, 1.0), 5)
    0.36788
    >>> Poisson().sample([0.0, 3.0], rng=1).dtype
    dtype('int64')
    """

    name: ClassVar[str] = "poisson"
    _params: ClassVar[tuple[Param, ...]] = declared("distribution", "poisson")
    closed_form_tails: ClassVar[bool] = True
    closed_form_pgf: ClassVar[bool] = True

    def _logpmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return log_poisson(k, mu)

    def _laplace_gaps(self, t: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # G(z) = exp(-mu (1 - z)), z G'(z) = mu z G(z)
        log_g = mu * np.expm1(-t)
        return -np.expm1(log_g), -mu * np.expm1(log_g - t)

    def _logpmf_rows(self, k: np.ndarray, row: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return self._anchored_rows(k, row, mu, np.log(mu))

    def _shared_terms(self, size: int) -> np.ndarray:
        # P(k + 1)/P(k) = mu/(k + 1): -log(k + 1) is shared by every mean
        out = np.zeros(size, dtype=np.longdouble)
        np.cumsum(-np.log(np.arange(1, size, dtype=np.longdouble)), out=out[1:])
        return out

    def _cdf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return special.pdtr(k, mu)

    def _sf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return special.pdtrc(k, mu)

    def _sample(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.poisson(mu).astype(np.int64, copy=False)

    def _mean(self, mu: np.ndarray) -> np.ndarray:
        return np.asarray(mu, dtype=np.float64)

    def _var(self, mu: np.ndarray) -> np.ndarray:
        return np.asarray(mu, dtype=np.float64)


_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


def _stirling_error(n: np.ndarray) -> np.ndarray:
    """log(n!) - [(n + 1/2) log n - n + log sqrt(2 pi)] for n >= 1 (Stirling's remainder)."""
    n = np.asarray(n, dtype=np.float64)
    out = np.empty(n.shape)
    small = n < 20
    ns = n[small]
    out[small] = special.gammaln(ns + 1.0) - (ns + 0.5) * np.log(ns) + ns - _HALF_LOG_2PI
    nl = n[~small]
    r = 1.0 / (nl * nl)
    # Asymptotic series of the remainder: 1/(12n) - 1/(360n^3) + 1/(1260n^5) - 1/(1680n^7) + 1/(1188 n^9).
    out[~small] = (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / nl
    return out


def _deviance_term(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x log(x/m) + m - x >= 0 without cancellation when x is close to m (x > 0, m > 0)."""
    out = np.empty(np.broadcast(x, m).shape)
    x, m = np.broadcast_arrays(x, m)
    d = x - m
    near = np.abs(d) < 0.1 * (x + m)
    xf, mf, df = x[~near], m[~near], d[~near]
    out[~near] = xf * np.log(xf / mf) - df
    # With v = (x - m) / (x + m): x log(x/m) + m - x = (x - m) v + 2 x sum_{j>=1} v^(2j+1) / (2j+1).
    xn, dn = x[near], d[near]
    v = dn / (x[near] + m[near])
    v2 = v * v
    acc = dn * v
    total = np.zeros(xn.shape)
    power = 2.0 * xn * v
    for j in range(1, 40):
        power = power * v2
        total = total + power / (2 * j + 1)
        if np.all(np.abs(power) <= 1e-17 * np.abs(acc + total) + 1e-300):
            break
    out[near] = acc + total
    return out


def log_poisson(k: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """log of the Poisson pmf, accurate to a few ulps of the probability even for large ``k``, ``mu``.

    For ``k >= 1`` uses the saddle-point form log p = -stirling_error(k) - d(k, mu)
    - log sqrt(2 pi k), with d(k, mu) = k log(k/mu) + mu - k computed without cancellation
    (Loader, 2000); for ``k = 0`` it is ``-mu``.
    """
    k = np.asarray(k, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    k, mu = np.broadcast_arrays(k, mu)
    out = -mu.astype(np.float64, copy=True)
    pos = k > 0
    if pos.any():
        kp, mp = k[pos], mu[pos]
        out[pos] = -_stirling_error(kp) - _deviance_term(kp, mp) - _HALF_LOG_2PI - 0.5 * np.log(kp)
    return out

"""The negative binomial type I, NBI(mu, sigma) (gamlss.dist's ``NBI``).

Mean ``mu``, variance ``mu + sigma mu^2``; a Poisson(mu g) with g ~ Gamma(shape 1/sigma,
scale sigma).  It is R's ``dnbinom(size = 1/sigma, mu = mu)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from ._special import special

from .._catalog import declared
from .._params import Param
from .._registry import register
from ._base import SIGMA, CountDistribution
from .poisson import _deviance_term, _stirling_error

__all__ = ["NBI"]


@register("distribution", "nbi")
@dataclass(frozen=True)
class NBI(CountDistribution):
    """Negative binomial counts with mean ``mu`` and dispersion ``sigma``.

    Parameters
    ----------
    sigma : float
        Dispersion in (0, inf): the variance is ``mu + sigma mu^2``.

    Notes
    -----
    pmf (methods.md section 2; document 003 section 2.2)::

        P(k) = Gamma(k + n) / (Gamma(k + 1) Gamma(n)) (sigma mu / (1 + sigma mu))^k (1 + sigma mu)^(-n),

    with ``n = 1/sigma``.  It is evaluated in log space in the saddle-point form of R's
    ``dnbinom`` (Loader 2000: Stirling remainders and deviance terms), accurate to a few ulps
    for counts and means up to 1e6 and beyond, with ``P(0) = exp(-log1p(sigma mu)/sigma)``; where
    ``k + n <= 200`` or ``k`` exceeds ``1e12 n`` it uses ``-log(n + k) - betaln(k + 1, n) + k log(sigma mu) -
    (k + n) log1p(sigma mu)``.  ``cdf`` and ``sf`` are regularized
    incomplete beta functions: ``cdf(k) = I_p(n, k + 1)`` and ``sf(k) = I_{1-p}(k + 1, n)`` with
    ``p = 1/(1 + sigma mu)``.  Samples are gamma-Poisson mixtures, O(1) per cell.

    Examples
    --------
    >>> from cellsafe.distributions import NBI
    >>> NBI(sigma=1.0).pmf(1, 1.0)
    0.25
    >>> NBI(sigma=0.5).var(2.0)
    4.0
    """

    sigma: float
    name: ClassVar[str] = "nbi"
    _params: ClassVar[tuple[Param, ...]] = declared("distribution", "nbi")
    closed_form_tails: ClassVar[bool] = True
    closed_form_pgf: ClassVar[bool] = True

    def __post_init__(self) -> None:
        SIGMA.check(self.sigma, "NBI")


    def _logpmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        s = float(self.sigma)
        n = 1.0 / s
        sm = s * mu
        out = -n * np.log1p(sm)  # k = 0: (1 + sigma mu)^(-1/sigma)
        pos = k > 0
        if pos.any():
            kp, mp = k[pos], mu[pos]
            # Small arguments: the direct form is exact to rounding; k >> n: n is negligible beside k.
            saddle = (kp + n > 200.0) & (kp * 1e-12 < n)
            lp = np.empty(kp.shape)
            # Direct form: -log(n + k) - betaln(k + 1, n) + k log(sigma mu) - (k + n) log1p(sigma mu).
            kd, md = kp[~saddle], mp[~saddle]
            lp[~saddle] = (
                -np.log(n + kd) - special.betaln(kd + 1.0, n) + special.xlogy(kd, s * md) - (kd + n) * np.log1p(s * md)
            )
            # Saddle-point (binomial) form, as for the Poisson: with N = n + k,
            # P(k) = n/N * exp(e(N) - e(n) - e(k) - d(n, N n/(n+mu)) - d(k, N mu/(n+mu))) * sqrt(N/(2 pi n k)),
            # e the Stirling remainder and d(x, m) = x log(x/m) + m - x.  Exact up to rounding and free
            # of the cancellation between terms of size k log k when k and mu are large.
            ks, ms = kp[saddle], mp[saddle]
            big_n = n + ks
            lp[saddle] = (
                np.log(n / big_n)
                + _stirling_error(big_n)
                - _stirling_error(np.full(ks.shape, n))
                - _stirling_error(ks)
                - _deviance_term(np.full(ks.shape, n), big_n * (n / (n + ms)))
                - _deviance_term(ks, big_n * (ms / (n + ms)))
                + 0.5 * np.log(big_n / (2.0 * np.pi * n * ks))
            )
            out[pos] = lp
        return out

    def _laplace_gaps(self, t: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # G(z) = (1 + sigma mu (1 - z))^(-n), z G'(z) = mu z (1 + sigma mu (1 - z))^(-n - 1), n = 1/sigma
        s = float(self.sigma)
        w = np.log1p(-s * mu * np.expm1(-t))
        return -np.expm1(-w / s), -mu * np.expm1(-t - (1.0 / s + 1.0) * w)

    def _logpmf_rows(self, k: np.ndarray, row: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return self._anchored_rows(k, row, mu, -np.log1p(1.0 / (float(self.sigma) * mu)))  # log p, no cancellation

    def _shared_terms(self, size: int) -> np.ndarray:
        # P(k + 1)/P(k) = (k + n)/(k + 1) * p with p = sigma mu/(1 + sigma mu): the first factor is shared
        n = np.longdouble(1.0 / float(self.sigma))
        out = np.zeros(size, dtype=np.longdouble)
        np.cumsum(np.log1p((n - 1) / np.arange(1, size, dtype=np.longdouble)), out=out[1:])
        return out

    def _cdf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        sm = float(self.sigma) * mu
        return special.betainc(1.0 / float(self.sigma), k + 1.0, 1.0 / (1.0 + sm))

    def _sf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        sm = float(self.sigma) * mu
        return special.betainc(k + 1.0, 1.0 / float(self.sigma), sm / (1.0 + sm))

    def _sample(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = float(self.sigma)
        g = rng.gamma(1.0 / s, s, size=mu.shape)
        return rng.poisson(mu * g).astype(np.int64, copy=False)

    def _mean(self, mu: np.ndarray) -> np.ndarray:
        return np.asarray(mu, dtype=np.float64)

    def _var(self, mu: np.ndarray) -> np.ndarray:
        return mu + float(self.sigma) * mu * mu

"""The Poisson-inverse Gaussian distribution PIG(mu, sigma) (gamlss.dist's ``PIG``).

Mean ``mu``, variance ``mu + sigma mu^2``: a Poisson(mu g) with g inverse Gaussian of mean 1
and shape ``1/sigma``.  It is actuar's ``dpoisinvgauss(x, mean = mu, shape = mu/sigma)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from ._special import special

from .._catalog import declared
from .._params import Param
from .._registry import register
from ._base import SIGMA, CountDistribution
from ._incgamma import log_gamma_tails
from .poisson import _stirling_error

__all__ = ["PIG"]

_LOG_PI_HALF = 0.5 * math.log(math.pi / 2.0)
# Above this 2 sigma mu, cdf and sf come from the mixing integral instead of summing the pmf.
_LONG_TAIL = 2.0e4
_COARSE = 2001
_FINE = 2001
_FINE_MAX = 40001
_BATCH = 64
# cdf_by_gamma_mixture: where it holds to 1e-12 (k + 1 >= _GAMMA_MIN_SHAPE, sigma (k + 1) >= 1), and its
# Gauss-Hermite nodes (32 below _GAMMA_FEW_NODES, 16 from there).
_GAMMA_MIN_SHAPE = 100.0
_GAMMA_FEW_NODES = 1000.0


@lru_cache(maxsize=4)
def _hermite_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights (computed once per size)."""
    return np.polynomial.hermite.hermgauss(n)


def _debye_log_kve(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """log(K_v(x) e^x) from Debye's uniform asymptotic expansion (large order ``v``).

    K_v(v z) ~ sqrt(pi / (2 v)) e^(-v eta) (1 + z^2)^(-1/4) sum_k (-1)^k u_k(t) / v^k, with
    t = 1/sqrt(1 + z^2) and eta = sqrt(1 + z^2) + log(z / (1 + sqrt(1 + z^2)))
    (Abramowitz and Stegun 9.7.8).  Used only where ``scipy.special.kve`` overflows, which
    needs ``v`` of at least about 40; with six terms the error in the log is below 1e-12 for ``v >= 60``.
    """
    z = x / v
    sq = np.sqrt(1.0 + z * z)
    t = 1.0 / sq
    t2 = t * t
    # Debye's polynomials u_k(t) (Abramowitz and Stegun 9.3.9, 9.3.10), Horner in t^2.
    u1 = t * (3.0 - 5.0 * t2) / 24.0
    u2 = t2 * (81.0 - t2 * (462.0 - 385.0 * t2)) / 1152.0
    u3 = t * t2 * (30375.0 - t2 * (369603.0 - t2 * (765765.0 - 425425.0 * t2))) / 414720.0
    p4 = 446185740.0 - 185910725.0 * t2
    u4 = t2 * t2 * (4465125.0 - t2 * (94121676.0 - t2 * (349922430.0 - t2 * p4))) / 39813120.0
    p5 = 614135872350.0 - t2 * (566098157625.0 - 188699385875.0 * t2)
    u5 = t * t2 * t2 * (1519035525.0 - t2 * (49286948607.0 - t2 * (284499769554.0 - t2 * p5))) / 6688604160.0
    w = 1.0 / v
    series = 1.0 - w * (u1 - w * (u2 - w * (u3 - w * (u4 - w * u5))))
    # x - v sqrt(1 + z^2) written without cancellation; then - v log(z / (1 + sq)).
    x_minus_vsq = -(v * v) / (x + v * sq)
    return (
        _LOG_PI_HALF
        - 0.5 * np.log(v)
        + x_minus_vsq
        + v * np.log1p(sq) - v * np.log(z)
        - 0.25 * np.log1p(z * z)
        + np.log(series)
    )


def log_kve_half_integer(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """log(K_{y - 1/2}(x) e^x) for integer ``y >= 0`` and ``x > 0``, overflow-free."""
    v = np.abs(y - 0.5)
    with np.errstate(over="ignore"):
        val = special.kve(v, x)
    out = np.log(val)
    bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = _debye_log_kve(v[bad], np.broadcast_to(x, v.shape)[bad])
    return out


@register("distribution", "pig")
@dataclass(frozen=True)
class PIG(CountDistribution):
    """Poisson-inverse Gaussian counts with mean ``mu`` and dispersion ``sigma``.

    Parameters
    ----------
    sigma : float
        Dispersion in (0, inf): the variance is ``mu + sigma mu^2`` (as for :class:`NBI`),
        but the PIG has a heavier right tail and more mass at 0.

    Notes
    -----
    pmf (methods.md section 2; document 003 section 2.2, after Rigby et al. 2019)::

        P(y) = sqrt(2a/pi) mu^y exp(1/sigma) K_{y-1/2}(a) / ((a sigma)^y y!),
        a^2 = 1/sigma^2 + 2 mu/sigma,

    evaluated in log space with the exponentially scaled Bessel function ``kve`` (and Debye's
    expansion where even that overflows), using ``1/sigma - a = -2 mu / (1 + sqrt(1 + 2 sigma mu))``
    and ``a sigma = sqrt(1 + 2 sigma mu)``.  So ``P(0) = exp(1/sigma - a)`` and
    ``P(1) = P(0) mu / sqrt(1 + 2 sigma mu)``; the Bessel recursion gives the three-term
    recursion (checked in the tests)::

        P(y) = A (1 - 3/(2y)) P(y-1) + B P(y-2) / (y (y-1)),
        A = 2 sigma mu / (1 + 2 sigma mu),  B = mu^2 / (1 + 2 sigma mu).

    ``cdf`` and ``sf`` sum the pmf in log space, on the side of the smaller tail (``sf`` for
    counts at or above the mean), until the terms are below 1e-18 of the sum; counts sharing a
    mean share one tail sum.  The tail decays like ``(2 sigma mu / (1 + 2 sigma mu))^y``, so
    where ``2 sigma mu > 2e4`` (sums of millions of terms) they come instead from the mixture,
    ``sf(k) = E_g[P(k + 1, mu g)]`` with ``P`` the regularized incomplete gamma function,
    integrated by the trapezoid rule in ``log g``.  :meth:`upper_quantile` accumulates the pmf
    down from a bound on the tail (or bisects on the mixture's ``sf``).  Samples draw
    ``g`` from the inverse Gaussian (Wald) distribution, then Poisson(mu g): O(1) per cell,
    unlike gamlss.dist's ``rPIG``, which inverts the cdf by summation.

    Examples
    --------
    >>> from cellsafe.distributions import PIG
    >>> round(PIG(sigma=10.0).pmf(1, 1.0), 5)
    0.15251
    """

    sigma: float
    name: ClassVar[str] = "pig"
    _params: ClassVar[tuple[Param, ...]] = declared("distribution", "pig")
    closed_form_pgf: ClassVar[bool] = True

    def __post_init__(self) -> None:
        SIGMA.check(self.sigma, "PIG")


    def _logpmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        s = float(self.sigma)
        root = np.sqrt(1.0 + 2.0 * s * mu)  # a sigma
        a = root / s
        log_p0 = -2.0 * mu / (1.0 + root)  # 1/sigma - a
        return (
            0.5 * np.log(2.0 * a / math.pi)
            + log_p0
            + log_kve_half_integer(k, a)
            + k * (np.log(mu) - np.log(root))
            - special.gammaln(k + 1.0)
        )

    def _laplace_gaps(self, t: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # G(z) = exp((1 - R)/sigma), z G'(z) = mu z G(z)/R, R = sqrt(1 + 2 sigma mu (1 - z));
        # (R - 1)/sigma = 2 mu (1 - z)/(1 + R) has no cancellation.
        one_minus_z = -np.expm1(-t)
        x = 2.0 * float(self.sigma) * mu * one_minus_z
        log_g = -2.0 * mu * one_minus_z / (1.0 + np.sqrt(1.0 + x))
        return -np.expm1(log_g), -mu * np.expm1(log_g - t - 0.5 * np.log1p(x))

    def _sample(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        g = rng.wald(1.0, 1.0 / float(self.sigma), size=mu.shape)
        return rng.poisson(mu * g).astype(np.int64, copy=False)

    def _mean(self, mu: np.ndarray) -> np.ndarray:
        return np.asarray(mu, dtype=np.float64)

    def _var(self, mu: np.ndarray) -> np.ndarray:
        return mu + float(self.sigma) * mu * mu

    # ---------------------------------------------------------------- long tails
    def _long_tail(self, mu: np.ndarray) -> np.ndarray:
        """Where summing the pmf would need millions of terms (the tail decays like A^y,
        A = 2 sigma mu / (1 + 2 sigma mu), over about 2 sigma mu counts per e-fold)."""
        return 2.0 * float(self.sigma) * mu > _LONG_TAIL

    def _log_tails_by_mixing(self, k: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log cdf, log sf) at ``k`` from the mixture: sf(k) = E_g[P(k + 1, mu g)].

        P is the regularized lower incomplete gamma function (a Poisson tail) and g the inverse
        Gaussian of mean 1 and shape 1/sigma.  In u = log g the integrand is log-concave, so a
        coarse grid locates where it is within e^-60 of its peak and a fine trapezoid rule
        (exponentially accurate for such smooth integrands) integrates it there.
        """
        lam = 1.0 / float(self.sigma)
        k = k[:, None]
        mu_ = mu[:, None]
        u_lo = np.full(k.shape, math.log(1e-12))
        u_hi = np.log(200.0 / lam + 50.0 + 10.0 * (k + 1.0) / mu_)

        def log_terms(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            g = np.exp(u)
            log_mix = 0.5 * math.log(lam / (2.0 * math.pi)) - 0.5 * u - lam * (g - 1.0) ** 2 / (2.0 * g)
            log_p, log_q = log_gamma_tails(k + 1.0 + 0.0 * u, mu_ * g)
            return log_mix + log_q, log_mix + log_p  # (cdf part, sf part)

        grid = np.linspace(0.0, 1.0, _COARSE)[None, :]
        out = []
        with np.errstate(all="ignore"):
            u = u_lo + (u_hi - u_lo) * grid
            coarse = log_terms(u)
            step = (u_hi - u_lo) / (_COARSE - 1)
            for which, part in enumerate(coarse):
                top = np.max(part, axis=1, keepdims=True)
                inside = part > top - 60.0
                idx = np.arange(_COARSE)[None, :]
                first = np.min(np.where(inside, idx, _COARSE), axis=1, keepdims=True)
                last = np.max(np.where(inside, idx, -1), axis=1, keepdims=True)
                a = u_lo + (first - 2) * step
                b = u_lo + (last + 2) * step
                # The Poisson tail is a step in u of width about 1/sqrt(k + 1): resolve it.
                need = np.max((b - a) * 8.0 * np.sqrt(k + 1.0))
                n_fine = int(np.clip(need, _FINE, _FINE_MAX))
                fine_u = a + (b - a) * np.linspace(0.0, 1.0, n_fine)[None, :]
                fine = log_terms(fine_u)[which]
                w = np.full(n_fine, 1.0)
                w[0] = w[-1] = 0.5
                peak = np.max(fine, axis=1, keepdims=True)
                safe = np.where(np.isfinite(peak), peak, 0.0)
                total = np.sum(w[None, :] * np.exp(fine - safe), axis=1)
                h = (b - a)[:, 0] / (n_fine - 1)
                val = np.where(np.isfinite(peak[:, 0]), safe[:, 0] + np.log(total * h), -np.inf)
                out.append(val)
        return out[0], out[1]

    def cdf_by_gamma_mixture(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """P(X <= k | mu) from the mixing distribution's cdf, for many (count, mean) pairs at once.

        As P(Poisson(lam) <= k) = P(G > lam) with G ~ Gamma(k + 1, 1), P(X <= k) = E[F(G / mu)] with F
        the inverse Gaussian cdf of mean 1 and shape 1/sigma (a closed form in normal cdfs).  The
        expectation is a Gauss-Hermite sum in log G (32 nodes, 16 from k = 999): a few dozen evaluations
        per count however far it lies from 0, where :meth:`cdf` sums the pmf.  The absolute error is below
        1e-12 where ``k + 1 >= 100`` and ``sigma (k + 1) >= 1`` (tests, against :meth:`cdf`); elsewhere
        (the gamma too wide in log G) the result is NaN.  ``k`` and ``mu`` are flat arrays of equal length,
        counts >= 0 and means > 0.

        Examples
        --------
        >>> from cellsafe.distributions import PIG
        >>> d = PIG(sigma=1.0)
        >>> round(float(d.cdf_by_gamma_mixture(np.array([150.0]), np.array([200.0]))[0]), 10)
        0.5475836658
        >>> round(float(d.cdf(150, 200.0)), 10)
        0.5475836658
        """
        k = np.asarray(k, dtype=np.float64)
        mu = np.asarray(mu, dtype=np.float64)
        shape = k + 1.0
        out = np.full(k.shape, np.nan)
        lam = 1.0 / float(self.sigma)
        for n, sel in (
            (32, (shape >= _GAMMA_MIN_SHAPE) & (shape < _GAMMA_FEW_NODES)),
            (16, shape >= _GAMMA_FEW_NODES),
        ):
            sel &= shape * float(self.sigma) >= 1.0
            if not sel.any():
                continue
            z, w = _hermite_nodes(n)
            a = shape[sel][:, None]
            scale = np.sqrt(2.0 / a)
            sz = scale * z[None, :]
            # log density of log G at log a + sz, times exp(z^2) (Gauss-Hermite's weight), without cancellation:
            # a log a - a - lgamma(a) = log(a / (2 pi))/2 - stirling_error(a)
            log_f = 0.5 * np.log(a / (2.0 * math.pi)) - _stirling_error(a) - a * (np.expm1(sz) - sz) + z[None, :] ** 2
            g = a * np.exp(sz) / mu[sel][:, None]
            root = np.sqrt(lam / g)
            with np.errstate(all="ignore"):
                mix_cdf = special.ndtr(root * (g - 1.0)) + np.exp(2.0 * lam + special.log_ndtr(-root * (g + 1.0)))
            out[sel] = np.clip((w[None, :] * np.exp(log_f) * mix_cdf).sum(axis=1) * scale[:, 0], 0.0, 1.0)
        return out

    def _cdf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return self._tails(k, mu)[0]

    def _sf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return self._tails(k, mu)[1]

    def _tails(self, k: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        long = self._long_tail(mu)
        if not long.any():
            return self._cdf_sf_by_summation(k, mu)
        cdf = np.empty(k.shape)
        sf = np.empty(k.shape)
        if (~long).any():
            cdf[~long], sf[~long] = self._cdf_sf_by_summation(k[~long], mu[~long])
        idx = np.flatnonzero(long)
        for start in range(0, idx.size, _BATCH):
            sub = idx[start : start + _BATCH]
            lc, ls = self._log_tails_by_mixing(k[sub], mu[sub])
            c, t = np.exp(lc), np.exp(ls)
            # keep the smaller side as computed and the larger as its complement
            cdf[sub] = np.where(t <= 0.5, 1.0 - t, c)
            sf[sub] = np.where(t <= 0.5, t, 1.0 - c)
        return np.clip(cdf, 0.0, 1.0), np.clip(sf, 0.0, 1.0)

    def _upper_quantile(self, mu: np.ndarray, tol: float) -> np.ndarray:
        long = self._long_tail(mu)
        if long.any():  # sf by the mixing integral is cheap: bisect on it
            out = np.empty(mu.size, dtype=np.int64)
            out[long] = super()._upper_quantile(mu[long], tol)
            if (~long).any():
                out[~long] = self._upper_quantile(mu[~long], tol)
            return out
        # sf by summation is costly, so bisection on sf would repeat long sums.  Instead find a
        # count ``hi`` with sf(hi) <= tol, then accumulate the pmf downwards from ``hi``.
        m = mu
        s = np.sqrt(self._var(mu))
        c = max(4.0, math.sqrt(2.0 * -math.log(tol)))
        with np.errstate(all="ignore"):
            # Beyond y0 the ratio p(y+1)/p(y) tends to A = 2 sigma mu / (1 + 2 sigma mu), from
            # above or below; bounding it by rho = max(ratio at y0, A) gives
            # sf(y) <= p(y0) rho^(y - y0 + 1) / (1 - rho), solved for y.
            y0 = np.ceil(m + c * s + 10.0)
            lp0 = self._logpmf(y0, mu)
            lp1 = self._logpmf(y0 + 1.0, mu)
            sm2 = 2.0 * float(self.sigma) * mu
            log_a = np.log(sm2) - np.log1p(sm2)
            log_rho = np.minimum(np.maximum(lp1 - lp0, log_a), -1e-300)
            steps = (lp0 + log_rho - np.log(-np.expm1(log_rho)) - math.log(tol)) / -log_rho
            hi = y0 + np.ceil(np.clip(steps, 0.0, 1e15))
            rest = self._sf(hi, mu)
            bad = rest > tol
            while bad.any():
                c *= 2.0
                hi[bad] = np.ceil(m[bad] + c * s[bad] + 10.0 * c)
                rest[bad] = self._sf(hi[bad], mu[bad])
                bad = rest > tol
            lo = np.maximum(np.floor(m) - 1.0, 0.0)
            out = np.empty(mu.size, dtype=np.int64)
            deeper = np.zeros(mu.size, dtype=bool)
            # One cumulative sum per mean: a cumulative sum running across means would carry the
            # rounding error of large partial sums into the tiny tails compared with ``tol``.
            for i in range(mu.size):
                j = np.arange(hi[i], lo[i], -1.0)  # hi, hi - 1, ..., lo + 1
                p = np.exp(self._logpmf(j, np.full(j.shape, mu[i])))
                sf_below = rest[i] + np.cumsum(p)  # sf(j - 1)
                n_ok = int(np.count_nonzero(sf_below <= tol))  # ok is a prefix: sf grows as j falls
                out[i] = int(hi[i]) - n_ok  # the smallest k = j - 1 with sf(k) <= tol, or hi
                deeper[i] = n_ok == j.size
            if deeper.any():  # every count down to lo qualified: the answer may lie below lo
                out[deeper] = super()._upper_quantile(mu[deeper], tol)
        return out

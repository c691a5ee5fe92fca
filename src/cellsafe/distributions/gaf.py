"""The discretized gamma family GAF(mu, sigma, nu) of document 000.

W ~ Gamma(shape mu^(2-nu)/sigma^2, scale sigma^2 mu^(nu-1)) has mean ``mu`` and variance
``sigma^2 mu^nu`` (gamlss.dist's ``GA`` family with a variance exponent ``nu``); the count is
Y = floor(W + 1/2), W rounded half up.  Y has mean about ``mu`` and variance about
``sigma^2 mu^nu + 1/12``; :meth:`GAF.mean` and :meth:`GAF.var` give the exact values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._catalog import declared
from .._params import Param
from .._registry import register
from .._validation import check_real
from ..exceptions import InvalidArgumentError
from ._base import _CHUNK_BUDGET, SIGMA, CountDistribution
from ._incgamma import log_gamma_tails
from .poisson import _deviance_term, _stirling_error

__all__ = ["GAF"]

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(32)
_GL_U = (_GL_NODES + 1.0) / 2.0  # nodes on (0, 1)
_GL_LOGW = np.log(_GL_WEIGHTS / 2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
# Below this log cdf value the tail is treated as underflowing (computed from the density).
_LOG_TINY = math.log(1e-280)
# Longest run of counts summed for the exact moments; wider distributions use Euler-Maclaurin.
_MAX_WINDOW = 200_000


def _log_expm1_over(b: np.ndarray) -> np.ndarray:
    """log((e^b - 1) / b), the log of the integral of e^(b t) over [0, 1]."""
    out = np.zeros(b.shape)
    pos = b > 1e-8
    neg = b < -1e-8
    bp = b[pos]
    out[pos] = bp + np.log(-np.expm1(-bp)) - np.log(bp)
    bn = b[neg]
    out[neg] = np.log(np.expm1(bn) / bn)
    mid = ~(pos | neg)
    out[mid] = b[mid] / 2.0
    return out


@register("distribution", "gaf")
@dataclass(frozen=True)
class GAF(CountDistribution):
    """Discretized gamma family counts: a gamma variable of mean ``mu`` rounded half up.

    Parameters
    ----------
    sigma : float
        Scale of the noise in (0, inf): the gamma variance is ``sigma^2 mu^nu``.
    nu : float
        Variance-mean exponent, any finite float (default 0: constant variance ``sigma^2``;
        ``nu < 0`` gives less noise to larger counts, document 000 section 3).

    Notes
    -----
    Document 000, equations (2)-(3); methods.md section 2.  With shape
    ``s = mu^(2-nu)/sigma^2`` and scale ``theta = sigma^2 mu^(nu-1)``::

        P(0) = P(s, 0.5/theta),  P(y) = P(s, (y+1/2)/theta) - P(s, (y-1/2)/theta),

    with ``P`` the regularized lower incomplete gamma function.  Each difference is taken on
    the side of the smaller tail (``gammaincc`` above the mode).  Where it would cancel (the
    density nearly flat over the unit interval) the probability is the integral of the density,
    by 32-point Gauss-Legendre after tilting by the chord of the log-density; where it would
    underflow, an endpoint Laplace expansion of that integral.  The log-density is written
    as ``-log w + log sqrt(s/(2 pi)) - stirling_error(s) - (x - s - s log(x/s))``, ``x = w/theta``,
    so it stays accurate for shapes up to 1e20 and beyond.

    The discretized variable is unbiased only approximately: :meth:`mean` and :meth:`var`
    sum the pmf exactly, except where the rounding error is provably below double
    precision (the gamma characteristic function at 2 pi is below 1e-17 / (1 + mu)), where
    they return ``mu`` and ``sigma^2 mu^nu + 1/12``.  ``mu = 0`` is taken as the point mass
    at 0 (the gamma is undefined there).

    Examples
    --------
    >>> from cellsafe.distributions import GAF
    >>> d = GAF(sigma=1.0, nu=0.0)
    >>> round(d.pmf(10, 10.0), 4)
    0.3829
    >>> round(d.var(10.0), 4)
    1.0833
    """

    sigma: float
    nu: float = 0.0
    name: ClassVar[str] = "gaf"
    _params: ClassVar[tuple[Param, ...]] = declared("distribution", "gaf")
    closed_form_tails: ClassVar[bool] = True

    def __post_init__(self) -> None:
        SIGMA.check(self.sigma, "GAF")
        nu = check_real(self.nu, "nu", "GAF")
        if not math.isfinite(nu):
            raise InvalidArgumentError(
                f"The 'nu' parameter of GAF must be a finite float in (-inf, inf). Got {self.nu!r} instead."
            )


    # ---------------------------------------------------------------- gamma helpers
    def shape_scale(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The gamma's (shape, scale) at mean ``mu > 0``."""
        # Powers, not exp(log(.)): the shape can reach 1e20, where exp would cost 1e-14 relative
        # error and, five standard deviations out, 1e-7 in the tail probabilities.
        m = np.asarray(mu, dtype=np.float64)
        s2 = float(self.sigma) ** 2
        nu = float(self.nu)
        return np.power(m, 2.0 - nu) / s2, s2 * np.power(m, nu - 1.0)

    @staticmethod
    def _log_density(w: np.ndarray, s: np.ndarray, theta: np.ndarray) -> np.ndarray:
        x = w / theta
        return -np.log(w) + 0.5 * np.log(s) - _HALF_LOG_2PI - _stirling_error(s) - _deviance_term(s, x)

    @staticmethod
    def _dlog_density(w: np.ndarray, s: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (s - 1.0) / w - 1.0 / theta, -(s - 1.0) / (w * w)

    def _log_interval(self, lo: np.ndarray, hi: np.ndarray, s: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """log P(lo < W <= hi) without cdf differences (``hi - lo <= 1``, ``lo > 0``)."""
        g_lo = self._log_density(lo, s, theta)
        g_hi = self._log_density(hi, s, theta)
        width = hi - lo
        b = g_hi - g_lo
        # r(t) = g(t) - chord(t) = (s - 1) [log t - chord of log t]: at most this much.
        bow = np.abs(s - 1.0) * (np.log(hi / lo) ** 2) / 8.0
        out = np.empty(lo.shape)
        quad = bow <= 20.0
        if quad.any():
            lq, wq, bq, gq = lo[quad], width[quad], b[quad], g_lo[quad]
            sq_, tq = s[quad], theta[quad]
            # Substitute u = (e^(b t') - 1)/(e^b - 1), t' = (t - lo)/width in [0, 1], so the
            # chord's exponential becomes uniform in u and Gauss-Legendre sees exp(r).
            u = _GL_U[None, :]
            bb = bq[:, None]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                t_norm = np.log1p(u * np.expm1(np.minimum(bb, 700.0))) / bb
                t_big = 1.0 + np.log(u + (1.0 - u) * np.exp(-np.maximum(bb, 700.0))) / bb
                tprime = np.where(np.abs(bb) < 1e-8, u, np.where(bb > 700.0, t_big, t_norm))
            t = lq[:, None] + wq[:, None] * tprime
            g_t = self._log_density(t, sq_[:, None], tq[:, None])
            chord = gq[:, None] + bb * tprime
            r = g_t - chord
            rmax = np.max(r, axis=1, keepdims=True)
            integral = np.log(np.sum(np.exp(_GL_LOGW[None, :] + r - rmax), axis=1)) + rmax[:, 0]
            out[quad] = gq + np.log(wq) + _log_expm1_over(bq) + integral
        steep = ~quad
        if steep.any():
            # Laplace at the end holding the mass: int e^g ~ e^g(e) / |g'(e)| (1 + g''/g'^2).
            ls, hs, ss, ts = lo[steep], hi[steep], s[steep], theta[steep]
            d_lo, c_lo = self._dlog_density(ls, ss, ts)
            d_hi, c_hi = self._dlog_density(hs, ss, ts)
            dec = d_lo < 0  # decreasing at lo: the mass sits at lo
            g_end = np.where(dec, g_lo[steep], g_hi[steep])
            d_end = np.where(dec, -d_lo, d_hi)
            c_end = np.where(dec, c_lo, c_hi)
            far = np.where(dec, g_hi[steep] - g_lo[steep], g_lo[steep] - g_hi[steep])
            with np.errstate(invalid="ignore", divide="ignore"):
                val = g_end - np.log(d_end) + np.log1p(c_end / d_end**2) + np.log1p(-np.exp(np.minimum(far, 0.0)))
            out[steep] = val
        return out

    # ---------------------------------------------------------------- hooks
    def _logpmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        s, theta = self.shape_scale(mu)
        out = np.empty(k.shape)
        zero = k == 0
        if zero.any():
            sz, tz = s[zero], theta[zero]
            lp = log_gamma_tails(sz, 0.5 / tz)[0]
            tiny = lp < _LOG_TINY
            if tiny.any():  # far left tail: the mass of (0, 1/2] sits at 1/2
                half = np.full(int(tiny.sum()), 0.5)
                g = self._log_density(half, sz[tiny], tz[tiny])
                d1, c1 = self._dlog_density(half, sz[tiny], tz[tiny])
                lp[tiny] = g - np.log(d1) + np.log1p(np.clip(c1 / d1**2, -0.5, None))
            out[zero] = lp
        pos = ~zero
        if pos.any():
            kp, sp, tp = k[pos], s[pos], theta[pos]
            lo, hi = kp - 0.5, kp + 0.5
            lp_lo, lq_lo = log_gamma_tails(sp, lo / tp)
            lp_hi, lq_hi = log_gamma_tails(sp, hi / tp)
            # Difference of the smaller tails: Q(lo) - Q(hi) above the mean, P(hi) - P(lo) below.
            upper = lo / tp > sp
            big = np.where(upper, lq_lo, lp_hi)
            small = np.where(upper, lq_hi, lp_lo)
            with np.errstate(divide="ignore", invalid="ignore"):
                gap = small - big  # <= 0
                lp = big + np.log(-np.expm1(gap))
            good = np.isfinite(lp) & (big > _LOG_TINY) & (gap < -1e-6)
            bad = ~good
            if bad.any():
                lp[bad] = self._log_interval(lo[bad], hi[bad], sp[bad], tp[bad])
            out[pos] = lp
        return out

    def _cdf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        s, theta = self.shape_scale(mu)
        return np.exp(log_gamma_tails(s, (k + 0.5) / theta)[0])

    def _sf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        s, theta = self.shape_scale(mu)
        return np.exp(log_gamma_tails(s, (k + 0.5) / theta)[1])

    def _sample(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s, theta = self.shape_scale(mu)
        w = rng.gamma(s, theta)
        return np.floor(w + 0.5).astype(np.int64)

    def _continuous_var(self, mu: np.ndarray) -> np.ndarray:
        return float(self.sigma) ** 2 * np.power(mu, float(self.nu))

    def _rounding_negligible(self, mu: np.ndarray) -> np.ndarray:
        # |E exp(2 pi i W)| = (1 + (2 pi theta)^2)^(-s/2) bounds every rounding correction.
        s, theta = self.shape_scale(mu)
        log_phi = -0.5 * s * np.log1p((2.0 * math.pi * theta) ** 2)
        return log_phi + np.log1p(mu) < math.log(1e-17)

    def _moments(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean = np.asarray(mu, dtype=np.float64).copy()
        var = self._continuous_var(mu) + 1.0 / 12.0
        todo = np.flatnonzero(~self._rounding_negligible(mu))
        if todo.size == 0:
            return mean, var
        m = mu[todo]
        sd = np.sqrt(self._continuous_var(m) + 1.0)
        hi = super()._upper_quantile(m, 1e-18).astype(np.float64)
        lo = np.maximum(np.floor(m - 10.0 * sd), 0.0)
        for _ in range(60):  # widen lo until the mass below it is negligible
            low_mass = np.where(lo > 0, self._cdf(np.maximum(lo - 1.0, 0.0), m), 0.0)
            wide = low_mass > 1e-18
            if not wide.any():
                break
            lo[wide] = np.maximum(np.floor(lo[wide] - 10.0 * sd[wide] - 1.0), 0.0)
        narrow = hi - lo <= _MAX_WINDOW
        if narrow.any():
            mn, vn = self._moments_by_window(m[narrow], lo[narrow], hi[narrow])
            mean[todo[narrow]] = mn
            var[todo[narrow]] = vn
        if (~narrow).any():
            mw, vw = self._moments_euler_maclaurin(m[~narrow])
            mean[todo[~narrow]] = mw
            var[todo[~narrow]] = vw
        return mean, var

    def _moments_by_window(self, m: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance from the pmf on [lo, hi], central moments about round(mu)."""
        centre = np.round(m)
        lens = (hi - lo + 1).astype(np.int64)
        first_mom = np.zeros(m.shape)
        second_mom = np.zeros(m.shape)
        left = np.arange(m.size)
        while left.size:
            cum = np.cumsum(lens[left])
            take = max(1, int(np.searchsorted(cum, _CHUNK_BUDGET, side="right")))
            sub, left = left[:take], left[take:]
            ln = lens[sub]
            seg = np.repeat(np.arange(sub.size), ln)
            first = np.cumsum(ln) - ln
            y = lo[sub][seg] + (np.arange(int(ln.sum())) - first[seg])
            p = np.exp(self._logpmf(y, m[sub][seg]))
            dev = y - centre[sub][seg]
            first_mom[sub] = np.add.reduceat(p * dev, first)
            second_mom[sub] = np.add.reduceat(p * dev * dev, first)
        return centre + first_mom, second_mom - first_mom**2

    def _moments_euler_maclaurin(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of wide distributions (support too long to sum).

        E[Y] = sum_y P(W > y + 1/2) and E[Y^2] = sum_y 2 (y + 1/2) P(W > y + 1/2).  The first
        ``n`` terms are summed; the rest by the midpoint Euler-Maclaurin formula,
        sum_{y >= n} h(y + 1/2) = int_n^inf h - h'(n)/24 + O(h'''(n)), with the integrals in
        closed form: int_n^inf Q(s, t/theta) dt = mu Q(s+1, n/theta) - n Q(s, n/theta) and
        int_n^inf 2t Q(s, t/theta) dt = s(s+1) theta^2 Q(s+2, n/theta) - n^2 Q(s, n/theta).
        ``n`` is doubled until the neglected third-derivative term is below 1e-15 of the mean.
        """
        s, theta = self.shape_scale(m)
        n = np.full(m.shape, 64.0)
        for _ in range(12):
            g1 = (s - 1.0) / n - 1.0 / theta
            g2 = -(s - 1.0) / (n * n)
            f_n = np.exp(self._log_density(n, s, theta))
            f2 = f_n * (g1 * g1 + g2)  # the density's second derivative at n
            small = 7.0 / 5760.0 * np.abs(f2) * (1.0 + 2.0 * n) <= 1e-15 * m
            if small.all():
                break
            n[~small] *= 2.0
        mean = np.empty(m.shape)
        second = np.empty(m.shape)
        for value in np.unique(n):
            idx = np.flatnonzero(n == value)
            y = np.arange(int(value), dtype=np.float64)
            sv, tv, mv = s[idx], theta[idx], m[idx]
            sf = np.exp(log_gamma_tails(sv[:, None], (y[None, :] + 0.5) / tv[:, None])[1])
            head1 = sf.sum(axis=1)
            head2 = (sf * (2.0 * y[None, :] + 1.0)).sum(axis=1)
            x = value / tv
            q0 = np.exp(log_gamma_tails(sv, x)[1])
            q1 = np.exp(log_gamma_tails(sv + 1.0, x)[1])
            q2 = np.exp(log_gamma_tails(sv + 2.0, x)[1])
            f_n = np.exp(self._log_density(np.full(idx.shape, value), sv, tv))
            tail1 = mv * q1 - value * q0 - f_n / 24.0
            tail2 = sv * (sv + 1.0) * tv * tv * q2 - value * value * q0 - (2.0 * q0 - 2.0 * value * f_n) / 24.0
            mean[idx] = head1 + tail1
            second[idx] = head2 + tail2
        return mean, second - mean * mean

    def _mean(self, mu: np.ndarray) -> np.ndarray:
        return self._moments(mu)[0]

    def _var(self, mu: np.ndarray) -> np.ndarray:
        return self._moments(mu)[1]

    def _rough_mean_sd(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(mu, dtype=np.float64), np.sqrt(self._continuous_var(mu) + 1.0 / 12.0)

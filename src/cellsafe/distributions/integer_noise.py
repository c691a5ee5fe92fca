"""Noise distributions on the integers with exact samplers: discrete Laplace and discrete Gaussian.

- :class:`DiscreteLaplace` (the two-sided geometric): P(x) proportional to exp(-|x| / scale).
- :class:`DiscreteGaussian`: P(x) proportional to exp(-x^2 / (2 sigma^2)).

Both draw in 64-bit integer arithmetic with the algorithms of Canonne, Kamath and Steinke (2020),
with no floating point in the draw (:mod:`cellsafe.distributions._exact`).  A parameter given as
a float is the dyadic rational it holds; when its numerator or denominator is too large for the
integer arithmetic it is replaced by a nearby rational with *at least as much* noise, which
:attr:`DiscreteLaplace.exact_scale` and :attr:`DiscreteGaussian.exact_sigma2` report, and which
the probabilities (``pmf``, ``sf``, ``var``...) describe.  A noise too large for 64-bit integers
is refused with :class:`NoiseOverflowError`; there is no cap on the noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from ._special import special

from .._params import Configurable, Param
from .._random import RNGLike, as_generator
from .._validation import check_integer, check_real
from ..exceptions import InvalidArgumentError
from . import _exact
from ._base import _as_float_array, _out
from ._exact import NoiseOverflowError

__all__ = ["DiscreteLaplace", "DiscreteGaussian", "NoiseOverflowError"]

#: Largest discrete Laplace scale: a draw leaves 64 bits with probability below exp(-64).
MAX_SCALE = 2.0**56
#: Largest discrete Gaussian sigma (proposals of scale sigma + 1 leave 64 bits below exp(-128)).
MAX_SIGMA = 2.0**50
# Products cd * t of the discrete Gaussian's rationals stay below 2**55 (see _exact.discrete_gaussian).
_GAUSS_BOUND = 2**55


def _as_fraction(value: Any) -> Fraction:
    return value if isinstance(value, Fraction) else Fraction(float(value))


def _integer_array(x: Any, owner: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """``x`` as a float array, its integer mask, and whether it was a scalar."""
    arr = _as_float_array(x, "x", owner)
    if np.isnan(arr).any():
        raise InvalidArgumentError(f"The 'x' argument of {owner} must not be NaN.")
    return arr, (arr == np.floor(arr)) & np.isfinite(arr), arr.ndim == 0


def _size(size: Any, owner: str) -> tuple[int, Any]:
    if size is None:
        return 1, None
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    for s in shape:
        check_integer(s, "size", owner, low=0)
    return int(np.prod(shape, dtype=np.int64)), shape


def _generator(rng: RNGLike) -> Any:
    # The samplers need only uniform integers (``integers(0, high, size, dtype)``): a numpy
    # Generator when seeded, the cryptographic source of cellsafe._secure for "secure".
    return as_generator(rng)


class _IntegerNoise(Configurable):
    """Shared public methods of symmetric distributions on the integers (hooks on x >= 0 tails)."""

    def _log_upper_tail(self, m: np.ndarray) -> np.ndarray:
        """log P(X >= m) for integers m >= 1."""
        raise NotImplementedError

    def _logpmf(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def logpmf(self, x: Any) -> Any:
        """log P(X = x); -inf where ``x`` is not an integer."""
        arr, ok, scalar = _integer_array(x, f"{type(self).__name__}.logpmf")
        out = np.full(arr.shape, -np.inf)
        out[ok] = self._logpmf(arr[ok])
        return _out(out, scalar)

    def pmf(self, x: Any) -> Any:
        """P(X = x); 0 where ``x`` is not an integer."""
        arr, ok, scalar = _integer_array(x, f"{type(self).__name__}.pmf")
        out = np.zeros(arr.shape)
        out[ok] = np.exp(self._logpmf(arr[ok]))
        return _out(out, scalar)

    def _sf_floor(self, x: np.ndarray) -> np.ndarray:
        """P(X > x) for integer-valued x: the small side of the two is always computed directly."""
        out = np.empty(x.shape)
        pos = x >= 0
        out[pos] = np.exp(self._log_upper_tail(x[pos] + 1.0))
        neg = ~pos & np.isfinite(x)
        # x <= -1: P(X > x) = 1 - P(X >= -x), the subtracted tail being <= 1/2
        out[neg] = -np.expm1(self._log_upper_tail(-x[neg]))
        out[np.isneginf(x)] = 1.0
        out[np.isposinf(x)] = 0.0
        return out

    def _logsf_floor(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape)
        pos = x >= 0
        out[pos] = self._log_upper_tail(x[pos] + 1.0)
        neg = ~pos & np.isfinite(x)
        out[neg] = np.log1p(-np.exp(self._log_upper_tail(-x[neg])))
        out[np.isneginf(x)] = 0.0
        out[np.isposinf(x)] = -np.inf
        return out

    def logsf(self, x: Any) -> Any:
        """log P(X > x), finite far beyond where P(X > x) underflows."""
        arr, _, scalar = _integer_array(x, f"{type(self).__name__}.logsf")
        return _out(self._logsf_floor(np.floor(arr)), scalar)

    def logcdf(self, x: Any) -> Any:
        """log P(X <= x) = log P(X > -floor(x) - 1)."""
        arr, _, scalar = _integer_array(x, f"{type(self).__name__}.logcdf")
        return _out(self._logsf_floor(-np.floor(arr) - 1.0), scalar)

    def sf(self, x: Any) -> Any:
        """P(X > x), computed directly (never as 1 - cdf)."""
        arr, _, scalar = _integer_array(x, f"{type(self).__name__}.sf")
        return _out(self._sf_floor(np.floor(arr)), scalar)

    def cdf(self, x: Any) -> Any:
        """P(X <= x) = P(X > -floor(x) - 1) by symmetry."""
        arr, _, scalar = _integer_array(x, f"{type(self).__name__}.cdf")
        return _out(self._sf_floor(-np.floor(arr) - 1.0), scalar)

    def mean(self) -> float:
        """E[X] = 0 (the distribution is symmetric)."""
        return 0.0

    def std(self) -> float:
        """The standard deviation."""
        return math.sqrt(self.var())

    def var(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class DiscreteLaplace(_IntegerNoise):
    """The discrete Laplace (two-sided geometric) distribution, P(x) proportional to exp(-|x| / scale).

    Parameters
    ----------
    scale : float or fractions.Fraction
        In (0, 2**56].  With q = exp(-1 / scale), P(x) = (1 - q) / (1 + q) q^|x|.

    Notes
    -----
    Canonne, Kamath and Steinke (2020), "The Discrete Gaussian for Differential Privacy",
    section 5: Algorithm 2 draws it exactly for a rational scale t / s, from uniform integers and
    Bernoulli(exp(-gamma)) draws (Algorithm 1).  Here the scale is taken as the exact rational
    ``exact_scale`` (the float's own value when its numerator and denominator fit 62 bits, else
    the nearest larger rational that does); ``pmf``, ``sf`` and ``var`` describe that exact law.
    The variance is 2q / (1 - q)^2.  It is the noise of the geometric mechanism (Ghosh, Roughgarden
    and Sundararajan 2012): scale Delta / epsilon gives epsilon-DP for integer queries of L1
    sensitivity Delta.

    Examples
    --------
    >>> from cellsafe.distributions import DiscreteLaplace
    >>> d = DiscreteLaplace(scale=2.0)
    >>> round(d.pmf(0), 6), round(d.var(), 6)
    (0.244919, 7.835396)
    >>> d.sample(5, rng=1).dtype
    dtype('int64')
    """

    scale: Any
    _params: ClassVar[tuple[Param, ...]] = (
        Param("scale", low=0.0, high=MAX_SCALE, low_open=True, doc="noise scale: P(x) proportional to exp(-|x|/scale)"),
    )
    _s: int = field(init=False, repr=False, compare=False)
    _t: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_noise_parameter(self.scale, "scale", "DiscreteLaplace", MAX_SCALE, "2**56")
        rate = _exact.rational_at_most(1 / _as_fraction(self.scale))
        if rate == 0:
            raise NoiseOverflowError(f"the scale {self.scale!r} of DiscreteLaplace is too large for 64-bit integers.")
        object.__setattr__(self, "_s", rate.numerator)
        object.__setattr__(self, "_t", rate.denominator)

    @classmethod
    def for_epsilon(cls, epsilon: float, sensitivity: int = 1) -> "DiscreteLaplace":
        """The noise of the epsilon-DP geometric mechanism for a query of integer L1 sensitivity.

        The rate 1 / scale is the largest rational at most ``epsilon / sensitivity`` with numerator
        and denominator below 2**62, so the guarantee (``sensitivity / exact_scale``) never exceeds
        ``epsilon``.

        Raises
        ------
        NoiseOverflowError
            When ``sensitivity / epsilon`` exceeds 2**56 (the noise would not fit 64-bit integers).
        """
        owner = "DiscreteLaplace.for_epsilon"
        eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True, high_open=True)
        sens = check_integer(sensitivity, "sensitivity", owner, low=1)
        if sens / eps > MAX_SCALE:
            raise NoiseOverflowError(
                f"epsilon={epsilon!r} with sensitivity {sens} asks for noise of scale {sens / eps:.3g}, beyond what "
                f"64-bit integers hold (at most 2**56 = {MAX_SCALE:.3g}); use epsilon >= {sens / MAX_SCALE:.3g}."
            )
        rate = _exact.rational_at_most(_as_fraction(epsilon) / sens)
        return cls(scale=Fraction(rate.denominator, rate.numerator))

    # ------------------------------------------------------------------ exact parameters
    @property
    def exact_scale(self) -> Fraction:
        """The scale t / s the sampler uses (equal to ``scale`` unless that needed more than 62 bits)."""
        return Fraction(self._t, self._s)

    @property
    def rate(self) -> float:
        """1 / exact_scale, the -log of the ratio q."""
        return self._s / self._t

    @property
    def q(self) -> float:
        """The ratio q = exp(-1 / scale) of successive probabilities."""
        return math.exp(-self.rate)

    # ------------------------------------------------------------------ probabilities
    def _log_norm(self) -> float:
        # log((1 - q) / (1 + q)), accurate for q near 1 (large scale) and near 0
        return math.log(-math.expm1(-self.rate)) - math.log1p(self.q)

    def _logpmf(self, x: np.ndarray) -> np.ndarray:
        return self._log_norm() - self.rate * np.abs(x)

    def _log_upper_tail(self, m: np.ndarray) -> np.ndarray:
        # P(X >= m) = q^m / (1 + q) for m >= 1
        return -self.rate * m - math.log1p(self.q)

    def var(self) -> float:
        """Var[X] = 2q / (1 - q)^2."""
        one_minus_q = -math.expm1(-self.rate)
        return 2.0 * self.q / one_minus_q**2

    # ------------------------------------------------------------------ sampling
    def sample(self, size: Any = None, rng: RNGLike = None) -> Any:
        """Exact draws (int64) by Algorithm 2 of Canonne, Kamath and Steinke (2020).

        Parameters
        ----------
        size : int or tuple of ints, optional
            Output shape; None gives one int.
        rng : None, int, SeedSequence, Generator or "secure"
            "secure" takes every random bit from the operating system.
        """
        n, shape = _size(size, "DiscreteLaplace.sample")
        draws = _exact.discrete_laplace(self._s, self._t, n, _generator(rng))
        return int(draws[0]) if shape is None else draws.reshape(shape)

    def sample_positive(self, size: int, rng: RNGLike = None) -> np.ndarray:
        """Exact draws of X given X >= 1: one plus a one-sided geometric of ratio q."""
        n, shape = _size(size, "DiscreteLaplace.sample_positive")
        return (1 + _exact.one_sided_geometric(self._s, self._t, n, _generator(rng))).reshape(shape)


@dataclass(frozen=True)
class DiscreteGaussian(_IntegerNoise):
    """The discrete Gaussian N_Z(0, sigma^2): P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers.

    Parameters
    ----------
    sigma : float or fractions.Fraction
        In (0, 2**50].

    Notes
    -----
    Canonne, Kamath and Steinke (2020), section 5, Algorithm 3: proposals from the discrete Laplace
    of scale t = floor(sigma) + 1, accepted with probability exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)).
    The sampler works with sigma^2 = c t for a rational c = cn / cd with cd t <= 2**55, and splits
    the acceptance exponent into three terms whose numerators and denominators fit 64 bits.  c is
    sigma^2 / t exactly when that fits, else the nearest larger rational (``exact_sigma2`` is then
    above sigma^2 by a relative 2**-55 t / c or less); the probabilities describe ``exact_sigma2``.

    The normalizing constant and the variance are sums over the integers; for sigma >= 1 they use
    the Poisson-summation (Jacobi theta) form, Z = sqrt(2 pi) sigma (1 + 2 sum_k exp(-2 pi^2 sigma^2 k^2))
    and Var = sigma^2 (1 + 2 sum_k (1 - 4 pi^2 sigma^2 k^2) e^{-2 pi^2 sigma^2 k^2}) / (1 + 2 sum_k e^{-2 pi^2 sigma^2 k^2}),
    which converge after k = 3; below, the sums themselves.  Tails are summed directly for sigma < 100
    and by the Euler-Maclaurin formula (three correction terms, error below sigma^-7) above.

    On a query of sensitivity 1, the noise gives 1 / (2 sigma^2)-zCDP: the Renyi divergence of
    order alpha between N_Z(j, sigma^2) and N_Z(j + 1, sigma^2) is alpha / (2 sigma^2) exactly
    (Canonne, Kamath and Steinke 2020, Proposition 14).

    Examples
    --------
    >>> from cellsafe.distributions import DiscreteGaussian
    >>> d = DiscreteGaussian(sigma=1.0)
    >>> round(d.pmf(0), 6), round(d.var(), 9)
    (0.398942, 0.999999789)
    >>> d.sample(3, rng=1).dtype
    dtype('int64')
    """

    sigma: Any
    _params: ClassVar[tuple[Param, ...]] = (
        Param("sigma", low=0.0, high=MAX_SIGMA, low_open=True, doc="P(x) proportional to exp(-x^2/(2 sigma^2))"),
    )
    _cn: int = field(init=False, repr=False, compare=False)
    _cd: int = field(init=False, repr=False, compare=False)
    _t: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_noise_parameter(self.sigma, "sigma", "DiscreteGaussian", MAX_SIGMA, "2**50")
        sig = _as_fraction(self.sigma)
        t = math.floor(sig) + 1
        c = _exact.rational_at_least(sig * sig / t, max_num=_GAUSS_BOUND, max_den=_GAUSS_BOUND // t)
        assert c <= t  # sigma^2 < t^2, and rounding c up on a grid of 1/cd cannot pass the integer t
        object.__setattr__(self, "_cn", c.numerator)
        object.__setattr__(self, "_cd", c.denominator)
        object.__setattr__(self, "_t", t)

    # ------------------------------------------------------------------ exact parameters
    @property
    def exact_sigma2(self) -> Fraction:
        """The sigma^2 the sampler uses (sigma^2 itself unless that needed more bits; never smaller)."""
        return Fraction(self._cn * self._t, self._cd)

    @property
    def sigma2(self) -> float:
        """exact_sigma2 as a float: the variance parameter every probability uses."""
        return float(self.exact_sigma2)

    @property
    def rho(self) -> float:
        """The zCDP parameter 1 / (2 sigma^2) of this noise on a query of sensitivity 1."""
        return 1.0 / (2.0 * self.sigma2)

    # ------------------------------------------------------------------ probabilities
    def _dual_terms(self) -> np.ndarray:
        """exp(-2 pi^2 sigma^2 k^2) for k = 1, 2, 3 (k = 4 is below 1e-137 for sigma >= 1)."""
        k = np.arange(1, 4, dtype=np.float64)
        return np.exp(-2.0 * math.pi**2 * self.sigma2 * k**2)

    def _direct_grid(self) -> tuple[np.ndarray, np.ndarray]:
        """x = 0..L and exp(-x^2 / (2 sigma^2)), L beyond which terms are below exp(-800)."""
        lim = int(math.ceil(40.0 * math.sqrt(self.sigma2) + 40.0))
        x = np.arange(lim + 1, dtype=np.float64)
        return x, np.exp(-(x**2) / (2.0 * self.sigma2))

    def _log_norm(self) -> float:
        if self.sigma2 >= 1.0:
            return 0.5 * math.log(2.0 * math.pi * self.sigma2) + math.log1p(2.0 * self._dual_terms().sum())
        _, g = self._direct_grid()
        return math.log(1.0 + 2.0 * g[1:].sum())

    def _logpmf(self, x: np.ndarray) -> np.ndarray:
        return -(x**2) / (2.0 * self.sigma2) - self._log_norm()

    def _log_upper_tail(self, m: np.ndarray) -> np.ndarray:
        log_z = self._log_norm()
        s = math.sqrt(self.sigma2)
        if s < 100.0:
            x, g = self._direct_grid()
            tail = np.cumsum(g[::-1])[::-1]  # smallest terms first
            # where the grid's terms underflow, sum in log space instead (below)
            near = m < x.size
            near[near] = tail[np.minimum(m[near], x.size - 1).astype(np.int64)] > 1e-280
            out = np.empty(m.shape)
            out[near] = np.log(tail[m[near].astype(np.int64)]) - log_z
            if not near.all():
                out[~near] = self._log_far_tail(m[~near]) - log_z
            return out
        u = m / s
        he1, he3, he5 = u, u**3 - 3 * u, u**5 - 10 * u**3 + 15 * u
        bracket = (
            s * math.sqrt(math.pi / 2.0) * special.erfcx(u / math.sqrt(2.0))
            + 0.5
            + he1 / (12.0 * s)
            - he3 / (720.0 * s**3)
            + he5 / (30240.0 * s**5)
        )
        return -(u**2) / 2.0 + np.log(bracket) - log_z

    def _log_far_tail(self, m: np.ndarray) -> np.ndarray:
        """log sum_{y >= m} exp(-y^2 / (2 sigma^2)) for m beyond ~37 sigma, in log space.

        With y = m + d the sum is exp(-m^2 / (2 sigma^2)) sum_d exp(-(2 m d + d^2) / (2 sigma^2)),
        whose terms fall by at least exp(-m / sigma^2) each: 40 sigma^2 / m + 2 of them suffice.
        """
        s2 = self.sigma2
        n_terms = int(math.ceil(40.0 * s2 / max(float(m.min()), 1.0))) + 2
        d = np.arange(n_terms, dtype=np.float64)
        inner = special.logsumexp(-(2.0 * m[:, None] * d[None, :] + d[None, :] ** 2) / (2.0 * s2), axis=1)
        return -(m**2) / (2.0 * s2) + inner

    def var(self) -> float:
        """Var[X] = E[X^2], by the dual (theta) series for sigma >= 1 and the direct sum below."""
        if self.sigma2 >= 1.0:
            k = np.arange(1, 4, dtype=np.float64)
            a = 2.0 * math.pi**2 * self.sigma2 * k**2
            e = np.exp(-a)
            return float(self.sigma2 * (1.0 + 2.0 * ((1.0 - 2.0 * a) * e).sum()) / (1.0 + 2.0 * e.sum()))
        x, g = self._direct_grid()
        return float(2.0 * (x**2 * g).sum() / (1.0 + 2.0 * g[1:].sum()))

    # ------------------------------------------------------------------ sampling
    def sample(self, size: Any = None, rng: RNGLike = None) -> Any:
        """Exact draws (int64) by Algorithm 3 of Canonne, Kamath and Steinke (2020).

        Parameters
        ----------
        size : int or tuple of ints, optional
            Output shape; None gives one int.
        rng : None, int, SeedSequence, Generator or "secure"
            "secure" takes every random bit from the operating system.
        """
        n, shape = _size(size, "DiscreteGaussian.sample")
        draws = _exact.discrete_gaussian(self._cn, self._cd, self._t, n, _generator(rng))
        return int(draws[0]) if shape is None else draws.reshape(shape)

    def sample_positive(self, size: int, rng: RNGLike = None) -> np.ndarray:
        """Exact draws of X given X >= 1 (see :func:`cellsafe.distributions._exact.positive_discrete_gaussian`)."""
        n, shape = _size(size, "DiscreteGaussian.sample_positive")
        return _exact.positive_discrete_gaussian(self._cn, self._cd, self._t, n, _generator(rng)).reshape(shape)


def _check_noise_parameter(value: Any, name: str, owner: str, limit: float, limit_text: str) -> None:
    """A positive number at most ``limit`` (beyond it the noise would not fit 64-bit integers)."""
    if isinstance(value, (float, int, np.floating, np.integer, Fraction)) and not isinstance(value, bool):
        if float(value) > limit:
            raise NoiseOverflowError(
                f"The {name!r} parameter of {owner} must be at most {limit_text} = {limit:.3g} for noise to fit "
                f"64-bit integers. Got {value!r} instead."
            )
    check_real(value, name, owner, low=0.0, high=limit, low_open=True)

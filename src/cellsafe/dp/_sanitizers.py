"""Additive-noise sanitizers for counts and sums with a stated sensitivity (002 chapter 7).

- :func:`laplace_mechanism`: Laplace(0, Delta_1 / epsilon), epsilon-DP (Dwork et al. 2006).
- :func:`geometric_mechanism`: two-sided geometric (discrete Laplace), P(k) proportional to
  exp(-epsilon |k| / Delta_1), epsilon-DP for integer queries (Ghosh et al. 2012).
- :func:`gaussian_mechanism`: Gaussian noise, (epsilon, delta)-DP with the classical calibration
  sigma = Delta_2 sqrt(2 ln(1.25 / delta)) / epsilon (epsilon < 1; Dwork and Roth 2014) or the
  analytic one of Balle and Wang (2018).
- :func:`discrete_gaussian_mechanism`: the discrete Gaussian on the integers with the rejection
  sampler of Canonne, Kamath and Steinke (2020).
- :func:`sanitize`: picks the discrete mechanisms for integer input and the continuous ones
  otherwise (Laplace family when delta = 0, Gaussian family when delta > 0).

Every sampler is written in terms of uniform variates with 53 random bits, so ``rng="secure"``
takes those bits straight from the operating system (``os.urandom``) instead of a seeded generator.
The samplers use floating-point arithmetic (not the exact rational arithmetic of Canonne et al.).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from scipy import special

from .._random import RNGLike, as_generator
from .._validation import check_in, check_real
from ..exceptions import InvalidArgumentError

__all__ = [
    "laplace_mechanism",
    "geometric_mechanism",
    "gaussian_mechanism",
    "discrete_gaussian_mechanism",
    "sanitize",
    "gaussian_sigma",
    "discrete_gaussian_sigma",
    "sample_two_sided_geometric",
    "sample_discrete_gaussian",
    "two_sided_geometric_pmf",
    "discrete_gaussian_pmf",
]

_TWO53 = float(2**53)


class _Uniforms:
    """Open-interval (0, 1) uniforms from a numpy Generator or from the OS entropy source."""

    def __init__(self, rng: RNGLike) -> None:
        self.secure = isinstance(rng, str) and rng == "secure"
        self.gen = None if self.secure else as_generator(rng)

    def __call__(self, n: int) -> np.ndarray:
        if self.secure:
            k = np.frombuffer(os.urandom(8 * n), dtype=np.uint64) >> np.uint64(11)
        else:
            k = self.gen.integers(0, 2**53, size=n, dtype=np.int64)
        return (k.astype(np.float64) + 0.5) / _TWO53


def _geometric(u: np.ndarray, log_q: float) -> np.ndarray:
    """Failures before a success, P(G >= k) = q**k, by inversion."""
    return np.floor(np.log(u) / log_q).astype(np.int64)


def _check_eps(epsilon: Any, owner: str) -> float:
    return check_real(epsilon, "epsilon", owner, low=0.0, low_open=True, high=math.inf, high_open=True)


def _check_sens(sensitivity: Any, owner: str, integer: bool = False) -> float:
    s = check_real(sensitivity, "sensitivity", owner, low=0.0, low_open=True, high=math.inf, high_open=True)
    if integer and s != int(s):
        raise InvalidArgumentError(
            f"The 'sensitivity' parameter of {owner} must be a positive integer for integer noise. Got {sensitivity!r}."
        )
    return s


def _check_delta(delta: Any, owner: str) -> float:
    return check_real(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)


# ---------------------------------------------------------------------- raw samplers
def sample_two_sided_geometric(scale: float, size: Any = None, rng: RNGLike = None) -> np.ndarray:
    """Draws with P(k) proportional to exp(-|k| / scale) on the integers."""
    n = int(np.prod(size)) if size is not None else 1
    uni = _Uniforms(rng)
    u = uni(2 * n)
    log_q = -1.0 / scale
    x = _geometric(u[:n], log_q) - _geometric(u[n:], log_q)
    return x.reshape(size) if size is not None else x[0]


def two_sided_geometric_pmf(k: Any, scale: float) -> np.ndarray:
    """P(k) = (1 - q) / (1 + q) q**|k| with q = exp(-1 / scale)."""
    q = math.exp(-1.0 / scale)
    return (1.0 - q) / (1.0 + q) * np.exp(-np.abs(np.asarray(k, dtype=float)) / scale)


def sample_discrete_gaussian(sigma: float, size: Any = None, rng: RNGLike = None) -> np.ndarray:
    """Draws from the discrete Gaussian N_Z(0, sigma^2): P(k) proportional to exp(-k^2 / (2 sigma^2)).

    Rejection from the discrete Laplace with scale t = floor(sigma) + 1, accepting a proposal y
    with probability exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)) (Canonne, Kamath and Steinke 2020,
    Algorithm 3).
    """
    n = int(np.prod(size)) if size is not None else 1
    uni = _Uniforms(rng)
    t = math.floor(sigma) + 1.0
    out = np.empty(n, dtype=np.int64)
    filled = 0
    log_q = -1.0 / t
    while filled < n:
        batch = max(16, int(1.5 * (n - filled)) + 8)
        u = uni(3 * batch)
        y = _geometric(u[:batch], log_q) - _geometric(u[batch : 2 * batch], log_q)
        keep = np.log(u[2 * batch :]) < -((np.abs(y) - sigma * sigma / t) ** 2) / (2.0 * sigma * sigma)
        acc = y[keep][: n - filled]
        out[filled : filled + acc.size] = acc
        filled += acc.size
    return out.reshape(size) if size is not None else out[0]


def discrete_gaussian_pmf(k: Any, sigma: float) -> np.ndarray:
    """P(k) of N_Z(0, sigma^2), the normalizer summed over |k| <= 40 sigma + 40."""
    lim = int(40 * sigma + 40)
    grid = np.arange(-lim, lim + 1, dtype=float)
    norm = np.exp(-(grid**2) / (2 * sigma * sigma)).sum()
    return np.exp(-(np.asarray(k, dtype=float) ** 2) / (2 * sigma * sigma)) / norm


# ---------------------------------------------------------------------- calibrations
def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, calibration: str = "analytic") -> float:
    """The noise standard deviation of the Gaussian mechanism.

    Parameters
    ----------
    epsilon, delta : float
        The (epsilon, delta)-DP target.
    sensitivity : float
        L2 sensitivity Delta_2 of the released vector.
    calibration : {"analytic", "classical"}
        "classical": Delta_2 sqrt(2 ln(1.25 / delta)) / epsilon, valid for epsilon < 1 (002
        section 7.6.3).  "analytic": the smallest sigma with
        Phi(Delta/(2 sigma) - epsilon sigma/Delta) - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta
        (Balle and Wang 2018, Theorem 8), valid for every epsilon > 0 and never larger.

    Examples
    --------
    >>> round(gaussian_sigma(0.5, 1e-5, calibration="classical"), 4)
    9.6896
    """
    owner = "gaussian_sigma"
    eps = _check_eps(epsilon, owner)
    dl = _check_delta(delta, owner)
    sens = _check_sens(sensitivity, owner)
    cal = check_in(calibration, "calibration", owner, ("analytic", "classical"))
    if cal == "classical":
        if eps >= 1.0:
            raise InvalidArgumentError(
                f"the classical Gaussian calibration holds for epsilon < 1. Got epsilon={eps}; "
                "use calibration='analytic'."
            )
        return sens * math.sqrt(2.0 * math.log(1.25 / dl)) / eps

    def excess(log_sigma: float) -> float:
        s = math.exp(log_sigma)
        hi = sens / (2 * s) - eps * s / sens
        lo = -sens / (2 * s) - eps * s / sens
        return math.exp(special.log_ndtr(hi)) - math.exp(eps + special.log_ndtr(lo)) - dl

    a, b = math.log(sens) - 30.0, math.log(sens) + 30.0
    from scipy.optimize import brentq  # imported here: scipy.optimize is slow to import

    return math.exp(brentq(excess, a, b, xtol=1e-13))


def _discrete_delta(sigma: float, eps: float, sens: int) -> float:
    """Exact delta of N_Z(0, sigma^2) noise on an integer query of sensitivity ``sens``."""
    lim = int(40 * sigma + 40 + sens)
    y = np.arange(-lim, lim + 1, dtype=float)
    logp = -(y**2) / (2 * sigma * sigma)
    norm = special.logsumexp(logp)
    p = np.exp(logp - norm)
    p_shift = np.exp(-((y - sens) ** 2) / (2 * sigma * sigma) - norm)
    return float(np.maximum(p - math.exp(eps) * p_shift, 0.0).sum())


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity: int = 1, dimension: int = 1) -> float:
    """The sigma of discrete Gaussian noise that gives (epsilon, delta)-DP.

    For one count (``dimension=1``) the privacy profile of an integer shift Delta is computed
    exactly, delta(sigma) = sum_y max(0, p(y) - e^epsilon p(y - Delta)), and sigma found by
    bisection.  For a vector (``dimension > 1``, ``sensitivity`` its L2 sensitivity) the noise is
    (Delta_2^2 / (2 sigma^2))-zCDP (Canonne, Kamath and Steinke 2020) and zCDP rho gives
    (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Bun and Steinke 2016), a conservative choice.
    """
    owner = "discrete_gaussian_sigma"
    eps = _check_eps(epsilon, owner)
    dl = _check_delta(delta, owner)
    if dimension > 1:
        sens = _check_sens(sensitivity, owner)
        lg = math.log(1.0 / dl)
        rho = (math.sqrt(lg + eps) - math.sqrt(lg)) ** 2
        return sens / math.sqrt(2.0 * rho)
    sens_i = int(_check_sens(sensitivity, owner, integer=True))
    lo = 0.05
    hi = 2.0 * gaussian_sigma(eps, dl, sens_i) + 1.0
    while _discrete_delta(hi, eps, sens_i) > dl:
        hi *= 2.0
    if _discrete_delta(lo, eps, sens_i) <= dl:
        return lo
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if _discrete_delta(mid, eps, sens_i) <= dl:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-10 * hi:
            break
    return hi


# ---------------------------------------------------------------------- mechanisms
def laplace_mechanism(value: Any, epsilon: float, sensitivity: float = 1.0, rng: RNGLike = None) -> np.ndarray:
    """Add Laplace(0, sensitivity / epsilon) noise to every element (epsilon-DP for L1 sensitivity).

    Parameters
    ----------
    value : array_like
        The confidential statistic(s).
    epsilon : float
        Privacy loss budget of this release, > 0.
    sensitivity : float, default 1
        L1 global sensitivity of the whole released vector (1 for one count; 002 section 7.2).
    rng : None, int, SeedSequence, Generator or "secure"

    Returns
    -------
    ndarray of float
    """
    owner = "laplace_mechanism"
    eps = _check_eps(epsilon, owner)
    sens = _check_sens(sensitivity, owner)
    v = np.asarray(value, dtype=float)
    u = _Uniforms(rng)(max(v.size, 1))[: v.size] - 0.5
    noise = -(sens / eps) * np.sign(u) * np.log1p(-2.0 * np.abs(u))
    return v + noise.reshape(v.shape)


def geometric_mechanism(value: Any, epsilon: float, sensitivity: int = 1, rng: RNGLike = None) -> np.ndarray:
    """Add two-sided geometric noise, P(k) proportional to exp(-epsilon |k| / sensitivity).

    The discrete analogue of the Laplace mechanism for integer statistics: epsilon-DP for an
    integer L1 sensitivity, integer output, no floating-point attack surface on the output.
    """
    owner = "geometric_mechanism"
    eps = _check_eps(epsilon, owner)
    sens = _check_sens(sensitivity, owner, integer=True)
    v = np.asarray(value)
    if v.size and not np.issubdtype(v.dtype, np.integer):
        raise InvalidArgumentError(
            "geometric_mechanism adds integer noise to integer statistics; got non-integer input."
        )
    noise = sample_two_sided_geometric(sens / eps, size=v.shape if v.ndim else (1,), rng=rng)
    return (v.astype(np.int64) + noise.reshape(v.shape)) if v.ndim else np.int64(v) + noise[0]


def gaussian_mechanism(
    value: Any,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    calibration: str = "analytic",
    rng: RNGLike = None,
) -> np.ndarray:
    """Add N(0, sigma^2) noise with sigma from :func:`gaussian_sigma` ((epsilon, delta)-DP, L2 sensitivity)."""
    sigma = gaussian_sigma(epsilon, delta, sensitivity, calibration)
    v = np.asarray(value, dtype=float)
    z = special.ndtri(_Uniforms(rng)(max(v.size, 1))[: v.size])
    return v + sigma * z.reshape(v.shape)


def discrete_gaussian_mechanism(
    value: Any, epsilon: float, delta: float, sensitivity: int = 1, rng: RNGLike = None
) -> np.ndarray:
    """Add discrete Gaussian noise calibrated by :func:`discrete_gaussian_sigma` to integer statistics."""
    v = np.asarray(value)
    if v.size and not np.issubdtype(v.dtype, np.integer):
        raise InvalidArgumentError(
            "discrete_gaussian_mechanism adds integer noise to integer statistics; got non-integer input."
        )
    sigma = discrete_gaussian_sigma(epsilon, delta, sensitivity, dimension=max(v.size, 1))
    noise = sample_discrete_gaussian(sigma, size=(max(v.size, 1),), rng=rng)
    return v.astype(np.int64) + noise[: v.size].reshape(v.shape) if v.ndim else np.int64(v) + noise[0]


def sanitize(
    value: Any,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float = 1,
    mechanism: str | None = None,
    rng: RNGLike = None,
) -> np.ndarray:
    """Release ``value`` with differential privacy, choosing the mechanism by type and delta.

    Parameters
    ----------
    value : array_like
        Counts (integers) or sums (floats).
    epsilon, delta : float
        The budget; delta = 0 asks for pure epsilon-DP.
    sensitivity : float
        L1 sensitivity for the Laplace family, L2 for the Gaussian family.
    mechanism : {"geometric", "laplace", "discrete_gaussian", "gaussian"}, optional
        Default: integers get "geometric" (delta = 0) or "discrete_gaussian"; floats get "laplace"
        or "gaussian" (analytic calibration).
    rng : None, int, SeedSequence, Generator or "secure"

    Examples
    --------
    >>> sanitize([120, 7, 0], epsilon=1.0, rng=3).dtype
    dtype('int64')
    """
    v = np.asarray(value)
    d = check_real(delta, "delta", "sanitize", low=0.0, high=1.0, high_open=True)
    if mechanism is None:
        integer = v.size == 0 or np.issubdtype(v.dtype, np.integer)
        if integer:
            mechanism = "geometric" if d == 0 else "discrete_gaussian"
        else:
            mechanism = "laplace" if d == 0 else "gaussian"
    mech = check_in(mechanism, "mechanism", "sanitize", ("geometric", "laplace", "discrete_gaussian", "gaussian"))
    if mech in ("geometric", "laplace") and d != 0:
        raise InvalidArgumentError(f"the {mech} mechanism gives pure epsilon-DP; set delta=0 or use a Gaussian one.")
    if mech in ("gaussian", "discrete_gaussian") and d == 0:
        raise InvalidArgumentError(f"the {mech} mechanism needs delta > 0.")
    if mech == "geometric":
        return geometric_mechanism(v, epsilon, sensitivity, rng)
    if mech == "laplace":
        return laplace_mechanism(v, epsilon, sensitivity, rng)
    if mech == "gaussian":
        return gaussian_mechanism(v, epsilon, d, sensitivity, rng=rng)
    return discrete_gaussian_mechanism(v, epsilon, d, sensitivity, rng)

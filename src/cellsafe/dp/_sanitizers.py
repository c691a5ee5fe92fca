"""Additive-noise sanitizers for counts and sums with a stated sensitivity (002 chapter 7).

- :func:`geometric_mechanism`: two-sided geometric (discrete Laplace), P(k) proportional to
  exp(-epsilon |k| / Delta_1), epsilon-DP for integer queries (Ghosh et al. 2012).
- :func:`discrete_gaussian_mechanism`: discrete Gaussian noise on integer queries, calibrated
  to (epsilon, delta)-DP from its exact privacy profile (Canonne, Kamath and Steinke 2020).
- :func:`laplace_mechanism`: Laplace(0, Delta_1 / epsilon) for real-valued statistics (sums,
  means), epsilon-DP (Dwork et al. 2006).  It refuses integer input: counts take the geometric
  mechanism, whose integer output has no floating-point attack surface (Mironov 2012).
- :func:`gaussian_mechanism`: Gaussian noise, (epsilon, delta)-DP with the classical calibration
  sigma = Delta_2 sqrt(2 ln(1.25 / delta)) / epsilon (epsilon < 1; Dwork and Roth 2014) or the
  analytic one of Balle and Wang (2018).
- :func:`sanitize`: picks the discrete mechanisms for integer input and the continuous ones
  otherwise (Laplace family when delta = 0, Gaussian family when delta > 0).

The two integer mechanisms draw their noise exactly, in 64-bit integer arithmetic, from
:class:`~cellsafe.distributions.DiscreteLaplace` and :class:`~cellsafe.distributions.DiscreteGaussian`:
correct for every epsilon whose noise fits 64-bit integers, a
:class:`~cellsafe.distributions.NoiseOverflowError` below that, and no cap on the noise.  With
``rng="secure"`` every random bit comes from the cryptographic source of ``cellsafe._secure`` (keyed
SHAKE-256 under a key from ``os.urandom``); the continuous mechanisms use uniforms with 53 random
bits from the same source.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .._privacy import cdp_rho
from .._random import RNGLike, as_generator
from .._validation import check_in, check_real
from ..distributions import DiscreteGaussian, DiscreteLaplace, NoiseOverflowError
from ..exceptions import InvalidArgumentError

__all__ = [
    "laplace_mechanism",
    "geometric_mechanism",
    "gaussian_mechanism",
    "discrete_gaussian_mechanism",
    "sanitize",
    "gaussian_sigma",
    "discrete_gaussian_sigma",
]

_TWO53 = float(2**53)
_INT64_MAX = np.iinfo(np.int64).max


class _Uniforms:
    """Open-interval (0, 1) uniforms from a numpy Generator or from the cryptographic source ("secure")."""

    def __init__(self, rng: RNGLike) -> None:
        self.gen = as_generator(rng)

    def __call__(self, n: int) -> np.ndarray:
        k = self.gen.integers(0, 2**53, size=n, dtype=np.int64)
        return (k.astype(np.float64) + 0.5) / _TWO53


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


def _integer_values(value: Any, owner: str) -> np.ndarray:
    v = np.asarray(value)
    if v.size and not np.issubdtype(v.dtype, np.integer):
        raise InvalidArgumentError(f"{owner} adds integer noise to integer statistics; got non-integer input.")
    return v.astype(np.int64)


def _add_noise(v: np.ndarray, noise: np.ndarray, owner: str) -> Any:
    """v + noise in int64, refusing (never wrapping) a sum outside the 64-bit range."""
    noise = noise.reshape(v.shape)
    over = ((noise > 0) & (v > _INT64_MAX - noise)) | ((noise < 0) & (v < -_INT64_MAX - noise))
    if np.any(over):
        raise NoiseOverflowError(
            f"{owner}: a value plus its noise leaves the 64-bit integer range; the values or the noise scale are "
            "too large for 64-bit integers."
        )
    out = v + noise
    return out if v.ndim else np.int64(out)


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

    # the bracket covers sigma = Delta sqrt(2 log(1.25 / delta)) / epsilon for every epsilon
    a, b = math.log(sens) - 30.0, math.log(sens) + 30.0 + max(0.0, -math.log(eps))
    from scipy.optimize import brentq  # imported here: scipy.optimize is slow to import

    return math.exp(brentq(excess, a, b, xtol=1e-13))


def _discrete_delta(sigma: float, eps: float, sens: int) -> float:
    """Exact delta of N_Z(0, sigma^2) noise on an integer query of sensitivity ``sens``.

    The privacy loss of output y is (sens^2 - 2 y sens) / (2 sigma^2), so (Canonne, Kamath and
    Steinke 2020, Theorem 7) delta = P(X > eps sigma^2 / sens - sens / 2) - e^eps P(X > eps sigma^2 / sens + sens / 2)
    with X ~ N_Z(0, sigma^2), from the distribution's direct tails.
    """
    noise = DiscreteGaussian(sigma)
    s2 = noise.sigma2
    lo = math.floor(eps * s2 / sens - sens / 2.0)
    hi = math.floor(eps * s2 / sens + sens / 2.0)
    return max(float(noise.sf(lo)) - math.exp(eps) * float(noise.sf(hi)), 0.0)


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1, dimension: int = 1) -> float:
    """The sigma of discrete Gaussian noise that gives (epsilon, delta)-DP.

    For one count (``dimension=1``) the privacy profile of an integer shift Delta is computed
    exactly, delta(sigma) = sum_y max(0, p(y) - e^epsilon p(y - Delta)), and sigma found by
    bisection.  For a vector (``dimension > 1``, ``sensitivity`` its L2 sensitivity) the noise is
    (Delta_2^2 / (2 sigma^2))-zCDP (Canonne, Kamath and Steinke 2020, Theorem 14) and rho is the
    largest that implies (epsilon, delta)-DP by their conversion (:func:`cellsafe.dp.cdp_rho`,
    Corollary 13): at epsilon 1 and delta 1e-9, rho 0.014973, where Bun and Steinke's
    rho + 2 sqrt(rho ln(1/delta)) allows 0.011779 (27% more noise variance).

    Examples
    --------
    >>> round(discrete_gaussian_sigma(1.0, 1e-9, 1.0, dimension=10), 4)
    5.7787
    """
    owner = "discrete_gaussian_sigma"
    eps = _check_eps(epsilon, owner)
    dl = _check_delta(delta, owner)
    if dimension > 1:
        sens = _check_sens(sensitivity, owner)
        rho = cdp_rho(eps, dl)
        sigma = sens / math.sqrt(2.0 * rho) * (1.0 + 1e-12)  # rounded up: 1 / (2 sigma^2) never above rho
        if sigma > 2.0**50:
            raise NoiseOverflowError(
                f"epsilon={epsilon!r}, delta={delta!r} ask for discrete Gaussian noise of sigma {sigma:.3g}, beyond "
                "what 64-bit integers hold (sigma at most 2**50); use a larger epsilon."
            )
        return sigma
    sens_i = int(_check_sens(sensitivity, owner, integer=True))
    lo = 0.05
    hi = 2.0 * gaussian_sigma(eps, dl, sens_i) + 1.0
    if hi / 2.0 > 2.0**50:
        raise NoiseOverflowError(
            f"epsilon={epsilon!r}, delta={delta!r} ask for discrete Gaussian noise of sigma about {hi / 2:.3g}, beyond "
            "what 64-bit integers hold (sigma at most 2**50); use a larger epsilon."
        )
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
    """Add Laplace(0, sensitivity / epsilon) noise to real-valued statistics (epsilon-DP for L1 sensitivity).

    Parameters
    ----------
    value : array_like of float
        The confidential statistic(s): sums, means.  Integer input (counts) is refused: use
        :func:`geometric_mechanism`, its exact integer counterpart.
    epsilon : float
        Privacy loss budget of this release, > 0.
    sensitivity : float, default 1
        L1 global sensitivity of the whole released vector (002 section 7.2).
    rng : None, int, SeedSequence, Generator or "secure"

    Returns
    -------
    ndarray of float

    Notes
    -----
    Floating-point Laplace noise leaks through the low-order bits of its output (Mironov 2012,
    "On significance of the least significant bits for differential privacy"): the set of
    reachable outputs depends on the input.  Counts therefore never take this path.
    """
    owner = "laplace_mechanism"
    eps = _check_eps(epsilon, owner)
    sens = _check_sens(sensitivity, owner)
    raw = np.asarray(value)
    if raw.size and (np.issubdtype(raw.dtype, np.integer) or raw.dtype == bool):
        raise InvalidArgumentError(
            "laplace_mechanism adds floating-point noise, whose low-order bits leak the input (Mironov 2012); "
            "integer counts take the exact geometric mechanism: use geometric_mechanism(value, epsilon) or "
            "sanitize(value, epsilon)."
        )
    v = np.asarray(value, dtype=float)
    u = _Uniforms(rng)(max(v.size, 1))[: v.size] - 0.5
    noise = -(sens / eps) * np.sign(u) * np.log1p(-2.0 * np.abs(u))
    return v + noise.reshape(v.shape)


def geometric_mechanism(value: Any, epsilon: float, sensitivity: float = 1, rng: RNGLike = None) -> np.ndarray:
    """Add two-sided geometric noise, P(k) proportional to exp(-epsilon |k| / sensitivity).

    The discrete analogue of the Laplace mechanism for integer statistics: epsilon-DP for an
    integer L1 sensitivity, integer output.  The noise is drawn exactly
    (:meth:`cellsafe.distributions.DiscreteLaplace.for_epsilon`, whose rate never exceeds
    epsilon / sensitivity).

    Raises
    ------
    NoiseOverflowError
        When sensitivity / epsilon exceeds 2**56, or a noisy value leaves the 64-bit range.

    Examples
    --------
    >>> geometric_mechanism([120, 7, 0], epsilon=1.0, rng=3).dtype
    dtype('int64')
    """
    owner = "geometric_mechanism"
    eps = _check_eps(epsilon, owner)
    sens = int(_check_sens(sensitivity, owner, integer=True))
    v = _integer_values(value, owner)
    noise = DiscreteLaplace.for_epsilon(eps, sens).sample(max(v.size, 1), rng=rng)
    return _add_noise(v, noise[: v.size], owner)


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
    value: Any, epsilon: float, delta: float, sensitivity: float = 1, rng: RNGLike = None
) -> np.ndarray:
    """Add discrete Gaussian noise calibrated by :func:`discrete_gaussian_sigma` to integer statistics.

    The noise is drawn exactly by :class:`cellsafe.distributions.DiscreteGaussian`, whose sigma is
    never below the calibrated one.
    """
    owner = "discrete_gaussian_mechanism"
    v = _integer_values(value, owner)
    sigma = discrete_gaussian_sigma(epsilon, delta, sensitivity, dimension=max(v.size, 1))
    noise = DiscreteGaussian(sigma).sample(max(v.size, 1), rng=rng)
    return _add_noise(v, noise[: v.size], owner)


def _counts_as_floats(v: np.ndarray) -> bool:
    """Floats that look like counts: every finite value whole (missing values aside)."""
    finite = v[np.isfinite(v)]
    return bool(v.size) and bool(np.all(finite == np.floor(finite)))


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
        if not integer and v.dtype.kind == "f" and _counts_as_floats(v):
            raise InvalidArgumentError(
                "the values are whole numbers held as floats (a column of counts turns float when it holds a NaN): "
                "counts take the exact integer mechanisms, never floating-point noise (whose low-order bits leak the "
                "input, Mironov 2012). Pass integers (drop or fill the missing values, then .astype('int64')), or "
                "mechanism='laplace' (or 'gaussian') if these are sums that happen to be whole."
            )
        if integer:
            mechanism = "geometric" if d == 0 else "discrete_gaussian"
        else:
            mechanism = "laplace" if d == 0 else "gaussian"
    mech = check_in(mechanism, "mechanism", "sanitize", ("geometric", "laplace", "discrete_gaussian", "gaussian"))
    if mech in ("geometric", "laplace") and d != 0:
        raise InvalidArgumentError(f"the {mech} mechanism gives pure epsilon-DP; set delta=0 or use a Gaussian one.")
    if mech == "laplace" and v.size and np.issubdtype(v.dtype, np.integer):
        raise InvalidArgumentError(
            "the laplace mechanism adds floating-point noise, whose low-order bits leak the input (Mironov 2012); "
            "integer counts take mechanism='geometric' (the default for integers)."
        )
    if mech in ("gaussian", "discrete_gaussian") and d == 0:
        raise InvalidArgumentError(f"the {mech} mechanism needs delta > 0.")
    if mech == "geometric":
        return geometric_mechanism(v, epsilon, sensitivity, rng)  # type: ignore[arg-type]  # an int: checked there
    if mech == "laplace":
        return laplace_mechanism(v, epsilon, sensitivity, rng)
    if mech == "gaussian":
        return gaussian_mechanism(v, epsilon, d, sensitivity, rng=rng)
    return discrete_gaussian_mechanism(v, epsilon, d, sensitivity, rng)  # type: ignore[arg-type]  # checked there

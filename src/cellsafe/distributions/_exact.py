"""Exact samplers on the integers in 64-bit integer arithmetic (Canonne, Kamath and Steinke 2020).

Every draw here uses only uniform integers from ``Generator.integers`` (exact), comparisons,
and integer additions, multiplications and divisions that are checked not to overflow: no
floating point touches a draw.  The kernels are vectorized over numpy int64 arrays: each loop
runs over rejection rounds (or over the rounds of a Bernoulli factory) with masks on the rows
still pending, never over individual draws.

- :func:`bernoulli_exp_fraction`: Bernoulli(exp(-gamma)) for 0 <= gamma = num / den <= 1
  (Algorithm 1 of Canonne, Kamath and Steinke), also for gamma a product of such fractions.
- :func:`bernoulli_exp_integer`: Bernoulli(exp(-F)) for an integer F >= 0.
- :func:`one_sided_geometric`: P(Y = y) proportional to exp(-y s / t), y = 0, 1, ...
- :func:`discrete_laplace`: P(Z = z) proportional to exp(-|z| s / t) (Algorithm 2).
- :func:`discrete_gaussian`: P(Z = z) proportional to exp(-z^2 / (2 sigma^2)) with
  sigma^2 = c t, c = cn / cd (Algorithm 3, with the acceptance exponent split into terms whose
  numerators and denominators fit 64 bits).
- :func:`positive_discrete_gaussian`: the same conditioned on Z >= 1.

Rational parameters are chosen by :func:`rational_at_most` / :func:`rational_at_least`.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from ..exceptions import InvalidArgumentError

__all__ = [
    "LIMIT",
    "NoiseOverflowError",
    "rational_at_most",
    "rational_at_least",
    "SecureIntegers",
    "bernoulli_exp_fraction",
    "bernoulli_exp_integer",
    "geometric_exp1",
    "one_sided_geometric",
    "discrete_laplace",
    "discrete_gaussian",
    "positive_discrete_gaussian",
]

# Numerators and denominators of every rational parameter stay at or below 2**62, so that the sum of
# two numbers below it (a remainder plus a remainder) still fits a signed 64-bit integer.
LIMIT = 2**62
_MAX = np.iinfo(np.int64).max
# Saturation value of an integer exponent: exp(-2**62) is a probability no run can ever observe.
_SATURATED = np.int64(2**62)


class NoiseOverflowError(InvalidArgumentError):
    """A noise parameter or a draw does not fit the 64-bit integer arithmetic of the exact samplers."""


# ---------------------------------------------------------------------- rationals
def rational_at_most(x: Fraction, max_num: int = LIMIT, max_den: int = LIMIT) -> Fraction:
    """A close rational p / q <= x with 0 <= p <= ``max_num`` and 1 <= q <= ``max_den`` (x itself when it fits)."""
    if x < 0:
        raise ValueError("x must be >= 0")
    if x.numerator <= max_num and x.denominator <= max_den:
        return x
    if x >= max_num:
        return Fraction(max_num)
    q = max_den if x * max_den <= max_num else max(1, int(max_num / x))
    best = Fraction(math.floor(x * q), q)
    cand = x.limit_denominator(q)
    if best < cand <= x and cand.numerator <= max_num:
        best = cand
    return best


def rational_at_least(x: Fraction, max_num: int = LIMIT, max_den: int = LIMIT) -> Fraction:
    """A close rational p / q >= x with 1 <= p <= ``max_num`` and 1 <= q <= ``max_den`` (x itself when it fits).

    Raises ValueError when even q = 1 gives p > ``max_num``.
    """
    if x <= 0:
        raise ValueError("x must be > 0")
    if x.numerator <= max_num and x.denominator <= max_den:
        return x
    q = max_den if x * max_den <= max_num - 1 else max(1, int((max_num - 1) / x))
    best = Fraction(math.ceil(x * q), q)
    if best.numerator > max_num:
        raise ValueError("x is too large for the bound on the numerator")
    cand = x.limit_denominator(q)
    if x <= cand < best and cand.numerator <= max_num:
        best = cand
    return best


class SecureIntegers:
    """Uniform integers from the operating system's CSPRNG (``os.urandom``), for ``rng="secure"``.

    Implements the one method the exact samplers use, ``integers(0, high, size, dtype)``, by
    rejection on masked 64-bit words: exact, and every bit from the operating system.
    """

    def integers(self, low: int, high: Any, size: int | None = None, dtype: Any = np.int64) -> np.ndarray:
        if low != 0:
            raise AssertionError("only integers(0, high) is used by the exact samplers")
        high = np.asarray(high, dtype=np.int64)
        n = int(size) if size is not None else int(high.size)
        high = np.broadcast_to(high, (n,))
        bits = np.ceil(np.log2(np.maximum(high, 2).astype(np.float64))).astype(np.uint64)  # only sizes a mask
        mask = (np.uint64(1) << bits) - np.uint64(1)
        mask = np.where(mask < (high - 1).astype(np.uint64), (mask << np.uint64(1)) | np.uint64(1), mask)
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            words = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64) & mask[todo]
            ok = words < high[todo].astype(np.uint64)
            out[todo[ok]] = words[ok].astype(np.int64)
            todo = todo[~ok]
        return out


# ---------------------------------------------------------------------- integer arithmetic
def _muldivmod(x: Any, y: Any, m: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quotient and remainder of x * y by m without overflow (0 <= x, y; 1 <= m <= 2**62).

    The quotient saturates at 2**62 (only ever used as an exponent, where exp(-2**62) cannot be
    observed).  Products that fit 63 bits are computed directly; the others (rare) by
    double-and-add over the bits of y with the remainder kept below m.
    """
    # common case first: every product fits 63 bits (checked on the maxima, in Python integers)
    x_max = int(np.max(x, initial=0))
    y_max = int(np.max(y, initial=0))
    if x_max * y_max <= _MAX:
        return np.divmod(np.multiply(x, y, dtype=np.int64), m)
    x, y, m = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(y, np.int64), np.asarray(m, np.int64))
    q = np.empty(x.shape, dtype=np.int64)
    r = np.empty(x.shape, dtype=np.int64)
    safe = (y == 0) | (x <= _MAX // np.maximum(y, 1))
    p = x[safe] * y[safe]
    q[safe], r[safe] = np.divmod(p, m[safe])
    if not safe.all():
        idx = np.flatnonzero(~safe)
        xs, ys, ms = x[idx], y[idx], m[idx]
        xq, xr = np.divmod(xs, ms)
        # x * y = xq * y * m + xr * y: the first part's quotient is xq * y (saturating)
        big = xq > (_SATURATED // np.maximum(ys, 1))
        qa = np.where(big, _SATURATED, xq * np.where(big, 0, ys))
        aq = np.zeros_like(xs)
        ar = np.zeros_like(xs)
        for bit in range(int(ys.max()).bit_length() - 1, -1, -1):
            aq = np.where(aq >= _SATURATED // 2, _SATURATED, 2 * aq)
            ar = 2 * ar
            over = ar >= ms
            ar[over] -= ms[over]
            aq[over] += 1
            on = ((ys >> bit) & 1).astype(bool)
            ar[on] += xr[on]
            over = ar >= ms
            ar[over] -= ms[over]
            aq[over] += 1
            aq = np.minimum(aq, _SATURATED)
        q[idx] = np.minimum(qa + np.minimum(aq, _SATURATED), _SATURATED)
        r[idx] = ar
    return q, r


# ---------------------------------------------------------------------- Bernoulli factories
def bernoulli_exp_fraction(
    factors: list[tuple[np.ndarray | int, np.ndarray | int]], size: int, gen: np.random.Generator
) -> np.ndarray:
    """Bernoulli(exp(-gamma)) with gamma = prod(num / den) over ``factors``, each 0 <= num <= den.

    Algorithm 1 of Canonne, Kamath and Steinke (2020) for gamma in [0, 1]: with K = 1, 2, ...,
    draw A ~ Bernoulli(gamma / K) until A = 0, and return 1 when the final K is odd.
    Bernoulli(gamma / K) is the product of independent Bernoulli(num / den) (a uniform integer
    below den compared with num) and Bernoulli(1 / K), so no product of parameters is formed.
    """
    # scalar denominators stay scalars: Generator.integers is much faster with a scalar bound
    facs = [
        (np.broadcast_to(np.asarray(n, np.int64), (size,)), d if np.ndim(d) == 0 else np.asarray(d, np.int64))
        for n, d in factors
    ]
    # round K = 1 over every row without index arrays (the bulk of the work)
    a = np.ones(size, dtype=bool)
    for num, den in facs:
        a &= gen.integers(0, den, size=size, dtype=np.int64) < num
    out = np.ones(size, dtype=bool)  # stopping at K = 1 (odd) returns 1
    active = np.flatnonzero(a)
    k = 2
    while active.size:
        a = gen.integers(0, k, size=active.size, dtype=np.int64) == 0
        for num, den in facs:
            high = den if np.ndim(den) == 0 else np.asarray(den)[active]
            a &= gen.integers(0, high, size=active.size, dtype=np.int64) < num[active]
        out[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return out


# Algorithm 1 with gamma = 1 stops at the first K >= 2 whose Bernoulli(1 / K) fails: P(K > k) = 1 / k!.
# With W uniform on {0, ..., 20! - 1}, the events {W < 20! / k!} have exactly these probabilities, so one
# uniform integer gives K for every K <= 20 (W = 0, probability 1 / 20!, continues the loop from k = 21).
_F20 = math.factorial(20)
_K_THRESHOLDS = np.array([_F20 // math.factorial(k) for k in range(20, 1, -1)], dtype=np.int64)  # increasing


def _bernoulli_exp1(size: int, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-1)): Algorithm 1 with gamma = 1 (returns 1 when the stopping K is odd)."""
    w = gen.integers(0, _F20, size=size, dtype=np.int64)
    # K = smallest k in 2..20 with w >= 20!/k!; thresholds run k = 20 down to 2
    k = 20 - np.searchsorted(_K_THRESHOLDS, w, side="right") + 1
    out = k % 2 == 1
    rest = np.flatnonzero(w == 0)  # K > 20: continue the loop exactly
    k_next = 21
    while rest.size:
        a = gen.integers(0, k_next, size=rest.size, dtype=np.int64) == 0
        out[rest[~a]] = k_next % 2 == 1
        rest = rest[a]
        k_next += 1
    return out


def geometric_exp1(size: int, gen: np.random.Generator) -> np.ndarray:
    """V with P(V >= v) = exp(-v): the number of Bernoulli(exp(-1)) successes before a failure."""
    v = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        b = _bernoulli_exp1(active.size, gen)
        active = active[b]
        v[active] += 1
    return v


def bernoulli_exp_integer(f: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-F)) for integers F >= 0: F successive Bernoulli(exp(-1)) successes."""
    f = np.asarray(f, dtype=np.int64)
    out = f == 0
    active = np.flatnonzero(~out)
    left = f[active].copy()
    while active.size:
        b = _bernoulli_exp1(active.size, gen)
        left = left[b] - 1
        active = active[b]
        done = left == 0
        out[active[done]] = True
        active, left = active[~done], left[~done]
    return out


# ---------------------------------------------------------------------- rejection loop
# Proposals per rejection round (see _fill): 2**16 proposals hold about 20 MB of temporaries.
_ROUND = 1 << 16


def _fill(size: int, propose: Callable[[int], tuple[np.ndarray, np.ndarray]], rate: float) -> np.ndarray:
    """``size`` accepted values from rounds of ``propose(n) -> (values, accepted)``, in order.

    ``rate`` is a guess of the acceptance rate; later rounds use the rate observed so far.  It
    only sizes the rounds (the accepted values are the same law whatever the sizes); a round
    proposes at most ``_ROUND`` values, so memory beyond the output is bounded.
    """
    out = np.empty(size, dtype=np.int64)
    filled = proposed = accepted_total = 0
    while filled < size:
        need = size - filled
        if proposed:
            rate = max(accepted_total / proposed, 1e-3)
        # at most _ROUND proposals at a time: the temporaries of a round (a few hundred bytes per
        # proposal in the discrete Gaussian's nested rejections) stay bounded whatever the size
        n = min(int(need / rate * 1.05) + 8, 1000 * need + 8, _ROUND)
        values, accepted = propose(n)
        proposed += n
        got = values[accepted]
        accepted_total += got.size
        got = got[:need]
        out[filled : filled + got.size] = got
        filled += got.size
    return out


# ---------------------------------------------------------------------- geometric and discrete Laplace
def _floor_div_affine(u: np.ndarray, v: np.ndarray, s: int, t: int) -> np.ndarray:
    """floor((u + t v) / s) for 0 <= u < t, v >= 0, without forming t v when it would overflow."""
    a, b = divmod(t, s)
    # (a + 1)(v + 1) <= 2**62 bounds a v + floor(b v / s) + floor(u / s) + 1
    if a and int(v.max(initial=0)) > LIMIT // (a + 1) - 1:
        raise NoiseOverflowError(
            "a draw of the discrete Laplace exceeded the 64-bit integer range (a probability below "
            "exp(-64) at the largest allowed scale); use a smaller noise scale."
        )
    if s == 1:  # integer scale: floor(u + t v) exactly
        return u + t * v
    qu, ru = np.divmod(u, s)
    if b == 0:
        return a * v + qu
    qb, rb = _muldivmod(b, v, s)
    return a * v + qb + qu + (rb + ru) // s


def one_sided_geometric(s: int, t: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """P(Y = y) = (1 - q) q^y on y = 0, 1, ... with q = exp(-s / t) (s, t positive ints <= 2**62).

    Steps 1-5 of Algorithm 2 of Canonne, Kamath and Steinke (2020): U uniform on {0, ..., t - 1}
    kept with probability exp(-U / t), V with P(V >= v) = exp(-v), and Y = floor((U + t V) / s)
    (U + t V is geometric with ratio exp(-1 / t)).
    """

    def propose(n: int) -> tuple[np.ndarray, np.ndarray]:
        u = gen.integers(0, t, size=n, dtype=np.int64)
        keep = bernoulli_exp_fraction([(u, t)], n, gen)
        y = np.zeros(n, dtype=np.int64)
        idx = np.flatnonzero(keep)
        v = geometric_exp1(idx.size, gen)
        y[idx] = _floor_div_affine(u[idx], v, s, t)
        return y, keep

    # acceptance of U: t (1 - exp(-1/t)) >= 1 - exp(-1)
    return _fill(size, propose, 0.63)


def discrete_laplace(s: int, t: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """P(Z = z) proportional to exp(-|z| s / t) on the integers (Algorithm 2): a one-sided
    geometric magnitude with a uniform sign, rejecting the negative zero."""
    q_ratio = math.exp(-s / t)  # only sizes the batches; never enters a draw

    def propose(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = one_sided_geometric(s, t, n, gen)
        neg = gen.integers(0, 2, size=n, dtype=np.int64).astype(bool)
        return np.where(neg, -y, y), ~(neg & (y == 0))

    return _fill(size, propose, 1.0 - (1.0 - q_ratio) / 2.0)


# ---------------------------------------------------------------------- discrete Gaussian
def _gaussian_accept(z: np.ndarray, cn: int, cd: int, t: int, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-(z - c)^2 / (2 c t))) for z >= 0, c = cn / cd <= t.

    With W = |z cd - cn| = alpha cn + beta (0 <= beta < cn) the exponent is
    alpha^2 cn / (2 cd t) + alpha beta / (cd t) + (beta / (2 cn)) (beta / (cd t)),
    three terms whose parts fit 64 bits; exp(-sum) is the product of three Bernoulli draws.
    """
    if int(z.max(initial=0)) > (_MAX - cn) // cd:
        raise NoiseOverflowError(
            "a proposal of the discrete Gaussian sampler exceeded the 64-bit integer range "
            "(a probability below exp(-128)); use a smaller sigma."
        )
    w = np.abs(z * cd - cn)
    den = 2 * cn * cd * t
    w_max = int(w.max(initial=0))
    if den <= LIMIT and w_max * w_max <= _MAX:
        # small parameters: the exponent W^2 / (2 cn cd t) is one fraction of 64-bit integers
        f, r = np.divmod(w * w, den)
        ok = bernoulli_exp_integer(f, gen)
        idx = np.flatnonzero(ok)
        ok[idx] = bernoulli_exp_fraction([(r[idx], den)], idx.size, gen)
        return ok
    alpha, beta = np.divmod(w, cn)
    two_cdt = 2 * cd * t
    # alpha^2 cn / (2 cd t) = alpha * (alpha cn / (2 cd t)), in two exact steps
    qa, ra = _muldivmod(alpha, cn, two_cdt)
    qb, rb = _muldivmod(alpha, ra, two_cdt)
    big = (qa > 0) & (alpha > _SATURATED // np.maximum(qa, 1))
    q1 = np.where(big, _SATURATED, alpha * np.where(big, 0, qa) + np.minimum(qb, _SATURATED))
    q2, r2 = _muldivmod(alpha, beta, cd * t)
    f = np.minimum(np.minimum(q1, _SATURATED) + q2, _SATURATED)
    ok = bernoulli_exp_integer(f, gen)
    idx = np.flatnonzero(ok)
    ok[idx] = bernoulli_exp_fraction([(rb[idx], two_cdt)], idx.size, gen)
    idx = idx[ok[idx]]
    ok[idx] = bernoulli_exp_fraction([(r2[idx], cd * t)], idx.size, gen)
    idx = idx[ok[idx]]
    ok[idx] = bernoulli_exp_fraction([(beta[idx], 2 * cn), (beta[idx], cd * t)], idx.size, gen)
    return ok


def discrete_gaussian(cn: int, cd: int, t: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """P(Z = z) proportional to exp(-z^2 / (2 sigma^2)) with sigma^2 = (cn / cd) t (Algorithm 3).

    Proposals come from the discrete Laplace of scale t; a proposal y is accepted with probability
    exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)).  The algorithm is exact for any t > 0; t close to
    sigma makes it efficient.  Requires cn <= cd t and cd t <= 2**55.
    """

    def propose(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = discrete_laplace(1, t, n, gen)
        return y, _gaussian_accept(np.abs(y), cn, cd, t, gen)

    return _fill(size, propose, 0.5)


def positive_discrete_gaussian(cn: int, cd: int, t: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """The discrete Gaussian of :func:`discrete_gaussian` conditioned on Z >= 1.

    For sigma >= 1 (t >= 2): |Z| given Z != 0, by rejecting zeros (acceptance 1 - P(0) >= 0.6).
    For sigma < 1 (t = 1): proposals n = 1 + G with G geometric of ratio exp(-3 / (2 sigma^2)),
    accepted with probability exp(-(n - 1)(n - 2) / (2 sigma^2)); since
    n^2 - 1 = 3 (n - 1) + (n - 1)(n - 2), the accepted n has P(n) proportional to exp(-n^2 / (2 sigma^2)).
    """
    if t >= 2:

        def propose(n: int) -> tuple[np.ndarray, np.ndarray]:
            z = np.abs(discrete_gaussian(cn, cd, t, n, gen))
            return z, z > 0

        return _fill(size, propose, 0.6)
    # sigma^2 = cn t / cd with t = 1: 1 / (2 sigma^2) = cd / (2 cn)
    if 3 * cd > LIMIT:
        raise NoiseOverflowError("sigma is too small for the exact conditional sampler; use sigma >= 2**-26.")

    def propose_small(n: int) -> tuple[np.ndarray, np.ndarray]:
        g = one_sided_geometric(3 * cd, 2 * cn, n, gen)
        num_q, _ = _muldivmod(g, np.maximum(g - 1, 0), 1)  # (n - 1)(n - 2) with n = 1 + g, saturating
        qf, rf = _muldivmod(num_q, cd, 2 * cn)
        ok = bernoulli_exp_integer(qf, gen)
        idx = np.flatnonzero(ok)
        ok[idx] = bernoulli_exp_fraction([(rf[idx], 2 * cn)], idx.size, gen)
        return g + 1, ok

    return _fill(size, propose_small, 0.5)

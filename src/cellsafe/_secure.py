"""A cryptographic source of randomness for ``rng="secure"``.

A numpy :class:`~numpy.random.Generator` is not a cryptographic generator, however it is seeded:
PCG64 and the other numpy bit generators have no security claim, and PCG64's state has been
recovered from its outputs (Bouillaguet, Martinez and Sauvage 2020).  Seeding one from
``os.urandom`` makes its starting point unguessable, not its stream unpredictable.  For a
differentially private release that is not enough: whoever can predict the noise can subtract it.

So ``rng="secure"`` means two objects here:

* :class:`SecureSeed`, a root holding a secret 256-bit key drawn from the operating system's
  CSPRNG (``os.urandom``), never printed nor stored;
* :class:`SecureGenerator`, the stream of one key path under that root: the bytes of SHAKE-256
  (FIPS 202) over the domain label, the key, the path and a block counter.  Keying a sponge by a
  prefix is the construction of KMAC (NIST SP 800-185); its output is computationally
  indistinguishable from uniform bytes to anyone without the key.  Streams are keyed by block like
  numpy's (``cellsafe._random.stream``), so a mechanism that reads a block's stream twice (the
  two passes of the fixed-total synthesizers) reads the same numbers twice within one run, and a
  release is the same however it is chunked; a fresh key makes every run different.

The generator offers the subset of :class:`numpy.random.Generator` that the mechanisms use, with
the same signatures, built on exact uniform integers (rejection on masked 64-bit words) and 53-bit
uniforms: ``integers``, ``random``, ``standard_normal``/``normal`` (inverse normal cdf),
``standard_gamma``/``gamma`` (Marsaglia and Tsang 2000), ``binomial`` and ``poisson`` (inversion of
the cdf with scipy's quantile functions), ``multinomial`` (inversion on the cumulative
probabilities), ``choice`` and ``permutation`` (sorting uniform 64-bit keys).  Any other method is
refused with a message: nothing silently falls back to a non-cryptographic generator.  The
algorithms differ from numpy's, so a secure draw never equals a seeded one; the laws are the same,
as the statistical tests check with a fixed key.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
from typing import Any

import numpy as np

from .exceptions import InvalidArgumentError

__all__ = ["SecureSeed", "SecureGenerator"]

_LABEL = b"cellsafe/secure-stream/1\x00"
_KEY_BYTES = 32
_CHUNK = 1 << 12  # bytes per SHAKE call (small: most streams read a few words)
_TWO53 = float(2**53)
_GEOMETRIC_CAP_BITS = 62  # geometric variates are capped at 2**62 (beyond any table's number of cells)


def _encode_path(path: tuple[int, ...]) -> bytes:
    # length-prefixed fixed-width words: distinct paths give distinct byte strings
    out = bytearray(len(path).to_bytes(4, "big"))
    for k in path:
        out += int(k).to_bytes(16, "big", signed=False)
    return bytes(out)


class SecureSeed:
    """The root of the cryptographic streams: a secret key from ``os.urandom`` and a spawn path.

    Parameters
    ----------
    key : bytes, optional
        32 bytes; drawn from the operating system when omitted (the normal use).  A known key
        gives reproducible streams, for tests only: anyone who knows it can recompute the draws.
    spawn_key : tuple of int
        The path of this root under the key (as :class:`numpy.random.SeedSequence`'s).

    Examples
    --------
    >>> root = SecureSeed()
    >>> a, b = root.spawn(2)
    >>> a.spawn_key, b.spawn_key
    ((0,), (1,))
    """

    def __init__(self, key: bytes | None = None, spawn_key: tuple[int, ...] = ()) -> None:
        key = os.urandom(_KEY_BYTES) if key is None else bytes(key)
        if len(key) != _KEY_BYTES:
            raise InvalidArgumentError(f"A SecureSeed key must be {_KEY_BYTES} bytes. Got {len(key)} bytes instead.")
        self._key = key
        self.spawn_key = tuple(int(k) for k in spawn_key)
        self.n_children_spawned = 0

    def spawn(self, n_children: int) -> list["SecureSeed"]:
        """``n_children`` independent roots (the next unused paths under this one)."""
        first = self.n_children_spawned
        self.n_children_spawned += int(n_children)
        return [SecureSeed(self._key, self.spawn_key + (i,)) for i in range(first, first + int(n_children))]

    def generator(self, *key: int) -> "SecureGenerator":
        """The stream keyed by ``key`` under this root."""
        return SecureGenerator(self._key, self.spawn_key + tuple(int(k) for k in key))

    @property
    def entropy(self) -> Any:
        raise InvalidArgumentError(
            "a secure root keeps its key secret and cannot be rebuilt as a numpy SeedSequence; "
            "this computation needs a seed (an integer rng) or must run in this process."
        )

    def __repr__(self) -> str:
        return f"SecureSeed(key=<secret>, spawn_key={self.spawn_key})"


class SecureGenerator:
    """Draws from keyed SHAKE-256: the cryptographic stream of one path under a :class:`SecureSeed`.

    Construct it through :func:`cellsafe._random.as_generator` (``"secure"``) or
    :func:`cellsafe._random.stream` on a secure root.  Methods follow
    :class:`numpy.random.Generator`.
    """

    def __init__(self, key: bytes | None = None, path: tuple[int, ...] = ()) -> None:
        key = os.urandom(_KEY_BYTES) if key is None else bytes(key)
        self._prefix = _LABEL + key + _encode_path(tuple(path))
        self._counter = 0
        self._buffer = b""

    # ------------------------------------------------------------------ raw material
    def bytes(self, length: int) -> bytes:
        """``length`` bytes of the stream."""
        need = int(length)
        parts = [self._buffer[:need]]
        got = len(parts[0])
        self._buffer = self._buffer[need:]
        while got < need:
            # fixed-size blocks: the stream does not depend on how it is read
            block = hashlib.shake_256(self._prefix + self._counter.to_bytes(8, "big")).digest(_CHUNK)
            self._counter += 1
            take = min(need - got, _CHUNK)
            parts.append(block[:take])
            self._buffer = block[take:]
            got += take
        return b"".join(parts)

    def _words(self, n: int) -> np.ndarray:
        return np.frombuffer(self.bytes(8 * n), dtype=np.uint64).copy()

    def _uniform(self, n: int) -> np.ndarray:
        """Uniforms on the open interval (0, 1): (k + 1/2) / 2**53 for a uniform 53-bit k."""
        k = self._words(n) >> np.uint64(11)
        return (k.astype(np.float64) + 0.5) / _TWO53

    @staticmethod
    def _shape(size: Any) -> tuple[tuple[int, ...] | None, int]:
        if size is None:
            return None, 1
        shape = (int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size)
        return shape, int(np.prod(shape, dtype=np.int64))

    @staticmethod
    def _out(x: np.ndarray, shape: tuple[int, ...] | None) -> Any:
        return x.reshape(shape) if shape is not None else x.reshape(()).item()

    # ------------------------------------------------------------------ uniform
    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint: bool = False) -> Any:
        """Uniform integers in [low, high) (or [0, low) with one bound), exactly, by rejection."""
        if high is None:
            low, high = 0, low
        low_a = np.asarray(low, dtype=np.int64)
        span = np.asarray(high, dtype=np.int64) - low_a + (1 if endpoint else 0)
        if np.any(span < 1):
            raise InvalidArgumentError("integers: high must be greater than low.")
        shape, n = self._shape(size)
        if size is None and (span.ndim or low_a.ndim):
            shape = np.broadcast_shapes(span.shape, low_a.shape)
            n = int(np.prod(shape, dtype=np.int64))
        span_f = np.broadcast_to(span, (n,)).astype(np.uint64)
        low_f = np.broadcast_to(low_a, (n,))
        # the smallest all-ones mask >= span - 1: accepted words are uniform on [0, span)
        top = span_f - np.uint64(1)
        mask = top.copy()
        for s in (1, 2, 4, 8, 16, 32):
            mask |= mask >> np.uint64(s)
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            w = self._words(todo.size) & mask[todo]
            ok = w <= top[todo]
            out[todo[ok]] = w[ok].astype(np.int64)
            todo = todo[~ok]
        out += low_f
        return self._out(out.astype(dtype, copy=False), shape)

    def random(self, size: Any = None, dtype: Any = np.float64) -> Any:
        """Uniforms on (0, 1) with 53 random bits."""
        shape, n = self._shape(size)
        return self._out(self._uniform(n).astype(dtype, copy=False), shape)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        """Uniform choice from ``range(a)`` or the array ``a`` (without replacement: random keys sorted)."""
        pool = None if np.ndim(a) == 0 else np.asarray(a)
        n = int(a) if pool is None else pool.shape[0]
        shape, k = self._shape(size)
        if p is not None:
            pos = self.multinomial_positions(k, np.asarray(p, dtype=float))
        elif replace:
            pos = self.integers(0, n, size=k)
        else:
            if k > n:
                raise InvalidArgumentError(f"choice: cannot take {k} values without replacement from {n}.")
            pos = np.argsort(self._words(n), kind="stable")[:k]
        pos = np.asarray(pos, dtype=np.int64)
        return self._out(pos if pool is None else pool[pos], shape)

    def permutation(self, x: Any) -> np.ndarray:
        """A uniformly random permutation of ``range(x)`` or of the array ``x`` (first axis)."""
        arr = np.arange(int(x)) if np.ndim(x) == 0 else np.asarray(x)
        return arr[np.argsort(self._words(arr.shape[0]), kind="stable")]

    # ------------------------------------------------------------------ continuous
    def standard_normal(self, size: Any = None) -> Any:
        from scipy.special import ndtri

        shape, n = self._shape(size)
        return self._out(ndtri(self._uniform(n)), shape)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        if size is None and (np.ndim(loc) or np.ndim(scale)):
            size = np.broadcast_shapes(np.shape(loc), np.shape(scale))
        z = self.standard_normal(size)
        return np.asarray(loc) + np.asarray(scale) * z if size is not None else float(loc + scale * z)

    def standard_gamma(self, shape: Any, size: Any = None) -> Any:
        """Gamma(shape, 1) variates by Marsaglia and Tsang's squeeze method (boosted below shape 1)."""
        a = np.asarray(shape, dtype=np.float64)
        out_shape: Any = np.shape(a) if size is None else self._shape(size)[0]
        a = np.broadcast_to(a, out_shape).reshape(-1)
        if np.any(a < 0) or np.any(np.isnan(a)):
            raise InvalidArgumentError("standard_gamma: the shape must be >= 0.")
        boost = a < 1.0
        aa = np.where(boost, a + 1.0, a)
        d = aa - 1.0 / 3.0
        c = 1.0 / np.sqrt(9.0 * d)
        out = np.empty(a.shape[0])
        todo = np.flatnonzero(a > 0)
        out[a == 0] = 0.0
        while todo.size:
            x = self.standard_normal(todo.size)
            v = (1.0 + c[todo] * x) ** 3
            u = self._uniform(todo.size)
            with np.errstate(invalid="ignore", divide="ignore"):
                ok = (v > 0) & (np.log(u) < 0.5 * x * x + d[todo] * (1.0 - v + np.log(v)))
            out[todo[ok]] = d[todo[ok]] * v[ok]
            todo = todo[~ok]
        small = np.flatnonzero(boost & (a > 0))
        if small.size:
            out[small] *= self._uniform(small.size) ** (1.0 / a[small])
        return out.reshape(out_shape) if out_shape != () else float(out[0])

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None) -> Any:
        g = self.standard_gamma(shape, size)
        return g * np.asarray(scale) if np.ndim(g) or np.ndim(scale) else float(g * scale)

    # ------------------------------------------------------------------ discrete
    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        """Binomial variates by inversion of the cdf (scipy's quantile function)."""
        from scipy.stats import binom

        nn, pp = np.asarray(n, dtype=np.float64), np.asarray(p, dtype=np.float64)
        shape: Any = np.broadcast_shapes(nn.shape, pp.shape) if size is None else self._shape(size)[0]
        k = int(np.prod(shape, dtype=np.int64))
        u = self._uniform(k).reshape(shape)
        x = np.where(pp >= 1.0, nn, binom.ppf(u, nn, pp))
        x = np.where((pp <= 0.0) | (nn == 0), 0.0, x).astype(np.int64)
        return x if shape != () else int(x)

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        """Poisson variates by inversion of the cdf (scipy's quantile function)."""
        from scipy.stats import poisson

        mu = np.asarray(lam, dtype=np.float64)
        shape: Any = mu.shape if size is None else self._shape(size)[0]
        k = int(np.prod(shape, dtype=np.int64))
        u = self._uniform(k).reshape(shape)
        x = np.where(mu > 0, poisson.ppf(u, mu), 0.0).astype(np.int64)
        return x if shape != () else int(x)

    def multinomial_positions(self, n: int, pvals: np.ndarray) -> np.ndarray:
        """The categories of ``n`` independent draws with probabilities ``pvals`` (inversion)."""
        cum = np.cumsum(np.asarray(pvals, dtype=np.float64))
        last = int(np.flatnonzero(np.asarray(pvals) > 0)[-1])
        pos = np.searchsorted(cum, self._uniform(int(n)) * cum[-1], side="right")
        return np.minimum(pos, last)

    def multinomial(self, n: Any, pvals: Any, size: Any = None) -> np.ndarray:
        """One multinomial draw: ``n`` events placed by inversion on the cumulative probabilities.

        Events go in chunks of 2**22, so memory stays bounded however large ``n`` is; the cost is
        O(n log K), against O(K) for numpy's conditional binomials.
        """
        if size is not None:
            raise InvalidArgumentError("multinomial: the secure source draws one vector at a time (size=None).")
        p = np.asarray(pvals, dtype=np.float64)
        out = np.zeros(p.shape[0], dtype=np.int64)
        left = int(n)
        while left > 0:
            chunk = min(left, 1 << 22)
            out += np.bincount(self.multinomial_positions(chunk, p), minlength=p.shape[0])
            left -= chunk
        return out

    # ------------------------------------------------------------------ exact Bernoulli and geometric draws
    def _exact_bernoulli(self, bounds: Any, n: int) -> np.ndarray:
        """``n`` exact Bernoulli(q) draws, q known through ``bounds(bits) -> (lo, hi)`` with
        lo <= q * 2**bits <= hi (integers, lo and hi tightening as ``bits`` grows).

        U < q is decided on the first 64-bit word of a uniform U whenever the word's interval lies
        entirely below lo or above hi at 128 bits of q; the rare undecided draws read further words
        of U while q's bounds are computed more precisely (probability about 2**-60 per draw).
        """
        lo, hi = bounds(128)
        a, b = lo >> 64, -((-hi) >> 64)  # decide 1 when W < a, 0 when W >= b
        w = self._words(n)
        one = (w < np.uint64(a)) if a < 2**64 else np.ones(n, dtype=bool)
        zero = (w >= np.uint64(b)) if b < 2**64 else np.zeros(n, dtype=bool)
        out = one
        for i in np.flatnonzero(~one & ~zero):
            out[i] = self._bernoulli_slow(bounds, int(w[i]))
        return out

    def _bernoulli_slow(self, bounds: Any, first: int) -> bool:
        u, have = first, 64
        bits = 256
        while True:
            lo, hi = bounds(bits)
            more = bits - have
            u = (u << more) | int.from_bytes(self.bytes(more // 8), "big") if more > 0 else u
            have = max(have, bits)
            # U lies in [u, u + 1) / 2**bits
            if u + 1 <= lo:
                return True
            if u >= hi:
                return False
            bits *= 2

    def geometric(self, p: Any, size: Any = None) -> Any:
        """Geometric variates on {1, 2, ...} (trials until the first success), exactly for the double ``p``.

        With 2**k near 1/p and r = 1 - p (exact rationals), G = D 2**k + X + 1 where D counts the
        blocks of 2**k failures (Bernoulli(r**(2**k)) each, about 1.6 on average) and X, the first
        success's place in its block, has independent binary digits, digit i being
        Bernoulli(r**(2**i) / (1 + r**(2**i))) (Bringmann and Friedrich 2013).  Each Bernoulli
        draw compares uniform bits with outward-rounded bounds of its probability
        (:meth:`_exact_bernoulli`), so the law is the geometric law of ``p`` itself, not of a
        floating-point logarithm.  Values beyond 2**62 are returned as 2**62 (no table has that
        many cells).
        """
        pf = float(np.asarray(p, dtype=np.float64).reshape(-1)[0]) if np.ndim(p) else float(p)
        if not (0.0 < pf <= 1.0):
            raise InvalidArgumentError(f"geometric: p must lie in (0, 1]. Got {p!r}.")
        shape, n = self._shape(size)
        if pf == 1.0:
            return self._out(np.ones(n, dtype=np.int64), shape)
        num, den = pf.as_integer_ratio()  # p = num / den exactly, den a power of two
        k = max(0, int(math.floor(math.log2(1.0 / pf))))
        if k >= _GEOMETRIC_CAP_BITS:
            return self._out(np.full(n, 1 << _GEOMETRIC_CAP_BITS, dtype=np.int64), shape)
        powers = _RPowers(den - num, den, k)
        x = np.zeros(n, dtype=np.int64)
        for i in range(k):  # digit i of X
            x |= self._exact_bernoulli(powers.digit(i), n).astype(np.int64) << i
        d = np.zeros(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:  # D: blocks of 2**k failures, each with probability r**(2**k)
            fail = self._exact_bernoulli(powers.block(), todo.size)
            d[todo[fail]] += 1
            todo = todo[fail]
            if todo.size and int(d[todo].min()) > (1 << (_GEOMETRIC_CAP_BITS - k)):
                break
        cap = 1 << _GEOMETRIC_CAP_BITS
        g = np.minimum(d, cap >> k) << k
        out = np.minimum(g + x + 1, cap)
        return self._out(out, shape)

    def bernoulli_ranks(self, n: int, p: float) -> np.ndarray:
        """Sorted ranks in [0, n) of the successes of n independent Bernoulli(p) trials, exactly.

        The gaps between successes are :meth:`geometric`, accumulated in int64 where that cannot
        overflow (checked) and in Python integers otherwise; the work is proportional to the number
        of successes.
        """
        n = int(n)
        if n <= 0 or p <= 0.0:
            return np.zeros(0, dtype=np.int64)
        if p >= 1.0:
            return np.arange(n, dtype=np.int64)
        parts, last = [], -1
        while True:
            left = (n - last - 1) * p
            size = int(left + 5.0 * math.sqrt(left + 1.0) + 16)
            gaps = np.minimum(self.geometric(p, size), n + 1)
            ranks = last + np.cumsum(gaps)
            if ranks[0] <= last or (size > 1 and np.any(np.diff(ranks) <= 0)):  # int64 overflowed
                ranks = np.array(list(itertools.accumulate([last, *(int(v) for v in gaps)]))[1:], dtype=object)
                cut = int(np.searchsorted(ranks, n))
                ranks = ranks[:cut].astype(np.int64) if cut < size else ranks.astype(np.int64)
                parts.append(ranks)
                if cut < size:
                    break
                last = int(ranks[-1])
                continue
            cut = int(np.searchsorted(ranks, n))
            parts.append(ranks[:cut])
            if cut < size:
                break
            last = int(ranks[-1])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise InvalidArgumentError(
            f"rng='secure' draws from a cryptographic generator, which does not offer {name!r}; "
            "use a mechanism that draws integers, uniforms, normals, gammas, binomials, Poissons or multinomials, "
            "or give a seed (a reproducible, non-secure release)."
        )

    def __repr__(self) -> str:
        return "SecureGenerator(<keyed SHAKE-256 stream>)"


class _RPowers:
    """Outward-rounded bounds of r**(2**i) for r = a / b (b a power of two), and the probabilities built on them."""

    def __init__(self, a: int, b: int, k: int) -> None:
        self.a, self.b, self.k = a, b, k
        self._cache: dict[int, list[tuple[int, int]]] = {}

    def _powers(self, bits: int) -> list[tuple[int, int]]:
        """[(lo_i, hi_i)] with lo_i <= r**(2**i) * 2**P <= hi_i for i = 0..k, at P = bits + k + 64 bits."""
        prec = bits + self.k + 64
        got = self._cache.get(prec)
        if got is not None:
            return got
        shift = self.b.bit_length() - 1  # b = 2**shift
        if shift <= prec:
            lo = hi = self.a << (prec - shift)
        else:
            lo = self.a >> (shift - prec)
            hi = -((-self.a) >> (shift - prec))
        out = [(lo, hi)]
        for _ in range(self.k):
            lo = (lo * lo) >> prec
            hi = -((-(hi * hi)) >> prec)
            out.append((lo, hi))
        self._cache[prec] = out
        return out

    def digit(self, i: int) -> Any:
        """Bounds of s / (1 + s), s = r**(2**i): the probability that digit i of X is 1."""
        def bounds(bits: int) -> tuple[int, int]:
            prec = bits + self.k + 64
            lo, hi = self._powers(bits)[i]
            one = 1 << prec
            # s/(1+s) increases in s; scaled to 2**bits, rounded outward
            qlo = (lo << bits) // (one + lo)
            qhi = -((-(hi << bits)) // (one + hi))
            return qlo, qhi

        return bounds

    def block(self) -> Any:
        """Bounds of r**(2**k): the probability that a block of 2**k trials holds no success."""
        def bounds(bits: int) -> tuple[int, int]:
            prec = bits + self.k + 64
            lo, hi = self._powers(bits)[self.k]
            return lo >> (prec - bits), -((-hi) >> (prec - bits))

        return bounds

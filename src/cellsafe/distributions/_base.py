"""The shared interface of cellsafe's count distributions.

Every family is parameterized by its mean ``mu`` (per cell) and fixed shape parameters
(``sigma``, ``nu``) as in R's gamlss.dist.  Public methods check and broadcast ``k`` against
``mu`` and return numpy arrays (or Python floats for scalar input); subclasses implement the
maths in private hooks (``_logpmf``, ``_cdf``, ``_sf``, ``_sample``, ``_mean``, ``_var``) that
receive flat float arrays of equal length with ``k`` a non-negative integer value and
``mu > 0`` finite.

Conventions shared by every family:

- ``mu = 0`` is the point mass at 0 (a random zero with no pseudocount stays zero).
- ``k`` that is negative or not an integer has probability 0 (``logpmf`` gives ``-inf``);
  ``cdf(k)`` and ``sf(k)`` use ``floor(k)``, so ``cdf(-1) = 0`` and ``sf(-1) = 1``.
- ``k`` or ``mu`` that is NaN, ``mu`` negative or infinite, or either not numeric raises
  :class:`~cellsafe.exceptions.InvalidArgumentError`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from .._catalog import SIGMA
from .._params import Configurable
from .._random import RNGLike, as_generator
from ..exceptions import InvalidArgumentError

__all__ = ["CountDistribution", "SIGMA"]


# Relative size below which a further term of a tail sum cannot change a double.
_TAIL_EPS = 1e-18
# Number of terms evaluated at once by the chunked tail sums (bounds memory).
_CHUNK_BUDGET = 2_000_000


def _as_float_array(value: Any, what: str, owner: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"The {what!r} argument of {owner} must be numeric (a number or an array of numbers). "
            f"Got {type(value).__name__} instead."
        ) from None
    return arr


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> str:
    pos = np.argwhere(bad)[0]
    where = "" if arr.ndim == 0 else f" at index {tuple(int(i) for i in pos)}"
    return f"{arr[tuple(pos)].item()!r}{where}"


def check_mu(mu: Any, owner: str) -> np.ndarray:
    """``mu`` as a float array, every element finite and >= 0."""
    arr = _as_float_array(mu, "mu", owner)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        raise InvalidArgumentError(
            f"The 'mu' argument of {owner} must be finite and >= 0 (a mean count). Got {_first_bad(arr, bad)} instead."
        )
    return arr


def check_k(k: Any, owner: str) -> np.ndarray:
    """``k`` as a float array with no NaN (negative and non-integer values are allowed)."""
    arr = _as_float_array(k, "k", owner)
    bad = np.isnan(arr)
    if bad.any():
        raise InvalidArgumentError(f"The 'k' argument of {owner} must be a count, not NaN. Got {_first_bad(arr, bad)}.")
    return arr


# Shared tables of pmf_rows, by (family, parameters, size); a handful at a time.
_SHARED_TABLES: dict[Any, tuple[np.ndarray, np.ndarray]] = {}


def _out(values: np.ndarray, scalar: bool) -> Any:
    return float(values.reshape(())) if scalar else values


class CountDistribution(Configurable, ABC):
    """A family of distributions on {0, 1, 2, ...} indexed by the mean ``mu``.

    Subclasses are immutable value objects (frozen dataclasses) validated on construction.
    Public methods broadcast ``k`` against ``mu``; ``mu = 0`` is the point mass at 0.
    """

    #: Short lower-case name used by the CLI (``poisson``, ``nbi``, ``pig``, ``gaf``).
    name: ClassVar[str] = ""
    #: Whether ``cdf`` and ``sf`` are closed forms (incomplete gamma or beta functions), so a
    #: probability over a range costs two evaluations rather than a sum over the range.
    closed_form_tails: ClassVar[bool] = False
    #: Whether the probability generating function is a closed form, so that :meth:`laplace_gaps`
    #: (and fractional moments through it) cost a few evaluations whatever the spread.
    closed_form_pgf: ClassVar[bool] = False

    # ------------------------------------------------------------------ private hooks
    @abstractmethod
    def _logpmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """log P(X = k) for integer-valued ``k >= 0`` and ``mu > 0`` (flat arrays of equal length)."""

    def _pmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        return np.exp(self._logpmf(k, mu))

    def _cdf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        cdf, _ = self._cdf_sf_by_summation(k, mu)
        return cdf

    def _sf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
        _, sf = self._cdf_sf_by_summation(k, mu)
        return sf

    @abstractmethod
    def _sample(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw per element of the flat array ``mu > 0``."""

    @abstractmethod
    def _mean(self, mu: np.ndarray) -> np.ndarray:
        """E[X] for ``mu > 0``."""

    @abstractmethod
    def _var(self, mu: np.ndarray) -> np.ndarray:
        """Var[X] for ``mu > 0``."""

    # ------------------------------------------------------------------ public API
    def _owner(self, method: str) -> str:
        return f"{type(self).__name__}.{method}"

    def _broadcast(self, k: Any, mu: Any, method: str) -> tuple[np.ndarray, np.ndarray, bool]:
        owner = self._owner(method)
        kk = check_k(k, owner)
        mm = check_mu(mu, owner)
        scalar = kk.ndim == 0 and mm.ndim == 0
        try:
            kk, mm = np.broadcast_arrays(kk, mm)
        except ValueError:
            raise InvalidArgumentError(
                f"The 'k' and 'mu' arguments of {owner} must broadcast together. "
                f"Got shapes {np.shape(k)} and {np.shape(mu)}."
            ) from None
        return kk, mm, scalar

    def logpmf(self, k: Any, mu: Any) -> Any:
        """log P(X = k | mu), broadcasting ``k`` against ``mu``.

        Parameters
        ----------
        k : int or array_like
            Counts. Negative or non-integer values have probability 0 (log 0 = -inf).
        mu : float or array_like
            Means, finite and >= 0.

        Returns
        -------
        float or numpy.ndarray
            A float for scalar input, else an array of the broadcast shape.
        """
        kk, mm, scalar = self._broadcast(k, mu, "logpmf")
        out = np.full(kk.shape, -np.inf)
        valid = (kk >= 0) & (kk == np.floor(kk)) & np.isfinite(kk)
        out[valid & (mm == 0) & (kk == 0)] = 0.0
        sel = valid & (mm > 0)
        if sel.any():
            with np.errstate(all="ignore"):
                out[sel] = self._logpmf(kk[sel], mm[sel])
        return _out(out, scalar)

    def pmf(self, k: Any, mu: Any) -> Any:
        """P(X = k | mu), broadcasting ``k`` against ``mu`` (see :meth:`logpmf`)."""
        kk, mm, scalar = self._broadcast(k, mu, "pmf")
        out = np.zeros(kk.shape)
        valid = (kk >= 0) & (kk == np.floor(kk)) & np.isfinite(kk)
        out[valid & (mm == 0) & (kk == 0)] = 1.0
        sel = valid & (mm > 0)
        if sel.any():
            with np.errstate(all="ignore"):
                out[sel] = self._pmf(kk[sel], mm[sel])
        return _out(out, scalar)

    def pmf_rows(self, k: Any, row: Any, mu: Any) -> np.ndarray:
        """P(X = k_i | mu[row_i]): many counts on few means (whole rows of a transition matrix).

        Parameters
        ----------
        k : array_like of int
            Counts >= 0.
        row : array_like of int
            For each count, the index of its mean in ``mu``.
        mu : array_like of float
            Means, finite and >= 0 (0 is the point mass at 0).

        Returns
        -------
        numpy.ndarray
            The probabilities, as :meth:`pmf` gives them (to about 1e-10 relative).

        Notes
        -----
        The a priori metrics sum whole rows: millions of (count, mean) points on a few thousand
        means.  Families whose ratio P(k + 1)/P(k) is a term shared by every mean times one per
        mean (Poisson: mu/(k + 1); NBI: (k + n)/(k + 1) p) evaluate each row from one exact
        log-probability at an anchor count and a cumulative table of the shared terms, built
        once for all rows in extended precision: a gather and an addition per point instead of a
        Stirling-corrected log-pmf.  Other families evaluate :meth:`pmf` point by point.

        Examples
        --------
        >>> from cellsafe.distributions import Poisson
        >>> Poisson().pmf_rows([0, 1, 2], [0, 0, 1], [1.0, 2.0]).round(4).tolist()
        [0.3679, 0.3679, 0.2707]
        """
        kk = np.asarray(k, dtype=np.float64).ravel()
        rr = np.asarray(row, dtype=np.intp).ravel()
        mm = check_mu(mu, self._owner("pmf_rows")).ravel()
        if kk.shape != rr.shape or (kk.size and (kk.min() < 0 or np.any(kk != np.floor(kk)))):
            raise InvalidArgumentError(
                f"{self._owner('pmf_rows')} needs one row index per count and counts that are integers >= 0."
            )
        out = np.zeros(kk.shape)
        if not kk.size:
            return out
        zero = mm[rr] == 0
        out[zero & (kk == 0)] = 1.0
        sel = ~zero
        if sel.any():
            with np.errstate(all="ignore"):
                out[sel] = np.exp(self._logpmf_rows(kk[sel], rr[sel], mm))
        return out

    def _logpmf_rows(self, k: np.ndarray, row: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """log P(k_i | mu[row_i]) for counts >= 0 on rows whose mean is > 0 (point by point here)."""
        return self._logpmf(k, mu[row])

    def _shared_terms(self, size: int) -> np.ndarray:
        """T[0..size-1], the cumulative log-ratio term shared by every mean (long double); see :meth:`pmf_rows`."""
        raise NotImplementedError

    def _shared_table(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_shared_terms` as two doubles (rounding and remainder), cached by family, parameters and size."""
        size = 1 << max(10, int(size - 1).bit_length())  # powers of two: one table serves many calls
        key = (type(self), tuple(sorted(self.get_params().items())), size)
        table = _SHARED_TABLES.get(key)
        if table is None:
            shared = self._shared_terms(size)
            hi = shared.astype(np.float64)
            table = (hi, (shared - hi.astype(np.longdouble)).astype(np.float64))
            if len(_SHARED_TABLES) >= 8:
                _SHARED_TABLES.clear()
            _SHARED_TABLES[key] = table
        return table

    def _anchored_rows(self, k: np.ndarray, row: np.ndarray, mu: np.ndarray, slope: np.ndarray) -> np.ndarray:
        """log P(k | mu_r) = log P(a_r | mu_r) + (T[k] - T[a_r]) + (k - a_r) slope_r.

        T is the cumulative sum (long double) of the log-ratio term shared by every row, indexed
        by count (:meth:`_shared_terms`); ``slope`` the per-row term.  The anchor a_r is the row's mean
        (clipped to the counts present), where the exact log-pmf is evaluated once per row.  T is
        kept as two doubles (its rounding and the remainder), so that T[k] - T[a_r] is exact to
        about one ulp of the difference however large T grows, with float64 arithmetic per point.
        """
        hi, lo = self._shared_table(int(k.max()) + 1)
        anchor = np.clip(np.floor(self._mean(mu)), 0, hi.shape[0] - 1)
        used = np.zeros(mu.shape, dtype=bool)
        used[row] = True
        log_anchor = np.zeros(mu.shape)
        log_anchor[used] = self._logpmf(anchor[used], mu[used])
        a = anchor.astype(np.int64)
        ki = k.astype(np.int64)
        out = hi[ki]
        out -= hi[a][row]
        out += lo[ki]
        out -= lo[a][row]
        out += (k - anchor[row]) * slope[row]
        out += log_anchor[row]
        return out

    def laplace_gaps(self, t: Any, mu: Any) -> tuple[np.ndarray, np.ndarray]:
        """1 - E[exp(-t X)] and E[X] - E[X exp(-t X)], for ``t >= 0``, broadcast against ``mu``.

        With G the probability generating function and z = exp(-t), these are 1 - G(z) and
        mu - z G'(z), written without the cancellation of their difference form at small ``t``.
        They give fractional moments as single integrals (``sqrt(x) = (4 pi)^(-1/2) int_0^inf
        (1 - exp(-t x)) t^(-3/2) dt``), whatever the width of the distribution.  Defined where
        :attr:`closed_form_pgf` is True (Poisson, NBI, PIG).

        Examples
        --------
        >>> from cellsafe.distributions import Poisson
        >>> [round(float(g), 6) for g in Poisson().laplace_gaps(1.0, 2.0)]
        [0.717546, 1.792182]
        """
        if not self.closed_form_pgf:
            raise NotImplementedError(f"{type(self).__name__} has no closed-form probability generating function.")
        owner = self._owner("laplace_gaps")
        tt = np.asarray(check_k(t, owner), dtype=np.float64)
        mm = check_mu(mu, owner)
        if np.any(tt < 0):
            raise InvalidArgumentError(f"The 't' argument of {owner} must be >= 0. Got {t!r} instead.")
        tt, mm = np.broadcast_arrays(tt, mm)
        with np.errstate(all="ignore"):
            return self._laplace_gaps(tt, mm)

    def _laplace_gaps(self, t: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(1 - G(z), mu - z G'(z)) at z = exp(-t); see :meth:`laplace_gaps`."""
        raise NotImplementedError

    def _tail(self, k: Any, mu: Any, method: str, upper: bool) -> Any:
        kk, mm, scalar = self._broadcast(k, mu, method)
        kf = np.floor(kk)
        # Below the support, cdf = 0 and sf = 1; at +inf cdf = 1, sf = 0; mu = 0 is the mass at 0.
        below = kf < 0
        out = np.where(below, 1.0 if upper else 0.0, 0.0 if upper else 1.0)
        sel = ~below & np.isfinite(kf) & (mm > 0)
        if sel.any():
            hook = self._sf if upper else self._cdf
            with np.errstate(all="ignore"):
                out[sel] = np.clip(hook(kf[sel], mm[sel]), 0.0, 1.0)
        return _out(out, scalar)

    def cdf(self, k: Any, mu: Any) -> Any:
        """P(X <= k | mu), broadcasting ``k`` against ``mu``."""
        return self._tail(k, mu, "cdf", upper=False)

    def sf(self, k: Any, mu: Any) -> Any:
        """P(X > k | mu), computed directly (never as 1 - cdf where that loses precision)."""
        return self._tail(k, mu, "sf", upper=True)

    def sample(self, mu: Any, rng: RNGLike = None) -> np.ndarray:
        """One independent draw per element of ``mu`` (int64 array of mu's shape).

        Parameters
        ----------
        mu : float or array_like
            Means, finite and >= 0; cells with ``mu = 0`` give 0 and consume no randomness.
        rng : None, int, SeedSequence or Generator
            Source of randomness (see :func:`cellsafe._random.as_generator`).
        """
        mm = check_mu(mu, self._owner("sample"))
        gen = as_generator(rng)
        out = np.zeros(mm.shape, dtype=np.int64)
        pos = mm > 0
        if pos.any():
            out[pos] = self._sample(mm[pos], gen)
        return out

    def sample_positive(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw per element of a float64 array of means already known to be finite and > 0.

        The per-cell kernels' entry: a table's counts need neither the checks nor the masking of
        zeros that :meth:`sample` does.  Anything else goes through :meth:`sample`.
        """
        assert mu.dtype == np.float64
        return self._sample(mu, rng)

    def _moment(self, mu: Any, method: str, hook: Any) -> Any:
        mm = check_mu(mu, self._owner(method))
        out = np.zeros(mm.shape)
        pos = mm > 0
        if pos.any():
            out[pos] = hook(mm[pos])
        return _out(out, mm.ndim == 0)

    def mean(self, mu: Any) -> Any:
        """E[X | mu]."""
        return self._moment(mu, "mean", self._mean)

    def var(self, mu: Any) -> Any:
        """Var[X | mu]."""
        return self._moment(mu, "var", self._var)

    def std(self, mu: Any) -> Any:
        """Standard deviation of X given mu."""
        return self._moment(mu, "std", lambda m: np.sqrt(self._var(m)))

    def params(self) -> dict[str, float]:
        """The shape parameters as floats (for reports and JSON)."""
        return {k: float(v) for k, v in self.get_params().items()}

    def upper_quantile(self, mu: Any, tol: float = 1e-12) -> Any:
        """The smallest count ``k`` with ``sf(k, mu) <= tol``, per element of ``mu``.

        Used to truncate infinite sums over counts: the mass above the returned ``k`` is at
        most ``tol``.

        Parameters
        ----------
        mu : float or array_like
            Means, finite and >= 0 (``mu = 0`` gives 0).
        tol : float
            Tail mass allowed above the returned count, in (0, 1).

        Returns
        -------
        int or numpy.ndarray of int64

        Notes
        -----
        Brackets the answer from ``mean + c * sd`` (doubling ``c`` until the tail is below
        ``tol``) and bisects on ``sf``; about 40 vectorized ``sf`` evaluations in all.
        """
        owner = self._owner("upper_quantile")
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not (0 < float(tol) < 1):
            raise InvalidArgumentError(
                f"The 'tol' parameter of {owner} must be a float in (0, 1). Got {tol!r} instead."
            )
        mm = check_mu(mu, owner)
        out = np.zeros(mm.shape, dtype=np.int64)
        pos = mm > 0
        if pos.any():
            out[pos] = self._upper_quantile(mm[pos], float(tol))
        return int(out) if mm.ndim == 0 else out

    def _rough_mean_sd(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation (or close values) used to start searches and sums."""
        return self._mean(mu), np.sqrt(self._var(mu))

    def _upper_quantile(self, mu: np.ndarray, tol: float) -> np.ndarray:
        m, s = self._rough_mean_sd(mu)
        c = max(4.0, math.sqrt(2.0 * -math.log(tol)))
        hi = np.ceil(m + c * s + 10.0)
        with np.errstate(all="ignore"):
            bad = self._sf(hi, mu) > tol
            while bad.any():
                c *= 2.0
                hi[bad] = np.ceil(m[bad] + c * s[bad] + 10.0 * c)
                bad[bad] = self._sf(hi[bad], mu[bad]) > tol
            # lo: a count whose sf exceeds tol (-1 always qualifies).
            lo = np.full(mu.shape, -1.0)
            guess = np.maximum(np.floor(m) - 1.0, -1.0)
            ok = (guess >= 0) & (self._sf(np.maximum(guess, 0.0), mu) > tol)
            lo[ok] = guess[ok]
            active = hi - lo > 1
            while active.any():
                idx = np.flatnonzero(active)
                mid = np.floor((lo[idx] + hi[idx]) / 2.0)
                small = self._sf(mid, mu[idx]) <= tol
                hi[idx[small]] = mid[small]
                lo[idx[~small]] = mid[~small]
                active[idx] = hi[idx] - lo[idx] > 1
        return hi.astype(np.int64)

    # ------------------------------------------------------------------ summation helpers
    def _log_tail_sum(self, start: np.ndarray, mu: np.ndarray, upper: bool) -> np.ndarray:
        """log of sum_{j >= start} pmf(j) (``upper``) or sum_{0 <= j <= start} pmf(j).

        Terms are evaluated in chunks of doubling length (in log space) until the last term
        is decreasing away from the start and below ``_TAIL_EPS`` times the running sum.
        Assumes a unimodal pmf, true for the Poisson mixtures and discretized gammas here.
        """
        n = start.size
        log_sum = np.full(n, -np.inf)
        pos = start.astype(np.float64).copy()
        sd = self._rough_mean_sd(mu)[1]
        length = np.clip(np.ceil(sd), 16, 4096).astype(np.int64)
        active = np.flatnonzero(pos >= 0) if not upper else np.arange(n)
        log_eps = math.log(_TAIL_EPS)
        while active.size:
            lens = length[active]
            if not upper:
                lens = np.minimum(lens, pos[active].astype(np.int64) + 1)
            cum = np.cumsum(lens)
            take = max(1, int(np.searchsorted(cum, _CHUNK_BUDGET, side="right")))
            sub, lens = active[:take], lens[:take]
            total = int(lens.sum())
            seg = np.repeat(np.arange(sub.size), lens)
            first = np.cumsum(lens) - lens
            offs = np.arange(total) - first[seg]
            j = pos[sub][seg] + (offs if upper else -offs)
            lp = self._logpmf(j, mu[sub][seg])
            seg_max = np.maximum.reduceat(lp, first)
            safe_max = np.where(np.isfinite(seg_max), seg_max, 0.0)
            seg_sum = np.add.reduceat(np.exp(lp - safe_max[seg]), first)
            with np.errstate(divide="ignore"):
                seg_log = np.where(np.isfinite(seg_max), safe_max + np.log(seg_sum), -np.inf)
            log_sum[sub] = np.logaddexp(log_sum[sub], seg_log)
            last_idx = first + lens - 1
            last = lp[last_idx]
            prev = np.where(lens >= 2, lp[np.maximum(last_idx - 1, 0)], np.inf)
            done = (last == -np.inf) | ((last <= prev) & (last < log_sum[sub] + log_eps))
            if upper:
                pos[sub] += lens
            else:
                pos[sub] -= lens
                done |= pos[sub] < 0
            length[sub] = np.minimum(length[sub] * 2, 1 << 20)
            keep = np.ones(active.size, dtype=bool)
            keep[:take] = ~done
            active = active[keep]
        return log_sum

    def _log_range_sums(self, lo: np.ndarray, hi: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """log sum_{j=lo}^{hi} pmf(j) per element (``-inf`` where ``hi < lo``), in bounded chunks."""
        lens = np.maximum(hi - lo + 1, 0).astype(np.int64)
        out = np.full(lo.shape, -np.inf)
        todo = np.flatnonzero(lens > 0)
        while todo.size:
            cum = np.cumsum(lens[todo])
            take = max(1, int(np.searchsorted(cum, _CHUNK_BUDGET, side="right")))
            sub, todo = todo[:take], todo[take:]
            ln = lens[sub]
            seg = np.repeat(np.arange(sub.size), ln)
            first = np.cumsum(ln) - ln
            j = lo[sub][seg] + (np.arange(int(ln.sum())) - first[seg])
            lp = self._logpmf(j, mu[sub][seg])
            seg_max = np.maximum.reduceat(lp, first)
            safe = np.where(np.isfinite(seg_max), seg_max, 0.0)
            tot = np.add.reduceat(np.exp(lp - safe[seg]), first)
            with np.errstate(divide="ignore"):
                out[sub] = np.where(np.isfinite(seg_max), safe + np.log(tot), -np.inf)
        return out

    def _grouped_log_tail(self, k: np.ndarray, mu: np.ndarray, upper: bool) -> np.ndarray:
        """log sf(k) (``upper``) or log cdf(k), sharing work between elements with equal ``mu``.

        Within a group of equal ``mu``, only the count farthest into the tail gets a full tail
        sum; each other count adds the finite sum between it and its neighbour, so asking for
        many counts at one mean costs about one tail sum.
        """
        n = k.size
        order = np.lexsort((-k if upper else k, mu))
        ks, ms = k[order], mu[order]
        lead = np.ones(n, dtype=bool)
        lead[1:] = ms[1:] != ms[:-1]
        prev = np.empty(n)
        prev[1:] = ks[:-1]
        # Counts far from their neighbour are cheaper as a tail sum of their own.
        gap = np.abs(ks - prev)
        lead |= gap > 4 * self._rough_mean_sd(ms)[1] + 64
        log_val = np.full(n, -np.inf)
        li = np.flatnonzero(lead)
        log_val[li] = self._log_tail_sum(ks[li] + 1.0 if upper else ks[li], ms[li], upper=upper)
        fi = np.flatnonzero(~lead)
        if fi.size:
            if upper:  # sf(k) = sf(k_prev) + sum_{j=k+1}^{k_prev} p(j), k_prev >= k
                part = self._log_range_sums(ks[fi] + 1.0, prev[fi], ms[fi])
            else:  # cdf(k) = cdf(k_prev) + sum_{j=k_prev+1}^{k} p(j), k_prev <= k
                part = self._log_range_sums(prev[fi] + 1.0, ks[fi], ms[fi])
            log_val[fi] = part
            # Accumulate along each run of followers (rank r adds to rank r - 1).
            run_id = np.cumsum(lead) - 1
            start = np.flatnonzero(lead)[run_id]
            rank = np.arange(n) - start
            by_rank = np.argsort(rank, kind="stable")
            bounds = np.searchsorted(rank[by_rank], np.arange(int(rank.max()) + 2))
            for r in range(1, int(rank.max()) + 1):
                at = by_rank[bounds[r] : bounds[r + 1]]
                log_val[at] = np.logaddexp(log_val[at], log_val[at - 1])
        out = np.empty(n)
        out[order] = log_val
        return out

    def _cdf_sf_by_summation(self, k: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cdf, sf) at integer ``k >= 0``: the side that holds the smaller tail is summed directly."""
        cdf = np.empty(k.shape)
        sf = np.empty(k.shape)
        upper = k >= np.floor(self._rough_mean_sd(mu)[0])
        if upper.any():
            s = np.exp(self._grouped_log_tail(k[upper], mu[upper], upper=True))
            sf[upper] = s
            cdf[upper] = 1.0 - s
        low = ~upper
        if low.any():
            c = np.exp(self._grouped_log_tail(k[low], mu[low], upper=False))
            cdf[low] = c
            sf[low] = 1.0 - c
        return np.clip(cdf, 0.0, 1.0), np.clip(sf, 0.0, 1.0)

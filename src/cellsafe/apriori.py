"""A priori risk and utility of a cell-wise mechanism, known before any data are released.

A cell-wise mechanism treats all cells of equal count alike, so every expected metric depends on
the table only through its **cell-size distribution**: the number of (non-structural) cells w_j
with each count j, as given by :meth:`cellsafe.CountTable.cell_sizes`.  With the mechanism's
transition probabilities P(k | j) (:class:`cellsafe.mechanisms.CellwiseMechanism`) this module
computes, as sums over the distinct counts j weighted by w_j (never cell by cell):

- :func:`tau`: tau1(k) .. tau4(k) of 003 section 3.3;
- :func:`expected_squared_error`: L1 of 000 section 3.4.2, per implicate and for the mean of m;
- :func:`total_distribution`: mean and sd of the synthetic grand total, P(|n_syn - n| < d);
- :func:`expected_hellinger`: expected Hellinger distance and utility (001 eqs. 3-4);
- :func:`expected_within`: expected share of cells within p% of the original (003 Table 3);
- :func:`transition_table` / :func:`reverse_transition_table`: P(k | j) and P(j | k) for plots
  (000 Figures 4 and 5);
- :func:`assess`: all of the above in one frozen :class:`Assessment`.

Only the :class:`~cellsafe.mechanisms.CellwiseMechanism` interface is used, so the same code
serves the saturated synthesizer, a cell key ptable or any other cell-wise mechanism.  Sums over
whole rows of P(k | j) (Hellinger) are term by term over a window holding all but ``2 tol``
(1e-12 each side) of the mass when it spans at most 4096 counts; wider, heavy-tailed rows
(large sigma and large j) use a geometric-grid quadrature of the pmf, relative error about
1e-5.  tau, the squared error and the total need no row sums at all; the share within p% sums
the pmf over its window.  Only the pmf, mean and variance are called (no sf), so a mechanism
whose sf is slow does not slow these down.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import special

from ._validation import check_integer, check_real
from .exceptions import DataError, InvalidArgumentError
from .mechanisms import CellwiseMechanism
from .table import CountTable

__all__ = [
    "CellSizes",
    "cell_sizes",
    "tau",
    "expected_squared_error",
    "SquaredError",
    "total_distribution",
    "TotalDistribution",
    "expected_hellinger",
    "ExpectedHellinger",
    "expected_within",
    "transition_table",
    "reverse_transition_table",
    "assess",
    "Assessment",
    "DEFAULT_K",
    "DEFAULT_P",
]

#: Counts k reported by default (003 Table 4).
DEFAULT_K: tuple[int, ...] = (0, 1, 2, 3)
#: Percentages p reported by default (003 Table 3).
DEFAULT_P: tuple[float, ...] = (0.5, 1.0, 5.0, 10.0, 50.0)
#: Mass left out of each tail of an infinite sum.
TAIL_TOL = 1e-12
# Number of (j, k) terms evaluated at once when summing whole transition rows.
_CHUNK = 1_000_000
# Rows wider than this are summed over geometric bins (see _row_sums).
_MAX_EXACT = 4096
_BIN_RATIO = 0.005
# Windows of 'within p%' summed term by term up to this many counts in all (else by sf).
_WINDOW_TERMS = 4_000_000
_EXACT_PREFIX = 256


# ---------------------------------------------------------------------- input
@dataclass(frozen=True, repr=False)
class CellSizes:
    """A cell-size distribution: ``cells[i]`` non-structural cells have count ``values[i]``.

    Attributes
    ----------
    values : numpy.ndarray of int64
        Distinct counts j, sorted, zero included when there are random zeros.
    cells : numpy.ndarray of float64
        Number of cells w_j with each count (tau2(j) = w_j / n_cells).
    """

    values: np.ndarray
    cells: np.ndarray

    @property
    def n_cells(self) -> float:
        """Number of non-structural cells, sum of w_j."""
        return float(self.cells.sum())

    @property
    def total(self) -> float:
        """Grand total n = sum_j j w_j."""
        return float(self.values @ self.cells)

    @property
    def n_zero(self) -> float:
        """Number of random zeros."""
        return float(self.cells[self.values == 0].sum())

    def tau2(self, k: Any) -> np.ndarray:
        """Share of cells with count k (0 for counts not present)."""
        k = np.asarray(k, dtype=np.int64)
        pos = np.clip(np.searchsorted(self.values, k), 0, self.values.size - 1)
        hit = self.values[pos] == k
        return np.where(hit, self.cells[pos], 0.0) / self.n_cells

    def __repr__(self) -> str:
        return (
            f"CellSizes(n_cells={self.n_cells:,.0f}, total={self.total:,.0f}, distinct counts={self.values.size}, "
            f"max count={int(self.values[-1])})"
        )


def cell_sizes(table_or_cell_sizes: Any) -> CellSizes:
    """Normalize a table or a cell-size distribution to :class:`CellSizes`.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
        A table with integer counts, or ``count -> number of cells`` (as from
        :meth:`CountTable.cell_sizes`), zeros included.

    Examples
    --------
    >>> cell_sizes({0: 90, 1: 6, 2: 4})
    CellSizes(n_cells=100, total=14, distinct counts=3, max count=2)
    """
    obj = table_or_cell_sizes
    if isinstance(obj, CellSizes):
        return obj
    if isinstance(obj, CountTable):
        if not obj.is_integer:
            raise DataError(
                "a priori metrics need a table of integer counts; this table has fractional counts "
                "(a fitted table?). Round it or use the original frequency table."
            )
        obj = obj.cell_sizes()
    if isinstance(obj, Mapping):
        obj = pd.Series(dict(obj), dtype=float)
    if not isinstance(obj, pd.Series):
        raise InvalidArgumentError(
            "Expected a CountTable or a cell-size distribution (a pandas Series or dict mapping count -> number "
            f"of cells). Got {type(obj).__name__} instead."
        )
    try:
        values = np.asarray(obj.index, dtype=np.float64)
        cells = np.asarray(obj.to_numpy(), dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidArgumentError("a cell-size distribution must map numeric counts to numbers of cells.") from None
    bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
    if bad.any():
        raise DataError(
            f"cell-size distribution: counts must be non-negative integers. Got {values[bad][0]!r} as a count."
        )
    bad = ~np.isfinite(cells) | (cells < 0)
    if bad.any():
        raise DataError(
            f"cell-size distribution: numbers of cells must be finite and >= 0. Got {cells[bad][0]!r} cells "
            f"with count {values[bad][0]:g}."
        )
    v = values.astype(np.int64)
    uniq, inv = np.unique(v, return_inverse=True)
    w = np.bincount(inv, weights=cells, minlength=uniq.size)
    keep = w > 0
    if not keep.any():
        raise DataError("cell-size distribution has no cells; a priori metrics need at least one cell.")
    return CellSizes(values=uniq[keep], cells=w[keep])


def _check_mechanism(mechanism: Any, owner: str) -> CellwiseMechanism:
    if not isinstance(mechanism, CellwiseMechanism):
        raise InvalidArgumentError(
            f"The 'mechanism' parameter of {owner} must be a cell-wise mechanism (for example "
            f"SaturatedSynthesizer(NBI(sigma=1))). Got {mechanism!r} instead."
        )
    return mechanism


def _check_counts(k: Any, name: str, owner: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(k))
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidArgumentError(f"The {name!r} parameter of {owner} must be a non-empty list of counts. Got {k!r}.")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InvalidArgumentError(f"The {name!r} parameter of {owner} must hold integer counts >= 0. Got {k!r}.")
    bad = ~np.isfinite(arr.astype(float)) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must hold integer counts >= 0. Got {arr[bad][0]!r} instead."
        )
    return arr.astype(np.int64)


def _check_percentages(p: Any, owner: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
    bad = ~np.isfinite(arr) | (arr < 0)
    if arr.ndim != 1 or arr.size == 0 or bad.any():
        raise InvalidArgumentError(
            f"The 'p' parameter of {owner} must be a non-empty list of percentages >= 0. Got {p!r} instead."
        )
    return arr


# ---------------------------------------------------------------------- tau
def tau(table_or_cell_sizes: Any, mechanism: CellwiseMechanism, k: Any = DEFAULT_K) -> pd.DataFrame:
    """Expected tau1(k) .. tau4(k) of a cell-wise mechanism (003 section 3.3).

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
        The original table or its cell-size distribution (count -> number of cells).
    mechanism : CellwiseMechanism
        For example ``SaturatedSynthesizer(NBI(sigma=1), alpha=0.02)``.
    k : int or sequence of int, default (0, 1, 2, 3)
        Counts to report (non-negative).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``k`` with columns ``tau1`` (share of released cells equal to k), ``tau2``
        (share of original cells equal to k), ``tau3`` (P(released k | original k)) and
        ``tau4`` (P(original k | released k); NaN where no cell is expected to be released as k).

    Notes
    -----
    tau1(k) = sum_j P(k | j) tau2(j) over the observed counts j; tau3(k) = P(k | k) (for k = 0
    the random zeros: 1 when alpha = 0); tau4(k) = tau3(k) tau2(k) / tau1(k) (003 eqs. 8-11,
    000 section 3.4.1).  Cells are the non-structural ones; k = 0 refers to random zeros.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> t = tau({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()), k=[0, 1])
    >>> t.loc[1].round(4).to_dict()
    {'tau1': 0.0329, 'tau2': 0.06, 'tau3': 0.3679, 'tau4': 0.6709}
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "tau")
    kk = _check_counts(k, "k", "tau")
    return _tau_frame(cs, mech, kk)


def _tau_frame(cs: CellSizes, mech: CellwiseMechanism, kk: np.ndarray) -> pd.DataFrame:
    n = cs.n_cells
    p = np.asarray(mech.transition_pmf(kk[:, None], cs.values[None, :]), dtype=np.float64)
    tau1 = p @ cs.cells / n
    tau2 = cs.tau2(kk)
    tau3 = np.asarray(mech.transition_pmf(kk, kk), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau4 = np.where(tau1 > 0, np.minimum(tau3 * tau2 / tau1, 1.0), np.nan)
    return pd.DataFrame(
        {"tau1": tau1, "tau2": tau2, "tau3": tau3, "tau4": tau4}, index=pd.Index(kk, name="k")
    )


# ---------------------------------------------------------------------- squared error and total
@dataclass(frozen=True)
class SquaredError:
    """Expected squared error L1 = E sum_i (f_i - f_i^syn)^2 (000 section 3.4.2).

    Attributes
    ----------
    per_implicate : float
        L1 for one released table: sum_j w_j (Var(j) + bias(j)^2).
    mean_of_implicates : float
        The same for the cell-wise mean of ``m`` implicates: the variance part divided by m.
    m : int
        Number of implicates averaged.
    variance : float
        The variance part, sum_j w_j Var(released | j).
    bias : float
        The squared-bias part, sum_j w_j (E(released | j) - j)^2 (alpha^2 per random zero).
    n_cells : float
        Number of non-structural cells.
    """

    per_implicate: float
    mean_of_implicates: float
    m: int
    variance: float
    bias: float
    n_cells: float

    @property
    def mse(self) -> float:
        """Mean squared error per cell, L1 / n_cells."""
        return self.per_implicate / self.n_cells

    def utility(self) -> float:
        """1 - invlogit(MSE per cell), 000 Figure 7 (1 = no error)."""
        return float(special.expit(-self.mse))


def expected_squared_error(table_or_cell_sizes: Any, mechanism: CellwiseMechanism, m: int = 1) -> SquaredError:
    """Expected squared error of a release, per implicate and for the mean of ``m`` implicates.

    Notes
    -----
    L1 = sum_i Var(f_i^syn) + sum_i (E f_i^syn - f_i)^2, computed over distinct counts (000
    section 3.4.2; methods.md section 4: the bias term is alpha^2 per random zero).

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> expected_squared_error({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()), m=2).mean_of_implicates
    7.0
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "expected_squared_error")
    m = check_integer(m, "m", "expected_squared_error", low=1)
    return _squared_error(cs, mech, m)


def _moments(cs: CellSizes, mech: CellwiseMechanism) -> tuple[np.ndarray, np.ndarray]:
    mean = np.asarray(mech.transition_mean(cs.values), dtype=np.float64)
    var = np.asarray(mech.transition_var(cs.values), dtype=np.float64)
    return mean, np.maximum(var, 0.0)


def _squared_error(cs: CellSizes, mech: CellwiseMechanism, m: int) -> SquaredError:
    mean, var = _moments(cs, mech)
    v = float(var @ cs.cells)
    b = float(((mean - cs.values) ** 2) @ cs.cells)
    return SquaredError(
        per_implicate=v + b, mean_of_implicates=v / m + b, m=m, variance=v, bias=b, n_cells=cs.n_cells
    )


@dataclass(frozen=True)
class TotalDistribution:
    """Distribution of the released grand total n_syn (000 section 3.4.3).

    Attributes
    ----------
    original : float
        The original total n.
    expected : float
        E[n_syn] = n + alpha x (number of random zeros) for the saturated synthesizer.
    sd : float
        sd(n_syn) = sqrt(sum_j w_j Var(released | j)).
    """

    original: float
    expected: float
    sd: float

    @property
    def bias(self) -> float:
        """E[n_syn] - n."""
        return self.expected - self.original

    def prob_within(self, d: Any) -> Any:
        """P(|n_syn - n| < d) under the normal approximation.

        Phi((d - b) / sd) - Phi((-d - b) / sd) with b = E[n_syn] - n, which is
        2 Phi(d / sd) - 1 when the total is unbiased (000's last line drops the "- 1").
        """
        d = np.asarray(d, dtype=np.float64)
        if np.any(~np.isfinite(d) | (d < 0)):
            raise InvalidArgumentError(f"The 'd' parameter of prob_within must be >= 0. Got {d!r} instead.")
        b = self.bias
        if self.sd == 0:
            out = (np.abs(b) < d).astype(np.float64)
        else:
            out = special.ndtr((d - b) / self.sd) - special.ndtr((-d - b) / self.sd)
        return float(out) if out.ndim == 0 else out


def total_distribution(table_or_cell_sizes: Any, mechanism: CellwiseMechanism) -> TotalDistribution:
    """Mean and standard deviation of the released grand total.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> tot = total_distribution({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()))
    >>> tot.expected, round(tot.sd ** 2, 6), round(tot.prob_within(5), 4)
    (14.0, 14.0, 0.8186)
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "total_distribution")
    return _total(cs, mech)


def _total(cs: CellSizes, mech: CellwiseMechanism) -> TotalDistribution:
    mean, var = _moments(cs, mech)
    return TotalDistribution(original=cs.total, expected=float(mean @ cs.cells), sd=math.sqrt(float(var @ cs.cells)))


# ---------------------------------------------------------------------- whole-row expectations
def _narrow_bounds(mech: CellwiseMechanism, j: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per j, a window [lo, hi] of at most _MAX_EXACT counts outside which P(. | j) has mass
    <= 2 tol, found from the pmf alone (windows mean +- c sd, c = 8, 16, 32, accepted once the
    pmf inside sums to >= 1 - 2 tol); ``found`` is False for rows that need a wider window."""
    lo = np.zeros(j.shape, dtype=np.int64)
    hi = np.zeros(j.shape, dtype=np.int64)
    found = np.zeros(j.shape, dtype=bool)
    mean, sd = _mean_sd(mech, j)
    ones = (lambda k, jj: np.ones_like(k),)
    for c in (8.0, 16.0, 32.0):
        lo_c = np.maximum(np.floor(mean - c * sd - 4.0), 0.0).astype(np.int64)
        hi_c = np.ceil(mean + c * sd + 4.0).astype(np.int64)
        rows = np.flatnonzero(~found & (hi_c - lo_c + 1 <= _MAX_EXACT))
        if rows.size:
            mass = _exact_row_sums(mech, j[rows], lo_c[rows], hi_c[rows], ones)[0]
            ok = rows[mass >= 1.0 - 2.0 * tol]
            lo[ok], hi[ok], found[ok] = lo_c[ok], hi_c[ok], True
        if found.all():
            break
    return lo, hi, found


def _mean_sd(mech: CellwiseMechanism, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = np.asarray(mech.transition_mean(j), dtype=np.float64)
    sd = np.sqrt(np.maximum(np.asarray(mech.transition_var(j), dtype=np.float64), 0.0))
    return mean, sd


def _row_sums(
    mech: CellwiseMechanism, j: np.ndarray, tol: float, funcs: Sequence[Any], max_exact: int | None = None
) -> np.ndarray:
    """sum_k P(k | j) g(k, j) for each j and each g in ``funcs`` (rows truncated at ``tol``).

    Rows whose mass lies within _MAX_EXACT counts are summed term by term.  Wider rows (heavy
    tails: large sigma and large j) use the pmf at every count below 256 and, beyond, at the
    edges of bins whose width grows geometrically (ratio 1 + _BIN_RATIO), summed by the
    trapezoid rule and normalized by the mass so found; their range extends until the pmf times
    the count falls below ``tol``.  The relative error is about 1e-5 (checked against
    term-by-term sums in the tests).  ``max_exact`` forces one method (tests only).
    """
    out = np.zeros((len(funcs), j.size))
    if max_exact is None:
        lo, hi, found = _narrow_bounds(mech, j, tol)
    elif max_exact > 0:  # term by term everywhere, with the widest windows
        mean, sd = _mean_sd(mech, j)
        lo, hi, found = _quadrature_bounds(mech, j, mean, sd, tol) + (np.ones(j.shape, dtype=bool),)
    else:
        lo = hi = np.zeros(j.shape, dtype=np.int64)
        found = np.zeros(j.shape, dtype=bool)
    narrow = np.flatnonzero(found)
    if narrow.size:
        out[:, narrow] = _exact_row_sums(mech, j[narrow], lo[narrow], hi[narrow], funcs)
    wide = np.flatnonzero(~found)
    if wide.size:
        out[:, wide] = _quadrature_row_sums(mech, j[wide], tol, funcs)
    return out


def _exact_row_sums(
    mech: CellwiseMechanism, j: np.ndarray, lo: np.ndarray, hi: np.ndarray, funcs: Sequence[Any]
) -> np.ndarray:
    lens = hi - lo + 1
    out = np.zeros((len(funcs), j.size))
    cum = np.cumsum(lens)
    first = 0
    while first < j.size:
        limit = (cum[first - 1] if first else 0) + _CHUNK
        last = max(first + 1, int(np.searchsorted(cum, limit, side="right")))
        ln = lens[first:last]
        seg = np.repeat(np.arange(ln.size), ln)
        offs = np.arange(int(ln.sum())) - np.repeat(np.cumsum(ln) - ln, ln)
        k = lo[first:last][seg] + offs
        jj = j[first:last][seg]
        p = np.asarray(mech.transition_pmf(k, jj), dtype=np.float64)
        kf, jf = k.astype(np.float64), jj.astype(np.float64)
        for i, g in enumerate(funcs):
            out[i, first:last] = np.bincount(seg, weights=p * g(kf, jf), minlength=ln.size)
        first = last
    return out


def _quadrature_bounds(
    mech: CellwiseMechanism, j: np.ndarray, mean: np.ndarray, sd: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] with pmf(k) (k + 1) < tol at both ends (a tail-mass proxy for decaying tails)."""
    lo = np.maximum(np.floor(mean - 40.0 * sd), 0.0).astype(np.int64)
    hi = np.ceil(mean + 40.0 * sd + 16.0).astype(np.int64)
    for _ in range(60):
        bad = np.asarray(mech.transition_pmf(hi, j), dtype=np.float64) * (hi + 1.0) >= tol
        if not bad.any():
            break
        hi = np.where(bad, 2 * hi, hi)
    for _ in range(60):
        bad = (lo > 0) & (np.asarray(mech.transition_pmf(lo, j), dtype=np.float64) * (lo + 1.0) >= tol)
        if not bad.any():
            break
        lo = np.where(bad, lo // 2, lo)
    return lo, hi


def _quadrature_row_sums(mech: CellwiseMechanism, j: np.ndarray, tol: float, funcs: Sequence[Any]) -> np.ndarray:
    mean, sd = _mean_sd(mech, j)
    lo, hi = _quadrature_bounds(mech, j, mean, sd, tol)
    points = []
    for lo_i, hi_i in zip(lo.tolist(), hi.tolist()):
        start = max(lo_i + _EXACT_PREFIX, int(math.ceil(1.0 / _BIN_RATIO)))
        if start >= hi_i:
            points.append(np.arange(lo_i, hi_i + 1))
            continue
        n_geo = int(math.ceil(math.log(hi_i / start) / math.log1p(_BIN_RATIO))) + 2
        e = np.concatenate([np.arange(lo_i, start), np.round(np.geomspace(start, hi_i, n_geo)).astype(np.int64)])
        points.append(e[np.r_[True, np.diff(e) > 0]])
    sizes = np.array([e.size for e in points])
    k = np.concatenate(points)
    row = np.repeat(np.arange(j.size), sizes)
    jj = j[row]
    p = np.asarray(mech.transition_pmf(k, jj), dtype=np.float64)
    gap = np.diff(k).astype(np.float64)
    same = row[:-1] == row[1:]
    left = np.r_[0.0, np.where(same, gap, 0.0)]
    right = np.r_[np.where(same, gap, 0.0), 0.0]
    # Euler-Maclaurin: sum over the integers ~ trapezoid integral + half the end values
    weight = 0.5 * (np.maximum(left, 1.0) + np.maximum(right, 1.0))
    wp = weight * p
    mass = np.bincount(row, weights=wp, minlength=j.size)
    kf, jf = k.astype(np.float64), jj.astype(np.float64)
    out = np.zeros((len(funcs), j.size))
    for i, g in enumerate(funcs):
        out[i] = np.bincount(row, weights=wp * g(kf, jf), minlength=j.size) / mass
    return out


# ---------------------------------------------------------------------- Hellinger
@dataclass(frozen=True)
class ExpectedHellinger:
    """Expected Hellinger distance and utility of a release (001 eqs. 3-4).

    Attributes
    ----------
    distance : float
        E[HD(f, f^syn)], HD = sqrt(1/2 sum_i (sqrt f_i - sqrt f_i^syn)^2).
    utility : float
        1 - E[HD] / sqrt(n).
    distance_squared : float
        E[HD^2], exact.
    sd_distance_squared : float
        sd of HD^2 (the cells are independent).
    """

    distance: float
    utility: float
    distance_squared: float
    sd_distance_squared: float


def expected_hellinger(
    table_or_cell_sizes: Any, mechanism: CellwiseMechanism, tol: float = TAIL_TOL
) -> ExpectedHellinger:
    """Expected Hellinger distance and utility between the original and one released table.

    Notes
    -----
    S = HD^2 = (1/2) sum_i D_i with D_i = (sqrt f_i - sqrt f_i^syn)^2 independent across cells,
    so E[S] and Var[S] are exact sums over the distinct counts of E[D | j] and Var[D | j].
    E[HD] = E[sqrt S] uses the second-order expansion sqrt(E S) - Var S / (8 (E S)^(3/2)),
    whose error is of order (sd S / E S)^3: negligible for tables with many non-zero cells.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> h = expected_hellinger({0: 9000, 1: 600, 2: 400}, SaturatedSynthesizer(Poisson()))
    >>> round(h.utility, 3)
    0.605
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "expected_hellinger")
    tol = check_real(tol, "tol", "expected_hellinger", low=0.0, high=1e-3, low_open=True)
    return _hellinger(cs, mech, tol)


def _hellinger(cs: CellSizes, mech: CellwiseMechanism, tol: float) -> ExpectedHellinger:
    def d1(k: np.ndarray, j: np.ndarray) -> np.ndarray:
        return (np.sqrt(k) - np.sqrt(j)) ** 2

    def d2(k: np.ndarray, j: np.ndarray) -> np.ndarray:
        return (np.sqrt(k) - np.sqrt(j)) ** 4

    e1, e2 = _row_sums(mech, cs.values, tol, (d1, d2))
    mean_s = 0.5 * float(e1 @ cs.cells)
    var_s = 0.25 * float(np.maximum(e2 - e1**2, 0.0) @ cs.cells)
    if mean_s > 0:
        dist = math.sqrt(mean_s) - var_s / (8.0 * mean_s**1.5)
        dist = max(dist, 0.0)
    else:
        dist = 0.0
    n = cs.total
    util = 1.0 - dist / math.sqrt(n) if n > 0 else math.nan
    return ExpectedHellinger(
        distance=dist, utility=util, distance_squared=mean_s, sd_distance_squared=math.sqrt(var_s)
    )


# ---------------------------------------------------------------------- within p%
def _within_bounds(j: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Released counts k with |k - j| <= p% of j: k in [lo, hi] (j = 0: only k = 0)."""
    d = j.astype(np.float64) * (p / 100.0)
    slack = 1e-9 * np.maximum(1.0, j)
    lo = np.maximum(np.ceil(j - d - slack), 0).astype(np.int64)
    hi = np.floor(j + d + slack).astype(np.int64)
    return lo, hi


def expected_within(table_or_cell_sizes: Any, mechanism: CellwiseMechanism, p: Any = DEFAULT_P) -> pd.DataFrame:
    """Expected share of cells released within p% of their original count (003 Table 3).

    Parameters
    ----------
    p : float or sequence of float, default (0.5, 1, 5, 10, 50)
        Percentages.  A cell of count j > 0 is within p% when |released - j| <= p j / 100; a
        random zero only when it stays zero (003 Table 3 counts a zero released as non-zero as
        more than 50% away).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``p`` with columns ``all`` (share of all non-structural cells) and
        ``nonzero`` (share of the cells with a non-zero original count).

    Notes
    -----
    P(lo <= released <= hi | j) is the pmf summed over the window (exact); when the windows
    of all distinct counts hold more than 4 million counts, sf(lo - 1) - sf(hi) instead.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> expected_within({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()), p=[50]).round(4).to_dict("index")
    {50.0: {'all': 0.9509, 'nonzero': 0.5094}}
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "expected_within")
    pp = _check_percentages(p, "expected_within")
    return _within(cs, mech, pp)


def _within(cs: CellSizes, mech: CellwiseMechanism, pp: np.ndarray) -> pd.DataFrame:
    j = cs.values
    nz = j > 0
    n_nz = float(cs.cells[nz].sum())
    rows_all, rows_nz = [], []
    for p in pp:
        lo, hi = _within_bounds(j, float(p))
        prob = np.clip(_window_mass(mech, j, lo, hi), 0.0, 1.0)
        rows_all.append(float(prob @ cs.cells) / cs.n_cells)
        rows_nz.append(float(prob[nz] @ cs.cells[nz]) / n_nz if n_nz > 0 else math.nan)
    return pd.DataFrame({"all": rows_all, "nonzero": rows_nz}, index=pd.Index(pp, name="p"))


def _window_mass(mech: CellwiseMechanism, j: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo <= released <= hi | j): the pmf summed over the window (exact, no truncation), or
    sf(lo - 1) - sf(hi) when the windows hold more than _WINDOW_TERMS counts in all."""
    lens = hi - lo + 1
    if int(lens.sum()) > _WINDOW_TERMS:
        return np.asarray(mech.transition_sf(lo - 1, j), dtype=np.float64) - np.asarray(
            mech.transition_sf(hi, j), dtype=np.float64
        )
    one = (lambda k, jj: np.ones_like(k),)
    return _exact_row_sums(mech, j, lo, hi, one)[0]


# ---------------------------------------------------------------------- transition tables
def transition_table(mechanism: CellwiseMechanism, j: Any = (1, 5, 10, 20), k_max: int | None = None) -> pd.DataFrame:
    """P(released k | original j) as a table: one row per j, one column per k = 0..k_max.

    ``k_max`` defaults to the largest count whose upper tail mass exceeds 1e-6 over the rows.
    000 Figure 4 plots these rows.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> transition_table(SaturatedSynthesizer(Poisson()), j=[1], k_max=2).round(4).values.tolist()
    [[0.3679, 0.3679, 0.1839]]
    """
    mech = _check_mechanism(mechanism, "transition_table")
    jj = _check_counts(j, "j", "transition_table")
    if k_max is None:
        k_max = int(np.max(mech.transition_support(jj, 1e-6)))
    k_max = check_integer(k_max, "k_max", "transition_table", low=0)
    k = np.arange(k_max + 1)
    p = np.asarray(mech.transition_pmf(k[None, :], jj[:, None]), dtype=np.float64)
    return pd.DataFrame(p, index=pd.Index(jj, name="j"), columns=pd.Index(k, name="k"))


def reverse_transition_table(
    table_or_cell_sizes: Any, mechanism: CellwiseMechanism, k: Any = (1, 5, 10, 20), j_max: int | None = None
) -> pd.DataFrame:
    """P(original j | released k) = P(k | j) tau2(j) / tau1(k): one row per k, columns j = 0..j_max.

    000 Figure 5 plots these rows.  ``j_max`` defaults to the largest original count carrying
    more than 1e-6 of any row's probability.
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "reverse_transition_table")
    kk = _check_counts(k, "k", "reverse_transition_table")
    p = np.asarray(mech.transition_pmf(kk[:, None], cs.values[None, :]), dtype=np.float64) * cs.cells
    with np.errstate(invalid="ignore", divide="ignore"):
        post = p / p.sum(axis=1, keepdims=True)
    if j_max is None:
        big = np.flatnonzero(np.nan_to_num(post).max(axis=0) > 1e-6)
        j_max = int(cs.values[big[-1]]) if big.size else int(kk.max())
    j_max = check_integer(j_max, "j_max", "reverse_transition_table", low=0)
    cols = np.arange(j_max + 1)
    out = np.zeros((kk.size, cols.size))
    inside = cs.values <= j_max
    out[:, cs.values[inside]] = post[:, inside]
    return pd.DataFrame(out, index=pd.Index(kk, name="k"), columns=pd.Index(cols, name="j"))


# ---------------------------------------------------------------------- everything at once
@dataclass(frozen=True)
class Assessment:
    """A priori risk and utility of a mechanism on a cell-size distribution.

    Attributes
    ----------
    mechanism : str
        repr of the mechanism.
    n_cells, total : float
        Non-structural cells and original grand total.
    tau : pandas.DataFrame
        tau1..tau4 by k (see :func:`tau`).
    squared_error : SquaredError
    total_distribution : TotalDistribution
    hellinger : ExpectedHellinger or None
        None when not requested.
    within : pandas.DataFrame
        Expected share within p% (see :func:`expected_within`).
    d : tuple of float
        Distances d for P(|n_syn - n| < d).
    """

    mechanism: str
    n_cells: float
    total: float
    tau: pd.DataFrame = field(repr=False)
    squared_error: SquaredError
    total_distribution: TotalDistribution
    hellinger: ExpectedHellinger | None
    within: pd.DataFrame = field(repr=False)
    d: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the keys of ``cellsafe assess --json``)."""
        tot = self.total_distribution
        out: dict[str, Any] = {
            "mechanism": self.mechanism,
            "n_cells": int(self.n_cells) if float(self.n_cells).is_integer() else self.n_cells,
            "tau": _tau_dict(self.tau),
            "expected_squared_error": self.squared_error.per_implicate,
            "expected_squared_error_mean_of_implicates": self.squared_error.mean_of_implicates,
            "m": self.squared_error.m,
            "mse_per_cell": self.squared_error.mse,
            "mse_utility": self.squared_error.utility(),
            "total": {
                "original": tot.original,
                "expected": tot.expected,
                "sd": tot.sd,
                "prob_within": {_num_key(d): tot.prob_within(d) for d in self.d},
            },
            "within_p": {
                col: {_num_key(p): float(v) for p, v in self.within[col].items()} for col in self.within.columns
            },
        }
        if self.hellinger is not None:
            out["expected_hellinger_distance"] = self.hellinger.distance
            out["expected_hellinger_utility"] = self.hellinger.utility
        return out

    def summary(self) -> str:
        """A plain-text report."""
        lines = [
            f"A priori assessment of {self.mechanism}",
            f"cells {self.n_cells:,.0f}, original total {self.total:,.0f}",
            "",
            self.tau.to_string(float_format=lambda x: f"{x:.4f}"),
            "",
            f"expected squared error  {self.squared_error.per_implicate:,.6g} per implicate, "
            f"{self.squared_error.mean_of_implicates:,.6g} for the mean of m = {self.squared_error.m}",
            f"synthetic total         expected {self.total_distribution.expected:,.6g}, sd "
            f"{self.total_distribution.sd:,.6g}",
        ]
        for d in self.d:
            lines.append(f"  P(|n_syn - n| < {d:g}) = {self.total_distribution.prob_within(d):.4f}")
        if self.hellinger is not None:
            lines.append(
                f"Hellinger               distance {self.hellinger.distance:.6g}, utility {self.hellinger.utility:.6f}"
            )
        lines += ["", "share within p% of the original", self.within.to_string(float_format=lambda x: f"{x:.4f}")]
        return "\n".join(lines)


def _num_key(x: float) -> str:
    return f"{float(x):g}"


def _tau_dict(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    return {str(int(k)): {c: float(frame.at[k, c]) for c in frame.columns} for k in frame.index}


def assess(
    table_or_cell_sizes: Any,
    mechanism: CellwiseMechanism,
    *,
    k: Any = DEFAULT_K,
    m: int = 1,
    p: Any = DEFAULT_P,
    d: Any = (),
    hellinger: bool = True,
    tol: float = TAIL_TOL,
) -> Assessment:
    """All a priori metrics of ``mechanism`` on a table or cell-size distribution.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
    mechanism : CellwiseMechanism
    k : sequence of int
        Counts for the tau metrics.
    m : int
        Implicates averaged for the squared error of the mean.
    p : sequence of float
        Percentages for the share within p%.
    d : sequence of float
        Distances for P(|n_syn - n| < d).
    hellinger : bool
        Compute the expected Hellinger distance (sums whole transition rows: the slowest part).
    tol : float
        Tail mass left out of the row sums.

    Examples
    --------
    >>> from cellsafe.distributions import NBI
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> a = assess({0: 900, 1: 60, 2: 40}, SaturatedSynthesizer(NBI(sigma=0.5)))
    >>> round(float(a.tau.at[1, "tau4"]), 4)
    0.64
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "assess")
    kk = _check_counts(k, "k", "assess")
    m = check_integer(m, "m", "assess", low=1)
    pp = _check_percentages(p, "assess")
    dd = np.atleast_1d(np.asarray(d, dtype=np.float64))
    if np.any(~np.isfinite(dd) | (dd < 0)):
        raise InvalidArgumentError(f"The 'd' parameter of assess must hold distances >= 0. Got {d!r} instead.")
    tol = check_real(tol, "tol", "assess", low=0.0, high=1e-3, low_open=True)
    return Assessment(
        mechanism=repr(mech),
        n_cells=cs.n_cells,
        total=cs.total,
        tau=_tau_frame(cs, mech, kk),
        squared_error=_squared_error(cs, mech, m),
        total_distribution=_total(cs, mech),
        hellinger=_hellinger(cs, mech, tol) if hellinger else None,
        within=_within(cs, mech, pp),
        d=tuple(float(x) for x in dd),
    )

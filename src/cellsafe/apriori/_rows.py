"""Expectations over whole rows of P(k | j): sums term by term or by geometric-grid quadrature."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..mechanisms import CellwiseMechanism

#: Mass left out of each tail of an infinite sum.
TAIL_TOL = 1e-12
# Number of (j, k) terms evaluated at once when summing whole transition rows.
_CHUNK = 1_000_000
# Rows wider than this are summed over geometric bins (see _row_sums).
_MAX_EXACT = 4096
_BIN_RATIO = 0.005
_EXACT_PREFIX = 256
# Mean and variance of the released count for each original count (see _moments).
Moments = tuple[np.ndarray, np.ndarray]


def _pmf_rows(mech: CellwiseMechanism, k: np.ndarray, row: np.ndarray, j: np.ndarray) -> np.ndarray:
    """P(k_i | j[row_i]): whole rows at once where the mechanism shares work between rows
    (``transition_pmf_rows``), else point by point."""
    rows = getattr(mech, "transition_pmf_rows", None)
    if rows is not None:
        return np.asarray(rows(k, row, j), dtype=np.float64)
    return np.asarray(mech.transition_pmf(k, j[row]), dtype=np.float64)


def _closed_form_tails(mech: CellwiseMechanism) -> bool:
    """Whether the mechanism's sf is a closed form, so that the mass of any range costs two evaluations."""
    check = getattr(mech, "transition_tails_closed_form", None)
    return bool(check()) if check is not None else False


def _range_mass(mech: CellwiseMechanism, j: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo <= released <= hi | j) as sf(lo - 1) - sf(hi)."""
    return np.asarray(mech.transition_sf(lo - 1, j), dtype=np.float64) - np.asarray(
        mech.transition_sf(hi, j), dtype=np.float64
    )


def _moments(mech: CellwiseMechanism, j: np.ndarray) -> Moments:
    """Mean and variance (clipped at 0) of the released count given each original count j.

    Computed once per call of a metric and passed on: they can be slow (GAF).
    """
    mean = np.asarray(mech.transition_mean(j), dtype=np.float64)
    var = np.asarray(mech.transition_var(j), dtype=np.float64)
    return mean, np.maximum(var, 0.0)


def _narrow_bounds(
    mech: CellwiseMechanism, j: np.ndarray, mean: np.ndarray, sd: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per j, a window [lo, hi] of at most _MAX_EXACT counts outside which P(. | j) has mass
    <= 2 tol, found from the pmf alone (windows mean +- c sd, c = 8, 16, 32, accepted once the
    pmf inside sums to >= 1 - 2 tol); ``found`` is False for rows that need a wider window."""
    lo = np.zeros(j.shape, dtype=np.int64)
    hi = np.zeros(j.shape, dtype=np.int64)
    found = np.zeros(j.shape, dtype=bool)
    ones = (lambda k, jj: np.ones_like(k),)
    closed = _closed_form_tails(mech)
    for c in (8.0, 16.0, 32.0):
        lo_c = np.maximum(np.floor(mean - c * sd - 4.0), 0.0).astype(np.int64)
        hi_c = np.ceil(mean + c * sd + 4.0).astype(np.int64)
        rows = np.flatnonzero(~found & (hi_c - lo_c + 1 <= _MAX_EXACT))
        if rows.size:
            if closed:  # two tail evaluations per row instead of a sum over the window
                mass = _range_mass(mech, j[rows], lo_c[rows], hi_c[rows])
            else:
                mass = _exact_row_sums(mech, j[rows], lo_c[rows], hi_c[rows], ones)[0]
            ok = rows[mass >= 1.0 - 2.0 * tol]
            lo[ok], hi[ok], found[ok] = lo_c[ok], hi_c[ok], True
        if found.all():
            break
    return lo, hi, found


def _row_sums(
    mech: CellwiseMechanism,
    j: np.ndarray,
    tol: float,
    funcs: Sequence[Any],
    max_exact: int | None = None,
    moments: Moments | None = None,
) -> np.ndarray:
    """sum_k P(k | j) g(k, j) for each j and each g in ``funcs`` (rows truncated at ``tol``).

    Rows whose mass lies within _MAX_EXACT counts are summed term by term.  Wider rows (heavy
    tails: large sigma and large j) use the pmf at every count below 256 and, beyond, at the
    edges of bins whose width grows geometrically (ratio 1 + _BIN_RATIO), summed by the
    trapezoid rule and normalized by the mass so found; their range extends until the pmf times
    the count falls below ``tol``.  The relative error is about 1e-5 (checked against
    term-by-term sums in the tests).  ``max_exact`` forces one method (tests only).
    ``moments`` are :func:`_moments` of ``j`` when the caller has them already.
    """
    mean, var = moments if moments is not None else _moments(mech, j)
    sd = np.sqrt(var)
    out = np.zeros((len(funcs), j.size))
    if max_exact is None:
        lo, hi, found = _narrow_bounds(mech, j, mean, sd, tol)
    elif max_exact > 0:  # term by term everywhere, with the widest windows
        lo, hi, found = _quadrature_bounds(mech, j, mean, sd, tol) + (np.ones(j.shape, dtype=bool),)
    else:
        lo = hi = np.zeros(j.shape, dtype=np.int64)
        found = np.zeros(j.shape, dtype=bool)
    narrow = np.flatnonzero(found)
    if narrow.size:
        out[:, narrow] = _exact_row_sums(mech, j[narrow], lo[narrow], hi[narrow], funcs)
    wide = np.flatnonzero(~found)
    if wide.size:
        out[:, wide] = _quadrature_row_sums(mech, j[wide], mean[wide], sd[wide], tol, funcs)
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
        p = _pmf_rows(mech, k, seg, j[first:last])
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


def _quadrature_row_sums(
    mech: CellwiseMechanism, j: np.ndarray, mean: np.ndarray, sd: np.ndarray, tol: float, funcs: Sequence[Any]
) -> np.ndarray:
    lo, hi = _quadrature_bounds(mech, j, mean, sd, tol)
    k, row = _quadrature_points(lo, hi)
    jj = j[row]
    p = _pmf_rows(mech, k, row, j)
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


def _quadrature_points(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, every count from lo up to lo + 256 (at least 1/_BIN_RATIO), then the rounded
    points of a geometric grid up to hi (ratio 1 + _BIN_RATIO), distinct and increasing; with
    each point's row.  The grid is ``np.geomspace(start, hi, n)``'s, computed for all rows at once."""
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    start = np.maximum(lo + _EXACT_PREFIX, int(math.ceil(1.0 / _BIN_RATIO)))
    geo = start < hi
    n_geo = np.zeros(lo.shape, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_geo[geo] = np.ceil(np.log(hi[geo] / start[geo]) / math.log1p(_BIN_RATIO)).astype(np.int64) + 2
    n_exact = np.where(geo, start - lo, hi - lo + 1)
    # the counts taken one by one
    rows_e = np.repeat(np.arange(lo.size), n_exact)
    k_e = lo[rows_e] + (np.arange(int(n_exact.sum())) - np.repeat(np.cumsum(n_exact) - n_exact, n_exact))
    # the geometric grids, as numpy's geomspace computes them: 10 ** linspace(log10(start), log10(hi), n)
    rows_g = np.repeat(np.arange(lo.size), n_geo)
    step_i = np.arange(int(n_geo.sum())) - np.repeat(np.cumsum(n_geo) - n_geo, n_geo)
    with np.errstate(divide="ignore", invalid="ignore"):
        l0, l1 = np.log10(start.astype(np.float64)), np.log10(hi.astype(np.float64))
        step = (l1 - l0) / (n_geo - 1).astype(np.float64)  # per row, as linspace computes it
    y = step_i * step[rows_g] + l0[rows_g]
    first, last = step_i == 0, step_i == n_geo[rows_g] - 1
    y[last] = l1[rows_g[last]]
    grid = np.power(10.0, y)
    grid[first] = start[rows_g[first]]
    grid[last] = hi[rows_g[last]]
    k_g = np.round(grid).astype(np.int64)
    # merged by row (counts one by one first), duplicates of a row dropped
    k = np.concatenate([k_e, k_g])
    row = np.concatenate([rows_e, rows_g])
    order = np.argsort(row, kind="stable")
    k, row = k[order], row[order]
    keep = np.r_[True, (np.diff(k) > 0) | (np.diff(row) != 0)]
    return k[keep], row[keep]

"""The attacker's interval of a withheld cell, and further suppressions until every interval is wide enough.

An attacker who knows every published cell and that the inner cells are non-negative bounds a
withheld cell j by two linear programs over the inner cells y >= 0 with ``X_P^T y = z_P`` (P the
published cells): the minimum and the maximum of ``x_j^T y`` (Hundepool et al. 2012, Statistical
Disclosure Control, section 4.3.1).  :func:`cell_intervals` solves them with scipy's HiGHS; it is
the core of :func:`cellsafe.metrics.audit_suppression` and of :func:`protect_intervals` alike, so
what the suppression promises is what the audit measures.

Protection levels.  A sensitive cell with value v needs an upper protection r (the attacker's upper
bound at least ``v + r``) and a lower protection r (the lower bound at most ``v - r``); the lower
bound can never fall below 0, which every attacker knows, so the lower protection asked is
``min(r, v)`` (tau-Argus caps it at the cell value in the same way).  A cell with r = 0 only needs
an interval of positive width.  Comparisons allow a relative slack of ``tol`` times
``max(1, |v|)`` for the rounding of the linear programs.

Further suppressions (:func:`protect_intervals`).  Secondary suppression by Gaussian elimination
makes no sensitive cell computable exactly, but its interval may still be narrow.  Withholding one
more published cell removes one equation from the attacker's system, so every interval can only
widen: a pattern that protects a cell keeps protecting it when more cells are withheld.  For each
side of each sensitive cell, one linear program finds inner values that reach the protection
target while the published equations give way as little as possible (weighted by the cells'
values, tau-Argus's default cost); the equations that gave way are withheld, after which the target
is within the attacker's reach.  See :func:`protect_intervals` for the program and its sources.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from ..exceptions import DataError

__all__ = ["cell_intervals", "protection_met", "protect_intervals"]


def cell_intervals(
    X: Any, released: np.ndarray, cells: np.ndarray, *, upper_bound: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The attacker's lower and upper bounds on ``cells`` from the published (non-NaN) cells of ``released``.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
    released : array over the published cells
        Published values, NaN where withheld.
    cells : int array
        The cells to bound (usually the withheld ones).
    upper_bound : float, optional
        A known upper bound on every inner cell.

    Returns
    -------
    lower, upper : ndarray of float64

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1]], dtype=float))  # two inner cells and their total
    >>> cell_intervals(X, np.array([np.nan, np.nan, 10.0]), np.array([0, 1]))
    (array([0., 0.]), array([10., 10.]))
    """
    from scipy.optimize import linprog

    Xc = sp.csc_matrix(X, dtype=np.float64)
    released = np.asarray(released, dtype=np.float64)
    shown = np.flatnonzero(~np.isnan(released))
    A = Xc[:, shown].T.tocsr()
    b = released[shown]
    cells = np.asarray(cells, dtype=np.int64)
    lower = np.empty(cells.shape[0])
    upper = np.empty(cells.shape[0])
    for i, j in enumerate(cells):
        c = np.asarray(Xc[:, j].todense()).reshape(-1)
        for sign, out in ((1.0, lower), (-1.0, upper)):
            res = linprog(sign * c, A_eq=A, b_eq=b, bounds=(0, upper_bound), method="highs")
            if res.status == 2:
                raise DataError("the published values admit no non-negative inner cells; is this release additive?")
            if res.status == 3:  # unbounded above: no published equation holds the cell
                out[i] = np.inf
            elif res.status != 0:
                raise DataError(f"the linear program of published cell {j} did not solve: {res.message}")
            else:
                out[i] = sign * res.fun
    return lower, upper


def protection_met(
    value: np.ndarray, lower: np.ndarray, upper: np.ndarray, required: np.ndarray, tol: float = 1e-7
) -> tuple[np.ndarray, np.ndarray]:
    """Whether the lower and the upper side of each interval give the protection required (module notes).

    With ``required > 0``: ``upper - value >= required`` and ``value - lower >= min(required, value)``;
    with ``required == 0`` both sides say whether the width is positive.  Each comparison allows
    ``tol * max(1, |value|)``.
    """
    value = np.asarray(value, dtype=np.float64)
    required = np.asarray(required, dtype=np.float64)
    slack = tol * np.maximum(1.0, np.abs(value))
    with np.errstate(invalid="ignore"):
        up = upper - value >= required - slack
        low = value - lower >= np.minimum(required, np.maximum(value, 0.0)) - slack
        positive = upper - lower > slack
    return np.where(required > 0, low, positive), np.where(required > 0, up, positive)


def protect_intervals(
    X: Any,
    values: np.ndarray,
    suppressed: np.ndarray,
    required: np.ndarray,
    sensitive: np.ndarray,
    *,
    allowed: np.ndarray | None = None,
    cost: np.ndarray | None = None,
    sole: np.ndarray | None = None,
    tol: float = 1e-7,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Withhold further cells until every ``sensitive`` cell's interval gives its ``required`` protection.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
    values : array over the published cells
        The true published values (sums of non-negative inner values).
    suppressed : bool array
        The cells withheld so far (the sensitive ones among them).
    required : float array
        The protection each cell needs on both sides (0: positive width).
    sensitive : int array
        The cells whose intervals are checked, in the order they are visited.
    allowed : bool array, optional
        Cells that may be withheld further (default: every published cell).
    cost : float array, optional
        What withholding a cell costs per unit its equation gives way (default: ``values``).
    sole : int array, optional
        Each cell's single contributor (-1: none or several).  Given, a cell that needs a protection
        gets it also against each contributor alone in a withheld cell, who knows that cell's value
        (the singleton problem): the contributor's own cells that share no inner cell with the
        protected one are equations that never give way.  Its cells that do share one hold its own
        contribution to that cell, which the rules' protection already allows for (the p% rule's
        intruder knows its own contribution), and the cell's only contributor needs no protection
        from itself.
    tol : float
        Relative slack of the comparisons (:func:`protection_met`); the targets are set that much
        beyond the protection, so that the audit's comparison holds after rounding.

    Returns
    -------
    suppressed : bool array
        The cells withheld now (a superset of the input).
    unresolved : bool array
        Sensitive cells whose protection no set of allowed cells can give.
    n_lp : int
        Linear programs solved.

    Notes
    -----
    One linear program per side of each sensitive cell p (upper side: target ``t = v + r``; lower
    side: ``t = v - min(r, v)``; r = 0: the upper side with a target just above v), over inner cells
    y >= 0 and, for each published cell j that may be withheld, two deviations ``d+_j, d-_j >= 0``::

        minimise  sum_j cost_j (d+_j + d-_j)
        subject to  x_j^T y - d+_j + d-_j = z_j   (published j; d = 0 where j may not be withheld)
                    x_p^T y >= t  (upper side)   or   x_p^T y <= t  (lower side)

    The optimum is 0 when the published cells already allow a y reaching the target: the side is
    protected.  Otherwise the cells whose equations give way (non-zero deviation) are withheld: y
    then satisfies every equation left, so the attacker's bound reaches the target.  This is the
    protection-level constraint of the optimal method (Fischetti and Salazar-González 2001;
    Hundepool et al. 2012, section 4.4) for one cell, with the cells' on/off choice relaxed to
    weighted deviations; cells are visited in the given order and what one withholds counts for the
    next (withholding more only widens intervals), so the result is deterministic but not of least
    cost.  Infeasible (only cells that may not be withheld hold the bound): the cell is unresolved.

    Against a contributor alone in withheld cells (``sole``), the same program with that
    contributor's cells as equations that never give way; it is solved only for contributors whose
    cells the outside attacker's solution y does not already meet (where it does, y reaches the
    target within their knowledge too), after one program for all of them together with nothing
    given way (a y meeting all their cells serves each).

    Examples
    --------
    A 2 x 2 table with its margins, inner cell (0, 0) = 50 sensitive with protection 30: with the four
    inner cells withheld the margins still hold it in [0, 60]; withholding both row totals (the
    cheapest equations that give way) lets it reach 80.

    >>> import numpy as np, scipy.sparse as sp
    >>> inner = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    >>> margins = np.array([[1, 0, 1, 0, 1], [1, 0, 0, 1, 1], [0, 1, 1, 0, 1], [0, 1, 0, 1, 1]])
    >>> X = sp.csr_matrix(np.hstack([inner, margins]).astype(float))  # rows 0, 1, columns 0, 1, total
    >>> values = X.T @ np.array([50.0, 10.0, 40.0, 60.0])
    >>> done = np.zeros(9, dtype=bool); done[:4] = True
    >>> new, unresolved, _ = protect_intervals(X, values, done, np.r_[30.0, np.zeros(8)], np.array([0]))
    >>> np.flatnonzero(new).tolist(), bool(unresolved.any())
    ([0, 1, 2, 3, 4, 5], False)
    """
    values = np.asarray(values, dtype=np.float64)
    suppressed = np.array(suppressed, dtype=bool)
    required = np.asarray(required, dtype=np.float64)
    n_pub = values.shape[0]
    allowed = np.ones(n_pub, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    cost = values if cost is None else np.asarray(cost, dtype=np.float64)
    # a floor so that a zero-cost equation is not given way for nothing
    weight = np.maximum(np.abs(cost), 1e-6 * max(float(np.abs(cost).max(initial=0.0)), 1.0))
    Xc = sp.csc_matrix(X, dtype=np.float64)
    sole = None if sole is None else np.asarray(sole, dtype=np.int64)
    unresolved = np.zeros(n_pub, dtype=bool)
    n_lp = 0
    sensitive = np.asarray(sensitive, dtype=np.int64)
    with progress_bar(sensitive.size, progress, "protection levels", unit="cell") as bar:
        for p in sensitive:
            n_lp += _protect_one(Xc, values, suppressed, required, allowed, weight, sole, unresolved, int(p), tol)
            bar.update(1)
    return suppressed, unresolved, n_lp


def _protect_one(
    Xc: sp.csc_matrix,
    values: np.ndarray,
    suppressed: np.ndarray,
    required: np.ndarray,
    allowed: np.ndarray,
    weight: np.ndarray,
    sole: np.ndarray | None,
    unresolved: np.ndarray,
    p: int,
    tol: float,
) -> int:
    """One sensitive cell's programs (both sides, and against the contributors alone in withheld cells).

    Withholds cells in ``suppressed`` and marks ``unresolved`` in place; returns the number of programs.
    """
    n_pub = values.shape[0]
    n_lp = 0
    v = float(values[p])
    r = float(required[p])
    slack = tol * max(1.0, abs(v))
    targets = [(True, v + r + slack)] if r == 0 else [(True, v + r + slack), (False, v - min(r, max(v, 0.0)) - slack)]
    if r > 0 and targets[1][1] < 0:
        targets[1] = (False, 0.0)  # the attacker's lower bound can only reach 0
    if sole is not None and r > 0:
        xp = np.asarray(Xc[:, p].todense()).reshape(-1)
        apart = np.asarray(Xc.T @ xp).reshape(-1) == 0  # cells sharing no inner cell with p
    for upper, target in targets:
        # contributors alone in withheld cells know those cells: the outside attacker's y is asked
        # to meet them too where that costs nothing (a tiny weight), and serves each contributor
        # whose cells it meets; the others get a program of their own
        singles = None
        if sole is not None and r > 0:
            singles = np.flatnonzero(suppressed & (sole >= 0) & (sole != sole[p]) & apart)
        y = _reach(Xc, values, suppressed, allowed, weight, p, upper, target, None, singles)
        n_lp += 1
        if y is None:
            unresolved[p] = True
            continue
        if singles is None or sole is None:
            continue
        cells = np.flatnonzero(suppressed & (sole >= 0) & (sole != sole[p]) & apart)
        off = np.abs(Xc[:, cells].T @ y - values[cells]) > 1e-9 * np.maximum(1.0, np.abs(values[cells]))
        attackers = np.unique(sole[cells[off]])
        if attackers.size > 1:
            # one program for all of them at once, nothing given way: when some y meets every one
            # of their cells, it serves each of them (most often the case)
            n_lp += 1
            if _reach(Xc, values, suppressed, np.zeros(n_pub, dtype=bool), weight, p, upper, target, cells) is not None:
                continue
        for c in attackers:
            known = np.flatnonzero((sole == c) & apart)
            n_lp += 1
            if _reach(Xc, values, suppressed, allowed, weight, p, upper, target, known) is None:
                unresolved[p] = True
    return n_lp


def _reach(
    Xc: sp.csc_matrix,
    values: np.ndarray,
    suppressed: np.ndarray,
    allowed: np.ndarray,
    weight: np.ndarray,
    p: int,
    upper: bool,
    target: float,
    known: np.ndarray | None,
    soft: np.ndarray | None = None,
) -> np.ndarray | None:
    """One protection program (notes of :func:`protect_intervals`): withholds, in ``suppressed``, the
    cells whose equations give way, and returns the inner values y reaching ``target`` (None when no
    allowed cells can give way enough).  ``known`` cells are equations that never give way (what a
    contributor knows of its own); ``soft`` (withheld) cells are equations y meets where that costs
    next to nothing."""
    from scipy.optimize import linprog

    listed = ~suppressed
    if known is not None:
        listed[known] = True
    rows = np.flatnonzero(listed)
    give = rows[allowed[rows] & ~suppressed[rows]]  # published equations that may give way
    A = Xc[:, rows].T.tocsr()
    pos = np.searchsorted(rows, give)
    D = sp.csr_matrix((np.ones(give.size), (pos, np.arange(give.size))), shape=(rows.size, give.size))
    n_inner = Xc.shape[0]
    xp = np.asarray(Xc[:, p].todense()).reshape(-1)
    w = weight[give]
    b = values[rows]
    if soft is not None and soft.size:
        A = sp.vstack([A, Xc[:, soft].T]).tocsr()
        D = sp.block_diag([D, sp.identity(soft.size)], format="csr")
        w = np.concatenate([w, np.full(soft.size, 1e-6 * float(w.min(initial=1.0)))])
        b = np.concatenate([b, values[soft]])
    res = linprog(
        np.concatenate([np.zeros(n_inner), w, w]),
        A_ub=sp.csr_matrix(np.concatenate([-xp if upper else xp, np.zeros(2 * w.size)])),
        b_ub=[-target if upper else target],
        A_eq=sp.hstack([A, -D, D], format="csr"),
        b_eq=b,
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        return None
    if res.status != 0:
        raise DataError(f"the protection program of published cell {p} did not solve: {res.message}")
    dev = res.x[n_inner : n_inner + give.size] + res.x[n_inner + w.size : n_inner + w.size + give.size]
    scale = max(1.0, float(np.abs(values[rows]).max())) if rows.size else 1.0
    suppressed[give[dev > 1e-9 * scale]] = True
    return res.x[:n_inner]

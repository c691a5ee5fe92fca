"""Optimal secondary suppression: the least costly pattern that gives every primary its protection (a HiGHS MIP).

The pattern is a 0/1 choice ``s_j`` per published cell (1: withheld) minimising ``sum_j cost_j s_j`` subject to
every primary's protection as the attacker measures it: the largest value an attacker can give primary p over
non-negative inner cells that reproduce the published cells must reach ``upper_p``, the least must reach down to
``lower_p``, and their difference must be at least ``width_p`` (Fischetti and Salazar-Gonzalez 2001, the model
tau-Argus's optimal method solves; Hundepool et al. 2012, Statistical Disclosure Control, section 4.4).

The attacker's program for a pattern s, over the inner cells y >= 0 (X: inner x published cells)::

    a_j - (a_j - L_j) s_j  <=  x_j^T y  <=  a_j + M_j s_j      for every published cell j

A published cell (s_j = 0) is an equation; a withheld one only keeps its listing's lower bound L_j (1 where the file
lists non-empty cells only, else 0) and an upper bound ``a_j + M_j`` with ``M_j`` the grand total of the inner
values (the largest published value), which no cell exceeds while the grand total is published.  (With the grand total withheld the bound may
hold the attacker below what it could reach: the protection is then measured against a slightly better informed
attacker, so the pattern still protects.)

It is solved by cutting planes (Benders' decomposition, as Fischetti and Salazar-Gonzalez do): a master MIP over s
with the cuts found so far; for its solution one linear program per side of each primary (HiGHS, started from the
last basis); where one misses its target, the program's dual values give a linear inequality in s that every
protecting pattern meets and this one does not (LP duality bounds the attacker's optimum by a function linear in
s).  When the master's solution protects every primary it is optimal.  The Gaussian pattern is the master's first
incumbent: the MIP only searches below its cost, and when the time limit runs out before a better pattern is
proved protected, the Gaussian pattern is returned with a note saying so.

Cost: ``'value'`` (the withheld cells' values: counts or sums, tau-Argus's default), ``'cells'`` (their number), or
any non-negative array over the published cells; ties go to fewer cells (each cell costs 1e-6 of the smallest
positive cost more).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import InvalidArgumentError

__all__ = ["optimal_secondary", "optimal_targets", "OptimalPattern"]

#: Relative tolerance of the protection comparisons (as the audit's).
TOL = 1e-7


@dataclass(frozen=True)
class OptimalPattern:
    """The result of :func:`optimal_secondary`.

    Attributes
    ----------
    suppressed : bool array over the published cells
    optimal : bool
        True when the pattern is proved least costly (within the MIP's tolerance).
    cost : float
        The pattern's cost; ``bound`` the best lower bound on any protecting pattern's cost.
    start_cost : float
    iterations, n_cuts, n_lp : int
    note : str
        Empty when optimal; otherwise why the starting pattern was returned.
    """

    suppressed: np.ndarray
    optimal: bool
    cost: float
    bound: float
    start_cost: float
    iterations: int
    n_cuts: int
    n_lp: int
    note: str = ""


def _highs() -> Any:
    try:
        import highspy
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise InvalidArgumentError(
            "the optimal secondary suppression needs highspy (HiGHS): pip install 'cellsafe[optimal]'."
        ) from e
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


class _Attacker:
    """The attacker's linear program of a pattern; bounds of the rows change with the pattern, objectives per cell."""

    def __init__(self, X: sp.csc_matrix, values: np.ndarray, listed_lower: np.ndarray, big_m: np.ndarray) -> None:
        self.X = X
        self.a = values
        self.L = listed_lower
        self.M = big_m
        n_inner, n_pub = X.shape
        self.A = X.T.tocsr()  # published x inner
        h = _highs()
        inf = h.getInfinity()
        h.addCols(n_inner, np.zeros(n_inner), np.zeros(n_inner), np.full(n_inner, inf), 0,
                  np.zeros(n_inner + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        A = self.A
        h.addRows(n_pub, values, values, A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
        self.h = h
        self.cost_idx = np.zeros(0, dtype=np.int32)
        self.n_lp = 0

    def set_pattern(self, s: np.ndarray) -> None:
        lo = np.where(s, self.L, self.a)
        hi = np.where(s, self.a + self.M, self.a)
        idx = np.arange(self.a.size, dtype=np.int32)
        self.h.changeRowsBounds(idx.size, idx, lo, hi)
        self.s = s

    def solve(self, p: int, sense: float) -> tuple[float, np.ndarray, np.ndarray]:
        """``m = min sense * x_p^T y`` and the cut it gives: ``B0`` and ``g`` with ``m(s) >= B0 - g . s`` for every
        pattern s (equality at this one, by strong duality)."""
        h = self.h
        col = self.X[:, p]
        idx = col.indices.astype(np.int32)
        f = np.zeros(self.X.shape[0])
        f[idx] = sense * col.data
        if self.cost_idx.size:
            h.changeColsCost(self.cost_idx.size, self.cost_idx, np.zeros(self.cost_idx.size))
        h.changeColsCost(idx.size, idx, f[idx])
        self.cost_idx = idx
        h.run()
        self.n_lp += 1
        status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":
            raise RuntimeError(f"the attacker's program of published cell {p} ended with status {status!r}")
        pi = np.asarray(h.getSolution().row_dual, dtype=np.float64)
        d = f - np.asarray(self.A.T @ pi).reshape(-1)
        if d.min(initial=0.0) < -1e-6 * max(1.0, np.abs(f).max()):  # the other sign convention
            pi = -pi
        m = float(h.getInfo().objective_function_value)
        # sense * x_p^T y = d.y + pi.(X^T y) >= sum_j pi_j bound_j(s) (d >= 0, y >= 0): the lower bound of row j where
        # pi_j > 0, its upper bound where pi_j < 0
        B0 = float(pi @ self.a)
        g = np.where(pi > 0, pi * (self.a - self.L), -pi * self.M)
        return m, B0, g


def optimal_secondary(
    X: Any,
    values: np.ndarray,
    primary: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    width: np.ndarray,
    *,
    start: np.ndarray,
    cost: Any = "value",
    forced: np.ndarray | None = None,
    hidden: np.ndarray | None = None,
    listed_lower: Any = 0.0,
    time_limit: float = 60.0,
    tol: float = TOL,
) -> OptimalPattern:
    """The least costly pattern protecting every primary (module notes), or ``start`` when that cannot be proved in time.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells (0/1)
    values : array over the published cells
        The true published values (sums of non-negative inner values).
    primary : bool array
        The primary suppressions (always withheld).
    upper, lower, width : float arrays over the published cells
        Each primary's targets: the attacker's upper bound must reach ``upper``, its lower bound must reach down to
        ``lower`` and the interval's width must be at least ``width`` (NaN: no target on that side).
    start : bool array
        A protecting pattern (the Gaussian one): the first incumbent and the fallback.
    cost : 'value', 'cells' or array
        What a withheld cell costs (module notes).
    forced, hidden : bool arrays, optional
        Cells never withheld / always withheld.
    listed_lower : float or array
        The lower bound the listing gives a withheld cell (1 where the file lists non-empty cells only).
    time_limit : float
        Seconds for the whole search.

    Examples
    --------
    A 3 x 3 table with its margins, one cell of 1 (freq<=3: the attacker's upper bound must reach 4): the cheapest
    protection withholds the cheapest rectangle through it: (0, 1), (2, 0) and (2, 1), of value 16.

    >>> import numpy as np, scipy.sparse as sp
    >>> inner = np.array([[1, 9, 8], [7, 6, 5], [4, 3, 12]])
    >>> rows = [(i, j) for i in range(3) for j in range(3)]
    >>> cells = rows + [(i, None) for i in range(3)] + [(None, j) for j in range(3)] + [(None, None)]
    >>> X = sp.csc_matrix(np.array([[float((a in (r, None)) and (b in (c, None))) for a, b in cells] for r, c in rows]))
    >>> z = X.T @ inner.reshape(-1)
    >>> prim = np.zeros(z.size, dtype=bool); prim[0] = True
    >>> up = np.where(prim, 4.0, np.nan); nan = np.full(z.size, np.nan)
    >>> start = prim.copy(); start[[1, 3, 4]] = True
    >>> res = optimal_secondary(X, z, prim, up, nan, nan, start=start, cost="value")
    >>> np.flatnonzero(res.suppressed).tolist(), res.optimal
    ([0, 1, 6, 7], True)
    """
    t0 = time.perf_counter()
    X = sp.csc_matrix(X, dtype=np.float64)
    a = np.asarray(values, dtype=np.float64)
    n = a.size
    primary = np.asarray(primary, dtype=bool)
    forced = np.zeros(n, dtype=bool) if forced is None else np.asarray(forced, dtype=bool)
    hidden = np.zeros(n, dtype=bool) if hidden is None else np.asarray(hidden, dtype=bool)
    start = np.asarray(start, dtype=bool) | primary | hidden
    c = _costs(cost, a)
    fixed_on = primary | hidden
    L = np.broadcast_to(np.asarray(listed_lower, dtype=np.float64), (n,)).copy()
    big_m = np.full(n, max(float(np.max(a, initial=0.0)), 1.0))  # the grand total, where it is published
    targets = _targets(primary, a, upper, lower, width, tol)
    attacker = _Attacker(X, a, L, big_m)
    start_cost = float(c @ start)
    first = _separate(attacker, start, targets, tol)  # the start's own misses are cuts too
    start_ok = not first
    master = _Master(c, fixed_on, forced, start_cost * (1 - 1e-9) - 1e-12 if start_ok else np.inf)
    for g, rhs in first:
        master.add_cut(g, rhs)
    s = fixed_on.copy()  # primaries alone: every target they miss gives a first cut
    bound, cuts, it, note, optimal, best = float(c @ s), len(first), 0, "", False, start
    while True:
        it += 1
        new = _separate(attacker, s, targets, tol)
        if not new:
            best, bound, optimal = s, float(c @ s), True
            break
        for g, rhs in new:
            master.add_cut(g, rhs)
        cuts += len(new)
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            note = f"the time limit of {time_limit:g} s ran out after {it} rounds"
            break
        s, bound, status = master.solve(left)
        if s is None and status == "Infeasible":
            if start_ok:  # no pattern cheaper than the start meets the cuts every protecting pattern meets
                optimal, bound = True, start_cost
            else:
                note = "no pattern the cells allowed to be withheld give meets every target"
            break
        if s is None:
            note = f"the MIP stopped ({status}) after {it} rounds" if "limit" not in status.lower() else (
                f"the time limit of {time_limit:g} s ran out after {it} rounds")
            break
    cost_of = float(c @ best)
    if not optimal:
        note = f"{note}: the Gaussian pattern is returned (cost {start_cost:.6g}; no protecting pattern costs less than {bound:.6g})"
    return OptimalPattern(best.copy(), optimal, cost_of, bound, start_cost, it, cuts, attacker.n_lp, note)


def optimal_targets(rules: Any, values: np.ndarray, primary: np.ndarray, required: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each primary's targets (upper, lower, width; NaN where none) from its rules and required protection.

    A frequency rule ``freq<=T`` asks that the attacker cannot tell the cell holds at most T units: its upper bound
    must reach T + 1 (so no derivable sum of primaries is within the rule either).  A p% or (n, k) rule's
    protection r asks for ``value + r`` above and ``value - min(r, value)`` below.
    """
    from ._primary import parse_rule

    v = np.asarray(values, dtype=np.float64)
    n = v.size
    upper, lower, width = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    freq = [r.threshold for r in (parse_rule(x) for x in ([rules] if isinstance(rules, str) else rules)) if r.kind == "freq"]
    r = np.asarray(required, dtype=np.float64)
    has = np.asarray(primary, dtype=bool) & (r > 0)
    upper[has] = v[has] + r[has]
    lower[has] = v[has] - np.minimum(r[has], np.maximum(v[has], 0.0))
    if freq:
        T = max(freq)
        small = np.asarray(primary, dtype=bool)
        upper[small] = np.fmax(upper[small], T + 1.0)
    return upper, lower, width


def _costs(cost: Any, a: np.ndarray) -> np.ndarray:
    if isinstance(cost, str):
        if cost == "value":
            c = np.abs(a).astype(np.float64)
        elif cost == "cells":
            c = np.ones(a.size)
        else:
            raise InvalidArgumentError(f"cost must be 'value', 'cells' or an array over the published cells. Got {cost!r}.")
    else:
        c = np.asarray(cost, dtype=np.float64)
        if c.shape != a.shape or not np.all(np.isfinite(c)) or np.any(c < 0):
            raise InvalidArgumentError(f"a cost array needs one finite non-negative cost per published cell ({a.size}).")
    positive = c[c > 0]
    return c + 1e-6 * (float(positive.min()) if positive.size else 1.0)


def _targets(primary: np.ndarray, a: np.ndarray, upper: Any, lower: Any, width: Any, tol: float) -> list[tuple[int, str, float]]:
    """(cell, side, target) for every finite requirement of a primary; targets set ``tol`` beyond the requirement."""
    out = []
    up, lo, wd = (np.broadcast_to(np.asarray(x, dtype=np.float64), a.shape) for x in (upper, lower, width))
    for p in np.flatnonzero(primary):
        slack = tol * max(1.0, abs(a[p]))
        if np.isfinite(up[p]) and up[p] > a[p]:
            out.append((int(p), "upper", float(up[p]) + slack))
        if np.isfinite(lo[p]) and lo[p] < a[p]:
            out.append((int(p), "lower", float(lo[p]) - slack))
        if np.isfinite(wd[p]) and wd[p] > 0:
            out.append((int(p), "width", float(wd[p]) + slack))
    return out


def _separate(attacker: _Attacker, s: np.ndarray, targets: list, tol: float) -> list[tuple[np.ndarray, float]]:
    """The cuts (g, rhs: g . s >= rhs) of the targets this pattern misses."""
    attacker.set_pattern(s)
    out = []
    cache: dict[tuple[int, float], tuple[float, float, np.ndarray]] = {}

    def side(p: int, sense: float):
        if (p, sense) not in cache:
            cache[(p, sense)] = attacker.solve(p, sense)
        return cache[(p, sense)]

    for p, kind, t in targets:
        miss = tol * max(1.0, abs(t))
        if kind == "upper":
            m, B0, g = side(p, -1.0)  # max x_p^T y = -m <= -B0 + g.s
            if -m < t - miss:
                out.append((g, t + B0))
        elif kind == "lower":
            m, B0, g = side(p, 1.0)  # min x_p^T y = m >= B0 - g.s
            if m > t + miss:
                out.append((g, B0 - t))
        else:
            mu, B0u, gu = side(p, -1.0)
            ml, B0l, gl = side(p, 1.0)
            if -mu - ml < t - miss:  # max - min <= (-B0u + gu.s) - (B0l - gl.s)
                out.append((gu + gl, t + B0u + B0l))
    return out


class _Master:
    """min cost . s over binary s with the cuts so far, below the starting pattern's cost; fixed cells by their bounds.

    The starting pattern enters as a bound on the cost, not as a MIP start: HiGHS 1.16 misjudged a start solution's
    objective after presolve (it took a pattern of cost 23 for one of cost 10 and stopped there)."""

    def __init__(self, cost: np.ndarray, on: np.ndarray, off: np.ndarray, below: float) -> None:
        import highspy

        n = cost.size
        h = _highs()
        lb = on.astype(np.float64)
        ub = np.where(off & ~on, 0.0, 1.0)
        h.addCols(n, cost, lb, ub, 0, np.zeros(n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger))
        h.setOptionValue("mip_rel_gap", 1e-9)
        h.addRow(-h.getInfinity(), below, n, np.arange(n, dtype=np.int32), cost)
        self.h = h
        self.cost = cost

    def add_cut(self, g: np.ndarray, rhs: float) -> None:
        g = np.where(np.abs(g) > 1e-12 * max(1.0, float(np.abs(g).max(initial=0.0))), g, 0.0)
        nz = np.flatnonzero(g).astype(np.int32)
        slack = 1e-9 * max(1.0, abs(rhs))
        self.h.addRow(rhs - slack, self.h.getInfinity(), nz.size, nz, g[nz])

    def solve(self, seconds: float) -> tuple[np.ndarray | None, float, str]:
        """The cheapest pattern meeting the cuts (None with the status when there is none or time ran out)."""
        h = self.h
        h.setOptionValue("time_limit", float(max(seconds, 1e-3)))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":
            return None, float(h.getInfo().mip_dual_bound), status
        x = np.asarray(h.getSolution().col_value) > 0.5
        return x, float(self.cost @ x), status

"""Optimal secondary suppression: the least costly pattern that gives every primary its protection (a HiGHS MIP).

The pattern is a 0/1 choice ``s_j`` per published cell (1: withheld) minimising ``sum_j cost_j s_j`` subject to
every primary's protection as the attacker measures it: the largest value an attacker can give primary p over
non-negative inner cells that reproduce the published cells must reach ``upper_p``, the least must reach down to
``lower_p``, and their difference must be at least ``width_p`` (Fischetti and Salazar-Gonzalez 2001, the model
tau-Argus's optimal method solves; Hundepool et al. 2012, Statistical Disclosure Control, section 4.4).

The attacker's program for a pattern s, over the inner cells y >= 0 (X: inner x published cells)::

    a_j - (a_j - L_j) s_j  <=  x_j^T y  <=  a_j + M s_j      for every published cell j

A published cell (s_j = 0) is an equation; a withheld one keeps only its listing's lower bound L_j (1 where the file
lists non-empty cells only, else 0) and may rise by at most M, twice the largest protection any target asks.  The
real attacker has no such bound: one held to it knows more, so a pattern protecting against it protects against the
real one (the audit then measures it without the bound), and a small M keeps the cuts below strong.

It is solved by cutting planes (Benders' decomposition, as Fischetti and Salazar-Gonzalez do).  A master program
over s holds the cuts found so far; for its solution, one linear program per side of each primary (HiGHS's primal
simplex from the last basis); where one misses its target, its dual values give a linear inequality in s that every
protecting pattern meets and this one does not (LP duality bounds the attacker's optimum by a function linear in s).
Cuts are first gathered at the master's linear relaxation (cheap), then at its 0/1 solutions.  Each master solution
is also repaired into a protecting pattern (its cells at 1/2 or more, the cells the protection-level programs of
:func:`~cellsafe.mechanisms.protect_intervals` withhold, then cells published again where every target stays met):
the cheapest protecting pattern so far is the incumbent, and the master then searches only below its cost less the
gap.  The search ends when the incumbent is within ``gap`` of the master's lower bound (optimal), or when the time
limit runs out: the Gaussian pattern is then returned, with a note giving the best pattern found and the bound.

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
        # primal simplex from the last basis, no presolve (it would drop the basis): a new objective or new bounds
        # then take a few iterations instead of thousands
        h.setOptionValue("presolve", "off")
        h.setOptionValue("simplex_strategy", 4)
        inf = h.getInfinity()
        h.addCols(n_inner, np.zeros(n_inner), np.zeros(n_inner), np.full(n_inner, inf), 0,
                  np.zeros(n_inner + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        A = self.A
        h.addRows(n_pub, values, values, A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
        self.h = h
        self.cost_idx = np.zeros(0, dtype=np.int32)
        self.n_lp = 0

    def set_pattern(self, s: np.ndarray) -> None:
        """The rows' bounds of pattern s (0/1, or fractional: the bounds move in proportion)."""
        s = np.asarray(s, dtype=np.float64)
        lo = self.a - (self.a - self.L) * s
        hi = self.a + self.M * s
        idx = np.arange(self.a.size, dtype=np.int32)
        self.h.changeRowsBounds(idx.size, idx, lo, hi)
        self.s = s

    def solve(self, p: int, sense: float) -> tuple[float, float, np.ndarray]:
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
        if status != "Optimal":  # rarely, primal simplex from the last basis stalls: solve afresh, presolved
            h.clearSolver()
            h.setOptionValue("presolve", "on")
            h.setOptionValue("simplex_strategy", 1)
            h.run()
            h.setOptionValue("presolve", "off")
            h.setOptionValue("simplex_strategy", 4)
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
    gap: float = 0.01,
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
    gap : float, default 0.01
        A protecting pattern within this relative distance of the best lower bound counts as optimal (HiGHS's and
        tau-Argus's MIPs stop at a gap too); 0 asks for a proof of least cost.

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
    targets = _targets(primary, a, upper, lower, width, tol)
    big_m = np.full(n, _raise_bound(targets, a))
    attacker = _Attacker(X, a, L, big_m)
    start_cost = float(c @ start)
    first = _separate(attacker, start, targets, tol)  # the start's own misses are cuts too
    best, best_cost = (start, start_cost) if not first else (None, np.inf)
    master = _Master(c, fixed_on, forced)
    for g, rhs in first:
        master.add_cut(g, rhs)
    cuts = len(first) + _relaxation_cuts(attacker, master, targets, tol, t0 + time_limit / 2)
    allowed = ~forced & ~fixed_on
    bound, it, note, optimal = master.bound, 0, "", False
    s = master.last_relaxation
    while True:
        it += 1
        if s is not None:  # a protecting pattern near the master's solution: the incumbent when cheaper
            h = _repair(attacker, s, targets, tol, c, allowed, fixed_on, min(t0 + time_limit, time.perf_counter() + time_limit / 10),
                        start if not first else None)
            if h is not None and float(c @ h) < best_cost:
                best, best_cost = h, float(c @ h)
        if best is not None and best_cost <= bound * (1 + gap) + 1e-9 * max(1.0, best_cost):
            optimal = True
            break
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            note = f"the time limit of {time_limit:g} s ran out after {it} rounds"
            break
        master.cutoff(best_cost / (1 + gap) if best is not None else np.inf)
        s, status = master.solve(left)
        if s is None:
            if status == "Infeasible" and best is not None:  # nothing below the cutoff: the incumbent is within gap
                bound, optimal = max(bound, best_cost / (1 + gap)), True
            elif status == "Infeasible":
                note = "no pattern the cells allowed to be withheld give meets every target"
            else:
                note = f"the time limit of {time_limit:g} s ran out after {it} rounds"
            break
        bound = max(bound, float(c @ s))
        new = _separate(attacker, s, targets, tol)
        if not new:
            best, best_cost, bound, optimal = s, float(c @ s), float(c @ s), True
            break
        for g, rhs in new:
            master.add_cut(g, rhs)
        cuts += len(new)
    if not optimal:
        found = f"; the best protecting pattern found costs {best_cost:.6g}" if best is not None and best is not start else ""
        note = (f"{note}: the Gaussian pattern is returned (cost {start_cost:.6g}; no protecting pattern costs less than "
                f"{bound:.6g}{found})")
        best, best_cost = start, start_cost
    assert best is not None  # the Gaussian start at least
    return OptimalPattern(best.copy(), optimal, best_cost, bound, start_cost, it, cuts, attacker.n_lp, note)


def _repair(
    attacker: _Attacker, s: np.ndarray, targets: list, tol: float, cost: np.ndarray, allowed: np.ndarray,
    fixed_on: np.ndarray, until: float, start: np.ndarray | None = None,
) -> np.ndarray | None:
    """A protecting pattern near a (fractional) master solution: the cells at 1/2 or more withheld; for each target
    still missed the allowed cells whose equations must give way for the attacker to reach it, least costly first
    (one linear program, :func:`~cellsafe.mechanisms.protect_intervals`); the starting pattern added if that is not
    enough; then the withheld cells the master valued least are offered for publication, costliest first, while
    time remains, and published where every target stays met."""
    from ._intervals import protect_intervals

    frac = np.asarray(s, dtype=np.float64)
    w = fixed_on | ((frac >= 0.5) & allowed)
    for _ in range(3):
        missed = _missed(attacker, w, targets, tol)
        if not missed:
            break
        a = attacker.a
        req = np.zeros(a.size)
        for p, t in missed:
            req[p] = max(req[p], t)
        w, _, _ = protect_intervals(attacker.X, a, w, req, np.array(sorted({p for p, _ in missed})), allowed=allowed | w, cost=cost)
    else:
        if start is None or _missed(attacker, w | start, targets, tol):
            return None
        w = w | start
    if _missed(attacker, w, targets, tol):
        if start is None or _missed(attacker, w | start, targets, tol):
            return None
        w = w | start
    order = np.flatnonzero(w & allowed)
    order = order[np.lexsort((-cost[order], frac[order]))]
    for j in order:
        if time.perf_counter() >= until:
            break
        w[j] = False
        if _missed(attacker, w, targets, tol):
            w[j] = True
    return w


def _missed(attacker: _Attacker, w: np.ndarray, targets: list, tol: float) -> list[tuple[int, float]]:
    """(primary, protection asked) of every target pattern w misses (the protection as protect_intervals takes it)."""
    attacker.set_pattern(w)
    out = []
    for p, kind, t in targets:
        miss = tol * max(1.0, abs(t))
        if kind == "upper" and -attacker.solve(p, -1.0)[0] < t - miss:
            out.append((p, t - attacker.a[p]))
        elif kind == "lower" and attacker.solve(p, 1.0)[0] > t + miss:
            out.append((p, attacker.a[p] - t))
        elif kind == "width" and (-attacker.solve(p, -1.0)[0] - attacker.solve(p, 1.0)[0]) < t - miss:
            out.append((p, t / 2))
    return out


def _raise_bound(targets: list, a: np.ndarray) -> float:
    """How far the MIP's attacker may raise a withheld cell: twice the largest protection any target asks (at least
    1).  The real attacker has no such bound; one held to it knows more, so a pattern protecting against it protects
    against the real one, and a small bound keeps the cuts strong (their coefficients are the bound times a dual)."""
    need = [abs(t - a[p]) if kind != "width" else t for p, kind, t in targets]
    return 2.0 * max(need, default=1.0) if need else 1.0


def _relaxation_cuts(attacker: _Attacker, master: "_Master", targets: list, tol: float, until: float, rounds: int = 100) -> int:
    """Cuts at the master's linear relaxation until it meets every target (the first phase of Benders' method: a
    fractional pattern is cheap to find, and its cuts are valid for every 0/1 pattern); returns how many."""
    n = 0
    for _ in range(rounds):
        if time.perf_counter() >= until:
            break
        s = master.relaxation(until - time.perf_counter())
        if s is None:
            break
        master.last_relaxation = s
        new = _separate(attacker, s, targets, tol)
        if not new:
            break
        for g, rhs in new:
            master.add_cut(g, rhs)
        n += len(new)
    return n


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
    """(cell, side, target) for every finite requirement of a primary (met within ``tol`` of the target)."""
    out = []
    up, lo, wd = (np.broadcast_to(np.asarray(x, dtype=np.float64), a.shape) for x in (upper, lower, width))
    for p in np.flatnonzero(primary):
        if np.isfinite(up[p]) and up[p] > a[p]:
            out.append((int(p), "upper", float(up[p])))
        if np.isfinite(lo[p]) and lo[p] < a[p]:
            out.append((int(p), "lower", float(lo[p])))
        if np.isfinite(wd[p]) and wd[p] > 0:
            out.append((int(p), "width", float(wd[p])))
    return out


def _separate(attacker: _Attacker, s: np.ndarray, targets: list, tol: float) -> list[tuple[np.ndarray, float]]:
    """The cuts (g, rhs: g . s >= rhs) of the targets this pattern misses by more than ``tol``; each cut asks only
    what the check accepts (the target less the tolerance), so a pattern on the target is never cut off."""
    attacker.set_pattern(s)
    out = []
    cache: dict[tuple[int, float], tuple[float, float, np.ndarray]] = {}

    def side(p: int, sense: float) -> tuple[float, float, np.ndarray]:
        if (p, sense) not in cache:
            cache[(p, sense)] = attacker.solve(p, sense)
        return cache[(p, sense)]

    for p, kind, t in targets:
        miss = tol * max(1.0, abs(t))
        if kind == "upper":
            m, B0, g = side(p, -1.0)  # max x_p^T y = -m <= -B0 + g.s
            if -m < t - miss:
                out.append((g, t - miss + B0))
        elif kind == "lower":
            m, B0, g = side(p, 1.0)  # min x_p^T y = m >= B0 - g.s
            if m > t + miss:
                out.append((g, B0 - t - miss))
        else:
            mu, B0u, gu = side(p, -1.0)
            ml, B0l, gl = side(p, 1.0)
            if -mu - ml < t - miss:  # max - min <= (-B0u + gu.s) - (B0l - gl.s)
                out.append((gu + gl, t - miss + B0u + B0l))
    return out


class _Master:
    """min cost . s over binary s with the cuts so far, below a cutoff; fixed cells by their bounds.

    The incumbent enters as a bound on the cost (row 0), not as a MIP start: HiGHS 1.16 misjudged a start solution's
    objective after presolve (it took a pattern of cost 23 for one of cost 10 and stopped there)."""

    def __init__(self, cost: np.ndarray, on: np.ndarray, off: np.ndarray) -> None:
        import highspy

        n = cost.size
        h = _highs()
        lb = on.astype(np.float64)
        ub = np.where(off & ~on, 0.0, 1.0)
        h.addCols(n, cost, lb, ub, 0, np.zeros(n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger))
        h.setOptionValue("mip_rel_gap", 1e-9)
        h.addRow(-h.getInfinity(), h.getInfinity(), n, np.arange(n, dtype=np.int32), cost)  # row 0: the cutoff
        self.h = h
        self.cost = cost
        self.bound = float(cost @ on)
        self.last_relaxation: np.ndarray | None = None

    def cutoff(self, below: float) -> None:
        """Search only patterns costing less than ``below`` (the incumbent's cost, less the gap)."""
        inf = self.h.getInfinity()
        self.h.changeRowBounds(0, -inf, below * (1 - 1e-9) if np.isfinite(below) else inf)

    def add_cut(self, g: np.ndarray, rhs: float) -> None:
        g = np.where(np.abs(g) > 1e-12 * max(1.0, float(np.abs(g).max(initial=0.0))), g, 0.0)
        nz = np.flatnonzero(g).astype(np.int32)
        slack = 1e-9 * max(1.0, abs(rhs))
        self.h.addRow(rhs - slack, self.h.getInfinity(), nz.size, nz, g[nz])

    def relaxation(self, seconds: float) -> np.ndarray | None:
        """The linear relaxation's solution (integrality dropped for the call), None unless solved."""
        import highspy

        h = self.h
        n = self.cost.size
        idx = np.arange(n, dtype=np.int32)
        h.changeColsIntegrality(n, idx, np.full(n, highspy.HighsVarType.kContinuous))
        h.setOptionValue("time_limit", float(max(seconds, 1e-3)))
        h.run()
        ok = h.modelStatusToString(h.getModelStatus()) == "Optimal"
        x = np.clip(np.asarray(h.getSolution().col_value, dtype=np.float64), 0.0, 1.0) if ok else None
        if ok:
            self.bound = max(self.bound, float(h.getInfo().objective_function_value))
        h.changeColsIntegrality(n, idx, np.full(n, highspy.HighsVarType.kInteger))
        return x

    def solve(self, seconds: float) -> tuple[np.ndarray | None, str]:
        """The cheapest pattern meeting the cuts below the cutoff (None with the status when there is none or time
        ran out)."""
        h = self.h
        h.setOptionValue("time_limit", float(max(seconds, 1e-3)))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":
            return None, status
        return np.asarray(h.getSolution().col_value) > 0.5, status

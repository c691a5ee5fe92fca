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

Singletons (``sole``): a contributor alone in a cell knows that cell whether it is published or not, so each primary
must also keep its protection against every contributor alone in cells that may be withheld (its own contributor
excepted), whose programs hold that contributor's cells as equations (:mod:`~cellsafe.mechanisms._optimal_attack`).

It is solved by cutting planes (Benders' decomposition, as Fischetti and Salazar-Gonzalez do).  A master program
over s holds the cuts found so far; for its solution each attacker's programs check each target (HiGHS's primal
simplex from the last basis, most checks settled by earlier solutions without a program); where one misses its
target, its dual values give a linear inequality ``g . s >= rhs`` that every protecting pattern meets and this one
does not.  Cuts are strengthened for 0/1 patterns (the cells every pattern withholds moved to the right-hand side,
each coefficient at most the right-hand side), first gathered at the master's linear relaxation, then at its 0/1
solutions.  Before any of this the targets met with the primaries alone withheld are dropped (withholding more only
widens an interval), and a target missed with every cell withheld means no pattern protects.

Each master solution is also repaired into a protecting pattern (its cells at 1/2 or more; for each target still
missed, the cells whose equations must give way for the attacker to reach it, by one linear program priced by the
master's values; then withheld cells published again, least valued first, where every target stays met): the
cheapest protecting pattern so far is the incumbent, and the master then searches only below its cost less the gap.
The search ends when the incumbent is within ``gap`` of the master's lower bound (optimal), or when the time limit
runs out: the Gaussian pattern is then returned, with a note giving the best pattern found and the bound.

Cost: ``'value'`` (the withheld cells' values: counts or sums, tau-Argus's default), ``'cells'`` (their number), or
any non-negative array over the published cells (e.g. :func:`~cellsafe.published.Publication.aggregate` of a cost
column); ties go to fewer cells (each cell costs 1e-6 of the smallest positive cost more).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._blas import on_one_blas_thread
from ..exceptions import InvalidArgumentError
from ._optimal_attack import LOWER, UPPER, WIDTH, Attacks, Miss, Targets, highs

__all__ = ["optimal_secondary", "OptimalPattern"]

#: Relative tolerance of the protection comparisons (as the audit's).
TOL = 1e-7


@dataclass(frozen=True)
class OptimalPattern:
    """The result of :func:`optimal_secondary`.

    Attributes
    ----------
    suppressed : bool array over the published cells
    optimal : bool
        True when the pattern is proved least costly (within ``gap``).
    cost : float
        The pattern's cost; ``bound`` the best lower bound on any protecting pattern's cost.
    start_cost : float
    iterations, n_cuts, n_lp : int
        Master programs solved, cuts added, attackers' linear programs solved.
    note : str
        Empty when optimal; otherwise why the starting pattern was returned.
    n_targets : int
        Targets left after those met with the primaries alone withheld were dropped.
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
    n_targets: int = 0


@on_one_blas_thread
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
    sole: np.ndarray | None = None,
    apart: bool = False,
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
    sole : int array, optional
        Each cell's single contributor (-1: none or several): every primary is then protected against each
        contributor alone in a cell too (module notes), except its own.
    apart : bool, default False
        Against such a contributor, its cells sharing an inner cell with the protected primary are not known
        (magnitude tables: the dominance rules' protection allows for the intruder's own contribution).
    time_limit : float
        Seconds (wall clock) for the whole search.
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
    on = primary | hidden
    free = ~on & ~forced
    L = np.broadcast_to(np.asarray(listed_lower, dtype=np.float64), (n,)).copy()
    targets = _targets(primary, a, upper, lower, width, tol)
    big_m = np.full(n, _raise_bound(targets, a))
    att = Attacks(X, a, L, big_m, targets, sole=sole, movable=on | free, apart=apart, tol=tol)
    search = _Search(att, c, on, free, t0 + time_limit)
    start_cost = float(c @ start)
    return search.run(start, start_cost, time_limit, gap)


class _Search:
    """The cutting-plane search of one problem (module notes)."""

    def __init__(self, att: Attacks, cost: np.ndarray, on: np.ndarray, free: np.ndarray, deadline: float) -> None:
        self.att = att
        self.c = cost
        self.on = on
        self.free = free
        self.deadline = deadline
        self.master = _Master(cost, on, ~(on | free))
        self.active = np.arange(len(att.targets))

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def cuts(self, misses: list[Miss]) -> int:
        return sum(self.master.add_cut(m.g, m.rhs) for m in misses if m.g is not None)

    def run(self, start: np.ndarray, start_cost: float, time_limit: float, gap: float) -> OptimalPattern:
        att, master = self.att, self.master
        # presolve: a target met with the primaries alone withheld is met by every pattern
        least = att.evaluate(self.on.astype(np.float64))
        self.active = np.unique([m.target for m in least]).astype(np.int64)
        self.cuts(least)
        note, optimal = "", False
        best: np.ndarray | None = None
        best_cost = np.inf
        it = 0
        if self.active.size and att.evaluate((self.on | self.free).astype(np.float64), self.active, every=False):
            note = "no pattern the cells allowed to be withheld give meets every target"
        else:
            first = att.evaluate(start.astype(np.float64), self.active)
            self.cuts(first)
            if not first:
                best, best_cost = start.copy(), start_cost
            s = self._relaxation(best_cost, gap)
            bound = master.bound
            while True:
                it += 1
                if s is not None and self.left() > 0:
                    h = self.repair(s)
                    if h is not None and float(self.c @ h) < best_cost:
                        best, best_cost = h, float(self.c @ h)
                if best is not None and best_cost <= bound * (1 + gap) + 1e-9 * max(1.0, best_cost):
                    optimal = True
                    break
                if self.left() <= 0:
                    note = f"the time limit of {time_limit:g} s ran out after {it} rounds"
                    break
                master.cutoff(best_cost / (1 + gap) if best is not None else np.inf)
                s, status, dual = master.solve(self.left(), gap / 2)
                if s is None:
                    if status == "Infeasible" and best is not None:  # nothing below the cutoff: within gap
                        bound, optimal = max(bound, best_cost / (1 + gap)), True
                    elif status == "Infeasible":
                        note = "no pattern the cells allowed to be withheld give meets every target"
                    else:
                        note = f"the time limit of {time_limit:g} s ran out after {it} rounds"
                    break
                bound = max(bound, min(dual, best_cost / (1 + gap)))
                new = att.evaluate(s.astype(np.float64), self.active)
                if not new:  # the master's pattern protects: least costly within the master's gap
                    best, best_cost = s, float(self.c @ s)
                    bound = max(bound, min(dual, best_cost))
                    optimal = True
                    break
                self.cuts(new)
            master.bound = bound
        bound = master.bound
        if optimal and best is not None:
            best = self.publish_again(best, np.zeros(best.size), final=True)
            best_cost = float(self.c @ best)
            return OptimalPattern(best.copy(), True, best_cost, bound, start_cost, it, master.n_cuts, att.n_lp, "",
                                  int(self.active.size))
        found = f"; the best protecting pattern found costs {best_cost:.6g}" if best is not None and best is not start else ""
        note = (f"{note}: the Gaussian pattern is returned (cost {start_cost:.6g}; no protecting pattern costs less than "
                f"{bound:.6g}{found})")
        return OptimalPattern(start.copy(), False, start_cost, bound, start_cost, it, master.n_cuts, att.n_lp, note,
                              int(self.active.size))

    def _relaxation(self, best_cost: float, gap: float, rounds: int = 200) -> np.ndarray | None:
        """Cuts at the master's linear relaxation until it meets every target (the first phase of Benders' method: a
        fractional pattern is cheap to find, and its cuts are valid for every 0/1 pattern); its last solution."""
        s = None
        budget = self.deadline - 0.5 * self.left()
        for _ in range(rounds):
            if time.perf_counter() >= budget:
                break
            x = self.master.relaxation(budget - time.perf_counter())
            if x is None:
                break
            s = x
            if best_cost <= self.master.bound * (1 + gap):
                break
            if not self.cuts(self.att.evaluate(s, self.active)):
                break
        return s

    def repair(self, s: np.ndarray) -> np.ndarray | None:
        """A protecting pattern near a (fractional) master solution (module notes), or None."""
        att = self.att
        frac = np.clip(np.asarray(s, dtype=np.float64), 0.0, 1.0)
        w = self.on | ((frac >= 0.5) & self.free)
        unit = self.c * (1.0 + 1e-3 - frac)  # what the master withholds gives way at almost no cost
        for _ in range(4):
            misses = att.evaluate(w.astype(np.float64), self.active)
            self.cuts(misses)
            if not misses:
                return self.publish_again(w, frac)
            for m in misses:
                for _ in range(8):
                    again = att.evaluate(w.astype(np.float64), [m.target], every=False)
                    self.cuts(again)
                    if not again:
                        break
                    extra = att.give_way(m.target, again[0].attacker, w, self.free, unit)
                    if extra is None or not extra.any():
                        return None
                    w = w | extra
                else:
                    return None
        return None

    def publish_again(self, w: np.ndarray, frac: np.ndarray, final: bool = False) -> np.ndarray:
        """Withheld cells published again while every target stays met: the master's least valued first, the
        costliest first among equals (all of them when ``final``, else while time remains)."""
        att = self.att
        w = w.copy()
        order = np.flatnonzero(w & self.free)
        order = order[np.lexsort((-self.c[order], frac[order]))]
        att.set_pattern(w.astype(np.float64))
        valid = att.valid(w.astype(np.float64))
        for j in order:
            if not final and self.left() <= 0:
                break
            w[j] = False
            k = att.k
            lost = valid[:k] & att.moved[:k, j]
            keep = valid[:k] & ~lost
            touched = np.flatnonzero((att.R[:, :k] & lost).any(axis=1) | (att.targets.kind == WIDTH))
            touched = np.intersect1d(touched, self.active)
            epoch = att.epoch
            misses = att.evaluate(w.astype(np.float64), touched, every=False, valid=keep)
            self.cuts(misses)
            if misses:
                w[j] = True
                att.set_pattern(w.astype(np.float64))
            if epoch != att.epoch:
                valid = att.valid(w.astype(np.float64))
            else:  # the new witnesses are solutions at a pattern within w, so for w too
                valid = np.r_[valid[:k] if misses else keep, np.ones(att.k - k, dtype=bool)]
        return w


def _raise_bound(targets: Targets, a: np.ndarray) -> float:
    """How far the MIP's attacker may raise a withheld cell: twice the largest protection any target asks (at least
    1).  The real attacker has no such bound; one held to it knows more, so a pattern protecting against it protects
    against the real one, and a small bound keeps the cuts strong (their coefficients are the bound times a dual)."""
    if not len(targets):
        return 1.0
    need = np.where(targets.kind == WIDTH, targets.value, np.abs(targets.value - a[targets.cell]))
    return max(2.0 * float(need.max()), 1.0)


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


def _targets(primary: np.ndarray, a: np.ndarray, upper: Any, lower: Any, width: Any, tol: float) -> Targets:
    """Every finite requirement of a primary as a target (met within ``tol`` of it); a width that the upper and
    lower targets already give (the interval holds the value) is left out."""
    up, lo, wd = (np.broadcast_to(np.asarray(x, dtype=np.float64), a.shape) for x in (upper, lower, width))
    rows: list[tuple[int, int, float]] = []
    for p in np.flatnonzero(primary):
        has_up = bool(np.isfinite(up[p]) and up[p] > a[p])
        has_lo = bool(np.isfinite(lo[p]) and lo[p] < a[p])
        if has_up:
            rows.append((int(p), UPPER, float(up[p])))
        if has_lo:
            rows.append((int(p), LOWER, float(lo[p])))
        given = (up[p] - a[p] if has_up else 0.0) + (a[p] - lo[p] if has_lo else 0.0)
        if np.isfinite(wd[p]) and wd[p] > 0 and wd[p] > given + tol * max(1.0, abs(wd[p])):
            rows.append((int(p), WIDTH, float(wd[p])))
    cells, kinds, vals = (np.asarray(x) for x in zip(*rows)) if rows else (np.zeros(0), np.zeros(0), np.zeros(0))
    return Targets(cells.astype(np.int64), kinds.astype(np.int64), vals.astype(np.float64))


class _Master:
    """min cost . s over binary s with the cuts so far, below a cutoff; fixed cells by their bounds.

    Cuts are strengthened for 0/1 patterns: terms of cells every pattern withholds move to the right-hand side, those
    of cells never withheld go, and each coefficient is at most the right-hand side (a cell withheld meets the cut on
    its own then).  The incumbent enters as a bound on the cost (row 0), not as a MIP start: HiGHS 1.16 misjudged a
    start solution's objective after presolve (it took a pattern of cost 23 for one of cost 10 and stopped there)."""

    def __init__(self, cost: np.ndarray, on: np.ndarray, off: np.ndarray) -> None:
        import highspy

        n = cost.size
        h = highs()
        lb = on.astype(np.float64)
        ub = np.where(off & ~on, 0.0, 1.0)
        h.addCols(n, cost, lb, ub, 0, np.zeros(n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger))
        h.addRow(-h.getInfinity(), h.getInfinity(), n, np.arange(n, dtype=np.int32), cost)  # row 0: the cutoff
        self.h = h
        self.cost = cost
        self.on = on
        self.free = ~on & ~off
        self.bound = float(cost @ on)
        self.n_cuts = 0
        self._seen: set[bytes] = set()

    def cutoff(self, below: float) -> None:
        """Search only patterns costing less than ``below`` (the incumbent's cost, less the gap)."""
        inf = self.h.getInfinity()
        self.h.changeRowBounds(0, -inf, below * (1 - 1e-9) if np.isfinite(below) else inf)

    def add_cut(self, g: np.ndarray, rhs: float) -> bool:
        """Add ``g . s >= rhs`` strengthened (class notes); False when it adds nothing new."""
        g = np.maximum(np.asarray(g, dtype=np.float64), 0.0)
        rhs = rhs - float(g[self.on].sum())
        if rhs <= 1e-9:
            return False
        g = np.where(self.free, np.minimum(g, rhs), 0.0) / rhs  # normalised: right-hand side 1
        g[g < 1e-9] = 0.0
        nz = np.flatnonzero(g).astype(np.int32)
        key = nz.tobytes() + np.round(g[nz], 6).tobytes()
        if key in self._seen:
            return False
        self._seen.add(key)
        self.h.addRow(1.0 - 1e-9, self.h.getInfinity(), nz.size, nz, g[nz])
        self.n_cuts += 1
        return True

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

    def solve(self, seconds: float, gap: float) -> tuple[np.ndarray | None, str, float]:
        """The cheapest pattern meeting the cuts below the cutoff, within ``gap`` of the MIP's own bound, and that
        bound (None with the status when there is none or time ran out)."""
        h = self.h
        h.setOptionValue("time_limit", float(max(seconds, 1e-3)))
        h.setOptionValue("mip_rel_gap", float(gap))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":
            return None, status, -np.inf
        info = h.getInfo()
        return np.asarray(h.getSolution().col_value) > 0.5, status, float(info.mip_dual_bound)

"""The intruder's linear system: everything a release with withheld cells lets its reader compute.

A reader of a release knows every published value, the public categories and so the inner cells
(the rows of X) that may be non-empty, that inner cells are non-negative, and what the listing
says: with a listing of non-empty cells only (``list='nonzero'``), every listed cell is at least
1 and every unlisted one is 0.  A contributor alone in a withheld cell also knows that cell (its
*own* cells).  The set of inner cells consistent with all this is the polytope::

    y >= 0,   x_k^T y = z_k  (published and known cells k),   x_j^T y >= f_j  (listed withheld cells j)

and the interval of any combination ``c^T y`` of inner cells (a withheld cell, a sum of several) is
its minimum and maximum over it (Hundepool et al. 2012, Statistical Disclosure Control, section
4.3.1).  :class:`Intruder` holds one such system and answers many questions about it, sharing the
work:

- *presolve*: inner cells under a known cell of value 0 are 0 (non-negativity) and leave the
  system;
- *settled bounds*: ``c^T y`` is at least its floor (0, or the listing's lower bound) and at most
  its cap (the smallest known cell containing it).  Every solution of every program is kept as a
  witness; a bound some witness reaches is exact without a program of its own;
- *joint programs first*: one program pushes every open question at once (the sum of all cells to
  minimise, or to raise towards their targets, weighted by the targets), which settles most of
  them; for targets, again on the questions it left open while that settles more; each question
  still open then gets its own program.  Every program is solved on the one model from the last
  basis: a program on a model of its own starts cold, and a cold start on 13,482 inner cells under
  1,667 margins takes 4-8 s where a warm one takes 6 ms;
- *targets*: when only a verdict is asked (does the upper bound reach t?), a witness at or past t
  answers it; the exact bound is computed only for the cells that fall short.

Programs are solved by HiGHS (``highspy``, the solver scipy's ``linprog`` runs) on one model per
system: a new question changes the objective only, and the primal simplex starts from the last
optimal basis (about a dozen iterations instead of a thousand on a flights-like publication; 0.003 s
instead of 0.04 s a program).  A witness is a solution of the same system within the solver's
feasibility tolerance (1e-7 relative), and comparisons allow ``tol * max(1, |value|)``, as
everywhere in the suppression code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError

__all__ = ["Intruder", "shortfalls", "touching"]

#: Most witnesses kept (the most recent); each is a vector over the system's inner cells.
_MAX_WITNESSES = 256

#: Simplex iterations an attacker's program takes from the last basis before it is solved from scratch (dual,
#: then primal simplex, within ``COLD_ITERATIONS`` each): :func:`run_within_limits`.
WARM_ITERATIONS = 20_000
COLD_ITERATIONS = 50_000


class Intruder:
    """The linear system of one reader of a release (module notes).

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
    values : array over the published cells
        The true values; the reader uses those of ``known`` cells only.
    known : bool array over the published cells
        The cells whose value the reader knows (published, and a contributor's own).
    floor : float array over the published cells, optional
        The lower bound the listing gives each cell (1 for listed cells of a non-empty listing);
        applied to the cells not known.
    rows : bool array over the inner cells, optional
        The inner cells that may be non-empty (default: every row of X).
    upper_bound : float, optional
        A bound on every inner cell the reader also knows.
    free, fixed : optional
        A *restricted* system: only the inner cells ``free`` (bool over the rows of X) move, the
        others stay at ``fixed`` (the true inner values).  Every solution is still a solution of
        the whole system (the fixed cells meet every equation as they are), so a restricted system
        proves what a value *can* reach, and its bounds lie inside the whole system's.  Programs on
        the inner cells of withheld cells alone stay small where the whole system's take minutes
        (45,870 inner cells of all 2-way margins of six variables: 1,185 touch a withheld cell).
    """

    def __init__(
        self,
        X: Any,
        values: np.ndarray,
        known: np.ndarray,
        *,
        floor: np.ndarray | None = None,
        rows: np.ndarray | None = None,
        upper_bound: float | None = None,
        free: np.ndarray | None = None,
        fixed: np.ndarray | None = None,
    ) -> None:
        Xc = sp.csc_matrix(X, dtype=np.float64)
        self.n_inner, self.n_cells = Xc.shape
        values = np.asarray(values, dtype=np.float64)
        known = np.asarray(known, dtype=bool)
        keep = np.ones(self.n_inner, dtype=bool) if rows is None else np.asarray(rows, dtype=bool).copy()
        zero = np.flatnonzero(known & (np.abs(values) == 0))
        if zero.size:
            keep &= ~(np.asarray(Xc[:, zero].sum(axis=1)).reshape(-1) > 0)
        # the fixed part of every cell (restricted systems): what the cells outside ``free`` hold
        self._base = np.zeros(self.n_inner)
        self.restricted = free is not None
        if free is not None:
            if fixed is None:
                raise ValueError("a restricted system needs the fixed inner values")
            free = np.asarray(free, dtype=bool)
            self._base = np.where(free | ~keep, 0.0, np.asarray(fixed, dtype=np.float64))
            keep &= free
        fixed_part = np.asarray(Xc.T @ self._base).reshape(-1)
        self.rows = np.flatnonzero(keep)
        Xr = Xc[self.rows].tocsc()
        self._X = Xr
        self._fixed_part = fixed_part
        eq = np.flatnonzero(known & (np.abs(values) > 0))
        eq = eq[np.diff(Xr.indptr)[eq] > 0]  # an equation without a moving cell holds as it is
        self.known = known
        A = Xr[:, eq].T.tocsr()
        self._eq = eq
        self._A_eq = A
        self._b_eq = values[eq] - fixed_part[eq]
        floor = np.zeros(self.n_cells) if floor is None else np.asarray(floor, dtype=np.float64)
        self.floor = np.where(known, values, np.maximum(floor, fixed_part))
        lb = np.flatnonzero(~known & (floor - fixed_part > 0) & (np.diff(Xr.indptr) > 0))
        self._A_ub = (-Xr[:, lb].T).tocsr() if lb.size else None
        self._b_ub = -(floor[lb] - fixed_part[lb]) if lb.size else None
        # caps: the smallest known cell that contains a column (by the cells' overlaps with it)
        self._cap_cells = eq
        self.witnesses: list[np.ndarray] = []
        self.n_lp = 0
        self._highs: Any = None
        self._freed = np.zeros(0, dtype=np.int32)  # equations freed for now (:meth:`relaxed`)
        # witnesses of other relaxations (:meth:`relaxed`), each with the equations it misses
        self._elsewhere: list[tuple[np.ndarray, np.ndarray]] = []
        self.upper_bound = np.inf if upper_bound is None else float(upper_bound)

    # ------------------------------------------------------------------ columns
    def columns(self, cells: Any) -> "Columns":
        """X's columns ``cells`` (positions) on the system's rows, with their fixed parts, as objectives."""
        cells = np.asarray(cells, dtype=np.int64)
        return Columns(self._X[:, cells].tocsc(), self._fixed_part[cells])

    def restrict(self, C: Any) -> "Columns":
        """Columns over X's inner cells (any 0/1 combinations, e.g. unions of cells) on the system's rows."""
        C = sp.csc_matrix(C, dtype=np.float64)
        return Columns(C[self.rows].tocsc(), np.asarray(C.T @ self._base).reshape(-1))

    def caps(self, cols: "Columns") -> np.ndarray:
        """Upper bounds of each column's value: the least value of a known cell holding it (inf: none)."""
        C = cols.C
        if not self._eq.size or not C.shape[1]:
            return np.where(np.asarray(C.sum(axis=0)).reshape(-1) > 0, np.inf, cols.offset)
        overlap = (self._A_eq @ C).tocsc()
        size = np.asarray(C.sum(axis=0)).reshape(-1)
        cap = np.full(C.shape[1], np.inf)
        for j in range(C.shape[1]):  # one column's containing cells (few per column)
            rows = overlap.indices[overlap.indptr[j] : overlap.indptr[j + 1]]
            hits = rows[overlap.data[overlap.indptr[j] : overlap.indptr[j + 1]] >= size[j] - 0.5]
            if hits.size:
                cap[j] = float(self._b_eq[hits].min())
        return np.where(size > 0, cap, 0.0) + cols.offset

    def floors(self, cols: "Columns", cells: np.ndarray | None = None) -> np.ndarray:
        """Lower bounds of each column's value known without a program: its fixed part, or the listing's bound of a cell."""
        out = cols.offset.copy()
        if cells is not None:
            out = np.maximum(out, np.where(self.known[cells], -np.inf, self.floor[cells]))
        return out

    # ------------------------------------------------------------------ programs
    def _model(self) -> Any:
        """A HiGHS model of the system (rows freed by :meth:`relaxed` left free)."""
        n = self.rows.size
        A = self._A_eq
        lower = self._b_eq.copy()
        upper = self._b_eq.copy()
        lower[self._freed] = -np.inf
        upper[self._freed] = np.inf
        if self._A_ub is not None and self._b_ub is not None:  # the listing's floors: -x_j^T y <= -f_j
            A = sp.vstack([A, -self._A_ub], format="csr")
            lower = np.concatenate([lower, -self._b_ub])
            upper = np.concatenate([upper, np.full(self._b_ub.shape[0], np.inf)])
        return _highs_model(sp.csc_matrix(A), lower, upper, np.zeros(n), np.full(n, self.upper_bound))

    def _solve(self, cost: np.ndarray) -> tuple[int, float]:
        """Minimise ``cost`` over the system; keeps the solution as a witness."""
        if self._highs is None:
            self._highs = self._model()
        status, fun, x = _highs_solve(self._highs, cost)
        self.n_lp += 1
        if status != 0 or x is None:
            return status, fun
        self.witnesses.append(np.maximum(x[: self.rows.size], 0.0))
        if len(self.witnesses) > _MAX_WITNESSES:
            self.witnesses.pop(0)
        return 0, fun

    def _pool(self, cols: "Columns", newest: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The least and the greatest value of each column over the witnesses (inf / -inf without any);
        ``newest``: over the last one only (the others were pooled before)."""
        if not self.witnesses:
            return np.full(cols.C.shape[1], np.inf), np.full(cols.C.shape[1], -np.inf)
        if newest:
            v = np.asarray(cols.C.T @ self.witnesses[-1]).reshape(-1) + cols.offset
            return v, v
        W = np.column_stack(self.witnesses)
        V = np.asarray(cols.C.T @ W) + cols.offset[:, None]
        return V.min(axis=1), V.max(axis=1)

    def bounds(self, cols: "Columns", *, cells: np.ndarray | None = None, tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
        """The exact least and greatest value of each column (:meth:`columns`) over the system.

        ``cells`` (their positions, when the columns are published cells) gives them the listing's floors.
        """
        C, off = cols.C, cols.offset
        k = C.shape[1]
        lo_known = self.floors(cols, cells)
        hi_known = self.caps(cols)
        lower = np.full(k, np.nan)
        upper = np.full(k, np.nan)
        if k == 0:
            return lower, upper
        scale = np.maximum(1.0, np.abs(hi_known[np.isfinite(hi_known)]).max(initial=1.0))

        def settle(newest: bool = False) -> None:  # newest: after a program, its solution is the only new one
            lo, hi = self._pool(cols, newest)
            _settle(lo, hi)

        def _settle(lo: np.ndarray, hi: np.ndarray) -> None:
            slack = tol * np.maximum(1.0, np.abs(lo_known))
            done = np.isnan(lower) & (lo <= lo_known + slack)
            lower[done] = lo_known[done]
            capped = np.isfinite(hi_known)
            slack = tol * np.maximum(1.0, np.abs(np.where(capped, hi_known, 0.0)))
            done = np.isnan(upper) & capped & (hi >= np.where(capped, hi_known, np.inf) - slack)
            upper[done] = hi_known[done]

        settle()
        for side in (1.0, -1.0):  # one joint program per side for what the witnesses leave open
            target = lower if side > 0 else upper
            open_ = np.flatnonzero(np.isnan(target))
            if open_.size > 1:
                w = 1.0 / np.maximum(1.0, np.where(np.isfinite(hi_known[open_]), hi_known[open_], scale))
                status, _ = self._solve(side * np.asarray(C[:, open_] @ w).reshape(-1))
                if status == 0:
                    settle(newest=True)
        for side, target in ((1.0, lower), (-1.0, upper)):
            for j in np.flatnonzero(np.isnan(target)):
                if not np.isnan(target[j]):
                    continue
                status, fun = self._solve(side * C[:, j].toarray().reshape(-1))
                target[j] = -np.inf * side if status == 3 else side * fun + off[j]
                if status == 0:
                    settle(newest=True)
        return lower, upper

    def reach(
        self, cols: "Columns", up: np.ndarray, down: np.ndarray, *, tol: float = 1e-7
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Whether each column's value can reach ``up`` (at or above) and ``down`` (at or below).

        ``-inf`` in ``up`` / ``inf`` in ``down``: nothing asked on that side.  Returns ``(met_down,
        met_up, least, greatest)``: the verdicts and the least / greatest value found: exact where a
        target is missed (its own program), else a witness's value at or past the target.
        """
        up = np.asarray(up, dtype=np.float64)
        down = np.asarray(down, dtype=np.float64)
        C, off = cols.C, cols.offset
        k = C.shape[1]
        least = np.full(k, np.inf)
        greatest = np.full(k, -np.inf)
        s_up = tol * np.maximum(1.0, np.abs(np.where(np.isfinite(up), up, 0.0)))
        s_dn = tol * np.maximum(1.0, np.abs(np.where(np.isfinite(down), down, 0.0)))

        def pool(newest: bool = False) -> None:  # newest: as in bounds
            lo, hi = self._pool(cols, newest)
            np.minimum(least, lo, out=least)
            np.maximum(greatest, hi, out=greatest)

        def verdicts() -> tuple[np.ndarray, np.ndarray]:
            return ~np.isfinite(down) | (least <= down + s_dn), ~np.isfinite(up) | (greatest >= up - s_up)

        pool()
        met_dn, met_up = verdicts()
        for side in (1.0, -1.0):
            t = up if side > 0 else down
            last = -1
            while True:  # joint programs while they settle cells: the cells that compete for slack take turns
                met = met_up if side > 0 else met_dn
                open_ = np.flatnonzero(~met)
                if open_.size <= 1 or open_.size == last:
                    break
                last = open_.size
                # one y that takes the open cells towards their targets together, from the last basis
                w = 1.0 / np.maximum(1.0, np.abs(t[open_]))
                status, _ = self._solve(-side * np.asarray(C[:, open_] @ w).reshape(-1))
                if status != 0:
                    break  # unbounded: each cell on its own below
                pool(newest=True)
                met_dn, met_up = verdicts()
        for side in (1.0, -1.0):
            for j in range(k):
                met = met_up if side > 0 else met_dn
                if met[j]:
                    continue
                status, fun = self._solve(-side * C[:, j].toarray().reshape(-1))
                value = side * np.inf if status == 3 else -side * fun + off[j]
                if status == 0:
                    pool(newest=True)
                if side > 0:
                    greatest[j] = value  # the exact bound (no witness can pass it)
                else:
                    least[j] = value
                met_dn, met_up = verdicts()  # with the exact bound (an unbounded side has no solution to pool)
        return met_dn, met_up, least, greatest

    def relaxed(self, cells: np.ndarray) -> "_Relaxed":
        """A context in which the reader does not know ``cells`` (known cells of value > 0).

        The model's rows of those cells are freed for the duration and restored after; witnesses
        found meanwhile are dropped with it (they need not meet those cells).
        """
        return _Relaxed(self, np.asarray(cells, dtype=np.int64))


class Columns:
    """Objective columns on an intruder's rows, and the fixed part of each (restricted systems)."""

    def __init__(self, C: sp.csc_matrix, offset: np.ndarray) -> None:
        self.C = C
        self.offset = np.asarray(offset, dtype=np.float64)

    @property
    def shape(self) -> tuple[int, int]:
        return self.C.shape

    def __getitem__(self, idx: Any) -> "Columns":
        _, j = idx
        return Columns(self.C[:, j].tocsc(), self.offset[j])


class _Relaxed:
    def __init__(self, intruder: Intruder, cells: np.ndarray) -> None:
        self.intruder = intruder
        pos = np.searchsorted(intruder._eq, cells)
        ok = pos < intruder._eq.size
        ok[ok] = intruder._eq[pos[ok]] == cells[ok]
        # a known cell without an equation here is empty (its inner cells left the system: it cannot be
        # freed) or has no moving inner cell (freeing it changes nothing)
        if np.any(intruder.known[cells] & ~ok & (intruder.floor[cells] == 0)):
            raise ValueError("an empty known cell cannot be freed")
        self.rows = pos[ok].astype(np.int32)

    def __enter__(self) -> Intruder:
        import highspy

        it = self.intruder
        if it._highs is None:
            it._highs = it._model()
        self._saved = list(it.witnesses)
        self._was_freed = it._freed
        it._freed = np.union1d(it._freed, self.rows).astype(np.int32)
        # solutions found under other relaxations serve here when every equation they miss is freed here
        if it._elsewhere:
            good = _met_when_freed(it._elsewhere, it._freed, it._b_eq.size)
            it.witnesses = (it.witnesses + good)[-_MAX_WITNESSES:]
        self._n_saved = len(it.witnesses)
        if self.rows.size:
            inf = highspy.kHighsInf
            it._highs.changeRowsBounds(self.rows.size, self.rows, np.full(self.rows.size, -inf), np.full(self.rows.size, inf))
        return it

    def __exit__(self, *exc: Any) -> None:
        it = self.intruder
        it._freed = self._was_freed
        found = it.witnesses[self._n_saved :] if len(it.witnesses) > self._n_saved else []
        if found:  # each with the equations it misses (it meets the listing's floors, held everywhere)
            W = np.column_stack(found)
            gap = np.abs(it._A_eq @ W - it._b_eq[:, None]) > 1e-9 * np.maximum(1.0, np.abs(it._b_eq))[:, None]
            it._elsewhere = (it._elsewhere + [(w, np.flatnonzero(gap[:, i])) for i, w in enumerate(found)])[-_MAX_WITNESSES:]
        if self.rows.size:
            b = it._b_eq[self.rows]
            it._highs.changeRowsBounds(self.rows.size, self.rows, b, b)
        it.witnesses = self._saved


def _met_when_freed(found: list[tuple[np.ndarray, np.ndarray]], freed: np.ndarray, n_rows: int) -> list[np.ndarray]:
    """The solutions of ``found`` (each with the equations it misses) that miss only ``freed`` equations, in order."""
    is_freed = np.zeros(n_rows, dtype=bool)
    is_freed[freed] = True
    lengths = np.fromiter((missed.size for _, missed in found), dtype=np.int64, count=len(found))
    missed = np.concatenate([m for _, m in found]).astype(np.int64, copy=False)
    owner = np.repeat(np.arange(len(found)), lengths)
    unmet = np.bincount(owner[~is_freed[missed]], minlength=len(found))
    return [found[i][0] for i in np.flatnonzero(unmet == 0).tolist()]


def _highs_model(A: sp.csc_matrix, lower: np.ndarray, upper: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray) -> Any:
    """A HiGHS solver holding ``lower <= A x <= upper``, ``col_lower <= x <= col_upper`` (no objective yet)."""
    import highspy

    # the bare solver: the Python wrapper's log callback prints a banner on standard output (and so
    # into a command's --json); the first solve by the dual simplex, later ones (a new objective) by
    # the primal simplex from the last basis (_highs_solve)
    h = highspy._Highs()  # type: ignore[attr-defined]
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")  # its search for dependent equations costs more than it saves here
    lp = highspy.HighsLp()
    lp.num_col_ = A.shape[1]
    lp.num_row_ = A.shape[0]
    lp.col_cost_ = np.zeros(A.shape[1])
    lp.col_lower_ = np.asarray(col_lower, dtype=np.float64)
    lp.col_upper_ = np.where(np.isfinite(col_upper), col_upper, highspy.kHighsInf)
    lp.col_lower_ = np.where(np.isfinite(lp.col_lower_), lp.col_lower_, -highspy.kHighsInf)
    lp.row_lower_ = np.where(np.isfinite(lower), lower, -highspy.kHighsInf)
    lp.row_upper_ = np.where(np.isfinite(upper), upper, highspy.kHighsInf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(np.float64)
    h.passModel(lp)
    return h


def run_within_limits(h: Any, done: tuple[Any, ...], warm_strategy: int | None, warm: int, cold: int) -> Any:
    """Run HiGHS model ``h`` from its last basis within ``warm`` simplex iterations (``warm_strategy``, None: as set),
    then from scratch by the dual and then the primal simplex within ``cold`` each, until a status of ``done``;
    the last status.

    From a warm basis HiGHS's primal clean-up can crawl (on all 2-way margins of six variables from 1e6 records
    one program ran for over 14 minutes at 2.3 ms an iteration where it solves from scratch in 1.1 s); a
    numerical failure from the last basis is solved from scratch too.
    """
    status = None
    for restart, strategy, limit in ((False, warm_strategy, warm), (True, 1, cold), (True, 4, cold)):
        if restart:
            h.clearSolver()
        if strategy is not None:
            h.setOptionValue("simplex_strategy", strategy)
        h.setOptionValue("simplex_iteration_limit", int(limit))
        h.run()
        status = h.getModelStatus()
        if status in done:
            break
    return status


def _highs_solve(h: Any, cost: np.ndarray) -> tuple[int, float, np.ndarray | None]:
    """Minimise ``cost`` on model ``h``: (0, optimum, x), (3, -inf, None) when unbounded below.

    Within ``WARM_ITERATIONS`` from the last basis, then from scratch (:func:`run_within_limits`).
    """
    import highspy

    n = h.getNumCol()
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(cost, dtype=np.float64))
    done = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kUnbounded,
            highspy.HighsModelStatus.kUnboundedOrInfeasible, highspy.HighsModelStatus.kInfeasible)
    status = run_within_limits(h, done, None, WARM_ITERATIONS, COLD_ITERATIONS)
    h.setOptionValue("simplex_strategy", 4)
    if status == highspy.HighsModelStatus.kOptimal:
        return 0, float(h.getInfo().objective_function_value), np.asarray(h.getSolution().col_value)
    if status in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
        # every system here holds the true cells, so it is feasible: the objective is unbounded
        return 3, -np.inf, None
    if status == highspy.HighsModelStatus.kInfeasible:
        raise DataError("the published values admit no non-negative inner cells; is this release additive?")
    raise DataError(f"a linear program of the attacker did not solve (HiGHS: {status.name}).")


def touching(Xc: sp.csc_matrix, cells: np.ndarray) -> np.ndarray:
    """The inner cells (rows) that count in any of ``cells`` (bool over the published cells)."""
    cells = np.flatnonzero(cells)
    if not cells.size:
        return np.zeros(Xc.shape[0], dtype=bool)
    return np.asarray(Xc[:, cells].sum(axis=1)).reshape(-1) > 0


def shortfalls(
    intruder: Intruder,
    cells: np.ndarray,
    values: np.ndarray,
    up_t: np.ndarray,
    down_t: np.ndarray,
    width: np.ndarray,
    floor: np.ndarray,
    tol: float,
    either: np.ndarray | None = None,
) -> list[tuple[int, bool, float]]:
    """The (cell, upper side?, target) of every requirement ``intruder`` does not meet, in the cells' order.

    A cell marked ``either`` needs one side only (a positive width); when neither is met the upper
    side is asked.
    """
    if not cells.size:
        return []
    C = intruder.columns(cells)
    met_dn, met_up, _, _ = intruder.reach(C, up_t[cells], down_t[cells], tol=tol)
    if either is not None:
        one = either[cells]
        met_up = np.where(one, met_up | met_dn, met_up)
        met_dn = np.where(one, True, met_dn)
    out: list[tuple[int, bool, float]] = []
    wide = np.flatnonzero((width[cells] > 0) & met_dn & met_up)
    extra: dict[int, tuple[bool, float]] = {}  # by position in cells
    if wide.size:
        lo, hi = intruder.bounds(C[:, wide], cells=cells[wide])
        for i, L, U in zip(wide.tolist(), lo, hi):
            p = int(cells[i])
            w = width[p] + tol * max(1.0, abs(values[p]))
            if U - L >= w:
                continue
            # wider downwards where the floor allows, else upwards
            extra[i] = (False, U - w) if U - w >= floor[p] else (True, L + w)
    for i, p in enumerate(cells.tolist()):
        if not met_up[i]:
            out.append((int(p), True, float(up_t[p])))
        if not met_dn[i]:
            out.append((int(p), False, float(down_t[p])))
        if i in extra:
            out.append((int(p), *extra[i]))
    return out

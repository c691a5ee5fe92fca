"""The attacker's interval of a withheld cell, and further suppressions until every interval is wide enough.

An attacker who knows every published cell and that the inner cells are non-negative bounds a
withheld cell j by two linear programs over the inner cells y >= 0 with ``X_P^T y = z_P`` (P the
published cells): the minimum and the maximum of ``x_j^T y`` (Hundepool et al. 2012, Statistical
Disclosure Control, section 4.3.1); a listing of non-empty cells adds ``x_j^T y >= 1`` for every
listed withheld cell.  :func:`cell_intervals` computes them with the shared work of
:class:`~cellsafe.mechanisms._intruder.Intruder`; it is the core of
:func:`cellsafe.metrics.audit_suppression` and of :func:`protect_intervals` alike, so what the
suppression promises is what the audit measures.

Protection levels.  A sensitive cell needs the attacker's upper bound to reach a target (the
p% and (n, k) rules: value plus the rule's protection; the frequency rule: one more than its
threshold) and, for the dominance rules, the lower bound to reach down to the value less the
protection (never below 0, which every attacker knows; tau-Argus caps the lower protection at the
cell value in the same way); see :func:`~cellsafe.mechanisms.protection_requirements`.  Comparisons
allow a relative slack of ``tol`` times ``max(1, |v|)`` for the rounding of the linear programs.

Further suppressions (:func:`protect_intervals`).  Secondary suppression by Gaussian elimination
makes no sensitive cell computable exactly, but its interval may still be narrow.  Withholding one
more published cell removes one equation from the attacker's system, so every interval can only
widen: a pattern that protects a cell keeps protecting it when more cells are withheld.  The
targets are first checked all at once (:meth:`Intruder.reach`); for each side of each cell that
falls short, one linear program finds inner values that reach the target while the published
equations give way as little as possible (weighted by the cells' values, tau-Argus's default
cost); the equations that gave way are withheld, after which the target is within the attacker's
reach.  See :func:`protect_intervals` for the program and its sources.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from ._intruder import Intruder, _highs_model, run_within_limits, shortfalls, touching
from ._sole_intervals import singleton_shortfalls

#: Beyond this many inner cells, the programs move only the inner cells of withheld cells (and,
#: to widen an interval, those of the published cells around the cell): whole systems of tens of
#: thousands of inner cells take minutes a program (see the intruder's ``free``).
WHOLE_SYSTEM_ROWS = 20_000

#: Simplex iterations a protection program (:class:`_Program`) takes from the last basis before it is
#: solved from scratch, and from scratch before the next method (the last: an answer by construction).
WARM_ITERATIONS = 20_000
COLD_ITERATIONS = 50_000


#: Inner cells each sensitive cell brings into a restricted system (those its least-norm move shifts most).
NEIGHBOURS = 300


def neighbourhood(Xc: sp.csc_matrix, published: np.ndarray, cells: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Inner cells (bool over the rows) where each of ``cells`` can move while the published cells stay.

    The least-norm change of the inner cells that moves cell p by one and no published cell is the
    residual of p's column off the span of the published columns (in the space of inner cells);
    the ``k`` inner cells it shifts most, for each cell, are where a program is likely to find
    room.  Only a choice of cells to let move: what the programs find on them is exact.
    """
    from scipy.linalg import cho_factor, cho_solve

    out = np.zeros(Xc.shape[0], dtype=bool)
    cells = np.asarray(cells, dtype=np.int64)
    if not cells.size:
        return out
    XP = Xc[:, np.flatnonzero(published)]
    G = (XP.T @ XP).toarray()
    ridge = 1e-8 * max(1.0, float(np.abs(np.diag(G)).max(initial=1.0)))
    factor = cho_factor(G + ridge * np.eye(G.shape[0]), check_finite=False)
    step = max(1, min(64, 4_000_000 // max(Xc.shape[0], 1)))  # blocks of at most 4e6 numbers
    for first in range(0, cells.size, step):
        block = Xc[:, cells[first : first + step]]
        R = block.toarray() - XP @ cho_solve(factor, (XP.T @ block).toarray(), check_finite=False)
        top = np.argsort(-np.abs(R), axis=0)[: min(k, R.shape[0])]
        out[np.unique(top)] = True
    return out


__all__ = [
    "cell_intervals", "protection_met", "protect_intervals", "requirement_targets", "neighbourhood", "WHOLE_SYSTEM_ROWS",
]


def cell_intervals(
    X: Any,
    released: np.ndarray,
    cells: np.ndarray,
    *,
    upper_bound: float | None = None,
    floor: np.ndarray | None = None,
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
    floor : array over the published cells, optional
        The least value the listing reveals for each withheld cell (1 for a listing of non-empty
        cells); default 0.

    Returns
    -------
    lower, upper : ndarray of float64

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1]], dtype=float))  # two inner cells and their total
    >>> cell_intervals(X, np.array([np.nan, np.nan, 10.0]), np.array([0, 1]))
    (array([0., 0.]), array([10., 10.]))
    >>> cell_intervals(X, np.array([np.nan, np.nan, 2.0]), np.array([0, 1]), floor=np.ones(3))  # both listed: 1 and 1
    (array([1., 1.]), array([1., 1.]))
    """
    released = np.asarray(released, dtype=np.float64)
    cells = np.asarray(cells, dtype=np.int64)
    known = ~np.isnan(released)
    intruder = Intruder(X, np.nan_to_num(released), known, floor=floor, upper_bound=upper_bound)
    return intruder.bounds(intruder.columns(cells), cells=cells)


def protection_met(
    value: np.ndarray, lower: np.ndarray, upper: np.ndarray, required: np.ndarray, tol: float = 1e-7
) -> tuple[np.ndarray, np.ndarray]:
    """Whether the lower and the upper side of each interval give the symmetric protection ``required``.

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


def requirement_targets(values: np.ndarray, required: Any, upper: Any, lower: Any, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upper and lower targets over the published cells, set ``tol`` beyond the requirement (module notes).

    A cell with no target needs a positive width: either side off its value will do (``either``).
    """
    slack = tol * np.maximum(1.0, np.abs(values))
    if upper is not None or lower is not None:
        up = np.full(values.shape[0], -np.inf) if upper is None else np.asarray(upper, dtype=np.float64).copy()
        down = np.full(values.shape[0], np.inf) if lower is None else np.asarray(lower, dtype=np.float64).copy()
    else:
        r = np.asarray(required, dtype=np.float64)
        up = np.where(r > 0, values + r, -np.inf)
        down = np.where(r > 0, values - np.minimum(r, np.maximum(values, 0.0)), np.inf)
    either = ~np.isfinite(up) & ~np.isfinite(down)
    # every sensitive cell at least off its value upwards (positive width), and the lower side never below 0
    up = np.maximum(up, values) + slack
    down = np.where(np.isfinite(down), np.maximum(down, 0.0) - slack, np.where(either, values - slack, down))
    return up, down, either


def protect_intervals(
    X: Any,
    values: np.ndarray,
    suppressed: np.ndarray,
    required: np.ndarray | None,
    sensitive: np.ndarray,
    *,
    allowed: np.ndarray | None = None,
    cost: np.ndarray | None = None,
    sole: np.ndarray | None = None,
    floor: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    lower: np.ndarray | None = None,
    width: np.ndarray | None = None,
    apart: bool = True,
    guarded: np.ndarray | None = None,
    inner: np.ndarray | None = None,
    tol: float = 1e-7,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Withhold further cells until every ``sensitive`` cell's interval gives its required protection.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
    values : array over the published cells
        The true published values (sums of non-negative inner values).
    suppressed : bool array
        The cells withheld so far (the sensitive ones among them).
    required : float array or None
        The symmetric protection each cell needs on both sides (0: positive width); or give the
        targets ``upper`` / ``lower`` instead.
    sensitive : int array
        The cells whose intervals are checked, in the order they are visited.
    allowed : bool array, optional
        Cells that may be withheld further (default: every published cell).
    cost : float array, optional
        What withholding a cell costs per unit its equation gives way (default: ``values``).
    sole : int array, optional
        Each cell's single contributor (-1: none or several).  Given, each sensitive cell gets its
        protection also against each contributor alone in a withheld cell, who knows that cell's
        value (the singleton problem); the cell's only contributor needs no protection from itself.
    floor : float array, optional
        The least value the listing reveals for each listed cell (1 for a listing of non-empty cells).
    upper, lower, width : float arrays, optional
        The targets of :class:`~cellsafe.mechanisms.Requirements`: the attacker's upper bound must
        reach ``upper`` (``-inf``: none), its lower bound ``lower`` (``inf``: none), and the interval
        be ``width`` wide.
    apart : bool, default True
        Against a contributor alone in withheld cells, its cells that share an inner cell with the
        protected one are not known equations: they hold its own contribution to that cell, which
        the dominance rules' protection already allows for (the p% rule's intruder knows its own
        contribution).  False (frequency tables): every cell of the contributor is known.
    guarded : bool array, optional
        The sensitive cells protected against contributors alone in withheld cells too (default:
        all; suppression passes its primaries, while secondaries need only a positive width).
    inner : float array over the inner cells, optional
        Their true values.  Given, and beyond ``WHOLE_SYSTEM_ROWS`` inner cells, the programs move
        only the inner cells of withheld cells (and of the published cells around the cells to
        widen), the others staying at their values: a stronger attacker, so what protects against
        it protects against the reader, in programs of a size that solves in milliseconds.
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
    One linear program per side of each sensitive cell p that falls short (upper side: target t at
    or above the requirement; lower side: t at or below), over inner cells y >= 0 and, for each
    published cell j that may be withheld, two deviations ``d+_j, d-_j >= 0``::

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
    All programs are one HiGHS model whose bounds change from question to question.

    Against contributors alone in withheld cells (``sole``): one check for all of them at once
    (a y meeting every such cell but the protected cell's own contributor's serves each of them),
    then, for the cells it leaves short, one check per contributor and, where that falls short,
    the program above with that contributor's cells as equations that never give way.

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
    n_pub = values.shape[0]
    allowed = np.ones(n_pub, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    cost = values if cost is None else np.asarray(cost, dtype=np.float64)
    # a floor so that a zero-cost equation is not given way for nothing
    weight = np.maximum(np.abs(cost), 1e-6 * max(float(np.abs(cost).max(initial=0.0)), 1.0))
    Xc = sp.csc_matrix(X, dtype=np.float64)
    floor = np.zeros(n_pub) if floor is None else np.asarray(floor, dtype=np.float64)
    up_t, down_t, either = requirement_targets(values, required, upper, lower, tol)
    width = np.zeros(n_pub) if width is None else np.asarray(width, dtype=np.float64)
    sensitive = np.asarray(sensitive, dtype=np.int64)
    unresolved = np.zeros(n_pub, dtype=bool)
    restrict = inner is not None and Xc.shape[0] > WHOLE_SYSTEM_ROWS
    inner = None if inner is None else np.asarray(inner, dtype=np.float64)
    program = _Program(Xc, values, suppressed, allowed, weight, floor, truth=inner)
    n_lp = 0
    with progress_bar(None, progress, "protection levels", unit="program") as bar:
        for _ in range(16):  # each round withholds cells or stops; the next finds what the last left short
            # restricted: the inner cells of withheld cells move, the others keep their values; a cell
            # given way joins them in the next round
            free = None
            if restrict:
                free = touching(Xc, suppressed) | neighbourhood(Xc, ~suppressed, sensitive)
                program = _Program(Xc, values, suppressed, allowed, weight, floor, free=free, fixed=inner)
            intruder = Intruder(Xc, values, ~suppressed, floor=floor, free=free, fixed=inner)
            short = shortfalls(intruder, sensitive, values, up_t, down_t, width, floor, tol, either)
            n_lp += intruder.n_lp
            if not short:
                break
            before = int(suppressed.sum())
            for p, is_upper, target in short:
                if unresolved[p]:
                    continue
                reached = program.ask(p, is_upper, target)
                n_lp += 1
                bar.update(1)
                if not reached:
                    unresolved[p] = True
                suppressed |= program.suppressed
            if int(suppressed.sum()) == before:
                break
        if sole is not None:
            watch = sensitive if guarded is None else sensitive[np.asarray(guarded, dtype=bool)[sensitive]]
            n_lp += _protect_from_singletons(
                Xc, values, suppressed, program, watch, np.asarray(sole, dtype=np.int64), up_t, down_t, floor, apart, unresolved, bar,
                tol, either, intruder, inner if restrict else None, free,
            )
    return suppressed, unresolved, n_lp


def _protect_from_singletons(
    Xc: sp.csc_matrix,
    values: np.ndarray,
    suppressed: np.ndarray,
    program: "_Program",
    sensitive: np.ndarray,
    sole: np.ndarray,
    up_t: np.ndarray,
    down_t: np.ndarray,
    floor: np.ndarray,
    apart: bool,
    unresolved: np.ndarray,
    bar: Any,
    tol: float,
    either: np.ndarray,
    outsider: Intruder,
    inner: np.ndarray | None,
    free: np.ndarray | None,
) -> int:
    """The requirements against each contributor alone in a withheld cell (notes of :func:`protect_intervals`)."""
    n_lp = 0
    shortfalls = singleton_shortfalls(
        Xc, values, suppressed.copy(), sensitive, sole, up_t, down_t, floor, apart, either, tol, outsider, inner=inner, free=free,
        live=suppressed,
    )
    for p, _, mine, short in shortfalls:
        for _, is_upper, target in short:
            reached = program.ask(p, is_upper, target, known=mine)
            n_lp += 1
            bar.update(1)
            if not reached:
                unresolved[p] = True
            suppressed |= program.suppressed
    return n_lp


class _Program:
    """The protection program of :func:`protect_intervals` as one HiGHS model for a whole pattern.

    Columns: inner cells y, then ``d+`` and ``d-`` of every published cell.  Rows: every published
    cell's equation ``x_j^T y - d+_j + d-_j`` (fixed at z_j while published, free once withheld),
    then ``x_j^T y >= f_j`` for cells with a listing floor.  A question sets a target on the
    protected cell's row and fixes the known cells' rows; both are undone after it.

    A question is solved by the dual simplex from the last basis, within ``WARM_ITERATIONS``; past
    that (HiGHS's primal clean-up can stall there: on all 2-way margins of six variables from 1e6
    records one such program ran for over 14 minutes, where it solves from scratch in about a second
    and 4,109 iterations), from scratch by the dual and then the primal simplex within
    ``COLD_ITERATIONS`` each.  What cannot be solved so is answered by construction
    (:meth:`_by_construction`): a pattern that gives more away than the program would, never one
    that assumes a side protected.
    """

    def __init__(
        self, Xc: sp.csc_matrix, values: np.ndarray, suppressed: np.ndarray, allowed: np.ndarray, weight: np.ndarray,
        floor: np.ndarray, *, free: np.ndarray | None = None, fixed: np.ndarray | None = None, truth: np.ndarray | None = None,
    ) -> None:
        # a restricted program moves only the inner cells ``free``; the others hold their values ``fixed``
        self.base = np.zeros(Xc.shape[0]) if free is None or fixed is None else np.where(free, 0.0, fixed)
        self.fixed_part = np.asarray(Xc.T @ self.base).reshape(-1)
        # the whole system and its true inner values, for answers by construction
        self.whole = Xc
        self.truth = fixed if truth is None else truth
        if free is not None:
            Xc = Xc[np.flatnonzero(free)].tocsc()
        self.Xc = Xc
        self.values = values
        self.suppressed = suppressed.copy()
        self.allowed = allowed
        self.weight = weight
        self.floor = floor
        self.n_fallback = 0  # questions answered by construction
        self._h: Any = None

    def _build(self) -> None:
        n_in, n = self.Xc.shape
        XT = self.Xc.T.tocsr()
        eye = sp.identity(n, format="csr")
        rows = [sp.hstack([XT, -eye, eye], format="csr")]
        rhs = self.values - self.fixed_part
        lower = [np.where(self.suppressed, -np.inf, rhs)]
        upper = [np.where(self.suppressed, np.inf, rhs)]
        self._floored = np.flatnonzero(self.floor - self.fixed_part > 0)
        if self._floored.size:
            rows.append(sp.hstack([XT[self._floored], sp.csr_matrix((self._floored.size, 2 * n))], format="csr"))
            lower.append(self.floor[self._floored] - self.fixed_part[self._floored])
            upper.append(np.full(self._floored.size, np.inf))
        A = sp.vstack(rows, format="csc")
        dev_up = np.where(self.allowed & ~self.suppressed, np.inf, 0.0)
        self._h = _highs_model(
            A,
            np.concatenate(lower),
            np.concatenate(upper),
            np.zeros(n_in + 2 * n),
            np.concatenate([np.full(n_in, np.inf), dev_up, dev_up]),
        )
        import highspy

        cost = np.concatenate([np.zeros(n_in), self.weight, self.weight])
        self._h.changeColsCost(cost.shape[0], np.arange(cost.shape[0], dtype=np.int32), cost)
        self._h.setOptionValue("simplex_strategy", 1)  # dual simplex: questions change bounds only
        self._inf = highspy.kHighsInf

    def _rows(self, cells: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        inf = self._inf
        self._h.changeRowsBounds(
            cells.size, cells.astype(np.int32), np.where(np.isfinite(lower), lower, -inf), np.where(np.isfinite(upper), upper, inf)
        )

    def _withhold(self, cells: np.ndarray) -> None:
        n_in, n = self.Xc.shape
        self.suppressed[cells] = True
        if self._h is None or not cells.size:
            return
        self._rows(cells, np.full(cells.size, -np.inf), np.full(cells.size, np.inf))
        cols = np.concatenate([n_in + cells, n_in + n + cells]).astype(np.int32)
        self._h.changeColsBounds(cols.size, cols, np.zeros(cols.size), np.zeros(cols.size))

    def _solve(self) -> Any:
        """Run the model (class notes): warm within ``WARM_ITERATIONS``, then cold; the last status."""
        import highspy

        h = self._h
        done = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible)
        status = run_within_limits(h, done, 1, WARM_ITERATIONS, COLD_ITERATIONS)
        h.setOptionValue("simplex_strategy", 1)
        if status not in done:
            h.clearSolver()  # the next question starts from scratch rather than from where this one stopped
        return status

    def ask(self, p: int, upper: bool, target: float, known: np.ndarray | None = None) -> bool:
        """Reach ``target`` on cell p (the notes' program); withholds the cells that give way.

        ``known`` (withheld) cells are equations that never give way.  Returns whether the target
        is within reach now: False when no allowed cells can give way enough.
        """
        import highspy

        if self._h is None:
            self._build()
        n_in, n = self.Xc.shape
        if not upper and target < 0:
            target = 0.0  # the attacker's lower bound can only reach 0
        known = np.zeros(0, dtype=np.int64) if known is None else np.asarray(known, dtype=np.int64)
        rhs = self.values - self.fixed_part
        self._rows(known, rhs[known], rhs[known])
        own = np.array([p])
        t = target - self.fixed_part[p]
        self._rows(own, np.array([t if upper else -np.inf]), np.array([np.inf if upper else t]))
        status = self._solve()
        x = np.asarray(self._h.getSolution().col_value) if status == highspy.HighsModelStatus.kOptimal else None
        self._rows(np.r_[known, own], np.full(known.size + 1, -np.inf), np.full(known.size + 1, np.inf))
        if status == highspy.HighsModelStatus.kInfeasible:
            return False
        if x is None:
            self.n_fallback += 1
            give = self._by_construction(p, upper, target, known)
            if give is None:
                return False
            self._withhold(give)
            return True
        dev = x[n_in : n_in + n] + x[n_in + n :]
        scale = max(1.0, float(np.abs(self.values[~self.suppressed]).max(initial=1.0)))
        give = np.flatnonzero((dev > 1e-9 * scale) & ~self.suppressed)
        self._withhold(give)
        return True

    def _by_construction(self, p: int, upper: bool, target: float, known: np.ndarray) -> np.ndarray | None:
        """The cells to withhold so that one inner cell of p moves p to ``target``; None where none can.

        The true inner values with one inner cell r of p moved by what p lacks are a solution of
        the reader's system once every published cell through r is withheld: they meet every other
        equation and the known cells (r lies in none of them), and non-negativity and the listing's
        floors (upwards; downwards where r's value and the floors allow).  The inner cell whose
        cells cost least is taken, among those whose cells may all be withheld.  This withholds more
        than the program would, never less than the target needs.
        """
        if self.truth is None:
            return None
        X = self.whole.tocsr()
        truth = np.asarray(self.truth, dtype=np.float64)
        col = self.whole[:, [p]].tocsc()
        rows, coef = col.indices, col.data
        lack = target - self.values[p]
        barred = np.zeros(X.shape[0], dtype=bool)
        if known.size:
            barred |= touching(self.whole.tocsc(), np.isin(np.arange(self.values.shape[0]), known))
        best: tuple[float, int, np.ndarray] | None = None
        for r, a in zip(rows.tolist(), coef.tolist()):
            if a <= 0 or barred[r]:
                continue
            step = lack / a
            through = X.indices[X.indptr[r] : X.indptr[r + 1]]
            if not upper:
                # downwards: r keeps a non-negative value, and every cell through r its listing floor
                moved = self.values[through] + step * X.data[X.indptr[r] : X.indptr[r + 1]]
                if truth[r] + step < 0 or np.any(moved < self.floor[through] - 1e-9 * np.maximum(1.0, self.floor[through])):
                    continue
            give = through[~self.suppressed[through]]
            if not np.all(self.allowed[give]):
                continue
            cost = float(self.weight[give].sum())
            if best is None or cost < best[0]:
                best = (cost, r, give)
        return None if best is None else best[2]

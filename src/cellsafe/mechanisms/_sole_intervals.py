"""What a contributor alone in withheld cells can conclude about the other sensitive cells.

A contributor alone in a cell knows that cell's value whether it is published or not (the
singleton problem; :mod:`~cellsafe.mechanisms._singleton` keeps primaries out of the linear span of
what it knows).  Its interval for another sensitive cell p is the outside reader's interval with its
own withheld cells added as known equations: :func:`singleton_shortfalls` finds every requirement of
:func:`~cellsafe.mechanisms.protection_requirements` such a contributor leaves unmet, so that
:func:`~cellsafe.mechanisms.protect_intervals` can withhold more and
:func:`~cellsafe.metrics.audit_suppression` can report it.

How the questions are shared (the verdicts are those of one program per cell and contributor):

1. *Witnesses.*  A solution of the outside reader's system that gives every single-contributor cell
   its value, and reaches p's target, settles p for every contributor at once.
2. *Every contributor at once.*  One model holds the published cells and every single-contributor
   cell; a question frees the rows of the cells its reader does not know.  Cells whose question
   frees the same rows are asked together (:meth:`Intruder.reach`: a joint program takes every cell
   towards its target, then one program per cell left).
3. *Least-broken solutions* (systems of at most ``BREAKS_ROWS`` inner cells).  For a cell still
   short, a program reaches its target while letting as few single-contributor equations give way
   as it can (:class:`_Breaks`); a contributor whose cells it keeps cannot exclude that solution.
4. *Each contributor alone*, for the pairs step 3 leaves: grouped by contributor as in step 2, and
   solutions found under one contributor's relaxation serve another's where they meet its equations.
   Before a group's programs, *mixtures*: every solution found is one of the outside reader's, and
   so is any convex combination; where the solutions reaching a cell's target lie on both sides of
   what a contributor knows (one equation: a count's single inner cell), a combination meets it
   exactly and the contributor cannot exclude it (:meth:`_Questions.mixed`).

On the hierarchical benchmark of 2e4 records (1,188 published cells, 207 sensitive, 76 contributors
alone in withheld cells) this asks 2,372 of the 10,778 cell-contributor pairs and solves 674
programs, where one program per pair took 11,114.  On all 2-way margins of six variables (1e5
records: 13,482 inner cells, 132 contributors, 16,016 cell-contributor questions) mixtures leave 532
programs where 1,477 were solved without them (21 s instead of 70 s), the verdicts the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._intruder import Intruder, _highs_model, shortfalls, touching

__all__ = ["singleton_shortfalls"]

#: Least-broken programs (:class:`_Breaks`) only on joint systems of at most this many inner cells: on
#: the 1e4-record hypercube (5,127 inner cells) they had not finished in 15 minutes, where asking each
#: contributor took about a minute.
BREAKS_ROWS = 2_000

#: Solutions of the reader's system kept for mixtures (:meth:`_Questions.mixed`).
_POOL = 512


def singleton_shortfalls(
    Xc: sp.csc_matrix,
    values: np.ndarray,
    suppressed: np.ndarray,
    sensitive: np.ndarray,
    sole: np.ndarray,
    up_t: np.ndarray,
    down_t: np.ndarray,
    floor: np.ndarray,
    apart: bool,
    either: np.ndarray,
    tol: float,
    outsider: Intruder | None = None,
    *,
    inner: np.ndarray | None = None,
    free: np.ndarray | None = None,
) -> Any:
    """Yield ``(cell, contributor, its known cells, [(cell, upper side?, target), ...])`` for every
    requirement some contributor alone in a withheld cell does not leave met (``suppressed`` is the pattern).

    Shared work: the outside attacker's witnesses first (one meeting every such cell serves all
    contributors), then one model holding every such cell, whose rows of the other contributors'
    cells are freed for each question.  Questions that free the same rows are asked together, so a
    contributor's knowledge is put to every sensitive cell at once (:meth:`Intruder.reach` settles most
    of them with one solution) instead of one program per cell and contributor.  With ``inner`` (the
    true inner values), the systems move the inner cells of withheld cells only (a stronger attacker),
    and those of ``free`` too (the protection program's: a question it would answer without
    withholding anything is then not asked of it).
    The verdicts, and the order they are yielded in (by cell, then contributor), are those of asking
    each cell and contributor on its own.
    """
    n = values.shape[0]
    every = np.flatnonzero(suppressed & (sole >= 0))
    if not every.size:
        return
    free = None if inner is None else touching(Xc, suppressed) | (False if free is None else np.asarray(free, dtype=bool))
    joint = Intruder(Xc, values, ~suppressed | np.isin(np.arange(n), every), floor=floor, free=free, fixed=inner)
    asked = _Questions(Xc, values, suppressed, sole, up_t, down_t, floor, either, tol, joint, every, inner, free, outsider)
    todo: list[tuple[int, np.ndarray]] = []  # each sensitive cell with the cells of its attackers
    for p in sensitive:
        p = int(p)
        overlap = np.asarray(Xc.T @ Xc[:, p].toarray().reshape(-1)).reshape(-1) > 0 if apart else np.zeros(n, dtype=bool)
        others = suppressed & (sole >= 0) & ((sole != sole[p]) | (sole[p] < 0)) & ~overlap
        others[p] = False
        singles = np.flatnonzero(others)
        if not singles.size:
            continue
        if outsider is not None and _witnessed(outsider, p, singles, values, up_t, down_t, either, tol):
            # a solution of the outside attacker's (for this pattern or a smaller one: withholding only
            # removes equations) that meets every such cell serves each of those contributors
            continue
        todo.append((p, singles))
    # every contributor at once (the cell's own contributor's cells freed): enough for most cells
    at_once = asked.answer([(p, None, singles) for p, singles in todo])
    todo = [(p, singles) for p, singles in todo if at_once.get((p, None), [True])]
    # then each contributor alone: a solution reaching the cell's targets that breaks as few contributors'
    # cells as it can settles every contributor whose cells it keeps; the others are asked one by one
    # (on small systems only: on large ones each of its programs costs more than the questions it saves)
    breaks = _Breaks(joint, every, values, np.array([p for p, _ in todo], dtype=np.int64))
    small = joint.rows.size <= BREAKS_ROWS
    each: list[tuple[int, int | None, np.ndarray]] = []
    for p, singles in todo:
        owners = breaks.unsettled(p, singles, at_once.get((p, None)), up_t, down_t, either, sole) if small else np.unique(sole[singles])
        for c in owners:
            each.append((p, int(c), singles[sole[singles] == c]))
    answers = asked.answer(each)
    for p, c, mine in each:
        short = answers[(p, c)]
        if short:
            yield p, c, mine, short


class _Breaks:
    """Solutions of the reader's system that reach a cell's target while breaking few contributors' cells.

    One HiGHS model per pattern: the joint model's rows (the published cells and every cell with a
    single contributor), each single's equation with two deviations ``d+, d- >= 0`` costing 1 each,
    and a row for each cell to be asked, free until its question puts the target in its bounds (a
    question changes bounds and costs only, so each starts from the last basis: changing the
    model's coefficients instead started every question cold, minutes on the 1e5-record
    hypercube).  The cells a question frees (the asked cell's own contributor's) cost nothing.  A solution with no deviation on a contributor's
    cells is a solution of that contributor's system: that contributor cannot exclude it.
    """

    def __init__(self, joint: Intruder, every: np.ndarray, values: np.ndarray, asked: np.ndarray) -> None:
        self.joint = joint
        self.asked = np.asarray(asked, dtype=np.int64)
        pos = np.searchsorted(joint._eq, every)
        ok = pos < joint._eq.size
        ok[ok] = joint._eq[pos[ok]] == every[ok]
        self.cells = every[ok]  # the singles with an equation here
        self.rows = pos[ok]
        self.values = values
        self._h: Any = None

    def _build(self) -> None:
        j = self.joint
        n, m = j.rows.size, self.rows.size
        A = j._A_eq.tocsr()
        D = sp.csr_matrix((np.r_[-np.ones(m), np.ones(m)], (np.r_[self.rows, self.rows], np.arange(2 * m))), shape=(A.shape[0], 2 * m))
        A = sp.hstack([A, D], format="csr")
        lower, upper = j._b_eq, j._b_eq
        if j._A_ub is not None and j._b_ub is not None:
            A = sp.vstack([A, sp.hstack([-j._A_ub, sp.csr_matrix((j._A_ub.shape[0], 2 * m))])], format="csr")
            lower = np.r_[lower, -j._b_ub]
            upper = np.r_[upper, np.full(j._b_ub.shape[0], np.inf)]
        self._target_row = {int(p): A.shape[0] + i for i, p in enumerate(self.asked)}
        T = sp.hstack([j.columns(self.asked).C.T, sp.csr_matrix((self.asked.size, 2 * m))], format="csr")
        A = sp.vstack([A, T], format="csr")
        lower = np.r_[lower, np.full(self.asked.size, -np.inf)]
        upper = np.r_[upper, np.full(self.asked.size, np.inf)]
        col_upper = np.r_[np.full(n, j.upper_bound), np.full(2 * m, np.inf)]
        self._h = _highs_model(sp.csc_matrix(A), lower, upper, np.zeros(n + 2 * m), col_upper)
        self._n = n
        self._cost = np.r_[np.zeros(n), np.ones(2 * m)]

    def unsettled(self, p: int, singles: np.ndarray, short: list[tuple[int, bool, float]] | None, up_t: np.ndarray,
                  down_t: np.ndarray, either: np.ndarray, sole: np.ndarray) -> np.ndarray:
        """The contributors (of ``singles``) whose cells every solution found breaks, on some side p needs.

        Per side asked, up to two solutions: the second makes the cells of the contributors
        still broken dear, so that it goes round them where the system allows.
        """
        import highspy

        owners = np.unique(sole[singles])
        if short is None or not self.cells.size:
            return owners
        if self._h is None:
            self._build()
        h, n = self._h, self._n
        offset = self.joint.columns([p]).offset[0]
        r = self._target_row[p]
        asked = {s[1] for s in short} if not either[p] else {True, False}
        free = ~np.isin(self.cells, singles)  # the cell's own contributor's: cost nothing
        X = self.joint._X[:, self.cells]
        want = self.values[self.cells] - self.joint._fixed_part[self.cells]
        slack = 1e-7 * np.maximum(1.0, np.abs(want))
        per_side: list[np.ndarray] = []
        for upper in sorted(asked):
            t = (up_t[p] if upper else down_t[p]) - offset
            if not np.isfinite(t):
                continue
            h.changeRowBounds(r, t if upper else -highspy.kHighsInf, highspy.kHighsInf if upper else t)
            left = owners
            for _ in range(2):
                w = np.where(np.isin(sole[self.cells], left), 1e3, 1.0)
                w[free] = 0.0
                cost = np.r_[np.zeros(n), w, w]
                h.changeColsCost(cost.size, np.arange(cost.size, dtype=np.int32), cost)
                h.run()
                if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                    break  # out of reach even so: every contributor is asked on its own
                y = np.maximum(np.asarray(h.getSolution().col_value)[:n], 0.0)
                broken = np.unique(sole[self.cells[np.abs(X.T @ y - want) > slack]])
                now = np.intersect1d(left, broken)
                if now.size == left.size:
                    break
                left = now
            per_side.append(left)
        h.changeRowBounds(r, -highspy.kHighsInf, highspy.kHighsInf)
        if not per_side:
            return owners
        if either[p]:  # one side met is enough: unsettled only where broken on both
            out = per_side[0]
            for b in per_side[1:]:
                out = np.intersect1d(out, b)
            return out
        return np.unique(np.concatenate(per_side))


class _Questions:
    """Whether a reader who knows some withheld cells meets each cell's requirements: asked in groups.

    A question ``(p, c, known)`` asks p's requirements of a reader who knows the cells ``known`` (of
    the joint model's singles) besides the published ones; ``c`` only labels it.  Questions knowing
    the same cells share one relaxation of the joint model and one :meth:`Intruder.reach`.  A
    relaxation that would free an empty cell is impossible (its inner cells left the model): such a
    question has a model of its own (``alone``), or, for the question of every contributor at once
    (``c`` None), no answer (the caller then asks each contributor).
    """

    def __init__(self, Xc: sp.csc_matrix, values: np.ndarray, suppressed: np.ndarray, sole: np.ndarray, up_t: np.ndarray,
                 down_t: np.ndarray, floor: np.ndarray, either: np.ndarray, tol: float, joint: Intruder, every: np.ndarray,
                 inner: np.ndarray | None, free: np.ndarray | None, outsider: Intruder | None = None) -> None:
        self.Xc, self.values, self.suppressed, self.sole = Xc, values, suppressed, sole
        self.up_t, self.down_t, self.floor, self.either, self.tol = up_t, down_t, floor, either, tol
        self.joint, self.every, self.inner, self.free = joint, every, inner, free
        self.no_width = np.zeros(values.shape[0])
        # the value of every published cell under each solution of the outside reader's system kept (a ring of _POOL)
        self._V = np.zeros((values.shape[0], _POOL))
        self._k = 0
        self._keep(list(joint.witnesses) + [w for w, _ in joint._elsewhere])
        if outsider is not None and np.array_equal(outsider.rows, joint.rows) and np.array_equal(outsider._base, joint._base):
            self._keep(outsider.witnesses)

    def _keep(self, found: list[np.ndarray]) -> None:
        found = found[-_POOL:]
        if not found:
            return
        slots = (self._k + np.arange(len(found))) % _POOL
        self._V[:, slots] = np.asarray(self.joint._X.T @ np.column_stack(found)) + self.joint._fixed_part[:, None]
        self._k += len(found)

    def mixed(self, p: int, known: np.ndarray) -> bool:
        """Whether a mixture of kept solutions meets p's requirements and gives the cells ``known`` their values.

        Every kept solution meets the published cells, the listing's floors and non-negativity (the
        joint model's rows of single-contributor cells are the only ones ever freed), and so does
        any convex combination of them; a combination meeting p's target on a side and the known
        cells' equations is a solution of that reader's system reaching the target: the reader
        cannot exclude it.  Decided here where the known cells hold one equation on the model's
        inner cells (a contributor's count cells all hold its one inner cell): then some
        combination meets it exactly when the solutions reaching the target lie on both sides of
        its value.  A False says nothing (the question is asked).
        """
        k = min(self._k, _POOL)
        if not k or not known.size:
            return False
        tol = self.tol
        v = self._V[p, :k]
        gap = self._V[known, :k] - self.values[known][:, None]
        slack = 1e-7 * np.maximum(1.0, np.abs(self.values[known]))[:, None]
        if not np.all(np.abs(gap - gap[:1]) <= slack):  # several equations: not decided here
            return False
        g, s = gap[0], float(slack[0, 0])
        up, down = self.up_t[p], self.down_t[p]
        sides = []
        if np.isfinite(up):
            sides.append(v >= up - tol * max(1.0, abs(up)))
        if np.isfinite(down):
            sides.append(v <= down + tol * max(1.0, abs(down)))
        met = [bool(np.any(r & (g <= s))) and bool(np.any(r & (g >= -s))) for r in sides]
        if not met:
            return True  # nothing asked
        return any(met) if self.either[p] else all(met)

    def answer(self, questions: list[tuple[int, int | None, np.ndarray]]) -> dict[tuple[int, int | None], list[tuple[int, bool, float]]]:
        """The shortfalls of each question, by ``(p, c)``; a question left without an answer is absent."""
        groups: dict[bytes, list[int]] = {}
        freed: dict[bytes, np.ndarray] = {}
        out: dict[tuple[int, int | None], list[tuple[int, bool, float]]] = {}
        for i, (_, _, known) in enumerate(questions):
            f = np.setdiff1d(self.every, known)
            key = f.tobytes()
            groups.setdefault(key, []).append(i)
            freed[key] = f
        for key, members in groups.items():
            f = freed[key]
            if not np.any(self.values[f] == 0):
                # questions a mixture of the solutions found so far answers need no program
                for i in members:
                    p, c, known = questions[i]
                    if c is not None and self.mixed(p, known):
                        out[(p, c)] = []
                members = [i for i in members if questions[i][:2] not in out]
                if not members:
                    continue
                cells = np.array([questions[i][0] for i in members], dtype=np.int64)
                with self.joint.relaxed(f) as j:
                    before = {id(w) for w in j.witnesses}
                    short = shortfalls(j, cells, self.values, self.up_t, self.down_t, self.no_width, self.floor, self.tol, self.either)
                    self._keep([w for w in j.witnesses if id(w) not in before])
                by_cell: dict[int, list[tuple[int, bool, float]]] = {}
                for s in short:
                    by_cell.setdefault(s[0], []).append(s)
                for i in members:
                    p, c, _ = questions[i]
                    out[(p, c)] = by_cell.get(p, [])
                continue
            for i in members:  # an empty cell cannot be freed: a model of the reader's own
                p, c, known = questions[i]
                if c is None:
                    continue
                k = ~self.suppressed
                k[known] = True
                alone = Intruder(self.Xc, self.values, k, floor=self.floor, free=self.free, fixed=self.inner)
                out[(p, c)] = shortfalls(alone, np.array([p]), self.values, self.up_t, self.down_t, self.no_width, self.floor, self.tol, self.either)
        return out


def _witnessed(
    intruder: Intruder, p: int, cells: np.ndarray, values: np.ndarray, up_t: np.ndarray, down_t: np.ndarray, either: np.ndarray, tol: float
) -> bool:
    """Whether the intruder's witnesses reach p's targets with ``cells`` at their values (checked on the vectors)."""
    if not intruder.witnesses:
        return False
    W = np.column_stack(intruder.witnesses)
    cp, cc = intruder.columns([p]), intruder.columns(cells)
    v = np.asarray(cp.C.T @ W).reshape(-1) + cp.offset[0]
    meet = np.asarray(cc.C.T @ W) + cc.offset[:, None]
    ok = np.all(np.abs(meet - values[cells][:, None]) <= 1e-9 * np.maximum(1.0, np.abs(values[cells]))[:, None], axis=0)
    up_ok = bool(np.any(ok & (v >= up_t[p] - tol * max(1.0, abs(up_t[p])))))
    down_ok = not np.isfinite(down_t[p]) or bool(np.any(ok & (v <= down_t[p] + tol * max(1.0, abs(down_t[p])))))
    if either[p]:
        return up_ok or down_ok
    return up_ok and down_ok

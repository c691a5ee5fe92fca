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
2. *Each contributor alone.*  One model holds the published cells and every single-contributor
   cell; a question frees the rows of the cells its reader does not know.  A contributor's
   questions (the cells it is asked about) are asked together (:meth:`Intruder.reach`: a joint
   program takes every cell towards its target, then one program per cell left), and solutions
   found under one contributor's relaxation serve another's where they meet its equations.
   Before a group's programs, *mixtures*: every solution found is one of the outside reader's, and
   so is any convex combination; where the solutions reaching a cell's target lie on both sides of
   what a contributor knows (one equation: a count's single inner cell), a combination meets it
   exactly and the contributor cannot exclude it (:meth:`_Questions.mixed`, every cell of a group
   at once).

On the hierarchical benchmark of 2e4 records (1,188 published cells, 207 sensitive, 76 contributors
alone in withheld cells) the whole suppression solves 336 programs, where one program per
cell-contributor pair took 11,114.  Two steps between 1 and 2 cost more than the questions they
saved, and are gone: each cell asked of every contributor at once (the cell's own freed: 189
programs to settle 64 of 207 cells, 541 programs in all) and programs reaching a cell's target while
breaking as few contributors' cells as they could (773 in all); on the 1e4-record hypercube neither
changed the time.  On all 2-way margins of six variables (1e5
records: 13,482 inner cells, 132 contributors, 16,016 cell-contributor questions) mixtures leave 532
programs where 1,477 were solved without them (21 s instead of 70 s), the verdicts the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._intruder import Intruder, shortfalls, touching

__all__ = ["singleton_shortfalls"]

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
    live: np.ndarray | None = None,
) -> Any:
    """Yield ``(cell, contributor, its known cells, [(cell, upper side?, target), ...])`` for every
    requirement some contributor alone in a withheld cell does not leave met (``suppressed`` is the pattern).

    Shared work: the outside attacker's witnesses first (one meeting every such cell serves all
    contributors), then one model holding every such cell, whose rows of the other contributors'
    cells are freed for each contributor's questions, asked together, so a
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
    # each contributor alone
    each: list[tuple[int, int, np.ndarray]] = []
    for p, singles in todo:
        owner = sole[singles]
        for c in np.unique(owner).tolist():
            each.append((p, int(c), singles[owner == c]))
    answers = asked.answer(each)
    for p, c, mine in each:
        short = answers[(p, c)]
        if short and live is not None:
            # c knows its own cells among those withheld since (as it knew them published)
            grown = np.asarray(live, dtype=bool) & ~suppressed & (sole == c)
            if apart and grown.any():
                grown &= ~(np.asarray(Xc.T @ Xc[:, p].toarray().reshape(-1)).reshape(-1) > 0)
            mine = np.union1d(mine, np.flatnonzero(grown)) if grown.any() else mine
            short = asked.again(p, mine, short, live)
        if short:
            yield p, c, mine, short


class _Questions:
    """Whether a reader who knows some withheld cells meets each cell's requirements: asked in groups.

    A question ``(p, c, known)`` asks p's requirements of a reader who knows the cells ``known`` (of
    the joint model's singles) besides the published ones; ``c`` only labels it.  Questions knowing
    the same cells share one relaxation of the joint model and one :meth:`Intruder.reach`.  A
    relaxation that would free an empty cell is impossible (its inner cells left the model): such a
    question has a model of its own (``alone``).
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

    def mixed(self, cells: np.ndarray, known: np.ndarray) -> np.ndarray:
        """Whether a mixture of kept solutions meets each cell's requirements and gives the cells ``known`` their values.

        Every kept solution meets the published cells, the listing's floors and non-negativity (the
        joint model's rows of single-contributor cells are the only ones ever freed), and so does
        any convex combination of them; a combination meeting cell p's target on a side and the
        known cells' equations is a solution of that reader's system reaching the target: the reader
        cannot exclude it.  Decided here where the known cells hold one equation on the model's
        inner cells (a contributor's count cells all hold its one inner cell): then some
        combination meets it exactly when the solutions reaching the target lie on both sides of
        its value.  A False says nothing (the question is asked).  One bool per cell of ``cells``.
        """
        cells = np.asarray(cells, dtype=np.int64)
        k = min(self._k, _POOL)
        out = np.zeros(cells.size, dtype=bool)
        if not k or not known.size or not cells.size:
            return out
        tol = self.tol
        gap = self._V[known, :k] - self.values[known][:, None]
        slack = 1e-7 * np.maximum(1.0, np.abs(self.values[known]))[:, None]
        if not np.all(np.abs(gap - gap[:1]) <= slack):  # several equations: not decided here
            return out
        g, s = gap[0], float(slack[0, 0])
        below, above = g <= s, g >= -s  # the solutions on each side of the known value
        V = self._V[cells, :k]
        up, down = self.up_t[cells], self.down_t[cells]
        has_up, has_down = np.isfinite(up), np.isfinite(down)
        reach_up = V >= (up - tol * np.maximum(1.0, np.abs(up)))[:, None]
        reach_down = V <= (down + tol * np.maximum(1.0, np.abs(down)))[:, None]
        met_up = np.any(reach_up & below, axis=1) & np.any(reach_up & above, axis=1)
        met_down = np.any(reach_down & below, axis=1) & np.any(reach_down & above, axis=1)
        either = (has_up & met_up) | (has_down & met_down)
        both = (~has_up | met_up) & (~has_down | met_down)
        # nothing asked on either side: settled
        return ~(has_up | has_down) | np.where(self.either[cells], either, both)

    def again(self, p: int, known: np.ndarray, short: list[tuple[int, bool, float]], live: np.ndarray) -> list[tuple[int, bool, float]]:
        """p's shortfalls for the reader who knows ``known`` (its cells withheld since included), asked again on ``live``.

        ``live`` is the pattern as the caller has grown it since the questions were answered (cells
        withheld since only take equations away, so every solution found is still one of this
        reader's): where it has grown, a mixture or the joint model with those cells' rows freed too
        may find the requirement met now.  ``short`` (the answer on the first pattern) where it has
        not grown, or where a cell to free is empty (its inner cells left the model).
        """
        new = np.setdiff1d(np.flatnonzero(np.asarray(live, dtype=bool) & ~self.suppressed), known)
        f = np.setdiff1d(self.every, known)
        if not new.size or np.any(self.values[new] == 0) or np.any(self.values[f] == 0):
            return short
        if self.mixed(np.array([p]), known)[0]:
            return []
        with self.joint.relaxed(new), self.joint.relaxed(f) as j:
            return shortfalls(j, np.array([p]), self.values, self.up_t, self.down_t, self.no_width, self.floor, self.tol, self.either)

    def answer(self, questions: list[tuple[int, int, np.ndarray]]) -> dict[tuple[int, int], list[tuple[int, bool, float]]]:
        """The shortfalls of each question, by ``(p, c)``."""
        groups: dict[bytes, list[int]] = {}
        freed: dict[bytes, np.ndarray] = {}
        out: dict[tuple[int, int], list[tuple[int, bool, float]]] = {}
        for i, (_, _, known) in enumerate(questions):
            # the known cells are some of ``every`` (the cells freed are the rest): grouped by them
            key = np.sort(known).tobytes()
            if key not in groups:
                groups[key] = []
                freed[key] = np.setdiff1d(self.every, known)
            groups[key].append(i)
        for key, members in groups.items():
            f = freed[key]
            if not np.any(self.values[f] == 0):
                # questions a mixture of the solutions found so far answers need no program
                cells = np.array([questions[i][0] for i in members], dtype=np.int64)  # one reader: the same known cells
                for i, settled in zip(members, self.mixed(cells, questions[members[0]][2]).tolist()):
                    if settled:
                        out[questions[i][:2]] = []
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
